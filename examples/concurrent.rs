//! The parallel scheduler spec's use case: 10,000 hosts and a burst of 1,000 build requests,
//! spread over 1, 2 and 4 scheduler threads that share one `SharedCluster`, each planning on
//! its own snapshots and committing claims with compare-and-swap.
//!
//! Run with `cargo run --release --example concurrent`.
//!
//! For each weighing (fill-first, the case the spec says makes races worse, and spreading), each
//! top-k subset size and each validation rule, it prints the median of three runs: wall time,
//! throughput and speed-up over one thread, conflicts per commit, retries, stale reads, requests
//! that ran out of attempts, and the placement quality: distinct hosts used (fewer is better
//! when filling first) and the most instances on one host (fewer is better when spreading).
//! Beside each time, `free ms` is the same burst with no shared state at all (every thread
//! schedules its requests on one snapshot and commits nothing, same k): the time this machine
//! allows, so the gap between the two is the cost of sharing (commits, conflicts, re-plans),
//! whatever else the machine is doing. The last rows route the
//! burst through a partition `Router` instead: each scheduler thread owns a disjoint set of
//! hosts, so there is nothing to conflict on.

#[path = "../tests/support/mod.rs"]
mod support;

#[path = "../tests/support/shared_burst.rs"]
mod burst;

use burst::Burst;
use placewise::shared::Validation;

fn main() {
    let cluster = support::cluster(10_000, 7);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("10,000 hosts, burst of 1,000 builds (2 vCPU, 4 GiB, 40 GB), {cores} cores available");
    println!();
    let burst =
        |threads, fill_first, subset, validation| Burst { requests: 1_000, threads, fill_first, subset, validation };
    // Warm up caches and the allocator.
    burst::run(&cluster, burst(1, true, 1, Validation::Generation));

    let uncoordinated = |threads, fill_first, subset| {
        let mut times: Vec<f64> = (0..3)
            .map(|_| {
                burst::uncoordinated(&cluster, burst(threads, fill_first, subset, Validation::Generation)).as_secs_f64()
            })
            .collect();
        times.sort_by(f64::total_cmp);
        times[1]
    };
    println!(
        "{:<10} {:>3} {:<10} {:>7} {:>8} {:>8} {:>9} {:>8} {:>9} {:>7} {:>6} {:>9} {:>10} {:>8}",
        "weighing",
        "k",
        "validation",
        "threads",
        "time ms",
        "free ms",
        "builds/s",
        "speed-up",
        "conflict",
        "retries",
        "stale",
        "exhausted",
        "hosts used",
        "max/host"
    );
    for fill_first in [true, false] {
        for subset in [1, 8, 64, 256] {
            let free: Vec<f64> = [1, 2, 4].iter().map(|&t| uncoordinated(t, fill_first, subset)).collect();
            for validation in [Validation::Generation, Validation::Fit] {
                let mut one = None;
                for (n, threads) in [1, 2, 4].into_iter().enumerate() {
                    let r = burst::median(3, || burst::run(&cluster, burst(threads, fill_first, subset, validation)));
                    let base = *one.get_or_insert(r.throughput());
                    println!(
                        "{:<10} {:>3} {:<10} {:>7} {:>8.1} {:>8.1} {:>9.0} {:>7.2}x {:>8.2}% {:>7} {:>6} {:>9} {:>10} {:>8}",
                        if fill_first { "fill-first" } else { "spread" },
                        subset,
                        format!("{validation:?}").to_lowercase(),
                        threads,
                        r.elapsed.as_secs_f64() * 1e3,
                        free[n] * 1e3,
                        r.throughput(),
                        r.throughput() / base,
                        100.0 * r.conflict_rate(),
                        r.retries,
                        r.stale_reads,
                        r.exhausted,
                        r.hosts_used,
                        r.max_per_host,
                    );
                }
            }
        }
        println!();
    }
    println!("static partitions (hosts split by id, requests routed by flavor, one scheduler thread each):");
    for fill_first in [true, false] {
        for partitions in [1, 2, 4] {
            let (elapsed, placed, conflicts) = burst::partitioned(&cluster, partitions, fill_first);
            println!(
                "  {:<10} partitions {partitions}: {:>6.1} ms, {placed} placed, {conflicts} conflicts",
                if fill_first { "fill-first" } else { "spread" },
                elapsed.as_secs_f64() * 1e3,
            );
        }
    }
    println!();
    println!("free = the same burst with no shared state (the machine's ceiling); conflict = conflicting claims");
    println!("per commit; retries = re-plans after a conflict;");
    println!("exhausted = requests still conflicting after 3 plans (every other request was placed).");
}
