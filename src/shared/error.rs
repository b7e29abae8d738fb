//! The typed errors of shared state: the log, commits, retries and routing.

use super::outcome::{ClaimId, Committed};
use crate::error::{BuildError, ErrorSource, EventError, ScheduleError};
use thiserror::Error;

/// A log entry or snapshot that cannot be taken in: the sequence is broken, or the content is.
/// Whatever fails, the log or follower it was offered to is left as it was.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum LogError {
    /// An entry skips sequence numbers: some entries were lost on the way.
    #[error("sequence gap: expected entry {expected}, got {got}")]
    Gap {
        /// The next sequence number the receiver can take.
        expected: u64,
        /// The sequence number offered.
        got: u64,
    },
    /// An entry at or below the receiver's sequence: delivered twice.
    #[error("duplicate entry {seq}: already at {applied}")]
    Duplicate {
        /// The sequence number offered.
        seq: u64,
        /// The last sequence number already taken in.
        applied: u64,
    },
    /// The entries after `seq` are asked for, but the log was compacted past it.
    #[error("entries after {seq} were compacted into the snapshot at {base}")]
    Compacted {
        /// The sequence number asked for.
        seq: u64,
        /// The sequence number of the log's snapshot.
        base: u64,
    },
    /// The entries after `seq` are asked for, but the log ends before it.
    #[error("sequence {seq} is beyond the log's head {head}")]
    Ahead {
        /// The sequence number asked for.
        seq: u64,
        /// The log's last sequence number.
        head: u64,
    },
    /// An entry's event does not apply to the state it follows.
    #[error("entry {seq} does not apply: {source}")]
    Event {
        /// The entry's sequence number.
        seq: u64,
        /// Why the event failed.
        #[source]
        source: EventError,
    },
    /// A snapshot does not build.
    #[error("invalid snapshot at {seq}: {source}")]
    Snapshot {
        /// The snapshot's sequence number.
        seq: u64,
        /// Why it does not build.
        #[source]
        source: BuildError,
    },
}

/// A call on a [`SharedCluster`](super::SharedCluster) that is wrong input: nothing changed.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum SharedError {
    /// The plan was made on a snapshot of another shared cluster (or of one restored from a
    /// log), whose generations mean nothing here.
    #[error("the plan was made on a snapshot of another shared cluster")]
    ForeignPlan,
    /// A published event does not apply to the current state.
    #[error("event rejected: {0}")]
    Event(#[source] EventError),
    /// No open claim has this id (never issued, released, expired or confirmed).
    #[error("no open claim {0}")]
    UnknownClaim(ClaimId),
    /// The scheduler cannot judge the plan's request (a malformed request, a filter that cannot
    /// prepare for it).
    #[error("the plan's request cannot be checked: {0}")]
    Schedule(#[source] ScheduleError),
    /// The store behind a [`SharedState`](super::SharedState) failed (a database that went
    /// away, a write it refused); the error says whether the call may have taken effect.
    #[error("store: {0}")]
    Store(#[source] StoreError),
    /// The update log cannot serve the call (entries compacted away, a sequence beyond the
    /// head, an entry that does not apply).
    #[error("log: {0}")]
    Log(#[source] LogError),
    /// The instance ids given do not match the request's count.
    #[error("{ids} instance ids for a request of {count}")]
    InstanceIds {
        /// Ids given.
        ids: usize,
        /// Instances requested.
        count: u32,
    },
}

/// A failure of the store behind a [`SharedState`](super::SharedState), with what it means
/// for the call that met it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{kind}: {source}")]
#[non_exhaustive]
pub struct StoreError {
    /// What kind of failure, and so what the caller may do.
    pub kind: StoreErrorKind,
    /// The store's own error (its driver's error type, or its words), which
    /// [`source`](std::error::Error::source) returns.
    #[source]
    pub source: ErrorSource,
}

impl StoreError {
    /// A store error of `kind`, caused by `error`: the store's own error type, or a `String` or
    /// `&str` in words.
    pub fn new(
        kind: StoreErrorKind,
        error: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> StoreError {
        StoreError { kind, source: ErrorSource::new(error) }
    }

    /// Whether the same call may simply be made again: the store was unreachable or the
    /// outcome was lost, and every write of a store is idempotent by claim and instance id.
    pub fn is_retryable(&self) -> bool {
        matches!(self.kind, StoreErrorKind::Unavailable | StoreErrorKind::OutcomeUnknown)
    }
}

/// The kinds of [`StoreError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StoreErrorKind {
    /// The store could not be reached, or the connection broke before anything was written:
    /// nothing changed.
    Unavailable,
    /// The connection broke while the write was being committed: it may or may not have
    /// landed. Make the same call again; the store recognises what landed.
    OutcomeUnknown,
    /// The store refused the caller (its database role may not do this).
    Denied,
    /// The store holds data this library cannot read (a log entry or checkpoint that does not
    /// parse, a schema newer than this library).
    Corrupt,
    /// Anything else the store reported.
    Other,
}

impl std::fmt::Display for StoreErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StoreErrorKind::Unavailable => "unavailable",
            StoreErrorKind::OutcomeUnknown => "outcome unknown",
            StoreErrorKind::Denied => "denied",
            StoreErrorKind::Corrupt => "corrupt data",
            StoreErrorKind::Other => "failed",
        })
    }
}

/// Why [`SharedState::place`](super::SharedState::place) gave up.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum RetryError {
    /// Every attempt met a conflict. With partial commits, the claims in `committed` did land
    /// and stay open: release them or retry the rest.
    #[error("gave up after {attempts} attempts: {remaining} of {requested} instances not committed")]
    Exhausted {
        /// Attempts made.
        attempts: u32,
        /// Instances requested.
        requested: u32,
        /// Instances still without a committed claim.
        remaining: u32,
        /// Claims that landed on the way (empty for gang commits).
        committed: Vec<Committed>,
    },
    /// The input is wrong; see [`SharedError`].
    #[error(transparent)]
    Shared(SharedError),
}

/// Why a [`Router`](super::Router) did not place a request.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum RouteError {
    /// The request's key names no partition (or the request has no key).
    #[error("no partition for key {key:?}")]
    NoPartition {
        /// The key read from the request.
        key: Option<String>,
    },
    /// The request's group already has members in another partition: a cluster-wide rule
    /// that a single partition could not check.
    #[error("group `{group}` lives in partition `{home}`, but the request routes to `{routed}`")]
    GroupElsewhere {
        /// The group.
        group: String,
        /// The partition holding its members.
        home: String,
        /// The partition the request's key names.
        routed: String,
    },
    /// An event names a host no partition owns.
    #[error("no partition owns host `{host}`")]
    UnownedHost {
        /// The host.
        host: String,
    },
    /// The partition could not place the request.
    #[error("in partition `{partition}`: {source}")]
    Partition {
        /// The partition.
        partition: String,
        /// What went wrong there.
        #[source]
        source: RetryError,
    },
}
