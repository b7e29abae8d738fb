//! The replica scheduler as a general engine: the caller's node filters and weighers, disk
//! filters and weighers, and anti-affinity levels beyond zone and node. Each hook's rejections
//! appear in the explanation (and, for filters, the failure reasons) under its name.

use placewise::replica::{
    disk_filter_fn, disk_weigher_fn, Level, ReplicaError, ReplicaScheduler, ReplicaSettings, Volume,
};
use placewise::snapshot::DiskSpec;
use placewise::{filter_fn, weigher_fn, Cluster, Explanation, HostSpec};

const G: i64 = 1 << 30;

fn placed(r: &placewise::replica::ReplicaOutcome) -> Vec<String> {
    r.placed().map(|(_, p)| format!("{}/{}", p.node_id, p.disk_id)).collect()
}

/// The verdicts of `e` that a caller's hook named `name` gave: (host, disk, reason).
fn by(e: &Explanation, name: &str) -> Vec<(String, Option<String>, String)> {
    e.verdicts
        .iter()
        .filter(|v| !v.passed && v.filter.as_deref() == Some(name))
        .map(|v| (v.host.clone(), v.disk.clone(), v.reason.clone().unwrap_or_default()))
        .collect()
}

fn nodes(r: &placewise::replica::ReplicaOutcome) -> Vec<String> {
    let mut v: Vec<String> = r.placed().map(|(_, p)| p.node_id.clone()).collect();
    v.sort();
    v
}

/// Four hosts in four zones; `n1` has the most space and is labelled `maintenance`.
fn maintenance_cluster() -> Cluster {
    Cluster::builder()
        .host(HostSpec::new("n1").zone("z1").label("maintenance", "true").disk(DiskSpec::new("d1", 100 * G, 99 * G)))
        .host(HostSpec::new("n2").zone("z2").disk(DiskSpec::new("d1", 100 * G, 60 * G)))
        .host(HostSpec::new("n3").zone("z3").disk(DiskSpec::new("d1", 100 * G, 60 * G)))
        .host(HostSpec::new("n4").zone("z4").disk(DiskSpec::new("d1", 100 * G, 60 * G)))
        .build()
        .unwrap()
}

fn no_maintenance() -> ReplicaScheduler {
    ReplicaScheduler::builder(ReplicaSettings::default())
        .filter(filter_fn("maintenance", |cx, h| cx.cluster().label(h, "maintenance").is_none()))
        .explain(true)
        .build()
        .unwrap()
}

#[test]
fn caller_filter_keeps_replicas_off_maintenance_hosts() {
    let cluster = maintenance_cluster();
    let volume = Volume::new("vol", G, 3);
    let plain = ReplicaScheduler::new(ReplicaSettings::default()).unwrap();
    assert!(nodes(&plain.schedule(&cluster, &volume, &[], 0).unwrap()).contains(&"n1".to_owned()));

    let r = no_maintenance().schedule(&cluster, &volume, &[], 0).unwrap();
    assert_eq!(nodes(&r), ["n2", "n3", "n4"]);
    assert_eq!(r.condition_message(), None);
    for (_, out) in &r.selections {
        assert_eq!(
            by(&out.explanation, "maintenance"),
            [("n1".to_owned(), None, "rejected by maintenance".to_owned())]
        );
        let counted = out.explanation.rejections.iter().find(|c| c.filter == "maintenance").map(|c| c.count);
        assert_eq!(counted, Some(1));
    }
}

#[test]
fn caller_filter_rejection_is_a_named_reason() {
    let cluster = maintenance_cluster();
    // Four replicas on four nodes, one of them under maintenance: the last one fails.
    let r = no_maintenance().schedule(&cluster, &Volume::new("vol", G, 4), &[], 0).unwrap();
    assert_eq!(r.placed().count(), 3);
    let failed = r.selections.iter().find(|(_, o)| o.placement.is_none()).map(|(_, o)| o).unwrap();
    assert_eq!(failed.reasons.callers(), ["maintenance"]);
    assert_eq!(failed.message().as_deref(), Some("rejected by maintenance"));
    assert_eq!(r.condition_message().as_deref(), Some("rejected by maintenance"));
    // The precheck reports it the same way when no node is left at all.
    let only = Cluster::builder()
        .host(HostSpec::new("m").label("maintenance", "").disk(DiskSpec::new("d1", 100 * G, 99 * G)))
        .build()
        .unwrap();
    let r = no_maintenance().schedule(&only, &Volume::new("vol", G, 1), &[], 0).unwrap();
    assert_eq!(r.precheck_failure.as_deref(), Some("precheck new replica failed: rejected by maintenance"));
}

