//! One host of a snapshot and the values it carries.

use super::attributes::AttributeTable;
use super::shape::{self, HostResources, LabelPairs, Resource, SharedParts};
use crate::id::{AggregateId, DomainId, InputMap, ResourceId, ServiceHostId, Symbol};
use smallvec::SmallVec;
use std::sync::Arc;

// The types read from JSON take the object form only (see `crate::json`).
crate::json::object_form!(HostState);

/// The names of the resource kinds a cluster knows, indexed by [`ResourceId`].
///
/// The first three are always `vcpus`, `memory_mb` and `disk_gb`; extended resources (`gpu`,
/// `nic_vf`, …) follow in the order they were first seen.
#[derive(Debug, Clone)]
pub struct ResourceKinds {
    names: Vec<Box<str>>,
    index: InputMap<Box<str>, ResourceId>,
}

impl Default for ResourceKinds {
    fn default() -> Self {
        let mut kinds = ResourceKinds { names: Vec::new(), index: InputMap::default() };
        for name in ["vcpus", "memory_mb", "disk_gb"] {
            kinds.insert(name);
        }
        kinds
    }
}

impl ResourceKinds {
    /// Number of kinds, standard ones included.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Always false: the three standard kinds are always present.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The id of the kind called `name`.
    pub fn get(&self, name: &str) -> Option<ResourceId> {
        self.index.get(name).copied()
    }

    /// The name of `id`.
    ///
    /// # Panics
    ///
    /// Panics if `id` is not a kind of this cluster.
    pub fn name(&self, id: ResourceId) -> &str {
        &self.names[id.index()]
    }

    /// All kinds in id order.
    pub fn iter(&self) -> impl Iterator<Item = (ResourceId, &str)> + '_ {
        self.names.iter().enumerate().map(|(i, n)| (ResourceId::from_index(i), &**n))
    }

    /// A short human name for explanations: `memory`, `vcpus`, `disk`, or the kind's own name.
    pub fn display_name(&self, id: ResourceId) -> &str {
        match id {
            ResourceId::MEMORY_MB => "memory",
            ResourceId::DISK_GB => "disk",
            _ => self.name(id),
        }
    }

    pub(crate) fn insert(&mut self, name: &str) -> ResourceId {
        if let Some(id) = self.get(name) {
            return id;
        }
        let id = ResourceId::from_index(self.names.len());
        self.names.push(name.into());
        self.index.insert(name.into(), id);
        id
    }
}

/// Interned `key → value` labels, sorted by key symbol: lookups are a short binary search over
/// integers. Hosts and instances with the same labels share one set (8 bytes each).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Labels(Option<Arc<LabelPairs>>);

impl Labels {
    /// Builds from pairs; a later duplicate key replaces the earlier value. The set is shared
    /// with every other holder of the same labels in `parts`.
    pub(crate) fn from_pairs(mut pairs: LabelPairs, parts: &mut Arc<SharedParts>) -> Self {
        pairs.sort_by_key(|p| p.0);
        pairs.dedup_by(|later, earlier| {
            if later.0 == earlier.0 {
                earlier.1 = later.1;
                true
            } else {
                false
            }
        });
        if pairs.is_empty() {
            return Labels(None);
        }
        Labels(Some(shape::intern(parts, |p| &p.labels, |p| &mut p.labels, pairs, |p| Arc::new(p.clone()))))
    }

    fn pairs(&self) -> &[(Symbol, Symbol)] {
        self.0.as_deref().map_or(&[], |p| p.as_slice())
    }

    /// The value of `key`. Computes in O(log labels).
    #[inline]
    pub fn get(&self, key: Symbol) -> Option<Symbol> {
        let pairs = self.pairs();
        pairs.binary_search_by_key(&key, |p| p.0).ok().map(|i| pairs[i].1)
    }

    /// Whether `key` is present.
    #[inline]
    pub fn contains_key(&self, key: Symbol) -> bool {
        self.get(key).is_some()
    }

