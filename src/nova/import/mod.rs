//! OpenStack's own objects in: the Placement API's and the Nova API's JSON, and a `nova.conf`.
//!
//! [`read`] takes the raw API responses (not the `openstack … -f json` client's flattened
//! tables) as [`Document`]s and gives an [`OpenStackCloud`]: the compute hosts as a
//! [`Cluster`] in the filter scheduler's vocabulary ([`host_state`](crate::nova::host_state)),
//! the flavors, the server groups and the warnings. It answers the three questions through the
//! nova engine itself: where the filter scheduler puts `count` instances of a flavor
//! ([`OpenStackCloud::place`]), every filter's verdict on every host
//! ([`OpenStackCloud::explain`]), and how many more of a flavor fit, per availability zone and
//! per aggregate ([`OpenStackCloud::capacity`], [`NovaScheduler::instances`]).
//! [`read_conf`] reads a `nova.conf`; [`write()`] gives a cluster back as API responses.
//!
//! ```
//! use placewise::import::Document;
//! use placewise::nova::import;
//!
//! let providers = Document::from_json("resource_providers.json", r#"{"resource_providers": [
//!     {"uuid": "4e8e5957-649f-477b-9e5b-f1f75b21c03c", "name": "cn1", "generation": 3,
//!      "inventories": {
//!        "VCPU": {"total": 8, "reserved": 0, "allocation_ratio": 4.0},
//!        "MEMORY_MB": {"total": 16384, "reserved": 512, "allocation_ratio": 1.0},
//!        "DISK_GB": {"total": 200, "reserved": 0, "allocation_ratio": 1.0}},
//!      "usages": {"VCPU": 2, "MEMORY_MB": 4096, "DISK_GB": 20}}]}"#)?;
//! let flavors = Document::from_json("flavors.json", r#"{"flavors": [
//!     {"id": "3", "name": "m1.medium", "ram": 4096, "vcpus": 2, "disk": 40}]}"#)?;
//! let cloud = import::read(&[providers, flavors])?;
//!
//! let outcome = cloud.place("m1.medium", 2)?;
//! assert_eq!(outcome.selections[0].host_name, "cn1");
//! // (16384 − 512) × 1.0 − 4096 leaves room for 2 more of 4096 MiB; disk for 4 of 40 GiB.
//! assert_eq!(cloud.capacity("m1.medium")?.total, 2);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What is read
//!
//! | response | read as |
//! |---|---|
//! | Placement `GET /resource_providers` (list) or one provider | hosts: each root provider is a compute node, named by the provider's `name` (the hypervisor host name); a nested provider's inventories count on its root |
//! | `…/{uuid}/inventories` | resources: `total` → capacity, `reserved`, `allocation_ratio`; usable is `(total − reserved) × allocation_ratio`. `min_unit`, `max_unit` and `step_size` are checked per instance. `VCPU`, `MEMORY_MB`, `DISK_GB` are `vcpus`, `memory_mb`, `disk_gb`; `CUSTOM_X` is `x` and every other class its lower-case name |
//! | `…/{uuid}/usages` | used amounts |
//! | `…/{uuid}/traits` | host labels (`TRAIT = true`), matched by the flavor's `trait:X=required\|forbidden` |
//! | `…/{uuid}/aggregates` | aggregate memberships (a Nova aggregate with that `uuid`, else an aggregate named by the uuid) |
//! | `…/{uuid}/allocations` | the consumers, as the host's instances |
//! | `GET /allocation_candidates` | its `provider_summaries`: capacity, used and traits per provider uuid |
//! | Nova `GET /os-hypervisors/detail` | the service host (`service.host`), `state`/`status`, `hypervisor_type`/`_version`, `host_ip`, `cpu_info`, `current_workload`, `running_vms`, `servers`; before 2.88 also the capacity fields, used when Placement does not give the host (with `[DEFAULT]` allocation ratios) |
//! | `GET /os-services` | `nova-compute` services: `status` disabled, `state` down and `forced_down` per service host |
//! | `GET /os-aggregates` | aggregates with metadata (strings) and hosts; `availability_zone` sets the hosts' zone |
//! | `GET /os-availability-zone/detail` | zone of the compute hosts not in a zoned aggregate |
//! | `GET /flavors/detail` (2.61+: with `extra_specs`), `…/{id}/os-extra_specs` | flavors; `swap: ""` is 0 |
//! | `GET /os-server-groups` | server groups (`policy` + `rules`, or `policies` before 2.64) |
//!
//! Each document is one response, or a JSON array of responses. Several Placement responses
//! (inventories, usages, traits, aggregates, allocations of one provider) do not carry the
//! provider's uuid: give each in a folder or file named by the uuid
//! (`resource_providers/<uuid>/inventories.json`, `<uuid>.usages.json`), or embed it in the
//! provider object (`{"uuid": …, "name": …, "generation": …, "inventories": {…}, "usages":
//! {…}, "traits": […], "aggregates": […]}`, the shape [`write()`] gives). Otherwise the import
//! fails with [`ImportError::Incomplete`] saying so. A flavor's `os-extra_specs` response
//! goes in a folder named by the flavor's id or name.
//!
//! Request bodies (server create, PUT inventories' single-class body, set_metadata, reshaper,
//! allocation writes), resource classes, the version document and statistics are not cluster
//! state: they are an [`ImportError::UnknownKind`] or a warning; so is a consumer's own
//! allocations. Fields the scheduler does not read are ignored; flavor extra specs it reads but
//! does not model (`hw:` NUMA and pinning, `pci_passthrough:`, granular `resources1:` and
//! `trait1:` groups), a paged response's next page and nested or sharing providers are
//! warnings.
//!
//! # The scheduler
//!
//! Nova asks Placement for allocation candidates before any filter runs. placewise runs that
//! step as the first filters of every answer: `ResourceFilter` (capacity) and
//! `LabelSelectorFilter` (the flavor's required and forbidden traits), then the configured
//! `enabled_filters`, then `PlacementUnitsFilter` (`min_unit`, `max_unit`, `step_size`). The
//! configuration is [`default_config`] (Nova's defaults) unless [`read_conf`] read one.

