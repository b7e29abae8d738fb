//! The retry helper: plan, commit, and re-plan only what conflicted, a bounded number of times.

use super::claim::{CommitMode, Validation};
use super::outcome::Committed;
use crate::explain::Explanation;
use serde::{Deserialize, Serialize};

/// How [`SharedState::place`](super::SharedState::place) commits and how often it tries.
///
/// The defaults are chosen for many schedulers planning on one shared state (several threads
/// on a [`SharedCluster`](super::SharedCluster), several processes on a database store), and
/// cost nothing when there is only one:
///
/// | field | default | why |
/// |---|---|---|
/// | [`validation`](RetryPolicy::validation) | [`Validation::Fit`] | a claim on a host another scheduler changed since the snapshot lands if it still fits, instead of being refused for the change alone: concurrent schedulers stop failing each other's claims on hosts with room to spare (measured with four processes on PostgreSQL: a quarter of the claims conflicting under [`Validation::Generation`], none under fit). The commit is just as safe: the scheduler's filters and the over-commit rule are judged on the current state, under the store's one writer |
/// | [`top_k`](RetryPolicy::top_k) | [`DEFAULT_TOP_K`] (4) | a random pick among the best few hosts, for schedulers configured for the single best one: two schedulers with the same snapshot otherwise pick the same host, and the later one re-plans whenever that host filled up |
/// | [`max_attempts`](RetryPolicy::max_attempts) | [`DEFAULT_MAX_ATTEMPTS`] (10) | with fit validation a claim conflicts only when its host no longer takes it, and a re-plan on a fresh snapshot avoids that host; an attempt is lost only to a host another scheduler filled meanwhile, to a first snapshot a database store had not yet brought up to date, or to a store error that is retried. A re-plan costs one snapshot and the scheduling of the conflicting instances only |
/// | [`mode`](RetryPolicy::mode) | [`CommitMode::Partial`] | what lands stays; only the rest is re-planned |
///
/// For the strict rule of the design ("a stale claim never lands") set
/// [`Validation::Generation`]; for the scheduler's own pick, `top_k(1)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Plans made at most, the first included (default [`DEFAULT_MAX_ATTEMPTS`]).
    pub max_attempts: u32,
    /// Partial (default) or gang commits.
    pub mode: CommitMode,
    /// Fit (default) or generation validation; see the [table](RetryPolicy).
    pub validation: Validation,
    /// Every plan picks each instance's host at random among the best `top_k` candidates when
    /// the scheduler's own [`host_subset_size`](crate::schedule::SchedulerBuilder::host_subset_size) is
    /// smaller (default [`DEFAULT_TOP_K`]; 1 leaves the scheduler's pick as it is). The draw is
    /// seeded, so a call is reproducible: by the request's seed, else by its first instance id
    /// (so concurrent callers placing different instances draw differently). A pick among more
    /// than one host costs a full pass over the candidates per instance, where a best-host pick
    /// of a host-local scheduler updates only the picked host.
    pub top_k: u32,
    /// Expiry of the claims, on the caller's clock.
    pub expires_at: Option<u64>,
    /// Expiry of the claims, this long after their commit on the store's clock
    /// ([`Plan::expires_after`](super::Plan::expires_after)).
    pub expires_after: Option<u64>,
}

/// [`RetryPolicy::max_attempts`]' default.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 10;

/// [`RetryPolicy::top_k`]'s default.
pub const DEFAULT_TOP_K: u32 = 4;

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            mode: CommitMode::Partial,
            validation: Validation::Fit,
            top_k: DEFAULT_TOP_K,
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

    /// Sets the random pick among the best `k` hosts (1: the scheduler's own pick).
    pub fn top_k(mut self, k: u32) -> Self {
        self.top_k = k;
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
