//! Failure reasons: Longhorn's keys, and placewise's structured notes per node and disk.

use super::space::SpaceFailure;
use super::Ctx;
use crate::id::{HostId, Symbol};
use std::fmt;

/// One of Longhorn's scheduling failure reason keys. `Ord` follows the key text, so a sorted set
/// joins in Longhorn's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FailureReason {
    /// `insufficient storage`
    InsufficientStorage,
    /// `disk not found`
    DiskNotFound,
    /// `disks are unavailable`
    DisksUnavailable,
    /// `tags not fulfilled`
    TagsNotFulfilled,
    /// `node not found`
    NodeNotFound,
    /// `nodes are unavailable`
    NodesUnavailable,
    /// `none of the node candidates contains a ready engine image`
    NoReadyEngineImage,
    /// `hard affinity cannot be satisfied`
    HardAffinity,
    /// `topology requirement cannot be satisfied`
    TopologyRequirement,
    /// `linked clone replica cannot be satisfied`
    LinkedClone,
    /// `replica scheduling failed`
    SchedulingFailed,
    /// `unused failed replica is not supported`
    UnusedFailedReplica,
    /// `replica already scheduled`
    AlreadyScheduled,
    /// `longhorn client operation failed`
    ClientOperation,
    /// `incompatible volume size`
    IncompatibleVolumeSize,
}

impl FailureReason {
    /// Every reason, in declaration order (the bit order of [`FailureReason::bit`]).
    const ALL: [FailureReason; 15] = [
        FailureReason::InsufficientStorage,
        FailureReason::DiskNotFound,
        FailureReason::DisksUnavailable,
        FailureReason::TagsNotFulfilled,
        FailureReason::NodeNotFound,
        FailureReason::NodesUnavailable,
        FailureReason::NoReadyEngineImage,
        FailureReason::HardAffinity,
        FailureReason::TopologyRequirement,
        FailureReason::LinkedClone,
        FailureReason::SchedulingFailed,
        FailureReason::UnusedFailedReplica,
        FailureReason::AlreadyScheduled,
        FailureReason::ClientOperation,
        FailureReason::IncompatibleVolumeSize,
    ];

    /// A one-bit mask for hot-path accumulation.
    pub(crate) fn bit(self) -> u16 {
        1 << (self as u16)
    }

    /// Longhorn's key text.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureReason::InsufficientStorage => "insufficient storage",
            FailureReason::DiskNotFound => "disk not found",
            FailureReason::DisksUnavailable => "disks are unavailable",
            FailureReason::TagsNotFulfilled => "tags not fulfilled",
            FailureReason::NodeNotFound => "node not found",
            FailureReason::NodesUnavailable => "nodes are unavailable",
            FailureReason::NoReadyEngineImage => "none of the node candidates contains a ready engine image",
            FailureReason::HardAffinity => "hard affinity cannot be satisfied",
            FailureReason::TopologyRequirement => "topology requirement cannot be satisfied",
            FailureReason::LinkedClone => "linked clone replica cannot be satisfied",
            FailureReason::SchedulingFailed => "replica scheduling failed",
            FailureReason::UnusedFailedReplica => "unused failed replica is not supported",
            FailureReason::AlreadyScheduled => "replica already scheduled",
            FailureReason::ClientOperation => "longhorn client operation failed",
            FailureReason::IncompatibleVolumeSize => "incompatible volume size",
        }
    }
}

impl PartialOrd for FailureReason {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for FailureReason {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl fmt::Display for FailureReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A sorted, de-duplicated set of reasons (at most 15, kept as a sorted small list), plus the
/// names of the caller's filters that rejected a node or disk (none without caller filters).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reasons(Vec<FailureReason>, Vec<String>);

impl Reasons {
    /// Adds a reason (no-op when present). Computes in O(reasons).
    pub fn insert(&mut self, r: FailureReason) {
        if let Err(i) = self.0.binary_search(&r) {
            self.0.insert(i, r);
        }
    }

    /// Adds the name of a caller filter that rejected a node or disk (no-op when present).
    pub fn insert_caller(&mut self, name: &str) {
        if let Err(i) = self.1.binary_search_by(|n| n.as_str().cmp(name)) {
            self.1.insert(i, name.to_owned());
        }
    }

    /// The names of the caller's filters that rejected a node or disk, sorted.
    pub fn callers(&self) -> &[String] {
        &self.1
    }

    /// Adds every reason of a [`FailureReason::bit`] mask.
    pub(crate) fn insert_bits(&mut self, bits: u16) {
        for r in FailureReason::ALL {
            if bits & r.bit() != 0 {
                self.insert(r);
            }
        }
    }

    /// The reasons in key order.
    pub fn as_slice(&self) -> &[FailureReason] {
        &self.0
    }

    /// Whether there are none (an anti-affinity-only failure): no key and no caller filter.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty() && self.1.is_empty()
    }

    /// Whether `r` is present.
    pub fn contains(&self, r: FailureReason) -> bool {
        self.0.binary_search(&r).is_ok()
    }

