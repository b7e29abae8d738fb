//! [`ReplicaScratch`]: the volume-independent preparation and the buffers, kept across calls.

use super::hooks::{self, Level, ReplicaHooks};
use super::prep::{self, Base, FillKey, Prep};
use super::settings::ReplicaSettings;
use super::Ctx;
use crate::id::{DiskId, HostId};
use crate::snapshot::{Cluster, Lineage};
use std::fmt;
use std::sync::Arc;

/// Reusable state for [`ReplicaScheduler::schedule_with`](super::ReplicaScheduler::schedule_with):
/// the volume-independent part of the preparation (each host's state and attributes, each
/// disk's pre-filter, space limits and summary, the caller's node filter verdicts) and the
/// per-call buffers. It also keeps the last volume's part: a volume of the same shape reuses
/// it, and one of another size re-prepares only the hosts of the disks whose space verdict the
/// size changes (see [reusing the preparation](super#reusing-the-preparation-across-calls)).
///
/// The preparation is kept with the snapshot it was made from and is brought up to date, before
/// it is read, whenever a call passes a snapshot that is not that very one. A later snapshot of
/// the same lineage (events applied to it) with the same settings and hooks is refreshed: only
/// the hosts of the chunks of 64 hosts that are not the kept snapshot's (those the events
/// touched) are prepared anew, with the last volume's part, when at most half of the chunks
/// changed, no event interned a new string or topology domain, and the scheduler has no
/// caller node filters (whose verdicts may read any host). Anything else rebuilds it: another
/// cluster (even at the same generation), different settings, a scheduler with other hooks. A
/// stale scratch never gives a different answer from a fresh one; it only costs a refresh or
/// a rebuild. It holds a clone of the snapshot it was made from (cheap: shared chunks), which
/// keeps that snapshot's memory alive until the next call on another snapshot or until it is
/// dropped.
///
/// One scratch serves one thread; it is not tied to a scheduler.
#[derive(Default)]
pub struct ReplicaScratch {
    stamp: Option<Stamp>,
    base: Base,
    prep: Prep,
    rebuilds: u64,
    refreshes: u64,
    /// The chunks changed since the stamp's snapshot (a buffer).
    changed: Vec<usize>,
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
            .field("refreshes", &self.refreshes)
            .finish_non_exhaustive()
    }
}

/// What the kept preparation was made from.
struct Stamp {
    /// A clone of the snapshot: its chunks stay allocated, so their addresses identify it.
    cluster: Cluster,
    settings: ReplicaSettings,
    hooks: Option<Arc<ReplicaHooks>>,
    /// The snapshot's first disk above its maximum ([`Cluster::disk_above_maximum`]), found
    /// when the stamp was made or refreshed.
    disk_above_maximum: Option<(HostId, DiskId)>,
    /// The first of the hooks' levels whose key no host carries ([`hooks::unknown_level`]),
    /// found when the stamp was made or refreshed.
    unknown_level: Option<usize>,
}

impl Stamp {
    fn same_parts(&self, settings: &ReplicaSettings, hooks: Option<&Arc<ReplicaHooks>>) -> bool {
        let same_hooks = match (&self.hooks, hooks) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        same_hooks && self.settings == *settings
    }

