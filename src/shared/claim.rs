//! Plans, claims and what a commit makes of them.

use super::view::Snapshot;
use crate::error::EventError;
use crate::id::HostId;
use crate::schedule::Placement;
use crate::snapshot::{Cluster, InstanceSpec};
use crate::Request;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

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

/// How a commit treats a plan whose claims do not all pass.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum CommitMode {
    /// Per host: the claims that pass land, the caller learns which conflicted (Omega's
    /// incremental transactions, Nomad's partial commit).
    #[default]
    Partial,
    /// All or nothing: one conflict rejects the whole plan (Omega's gang transactions, Nomad's
    /// `AllAtOnce`).
    Gang,
}

/// What makes a claim stale, and what happens to a stale claim.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Validation {
    /// Compare-and-swap on the host's generation: a claim lands only if its host has not changed
    /// since the snapshot it was planned on (and it passes the fit re-check). A stale claim never
    /// lands.
    #[default]
    Generation,
    /// A claim whose host changed is counted as a stale read and re-checked against the host's
    /// current state; it lands if it still fits (Nomad's plan applier). The swap is still
    /// conditional: on the generation the re-check read.
    Fit,
}

/// One instance planned on one host, with the host's generation as the planner saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Claim {
    /// The host, as numbered in the planner's snapshot.
    pub host: HostId,
    /// The host's name (checked at commit, so an id from another lineage cannot land).
    pub host_name: String,
    /// The host's generation in the planner's snapshot: the compare-and-swap token.
    pub generation: u64,
    /// The instance the claim materialises as.
    pub instance: InstanceSpec,
}

/// A request's planned claims, made on one [`Snapshot`], ready to
/// [`commit`](super::SharedCluster::commit). The plan holds its snapshot (a reference count)
/// to read each claimed host's name and generation, so the snapshot lives as long as the plan.
///
/// ```
/// use placewise::shared::{Plan, SharedCluster};
/// use placewise::{Cluster, HostSpec, Request, Scheduler};
///
/// let shared = SharedCluster::new(Cluster::builder().host(HostSpec::new("h1").memory_mb(4096.0)).build()?);
/// let snapshot = shared.snapshot();
/// let request = Request::new(1).memory_mb(1024.0);
/// let scheduler = Scheduler::standard();
/// let placement = scheduler.schedule(&snapshot, &request)?;
/// let plan = Plan::from_placement(&snapshot, &request, &placement, &["vm-1".to_string()])?;
/// assert_eq!(plan.claims()[0].host_name, "h1");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Plan {
    pub(super) request: Arc<Request>,
    pub(super) claims: Vec<Claim>,
    pub(super) lineage: u64,
    pub(super) seq: u64,
    pub(super) mode: CommitMode,
    pub(super) validation: Validation,
    pub(super) expires_at: Option<u64>,
    pub(super) ttl: Option<u64>,
    snapshot: Arc<Cluster>,
}

impl Plan {
    /// An empty plan for `request` on `snapshot`.
    pub fn new(snapshot: &Snapshot, request: &Request) -> Plan {
        Plan {
            request: Arc::new(request.clone()),
            claims: Vec::new(),
            lineage: snapshot.lineage(),
            seq: snapshot.seq(),
            mode: CommitMode::default(),
            validation: Validation::default(),
            expires_at: None,
            ttl: None,
            snapshot: snapshot.cluster().clone(),
        }
    }

    /// A plan with one claim per selection of `placement`, instance `i` called `ids[i]`.
    ///
    /// # Errors
    ///
    /// [`SharedError::InstanceIds`](super::SharedError::InstanceIds) when `ids` is shorter than
    /// the placement's selections.
    pub fn from_placement(
        snapshot: &Snapshot,
        request: &Request,
        placement: &Placement,
        ids: &[String],
    ) -> Result<Plan, super::SharedError> {
        if ids.len() < placement.selections.len() {
            return Err(super::SharedError::InstanceIds { ids: ids.len(), count: request.count });
        }
        let mut plan = Plan::new(snapshot, request);
        for (s, id) in placement.selections.iter().zip(ids) {
            plan.push(s.host, id.clone());
        }
        Ok(plan)
    }

    /// Adds a claim for one instance called `instance_id` on `host`, reading the host's name
    /// and generation from the plan's snapshot. The instance uses the request's resources and
    /// joins its group. A host the snapshot does not have gets generation `u64::MAX` and an
    /// empty name, so the claim conflicts at commit.
    pub fn push(&mut self, host: HostId, instance_id: impl Into<String>) -> &mut Plan {
        let (host_name, generation) = match self.snapshot.host(host) {
            Some(h) => (h.name.to_string(), h.generation),
            None => (String::new(), u64::MAX),
        };
        let mut instance = InstanceSpec::new(instance_id);
        for (kind, &amount) in &self.request.resources {
            if amount != 0.0 {
                instance = instance.resource(kind.clone(), amount);
            }
        }
        if let Some(g) = &self.request.group {
            instance = instance.group(g.clone());
        }
        self.claims.push(Claim { host, host_name, generation, instance });
        self
    }

    /// Sets the commit mode (default [`CommitMode::Partial`]).
    pub fn mode(mut self, mode: CommitMode) -> Plan {
        self.mode = mode;
        self
    }

    /// Sets the validation (default [`Validation::Generation`]).
    pub fn validation(mut self, validation: Validation) -> Plan {
        self.validation = validation;
        self
    }

    /// Makes the claims expire at `time` unless [confirmed](super::SharedCluster::confirm)
    /// first; time is the caller's clock, in whatever unit it passes to
    /// [`expire`](super::SharedCluster::expire).
    pub fn expires_at(mut self, time: u64) -> Plan {
        self.expires_at = Some(time);
        self
    }

    /// Makes the claims expire `ttl` after the commit that lands them, on the store's clock
    /// (milliseconds for [`SharedCluster`](super::SharedCluster)'s default clock and for a
    /// database store, whose clock is the database's). An absolute
    /// [`expires_at`](Plan::expires_at) wins over it.
    pub fn expires_after(mut self, ttl: u64) -> Plan {
        self.ttl = Some(ttl);
        self
    }

    /// When the claims expire, if they were given an absolute time.
    pub fn expiry(&self) -> Option<u64> {
        self.expires_at
    }

    /// How long after their commit the claims expire, if they were given a relative time.
    pub fn ttl(&self) -> Option<u64> {
        self.ttl
    }

    /// The lineage of the snapshot the plan was made on ([`Snapshot::lineage`]).
    pub fn lineage(&self) -> u64 {
        self.lineage
    }

    /// The plan's claims with their instance ids, for stores that key claims by instance.
    pub fn instance_ids(&self) -> impl Iterator<Item = &str> + '_ {
        self.claims.iter().map(|c| c.instance.id.as_str())
    }

    /// The commit mode.
    pub fn commit_mode(&self) -> CommitMode {
        self.mode
    }

    /// The validation.
    pub fn validation_rule(&self) -> Validation {
        self.validation
    }

    /// The claims, in order.
    pub fn claims(&self) -> &[Claim] {
        &self.claims
    }

    /// The request the claims are for.
    pub fn request(&self) -> &Request {
        &self.request
    }

    /// The sequence number of the snapshot the plan was made on.
    pub fn seq(&self) -> u64 {
        self.seq
    }
}

/// Why a claim did not land.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ConflictReason {
    /// The host changed since the snapshot the claim was planned on
    /// ([`Validation::Generation`]).
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
