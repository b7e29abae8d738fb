//! Capacity ("how many more fit?") on generated clusters (fixed seeds), beside the scheduler
//! runs it replaces, in the same run so the ratio shows:
//!
//! - `capacity/instances` on 1k and 10k hosts: the per-host count of `capacity::instances`;
//! - `capacity/one_instance` on the same clusters: one `schedule` of a single instance, the unit
//!   the cost is stated in;
//! - `capacity/replay` on 10k hosts: one burst `schedule` of as many instances as fit (up to
//!   the scheduler's `max_count`), the exact fallback `capacity::instances` uses for coupled
//!   filters;
//! - `capacity/naive_bisect` on 1k hosts: the naive exact answer, bisecting over the count with
//!   one burst `schedule` per probe (asking count by count is quadratic and left out).
//!
//! Also the replica engine and the spread engine, each fast path beside its reference in the
//! same run (both answers checked equal before measuring):
//!
//! - `capacity/volumes_limit_100` (300 nodes); `capacity/volumes_300` on 1k and 10k nodes with
//!   4 disks each (the `replica` bench's clusters): `capacity::volumes` counting 300 volumes of
//!   3 replicas, beside `capacity/volumes_300_stepwise`, `capacity::volumes_stepwise`, one
//!   `schedule` per volume;
//! - `capacity/tasks` on 1k and 10k nodes (one engine run, then batch sizes on counts) beside
//!   `capacity/tasks_bisection` (one engine run per batch size tried).
//!
//! Run with `cargo bench --bench capacity`.
#![allow(missing_docs)] // criterion_group! generates undocumented items

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use placewise::capacity::{self, TaskMethod};
use placewise::replica::{ReplicaScheduler, ReplicaSettings, Volume};
use placewise::request::Request;
use placewise::schedule::{Scheduler, Scratch, DEFAULT_MAX_COUNT};
use placewise::snapshot::Cluster;
use placewise::spread::{Preference, SpreadMode, SpreadRequest, SpreadScheduler};
use std::hint::black_box;
use std::time::Duration;

#[path = "../tests/support/mod.rs"]
mod support;

fn request(count: u32) -> Request {
    Request::new(count).vcpus(2.0).memory_mb(4096.0).disk_gb(40.0).selector("tier != bronze".parse().unwrap())
}

