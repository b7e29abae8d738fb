//! Static partitions: a router sends each request to one of several shared states by a key.

use super::error::{RetryError, RouteError};
use super::retry::{Placed, RetryPolicy};
use super::state::SharedCluster;
use crate::error::BuildError;
use crate::id::InputMap;
use crate::request::Request;
use crate::schedule::Scheduler;
use crate::snapshot::{Cluster, ClusterEvent, ClusterSpec, HostSpec};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

/// A caller function naming a host's partition from its spec.
pub type HostKeyFn = Arc<dyn Fn(&HostSpec) -> Option<String> + Send + Sync>;

/// A caller function naming a request's partition.
pub type RequestKeyFn = Arc<dyn Fn(&Request) -> Option<String> + Send + Sync>;

/// Which partition a host belongs to.
#[derive(Clone)]
#[non_exhaustive]
pub enum HostKey {
    /// The first of the host's aggregates that names a partition.
    Aggregate,
    /// The value of this host label names the partition.
    Label(String),
    /// A caller function of the host's spec.
    Fn(HostKeyFn),
}

impl fmt::Debug for HostKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostKey::Aggregate => f.write_str("Aggregate"),
            HostKey::Label(k) => f.debug_tuple("Label").field(k).finish(),
            HostKey::Fn(_) => f.write_str("Fn(..)"),
        }
    }
}

/// Which partition a request goes to.
#[derive(Clone)]
#[non_exhaustive]
pub enum RequestKey {
    /// The request's group, through a table of group → partition.
    Group(BTreeMap<String, String>),
    /// A caller function of the request.
    Fn(RequestKeyFn),
}

impl fmt::Debug for RequestKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestKey::Group(t) => f.debug_tuple("Group").field(t).finish(),
            RequestKey::Fn(_) => f.write_str("Fn(..)"),
        }
    }
}

impl RequestKey {
    fn key(&self, request: &Request) -> Option<String> {
        match self {
            RequestKey::Group(table) => request.group.as_ref().and_then(|g| table.get(g)).cloned(),
            RequestKey::Fn(f) => f(request),
        }
    }
}

/// One partition: its name, its own shared state (only its hosts) and its scheduler.
#[derive(Debug)]
pub struct Partition {
    name: String,
    shared: SharedCluster,
    scheduler: Scheduler,
}

impl Partition {
    /// The partition's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its shared state: only its hosts.
    pub fn shared(&self) -> &SharedCluster {
        &self.shared
    }

    /// Its scheduler.
    pub fn scheduler(&self) -> &Scheduler {
        &self.scheduler
    }
}

/// The group a request joins.
fn group_of(request: &Request) -> Option<&str> {
    request.group.as_deref()
}

/// Sends each request to one of several partitions, each with its own [`SharedCluster`] over
/// its own hosts and its own [`Scheduler`], so schedulers of different partitions never
/// compete for a host. Cluster-wide rules are checked here: a group (the request's group)
/// lives in one partition, the first a member is routed to, and a request for it routed
/// elsewhere is refused with [`RouteError::GroupElsewhere`].
///
/// ```
/// use placewise::shared::{HostKey, RequestKey, Router, RetryPolicy};
/// use placewise::{Cluster, HostSpec, Request, Scheduler};
/// use std::collections::BTreeMap;
///
/// let cluster = Cluster::builder()
///     .host(HostSpec::new("win-1").label("os", "windows").vcpus(4.0).memory_mb(8192.0))
///     .host(HostSpec::new("lin-1").label("os", "linux").vcpus(4.0).memory_mb(8192.0))
///     .build()?;
/// let groups = BTreeMap::from([("w-web".to_string(), "windows".to_string())]);
/// let router = Router::builder(HostKey::Label("os".into()), RequestKey::Group(groups))
///     .partition("windows", Scheduler::standard())
///     .partition("linux", Scheduler::standard())
///     .build(&cluster)?;
/// let request = Request::new(1).memory_mb(1024.0).vcpus(1.0).group("w-web");
/// let placed = router.place(&request, &["vm-1".to_string()], &RetryPolicy::default())?;
/// assert_eq!(placed.committed[0].host_name, "win-1");
/// assert_eq!(router.partition_of_host("lin-1"), Some(1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Router {
    partitions: Vec<Partition>,
    by_name: InputMap<String, usize>,
    host_key: HostKey,
    request_key: RequestKey,
    hosts: RwLock<InputMap<String, usize>>,
    groups: Mutex<InputMap<String, usize>>,
    unassigned: Vec<String>,
}

