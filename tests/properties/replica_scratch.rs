//! [`ReplicaScratch`] across calls: a reused scratch gives exactly the answer of a fresh one,
//! whatever happened in between (events applied to the cluster, another cluster passed, other
//! settings, a scheduler with other hooks, other volumes and existing replicas), and keeps its
//! preparation while nothing changed.

use placewise::replica::{disk_filter_fn, Level, Replica, ReplicaScheduler, ReplicaScratch, ReplicaSettings, Volume};
use placewise::snapshot::DiskSpec;
use placewise::snapshot::StateChange;
use placewise::{filter_fn, Cluster, ClusterEvent, HostSpec};
use proptest::prelude::*;
use std::collections::BTreeMap;

const G: i64 = 1 << 30;

fn disk(name: String, max_q: i64, avail_pct: i64, sched_pct: i64) -> DiskSpec {
    let max = max_q * G;
    DiskSpec::new(name, max, max * avail_pct / 100).scheduled(max * sched_pct / 100)
}

fn host(i: usize, zone: usize, disks: &[(i64, i64, i64)]) -> HostSpec {
    let mut h = HostSpec::new(format!("n{i}")).zone(format!("z{zone}")).label("rack", format!("r{}", i % 3));
    if i % 5 == 4 {
        h = h.label("maintenance", "yes");
    }
    for (d, &(m, a, s)) in disks.iter().enumerate() {
        h = h.disk(disk(format!("d{d}"), m, a, s));
    }
    h
}

fn build(hosts: &[(usize, Disks)]) -> Cluster {
    hosts.iter().enumerate().fold(Cluster::builder(), |b, (i, (z, d))| b.host(host(i, *z, d))).build().unwrap()
}

type Disks = Vec<(i64, i64, i64)>;

fn disks_strategy() -> impl Strategy<Value = Disks> {
    prop::collection::vec((1i64..=20, 0i64..=100, 0i64..=120), 1..=3)
}

fn cluster_strategy() -> impl Strategy<Value = Vec<(usize, Disks)>> {
    prop::collection::vec((0usize..3, disks_strategy()), 2..=8)
}

/// One step between two scheduling calls.
#[derive(Debug, Clone)]
enum Step {
    /// Nothing changes: the scratch must not rebuild.
    Nothing,
    DiskUpdated(usize, usize, (i64, i64, i64)),
    StateChanged(usize, bool, bool),
    HostAdded(usize, Disks),
    HostRemoved(usize),
    MetricsUpdated(usize, f64),
    /// The same hosts rebuilt from the spec: equal content, another snapshot.
    Rebuilt,
    /// Switch to (or back from) the other cluster.
    OtherCluster,
    /// Switch the scheduler (settings / hooks).
    Scheduler(usize),
}

fn step_strategy() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => Just(Step::Nothing),
        3 => (0usize..10, 0usize..3, (1i64..=20, 0i64..=100, 0i64..=120)).prop_map(|(h, d, x)| Step::DiskUpdated(h, d, x)),
        2 => (0usize..10, any::<bool>(), any::<bool>()).prop_map(|(h, up, c)| Step::StateChanged(h, up, c)),
        1 => (0usize..3, disks_strategy()).prop_map(|(z, d)| Step::HostAdded(z, d)),
        1 => (0usize..10).prop_map(Step::HostRemoved),
        1 => (0usize..10, 0.0f64..10.0).prop_map(|(h, v)| Step::MetricsUpdated(h, v)),
        1 => Just(Step::Rebuilt),
        1 => Just(Step::OtherCluster),
        2 => (0usize..4).prop_map(Step::Scheduler),
    ]
}

fn schedulers() -> Vec<ReplicaScheduler> {
    let mut tight = ReplicaSettings::default();
    tight.storage_over_provisioning_percentage = 150;
    tight.storage_minimal_available_percentage = 10;
    tight.replica_soft_anti_affinity = true;
    let hooked = ReplicaScheduler::builder(ReplicaSettings::default())
        .filter(filter_fn("maintenance", |cx, h| cx.cluster().label(h, "maintenance").is_none()))
        .disk_filter(disk_filter_fn("no d2", |cx| &*cx.disk().name != "d2"))
        .level(Level::soft("rack"))
        .build()
        .unwrap();
    vec![
        ReplicaScheduler::new(ReplicaSettings::default()).unwrap(),
        ReplicaScheduler::new(tight).unwrap(),
        hooked.clone(),
        // Same hooks, another scheduler value: shares them (a clone).
        hooked,
    ]
}

