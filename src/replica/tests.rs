//! The reference's test vectors (TV1–TV17, space formulas) and the seed's Disk X / Disk Y example.

use super::*;
use crate::snapshot::Cluster;
use crate::snapshot::{DiskSpec, DiskType, HostSpec, HostState};

const G: i64 = 1 << 30;

fn host(name: &str, disks: &[(&str, i64, i64)]) -> HostSpec {
    disks.iter().fold(HostSpec::new(name), |h, &(d, max, avail)| h.disk(DiskSpec::new(d, max, avail)))
}

fn cluster(hosts: Vec<HostSpec>) -> Cluster {
    hosts.into_iter().fold(Cluster::builder(), |b, h| b.host(h)).build().unwrap()
}

fn sched(f: impl FnOnce(&mut ReplicaSettings)) -> ReplicaScheduler {
    let mut s = ReplicaSettings::default();
    f(&mut s);
    ReplicaScheduler::new(s).unwrap()
}

/// `s` (without hooks) built again with its settings and the options `f` sets.
fn rebuilt(
    s: &ReplicaScheduler,
    f: impl FnOnce(ReplicaSchedulerBuilder) -> ReplicaSchedulerBuilder,
) -> ReplicaScheduler {
    f(ReplicaScheduler::builder(s.settings().clone())).build().unwrap()
}

/// Places `n` replicas of a new volume; returns "node/disk" per placed replica, then the message.
fn place(s: &ReplicaScheduler, c: &Cluster, v: &Volume, existing: &[Replica]) -> (Vec<String>, Option<String>) {
    let r = s.schedule(c, v, existing, 1000).unwrap();
    (r.placed().map(|(_, p)| format!("{}/{}", p.node_id, p.disk_id)).collect(), r.condition_message())
}

fn one(s: &ReplicaScheduler, c: &Cluster, v: &Volume, mut existing: Vec<Replica>) -> ReplicaSelection {
    existing.push(Replica::new("zz-new"));
    let i = existing.len() - 1;
    s.schedule_replica(c, v, &existing, i, 1000).unwrap()
}

fn at(o: &ReplicaSelection) -> String {
    match &o.placement {
        Some(p) => format!("{}/{}", p.node_id, p.disk_id),
        None => format!("FAIL[{}]", o.reasons.joined()),
    }
}

#[test]
fn space_formula_vectors() {
    let chk = |max, avail, reserved, scheduled, size, actual, min, over| {
        is_schedulable_to_disk(size, actual, DiskSpace::new(max, avail, reserved, scheduled), min, over)
    };
    assert!(chk(1000, 251, 0, 0, 0, 0, 25, 100).is_ok());
    assert!(matches!(chk(1000, 250, 0, 0, 0, 0, 25, 100), Err(SpaceFailure::ActualSpace { minimal: 250, .. })));
    assert!(chk(999, 250, 0, 0, 0, 0, 25, 100).is_ok());
    assert!(chk(1000, 300, 0, 0, 0, 50, 25, 100).is_err());
    assert!(chk(1000, 1000, 200, 700, 100, 0, 0, 100).is_ok());
    assert!(matches!(
        chk(1000, 1000, 200, 700, 101, 0, 0, 100),
        Err(SpaceFailure::SchedulingSpace { total: 801, limit: 800, .. })
    ));
    assert!(chk(1000, 1000, 200, 1500, 100, 0, 0, 200).is_ok());
    assert!(matches!(chk(999, 999, 0, 330, 0, 0, 0, 33), Err(SpaceFailure::SchedulingSpace { limit: 329, .. })));
    assert_eq!(chk(0, 10, 0, 0, 0, 0, 25, 100).unwrap_err().to_string(), "Storage Max must be greater than 0");
    assert_eq!(chk(10, 0, 0, 0, 0, 0, 0, 100).unwrap_err().to_string(), "Storage Available must be greater than 0");
    // Docs Y and X.
    assert!(chk(8 * G, 2 * G, G, 2 * G, G, 0, 10, 100).is_ok());
    assert!(chk(8 * G, 2 * G, G, 2 * G, G, 0, 25, 100).is_err());
    assert!(chk(4 * G, G, 0, 0, G, 0, 25, 100).is_err());
    assert!(chk(4 * G, G, 0, 0, G, 0, 10, 100).is_ok());
    assert!(chk(4 * G, G, 0, 0, G, 0, 0, 100).is_ok());
}

#[test]
fn detail_messages_are_verbatim() {
    let e = is_schedulable_to_disk(0, 0, DiskSpace::new(1000, 250, 0, 0), 25, 100).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Actual space usage condition failed: CurrentAvailable = 250 (StorageAvailable - Required) is less than or \
         equal to MinimalAvailable = 250 (25% of Storage Max)."
    );
    let e = is_schedulable_to_disk(101, 0, DiskSpace::new(1000, 1000, 200, 700), 0, 100).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Scheduling space condition failed: ScheduledTotal = 801 (Size + StorageScheduled) is greater than \
         ProvisionedLimit = 800 (100% of StorageMax - StorageReserved). "
    );
}

fn docs_cluster() -> Cluster {
    cluster(vec![HostSpec::new("nodeA")
        .disk(DiskSpec::new("X", 4 * G, G))
        .disk(DiskSpec::new("Y", 8 * G, 2 * G).reserved(G).scheduled(2 * G))])
}

/// The seed's worked example and TV1a–d.
#[test]
fn tv1_docs_disk_x_disk_y() {
    let c = docs_cluster();
    let v = Volume::new("v", G, 1);
    let o = one(&sched(|_| {}), &c, &v, vec![]);
    assert_eq!(at(&o), "FAIL[disks are unavailable]");
    assert_eq!(at(&one(&sched(|s| s.storage_minimal_available_percentage = 10), &c, &v, vec![])), "nodeA/X");
    let v512 = Volume::new("v", 512 << 20, 1);
    assert_eq!(at(&one(&sched(|s| s.storage_minimal_available_percentage = 10), &c, &v512, vec![])), "nodeA/X");
    assert_eq!(at(&one(&sched(|s| s.storage_minimal_available_percentage = 0), &c, &v, vec![])), "nodeA/X");
    // Seed stage 2: X already hosts a replica; hard disk anti-affinity goes to Y, soft prefers Y.
    let s = sched(|s| {
        s.storage_minimal_available_percentage = 10;
        s.replica_soft_anti_affinity = true;
        s.replica_disk_soft_anti_affinity = false;
    });
    assert_eq!(at(&one(&s, &c, &v, vec![Replica::on("a", "nodeA", "X")])), "nodeA/Y");
    let soft = sched(|s| {
        s.storage_minimal_available_percentage = 10;
        s.replica_soft_anti_affinity = true;
    });
    assert_eq!(at(&one(&soft, &c, &v, vec![Replica::on("a", "nodeA", "X")])), "nodeA/Y");
    // Y unsuitable (tags): hard fails with no reason… from anti-affinity; soft falls back to X.
    let c2 = cluster(vec![HostSpec::new("nodeA")
        .disk(DiskSpec::new("X", 4 * G, G).tag("t"))
        .disk(DiskSpec::new("Y", 8 * G, 2 * G).reserved(G).scheduled(2 * G))]);
    let mut vt = v.clone();
    vt.disk_selector = vec!["t".into()];
    assert_eq!(at(&one(&s, &c2, &vt, vec![Replica::on("a", "nodeA", "X")])), "FAIL[tags not fulfilled]");
    assert_eq!(at(&one(&soft, &c2, &vt, vec![Replica::on("a", "nodeA", "X")])), "nodeA/X");
}