/// Builds a [`Router`]: the keys, then the partitions in order.
#[derive(Debug)]
pub struct RouterBuilder {
    host_key: HostKey,
    request_key: RequestKey,
    partitions: Vec<(String, Scheduler)>,
}

impl RouterBuilder {
    /// Adds a partition called `name`, scheduled by `scheduler`.
    pub fn partition(mut self, name: impl Into<String>, scheduler: Scheduler) -> Self {
        self.partitions.push((name.into(), scheduler));
        self
    }

    /// Splits `cluster` into the partitions' clusters and builds. A host whose key names no
    /// partition is left out (see [`Router::unassigned`]). Computes in O(hosts + instances).
    ///
    /// # Errors
    ///
    /// [`BuildError::Config`] for no partition or a partition named twice; the partitions'
    /// cluster build errors otherwise.
    pub fn build(self, cluster: &Cluster) -> Result<Router, BuildError> {
        if self.partitions.is_empty() {
            return Err(BuildError::Config { message: "a router needs at least one partition".into() });
        }
        let mut by_name = InputMap::default();
        for (i, (name, _)) in self.partitions.iter().enumerate() {
            if by_name.insert(name.clone(), i).is_some() {
                return Err(BuildError::Config { message: format!("partition `{name}` is declared twice") });
            }
        }
        let spec = cluster.to_spec();
        let mut parts: Vec<ClusterSpec> = (0..self.partitions.len())
            .map(|_| ClusterSpec {
                topology_levels: spec.topology_levels.clone(),
                aggregates: spec.aggregates.clone(),
                hosts: Vec::new(),
                hot_attributes: spec.hot_attributes.clone(),
                class_attributes: spec.class_attributes.clone(),
            })
            .collect();
        let mut hosts = InputMap::default();
        let mut groups = InputMap::default();
        let mut unassigned = Vec::new();
        for host in spec.hosts {
            match host_partition(&self.host_key, &by_name, &host) {
                Some(p) => {
                    hosts.insert(host.name.clone(), p);
                    for g in host.instances.iter().filter_map(|i| i.group.clone()) {
                        groups.entry(g).or_insert(p);
                    }
                    parts[p].hosts.push(host);
                }
                None => unassigned.push(host.name),
            }
        }
        let mut partitions = Vec::with_capacity(parts.len());
        for ((name, scheduler), spec) in self.partitions.into_iter().zip(parts) {
            partitions.push(Partition { name, shared: SharedCluster::new(Cluster::from_spec(&spec)?), scheduler });
        }
        Ok(Router {
            partitions,
            by_name,
            host_key: self.host_key,
            request_key: self.request_key,
            hosts: RwLock::new(hosts),
            groups: Mutex::new(groups),
            unassigned,
        })
    }
}

fn host_partition(key: &HostKey, by_name: &InputMap<String, usize>, host: &HostSpec) -> Option<usize> {
    match key {
        HostKey::Aggregate => host.aggregates.iter().find_map(|a| by_name.get(a).copied()),
        HostKey::Label(label) => host.labels.get(label).and_then(|v| by_name.get(v).copied()),
        HostKey::Fn(f) => f(host).and_then(|name| by_name.get(&name).copied()),
    }
}

impl Router {
    /// A builder with these keys.
    pub fn builder(host_key: HostKey, request_key: RequestKey) -> RouterBuilder {
        RouterBuilder { host_key, request_key, partitions: Vec::new() }
    }

    /// The partitions, in the order added.
    pub fn partitions(&self) -> &[Partition] {
        &self.partitions
    }