/// One host, three disks: `d1` has the most space but lists two scheduled replicas.
fn disk_cluster() -> Cluster {
    Cluster::builder()
        .host(
            HostSpec::new("n1")
                .disk(
                    DiskSpec::new("d1", 100 * G, 95 * G)
                        .scheduled_replica("other-r-1")
                        .scheduled_replica("other-r-2")
                        .scheduled(2 * G),
                )
                .disk(DiskSpec::new("d2", 100 * G, 70 * G).scheduled_replica("other-r-3").scheduled(G))
                .disk(DiskSpec::new("d3", 100 * G, 60 * G).tag("evacuating")),
        )
        .build()
        .unwrap()
}

#[test]
fn disk_weigher_prefers_disks_with_fewer_replicas() {
    let cluster = disk_cluster();
    let volume = Volume::new("vol", G, 1);
    let plain = ReplicaScheduler::new(ReplicaSettings::default()).unwrap();
    let r = plain.schedule(&cluster, &volume, &[], 0).unwrap();
    assert_eq!(placed(&r), ["n1/d1"]);

    let fewer = disk_weigher_fn("fewer replicas", |cx| -(cx.disk().scheduled_replicas.len() as f64));
    let s =
        ReplicaScheduler::builder(ReplicaSettings::default()).disk_weigher(fewer, 1.0).explain(true).build().unwrap();
    let r = s.schedule(&cluster, &volume, &[], 0).unwrap();
    assert_eq!(placed(&r), ["n1/d3"]);
    // The ranking starts with the placed disk, the caller's disk score before the choice's terms.
    let top = &r.selections[0].1.explanation.top[0];
    assert_eq!((top.host.as_str(), top.disk.as_deref()), ("n1", Some("d3")));
    let terms: Vec<&str> = top.terms.iter().map(|t| t.weigher.as_str()).collect();
    assert_eq!(terms, ["disk weighers", "node balance", "disk balance"]);
    // A weigher rejects nothing: no verdict names it.
    assert!(r.selections[0].1.explanation.verdicts.iter().all(|v| v.filter.as_deref() != Some("fewer replicas")));

    // With a disk filter keeping evacuating disks out, the weigher picks among the rest, and the
    // explanation names the filter on the disk it rejected.
    let fewer = disk_weigher_fn("fewer replicas", |cx| -(cx.disk().scheduled_replicas.len() as f64));
    let s = ReplicaScheduler::builder(ReplicaSettings::default())
        .disk_filter(disk_filter_fn("not evacuating", |cx| {
            !cx.disk().tags.iter().any(|&t| cx.cluster().resolve(t) == "evacuating")
        }))
        .disk_weigher(fewer, 1.0)
        .explain(true)
        .build()
        .unwrap();
    let r = s.schedule(&cluster, &volume, &[], 0).unwrap();
    assert_eq!(placed(&r), ["n1/d2"]);
    let out = &r.selections[0].1;
    let d3 = cluster.disk(cluster.host_id("n1").unwrap(), placewise::id::DiskId(2)).unwrap().name.to_string();
    assert_eq!(
        by(&out.explanation, "not evacuating"),
        [("n1".to_owned(), Some(d3), "rejected by not evacuating".to_owned())]
    );
}

#[test]
fn disk_filter_rejection_is_a_named_reason() {
    let cluster = disk_cluster();
    let s = ReplicaScheduler::builder(ReplicaSettings::default())
        .disk_filter(disk_filter_fn("tiny disks only", |cx| cx.space().maximum < G))
        .build()
        .unwrap();
    let r = s.schedule(&cluster, &Volume::new("vol", G, 1), &[], 0).unwrap();
    assert_eq!(r.placed().count(), 0);
    assert_eq!(r.precheck_failure.as_deref(), Some("precheck new replica failed: rejected by tiny disks only"));
}