fn name_of(cluster: &Cluster, i: usize) -> Option<String> {
    let ids: Vec<_> = cluster.host_ids().collect();
    (!ids.is_empty()).then(|| cluster.host_name(ids[i % ids.len()]).to_owned())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn a_reused_scratch_answers_as_a_fresh_one(
        first in cluster_strategy(),
        second in cluster_strategy(),
        steps in prop::collection::vec((step_strategy(), 1i64..=3, 1u32..=4, any::<bool>()), 1..=14),
    ) {
        let schedulers = schedulers();
        let mut current = build(&first);
        let mut other = build(&second);
        let mut which = 0usize;
        let mut scratch = ReplicaScratch::new();
        let mut previous: Vec<Replica> = Vec::new();
        let mut added = 100usize;
        for (i, (step, size, count, keep)) in steps.into_iter().enumerate() {
            let unchanged = matches!(step, Step::Nothing) && i > 0;
            let event = match step {
                Step::Nothing => None,
                Step::DiskUpdated(h, d, (m, a, s)) => name_of(&current, h)
                    .map(|host| ClusterEvent::DiskUpdated { host, disk: disk(format!("d{d}"), m, a, s) }),
                Step::StateChanged(h, up, cordoned) => name_of(&current, h).map(|host| ClusterEvent::HostStateChanged {
                    host,
                    change: StateChange::default().up(up).cordoned(cordoned),
                }),
                Step::HostAdded(z, d) => {
                    added += 1;
                    Some(ClusterEvent::HostAdded { host: host(added, z, &d) })
                }
                Step::HostRemoved(h) => (current.len() > 1).then(|| name_of(&current, h)).flatten()
                    .map(|host| ClusterEvent::HostRemoved { host }),
                Step::MetricsUpdated(h, v) => name_of(&current, h)
                    .map(|host| ClusterEvent::MetricsUpdated { host, metrics: BTreeMap::from([("load".to_owned(), v)]) }),
                Step::Rebuilt => {
                    current = Cluster::from_spec(&current.to_spec()).unwrap();
                    None
                }
                Step::OtherCluster => {
                    std::mem::swap(&mut current, &mut other);
                    None
                }
                Step::Scheduler(k) => {
                    which = k;
                    None
                }
            };
            if let Some(e) = event {
                current = current.apply(&e).unwrap();
            }
            let scheduler = &schedulers[which];
            // Sizes from a small set: the scratch often reuses the volume's part of the
            // preparation too (same shape as the call before).
            let volume = Volume::new("vol", size * 4 * G, count);
            let replicas: Vec<Replica> = if keep { previous.clone() } else { Vec::new() };
            let before = scratch.rebuilds();
            let warm = scheduler.schedule_with(&mut scratch, &current, &volume, &replicas, 1000).unwrap();
            let fresh = scheduler.schedule(&current, &volume, &replicas, 1000).unwrap();
            prop_assert_eq!(&warm, &fresh);
            if unchanged {
                prop_assert_eq!(scratch.rebuilds(), before, "nothing changed, yet the scratch rebuilt");
            }
            previous = warm.replicas.iter().cloned().map(|mut r| { r.counted = false; r }).collect();
        }
    }
}

/// One volume of a stream: size in GiB, replicas, node selector, disk selector, v2, actual size.
type VolumeDraw = (i64, u32, bool, bool, bool, bool);

fn stream_volume(k: usize, &(size, count, node_sel, disk_sel, v2, actual): &VolumeDraw) -> Volume {
    let mut v = Volume::new(format!("vol{k}"), size * G, count);
    if node_sel {
        v.node_selector = vec!["maintenance".to_owned()];
    }
    if disk_sel {
        v.disk_selector = vec!["fast".to_owned()];
    }
    if v2 {
        v.data_engine = placewise::replica::DataEngine::V2;
    }
    if actual {
        v.actual_size = G;
    }
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// A stream of different volumes (sizes across the disks' limits, selectors, engines,
    /// actual sizes; mostly plain volumes of various sizes) through one scratch on one snapshot,
    /// with an occasional event between two of them, answers each as a fresh call does, and
    /// builds the snapshot's part once per snapshot.
    #[test]
    fn a_stream_of_different_volumes_answers_as_fresh_calls(
        hosts in cluster_strategy(),
        stream in prop::collection::vec(
            (
                (0i64..=24, 1u32..=4, prop::bool::weighted(0.15), prop::bool::weighted(0.15),
                 prop::bool::weighted(0.1), prop::bool::weighted(0.1)),
                prop::option::weighted(0.1, (0usize..10, 0usize..3, (1i64..=20, 0i64..=100, 0i64..=120))),
            ),
            1..=16,
        ),
        which in 0usize..4,
    ) {
        let scheduler = &schedulers()[which];
        let mut current = build(&hosts);
        let mut scratch = ReplicaScratch::new();
        let mut snapshots = 1;
        for (k, (draw, event)) in stream.iter().enumerate() {
            if let Some((h, d, (m, a, s))) = *event {
                if let Some(host) = name_of(&current, h) {
                    current = current.apply(&ClusterEvent::DiskUpdated { host, disk: disk(format!("d{d}"), m, a, s) }).unwrap();
                    snapshots += 1;
                }
            }
            let volume = stream_volume(k, draw);
            let warm = scheduler.schedule_with(&mut scratch, &current, &volume, &[], 1000).unwrap();
            prop_assert_eq!(warm, scheduler.schedule(&current, &volume, &[], 1000).unwrap());
        }
        prop_assert!(scratch.rebuilds() <= snapshots);
    }
}

