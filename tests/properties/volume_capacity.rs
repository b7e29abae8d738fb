//! `capacity::volumes` (the count without an engine call per volume) against
//! `capacity::volumes_stepwise` (one `schedule` per volume, the reference): every field
//! of the answer must be equal, the resulting cluster included (its spec and its generation).
//!
//! Generated: 2–40 hosts in 1–5 zones (or none), 1–4 disks each (varied maximum / available /
//! reserved / scheduled bytes, tags, `allow_scheduling`, eviction, `ready`, a reported
//! `Schedulable` condition now and then, some of them listing scheduled replicas), some hosts
//! down, disabled, evicting, cordoned or tagged; half of the clusters uniform (every host the
//! same disks, so the balance score ties everywhere); settings with every anti-affinity
//! combination, both percentages, the allow-empty flags, best-effort auto-balance with a
//! disk-pressure percentage; both Longhorn versions and both disk choices; volumes of 1–6
//! replicas with node and disk selectors, anti-affinity overrides and now and then a size of 0,
//! a huge size or more replicas than the engine accepts; a caller hook now and then (the count
//! then falls back to the stepwise loop).

use placewise::capacity::{self, VolumeCapacity};
use placewise::replica::{disk_weigher_fn, DiskChoice, LonghornVersion, ReplicaScheduler, ReplicaSettings, Volume};
use placewise::snapshot::{Cluster, ClusterSpec, DiskSpec, HostSpec};
use proptest::prelude::*;

use crate::replica_gen;

use crate::support;

const G: i64 = 1 << 30;

/// `(max quarter-GiB × 4, avail %, reserved %, scheduled %, tags, flags, listed)`.
type DiskGen = (i64, u32, u32, u32, u8, u8, u8);

fn disk_gen() -> impl Strategy<Value = DiskGen> {
    // Mostly usable disks, so that most counts run for several volumes.
    (
        1i64..=40,
        prop::sample::select(vec![100u32, 100, 90, 60, 30, 5, 0]),
        prop::sample::select(vec![0u32, 0, 10, 40]),
        prop::sample::select(vec![0u32, 0, 0, 10, 30, 60, 120]),
        0u8..12,
        0u8..40,
        0u8..4,
    )
}

fn disk(index: usize, (max_q, avail_pct, res_pct, sched_pct, tags, flags, listed): DiskGen) -> DiskSpec {
    let max = max_q * G;
    let mut d = replica_gen::disk(index, max, avail_pct, res_pct, sched_pct)
        .allow_scheduling(flags != 1)
        .eviction_requested(flags == 2)
        .ready(flags != 3);
    if flags == 4 {
        d.schedulable = Some(true);
    }
    if flags == 5 {
        d.schedulable = Some(false);
    }
    // A quarter of the disks tagged: without allow-empty, a tagged disk takes no volume without
    // a disk selector.
    d.tags = if tags < 4 { replica_gen::subset(&replica_gen::DISK_TAGS, tags) } else { Vec::new() };
    for i in 0..listed {
        d.scheduled_replicas.push(format!("other-r-{index}{i}"));
    }
    d
}

/// `(zone, node tags, [up, enabled, cordoned, evicting], disks)`.
type HostGen = (usize, u8, [u8; 4], Vec<DiskGen>);

fn host_gen() -> impl Strategy<Value = HostGen> {
    (0usize..5, 0u8..12, [0u8..24, 0u8..24, 0u8..12, 0u8..32], prop::collection::vec(disk_gen(), 1..=4))
}

fn cluster_gen() -> impl Strategy<Value = ClusterSpec> {
    (0usize..=5, any::<bool>(), prop::collection::vec(host_gen(), 2..=40)).prop_map(|(zones, uniform, hosts)| {
        let template = hosts[0].3.clone();
        let hosts = hosts
            .into_iter()
            .enumerate()
            .map(|(i, (z, tags, draws, disks))| {
                let state = replica_gen::host_state(draws);
                let mut h = HostSpec::new(format!("n{i:02}")).state(state);
                if zones > 0 {
                    h = h.zone(format!("z{}", z % zones));
                }
                for t in replica_gen::subset(&replica_gen::NODE_TAGS, if tags < 4 { tags } else { 0 }) {
                    h = h.label(t, "");
                }
                let disks = if uniform { &template } else { &disks };
                h.disks = disks.iter().enumerate().map(|(i, &d)| disk(i, d)).collect();
                h
            })
            .collect();
        let mut spec = ClusterSpec::default();
        spec.hosts = hosts;
        spec
    })
}

