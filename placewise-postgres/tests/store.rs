//! The PostgreSQL store against a real, throwaway server: schema, commit rules, idempotent
//! retries, expiry, following, compaction, roles, hostile names.

use placewise::shared::{
    CommitMode, ConflictReason, HostKey, LogError, PartitionFilter, Plan, RetryPolicy, SharedCluster, SharedError,
    SharedState, StoreErrorKind, Validation,
};
use placewise::snapshot::{Cluster, ClusterEvent, HostSpec, StateChange};
use placewise::{ComputeFilter, FreeResourceWeigher, Request, ResourceFilter, Scheduler};
use placewise_postgres::server::{require_server, TempServer};
use placewise_postgres::PgStore;
use std::time::Duration;

fn cluster(names: &[&str]) -> Cluster {
    let mut b = Cluster::builder();
    for n in names {
        b = b.host(HostSpec::new(*n).vcpus(8.0).memory_mb(4096.0));
    }
    b.build().unwrap()
}

fn stacking() -> Scheduler {
    Scheduler::builder()
        .filter(ComputeFilter)
        .filter(ResourceFilter::new())
        .weigher(FreeResourceWeigher::ram(), -1.0)
        .build()
        .unwrap()
}

/// A migrated store seeded with `names`.
fn setup(test: &str, names: &[&str]) -> Option<(TempServer, PgStore)> {
    let server = require_server(test)?;
    PgStore::migrate(&server.url()).unwrap();
    let store = PgStore::connect(&server.url()).unwrap();
    assert!(store.bootstrap(&cluster(names)).unwrap());
    Some((server, store))
}

fn plan(state: &dyn SharedState, s: &Scheduler, req: &Request, ids: &[&str]) -> Plan {
    let snap = state.snapshot().unwrap();
    let placement = s.schedule(&snap, req).unwrap();
    let ids: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
    Plan::from_placement(&snap, req, &placement, &ids).unwrap()
}

fn clean(url: &str, acknowledged: &[(String, String)]) {
    let audit = PgStore::audit(url, acknowledged).unwrap();
    assert!(audit.is_clean(), "{:#?}", audit.problems);
}

#[test]
fn migrate_is_versioned_and_idempotent() {
    let Some(server) = require_server("migrate_is_versioned_and_idempotent") else { return };
    // Before migrating, connecting says what is missing.
    let err = PgStore::connect(&server.url()).unwrap_err();
    assert!(matches!(&err, SharedError::Store(e) if e.kind == StoreErrorKind::Corrupt), "{err}");
    PgStore::migrate(&server.url()).unwrap();
    PgStore::migrate(&server.url()).unwrap();
    let mut c = postgres::Client::connect(&server.url(), postgres::NoTls).unwrap();
    let versions: Vec<i32> =
        c.query("SELECT version FROM placewise_schema", &[]).unwrap().iter().map(|r| r.get(0)).collect();
    assert_eq!(versions, vec![1]);
    let heads: i64 = c.query_one("SELECT count(*) FROM placewise_head", &[]).unwrap().get(0);
    assert_eq!(heads, 1);
    // A newer schema than the library knows is refused, not used.
    c.execute("INSERT INTO placewise_schema (version) VALUES (99)", &[]).unwrap();
    assert!(PgStore::migrate(&server.url()).is_err());
    assert!(PgStore::connect(&server.url()).is_err());
}

