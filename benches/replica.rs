//! Replica scheduling: 3 replicas of a new volume on 1k and 10k nodes with 4 disks each.
//!
//! - `replica_volume_3`: one call without a kept preparation (`schedule`): a new volume
//!   whose three replicas land in the cluster's three zones, so the one-pass first tier answers.
//! - `replica_volume_3_warm`: the same volume through a reused scratch, as a stream of volumes
//!   on one snapshot pays it (`schedule_with`): the volume-independent preparation is
//!   made once, before the measurement.
//! - `replica_volume_3_stream`: volumes of alternating sizes through one scratch: the snapshot's
//!   part is kept, the volume's part follows each size (the warm group above reuses both).
//! - `replica_volume_3_stream_resized`: the same with sizes around the disks' scheduling limits,
//!   so that each size change re-prepares the hosts of a few percent of the disks.
//! - `replica_volume_3_event`: the volume through one scratch on two snapshots in turn, the
//!   second one event (a disk's scheduled space) after the first: each call sees a snapshot the
//!   scratch was not made for, as a scheduler does after nearly every event, and refreshes the
//!   preparation for the one chunk the event changed.
//! - `replica_volume_3_event_rebuilt`: the same calls with the scratch cleared before each, so
//!   that each rebuilds the preparation (the baseline for the group above).
//! - `replica_floor`: the memory floor, measured in the same run: one pass that only reads the
//!   hot disk columns the scheduler reads (space numbers and flags of every disk, chunk by
//!   chunk) and decides nothing. A report states the volume's cost as "N× the floor".

#![allow(missing_docs)] // criterion_group! generates undocumented items
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use placewise::id::DiskId;
use placewise::replica::{ReplicaScheduler, ReplicaScratch, ReplicaSettings, Volume};
use placewise::snapshot::{Cluster, ClusterEvent};
use std::hint::black_box;

const G: i64 = 1 << 30;

#[path = "../tests/support/mod.rs"]
mod support;

/// Reads every disk's hot columns once and folds them so nothing is optimised away.
fn floor(cluster: &Cluster) -> u64 {
    let mut acc = 0u64;
    for c in 0..cluster.chunk_count() {
        let hot = cluster.hot_chunk(c);
        for d in &hot.disks {
            let flags = u64::from(d.allow_scheduling) ^ u64::from(d.eviction_requested) << 1 ^ u64::from(d.ready) << 2;
            acc = acc.wrapping_add(d.maximum ^ d.available ^ d.reserved ^ d.scheduled ^ flags);
        }
        acc ^= hot.live ^ hot.schedulable;
    }
    acc
}

