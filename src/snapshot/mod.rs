//! Cluster snapshots: immutable values that share unchanged hosts.
//!
//! A [`Cluster`] is built once (by [`ClusterBuilder`] or from JSON, through the same validation)
//! and never changes. [`Cluster::apply`] returns a new snapshot for a [`ClusterEvent`]; the new
//! one shares every host the event did not touch, so keeping old snapshots around is cheap.
//!
//! Hosts live in chunks of 64. Each chunk carries the host records and dense columns of the hot
//! data the scheduler reads for every host (free and physical vCPUs, memory and disk, and the
//! schedulable flag). Changing one host copies one chunk's columns and pointers, not the cluster.
//!
//! **Host classes.** Each chunk also keeps, per lane, the class of every class attribute
//! ([`ClusterSpec::class_attributes`]: an interned value, equal for hosts with equal values) and
//! of the host's aggregate set ([`Cluster::attribute_class`], [`Cluster::aggregate_class`]); an
//! interned object keeps its members' classes once per distinct value
//! ([`Cluster::member_class`]). A filter whose verdict reads only such data judges each distinct
//! class once per request. The
//! class table is append-only and shared by every later snapshot; a host's classes are set when
//! its record is built or replaced by an event, and at no other time.
//!
//! **Service hosts.** Several hosts can be nodes of one service host
//! ([`HostSpec::service_host`]), as bare-metal nodes behind one compute service are. Each node
//! keeps its own resources, attributes, metrics, disks and instances; the snapshot records once
//! per service host its name and its nodes. The nodes share the service host's name (host lists,
//! server-group hosts and isolated hosts name it: [`Cluster::service_host_name`]), its instance
//! list (the union of its nodes' instances, each stored once: [`Cluster::service_instances`])
//! and its aggregate memberships (every node must list the same ones; building and events
//! refuse otherwise). A host whose spec names no service host is its own. Departure from the
//! filter scheduler: the service state (`up`, `enabled`) stays per node, as other domains cordon
//! single nodes; the filter-scheduler reader gives every node its host's first entry's state.

mod attribute_check;
mod attributes;
mod classes;
mod event;
mod host;
mod intern;
mod lineage;
mod names;
mod overlay;
mod service;
mod shape;
mod spec;
mod topology;

#[cfg(test)]
pub(crate) use attribute_check::assert_every_key_is_checked;
pub use attribute_check::{
    check_attributes, check_metadata, AttributeKey, AttributeType, AttributeWarning, MetadataKey,
};
pub use event::{ClusterEvent, StateChange};
pub use host::{Attributes, Disk, DiskType, Domains, Host, HostState, Instance, Labels, Metrics, ResourceKinds};
pub use intern::Interner;
pub(crate) use lineage::{refresh_pays, Lineage};
pub use overlay::Overlay;
pub use shape::{HostResources, Resource};
pub use spec::{AggregateSpec, ClusterBuilder, ClusterSpec, DiskSpec, HostSpec, InstanceSpec, ResourceSpec};
pub use topology::Topology;

use attributes::AttributeTable;
use classes::Classes;
use names::NameIndex;
use service::ServiceHosts;
use shape::SharedParts;

use crate::error::BuildError;
use crate::id::{AggregateId, ClassId, DiskId, DomainId, HostId, InputSet, ResourceId, ServiceHostId, Symbol};
use smallvec::SmallVec;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

pub(crate) const CHUNK_BITS: usize = 6;
/// Hosts per chunk: host `64·k + i` is lane `i` of chunk `k`.
pub const CHUNK: usize = 1 << CHUNK_BITS;
/// The standard kinds with dense columns: vCPUs, memory and disk ([`ResourceId`] 0, 1, 2).
pub const HOT_RESOURCES: usize = 3;

/// A named host set with metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Aggregate {
    /// Unique name.
    pub name: Box<str>,
    /// Metadata.
    pub metadata: BTreeMap<String, String>,
}

/// An inverted label index over the (at most 64) hosts of one chunk: for every `(key, value)`
/// pair, the bit mask of the hosts that carry it. Label selectors evaluate a whole chunk with a
/// few mask operations instead of reading 64 host records.
#[derive(Debug, Clone, Default)]
pub struct ChunkLabels {
    /// `(pair, hosts)` sorted by pair, the pair packed as `key << 32 | value` (the order of
    /// `(key, value)`), so a lookup compares one integer per step.
    entries: Vec<(u64, u64)>,
    labelled: u64,
}

/// `(key, value)` packed into one integer with the same order.
#[inline]
fn pair(key: Symbol, value: Symbol) -> u64 {
    u64::from(key.0) << 32 | u64::from(value.0)
}

impl ChunkLabels {
    /// Hosts carrying `key = value`.
    #[inline]
    pub fn mask(&self, key: Symbol, value: Symbol) -> u64 {
        let want = pair(key, value);
        // Entries before the pair's place, by halving without a branch on the comparison.
        let (mut base, mut size) = (0usize, self.entries.len());
        if size == 0 {
            return 0;
        }
        while size > 1 {
            let half = size / 2;
            if self.entries[base + half].0 <= want {
                base += half;
            }
            size -= half;
        }
        let (at, hosts) = self.entries[base];
        if at == want {
            hosts
        } else {
            0
        }
    }

    /// `(value, hosts)` for every value of `key` in the chunk.
    pub fn values(&self, key: Symbol) -> impl Iterator<Item = (Symbol, u64)> + '_ {
        let start = self.entries.partition_point(|e| e.0 < pair(key, Symbol(0)));
        self.entries[start..].iter().take_while(move |e| (e.0 >> 32) as u32 == key.0).map(|e| (Symbol(e.0 as u32), e.1))
    }

    /// Hosts with at least one label.
    #[inline]
    pub fn labelled(&self) -> u64 {
        self.labelled
    }

    fn set(&mut self, slot: usize, labels: Option<&Labels>) {
        let bit = 1u64 << slot;
        if self.labelled & bit != 0 {
            for e in &mut self.entries {
                e.1 &= !bit;
            }
            self.entries.retain(|e| e.1 != 0);
            self.labelled &= !bit;
        }
        for (k, v) in labels.into_iter().flat_map(|l| l.iter()) {
            let want = pair(k, v);
            match self.entries.binary_search_by_key(&want, |e| e.0) {
                Ok(i) => self.entries[i].1 |= bit,
                Err(i) => self.entries.insert(i, (want, bit)),
            }
            self.labelled |= bit;
        }
    }
}

/// The dense hot data of one chunk of 64 hosts (host `64·k + i` is lane `i` of chunk `k`):
/// what the common filters and weighers read for every host, as arrays and bit masks.
#[derive(Debug, Clone)]
pub struct HotChunk {
    /// Free amount (`(capacity − reserved) × ratio − used`) of vCPUs, memory and disk, by lane.
    pub free: [[f64; CHUNK]; HOT_RESOURCES],
    /// Physical amount (`capacity − reserved`) of vCPUs, memory and disk, by lane.
    pub physical: [[f64; CHUNK]; HOT_RESOURCES],
    /// Per kind, the smallest of `free` and `physical` over the live lanes (+∞ when none is
    /// live): an amount up to this fits every host of the chunk.
    pub room: [f64; HOT_RESOURCES],
    /// Per kind, the smallest and largest `free` over the live lanes (+∞ and −∞ when none is
    /// live).
    pub free_range: [(f64, f64); HOT_RESOURCES],
    /// The domain of the `zone` topology level by lane ([`DomainId::NONE`] when unset).
    pub zone: [DomainId; CHUNK],
    /// Lanes holding a host.
    pub live: u64,
    /// Lanes whose host is up, enabled, not cordoned and not evicting.
    pub schedulable: u64,
    /// Lanes whose host is up ([`HostState::up`]).
    pub up: u64,
    /// Lanes whose host is enabled ([`HostState::enabled`]).
    pub enabled: u64,
    /// Lanes whose host is cordoned ([`HostState::cordoned`]).
    pub cordoned: u64,
    /// The label index of the chunk.
    pub labels: ChunkLabels,
    /// The cluster's hot numeric attributes ([`Cluster::hot_attributes`]) by lane, in the
    /// cluster's order; NaN where a host lacks one.
    pub attributes: Vec<[f64; CHUNK]>,
    /// Lanes whose host has at least one attribute.
    pub attributed: u64,
    /// The classes of the cluster's class attributes ([`Cluster::class_attributes`]) by lane,
    /// in the cluster's order; [`ClassId::NONE`] where a host lacks one (or it is `null`).
    pub classes: Vec<[ClassId; CHUNK]>,
    /// The class of each lane's aggregate set ([`Cluster::aggregate_class`]); [`ClassId::NONE`]
    /// for an empty lane.
    pub aggregate_class: [ClassId; CHUNK],
    /// Every lane's disks, lane after lane ([`HotChunk::lane_disks`]).
    pub disks: Vec<HotDisk>,
    /// Lane `i`'s disks are `disks[disk_start[i]..disk_start[i + 1]]`.
    pub disk_start: [u32; CHUNK + 1],
    /// Lanes with a disk whose `available` exceeds its `maximum` (which no filesystem reports;
    /// engines that read disk space refuse such a snapshot: see
    /// [`Cluster::disk_above_maximum`]).
    pub disk_above_maximum: u64,
}

