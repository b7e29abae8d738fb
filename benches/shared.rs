//! Shared state at the spec's scale: 10,000 hosts, a burst of 1,000 builds over 1, 2 and 4
//! scheduler threads sharing one `SharedCluster`, fill-first and spreading, best pick and a
//! random pick among the best 64, with strict generation validation; beside each, the same
//! burst with no shared state at all (the machine's ceiling, same k), so the ratio of the two is
//! the cost of sharing. Also the unit costs: a snapshot and a one-claim commit.
//!
//! `cargo bench --bench shared -- --warm-up-time 1 --measurement-time 3`; conflict and retry
//! counts are printed by `cargo run --release --example concurrent`.

#![allow(missing_docs)] // criterion_group! generates undocumented items

#[path = "../tests/support/mod.rs"]
mod support;

#[path = "../tests/support/shared_burst.rs"]
mod burst;

use burst::Burst;
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use placewise::shared::{Plan, SharedCluster, Validation};

fn bursts(c: &mut Criterion) {
    let cluster = support::cluster(10_000, 7);
    let mut group = c.benchmark_group("shared_burst_10k_hosts_1000_builds");
    group.sample_size(10);
    for (weighing, fill_first) in [("fill_first", true), ("spread", false)] {
        for subset in [1, 64] {
            for threads in [1, 2, 4] {
                let burst = Burst { requests: 1_000, threads, fill_first, subset, validation: Validation::Generation };
                let shared = BenchmarkId::new(format!("{weighing}/k{subset}/shared"), threads);
                group.bench_with_input(shared, &burst, |b, &burst| b.iter(|| burst::run(&cluster, burst)));
                let plain = BenchmarkId::new(format!("{weighing}/k{subset}/no_shared_state"), threads);
                group.bench_with_input(plain, &burst, |b, &burst| b.iter(|| burst::uncoordinated(&cluster, burst)));
            }
        }
    }
    group.finish();
}

fn unit_costs(c: &mut Criterion) {
    let cluster = support::cluster(10_000, 7);
    let scheduler = burst::scheduler(false, 1, 1);
    let shared = SharedCluster::new(cluster.clone());
    c.bench_function("shared_snapshot_10k", |b| b.iter(|| shared.snapshot()));
    let snap = shared.snapshot();
    let req = burst::build_request(0);
    let placement = scheduler.schedule(&snap, &req).unwrap();
    let plan = Plan::from_placement(&snap, &req, &placement, &["vm".to_string()]).unwrap();
    c.bench_function("shared_plan_and_commit_one_claim_10k", |b| {
        b.iter_batched(
            || SharedCluster::new(cluster.clone()),
            |fresh| {
                let plan = {
                    let s = fresh.snapshot();
                    let mut p = Plan::new(&s, plan.request());
                    p.push(plan.claims()[0].host, "vm");
                    p
                };
                fresh.commit(&scheduler, &plan).unwrap()
            },
            BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, bursts, unit_costs);
criterion_main!(benches);
