//! The filter scheduler reference tool's scenario format: one JSON file with a `config`, the
//! `aggregates`, the `hosts` (as the filter scheduler's HostState sees them) and a `request`.
//! [`Scenario::from_json`] turns it into a [`Cluster`], a [`Request`] and a [`SchedulerConfig`];
//! [`Scenario::output`] prints a [`Outcome`] in the tool's output shape (selections,
//! `no_valid_host`, the first instance's per-filter removals and its weighed list), so the two
//! answers can be compared by diffing two JSON files.
//!
//! How a scenario host maps onto the snapshot:
//!
//! | scenario | snapshot |
//! |---|---|
//! | `total_usable_ram_mb`, `free_ram_mb`, `ram_allocation_ratio` | `memory_mb`: capacity, used = total − free, ratio |
//! | `vcpus_total`, `vcpus_used`, `cpu_allocation_ratio` | `vcpus`: capacity, used, ratio |
//! | `total_usable_disk_gb`, `free_disk_mb` (or `free_disk_gb`, `disk_available_least_gb`), `disk_allocation_ratio` | `disk_gb`: capacity, used = total − free / 1024, ratio; free is the lesser of `free_disk_gb` and `disk_available_least_gb` (it may be negative); without `total_usable_disk_gb` the total is `free_disk_gb` as given (or `free_disk_mb` / 1024, rounded down) |
//! | `name` given by several entries (one per `nodename`) | one host per entry, named by its label `name:nodename`, a node of [service host](crate::snapshot::HostSpec::service_host) `name`; the service fields are the first entry's, the aggregate memberships the union of the entries' |
//! | `enabled`, `up`, `forced_down` | state `enabled`, `up` (false when forced down) |
//! | `availability_zone` | membership of aggregate `az:<zone>` with metadata `availability_zone` |
//! | `aggregates` | memberships |
//! | `instances` | running instances (ids only), on the node that lists them; the group and affinity rules read the service host's list ([`Cluster::service_instances`]) |
//! | `metrics` | metrics, truncated to integers (`cpu.*percent` × 100 first); a list entry without `value` (a NUMA memory-bandwidth metric with `numa_membw_values`) goes by name to attribute [`METRICS_WITHOUT_VALUE`] |
//! | everything else (`hypervisor_type`, `hypervisor_version`, `cpu_info`, `supported_instances`, `host_ip`, `stats`, counters, `nodename`) | host attributes; `cpu_info` as a JSON string; `stats` with the counters added as strings (`num_instances`, `io_workload`, `failed_builds`), and a counter the record does not give read from `stats` with Python's `int()`, as Nova's host state reads it; a `host_ip` that is no IPv4 or IPv6 address is an error, as in Nova's compute node record |
//!
//! The request's `scheduler_hints` become [`VmSpec::hints`] as the tool hands them to the
//! filters (a one-item list reads as the bare string). A rebuild is said the tool's way, with the
//! hint `_nova_check_type` (`"rebuild"` or `["rebuild"]`, see [`VmSpec::is_rebuild`]); any
//! check type sends forced hosts through the filters ([`VmSpec::bypasses_filters`]). There is no
//! separate `rebuild` field.
//!
//! The first instance's trace counts as the tool does: the first filter's `in` is the number of
//! hosts the request's host lists keep ([`VmSpec::keeps`]); the rows after a filter that leaves
//! no host are `not_reached`; every row is `bypassed` when forced hosts skip the filters or when
//! `ignore_hosts` leaves nothing.
//!
//! A server group's `max_server_per_host` must read (with Python's `int()`) as a whole number
//! from 1, as Nova's API demands; the reference tool would raise only once the anti-affinity
//! filter reads it, placewise refuses the scenario as it reads it.
//!
//! The `config` must list `weighers`, as the tool demands (Nova's default, every weigher, has no
//! stable order); without `enabled_filters` Nova's [`DEFAULT_FILTERS`] run. The image's
//! architecture, hypervisor type, VM mode and version predicate (under current or legacy names)
//! and each host's `supported_instances` entries are checked as Nova's fields check them, before
//! any filter runs: a name Nova does not know is an error, as it is in Nova. So is a request for
//! no instance; an empty `instance_uuids` list counts as none given, as in the tool.
//!
//! Scenario features placewise does not model (NUMA topology, PCI requests, a requested
//! destination) are reported as errors, never ignored.

