use super::*;
use crate::filter::builtin::{ComputeFilter, ResourceFilter};
use crate::id::{HostId, ResourceId};
use crate::request::Request;
use crate::schedule::Scheduler;
use crate::snapshot::Cluster;
use crate::snapshot::{AggregateSpec, ClusterEvent, HostSpec, InstanceSpec, StateChange};
use crate::weigh::builtin::FreeResourceWeigher;
use std::collections::BTreeMap;
use std::sync::Arc;

fn cluster(hosts: usize) -> Cluster {
    let mut b = Cluster::builder();
    for i in 0..hosts {
        b = b.host(HostSpec::new(format!("h{i}")).vcpus(8.0).memory_mb(4096.0));
    }
    b.build().unwrap()
}

/// Fill-first on memory: the fullest host that fits wins, ties to the lowest id.
fn stacking() -> Scheduler {
    Scheduler::builder()
        .filter(ComputeFilter)
        .filter(ResourceFilter::new())
        .weigher(FreeResourceWeigher::ram(), -1.0)
        .build()
        .unwrap()
}

fn ids(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}-{i}")).collect()
}

fn plan(shared: &SharedCluster, s: &Scheduler, req: &Request, prefix: &str) -> Plan {
    let snap = shared.snapshot();
    let placement = s.schedule(&snap, req).unwrap();
    Plan::from_placement(&snap, req, &placement, &ids(prefix, req.count as usize)).unwrap()
}

fn used(c: &Cluster, host: &str) -> f64 {
    c.host(c.host_id(host).unwrap()).unwrap().resource(ResourceId::MEMORY_MB).used
}

#[test]
fn snapshots_share_hosts_and_never_change() {
    let shared = SharedCluster::new(cluster(200));
    let before = shared.snapshot();
    let s = stacking();
    let out = shared.commit(&s, &plan(&shared, &s, &Request::new(1).memory_mb(1000.0), "a")).unwrap();
    assert_eq!(out.seq, Some(1));
    let after = shared.snapshot();
    assert_eq!((before.seq(), after.seq()), (0, 1));
    assert_eq!(used(&before, "h0"), 0.0);
    assert_eq!(used(&after, "h0"), 1000.0);
    // A host the commit did not touch is the same allocation in both snapshots.
    assert!(std::ptr::eq(before.host(HostId(150)).unwrap(), after.host(HostId(150)).unwrap()));
    assert!(Arc::ptr_eq(after.cluster(), shared.snapshot().cluster()));
}

#[test]
fn a_stale_claim_never_lands_with_generation_validation() {
    let shared = SharedCluster::new(cluster(2));
    let s = stacking();
    let req = Request::new(1).memory_mb(1000.0);
    let (p1, p2) = (plan(&shared, &s, &req, "a"), plan(&shared, &s, &req, "b"));
    assert_eq!(p1.claims()[0].host, p2.claims()[0].host);
    assert!(shared.commit(&s, &p1).unwrap().is_complete());
    let out = shared.commit(&s, &p2).unwrap();
    assert_eq!(out.committed, vec![]);
    assert_eq!(out.seq, None);
    assert_eq!(out.stale_reads, 1);
    let gen = shared.snapshot().host(HostId(0)).unwrap().generation;
    assert_eq!(out.conflicts[0].reason, ConflictReason::Stale { planned: 0, current: gen });
    assert_eq!(used(&shared.snapshot(), "h0"), 1000.0);
    let stats = shared.stats();
    assert_eq!((stats.commits, stats.committed, stats.conflicts, stats.stale_reads), (2, 1, 1, 1));
}

