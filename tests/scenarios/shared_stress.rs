//! Several scheduler threads place bursts against one `SharedCluster` while events and releases
//! arrive; a checker thread watches every snapshot. No host is ever over-committed, no claim is
//! lost or landed twice, and the final state is the sequential replay of the log.

use placewise::id::ResourceId;
use placewise::rng::SplitMix64;
use placewise::shared::{
    ClaimId, CommitMode, Committed, Follower, LogEntry, RetryError, RetryPolicy, SharedCluster, Validation,
};
use placewise::snapshot::InstanceSpec;
use placewise::snapshot::StateChange;
use placewise::{
    Cluster, ClusterEvent, ComputeFilter, FreeResourceWeigher, HostSpec, Request, ResourceFilter, Scheduler,
};
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

const HOSTS: usize = 192;
const THREADS: usize = 4;
const BURST: usize = 200;

fn cluster() -> Cluster {
    let mut b = Cluster::builder();
    for i in 0..HOSTS {
        let mem = [8192.0, 16384.0][i % 2];
        let mut h = HostSpec::new(format!("h{i:03}")).vcpus(16.0).memory_mb(mem).disk_gb(200.0);
        if i % 5 == 0 {
            h = h.instance(InstanceSpec::new(format!("old-{i}")).resource("memory_mb", 2048.0).resource("vcpus", 2.0));
        }
        b = b.host(h);
    }
    b.build().unwrap()
}

fn scheduler(thread: usize) -> Scheduler {
    // Half the threads fill first (the racy case), half spread with a random top-4 pick.
    let b = Scheduler::builder().filter(ComputeFilter).filter(ResourceFilter::new()).seed(thread as u64);
    if thread % 2 == 0 {
        b.weigher(FreeResourceWeigher::ram(), -1.0).build().unwrap()
    } else {
        b.weigher(FreeResourceWeigher::ram(), 1.0).host_subset_size(4).build().unwrap()
    }
}

fn assert_not_over_committed(c: &Cluster) {
    for (_, h) in c.hosts() {
        for r in [ResourceId::VCPUS, ResourceId::MEMORY_MB, ResourceId::DISK_GB] {
            let res = h.resource(r);
            assert!(res.free() >= 0.0, "host {} over-committed on {r:?}: {res:?}", h.name);
        }
    }
}

