//! `SharedCluster`: the current state, its writer, the open claims and the counters.

use super::claim::Plan;
use super::error::{LogError, SharedError};
use super::log::{apply_events, Checkpoint, EventLog, Follower, LogEntry};
use super::outcome::{ClaimId, CommitOutcome, Committed};
use super::rules::{judge_plan, Verdicts};
use super::view::{new_lineage, Snapshot};
use crate::schedule::Scheduler;
use crate::snapshot::{Cluster, ClusterEvent};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

/// An open claim: landed, holding its resources, not yet confirmed, released or expired.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OpenClaim {
    /// The claim's id.
    pub id: ClaimId,
    /// The host's name.
    pub host: String,
    /// The instance id.
    pub instance: String,
    /// When it expires, on the caller's clock.
    pub expires_at: Option<u64>,
    /// The log entry that landed it.
    pub seq: u64,
}

/// Counters since the shared cluster was made, read with [`SharedCluster::stats`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Stats {
    /// Commit calls.
    pub commits: u64,
    /// Claims that landed.
    pub committed: u64,
    /// Claims that did not land (gang members aborted by another's conflict included).
    pub conflicts: u64,
    /// Claims planned on a generation older than their host's, landed or not.
    pub stale_reads: u64,
    /// Re-plans made by [`SharedCluster::place`] after a conflict.
    pub retries: u64,
    /// Claims released (by the caller or by expiry).
    pub released: u64,
    /// Log entries written.
    pub entries: u64,
}

/// The counters behind [`Stats`], shared by threads; every store keeps one.
#[derive(Debug, Default)]
pub struct Counters {
    commits: AtomicU64,
    committed: AtomicU64,
    conflicts: AtomicU64,
    stale_reads: AtomicU64,
    retries: AtomicU64,
    released: AtomicU64,
    entries: AtomicU64,
}

fn bump(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

impl Counters {
    /// Counts one judged plan: claims that landed, conflicted and were planned on a stale
    /// generation.
    pub fn count_commit(&self, committed: u64, conflicts: u64, stale_reads: u64) {
        bump(&self.commits, 1);
        bump(&self.committed, committed);
        bump(&self.conflicts, conflicts);
        bump(&self.stale_reads, stale_reads);
    }

    /// Counts `n` re-plans.
    pub fn count_retries(&self, n: u64) {
        bump(&self.retries, n);
    }

    /// Counts `n` released claims.
    pub fn count_released(&self, n: u64) {
        bump(&self.released, n);
    }

    /// Counts one log entry written.
    pub fn count_entry(&self) {
        bump(&self.entries, 1);
    }

    /// The counts now.
    pub fn stats(&self) -> Stats {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Stats {
            commits: get(&self.commits),
            committed: get(&self.committed),
            conflicts: get(&self.conflicts),
            stale_reads: get(&self.stale_reads),
            retries: get(&self.retries),
            released: get(&self.released),
            entries: get(&self.entries),
        }
    }
}

/// What only the writer touches: the log and the open claims.
#[derive(Debug)]
struct Writer {
    log: EventLog,
    claims: BTreeMap<ClaimId, OpenClaim>,
    next_claim: u64,
}

/// The current cluster, shared by schedulers on many threads; see the [module docs](super).
///
/// Readers ([`snapshot`](SharedCluster::snapshot)) take a read lock for the time of one
/// reference-count increment. Writers ([`commit`](SharedCluster::commit),
/// [`publish`](SharedCluster::publish), [`release`](SharedCluster::release),
/// [`expire`](SharedCluster::expire)) are serialised by one mutex, validate against the current
/// state, append one log entry and swap the new state in; readers never wait for a validation.
#[derive(Debug)]
pub struct SharedCluster {
    lineage: u64,
    current: RwLock<Snapshot>,
    writer: Mutex<Writer>,
    counters: Counters,
    clock: Clock,
}

/// The clock that [`SharedCluster`] reads for relative expiries ([`Plan::expires_after`]) and
/// [`SharedState::expire_due`](super::SharedState::expire_due).
struct Clock(Box<dyn Fn() -> u64 + Send + Sync>);

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Clock")
    }
}