/// The same script on the in-process store and on PostgreSQL gives the same outcomes.
#[test]
fn commits_follow_the_same_rules_as_the_in_process_store() {
    let names = ["h0", "h1", "h2"];
    let Some((server, pg)) = setup("commits_follow_the_same_rules_as_the_in_process_store", &names) else { return };
    let mem = SharedCluster::new(cluster(&names));
    let s = stacking();
    let mut outcomes = Vec::new();
    for state in [&mem as &dyn SharedState, &pg] {
        let req = Request::new(1).memory_mb(3000.0);
        let (a, b) = (plan(state, &s, &req, &["a"]), plan(state, &s, &req, &["b"]));
        let first = state.commit(&s, &a).unwrap();
        let stale = state.commit(&s, &b).unwrap();
        let fit = state.commit(&s, &b.clone().validation(Validation::Fit)).unwrap();
        let gang = plan(state, &s, &Request::new(3).memory_mb(3000.0), &["g0", "g1", "g2"]);
        let full = state.commit(&s, &plan(state, &s, &Request::new(1).memory_mb(3000.0), &["x"])).unwrap();
        let gang = state.commit(&s, &gang.mode(CommitMode::Gang)).unwrap();
        let over = {
            let free = Scheduler::builder().build().unwrap();
            let p = plan(state, &free, &Request::new(1).memory_mb(4000.0), &["o"]);
            state.commit(&free, &p).unwrap()
        };
        let summary = |o: &placewise::shared::CommitOutcome| {
            let landed: Vec<(usize, String)> = o.committed.iter().map(|c| (c.claim, c.host_name.clone())).collect();
            let conflicts: Vec<String> = o.conflicts.iter().map(|c| format!("{} {}", c.claim, c.reason)).collect();
            (landed, conflicts, o.stale_reads)
        };
        outcomes.push([&first, &stale, &fit, &full, &gang, &over].map(summary));
    }
    assert_eq!(outcomes[0], outcomes[1]);
    // The script exercised every rule: a stale claim, a gang abort and an over-commit.
    let text = format!("{:?}", outcomes[1]);
    for reason in ["stale", "another claim of the gang", "would over-commit"] {
        assert!(text.contains(reason), "{reason} not in {text}");
    }
    assert_eq!(pg.snapshot().unwrap().to_spec(), mem.snapshot().to_spec());
    clean(&server.url(), &[]);
}

#[test]
fn a_commit_retried_after_a_lost_outcome_lands_once() {
    let Some((server, store)) = setup("a_commit_retried_after_a_lost_outcome_lands_once", &["h0", "h1"]) else {
        return;
    };
    let s = stacking();
    let p = plan(&store, &s, &Request::new(2).memory_mb(1000.0), &["vm-1", "vm-2"]);
    let first = store.commit(&s, &p).unwrap();
    // The caller never heard back and commits the very same plan again.
    let again = store.commit(&s, &p).unwrap();
    assert!(again.is_complete());
    assert_eq!(again.committed, first.committed);
    assert_eq!(again.seq, first.seq);
    assert_eq!(store.seq(), 1, "no second log entry");
    // A new plan of this process for the same instance on the same host is the same claim.
    let same = plan(&store, &s, &Request::new(1).memory_mb(1000.0), &["vm-1"]);
    if same.claims()[0].host_name == first.committed[0].host_name {
        assert_eq!(store.commit(&s, &same).unwrap().committed[0].id, first.committed[0].id);
    }
    // Another process's plan for an instance that is already placed does not place it twice.
    let other_process = PgStore::connect(&server.url()).unwrap();
    let other = plan(&other_process, &s, &Request::new(1).memory_mb(1000.0), &["vm-1"]);
    let out = other_process.commit(&s, &other).unwrap();
    assert!(matches!(out.conflicts[0].reason, ConflictReason::AlreadyPlaced { .. }), "{:?}", out.conflicts);
    assert_eq!(other_process.seq(), 1);
    let acknowledged: Vec<(String, String)> =
        first.committed.iter().map(|c| (c.instance.clone(), c.host_name.clone())).collect();
    clean(&server.url(), &acknowledged);
}

#[test]
fn claims_expire_on_the_database_clock_unless_confirmed() {
    let Some((server, store)) = setup("claims_expire_on_the_database_clock_unless_confirmed", &["h0"]) else { return };
    let s = stacking();
    let req = Request::new(1).memory_mb(1000.0);
    let short = store.commit(&s, &plan(&store, &s, &req, &["short"]).expires_after(1)).unwrap().committed[0].id;
    let kept = store.commit(&s, &plan(&store, &s, &req, &["kept"]).expires_after(1)).unwrap().committed[0].id;
    let long = store.commit(&s, &plan(&store, &s, &req, &["long"]).expires_after(3_600_000)).unwrap().committed[0].id;
    store.confirm(kept).unwrap();
    assert_eq!(store.confirm(kept), Err(SharedError::UnknownClaim(kept)));
    std::thread::sleep(Duration::from_millis(20));
    // Another process expires them: any store may.
    let other = PgStore::connect(&server.url()).unwrap();
    assert_eq!(other.expire_due().unwrap(), vec![short]);
    assert_eq!(other.expire_due().unwrap(), vec![]);
    assert_eq!(store.refresh().unwrap(), other.seq());
    let snap = store.snapshot().unwrap();
    let h0 = snap.host(snap.host_id("h0").unwrap()).unwrap();
    let ids: Vec<&str> = h0.instances.iter().map(|i| &*i.id).collect();
    assert_eq!(ids, ["kept", "long"]);
    assert_eq!(store.release(long).unwrap(), Some(store.seq()));
    assert_eq!(store.release(long), Err(SharedError::UnknownClaim(long)));
    let records = store.claims().unwrap();
    assert_eq!(records.len(), 1);
    assert!(records[0].confirmed);
    clean(&server.url(), &[("kept".into(), "h0".into())]);
}

