//! The concurrent burst of the parallel scheduler spec's use case, shared by the `shared` bench
//! and the `concurrent` example: a burst of build requests spread over scheduler threads, each
//! with its own scheduler and its own snapshots of one `SharedCluster`.
//!
//! Included with `#[path = "../tests/support/shared_burst.rs"] mod burst;` next to `support`.
#![allow(dead_code)]

use crate::support;
use placewise::shared::{RetryError, RetryPolicy, SharedCluster, Validation};
use placewise::{Cluster, Request, Scheduler, Scratch};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// One run's settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Burst {
    /// Build requests in the burst (one instance each).
    pub(crate) requests: usize,
    /// Scheduler threads; request `i` goes to thread `i % threads`.
    pub(crate) threads: usize,
    /// Fill-first (RAM multiplier −1) or spread (+1).
    pub(crate) fill_first: bool,
    /// Random pick among the best `k` hosts.
    pub(crate) subset: usize,
    /// Commit validation.
    pub(crate) validation: Validation,
}

/// What a run measured.
#[derive(Debug, Clone, Default)]
pub(crate) struct Report {
    pub(crate) elapsed: Duration,
    pub(crate) placed: usize,
    pub(crate) unplaced: usize,
    pub(crate) exhausted: usize,
    pub(crate) conflicts: u64,
    pub(crate) retries: u64,
    pub(crate) stale_reads: u64,
    pub(crate) commits: u64,
    /// Distinct hosts that received an instance.
    pub(crate) hosts_used: usize,
    /// Most instances of the burst on one host.
    pub(crate) max_per_host: usize,
}

impl Report {
    /// Placed requests per second.
    pub(crate) fn throughput(&self) -> f64 {
        self.placed as f64 / self.elapsed.as_secs_f64()
    }

    /// Conflicts per commit.
    pub(crate) fn conflict_rate(&self) -> f64 {
        if self.commits == 0 {
            0.0
        } else {
            self.conflicts as f64 / self.commits as f64
        }
    }
}

/// The benchmark scheduler with a RAM multiplier, a subset size and a seed.
pub(crate) fn scheduler(fill_first: bool, subset: usize, seed: u64) -> Scheduler {
    let (filters, weighers) = support::standard_parts(if fill_first { -1.0 } else { 1.0 });
    let mut b = Scheduler::builder();
    for f in filters {
        b = b.filter_boxed(f);
    }
    for (w, m) in weighers {
        b = b.weigher_boxed(w, m);
    }
    b.host_subset_size(subset).seed(seed).build().expect("valid configuration")
}

/// The build request: a 2 vCPU, 4 GiB, 40 GB flavor.
pub(crate) fn build_request(i: usize) -> Request {
    Request::new(1).vcpus(2.0).memory_mb(4096.0).disk_gb(40.0).seed(i as u64)
}