/// Four hosts in one zone, two racks of two.
fn rack_cluster() -> Cluster {
    let host = |name: &str, rack: &str, avail: i64| {
        HostSpec::new(name).zone("z1").label("rack", rack).disk(DiskSpec::new("d1", 100 * G, avail * G))
    };
    Cluster::builder()
        .host(host("n1", "r1", 90))
        .host(host("n2", "r1", 89))
        .host(host("n3", "r2", 60))
        .host(host("n4", "r2", 59))
        .build()
        .unwrap()
}

#[test]
fn hard_rack_level_never_puts_two_replicas_in_one_rack() {
    let cluster = rack_cluster();
    let volume = Volume::new("vol", G, 3);
    let plain = ReplicaScheduler::new(ReplicaSettings::default()).unwrap();
    assert_eq!(plain.schedule(&cluster, &volume, &[], 0).unwrap().placed().count(), 3);

    let s =
        ReplicaScheduler::builder(ReplicaSettings::default()).level(Level::hard("rack")).explain(true).build().unwrap();
    let r = s.schedule(&cluster, &volume, &[], 0).unwrap();
    let racks: Vec<&str> = r.placed().map(|(_, p)| cluster.label(p.host, "rack").unwrap()).collect();
    assert_eq!(racks.len(), 2);
    assert_ne!(racks[0], racks[1]);
    // The third replica fails as an anti-affinity failure (no Longhorn key), and the explanation
    // names the level on the hosts it excluded.
    let failed = r.selections.iter().find(|(_, o)| o.placement.is_none()).map(|(_, o)| o).unwrap();
    assert!(failed.reasons.is_empty());
    // The two unused nodes (the used ones are out by node anti-affinity) are in used racks.
    let named = by(&failed.explanation, "rack anti-affinity");
    assert_eq!(named.len(), 2);
    for (_, disk, reason) in &named {
        assert_eq!(*disk, None);
        assert!(reason.ends_with("already used (rack level, hard)"), "{reason}");
    }
    assert_eq!(r.condition_message().as_deref(), Some("replica scheduling failed"));
}

#[test]
fn soft_rack_level_prefers_a_new_rack() {
    let cluster = rack_cluster();
    let volume = Volume::new("vol", G, 3);
    let plain = ReplicaScheduler::new(ReplicaSettings::default()).unwrap();
    let r = plain.schedule(&cluster, &volume, &[], 0).unwrap();
    // Longhorn alone fills rack r1 first (it has the most space).
    let racks: Vec<&str> = r.placed().map(|(_, p)| cluster.label(p.host, "rack").unwrap()).collect();
    assert_eq!(racks[..2], ["r1", "r1"]);

    let s = ReplicaScheduler::builder(ReplicaSettings::default()).level(Level::soft("rack")).build().unwrap();
    let r = s.schedule(&cluster, &volume, &[], 0).unwrap();
    let racks: Vec<&str> = r.placed().map(|(_, p)| cluster.label(p.host, "rack").unwrap()).collect();
    assert_eq!(racks.len(), 3);
    assert_ne!(racks[0], racks[1]);
}

#[test]
fn a_topology_level_works_as_a_level_too() {
    let host = |name: &str, row: &str| {
        HostSpec::new(name).zone("z1").topology("row", row).disk(DiskSpec::new("d1", 100 * G, 90 * G))
    };
    let cluster = Cluster::builder()
        .topology_levels(["zone", "row"])
        .host(host("n1", "a"))
        .host(host("n2", "a"))
        .host(host("n3", "b"))
        .build()
        .unwrap();
    let s = ReplicaScheduler::builder(ReplicaSettings::default()).level(Level::hard("row")).build().unwrap();
    let r = s.schedule(&cluster, &Volume::new("vol", G, 3), &[], 0).unwrap();
    let mut rows: Vec<&str> = r.placed().map(|(_, p)| if p.node_id == "n3" { "b" } else { "a" }).collect();
    rows.sort();
    assert_eq!(rows, ["a", "b"]);
}