mod conf;
mod read;
mod write;

pub use conf::{default_config, read_conf, INITIAL_ALLOCATION_RATIOS};
pub use write::write;

use crate::capacity::InstanceCapacity;
use crate::error::{BuildError, ScheduleError};
use crate::filter::{filter_fn, FilterExt};
use crate::import::{Document, ImportError, ImportWarning, ObjectRef};
use crate::nova::config::SchedulerConfig;
use crate::nova::request::{Flavor, Image, NovaRequest, ServerGroup};
use crate::nova::scenario::{CLASS_ATTRIBUTES, HOT_ATTRIBUTES};
use crate::nova::NovaScheduler;
use crate::request::ExplainOptions;
use crate::schedule::Outcome;
use crate::snapshot::{AggregateSpec, Cluster, ClusterSpec, HostSpec, HostState, InstanceSpec, ResourceSpec};
use read::{Provider, Tables};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The host attribute holding the Placement inventories' `[min_unit, max_unit, step_size]` per
/// resource kind, where one is not the default (1, no limit, 1).
pub const PLACEMENT_UNITS: &str = "placement_units";

/// Whether `value` is a response [`read`] reads (see the module docs' table).
pub fn recognises(value: &Value) -> bool {
    crate::import::items(value).first().is_some_and(|v| read::kind_of(v).is_some())
}

/// An OpenStack cloud as its APIs describe it, ready for the nova engine.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct OpenStackCloud {
    /// The compute hosts.
    pub cluster: Cluster,
    /// What was read but not used as written.
    pub warnings: Vec<ImportWarning>,
    /// The scheduler configuration the answers run under.
    pub config: SchedulerConfig,
    /// The flavors, in input order.
    pub flavors: Vec<Flavor>,
    /// The server groups (their `hosts` are where their members run, in the input).
    pub server_groups: Vec<ServerGroup>,
    /// The response kinds read and how many objects of each.
    pub kinds: BTreeMap<String, usize>,
    /// Server group names by id.
    pub group_names: BTreeMap<String, String>,
}