/// Runs one burst on a fresh shared state made from `cluster`.
pub(crate) fn run(cluster: &Cluster, burst: Burst) -> Report {
    let shared = SharedCluster::new(cluster.clone());
    let schedulers: Vec<Scheduler> =
        (0..burst.threads).map(|t| scheduler(burst.fill_first, burst.subset, t as u64 + 1)).collect();
    // The scheduler's own pick: the burst's subset size is what it measures.
    let policy = RetryPolicy::default().validation(burst.validation).max_attempts(3).top_k(1);
    let start = Instant::now();
    let results: Vec<(usize, usize, usize, Vec<String>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = schedulers
            .iter()
            .enumerate()
            .map(|(t, s)| {
                let shared = &shared;
                scope.spawn(move || {
                    let mut scratch = Scratch::new();
                    let (mut placed, mut unplaced, mut exhausted) = (0, 0, 0);
                    let mut hosts = Vec::new();
                    for i in (t..burst.requests).step_by(burst.threads) {
                        let ids = [format!("build-{i}")];
                        match shared.place_with(&mut scratch, s, &build_request(i), &ids, &policy) {
                            Ok(p) => {
                                placed += p.committed.len();
                                unplaced += p.unplaced as usize;
                                hosts.extend(p.committed.into_iter().map(|c| c.host_name));
                            }
                            Err(RetryError::Exhausted { .. }) => exhausted += 1,
                            Err(e) => panic!("{e}"),
                        }
                    }
                    (placed, unplaced, exhausted, hosts)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("scheduler thread")).collect()
    });
    let elapsed = start.elapsed();
    let stats = shared.stats();
    let mut per_host: HashMap<String, usize> = HashMap::new();
    let mut report = Report { elapsed, ..Report::default() };
    for (placed, unplaced, exhausted, hosts) in results {
        report.placed += placed;
        report.unplaced += unplaced;
        report.exhausted += exhausted;
        for h in hosts {
            *per_host.entry(h).or_default() += 1;
        }
    }
    report.conflicts = stats.conflicts;
    report.retries = stats.retries;
    report.stale_reads = stats.stale_reads;
    report.commits = stats.commits;
    report.hosts_used = per_host.len();
    report.max_per_host = per_host.values().copied().max().unwrap_or(0);
    report
}

/// The same burst with no shared state at all: every thread schedules its requests on the one
/// initial snapshot and keeps nothing. Its speed-up is the ceiling the machine allows.
pub(crate) fn uncoordinated(cluster: &Cluster, burst: Burst) -> Duration {
    let schedulers: Vec<Scheduler> =
        (0..burst.threads).map(|t| scheduler(burst.fill_first, burst.subset, t as u64 + 1)).collect();
    let start = Instant::now();
    std::thread::scope(|scope| {
        for (t, s) in schedulers.iter().enumerate() {
            scope.spawn(move || {
                let mut scratch = Scratch::new();
                for i in (t..burst.requests).step_by(burst.threads) {
                    let placement = s.schedule_with(&mut scratch, cluster, &build_request(i)).expect("valid request");
                    std::hint::black_box(placement);
                }
            });
        }
    });
    start.elapsed()
}

/// `f` run `n` times; the run with the median elapsed time.
pub(crate) fn median(n: usize, mut f: impl FnMut() -> Report) -> Report {
    let mut runs: Vec<Report> = (0..n).map(|_| f()).collect();
    runs.sort_by_key(|r| r.elapsed);
    runs.swap_remove(n / 2)
}

/// The burst through a [`Router`](placewise::shared::Router) with `partitions` partitions
/// (host `i` in partition `i % partitions`, request `i` routed to `p{i % partitions}` by its
/// seed), one scheduler thread per partition. Returns the elapsed time, the placed
/// count and the conflicts summed over the partitions.
pub(crate) fn partitioned(cluster: &Cluster, partitions: usize, fill_first: bool) -> (Duration, usize, u64) {
    use placewise::shared::{HostKey, RequestKey, Router};
    use std::sync::Arc;
    let host_key = HostKey::Fn(Arc::new(move |h: &placewise::HostSpec| {
        let n: usize = h.name.rsplit('-').next()?.parse().ok()?;
        Some(format!("p{}", n % partitions))
    }));
    let by_seed = RequestKey::Fn(Arc::new(move |r: &Request| r.seed.map(|i| format!("p{}", i as usize % partitions))));
    let mut builder = Router::builder(host_key, by_seed);
    for p in 0..partitions {
        builder = builder.partition(format!("p{p}"), scheduler(fill_first, 1, p as u64 + 1));
    }
    let router = builder.build(cluster).expect("valid partitions");
    let policy = RetryPolicy::default().validation(Validation::Generation).max_attempts(3).top_k(1);
    let start = Instant::now();
    let placed: usize = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..partitions)
            .map(|p| {
                let router = &router;
                scope.spawn(move || {
                    let mut placed = 0;
                    for i in (p..1_000).step_by(partitions) {
                        let request = Request::new(1).vcpus(2.0).memory_mb(4096.0).disk_gb(40.0).seed(i as u64);
                        if let Ok(done) = router.place(&request, &[format!("build-{i}")], &policy) {
                            placed += done.committed.len();
                        }
                    }
                    placed
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("partition thread")).sum()
    });
    let elapsed = start.elapsed();
    let conflicts = router.partitions().iter().map(|p| p.shared().stats().conflicts).sum();
    (elapsed, placed, conflicts)
}
