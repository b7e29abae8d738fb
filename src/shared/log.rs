//! The update stream: sequenced entries, checkpoints, the retained log and followers.

use super::error::LogError;
use crate::snapshot::{Cluster, ClusterEvent, ClusterSpec};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// One transaction of the update stream: the events of one commit, release, expiry or
/// published change, under one sequence number. Followers apply an entry whole or not at all.
///
/// In JSON: `{"seq": 7, "events": [{"type": "instance_placed", "host": "h1", "instance": {…}}]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct LogEntry {
    /// The entry's sequence number: the previous entry's plus one.
    pub seq: u64,
    /// The events, applied in order.
    pub events: Vec<ClusterEvent>,
}

impl LogEntry {
    /// An entry.
    pub fn new(seq: u64, events: Vec<ClusterEvent>) -> LogEntry {
        LogEntry { seq, events }
    }
}

/// A whole cluster state at sequence number `seq`: what a new follower starts from before it
/// replays the entries after `seq`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Checkpoint {
    /// The sequence number of the last entry folded in.
    pub seq: u64,
    /// The state.
    pub cluster: ClusterSpec,
}

impl Checkpoint {
    /// The checkpoint of a cluster spec at `seq`.
    pub fn new(seq: u64, cluster: ClusterSpec) -> Checkpoint {
        Checkpoint { seq, cluster }
    }

    /// The checkpoint of `cluster` at `seq`. Computes in O(hosts + instances).
    pub fn of(cluster: &Cluster, seq: u64) -> Checkpoint {
        Checkpoint { seq, cluster: cluster.to_spec() }
    }
}

/// Applies `events` in order to `cluster`; on the first failure returns the error and leaves
/// `cluster` unchanged.
pub(super) fn apply_events(cluster: &Cluster, events: &[ClusterEvent]) -> Result<Cluster, crate::error::EventError> {
    let mut next = cluster.clone();
    for e in events {
        next = next.apply(e)?;
    }
    Ok(next)
}

/// Checks that `seq` is the one after `applied`.
fn expect_next(applied: u64, seq: u64) -> Result<(), LogError> {
    if seq <= applied {
        Err(LogError::Duplicate { seq, applied })
    } else if seq != applied + 1 {
        Err(LogError::Gap { expected: applied + 1, got: seq })
    } else {
        Ok(())
    }
}

/// The retained update stream: a base snapshot at sequence `base_seq()` and every entry after
/// it. [`compact`](EventLog::compact) folds a prefix of the entries into the base, so a new
/// follower has less to replay.
#[derive(Debug, Clone)]
pub struct EventLog {
    base: Arc<Cluster>,
    base_seq: u64,
    entries: Vec<LogEntry>,
}

impl EventLog {
    /// A log whose base is `cluster` at sequence `seq`, with no entries.
    pub fn new(cluster: Cluster, seq: u64) -> EventLog {
        EventLog { base: Arc::new(cluster), base_seq: seq, entries: Vec::new() }
    }

    /// The sequence number of the base snapshot.
    pub fn base_seq(&self) -> u64 {
        self.base_seq
    }

    /// The base snapshot.
    pub fn base(&self) -> &Cluster {
        &self.base
    }

    /// The last sequence number in the log (the base's when there are no entries).
    pub fn head(&self) -> u64 {
        self.entries.last().map_or(self.base_seq, |e| e.seq)
    }

    /// The retained entries, in order.
    pub fn entries(&self) -> &[LogEntry] {
        &self.entries
    }

    /// Appends `entry`, which must carry the sequence number after [`head`](EventLog::head).
    /// The log does not apply it: the writer applied it already, or
    /// [`replay`](EventLog::replay) will report it.
    ///
    /// # Errors
    ///
    /// [`LogError::Duplicate`] or [`LogError::Gap`]; the log is unchanged.
    pub fn append(&mut self, entry: LogEntry) -> Result<(), LogError> {
        expect_next(self.head(), entry.seq)?;
        self.entries.push(entry);
        Ok(())
    }

    /// The entries after `seq`: the tail a follower at `seq` needs. Computes in O(log entries).
    ///
    /// # Errors
    ///
    /// [`LogError::Compacted`] when `seq` is before the base (start from
    /// [`checkpoint`](EventLog::checkpoint) instead), [`LogError::Ahead`] when it is after the
    /// head.
    pub fn since(&self, seq: u64) -> Result<&[LogEntry], LogError> {
        if seq < self.base_seq {
            return Err(LogError::Compacted { seq, base: self.base_seq });
        }
        if seq > self.head() {
            return Err(LogError::Ahead { seq, head: self.head() });
        }
        // Entries are consecutive, so the position is arithmetic.
        Ok(&self.entries[(seq - self.base_seq) as usize..])
    }

