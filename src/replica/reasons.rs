//! Failure reasons: Longhorn's keys, and placewise's structured notes per node and disk.

use super::space::SpaceFailure;
use crate::id::{DiskId, HostId};
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
#[non_exhaustive]
pub enum NodeNote {
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
    /// Excluded by node or zone anti-affinity (no tier admitted it).
    AntiAffinity,
    /// Admitted by a tier but no disk of it passed.
    NoDisk,
    /// Rejected by one of the caller's node filters, or excluded by one of the caller's hard
    /// anti-affinity levels: the index of its name in [`ReplicaExplanation::callers`].
    Caller(u16),
}

/// Why a disk was not chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiskNote {
    /// Scheduling disallowed or eviction requested.
    Unavailable,
    /// `Ready` false.
    NotReady,
    /// The `Schedulable` condition (size-0 space check) is false.
    Pressure(SpaceFailure),
    /// The reported `Schedulable` condition ([`Disk::schedulable`](crate::Disk::schedulable)) is
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
    /// Rejected by one of the caller's disk filters: the index of its name in
    /// [`ReplicaExplanation::callers`].
    Caller(u16),
}

/// The structured explanation of one scheduling call.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ReplicaExplanation {
    /// Nodes that were dropped, in host id order within each stage.
    pub nodes: Vec<(HostId, NodeNote)>,
    /// Disks that were dropped, in the order evaluated; each disk at most once, with the first
    /// reason found (a node can be in several tiers).
    pub disks: Vec<(HostId, DiskId, DiskNote)>,
    /// The tier that produced the result (0 = new node in a new zone …), if any.
    pub tier: Option<Tier>,
    /// The names of the caller's hooks, which [`NodeNote::Caller`] and [`DiskNote::Caller`]
    /// index: node filters, disk filters, levels (`<key> anti-affinity`), node weighers, disk
    /// weighers, each in the order added. Empty without hooks.
    pub callers: Vec<String>,
}

impl ReplicaExplanation {
    /// The caller's rejections by name: `(host, disk, name)` for every node (`disk` `None`) and
    /// disk note that points at a caller hook, in note order.
    pub fn caller_rejections(&self) -> Vec<(HostId, Option<DiskId>, &str)> {
        let name = |i: u16| self.callers.get(i as usize).map_or("", String::as_str);
        let nodes = self.nodes.iter().filter_map(|&(h, n)| match n {
            NodeNote::Caller(i) => Some((h, None, name(i))),
            _ => None,
        });
        let disks = self.disks.iter().filter_map(|&(h, d, n)| match n {
            DiskNote::Caller(i) => Some((h, Some(d), name(i))),
            _ => None,
        });
        nodes.chain(disks).collect()
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
