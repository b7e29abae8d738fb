//! `Snapshot`: one scheduler's view of a shared state, and the lineage that ties plans to it.

use crate::snapshot::Cluster;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Process-wide source of lineage ids: each shared state (and each reload of one) gets its own.
static LINEAGES: AtomicU64 = AtomicU64::new(1);

/// A lineage id no other shared state in this process has: a store gives its snapshots one,
/// and takes a new one whenever its generations restart (a reload from a checkpoint), so
/// plans made before are refused ([`SharedError::ForeignPlan`](super::SharedError::ForeignPlan))
/// rather than compared.
pub fn new_lineage() -> u64 {
    LINEAGES.fetch_add(1, Ordering::Relaxed)
}

/// A scheduler's view of a shared state (a [`SharedCluster`](super::SharedCluster) or another
/// [`SharedState`](super::SharedState)): the cluster at sequence number
/// [`seq`](Snapshot::seq). Taking one costs a reference count; it shares every host with the
/// shared state and with every other snapshot, and it never changes. Dereferences to
/// [`Cluster`], so it is passed to [`Scheduler::schedule`](crate::schedule::Scheduler::schedule) as `&snapshot`.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub(super) cluster: Arc<Cluster>,
    pub(super) seq: u64,
    pub(super) lineage: u64,
}

impl Snapshot {
    /// The view of `cluster` at sequence number `seq` in lineage `lineage`
    /// ([`new_lineage`]): for stores. Computes in O(1).
    pub fn new(cluster: Arc<Cluster>, seq: u64, lineage: u64) -> Snapshot {
        Snapshot { cluster, seq, lineage }
    }

    /// The sequence number of the last log entry this snapshot includes.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The cluster, shared.
    pub fn cluster(&self) -> &Arc<Cluster> {
        &self.cluster
    }

    /// Which shared cluster the snapshot comes from: plans only commit there.
    pub fn lineage(&self) -> u64 {
        self.lineage
    }
}

impl Deref for Snapshot {
    type Target = Cluster;
    fn deref(&self) -> &Cluster {
        &self.cluster
    }
}
