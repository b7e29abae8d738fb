//! The serde form of a snapshot, and the validating builder.
//!
//! [`ClusterSpec`] is what a user writes (or what [`Cluster::to_spec`](crate::snapshot::Cluster::to_spec)
//! gives back): plain strings and numbers. [`ClusterBuilder`] and JSON deserialisation both turn
//! a spec into a [`Cluster`] through the same validation.

use crate::error::BuildError;
use crate::snapshot::{Cluster, DiskType, HostState};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

// The types read from JSON take the object form only (see `crate::json`).
crate::json::object_form!(ClusterSpec, AggregateSpec, InstanceSpec, DiskSpec, HostSpec);
crate::json::object_form!(deserialize_only ResourceSpecFull);

fn default_levels() -> Vec<String> {
    vec!["region".into(), "zone".into()]
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// A whole cluster as plain data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct ClusterSpec {
    /// Topology level names, outermost first. Default `["region", "zone"]`.
    #[serde(default = "default_levels")]
    pub topology_levels: Vec<String>,
    /// Named host sets with metadata; hosts join them by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aggregates: Vec<AggregateSpec>,
    /// The hosts, in id order.
    #[serde(default)]
    pub hosts: Vec<HostSpec>,
    /// Numeric host attributes to keep in dense columns, because filters or weighers read them
    /// for every host (the filter scheduler's `num_io_ops`, `num_instances` …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hot_attributes: Vec<String>,
    /// Host attributes whose values are interned into host classes
    /// ([`Cluster::attribute_class`]), because filters judge them once per distinct value
    /// rather than once per host (the filter scheduler's `cpu_info`, `supported_instances` …).
    /// Name attributes that many hosts share: a value held by one host only costs its interned
    /// text and gains nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub class_attributes: Vec<String>,
}

impl Default for ClusterSpec {
    fn default() -> Self {
        ClusterSpec {
            topology_levels: default_levels(),
            aggregates: Vec::new(),
            hosts: Vec::new(),
            hot_attributes: Vec::new(),
            class_attributes: Vec::new(),
        }
    }
}

/// A named host set with metadata (a Nova host aggregate, a node pool).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct AggregateSpec {
    /// Unique name.
    pub name: String,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
}

impl AggregateSpec {
    /// An aggregate with no metadata.
    pub fn new(name: impl Into<String>) -> Self {
        AggregateSpec { name: name.into(), metadata: BTreeMap::new() }
    }

    /// Adds a metadata entry.
    pub fn metadata(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }
}

/// One resource of a host. In JSON either a bare number (the capacity) or an object.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(from = "ResourceSpecForm")]
#[non_exhaustive]
pub struct ResourceSpec {
    /// Physical amount.
    pub capacity: f64,
    /// Set aside for the host itself.
    #[serde(default, skip_serializing_if = "is_default")]
    pub reserved: f64,
    /// In use by things that are not listed instances (system daemons, other tenants). The
    /// listed instances' own use is added to this when the snapshot is built.
    #[serde(default, skip_serializing_if = "is_default")]
    pub used: f64,
    /// Over-commit factor, default 1.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub allocation_ratio: f64,
}

fn one() -> f64 {
    1.0
}

fn is_one(v: &f64) -> bool {
    *v == 1.0
}

impl ResourceSpec {
    /// `capacity` with nothing reserved or used and ratio 1.
    pub fn new(capacity: f64) -> Self {
        ResourceSpec { capacity, reserved: 0.0, used: 0.0, allocation_ratio: 1.0 }
    }

    /// Sets the reserved amount.
    pub fn reserved(mut self, reserved: f64) -> Self {
        self.reserved = reserved;
        self
    }

    /// Sets the amount used outside the listed instances.
    pub fn used(mut self, used: f64) -> Self {
        self.used = used;
        self
    }