    /// Hosts of the original cluster that no partition took.
    pub fn unassigned(&self) -> &[String] {
        &self.unassigned
    }

    /// The partition holding host `name`.
    pub fn partition_of_host(&self, name: &str) -> Option<usize> {
        self.hosts.read().unwrap_or_else(PoisonError::into_inner).get(name).copied()
    }

    /// The partition holding `group`'s members, if any was placed.
    pub fn partition_of_group(&self, group: &str) -> Option<usize> {
        self.groups.lock().unwrap_or_else(PoisonError::into_inner).get(group).copied()
    }

    /// The partition `request` goes to, with the group rule checked.
    ///
    /// # Errors
    ///
    /// [`RouteError::NoPartition`] when its key names none, [`RouteError::GroupElsewhere`] when
    /// its group lives in another partition.
    pub fn route(&self, request: &Request) -> Result<usize, RouteError> {
        let key = self.request_key.key(request);
        let Some(p) = key.as_ref().and_then(|k| self.by_name.get(k).copied()) else {
            return Err(RouteError::NoPartition { key });
        };
        if let Some(group) = group_of(request) {
            if let Some(home) = self.partition_of_group(group).filter(|&home| home != p) {
                return Err(RouteError::GroupElsewhere {
                    group: group.to_owned(),
                    home: self.partitions[home].name.clone(),
                    routed: self.partitions[p].name.clone(),
                });
            }
        }
        Ok(p)
    }

    /// Routes `request` and places it in its partition with
    /// [`SharedCluster::place`]; a group placed for the first time is pinned to the partition.
    /// The group check and the pinning are one step, so two requests of a new group racing to
    /// different partitions cannot both land.
    ///
    /// # Errors
    ///
    /// As [`route`](Router::route), and [`RouteError::Partition`] for the partition's
    /// [`RetryError`].
    pub fn place(&self, request: &Request, ids: &[String], policy: &RetryPolicy) -> Result<Placed, RouteError> {
        let p = self.route(request)?;
        let part = &self.partitions[p];
        let wrap = |source| RouteError::Partition { partition: part.name.clone(), source };
        let Some(group) = group_of(request) else {
            return part.shared.place(&part.scheduler, request, ids, policy).map_err(wrap);
        };
        // Pin first, so a concurrent request of the same group sees the pin.
        {
            let mut groups = self.groups.lock().unwrap_or_else(PoisonError::into_inner);
            let home = *groups.entry(group.to_owned()).or_insert(p);
            if home != p {
                return Err(RouteError::GroupElsewhere {
                    group: group.to_owned(),
                    home: self.partitions[home].name.clone(),
                    routed: part.name.clone(),
                });
            }
        }
        part.shared.place(&part.scheduler, request, ids, policy).map_err(wrap)
    }

    /// Sends an event to the partition owning its host (a new host to the partition its key
    /// names) and returns the partition and the entry's sequence number there.
    ///
    /// # Errors
    ///
    /// [`RouteError::UnownedHost`] when no partition owns the host;
    /// [`RouteError::Partition`] when the event does not apply there.
    pub fn publish(&self, event: ClusterEvent) -> Result<(usize, u64), RouteError> {
        let p = match &event {
            ClusterEvent::HostAdded { host } => host_partition(&self.host_key, &self.by_name, host),
            other => self.partition_of_host(other.host_name()),
        };
        let Some(p) = p else { return Err(RouteError::UnownedHost { host: event.host_name().to_owned() }) };
        let part = &self.partitions[p];
        let (added, removed) = match &event {
            ClusterEvent::HostAdded { host } => (Some(host.name.clone()), None),
            ClusterEvent::HostRemoved { host } => (None, Some(host.clone())),
            _ => (None, None),
        };
        let seq = part
            .shared
            .publish(event)
            .map_err(|e| RouteError::Partition { partition: part.name.clone(), source: RetryError::Shared(e) })?;
        let mut hosts = self.hosts.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(name) = added {
            hosts.insert(name, p);
        }
        if let Some(name) = removed {
            hosts.remove(&name);
        }
        Ok((p, seq))
    }
}

