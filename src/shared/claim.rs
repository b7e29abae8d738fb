//! Plans, claims and what a commit makes of them.

use super::error::SharedError;
use super::view::Snapshot;
use crate::id::HostId;
use crate::request::Request;
use crate::schedule::Outcome;
use crate::snapshot::{Cluster, InstanceSpec};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

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
///
/// Two defaults, for two uses. [`RetryPolicy::default()`](super::RetryPolicy), what
/// [`SharedState::place`](super::SharedState::place) runs with, uses [`Fit`](Validation::Fit):
/// with many schedulers on one state, a claim on a host someone else just changed usually
/// still fits, and refusing it for the change alone makes schedulers fail each other's claims
/// (a quarter of them with four processes on PostgreSQL, against none under fit). A hand-made
/// [`Plan`] and this type's `Default` keep [`Generation`](Validation::Generation), the strict
/// compare-and-swap of the design: a caller who builds plans itself decides. Both are safe: no
/// claim lands unless the scheduler's filters and the over-commit rule pass on the current
/// state.
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
        placement: &Outcome,
        ids: &[String],
    ) -> Result<Plan, SharedError> {
        if ids.len() < placement.selections.len() {
            return Err(SharedError::InstanceIds { ids: ids.len(), count: request.count });
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

    /// Sets the validation (default [`Validation::Generation`]; [`SharedState::place`](super::SharedState::place)
    /// uses its policy's, [`Validation::Fit`] by default).
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