    /// `(key, value)` pairs in key-symbol order.
    pub fn iter(&self) -> impl Iterator<Item = (Symbol, Symbol)> + '_ {
        self.pairs().iter().copied()
    }

    /// Number of labels.
    pub fn len(&self) -> usize {
        self.pairs().len()
    }

    /// Whether there are no labels.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }
}

/// A host's metrics by interned name, sorted by symbol. Reads as a slice; 8 bytes on a host
/// that has none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metrics(Option<Box<MetricList>>);

/// Metric values by interned name.
type MetricList = Box<[(Symbol, f64)]>;

impl Metrics {
    /// The metrics `list`, sorted by symbol.
    pub(crate) fn new(mut list: Vec<(Symbol, f64)>) -> Self {
        if list.is_empty() {
            return Metrics(None);
        }
        list.sort_by_key(|m| m.0);
        Metrics(Some(Box::new(list.into_boxed_slice())))
    }
}

impl std::ops::Deref for Metrics {
    type Target = [(Symbol, f64)];
    fn deref(&self) -> &[(Symbol, f64)] {
        self.0.as_deref().map_or(&[], |m| &**m)
    }
}

/// A host's domain at each topology level, interned: the hosts of one rack share one path
/// (8 bytes each). Reads as a slice of [`DomainId`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Domains(Option<Arc<SmallVec<[DomainId; 3]>>>);

impl Domains {
    /// The path `domains`, shared with every other holder of it in `parts`.
    pub(crate) fn new(domains: SmallVec<[DomainId; 3]>, parts: &mut Arc<SharedParts>) -> Self {
        if domains.is_empty() {
            return Domains(None);
        }
        Domains(Some(shape::intern(parts, |p| &p.domains, |p| &mut p.domains, domains, |d| Arc::new(d.clone()))))
    }
}

impl std::ops::Deref for Domains {
    type Target = [DomainId];
    fn deref(&self) -> &[DomainId] {
        self.0.as_deref().map_or(&[], |d| d.as_slice())
    }
}

/// Operational state of a host.
///
/// In JSON every field is optional; a missing one takes its default (up, enabled, not cordoned,
/// not evicting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(remote = "Self", default, deny_unknown_fields)]
pub struct HostState {
    /// The host is reachable and its agent reports in.
    pub up: bool,
    /// An operator allows scheduling on the host.
    pub enabled: bool,
    /// The host takes no new work (running work stays).
    pub cordoned: bool,
    /// The host is being drained: no new work, running work is moving away.
    pub evicting: bool,
}

impl Default for HostState {
    fn default() -> Self {
        HostState { up: true, enabled: true, cordoned: false, evicting: false }
    }
}

impl HostState {
    /// Whether new work may land here: up, enabled, not cordoned, not evicting.
    #[inline]
    pub fn schedulable(&self) -> bool {
        self.up && self.enabled && !self.cordoned && !self.evicting
    }
}

/// A running instance (VM, container, task, replica) on a host.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Instance {
    /// Unique id.
    pub id: Box<str>,
    /// The group or service it belongs to.
    pub group: Option<Symbol>,
    /// What it uses, by kind; kinds it does not use are absent.
    pub resources: SmallVec<[(ResourceId, f64); 3]>,
    /// Free-form labels (flavor, image, application …).
    pub labels: Labels,
    /// Told to stop but still running (a grace period, a delayed shutdown).
    pub terminating: bool,
}

