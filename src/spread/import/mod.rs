//! Docker Swarm's own objects in: `docker node inspect`, `docker service inspect` and `docker
//! inspect` of tasks (the same objects as the API's `GET /nodes`, `/services`, `/tasks`),
//! plus services to plan from a bare ServiceSpec or a Compose file; the spread engine's
//! answers out.
//!
//! [`read`] takes [`Document`]s (each an array of objects, or one object; kinds may be mixed
//! and spread over files) and gives a [`SwarmCluster`]: the snapshot the spread engine
//! reads, the services found as [`SpreadRequest`]s, and warnings for what was read but not
//! modelled. [`SwarmCluster::place`], [`SwarmCluster::explain`] and
//! [`SwarmCluster::capacity`] answer through [`SpreadScheduler`] and
//! [`capacity::tasks`]. [`write()`] is the way back, for round trips.
//!
//! ```
//! use placewise::import::Document;
//! use placewise::spread::import;
//!
//! let nodes = Document::from_json("nodes.json", r#"[
//!   {"ID": "n1", "Spec": {"Role": "worker", "Availability": "active", "Labels": {"az": "a"}},
//!    "Description": {"Hostname": "w1", "Resources": {"NanoCPUs": 2000000000, "MemoryBytes": 4294967296}},
//!    "Status": {"State": "ready"}},
//!   {"ID": "n2", "Spec": {"Role": "worker", "Availability": "active", "Labels": {"az": "b"}},
//!    "Description": {"Hostname": "w2", "Resources": {"NanoCPUs": 2000000000, "MemoryBytes": 4294967296}},
//!    "Status": {"State": "ready"}}]"#)?;
//! let services = Document::from_json("services.json", r#"[
//!   {"ID": "s1", "Spec": {"Name": "web", "Mode": {"Replicated": {"Replicas": 4}},
//!    "TaskTemplate": {"Placement": {"Constraints": ["node.role == worker"],
//!                                   "Preferences": [{"Spread": {"SpreadDescriptor": "node.labels.az"}}]},
//!                     "Resources": {"Reservations": {"MemoryBytes": 1073741824}}}}}]"#)?;
//! let swarm = import::read(&[nodes, services])?;
//!
//! // No task runs yet: the next 4 go two to each zone.
//! let outcome = swarm.place("web", None)?;
//! assert_eq!(outcome.per_host().into_iter().collect::<Vec<_>>(), [("n1", 2), ("n2", 2)]);
//!
//! // Ten do not fit in 2 × 4 GiB: SwarmKit's own words (its counters restart whenever a node
//! // passes, so it counts the last node only).
//! let outcome = swarm.place("web", Some(10))?;
//! assert_eq!(outcome.selections.len(), 8);
//! assert_eq!(outcome.message(), Some("no suitable node (insufficient resources on 1 node)"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What is read
//!
//! | object | fields | placewise |
//! |---|---|---|
//! | Node | `ID` | the host name |
//! | | `Description.Hostname`, `.Platform.{OS,Architecture}`, `Status.Addr` | attributes `hostname`, `os`, `arch`, `ip` ([`SwarmNode`](crate::spread::SwarmNode)) |
//! | | `Description.Resources.NanoCPUs`, `.MemoryBytes` | `vcpus` (CPUs), `memory_mb` (MiB): the **total**, Swarm reports nothing reserved |
//! | | `Description.Resources.GenericResources` | a kind per generic resource: a discrete one's value, one per named one |
//! | | `Spec.Labels`, `Description.Engine.Labels` | node labels, engine labels (no `Engine`: engine labels read `""`) |
//! | | `Spec.Role`, `Spec.Availability`, `Status.State` | role; pause → cordoned, drain → evicting; not `ready` → down |
//! | Service, ServiceSpec | `Spec.Name`, `Mode` (`Replicated.Replicas`, `Global`) | a [`SwarmService`] and its [`SpreadRequest`] |
//! | | `TaskTemplate.Placement.{Constraints, Preferences, MaxReplicas, Platforms}` | constraints (spaces around `==` allowed), spread levels in order, max replicas, platforms |
//! | | `TaskTemplate.Resources.Reservations` (`Limits` do not count) | the request's resources |
//! | | `EndpointSpec.Ports` with `PublishMode: host` | host ports |
//! | Task | `Status.State` `assigned` … `running`, `NodeID`, `ServiceID` | an instance of the service on its node, holding its reservations (its own `Spec.Resources.Reservations`, else the service's; `AssignedGenericResources` for the generic part) |
//! | | `DesiredState` past `complete` | a terminating instance: reserves, but is not an active task |
//! | | `Status.PortStatus.Ports` with `PublishMode: host` | the ports it holds |
//! | Compose | `services.<name>.deploy.{mode, replicas, placement.{constraints, preferences, max_replicas_per_node}, resources.reservations.{cpus, memory, generic_resources}}`, long-syntax `ports` with `mode: host` | a service to plan |
//!
//! Units: API CPUs are integer nanoCPUs and memory integer bytes; Compose's `cpus` is a
//! decimal string and `memory: 20M` is 20 **MiB** (Docker's units are binary, unlike
//! Kubernetes' `M`). Durations (integer nanoseconds in the API, `10s` in Compose),
//! timestamps and every other field placement does not read are ignored. Tasks in other states
//! (`new`, `pending`, finished ones) hold nothing and are only counted; a resource-holding task
//! naming a node or service that is not in the input is an [`ImportError::Dangling`].
//!
//! # Not modelled (warned about when present)
//!
//! SwarmKit's plugin and CSI volume filters (every node is taken to have the plugins);
//! which named generic unit a task gets; recent task failures (the failure penalty needs the
//! time of each failure); spread descriptors SwarmKit ignores (a plain key, `node.id`,
//! `node.hostname`: no level, as in SwarmKit); preferences of a global service (ignored, as in
//! SwarmKit). A global service is placed as one task per node lacking one, with a limit of
//! one per node. CPU amounts are compared as CPUs in `f64`, not integer nanoCPUs: a node filled
//! to the last nanoCPU by decimal fractions can differ from SwarmKit's integer sums.