#[test]
fn node_weigher_orders_nodes_within_a_tier() {
    let cluster = maintenance_cluster();
    let volume = Volume::new("vol", G, 1);
    // n4 is the preferred host; the balance score alone would take n1.
    let s = ReplicaScheduler::builder(ReplicaSettings::default())
        .weigher(weigher_fn("preferred", |cx, h| if cx.host(h).name.as_ref() == "n4" { 1.0 } else { 0.0 }), 1.0)
        .build()
        .unwrap();
    let r = s.schedule(&cluster, &volume, &[], 0).unwrap();
    assert_eq!(placed(&r), ["n4/d1"]);
    // Weighers order nodes within a tier; they do not override anti-affinity: a second replica
    // goes to a new node although n4 is preferred.
    let r = s.schedule(&cluster, &Volume::new("vol", G, 2), &[], 0).unwrap();
    assert_eq!(nodes(&r).len(), 2);
    assert!(nodes(&r).contains(&"n4".to_owned()));
}

/// Node weighers see the replicas placed earlier in the call as their context's overlay, as a
/// request's earlier instances in the core: with soft node anti-affinity on two nodes, the
/// disk choice alone puts the third and fourth replicas on the roomier node; a weigher counting
/// each node's earlier picks puts the fourth on the other.
#[test]
fn a_node_weigher_sees_the_calls_earlier_replicas() {
    let cluster = Cluster::builder()
        .host(HostSpec::new("big").disk(DiskSpec::new("d1", 1000 * G, 900 * G)))
        .host(HostSpec::new("small").disk(DiskSpec::new("d1", 100 * G, 90 * G)))
        .build()
        .unwrap();
    let mut settings = ReplicaSettings::default();
    settings.replica_soft_anti_affinity = true;
    let volume = Volume::new("vol", G, 4);
    let count =
        |r: &placewise::replica::ReplicaOutcome, node: &str| r.placed().filter(|(_, p)| p.node_id == node).count();
    let plain = ReplicaScheduler::new(settings.clone()).unwrap().schedule(&cluster, &volume, &[], 0).unwrap();
    assert_eq!((count(&plain, "big"), count(&plain, "small")), (3, 1));
    let fewest = weigher_fn("fewest placed", |cx, h| -(cx.instances(h) as f64));
    let s = ReplicaScheduler::builder(settings).weigher(fewest, 1.0).build().unwrap();
    let r = s.schedule(&cluster, &volume, &[], 0).unwrap();
    assert_eq!((count(&r, "big"), count(&r, "small")), (2, 2));
}

#[test]
fn builder_without_hooks_is_longhorn_and_refuses_bad_input() {
    let cluster = maintenance_cluster();
    let volume = Volume::new("vol", G, 3);
    let built = ReplicaScheduler::builder(ReplicaSettings::default()).build().unwrap();
    let plain = ReplicaScheduler::new(ReplicaSettings::default()).unwrap();
    assert_eq!(built.schedule(&cluster, &volume, &[], 0).unwrap(), plain.schedule(&cluster, &volume, &[], 0).unwrap());
    let bad =
        ReplicaScheduler::builder(ReplicaSettings::default()).weigher(weigher_fn("w", |_, _| 0.0), f64::NAN).build();
    // The node hooks' one check, shared by every engine's builder, with its error as source.
    assert!(matches!(&bad, Err(ReplicaError::Build { error }) if error.to_string().contains("weigher `w`")), "{bad:?}");
    let bad = ReplicaScheduler::builder(ReplicaSettings::default()).level(Level::hard("")).build();
    assert!(matches!(bad, Err(ReplicaError::EmptyLevelKey)));
}

mod neutral {
    //! With no hooks, or hooks that reject nothing and rank everything equal, every result
    //! equals Longhorn's path.

    use super::*;
    use placewise::replica::{LonghornVersion, Replica};
    use placewise::snapshot::HostState;
    use proptest::prelude::*;