    /// Sets the allocation ratio.
    pub fn allocation_ratio(mut self, ratio: f64) -> Self {
        self.allocation_ratio = ratio;
        self
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ResourceSpecForm {
    Capacity(f64),
    Full(ResourceSpecFull),
}

#[derive(Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
struct ResourceSpecFull {
    capacity: f64,
    #[serde(default)]
    reserved: f64,
    #[serde(default)]
    used: f64,
    #[serde(default = "one")]
    allocation_ratio: f64,
}

impl From<ResourceSpecForm> for ResourceSpec {
    fn from(form: ResourceSpecForm) -> Self {
        match form {
            ResourceSpecForm::Capacity(c) => ResourceSpec::new(c),
            ResourceSpecForm::Full(f) => ResourceSpec {
                capacity: f.capacity,
                reserved: f.reserved,
                used: f.used,
                allocation_ratio: f.allocation_ratio,
            },
        }
    }
}

/// One running instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct InstanceSpec {
    /// Unique id across the cluster.
    pub id: String,
    /// Group or service name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Resources it uses, by kind name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resources: BTreeMap<String, f64>,
    /// Free-form labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Told to stop but still running.
    #[serde(default, skip_serializing_if = "is_default")]
    pub terminating: bool,
}

impl InstanceSpec {
    /// An instance with only an id.
    pub fn new(id: impl Into<String>) -> Self {
        InstanceSpec {
            id: id.into(),
            group: None,
            resources: BTreeMap::new(),
            labels: BTreeMap::new(),
            terminating: false,
        }
    }

    /// Sets the group.
    pub fn group(mut self, group: impl Into<String>) -> Self {
        self.group = Some(group.into());
        self
    }

    /// Adds a resource use.
    pub fn resource(mut self, kind: impl Into<String>, amount: f64) -> Self {
        self.resources.insert(kind.into(), amount);
        self
    }

    /// Adds a label.
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.labels.insert(key.into(), value.into());
        self
    }

    /// Marks it as terminating.
    pub fn terminating(mut self, terminating: bool) -> Self {
        self.terminating = terminating;
        self
    }
}

/// One disk. Sizes are bytes and must be non-negative.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct DiskSpec {
    /// Name, unique on the host.
    pub name: String,
    /// Filesystem size.
    pub maximum: i64,
    /// Filesystem free space.
    pub available: i64,
    /// Space set aside.
    #[serde(default)]
    pub reserved: i64,
    /// Provisioned size of the replicas assigned to the disk.
    #[serde(default)]
    pub scheduled: i64,
    /// Tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// New replicas allowed.
    #[serde(default = "yes")]
    pub allow_scheduling: bool,
    /// Replicas being moved off.
    #[serde(default, skip_serializing_if = "is_default")]
    pub eviction_requested: bool,
    /// `filesystem` (default) or `block`.
    #[serde(default, skip_serializing_if = "is_default")]
    pub disk_type: DiskType,
    /// Filesystem type (`ext4`, `xfs` …); empty when unknown.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fs_type: String,
    /// Healthy (default true).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub ready: bool,
    /// The disk's `Schedulable` condition as its agent last reported it, which can be stale;
    /// `None` (the default): derived from the current values (see [`Disk::schedulable`](crate::snapshot::Disk::schedulable)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedulable: Option<bool>,
    /// Names of the replicas whose size `scheduled` already includes (Longhorn's
    /// `scheduledReplica`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scheduled_replicas: Vec<String>,
}

fn is_true(v: &bool) -> bool {
    *v
}

fn yes() -> bool {
    true
}

impl DiskSpec {
    /// A disk of `maximum` bytes with `available` free, schedulable, no tags.
    pub fn new(name: impl Into<String>, maximum: i64, available: i64) -> Self {
        DiskSpec {
            name: name.into(),
            maximum,
            available,
            reserved: 0,
            scheduled: 0,
            tags: Vec::new(),
            allow_scheduling: true,
            eviction_requested: false,
            disk_type: DiskType::Filesystem,
            fs_type: String::new(),
            ready: true,
            schedulable: None,
            scheduled_replicas: Vec::new(),
        }
    }