use crate::error::BuildError;
use crate::explain::Explanation;
use crate::id::InputSet;
use crate::nova::config::SchedulerConfig;
use crate::nova::filters::{check_image_properties, check_supported_instance, nova_attribute_warnings};
use crate::nova::host_state::METRICS_WITHOUT_VALUE;
use crate::nova::pyvalue::parse_py_int;
use crate::nova::request::{Flavor, Image, NovaRequest, ServerGroup, VmSpec};
use crate::request::Request;
use crate::schedule::Outcome;
use crate::snapshot::{
    AggregateSpec, AttributeWarning, Cluster, ClusterSpec, HostSpec, HostState, InstanceSpec, ResourceSpec,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::net::IpAddr;

// The types read from JSON take the object form only (see `crate::json`).
crate::json::object_form!(RawScenario, RawAggregate, RawHost, RawRequest, RawFlavor, RawImage, RawGroup);

/// The numeric host attributes kept in dense columns: the counters and the version that the
/// per-instance filters and the weighers read for every host.
pub const HOT_ATTRIBUTES: &[&str] = &["num_io_ops", "num_instances", "failed_builds", "hypervisor_version"];

/// The host attributes interned into host classes
/// ([`ClusterSpec::class_attributes`](crate::snapshot::ClusterSpec::class_attributes)): what
/// ComputeCapabilitiesFilter and ImagePropertiesFilter read and most hosts share with many
/// others (the CPU model, the hypervisor, its version, the supported instances, the stats).
/// Those filters judge each distinct combination once per request.
pub const CLASS_ATTRIBUTES: &[&str] =
    &["cpu_info", "hypervisor_type", "hypervisor_version", "stats", "supported_instances"];

/// Metric names the filter scheduler knows.
pub const KNOWN_METRICS: &[&str] = &[
    "cpu.frequency",
    "cpu.user.time",
    "cpu.kernel.time",
    "cpu.idle.time",
    "cpu.iowait.time",
    "cpu.user.percent",
    "cpu.kernel.percent",
    "cpu.idle.percent",
    "cpu.iowait.percent",
    "cpu.percent",
    "numa.membw.max",
    "numa.membw.current",
];

#[derive(Debug, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
struct RawScenario {
    #[serde(default)]
    generator: Option<Value>,
    #[serde(default)]
    config: Value,
    #[serde(default)]
    aggregates: Vec<RawAggregate>,
    hosts: Vec<RawHost>,
    request: RawRequest,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
struct RawAggregate {
    name: String,
    #[serde(default)]
    metadata: BTreeMap<String, Value>,
    #[serde(default)]
    hosts: Vec<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
struct RawHost {
    name: String,
    nodename: Option<String>,
    uuid: Option<String>,
    total_usable_ram_mb: i64,
    free_ram_mb: i64,
    vcpus_total: i64,
    vcpus_used: i64,
    total_usable_disk_gb: Option<i64>,
    free_disk_mb: Option<i64>,
    free_disk_gb: Option<i64>,
    disk_available_least_gb: Option<i64>,
    cpu_allocation_ratio: Option<f64>,
    ram_allocation_ratio: Option<f64>,
    disk_allocation_ratio: Option<f64>,
    hypervisor_type: Option<String>,
    hypervisor_version: Option<i64>,
    host_ip: Option<String>,
    cpu_info: Option<Value>,
    supported_instances: Option<Vec<Vec<String>>>,
    num_instances: Option<i64>,
    num_io_ops: Option<i64>,
    failed_builds: Option<i64>,
    #[serde(default)]
    stats: BTreeMap<String, Value>,
    #[serde(default)]
    metrics: Option<Value>,
    #[serde(default)]
    instances: Vec<String>,
    availability_zone: Option<String>,
    #[serde(default)]
    aggregates: Vec<String>,
    enabled: Option<bool>,
    up: Option<bool>,
    forced_down: Option<bool>,
    disabled_reason: Option<String>,
    trust_level: Option<String>,
    numa_topology: Option<Value>,
    pci_device_pools: Option<Value>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
struct RawRequest {
    num_instances: Option<u32>,
    instance_uuids: Option<Vec<String>>,
    project_id: Option<String>,
    user_id: Option<String>,
    flavor: RawFlavor,
    image: Option<RawImage>,
    image_props: Option<BTreeMap<String, Value>>,
    #[serde(default)]
    scheduler_hints: BTreeMap<String, Value>,
    availability_zone: Option<String>,
    instance_group: Option<RawGroup>,
    #[serde(default)]
    ignore_hosts: Option<Vec<String>>,
    #[serde(default)]
    force_hosts: Option<Vec<String>>,
    #[serde(default)]
    force_nodes: Option<Vec<String>>,
    #[serde(default)]
    retry_hosts: Vec<String>,
    requested_destination: Option<Value>,
    numa_topology: Option<Value>,
    pci_requests: Option<Value>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
struct RawFlavor {
    name: Option<String>,
    flavorid: Option<Value>,
    memory_mb: i64,
    vcpus: i64,
    #[serde(default)]
    root_gb: i64,
    #[serde(default)]
    ephemeral_gb: i64,
    #[serde(default)]
    swap: i64,
    /// In the order written: Nova checks the specs in the flavor's order.
    #[serde(default, with = "crate::json::ordered")]
    extra_specs: Vec<(String, Value)>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
struct RawImage {
    id: Option<String>,
    #[serde(default)]
    properties: BTreeMap<String, Value>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
struct RawGroup {
    uuid: Option<String>,
    name: Option<String>,
    policy: String,
    #[serde(default)]
    hosts: Vec<String>,
    #[serde(default)]
    members: Vec<String>,
    max_server_per_host: Option<Value>,
    add_request_instances_to_members: Option<bool>,
}

/// A scenario in the reference tool's format, turned into placewise's values.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Scenario {
    /// The hosts, in file order (host ids follow it).
    pub cluster: Cluster,
    /// The request.
    pub request: NovaRequest,
    /// The filters, weighers and options.
    pub config: SchedulerConfig,
    /// Each host's output label: `name`, or `name:nodename` when they differ.
    pub labels: Vec<String>,
}

/// Nova 34's default `[filter_scheduler] enabled_filters`, which a scenario's `config` without
/// `enabled_filters` runs.
pub const DEFAULT_FILTERS: &[&str] = &[
    "ComputeFilter",
    "ComputeCapabilitiesFilter",
    "ImagePropertiesFilter",
    "ServerGroupAntiAffinityFilter",
    "ServerGroupAffinityFilter",
];

/// A scenario's `config` as the tool reads it: `weighers` is required (Nova's default, every
/// weigher, comes in no stable order, and weights are float sums), and without
/// `enabled_filters` Nova's [`DEFAULT_FILTERS`] run.
fn scenario_config(config: Value) -> Result<SchedulerConfig, BuildError> {
    let given = |key: &str| config.get(key).is_some();
    if matches!(config, Value::Object(_) | Value::Null) && !given("weighers") {
        return Err(BuildError::Config {
            message: "the scenario's `config` must list `weighers`: Nova's default (every weigher) has no stable order"
                .into(),
        });
    }
    let defaults = !given("enabled_filters");
    let mut config = SchedulerConfig::try_from(config)?;
    if defaults {
        config.enabled_filters = DEFAULT_FILTERS.iter().map(|&f| f.to_owned()).collect();
    }
    Ok(config)
}

fn unsupported(what: &str) -> BuildError {
    BuildError::Config { message: format!("unsupported scenario feature: {what}") }
}

/// A JSON value as the string the filter scheduler stores (`str(v)` for scalars).
fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        other => other.to_string(),
    }
}

impl Scenario {
    /// What the filters would silently read as a default in the scenario's snapshot: misspelt
    /// or unparsable aggregate metadata keys the filters read (host fields are checked as the
    /// file is read), see [`nova_attribute_warnings`].
    pub fn attribute_warnings(&self) -> Vec<AttributeWarning> {
        nova_attribute_warnings(&self.cluster)
    }

    /// Reads a scenario.
    ///
    /// # Errors
    ///
    /// [`BuildError::Json`] for malformed JSON or an unknown field; [`BuildError::Config`] for an
    /// unsupported feature, a bad configuration or a `num_instances` above the configuration's
    /// `max_request_count`; the snapshot's own validation errors.
    pub fn from_json(json: &str) -> Result<Scenario, BuildError> {
        let raw: RawScenario = crate::json::from_str(json)?;
        let _ = raw.generator;
        let config = scenario_config(raw.config)?;
        let ratio = |kind: &str, default: f64| config.allocation_ratios.get(kind).copied().unwrap_or(default);
        let (cpu_ratio, ram_ratio, disk_ratio) = (ratio("cpu", 4.0), ratio("ram", 1.0), ratio("disk", 1.0));

        // Aggregates in first-seen order: declared ones, then per-host memberships and zones.
        let mut aggregates: Vec<(String, BTreeMap<String, String>)> = Vec::new();
        let mut members: BTreeMap<String, Vec<String>> = BTreeMap::new();
        fn slot<'a>(
            list: &'a mut Vec<(String, BTreeMap<String, String>)>,
            name: &str,
        ) -> &'a mut BTreeMap<String, String> {
            let at = match list.iter().position(|a| a.0 == name) {
                Some(at) => at,
                None => {
                    list.push((name.to_owned(), BTreeMap::new()));
                    list.len() - 1
                }
            };
            &mut list[at].1
        }
        for a in &raw.aggregates {
            let meta = slot(&mut aggregates, &a.name);
            meta.extend(a.metadata.iter().map(|(k, v)| (k.clone(), as_text(v))));
            for h in &a.hosts {
                members.entry(h.clone()).or_default().push(a.name.clone());
            }
        }
        let mut spec = ClusterSpec {
            hot_attributes: HOT_ATTRIBUTES.iter().map(|a| a.to_string()).collect(),
            class_attributes: CLASS_ATTRIBUTES.iter().map(|a| a.to_string()).collect(),
            ..ClusterSpec::default()
        };
        // Aggregate membership belongs to the service host: every entry of a host gets the
        // union of what its entries name, in first-seen order.
        let mut host_aggregates: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        let mut entries: BTreeMap<&str, usize> = BTreeMap::new();
        for h in &raw.hosts {
            if h.numa_topology.is_some() {
                return Err(unsupported(&format!("numa_topology on host `{}`", h.name)));
            }
            if h.pci_device_pools.is_some() {
                return Err(unsupported(&format!("pci_device_pools on host `{}`", h.name)));
            }
            *entries.entry(&h.name).or_default() += 1;
            let mut names = members.remove(&h.name).unwrap_or_default();
            names.extend(h.aggregates.iter().cloned());
            if let Some(az) = &h.availability_zone {
                let name = format!("az:{az}");
                slot(&mut aggregates, &name).insert("availability_zone".into(), az.clone());
                names.push(name);
            }
            let union = host_aggregates.entry(&h.name).or_default();
            for n in names {
                slot(&mut aggregates, &n);
                if !union.contains(&n) {
                    union.push(n);
                }
            }
        }
        let mut labels = Vec::with_capacity(raw.hosts.len());
        let mut first_entry: BTreeMap<&str, &RawHost> = BTreeMap::new();
        for h in &raw.hosts {
            let names = host_aggregates.get(h.name.as_str()).cloned().unwrap_or_default();
            let mut host = Scenario::host(h, names, (cpu_ratio, ram_ratio, disk_ratio))?;
            let node = h.nodename.as_deref().unwrap_or(&h.name);
            let label = if node == h.name { h.name.clone() } else { format!("{}:{node}", h.name) };
            if entries.get(h.name.as_str()).is_some_and(|&n| n > 1) {
                // One of several nodes behind the service host `name`: the snapshot names the
                // node by its label, and the service fields are the host's first entry's.
                let first = *first_entry.entry(&h.name).or_insert(h);
                host.name = label.clone();
                host.service_host = Some(h.name.clone());
                host.state = Scenario::service_state(first);
                host = host.attribute("forced_down", json!(first.forced_down.unwrap_or(false)));
            }
            spec.hosts.push(host);
            labels.push(label);
        }
        if let Some(orphan) = members.keys().next() {
            return Err(BuildError::UnknownReference {
                kind: "host",
                name: orphan.clone(),
                context: "an aggregate's host list".into(),
            });
        }
        spec.aggregates = aggregates
            .into_iter()
            .map(|(name, metadata)| {
                let mut a = AggregateSpec::new(name);
                a.metadata = metadata;
                a
            })
            .collect();
        let cluster = Cluster::from_spec(&spec)?;
        let request = Scenario::request(raw.request, config.max_count)?;
        Ok(Scenario { cluster, request, config, labels })
    }

    fn host(h: &RawHost, aggregates: Vec<String>, (cpu, ram, disk): (f64, f64, f64)) -> Result<HostSpec, BuildError> {
        // Without total_usable_disk_gb the total is the free amount in whole GiB as given,
        // before disk_available_least_gb lowers it (the reference tool's rule).
        let (free_disk_mb, free_gb_given) = match (h.free_disk_mb, h.free_disk_gb) {
            (Some(mb), _) => (mb, mb.div_euclid(1024)),
            (None, Some(given)) => {
                let gb = h.disk_available_least_gb.map_or(given, |least| given.min(least));
                let mb = gb.checked_mul(1024).ok_or_else(|| BuildError::Config {
                    message: format!("host `{}`: free_disk_gb {gb} is too large to count in MiB", h.name),
                })?;
                (mb, given)
            }
            (None, None) => {
                return Err(BuildError::Config {
                    message: format!("host `{}` needs free_disk_mb or free_disk_gb", h.name),
                })
            }
        };
        let total_disk_gb = h.total_usable_disk_gb.unwrap_or(free_gb_given);
        // Used amounts may exceed capacity (free can be negative); a free amount above the total
        // would be negative use, which the snapshot refuses with the host and field named.
        let used = |total: i64, free: f64| total as f64 - free;
        let mut host = HostSpec::new(h.name.clone())
            .resource(
                "memory_mb",
                ResourceSpec::new(h.total_usable_ram_mb as f64)
                    .used(used(h.total_usable_ram_mb, h.free_ram_mb as f64))
                    .allocation_ratio(h.ram_allocation_ratio.unwrap_or(ram)),
            )
            .resource(
                "vcpus",
                ResourceSpec::new(h.vcpus_total as f64)
                    .used(h.vcpus_used as f64)
                    .allocation_ratio(h.cpu_allocation_ratio.unwrap_or(cpu)),
            )
            .resource(
                "disk_gb",
                ResourceSpec::new(total_disk_gb as f64)
                    .used(used(total_disk_gb, free_disk_mb as f64 / 1024.0))
                    .allocation_ratio(h.disk_allocation_ratio.unwrap_or(disk)),
            );
        let forced_down = h.forced_down.unwrap_or(false);
        host.state = Scenario::service_state(h);
        host.aggregates = aggregates;
        let mut stats: Map<String, Value> = h.stats.iter().map(|(k, v)| (k.clone(), Value::from(as_text(v)))).collect();
        let counters = [
            ("num_instances", "num_instances", h.num_instances),
            ("num_io_ops", "io_workload", h.num_io_ops),
            ("failed_builds", "failed_builds", h.failed_builds),
        ];
        for (attribute, stat, value) in counters {
            let count = match value {
                Some(v) => {
                    stats.insert(stat.into(), Value::from(v.to_string()));
                    v
                }
                // Nova's host state reads the counters from the stats, with Python's int().
                None => match stats.get(stat).and_then(Value::as_str) {
                    Some(text) => parse_py_int(text).ok_or_else(|| BuildError::Config {
                        message: format!(
                            "host `{}`: stats `{stat}` is `{text}`, not a whole number (Nova reads it with int())",
                            h.name
                        ),
                    })?,
                    None => 0,
                },
            };
            host = host.attribute(attribute, json!(count));
        }
        host = host
            .attribute("stats", Value::Object(stats))
            .attribute("hypervisor_type", json!(h.hypervisor_type.as_deref().unwrap_or("QEMU")))
            .attribute("hypervisor_version", json!(h.hypervisor_version.unwrap_or(0)))
            .attribute("forced_down", json!(forced_down));
        if let Some(node) = &h.nodename {
            host = host.attribute("nodename", json!(node)).attribute("hypervisor_hostname", json!(node));
        }
        if let Some(ip) = &h.host_ip {
            // Nova's compute node record holds an IP address (`IPAddressField`), and refuses
            // anything else.
            if ip.parse::<IpAddr>().is_err() {
                return Err(BuildError::Config {
                    message: format!("host `{}`: host_ip `{ip}` is not an IP address", h.name),
                });
            }
            host = host.attribute("host_ip", json!(ip));
        }
        if let Some(uuid) = &h.uuid {
            host = host.attribute("uuid", json!(uuid));
        }
        if let Some(reason) = &h.disabled_reason {
            host = host.attribute("disabled_reason", json!(reason));
        }
        if let Some(trust) = &h.trust_level {
            host = host.attribute("trust_level", json!(trust));
        }
        match &h.cpu_info {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => host = host.attribute("cpu_info", json!(s)),
            Some(other) => host = host.attribute("cpu_info", json!(other.to_string())),
        }
        if let Some(si) = &h.supported_instances {
            // Nova builds an HVSpec from each entry and refuses the record if one is invalid.
            for entry in si {
                check_supported_instance(entry)
                    .map_err(|e| BuildError::Config { message: format!("host `{}`: {e}", h.name) })?;
            }
            host = host.attribute("supported_instances", json!(si));
        }
        let metrics = metric_values(&h.name, h.metrics.as_ref())?;
        for (name, value) in metrics.valued {
            host = host.metric(name, value);
        }
        if !metrics.without_value.is_empty() {
            host = host.attribute(METRICS_WITHOUT_VALUE, json!(metrics.without_value));
        }
        for id in &h.instances {
            host = host.instance(InstanceSpec::new(id.clone()));
        }
        Ok(host)
    }

    /// The service fields of a host entry as a snapshot state.
    fn service_state(h: &RawHost) -> HostState {
        HostState {
            up: h.up.unwrap_or(true) && !h.forced_down.unwrap_or(false),
            enabled: h.enabled.unwrap_or(true),
            ..HostState::default()
        }
    }

    fn request(r: RawRequest, max_count: u32) -> Result<NovaRequest, BuildError> {
        if r.requested_destination.as_ref().is_some_and(|v| !v.is_null()) {
            return Err(unsupported("requested_destination"));
        }
        if r.numa_topology.as_ref().is_some_and(|v| !v.is_null()) {
            return Err(unsupported("a NUMA topology request"));
        }
        if r.pci_requests.as_ref().is_some_and(|v| !v.is_null()) {
            return Err(unsupported("PCI requests"));
        }
        let count = r.num_instances.unwrap_or(1);
        // Nova's API asks for at least one instance; the tool raises on none.
        if count == 0 {
            return Err(BuildError::Config { message: "request.num_instances must be at least 1".into() });
        }
        // The reader writes per-instance ids into the server group: bounded by the count limit
        // the scheduler would apply anyway.
        if count > max_count {
            return Err(BuildError::Config {
                message: format!("request.num_instances {count} is above the largest request count {max_count}"),
            });
        }
        // An empty list is no list, as in the tool (Python's `or`).
        let uuids = match r.instance_uuids.filter(|list| !list.is_empty()) {
            Some(list) if list.len() != count as usize => {
                return Err(BuildError::Config {
                    message: "request.instance_uuids must have num_instances entries".into(),
                })
            }
            Some(list) => list,
            // The defaults come from `VmSpec::instance_uuid` on demand.
            None => Vec::new(),
        };
        let f = r.flavor;
        let flavor = Flavor {
            name: f.name.clone().unwrap_or_else(|| "flavor".into()),
            id: Some(
                f.flavorid.as_ref().map(as_text).unwrap_or_else(|| f.name.clone().unwrap_or_else(|| "flavor".into())),
            ),
            memory_mb: f.memory_mb as f64,
            vcpus: f.vcpus as f64,
            root_gb: f.root_gb as f64,
            ephemeral_gb: f.ephemeral_gb as f64,
            swap: f.swap as f64,
            extra_specs: f.extra_specs.iter().map(|(k, v)| (k.as_str(), as_text(v))).collect(),
        };
        let mut image = Image::default();
        if let Some(img) = r.image {
            image.id = img.id;
            image.properties = img.properties;
        }
        if let Some(props) = r.image_props {
            image.properties.extend(props);
        }
        check_image_properties(&image.properties).map_err(|message| BuildError::Config { message })?;
        let server_group = r.instance_group.map(|g| -> Result<ServerGroup, BuildError> {
            // Nova's API takes a positive whole number only; its scheduler reads the rule with
            // Python's int().
            let max_server_per_host = g
                .max_server_per_host
                .as_ref()
                .map(|v| {
                    let text = as_text(v);
                    let limit = parse_py_int(&text).and_then(|n| u32::try_from(n).ok()).filter(|&n| n >= 1);
                    limit.ok_or_else(|| BuildError::Config {
                        message: format!(
                            "server group: max_server_per_host `{text}` is not a whole number from 1 to {}",
                            u32::MAX
                        ),
                    })
                })
                .transpose()?;
            let mut members = g.members;
            if g.add_request_instances_to_members.unwrap_or(true) {
                let mut known: InputSet<String> = members.iter().cloned().collect();
                let defaults = VmSpec::default();
                for i in 0..count {
                    let u = uuids.get(i as usize).cloned().unwrap_or_else(|| defaults.instance_uuid(i).into_owned());
                    if known.insert(u.clone()) {
                        members.push(u);
                    }
                }
            }
            Ok(ServerGroup {
                name: g.uuid.or(g.name).unwrap_or_else(|| "group".into()),
                policy: g.policy,
                members,
                hosts: g.hosts,
                max_server_per_host,
            })
        });
        let server_group = server_group.transpose()?;
        // Hints are lists of strings; a one-item list reads as the bare string; a query that is
        // not a string is JSON-encoded, as the reference tool does.
        let hints = r
            .scheduler_hints
            .into_iter()
            .map(|(k, v)| {
                let v = if k == "query" && !v.is_string() { Value::from(v.to_string()) } else { v };
                let items: Vec<String> = match v {
                    Value::Array(list) => list.iter().map(as_text).collect(),
                    other => vec![as_text(&other)],
                };
                let v = if items.len() == 1 { Value::from(items[0].clone()) } else { json!(items) };
                (k, v)
            })
            .collect();
        let _ = r.user_id;
        let vm = VmSpec {
            flavor: Some(flavor.clone()),
            image: Some(image),
            hints,
            project: Some(r.project_id.unwrap_or_else(|| "project".into())),
            server_group,
            instance_uuids: uuids,
            force_hosts: r.force_hosts.unwrap_or_default(),
            force_nodes: r.force_nodes.unwrap_or_default(),
            ignore_hosts: r.ignore_hosts.unwrap_or_default(),
            retry_hosts: r.retry_hosts,
            rebuild: false,
        };
        let mut request = Request::new(count)
            .memory_mb(flavor.memory_mb)
            .vcpus(flavor.vcpus)
            .disk_gb(flavor.root_gb + flavor.ephemeral_gb);
        if let Some(az) = r.availability_zone {
            request = request.zone(az);
        }
        Ok(NovaRequest::new(request, vm))
    }

    /// The placement in the reference tool's output shape: `num_hosts`, `num_instances`,
    /// `no_valid_host`, `selections` (service host names) and `selected_nodes` (node names),
    /// `null` for instances that found none, and `first_instance` with its per-filter `in`/`out`/`removed` and the weighed
    /// list (`host`, `weight`), when the placement's explanation carries verdicts and the top list
    /// (schedule with [`ExplainOptions::detailed`](crate::request::ExplainOptions::detailed) over all hosts).
    pub fn output(&self, placement: &Outcome) -> Value {
        let n = self.request.request.count as usize;
        let label = |h: crate::id::HostId| self.cluster.service_host_name(h).to_owned();
        let node = |h: crate::id::HostId| {
            self.cluster.host(h).map_or(String::new(), |host| {
                host.attribute("nodename").and_then(Value::as_str).unwrap_or(&host.name).to_owned()
            })
        };
        let mut selections: Vec<Value> = placement.selections.iter().map(|s| json!(label(s.host))).collect();
        let mut nodes: Vec<Value> = placement.selections.iter().map(|s| json!(node(s.host))).collect();
        selections.resize(n, Value::Null);
        nodes.resize(n, Value::Null);
        let mut out = json!({
            "placewise": {
                "version": env!("CARGO_PKG_VERSION"),
                "enabled_filters": self.config.enabled_filters,
                "weighers": self.config.weighers,
                "host_subset_size": self.config.options.host_subset_size,
            },
            "num_hosts": self.cluster.len(),
            "num_instances": n,
            "no_valid_host": !placement.is_complete(),
            "selections": selections,
            "selected_nodes": nodes,
        });
        if let Some(first) = self.first_instance(&placement.explanation) {
            out["first_instance"] = first;
        }
        out
    }

    fn first_instance(&self, e: &Explanation) -> Option<Value> {
        if e.verdicts.is_empty() {
            return None;
        }
        let label_of = |name: &str| {
            self.cluster
                .host_id(name)
                .map_or(name.to_owned(), |id| self.labels.get(id.index()).cloned().unwrap_or_default())
        };
        // The filters see the hosts the request's lists keep. When `ignore_hosts` leaves
        // nothing, no filter is called; when forced hosts skip the filters, none is either.
        let vm = &self.request.vm;
        let (mut not_ignored, mut kept) = (0, 0);
        for (id, host) in self.cluster.hosts() {
            let node = host.attribute("nodename").and_then(Value::as_str).unwrap_or(&host.name);
            let service_host = self.cluster.service_host_name(id);
            not_ignored += usize::from(!vm.ignores(service_host));
            kept += usize::from(vm.keeps(service_host, node));
        }
        let bypassed = (!vm.ignore_hosts.is_empty() && not_ignored == 0) || vm.bypasses_filters();
        let mut remaining = kept;
        let mut stopped = false;
        let filters: Vec<Value> = self
            .config
            .enabled_filters
            .iter()
            .map(|name| {
                if bypassed {
                    return json!({"filter": name, "status": "bypassed"});
                }
                if stopped {
                    return json!({"filter": name, "status": "not_reached"});
                }
                let removed: Vec<String> = e
                    .verdicts
                    .iter()
                    .filter(|v| v.instance == Some(0) && v.filter.as_deref() == Some(name.as_str()))
                    .map(|v| label_of(&v.host))
                    .collect();
                let input = remaining;
                remaining = remaining.saturating_sub(removed.len());
                stopped = remaining == 0;
                json!({"filter": name, "status": "ran", "in": input, "out": remaining, "removed": removed})
            })
            .collect();
        let weighed: Vec<Value> = e
            .top
            .iter()
            .map(|r| json!({"host": label_of(&r.host), "weight": r.scores.first().copied().unwrap_or(0.0)}))
            .collect();
        let uuid = self.request.vm.instance_uuid(0).into_owned();
        Some(json!({
            "index": 0,
            "instance_uuid": uuid,
            "hosts_in": self.cluster.len(),
            "filters": filters,
            "weighed": weighed,
        }))
    }
}

/// A host entry's metrics, read by [`metric_values`].
#[derive(Debug)]
struct HostMetrics {
    /// `(name, value)` for the metrics given with a value.
    valued: Vec<(String, f64)>,
    /// The names of the metrics given without one.
    without_value: Vec<String>,
}

/// Metric values as the filter scheduler stores them: integers, truncated toward zero, with the
/// `cpu.*percent` metrics multiplied by 100 first; then the names of the metrics given without a
/// scalar value (a list entry without `value`, whose optional `numa_membw_values` must map to
/// what Python's `int()` reads, as Nova's `MonitorMetric` demands). Unknown names are an error.
fn metric_values(host: &str, metrics: Option<&Value>) -> Result<HostMetrics, BuildError> {
    let error = |message: String| BuildError::Config { message: format!("host `{host}`: {message}") };
    let mut without_value = Vec::new();
    if let Some(Value::Array(list)) = metrics {
        for m in list.iter().filter(|m| m.get("value").is_none()) {
            let name = m.get("name").and_then(Value::as_str).unwrap_or_default();
            if !KNOWN_METRICS.contains(&name) {
                return Err(error(format!("unknown metric `{name}`; known: {}", KNOWN_METRICS.join(", "))));
            }
            match m.get("numa_membw_values") {
                None | Some(Value::Null) => {}
                Some(Value::Object(values)) => {
                    for (node, v) in values {
                        let int = match v {
                            Value::Number(_) | Value::Bool(_) => true,
                            Value::String(text) => parse_py_int(text).is_some(),
                            _ => false,
                        };
                        if !int {
                            return Err(error(format!(
                                "metric `{name}`: numa_membw_values `{node}` is {v}, not a whole number"
                            )));
                        }
                    }
                }
                Some(other) => {
                    return Err(error(format!("metric `{name}`: numa_membw_values must be an object, not {other}")))
                }
            }
            without_value.push(name.to_owned());
        }
    }
    let entries: Vec<(String, f64)> = match metrics {
        // The tool reads `metrics or {}`: every value Python counts as false is no metric.
        None | Some(Value::Null) | Some(Value::Bool(false)) => Vec::new(),
        Some(Value::Number(n)) if n.as_f64() == Some(0.0) => Vec::new(),
        Some(Value::String(text)) if text.is_empty() => Vec::new(),
        Some(Value::Object(map)) => map.iter().map(|(k, v)| (k.clone(), v.as_f64().unwrap_or(f64::NAN))).collect(),
        Some(Value::Array(list)) => list
            .iter()
            .filter(|m| m.get("value").is_some())
            .map(|m| {
                (
                    m.get("name").and_then(Value::as_str).unwrap_or_default().to_owned(),
                    m.get("value").and_then(Value::as_f64).unwrap_or(f64::NAN),
                )
            })
            .collect(),
        Some(_) => {
            return Err(BuildError::Config { message: format!("host `{host}`: metrics must be an object or a list") })
        }
    };
    entries
        .into_iter()
        .map(|(name, value)| {
            if !KNOWN_METRICS.contains(&name.as_str()) {
                return Err(BuildError::Config {
                    message: format!("host `{host}`: unknown metric `{name}`; known: {}", KNOWN_METRICS.join(", ")),
                });
            }
            let scaled = if name.starts_with("cpu.") && name.ends_with("percent") { value * 100.0 } else { value };
            Ok((name, scaled.trunc()))
        })
        .collect::<Result<_, _>>()
        .map(|valued| HostMetrics { valued, without_value })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"{
      "config": {"enabled_filters": ["ComputeFilter"], "weighers": ["FreeRamWeigher"],
                 "allocation_ratios": {"cpu": 8.0}},
      "aggregates": [{"name": "ssd", "metadata": {"ssd": "true"}, "hosts": ["b"]}],
      "hosts": [
        {"name": "a", "total_usable_ram_mb": 4096, "free_ram_mb": 1024, "vcpus_total": 8, "vcpus_used": 2,
         "total_usable_disk_gb": 100, "free_disk_mb": 51200, "availability_zone": "az1",
         "cpu_info": {"arch": "x86_64"}, "num_io_ops": 2, "stats": {"rack": "r1"},
         "metrics": {"cpu.percent": 12.34, "cpu.frequency": 2400.9}},
        {"name": "b", "nodename": "b-node", "total_usable_ram_mb": 8192, "free_ram_mb": 8192, "vcpus_total": 8,
         "vcpus_used": 0, "free_disk_gb": 10, "disk_available_least_gb": 7, "up": false}
      ],
      "request": {"num_instances": 2, "flavor": {"name": "m1", "memory_mb": 512, "vcpus": 1, "root_gb": 5,
                  "swap": 128}, "scheduler_hints": {"query": ["=", "$free_ram_mb", 1024], "same_host": ["u1"]},
                  "instance_group": {"policy": "anti-affinity", "max_server_per_host": 2}}
    }"#;

    #[test]
    fn misspelt_and_unparsable_aggregate_metadata_is_reported() {
        assert_eq!(Scenario::from_json(SMALL).unwrap().attribute_warnings(), []);
        let bad = SMALL.replace(
            r#"{"ssd": "true"}"#,
            r#"{"ssd": "true", "cpu_allocation_ration": "2", "max_io_ops_per_host": "many"}"#,
        );
        let warnings = Scenario::from_json(&bad).unwrap().attribute_warnings();
        let text: Vec<String> = warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "aggregate `ssd`: metadata key `cpu_allocation_ration` is not read; did you mean `cpu_allocation_ratio`?",
                "aggregate `ssd`: metadata `max_io_ops_per_host` = `many` does not parse",
            ]
        );
    }

    #[test]
    fn hosts_map_onto_the_snapshot() {
        let s = Scenario::from_json(SMALL).unwrap();
        let c = &s.cluster;
        let a = c.host(c.host_id("a").unwrap()).unwrap();
        assert_eq!(a.resource(crate::id::ResourceId::MEMORY_MB).used, 3072.0);
        assert_eq!(a.resource(crate::id::ResourceId::VCPUS).allocation_ratio, 8.0);
        assert_eq!(a.resource(crate::id::ResourceId::DISK_GB).used, 50.0);
        assert_eq!(a.attribute("cpu_info"), Some(&json!("{\"arch\":\"x86_64\"}")));
        assert_eq!(a.attribute("stats").unwrap()["io_workload"], "2");
        assert_eq!(a.attribute("num_io_ops"), Some(&json!(2)));
        let cpu_percent = c.symbols().get("cpu.percent").unwrap();
        assert_eq!(a.metric(cpu_percent), Some(1234.0));
        assert_eq!(c.aggregate_metadata(c.host_id("a").unwrap(), "availability_zone"), Some(vec!["az1"]));
        let b = c.host(c.host_id("b").unwrap()).unwrap();
        assert!(!b.state.up);
        // Without a total: free_disk_gb as given is the total, disk_available_least_gb the free amount.
        assert_eq!(b.resource(crate::id::ResourceId::DISK_GB).capacity, 10.0);
        assert_eq!(b.resource(crate::id::ResourceId::DISK_GB).used, 3.0);
        assert_eq!(s.labels, ["a", "b:b-node"]);
        let vm = &s.request.vm;
        assert_eq!(vm.instance_uuid(1), "00000000-0000-0000-0000-000000000001");
        assert_eq!(vm.hints["query"], json!("[\"=\",\"$free_ram_mb\",1024]"));
        assert_eq!(vm.hints["same_host"], json!("u1"));
        assert_eq!(vm.server_group.as_ref().unwrap().members.len(), 2);
        assert_eq!(vm.server_group.as_ref().unwrap().max_server_per_host, Some(2));
        assert_eq!(s.request.request.resources["disk_gb"], 5.0, "swap is not consumed");
    }

    #[test]
    fn unsupported_and_unknown_input_is_an_error() {
        let numa = SMALL.replace("\"up\": false}", "\"up\": false, \"numa_topology\": {}}");
        assert!(Scenario::from_json(&numa).unwrap_err().to_string().contains("numa_topology"));
        let typo = SMALL.replace("\"vcpus_used\": 2", "\"vcpus_usd\": 2");
        assert!(matches!(Scenario::from_json(&typo), Err(BuildError::Json { .. })));
        // Rebuilds are said with the `_nova_check_type` hint, as in the reference tool's format.
        let rebuild = SMALL.replace("\"num_instances\": 2,", "\"num_instances\": 2, \"rebuild\": true,");
        assert!(matches!(Scenario::from_json(&rebuild), Err(BuildError::Json { .. })));
        let metric = SMALL.replace("cpu.frequency", "cpu.freq");
        assert!(Scenario::from_json(&metric).unwrap_err().to_string().contains("unknown metric `cpu.freq`"));
    }

    #[test]
    fn a_server_group_limit_must_be_a_positive_whole_number() {
        let with_limit =
            |limit: &str| SMALL.replace("\"max_server_per_host\": 2", &format!("\"max_server_per_host\": {limit}"));
        for (good, read) in [("2", 2), ("\" 3 \"", 3), ("\"1_0\"", 10)] {
            let vm = Scenario::from_json(&with_limit(good)).unwrap().request.vm;
            assert_eq!(vm.server_group.unwrap().max_server_per_host, Some(read), "{good}");
        }
        for (bad, text) in
            [("\"x\"", "x"), ("0", "0"), ("-1", "-1"), ("2.0", "2.0"), ("true", "True"), ("4294967296", "4294967296")]
        {
            assert_eq!(
                Scenario::from_json(&with_limit(bad)).unwrap_err(),
                BuildError::Config {
                    message: format!(
                        "server group: max_server_per_host `{text}` is not a whole number from 1 to 4294967295"
                    )
                },
            );
        }
    }

    #[test]
    fn a_host_ip_must_be_an_ip_address() {
        let with_ip = |ip: &str| SMALL.replace("\"availability_zone\": \"az1\",", &format!("\"host_ip\": \"{ip}\","));
        for good in ["10.0.0.1", "fd00::1"] {
            assert!(Scenario::from_json(&with_ip(good)).is_ok(), "{good}");
        }
        for bad in ["10.0.0.256", "10.0.0", "host-a", ""] {
            assert_eq!(
                Scenario::from_json(&with_ip(bad)).unwrap_err(),
                BuildError::Config { message: format!("host `a`: host_ip `{bad}` is not an IP address") }
            );
        }
    }

    #[test]
    fn trace_counts_start_from_the_hosts_the_lists_keep() {
        let hosts = ["a", "b", "c"];
        for ignored in 0u32..8 {
            let ignore: Vec<String> =
                (0..3).filter(|i| ignored >> i & 1 == 1).map(|i| hosts[i].to_uppercase()).collect();
            let host = |n: &str| {
                format!(
                    r#"{{"name": "{n}", "total_usable_ram_mb": 4096, "free_ram_mb": 4096, "vcpus_total": 4, "vcpus_used": 0, "free_disk_mb": 10240}}"#
                )
            };
            let json = format!(
                r#"{{"config": {{"enabled_filters": ["ComputeFilter", "RamFilter"], "weighers": ["RAMWeigher"]}},
                    "hosts": [{}], "request": {{"flavor": {{"memory_mb": 1024, "vcpus": 1}}, "ignore_hosts": {}}}}}"#,
                hosts.map(host).join(","),
                json!(ignore)
            );
            let s = Scenario::from_json(&json).unwrap();
            let scheduler = s.config.build().unwrap();
            let request = s.request.clone().explain(crate::request::ExplainOptions::detailed(3));
            let out = s.output(&scheduler.schedule(&s.cluster, &request).unwrap());
            let rows = &out["first_instance"]["filters"];
            let kept = 3 - ignore.len();
            if kept == 0 {
                assert!((0..2).all(|i| rows[i]["status"] == "bypassed"), "{rows}");
            } else {
                assert_eq!(
                    (&rows[0]["in"], &rows[1]["in"], &rows[1]["out"]),
                    (&json!(kept), &json!(kept), &json!(kept))
                );
            }
        }
    }

    /// Regression (campaign 16's mutants against Nova): a `config` without `enabled_filters`
    /// ran no filter; the tool runs Nova's five defaults. A `config` without `weighers` was
    /// accepted; the tool refuses it.
    #[test]
    fn a_config_without_filters_runs_novas_defaults_and_one_without_weighers_is_refused() {
        let without = |key: &str| {
            let mut scenario: Value = serde_json::from_str(SMALL).unwrap();
            scenario["config"].as_object_mut().unwrap().remove(key);
            scenario.to_string()
        };
        let s = Scenario::from_json(&without("enabled_filters")).unwrap();
        assert_eq!(s.config.enabled_filters, DEFAULT_FILTERS);
        assert_eq!(s.config.weighers, ["FreeRamWeigher"]);
        assert!(s.config.build().is_ok());
        // Given, even empty, the list is the scenario's.
        let mut empty: Value = serde_json::from_str(SMALL).unwrap();
        empty["config"]["enabled_filters"] = json!([]);
        assert!(Scenario::from_json(&empty.to_string()).unwrap().config.enabled_filters.is_empty());

        let mut no_config: Value = serde_json::from_str(SMALL).unwrap();
        no_config.as_object_mut().unwrap().remove("config");
        for json in [without("weighers"), no_config.to_string()] {
            let err = Scenario::from_json(&json).unwrap_err();
            assert!(
                matches!(&err, BuildError::Config { message } if message.contains("must list `weighers`")),
                "{err}"
            );
        }
        // A configuration that is no object keeps its own error.
        no_config["config"] = json!(3);
        let err = Scenario::from_json(&no_config.to_string()).unwrap_err();
        assert!(err.to_string().contains("must be a JSON object"), "{err}");
    }

    /// Regression (campaign 16's mutants against Nova): a request for no instance was placed
    /// (the tool raises), and an empty `instance_uuids` was refused (the tool draws the ids).
    #[test]
    fn a_request_needs_an_instance_and_an_empty_uuid_list_is_none() {
        let err = Scenario::from_json(&SMALL.replace("\"num_instances\": 2,", "\"num_instances\": 0,")).unwrap_err();
        assert!(err.to_string().contains("num_instances must be at least 1"), "{err}");
        let empty = SMALL.replace("\"num_instances\": 2,", "\"num_instances\": 2, \"instance_uuids\": [],");
        assert_eq!(Scenario::from_json(&empty).unwrap().request.request.count, 2);
        let short = SMALL.replace("\"num_instances\": 2,", "\"num_instances\": 2, \"instance_uuids\": [\"u\"],");
        assert!(Scenario::from_json(&short).unwrap_err().to_string().contains("must have num_instances entries"));
    }

    /// Regression (campaign 16's mutants against Nova): a counter given only in `stats` read as
    /// 0; Nova's host state reads the counters from the stats with `int()`, and raises when one
    /// is no whole number. A falsy `metrics` is no metric, as in the tool.
    #[test]
    fn counters_missing_from_the_record_are_read_from_the_stats_with_int() {
        let with_stats = |stats: &str| {
            SMALL.replace(r#""num_io_ops": 2, "stats": {"rack": "r1"},"#, &format!(r#""stats": {stats},"#))
        };
        let s = Scenario::from_json(&with_stats(r#"{"io_workload": " +4 ", "failed_builds": "1_2"}"#)).unwrap();
        let a = s.cluster.host(s.cluster.host_id("a").unwrap()).unwrap();
        assert_eq!((a.attribute("num_io_ops"), a.attribute("failed_builds")), (Some(&json!(4)), Some(&json!(12))));
        assert_eq!(a.attribute("num_instances"), Some(&json!(0)));
        let err = Scenario::from_json(&with_stats(r#"{"failed_builds": "<in> a"}"#)).unwrap_err().to_string();
        assert!(err.contains("host `a`: stats `failed_builds` is `<in> a`, not a whole number"), "{err}");
        // The record's own counter wins over the stats.
        let both = SMALL.replace(r#""stats": {"rack": "r1"}"#, r#""stats": {"io_workload": "x"}"#);
        let s = Scenario::from_json(&both).unwrap();
        assert_eq!(s.cluster.host(s.cluster.host_id("a").unwrap()).unwrap().attribute("num_io_ops"), Some(&json!(2)));

        let metrics = |value: &str| {
            let given = r#""metrics": {"cpu.percent": 12.34, "cpu.frequency": 2400.9}"#;
            Scenario::from_json(&SMALL.replace(given, &format!(r#""metrics": {value}"#)))
        };
        for falsy in ["0", "false", r#""""#, "[]", "{}"] {
            assert!(metrics(falsy).is_ok(), "{falsy}");
        }
        assert!(metrics("5").unwrap_err().to_string().contains("metrics must be an object or a list"));
    }

    #[test]
    fn entries_of_one_host_become_nodes_of_one_service_host() {
        let host = |node: &str, extra: &str| {
            format!(
                r#"{{"name": "bm", "nodename": "{node}", "total_usable_ram_mb": 4096, "free_ram_mb": 4096,
                    "vcpus_total": 4, "vcpus_used": 0, "free_disk_mb": 10240{extra}}}"#
            )
        };
        let json = format!(
            r#"{{"config": {{"enabled_filters": [], "weighers": ["RAMWeigher"]}},
                "hosts": [{}, {}], "request": {{"flavor": {{"memory_mb": 1024, "vcpus": 1}}}}}}"#,
            host("n0", r#", "enabled": false, "aggregates": ["a1"], "instances": ["i1"]"#),
            host("n1", r#", "availability_zone": "z""#)
        );
        let s = Scenario::from_json(&json).unwrap();
        let c = &s.cluster;
        let (n0, n1) = (c.host_id("bm:n0").unwrap(), c.host_id("bm:n1").unwrap());
        assert_eq!((c.service_host_name(n0), c.service_host_name(n1)), ("bm", "bm"));
        // The service fields come from the first entry, the memberships are the union.
        assert!(!c.host(n1).unwrap().state.enabled);
        assert_eq!(c.aggregate_metadata(n0, "availability_zone"), Some(vec!["z"]));
        assert!(c.service_has_instance(n1, "i1"));
        assert_eq!(s.labels, ["bm:n0", "bm:n1"]);
    }

    /// Regression: `selections` printed the label `name:nodename` for a host whose one entry
    /// names a different node; the tool prints the service host name there and the node in
    /// `selected_nodes` (found by the random scenarios against Nova).
    #[test]
    fn selections_name_the_service_host_and_selected_nodes_the_node() {
        let s = Scenario::from_json(SMALL).unwrap();
        let scheduler = s.config.build().unwrap();
        let b = s.cluster.host_id("b").unwrap();
        let request = s.request.clone().explain(crate::request::ExplainOptions::detailed(2));
        let mut placement = scheduler.schedule(&s.cluster, &request).unwrap();
        // Whatever was picked, print a placement on `b`, whose entry names node `b-node`.
        placement.selections.truncate(1);
        placement.selections[0].host = b;
        let out = s.output(&placement);
        assert_eq!(out["selections"][0], "b");
        assert_eq!(out["selected_nodes"][0], "b-node");
    }

    /// Issue 42: a metric reported without a scalar `value` (Nova's NUMA memory-bandwidth
    /// metrics carry per-node values instead) made the whole scenario refused; Nova accepts it.
    #[test]
    fn a_metric_without_a_value_is_accepted_by_name() {
        let metrics = |value: &str| {
            let given = r#""metrics": {"cpu.percent": 12.34, "cpu.frequency": 2400.9}"#;
            Scenario::from_json(&SMALL.replace(given, &format!(r#""metrics": {value}"#)))
        };
        let s = metrics(
            r#"[{"name": "cpu.frequency", "value": 2400},
                {"name": "numa.membw.current", "numa_membw_values": {"0": 10, "1": "20", "2": 1.5}},
                {"name": "numa.membw.max"}]"#,
        )
        .unwrap();
        let a = s.cluster.host(s.cluster.host_id("a").unwrap()).unwrap();
        assert_eq!(a.attribute(METRICS_WITHOUT_VALUE), Some(&json!(["numa.membw.current", "numa.membw.max"])));
        assert_eq!(a.metrics.len(), 1, "only the metric with a value is a number");
        assert!(crate::nova::host_state::reports_without_value(a, "numa.membw.max"));
        // What Nova refuses stays refused: an unknown name, a null value, per-node values that
        // are not whole numbers or not a map.
        for (bad, expected) in [
            (r#"[{"name": "numa.membw.min"}]"#, "unknown metric `numa.membw.min`"),
            (r#"[{"name": "numa.membw.max", "value": null}]"#, "not finite"),
            (r#"[{"name": "numa.membw.max", "numa_membw_values": {"0": "x"}}]"#, "`0` is \"x\", not a whole number"),
            (r#"[{"name": "numa.membw.max", "numa_membw_values": [1]}]"#, "must be an object, not [1]"),
        ] {
            let err = metrics(bad).unwrap_err().to_string();
            assert!(err.contains(expected), "{bad}: {err}");
        }
    }
}