#[test]
fn fit_validation_lands_a_stale_claim_only_if_it_still_fits() {
    let shared = SharedCluster::new(cluster(2));
    let s = stacking();
    let req = Request::new(1).memory_mb(3000.0);
    let p1 = plan(&shared, &s, &Request::new(1).memory_mb(1000.0), "a");
    let p2 = plan(&shared, &s, &req, "b").validation(Validation::Fit);
    let p3 = plan(&shared, &s, &req, "c").validation(Validation::Fit);
    shared.commit(&s, &p1).unwrap();
    let landed = shared.commit(&s, &p2).unwrap();
    assert!(landed.is_complete());
    assert_eq!(landed.stale_reads, 1);
    let refused = shared.commit(&s, &p3).unwrap();
    match &refused.conflicts[0].reason {
        ConflictReason::NoFit { filter: Some(f), reason: Some(r) } => {
            assert_eq!((f.as_str(), r.as_str()), ("resources", "insufficient memory"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(used(&shared.snapshot(), "h0"), 4000.0);
}

#[test]
fn claims_of_one_plan_count_against_each_other() {
    let shared = SharedCluster::new(cluster(1));
    let s = stacking();
    let snap = shared.snapshot();
    let req = Request::new(3).memory_mb(1500.0);
    let mut p = Plan::new(&snap, &req);
    for i in 0..3 {
        p.push(HostId(0), format!("vm-{i}"));
    }
    let out = shared.commit(&s, &p).unwrap();
    assert_eq!(out.committed.len(), 2);
    assert_eq!(out.conflicts.len(), 1);
    assert_eq!(out.conflicts[0].claim, 2);
    assert!(matches!(out.conflicts[0].reason, ConflictReason::NoFit { .. }));
    assert_eq!(used(&shared.snapshot(), "h0"), 3000.0);
}

#[test]
fn over_commit_is_refused_even_without_a_resource_filter() {
    let shared = SharedCluster::new(cluster(1));
    let no_filters = Scheduler::builder().build().unwrap();
    let snap = shared.snapshot();
    let req = Request::new(2).memory_mb(3000.0);
    let mut p = Plan::new(&snap, &req);
    p.push(HostId(0), "a").push(HostId(0), "b");
    let out = shared.commit(&no_filters, &p).unwrap();
    assert_eq!(out.committed.len(), 1);
    assert_eq!(out.conflicts[0].reason, ConflictReason::OverCommit { resource: "memory_mb".into() });
    // A kind no host declares cannot be committed either.
    let gpu = Request::new(1).resource("gpu", 1.0);
    let mut p = Plan::new(&shared.snapshot(), &gpu);
    p.push(HostId(0), "g");
    let out = shared.commit(&no_filters, &p).unwrap();
    assert_eq!(out.conflicts[0].reason, ConflictReason::OverCommit { resource: "gpu".into() });
}

#[test]
fn a_gang_lands_whole_or_not_at_all() {
    let shared = SharedCluster::new(cluster(3));
    let s = stacking();
    let req = Request::new(3).memory_mb(4000.0);
    let gang = plan(&shared, &s, &req, "g").mode(CommitMode::Gang);
    assert_eq!(gang.claims().len(), 3);
    // Another scheduler takes h1 first.
    shared.commit(&s, &plan(&shared, &s, &Request::new(1).memory_mb(10.0), "x")).unwrap();
    let seq = shared.seq();
    let out = shared.commit(&s, &gang).unwrap();
    assert!(out.committed.is_empty());
    let reasons: Vec<bool> = out.conflicts.iter().map(|c| c.reason == ConflictReason::GangAborted).collect();
    assert_eq!(reasons, vec![false, true, true]);
    assert_eq!(shared.seq(), seq);
    assert_eq!(used(&shared.snapshot(), "h1"), 0.0);
    // Without the interference, the same gang lands in one entry.
    let gang = plan(&shared, &s, &Request::new(2).memory_mb(4000.0), "g").mode(CommitMode::Gang);
    let out = shared.commit(&s, &gang).unwrap();
    assert_eq!(out.committed.len(), 2);
    assert_eq!(shared.log().entries().last().unwrap().events.len(), 2);
}

#[test]
fn removed_hosts_duplicates_and_foreign_plans() {
    let shared = SharedCluster::new(cluster(2));
    let s = stacking();
    let req = Request::new(1).memory_mb(10.0);
    let p = plan(&shared, &s, &req, "a").validation(Validation::Fit);
    shared.publish(ClusterEvent::HostRemoved { host: "h0".into() }).unwrap();
    assert_eq!(shared.commit(&s, &p).unwrap().conflicts[0].reason, ConflictReason::HostGone);

    let p = plan(&shared, &s, &req, "a");
    shared.commit(&s, &p).unwrap();
    let again = plan(&shared, &s, &req, "a");
    assert!(matches!(shared.commit(&s, &again).unwrap().conflicts[0].reason, ConflictReason::Rejected(_)));

    let other = SharedCluster::new(cluster(2));
    assert_eq!(other.commit(&s, &p), Err(SharedError::ForeignPlan));
    let bad = ClusterEvent::HostRemoved { host: "nope".into() };
    assert!(matches!(shared.publish(bad), Err(SharedError::Event(_))));
}

#[test]
fn claims_release_confirm_and_expire() {
    let shared = SharedCluster::new(cluster(4));
    let s = stacking();
    let req = Request::new(1).memory_mb(1000.0);
    let a = shared.commit(&s, &plan(&shared, &s, &req, "a").expires_at(10)).unwrap().committed[0].id;
    let b = shared.commit(&s, &plan(&shared, &s, &req, "b").expires_at(20)).unwrap().committed[0].id;
    let c = shared.commit(&s, &plan(&shared, &s, &req, "c").expires_at(5)).unwrap().committed[0].id;
    let d = shared.commit(&s, &plan(&shared, &s, &req, "d")).unwrap().committed[0].id;
    assert_eq!(used(&shared.snapshot(), "h0"), 4000.0);
    shared.confirm(c).unwrap();
    assert_eq!(shared.confirm(c), Err(SharedError::UnknownClaim(c)));
    assert_eq!(shared.expire(9), vec![]);
    assert_eq!(shared.expire(10), vec![a]);
    assert_eq!(used(&shared.snapshot(), "h0"), 3000.0);
    let seq = shared.release(d).unwrap();
    assert_eq!(seq, Some(shared.seq()));
    assert_eq!(shared.release(d), Err(SharedError::UnknownClaim(d)));
    // The confirmed claim never expires; `b` does.
    assert_eq!(shared.expire(u64::MAX), vec![b]);
    assert_eq!(used(&shared.snapshot(), "h0"), 1000.0);
    assert!(shared.open_claims().is_empty());
    assert_eq!(shared.stats().released, 3);

    // A claim whose instance an event already removed releases nothing.
    let e = shared.commit(&s, &plan(&shared, &s, &req, "e")).unwrap().committed[0].clone();
    shared.publish(ClusterEvent::InstanceRemoved { host: e.host_name.clone(), instance: e.instance.clone() }).unwrap();
    let seq = shared.seq();
    assert_eq!(shared.release(e.id), Ok(None));
    assert_eq!(shared.seq(), seq);
}

#[test]
fn place_retries_only_the_conflicting_part() {
    let shared = SharedCluster::new(cluster(4));
    let s = stacking();
    let req = Request::new(3).memory_mb(3000.0);
    let placed = shared.place(&s, &req, &ids("a", 3), &RetryPolicy::default()).unwrap();
    assert_eq!(placed.committed.len(), 3);
    assert_eq!(placed.attempts, 1);
    let hosts: Vec<&str> = placed.committed.iter().map(|c| c.host_name.as_str()).collect();
    assert_eq!(hosts, ["h0", "h1", "h2"]);
    let instances: Vec<&str> = placed.committed.iter().map(|c| c.instance.as_str()).collect();
    assert_eq!(instances, ["a-0", "a-1", "a-2"]);
    // Too many: the fourth fits, the fifth does not; partial commits keep the fourth.
    let more = shared.place(&s, &Request::new(2).memory_mb(3000.0), &ids("b", 2), &RetryPolicy::default()).unwrap();
    assert_eq!((more.committed.len(), more.unplaced), (1, 1));
    assert!(more.explanation.unwrap().to_string().contains("insufficient memory"));
    // A gang that cannot fit commits nothing.
    let gang = RetryPolicy::default().mode(CommitMode::Gang);
    // Four of five would fit (one per host); a gang takes none of them.
    let g = shared.place(&s, &Request::new(5).memory_mb(1000.0), &ids("g", 5), &gang).unwrap();
    assert_eq!((g.committed.len(), g.unplaced), (0, 5));
    let seq = shared.seq();
    let p = shared.place(&s, &Request::new(5).memory_mb(1000.0), &ids("g", 5), &RetryPolicy::default()).unwrap();
    assert_eq!((p.committed.len(), p.unplaced, shared.seq()), (4, 1, seq + 1));
    assert!(matches!(
        shared.place(&s, &Request::new(2), &ids("x", 1), &RetryPolicy::default()),
        Err(RetryError::Shared(SharedError::InstanceIds { ids: 1, count: 2 }))
    ));
}

#[test]
fn place_counts_retries_after_a_race() {
    let shared = Arc::new(SharedCluster::new(cluster(3)));
    let s = stacking();
    let req = Request::new(1).memory_mb(1000.0);
    // A stale plan on h0, then a competitor lands on h0: committing the stale plan conflicts.
    let stale = plan(&shared, &s, &req, "late");
    shared.commit(&s, &plan(&shared, &s, &req, "early")).unwrap();
    let out = shared.commit(&s, &stale).unwrap();
    assert_eq!(out.conflicts.len(), 1);
    // The helper recovers from the same race by re-planning on fresh state.
    let policy = RetryPolicy::default().max_attempts(1).top_k(1);
    let placed = shared.place(&s, &req, &ids("late", 1), &policy).unwrap();
    assert_eq!(placed.committed[0].host_name, "h0");
    assert_eq!(placed.attempts, 1);
}

#[test]
fn retries_stop_with_a_typed_error() {
    // A scheduler without filters plans both instances on the one host; the over-commit rule
    // refuses the second at every commit, so the planner and the validator disagree forever
    // (the loop Nomad guards against) and the attempts must run out.
    let shared = SharedCluster::new(Cluster::builder().host(HostSpec::new("h").memory_mb(100.0)).build().unwrap());
    let no_filters = Scheduler::builder().build().unwrap();
    let policy = RetryPolicy::default().max_attempts(3);
    let err = shared.place(&no_filters, &Request::new(2).memory_mb(60.0), &ids("v", 2), &policy).unwrap_err();
    match err {
        RetryError::Exhausted { attempts, requested, remaining, committed } => {
            assert_eq!((attempts, requested, remaining), (3, 2, 1));
            assert_eq!(committed.len(), 1);
        }
        other => panic!("{other:?}"),
    }
    let stats = shared.stats();
    assert_eq!((stats.retries, stats.conflicts, stats.committed), (2, 3, 1));
}

#[test]
fn the_log_replays_compacts_and_refuses_gaps_and_duplicates() {
    let shared = SharedCluster::new(cluster(3));
    let s = stacking();
    for i in 0..4 {
        shared
            .place(&s, &Request::new(1).memory_mb(500.0), &ids(&format!("r{i}"), 1), &RetryPolicy::default())
            .unwrap();
    }
    shared
        .publish(ClusterEvent::HostStateChanged { host: "h2".into(), change: StateChange::default().up(false) })
        .unwrap();
    let log = shared.log();
    assert_eq!((log.base_seq(), log.head()), (0, 5));
    assert_eq!(log.replay().unwrap().to_spec(), shared.snapshot().to_spec());
    assert_eq!(log.since(3).unwrap().iter().map(|e| e.seq).collect::<Vec<_>>(), vec![4, 5]);
    assert_eq!(log.since(6).unwrap_err(), LogError::Ahead { seq: 6, head: 5 });

    let mut copy = log.clone();
    assert_eq!(copy.append(LogEntry::new(5, vec![])), Err(LogError::Duplicate { seq: 5, applied: 5 }));
    assert_eq!(copy.append(LogEntry::new(7, vec![])), Err(LogError::Gap { expected: 6, got: 7 }));
    copy.compact(3).unwrap();
    assert_eq!((copy.base_seq(), copy.entries().len()), (3, 2));
    assert_eq!(copy.since(2).unwrap_err(), LogError::Compacted { seq: 2, base: 3 });
    assert_eq!(copy.replay().unwrap().to_spec(), shared.snapshot().to_spec());

    // A follower from the checkpoint plus the tail equals the leader.
    let mut f = Follower::from_checkpoint(&copy.checkpoint()).unwrap();
    f.catch_up(copy.since(3).unwrap()).unwrap();
    assert_eq!(f.cluster().to_spec(), shared.snapshot().to_spec());
    // An entry that does not apply is reported and changes nothing.
    let bad = LogEntry::new(6, vec![ClusterEvent::HostRemoved { host: "nope".into() }]);
    assert!(matches!(f.apply(&bad), Err(LogError::Event { seq: 6, .. })));
    assert_eq!(f.seq(), 5);

    // Compaction on the shared cluster: the base is the current state, no entry is left.
    assert_eq!(shared.compact(), 5);
    assert!(shared.log().entries().is_empty());
    assert_eq!(shared.log_since(4).unwrap_err(), LogError::Compacted { seq: 4, base: 5 });
    assert_eq!(shared.checkpoint().seq, 5);
}

#[test]
fn entries_and_checkpoints_round_trip_and_restore() {
    let shared = SharedCluster::new(cluster(2));
    let s = stacking();
    let checkpoint = shared.checkpoint();
    shared.place(&s, &Request::new(2).memory_mb(100.0).group("web"), &ids("w", 2), &RetryPolicy::default()).unwrap();
    let tail = shared.log_since(0).unwrap();
    let json = serde_json::to_string(&tail).unwrap();
    assert!(json.contains(r#""type":"instance_placed""#), "{json}");
    let back: Vec<LogEntry> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, tail);
    let cp: Checkpoint = serde_json::from_str(&serde_json::to_string(&checkpoint).unwrap()).unwrap();
    assert_eq!(cp, checkpoint);

    let restored = SharedCluster::restore(&cp, &back).unwrap();
    assert_eq!(restored.seq(), shared.seq());
    assert_eq!(restored.snapshot().to_spec(), shared.snapshot().to_spec());
    // Its generations are its own: an old plan is refused, a new one lands.
    let old = plan(&shared, &s, &Request::new(1), "o");
    assert_eq!(restored.commit(&s, &old), Err(SharedError::ForeignPlan));
    assert!(restored.commit(&s, &plan(&restored, &s, &Request::new(1), "n")).unwrap().is_complete());
    assert_eq!(restored.seq(), shared.seq() + 1);
    let gap = LogEntry::new(9, vec![]);
    assert!(matches!(SharedCluster::restore(&cp, &[gap]), Err(LogError::Gap { expected: 1, got: 9 })));
}

fn partitioned() -> Cluster {
    let mut b = Cluster::builder().aggregate(AggregateSpec::new("ssd")).aggregate(AggregateSpec::new("hdd"));
    for i in 0..4 {
        let os = if i % 2 == 0 { "linux" } else { "windows" };
        let agg = if i < 2 { "ssd" } else { "hdd" };
        b = b.host(HostSpec::new(format!("h{i}")).memory_mb(4096.0).vcpus(4.0).label("os", os).aggregate(agg));
    }
    b.host(HostSpec::new("spare").memory_mb(4096.0)).build().unwrap()
}

#[test]
fn the_router_routes_by_group_and_each_partition_sees_its_hosts() {
    let groups = BTreeMap::from([("l".to_string(), "linux".to_string()), ("w".to_string(), "windows".to_string())]);
    let router = Router::builder(HostKey::Label("os".into()), RequestKey::Group(groups))
        .partition("linux", stacking())
        .partition("windows", stacking())
        .build(&partitioned())
        .unwrap();
    assert_eq!(router.unassigned(), ["spare".to_string()]);
    let names = |p: usize| -> Vec<String> {
        router.partitions()[p].shared().snapshot().hosts().map(|(_, h)| h.name.to_string()).collect()
    };
    assert_eq!(names(0), ["h0", "h2"]);
    assert_eq!(names(1), ["h1", "h3"]);
    let w = Request::new(2).memory_mb(1024.0).vcpus(1.0).group("w");
    // The scheduler's own pick (fill-first), not the default random pick among the best few.
    let placed = router.place(&w, &ids("w", 2), &RetryPolicy::default().top_k(1)).unwrap();
    assert!(placed.committed.iter().all(|c| c.host_name == "h1"));
    let unknown = Request::new(1).memory_mb(1.0).vcpus(1.0).group("gpu");
    assert_eq!(router.route(&unknown), Err(RouteError::NoPartition { key: None }));
    assert_eq!(router.route(&Request::new(1)), Err(RouteError::NoPartition { key: None }));
    // Events go to the owning partition; a new host joins the partition its label names.
    let (p, _) = router.publish(ClusterEvent::HostAdded { host: HostSpec::new("h9").label("os", "windows") }).unwrap();
    assert_eq!(p, 1);
    assert_eq!(router.partition_of_host("h9"), Some(1));
    let (p, seq) = router.publish(ClusterEvent::HostRemoved { host: "h0".into() }).unwrap();
    assert_eq!((p, seq), (0, 1));
    assert_eq!(router.partition_of_host("h0"), None);
    let lost = ClusterEvent::HostRemoved { host: "spare".into() };
    assert_eq!(router.publish(lost), Err(RouteError::UnownedHost { host: "spare".into() }));
}

#[test]
fn the_router_keeps_a_group_in_one_partition() {
    // The pool a request is meant for, here said by its zone name.
    let by_pool = || RequestKey::Fn(Arc::new(|r: &Request| r.zone.clone()));
    let router = Router::builder(HostKey::Aggregate, by_pool())
        .partition("ssd", stacking())
        .partition("hdd", stacking())
        .build(&partitioned())
        .unwrap();
    let ssd = Request::new(1).memory_mb(512.0).vcpus(1.0).zone("ssd").group("g1");
    router.place(&ssd, &ids("a", 1), &RetryPolicy::default()).unwrap();
    assert_eq!(router.partition_of_group("g1"), Some(0));
    let hdd = ssd.clone().zone("hdd");
    let err = router.place(&hdd, &ids("b", 1), &RetryPolicy::default()).unwrap_err();
    assert_eq!(err, RouteError::GroupElsewhere { group: "g1".into(), home: "ssd".into(), routed: "hdd".into() });
    // Groups already running when the router is built are pinned where their members are.
    let c = partitioned()
        .apply(&ClusterEvent::InstancePlaced { host: "h3".into(), instance: InstanceSpec::new("x").group("db") })
        .unwrap();
    let by_fn = Router::builder(
        HostKey::Fn(Arc::new(|h: &HostSpec| h.aggregates.first().cloned())),
        RequestKey::Fn(Arc::new(|r: &Request| r.group.clone().map(|_| "ssd".to_string()))),
    )
    .partition("ssd", stacking())
    .partition("hdd", stacking())
    .build(&c)
    .unwrap();
    assert_eq!(by_fn.partition_of_group("db"), Some(1));
    let err = by_fn.route(&Request::new(1).group("db")).unwrap_err();
    assert!(matches!(err, RouteError::GroupElsewhere { .. }));
    assert_eq!(by_fn.route(&Request::new(1).group("web")), Ok(0));
    let twice = Router::builder(HostKey::Aggregate, by_pool())
        .partition("ssd", stacking())
        .partition("ssd", stacking())
        .build(&c);
    assert!(twice.is_err());
}

#[test]
fn shared_types_cross_threads() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<SharedCluster>();
    send_sync::<Snapshot>();
    send_sync::<Plan>();
    send_sync::<Router>();
    send_sync::<EventLog>();
    send_sync::<Follower>();
}

#[test]
fn retry_seeds_differ_by_request_and_attempt() {
    let a = super::retry::tests_support::seed(None, "vm-1", 2);
    assert_eq!(a, super::retry::tests_support::seed(None, "vm-1", 2));
    assert_ne!(a, super::retry::tests_support::seed(None, "vm-2", 2));
    assert_ne!(a, super::retry::tests_support::seed(None, "vm-1", 3));
    assert_ne!(a, super::retry::tests_support::seed(Some(1), "vm-1", 2));
}

#[test]
fn a_partition_failure_names_the_partition() {
    let router =
        Router::builder(HostKey::Label("os".into()), RequestKey::Fn(Arc::new(|_: &Request| Some("linux".into()))))
            .partition("linux", stacking())
            .build(&partitioned())
            .unwrap();
    let err = router.place(&Request::new(2), &ids("x", 1), &RetryPolicy::default()).unwrap_err();
    match err {
        RouteError::Partition { partition, source: RetryError::Shared(SharedError::InstanceIds { .. }) } => {
            assert_eq!(partition, "linux");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_metrics_update_leaves_claims_on_the_host_fresh() {
    let shared = SharedCluster::new(cluster(2));
    let s = stacking();
    let req = Request::new(1).memory_mb(1000.0);
    let p = plan(&shared, &s, &req, "m");
    let metrics = BTreeMap::from([("load".to_string(), 0.5)]);
    shared.publish(ClusterEvent::MetricsUpdated { host: p.claims()[0].host_name.clone(), metrics }).unwrap();
    let out = shared.commit(&s, &p).unwrap();
    assert!(out.is_complete(), "{:?}", out.conflicts);
    assert_eq!(out.stale_reads, 0);
    // A cordon does bump the generation: a claim planned before it is stale.
    let p = plan(&shared, &s, &req, "n");
    let change = StateChange::default().cordoned(true);
    shared.publish(ClusterEvent::HostStateChanged { host: p.claims()[0].host_name.clone(), change }).unwrap();
    let out = shared.commit(&s, &p).unwrap();
    assert!(matches!(out.conflicts[0].reason, ConflictReason::Stale { .. }));
}

#[test]
fn relative_expiry_reads_the_store_clock() {
    let now = Arc::new(std::sync::atomic::AtomicU64::new(1_000));
    let clock = now.clone();
    let shared = SharedCluster::new(cluster(2)).with_clock(move || clock.load(std::sync::atomic::Ordering::SeqCst));
    let s = stacking();
    let req = Request::new(1).memory_mb(1000.0);
    let a = shared.commit(&s, &plan(&shared, &s, &req, "a").expires_after(50)).unwrap().committed[0].id;
    assert_eq!(shared.open_claims()[0].expires_at, Some(1_050));
    now.store(1_049, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(SharedState::expire_due(&shared), Ok(vec![]));
    now.store(1_050, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(SharedState::expire_due(&shared), Ok(vec![a]));
    // An absolute expiry wins over a relative one.
    let p = plan(&shared, &s, &req, "b").expires_after(5).expires_at(7);
    shared.commit(&s, &p).unwrap();
    assert_eq!(shared.open_claims()[0].expires_at, Some(7));
}

#[test]
fn the_shared_state_trait_is_object_safe_and_commits_plans_in_order() {
    let shared = SharedCluster::new(cluster(1));
    let state: &dyn SharedState = &shared;
    let s = stacking();
    let req = Request::new(1).memory_mb(3000.0);
    let snap = state.snapshot().unwrap();
    let plans: Vec<Plan> = ["x", "y"]
        .iter()
        .map(|p| Plan::from_placement(&snap, &req, &s.schedule(&snap, &req).unwrap(), &ids(p, 1)).unwrap())
        .collect();
    let outcomes = state.commit_all(&s, &plans).unwrap();
    // Both planned on h0; the second is stale once the first landed.
    assert!(outcomes[0].is_complete());
    assert!(matches!(outcomes[1].conflicts[0].reason, ConflictReason::Stale { .. }));
    assert_eq!(state.log_since(0).unwrap().len(), 1);
    assert_eq!(state.checkpoint().unwrap().seq, 0);
    assert!(matches!(state.log_since(5), Err(SharedError::Log(LogError::Ahead { .. }))));
}

#[test]
fn judge_plan_takes_what_the_store_already_knows() {
    let shared = SharedCluster::new(cluster(2));
    let s = stacking();
    let p = plan(&shared, &s, &Request::new(2).memory_mb(1000.0), "k");
    let base = shared.snapshot();
    let known = |i: usize, _: &Claim| match i {
        0 => Some(Prior::Landed),
        _ => Some(Prior::Conflict(ConflictReason::AlreadyPlaced { host: "h9".into() })),
    };
    let v = judge_plan(&base, &s, &p, &known).unwrap();
    assert_eq!(v.already, vec![0]);
    assert!(v.landed.is_empty());
    assert_eq!(v.conflicts[0].reason, ConflictReason::AlreadyPlaced { host: "h9".into() });
    assert_eq!(v.next.to_spec(), base.to_spec());
}

#[test]
fn a_partition_filter_keeps_the_hosts_its_key_names_chunk_by_chunk() {
    let mut b = Cluster::builder();
    for i in 0..150 {
        let mut h = HostSpec::new(format!("h{i}")).vcpus(8.0).memory_mb(4096.0);
        if i % 5 != 4 {
            h = h.label("pool", format!("p{}", i % 3));
        }
        b = b.host(h);
    }
    let c = b.build().unwrap();
    let f = PartitionFilter::new(HostKey::Label("pool".into()), ["p0", "p2"]);
    let s = Scheduler::builder().filter(ResourceFilter::new()).filter(f).build().unwrap();
    let placement = s.schedule(&c, &Request::new(150).memory_mb(4096.0)).unwrap();
    let mut got: Vec<usize> = placement.selections.iter().map(|s| s.host.index()).collect();
    got.sort_unstable();
    let want: Vec<usize> = (0..150).filter(|i| i % 5 != 4 && i % 3 != 1).collect();
    assert_eq!(got, want);
    // The per-host answer agrees with the chunk answer.
    let f = PartitionFilter::new(HostKey::Label("pool".into()), ["p0", "p2"]);
    for i in 0..150 {
        assert_eq!(f.contains(&c, HostId(i)), want.contains(&(i as usize)), "h{i}");
    }
    let none = PartitionFilter::new(HostKey::Label("zone".into()), ["p0"]);
    assert!(!none.contains(&c, HostId(0)));
}

/// Issue 42, item 8: the defaults are the ones documented on `RetryPolicy` and `Validation`.
#[test]
fn the_default_policy_is_fit_validation_a_pick_among_the_best_few_and_enough_attempts() {
    let p = RetryPolicy::default();
    assert_eq!(p.validation, Validation::Fit);
    assert_eq!((p.top_k, p.max_attempts), (DEFAULT_TOP_K, DEFAULT_MAX_ATTEMPTS));
    assert!(p.top_k > 1 && p.max_attempts > 3);
    assert_eq!(p.mode, CommitMode::Partial);
    // A hand-made plan keeps the strict rule.
    assert_eq!(Validation::default(), Validation::Generation);
    let shared = SharedCluster::new(cluster(2));
    assert_eq!(plan(&shared, &stacking(), &Request::new(1), "a").validation_rule(), Validation::Generation);
    // A policy read from JSON without the new field takes its default.
    let read: RetryPolicy = serde_json::from_str(r#"{"max_attempts": 2}"#).unwrap();
    assert_eq!(read, RetryPolicy::default().max_attempts(2));
}

/// Issue 42, item 8: with the default policy a best-host scheduler's first plan draws among the
/// best few hosts, by a seed taken from the instance id: reproducible, and different for
/// different instances. `top_k(1)` keeps the scheduler's own pick.
#[test]
fn the_first_plan_draws_among_the_best_few_by_the_instance_id() {
    let s = stacking();
    let req = Request::new(1).memory_mb(1000.0);
    let first_host = |id: &str, policy: &RetryPolicy| {
        let shared = SharedCluster::new(cluster(8));
        let placed = shared.place(&s, &req, &[id.to_string()], policy).unwrap();
        placed.committed[0].host_name.clone()
    };
    let mut drawn = std::collections::BTreeSet::new();
    for i in 0..24 {
        let id = format!("vm-{i}");
        let host = first_host(&id, &RetryPolicy::default());
        assert_eq!(host, first_host(&id, &RetryPolicy::default()), "the same call draws the same host");
        drawn.insert(host);
        assert_eq!(first_host(&id, &RetryPolicy::default().top_k(1)), "h0");
    }
    // Eight equal hosts: the best four are the four lowest ids, and more than one is drawn.
    assert!(drawn.len() > 1, "{drawn:?}");
    assert!(drawn.iter().all(|h| ["h0", "h1", "h2", "h3"].contains(&h.as_str())), "{drawn:?}");
    // A request with its own seed draws by it, whatever the ids.
    let seeded = req.clone().seed(7);
    let by_seed = |id: &str| {
        let shared = SharedCluster::new(cluster(8));
        shared.place(&s, &seeded, &[id.to_string()], &RetryPolicy::default()).unwrap().committed[0].host_name.clone()
    };
    assert_eq!(by_seed("x"), by_seed("y"));
}

/// Issue 42, item 8: the README's "moving is one line" example under contention. Four threads,
/// each with its own best-host (fill-first) scheduler, place requests of two instances with
/// `RetryPolicy::default()` on one small cluster until it is exactly full, and every request
/// succeeds. With fit validation a claim conflicts only when its host filled since the snapshot
/// it was planned on, and hosts only fill, so no instance loses more attempts than there are
/// hosts (8, below the default's 10); there is always room, since demand equals capacity.
#[test]
fn many_schedulers_place_with_the_default_policy_and_every_request_succeeds() {
    const THREADS: usize = 4;
    const REQUESTS: usize = 4;
    // 8 hosts of 4 GiB: 32 instances of 1 GiB, exactly what the threads ask for.
    let shared = SharedCluster::new(cluster(8));
    let hosts = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let shared = &shared;
                scope.spawn(move || {
                    let scheduler = stacking();
                    let mut hosts = Vec::new();
                    for r in 0..REQUESTS {
                        let ids = ids(&format!("t{t}-r{r}"), 2);
                        let request = Request::new(2).memory_mb(1024.0);
                        let placed = shared.place(&scheduler, &request, &ids, &RetryPolicy::default()).unwrap();
                        assert!(placed.is_complete(), "{placed:?}");
                        hosts.extend(placed.committed.into_iter().map(|c| c.host_name));
                    }
                    hosts
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect::<Vec<_>>()
    });
    assert_eq!(hosts.len(), THREADS * REQUESTS * 2);
    let snapshot = shared.snapshot();
    for (_, h) in snapshot.hosts() {
        assert_eq!(used(&snapshot, &h.name), 4096.0, "{} is full, not over", h.name);
    }
}