/// The largest count `schedule` places in full, by bisection over bursts.
fn naive_bisect(scheduler: &Scheduler, scratch: &mut Scratch, cluster: &Cluster, max: u32) -> u32 {
    let (mut lo, mut hi) = (0u32, max + 1);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if scheduler.schedule_with(scratch, cluster, &request(mid)).unwrap().is_complete() {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

fn instances(c: &mut Criterion) {
    let mut group = c.benchmark_group("capacity");
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    let scheduler = support::standard_scheduler(1.0);
    for hosts in [1_000, 10_000] {
        let cluster = support::cluster(hosts, 7);
        let one = request(1);
        let cap = capacity::instances(&scheduler, &cluster, &one).unwrap();
        let mut scratch = Scratch::new();
        group.bench_with_input(BenchmarkId::new("instances", hosts), &cluster, |b, cluster| {
            b.iter(|| capacity::instances(&scheduler, black_box(cluster), black_box(&one)).unwrap())
        });
        group.bench_with_input(BenchmarkId::new("one_instance", hosts), &cluster, |b, cluster| {
            b.iter(|| scheduler.schedule_with(&mut scratch, black_box(cluster), black_box(&one)).unwrap())
        });
        if hosts == 10_000 {
            let all = request(cap.total as u32);
            group.bench_with_input(BenchmarkId::new("replay", hosts), &cluster, |b, cluster| {
                b.iter(|| scheduler.schedule_with(&mut scratch, black_box(cluster), black_box(&all)).unwrap())
            });
        } else {
            assert_eq!(u64::from(naive_bisect(&scheduler, &mut scratch, &cluster, cap.total as u32 + 1)), cap.total);
            group.bench_with_input(BenchmarkId::new("naive_bisect", hosts), &cluster, |b, cluster| {
                b.iter(|| naive_bisect(&scheduler, &mut scratch, black_box(cluster), cap.total as u32 + 1))
            });
        }
    }
    group.finish();
}

fn engines(c: &mut Criterion) {
    let mut group = c.benchmark_group("capacity");
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    const G: i64 = 1 << 30;
    let storage = support::uniform_storage_cluster(300);
    let replicas = ReplicaScheduler::new(ReplicaSettings::default()).unwrap();
    let volume = Volume::new("v", 100 * G, 3);
    group.bench_function(BenchmarkId::new("volumes_limit_100", 300), |b| {
        b.iter(|| capacity::volumes(&replicas, black_box(&storage), &volume, 100).unwrap())
    });

    // A service of large tasks (a few per node), so that the count stays below the limit and
    // every branch's capacity is known from one run: the arithmetic path. Beside it the
    // bisection it replaces, one engine call per batch size tried, in the same run.
    let spread = SpreadScheduler::new();
    let service = SpreadRequest::new("web", 1)
        .preference(Preference::spread("tier"))
        .preference(Preference::spread("maintenance"))
        .resource("vcpus", 32.0)
        .resource("memory_mb", 32768.0)
        .mode(SpreadMode::Balanced);
    for hosts in [1_000, 10_000] {
        let nodes = support::cluster(hosts, 7);
        let fast = capacity::tasks(&spread, &nodes, &service, DEFAULT_MAX_COUNT).unwrap();
        assert_eq!(fast.method, TaskMethod::Arithmetic);
        let slow = capacity::tasks_by_bisection(&spread, &nodes, &service, DEFAULT_MAX_COUNT).unwrap();
        assert_eq!((fast.until_branch_full, &fast.first_full), (slow.until_branch_full, &slow.first_full));
        group.bench_function(BenchmarkId::new("tasks", hosts), |b| {
            b.iter(|| capacity::tasks(&spread, black_box(&nodes), &service, DEFAULT_MAX_COUNT).unwrap())
        });
        group.bench_function(BenchmarkId::new("tasks_bisection", hosts), |b| {
            b.iter(|| capacity::tasks_by_bisection(&spread, black_box(&nodes), &service, DEFAULT_MAX_COUNT).unwrap())
        });
    }
    group.finish();
}

/// The `replica` bench's cluster: `nodes` nodes in 3 zones, 4 disks of 1000 GiB each with
/// random available and scheduled bytes.
fn volume_count(c: &mut Criterion) {
    const G: i64 = 1 << 30;
    const LIMIT: u32 = 300;
    let mut group = c.benchmark_group("capacity");
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    let scheduler = ReplicaScheduler::new(ReplicaSettings::default()).unwrap();
    let volume = Volume::new("vol", 10 * G, 3);
    for nodes in [1_000, 10_000] {
        let cluster = support::storage_cluster(nodes, 42);
        let fast = capacity::volumes(&scheduler, &cluster, &volume, LIMIT).unwrap();
        let slow = capacity::volumes_stepwise(&scheduler, &cluster, &volume, LIMIT).unwrap();
        assert_eq!((fast.total, &fast.disks, &fast.stop), (slow.total, &slow.disks, &slow.stop));
        assert_eq!(fast.total, LIMIT);
        assert!(fast.cluster.to_spec() == slow.cluster.to_spec(), "the resulting clusters differ");
        group.bench_with_input(BenchmarkId::new("volumes_300", nodes), &cluster, |b, cluster| {
            b.iter(|| capacity::volumes(&scheduler, black_box(cluster), &volume, LIMIT).unwrap())
        });
        group.bench_with_input(BenchmarkId::new("volumes_300_stepwise", nodes), &cluster, |b, cluster| {
            b.iter(|| capacity::volumes_stepwise(&scheduler, black_box(cluster), &volume, LIMIT).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, instances, engines, volume_count);
criterion_main!(benches);
