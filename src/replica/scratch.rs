//! [`ReplicaScratch`]: the volume-independent preparation and the buffers, kept across calls.

use super::hooks::Hooks;
use super::prep::{Base, Prep};
use super::settings::ReplicaSettings;
use super::Ctx;
use crate::snapshot::Cluster;
use std::fmt;
use std::sync::Arc;

/// Reusable state for [`ReplicaScheduler::schedule_volume_with`](super::ReplicaScheduler::schedule_volume_with):
/// the volume-independent part of the preparation (each host's state and attributes, each
/// disk's pre-filter, space limits and summary, the caller's node filter verdicts) and the
/// per-call buffers.
///
/// The preparation is kept with the snapshot it was made from and is rebuilt, before it is read,
/// whenever a call passes a snapshot that is not that very one: another generation (any applied
/// event), another cluster (even at the same generation), different settings, or a scheduler
/// with other hooks. A stale scratch never gives a different answer from a fresh one; it only
/// costs a rebuild. It holds a clone of the snapshot it was made from (cheap: shared chunks),
/// which keeps that snapshot's memory alive until the next rebuild or until it is dropped.
///
/// One scratch serves one thread; it is not tied to a scheduler.
#[derive(Default)]
pub struct ReplicaScratch {
    stamp: Option<Stamp>,
    base: Base,
    prep: Prep,
    rebuilds: u64,
    /// Used for one call and dropped: keep nothing (no snapshot clone, no base).
    one_off: bool,
}

impl fmt::Debug for ReplicaScratch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplicaScratch")
            .field("generation", &self.stamp.as_ref().map(|s| s.cluster.generation()))
            .field("hosts", &self.base.hosts.len())
            .field("disks", &self.base.disks.len())
            .field("rebuilds", &self.rebuilds)
            .finish_non_exhaustive()
    }
}

/// What the kept preparation was made from.
struct Stamp {
    /// A clone of the snapshot: its chunks stay allocated, so their addresses identify it.
    cluster: Cluster,
    settings: ReplicaSettings,
    hooks: Option<Arc<Hooks>>,
}

impl Stamp {
    fn matches(&self, cluster: &Cluster, settings: &ReplicaSettings, hooks: Option<&Arc<Hooks>>) -> bool {
        let same_hooks = match (&self.hooks, hooks) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        same_hooks && self.cluster.is_same_snapshot(cluster) && self.settings == *settings
    }
}

impl ReplicaScratch {
    /// An empty scratch: the first call prepares.
    pub fn new() -> Self {
        ReplicaScratch::default()
    }

    /// A scratch for a single call that is then dropped: it prepares in one pass and keeps
    /// nothing, so the one-call path costs what it did before scratches existed.
    pub(crate) fn one_off() -> Self {
        ReplicaScratch { one_off: true, ..ReplicaScratch::default() }
    }

    /// How many times the volume-independent preparation was built (for tests and tuning).
    pub fn rebuilds(&self) -> u64 {
        self.rebuilds
    }

    /// Forgets the kept preparation (the buffers stay allocated).
    pub fn clear(&mut self) {
        self.stamp = None;
    }

    /// Makes the kept preparation match `cx`'s snapshot, settings and hooks, then fills the
    /// volume's part (unless it was filled for an equal volume shape on this very preparation).
    /// Returns the call's prepared state, bound to no replica. A one-off scratch
    /// ([`ReplicaScratch::one_off`]) keeps nothing and prepares in one pass.
    pub(crate) fn prepare(&mut self, cx: &Ctx<'_>, hooks: Option<&Arc<Hooks>>) -> &mut Prep {
        if self.one_off {
            self.prep.fill(cx, None);
            self.prep.bind(cx, &[]);
            return &mut self.prep;
        }
        let fresh = self.ensure(cx, hooks);
        self.prep.refill(cx, &self.base, fresh);
        &mut self.prep
    }

    /// Makes the kept preparation match `cx`'s snapshot, settings and hooks; `true` when it
    /// was rebuilt.
    fn ensure(&mut self, cx: &Ctx<'_>, hooks: Option<&Arc<Hooks>>) -> bool {
        if self.stamp.as_ref().is_some_and(|s| s.matches(cx.cluster, cx.settings, hooks)) {
            return false;
        }
        // Drop the old stamp first: the old snapshot's chunks may then be freed.
        self.stamp = None;
        self.base.build(cx);
        self.rebuilds += 1;
        self.stamp = Some(Stamp { cluster: cx.cluster.clone(), settings: cx.settings.clone(), hooks: hooks.cloned() });
        true
    }
}