    /// Sets the reserved bytes.
    pub fn reserved(mut self, reserved: i64) -> Self {
        self.reserved = reserved;
        self
    }

    /// Sets the scheduled bytes.
    pub fn scheduled(mut self, scheduled: i64) -> Self {
        self.scheduled = scheduled;
        self
    }

    /// Adds a tag.
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.tags.push(tag.into());
        self
    }

    /// Sets whether new replicas are allowed.
    pub fn allow_scheduling(mut self, allow: bool) -> Self {
        self.allow_scheduling = allow;
        self
    }

    /// Sets whether eviction is requested.
    pub fn eviction_requested(mut self, evict: bool) -> Self {
        self.eviction_requested = evict;
        self
    }

    /// Sets the disk type.
    pub fn disk_type(mut self, disk_type: DiskType) -> Self {
        self.disk_type = disk_type;
        self
    }

    /// Sets the filesystem type.
    pub fn fs_type(mut self, fs_type: impl Into<String>) -> Self {
        self.fs_type = fs_type.into();
        self
    }

    /// Sets whether the disk is healthy.
    pub fn ready(mut self, ready: bool) -> Self {
        self.ready = ready;
        self
    }

    /// Adds a replica to the ones `scheduled` includes (see [`DiskSpec::scheduled_replicas`]).
    pub fn scheduled_replica(mut self, name: impl Into<String>) -> Self {
        self.scheduled_replicas.push(name.into());
        self
    }

    /// Sets the reported `Schedulable` condition (see [`DiskSpec::schedulable`]).
    pub fn schedulable(mut self, schedulable: bool) -> Self {
        self.schedulable = Some(schedulable);
        self
    }
}

/// One host as plain data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct HostSpec {
    /// Unique name.
    pub name: String,
    /// Labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Topology values by level name (`region`, `zone`, and declared levels such as `rack`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub topology: BTreeMap<String, String>,
    /// Resources by kind name: `vcpus`, `memory_mb`, `disk_gb`, or any extended kind.
    #[serde(default)]
    pub resources: BTreeMap<String, ResourceSpec>,
    /// State; default up and enabled.
    #[serde(default, skip_serializing_if = "is_default")]
    pub state: HostState,
    /// Metrics by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, f64>,
    /// Running instances.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instances: Vec<InstanceSpec>,
    /// Names of the aggregates the host belongs to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aggregates: Vec<String>,
    /// Disks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disks: Vec<DiskSpec>,
    /// Typed attributes (JSON values) for domain engines: hypervisor type and version, CPU
    /// info, counters and the like.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, serde_json::Value>,
    /// The service host this host is a node of, when several hosts share one (bare-metal
    /// nodes behind one compute service). Nodes of one service host share its name for host
    /// lists and server groups, its instance list and its aggregate memberships (which they
    /// must list alike); see [`Cluster::service_host_name`](crate::snapshot::Cluster::service_host_name).
    /// `None`: the host is its own service host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_host: Option<String>,
}

impl HostSpec {
    /// A host with a name and nothing else.
    pub fn new(name: impl Into<String>) -> Self {
        HostSpec {
            name: name.into(),
            labels: BTreeMap::new(),
            topology: BTreeMap::new(),
            resources: BTreeMap::new(),
            state: HostState::default(),
            metrics: BTreeMap::new(),
            instances: Vec::new(),
            aggregates: Vec::new(),
            disks: Vec::new(),
            attributes: BTreeMap::new(),
            service_host: None,
        }
    }

    /// Makes the host a node of the service host `name` (see [`HostSpec::service_host`]).
    pub fn service_host(mut self, name: impl Into<String>) -> Self {
        self.service_host = Some(name.into());
        self
    }

    /// Sets an attribute.
    pub fn attribute(mut self, name: impl Into<String>, value: serde_json::Value) -> Self {
        self.attributes.insert(name.into(), value);
        self
    }