/// Why an [`OpenStackCloud`] could not answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CloudError {
    /// No flavor of that name or id was read.
    #[error("no flavor `{name}` in the input (flavors: {known})")]
    UnknownFlavor {
        /// The name asked for.
        name: String,
        /// The flavors read, by name.
        known: String,
    },
    /// No server group of that id or name was read.
    #[error("no server group `{name}` in the input (server groups: {known})")]
    UnknownGroup {
        /// The id or name asked for.
        name: String,
        /// The server groups read, by id.
        known: String,
    },
    /// The configuration does not build a scheduler, or a flavor's extra spec does not parse.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// The scheduler refused the request.
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
}

/// How many more of a flavor fit ([`OpenStackCloud::capacity`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CloudCapacity {
    /// More instances that fit on the cloud.
    pub total: u64,
    /// Per availability zone, in the snapshot's zone order: `(zone, live hosts, fits)`.
    pub zones: Vec<(String, u32, u64)>,
    /// Per aggregate: `(aggregate, hosts, fits)`.
    pub aggregates: Vec<(String, u32, u64)>,
    /// The engine's own answer, per host with what stops each.
    pub instances: InstanceCapacity,
}

/// Reads the documents under Nova's default configuration ([`default_config`]).
///
/// # Errors
///
/// [`ImportError`] naming the file, the object and the field: an unknown shape, a missing or
/// malformed field, a reference to a provider, flavor or host not in the input, a provider
/// response whose provider cannot be known, an object given twice.
pub fn read(docs: &[Document]) -> Result<OpenStackCloud, ImportError> {
    read_with(docs, default_config())
}

/// As [`read`], under `config` (its `[DEFAULT]` allocation ratios apply to hosts that only the
/// pre-2.88 hypervisor fields describe, its `default_availability_zone` to hosts in no zone).
///
/// # Errors
///
/// As [`read`].
pub fn read_with(docs: &[Document], config: SchedulerConfig) -> Result<OpenStackCloud, ImportError> {
    let mut t = Tables::read(docs)?;
    if t.kinds.is_empty() && t.warnings.is_empty() {
        return Err(ImportError::Incomplete("the input holds no OpenStack API response".into()));
    }
    let cluster = build(&mut t, &config)?;
    let mut server_groups = std::mem::take(&mut t.server_groups);
    for g in &mut server_groups {
        let mut hosts = BTreeSet::new();
        for (id, _) in cluster.hosts() {
            if cluster.service_instances(id).any(|i| g.members.iter().any(|m| *m == *i.id)) {
                hosts.insert(cluster.service_host_name(id).to_owned());
            }
        }
        g.hosts = hosts.into_iter().collect();
    }
    Ok(OpenStackCloud {
        cluster,
        warnings: t.warnings,
        config,
        flavors: t.flavors.into_iter().map(|(f, _)| f).collect(),
        server_groups,
        kinds: t.kinds.into_iter().map(|(k, n)| (k.to_owned(), n)).collect(),
        group_names: t.group_names,
    })
}

/// A Placement resource class as a snapshot resource kind.
pub fn resource_kind(class: &str) -> String {
    match class {
        "VCPU" => "vcpus".into(),
        "MEMORY_MB" => "memory_mb".into(),
        "DISK_GB" => "disk_gb".into(),
        other => other.strip_prefix("CUSTOM_").unwrap_or(other).to_ascii_lowercase(),
    }
}

/// One host being assembled.
struct Node {
    origin: String,
    name: String,
    service_host: String,
    nodename: String,
    uuid: Option<String>,
    spec: HostSpec,
    has_resources: bool,
}