    fn cluster_strategy() -> impl Strategy<Value = Cluster> {
        let disk = (1i64..=20, 0i64..=100, 0i64..=120, 0u8..8);
        let host = (0usize..3, 0u8..8, prop::collection::vec(disk, 1..=3));
        prop::collection::vec(host, 2..=9).prop_map(|hosts| {
            let mut b = Cluster::builder();
            for (i, (zone, flags, disks)) in hosts.into_iter().enumerate() {
                let state = HostState { up: flags != 0, cordoned: flags == 1, ..HostState::default() };
                let mut h = HostSpec::new(format!("n{i}")).zone(format!("z{zone}")).state(state);
                for (d, (m, a, s, f)) in disks.into_iter().enumerate() {
                    let max = m * G;
                    let spec = DiskSpec::new(format!("d{d}"), max, max * a / 100)
                        .scheduled(max * s / 100)
                        .allow_scheduling(f != 0)
                        .ready(f != 1);
                    h = h.disk(spec);
                }
                b = b.host(h);
            }
            b.build().unwrap()
        })
    }

    fn neutral(settings: ReplicaSettings, version: LonghornVersion) -> ReplicaScheduler {
        ReplicaScheduler::builder(settings)
            .version(version)
            .filter(filter_fn("everyone", |_, _| true))
            .disk_filter(disk_filter_fn("every disk", |_| true))
            .weigher(weigher_fn("flat", |_, _| 1.0), 2.0)
            .disk_weigher(disk_weigher_fn("flat disks", |_| 3.0), 1.0)
            // Every host has the label with one value (`one_domain`): every host is in one
            // domain, so a soft level only ever relaxes to the tier as it was. (A label no host
            // has is refused: `ReplicaError::UnknownLevel`.)
            .level(Level::soft("everywhere"))
            .build()
            .unwrap()
    }

    /// `cluster` with the label `everywhere=one` on every host.
    fn one_domain(cluster: &Cluster) -> Cluster {
        let mut spec = cluster.to_spec();
        for host in &mut spec.hosts {
            host.labels.insert("everywhere".into(), "one".into());
        }
        Cluster::from_spec(&spec).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        #[test]
        fn neutral_hooks_change_nothing(
            cluster in cluster_strategy(),
            soft in any::<[bool; 3]>(),
            v110 in any::<bool>(),
            volumes in prop::collection::vec((1i64..=12, 1u32..=4), 1..=3),
        ) {
            let mut settings = ReplicaSettings::default();
            settings.replica_soft_anti_affinity = soft[0];
            settings.replica_zone_soft_anti_affinity = soft[1];
            settings.replica_disk_soft_anti_affinity = soft[2];
            let version = if v110 { LonghornVersion::V1_10 } else { LonghornVersion::Head };
            let cluster = one_domain(&cluster);
            let plain = ReplicaScheduler::builder(settings.clone()).version(version).build().unwrap();
            let built = ReplicaScheduler::builder(settings.clone()).version(version).build().unwrap();
            let hooked = neutral(settings, version);
            let mut existing: Vec<Replica> = Vec::new();
            for (size, count) in volumes {
                let volume = Volume::new("vol", size * G, count);
                let want = plain.schedule(&cluster, &volume, &existing, 0).unwrap();
                prop_assert_eq!(&built.schedule(&cluster, &volume, &existing, 0).unwrap(), &want);
                prop_assert_eq!(&hooked.schedule(&cluster, &volume, &existing, 0).unwrap(), &want);
                // The next volume call sees these replicas as existing (a replenishment).
                existing = want.replicas.clone();
                existing.pop();
            }
        }
    }
}

#[test]
fn a_failed_replica_on_a_rejected_host_is_not_reused() {
    use placewise::replica::{Replica, Robustness};
    let cluster = maintenance_cluster();
    let mut volume = Volume::new("vol", G, 2);
    volume.robustness = Robustness::Degraded;
    let mut healthy = Replica::new("vol-r-1");
    healthy.node_id = "n2".into();
    healthy.disk_id = "d1".into();
    let mut failed = Replica::new("vol-r-2");
    failed.node_id = "n1".into();
    failed.disk_id = "d1".into();
    failed.failed_at = Some(10);
    failed.healthy_at = Some(5);
    let replicas = [healthy, failed];
    let plain = ReplicaScheduler::new(ReplicaSettings::default()).unwrap();
    assert_eq!(plain.reusable_failed_replica(&cluster, &volume, &replicas, "").unwrap(), Some(1));
    assert_eq!(no_maintenance().reusable_failed_replica(&cluster, &volume, &replicas, "").unwrap(), None);
}