fn bench(c: &mut Criterion) {
    let scheduler = ReplicaScheduler::new(ReplicaSettings::default()).unwrap();
    let volume = Volume::new("vol", 10 * G, 3);
    let clusters: Vec<(usize, Cluster)> =
        [1_000, 10_000].into_iter().map(|n| (n, support::storage_cluster(n, 42))).collect();

    let mut group = c.benchmark_group("replica_volume_3");
    for (nodes, cl) in &clusters {
        group.bench_with_input(BenchmarkId::from_parameter(nodes), cl, |b, cl| {
            b.iter(|| scheduler.schedule(cl, &volume, &[], 0).unwrap())
        });
    }
    group.finish();

    let mut group = c.benchmark_group("replica_volume_3_warm");
    for (nodes, cl) in &clusters {
        let mut scratch = ReplicaScratch::new();
        let warm = scheduler.schedule_with(&mut scratch, cl, &volume, &[], 0).unwrap();
        assert_eq!(warm, scheduler.schedule(cl, &volume, &[], 0).unwrap(), "a warm scratch changed the answer");
        assert_eq!(warm, scheduler.schedule_with(&mut scratch, cl, &volume, &[], 0).unwrap());
        group.bench_with_input(BenchmarkId::from_parameter(nodes), cl, |b, cl| {
            b.iter(|| scheduler.schedule_with(&mut scratch, black_box(cl), black_box(&volume), &[], 0).unwrap())
        });
        assert_eq!(scratch.rebuilds(), 1, "the warm scratch was rebuilt");
    }
    group.finish();

    // A stream of volumes of alternating sizes: the snapshot's part is kept, the volume's part
    // follows each size (re-preparing the hosts of the disks whose verdict the size changes:
    // none between these two sizes on this cluster). Both sizes are scheduled once before the
    // measurement, as the warm group's volume is.
    let mut group = c.benchmark_group("replica_volume_3_stream");
    let sizes = [Volume::new("vol", 10 * G, 3), Volume::new("vol", 11 * G, 3)];
    stream(&mut group, &scheduler, &clusters, &sizes);
    group.finish();

    // A stream whose size changes do change verdicts: sizes around the disks' scheduling limits
    // (this cluster's disks admit 501–1000 GiB), so that each volume re-prepares the hosts of a
    // few percent of the disks.
    let mut group = c.benchmark_group("replica_volume_3_stream_resized");
    let sizes: Vec<Volume> = [505, 520, 510, 530, 500, 515].iter().map(|&g| Volume::new("vol", g * G, 3)).collect();
    stream(&mut group, &scheduler, &clusters, &sizes);
    group.finish();

    // One event apart: a disk of a host in the middle gets 10 GiB more scheduled. Each call
    // passes the snapshot the previous call did not.
    let mut group = c.benchmark_group("replica_volume_3_event");
    let mut pairs = Vec::new();
    for (nodes, cl) in &clusters {
        let id = cl.host_id(&format!("n{}", nodes / 2)).unwrap();
        let mut disk = cl.disk_to_spec(id, DiskId::from_index(1)).unwrap();
        disk.scheduled += 10 * G;
        let host = cl.host_name(id).to_owned();
        let pair = [cl.clone(), cl.apply(&ClusterEvent::DiskUpdated { host, disk }).unwrap()];
        let mut scratch = ReplicaScratch::new();
        for snapshot in pair.iter().chain(&pair) {
            let warm = scheduler.schedule_with(&mut scratch, snapshot, &volume, &[], 0).unwrap();
            assert_eq!(
                warm,
                scheduler.schedule(snapshot, &volume, &[], 0).unwrap(),
                "a refreshed scratch changed the answer"
            );
        }
        let mut k = 0usize;
        group.bench_with_input(BenchmarkId::from_parameter(nodes), &pair, |b, pair| {
            b.iter(|| {
                k += 1;
                scheduler.schedule_with(&mut scratch, black_box(&pair[k % 2]), black_box(&volume), &[], 0).unwrap()
            })
        });
        assert_eq!(scratch.rebuilds(), scratch.refreshes() + 1, "the scratch was rebuilt, not refreshed");
        pairs.push((nodes, pair));
    }
    group.finish();

    // The baseline in the same run: the same calls with the kept preparation forgotten before
    // each, so that each rebuilds it (what every call after an event did before).
    let mut group = c.benchmark_group("replica_volume_3_event_rebuilt");
    for (nodes, pair) in &pairs {
        let mut scratch = ReplicaScratch::new();
        let mut k = 0usize;
        group.bench_with_input(BenchmarkId::from_parameter(nodes), pair, |b, pair| {
            b.iter(|| {
                k += 1;
                scratch.clear();
                scheduler.schedule_with(&mut scratch, black_box(&pair[k % 2]), black_box(&volume), &[], 0).unwrap()
            })
        });
    }
    group.finish();

    let mut group = c.benchmark_group("replica_floor");
    for (nodes, cl) in &clusters {
        group.bench_with_input(BenchmarkId::from_parameter(nodes), cl, |b, cl| b.iter(|| floor(black_box(cl))));
    }
    group.finish();
}

/// Volumes `sizes` in turn through one scratch per cluster, each size scheduled once before the
/// measurement (and checked against a fresh call).
fn stream(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    scheduler: &ReplicaScheduler,
    clusters: &[(usize, Cluster)],
    sizes: &[Volume],
) {
    for (nodes, cl) in clusters {
        let mut scratch = ReplicaScratch::new();
        for v in sizes {
            let warm = scheduler.schedule_with(&mut scratch, cl, v, &[], 0).unwrap();
            assert_eq!(warm, scheduler.schedule(cl, v, &[], 0).unwrap(), "a resized scratch changed the answer");
        }
        let mut k = 0usize;
        group.bench_with_input(BenchmarkId::from_parameter(nodes), cl, |b, cl| {
            b.iter(|| {
                k += 1;
                scheduler.schedule_with(&mut scratch, black_box(cl), &sizes[k % sizes.len()], &[], 0).unwrap()
            })
        });
        assert_eq!(scratch.rebuilds(), 1, "the stream's scratch was rebuilt");
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