    /// Sets a resource.
    pub fn resource(mut self, kind: impl Into<String>, spec: ResourceSpec) -> Self {
        self.resources.insert(kind.into(), spec);
        self
    }

    /// Sets the vCPU capacity (ratio 1, nothing used).
    pub fn vcpus(self, capacity: f64) -> Self {
        self.resource("vcpus", ResourceSpec::new(capacity))
    }

    /// Sets the memory capacity in MiB.
    pub fn memory_mb(self, capacity: f64) -> Self {
        self.resource("memory_mb", ResourceSpec::new(capacity))
    }

    /// Sets the disk capacity in GiB.
    pub fn disk_gb(self, capacity: f64) -> Self {
        self.resource("disk_gb", ResourceSpec::new(capacity))
    }

    /// Sets the value of a topology level.
    pub fn topology(mut self, level: impl Into<String>, value: impl Into<String>) -> Self {
        self.topology.insert(level.into(), value.into());
        self
    }

    /// Sets the `zone` level.
    pub fn zone(self, zone: impl Into<String>) -> Self {
        self.topology("zone", zone)
    }

    /// Sets the `region` level.
    pub fn region(self, region: impl Into<String>) -> Self {
        self.topology("region", region)
    }

    /// Adds a label.
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.labels.insert(key.into(), value.into());
        self
    }

    /// Sets the state.
    pub fn state(mut self, state: HostState) -> Self {
        self.state = state;
        self
    }

    /// Adds a metric.
    pub fn metric(mut self, name: impl Into<String>, value: f64) -> Self {
        self.metrics.insert(name.into(), value);
        self
    }

    /// Adds a running instance.
    pub fn instance(mut self, instance: InstanceSpec) -> Self {
        self.instances.push(instance);
        self
    }

    /// Joins an aggregate.
    pub fn aggregate(mut self, name: impl Into<String>) -> Self {
        self.aggregates.push(name.into());
        self
    }

    /// Adds a disk.
    pub fn disk(mut self, disk: DiskSpec) -> Self {
        self.disks.push(disk);
        self
    }
}

/// Builds a [`Cluster`], validating everything once.
///
/// ```
/// use placewise::{Cluster, HostSpec};
///
/// let cluster = Cluster::builder()
///     .host(HostSpec::new("h1").vcpus(16.0).memory_mb(65536.0).zone("az1"))
///     .host(HostSpec::new("h2").vcpus(16.0).memory_mb(65536.0).zone("az2"))
///     .build()?;
/// assert_eq!(cluster.len(), 2);
/// # Ok::<(), placewise::BuildError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct ClusterBuilder {
    spec: ClusterSpec,
}

impl ClusterBuilder {
    /// An empty builder with levels `region`, `zone`.
    pub fn new() -> Self {
        ClusterBuilder::default()
    }

    /// Declares the topology levels, outermost first (replacing the default `region`, `zone`).
    pub fn topology_levels<S: Into<String>>(mut self, levels: impl IntoIterator<Item = S>) -> Self {
        self.spec.topology_levels = levels.into_iter().map(Into::into).collect();
        self
    }

    /// Declares an aggregate.
    pub fn aggregate(mut self, aggregate: AggregateSpec) -> Self {
        self.spec.aggregates.push(aggregate);
        self
    }

    /// Adds a host; ids are given in the order hosts are added.
    pub fn host(mut self, host: HostSpec) -> Self {
        self.spec.hosts.push(host);
        self
    }

    /// Declares a class attribute ([`ClusterSpec::class_attributes`]).
    pub fn class_attribute(mut self, name: impl Into<String>) -> Self {
        self.spec.class_attributes.push(name.into());
        self
    }

    /// Validates and builds.
    ///
    /// # Errors
    ///
    /// [`BuildError`] naming the host and field on a duplicate name, an unknown topology level or
    /// aggregate, a negative or non-finite number, or a duplicate instance or disk.
    pub fn build(self) -> Result<Cluster, BuildError> {
        Cluster::from_spec(&self.spec)
    }
}
