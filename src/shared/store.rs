//! `SharedState`: the contract every store of shared scheduling state keeps, in process
//! ([`SharedCluster`]) or in a database (the `placewise-postgres` crate).

use super::claim::CommitMode;
use super::claim::Plan;
use super::error::{RetryError, SharedError};
use super::log::{Checkpoint, LogEntry};
use super::outcome::{ClaimId, CommitOutcome};
use super::retry::{retry_seed, Placed, RetryPolicy};
use super::state::SharedCluster;
use super::view::Snapshot;
use crate::request::Request;
use crate::schedule::{Scheduler, Scratch};
use crate::snapshot::ClusterEvent;

/// A shared cluster state that many schedulers plan against and commit to: snapshots, commits
/// judged by the one copy of the [commit rules](super#commit-rules)
/// ([`judge_plan`](super::judge_plan)), claims that are confirmed, released or expire, events
/// from inventory writers, and the sequenced update log.
///
/// [`SharedCluster`] keeps it in one process; `placewise_postgres::PgStore` keeps it in
/// PostgreSQL for many processes. Code written against this trait moves from one to the other
/// by changing the line that makes the store. The trait is object-safe: `&dyn SharedState`
/// works.
///
/// ```
/// use placewise::shared::{RetryPolicy, SharedCluster, SharedState};
/// use placewise::{Cluster, HostSpec, Request, Scheduler};
///
/// fn burst(state: &dyn SharedState, scheduler: &Scheduler) -> Result<usize, Box<dyn std::error::Error>> {
///     let ids: Vec<String> = (0..4).map(|i| format!("vm-{i}")).collect();
///     let placed = state.place(scheduler, &Request::new(4).memory_mb(1024.0), &ids, &RetryPolicy::default())?;
///     Ok(placed.committed.len())
/// }
///
/// let cluster = Cluster::builder().host(HostSpec::new("h1").vcpus(8.0).memory_mb(4096.0)).build()?;
/// let state = SharedCluster::new(cluster); // or a database store
/// assert_eq!(burst(&state, &Scheduler::standard())?, 4);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait SharedState {
    /// The current state as this process knows it: for a database store, after applying the
    /// log entries it has been told of.
    ///
    /// # Errors
    ///
    /// [`SharedError::Store`] or [`SharedError::Log`] when the state cannot be brought up to
    /// date.
    fn snapshot(&self) -> Result<Snapshot, SharedError>;

    /// Commits `plan` (made on one of this store's snapshots) under the commit rules, as one
    /// transaction and one log entry. Committing the same plan again after an error of kind
    /// [`OutcomeUnknown`](super::StoreErrorKind::OutcomeUnknown) is safe: what landed the
    /// first time is reported as committed and never placed twice.
    ///
    /// # Errors
    ///
    /// [`SharedError::ForeignPlan`] for a plan from another lineage,
    /// [`SharedError::Schedule`] when the scheduler cannot judge the request,
    /// [`SharedError::Store`] when the store fails. Conflicts are outcomes, not errors.
    fn commit(&self, scheduler: &Scheduler, plan: &Plan) -> Result<CommitOutcome, SharedError>;

    /// Commits several plans, in order, each judged with the earlier ones landed; a store may
    /// write them as one transaction and one log entry (a database store does, trading a
    /// little latency for far fewer synchronous writes). The default commits them one by one.
    ///
    /// # Errors
    ///
    /// As [`commit`](SharedState::commit); on an error none of the plans after the failing one
    /// was committed, and a transactional store committed none of them.
    fn commit_all(&self, scheduler: &Scheduler, plans: &[Plan]) -> Result<Vec<CommitOutcome>, SharedError> {
        plans.iter().map(|p| self.commit(scheduler, p)).collect()
    }

    /// Confirms a claim: its instance became real; it stays and no longer expires.
    ///
    /// # Errors
    ///
    /// [`SharedError::UnknownClaim`] when no open claim has this id, [`SharedError::Store`].
    fn confirm(&self, id: ClaimId) -> Result<(), SharedError>;

    /// Releases an open claim: its instance leaves its host, as one log entry (its sequence
    /// number, or `None` when an event already removed the instance).
    ///
    /// # Errors
    ///
    /// As [`confirm`](SharedState::confirm).
    fn release(&self, id: ClaimId) -> Result<Option<u64>, SharedError>;

    /// Releases every open claim whose expiry has passed on the store's clock (the
    /// database's, for a database store), as one log entry; returns their ids. Any process may
    /// call it.
    ///
    /// # Errors
    ///
    /// [`SharedError::Store`].
    fn expire_due(&self) -> Result<Vec<ClaimId>, SharedError>;

    /// Applies events from an inventory writer (hosts join, leave or change, instances end,
    /// metrics move) as one log entry, all or none; returns its sequence number.
    ///
    /// # Errors
    ///
    /// [`SharedError::Event`] when an event does not apply (nothing changes),
    /// [`SharedError::Store`].
    fn publish_all(&self, events: Vec<ClusterEvent>) -> Result<u64, SharedError>;

    /// Applies one event; see [`publish_all`](SharedState::publish_all).
    ///
    /// # Errors
    ///
    /// As [`publish_all`](SharedState::publish_all).
    fn publish(&self, event: ClusterEvent) -> Result<u64, SharedError> {
        self.publish_all(vec![event])
    }

    /// The log entries after `seq`.
    ///
    /// # Errors
    ///
    /// [`SharedError::Log`] with [`LogError::Compacted`](super::LogError::Compacted) when
    /// the store no longer has them (start from [`checkpoint`](SharedState::checkpoint)), or
    /// [`LogError::Ahead`](super::LogError::Ahead); [`SharedError::Store`].
    fn log_since(&self, seq: u64) -> Result<Vec<LogEntry>, SharedError>;

    /// The newest checkpoint the store keeps: with [`log_since`](SharedState::log_since) of
    /// its `seq`, everything a new follower needs.
    ///
    /// # Errors
    ///
    /// [`SharedError::Store`].
    fn checkpoint(&self) -> Result<Checkpoint, SharedError>;

    /// Counts `n` re-plans made by [`place`](SharedState::place) (for the store's
    /// statistics). The default counts nothing.
    fn note_retries(&self, n: u64) {
        let _ = n;
    }

    /// Places `request` with retries: takes a snapshot, schedules, commits, and while claims
    /// conflict takes a fresh snapshot and re-plans only the instances whose claims did not
    /// land, up to `policy.max_attempts` plans (at least one). Instance `i` is called `ids[i]`.
    /// Every plan picks among the best [`policy.top_k`](RetryPolicy::top_k) hosts at least.
    /// The first plan uses the request's seed, or without one a seed drawn from the first
    /// instance id; a re-plan reseeds it from the request's seed, the first pending instance id
    /// and the attempt number, so a random top-k pick does not walk into the same conflict
    /// again and concurrent callers do not draw alike. A commit that met a retryable store
    /// error is made again unchanged (it is idempotent), and counts as an attempt.
    ///
    /// With [`RetryPolicy::default()`] this is the safe choice for many schedulers on one
    /// state: fit validation, a random pick among the best few hosts, and enough attempts
    /// (see [`RetryPolicy`]).
    ///
    /// A request that does not fit is not an error: the [`Placed`] outcome says how many
    /// instances found no host and why, and with partial commits the others are committed.
    ///
    /// # Errors
    ///
    /// [`RetryError::Exhausted`] when conflicts remain after the last attempt;
    /// [`RetryError::Shared`] for a malformed request, a wrong number of ids, or a store error
    /// that outlasted the attempts.
    fn place(
        &self,
        scheduler: &Scheduler,
        request: &Request,
        ids: &[String],
        policy: &RetryPolicy,
    ) -> Result<Placed, RetryError> {
        place_on(self, &mut Scratch::new(), scheduler, request, ids, policy)
    }

    /// As [`place`](SharedState::place), with caller-owned scheduling buffers.
    ///
    /// # Errors
    ///
    /// As [`place`](SharedState::place).
    fn place_with(
        &self,
        scratch: &mut Scratch,
        scheduler: &Scheduler,
        request: &Request,
        ids: &[String],
        policy: &RetryPolicy,
    ) -> Result<Placed, RetryError> {
        place_on(self, scratch, scheduler, request, ids, policy)
    }
}

