//! Spread engine: 1,000 tasks over three levels (2 datacenters × 5 rows × 10 racks) on 10k
//! nodes, in both modes, through one `SpreadScratch`: `<mode>` keeps the decision tree between
//! calls on the same snapshot, as a stream of batches on one snapshot does; `<mode>_tree_built`
//! clears the scratch's tree before every call, as the first call on a snapshot of another
//! lineage builds it; `<mode>_one_event` calls on two snapshots in turn that differ by one event
//! (a task of the service placed on one node), as a scheduler sees a new snapshot after every
//! event (the scratch updates what it keeps for the chunk that changed);
//! `<mode>_one_event_rebuilt` does the same but clears the scratch before every call, the
//! same-run baseline of a full rebuild per snapshot.

#![allow(missing_docs)] // criterion_group! generates undocumented items
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use placewise::rng::SplitMix64;
use placewise::snapshot::ClusterEvent;
use placewise::snapshot::HostState;
use placewise::snapshot::InstanceSpec;
use placewise::snapshot::ResourceSpec;
use placewise::spread::{Preference, SpreadMode, SpreadRequest, SpreadScheduler, SpreadScratch};
use placewise::{Cluster, HostSpec};
use std::hint::black_box;

#[path = "../tests/support/mod.rs"]
mod support;

/// `nodes` nodes spread round-robin over 100 racks; a quarter run a task of the service, a
/// third one of another service, one in 50 is down.
fn cluster(nodes: usize, seed: u64) -> Cluster {
    let mut rng = SplitMix64::new(seed);
    let mut b = Cluster::builder();
    for n in 0..nodes {
        let rack = n % 100;
        let mut h = HostSpec::new(format!("n{n:06}"))
            .label("dc", format!("dc{}", rack / 50))
            .label("row", format!("row{}", rack / 10 % 5))
            .label("rack", format!("rack{rack:03}"))
            .resource("memory_mb", ResourceSpec::new(65536.0))
            .resource("vcpus", ResourceSpec::new(32.0));
        if rng.below(4) == 0 {
            h = h.instance(InstanceSpec::new(format!("s{n}")).group("web").resource("memory_mb", 512.0));
        }
        if rng.below(3) == 0 {
            h = h.instance(InstanceSpec::new(format!("o{n}")).group("db").resource("memory_mb", 4096.0));
        }
        if rng.below(50) == 0 {
            h = h.state(HostState { up: false, ..HostState::default() });
        }
        b = b.host(h);
    }
    b.build().unwrap()
}

fn request(mode: SpreadMode) -> SpreadRequest {
    SpreadRequest::new("web", 1_000)
        .preference(Preference::spread("dc"))
        .preference(Preference::spread("row"))
        .preference(Preference::spread("rack"))
        .resource("memory_mb", 512.0)
        .resource("vcpus", 0.5)
        .mode(mode)
}

fn bench(c: &mut Criterion) {
    let scheduler = SpreadScheduler::new();
    let cl = cluster(10_000, 42);
    let placed = InstanceSpec::new("s-new").group("web").resource("memory_mb", 512.0).resource("vcpus", 0.5);
    let next = cl.apply(&ClusterEvent::InstancePlaced { host: "n004321".into(), instance: placed }).unwrap();
    let mut group = c.benchmark_group("spread_1000_tasks_3_levels_10k_nodes");
    for mode in [SpreadMode::SwarmCompatible, SpreadMode::Balanced] {
        let req = request(mode);
        let mut scratch = SpreadScratch::new();
        group.bench_with_input(BenchmarkId::from_parameter(format!("{mode:?}")), &req, |b, req| {
            b.iter(|| scheduler.schedule_with(&mut scratch, &cl, req).unwrap())
        });
        group.bench_with_input(BenchmarkId::from_parameter(format!("{mode:?}_tree_built")), &req, |b, req| {
            b.iter(|| {
                scratch.clear();
                scheduler.schedule_with(&mut scratch, &cl, req).unwrap()
            })
        });
        let snapshots = [&cl, &next];
        let mut turn = 0;
        group.bench_with_input(BenchmarkId::from_parameter(format!("{mode:?}_one_event")), &req, |b, req| {
            b.iter(|| {
                turn ^= 1;
                scheduler.schedule_with(&mut scratch, snapshots[turn], req).unwrap()
            })
        });
        group.bench_with_input(BenchmarkId::from_parameter(format!("{mode:?}_one_event_rebuilt")), &req, |b, req| {
            b.iter(|| {
                turn ^= 1;
                scratch.clear();
                scheduler.schedule_with(&mut scratch, snapshots[turn], req).unwrap()
            })
        });
    }
    // The memory floor: one read of the hot columns of every node, no decision.
    group.bench_function("floor", |b| b.iter(|| support::hot_floor(black_box(&cl), &[])));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