#[test]
fn concurrent_bursts_never_over_commit_and_replay_exactly() {
    let initial = cluster();
    let shared = Arc::new(SharedCluster::new(initial.clone()));
    let done = Arc::new(AtomicBool::new(false));
    let released: Arc<Mutex<Vec<ClaimId>>> = Arc::default();

    let checker = {
        let (shared, done) = (shared.clone(), done.clone());
        thread::spawn(move || {
            let mut seen = 0;
            while !done.load(Ordering::Relaxed) {
                let snap = shared.snapshot();
                assert!(snap.seq() >= seen, "sequence went backwards");
                seen = snap.seq();
                assert_not_over_committed(&snap);
                thread::yield_now();
            }
        })
    };

    // A follower in "another process" tails the log while everything happens.
    let follower = {
        let (shared, done, initial) = (shared.clone(), done.clone(), initial.clone());
        thread::spawn(move || {
            let mut f = Follower::new(initial, 0);
            let mut seen: Vec<u64> = Vec::new();
            loop {
                let finished = done.load(Ordering::Relaxed);
                let tail = shared.log_since(f.seq()).unwrap();
                for e in &tail {
                    f.apply(e).unwrap();
                    seen.push(e.seq);
                }
                if finished && tail.is_empty() {
                    return (f, seen);
                }
                thread::yield_now();
            }
        })
    };

    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (shared, released) = (shared.clone(), released.clone());
            thread::spawn(move || {
                let s = scheduler(t);
                let mut rng = SplitMix64::new(t as u64 + 100);
                let mut mine: Vec<Committed> = Vec::new();
                let mut exhausted = 0;
                for r in 0..BURST {
                    let count = 1 + rng.below(3) as u32;
                    let mode = if rng.below(4) == 0 { CommitMode::Gang } else { CommitMode::Partial };
                    let validation = if t >= 2 { Validation::Fit } else { Validation::Generation };
                    let policy = RetryPolicy::default().mode(mode).validation(validation).max_attempts(4);
                    let req =
                        Request::new(count).memory_mb(512.0 * (1 + rng.below(4)) as f64).vcpus(1.0).seed(r as u64);
                    let ids: Vec<String> = (0..count).map(|i| format!("t{t}-r{r}-i{i}")).collect();
                    match shared.place(&s, &req, &ids, &policy) {
                        Ok(placed) => mine.extend(placed.committed),
                        Err(RetryError::Exhausted { committed, .. }) => {
                            exhausted += 1;
                            mine.extend(committed);
                        }
                        Err(other) => panic!("{other}"),
                    }
                    // Release one claim in five, so capacity comes back while others plan.
                    if rng.below(5) == 0 {
                        if let Some(c) = mine.pop() {
                            shared.release(c.id).unwrap();
                            released.lock().unwrap().push(c.id);
                        }
                    }
                }
                (mine, exhausted)
            })
        })
        .collect();

    let events = {
        let shared = shared.clone();
        thread::spawn(move || {
            let mut rng = SplitMix64::new(7);
            for i in 0..150 {
                let host = format!("h{:03}", rng.below(HOSTS));
                let event = match i % 5 {
                    0 => ClusterEvent::MetricsUpdated { host, metrics: BTreeMap::from([("load".into(), i as f64)]) },
                    1 => ClusterEvent::HostStateChanged { host, change: StateChange::default().cordoned(i % 2 == 1) },
                    2 => ClusterEvent::HostStateChanged { host, change: StateChange::default().cordoned(false) },
                    3 => {
                        ClusterEvent::HostAdded { host: HostSpec::new(format!("new-{i}")).vcpus(8.0).memory_mb(8192.0) }
                    }
                    _ => ClusterEvent::InstanceRemoved {
                        host: format!("h{:03}", (i / 5 * 5) % HOSTS),
                        instance: format!("old-{}", (i / 5 * 5) % HOSTS),
                    },
                };
                // Removing an instance twice fails; that failure must change nothing.
                let seq_before = shared.seq();
                if shared.publish(event).is_err() {
                    assert!(shared.seq() >= seq_before);
                }
                thread::yield_now();
            }
        })
    };

    let mut committed: Vec<Committed> = Vec::new();
    for w in workers {
        let (mine, _) = w.join().unwrap();
        committed.extend(mine);
    }
    events.join().unwrap();
    done.store(true, Ordering::Relaxed);
    checker.join().unwrap();
    let (tailing, seen) = follower.join().unwrap();

    let end = shared.snapshot();
    assert_not_over_committed(&end);

    // No claim lost or landed twice: every claim that landed is in the log exactly once, and
    // the log places nothing that no caller was told about.
    let released: HashSet<ClaimId> = released.lock().unwrap().iter().copied().collect();
    let log = shared.log();
    let mut placed_in_log: BTreeMap<String, usize> = BTreeMap::new();
    for e in log.entries() {
        for ev in &e.events {
            if let ClusterEvent::InstancePlaced { instance, .. } = ev {
                *placed_in_log.entry(instance.id.clone()).or_default() += 1;
            }
        }
    }
    let stats = shared.stats();
    assert_eq!(placed_in_log.len() as u64, stats.committed);
    assert!(placed_in_log.values().all(|&n| n == 1), "an instance was placed twice");
    let mut ids = HashSet::new();
    for c in &committed {
        assert!(ids.insert(c.instance.clone()), "claim {} reported twice", c.instance);
        assert_eq!(placed_in_log.get(&c.instance), Some(&1), "claim {} not in the log", c.instance);
        let host = end.host_id(&c.host_name).expect("hosts are never removed here");
        let present = end.host(host).unwrap().instances.iter().any(|i| *i.id == *c.instance);
        assert!(present, "claim {} lost", c.instance);
    }
    assert_eq!(committed.len() + released.len(), stats.committed as usize);

    // The final state is the sequential replay of the log from the initial cluster.
    let mut follower = Follower::new(initial, 0);
    let entries: Vec<LogEntry> = log.entries().to_vec();
    follower.catch_up(&entries).unwrap();
    assert_eq!(follower.seq(), end.seq());
    assert_eq!(follower.cluster().to_spec(), end.to_spec());
    // The follower that tailed the log concurrently saw every entry once, in order.
    assert_eq!(seen, (1..=end.seq()).collect::<Vec<_>>());
    assert_eq!(tailing.cluster().to_spec(), end.to_spec());
    assert!(stats.conflicts > 0, "the test should provoke conflicts: {stats:?}");
}
