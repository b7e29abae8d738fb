//! Several scheduler processes, one PostgreSQL: a burst of single-instance requests from 1, 2
//! and 4 real processes against 10,000 hosts, with durable placements per second, conflicts,
//! retries, commit latency and an audit of the database after each run.
//!
//! ```sh
//! cargo run --release -p placewise-postgres --example fleet
//! PLACEWISE_PG_URL="host=/var/run/postgresql user=me dbname=scratch" cargo run --release -p placewise-postgres --example fleet
//! ```
//!
//! Without `PLACEWISE_PG_URL` it starts a throwaway server in a temporary directory. With
//! one, it drops and recreates the placewise tables in that database: point it at a scratch
//! database. Flags: `--hosts N` (10000), `--requests N` (10000).

use placewise::snapshot::{Cluster, HostSpec};
use placewise_postgres::fleet::{parse_worker_output, worker_main, BurstConfig, BurstReport};
use placewise_postgres::server::TempServer;
use placewise_postgres::PgStore;
use std::process::{Command, Stdio};

struct Run {
    procs: usize,
    batch: usize,
    top_k: usize,
    fit: bool,
    /// Each process serves its own pool of hosts (a partition by the `pool` label).
    pools: bool,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--worker") {
        return worker_main(&args[1..]).map_err(Into::into);
    }
    let flag = |name: &str, default: usize| -> usize {
        args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)?.parse().ok()).unwrap_or(default)
    };
    let (hosts, requests) = (flag("--hosts", 10_000), flag("--requests", 10_000));
    let _server;
    let url = match std::env::var("PLACEWISE_PG_URL") {
        Ok(url) => url,
        Err(_) => {
            let s = TempServer::start()?;
            let url = s.url();
            _server = s;
            url
        }
    };
    println!("placewise on PostgreSQL: {hosts} hosts, {requests} single-instance requests (1 GiB each)");
    println!("synchronous_commit on; each run starts from a freshly seeded database\n");
    // The first rows are the defaults (`BurstConfig::new`, `RetryPolicy::default()`: fit
    // validation, a pick among the best 4); each later row changes one thing.
    let default_k = BurstConfig::new("", "", 0).top_k;
    let runs = [
        Run { procs: 1, batch: 8, top_k: default_k, fit: true, pools: false },
        Run { procs: 2, batch: 8, top_k: default_k, fit: true, pools: false },
        Run { procs: 4, batch: 8, top_k: default_k, fit: true, pools: false },
        Run { procs: 4, batch: 1, top_k: default_k, fit: true, pools: false },
        Run { procs: 4, batch: 32, top_k: default_k, fit: true, pools: false },
        Run { procs: 4, batch: 8, top_k: 64, fit: true, pools: false },
        Run { procs: 4, batch: 8, top_k: 64, fit: false, pools: false },
        Run { procs: 4, batch: 8, top_k: 1024, fit: false, pools: false },
        Run { procs: 4, batch: 8, top_k: default_k, fit: true, pools: true },
        Run { procs: 4, batch: 32, top_k: default_k, fit: true, pools: true },
    ];
    println!(
        "{:>5} {:>5} {:>5} {:>10} {:>10} | {:>12} {:>9} {:>7} {:>9} {:>9} {:>8} {:>6}",
        "procs",
        "batch",
        "top-k",
        "validation",
        "partitions",
        "placements/s",
        "conflicts",
        "retries",
        "p50 ms",
        "p99 ms",
        "load ms",
        "audit"
    );
    for run in &runs {
        reset(&url, hosts)?;
        let exe = std::env::current_exe()?;
        let children: Vec<_> = (0..run.procs)
            .map(|i| {
                let mut c = Command::new(&exe);
                c.arg("--worker")
                    .args(["--url", &url, "--prefix", &format!("p{i}"), "--requests"])
                    .arg((requests / run.procs + usize::from(i < requests % run.procs)).to_string())
                    .args(["--batch", &run.batch.to_string(), "--top-k", &run.top_k.to_string()])
                    .args(["--seed", &(i + 1).to_string(), "--fit", &run.fit.to_string()]);
                if run.pools {
                    c.args(["--pool", &format!("p{i}")]);
                }
                c.stdout(Stdio::piped()).spawn()
            })
            .collect::<Result<_, _>>()?;
        let mut acknowledged = Vec::new();
        let mut reports: Vec<BurstReport> = Vec::new();
        for child in children {
            let out = child.wait_with_output()?;
            let (acks, report) = parse_worker_output(&String::from_utf8_lossy(&out.stdout));
            acknowledged.extend(acks);
            reports.push(report.ok_or("a worker did not finish")?);
        }
        let placed: usize = reports.iter().map(|r| r.placed).sum();
        let conflicts: usize = reports.iter().map(|r| r.conflicts).sum();
        let retries: usize = reports.iter().map(|r| r.retries).sum();
        let start = reports.iter().map(|r| r.started_ms).min().unwrap_or(0);
        let end = reports.iter().map(|r| r.finished_ms).max().unwrap_or(0);
        let load = reports.iter().map(|r| r.load_ms).max().unwrap_or(0);
        let mut lat: Vec<u64> = reports.iter().flat_map(|r| r.latencies_us.iter().copied()).collect();
        lat.sort_unstable();
        let pct = |p: f64| lat.get(((lat.len() as f64 - 1.0) * p) as usize).map_or(0.0, |&v| v as f64 / 1000.0);
        let audit = PgStore::audit(&url, &acknowledged)?;
        let rate = placed as f64 / ((end - start).max(1) as f64 / 1000.0);
        println!(
            "{:>5} {:>5} {:>5} {:>10} {:>10} | {:>12.0} {:>8.2}% {:>7} {:>9.2} {:>9.2} {:>8} {:>6}",
            run.procs,
            run.batch,
            run.top_k,
            if run.fit { "fit" } else { "generation" },
            if run.pools { "by pool" } else { "none" },
            rate,
            100.0 * conflicts as f64 / (placed + conflicts).max(1) as f64,
            retries,
            pct(0.5),
            pct(0.99),
            load,
            if audit.is_clean() && placed == requests { "clean" } else { "FAILED" },
        );
        if !audit.is_clean() {
            eprintln!("audit problems: {:#?}", audit.problems);
        }
    }
    println!("\nplacements/s counts durable placements from the first worker's start to the last commit;");
    println!("p50/p99 are per transaction (batch plans); load ms is the slowest worker's checkpoint + log load.");
    Ok(())
}

/// Drops the placewise tables, migrates and seeds `hosts` hosts of 64 vCPUs and 256 GiB in
/// three zones and four pools.
fn reset(url: &str, hosts: usize) -> Result<(), Box<dyn std::error::Error>> {
    let mut c = postgres::Client::connect(url, postgres::NoTls)?;
    c.batch_execute(
        "DROP TABLE IF EXISTS placewise_schema, placewise_head, placewise_hosts, placewise_claims, placewise_log, placewise_checkpoints",
    )?;
    PgStore::migrate(url)?;
    let mut b = Cluster::builder();
    for i in 0..hosts {
        let zone = format!("az{}", i % 3);
        let pool = format!("p{}", i % 4);
        b = b.host(
            HostSpec::new(format!("node-{i:05}")).vcpus(64.0).memory_mb(262_144.0).zone(zone).label("pool", pool),
        );
    }
    PgStore::connect(url)?.bootstrap(&b.build()?)?;
    Ok(())
}