#[test]
fn tv2_docs_balance_example() {
    let t = 1000 * G;
    let s = sched(|s| s.storage_minimal_available_percentage = 5);
    let a = host("A", &[("A1", t, 900 * G), ("A2", t, 100 * G)]);
    let b = host("B", &[("B1", t, 600 * G), ("B2", t, 700 * G)]);
    let v = Volume::new("v", 100 * G, 1);
    let c = cluster(vec![a.clone(), b.clone()]);
    assert_eq!(at(&one(&s, &c, &v, vec![])), "B/B1");
    assert_eq!(at(&one(&s, &cluster(vec![b]), &v, vec![])), "B/B2");
    let old = rebuilt(&s, |b| b.version(LonghornVersion::V1_10));
    assert_eq!(at(&one(&old, &c, &v, vec![])), "A/A1");
}

/// With an explanation, `top` ranks the candidates as the disk choice compared them: the placed
/// disk first, then the rest in the rule's order, each with the rule's terms.
#[test]
fn top_ranks_the_disk_choice_with_its_terms() {
    let t = 1000 * G;
    let s = sched(|s| s.storage_minimal_available_percentage = 5);
    let c = cluster(vec![
        host("A", &[("A1", t, 900 * G), ("A2", t, 100 * G)]),
        host("B", &[("B1", t, 600 * G), ("B2", t, 700 * G)]),
    ]);
    let v = Volume::new("v", 100 * G, 1);
    let key = |o: &ReplicaSelection| -> Vec<String> {
        o.explanation.top.iter().map(|r| format!("{}/{}", r.host, r.disk.as_deref().unwrap_or("?"))).collect()
    };
    // Balance score: node B leaves the nodes more even; on B, B1 leaves the disks more even.
    let o = one(&rebuilt(&s, |b| b.explain(true)), &c, &v, vec![]);
    assert_eq!(at(&o), "B/B1");
    assert_eq!(key(&o), ["B/B1", "B/B2", "A/A1"]);
    let first = &o.explanation.top[0];
    let names: Vec<&str> = first.terms.iter().map(|t| t.weigher.as_str()).collect();
    assert_eq!(names, ["node balance", "disk balance"]);
    assert!(first.terms.iter().all(|t| t.multiplier == -1.0 && t.weighted == -t.raw));
    let node = |r: &crate::explain::RankedHost| r.terms[0].raw;
    assert_eq!(node(&o.explanation.top[0]), node(&o.explanation.top[1]), "one node, one node score");
    assert!(node(&o.explanation.top[1]) < node(&o.explanation.top[2]));
    assert!(o.explanation.top[0].terms[1].raw <= o.explanation.top[1].terms[1].raw, "equal scores keep disk order");
    // v1.10: the most usable storage, largest first.
    let old = rebuilt(&s, |b| b.version(LonghornVersion::V1_10).explain(true));
    let o = one(&old, &c, &v, vec![]);
    assert_eq!(at(&o), "A/A1");
    assert_eq!(key(&o), ["A/A1", "B/B2", "B/B1"]);
    let raws: Vec<f64> = o.explanation.top.iter().map(|r| r.terms[0].raw).collect();
    assert_eq!(raws, [(900 * G) as f64, (700 * G) as f64, (600 * G) as f64]);
    // Without an explanation there is no ranking.
    assert!(one(&s, &c, &v, vec![]).explanation.top.is_empty());
}

fn tv3_cluster() -> Cluster {
    let d = |n: &str, z: &str| host(n, &[("d1", 100 * G, 80 * G)]).zone(z);
    cluster(vec![d("n1", "z1"), d("n2", "z1"), d("n3", "z2"), d("n4", "z3")])
}

#[test]
fn tv3_tv4_tiers() {
    let c = tv3_cluster();
    let s = sched(|_| {});
    let (p, m) = place(&s, &c, &Volume::new("v", G, 3), &[]);
    assert_eq!(p, ["n1/d1", "n3/d1", "n4/d1"]);
    assert_eq!(m, None);
    let (p, m) = place(&s, &c, &Volume::new("v", G, 5), &[]);
    assert_eq!(p, ["n1/d1", "n3/d1", "n4/d1", "n2/d1"]);
    assert_eq!(m.as_deref(), Some("replica scheduling failed"));
    let s4b = sched(|s| {
        s.replica_zone_soft_anti_affinity = false;
        s.replica_soft_anti_affinity = true;
    });
    let (p, m) = place(&s4b, &c, &Volume::new("v", G, 4), &[]);
    assert_eq!(p, ["n1/d1", "n3/d1", "n4/d1"]);
    assert_eq!(m.as_deref(), Some("replica scheduling failed"));
    let mut v = Volume::new("v", G, 4);
    v.replica_zone_soft_anti_affinity = SoftAntiAffinity::Enabled;
    let (p, _) = place(&s4b, &c, &v, &[]);
    assert_eq!(p, ["n1/d1", "n3/d1", "n4/d1", "n2/d1"]);
}

#[test]
fn tv5_tv6_tv7_tv8_single_node() {
    let c = cluster(vec![host("n", &[("d1", 100 * G, 80 * G), ("d2", 100 * G, 50 * G)])]);
    let hard = sched(|s| {
        s.replica_soft_anti_affinity = true;
        s.replica_disk_soft_anti_affinity = false;
    });
    let (p, m) = place(&hard, &c, &Volume::new("v", G, 3), &[]);
    assert_eq!((p, m.as_deref()), (vec!["n/d1".to_owned(), "n/d2".to_owned()], Some("replica scheduling failed")));
    let c6 = cluster(vec![host("n", &[("d1", 100 * G, 80 * G), ("d2", 100 * G, 30 * G)])]);
    let soft = sched(|s| s.replica_soft_anti_affinity = true);
    assert_eq!(place(&soft, &c6, &Volume::new("v", G, 3), &[]).0, ["n/d1", "n/d2", "n/d1"]);
    let c7 = cluster(vec![host("n", &[("d1", 10 * G, 9 * G)])]);
    let (p, m) = place(&soft, &c7, &Volume::new("v", 6 * G, 2), &[]);
    assert_eq!((p, m.as_deref()), (vec!["n/d1".to_owned()], Some("insufficient storage")));
    let c8 = cluster(vec![host("n", &[("d1", 10 * G, 9 * G), ("d2", 10 * G, 9 * G)])]);
    let (p, m) = place(&hard, &c8, &Volume::new("v", 6 * G, 2), &[]);
    assert_eq!((p, m), (vec!["n/d1".to_owned(), "n/d2".to_owned()], None));
    let (p, m) = place(&rebuilt(&hard, |b| b.version(LonghornVersion::V1_10)), &c8, &Volume::new("v", 6 * G, 2), &[]);
    assert_eq!((p.len(), m.as_deref()), (1, Some("insufficient storage")));
}

fn tv9_cluster() -> Cluster {
    cluster(vec![
        HostSpec::new("n1").label("fast", "").label("ssd", "").disk(DiskSpec::new("d", 100 * G, 80 * G).tag("ssd")),
        HostSpec::new("n2").disk(DiskSpec::new("d", 100 * G, 90 * G)),
        HostSpec::new("n3").label("nvme", "").disk(DiskSpec::new("d", 100 * G, 95 * G).tag("hdd")),
    ])
}

