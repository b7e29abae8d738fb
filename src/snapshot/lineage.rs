//! Whether a preparation kept from one snapshot serves a later one of its lineage, and how.
//!
//! The engines' scratches keep a preparation with a clone of the snapshot it was made from.
//! Given a later snapshot, one rule decides what to do with it: keep it for the very snapshot,
//! refresh it for the hosts of the changed chunks when at most about half of the chunks changed
//! ([`Cluster::changed_chunks`]), and rebuild it otherwise (refreshing more chunks costs about
//! what a build does). [`Lineage::of`] answers; [`refresh_pays`] is the threshold alone, for a
//! caller that adds up changed chunks over several snapshots.

use super::Cluster;

/// What a preparation kept from an earlier snapshot needs to serve a later one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lineage<'a> {
    /// The very snapshot ([`Cluster::is_same_snapshot`]): keep the preparation.
    Same,
    /// A later snapshot of the same lineage with at most about half its chunks changed:
    /// refresh the hosts of these chunks (ascending, chunks added since included).
    Refresh(&'a [usize]),
    /// Another lineage, or too many chunks changed, or the caller cannot refresh: rebuild.
    Rebuild,
}

impl<'a> Lineage<'a> {
    /// What a preparation kept from `kept` (a held clone, so that its chunks stay shared)
    /// needs to serve `now`. `refreshable` says whether the caller can refresh its
    /// preparation chunk by chunk at all; when it cannot, the answer is [`Lineage::Same`] or
    /// [`Lineage::Rebuild`] and no chunk is listed. `changed` is the caller's buffer for the
    /// changed chunks (cleared first). Computes in O(hosts / 64).
    pub(crate) fn of(kept: &Cluster, now: &Cluster, refreshable: bool, changed: &'a mut Vec<usize>) -> Self {
        if kept.is_same_snapshot(now) {
            return Lineage::Same;
        }
        if !refreshable {
            return Lineage::Rebuild;
        }
        changed.clear();
        let Some(chunks) = now.changed_chunks(kept) else { return Lineage::Rebuild };
        changed.extend(chunks);
        if refresh_pays(changed.len(), now.chunk_count()) {
            Lineage::Refresh(changed)
        } else {
            Lineage::Rebuild
        }
    }
}

/// Whether refreshing `changed` chunks of a snapshot of `chunks` chunks pays, rather than
/// rebuilding: at most about half of them changed (`2 × changed ≤ chunks + 1`).
#[inline]
pub(crate) fn refresh_pays(changed: usize, chunks: usize) -> bool {
    2 * changed <= chunks + 1
}

#[cfg(test)]
mod tests {
    use super::{refresh_pays, Lineage};
    use crate::snapshot::{Cluster, ClusterEvent, HostSpec, StateChange, CHUNK};

    /// A cluster of `chunks` full chunks of hosts `h0`, `h1`, ….
    fn cluster(chunks: usize) -> Cluster {
        let mut b = Cluster::builder();
        for i in 0..chunks * CHUNK {
            b = b.host(HostSpec::new(format!("h{i}")).vcpus(4.0).memory_mb(1024.0));
        }
        b.build().unwrap()
    }

    /// `kept` with host `h{i}` of each listed index cordoned, one event each.
    fn cordon(kept: &Cluster, hosts: &[usize]) -> Cluster {
        let mut now = kept.clone();
        for &i in hosts {
            let change = StateChange { cordoned: Some(true), ..StateChange::default() };
            now = now.apply(&ClusterEvent::HostStateChanged { host: format!("h{i}"), change }).unwrap();
        }
        now
    }

    #[test]
    fn the_very_snapshot_is_kept() {
        let kept = cluster(4);
        let mut buf = Vec::new();
        assert_eq!(Lineage::of(&kept, &kept.clone(), true, &mut buf), Lineage::Same);
        assert_eq!(Lineage::of(&kept, &kept.clone(), false, &mut buf), Lineage::Same);
    }

    #[test]
    fn a_few_changed_chunks_are_refreshed_in_order() {
        let kept = cluster(8);
        let now = cordon(&kept, &[3 * CHUNK + 1, 1, 3 * CHUNK + 7]);
        let mut buf = vec![99];
        assert_eq!(Lineage::of(&kept, &now, true, &mut buf), Lineage::Refresh(&[0, 3]));
    }

    #[test]
    fn a_caller_that_cannot_refresh_rebuilds() {
        let kept = cluster(8);
        let now = cordon(&kept, &[1]);
        let mut buf = Vec::new();
        assert_eq!(Lineage::of(&kept, &now, false, &mut buf), Lineage::Rebuild);
        assert!(buf.is_empty(), "no chunk listed");
    }

    #[test]
    fn more_than_half_changed_rebuilds() {
        let kept = cluster(4);
        let mut buf = Vec::new();
        // Of 4 chunks, 2 may change (2 × 2 ≤ 5), 3 may not.
        let two = cordon(&kept, &[0, CHUNK]);
        assert_eq!(Lineage::of(&kept, &two, true, &mut buf), Lineage::Refresh(&[0, 1]));
        let three = cordon(&kept, &[0, CHUNK, 2 * CHUNK]);
        assert_eq!(Lineage::of(&kept, &three, true, &mut buf), Lineage::Rebuild);
    }

    #[test]
    fn another_lineage_rebuilds() {
        let kept = cluster(2);
        let mut buf = Vec::new();
        assert_eq!(Lineage::of(&kept, &cluster(2), true, &mut buf), Lineage::Rebuild);
    }

    #[test]
    fn refresh_pays_for_at_most_about_half() {
        assert!(refresh_pays(0, 0));
        assert!(refresh_pays(1, 1));
        assert!(refresh_pays(1, 2));
        assert!(!refresh_pays(2, 2));
        assert!(refresh_pays(5, 9));
        assert!(!refresh_pays(6, 10));
        assert!(refresh_pays(5, 10));
    }
}
