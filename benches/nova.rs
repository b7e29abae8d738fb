//! The filter scheduler's own workload at scale: the reference tool's seeded scenario with
//! 10,000 hosts and one request for 1,000 instances (18 filters, 10 weighers), which Nova 34's
//! own code places in about 9 minutes on this machine class. The bench first checks that
//! placewise's 1,000 picks equal Nova's (recorded in `benches/data/nova_10k_1000.expected.json`),
//! then times the whole request.
//!
//! Run with `cargo bench --bench nova`.
#![allow(missing_docs)] // criterion_group! generates undocumented items

use criterion::{criterion_group, criterion_main, Criterion};
use placewise::nova::scenario::Scenario;
use std::hint::black_box;
use std::time::Duration;

#[path = "../tests/support/mod.rs"]
mod support;

const SCENARIO: &str = include_str!("data/nova_10k_1000.json");
const EXPECTED: &str = include_str!("data/nova_10k_1000.expected.json");

fn nova_10k_1000(c: &mut Criterion) {
    let scenario = Scenario::from_json(SCENARIO).expect("the bundled scenario loads");
    let scheduler = scenario.config.build().expect("the bundled configuration builds");
    let placement = scheduler.schedule(&scenario.cluster, &scenario.request).expect("the request schedules");
    let expected: serde_json::Value = serde_json::from_str(EXPECTED).expect("expected selections parse");
    assert_eq!(
        scenario.output(&placement)["selections"],
        expected["selections"],
        "placewise must pick what Nova picked"
    );

    let mut group = c.benchmark_group("nova_scenario");
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    group.bench_function("10k_hosts_1000_instances", |b| {
        b.iter(|| scheduler.schedule(black_box(&scenario.cluster), black_box(&scenario.request)).unwrap())
    });
    // The memory floor: one read of the hot columns of every host, no decision.
    group.bench_function("floor", |b| b.iter(|| support::hot_floor(black_box(&scenario.cluster), &[])));
    group.finish();
}

criterion_group!(benches, nova_10k_1000);
criterion_main!(benches);