fn build(t: &mut Tables, config: &SchedulerConfig) -> Result<Cluster, ImportError> {
    let ratio = |kind: &str| {
        config
            .allocation_ratios
            .get(kind)
            .copied()
            .unwrap_or_else(|| INITIAL_ALLOCATION_RATIOS.iter().find(|r| r.0 == kind).map_or(1.0, |r| r.1))
    };
    let known: BTreeSet<String> = t.providers.iter().map(|p| p.uuid.clone()).collect();
    let is_root = |p: &Provider| p.parent.as_ref().is_none_or(|parent| !known.contains(parent));
    let mut warnings = Vec::new();
    let mut used_providers = BTreeSet::new();
    let mut nodes: Vec<Node> = Vec::new();
    // Hypervisors first, each with its provider (same uuid, else same name).
    for h in &t.hypervisors {
        let provider = t
            .providers
            .iter()
            .filter(|p| is_root(p))
            .find(|p| h.id.as_deref() == Some(p.uuid.as_str()))
            .or_else(|| t.providers.iter().filter(|p| is_root(p)).find(|p| p.name == h.nodename));
        let service_host = h.service_host.clone().unwrap_or_else(|| h.nodename.clone());
        let mut spec = HostSpec::new(service_host.clone());
        spec.state = HostState { up: h.up, enabled: h.enabled, ..HostState::default() };
        spec.attributes.extend(h.attributes.iter().map(|(k, v)| (k.clone(), v.clone())));
        if let Some(reason) = &h.disabled_reason {
            spec = spec.attribute("disabled_reason", json!(reason));
        }
        for s in &h.servers {
            spec = spec.instance(InstanceSpec::new(s.clone()));
        }
        let mut has_resources = false;
        if let Some(p) = provider {
            used_providers.insert(p.uuid.clone());
        } else if let Some([vcpus, vcpus_used, mem, mem_used, disk, disk_used]) = h.capacity {
            spec = spec
                .resource("vcpus", ResourceSpec::new(vcpus).used(vcpus_used).allocation_ratio(ratio("cpu")))
                .resource("memory_mb", ResourceSpec::new(mem).used(mem_used).allocation_ratio(ratio("ram")))
                .resource("disk_gb", ResourceSpec::new(disk).used(disk_used).allocation_ratio(ratio("disk")));
            has_resources = true;
        }
        let mut node = Node {
            origin: h.origin.clone(),
            name: service_host.clone(),
            service_host,
            nodename: h.nodename.clone(),
            uuid: h.id.clone(),
            spec,
            has_resources,
        };
        if let Some(p) = provider {
            add_provider(&mut node, p, &mut warnings);
            node.uuid = Some(p.uuid.clone());
        }
        nodes.push(node);
    }
    // Root providers without a hypervisor: hosts of their own.
    for p in t.providers.iter().filter(|p| is_root(p) && !used_providers.contains(&p.uuid)) {
        if p.traits.iter().any(|tr| tr == "MISC_SHARES_VIA_AGGREGATE") {
            warnings.push(provider_warning(p, "a sharing provider is not modelled: its resources are not counted"));
            continue;
        }
        if p.parent.is_some() {
            warnings.push(provider_warning(p, "its parent provider is not in the input: read as a host of its own"));
        }
        let mut node = Node {
            origin: p.origin.clone(),
            name: p.name.clone(),
            service_host: p.name.clone(),
            nodename: p.name.clone(),
            uuid: Some(p.uuid.clone()),
            spec: HostSpec::new(p.name.clone()),
            has_resources: false,
        };
        add_provider(&mut node, p, &mut warnings);
        nodes.push(node);
    }
    // Nested providers: their inventories count on their root.
    for p in t.providers.iter().filter(|p| !is_root(p)) {
        let mut root = p.parent.clone();
        let mut guard = 0;
        while let Some(r) = root.clone() {
            match t.providers.iter().find(|q| q.uuid == r) {
                Some(q) if q.parent.as_ref().is_some_and(|pp| known.contains(pp)) && guard < 64 => {
                    root = q.parent.clone();
                    guard += 1;
                }
                _ => break,
            }
        }
        match nodes.iter_mut().find(|n| n.uuid == root) {
            Some(node) => {
                add_provider(node, p, &mut warnings);
                warnings.push(provider_warning(p, "a nested provider: its inventories count on its root's host"));
            }
            None => warnings.push(provider_warning(p, "its root provider is not a host: not counted")),
        }
    }
    for n in &nodes {
        if !n.has_resources {
            warnings.push(ImportWarning {
                origin: n.origin.clone(),
                object: Some(ObjectRef::new("host", n.name.clone())),
                field: String::new(),
                message: "no inventories (and no hypervisor capacity fields, which 2.88 removed): \
                          the host has no resources"
                    .into(),
            });
        }
    }
    // Services: status, state and forced_down per service host.
    let hosts: BTreeSet<String> = nodes.iter().map(|n| n.service_host.clone()).collect();
    for (host, s) in &t.services {
        let mut found = false;
        for n in nodes.iter_mut().filter(|n| &n.service_host == host) {
            found = true;
            n.spec.state.enabled &= s.enabled;
            n.spec.state.up &= s.up && !s.forced_down;
            n.spec.attributes.insert("forced_down".into(), json!(s.forced_down));
            if let Some(reason) = &s.disabled_reason {
                n.spec.attributes.entry("disabled_reason".into()).or_insert_with(|| json!(reason));
            }
        }
        if !found {
            warnings.push(ImportWarning {
                origin: s.origin.clone(),
                object: Some(ObjectRef::new("service", host.clone())),
                field: String::new(),
                message: "a nova-compute service with no hypervisor or resource provider: not a host".into(),
            });
        }
    }
    // Aggregates: Nova's by host name, Placement's by uuid.
    let mut aggregates: Vec<AggregateSpec> = Vec::new();
    for a in &t.aggregates {
        let mut spec = AggregateSpec::new(a.name.clone());
        spec.metadata = a.metadata.clone();
        aggregates.push(spec);
        for h in &a.hosts {
            if !hosts.contains(h) {
                let w = ImportWarning {
                    origin: a.origin.clone(),
                    object: Some(ObjectRef::new("aggregate", a.name.clone())),
                    field: "hosts".into(),
                    message: format!("host `{h}` is not in the input; left out"),
                };
                if nodes.is_empty() {
                    warnings.push(w);
                    continue;
                }
                return Err(ImportError::Dangling {
                    origin: a.origin.clone(),
                    object: ObjectRef::new("aggregate", a.name.clone()).into(),
                    field: "hosts".into(),
                    target: format!("host `{h}`"),
                });
            }
            for n in nodes.iter_mut().filter(|n| &n.service_host == h) {
                if !n.spec.aggregates.contains(&a.name) {
                    n.spec.aggregates.push(a.name.clone());
                }
            }
        }
    }
    for p in &t.providers {
        for uuid in &p.aggregates {
            let name = match t.aggregates.iter().find(|a| a.uuid.as_deref() == Some(uuid.as_str())) {
                Some(a) => a.name.clone(),
                None => {
                    if !aggregates.iter().any(|a| &a.name == uuid) {
                        aggregates.push(AggregateSpec::new(uuid.clone()));
                    }
                    uuid.clone()
                }
            };
            for n in nodes.iter_mut().filter(|n| n.uuid.as_deref() == Some(p.uuid.as_str())) {
                if !n.spec.aggregates.contains(&name) {
                    n.spec.aggregates.push(name.clone());
                }
            }
        }
    }
    // Zones listed by os-availability-zone for hosts in no zoned aggregate.
    let zoned = |spec: &HostSpec, aggregates: &[AggregateSpec]| {
        spec.aggregates
            .iter()
            .any(|a| aggregates.iter().any(|b| &b.name == a && b.metadata.contains_key("availability_zone")))
    };
    for (zone, members, _) in t.zones.iter().filter(|z| z.0 != config.options.default_availability_zone) {
        let name = format!("az:{zone}");
        for n in nodes.iter_mut().filter(|n| members.contains(&n.service_host)) {
            if !zoned(&n.spec, &aggregates) {
                if !aggregates.iter().any(|a| a.name == name) {
                    let mut a = AggregateSpec::new(name.clone());
                    a.metadata.insert("availability_zone".into(), zone.clone());
                    aggregates.push(a);
                }
                n.spec.aggregates.push(name.clone());
            }
        }
    }
    // Nodes sharing a service host are named `host:node`.
    let mut per_host: BTreeMap<String, usize> = BTreeMap::new();
    for n in &nodes {
        *per_host.entry(n.service_host.clone()).or_default() += 1;
    }
    let mut spec = ClusterSpec {
        hot_attributes: HOT_ATTRIBUTES.iter().map(|a| a.to_string()).collect(),
        class_attributes: CLASS_ATTRIBUTES.iter().map(|a| a.to_string()).collect(),
        topology_levels: vec!["zone".into()],
        ..ClusterSpec::default()
    };
    for mut n in nodes {
        let zone = n
            .spec
            .aggregates
            .iter()
            .find_map(|a| aggregates.iter().find(|b| &b.name == a)?.metadata.get("availability_zone").cloned())
            .unwrap_or_else(|| config.options.default_availability_zone.clone());
        n.spec = n.spec.zone(zone);
        n.spec.attributes.entry("hypervisor_type".into()).or_insert_with(|| json!("QEMU"));
        if n.nodename != n.name || per_host.get(&n.service_host).is_some_and(|&c| c > 1) {
            n.spec =
                n.spec.attribute("nodename", json!(n.nodename)).attribute("hypervisor_hostname", json!(n.nodename));
        }
        if per_host.get(&n.service_host).is_some_and(|&c| c > 1) {
            n.spec.name = format!("{}:{}", n.service_host, n.nodename);
            n.spec.service_host = Some(n.service_host.clone());
        } else {
            n.spec.name = n.name.clone();
        }
        if let Some(uuid) = &n.uuid {
            n.spec = n.spec.attribute("uuid", json!(uuid));
        }
        if let Some(first) = spec.hosts.iter().find(|h| h.name == n.spec.name) {
            return Err(ImportError::Duplicate {
                origin: n.origin.clone(),
                object: ObjectRef::new("host", first.name.clone()).into(),
                first: "a hypervisor or resource provider of the same name".into(),
            });
        }
        spec.hosts.push(n.spec);
    }
    spec.aggregates = aggregates;
    t.warnings.extend(warnings);
    Ok(Cluster::from_spec(&spec)?)
}