fn volume_gen() -> impl Strategy<Value = Volume> {
    (
        0i64..=24,
        1u32..=6,
        0u8..4,
        0u8..4,
        0u8..12,
        replica_gen::soft_override(),
        replica_gen::soft_override(),
        replica_gen::soft_override(),
    )
        .prop_map(|(size_q, replicas, node_sel, disk_sel, shape, node, zone, disk)| {
            let size = match shape {
                9 => 0,
                10 => 1 << 46,
                _ => size_q.max(1) * G / 2,
            };
            let replicas = if shape == 11 { 101 } else { replicas };
            let mut v = Volume::new("vol", size, replicas);
            if shape == 0 || shape == 2 {
                v.node_selector = replica_gen::subset(&replica_gen::NODE_TAGS, node_sel);
            }
            if shape == 1 || shape == 2 {
                v.disk_selector = replica_gen::subset(&replica_gen::DISK_TAGS, disk_sel);
            }
            v.replica_soft_anti_affinity = node;
            v.replica_zone_soft_anti_affinity = zone;
            v.replica_disk_soft_anti_affinity = disk;
            v
        })
}

fn scheduler_gen() -> impl Strategy<Value = (ReplicaSettings, LonghornVersion, DiskChoice, u8, u64)> {
    (
        replica_gen::settings(true),
        prop::sample::select(vec![LonghornVersion::Head, LonghornVersion::V1_10]),
        prop::sample::select(vec![DiskChoice::BalanceScore, DiskChoice::MostUsableStorage]),
        0u8..16,
        0u64..4,
    )
}

fn assert_same(fast: &VolumeCapacity, slow: &VolumeCapacity) -> Result<(), TestCaseError> {
    prop_assert_eq!(fast.total, slow.total);
    prop_assert_eq!(fast.capped, slow.capped);
    prop_assert_eq!(&fast.replicas, &slow.replicas);
    prop_assert_eq!(&fast.disks, &slow.disks);
    prop_assert_eq!(&fast.stop, &slow.stop);
    prop_assert_eq!(fast.cluster.generation(), slow.cluster.generation());
    // Not printed when they differ: a spec is long.
    prop_assert!(fast.cluster.to_spec() == slow.cluster.to_spec(), "the resulting clusters differ");
    for ((a, ha), (b, hb)) in fast.cluster.hosts().zip(slow.cluster.hosts()) {
        prop_assert_eq!((a, ha.generation), (b, hb.generation));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_count_equals_the_stepwise_loop(
        spec in cluster_gen(),
        (settings, version, choice, hook, seed) in scheduler_gen(),
        volume in volume_gen(),
        limit in prop::sample::select(vec![1u32, 3, 40, 400]),
    ) {
        let cluster = Cluster::from_spec(&spec).unwrap();
        let builder = ReplicaScheduler::builder(settings).version(version).disk_choice(choice).seed(seed);
        let s = if hook == 0 {
            builder
                .disk_weigher(disk_weigher_fn("fewer replicas", |cx| -(cx.disk().scheduled_replicas.len() as f64)), 1.0)
                .build()
                .unwrap()
        } else {
            builder.build().unwrap()
        };
        let fast = capacity::volumes(&s, &cluster, &volume, limit).unwrap();
        let slow = capacity::volumes_stepwise(&s, &cluster, &volume, limit).unwrap();
        assert_same(&fast, &slow)?;
    }
}

/// Many hosts, uniform disks: the balance score's ties and the tree's depth.
#[test]
fn a_uniform_cluster_of_300_hosts_counts_as_the_loop() {
    let cluster = support::uniform_storage_cluster(300);
    for (node, zone) in [(false, true), (true, true), (false, false), (true, false)] {
        let mut settings = ReplicaSettings::default();
        settings.replica_soft_anti_affinity = node;
        settings.replica_zone_soft_anti_affinity = zone;
        for choice in [DiskChoice::BalanceScore, DiskChoice::MostUsableStorage] {
            let s = ReplicaScheduler::builder(settings.clone()).disk_choice(choice).build().unwrap();
            let volume = Volume::new("v", 300 * G, 3);
            let fast = capacity::volumes(&s, &cluster, &volume, 5_000).unwrap();
            let slow = capacity::volumes_stepwise(&s, &cluster, &volume, 5_000).unwrap();
            assert_same(&fast, &slow).unwrap();
            assert!(fast.total > 100, "{}", fast.total);
        }
    }
}