mod read;
mod units;
mod write;

pub use write::write;

use crate::capacity::{self, TaskCapacity};
use crate::import::{items, Document, ImportError, ImportWarning, Object};
use crate::request::ExplainOptions;
use crate::schedule::DEFAULT_MAX_COUNT;
use crate::snapshot::{Cluster, HostSpec};
use crate::spread::{SpreadError, SpreadOutcome, SpreadRequest, SpreadScheduler};
use read::Shape;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// Whether `value` is a Swarm document: an array of (or one) Node, Service, ServiceSpec or
/// Task object, or a Compose file with a `services` map. A NodeSpec or Placement alone is
/// recognised too, so that [`read`] can say it is not a kind it reads.
pub fn recognises(value: &serde_json::Value) -> bool {
    let objects = items(value);
    !objects.is_empty() && objects.iter().all(|o| read::shape(o).is_some())
}

/// How a service runs its tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ServiceMode {
    /// This many tasks (`Mode.Replicated.Replicas`, Compose's `deploy.replicas`).
    Replicated(u32),
    /// One task on every node that passes its filters.
    Global,
}

impl fmt::Display for ServiceMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServiceMode::Replicated(n) => write!(f, "replicated, {n} tasks"),
            ServiceMode::Global => f.write_str("global"),
        }
    }
}

/// One service found in the input.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SwarmService {
    /// The service's `ID` (the name for a ServiceSpec or a Compose service).
    pub id: String,
    /// `Spec.Name`, the group of its tasks' instances.
    pub name: String,
    /// The file it was read from.
    pub origin: String,
    /// Replicated or global.
    pub mode: ServiceMode,
    /// Read from `docker service inspect` (deployed), rather than a spec or Compose file.
    pub deployed: bool,
    /// Its active tasks found on the nodes (resource-holding, not being shut down).
    pub running: u32,
    /// The engine's request for its next tasks: placement, reservations, ports (a global
    /// service: at most one a node); `tasks` is what [`SwarmCluster::request`] gives by
    /// default.
    pub request: SpreadRequest,
}