#[test]
fn tv9_tags() {
    let c = tv9_cluster();
    let s = sched(|_| {});
    let mut v = Volume::new("v", G, 1);
    v.node_selector = vec!["fast".into(), "ssd".into()];
    assert_eq!(at(&one(&s, &c, &v, vec![])), "n1/d");
    v.node_selector = vec!["fast".into(), "nvme".into()];
    assert_eq!(at(&one(&s, &c, &v, vec![])), "FAIL[]");
    let strict = sched(|s| {
        s.allow_empty_node_selector_volume = false;
        s.allow_empty_disk_selector_volume = false;
    });
    let v = Volume::new("v", G, 1);
    assert_eq!(at(&one(&strict, &c, &v, vec![])), "n2/d");
    assert_eq!(at(&one(&s, &c, &v, vec![])), "n3/d");
    let mut v = Volume::new("v", G, 1);
    v.disk_selector = vec!["ssd".into(), "nvme".into()];
    assert_eq!(at(&one(&s, &c, &v, vec![])), "FAIL[tags not fulfilled]");
}

fn tv10(wait: i64, retry: u32, disk_soft: bool, second_disk: bool) -> String {
    let mut h = HostSpec::new("n1").zone("z1").disk(DiskSpec::new("d1", 5_000_000_000, 3_000_000_000).scheduled(G));
    if second_disk {
        h = h.disk(DiskSpec::new("d2", 5_000_000_000, 3_000_000_000));
    }
    let c = cluster(vec![h]);
    let s = sched(|s| {
        s.replica_replenishment_wait_interval = wait;
        s.replica_disk_soft_anti_affinity = disk_soft;
    });
    let mut v = Volume::new("v", G, 2);
    v.robustness = Robustness::Degraded;
    v.last_degraded_at = Some(1000 - 60);
    let mut failed = Replica::on("f", "n1", "d1");
    failed.failed_at = Some(900);
    failed.rebuild_retry_count = retry;
    at(&one(&s, &c, &v, vec![failed]))
}

#[test]
fn tv10_failed_replicas() {
    assert_eq!(tv10(90, 0, true, false), "FAIL[]");
    assert_eq!(tv10(30, 0, true, false), "n1/d1");
    assert_eq!(tv10(90, 5, true, false), "n1/d1");
    assert_eq!(tv10(30, 0, false, false), "FAIL[]");
    assert_eq!(tv10(30, 0, false, true), "n1/d2");
    // At exact equality the wait counts as over.
    assert_eq!(tv10(60, 0, true, false), "n1/d1");
}

#[test]
fn tv11_eviction_tiers() {
    let c = cluster(vec![
        host("n1", &[("d1", 100 * G, 80 * G)]).zone("z1"),
        host("n2", &[("d1", 100 * G, 80 * G)]).zone("z2"),
    ]);
    let s = sched(|s| {
        s.replica_zone_soft_anti_affinity = false;
        s.replica_soft_anti_affinity = true;
    });
    let mut ev = Replica::on("a", "n1", "d1");
    ev.eviction_requested = true;
    let mut v = Volume::new("v", G, 2);
    v.number_of_replicas = 3; // the evicting replica is not usable: two new ones
    let (p, _) = place(&s, &c, &v, &[ev]);
    assert_eq!(p, ["n2/d1", "n1/d1"]);
}

#[test]
fn tv12_locality() {
    let d = |n: &str, a: i64| host(n, &[("d", 100 * G, a * G)]);
    let c = cluster(vec![d("n1", 90), d("n2", 80), d("n3", 40)]);
    let s = sched(|_| {});
    let mut v = Volume::new("v", G, 2);
    v.data_locality = DataLocality::BestEffort;
    v.node_id = "n3".into();
    assert_eq!(place(&s, &c, &v, &[]).0, ["n3/d", "n1/d"]);
    v.data_locality = DataLocality::Disabled;
    assert_eq!(place(&s, &c, &v, &[]).0, ["n1/d", "n2/d"]);
    v.data_locality = DataLocality::BestEffort;
    v.node_id.clear();
    let r = s.schedule(&c, &v, &[], 0).unwrap();
    assert!(r.waiting_for_attachment && r.selections.is_empty());
}

#[test]
fn tv13_hard_affinity() {
    let d = |n: &str| host(n, &[("d", 100 * G, 80 * G)]);
    let c = cluster(vec![d("n1"), d("n2"), d("n3")]);
    let s = sched(|_| {});
    let v = Volume::new("v", G, 1);
    let mut r = Replica::new("r");
    r.hard_node_affinity = "n2".into();
    assert_eq!(at(&s.schedule_replica(&c, &v, &[r.clone()], 0, 0).unwrap()), "n2/d");
    r.hard_node_affinity = "n9".into();
    assert_eq!(at(&s.schedule_replica(&c, &v, &[r], 0, 0).unwrap()), "FAIL[hard affinity cannot be satisfied]");
}

#[test]
fn tv14_replicas_on_non_candidates_ignored() {
    let c = cluster(vec![
        host("n1", &[("d", 100 * G, 80 * G)]).zone("z1").state(HostState { up: false, ..HostState::default() }),
        host("n2", &[("d", 100 * G, 80 * G)]).zone("z1"),
    ]);
    let s = sched(|s| s.replica_zone_soft_anti_affinity = false);
    assert_eq!(at(&one(&s, &c, &Volume::new("v", G, 2), vec![Replica::on("a", "n1", "d")])), "n2/d");
}

#[test]
fn tv15_used_node_tier_ignores_selector() {
    let c = cluster(vec![
        host("n1", &[("d", 100 * G, 90 * G)]),
        host("n2", &[("d", 100 * G, 10 * G + G)]).label("fast", ""),
    ]);
    let s = sched(|s| s.replica_soft_anti_affinity = true);
    let mut v = Volume::new("v", G, 3);
    v.node_selector = vec!["fast".into()];
    let o = one(&s, &c, &v, vec![Replica::on("r1", "n1", "d"), Replica::on("r2", "n2", "d")]);
    assert_eq!(at(&o), "n1/d");
}

fn tv16(mode: AutoBalance, pressure: i64) -> String {
    let c = cluster(vec![
        host("n1", &[("d1", 100 * G, 5 * G), ("d2", 100 * G, 80 * G)]),
        host("n2", &[("d1", 100 * G, 80 * G)]),
    ]);
    let s = sched(|s| {
        s.replica_auto_balance = mode;
        s.replica_auto_balance_disk_pressure_percentage = pressure;
    });
    at(&one(&s, &c, &Volume::new("v", G, 2), vec![Replica::on("ra", "n1", "d1"), Replica::on("rb", "n2", "d1")]))
}

#[test]
fn tv16_disk_pressure() {
    assert_eq!(tv16(AutoBalance::BestEffort, 90), "n1/d2");
    assert_eq!(tv16(AutoBalance::LeastEffort, 90), "FAIL[]");
    assert_eq!(tv16(AutoBalance::BestEffort, 0), "FAIL[]");
}

#[test]
fn tv17_reasons() {
    let base = || HostSpec::new("n").zone("z1");
    let disk = || DiskSpec::new("d", 100 * G, 80 * G);
    let s = sched(|_| {});
    let v = Volume::new("v", G, 1);
    let c = cluster(vec![base().disk(disk()).state(HostState { enabled: false, ..HostState::default() })]);
    assert_eq!(at(&one(&s, &c, &v, vec![])), "FAIL[nodes are unavailable]");
    let c = cluster(vec![base().disk(disk()).attribute("engine_image_ready", false.into())]);
    assert_eq!(at(&one(&s, &c, &v, vec![])), "FAIL[none of the node candidates contains a ready engine image]");
    let c = cluster(vec![base().disk(DiskSpec::new("d", 100 * G, 30 * G))]);
    let mut big = v.clone();
    big.actual_size = 10 * G;
    assert_eq!(at(&one(&s, &c, &big, vec![])), "FAIL[insufficient storage]");
    let c = cluster(vec![base().disk(disk().disk_type(DiskType::Block))]);
    assert_eq!(at(&one(&s, &c, &v, vec![])), "FAIL[disks are unavailable]");
    assert_eq!(at(&one(&rebuilt(&s, |b| b.version(LonghornVersion::V1_10)), &c, &v, vec![])), "FAIL[]");
    let c = cluster(vec![base().disk(disk())]);
    let mut topo = v.clone();
    topo.topology_requirement = vec![TopologyTerm::new("z2", "")];
    assert_eq!(at(&one(&s, &c, &topo, vec![])), "FAIL[topology requirement cannot be satisfied]");
    let (p, m) = place(&s, &c, &Volume::new("v", G, 2), &[]);
    assert_eq!((p.len(), m.as_deref()), (1, Some("replica scheduling failed")));
}