impl SharedState for SharedCluster {
    fn snapshot(&self) -> Result<Snapshot, SharedError> {
        Ok(SharedCluster::snapshot(self))
    }

    fn commit(&self, scheduler: &Scheduler, plan: &Plan) -> Result<CommitOutcome, SharedError> {
        SharedCluster::commit(self, scheduler, plan)
    }

    fn confirm(&self, id: ClaimId) -> Result<(), SharedError> {
        SharedCluster::confirm(self, id)
    }

    fn release(&self, id: ClaimId) -> Result<Option<u64>, SharedError> {
        SharedCluster::release(self, id)
    }

    fn expire_due(&self) -> Result<Vec<ClaimId>, SharedError> {
        Ok(self.expire(self.now()))
    }

    fn publish_all(&self, events: Vec<ClusterEvent>) -> Result<u64, SharedError> {
        SharedCluster::publish_all(self, events)
    }

    fn log_since(&self, seq: u64) -> Result<Vec<LogEntry>, SharedError> {
        SharedCluster::log_since(self, seq).map_err(SharedError::Log)
    }

    fn checkpoint(&self) -> Result<Checkpoint, SharedError> {
        Ok(SharedCluster::checkpoint(self))
    }

    fn note_retries(&self, n: u64) {
        self.count_retries(n);
    }
}