#[test]
fn the_scratch_rebuilds_exactly_when_something_changed() {
    let hosts: Vec<(usize, Disks)> = (0..6).map(|i| (i % 3, vec![(10, 90, 0), (10, 80, 10)])).collect();
    let a = build(&hosts);
    let b = build(&hosts); // equal content, another snapshot
    let scheduler = ReplicaScheduler::new(ReplicaSettings::default()).unwrap();
    let volume = Volume::new("vol", G, 3);
    let mut scratch = ReplicaScratch::new();
    let run = |s: &mut ReplicaScratch, sch: &ReplicaScheduler, c: &Cluster| {
        let warm = sch.schedule_with(s, c, &volume, &[], 0).unwrap();
        assert_eq!(warm, sch.schedule(c, &volume, &[], 0).unwrap());
    };
    run(&mut scratch, &scheduler, &a);
    run(&mut scratch, &scheduler, &a);
    run(&mut scratch, &scheduler, &a.clone());
    assert_eq!(scratch.rebuilds(), 1);
    run(&mut scratch, &scheduler, &b);
    assert_eq!(scratch.rebuilds(), 2);
    let c = b
        .apply(&ClusterEvent::HostStateChanged { host: "n0".into(), change: StateChange::default().up(false) })
        .unwrap();
    run(&mut scratch, &scheduler, &c);
    assert_eq!(scratch.rebuilds(), 3);
    let mut settings = ReplicaSettings::default();
    settings.storage_minimal_available_percentage = 5;
    run(&mut scratch, &ReplicaScheduler::new(settings).unwrap(), &c);
    assert_eq!(scratch.rebuilds(), 4);
    // Version, disk choice, explanation and seed are not part of the preparation.
    run(&mut scratch, &ReplicaScheduler::builder(settings_default()).explain(true).seed(9).build().unwrap(), &c);
    assert_eq!(scratch.rebuilds(), 5);
    let v1_10 =
        ReplicaScheduler::builder(ReplicaSettings::default()).version(placewise::replica::LonghornVersion::V1_10);
    run(&mut scratch, &v1_10.build().unwrap(), &c);
    assert_eq!(scratch.rebuilds(), 5);
    scratch.clear();
    run(&mut scratch, &scheduler, &c);
    assert_eq!(scratch.rebuilds(), 6);
}

fn settings_default() -> ReplicaSettings {
    ReplicaSettings::default()
}

/// Schedulers whose preparation a scratch refreshes (no caller node filters): Longhorn's with
/// default and tight settings, and one with a level and a disk filter.
fn refreshable_schedulers() -> Vec<ReplicaScheduler> {
    let mut tight = ReplicaSettings::default();
    tight.storage_over_provisioning_percentage = 150;
    tight.storage_minimal_available_percentage = 10;
    let hooked = ReplicaScheduler::builder(ReplicaSettings::default())
        .disk_filter(disk_filter_fn("no d2", |cx| &*cx.disk().name != "d2"))
        .level(Level::soft("rack"))
        .build()
        .unwrap();
    vec![ReplicaScheduler::new(ReplicaSettings::default()).unwrap(), ReplicaScheduler::new(tight).unwrap(), hooked]
}

/// Five anchor hosts, then `hosts`: the anchors hold every string the events below use (the
/// zones, racks and the maintenance label), so no event interns a new one.
fn anchored(hosts: &[(usize, Disks)]) -> Cluster {
    let anchors = (0..5).map(|i| (i % 3, vec![(10, 50, 0)]));
    let all: Vec<(usize, Disks)> = anchors.chain(hosts.iter().cloned()).collect();
    build(&all)
}