#[test]
fn a_follower_applies_every_entry_once_and_reloads_after_compaction() {
    let Some((server, writer)) =
        setup("a_follower_applies_every_entry_once_and_reloads_after_compaction", &["h0", "h1"])
    else {
        return;
    };
    let follower = PgStore::connect(&server.url()).unwrap().with_poll_interval(Duration::from_secs(3600));
    let s = stacking();
    let placed = writer.place(&s, &Request::new(1).memory_mb(100.0), &["a".into()], &RetryPolicy::default()).unwrap();
    assert!(placed.is_complete());
    // Woken by the notification, not by polling.
    assert_eq!(follower.wait_for_change(Duration::from_secs(10)).unwrap(), writer.seq());
    assert_eq!(follower.snapshot().unwrap().to_spec(), writer.snapshot().unwrap().to_spec());
    // The follower is away while entries are written and compacted away.
    for i in 0..5 {
        let id = format!("b{i}");
        writer.place(&s, &Request::new(1).memory_mb(100.0), &[id], &RetryPolicy::default()).unwrap();
    }
    writer
        .publish(ClusterEvent::HostStateChanged { host: "h1".into(), change: StateChange::default().cordoned(true) })
        .unwrap();
    let base = writer.compact(0).unwrap();
    assert_eq!(base, writer.seq());
    assert!(matches!(writer.log_since(1), Err(SharedError::Log(LogError::Compacted { .. }))));
    assert_eq!(follower.wait_for_change(Duration::from_secs(10)).unwrap(), writer.seq());
    assert_eq!(follower.reloads(), 1);
    assert_eq!(follower.snapshot().unwrap().to_spec(), writer.snapshot().unwrap().to_spec());
    // A new process starts from the checkpoint.
    let fresh = PgStore::connect(&server.url()).unwrap();
    assert_eq!(fresh.snapshot().unwrap().to_spec(), writer.snapshot().unwrap().to_spec());
    assert_eq!(fresh.checkpoint().unwrap().seq, base);
    clean(&server.url(), &[]);
}

#[test]
fn the_scheduler_role_cannot_change_inventory() {
    let Some((server, _seeded)) = setup("the_scheduler_role_cannot_change_inventory", &["h0"]) else { return };
    let mut admin = postgres::Client::connect(&server.url(), postgres::NoTls).unwrap();
    admin
        .batch_execute(
            "CREATE ROLE sched1 LOGIN IN ROLE placewise_scheduler; CREATE ROLE agent1 LOGIN IN ROLE placewise_agent;",
        )
        .unwrap();
    let scheduler = PgStore::connect(&server.url_as("sched1")).unwrap();
    let agent = PgStore::connect(&server.url_as("agent1")).unwrap();
    let s = stacking();
    // The scheduler places, confirms, releases and expires.
    let placed =
        scheduler.place(&s, &Request::new(1).memory_mb(100.0), &["vm".into()], &RetryPolicy::default()).unwrap();
    scheduler.confirm(placed.committed[0].id).unwrap();
    scheduler.expire_due().unwrap();
    // It may not add, change or remove hosts, through the store or by hand.
    let add = ClusterEvent::HostAdded { host: HostSpec::new("rogue").memory_mb(1e9) };
    let err = scheduler.publish(add.clone()).unwrap_err();
    assert!(matches!(&err, SharedError::Store(e) if e.kind == StoreErrorKind::Denied), "{err}");
    let mut raw = postgres::Client::connect(&server.url_as("sched1"), postgres::NoTls).unwrap();
    for sql in [
        "UPDATE placewise_hosts SET inventory = '{}'::jsonb",
        "DELETE FROM placewise_hosts",
        "INSERT INTO placewise_hosts (name, generation, inventory) VALUES ('x', 0, '{}')",
    ] {
        let e = raw.execute(sql, &[]).unwrap_err();
        assert_eq!(e.code(), Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE), "{sql}");
    }
    // The agent may.
    agent.publish(add).unwrap();
    assert!(scheduler.snapshot().is_ok());
    clean(&server.url(), &[("vm".into(), placed.committed[0].host_name.clone())]);
}