#[test]
fn preconditions_and_joining() {
    let c = docs_cluster();
    let s = sched(|_| {});
    let v = Volume::new("v", G, 1);
    let o = s.schedule_replica(&c, &v, &[Replica::on("a", "nodeA", "X")], 0, 0).unwrap();
    assert_eq!(o.message().as_deref(), Some("replica already scheduled"));
    let mut f = Replica::new("f");
    f.failed_at = Some(1);
    assert_eq!(at(&s.schedule_replica(&c, &v, &[f], 0, 0).unwrap()), "FAIL[unused failed replica is not supported]");
    let mut r = Reasons::default();
    for x in [FailureReason::TagsNotFulfilled, FailureReason::InsufficientStorage, FailureReason::TagsNotFulfilled] {
        r.insert(x);
    }
    assert_eq!(r.joined(), "insufficient storage; tags not fulfilled");
    assert_eq!(r.precheck_message(), "precheck new replica failed: insufficient storage; tags not fulfilled");
    assert!(s.schedule_replica(&c, &v, &[], 0, 0).is_err());
}

#[test]
fn settings_load_and_validate() {
    let s =
        ReplicaSettings::from_pairs([("replica-auto-balance", "best-effort"), ("replica-soft-anti-affinity", "true")])
            .unwrap();
    assert_eq!(s.replica_auto_balance, AutoBalance::BestEffort);
    assert!(s.replica_soft_anti_affinity);
    assert!(matches!(ReplicaSettings::from_pairs([("nope", "1")]), Err(ReplicaError::UnknownSetting { .. })));
    assert!(matches!(
        ReplicaSettings::from_pairs([("storage-minimal-available-percentage", "101")]),
        Err(ReplicaError::InvalidSetting { .. })
    ));
    let json = serde_json::to_string(&ReplicaSettings::default()).unwrap();
    assert!(json.contains("\"replica-zone-soft-anti-affinity\":true"));
    assert_eq!(serde_json::from_str::<ReplicaSettings>(&json).unwrap(), ReplicaSettings::default());
    assert!(serde_json::from_str::<ReplicaSettings>(r#"{"replica-auto-balance":"sometimes"}"#).is_err());
    let bad = ReplicaSettings { storage_over_provisioning_percentage: -1, ..ReplicaSettings::default() };
    assert!(ReplicaScheduler::new(bad).is_err());
    let v: Volume = serde_json::from_str(
        r#"{"name":"v","size":1,"replica_soft_anti_affinity":"enabled","data_locality":"strict-local"}"#,
    )
    .unwrap();
    assert_eq!(v.data_locality, DataLocality::StrictLocal);
}

#[test]
fn explanation_and_plans() {
    let c = docs_cluster();
    let s = rebuilt(&sched(|_| {}), |b| b.explain(true));
    let o = one(&s, &c, &Volume::new("v", G, 1), vec![]);
    let disks: Vec<_> = o.explanation.verdicts.iter().filter(|v| v.disk.is_some()).collect();
    assert!(disks.len() >= 2);
    // The size-0 space check (the disk's `Schedulable` condition) failed on actual space.
    assert_eq!(disks[0].filter.as_deref(), Some("disk condition"));
    assert!(disks[0].reason.as_deref().is_some_and(|r| r.starts_with("Actual space usage condition failed")));
    let d = |n: &str| host(n, &[("d", 100 * G, 80 * G)]);
    let c = cluster(vec![d("n1"), d("n2"), d("n3")]);
    let mut v = Volume::new("v", G, 2);
    v.data_locality = DataLocality::BestEffort;
    v.node_id = "n3".into();
    let rs = [Replica::on("a", "n1", "d"), Replica::on("b", "n2", "d")];
    let plan = plan_data_locality(&c, &v, &rs);
    assert_eq!(plan.len(), 2);
    assert_eq!(plan[1].kind, MoveKind::DeleteReplica { name: "a".into() });
    let s = sched(|s| s.replica_auto_balance = AutoBalance::LeastEffort);
    let rs = [Replica::on("a", "n1", "d"), Replica::on("b", "n1", "d")];
    assert_eq!(plan_auto_balance(&s, &c, &Volume::new("v", G, 2), &rs).len(), 1);
}

/// Regression: nodeA is in tier 0 (unused zone) and tier 1 (unused node); its disks were listed
/// once per tier.
#[test]
fn explanation_lists_each_disk_once() {
    let c = docs_cluster();
    let o = one(&rebuilt(&sched(|_| {}), |b| b.explain(true)), &c, &Volume::new("v", G, 1), vec![]);
    let mut keys: Vec<_> =
        o.explanation.verdicts.iter().filter_map(|v| Some((v.host.clone(), v.disk.clone()?))).collect();
    assert_eq!(keys.len(), 2);
    keys.dedup();
    assert_eq!(keys.len(), 2);
}

/// Reasons from tiers tried before the one that placed the replica are not reported on success.
#[test]
fn no_reasons_on_success() {
    let c = cluster(vec![
        host("n1", &[("d", 100 * G, 20 * G)]).zone("z1"),
        host("n2", &[("d", 100 * G, 80 * G)]).zone("z1"),
        host("n3", &[("d", 100 * G, 80 * G)]).zone("z2"),
    ]);
    let o = one(&sched(|_| {}), &c, &Volume::new("v", G, 2), vec![Replica::on("a", "n3", "d")]);
    assert_eq!(at(&o), "n2/d");
    assert!(o.reasons.is_empty());
}

/// A degraded 2-replica volume on n1 (z1) and n2 (z2) whose replica on n1 failed at 900.
fn reuse_setup(f: impl Fn(&mut Replica)) -> (Cluster, Volume, Vec<Replica>) {
    let c = cluster(vec![
        host("n1", &[("d1", 100 * G, 80 * G)]).zone("z1"),
        host("n2", &[("d1", 100 * G, 80 * G)]).zone("z2"),
        host("n3", &[("d1", 100 * G, 80 * G)]).zone("z3"),
    ]);
    let mut v = Volume::new("v", G, 2);
    v.robustness = Robustness::Degraded;
    v.last_degraded_at = Some(950);
    let mut failed = Replica::on("a", "n1", "d1");
    failed.failed_at = Some(900);
    f(&mut failed);
    (c, v, vec![failed, Replica::on("b", "n2", "d1")])
}

#[test]
fn reuse_failed_replica_eligibility() {
    let s = sched(|_| {});
    let (c, v, rs) = reuse_setup(|_| {});
    assert_eq!(s.reusable_failed_replica(&c, &v, &rs, "").unwrap(), Some(0));
    // Not potentially reusable: retries, eviction, inactive, other hard affinity.
    for f in [
        (|r: &mut Replica| r.rebuild_retry_count = 5) as fn(&mut Replica),
        |r| r.eviction_requested = true,
        |r| r.active = false,
        |r| r.disk_id = String::new(),
    ] {
        let (c, v, rs) = reuse_setup(f);
        assert_eq!(s.reusable_failed_replica(&c, &v, &rs, "").unwrap(), None);
    }
    assert_eq!(s.reusable_failed_replica(&c, &v, &rs, "n2").unwrap(), None);
    // Node or disk no longer eligible.
    let down = cluster(vec![
        host("n1", &[("d1", 100 * G, 80 * G)]).zone("z1").state(HostState { up: false, ..HostState::default() }),
        host("n2", &[("d1", 100 * G, 80 * G)]).zone("z2"),
    ]);
    assert_eq!(s.reusable_failed_replica(&down, &v, &rs, "").unwrap(), None);
    let gone = cluster(vec![host("n1", &[("d2", 100 * G, 80 * G)]).zone("z1"), host("n2", &[("d1", 100 * G, 80 * G)])]);
    assert_eq!(s.reusable_failed_replica(&gone, &v, &rs, "").unwrap(), None);
    let tagged = Volume { disk_selector: vec!["ssd".into()], ..v.clone() };
    assert_eq!(s.reusable_failed_replica(&c, &tagged, &rs, "").unwrap(), None);
    // v2 needs fast-replica-rebuild-enabled (and block disks).
    let v2 = Volume { data_engine: DataEngine::V2, ..v.clone() };
    let off = sched(|s| s.fast_replica_rebuild_enabled = false);
    assert_eq!(off.reusable_failed_replica(&c, &v2, &rs, "").unwrap(), None);
}

#[test]
fn reuse_disk_pressure_exception() {
    let s = sched(|_| {});
    let (_, v, rs) = reuse_setup(|_| {});
    // Over-provisioned (scheduled > limit) but with actual space: DiskPressure, still reusable.
    let over = |avail| {
        cluster(vec![
            HostSpec::new("n1").zone("z1").disk(DiskSpec::new("d1", 100 * G, avail).scheduled(200 * G)),
            host("n2", &[("d1", 100 * G, 80 * G)]).zone("z2"),
        ])
    };
    assert_eq!(s.reusable_failed_replica(&over(80 * G), &v, &rs, "").unwrap(), Some(0));
    // Not enough actual space (available ≤ 25% of max): not reusable.
    assert_eq!(s.reusable_failed_replica(&over(25 * G), &v, &rs, "").unwrap(), None);
}

#[test]
fn reuse_respects_anti_affinity_and_picks_latest_failure() {
    let s = sched(|_| {});
    let (c, v, mut rs) = reuse_setup(|_| {});
    // A second failed replica on n3, failed later: preferred.
    let mut late = Replica::on("c", "n3", "d1");
    late.failed_at = Some(950);
    rs.push(late);
    assert_eq!(s.reusable_failed_replica(&c, &v, &rs, "").unwrap(), Some(2));
    // A failed replica sharing a node with a healthy one is not reused under node-hard
    // anti-affinity when no zone is left (zone hard).
    let hard = sched(|s| s.replica_zone_soft_anti_affinity = false);
    let (c, v, mut rs) = reuse_setup(|r| r.node_id = "n2".into());
    rs[1].name = "b".into();
    assert_eq!(hard.reusable_failed_replica(&c, &v, &rs, "").unwrap(), None);
}

#[test]
fn require_new_replica_timing() {
    let s = sched(|s| s.replica_replenishment_wait_interval = 100);
    let (_, v, rs) = reuse_setup(|_| {});
    assert_eq!(s.require_new_replica(&v, &rs, "", 1000), 50);
    assert_eq!(s.require_new_replica(&v, &rs, "", 1050), 0);
    assert_eq!(s.require_new_replica(&v, &rs, "", 2000), 0);
    let healthy = Volume { robustness: Robustness::Healthy, ..v.clone() };
    assert_eq!(s.require_new_replica(&healthy, &rs, "", 1000), 0);
    let (_, v, rs) = reuse_setup(|r| r.rebuild_retry_count = 5);
    assert_eq!(s.require_new_replica(&v, &rs, "", 1000), 0);
}

#[test]
fn schedule_volume_reuses_waits_and_prechecks() {
    let s = sched(|s| s.replica_replenishment_wait_interval = 100);
    // Reusable: reused, nothing created.
    let (c, v, rs) = reuse_setup(|_| {});
    let r = s.schedule(&c, &v, &rs, 1000).unwrap();
    assert_eq!(r.reused, vec!["a".to_string()]);
    assert!(r.created.is_empty());
    let a = r.replicas.iter().find(|x| x.name == "a").unwrap();
    assert!(!a.is_failed());
    assert_eq!(a.rebuild_retry_count, 1);
    // Its node is down: not reusable, but potentially reusable → wait for the interval.
    let down = cluster(vec![
        host("n1", &[("d1", 100 * G, 80 * G)]).zone("z1").state(HostState { up: false, ..HostState::default() }),
        host("n2", &[("d1", 100 * G, 80 * G)]).zone("z2"),
        host("n3", &[("d1", 100 * G, 80 * G)]).zone("z3"),
    ]);
    let r = s.schedule(&down, &v, &rs, 1000).unwrap();
    assert!(r.created.is_empty() && r.reused.is_empty());
    assert_eq!(r.wait_seconds, 50);
    // After the interval: a new replica, placed on the unused zone.
    let r = s.schedule(&down, &v, &rs, 1050).unwrap();
    assert_eq!(r.created.len(), 1);
    assert_eq!(r.placed().map(|(_, p)| p.node_id.as_str()).collect::<Vec<_>>(), ["n3"]);
    // Precheck: nothing can take a replica → nothing created, the precheck message reported.
    let full = cluster(vec![host("n1", &[("d1", 100 * G, 80 * G)])]);
    let big = Volume::new("big", 200 * G, 1);
    let r = s.schedule(&full, &big, &[], 0).unwrap();
    assert!(r.created.is_empty());
    assert_eq!(r.condition_message().as_deref(), Some("precheck new replica failed: insufficient storage"));
    // Anti-affinity-only precheck failure: no reason recorded.
    let one_node = Volume::new("v", G, 2);
    let existing = [Replica::on("x", "n1", "d1")];
    let r = s.schedule(&full, &one_node, &existing, 0).unwrap();
    assert_eq!(r.precheck_failure.as_deref(), Some("disks are unavailable"));
}

#[test]
fn precheck_is_a_step() {
    let s = sched(|_| {});
    let c = cluster(vec![host("n1", &[("d1", 100 * G, 80 * G)])]);
    assert_eq!(s.precheck(&c, &Volume::new("v", G, 1), &[], 0), Ok(None));
    let e = s.precheck(&c, &Volume { node_selector: vec!["x".into()], ..Volume::new("v", G, 1) }, &[], 0);
    assert_eq!(e, Ok(Some("disks are unavailable".to_string())));
    // Unscheduled siblings occupy nothing.
    assert_eq!(s.precheck(&c, &Volume::new("v", G, 3), &[Replica::new("a"), Replica::new("b")], 0), Ok(None));
}

fn adds_to(plan: &[ReplicaMove]) -> Vec<Option<String>> {
    plan.iter()
        .filter_map(|m| match &m.kind {
            MoveKind::AddReplica { hard_node_affinity } => Some(hard_node_affinity.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn best_effort_evens_node_counts() {
    let d = |n: &str| host(n, &[("d", 100 * G, 80 * G)]);
    let c = cluster(vec![d("n1"), d("n2")]);
    let rs = [
        Replica::on("a", "n1", "d"),
        Replica::on("b", "n1", "d"),
        Replica::on("c", "n1", "d"),
        Replica::on("d", "n2", "d"),
    ];
    let v = Volume::new("v", G, 4);
    // Extras: n1 [b, c], n2 []: adjust = 2 − 0 − 1 = 1 toward n2. Least-effort adds nothing.
    let s = sched(|s| s.replica_auto_balance = AutoBalance::BestEffort);
    assert_eq!(adds_to(&plan_auto_balance(&s, &c, &v, &rs)), vec![Some("n2".to_owned())]);
    let s = sched(|s| s.replica_auto_balance = AutoBalance::LeastEffort);
    assert!(plan_auto_balance(&s, &c, &v, &rs).is_empty());
    // 2 + 1 replicas: extras [b], []: adjust 0, nothing to even.
    let s = sched(|s| s.replica_auto_balance = AutoBalance::BestEffort);
    assert!(plan_auto_balance(&s, &c, &Volume::new("v", G, 3), &rs[1..]).is_empty());
}

#[test]
fn best_effort_evens_zone_counts() {
    let d = |n: &str, z: &str| host(n, &[("d", 100 * G, 80 * G)]).zone(z);
    let c = cluster(vec![d("n1", "z1"), d("n2", "z1"), d("n3", "z1"), d("n4", "z2"), d("n5", "z2")]);
    let rs = [
        Replica::on("a", "n1", "d"),
        Replica::on("b", "n2", "d"),
        Replica::on("c", "n3", "d"),
        Replica::on("d", "n4", "d"),
    ];
    let s = sched(|s| s.replica_auto_balance = AutoBalance::BestEffort);
    // Every replica on its own node; zone extras z1 [b, c], z2 []: one add toward z2's free n5.
    assert_eq!(adds_to(&plan_auto_balance(&s, &c, &Volume::new("v", G, 4), &rs)), vec![Some("n5".to_owned())]);
}

#[test]
fn best_effort_disk_pressure_move() {
    let c = cluster(vec![
        host("n1", &[("d1", 100 * G, 5 * G), ("d2", 100 * G, 80 * G)]),
        host("n2", &[("d1", 100 * G, 80 * G)]),
    ]);
    let rs = [Replica::on("ra", "n1", "d1"), Replica::on("rb", "n2", "d1")];
    let v = Volume::new("v", G, 2);
    let plan = |mode, pct| {
        let s = sched(|s| {
            s.replica_auto_balance = mode;
            s.replica_auto_balance_disk_pressure_percentage = pct;
        });
        plan_auto_balance(&s, &c, &v, &rs)
    };
    let p = plan(AutoBalance::BestEffort, 90);
    assert_eq!(adds_to(&p), vec![Some("n1".to_owned())]);
    assert_eq!(p[1].kind, MoveKind::DeleteReplica { name: "ra".into() });
    assert!(plan(AutoBalance::BestEffort, 0).is_empty());
    assert!(plan(AutoBalance::LeastEffort, 90).is_empty());
    // No other disk of n1 is a move target (d2 at 95% used too): no move.
    let c2 = cluster(vec![
        host("n1", &[("d1", 100 * G, 5 * G), ("d2", 100 * G, 5 * G)]),
        host("n2", &[("d1", 100 * G, 80 * G)]),
    ]);
    let s = sched(|s| s.replica_auto_balance = AutoBalance::BestEffort);
    assert!(plan_auto_balance(&s, &c2, &v, &rs).is_empty());
    // Another healthy volume's replica on n1/d1: it moves first when its name comes first.
    let s = sched(|s| s.replica_auto_balance = AutoBalance::BestEffort);
    let before = [Replica::on("a-other", "n1", "d1")];
    assert!(plan_auto_balance_among(&s, &c, &v, &rs, &before).is_empty());
    let after = [Replica::on("z-other", "n1", "d1"), Replica::on("b-elsewhere", "n2", "d1")];
    assert_eq!(plan_auto_balance_among(&s, &c, &v, &rs, &after), plan_auto_balance(&s, &c, &v, &rs));
    assert_eq!(adds_to(&plan_auto_balance_among(&s, &c, &v, &rs, &after)), vec![Some("n1".to_owned())]);
}

#[test]
fn cleanup_picks_the_replica_to_delete() {
    let d = |n: &str| host(n, &[("d", 100 * G, 80 * G)]);
    let c = cluster(vec![d("n1"), d("n2")]);
    let rs = [
        Replica::on("c", "n1", "d"),
        Replica::on("b", "n1", "d"),
        Replica::on("a", "n1", "d"),
        Replica::on("d", "n2", "d"),
        Replica::on("e", "n2", "d"),
    ];
    let v = Volume::new("v", G, 4);
    // Best-effort: n1's extras [b, c] (a is first); equal disks → smallest name.
    let be = sched(|s| s.replica_auto_balance = AutoBalance::BestEffort);
    assert_eq!(plan_cleanup(&be, &c, &v, &rs).as_deref(), Some("b"));
    // Least-effort: the most crowded disk n1/d [a, b, c] → a.
    let le = sched(|s| s.replica_auto_balance = AutoBalance::LeastEffort);
    assert_eq!(plan_cleanup(&le, &c, &v, &rs).as_deref(), Some("a"));
    // Not over the count, or disabled: nothing.
    assert_eq!(plan_cleanup(&le, &c, &Volume::new("v", G, 5), &rs), None);
    assert_eq!(plan_cleanup(&sched(|_| {}), &c, &v, &rs), None);
    // Disks all distinct → the most crowded node n2 [b, c]; c's disk has less available.
    let c = cluster(vec![d("n1"), host("n2", &[("d1", 100 * G, 80 * G), ("d2", 100 * G, 10 * G)])]);
    let rs = [Replica::on("a", "n1", "d"), Replica::on("b", "n2", "d1"), Replica::on("c", "n2", "d2")];
    assert_eq!(plan_cleanup(&le, &c, &Volume::new("v", G, 2), &rs).as_deref(), Some("c"));
    // All on distinct zones: any deletion keeps min(N, zones) zones; the least available goes.
    let z = |n: &str, zn: &str, avail| host(n, &[("d", 100 * G, avail)]).zone(zn);
    let c = cluster(vec![z("n1", "z1", 50 * G), z("n2", "z2", 20 * G), z("n3", "z3", 90 * G)]);
    let rs = [Replica::on("a", "n1", "d"), Replica::on("b", "n2", "d"), Replica::on("c", "n3", "d")];
    assert_eq!(plan_cleanup(&le, &c, &Volume::new("v", G, 2), &rs).as_deref(), Some("b"));
}

#[test]
fn schedule_replicas_places_in_the_given_order_and_each_sees_the_earlier_ones() {
    // TV7's setup: one disk with room for one 6G replica (max 10G); node anti-affinity soft.
    let c = cluster(vec![host("n1", &[("d1", 10 * G, 9 * G)]), host("n2", &[("d1", 100 * G, 90 * G)])]);
    let s = sched(|s| s.replica_soft_anti_affinity = true);
    let v = Volume::new("v", 6 * G, 2);
    let mut replicas = vec![Replica::new("a"), Replica::new("b"), Replica::new("c")];
    let out = s.schedule_replicas(&c, &v, &mut replicas, &["c", "a", "b"], 1000).unwrap();
    let names: Vec<&str> = out.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["c", "a", "b"], "one outcome per name, in the given order");
    // The rule, replica by replica, through schedule_replica: write each placement in, not yet
    // counted by its disk, before the next one.
    let mut model = vec![Replica::new("a"), Replica::new("b"), Replica::new("c")];
    for name in ["c", "a", "b"] {
        let i = model.iter().position(|r| r.name == name).unwrap();
        let o = s.schedule_replica(&c, &v, &model, i, 1000).unwrap();
        let (got_name, got) = &out[names.iter().position(|n| *n == name).unwrap()];
        assert_eq!((got_name.as_str(), at(got)), (name, at(&o)));
        if let Some(p) = o.placement {
            model[i].node_id = p.node_id;
            model[i].disk_id = p.disk_id;
            model[i].data_directory_name = p.data_directory_name;
            model[i].counted = false;
        }
    }
    assert_eq!(replicas, model, "the list holds the placements as written by the rule");
    // n1's disk takes one 6G replica only: the in-cycle accounting saw the earlier pick.
    let on_n1 = replicas.iter().filter(|r| r.node_id == "n1").count();
    assert_eq!(on_n1, 1);
    let err = s.schedule_replicas(&c, &v, &mut replicas, &["nope"], 1000).unwrap_err();
    assert_eq!(err, ReplicaError::UnknownReplica { name: "nope".into() });
}

#[test]
fn node_facts_are_typed_and_a_wrongly_typed_attribute_is_an_error() {
    let d = || DiskSpec::new("d", 100 * G, 80 * G);
    let s = sched(|_| {});
    let v = Volume::new("v", G, 1);
    let no_image = cluster(vec![LonghornNode::new("n1").engine_image_deployed(false).disk(d()).build()]);
    assert_eq!(at(&one(&s, &no_image, &v, vec![])), "FAIL[none of the node candidates contains a ready engine image]");
    let no_im = cluster(vec![LonghornNode::new("n1").instance_manager_running(false).disk(d()).build()]);
    assert_eq!(at(&one(&s, &no_im, &v, vec![])), "FAIL[none of the node candidates contains a ready engine image]");
    let down = cluster(vec![LonghornNode::new("n1").ready(false).disk(d()).build()]);
    assert_eq!(at(&one(&s, &down, &v, vec![])), "FAIL[nodes are unavailable]");
    let mut tagged = Volume::new("v", G, 1);
    tagged.node_selector = vec!["fast".into()];
    let two = cluster(vec![
        LonghornNode::new("n1").disk(d()).build(),
        LonghornNode::new("n2").tag("fast").zone("z2").region("r1").disk(d()).build(),
    ]);
    assert_eq!(at(&one(&s, &two, &tagged, vec![])), "n2/d");
    // The attribute route: a string where a boolean belongs would read as the default.
    let typo = cluster(vec![HostSpec::new("n1").attribute(ATTR_INSTANCE_MANAGER_RUNNING, "false".into()).disk(d())]);
    let err = s.check_nodes(&typo).unwrap_err();
    assert!(matches!(err, ReplicaError::NodeAttribute { ref name, .. } if name == "im_running"), "{err}");
    assert!(s.schedule_replicas(&typo, &v, &mut [Replica::new("r")], &["r"], 0).is_err());
    assert!(s.check_nodes(&two).is_ok());
}

/// `QuickFit` only ever accepts a disk `volume_fit` accepts, and for a volume without disk
/// selectors below the huge size it accepts exactly those: every engine, size, selector, backing
/// image, disk type, tag and empty-selector setting.
#[test]
fn the_quick_fit_agrees_with_volume_fit() {
    use super::disk_stage::{volume_fit, QuickFit, HUGE_VOLUME};
    let disks = [
        DiskSpec::new("fs", 100 * G, 90 * G),
        DiskSpec::new("fs-fast", 100 * G, 90 * G).tag("fast"),
        DiskSpec::new("fs-slow", 100 * G, 90 * G).tag("slow"),
        DiskSpec::new("blk", 100 * G, 90 * G).disk_type(DiskType::Block),
        DiskSpec::new("blk-fast", 100 * G, 90 * G).disk_type(DiskType::Block).tag("fast"),
    ];
    let c = cluster(vec![disks.iter().fold(HostSpec::new("n1"), |h, d| h.disk(d.clone()))]);
    let id = c.host_id("n1").unwrap();
    let (hot, full) = (c.hot_disks(id), c.host(id).unwrap());
    let mut plain_accepted = 0;
    for allow_empty in [false, true] {
        let s = sched(|s| s.allow_empty_disk_selector_volume = allow_empty);
        for engine in [DataEngine::V1, DataEngine::V2] {
            for size in [G, HUGE_VOLUME] {
                for selector in [vec![], vec!["fast".to_string()]] {
                    for image in [None, Some(vec![]), Some(vec!["fast".to_string()])] {
                        let mut v = Volume::new("v", size, 1);
                        v.data_engine = engine;
                        v.disk_selector = selector.clone();
                        v.backing_image =
                            image.map(|disk_selector| BackingImage { node_selector: vec![], disk_selector });
                        let cx = Ctx::new(&s, &c, &v).unwrap();
                        let quick = QuickFit::of(&cx);
                        let plain = cx.disk_selector.is_empty()
                            && cx.image_disk_selector.is_empty()
                            && !(engine == DataEngine::V1 && size >= HUGE_VOLUME);
                        for (i, d) in hot.iter().enumerate() {
                            let fits = volume_fit(&cx, d, full.disks.get(i)).is_ok();
                            let accepted = quick.accepts(d);
                            assert!(!accepted || fits, "quick fit accepted a disk volume_fit refuses: {i} {v:?}");
                            if plain {
                                assert_eq!(accepted, fits, "disk {i} of a plain volume {v:?}");
                                plain_accepted += usize::from(accepted);
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(plain_accepted > 0, "the plain volumes never took the quick path");
}

/// The verdicts of `o`'s explanation that left a node or disk out: (host, disk, rule, reason).
fn left_out(o: &ReplicaSelection) -> Vec<(String, Option<String>, String, String)> {
    let text = |s: &Option<String>| s.clone().unwrap_or_default();
    let verdicts = o.explanation.verdicts.iter().filter(|v| !v.passed);
    verdicts.map(|v| (v.host.clone(), v.disk.clone(), text(&v.filter), text(&v.reason))).collect()
}

fn node_out(host: &str, rule: &str, reason: &str) -> (String, Option<String>, String, String) {
    (host.to_owned(), None, rule.to_owned(), reason.to_owned())
}

const NODE_HARD: &str = "holds a replica of this volume (node anti-affinity, hard)";

/// Issue 42, item 1: each node the anti-affinity rules keep out is named with the rule and its
/// strength, and the outcome says which tier (which rule) bound the replica.
#[test]
fn the_explanation_names_each_node_anti_affinity_left_out() {
    let d = |n: &str, z: &str| host(n, &[("d1", 100 * G, 80 * G)]).zone(z);
    let three = cluster(vec![d("n1", "z1"), d("n2", "z1"), d("n3", "z2")]);
    let two = cluster(vec![d("n1", "z1"), d("n2", "z1")]);
    let existing = vec![Replica::on("a", "n1", "d1")];
    let v = Volume::new("v", G, 2);
    let explain =
        |zone_soft: bool| rebuilt(&sched(|s| s.replica_zone_soft_anti_affinity = zone_soft), |b| b.explain(true));
    for zone_soft in [false, true] {
        let strength = if zone_soft { "soft" } else { "hard" };
        let zone_used = format!("zone z1 already used (zone anti-affinity, {strength})");
        // An unused zone is left: the first tier binds; n1 holds a replica, n2 is in a used zone.
        let o = one(&explain(zone_soft), &three, &v, existing.clone());
        assert_eq!(at(&o), "n3/d1");
        assert_eq!(o.tier, Some(Tier::UnusedNodesInUnusedZones));
        assert_eq!(
            left_out(&o),
            [node_out("n1", "node anti-affinity", NODE_HARD), node_out("n2", "zone anti-affinity", &zone_used)]
        );
        let passed: Vec<&str> = o.explanation.verdicts.iter().filter(|v| v.passed).map(|v| &*v.host).collect();
        assert_eq!((passed, o.explanation.available, o.explanation.hosts), (vec!["n3"], 1, 3));
        assert_eq!(o.explanation.message, None);
        // No unused zone: soft zone anti-affinity gives way (the unused-node tier binds), hard
        // does not, and the failure's explanation still names both rules.
        let o = one(&explain(zone_soft), &two, &v, existing.clone());
        if zone_soft {
            assert_eq!((at(&o), o.tier), ("n2/d1".to_owned(), Some(Tier::UnusedNodes)));
            assert_eq!(left_out(&o), [node_out("n1", "node anti-affinity", NODE_HARD)]);
        } else {
            assert_eq!((at(&o), o.tier), ("FAIL[]".to_owned(), None));
            assert_eq!(
                left_out(&o),
                [node_out("n1", "node anti-affinity", NODE_HARD), node_out("n2", "zone anti-affinity", &zone_used)]
            );
            assert_eq!(o.explanation.message.as_deref(), Some("replica scheduling failed"));
            assert_eq!(o.explanation.to_string(), format!("0/2 hosts are available: 1 {NODE_HARD}, 1 {zone_used}"),);
        }
    }
}

/// Issue 42, item 1: a caller's level names the domain already used, the level and whether it
/// is hard, under the level's name; a soft level is named where it decided (the pass that
/// placed the replica kept it).
#[test]
fn the_explanation_names_each_node_a_level_left_out() {
    let d = |n: &str, rack: &str| host(n, &[("d1", 100 * G, 80 * G)]).zone("z1").label("rack", rack);
    let c = cluster(vec![d("n1", "r1"), d("n2", "r1"), d("n3", "r2")]);
    let existing = vec![Replica::on("a", "n1", "d1")];
    let v = Volume::new("v", G, 2);
    for level in [Level::hard("rack"), Level::soft("rack")] {
        let strength = if level.is_hard() { "hard" } else { "soft" };
        let s = ReplicaScheduler::builder(ReplicaSettings::default()).level(level).explain(true).build().unwrap();
        let o = one(&s, &c, &v, existing.clone());
        assert_eq!((at(&o), o.tier), ("n3/d1".to_owned(), Some(Tier::UnusedNodes)));
        let rack = format!("rack r1 already used (rack level, {strength})");
        assert_eq!(
            left_out(&o),
            [node_out("n1", "node anti-affinity", NODE_HARD), node_out("n2", "rack anti-affinity", &rack)]
        );
    }
}

/// Issue 42, item 1: every disk left out is named with its rule, each once, and a node none of
/// whose disks passed is named as such; Longhorn's space text is the reason.
#[test]
fn the_explanation_names_each_disk_left_out() {
    let c = cluster(vec![
        host("n1", &[("small", 10 * G, 9 * G), ("tiny", 2 * G, 2 * G)]).zone("z1"),
        host("n2", &[("big", 100 * G, 80 * G)]).zone("z2"),
    ]);
    let s = rebuilt(&sched(|_| {}), |b| b.explain(true));
    let o = one(&s, &c, &Volume::new("v", 20 * G, 1), vec![]);
    assert_eq!(at(&o), "n2/big");
    let out = left_out(&o);
    assert_eq!(out.len(), 3, "{out:?}");
    assert_eq!(out[0], node_out("n1", "disk", "no disk of the node passed"));
    for (i, disk) in ["small", "tiny"].into_iter().enumerate() {
        let (host, d, rule, reason) = &out[i + 1];
        assert_eq!((host.as_str(), d.as_deref(), rule.as_str()), ("n1", Some(disk), "space"));
        assert!(reason.starts_with("Scheduling space condition failed"), "{reason}");
    }
    let counts: Vec<(&str, &str, u32)> =
        o.explanation.rejections.iter().map(|r| (&*r.filter, &*r.reason, r.count)).collect();
    assert_eq!(counts, [("space", "insufficient storage", 2), ("disk", "no disk of the node passed", 1)]);
}

/// Issue 42.3: a level whose key no host carries (no topology level, no host's label key) is
/// refused by every entry, naming the key; a key some host carries, even one host past the
/// first chunk or with an empty value, is accepted.
#[test]
fn a_level_no_host_carries_is_refused_by_every_entry() {
    let hosts = |n: usize| -> Vec<HostSpec> {
        (0..n).map(|i| host(&format!("n{i}"), &[("d1", 100 * G, 100 * G)]).zone(format!("z{}", i % 3))).collect()
    };
    let mut spread = hosts(70);
    spread[69] = spread[69].clone().label("rack", "r9");
    spread[68] = spread[68].clone().label("row", "");
    let carried = cluster(spread);
    let level =
        |key: &str| ReplicaScheduler::builder(ReplicaSettings::default()).level(Level::hard(key)).build().unwrap();
    let volume = Volume::new("vol", G, 3);
    for key in ["zone", "rack", "row"] {
        let s = level(key);
        assert!(s.schedule(&carried, &volume, &[], 0).is_ok(), "{key}");
        assert!(s.schedule_with(&mut ReplicaScratch::new(), &carried, &volume, &[], 0).is_ok(), "{key}");
    }
    let unknown = |r: Result<(), ReplicaError>| match r {
        Err(ReplicaError::UnknownLevel { key }) => key,
        other => panic!("{other:?}"),
    };
    // `rakc` is no symbol at all; `rack` on a snapshot whose one rack host was removed is a
    // symbol no host carries any more.
    let removed = carried.apply(&crate::snapshot::ClusterEvent::HostRemoved { host: "n69".into() }).unwrap();
    for (cluster, key) in [(&carried, "rakc"), (&removed, "rack")] {
        let s = ReplicaScheduler::builder(ReplicaSettings::default())
            .level(Level::soft("zone"))
            .level(Level::hard(key))
            .build()
            .unwrap();
        let pending = [Replica::new("vol-r-1")];
        assert_eq!(unknown(s.schedule(cluster, &volume, &[], 0).map(drop)), key);
        assert_eq!(unknown(s.schedule_with(&mut ReplicaScratch::new(), cluster, &volume, &[], 0).map(drop)), key);
        assert_eq!(unknown(s.schedule_replica(cluster, &volume, &pending, 0, 0).map(drop)), key);
        assert_eq!(
            unknown(s.schedule_replicas(cluster, &volume, &mut pending.clone(), &["vol-r-1"], 0).map(drop)),
            key
        );
        assert_eq!(unknown(s.precheck(cluster, &volume, &[], 0).map(drop)), key);
        assert_eq!(unknown(s.reusable_failed_replica(cluster, &volume, &[], "").map(drop)), key);
    }
    // A kept preparation finds it on a later snapshot of its lineage, and forgets it again.
    let s = level("rack");
    let mut scratch = ReplicaScratch::new();
    assert!(s.schedule_with(&mut scratch, &carried, &volume, &[], 0).is_ok());
    assert_eq!(unknown(s.schedule_with(&mut scratch, &removed, &volume, &[], 0).map(drop)), "rack");
    assert!(s.schedule_with(&mut scratch, &carried, &volume, &[], 0).is_ok());
    let message = ReplicaError::UnknownLevel { key: "rakc".into() }.to_string();
    assert_eq!(message, "level `rakc`: no host carries it as a topology level or a label");
}
