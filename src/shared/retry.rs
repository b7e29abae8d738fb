//! The retry helper: plan, commit, and re-plan only what conflicted, a bounded number of times.

use super::claim::{CommitMode, Committed, Plan, Validation};
use super::error::{RetryError, SharedError};
use super::state::SharedCluster;
use crate::explain::Explanation;
use crate::schedule::{Scheduler, Scratch};
use crate::Request;
use serde::{Deserialize, Serialize};

/// How [`SharedCluster::place`] commits and how often it tries.
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
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { max_attempts: 3, mode: CommitMode::Partial, validation: Validation::Generation, expires_at: None }
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
}

/// What [`SharedCluster::place`] achieved.
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

impl SharedCluster {
    /// Places `request` with retries: takes a snapshot, schedules, commits, and while claims
    /// conflict takes a fresh snapshot and re-plans only the instances whose claims did not
    /// land, up to `policy.max_attempts` plans (at least one). Instance `i` is called `ids[i]`.
    /// The first plan uses the request as given (its seed, else the scheduler's); a re-plan
    /// reseeds it from the request's seed, the first pending instance id and the attempt number,
    /// so a random top-k pick does not walk into the same conflict again and concurrent callers
    /// do not draw alike.
    ///
    /// A request that does not fit is not an error: the [`Placed`] outcome says how many
    /// instances found no host and why, and with partial commits the others are committed.
    ///
    /// # Errors
    ///
    /// [`RetryError::Exhausted`] when conflicts remain after the last attempt;
    /// [`RetryError::Shared`] for a malformed request or a wrong number of ids.
    pub fn place(
        &self,
        scheduler: &Scheduler,
        request: &Request,
        ids: &[String],
        policy: &RetryPolicy,
    ) -> Result<Placed, RetryError> {
        self.place_with(&mut Scratch::new(), scheduler, request, ids, policy)
    }

    /// As [`place`](SharedCluster::place), with caller-owned scheduling buffers.
    ///
    /// # Errors
    ///
    /// As [`place`](SharedCluster::place).
    pub fn place_with(
        &self,
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
        while out.attempts < policy.max_attempts.max(1) {
            out.attempts += 1;
            part.count = pending.len() as u32;
            if out.attempts > 1 {
                part.seed = Some(retry_seed(request.seed, &ids[pending[0]], out.attempts));
            }
            let snapshot = self.snapshot();
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
            for (s, &i) in placement.selections.iter().zip(&pending) {
                plan.push(s.host, ids[i].clone());
            }
            let outcome = self.commit(scheduler, &plan).map_err(RetryError::Shared)?;
            out.conflicts += outcome.conflicts.len() as u32;
            out.stale_reads += outcome.stale_reads;
            let placed = placement.selections.len();
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
                self.count_retries(1);
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