/// Issue 42.1: twelve hosts in three racks (one zone), a hard rack level, a caller filter
/// `maintenance` on `maint` hosts (in racks 1 and 2).
fn racks(maint: &[usize]) -> Cluster {
    let mut b = Cluster::builder();
    for i in 0..12 {
        let mut h = HostSpec::new(format!("n{i:02}"))
            .zone("z1")
            .label("rack", format!("r{}", i % 3))
            .disk(DiskSpec::new("d1", 100 * G, 90 * G - i as i64 * G));
        if maint.contains(&i) {
            h = h.label("maintenance", "true");
        }
        b = b.host(h);
    }
    b.build().unwrap()
}

fn rack_scheduler(explain: bool) -> ReplicaScheduler {
    ReplicaScheduler::builder(ReplicaSettings::default())
        .filter(filter_fn("maintenance", |cx, h| cx.cluster().label(h, "maintenance").is_none()))
        .level(Level::hard("rack"))
        .explain(explain)
        .build()
        .unwrap()
}

/// The binding rule is the rule of the last candidate ruled out in Longhorn's step order: a
/// caller filter that only dropped hosts the hard level excludes anyway binds nothing, so it is
/// named neither in Longhorn's message, nor in the replica's explanation message, nor in the
/// stop of `capacity::volumes`; each names the rack level, and says what it says without the
/// filter.
#[test]
fn a_filter_that_binds_nothing_is_not_named_and_the_stop_names_the_binding_rule() {
    let volume = Volume::new("vol", G, 4);
    for maint in [&[1usize, 2][..], &[]] {
        let cluster = racks(maint);
        let r = rack_scheduler(true).schedule(&cluster, &volume, &[], 0).unwrap();
        assert_eq!(r.placed().count(), 3, "one replica per rack");
        let failed = r.selections.iter().find(|(_, o)| o.placement.is_none()).map(|(_, o)| o).unwrap();
        // Longhorn's text as Longhorn writes it: an anti-affinity-only failure.
        assert_eq!(r.condition_message().as_deref(), Some("replica scheduling failed"), "{maint:?}");
        assert_eq!(failed.explanation.message.as_deref(), Some("replica scheduling failed"));
        assert!(failed.reasons.callers().is_empty());
        // The maintenance hosts keep their verdicts; the binding rule is the level's.
        assert_eq!(by(&failed.explanation, "maintenance").len(), maint.len());
        let binding = failed.binding.as_ref().unwrap();
        assert_eq!(binding.filter, "rack anti-affinity");
        assert!(binding.reason.ends_with("already used (rack level, hard)"), "{}", binding.reason);
        assert!(failed.explanation.rejections.contains(binding));
        // The count stops at the same rule, with or without the scheduler's explanation.
        for explain in [true, false] {
            let cap = placewise::capacity::volumes(&rack_scheduler(explain), &cluster, &volume, 10).unwrap();
            assert_eq!(cap.total, 0);
            assert_eq!(cap.stop.as_deref(), Some(binding.reason.as_str()));
            assert_eq!(cap.message.as_deref(), Some("replica scheduling failed"));
        }
    }
}

/// A caller filter that drops a host no later hard rule excludes is what binds the replica:
/// it stays named in Longhorn's message (`caller_filter_rejection_is_a_named_reason`); the
/// binding rule, the last candidate's, is then the node anti-affinity that ruled out the
/// hosts left.
#[test]
fn a_filter_that_binds_is_named_and_the_last_rule_is_the_binding_one() {
    let r = no_maintenance().schedule(&maintenance_cluster(), &Volume::new("vol", G, 4), &[], 0).unwrap();
    let failed = r.selections.iter().find(|(_, o)| o.placement.is_none()).map(|(_, o)| o).unwrap();
    assert_eq!(r.condition_message().as_deref(), Some("rejected by maintenance"));
    let binding = failed.binding.as_ref().unwrap();
    assert_eq!(
        (binding.filter.as_str(), binding.reason.as_str(), binding.count),
        ("node anti-affinity", "holds a replica of this volume (node anti-affinity, hard)", 3)
    );
    // A placed replica has no binding rule.
    assert!(r.selections.iter().filter(|(_, o)| o.placement.is_some()).all(|(_, o)| o.binding.is_none()));
}
