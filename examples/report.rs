//! Prints timings for the benchmark workloads and the memory a snapshot takes per host, in one
//! table. Memory is resident size: what building the first snapshot added (its transient
//! allocations included, which the allocator keeps), and what each further snapshot of the same
//! cluster adds (the snapshot alone). A report, not a benchmark: criterion (`cargo bench --bench schedule`) gives the medians.
//!
//! Run with `cargo run --release --example report`.

use placewise::{Request, Scratch};
use std::time::{Duration, Instant};

#[path = "../tests/support/mod.rs"]
mod support;

/// Resident memory of this process in bytes (Linux), to measure what a snapshot occupies.
fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    pages * 4096
}

fn request(count: u32) -> Request {
    Request::new(count).vcpus(2.0).memory_mb(4096.0).disk_gb(40.0).selector("tier != bronze".parse().unwrap())
}

fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

fn time(reps: usize, mut f: impl FnMut()) -> Duration {
    f();
    median(
        (0..reps)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn main() {
    println!(
        "{:>8} | {:>14} | {:>14} | {:>16} | {:>16} | {:>14}",
        "hosts", "RSS/host first", "RSS/host next", "one instance", "burst 1,000", "burst (stack)"
    );
    for hosts in [1_000, 10_000, 100_000] {
        let spec = support::cluster_spec(hosts, 7);
        let before = resident_bytes();
        let cluster = placewise::Cluster::from_spec(&spec).unwrap();
        let first = resident_bytes().saturating_sub(before) / hosts;
        let before = resident_bytes();
        let more: Vec<_> = (0..3).map(|_| placewise::Cluster::from_spec(&spec).unwrap()).collect();
        let next = resident_bytes().saturating_sub(before) / (3 * hosts);
        drop(more);
        drop(spec);
        let spread = support::standard_scheduler(1.0);
        let stack = support::standard_scheduler(-1.0);
        let mut scratch = Scratch::new();
        let one = request(1);
        let burst = request(1_000);
        let reps = if hosts >= 100_000 { 5 } else { 21 };
        let t1 = time(reps * 10, || {
            spread.schedule_with(&mut scratch, &cluster, &one).unwrap();
        });
        let tb = time(reps, || {
            spread.schedule_with(&mut scratch, &cluster, &burst).unwrap();
        });
        let ts = time(reps, || {
            stack.schedule_with(&mut scratch, &cluster, &burst).unwrap();
        });
        println!("{:>8} | {:>14} | {:>14} | {:>16?} | {:>16?} | {:>14?}", hosts, first, next, t1, tb, ts);
    }
}