#[test]
fn host_names_with_quotes_and_semicolons_are_only_data() {
    let names = ["h'; DROP TABLE placewise_hosts; --", "h\"x\"; SELECT 1", "h$$ $1 \\"];
    let Some((server, store)) = setup("host_names_with_quotes_and_semicolons_are_only_data", &names) else { return };
    let s = stacking();
    let ids: Vec<String> = (0..3).map(|i| format!("vm'{i}; --")).collect();
    let placed = store.place(&s, &Request::new(3).memory_mb(3000.0), &ids, &RetryPolicy::default()).unwrap();
    assert!(placed.is_complete());
    let hosts: std::collections::BTreeSet<&str> = placed.committed.iter().map(|c| c.host_name.as_str()).collect();
    assert_eq!(hosts.len(), 3);
    store
        .publish(ClusterEvent::HostStateChanged { host: names[0].into(), change: StateChange::default().up(false) })
        .unwrap();
    store
        .publish(ClusterEvent::InstanceRemoved {
            host: placed.committed[1].host_name.clone(),
            instance: ids[1].clone(),
        })
        .unwrap();
    let fresh = PgStore::connect(&server.url()).unwrap();
    assert_eq!(fresh.snapshot().unwrap().to_spec(), store.snapshot().unwrap().to_spec());
    let acknowledged: Vec<(String, String)> = placed
        .committed
        .iter()
        .filter(|c| c.instance != ids[1])
        .map(|c| (c.instance.clone(), c.host_name.clone()))
        .collect();
    clean(&server.url(), &acknowledged);
}

/// Two processes serve partitions by a Router host key; a third overlaps the first. Each
/// lands only on its partition's hosts, and the overlap stays safe.
#[test]
fn processes_serve_partitions_and_overlap_safely() {
    let Some(server) = require_server("processes_serve_partitions_and_overlap_safely") else { return };
    PgStore::migrate(&server.url()).unwrap();
    let mut b = Cluster::builder();
    for i in 0..8 {
        let pool = if i < 4 { "a" } else { "b" };
        b = b.host(HostSpec::new(format!("{pool}{i}")).vcpus(8.0).memory_mb(4096.0).label("pool", pool));
    }
    let seed = PgStore::connect(&server.url()).unwrap();
    assert!(seed.bootstrap(&b.build().unwrap()).unwrap());
    let serving = |pool: &str| {
        Scheduler::builder()
            .filter(ComputeFilter)
            .filter(ResourceFilter::new())
            .filter(PartitionFilter::new(HostKey::Label("pool".into()), [pool]))
            .weigher(FreeResourceWeigher::ram(), -1.0)
            .build()
            .unwrap()
    };
    let (sa, sb, sa2) = (serving("a"), serving("b"), serving("a"));
    let stores: Vec<PgStore> = (0..3).map(|_| PgStore::connect(&server.url()).unwrap()).collect();
    let mut acknowledged = Vec::new();
    // Interleaved: the two processes serving pool a plan on the same hosts and conflict.
    for round in 0..6 {
        for (k, (store, s)) in stores.iter().zip([&sa, &sb, &sa2]).enumerate() {
            let id = format!("vm-{round}-{k}");
            let req = Request::new(1).memory_mb(1000.0);
            let placed = store.place(s, &req, &[id], &RetryPolicy::default().max_attempts(5)).unwrap();
            for c in &placed.committed {
                let pool = if k == 1 { 'b' } else { 'a' };
                assert!(c.host_name.starts_with(pool), "{} landed outside its partition", c.host_name);
                acknowledged.push((c.instance.clone(), c.host_name.clone()));
            }
        }
    }
    // Pool a holds 16 instances of 1 GiB; the two processes serving it placed 12 without
    // over-committing any host.
    assert_eq!(acknowledged.len(), 18);
    clean(&server.url(), &acknowledged);
}