/// One event between two calls of `a_refreshed_scratch_answers_as_fresh_calls`, on the live
/// host at a drawn position.
#[derive(Debug, Clone)]
enum Event {
    /// Disk `d<k>` updated, or added when the host has none of that name.
    Disk(usize, usize, (i64, i64, i64)),
    DiskRemoved(usize, usize),
    State(usize, bool, bool),
    /// The host's record replaced: another zone and disks.
    Replaced(usize, usize, Disks),
    Added(usize, Disks),
    Removed(usize),
}

fn event_strategy() -> impl Strategy<Value = Event> {
    prop_oneof![
        4 => (any::<usize>(), 0usize..4, (1i64..=20, 0i64..=100, 0i64..=120)).prop_map(|(h, d, x)| Event::Disk(h, d, x)),
        1 => (any::<usize>(), 0usize..3).prop_map(|(h, d)| Event::DiskRemoved(h, d)),
        2 => (any::<usize>(), any::<bool>(), any::<bool>()).prop_map(|(h, up, c)| Event::State(h, up, c)),
        1 => (any::<usize>(), 0usize..3, disks_strategy()).prop_map(|(h, z, d)| Event::Replaced(h, z, d)),
        1 => (0usize..3, disks_strategy()).prop_map(|(z, d)| Event::Added(z, d)),
        1 => any::<usize>().prop_map(Event::Removed),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// A scratch passed snapshot after snapshot of one lineage, each at most one event after
    /// the one before (disks updated, added and removed, states, hosts replaced, added and
    /// removed, on clusters of up to three chunks), answers each call as a fresh one does,
    /// for volumes of several shapes and sizes with and without existing replicas; and it
    /// refreshed its preparation for every new snapshot, rebuilding it only for the first.
    #[test]
    fn a_refreshed_scratch_answers_as_fresh_calls(
        hosts in prop::collection::vec((0usize..3, disks_strategy()), 0..=180),
        steps in prop::collection::vec(
            (
                prop::option::weighted(0.8, event_strategy()),
                (0i64..=24, 1u32..=4, prop::bool::weighted(0.15), prop::bool::weighted(0.15),
                 prop::bool::weighted(0.1), prop::bool::weighted(0.1)),
                any::<bool>(),
            ),
            1..=10,
        ),
        which in 0usize..3,
    ) {
        let scheduler = &refreshable_schedulers()[which];
        let mut current = anchored(&hosts);
        let mut scratch = ReplicaScratch::new();
        let mut previous: Vec<Replica> = Vec::new();
        let mut added = 1000usize;
        let mut new_snapshots = 0;
        for (k, (event, draw, keep)) in steps.iter().enumerate() {
            let event = event.as_ref().and_then(|e| {
                let name = |h: usize| name_of(&current, h).unwrap_or_default();
                Some(match e {
                    Event::Disk(h, d, (m, a, s)) => ClusterEvent::DiskUpdated { host: name(*h), disk: disk(format!("d{d}"), *m, *a, *s) },
                    Event::DiskRemoved(h, d) => ClusterEvent::DiskRemoved { host: name(*h), disk: format!("d{d}") },
                    Event::State(h, up, cordoned) => ClusterEvent::HostStateChanged {
                        host: name(*h),
                        change: StateChange::default().up(*up).cordoned(*cordoned),
                    },
                    Event::Replaced(h, z, d) => {
                        let mut spec = host(k, *z, d);
                        spec.name = name(*h);
                        ClusterEvent::HostUpdated { host: spec }
                    }
                    Event::Added(z, d) => {
                        added += 1;
                        ClusterEvent::HostAdded { host: host(added, *z, d) }
                    }
                    Event::Removed(h) if current.len() > 1 => ClusterEvent::HostRemoved { host: name(*h) },
                    Event::Removed(_) => return None,
                })
            });
            if let Some(next) = event.and_then(|e| current.apply(&e).ok()) {
                current = next;
                new_snapshots += u64::from(k > 0);
            }
            let volume = stream_volume(k, draw);
            let replicas: Vec<Replica> = if *keep { previous.clone() } else { Vec::new() };
            let warm = scheduler.schedule_with(&mut scratch, &current, &volume, &replicas, 1000).unwrap();
            prop_assert_eq!(&warm, &scheduler.schedule(&current, &volume, &replicas, 1000).unwrap());
            previous = warm.replicas.iter().cloned().map(|mut r| { r.counted = false; r }).collect();
        }
        prop_assert_eq!(scratch.refreshes(), new_snapshots);
        prop_assert_eq!(scratch.rebuilds(), new_snapshots + 1);
    }
}