    /// The keys joined by `"; "`, as Longhorn's aggregate error text, followed by `rejected by
    /// <name>` for each caller filter.
    pub fn joined(&self) -> String {
        let callers = self.1.iter().map(|n| format!("rejected by {n}"));
        self.0.iter().map(|r| r.as_str().to_owned()).chain(callers).collect::<Vec<_>>().join("; ")
    }

    /// The volume condition message: the joined keys, or `replica scheduling failed` when none.
    pub fn condition_message(&self) -> String {
        if self.is_empty() {
            FailureReason::SchedulingFailed.as_str().to_owned()
        } else {
            self.joined()
        }
    }

    /// The precheck message: `precheck new replica failed: <joined>`, or `disks are
    /// unavailable` when none.
    pub fn precheck_message(&self) -> String {
        if self.is_empty() {
            FailureReason::DisksUnavailable.as_str().to_owned()
        } else {
            format!("precheck new replica failed: {}", self.joined())
        }
    }
}

/// Why a node left the candidate set (placewise's explanation; Longhorn only logs these).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NodeNote {
    /// `Ready` false (host not up).
    NotReady,
    /// Cordoned while `disable-scheduling-on-cordoned-node` is true.
    Cordoned,
    /// `allowScheduling` false (host disabled) or eviction requested.
    SchedulingDisabled,
    /// v2 engine disabled on the node.
    V2Disabled,
    /// Not the replica's hard node affinity.
    HardAffinity,
    /// No topology term matches.
    Topology,
    /// No running instance manager or no ready engine image.
    EngineImage,
    /// Tags do not satisfy the node selector (or the backing image's).
    NodeSelector,
    /// Holds a replica of the volume, and no tier tried admitted it (node anti-affinity).
    NodeUsed,
    /// Its zone holds a replica of the volume, and no tier tried admitted it (zone
    /// anti-affinity).
    ZoneUsed,
    /// In a tier tried, but no disk of it passed.
    NoDisk,
    /// Excluded by the caller's level of this position: its domain holds a replica.
    Level(u16),
    /// Rejected by the caller's node filter of this position.
    Caller(u16),
}

impl NodeNote {
    /// The step of Longhorn's order that rules a node out by this note
    /// ([`ReplicaSelection::binding`](super::ReplicaSelection::binding)): the node checks, the
    /// node selector, the caller's node filters, the tier cascade, the caller's levels within
    /// it. `None` for [`NodeNote::NoDisk`]: its disks carry the notes that ruled it out.
    pub(crate) fn step(self) -> Option<u8> {
        Some(match self {
            NodeNote::NotReady
            | NodeNote::Cordoned
            | NodeNote::SchedulingDisabled
            | NodeNote::V2Disabled
            | NodeNote::HardAffinity
            | NodeNote::Topology
            | NodeNote::EngineImage => 0,
            NodeNote::NodeSelector => 1,
            NodeNote::Caller(_) => 2,
            NodeNote::NodeUsed | NodeNote::ZoneUsed => 3,
            NodeNote::Level(_) => 4,
            NodeNote::NoDisk => return None,
        })
    }
}

/// Why a disk was not chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DiskNote {
    /// Scheduling disallowed or eviction requested.
    Unavailable,
    /// `Ready` false.
    NotReady,
    /// The `Schedulable` condition (size-0 space check) is false.
    Pressure(SpaceFailure),
    /// The reported `Schedulable` condition ([`Disk::schedulable`](crate::snapshot::Disk::schedulable)) is
    /// false.
    ReportedUnschedulable,
    /// Wrong type for the data engine.
    WrongType,
    /// The volume is too large for the filesystem.
    IncompatibleSize,
    /// Tags do not satisfy the disk selector.
    Tags,
    /// Fails the space check for this volume.
    Space(SpaceFailure),
    /// Holds a replica of the volume and a disk without one was available, or disk anti-affinity
    /// is hard.
    AntiAffinity,
    /// Rejected by the caller's disk filter of this position (its name index in
    /// [`ReplicaHooks::names`](super::hooks::ReplicaHooks::names)).
    Caller(u16),
}

impl DiskNote {
    /// The step of Longhorn's order that rules a disk out by this note, after every node step
    /// ([`NodeNote::step`]): the pre-filter, type and filesystem size, the disk selector, the
    /// caller's disk filters, the space check, disk anti-affinity.
    pub(crate) fn step(self) -> u8 {
        match self {
            DiskNote::Unavailable | DiskNote::NotReady | DiskNote::Pressure(_) | DiskNote::ReportedUnschedulable => 5,
            DiskNote::WrongType | DiskNote::IncompatibleSize => 6,
            DiskNote::Tags => 7,
            DiskNote::Caller(_) => 8,
            DiskNote::Space(_) => 9,
            DiskNote::AntiAffinity => 10,
        }
    }
}

/// What the explanation's words read: the call's context, the anti-affinity flags and the
/// caller's hook names.
pub(crate) struct Words<'a> {
    pub(crate) cx: &'a Ctx<'a>,
    /// The effective (node, zone, disk) soft anti-affinity flags.
    pub(crate) soft: (bool, bool, bool),
    /// Each host's domain at each of the caller's levels (see
    /// [`level_values`](super::hooks::level_values)).
    pub(crate) level_values: &'a [Option<Symbol>],
}