impl HotChunk {
    /// The hot form of lane `lane`'s disks, in the host's disk order (empty for an empty lane).
    ///
    /// # Panics
    ///
    /// Panics if `lane >= 64`.
    #[inline]
    pub fn lane_disks(&self, lane: usize) -> &[HotDisk] {
        let (start, end) = (self.disk_start[lane] as usize, self.disk_start[lane + 1] as usize);
        self.disks.get(start..end).unwrap_or(&[])
    }

    /// Replaces lane `slot`'s disks, shifting the later lanes' ranges.
    fn set_disks(&mut self, slot: usize, disks: &[Disk]) {
        let (start, end) = (self.disk_start[slot] as usize, self.disk_start[slot + 1] as usize);
        self.disks.splice(start..end, disks.iter().map(HotDisk::of));
        let shift = disks.len() as i64 - (end - start) as i64;
        for s in &mut self.disk_start[slot + 1..] {
            *s = (*s as i64 + shift) as u32;
        }
    }
}

/// The numbers and flags of a disk the replica scheduler reads for every disk, stored densely per
/// chunk ([`HotChunk::disks`]) so a pass over all disks does not visit each host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct HotDisk {
    /// [`Disk::maximum`].
    pub maximum: u64,
    /// [`Disk::available`].
    pub available: u64,
    /// [`Disk::reserved`].
    pub reserved: u64,
    /// [`Disk::scheduled`].
    pub scheduled: u64,
    /// [`Disk::allow_scheduling`].
    pub allow_scheduling: bool,
    /// [`Disk::eviction_requested`].
    pub eviction_requested: bool,
    /// [`Disk::ready`].
    pub ready: bool,
    /// The disk has at least one tag.
    pub tagged: bool,
    /// [`Disk::schedulable`].
    pub schedulable: Option<bool>,
    /// [`Disk::disk_type`].
    pub disk_type: DiskType,
    /// The flags above packed for a test of one byte ([`HotDisk::flags`]).
    flags: u8,
}

impl HotDisk {
    /// [`HotDisk::flags`]: the disk takes replicas by its own flags: scheduling allowed, no
    /// eviction requested, and reported schedulable (or, not reported, ready).
    pub const OPEN: u8 = 1;
    /// [`HotDisk::flags`]: the disk is of [`DiskType::Block`].
    pub const BLOCK: u8 = 2;
    /// [`HotDisk::flags`]: the disk has at least one tag.
    pub const TAGGED: u8 = 4;

    /// The disk's flags as one byte: [`HotDisk::OPEN`], [`HotDisk::BLOCK`] and
    /// [`HotDisk::TAGGED`], each set when it holds, so a pass over every disk tests its flags
    /// with one mask and one comparison. Worked out by [`HotDisk::of`]: changing a field of a
    /// copy does not change them.
    ///
    /// ```
    /// use placewise::snapshot::{Cluster, DiskSpec, DiskType, HostSpec, HotDisk};
    ///
    /// let cluster = Cluster::builder()
    ///     .host(
    ///         HostSpec::new("a")
    ///             .disk(DiskSpec::new("plain", 100, 100))
    ///             .disk(DiskSpec::new("raw", 100, 100).disk_type(DiskType::Block).ready(false).tag("fast"))
    ///             .disk(DiskSpec::new("reported", 100, 100).ready(false).schedulable(true)),
    ///     )
    ///     .build()
    ///     .unwrap();
    /// let flags: Vec<u8> = cluster.hot_chunk(0).lane_disks(0).iter().map(HotDisk::flags).collect();
    /// assert_eq!(flags, [HotDisk::OPEN, HotDisk::BLOCK | HotDisk::TAGGED, HotDisk::OPEN]);
    /// ```
    #[inline]
    pub fn flags(&self) -> u8 {
        self.flags
    }

    /// The hot form of `disk`.
    pub fn of(disk: &Disk) -> Self {
        let open = disk.allow_scheduling && !disk.eviction_requested && disk.schedulable.unwrap_or(disk.ready);
        let bit = |on: bool, flag: u8| if on { flag } else { 0 };
        let flags = bit(open, HotDisk::OPEN)
            | bit(disk.disk_type == DiskType::Block, HotDisk::BLOCK)
            | bit(!disk.tags.is_empty(), HotDisk::TAGGED);
        HotDisk {
            flags,
            maximum: disk.maximum,
            available: disk.available,
            reserved: disk.reserved,
            scheduled: disk.scheduled,
            allow_scheduling: disk.allow_scheduling,
            eviction_requested: disk.eviction_requested,
            ready: disk.ready,
            tagged: !disk.tags.is_empty(),
            schedulable: disk.schedulable,
            disk_type: disk.disk_type,
        }
    }
}

#[derive(Clone)]
struct Chunk {
    hosts: Vec<Option<Arc<Host>>>,
    hot: HotChunk,
    /// `(id hash, lane)` of every instance in the chunk, sorted: finds an instance id's host
    /// in O(chunks × log) without a cluster-wide index that every event would copy.
    instances: Vec<(u32, u8)>,
}

impl Chunk {
    fn new() -> Self {
        Chunk {
            hosts: Vec::with_capacity(CHUNK),
            hot: HotChunk {
                free: [[0.0; CHUNK]; HOT_RESOURCES],
                physical: [[0.0; CHUNK]; HOT_RESOURCES],
                room: [f64::INFINITY; HOT_RESOURCES],
                free_range: [(f64::INFINITY, f64::NEG_INFINITY); HOT_RESOURCES],
                zone: [DomainId::NONE; CHUNK],
                live: 0,
                schedulable: 0,
                up: 0,
                enabled: 0,
                cordoned: 0,
                labels: ChunkLabels::default(),
                attributes: Vec::new(),
                attributed: 0,
                classes: Vec::new(),
                aggregate_class: [ClassId::NONE; CHUNK],
                disks: Vec::new(),
                disk_start: [0; CHUNK + 1],
                disk_above_maximum: 0,
            },
            instances: Vec::new(),
        }
    }

    /// Puts `host` in lane `slot`, with its classes (`classes` in the cluster's class attribute
    /// order, `aggregate_class` of its aggregate set).
    fn set(
        &mut self,
        slot: usize,
        host: Option<Arc<Host>>,
        zone_level: Option<usize>,
        hot_attributes: &[Box<str>],
        classes: &[ClassId],
        aggregate_class: ClassId,
    ) {
        // Lanes are below 64, so `slot as u8` is exact.
        let lane = slot as u8;
        self.instances.retain(|e| e.1 != lane);
        if let Some(h) = &host {
            self.instances.extend(h.instances.iter().map(|i| (names::hash(&i.id), lane)));
            self.instances.sort_unstable();
        }
        let hot = &mut self.hot;
        hot.attributes.resize(hot_attributes.len(), [f64::NAN; CHUNK]);
        for (column, name) in hot.attributes.iter_mut().zip(hot_attributes) {
            column[slot] = host.as_deref().and_then(|h| h.attribute(name)).and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
        }
        hot.classes.resize(classes.len(), [ClassId::NONE; CHUNK]);
        for (column, class) in hot.classes.iter_mut().zip(classes) {
            column[slot] = *class;
        }
        hot.aggregate_class[slot] = aggregate_class;
        let bit = 1u64 << slot;
        hot.labels.set(slot, host.as_deref().map(|h| &h.labels));
        hot.set_disks(slot, host.as_deref().map_or(&[], |h| &h.disks));
        hot.live &= !bit;
        hot.schedulable &= !bit;
        hot.up &= !bit;
        hot.enabled &= !bit;
        hot.cordoned &= !bit;
        hot.attributed &= !bit;
        hot.disk_above_maximum &= !bit;
        hot.zone[slot] = DomainId::NONE;
        for r in 0..HOT_RESOURCES {
            hot.free[r][slot] = 0.0;
            hot.physical[r][slot] = 0.0;
        }
        if let Some(h) = &host {
            for r in 0..HOT_RESOURCES {
                let res = h.resource(ResourceId::from_index(r));
                hot.free[r][slot] = res.free();
                hot.physical[r][slot] = res.physical();
            }
            hot.live |= bit;
            if h.attributes().next().is_some() {
                hot.attributed |= bit;
            }
            let state = h.state;
            hot.schedulable |= bit * u64::from(state.schedulable());
            hot.up |= bit * u64::from(state.up);
            hot.enabled |= bit * u64::from(state.enabled);
            hot.cordoned |= bit * u64::from(state.cordoned);
            hot.zone[slot] = zone_level.map_or(DomainId::NONE, |l| h.domain(l));
            hot.disk_above_maximum |= bit * u64::from(h.disks.iter().any(|d| d.available > d.maximum));
        }
        for r in 0..HOT_RESOURCES {
            let (mut least, mut lo, mut hi) = (f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY);
            for lane in 0..CHUNK {
                if hot.live >> lane & 1 == 1 {
                    let free = hot.free[r][lane];
                    least = least.min(free.min(hot.physical[r][lane]));
                    lo = lo.min(free);
                    hi = hi.max(free);
                }
            }
            hot.room[r] = least;
            hot.free_range[r] = (lo, hi);
        }
        if slot == self.hosts.len() {
            self.hosts.push(host);
        } else {
            self.hosts[slot] = host;
        }
    }
}

