//! Scheduling throughput on generated clusters (fixed seeds): one instance, and a burst of
//! 1,000, on 1k, 10k and 100k hosts with five filters and three weighers; and the scheduler
//! beside a plain "filter all, score all, sort" loop over the same traits, so the gain shows as a
//! ratio.
//!
//! Every group also times the memory floor (`floor`): one read of the hot columns those
//! requests look at, for every host, with no decision (`support::hot_floor`), so a report can
//! say how many times the floor a request costs, measured in the same run.
//!
//! Run with `cargo bench --bench schedule`.
#![allow(missing_docs)] // criterion_group! generates undocumented items

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use placewise::weigh::normalize;
use placewise::{Cluster, Cx, Filter, HostId, Request, Scheduler, Scratch, Verdict};
use std::hint::black_box;
use std::time::Duration;

#[path = "../tests/support/mod.rs"]
mod support;

fn request(count: u32) -> Request {
    Request::new(count).vcpus(2.0).memory_mb(4096.0).disk_gb(40.0).selector("tier != bronze".parse().unwrap())
}

fn one_instance(c: &mut Criterion) {
    let mut group = c.benchmark_group("one_instance");
    let scheduler = support::standard_scheduler(1.0);
    for hosts in [1_000, 10_000, 100_000] {
        let cluster = support::cluster(hosts, 7);
        let req = request(1);
        let mut scratch = Scratch::new();
        group.bench_with_input(BenchmarkId::from_parameter(hosts), &cluster, |b, cluster| {
            b.iter(|| scheduler.schedule_with(&mut scratch, black_box(cluster), black_box(&req)).unwrap())
        });
        group.bench_with_input(BenchmarkId::new("floor", hosts), &cluster, |b, cluster| {
            b.iter(|| support::hot_floor(black_box(cluster), FLOOR_LABELS))
        });
    }
    group.finish();
}

/// The label pairs the benchmark's selectors read (`tier != bronze`, `maintenance != true`).
const FLOOR_LABELS: &[(&str, &str)] = &[("tier", "bronze"), ("maintenance", "true")];

fn burst(c: &mut Criterion) {
    let mut group = c.benchmark_group("burst_1000");
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    for (name, multiplier) in [("spread", 1.0), ("stack", -1.0)] {
        let scheduler = support::standard_scheduler(multiplier);
        for hosts in [1_000, 10_000, 100_000] {
            let cluster = support::cluster(hosts, 7);
            let req = request(1_000);
            let mut scratch = Scratch::new();
            group.bench_with_input(BenchmarkId::new(name, hosts), &cluster, |b, cluster| {
                b.iter(|| scheduler.schedule_with(&mut scratch, black_box(cluster), black_box(&req)).unwrap())
            });
        }
    }
    group.finish();
}

/// The plain counterpart: every host through every filter by dynamic call, every survivor
/// scored, the whole list sorted. Same filters, weighers and answer as the scheduler.
fn plain_pick(scheduler_parts: &support::Parts, cluster: &Cluster, req: &Request) -> Option<HostId> {
    let (filters, weighers) = scheduler_parts;
    let compiled = req.compile(cluster).unwrap();
    let overlay = placewise::snapshot::Overlay::new();
    let cx = Cx::new(cluster, req, &compiled, &overlay, 0);
    let states: Vec<_> = filters.iter().map(|f| f.prepare(&cx).unwrap()).collect();
    let hosts: Vec<HostId> = cluster
        .host_ids()
        .filter(|&h| {
            filters.iter().zip(&states).all(|(f, s)| f.check(&cx.with_state(s.as_deref()), h) == Verdict::Pass)
        })
        .collect();
    let mut total = vec![0.0; hosts.len()];
    for (w, m) in weighers {
        let mut raw: Vec<f64> = hosts.iter().map(|&h| w.weigh(&cx, h)).collect();
        normalize(&mut raw, w.bounds());
        for (t, r) in total.iter_mut().zip(raw) {
            *t += m * r;
        }
    }
    let mut ranked: Vec<(f64, HostId)> = total.into_iter().zip(hosts).collect();
    ranked.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap().then(a.1.cmp(&b.1)));
    ranked.first().map(|r| r.1)
}

fn fast_vs_plain(c: &mut Criterion) {
    let mut group = c.benchmark_group("fast_vs_plain_10k");
    let cluster = support::cluster(10_000, 7);
    let req = request(1);
    let scheduler: Scheduler = support::standard_scheduler(1.0);
    let parts = support::standard_parts(1.0);
    let mut scratch = Scratch::new();
    let fast = scheduler.schedule_with(&mut scratch, &cluster, &req).unwrap().selections[0].host;
    assert_eq!(plain_pick(&parts, &cluster, &req), Some(fast), "both paths must agree");
    group.bench_function("scheduler", |b| {
        b.iter(|| scheduler.schedule_with(&mut scratch, black_box(&cluster), black_box(&req)).unwrap())
    });
    group.bench_function("plain", |b| b.iter(|| plain_pick(&parts, black_box(&cluster), black_box(&req))));
    group.bench_function("floor", |b| b.iter(|| support::hot_floor(black_box(&cluster), FLOOR_LABELS)));
    group.finish();
}

criterion_group!(benches, one_instance, burst, fast_vs_plain);
criterion_main!(benches);