    /// The state at the head: the base with every entry applied. Computes in O(entries ×
    /// hosts / 64).
    ///
    /// # Errors
    ///
    /// [`LogError::Event`] for the first entry that does not apply.
    pub fn replay(&self) -> Result<Cluster, LogError> {
        let mut follower = Follower::new((*self.base).clone(), self.base_seq);
        follower.catch_up(&self.entries)?;
        Ok(follower.into_cluster())
    }

    /// Folds the entries up to `seq` into the base and drops them. Compacting to a sequence
    /// at or before the base does nothing.
    ///
    /// # Errors
    ///
    /// [`LogError::Ahead`] when `seq` is after the head, [`LogError::Event`] when an entry does
    /// not apply; the log is unchanged.
    pub fn compact(&mut self, seq: u64) -> Result<(), LogError> {
        if seq <= self.base_seq {
            return Ok(());
        }
        let tail = self.since(seq)?.len();
        let fold = self.entries.len() - tail;
        let mut follower = Follower::new((*self.base).clone(), self.base_seq);
        follower.catch_up(&self.entries[..fold])?;
        self.base = Arc::new(follower.into_cluster());
        self.base_seq = seq;
        self.entries.drain(..fold);
        Ok(())
    }

    /// Replaces the base with `cluster` at `seq` (the state at `seq`, already computed by the
    /// writer) and drops the entries up to `seq`: compaction without replaying.
    pub(super) fn rebase(&mut self, cluster: Arc<Cluster>, seq: u64) {
        let fold = (seq.saturating_sub(self.base_seq) as usize).min(self.entries.len());
        self.entries.drain(..fold);
        self.base = cluster;
        self.base_seq = seq;
    }

    /// The base as a serialisable [`Checkpoint`]. Computes in O(hosts + instances).
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint::of(&self.base, self.base_seq)
    }
}

/// A cluster kept current from the update stream: a scheduler in another process (or a new
/// one) starts from a [`Checkpoint`] and applies entries in sequence order.
///
/// ```
/// use placewise::shared::{Checkpoint, Follower, LogEntry, LogError};
/// use placewise::{Cluster, ClusterEvent, HostSpec};
///
/// let cluster = Cluster::builder().host(HostSpec::new("h1")).build()?;
/// let mut follower = Follower::from_checkpoint(&Checkpoint::of(&cluster, 41))?;
/// let add = LogEntry::new(42, vec![ClusterEvent::HostAdded { host: HostSpec::new("h2") }]);
/// follower.apply(&add)?;
/// assert_eq!(follower.apply(&add), Err(LogError::Duplicate { seq: 42, applied: 42 }));
/// let late = LogEntry::new(44, vec![]);
/// assert_eq!(follower.apply(&late), Err(LogError::Gap { expected: 43, got: 44 }));
/// assert_eq!((follower.seq(), follower.cluster().len()), (42, 2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Follower {
    cluster: Cluster,
    seq: u64,
}

impl Follower {
    /// A follower at `seq` with state `cluster`.
    pub fn new(cluster: Cluster, seq: u64) -> Follower {
        Follower { cluster, seq }
    }

    /// A follower built from a checkpoint. Computes in O(hosts + instances).
    ///
    /// # Errors
    ///
    /// [`LogError::Snapshot`] when the checkpoint's cluster does not build.
    pub fn from_checkpoint(checkpoint: &Checkpoint) -> Result<Follower, LogError> {
        let cluster = Cluster::from_spec(&checkpoint.cluster)
            .map_err(|source| LogError::Snapshot { seq: checkpoint.seq, source })?;
        Ok(Follower::new(cluster, checkpoint.seq))
    }

    /// The sequence number of the last entry applied.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The current state.
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }

    /// The current state, taken out.
    pub fn into_cluster(self) -> Cluster {
        self.cluster
    }

    /// Applies the next entry, whole.
    ///
    /// # Errors
    ///
    /// [`LogError::Duplicate`] for an entry at or below [`seq`](Follower::seq) (an
    /// at-least-once bus delivers some twice: skip them), [`LogError::Gap`] for one beyond the
    /// next (fetch the missing tail), [`LogError::Event`] for one that does not apply. On error
    /// nothing changes.
    pub fn apply(&mut self, entry: &LogEntry) -> Result<(), LogError> {
        expect_next(self.seq, entry.seq)?;
        self.cluster =
            apply_events(&self.cluster, &entry.events).map_err(|source| LogError::Event { seq: entry.seq, source })?;
        self.seq = entry.seq;
        Ok(())
    }

    /// Applies `entries` in order, stopping at the first error (the entries before it stay
    /// applied, each whole).
    ///
    /// # Errors
    ///
    /// As [`apply`](Follower::apply).
    pub fn catch_up(&mut self, entries: &[LogEntry]) -> Result<(), LogError> {
        entries.iter().try_for_each(|e| self.apply(e))
    }

    /// The current state as a [`Checkpoint`].
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint::of(&self.cluster, self.seq)
    }
}