/// A disk of a host, with the fields a storage replica scheduler reads. Sizes are bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Disk {
    /// Name, unique on its host.
    pub name: Box<str>,
    /// Filesystem size.
    pub maximum: u64,
    /// Filesystem free space.
    pub available: u64,
    /// Space set aside, never scheduled.
    pub reserved: u64,
    /// Sum of the provisioned sizes of the replicas assigned to the disk.
    pub scheduled: u64,
    /// Tags, sorted and de-duplicated.
    pub tags: SmallVec<[Symbol; 2]>,
    /// An operator allows new replicas on the disk.
    pub allow_scheduling: bool,
    /// Replicas are being moved off the disk.
    pub eviction_requested: bool,
    /// What the disk is: a filesystem directory or a raw block device.
    pub disk_type: DiskType,
    /// Filesystem type (`ext4`, `xfs` …); empty when unknown or for block disks.
    pub fs_type: Box<str>,
    /// The disk's agent reports it healthy (Longhorn's disk `Ready` condition).
    pub ready: bool,
    /// The disk's `Schedulable` condition as last reported, possibly stale; `None` when the
    /// caller left it to be derived from the current values (a domain engine's rule, such as
    /// the replica scheduler's: `ready` and the space check with size 0).
    pub schedulable: Option<bool>,
    /// Names of the replicas whose size `scheduled` already includes, sorted and de-duplicated.
    pub scheduled_replicas: Vec<Box<str>>,
}

impl Disk {
    /// Whether `scheduled` already includes the replica `name`. Computes in O(log listed).
    pub fn lists_scheduled(&self, name: &str) -> bool {
        self.scheduled_replicas.binary_search_by(|r| (**r).cmp(name)).is_ok()
    }
}

/// What a [`Disk`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DiskType {
    /// A directory on a mounted filesystem (Longhorn's v1 data engine).
    #[default]
    Filesystem,
    /// A raw block device (Longhorn's v2 data engine).
    Block,
}

/// One host of a [`Cluster`](crate::snapshot::Cluster). Read-only: hosts change through
/// [`ClusterEvent`](crate::snapshot::ClusterEvent)s, which produce a new snapshot.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Host {
    /// Unique name.
    pub name: Box<str>,
    /// Interned labels.
    pub labels: Labels,
    /// One domain per topology level of the cluster (region, zone, rack …), [`DomainId::NONE`]
    /// where the host has no value.
    pub topology: Domains,
    /// Resources by [`ResourceId`]; kinds the host does not declare are
    /// [`Resource::UNDECLARED`], as are kinds beyond the end of the list. The fixed part of each
    /// kind is shared with every host of the same shape.
    pub resources: HostResources,
    /// Operational state.
    pub state: HostState,
    /// Metrics by interned name, sorted by symbol.
    pub metrics: Metrics,
    /// Running instances.
    pub instances: Box<[Instance]>,
    /// Aggregates the host belongs to, sorted.
    pub aggregates: Box<[AggregateId]>,
    /// Disks.
    pub disks: Box<[Disk]>,
    /// Typed attributes a domain engine reads (hypervisor type and version, CPU info, counters …),
    /// as JSON values; see [`Host::attribute`].
    pub(crate) attributes: Option<Box<AttributeTable>>,
    /// Bumped (to the cluster's generation at the time) on every change of this host.
    pub generation: u64,
    /// The service host this host is a node of; `None` when it is its own
    /// ([`Cluster::service_host_name`](crate::snapshot::Cluster::service_host_name)).
    pub service: Option<ServiceHostId>,
}

/// A host's typed attributes: JSON values by name.
pub type Attributes = serde_json::Map<String, serde_json::Value>;

impl Host {
    /// The resource of kind `id` (capacity 0 if the host does not have it).
    #[inline]
    pub fn resource(&self, id: ResourceId) -> Resource {
        self.resources.get(id)
    }

    /// The metric named by `name`.
    pub fn metric(&self, name: Symbol) -> Option<f64> {
        self.metrics.binary_search_by_key(&name, |m| m.0).ok().map(|i| self.metrics[i].1)
    }

    /// The domain of topology level `level` (as in [`Topology::levels`](crate::snapshot::Topology::levels)).
    pub fn domain(&self, level: usize) -> DomainId {
        self.topology.get(level).copied().unwrap_or(DomainId::NONE)
    }