/// Tasks read, by what they hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskTally {
    /// Tasks holding resources on their nodes (`assigned` … `running`).
    pub holding: u32,
    /// Of those, tasks being shut down (desired state past `complete`): they reserve, but are
    /// not active tasks of their service.
    pub terminating: u32,
    /// Tasks holding nothing (new, pending, finished), by state.
    pub ignored: BTreeMap<String, u32>,
}

/// A Swarm cluster as read: the spread engine's snapshot, the services, what was read.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SwarmCluster {
    /// The nodes as hosts, with the resource-holding tasks as instances (their reservations
    /// subtracted from the nodes).
    pub cluster: Cluster,
    /// What was read but not modelled.
    pub warnings: Vec<ImportWarning>,
    /// The services, in input order.
    pub services: Vec<SwarmService>,
    /// The tasks read.
    pub tasks: TaskTally,
    /// Objects read per kind (`Node`, `Service`, `ServiceSpec`, `Compose service`, `Task`).
    pub objects: BTreeMap<String, u32>,
}

/// Why a question about an imported cluster has no answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SwarmError {
    /// No service of that name or id was read.
    #[error("no service `{name}` in the input (services: {})", list(.known))]
    UnknownService {
        /// The name asked for.
        name: String,
        /// The services read.
        known: Vec<String>,
    },
    /// The spread engine refused the request.
    #[error(transparent)]
    Spread(#[from] SpreadError),
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

impl SwarmCluster {
    /// The service named `name` (its `Spec.Name`, else its `ID`).
    pub fn service(&self, name: &str) -> Option<&SwarmService> {
        self.services.iter().find(|s| s.name == name).or_else(|| self.services.iter().find(|s| s.id == name))
    }

    /// The engine's request for `tasks` more tasks of service `name`. Without `tasks`: a
    /// replicated service's missing tasks (replicas − running, maybe 0); a global service's
    /// nodes without an active task of it (limited to one per node).
    ///
    /// # Errors
    ///
    /// [`SwarmError::UnknownService`].
    pub fn request(&self, name: &str, tasks: Option<u32>) -> Result<SpreadRequest, SwarmError> {
        let service = self.service(name).ok_or_else(|| SwarmError::UnknownService {
            name: name.to_owned(),
            known: self.services.iter().map(|s| s.name.clone()).collect(),
        })?;
        let mut request = service.request.clone();
        request.tasks = tasks.unwrap_or_else(|| self.missing(service));
        Ok(request)
    }

    /// A service's missing tasks: a replicated one's replicas − running, a global one's nodes
    /// without an active task of it.
    fn missing(&self, service: &SwarmService) -> u32 {
        match service.mode {
            ServiceMode::Replicated(n) => n.saturating_sub(service.running),
            ServiceMode::Global => self.nodes_without(&service.name),
        }
    }

    /// Nodes without an active task of `service`: a global service's missing tasks.
    fn nodes_without(&self, service: &str) -> u32 {
        let group = self.cluster.symbols().get(service);
        let nodes = self
            .cluster
            .hosts()
            .filter(|(_, h)| !h.instances.iter().any(|i| !i.terminating && group.is_some() && i.group == group))
            .count();
        u32::try_from(nodes).unwrap_or(u32::MAX)
    }

    /// Where SwarmKit puts the next tasks of service `name` (see [`request`](Self::request)
    /// for `tasks`): the nodes, the split over its preference branches
    /// ([`SpreadOutcome::tree`]), and SwarmKit's `no suitable node (…)` when some do not fit.
    ///
    /// # Errors
    ///
    /// [`SwarmError::UnknownService`], or the engine's [`SpreadError`].
    pub fn place(&self, name: &str, tasks: Option<u32>) -> Result<SpreadOutcome, SwarmError> {
        Ok(SpreadScheduler::new().schedule(&self.cluster, &self.request(name, tasks)?)?)
    }

    /// As [`place`](Self::place), with every node's verdict over the final state in the
    /// explanation.
    ///
    /// # Errors
    ///
    /// As [`place`](Self::place).
    pub fn explain(&self, name: &str, tasks: Option<u32>) -> Result<SpreadOutcome, SwarmError> {
        let request = self.request(name, tasks)?.explain(ExplainOptions::detailed(0));
        Ok(SpreadScheduler::new().schedule(&self.cluster, &request)?)
    }

    /// How many more tasks of service `name` fit, per preference branch, and how large a
    /// batch can be before a branch runs out ([`capacity::tasks`], up to the engine's largest
    /// batch).
    ///
    /// # Errors
    ///
    /// As [`place`](Self::place).
    pub fn capacity(&self, name: &str) -> Result<TaskCapacity, SwarmError> {
        let request = self.request(name, Some(0))?;
        Ok(capacity::tasks(&SpreadScheduler::new(), &self.cluster, &request, DEFAULT_MAX_COUNT)?)
    }

    /// The snapshot as placewise's own JSON.
    pub fn to_json(&self) -> String {
        self.cluster.to_json()
    }
}

/// Reads Swarm objects from `docs` (see the [module docs](self)).
///
/// Computes in O(objects + labels).
///
/// # Errors
///
/// [`ImportError`] naming the file, the object and the field: a document of another kind
/// ([`ImportError::UnknownKind`]), a missing or unreadable field (a node without `ID`, a
/// constraint the Docker API refuses, a Compose size that does not parse), a task on a node
/// or of a service not in the input, a node, service or task given twice, nothing to read.
pub fn read(docs: &[Document]) -> Result<SwarmCluster, ImportError> {
    let mut warnings = Vec::new();
    let mut objects: BTreeMap<String, u32> = BTreeMap::new();
    let mut hosts: Vec<HostSpec> = Vec::new();
    let mut node_at: HashMap<String, (usize, &str)> = HashMap::new();
    let mut services: Vec<SwarmService> = Vec::new();
    let mut service_at: HashMap<String, (usize, String)> = HashMap::new();
    let mut task_items = Vec::new();
    let mut count = |kind: &str| *objects.entry(kind.to_owned()).or_insert(0) += 1;

    let mut add_service = |s: SwarmService, services: &mut Vec<SwarmService>| -> Result<(), ImportError> {
        for key in [&s.id, &s.name] {
            if let Some((_, first)) = service_at.get(key) {
                return Err(ImportError::Duplicate {
                    origin: s.origin.clone(),
                    object: crate::import::ObjectRef::new("Service", s.name.clone()).into(),
                    first: first.clone(),
                });
            }
        }
        service_at.insert(s.id.clone(), (services.len(), s.origin.clone()));
        if s.name != s.id {
            service_at.insert(s.name.clone(), (services.len(), s.origin.clone()));
        }
        services.push(s);
        Ok(())
    };

    for doc in docs {
        let origin = doc.origin.as_str();
        for (i, item) in items(&doc.value).iter().enumerate() {
            let shape = read::shape(item).ok_or_else(|| ImportError::UnknownKind {
                origin: origin.to_owned(),
                kind: describe(item, i),
                expected: read::expected(),
            })?;
            let label =
                |key: &str| item.get(key).and_then(|v| v.as_str()).map_or_else(|| format!("#{}", i + 1), str::to_owned);
            match shape {
                Shape::Node => {
                    let name = label("ID");
                    let o = Object::new(origin, "Node", &name, item);
                    let (id, host) = read::node(&o, &mut warnings)?;
                    if let Some((_, first)) = node_at.get(&id) {
                        return Err(ImportError::Duplicate {
                            origin: origin.to_owned(),
                            object: o.object_ref().into(),
                            first: (*first).to_owned(),
                        });
                    }
                    node_at.insert(id, (hosts.len(), origin));
                    hosts.push(host);
                    count("Node");
                }
                Shape::Service => {
                    let name =
                        item.pointer("/Spec/Name").and_then(|v| v.as_str()).map_or_else(|| label("ID"), str::to_owned);
                    let o = Object::new(origin, "Service", &name, item);
                    let id = o.str("ID")?;
                    let spec = o.require("Spec")?;
                    let s = read::service_spec(&o.child("Spec", spec), Some(id), true, &mut warnings)?;
                    add_service(s, &mut services)?;
                    count("Service");
                }
                Shape::ServiceSpec => {
                    let name = label("Name");
                    let o = Object::new(origin, "ServiceSpec", &name, item);
                    let s = read::service_spec(&o, None, false, &mut warnings)?;
                    add_service(s, &mut services)?;
                    count("ServiceSpec");
                }
                Shape::Compose => {
                    for (name, svc) in read::compose_services(item).into_iter().flatten() {
                        let o = Object::new(origin, "Service", name, svc);
                        let s = read::compose_service(&o, name, &mut warnings)?;
                        add_service(s, &mut services)?;
                        count("Compose service");
                    }
                }
                Shape::Task => task_items.push((origin, i, item)),
                Shape::NodeSpec | Shape::Placement => {
                    return Err(ImportError::UnknownKind {
                        origin: origin.to_owned(),
                        kind: format!("{} (alone it names no node or service)", shape.name()),
                        expected: read::expected(),
                    })
                }
            }
        }
    }

    let mut tally = TaskTally::default();
    let mut task_seen: HashMap<String, &str> = HashMap::new();
    for (origin, i, item) in task_items {
        let name = item.get("ID").and_then(|v| v.as_str()).map_or_else(|| format!("#{}", i + 1), str::to_owned);
        let o = Object::new(origin, "Task", &name, item);
        let reservations = |service: &str| service_at.get(service).map(|&(s, _)| services[s].request.resources.clone());
        let (id, held) = read::task(&o, reservations)?;
        if let Some(first) = task_seen.insert(id, origin) {
            return Err(ImportError::Duplicate {
                origin: origin.to_owned(),
                object: o.object_ref().into(),
                first: first.to_owned(),
            });
        }
        count("Task");
        let Some(held) = held else {
            let state = o.str("Status.State")?.to_ascii_lowercase();
            *tally.ignored.entry(state).or_insert(0) += 1;
            continue;
        };
        let &(node, _) = node_at.get(held.node).ok_or_else(|| o.dangling("NodeID", format!("node {}", held.node)))?;
        let &(service, _) =
            service_at.get(held.service).ok_or_else(|| o.dangling("ServiceID", format!("service {}", held.service)))?;
        let mut instance = held.instance;
        instance.group = Some(services[service].name.clone());
        tally.holding += 1;
        if instance.terminating {
            tally.terminating += 1;
        } else {
            services[service].running += 1;
        }
        read::declare_kinds(&mut hosts[node], &instance.resources);
        hosts[node].instances.push(instance);
    }
    if hosts.is_empty() && services.is_empty() {
        return Err(ImportError::Incomplete(
            "the input holds no Swarm node or service (give docker node inspect and docker service inspect output, or a Compose file)".into(),
        ));
    }
    let mut builder = Cluster::builder();
    for host in hosts {
        builder = builder.host(host);
    }
    let cluster = builder.build()?;
    let mut swarm = SwarmCluster { cluster, warnings, services, tasks: tally, objects };
    let missing: Vec<u32> = swarm.services.iter().map(|s| swarm.missing(s)).collect();
    for (s, tasks) in swarm.services.iter_mut().zip(missing) {
        s.request.tasks = tasks;
        if s.mode == ServiceMode::Global {
            s.request.max_replicas = 1;
        }
    }
    Ok(swarm)
}

/// A short description of an object that is not a Swarm one, for [`ImportError::UnknownKind`].
fn describe(item: &serde_json::Value, i: usize) -> String {
    match item {
        serde_json::Value::Object(map) => {
            let keys: Vec<&str> = map.keys().take(4).map(String::as_str).collect();
            format!("object #{} with keys {}", i + 1, keys.join(", "))
        }
        other => format!("item #{} is {}", i + 1, crate::import::shown(other)),
    }
}

#[cfg(test)]
mod tests;