impl std::ops::Deref for Clock {
    type Target = dyn Fn() -> u64 + Send + Sync;
    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

/// Milliseconds since the Unix epoch on this machine's clock (0 if the clock is before it).
fn system_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl SharedCluster {
    /// Shared state starting from `cluster` at sequence number 0.
    pub fn new(cluster: Cluster) -> SharedCluster {
        SharedCluster::at(cluster, 0)
    }

    /// Shared state starting from `cluster` at sequence number `seq` (the entry a log's
    /// consumers have last seen).
    pub fn at(cluster: Cluster, seq: u64) -> SharedCluster {
        let lineage = new_lineage();
        let cluster = Arc::new(cluster);
        SharedCluster {
            lineage,
            current: RwLock::new(Snapshot { cluster: cluster.clone(), seq, lineage }),
            writer: Mutex::new(Writer {
                log: EventLog::new((*cluster).clone(), seq),
                claims: BTreeMap::new(),
                next_claim: 1,
            }),
            counters: Counters::default(),
            clock: Clock(Box::new(system_millis)),
        }
    }

    /// Replaces the clock read for relative expiries ([`Plan::expires_after`]) and
    /// [`SharedState::expire_due`](super::SharedState::expire_due); by default, milliseconds
    /// since the Unix epoch on this machine. Absolute expiries ([`Plan::expires_at`],
    /// [`expire`](SharedCluster::expire)) are in the same unit.
    pub fn with_clock(mut self, clock: impl Fn() -> u64 + Send + Sync + 'static) -> SharedCluster {
        self.clock = Clock(Box::new(clock));
        self
    }

    /// The clock's current reading.
    pub fn now(&self) -> u64 {
        (self.clock)()
    }

    /// Shared state rebuilt from a checkpoint and the entries after it. The result is a new
    /// lineage: plans made on snapshots of the old one do not commit here
    /// ([`SharedError::ForeignPlan`]); open claims are not part of the stream, so their
    /// instances stay as ordinary instances.
    ///
    /// # Errors
    ///
    /// The [`LogError`] of the checkpoint or of the first entry that does not follow or apply.
    pub fn restore(checkpoint: &Checkpoint, tail: &[LogEntry]) -> Result<SharedCluster, LogError> {
        let mut follower = Follower::from_checkpoint(checkpoint)?;
        let shared = SharedCluster::at(follower.cluster().clone(), checkpoint.seq);
        follower.catch_up(tail)?;
        {
            let mut w = shared.lock_writer();
            for e in tail {
                w.log.append(e.clone())?;
            }
        }
        let seq = follower.seq();
        shared.swap(Arc::new(follower.into_cluster()), seq);
        Ok(shared)
    }

    fn lock_writer(&self) -> MutexGuard<'_, Writer> {
        // Writers change nothing shared until the end of a call, so a poisoned lock still
        // guards a consistent state.
        self.writer.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn swap(&self, cluster: Arc<Cluster>, seq: u64) {
        let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
        *current = Snapshot { cluster, seq, lineage: self.lineage };
    }

    /// The current state. Computes in O(1): no host is copied.
    pub fn snapshot(&self) -> Snapshot {
        self.current.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// The sequence number of the last log entry.
    pub fn seq(&self) -> u64 {
        self.current.read().unwrap_or_else(PoisonError::into_inner).seq
    }

    /// The counters.
    pub fn stats(&self) -> Stats {
        self.counters.stats()
    }

    pub(super) fn count_retries(&self, n: u64) {
        self.counters.count_retries(n);
    }

    /// Writes one entry of `events` (already known to apply, giving `next`).
    fn write(&self, w: &mut Writer, events: Vec<ClusterEvent>, next: Cluster) -> u64 {
        let seq = w.log.head() + 1;
        // The sequence is the head's successor by construction.
        let appended = w.log.append(LogEntry { seq, events });
        debug_assert!(appended.is_ok());
        self.counters.count_entry();
        self.swap(Arc::new(next), seq);
        seq
    }

    /// Applies an event from outside (a host joins, an instance ends, metrics change) as one
    /// log entry, and returns its sequence number. Computes in O(hosts / 64).
    ///
    /// # Errors
    ///
    /// [`SharedError::Event`] when the event does not apply; nothing changes.
    pub fn publish(&self, event: ClusterEvent) -> Result<u64, SharedError> {
        self.publish_all(vec![event])
    }

    /// Applies several events as one log entry, all or none.
    ///
    /// # Errors
    ///
    /// As [`publish`](SharedCluster::publish).
    pub fn publish_all(&self, events: Vec<ClusterEvent>) -> Result<u64, SharedError> {
        let mut w = self.lock_writer();
        let next = apply_events(&self.snapshot().cluster, &events).map_err(SharedError::Event)?;
        Ok(self.write(&mut w, events, next))
    }

    /// Commits `plan`: each claim is checked against the current state, with the plan's
    /// earlier landed claims counted, and lands or conflicts; see the [module docs](super) for
    /// the rules. The landed claims become one log entry of `InstancePlaced` events.
    ///
    /// A claim lands only if (1) its host still exists under its name, (2) with
    /// [`Validation::Generation`](super::Validation::Generation), the host's generation equals the one planned on, (3)
    /// `scheduler`'s filters pass the host ([`Scheduler::check_host`]; pass the scheduler that
    /// planned), and (4) no resource the instance uses drops below zero free. With
    /// [`CommitMode::Gang`](super::CommitMode::Gang) one conflict rejects them all.
    ///
    /// Computes in O(claims × (filters + hosts / 64)), under the writer lock.
    ///
    /// # Errors
    ///
    /// [`SharedError::ForeignPlan`] for a plan made on another shared cluster's snapshot,
    /// [`SharedError::Schedule`] when the scheduler cannot judge the request. Conflicts are
    /// not errors: they are in the outcome.
    pub fn commit(&self, scheduler: &Scheduler, plan: &Plan) -> Result<CommitOutcome, SharedError> {
        if plan.lineage != self.lineage {
            return Err(SharedError::ForeignPlan);
        }
        let mut w = self.lock_writer();
        let base = self.snapshot().cluster;
        let verdicts = judge_plan(&base, scheduler, plan, &|_, _| None)?;
        let Verdicts { next, landed, conflicts, stale_reads, .. } = verdicts;
        self.counters.count_commit(landed.len() as u64, conflicts.len() as u64, stale_reads.into());
        if landed.is_empty() {
            return Ok(CommitOutcome { seq: None, committed: Vec::new(), conflicts, stale_reads });
        }
        let seq = w.log.head() + 1;
        let expires_at = plan.expires_at.or_else(|| plan.ttl.map(|ttl| self.now().saturating_add(ttl)));
        let mut committed = Vec::with_capacity(landed.len());
        for &(i, _) in &landed {
            let claim = &plan.claims[i];
            let id = ClaimId(w.next_claim);
            w.next_claim += 1;
            committed.push(Committed {
                id,
                claim: i,
                host: claim.host,
                host_name: claim.host_name.clone(),
                instance: claim.instance.id.clone(),
            });
            let open =
                OpenClaim { id, host: claim.host_name.clone(), instance: claim.instance.id.clone(), expires_at, seq };
            w.claims.insert(id, open);
        }
        let events = landed.into_iter().map(|(_, e)| e).collect();
        self.write(&mut w, events, next);
        Ok(CommitOutcome { seq: Some(seq), committed, conflicts, stale_reads })
    }

    /// The open claims, by id.
    pub fn open_claims(&self) -> Vec<OpenClaim> {
        self.lock_writer().claims.values().cloned().collect()
    }

    /// Confirms a claim: its instance stays as an ordinary instance and it no longer expires.
    ///
    /// # Errors
    ///
    /// [`SharedError::UnknownClaim`] when no open claim has this id.
    pub fn confirm(&self, id: ClaimId) -> Result<(), SharedError> {
        self.lock_writer().claims.remove(&id).map(|_| ()).ok_or(SharedError::UnknownClaim(id))
    }

    /// Releases a claim: its instance leaves its host, as one log entry. Returns that entry's
    /// sequence number, or `None` when an event already removed the instance or its host.
    ///
    /// # Errors
    ///
    /// [`SharedError::UnknownClaim`] when no open claim has this id.
    pub fn release(&self, id: ClaimId) -> Result<Option<u64>, SharedError> {
        let mut w = self.lock_writer();
        let open = w.claims.remove(&id).ok_or(SharedError::UnknownClaim(id))?;
        Ok(self.remove_instances(&mut w, &[open]))
    }

    /// Releases every open claim whose expiry is at or before `now`, as one log entry; returns
    /// their ids.
    pub fn expire(&self, now: u64) -> Vec<ClaimId> {
        let mut w = self.lock_writer();
        let due: Vec<ClaimId> =
            w.claims.values().filter(|c| c.expires_at.is_some_and(|t| t <= now)).map(|c| c.id).collect();
        let gone: Vec<OpenClaim> = due.iter().filter_map(|id| w.claims.remove(id)).collect();
        self.remove_instances(&mut w, &gone);
        due
    }

    /// Removes the instances of `claims` that are still there, as one entry.
    fn remove_instances(&self, w: &mut Writer, claims: &[OpenClaim]) -> Option<u64> {
        self.counters.count_released(claims.len() as u64);
        let base = self.snapshot().cluster;
        let mut working = (*base).clone();
        let mut events = Vec::new();
        for c in claims {
            let event = ClusterEvent::InstanceRemoved { host: c.host.clone(), instance: c.instance.clone() };
            // A claim whose host or instance an event removed already has nothing to release.
            if let Ok(next) = working.apply(&event) {
                working = next;
                events.push(event);
            }
        }
        (!events.is_empty()).then(|| self.write(w, events, working))
    }

    /// The entries after `seq`, for a follower at `seq`.
    ///
    /// # Errors
    ///
    /// [`LogError::Compacted`] when `seq` is before the log's base (start from
    /// [`checkpoint`](SharedCluster::checkpoint)), [`LogError::Ahead`] when after the head.
    pub fn log_since(&self, seq: u64) -> Result<Vec<LogEntry>, LogError> {
        self.lock_writer().log.since(seq).map(<[LogEntry]>::to_vec)
    }

    /// The log's base as a [`Checkpoint`]: with [`log_since`](SharedCluster::log_since) of its
    /// `seq`, everything a new follower needs. Computes in O(hosts + instances).
    pub fn checkpoint(&self) -> Checkpoint {
        self.lock_writer().log.checkpoint()
    }

    /// Compacts the log: the current state becomes its base and every entry is dropped.
    /// Computes in O(1) (the current state is already computed).
    pub fn compact(&self) -> u64 {
        let mut w = self.lock_writer();
        let now = self.snapshot();
        w.log.rebase(now.cluster, now.seq);
        now.seq
    }

    /// A copy of the retained log.
    pub fn log(&self) -> EventLog {
        self.lock_writer().log.clone()
    }
}