/// An agent publishes every kind of inventory change; the tables follow, a metrics update
/// leaves the host's generation alone, and removing a host removes its claims.
#[test]
fn inventory_events_from_an_agent_keep_the_tables_true_to_the_log() {
    let Some((server, agent)) = setup("inventory_events_from_an_agent_keep_the_tables_true_to_the_log", &["h0", "h1"])
    else {
        return;
    };
    let s = stacking();
    let placed =
        agent.place(&s, &Request::new(2).memory_mb(3000.0), &["a".into(), "b".into()], &RetryPolicy::default());
    let placed = placed.unwrap();
    let generation = |host: &str| -> i64 {
        let mut c = postgres::Client::connect(&server.url(), postgres::NoTls).unwrap();
        c.query_one("SELECT generation FROM placewise_hosts WHERE name = $1", &[&host]).unwrap().get(0)
    };
    let before = generation("h0");
    let metrics = std::collections::BTreeMap::from([("cpu.percent".to_string(), 55.0)]);
    agent.publish(ClusterEvent::MetricsUpdated { host: "h0".into(), metrics }).unwrap();
    assert_eq!(generation("h0"), before, "a metrics update does not stamp the host");
    agent.publish(ClusterEvent::HostAdded { host: HostSpec::new("h2").vcpus(4.0).memory_mb(2048.0) }).unwrap();
    agent.publish(ClusterEvent::HostUpdated { host: HostSpec::new("h2").vcpus(4.0).memory_mb(8192.0) }).unwrap();
    assert_eq!(generation("h2"), agent.seq() as i64);
    let on_h1: Vec<&str> =
        placed.committed.iter().filter(|c| c.host_name == "h1").map(|c| c.instance.as_str()).collect();
    agent.publish(ClusterEvent::HostRemoved { host: "h1".into() }).unwrap();
    let left: Vec<String> = agent.claims().unwrap().into_iter().map(|c| c.instance).collect();
    assert!(on_h1.iter().all(|i| !left.iter().any(|l| l == i)), "claims on a removed host go with it");
    // A refused event changes nothing, in the tables or the log.
    let seq = agent.seq();
    assert!(matches!(agent.publish(ClusterEvent::HostRemoved { host: "nope".into() }), Err(SharedError::Event(_))));
    assert_eq!(agent.refresh().unwrap(), seq);
    let acknowledged: Vec<(String, String)> = placed
        .committed
        .iter()
        .filter(|c| c.host_name != "h1")
        .map(|c| (c.instance.clone(), c.host_name.clone()))
        .collect();
    clean(&server.url(), &acknowledged);
}

/// Issue 42, item 8: the README's "moving is one line" example under contention, as written:
/// four schedulers, each its own `PgStore` connection (as separate processes would be) and its
/// own best-host (fill-first) scheduler, place requests of two instances with
/// `RetryPolicy::default()` on one small cluster until it is exactly full, and every request
/// succeeds. With fit validation a claim conflicts only when its host filled since the snapshot
/// it was planned on; a commit brings the store up to the head, so after the first plan an
/// instance loses an attempt only to a host that filled meanwhile, and hosts only fill: at most
/// 1 + 6 lost attempts, below the default's 10. Demand equals capacity, so there is always room.
#[test]
fn many_processes_place_with_the_default_policy_and_every_request_succeeds() {
    let names = ["h0", "h1", "h2", "h3", "h4", "h5"];
    let Some((server, _seeded)) =
        setup("many_processes_place_with_the_default_policy_and_every_request_succeeds", &names)
    else {
        return;
    };
    const PROCESSES: usize = 4;
    const REQUESTS: usize = 3;
    // 6 hosts of 4 GiB: 24 instances of 1 GiB, exactly what the processes ask for.
    let url = server.url();
    let acknowledged: Vec<(String, String)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..PROCESSES)
            .map(|p| {
                let url = &url;
                scope.spawn(move || {
                    let state = PgStore::connect(url).unwrap();
                    let scheduler = stacking();
                    let mut acks = Vec::new();
                    for r in 0..REQUESTS {
                        let ids: Vec<String> = (0..2).map(|i| format!("p{p}-r{r}-{i}")).collect();
                        let request = Request::new(2).memory_mb(1024.0);
                        let placed = state.place(&scheduler, &request, &ids, &RetryPolicy::default()).unwrap();
                        assert!(placed.is_complete(), "{placed:?}");
                        acks.extend(placed.committed.into_iter().map(|c| (c.instance, c.host_name)));
                    }
                    acks
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(acknowledged.len(), PROCESSES * REQUESTS * 2);
    clean(&server.url(), &acknowledged);
    let store = PgStore::connect(&server.url()).unwrap();
    let snapshot = store.snapshot().unwrap();
    for (_, h) in snapshot.hosts() {
        assert_eq!(h.resource(placewise::id::ResourceId::MEMORY_MB).used, 4096.0, "{} is full, not over", h.name);
    }
}
