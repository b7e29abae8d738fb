//! What a commit makes of a plan: claim ids, landed claims, conflicts and their reasons.

use crate::error::EventError;
use crate::id::HostId;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The id of a committed claim, issued by the [`SharedCluster`](super::SharedCluster) in commit
/// order and never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ClaimId(pub u64);

impl fmt::Display for ClaimId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "claim-{}", self.0)
    }
}

/// Why a claim did not land.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ConflictReason {
    /// The host changed since the snapshot the claim was planned on
    /// ([`Validation::Generation`](super::Validation::Generation)).
    Stale {
        /// The generation the planner saw.
        planned: u64,
        /// The host's generation at commit.
        current: u64,
    },
    /// The host is gone (or the id names another host now).
    HostGone,
    /// The scheduler's filters reject the host in its current state, with the plan's earlier
    /// claims on it counted.
    NoFit {
        /// The rejecting filter, if one did.
        filter: Option<String>,
        /// Its reason.
        reason: Option<String>,
    },
    /// Landing the claim would take a resource of the host below zero free.
    OverCommit {
        /// The resource kind.
        resource: String,
    },
    /// The claim's instance does not apply (an instance of that id is already on the host).
    Rejected(EventError),
    /// Another claim of the same all-or-nothing plan conflicted.
    GangAborted,
    /// The instance id already has a claim in the store, from another plan: an instance is
    /// placed once.
    AlreadyPlaced {
        /// The host holding it.
        host: String,
    },
}

impl fmt::Display for ConflictReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConflictReason::Stale { planned, current } => {
                write!(f, "stale: planned on generation {planned}, host is at {current}")
            }
            ConflictReason::HostGone => f.write_str("host gone"),
            ConflictReason::NoFit { filter, reason } => {
                let reason = reason.as_deref().unwrap_or("rejected");
                match filter {
                    Some(filter) => write!(f, "no longer fits: {reason} ({filter})"),
                    None => write!(f, "no longer fits: {reason}"),
                }
            }
            ConflictReason::OverCommit { resource } => write!(f, "would over-commit {resource}"),
            ConflictReason::Rejected(e) => write!(f, "rejected: {e}"),
            ConflictReason::GangAborted => f.write_str("another claim of the gang conflicted"),
            ConflictReason::AlreadyPlaced { host } => write!(f, "the instance is already placed on {host}"),
        }
    }
}

/// A claim that did not land.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Conflict {
    /// The claim's position in the plan.
    pub claim: usize,
    /// The host's name.
    pub host: String,
    /// Why.
    pub reason: ConflictReason,
}

/// A claim that landed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Committed {
    /// Its id, for [`release`](super::SharedCluster::release) and
    /// [`confirm`](super::SharedCluster::confirm).
    pub id: ClaimId,
    /// The claim's position in the plan.
    pub claim: usize,
    /// The host.
    pub host: HostId,
    /// The host's name.
    pub host_name: String,
    /// The instance id.
    pub instance: String,
}

impl Committed {
    /// A landed claim, for stores.
    pub fn new(id: ClaimId, claim: usize, host: HostId, host_name: String, instance: String) -> Committed {
        Committed { id, claim, host, host_name, instance }
    }
}

/// What a commit did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CommitOutcome {
    /// The log entry that records the landed claims, if any landed.
    pub seq: Option<u64>,
    /// The claims that landed, in plan order.
    pub committed: Vec<Committed>,
    /// The claims that did not, in plan order.
    pub conflicts: Vec<Conflict>,
    /// How many claims were planned on a generation older than their host's (landed or not).
    pub stale_reads: u32,
}

impl CommitOutcome {
    /// An outcome, for stores that judge with [`judge_plan`](super::judge_plan).
    pub fn new(seq: Option<u64>, committed: Vec<Committed>, conflicts: Vec<Conflict>, stale_reads: u32) -> Self {
        CommitOutcome { seq, committed, conflicts, stale_reads }
    }

    /// Whether every claim landed.
    pub fn is_complete(&self) -> bool {
        self.conflicts.is_empty()
    }
}