/// An immutable snapshot of a cluster: hosts with their resources, labels, topology, state,
/// metrics, instances, aggregates and disks.
///
/// Cloning is cheap (reference counts on shared parts); [`apply`](Cluster::apply) returns a new
/// snapshot and leaves this one as it was. Hosts are addressed by dense [`HostId`]s, stable
/// across events; names are looked up once with [`host_id`](Cluster::host_id).
///
/// Serialises as a [`ClusterSpec`]; deserialising validates exactly as [`ClusterBuilder`] does.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "ClusterSpec", into = "ClusterSpec")]
pub struct Cluster {
    generation: u64,
    slots: usize,
    live: usize,
    chunks: Vec<Arc<Chunk>>,
    names: Arc<NameIndex>,
    symbols: Arc<Interner>,
    kinds: Arc<ResourceKinds>,
    topology: Arc<Topology>,
    aggregates: Arc<Vec<Aggregate>>,
    hot_attributes: Arc<Vec<Box<str>>>,
    class_attributes: Arc<Vec<Box<str>>>,
    classes: Arc<Classes>,
    services: Arc<ServiceHosts>,
    /// The parts hosts share: resource shapes ([`HostResources`]), label sets, topology paths.
    parts: Arc<SharedParts>,
}

impl fmt::Debug for Cluster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cluster")
            .field("generation", &self.generation)
            .field("hosts", &self.live)
            .field("topology", &self.topology.levels())
            .finish_non_exhaustive()
    }
}

impl TryFrom<ClusterSpec> for Cluster {
    type Error = BuildError;
    fn try_from(spec: ClusterSpec) -> Result<Self, BuildError> {
        Cluster::from_spec(&spec)
    }
}

impl From<Cluster> for ClusterSpec {
    fn from(cluster: Cluster) -> Self {
        cluster.to_spec()
    }
}

impl Cluster {
    /// A builder for a new cluster.
    pub fn builder() -> ClusterBuilder {
        ClusterBuilder::new()
    }

    /// Builds from JSON (a [`ClusterSpec`]).
    ///
    /// # Errors
    ///
    /// [`BuildError::Json`] with line and column for malformed JSON or a field of the wrong type;
    /// [`BuildError::NotAnObject`] for an array where an object is documented; the validation
    /// errors of [`ClusterBuilder::build`] otherwise.
    pub fn from_json(json: &str) -> Result<Cluster, BuildError> {
        let spec: ClusterSpec = crate::json::from_str(json)?;
        Cluster::from_spec(&spec)
    }

    /// Builds from a spec. Computes in O(hosts + instances + labels).
    ///
    /// # Errors
    ///
    /// As [`ClusterBuilder::build`].
    pub fn from_spec(spec: &ClusterSpec) -> Result<Cluster, BuildError> {
        let mut seen_levels = InputSet::default();
        for level in &spec.topology_levels {
            if level.is_empty() {
                return Err(BuildError::EmptyName { what: "topology level".into() });
            }
            if !seen_levels.insert(level.as_str()) {
                return Err(BuildError::Config { message: format!("topology level `{level}` is declared twice") });
            }
        }
        let mut aggregates = Vec::with_capacity(spec.aggregates.len());
        for agg in &spec.aggregates {
            if agg.name.is_empty() {
                return Err(BuildError::EmptyName { what: "aggregate".into() });
            }
            if aggregates.iter().any(|a: &Aggregate| *a.name == *agg.name) {
                return Err(BuildError::DuplicateAggregate { name: agg.name.clone() });
            }
            aggregates.push(Aggregate { name: agg.name.as_str().into(), metadata: agg.metadata.clone() });
        }
        let mut cluster = Cluster {
            generation: 0,
            slots: 0,
            live: 0,
            chunks: Vec::new(),
            names: Arc::default(),
            symbols: Arc::default(),
            kinds: Arc::default(),
            topology: Arc::new(Topology::new(&spec.topology_levels)),
            aggregates: Arc::new(aggregates),
            hot_attributes: Arc::new(spec.hot_attributes.iter().map(|a| a.as_str().into()).collect()),
            class_attributes: Arc::new(spec.class_attributes.iter().map(|a| a.as_str().into()).collect()),
            classes: Arc::default(),
            services: Arc::default(),
            parts: Arc::default(),
        };
        // The name index is built from the spec first (hosts get ids in spec order) and finds
        // the first repeated name itself: no set of names is built and thrown away.
        let host_id = |i: usize| HostId::from_index(i);
        let names = NameIndex::build(spec.hosts.iter().enumerate().map(|(i, h)| (h.name.as_str(), host_id(i))));
        let repeat = names.first_repeat(|id| spec.hosts[id.index()].name.as_str());
        let mut instance_ids: InputSet<&str> = InputSet::default();
        for (i, host) in spec.hosts.iter().enumerate() {
            if repeat == Some(host_id(i)) {
                return Err(BuildError::DuplicateHost { name: host.name.clone() });
            }
            for inst in &host.instances {
                if !instance_ids.insert(inst.id.as_str()) {
                    return Err(BuildError::DuplicateInstance { host: host.name.clone(), id: inst.id.clone() });
                }
            }
            cluster.push_host(host)?;
        }
        cluster.names = Arc::new(names);
        for host in &spec.hosts {
            cluster.check_service_host(host)?;
        }
        Ok(cluster)
    }

    /// The spec this snapshot was built from (after normalisation: sorted labels, instance use
    /// separated from other use). `Cluster::from_spec(&c.to_spec())` equals `c` up to generations.
    pub fn to_spec(&self) -> ClusterSpec {
        ClusterSpec {
            topology_levels: self.topology.levels().iter().map(|l| l.to_string()).collect(),
            aggregates: self
                .aggregates
                .iter()
                .map(|a| AggregateSpec { name: a.name.to_string(), metadata: a.metadata.clone() })
                .collect(),
            hosts: self.hosts().map(|(_, h)| self.host_spec(h)).collect(),
            hot_attributes: self.hot_attributes.iter().map(|a| a.to_string()).collect(),
            class_attributes: self.class_attributes.iter().map(|a| a.to_string()).collect(),
        }
    }

    /// The spec of one host (as in [`to_spec`](Cluster::to_spec)), or `None` for an id that
    /// names no host. Computes in O(the host's size).
    pub fn host_to_spec(&self, id: HostId) -> Option<HostSpec> {
        self.host(id).map(|h| self.host_spec(h))
    }

    /// The spec of disk `disk` of host `id` (as in [`host_to_spec`](Cluster::host_to_spec)), or
    /// `None` when there is no such disk. Computes in O(the disk's size).
    pub fn disk_to_spec(&self, id: HostId, disk: DiskId) -> Option<DiskSpec> {
        self.disk(id, disk).map(|d| self.disk_spec(d))
    }

    /// Serialises to JSON (a [`ClusterSpec`]).
    pub fn to_json(&self) -> String {
        // A spec holds only strings, numbers, maps and lists: serialisation cannot fail.
        serde_json::to_string_pretty(&self.to_spec()).unwrap_or_default()
    }

    /// The snapshot's generation: 0 when built, +1 for every applied event.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether `other` is this very snapshot: the same generation and the very same chunks,
    /// interner and topology. Snapshots share a chunk only through cloning, and an event copies
    /// every chunk it touches that another snapshot shares, so for a caller that holds a clone
    /// of `self` (keeping its chunks shared) equal addresses mean equal contents: the check
    /// behind the engines' scratches that keep a preparation across calls. Computes in
    /// O(hosts / 64).
    pub(crate) fn is_same_snapshot(&self, other: &Cluster) -> bool {
        self.generation == other.generation
            && self.slots == other.slots
            && self.live == other.live
            && self.chunks.len() == other.chunks.len()
            && self.changed_chunks(other).is_some_and(|mut changed| changed.next().is_none())
    }

    /// The chunks of this snapshot that are not the very chunks of `earlier` (by index,
    /// ascending, chunks added since included), or `None` when the two do not read the same
    /// interned strings and topology (an event that interned a new string or domain copied
    /// them), or this snapshot has fewer chunks. As with [`Cluster::is_same_snapshot`], a
    /// caller that holds a clone of `earlier` knows that a chunk at the same address holds the
    /// same hosts and hot columns: a preparation kept from `earlier` needs redoing only for the
    /// hosts of the chunks listed. Computes in O(hosts / 64).
    pub(crate) fn changed_chunks<'a>(&'a self, earlier: &'a Cluster) -> Option<impl Iterator<Item = usize> + 'a> {
        let comparable = Arc::ptr_eq(&self.symbols, &earlier.symbols)
            && Arc::ptr_eq(&self.topology, &earlier.topology)
            && self.chunks.len() >= earlier.chunks.len();
        comparable.then(|| {
            (0..self.chunks.len()).filter(|&c| earlier.chunks.get(c).is_none_or(|e| !Arc::ptr_eq(e, &self.chunks[c])))
        })
    }

    /// Number of hosts (removed hosts not counted).
    pub fn len(&self) -> usize {
        self.live
    }

    /// Whether the cluster has no host.
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// One past the highest host id ever issued: the length a dense per-host array needs.
    pub fn id_bound(&self) -> usize {
        self.slots
    }

    /// The host running the instance `id`, if any. Computes in O(hosts / 64 × log instances
    /// per chunk).
    pub fn instance_host(&self, id: &str) -> Option<HostId> {
        let h = names::hash(id);
        self.chunks.iter().enumerate().find_map(|(c, chunk)| {
            let start = chunk.instances.partition_point(|e| e.0 < h);
            chunk.instances[start..].iter().take_while(|e| e.0 == h).find_map(|&(_, lane)| {
                let host = HostId((c * CHUNK + usize::from(lane)) as u32);
                self.host(host).filter(|rec| rec.has_instance(id)).map(|_| host)
            })
        })
    }