/// A [`Filter`](crate::filter::Filter) that passes only the hosts a [`HostKey`] puts in one of
/// the named partitions: how a scheduler process serves a partition of a store shared by many
/// processes (a `placewise_postgres::PgStore`), with the same keys a [`Router`] uses in one
/// process. Partitions may overlap (two processes serving one partition, or a host key that
/// puts a host in two): commits stay safe, because every claim is still judged by the commit
/// rules; overlap only brings back conflicts that disjoint partitions avoid.
///
/// A [`HostKey::Aggregate`] host belongs to every named partition among its aggregates; a
/// [`HostKey::Fn`] key is computed from the host's spec, so it costs a spec per host and
/// request (prefer a label or an aggregate on large clusters).
///
/// ```
/// use placewise::shared::{HostKey, PartitionFilter};
/// use placewise::{Cluster, HostSpec, Request, Scheduler};
///
/// let cluster = Cluster::builder()
///     .host(HostSpec::new("a1").memory_mb(4096.0).label("pool", "a"))
///     .host(HostSpec::new("b1").memory_mb(8192.0).label("pool", "b"))
///     .build()?;
/// let serves_a = Scheduler::builder().filter(PartitionFilter::new(HostKey::Label("pool".into()), ["a"])).build()?;
/// let placement = serves_a.schedule(&cluster, &Request::new(1))?;
/// assert_eq!(placement.selections[0].host_name, "a1");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct PartitionFilter {
    key: HostKey,
    partitions: Vec<String>,
}

impl PartitionFilter {
    /// Passes the hosts `key` puts in one of `partitions`.
    pub fn new<S: Into<String>>(key: HostKey, partitions: impl IntoIterator<Item = S>) -> PartitionFilter {
        PartitionFilter { key, partitions: partitions.into_iter().map(Into::into).collect() }
    }

    fn serves(&self, name: &str) -> bool {
        self.partitions.iter().any(|p| p == name)
    }

    /// Whether host `id` of `cluster` is in one of the partitions.
    pub fn contains(&self, cluster: &Cluster, id: crate::id::HostId) -> bool {
        let Some(host) = cluster.host(id) else { return false };
        match &self.key {
            HostKey::Aggregate => host
                .aggregates
                .iter()
                .any(|&a| cluster.aggregates().get(a.index()).is_some_and(|agg| self.serves(&agg.name))),
            HostKey::Label(label) => cluster
                .symbols()
                .get(label)
                .and_then(|k| host.labels.get(k))
                .is_some_and(|v| self.serves(cluster.resolve(v))),
            HostKey::Fn(f) => cluster.host_to_spec(id).and_then(|spec| f(&spec)).is_some_and(|p| self.serves(&p)),
        }
    }
}

impl crate::filter::Filter for PartitionFilter {
    fn name(&self) -> &str {
        "PartitionFilter"
    }

    fn check(&self, cx: &crate::request::Cx<'_>, host: crate::id::HostId) -> crate::filter::Verdict {
        self.contains(cx.cluster(), host).into()
    }

    /// A label key is a few lookups in the chunk's label index per 64 hosts; the other keys
    /// go host by host.
    fn check_chunk(
        &self,
        cx: &crate::request::Cx<'_>,
        chunk: usize,
        mask: u64,
        rejected: &mut crate::filter::Rejections,
    ) -> u64 {
        let HostKey::Label(label) = &self.key else {
            return rejected.check_lanes(chunk, mask, |h| self.contains(cx.cluster(), h).into());
        };
        let cluster = cx.cluster();
        let symbols = cluster.symbols();
        let labels = &cluster.hot_chunk(chunk).labels;
        let members = symbols.get(label).map_or(0, |key| {
            self.partitions.iter().filter_map(|p| symbols.get(p)).fold(0, |m, value| m | labels.mask(key, value))
        });
        let pass = mask & members;
        rejected.reject_lanes(chunk, mask & !pass, crate::filter::Reason(0));
        pass
    }

    fn once_per_request(&self) -> bool {
        true
    }

    fn host_local(&self) -> bool {
        true
    }
}