    /// Whether a preparation made for this stamp, with its settings and hooks, can be refreshed
    /// chunk by chunk for `cluster` (see [`ReplicaScratch`]): not with caller node filters
    /// (whose verdicts may read any host), nor when the host id bound shrank.
    fn refreshable(&self, cluster: &Cluster, hooks: Option<&Arc<ReplicaHooks>>) -> bool {
        hooks.is_none_or(|h| h.filters.is_empty()) && cluster.id_bound() >= self.cluster.id_bound()
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

    /// How many times the volume-independent preparation was built or refreshed (for tests and
    /// tuning).
    pub fn rebuilds(&self) -> u64 {
        self.rebuilds
    }

    /// How many of the [`rebuilds`](ReplicaScratch::rebuilds) refreshed only the hosts of the
    /// chunks that changed since the snapshot before (for tests and tuning).
    pub fn refreshes(&self) -> u64 {
        self.refreshes
    }

    /// Forgets the kept preparation (the buffers stay allocated).
    pub fn clear(&mut self) {
        self.stamp = None;
    }

    /// Makes the kept preparation match `cx`'s snapshot, settings and hooks, then fills the
    /// volume's part (unless it was filled, or refreshed, for an equal volume shape on this
    /// very preparation). Returns the call's prepared state, bound to no replica. A one-off
    /// scratch ([`ReplicaScratch::one_off`]) keeps nothing and prepares in one pass.
    pub(crate) fn prepare(&mut self, cx: &Ctx<'_>, hooks: Option<&Arc<ReplicaHooks>>) -> &mut Prep {
        if self.one_off {
            self.prep.fill(cx, None);
            self.prep.bind(cx, &[]);
            return &mut self.prep;
        }
        let key = FillKey::of(cx);
        let fresh = self.ensure(cx, hooks, &key);
        self.prep.refill(cx, &mut self.base, key, fresh);
        &mut self.prep
    }

    /// The state the last [`prepare`](ReplicaScratch::prepare) returned.
    pub(crate) fn prepared(&mut self) -> &mut Prep {
        &mut self.prep
    }

    /// `cluster`'s first disk above its maximum, right after a [`prepare`](ReplicaScratch::prepare)
    /// for it: O(1) from the kept preparation's stamp, O(hosts / 64) for a one-off scratch.
    pub(crate) fn disk_above_maximum(&self, cluster: &Cluster) -> Option<(HostId, DiskId)> {
        match &self.stamp {
            Some(stamp) if !self.one_off => stamp.disk_above_maximum,
            _ => cluster.disk_above_maximum(),
        }
    }

    /// The first of `levels` (the hooks' the scratch was prepared with) whose key no host of
    /// `cluster` carries, right after a [`prepare`](ReplicaScratch::prepare) for it: O(1) from
    /// the kept preparation's stamp, as [`hooks::unknown_level`] for a one-off scratch.
    pub(crate) fn unknown_level(&self, cluster: &Cluster, levels: &[Level]) -> Option<usize> {
        match &self.stamp {
            Some(stamp) if !self.one_off => stamp.unknown_level,
            _ => hooks::unknown_level(cluster, levels),
        }
    }

    /// Makes the kept preparation match `cx`'s snapshot, settings and hooks: keeps it,
    /// refreshes the hosts of the chunks that changed (and the volume's part with them when it
    /// was filled for `key`), or rebuilds it. `true` when the volume's part must be filled anew.
    fn ensure(&mut self, cx: &Ctx<'_>, hooks: Option<&Arc<ReplicaHooks>>, key: &Option<FillKey>) -> bool {
        if let Some(stamp) = self.stamp.as_mut().filter(|s| s.same_parts(cx.settings, hooks)) {
            let refreshable = stamp.refreshable(cx.cluster, hooks);
            match Lineage::of(&stamp.cluster, cx.cluster, refreshable, &mut self.changed) {
                Lineage::Same => return false,
                Lineage::Refresh(changed) => {
                    let with_volume = key.is_some() && self.prep.filled == *key;
                    prep::refresh(cx, &mut self.base, with_volume.then_some(&mut self.prep), changed);
                    // The old snapshot's chunks that no one else holds are freed here.
                    stamp.cluster = cx.cluster.clone();
                    stamp.disk_above_maximum = cx.cluster.disk_above_maximum();
                    stamp.unknown_level = levels_unknown(cx.cluster, hooks);
                    self.rebuilds += 1;
                    self.refreshes += 1;
                    return !with_volume;
                }
                Lineage::Rebuild => {}
            }
        }
        // Drop the old stamp first: the old snapshot's chunks may then be freed.
        self.stamp = None;
        self.base.build(cx);
        self.rebuilds += 1;
        self.stamp = Some(Stamp {
            cluster: cx.cluster.clone(),
            settings: cx.settings.clone(),
            hooks: hooks.cloned(),
            disk_above_maximum: cx.cluster.disk_above_maximum(),
            unknown_level: levels_unknown(cx.cluster, hooks),
        });
        true
    }
}

/// [`hooks::unknown_level`] for the levels of `hooks`, if any.
fn levels_unknown(cluster: &Cluster, hooks: Option<&Arc<ReplicaHooks>>) -> Option<usize> {
    hooks.and_then(|h| hooks::unknown_level(cluster, &h.levels))
}

#[cfg(test)]
mod tests {
    use super::ReplicaScratch;
    use crate::id::{DiskId, DomainId, HostId};
    use crate::replica::node_stage;
    use crate::replica::prep::{Base, Prep};
    use crate::replica::{disk_filter_fn, Ctx, Level};
    use crate::replica::{
        AutoBalance, BackingImage, DataEngine, DiskChoice, LonghornVersion, Replica, ReplicaScheduler, ReplicaSettings,
        TopologyTerm, Volume,
    };
    use crate::snapshot::{refresh_pays, Cluster, ClusterEvent, DiskSpec, DiskType, HostSpec, HostState, StateChange};
    use proptest::prelude::*;