fn strength(soft: bool) -> &'static str {
    if soft {
        "soft"
    } else {
        "hard"
    }
}

impl Words<'_> {
    /// The caller's hook name of index `i`.
    fn name(&self, i: u16) -> &str {
        self.cx.hooks.and_then(|h| h.names.get(i as usize)).map_or("", String::as_str)
    }

    /// Node note `n` of host `id` as the explanation words it: the rule that excluded the node
    /// (the verdict's `filter`) and the reason.
    pub(crate) fn node(&self, id: HostId, n: NodeNote) -> (String, String) {
        let (rule, reason): (&str, String) = match n {
            NodeNote::NotReady => ("node condition", "node is not ready".into()),
            NodeNote::Cordoned => ("node condition", "node is cordoned".into()),
            NodeNote::SchedulingDisabled => ("node scheduling", "scheduling disabled or eviction requested".into()),
            NodeNote::V2Disabled => ("data engine", "v2 data engine disabled on the node".into()),
            NodeNote::HardAffinity => ("hard node affinity", "not the replica's hard node affinity".into()),
            NodeNote::Topology => ("topology requirement", "matches no topology term".into()),
            NodeNote::EngineImage => ("engine image", "no running instance manager or ready engine image".into()),
            NodeNote::NodeSelector => ("node selector", FailureReason::TagsNotFulfilled.as_str().into()),
            NodeNote::NodeUsed => (
                "node anti-affinity",
                format!("holds a replica of this volume (node anti-affinity, {})", strength(self.soft.0)),
            ),
            NodeNote::ZoneUsed => (
                "zone anti-affinity",
                format!("zone {} already used (zone anti-affinity, {})", self.cx.zone_name(id), strength(self.soft.1)),
            ),
            NodeNote::NoDisk => ("disk", "no disk of the node passed".into()),
            NodeNote::Level(l) => return self.level(id, l),
            NodeNote::Caller(i) => {
                let name = self.name(i);
                return (name.to_owned(), format!("rejected by {name}"));
            }
        };
        (rule.to_owned(), reason)
    }

    /// Level `l`'s exclusion of host `id`: `rack r2 already used (rack level, hard)`.
    fn level(&self, id: HostId, l: u16) -> (String, String) {
        let Some(hooks) = self.cx.hooks else { return (String::new(), String::new()) };
        let Some(level) = hooks.levels.get(l as usize) else { return (String::new(), String::new()) };
        let value = self
            .level_values
            .get(id.index() * hooks.levels.len() + l as usize)
            .copied()
            .flatten()
            .map_or("", |v| self.cx.cluster.resolve(v));
        let key = level.key();
        let reason = format!("{key} {value} already used ({key} level, {})", strength(!level.is_hard()));
        (self.name(hooks.level_index(l as usize)).to_owned(), reason)
    }

    /// Disk note `n` as the explanation words it: the rule, the reason its count is kept
    /// under, and the verdict's reason (the same, or with the space check's numbers).
    pub(crate) fn disk(&self, n: DiskNote) -> (String, String, String) {
        let (rule, reason): (&str, &'static str) = match n {
            DiskNote::Unavailable => ("disk scheduling", "scheduling disabled or eviction requested"),
            DiskNote::NotReady => ("disk condition", "disk is not ready"),
            DiskNote::Pressure(f) => return ("disk condition".into(), "disk is not schedulable".into(), f.to_string()),
            DiskNote::ReportedUnschedulable => ("disk condition", "disk reported not schedulable"),
            DiskNote::WrongType => ("disk type", "wrong disk type for the data engine"),
            DiskNote::IncompatibleSize => ("filesystem size", "volume too large for the filesystem"),
            DiskNote::Tags => ("disk selector", "tags not fulfilled"),
            DiskNote::Space(f) => return ("space".into(), "insufficient storage".into(), f.to_string()),
            DiskNote::AntiAffinity => {
                let reason = if self.soft.2 {
                    "holds a replica of this volume (disk anti-affinity, soft)"
                } else {
                    "holds a replica of this volume (disk anti-affinity, hard)"
                };
                ("disk anti-affinity", reason)
            }
            DiskNote::Caller(i) => {
                let name = self.name(i);
                let reason = format!("rejected by {name}");
                return (name.to_owned(), reason.clone(), reason);
            }
        };
        (rule.to_owned(), reason.to_owned(), reason.to_owned())
    }
}

/// A tier of the cascade.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Tier {
    /// Unused nodes in unused zones (new node, new zone).
    UnusedNodesInUnusedZones,
    /// Only-evicting nodes in only-evicting zones (zone hard).
    UnusedNodesInUnusedZonesAfterEviction,
    /// Unused nodes (new node, possibly used zone; zone soft).
    UnusedNodes,
    /// Only-evicting nodes (zone soft, node hard).
    UnusedNodesAfterEviction,
    /// Used nodes (both soft).
    UsedNodes,
}
