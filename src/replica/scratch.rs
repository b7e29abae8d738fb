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
/// per-call buffers. It also keeps the last volume's part: a volume of the same shape reuses
/// it, and one of another size re-prepares only the hosts of the disks whose space verdict the
/// size changes (see [reusing the preparation](super#reusing-the-preparation-across-calls)).
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

    /// A scratch that resizes its volume preparation however many disks a size change touches
    /// (for tests of that path).
    #[cfg(test)]
    pub(crate) fn always_resize() -> Self {
        let mut s = ReplicaScratch::default();
        s.prep.resize_share = 0;
        s
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
        self.prep.refill(cx, &mut self.base, fresh);
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

#[cfg(test)]
mod tests {
    use super::ReplicaScratch;
    use crate::replica::prep::Prep;
    use crate::replica::Ctx;
    use crate::replica::{
        AutoBalance, BackingImage, DataEngine, DiskChoice, LonghornVersion, Replica, ReplicaScheduler, ReplicaSettings,
        TopologyTerm, Volume,
    };
    use crate::snapshot::{Cluster, DiskSpec, DiskType, HostSpec, HostState};
    use proptest::prelude::*;

    const G: i64 = 1 << 30;

    /// A disk: maximum in GiB, then available, reserved and scheduled in percent of it, and
    /// flags (tagged, block type, not allowed).
    type DiskDraw = (i64, i64, i64, i64, (bool, bool, bool));
    /// A host: zone (or none), up, labelled `ssd`, its disks.
    type HostDraw = (Option<u8>, bool, bool, Vec<DiskDraw>);

    fn host() -> impl Strategy<Value = HostDraw> {
        let disk = (
            1i64..400,
            0i64..=100,
            0i64..=30,
            0i64..=150,
            (prop::bool::weighted(0.2), prop::bool::weighted(0.1), prop::bool::weighted(0.1)),
        );
        (
            prop::option::weighted(0.85, 0u8..4),
            prop::bool::weighted(0.9),
            prop::bool::weighted(0.3),
            prop::collection::vec(disk, 0..4),
        )
    }

    fn cluster(hosts: &[HostDraw]) -> Cluster {
        let mut b = Cluster::builder();
        for (i, (zone, up, labelled, disks)) in hosts.iter().enumerate() {
            let mut h = HostSpec::new(format!("n{i:02}"));
            if let Some(z) = zone {
                h = h.zone(format!("z{z}")).topology("region", if *z < 2 { "r1" } else { "r2" });
            }
            if !up {
                h = h.state(HostState { up: false, ..HostState::default() });
            }
            if *labelled {
                h = h.label("ssd", "");
            }
            for (d, &(max, avail, reserved, scheduled, (tagged, block, off))) in disks.iter().enumerate() {
                let max = max * G;
                let mut disk = DiskSpec::new(format!("d{d}"), max, max / 100 * avail)
                    .reserved(max / 100 * reserved)
                    .scheduled(max / 100 * scheduled);
                if tagged {
                    disk = disk.tag("fast");
                }
                if block {
                    disk = disk.disk_type(DiskType::Block);
                }
                if off {
                    disk = disk.allow_scheduling(false);
                }
                h = h.disk(disk);
            }
            b = b.host(h);
        }
        b.build().unwrap()
    }

    /// A volume's shape: node selector, disk selector, v2, backing image, topology, best-effort
    /// auto-balance, actual size.
    type Shape = (bool, bool, bool, bool, bool, bool, u8);

    fn volume(shape: Shape, size: i64, replicas: u32, k: usize) -> Volume {
        let (node_sel, disk_sel, v2, image, topo, best_effort, actual) = shape;
        let mut v = Volume::new(format!("vol{k}"), size, replicas);
        v.actual_size = i64::from(actual) * 20 * G;
        if node_sel {
            v.node_selector = vec!["ssd".to_owned()];
        }
        if disk_sel {
            v.disk_selector = vec!["fast".to_owned()];
        }
        if v2 {
            v.data_engine = DataEngine::V2;
        }
        if image {
            v.backing_image = Some(BackingImage { disk_selector: vec!["fast".to_owned()], ..BackingImage::default() });
        }
        if topo {
            v.topology_requirement = vec![TopologyTerm { zone: "z1".to_owned(), ..TopologyTerm::default() }];
        }
        if best_effort {
            v.replica_auto_balance = AutoBalance::BestEffort;
        }
        v
    }

    /// Sizes around the disks' limits (so that size changes move verdicts), from 0 to a huge
    /// volume.
    fn size() -> impl Strategy<Value = i64> {
        prop_oneof![
            6 => (0i64..600).prop_map(|g| g * G),
            2 => 0i64..600 * G,
            1 => Just(16 << 40),
            1 => Just(0),
        ]
    }

    /// Everything of a preparation that a call reads, as text: each host's state, disks,
    /// static candidates and summary, the candidate nodes and the zone lists.
    fn digest(cluster: &Cluster, prep: &Prep) -> String {
        let mut out = format!("{:?}\n{}\n", prep.plain_cands, prep.zones.digest());
        for (i, hp) in prep.hosts.iter().enumerate().filter(|(_, hp)| hp.exists) {
            let id = crate::id::HostId::from_index(i);
            let n = cluster.hot_disks(id).len();
            let disks = &prep.disks[hp.disk_start as usize..hp.disk_start as usize + n];
            out += &format!("{hp:?} {disks:?} {:?} {:?}\n", prep.static_cands(id), prep.aggs[i]);
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

        /// A preparation resized from one size to the next is, in everything a call reads, the
        /// one a fill for the new size makes.
        #[test]
        fn a_resize_leaves_what_a_fill_makes(
            hosts in prop::collection::vec(host(), 1..40),
            shape in any::<Shape>(),
            sizes in prop::collection::vec(size(), 2..8),
            v1_10 in any::<bool>(),
        ) {
            let cluster = cluster(&hosts);
            let version = if v1_10 { LonghornVersion::V1_10 } else { LonghornVersion::Head };
            let settings = ReplicaSettings { replica_auto_balance_disk_pressure_percentage: 50, ..ReplicaSettings::default() };
            let s = ReplicaScheduler::new(settings).unwrap().version(version);
            let mut scratch = ReplicaScratch::always_resize();
            for &size in &sizes {
                let v = volume(shape, size, 3, 0);
                let cx = Ctx::new(&s, &cluster, &v);
                scratch.prepare(&cx, None);
                let mut fresh = Prep::default();
                fresh.fill(&cx, None);
                fresh.bind(&cx, &[]);
                prop_assert_eq!(digest(&cluster, &scratch.prep), digest(&cluster, &fresh));
            }
        }

        /// A stream of volumes of various sizes and shapes through one scratch that resizes its
        /// preparation for every size change (however many disks it touches) answers each as a
        /// fresh call does, with and without explanations, for both versions and disk choices,
        /// with existing replicas; and it resized exactly when two volumes in a row differed in
        /// size alone (below the huge size).
        #[test]
        fn a_resized_preparation_answers_as_a_fresh_call(
            hosts in prop::collection::vec(host(), 1..20),
            shapes in prop::collection::vec(any::<Shape>(), 1..3),
            stream in prop::collection::vec((size(), 0usize..3, 1u32..5, any::<bool>()), 1..10),
            (v1_10, most_usable, explain, soft) in any::<(bool, bool, bool, bool)>(),
            pressure in prop::sample::select(vec![0i64, 30, 60]),
        ) {
            let cluster = cluster(&hosts);
            let settings = ReplicaSettings {
                replica_zone_soft_anti_affinity: soft,
                replica_auto_balance_disk_pressure_percentage: pressure,
                ..ReplicaSettings::default()
            };
            let version = if v1_10 { LonghornVersion::V1_10 } else { LonghornVersion::Head };
            let choice = if most_usable { DiskChoice::MostUsableStorage } else { DiskChoice::BalanceScore };
            let s = ReplicaScheduler::new(settings).unwrap().version(version).disk_choice(choice).explain(explain);
            let mut scratch = ReplicaScratch::always_resize();
            let mut previous: Vec<Replica> = Vec::new();
            let mut last: Option<(usize, i64)> = None;
            let mut want_resizes = 0u64;
            for (k, &(size, shape, replicas, keep)) in stream.iter().enumerate() {
                let shape = shape % shapes.len();
                let v = volume(shapes[shape], size, replicas, k);
                let existing = if keep { previous.clone() } else { Vec::new() };
                let warm = s.schedule_volume_with(&mut scratch, &cluster, &v, &existing, 1000);
                prop_assert_eq!(&warm, &s.schedule_volume(&cluster, &v, &existing, 1000));
                let huge = |size: i64| !shapes[shape].2 && size >= 16 << 40;
                if let Some((was, was_size)) = last {
                    if was == shape && was_size != size && !huge(size) && !huge(was_size) {
                        want_resizes += 1;
                    }
                }
                last = Some((shape, size));
                previous = warm.replicas.iter().cloned().map(|mut r| { r.counted = false; r }).collect();
            }
            prop_assert_eq!(scratch.prep.resizes, want_resizes);
            prop_assert_eq!(scratch.rebuilds(), 1);
        }
    }
}