    /// The attribute called `name`.
    #[inline]
    pub fn attribute(&self, name: &str) -> Option<&serde_json::Value> {
        self.attributes.as_ref()?.get(name)
    }

    /// Every attribute, in name order.
    pub fn attributes(&self) -> impl Iterator<Item = (&str, &serde_json::Value)> + '_ {
        self.attributes.iter().flat_map(|t| t.iter())
    }

    /// The decoded form of a string attribute holding a JSON object or array (decoded once,
    /// when the snapshot was built), or `None` when the attribute is not such a string.
    pub fn decoded_attribute(&self, name: &str) -> Option<&serde_json::Value> {
        self.attributes.as_ref()?.decoded(name)
    }

    /// Number of running instances of `group`.
    pub fn group_count(&self, group: Symbol) -> usize {
        self.instances.iter().filter(|i| i.group == Some(group)).count()
    }

    /// Whether an instance with this id runs here.
    pub fn has_instance(&self, id: &str) -> bool {
        self.instances.iter().any(|i| &*i.id == id)
    }

    /// Adds an instance (its use is added separately, [`add_usage`](Host::add_usage)).
    pub(crate) fn push_instance(&mut self, instance: Instance) {
        push(&mut self.instances, instance);
    }

    /// Adds a disk.
    pub(crate) fn push_disk(&mut self, disk: Disk) {
        push(&mut self.disks, disk);
    }

    pub(crate) fn add_usage(&mut self, usage: &[(ResourceId, f64)], sign: f64) {
        self.resources.add_usage(usage, sign);
    }
}

/// Appends to a boxed slice. A host's lists are boxed slices rather than vectors (8 bytes less
/// each, and no spare capacity) since they change only through events, one element at a time.
fn push<T>(list: &mut Box<[T]>, item: T) {
    let mut v = std::mem::take(list).into_vec();
    v.reserve_exact(1);
    v.push(item);
    *list = v.into_boxed_slice();
}

/// Removes element `pos` of a boxed slice and returns it.
pub(crate) fn remove<T>(list: &mut Box<[T]>, pos: usize) -> T {
    let mut v = std::mem::take(list).into_vec();
    let item = v.remove(pos);
    *list = v.into_boxed_slice();
    item
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The host record's size is what a snapshot pays per host beyond its columns; shared and
    /// rarely present parts stay behind thin pointers. Measured per part in `report`.
    #[test]
    fn a_host_record_stays_within_its_budget() {
        assert_eq!(std::mem::size_of::<Labels>(), 8);
        assert_eq!(std::mem::size_of::<Domains>(), 8);
        assert_eq!(std::mem::size_of::<Metrics>(), 8);
        assert_eq!(std::mem::size_of::<HostResources>(), 64);
        assert!(std::mem::size_of::<Host>() <= 184, "{} bytes", std::mem::size_of::<Host>());
    }

    #[test]
    fn labels_sort_and_replace_duplicates() {
        let pairs = smallvec::smallvec![(Symbol(3), Symbol(1)), (Symbol(1), Symbol(2)), (Symbol(3), Symbol(9))];
        let labels = Labels::from_pairs(pairs, &mut Arc::default());
        assert_eq!(labels.len(), 2);
        assert_eq!(labels.get(Symbol(3)), Some(Symbol(9)));
        assert_eq!(labels.get(Symbol(1)), Some(Symbol(2)));
        assert_eq!(labels.get(Symbol(2)), None);
    }

    #[test]
    fn schedulable_needs_every_flag() {
        assert!(HostState::default().schedulable());
        for s in [
            HostState { up: false, ..HostState::default() },
            HostState { enabled: false, ..HostState::default() },
            HostState { cordoned: true, ..HostState::default() },
            HostState { evicting: true, ..HostState::default() },
        ] {
            assert!(!s.schedulable());
        }
    }
}