fn provider_warning(p: &Provider, message: &str) -> ImportWarning {
    ImportWarning {
        origin: p.origin.clone(),
        object: Some(ObjectRef::new("resource_provider", p.uuid.clone())),
        field: String::new(),
        message: message.to_owned(),
    }
}

/// A provider's inventories, usages, traits and consumers onto a host.
fn add_provider(node: &mut Node, p: &Provider, warnings: &mut Vec<ImportWarning>) {
    let mut units = serde_json::Map::new();
    for (class, inv) in &p.inventories {
        let kind = resource_kind(class);
        let used = p.usages.get(class).copied().unwrap_or(0.0);
        let r = ResourceSpec::new(inv.total).reserved(inv.reserved).used(used).allocation_ratio(inv.allocation_ratio);
        node.spec.resources.insert(kind.clone(), r);
        if inv.min_unit > 1.0 || inv.step_size > 1.0 || inv.max_unit < inv.total {
            units.insert(kind, json!([inv.min_unit, inv.max_unit, inv.step_size]));
        }
        node.has_resources = true;
    }
    for class in p.usages.keys().filter(|c| !p.inventories.contains_key(*c)) {
        warnings.push(provider_warning(p, &format!("usage of {class} without an inventory: ignored")));
    }
    if !units.is_empty() {
        node.spec.attributes.insert(PLACEMENT_UNITS.into(), Value::Object(units));
    }
    for tr in &p.traits {
        node.spec.labels.insert(tr.clone(), "true".into());
    }
    for c in &p.consumers {
        if !node.spec.instances.iter().any(|i| i.id == *c) {
            node.spec.instances.push(InstanceSpec::new(c.clone()));
        }
    }
}