    const G: i64 = 1 << 30;

    /// A disk: maximum in GiB, then available, reserved and scheduled in percent of it, and
    /// flags (tagged, block type, not allowed).
    type DiskDraw = (i64, i64, i64, i64, (bool, bool, bool));
    /// A host: zone (or none), up, labelled `ssd`, its disks.
    type HostDraw = (Option<u8>, bool, bool, Vec<DiskDraw>);

    fn disk() -> impl Strategy<Value = DiskDraw> {
        (
            1i64..400,
            0i64..=100,
            0i64..=30,
            0i64..=150,
            (prop::bool::weighted(0.2), prop::bool::weighted(0.1), prop::bool::weighted(0.1)),
        )
    }

    fn host() -> impl Strategy<Value = HostDraw> {
        (
            prop::option::weighted(0.85, 0u8..4),
            prop::bool::weighted(0.9),
            prop::bool::weighted(0.3),
            prop::collection::vec(disk(), 0..4),
        )
    }

    fn disk_spec(d: usize, &(max, avail, reserved, scheduled, (tagged, block, off)): &DiskDraw) -> DiskSpec {
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
        disk
    }

    fn host_spec(name: String, (zone, up, labelled, disks): &HostDraw) -> HostSpec {
        let mut h = HostSpec::new(name);
        if let Some(z) = zone {
            h = h.zone(format!("z{z}")).topology("region", if *z < 2 { "r1" } else { "r2" });
        }
        if !up {
            h = h.state(HostState { up: false, ..HostState::default() });
        }
        if *labelled {
            h = h.label("ssd", "");
        }
        for (d, disk) in disks.iter().enumerate() {
            h = h.disk(disk_spec(d, disk));
        }
        h
    }

