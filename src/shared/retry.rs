//! The retry helper: plan, commit, and re-plan only what conflicted, a bounded number of times.

use super::claim::{CommitMode, Committed, Plan, Validation};
use super::error::{RetryError, SharedError};
use super::store::SharedState;
use crate::explain::Explanation;
use crate::schedule::{Scheduler, Scratch};
use crate::Request;
use serde::{Deserialize, Serialize};

/// How [`SharedState::place`] commits and how often it tries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Plans made at most, the first included (default 3, the filter scheduler's default
    /// number of build attempts).
    pub max_attempts: u32,
    /// Partial (default) or gang commits.
    pub mode: CommitMode,
    /// Generation (default) or fit validation.
    pub validation: Validation,
    /// Expiry of the claims, on the caller's clock.
    pub expires_at: Option<u64>,
    /// Expiry of the claims, this long after their commit on the store's clock
    /// ([`Plan::expires_after`]).
    pub expires_after: Option<u64>,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 3,
            mode: CommitMode::Partial,
            validation: Validation::Generation,
            expires_at: None,
            expires_after: None,
        }
    }
}

impl RetryPolicy {
    /// Sets the number of attempts.
    pub fn max_attempts(mut self, n: u32) -> Self {
        self.max_attempts = n;
        self
    }

    /// Sets the commit mode.
    pub fn mode(mut self, mode: CommitMode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets the validation.
    pub fn validation(mut self, validation: Validation) -> Self {
        self.validation = validation;
        self
    }

    /// Sets the claims' expiry.
    pub fn expires_at(mut self, time: u64) -> Self {
        self.expires_at = Some(time);
        self
    }

    /// Sets the claims' expiry relative to their commit, on the store's clock.
    pub fn expires_after(mut self, ttl: u64) -> Self {
        self.expires_after = Some(ttl);
        self
    }
}

/// What [`SharedState::place`] achieved.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Placed {
    /// The claims that landed, one per placed instance, in instance order.
    pub committed: Vec<Committed>,
    /// Instances the scheduler found no host for (their explanation is below). With gang
    /// commits, every instance is counted here when any found none.
    pub unplaced: u32,
    /// Why the last plan left instances without a host, if it did.
    pub explanation: Option<Explanation>,
    /// Plans made.
    pub attempts: u32,
    /// Claims that conflicted on the way.
    pub conflicts: u32,
    /// Claims that were planned on a stale generation.
    pub stale_reads: u32,
}

impl Placed {
    /// Whether every instance has a committed claim.
    pub fn is_complete(&self) -> bool {
        self.unplaced == 0
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
                }
                let snapshot = state.snapshot().map_err(RetryError::Shared)?;
                let placement = scheduler
                    .schedule_with(scratch, &snapshot, &part)
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

/// The seed of attempt `attempt` (2 or more): the request's seed (or 0) mixed with an FNV-1a
/// hash of an instance id and the attempt number. Deterministic, and different per request.
fn retry_seed(seed: Option<u64>, id: &str, attempt: u32) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    seed.unwrap_or(0) ^ h ^ u64::from(attempt).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

#[cfg(test)]
pub(super) mod tests_support {
    /// [`retry_seed`](super::retry_seed) for the unit tests.
    pub(in crate::shared) fn seed(seed: Option<u64>, id: &str, attempt: u32) -> u64 {
        super::retry_seed(seed, id, attempt)
    }
}
