//! The retry helper: plan, commit, and re-plan only what conflicted, a bounded number of times.

use super::claim::{CommitMode, Validation};
use super::outcome::Committed;
use crate::explain::Explanation;
use serde::{Deserialize, Serialize};

/// How [`SharedState::place`](super::SharedState::place) commits and how often it tries.
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
    /// ([`Plan::expires_after`](super::Plan::expires_after)).
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

/// What [`SharedState::place`](super::SharedState::place) achieved.
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

/// The seed of attempt `attempt` (2 or more): the request's seed (or 0) mixed with an FNV-1a
/// hash of an instance id and the attempt number. Deterministic, and different per request.
pub(super) fn retry_seed(seed: Option<u64>, id: &str, attempt: u32) -> u64 {
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