impl SharedCluster {
    /// [`SharedState::place`] on this shared cluster, callable without importing the trait.
    ///
    /// # Errors
    ///
    /// As [`SharedState::place`].
    pub fn place(
        &self,
        scheduler: &Scheduler,
        request: &Request,
        ids: &[String],
        policy: &RetryPolicy,
    ) -> Result<Placed, RetryError> {
        place_on(self, &mut Scratch::new(), scheduler, request, ids, policy)
    }

    /// [`SharedState::place_with`] on this shared cluster.
    ///
    /// # Errors
    ///
    /// As [`SharedState::place`].
    pub fn place_with(
        &self,
        scratch: &mut Scratch,
        scheduler: &Scheduler,
        request: &Request,
        ids: &[String],
        policy: &RetryPolicy,
    ) -> Result<Placed, RetryError> {
        place_on(self, scratch, scheduler, request, ids, policy)
    }
}

/// The loop behind [`SharedState::place_with`]: plan on a fresh snapshot, commit, re-plan the
/// instances whose claims conflicted. A plan whose commit met a retryable store error
/// ([`StoreError::is_retryable`](super::StoreError::is_retryable)) is committed again as it
/// is (the store recognises what landed), and a plan refused as foreign (the store reloaded)
/// is made again; each of those counts as an attempt.
pub(super) fn place_on<S: SharedState + ?Sized>(
    state: &S,
    scratch: &mut Scratch,
    scheduler: &Scheduler,
    request: &Request,
    ids: &[String],
    policy: &RetryPolicy,
) -> Result<Placed, RetryError> {
    if ids.len() != request.count as usize {
        return Err(RetryError::Shared(SharedError::InstanceIds { ids: ids.len(), count: request.count }));
    }
    let mut pending: Vec<usize> = (0..ids.len()).collect();
    let mut out =
        Placed { committed: Vec::new(), unplaced: 0, explanation: None, attempts: 0, conflicts: 0, stale_reads: 0 };
    let mut part = request.clone();
    // A plan whose commit must be made again unchanged, with its placement's completeness.
    let mut again: Option<(Plan, bool, usize)> = None;
    while out.attempts < policy.max_attempts.max(1) {
        out.attempts += 1;
        let (plan, complete, placed) = match again.take() {
            Some(p) => p,
            None => {
                part.count = pending.len() as u32;
                if out.attempts > 1 {
                    part.seed = Some(retry_seed(request.seed, &ids[pending[0]], out.attempts));
                } else if let (None, Some(first)) = (request.seed, ids.first()) {
                    part.seed = Some(retry_seed(None, first, 1));
                }
                let snapshot = state.snapshot().map_err(RetryError::Shared)?;
                let placement = scheduler
                    .schedule_spread_with(scratch, &snapshot, &part, policy.top_k as usize)
                    .map_err(|e| RetryError::Shared(SharedError::Schedule(e)))?;
                let complete = placement.is_complete();
                if !complete {
                    out.explanation = Some(placement.explanation.clone());
                    if policy.mode == CommitMode::Gang {
                        out.unplaced = request.count;
                        return Ok(out);
                    }
                }
                let mut plan = Plan::new(&snapshot, &part).mode(policy.mode).validation(policy.validation);
                if let Some(t) = policy.expires_at {
                    plan = plan.expires_at(t);
                }
                if let Some(ttl) = policy.expires_after {
                    plan = plan.expires_after(ttl);
                }
                for (s, &i) in placement.selections.iter().zip(&pending) {
                    plan.push(s.host, ids[i].clone());
                }
                (plan, complete, placement.selections.len())
            }
        };
        let outcome = match state.commit(scheduler, &plan) {
            Ok(outcome) => outcome,
            Err(SharedError::Store(e)) if e.is_retryable() && out.attempts < policy.max_attempts => {
                again = Some((plan, complete, placed));
                state.note_retries(1);
                continue;
            }
            Err(SharedError::ForeignPlan) if out.attempts < policy.max_attempts => {
                state.note_retries(1);
                continue;
            }
            Err(e) => return Err(RetryError::Shared(e)),
        };
        out.conflicts += outcome.conflicts.len() as u32;
        out.stale_reads += outcome.stale_reads;
        let mut retry: Vec<usize> = outcome.conflicts.iter().map(|c| pending[c.claim]).collect();
        for mut c in outcome.committed {
            c.claim = pending[c.claim];
            out.committed.push(c);
        }
        if !complete {
            // The instances with no host are not retried: the snapshot had no room for them.
            out.unplaced = (pending.len() - placed) as u32;
        }
        if retry.is_empty() {
            out.committed.sort_by_key(|c| c.claim);
            return Ok(out);
        }
        if !complete {
            retry.extend_from_slice(&pending[placed..]);
            out.unplaced = 0;
        }
        pending = retry;
        if out.attempts < policy.max_attempts {
            state.note_retries(1);
        }
    }
    out.committed.sort_by_key(|c| c.claim);
    Err(RetryError::Exhausted {
        attempts: out.attempts,
        requested: request.count,
        remaining: pending.len() as u32,
        committed: out.committed,
    })
}