    /// The host `id`, or `None` if it was removed or never existed. Computes in O(1).
    #[inline]
    pub fn host(&self, id: HostId) -> Option<&Host> {
        self.chunks.get(id.index() >> CHUNK_BITS)?.hosts.get(id.index() & (CHUNK - 1))?.as_deref()
    }

    /// The id of the host called `name`. Computes in O(1).
    pub fn host_id(&self, name: &str) -> Option<HostId> {
        self.names.get(name, |id| self.host_name(id))
    }

    /// The name of host `id`, or `""` if it does not exist.
    pub fn host_name(&self, id: HostId) -> &str {
        self.host(id).map_or("", |h| &h.name)
    }

    /// Hosts in id order.
    pub fn hosts(&self) -> impl Iterator<Item = (HostId, &Host)> + '_ {
        self.chunks.iter().enumerate().flat_map(|(c, chunk)| {
            chunk
                .hosts
                .iter()
                .enumerate()
                .filter_map(move |(i, h)| h.as_deref().map(|h| (HostId::from_index((c << CHUNK_BITS) + i), h)))
        })
    }

    /// Ids of the hosts, in order.
    pub fn host_ids(&self) -> impl Iterator<Item = HostId> + '_ {
        self.hosts().map(|(id, _)| id)
    }

    /// Appends the ids of all live hosts to `out`, in order, without allocating per host.
    pub fn collect_host_ids(&self, out: &mut Vec<HostId>) {
        out.reserve(self.live);
        for c in 0..self.chunks.len() {
            push_lanes(out, c, self.chunks[c].hot.live);
        }
    }

    /// Number of 64-host chunks: host ids are below `64 × chunk_count()`.
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// The hot data of chunk `chunk` (hosts `64·chunk … 64·chunk + 63`).
    ///
    /// # Panics
    ///
    /// Panics if `chunk >= chunk_count()`.
    #[inline]
    pub fn hot_chunk(&self, chunk: usize) -> &HotChunk {
        &self.chunks[chunk].hot
    }

    /// The hot form of host `id`'s disks, in its disk order (empty for an unknown id).
    #[inline]
    pub fn hot_disks(&self, id: HostId) -> &[HotDisk] {
        self.chunks.get(id.index() >> CHUNK_BITS).map_or(&[], |c| c.hot.lane_disks(id.index() & (CHUNK - 1)))
    }

    /// The first disk (in host, then disk order) whose `available` exceeds its `maximum`, if
    /// any. A snapshot may hold one (the foundation reads no disk space); the replica engine
    /// refuses it, since no filesystem reports more free space than its size.
    ///
    /// Computes in O(hosts / 64) from a per-chunk mask kept up to date by every build and event.
    pub fn disk_above_maximum(&self) -> Option<(HostId, DiskId)> {
        for (c, chunk) in self.chunks.iter().enumerate() {
            let mask = chunk.hot.disk_above_maximum;
            if mask != 0 {
                let lane = mask.trailing_zeros() as usize;
                let host = HostId::from_index((c << CHUNK_BITS) + lane);
                let disk = chunk.hot.lane_disks(lane).iter().position(|d| d.available > d.maximum)?;
                return Some((host, DiskId::from_index(disk)));
            }
        }
        None
    }

    /// The interned strings of this snapshot.
    pub fn symbols(&self) -> &Interner {
        &self.symbols
    }

    /// The string of a symbol.
    pub fn resolve(&self, sym: Symbol) -> &str {
        self.symbols.resolve(sym)
    }

    /// The numeric attributes kept in dense per-chunk columns ([`HotChunk::attributes`]), for
    /// filters and weighers that read them for every host.
    pub fn hot_attributes(&self) -> &[Box<str>] {
        &self.hot_attributes
    }

    /// The position of hot attribute `name` in [`hot_attributes`](Cluster::hot_attributes).
    #[inline]
    pub fn hot_attribute(&self, name: &str) -> Option<usize> {
        self.hot_attributes.iter().position(|a| **a == *name)
    }

    /// The value of hot attribute number `index` on host `id` (NaN when the host lacks it).
    #[inline]
    pub fn hot_attribute_value(&self, id: HostId, index: usize) -> f64 {
        self.chunks[id.index() >> CHUNK_BITS].hot.attributes[index][id.index() & (CHUNK - 1)]
    }

    /// The attributes whose values are interned into host classes ([`HotChunk::classes`]), for
    /// filters that judge each distinct value once per request rather than each host
    /// ([`ClusterSpec::class_attributes`]).
    pub fn class_attributes(&self) -> &[Box<str>] {
        &self.class_attributes
    }

    /// The position of class attribute `name` in [`class_attributes`](Cluster::class_attributes).
    #[inline]
    pub fn class_attribute(&self, name: &str) -> Option<usize> {
        self.class_attributes.iter().position(|a| **a == *name)
    }

    /// The class of class attribute number `index` on host `id`: hosts with the same class hold
    /// equal values (strictly: `1` and `1.0` differ), and a value keeps its class in every later
    /// snapshot. [`ClassId::NONE`] when the host lacks the attribute or it is `null`. A host's
    /// class changes only when an event replaces its record.
    ///
    /// # Panics
    ///
    /// Panics if `id` is beyond the host table or `index` is not a class attribute's position.
    #[inline]
    pub fn attribute_class(&self, id: HostId, index: usize) -> ClassId {
        self.chunks[id.index() >> CHUNK_BITS].hot.classes[index][id.index() & (CHUNK - 1)]
    }

    /// The class of host `id`'s aggregate set ([`Host::aggregates`]): hosts with the same class
    /// belong to the same aggregates ([`aggregate_set`](Cluster::aggregate_set)). A host's class
    /// changes only when an event replaces its record; aggregate metadata is fixed for a lineage
    /// of snapshots. [`ClassId::NONE`] for an id that names no host.
    ///
    /// # Panics
    ///
    /// Panics if `id` is beyond the host table.
    #[inline]
    pub fn aggregate_class(&self, id: HostId) -> ClassId {
        self.chunks[id.index() >> CHUNK_BITS].hot.aggregate_class[id.index() & (CHUNK - 1)]
    }

    /// The id of member name `name` ([`member_class`](Cluster::member_class)), if a class value
    /// with such a member was ever interned in this snapshot's lineage.
    pub fn class_member_name(&self, name: &str) -> Option<u32> {
        self.classes.member_name(name)
    }

    /// The class of member `name` (an id from [`class_member_name`](Cluster::class_member_name))
    /// of the value of class `class`: of an object's entry, or of the entry of the object a JSON
    /// string holds (so a host's `cpu_info.arch` has a class whichever form `cpu_info` takes).
    /// [`ClassId::NONE`] when the value has no such member or it is `null`. Members of members
    /// have classes too. Computes in O(log members).
    #[inline]
    pub fn member_class(&self, class: ClassId, name: u32) -> ClassId {
        self.classes.member_class(class, name)
    }

    /// The aggregates of aggregate class `class` (sorted); empty for an unknown class.
    pub fn aggregate_set(&self, class: ClassId) -> &[AggregateId] {
        self.classes.aggregate_set(class)
    }

    /// Number of aggregate classes issued in this snapshot's lineage (a bound on
    /// [`aggregate_class`](Cluster::aggregate_class)).
    pub fn aggregate_class_count(&self) -> usize {
        self.classes.aggregate_classes()
    }

    /// Number of attribute value classes issued in this snapshot's lineage (a bound on
    /// [`attribute_class`](Cluster::attribute_class)).
    pub fn attribute_class_count(&self) -> usize {
        self.classes.value_classes()
    }

    /// The resource kinds.
    pub fn resource_kinds(&self) -> &ResourceKinds {
        &self.kinds
    }

    /// The topology levels and domains.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    /// The aggregates, indexed by [`AggregateId`].
    pub fn aggregates(&self) -> &[Aggregate] {
        &self.aggregates
    }

    /// The aggregate called `name`.
    pub fn aggregate_id(&self, name: &str) -> Option<AggregateId> {
        self.aggregates.iter().position(|a| &*a.name == name).map(AggregateId::from_index)
    }

    /// The distinct raw values of metadata `key` across host `id`'s aggregates, unsplit, sorted
    /// (the filter scheduler's "raw values of one key").
    pub fn aggregate_values(&self, id: HostId, key: &str) -> Vec<&str> {
        let mut values: Vec<&str> = self
            .host(id)
            .into_iter()
            .flat_map(|h| h.aggregates.iter())
            .filter_map(|a| self.aggregates[a.index()].metadata.get(key).map(String::as_str))
            .collect();
        values.sort_unstable();
        values.dedup();
        values
    }

    /// The union over host `id`'s aggregates of metadata `key`'s comma-split, whitespace-stripped
    /// values, sorted (the filter scheduler's "metadata by host"); `None` when no aggregate of
    /// the host sets the key.
    pub fn aggregate_metadata(&self, id: HostId, key: &str) -> Option<Vec<&str>> {
        let raw = self.aggregate_values(id, key);
        if raw.is_empty() {
            return None;
        }
        let mut values: Vec<&str> = raw.iter().flat_map(|v| v.split(',')).map(str::trim).collect();
        values.sort_unstable();
        values.dedup();
        Some(values)
    }

    /// The comma-split values of metadata `key` across `host`'s aggregates, in aggregate order
    /// and with repeats, each stripped of leading and trailing whitespace (Unicode whitespace
    /// and the ASCII separators U+001C–U+001F, as Python's `str.strip`); nothing when no
    /// aggregate of the host sets the key. Allocates nothing.
    pub fn metadata_values<'a>(&'a self, host: &'a Host, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        host.aggregates
            .iter()
            .filter_map(move |a| self.aggregates.get(a.index()).and_then(|agg| agg.metadata.get(key)))
            .flat_map(|v| v.split(','))
            .map(|v| v.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)))
    }

    /// Every metadata key set by host `id`'s aggregates, sorted.
    pub fn aggregate_keys(&self, id: HostId) -> Vec<&str> {
        let mut keys: Vec<&str> = self
            .host(id)
            .into_iter()
            .flat_map(|h| h.aggregates.iter())
            .flat_map(|a| self.aggregates[a.index()].metadata.keys().map(String::as_str))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// The value of label `key` on host `id`.
    pub fn label(&self, id: HostId, key: &str) -> Option<&str> {
        let key = self.symbols.get(key)?;
        self.host(id)?.labels.get(key).map(|v| self.resolve(v))
    }

    /// The zone name of host `id`.
    pub fn zone(&self, id: HostId) -> Option<&str> {
        let level = self.topology.zone_level()?;
        let value = self.topology.value(level, self.host(id)?.domain(level))?;
        Some(self.resolve(value))
    }

    /// The name of the service host of host `id`: the one its spec names
    /// ([`HostSpec::service_host`]), else the host's own name. Host lists (`force_hosts`,
    /// `ignore_hosts`), server-group hosts and isolated hosts name service hosts. Computes in
    /// O(1).
    pub fn service_host_name(&self, id: HostId) -> &str {
        match self.host(id) {
            Some(h) => h.service.map_or(&*h.name, |s| self.services.name(s)),
            None => "",
        }
    }

    /// The nodes that share host `id`'s service host, `id` included, in id order (just `id`
    /// for a host that is its own service host).
    pub fn service_nodes(&self, id: HostId) -> impl Iterator<Item = HostId> + '_ {
        let service = self.host(id).and_then(|h| h.service);
        let shared = service.map_or(&[][..], |s| self.services.nodes(s));
        shared.iter().copied().chain(service.is_none().then_some(id))
    }

    /// The instances of host `id`'s service host: those of every node that shares it. The
    /// filter scheduler keeps one instance list per service host, so its group and affinity
    /// rules read this list, not a node's own [`Host::instances`].
    pub fn service_instances(&self, id: HostId) -> impl Iterator<Item = &Instance> + '_ {
        self.service_nodes(id).filter_map(|n| self.host(n)).flat_map(|h| h.instances.iter())
    }

    /// Whether instance `instance` runs on host `id`'s service host (on any of its nodes).
    pub fn service_has_instance(&self, id: HostId, instance: &str) -> bool {
        self.service_instances(id).any(|i| &*i.id == instance)
    }

    /// Whether some service host has two nodes or more (picks on one node then change what
    /// the group rules see on its siblings). Computes in O(1).
    pub fn has_shared_service_hosts(&self) -> bool {
        self.services.any_shared()
    }

    /// Makes host `id` (built from `spec`) a node of the service host its spec names.
    fn join_service_host(&mut self, spec: &HostSpec, id: HostId) -> Result<Option<ServiceHostId>, BuildError> {
        let Some(name) = &spec.service_host else { return Ok(None) };
        if name.is_empty() {
            return Err(BuildError::EmptyName { what: format!("the service host of host `{}`", spec.name) });
        }
        Ok(Some(Arc::make_mut(&mut self.services).join(name, id)))
    }

    /// Takes host `id` out of its service host's nodes.
    fn leave_service_host(&mut self, id: HostId) {
        if let Some(service) = self.host(id).and_then(|h| h.service) {
            Arc::make_mut(&mut self.services).leave(service, id);
        }
    }

    /// Checks what the nodes of `spec`'s service host must agree on: no host outside it bears
    /// its name, and its nodes list the same aggregates.
    fn check_service_host(&self, spec: &HostSpec) -> Result<(), BuildError> {
        let conflict = |message: String| Err(BuildError::Config { message });
        match &spec.service_host {
            None => {
                if self.services.id(&spec.name).is_some_and(|s| !self.services.nodes(s).is_empty()) {
                    return conflict(format!(
                        "host `{}` is named like a service host of other hosts but is not one of its nodes",
                        spec.name
                    ));
                }
            }
            Some(service) => {
                let Some(id) = self.host_id(&spec.name) else { return Ok(()) };
                let mine = self.host(id).map(|h| &h.aggregates);
                for node in self.service_nodes(id) {
                    if self.host(node).map(|h| &h.aggregates) != mine {
                        return conflict(format!(
                            "hosts `{}` and `{}` are nodes of service host `{service}` but list different aggregates",
                            self.host_name(node),
                            spec.name
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// The disk `disk` of host `host`.
    pub fn disk(&self, host: HostId, disk: DiskId) -> Option<&Disk> {
        self.host(host)?.disks.get(disk.index())
    }

    /// Free amount of a standard resource (vCPUs, memory, disk) from the dense columns: one
    /// index, no pointer chase. Extended kinds read [`Host::resource`].
    #[inline]
    pub(crate) fn hot_free(&self, id: HostId, r: usize) -> f64 {
        self.chunks[id.index() >> CHUNK_BITS].hot.free[r][id.index() & (CHUNK - 1)]
    }

    #[inline]
    pub(crate) fn hot_physical(&self, id: HostId, r: usize) -> f64 {
        self.chunks[id.index() >> CHUNK_BITS].hot.physical[r][id.index() & (CHUNK - 1)]
    }

    /// Whether host `id` exists and its state allows new work, from the dense columns.
    #[inline]
    pub fn is_schedulable(&self, id: HostId) -> bool {
        self.chunks
            .get(id.index() >> CHUNK_BITS)
            .is_some_and(|c| c.hot.schedulable >> (id.index() & (CHUNK - 1)) & 1 == 1)
    }

    // ---- construction and mutation of a private copy (used by the builder and by events) ----

    /// Adds a host under the next id, indexing its name.
    fn insert_host(&mut self, spec: &HostSpec) -> Result<HostId, BuildError> {
        if self.host_id(&spec.name).is_some() {
            return Err(BuildError::DuplicateHost { name: spec.name.clone() });
        }
        let id = self.push_host(spec)?;
        Arc::make_mut(&mut self.names).insert(&spec.name, id);
        Ok(id)
    }

    /// Adds a host under the next id without indexing its name (the builder indexes all at once).
    fn push_host(&mut self, spec: &HostSpec) -> Result<HostId, BuildError> {
        if spec.name.is_empty() {
            return Err(BuildError::EmptyName { what: "host".into() });
        }
        let mut host = self.host_from_spec(spec)?;
        let id = HostId::from_index(self.slots);
        host.service = self.join_service_host(spec, id)?;
        self.put(id, Some(Arc::new(host)));
        self.slots += 1;
        self.live += 1;
        Ok(id)
    }

    /// Exactly [`apply_mut`](Cluster::apply_mut) of a [`ClusterEvent::DiskUpdated`] carrying
    /// disk `disk` of host `id` ([`disk_to_spec`](Cluster::disk_to_spec)) with `size` bytes
    /// added to `scheduled` and `name` to the scheduled replicas, without the spec round trip
    /// and without copying a host or chunk this snapshot alone holds. Returns `false` (nothing
    /// changed) when there is no such disk or the new `scheduled` would be negative or above
    /// `i64::MAX` (where the event is refused or cannot be written).
    pub(crate) fn add_scheduled_replica(&mut self, id: HostId, disk: DiskId, name: &str, size: i64) -> bool {
        let Some(d) = self.disk(id, disk) else { return false };
        let Some(scheduled) = (d.scheduled as i64).checked_add(size).and_then(|v| u64::try_from(v).ok()) else {
            return false;
        };
        let (c, lane) = (id.index() >> CHUNK_BITS, id.index() & (CHUNK - 1));
        let zone_level = self.topology.zone_level();
        self.generation += 1;
        let generation = self.generation;
        let Some(chunk) = self.chunks.get_mut(c).map(Arc::make_mut) else { return false };
        let Some(Some(host)) = chunk.hosts.get_mut(lane) else { return false };
        let h = Arc::make_mut(host);
        let Some(d) = h.disks.get_mut(disk.index()) else { return false };
        d.scheduled = scheduled;
        // The event's disk keeps its names sorted and deduplicated.
        if let Err(i) = d.scheduled_replicas.binary_search_by(|r| (**r).cmp(name)) {
            d.scheduled_replicas.insert(i, name.into());
        }
        h.generation = generation;
        let host = Some(Arc::clone(host));
        // A disk's change leaves the host's classes as they were.
        let classes: SmallVec<[ClassId; 8]> = chunk.hot.classes.iter().map(|column| column[lane]).collect();
        let aggregate_class = chunk.hot.aggregate_class[lane];
        chunk.set(lane, host, zone_level, &self.hot_attributes, &classes, aggregate_class);
        true
    }

    fn put(&mut self, id: HostId, host: Option<Arc<Host>>) {
        let c = id.index() >> CHUNK_BITS;
        if c == self.chunks.len() {
            self.chunks.push(Arc::new(Chunk::new()));
        }
        let zone_level = self.topology.zone_level();
        // A host's classes change here only: when its record is built or an event replaces it.
        // An event that leaves the attributes (or aggregates) as they were keeps their classes.
        let lane = id.index() & (CHUNK - 1);
        let previous = self.chunks[c].hosts.get(lane).and_then(Option::as_deref);
        let hot = &self.chunks[c].hot;
        let same_attributes = previous.zip(host.as_deref()).is_some_and(|(p, h)| {
            self.class_attributes.iter().all(|name| classes::identical(p.attribute(name), h.attribute(name)))
        });
        let same_aggregates = previous.zip(host.as_deref()).is_some_and(|(p, h)| p.aggregates == h.aggregates);
        let mut classes: SmallVec<[ClassId; 8]> = SmallVec::new();
        let mut aggregate_class = ClassId::NONE;
        if same_attributes {
            classes.extend(hot.classes.iter().map(|column| column[lane]));
        }
        if same_aggregates {
            aggregate_class = hot.aggregate_class[lane];
        }
        if let Some(h) = host.as_deref() {
            if !same_attributes {
                for name in self.class_attributes.iter() {
                    classes.push(Classes::value_class(&mut self.classes, h.attribute(name)));
                }
            }
            if !same_aggregates {
                aggregate_class = Classes::aggregate_class(&mut self.classes, &h.aggregates);
            }
        }
        classes.resize(self.class_attributes.len(), ClassId::NONE);
        Arc::make_mut(&mut self.chunks[c]).set(lane, host, zone_level, &self.hot_attributes, &classes, aggregate_class);
    }

    fn host_from_spec(&mut self, spec: &HostSpec) -> Result<Host, BuildError> {
        let ctx = || format!("host `{}`", spec.name);
        // The field's name is formatted only for an error: building a snapshot formats nothing
        // per host, so it leaves no garbage behind in the allocator.
        let check = |kind: &str, field: &str, v: f64| -> Result<(), BuildError> {
            let problem = if !v.is_finite() {
                "not finite"
            } else if v < 0.0 {
                "negative"
            } else {
                return Ok(());
            };
            Err(BuildError::number(ctx(), format!("{kind} {field}"), problem, v))
        };
        let labels = self.labels(&spec.labels);

        let levels = self.topology.levels().len();
        let mut topology: SmallVec<[DomainId; 3]> = smallvec::smallvec![DomainId::NONE; levels];
        for (level, value) in &spec.topology {
            let Some(l) = self.topology.level(level) else {
                return Err(BuildError::UnknownReference {
                    kind: "topology level",
                    name: level.clone(),
                    context: ctx(),
                });
            };
            let sym = Interner::intern(&mut self.symbols, value);
            // A shared table is copied only for a new domain (as the interner for a new string).
            topology[l] = match self.topology.domain(l, sym) {
                Some(d) => d,
                None => Arc::make_mut(&mut self.topology).insert(l, sym),
            };
        }

        let mut resources: SmallVec<[Resource; 3]> = smallvec::smallvec![Resource::UNDECLARED; HOT_RESOURCES];
        for (kind, r) in &spec.resources {
            if kind.is_empty() {
                return Err(BuildError::EmptyName { what: format!("a resource of {}", ctx()) });
            }
            check(kind, "capacity", r.capacity)?;
            check(kind, "reserved", r.reserved)?;
            check(kind, "used", r.used)?;
            check(kind, "allocation_ratio", r.allocation_ratio)?;
            if r.allocation_ratio == 0.0 {
                return Err(BuildError::number(ctx(), format!("{kind} allocation_ratio"), "zero", 0.0));
            }
            if r.reserved > r.capacity {
                return Err(BuildError::number(ctx(), format!("{kind} reserved"), "larger than capacity", r.reserved));
            }
            let id = self.kind(kind);
            if resources.len() <= id.index() {
                resources.resize(id.index() + 1, Resource::UNDECLARED);
            }
            resources[id.index()] = Resource {
                capacity: r.capacity,
                reserved: r.reserved,
                used: r.used,
                unlisted: r.used,
                allocation_ratio: r.allocation_ratio,
            };
        }

        let mut metrics: Vec<(Symbol, f64)> = Vec::with_capacity(spec.metrics.len());
        for (name, &value) in &spec.metrics {
            if !value.is_finite() {
                return Err(BuildError::number(ctx(), format!("metric {name}"), "not finite", value));
            }
            metrics.push((Interner::intern(&mut self.symbols, name), value));
        }

        let mut aggregates: Vec<AggregateId> = Vec::with_capacity(spec.aggregates.len());
        for name in &spec.aggregates {
            let id = self.aggregate_id(name).ok_or_else(|| BuildError::UnknownReference {
                kind: "aggregate",
                name: name.clone(),
                context: ctx(),
            })?;
            aggregates.push(id);
        }
        aggregates.sort();
        aggregates.dedup();

        let mut disks = Vec::with_capacity(spec.disks.len());
        for d in &spec.disks {
            if d.name.is_empty() {
                return Err(BuildError::EmptyName { what: format!("a disk of {}", ctx()) });
            }
            if disks.iter().any(|x: &Disk| *x.name == *d.name) {
                return Err(BuildError::DuplicateDisk { host: spec.name.clone(), disk: d.name.clone() });
            }
            disks.push(self.disk_from_spec(&spec.name, d)?);
        }

        let mut host = Host {
            name: spec.name.as_str().into(),
            labels,
            topology: Domains::new(topology, &mut self.parts),
            resources: HostResources::new(&resources, &mut self.parts),
            state: spec.state,
            metrics: Metrics::new(metrics),
            instances: Box::default(),
            aggregates: aggregates.into_boxed_slice(),
            disks: disks.into_boxed_slice(),
            attributes: AttributeTable::new(spec.attributes.iter().map(|(k, v)| (k.as_str(), v))),
            generation: self.generation,
            service: None,
        };
        let mut instances: Vec<Instance> = Vec::with_capacity(spec.instances.len());
        for inst in &spec.instances {
            if instances.iter().any(|i| *i.id == *inst.id) {
                return Err(BuildError::DuplicateInstance { host: spec.name.clone(), id: inst.id.clone() });
            }
            let instance = self.instance_from_spec(&spec.name, inst)?;
            host.add_usage(&instance.resources, 1.0);
            instances.push(instance);
        }
        host.instances = instances.into_boxed_slice();
        self.check_totals(&host)?;
        Ok(host)
    }

    /// Refuses a host whose derived totals are not finite although every input number is: the
    /// limit `(capacity − reserved) × allocation_ratio`, and `used` (the unlisted use plus every
    /// listed instance's), with the host and the field named.
    pub(crate) fn check_totals(&self, host: &Host) -> Result<(), BuildError> {
        for (i, r) in host.resources.iter().enumerate() {
            let kind = self.kinds.name(ResourceId::from_index(i));
            let ctx = || format!("host `{}`", host.name);
            if !r.used.is_finite() {
                return Err(BuildError::number(ctx(), format!("{kind} used (sum of instances)"), "not finite", r.used));
            }
            if !r.limit().is_finite() {
                let field = format!("{kind} (capacity − reserved) × allocation_ratio");
                return Err(BuildError::number(ctx(), field, "not finite", r.limit()));
            }
            if !r.free().is_finite() {
                return Err(BuildError::number(ctx(), format!("{kind} free (limit − used)"), "not finite", r.free()));
            }
        }
        Ok(())
    }

    pub(crate) fn instance_from_spec(&mut self, host: &str, spec: &InstanceSpec) -> Result<Instance, BuildError> {
        if spec.id.is_empty() {
            return Err(BuildError::EmptyName { what: format!("an instance on host `{host}`") });
        }
        let mut resources = SmallVec::new();
        for (kind, &amount) in &spec.resources {
            if kind.is_empty() {
                return Err(BuildError::EmptyName {
                    what: format!("a resource of instance `{}` on host `{host}`", spec.id),
                });
            }
            if !amount.is_finite() || amount < 0.0 {
                let problem = if amount.is_finite() { "negative" } else { "not finite" };
                return Err(BuildError::number(
                    format!("instance `{}` on host `{host}`", spec.id),
                    kind.clone(),
                    problem,
                    amount,
                ));
            }
            resources.push((self.kind(kind), amount));
        }
        Ok(Instance {
            id: spec.id.as_str().into(),
            group: spec.group.as_deref().map(|g| Interner::intern(&mut self.symbols, g)),
            resources,
            labels: self.labels(&spec.labels),
            terminating: spec.terminating,
        })
    }

    pub(crate) fn disk_from_spec(&mut self, host: &str, d: &DiskSpec) -> Result<Disk, BuildError> {
        let bytes = |field: &str, v: i64| -> Result<u64, BuildError> {
            u64::try_from(v).map_err(|_| {
                BuildError::number(format!("disk `{}` of host `{host}`", d.name), field, "negative", v as f64)
            })
        };
        let mut tags: SmallVec<[Symbol; 2]> = d.tags.iter().map(|t| Interner::intern(&mut self.symbols, t)).collect();
        tags.sort();
        tags.dedup();
        Ok(Disk {
            name: d.name.as_str().into(),
            maximum: bytes("maximum", d.maximum)?,
            available: bytes("available", d.available)?,
            reserved: bytes("reserved", d.reserved)?,
            scheduled: bytes("scheduled", d.scheduled)?,
            tags,
            allow_scheduling: d.allow_scheduling,
            eviction_requested: d.eviction_requested,
            disk_type: d.disk_type,
            fs_type: d.fs_type.as_str().into(),
            ready: d.ready,
            schedulable: d.schedulable,
            scheduled_replicas: {
                let mut names: Vec<Box<str>> = d.scheduled_replicas.iter().map(|n| n.as_str().into()).collect();
                names.sort_unstable();
                names.dedup();
                names
            },
        })
    }

    fn kind(&mut self, name: &str) -> ResourceId {
        match self.kinds.get(name) {
            Some(id) => id,
            None => Arc::make_mut(&mut self.kinds).insert(name),
        }
    }

    fn labels(&mut self, labels: &BTreeMap<String, String>) -> Labels {
        let pairs = labels
            .iter()
            .map(|(k, v)| (Interner::intern(&mut self.symbols, k), Interner::intern(&mut self.symbols, v)))
            .collect();
        Labels::from_pairs(pairs, &mut self.parts)
    }

    fn host_spec(&self, h: &Host) -> HostSpec {
        let s = |sym: Symbol| self.resolve(sym).to_owned();
        let labels = |l: &Labels| l.iter().map(|(k, v)| (s(k), s(v))).collect::<BTreeMap<_, _>>();
        let mut resources = BTreeMap::new();
        for (i, r) in h.resources.iter().enumerate() {
            if !r.is_declared() {
                continue;
            }
            resources.insert(
                self.kinds.name(ResourceId::from_index(i)).to_owned(),
                ResourceSpec {
                    capacity: r.capacity,
                    reserved: r.reserved,
                    used: r.unlisted,
                    allocation_ratio: r.allocation_ratio,
                },
            );
        }
        let topology = h
            .topology
            .iter()
            .enumerate()
            .filter_map(|(l, &d)| self.topology.value(l, d).map(|v| (self.topology.levels()[l].to_string(), s(v))))
            .collect();
        HostSpec {
            name: h.name.to_string(),
            labels: labels(&h.labels),
            topology,
            resources,
            state: h.state,
            metrics: h.metrics.iter().map(|&(k, v)| (s(k), v)).collect(),
            instances: h
                .instances
                .iter()
                .map(|i| InstanceSpec {
                    id: i.id.to_string(),
                    group: i.group.map(s),
                    resources: i.resources.iter().map(|&(r, a)| (self.kinds.name(r).to_owned(), a)).collect(),
                    labels: labels(&i.labels),
                    terminating: i.terminating,
                })
                .collect(),
            aggregates: h.aggregates.iter().map(|a| self.aggregates[a.index()].name.to_string()).collect(),
            service_host: h.service.map(|s| self.services.name(s).to_owned()),
            disks: h.disks.iter().map(|d| self.disk_spec(d)).collect(),
            attributes: h.attributes().map(|(k, v)| (k.to_owned(), v.clone())).collect(),
        }
    }

    fn disk_spec(&self, d: &Disk) -> DiskSpec {
        DiskSpec {
            name: d.name.to_string(),
            maximum: d.maximum as i64,
            available: d.available as i64,
            reserved: d.reserved as i64,
            scheduled: d.scheduled as i64,
            tags: d.tags.iter().map(|&t| self.resolve(t).to_owned()).collect(),
            allow_scheduling: d.allow_scheduling,
            eviction_requested: d.eviction_requested,
            disk_type: d.disk_type,
            fs_type: d.fs_type.to_string(),
            ready: d.ready,
            schedulable: d.schedulable,
            scheduled_replicas: d.scheduled_replicas.iter().map(|n| n.to_string()).collect(),
        }
    }
}

/// Appends the host ids of the set lanes of `mask` in chunk `chunk`, in order.
#[inline]
pub(crate) fn push_lanes(out: &mut Vec<HostId>, chunk: usize, mut mask: u64) {
    while mask != 0 {
        out.push(HostId::from_index((chunk << CHUNK_BITS) | mask.trailing_zeros() as usize));
        mask &= mask - 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_hosts() -> Cluster {
        Cluster::builder()
            .topology_levels(["region", "zone", "rack"])
            .aggregate(AggregateSpec::new("fast").metadata("ssd", "true"))
            .host(
                HostSpec::new("a")
                    .vcpus(8.0)
                    .memory_mb(1024.0)
                    .zone("z1")
                    .topology("rack", "r1")
                    .label("tier", "gold")
                    .aggregate("fast")
                    .instance(InstanceSpec::new("i1").group("web").resource("memory_mb", 256.0)),
            )
            .host(HostSpec::new("b").vcpus(4.0).resource("gpu", ResourceSpec::new(2.0)))
            .build()
            .unwrap()
    }

    #[test]
    fn metadata_values_split_and_strip_as_python() {
        let c = Cluster::builder()
            .aggregate(AggregateSpec::new("a").metadata("az", " x ,\u{1c}y\u{1f}"))
            .aggregate(AggregateSpec::new("b").metadata("az", "x"))
            .host(HostSpec::new("h").aggregate("a").aggregate("b"))
            .host(HostSpec::new("bare"))
            .build()
            .unwrap();
        let host = |name: &str| c.host(c.host_id(name).unwrap()).unwrap();
        assert_eq!(c.metadata_values(host("h"), "az").collect::<Vec<_>>(), ["x", "y", "x"]);
        assert_eq!(c.metadata_values(host("bare"), "az").count(), 0);
    }

    #[test]
    fn builds_and_looks_up() {
        let c = two_hosts();
        assert_eq!(c.len(), 2);
        let a = c.host_id("a").unwrap();
        assert_eq!(c.host_name(a), "a");
        assert_eq!(c.label(a, "tier"), Some("gold"));
        assert_eq!(c.zone(a), Some("z1"));
        assert_eq!(c.zone(c.host_id("b").unwrap()), None);
        // Instance use is added to the host's use.
        assert_eq!(c.host(a).unwrap().resource(ResourceId::MEMORY_MB).used, 256.0);
        assert_eq!(c.hot_free(a, ResourceId::MEMORY_MB.index()), 768.0);
        assert_eq!(c.resource_kinds().get("gpu"), Some(ResourceId(3)));
        assert_eq!(c.aggregates()[0].metadata["ssd"], "true");
    }

    #[test]
    fn changed_chunks_are_those_an_event_copied() {
        let mut builder = Cluster::builder().topology_levels(["region", "zone", "rack"]);
        for i in 0..192 {
            builder = builder.host(HostSpec::new(format!("h{i}")).vcpus(8.0).label("tier", "gold"));
        }
        let first = builder.build().unwrap();
        let changed = |now: &Cluster, earlier: &Cluster| now.changed_chunks(earlier).map(Iterator::collect::<Vec<_>>);
        assert_eq!(changed(&first, &first), Some(vec![]));
        assert_eq!(changed(&first, &first.clone()), Some(vec![]));
        let placed = ClusterEvent::InstancePlaced {
            host: "h70".into(),
            instance: InstanceSpec::new("i1").resource("vcpus", 1.0),
        };
        let second = first.apply(&placed).unwrap();
        assert_eq!(changed(&second, &first), Some(vec![1]), "h70 is in chunk 1");
        let added = ClusterEvent::HostAdded { host: HostSpec::new("h192").vcpus(8.0).label("tier", "gold") };
        let third = second.apply(&added).unwrap();
        assert_eq!(changed(&third, &first), Some(vec![1, 3]), "h192 opens chunk 3");
        assert_eq!(changed(&third, &second), Some(vec![3]));
        assert_eq!(changed(&second, &third), None, "fewer chunks than the earlier snapshot");
        // A new label value is interned into a copy of the table: nothing is comparable.
        let relabelled = ClusterEvent::HostUpdated { host: HostSpec::new("h0").vcpus(8.0).label("tier", "silver") };
        assert_eq!(changed(&second.apply(&relabelled).unwrap(), &second), None);
        // In-place writes copy a chunk an earlier clone still holds.
        let mut written = second.clone();
        written.apply_mut(&ClusterEvent::InstanceRemoved { host: "h70".into(), instance: "i1".into() }).unwrap();
        assert_eq!(changed(&written, &second), Some(vec![1]));
    }

    #[test]
    fn spec_round_trip_is_lossless() {
        let c = two_hosts();
        let back = Cluster::from_json(&c.to_json()).unwrap();
        assert_eq!(back.to_spec(), c.to_spec());
    }

    #[test]
    fn rejects_bad_input_with_names() {
        let dup = Cluster::builder().host(HostSpec::new("x")).host(HostSpec::new("x")).build();
        assert_eq!(dup.unwrap_err(), BuildError::DuplicateHost { name: "x".into() });

        let neg = Cluster::builder().host(HostSpec::new("h").memory_mb(-1.0)).build().unwrap_err();
        assert_eq!(neg.to_string(), "host `h`: memory_mb capacity is negative (-1)");

        let nan = Cluster::builder().host(HostSpec::new("h").vcpus(f64::NAN)).build().unwrap_err();
        assert!(nan.to_string().contains("vcpus capacity is not finite"), "{nan}");

        let level = Cluster::builder().host(HostSpec::new("h").topology("rack", "r1")).build().unwrap_err();
        assert!(matches!(level, BuildError::UnknownReference { kind: "topology level", .. }), "{level}");

        let agg = Cluster::builder().host(HostSpec::new("h").aggregate("nope")).build().unwrap_err();
        assert_eq!(agg.to_string(), "host `h` refers to unknown aggregate `nope`");

        let inst = Cluster::builder()
            .host(HostSpec::new("h1").instance(InstanceSpec::new("i")))
            .host(HostSpec::new("h2").instance(InstanceSpec::new("i")))
            .build()
            .unwrap_err();
        assert!(matches!(inst, BuildError::DuplicateInstance { .. }));

        let disk = Cluster::builder().host(HostSpec::new("h").disk(DiskSpec::new("d", -5, 0))).build().unwrap_err();
        assert_eq!(disk.to_string(), "disk `d` of host `h`: maximum is negative (-5)");
    }

    #[test]
    fn json_errors_carry_positions() {
        let err = Cluster::from_json("{\"hosts\": [ {\"name\": \"a\", \"colour\": 1} ]}").unwrap_err();
        match err {
            BuildError::Json { line, column, source } => {
                let message = source.to_string();
                assert_eq!(line, 1);
                assert!(column > 10);
                assert!(message.contains("colour"), "{message}");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(matches!(Cluster::from_json("{"), Err(BuildError::Json { .. })));
    }

    #[test]
    fn resources_accept_a_bare_number_or_an_object() {
        let c = Cluster::from_json(
            r#"{"hosts": [{"name": "h", "resources": {"vcpus": 8,
                "memory_mb": {"capacity": 100, "reserved": 10, "used": 5, "allocation_ratio": 1.5}}}]}"#,
        )
        .unwrap();
        let h = c.host(HostId(0)).unwrap();
        assert_eq!(h.resource(ResourceId::VCPUS).capacity, 8.0);
        assert_eq!(h.resource(ResourceId::MEMORY_MB).free(), 130.0);
    }

    #[test]
    fn many_hosts_span_chunks() {
        let mut b = Cluster::builder();
        for i in 0..200 {
            b = b.host(HostSpec::new(format!("h{i}")).vcpus(i as f64));
        }
        let c = b.build().unwrap();
        let mut ids = Vec::new();
        c.collect_host_ids(&mut ids);
        assert_eq!(ids.len(), 200);
        assert_eq!(c.hot_free(HostId(150), 0), 150.0);
        assert_eq!(c.hosts().nth(130).unwrap().1.name.as_ref(), "h130");
    }

    /// Two nodes of service host `bm` (the first runs `i1`), and a host of its own.
    fn service_nodes() -> ClusterBuilder {
        Cluster::builder()
            .aggregate(AggregateSpec::new("gold"))
            .host(HostSpec::new("bm:n0").service_host("bm").aggregate("gold").instance(InstanceSpec::new("i1")))
            .host(HostSpec::new("bm:n1").service_host("bm").aggregate("gold"))
            .host(HostSpec::new("kvm").instance(InstanceSpec::new("i2")))
    }

    #[test]
    fn nodes_of_a_service_host_share_its_name_and_instances() {
        let c = service_nodes().build().unwrap();
        let (n0, n1, kvm) = (HostId(0), HostId(1), HostId(2));
        assert_eq!([c.service_host_name(n0), c.service_host_name(n1), c.service_host_name(kvm)], ["bm", "bm", "kvm"]);
        assert_eq!(c.service_nodes(n1).collect::<Vec<_>>(), [n0, n1]);
        assert_eq!(c.service_nodes(kvm).collect::<Vec<_>>(), [kvm]);
        // The instance is stored once, on its node, and seen from every node of the service host.
        assert_eq!(c.host(n1).unwrap().instances.len(), 0);
        assert!(c.service_has_instance(n1, "i1") && !c.service_has_instance(n1, "i2"));
        assert!(c.has_shared_service_hosts());
        let again = Cluster::from_spec(&c.to_spec()).unwrap();
        assert_eq!(again.service_host_name(n1), "bm", "the spec round-trips the service host");
        let removed = c.apply(&ClusterEvent::HostRemoved { host: "bm:n0".into() }).unwrap();
        assert_eq!(removed.service_nodes(n1).collect::<Vec<_>>(), [n1]);
        assert!(!removed.service_has_instance(n1, "i1") && !removed.has_shared_service_hosts());
        assert!(!Cluster::builder().host(HostSpec::new("solo")).build().unwrap().has_shared_service_hosts());
    }

    #[test]
    fn nodes_of_a_service_host_share_its_aggregates_and_its_name() {
        let differ = service_nodes().host(HostSpec::new("bm:n2").service_host("bm")).build().unwrap_err();
        assert!(differ.to_string().contains("list different aggregates"), "{differ}");
        let named = service_nodes().host(HostSpec::new("bm")).build().unwrap_err();
        assert!(named.to_string().contains("not one of its nodes"), "{named}");
        let empty = service_nodes().host(HostSpec::new("x").service_host("")).build().unwrap_err();
        assert!(matches!(empty, BuildError::EmptyName { .. }), "{empty}");
        // Events keep the rule.
        let c = service_nodes().build().unwrap();
        let add = ClusterEvent::HostAdded { host: HostSpec::new("bm:n2").service_host("bm") };
        assert!(c.apply(&add).is_err());
        let add = ClusterEvent::HostAdded { host: HostSpec::new("bm:n2").service_host("bm").aggregate("gold") };
        let c = c.apply(&add).unwrap();
        assert_eq!(c.service_nodes(HostId(0)).count(), 3);
        let moved = ClusterEvent::HostUpdated { host: HostSpec::new("bm:n2").service_host("other") };
        let c = c.apply(&moved).unwrap();
        assert_eq!((c.service_nodes(HostId(0)).count(), c.service_host_name(HostId(3))), (2, "other"));
    }

    #[test]
    fn a_reported_disk_condition_is_kept_as_given() {
        let spec = |d: DiskSpec| HostSpec::new("n").disk(d);
        let c = Cluster::builder()
            .host(spec(DiskSpec::new("given", 10, 5).schedulable(false)))
            .host(HostSpec::new("m").disk(DiskSpec::new("derived", 10, 5)))
            .build()
            .unwrap();
        assert_eq!(c.disk(HostId(0), DiskId(0)).unwrap().schedulable, Some(false));
        assert_eq!(c.hot_disks(HostId(0))[0].schedulable, Some(false));
        assert_eq!(c.disk(HostId(1), DiskId(0)).unwrap().schedulable, None);
        let again = Cluster::from_spec(&c.to_spec()).unwrap();
        assert_eq!(again.disk(HostId(0), DiskId(0)).unwrap().schedulable, Some(false));
    }

    proptest::proptest! {
        /// Every chunk's label index answers `mask` and `values` as a scan of its hosts' labels
        /// does, for every interned key and value (absent pairs included), after building and
        /// after relabelling events.
        #[test]
        fn chunk_labels_answer_as_a_scan_of_the_hosts(
            hosts in proptest::collection::vec(proptest::collection::btree_map(0usize..4, 0usize..6, 0..=4), 1..=150),
            relabels in proptest::collection::vec((0usize..150, proptest::collection::btree_map(0usize..4, 0usize..7, 0..=4)), 0..=6),
        ) {
            let spec = |i: usize, labels: &std::collections::BTreeMap<usize, usize>| {
                labels.iter().fold(HostSpec::new(format!("h{i}")), |h, (k, v)| h.label(format!("k{k}"), format!("v{v}")))
            };
            let mut cluster = hosts.iter().enumerate().fold(Cluster::builder(), |b, (i, l)| b.host(spec(i, l))).build().unwrap();
            let check = |cluster: &Cluster| {
                let symbols = cluster.symbols();
                let all: Vec<Symbol> = (0..8).flat_map(|i| [symbols.get(&format!("k{i}")), symbols.get(&format!("v{i}"))]).flatten().collect();
                for c in 0..cluster.chunk_count() {
                    let index = &cluster.hot_chunk(c).labels;
                    let lanes = || (0..CHUNK).filter_map(move |lane| Some((lane, cluster.host(HostId::from_index(c * CHUNK + lane))?)));
                    for &k in &all {
                        let mut want: Vec<(Symbol, u64)> = Vec::new();
                        for &v in &all {
                            let scan = lanes().filter(|(_, h)| h.labels.get(k) == Some(v)).fold(0u64, |m, (lane, _)| m | 1 << lane);
                            proptest::prop_assert_eq!(index.mask(k, v), scan);
                            if scan != 0 {
                                want.push((v, scan));
                            }
                        }
                        want.sort();
                        proptest::prop_assert_eq!(index.values(k).collect::<Vec<_>>(), want);
                    }
                    let labelled = lanes().filter(|(_, h)| !h.labels.is_empty()).fold(0u64, |m, (lane, _)| m | 1 << lane);
                    proptest::prop_assert_eq!(index.labelled(), labelled);
                }
                Ok(())
            };
            check(&cluster)?;
            for (h, labels) in &relabels {
                let event = ClusterEvent::HostUpdated { host: spec(h % hosts.len(), labels) };
                cluster = cluster.apply(&event).unwrap();
                check(&cluster)?;
            }
        }
    }
}