    fn cluster(hosts: &[HostDraw]) -> Cluster {
        let mut b = Cluster::builder();
        for (i, draw) in hosts.iter().enumerate() {
            b = b.host(host_spec(format!("n{i:02}"), draw));
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

        /// The candidate nodes listed in one pass are those the stage-by-stage path lists, and
        /// a failure is the same stage's, with and without a topology requirement, for both
        /// versions, with hosts down or without a running instance manager; the zone lists
        /// group them by zone.
        #[test]
        fn plain_candidates_are_the_stagewise_ones(
            hosts in prop::collection::vec((host(), prop::bool::weighted(0.3)), 1..30),
            shape in any::<Shape>(),
            v1_10 in any::<bool>(),
        ) {
            let mut b = Cluster::builder();
            for (i, (draw, no_manager)) in hosts.iter().enumerate() {
                let mut h = host_spec(format!("n{i:02}"), draw);
                if *no_manager {
                    h = h.attribute("im_running", serde_json::Value::Bool(false));
                }
                b = b.host(h);
            }
            let cluster = b.build().unwrap();
            let version = if v1_10 { LonghornVersion::V1_10 } else { LonghornVersion::Head };
            let s = ReplicaScheduler::builder(ReplicaSettings::default()).version(version).build().unwrap();
            let v = volume(shape, 10 * G, 3, 0);
            let cx = Ctx::new(&s, &cluster, &v).unwrap();
            let prep = Prep::new(&cx, &[]);
            let (mut one, mut staged) = (Vec::new(), Vec::new());
            let got = node_stage::plain_candidates(&cx, &prep.hosts, &mut one);
            prop_assert_eq!(&prep.plain_cands, &got.map(|()| one.clone()));
            // The zone lists, naively: zone after zone in the order of their lowest listed host,
            // each zone's listed candidate nodes in id order (hosts of four zones and none, in
            // any order).
            let zone_of = |h: &HostId| prep.hosts[h.index()].zone;
            let plain = prep.plain_cands.as_deref().unwrap_or(&[]);
            let listed: Vec<HostId> =
                plain.iter().copied().filter(|h| crate::replica::zones::listed(&prep.hosts[h.index()])).collect();
            let mut order: Vec<DomainId> = Vec::new();
            for h in &listed {
                let z = zone_of(h);
                if !order.contains(&z) {
                    order.push(z);
                }
            }
            let want: Vec<(DomainId, Vec<HostId>)> =
                order.iter().map(|&z| (z, listed.iter().copied().filter(|h| zone_of(h) == z).collect())).collect();
            let lists: Vec<(DomainId, Vec<HostId>)> = prep
                .zones
                .zones
                .iter()
                .map(|z| (z.zone, prep.zones.hosts[z.start as usize..z.end as usize].to_vec()))
                .collect();
            prop_assert_eq!(lists, want);
            prop_assert_eq!(prep.zones.hosts.len(), listed.len());
            // With notes asked for, the stage-by-stage path is taken.
            let want = node_stage::candidates(&cx, &prep.hosts, &prep.plain_cands, &Replica::new("r"), &mut staged, &mut Some(Vec::new()));
            prop_assert_eq!(got, want);
            if want.is_ok() {
                prop_assert_eq!(one, staged);
            }
        }

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
            let s = ReplicaScheduler::builder(settings).version(version).build().unwrap();
            let mut scratch = ReplicaScratch::always_resize();
            for &size in &sizes {
                let v = volume(shape, size, 3, 0);
                let cx = Ctx::new(&s, &cluster, &v).unwrap();
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
            // The last shape repeats the first: two volumes of equal shape drawn under
            // different indexes are still the same shape to the scratch.
            shapes in prop::collection::vec(any::<Shape>(), 1..3).prop_map(|mut s| { s.push(s[0]); s }),
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
            let s = ReplicaScheduler::builder(settings).version(version).disk_choice(choice).explain(explain).build().unwrap();
            let mut scratch = ReplicaScratch::always_resize();
            let mut previous: Vec<Replica> = Vec::new();
            let mut last: Option<(Shape, i64)> = None;
            let mut want_resizes = 0u64;
            for (k, &(size, shape, replicas, keep)) in stream.iter().enumerate() {
                let shape = shape % shapes.len();
                let v = volume(shapes[shape], size, replicas, k);
                let existing = if keep { previous.clone() } else { Vec::new() };
                let warm = s.schedule_with(&mut scratch, &cluster, &v, &existing, 1000).unwrap();
                prop_assert_eq!(&warm, &s.schedule(&cluster, &v, &existing, 1000).unwrap());
                let huge = |size: i64| !shapes[shape].2 && size >= 16 << 40;
                if let Some((was, was_size)) = last {
                    if was == shapes[shape] && was_size != size && !huge(size) && !huge(was_size) {
                        want_resizes += 1;
                    }
                }
                last = Some((shapes[shape], size));
                previous = warm.replicas.iter().cloned().map(|mut r| { r.counted = false; r }).collect();
            }
            prop_assert_eq!(scratch.prep.resizes, want_resizes);
            prop_assert_eq!(scratch.rebuilds(), 1);
        }
    }

    /// One event between two calls of `a_refresh_leaves_what_a_build_makes`, on the live host
    /// at a drawn position.
    #[derive(Debug, Clone)]
    enum Change {
        /// Disk `d<k>` updated, or added when the host has no such disk.
        Disk(usize, usize, DiskDraw),
        DiskRemoved(usize, usize),
        /// Up, cordoned.
        State(usize, bool, bool),
        /// The whole record replaced: zone, state, label and disks as drawn.
        Host(usize, HostDraw),
        Added(HostDraw),
        Removed(usize),
        /// A replica's GiB written into disk `d<k>` in place ([`Cluster::add_scheduled_replica`]).
        InPlace(usize, usize, i64),
    }

    fn change() -> impl Strategy<Value = Change> {
        prop_oneof![
            4 => (any::<usize>(), 0usize..5, disk()).prop_map(|(h, d, x)| Change::Disk(h, d, x)),
            1 => (any::<usize>(), 0usize..4).prop_map(|(h, d)| Change::DiskRemoved(h, d)),
            2 => (any::<usize>(), any::<bool>(), any::<bool>()).prop_map(|(h, u, c)| Change::State(h, u, c)),
            2 => (any::<usize>(), host()).prop_map(|(h, x)| Change::Host(h, x)),
            1 => host().prop_map(Change::Added),
            1 => any::<usize>().prop_map(Change::Removed),
            2 => (any::<usize>(), 0usize..4, 0i64..300).prop_map(|(h, d, g)| Change::InPlace(h, d, g)),
        ]
    }

    /// `hosts` after one host per zone that holds every string the changes use (zones, regions,
    /// the label and the tag), so that a change interns nothing and can be refreshed.
    fn anchored(hosts: &[HostDraw]) -> Cluster {
        let tagged = (100, 50, 0, 0, (true, false, false));
        let anchors = (0..4u8).map(|z| (Some(z), true, true, vec![tagged]));
        let mut b = Cluster::builder();
        for (i, draw) in anchors.chain(hosts.iter().cloned()).enumerate() {
            b = b.host(host_spec(format!("n{i:03}"), &draw));
        }
        b.build().unwrap()
    }

    /// Applies `change` to `cluster` (through a copy of the snapshot, or in place when
    /// `in_place`); a change the snapshot refuses (a missing disk) changes nothing.
    fn apply(cluster: &mut Cluster, change: &Change, in_place: bool, added: &mut usize) {
        let ids: Vec<HostId> = cluster.host_ids().collect();
        let id = |i: usize| ids[i % ids.len()];
        let name = |i: usize| cluster.host_name(id(i)).to_owned();
        let event = match change {
            Change::Disk(h, d, x) => ClusterEvent::DiskUpdated { host: name(*h), disk: disk_spec(*d, x) },
            Change::DiskRemoved(h, d) => ClusterEvent::DiskRemoved { host: name(*h), disk: format!("d{d}") },
            Change::State(h, up, cordoned) => ClusterEvent::HostStateChanged {
                host: name(*h),
                change: StateChange::default().up(*up).cordoned(*cordoned),
            },
            Change::Host(h, x) => ClusterEvent::HostUpdated { host: host_spec(name(*h), x) },
            Change::Added(x) => {
                *added += 1;
                ClusterEvent::HostAdded { host: host_spec(format!("a{added}"), x) }
            }
            Change::Removed(h) if ids.len() > 1 => ClusterEvent::HostRemoved { host: name(*h) },
            Change::Removed(_) => return,
            Change::InPlace(h, d, g) => {
                cluster.add_scheduled_replica(id(*h), DiskId::from_index(*d), "written", g * G);
                return;
            }
        };
        let mut next = cluster.clone();
        let applied = if in_place { next.apply_mut(&event) } else { next.apply(&event).map(|c| next = c) };
        if applied.is_ok() {
            *cluster = next;
        }
    }

    /// A refresh after an event that changes a listed host's free space, and no host's place in
    /// the zone lists, redoes the summaries of its zone list's block and zone: the preparation
    /// is what a fill makes.
    #[test]
    fn a_refresh_redoes_the_zone_summaries_of_a_changed_host() {
        let plain = (100, 50, 0, 0, (false, false, false));
        let hosts: Vec<HostDraw> = (0..150u8).map(|i| (Some(i % 4), true, false, vec![plain])).collect();
        let mut cluster = cluster(&hosts);
        let s = ReplicaScheduler::new(ReplicaSettings::default()).unwrap();
        let v = volume((false, false, false, false, false, false, 0), G, 3, 0);
        let mut scratch = ReplicaScratch::new();
        scratch.prepare(&Ctx::new(&s, &cluster, &v).unwrap(), None);
        let before = scratch.prep.zones.digest();
        apply(&mut cluster, &Change::Disk(70, 0, (100, 80, 0, 0, (false, false, false))), false, &mut 0);
        let cx = Ctx::new(&s, &cluster, &v).unwrap();
        scratch.prepare(&cx, None);
        assert_eq!(scratch.refreshes(), 1);
        assert_ne!(scratch.prep.zones.digest(), before, "the event changes the zone lists' summaries");
        let mut base = Base::default();
        base.build(&cx);
        let mut fresh = Prep::default();
        fresh.fill(&cx, Some(&base));
        fresh.bind(&cx, &[]);
        assert_eq!(digest(&cluster, &scratch.prep), digest(&cluster, &fresh));
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        /// A preparation refreshed for the chunks a few events changed (disks updated, added,
        /// removed or written in place, states, whole records with another zone or label,
        /// hosts added and removed, across several chunks) is, in everything a call reads, what
        /// a build and a fill for the new snapshot make: the base's hosts, disks and their
        /// layout, level values and room order, the volume's hosts, disks, candidates and
        /// summaries, candidate nodes and zone lists. The scratch refreshes exactly when the
        /// snapshot is a later one of the same lineage with at most half of its chunks changed.
        #[test]
        fn a_refresh_leaves_what_a_build_makes(
            hosts in prop::collection::vec(host(), 0..200),
            shape in any::<Shape>(),
            steps in prop::collection::vec(
                (prop::collection::vec((change(), any::<bool>()), 0..4), size(), prop::bool::weighted(0.5), any::<bool>()),
                1..8,
            ),
            (v1_10, hooked, disk_filter) in any::<(bool, bool, bool)>(),
        ) {
            let mut cluster = anchored(&hosts);
            let version = if v1_10 { LonghornVersion::V1_10 } else { LonghornVersion::Head };
            let settings = ReplicaSettings { replica_auto_balance_disk_pressure_percentage: 50, ..ReplicaSettings::default() };
            let mut builder = ReplicaScheduler::builder(settings);
            if hooked {
                builder = builder.level(Level::soft("region")).level(Level::hard("ssd"));
            }
            if disk_filter {
                builder = builder.disk_filter(disk_filter_fn("not d1", |cx| &*cx.disk().name != "d1"));
            }
            let s = builder.version(version).build().unwrap();
            let mut scratch = ReplicaScratch::new();
            let mut added = 0;
            let mut before: Option<Cluster> = None;
            let mut last_size = 0;
            for (changes, size, same_size, rooms) in &steps {
                for (change, in_place) in changes {
                    apply(&mut cluster, change, *in_place, &mut added);
                }
                let refreshable = before.as_ref().is_some_and(|b| {
                    !b.is_same_snapshot(&cluster)
                        && cluster.id_bound() >= b.id_bound()
                        && cluster.changed_chunks(b).is_some_and(|c| refresh_pays(c.count(), cluster.chunk_count()))
                });
                // Half the calls keep the size: nothing but the refresh changes the preparation.
                let size = if *same_size && before.is_some() { last_size } else { *size };
                last_size = size;
                let v = volume(shape, size, 3, 0);
                let cx = Ctx::new(&s, &cluster, &v).unwrap();
                let refreshes = scratch.refreshes();
                scratch.prepare(&cx, s.hooks.as_ref());
                prop_assert_eq!(scratch.refreshes() - refreshes, u64::from(refreshable));
                let mut base = Base::default();
                base.build(&cx);
                let mut fresh = Prep::default();
                fresh.fill(&cx, Some(&base));
                fresh.bind(&cx, &[]);
                // The room order is compared whenever the scratch made it (a resize does).
                let rooms = *rooms || scratch.base.rooms_built();
                prop_assert_eq!(scratch.base.digest(rooms), base.digest(rooms));
                prop_assert_eq!(digest(&cluster, &scratch.prep), digest(&cluster, &fresh));
                let lengths = |p: &Prep| (p.hosts.len(), p.aggs.len(), p.disks.len(), p.cands.len(), p.level_values.clone());
                prop_assert_eq!(lengths(&scratch.prep), lengths(&fresh));
                before = Some(cluster.clone());
            }
        }
    }
}