impl OpenStackCloud {
    /// The cloud answering under `config` instead (the hosts stay as read).
    pub fn with_config(mut self, config: SchedulerConfig) -> Self {
        self.config = config;
        self
    }

    /// The flavor named (or with id) `name`.
    pub fn flavor(&self, name: &str) -> Option<&Flavor> {
        self.flavors
            .iter()
            .find(|f| f.name == name)
            .or_else(|| self.flavors.iter().find(|f| f.id.as_deref() == Some(name)))
    }

    /// The nova engine's request for `count` instances of flavor `name`, as Nova asks
    /// Placement for it: its memory, vCPUs and disk (root, ephemeral and swap rounded up to
    /// whole GiB; a volume-backed instance's root disk is not known here and is counted), a
    /// `resources:CLASS=N` extra spec setting the amount of a class (`0` removes it), its
    /// required and forbidden traits as a host selector.
    ///
    /// # Errors
    ///
    /// [`CloudError::UnknownFlavor`]; [`CloudError::Build`] for a `resources:` amount that is
    /// not a whole number.
    pub fn request(&self, name: &str, count: u32) -> Result<NovaRequest, CloudError> {
        let flavor = self.flavor(name).ok_or_else(|| CloudError::UnknownFlavor {
            name: name.to_owned(),
            known: self.flavors.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", "),
        })?;
        let mut request = NovaRequest::for_flavor(count, flavor.clone());
        request.vm.image = Some(Image::default());
        // Placement's DISK_GB counts the swap too, in whole GiB rounded up.
        let swap_gb = (flavor.swap / 1024.0).ceil();
        if swap_gb > 0.0 {
            let disk = flavor.root_gb + flavor.ephemeral_gb + swap_gb;
            request.request.resources.insert("disk_gb".into(), disk);
        }
        let mut traits = Vec::new();
        for (key, value) in flavor.extra_specs.iter() {
            if let Some(class) = key.strip_prefix("resources:") {
                let amount: u64 = value.trim().parse().map_err(|_| BuildError::Config {
                    message: format!("flavor `{name}`: extra spec `{key}` is `{value}`, not a whole number"),
                })?;
                let kind = resource_kind(class);
                if amount == 0 {
                    request.request.resources.remove(&kind);
                } else {
                    request.request.resources.insert(kind, amount as f64);
                }
            } else if let Some(t) = key.strip_prefix("trait:") {
                match value {
                    "required" => traits.push(t.to_owned()),
                    "forbidden" => traits.push(format!("not {t}")),
                    _ => {}
                }
            }
        }
        if !traits.is_empty() {
            let expr = traits.join(" and ").parse().map_err(|e: crate::error::ParseError| BuildError::Config {
                message: format!("flavor `{name}`: its traits do not make a selector: {e}"),
            })?;
            request.request.selector = Some(expr);
        }
        Ok(request)
    }

    /// The server group of id (or name) `group`.
    pub fn server_group(&self, group: &str) -> Option<&ServerGroup> {
        self.server_groups
            .iter()
            .find(|g| g.name == group)
            .or_else(|| self.server_groups.iter().find(|g| self.group_names.get(&g.name).is_some_and(|n| n == group)))
    }

    /// [`request`](Self::request) for instances that join server group `group` (by id or
    /// name): the group's members and the hosts they run on, plus the request's own instances
    /// as members, as Nova adds them before it schedules.
    ///
    /// # Errors
    ///
    /// As [`request`](Self::request); [`CloudError::UnknownGroup`].
    pub fn request_in_group(&self, name: &str, count: u32, group: &str) -> Result<NovaRequest, CloudError> {
        let mut request = self.request(name, count)?;
        let mut g = self.server_group(group).cloned().ok_or_else(|| CloudError::UnknownGroup {
            name: group.to_owned(),
            known: self.server_groups.iter().map(|g| g.name.as_str()).collect::<Vec<_>>().join(", "),
        })?;
        for i in 0..count {
            let uuid = request.vm.instance_uuid(i).into_owned();
            if !g.members.contains(&uuid) {
                g.members.push(uuid);
            }
        }
        request.vm.server_group = Some(g);
        Ok(request)
    }

    /// The scheduler the answers run: Placement's step (`ResourceFilter`, `LabelSelectorFilter`),
    /// the configured filters and weighers, and `PlacementUnitsFilter`.
    ///
    /// # Errors
    ///
    /// [`BuildError`] when the configuration does not build.
    pub fn scheduler(&self) -> Result<NovaScheduler, BuildError> {
        let mut config = self.config.clone();
        for (i, f) in ["ResourceFilter", "LabelSelectorFilter"].iter().enumerate() {
            if !config.enabled_filters.iter().any(|g| g == f) {
                config.enabled_filters.insert(i, (*f).to_owned());
            }
        }
        let units = filter_fn("PlacementUnitsFilter", |cx, host| {
            let Some(units) = cx.host(host).attribute(PLACEMENT_UNITS).and_then(Value::as_object) else {
                return true;
            };
            cx.request().resources.iter().all(|(kind, &amount)| {
                let Some([min, max, step]) = units
                    .get(kind)
                    .and_then(Value::as_array)
                    .and_then(|u| Some([u.first()?.as_f64()?, u.get(1)?.as_f64()?, u.get(2)?.as_f64()?]))
                else {
                    return true;
                };
                amount <= 0.0 || (amount >= min && amount <= max && (amount / step).fract() == 0.0)
            })
        })
        .local_to_host()
        .named("PlacementUnitsFilter");
        config.builder()?.filter(units).build()
    }

    /// Where the filter scheduler puts `count` instances of flavor `name`.
    ///
    /// # Errors
    ///
    /// As [`request`](Self::request) and [`scheduler`](Self::scheduler); the scheduler's own.
    pub fn place(&self, name: &str, count: u32) -> Result<Outcome, CloudError> {
        self.schedule(&self.request(name, count)?)
    }

    /// Places `request` (from [`request`](Self::request) or
    /// [`request_in_group`](Self::request_in_group), changed as the caller likes).
    ///
    /// # Errors
    ///
    /// As [`scheduler`](Self::scheduler); the scheduler's own.
    pub fn schedule(&self, request: &NovaRequest) -> Result<Outcome, CloudError> {
        Ok(self.scheduler()?.schedule(&self.cluster, request)?)
    }

    /// One instance of flavor `name` with every filter's verdict on every host and the weighed
    /// hosts (the `Explanation`'s `rejections`, `verdicts` and `top`).
    ///
    /// # Errors
    ///
    /// As [`place`](Self::place).
    pub fn explain(&self, name: &str) -> Result<Outcome, CloudError> {
        let top = u32::try_from(self.cluster.len()).unwrap_or(u32::MAX).min(20);
        let request = self.request(name, 1)?.explain(ExplainOptions::detailed(top));
        Ok(self.scheduler()?.schedule(&self.cluster, &request)?)
    }

    /// How many more instances of flavor `name` fit, per availability zone and aggregate
    /// ([`NovaScheduler::instances`]).
    ///
    /// # Errors
    ///
    /// As [`place`](Self::place).
    pub fn capacity(&self, name: &str) -> Result<CloudCapacity, CloudError> {
        let request = self.request(name, 1)?;
        let instances = self.scheduler()?.instances(&self.cluster, &request)?;
        let mut aggregates: BTreeMap<String, (u32, u64)> = BTreeMap::new();
        for h in &instances.hosts {
            let Some(host) = self.cluster.host(h.host) else { continue };
            for a in host.aggregates.iter() {
                if let Some(agg) = self.cluster.aggregates().get(a.index()) {
                    let e = aggregates.entry(agg.name.to_string()).or_default();
                    e.0 += 1;
                    e.1 += u64::from(h.fits);
                }
            }
        }
        let zones = instances.zones.iter().map(|z| (z.name.clone(), z.hosts, z.fits)).collect();
        Ok(CloudCapacity {
            total: instances.total,
            zones,
            aggregates: aggregates.into_iter().map(|(k, (h, f))| (k, h, f)).collect(),
            instances,
        })
    }
}
