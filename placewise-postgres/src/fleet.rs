//! A burst of single-instance requests from one scheduler process: the load generator behind
//! the `fleet` example, the `placewise-burst` worker binary and the fault tests.
//!
//! [`run_burst`] plans `batch` requests at a time on one snapshot (each its own plan, with a
//! random pick among the best `top_k` hosts, fit validation unless told otherwise: the
//! defaults of [`RetryPolicy`]), commits them with
//! [`SharedState::commit_all`] in one transaction,
//! re-plans what conflicted, and rides out a database that goes away: a commit that failed
//! with a retryable error is made again unchanged (commits are idempotent), after a pause,
//! until `patience` runs out. Every placement is reported to `on_ack` as soon as its commit
//! returned: those are the acknowledged placements an audit must find.

use crate::store::PgStore;
use placewise::shared::{
    HostKey, PartitionFilter, Plan, RetryPolicy, SharedError, SharedState, StoreError, StoreErrorKind, Validation,
};
use placewise::{ComputeFilter, FreeResourceWeigher, Request, ResourceFilter, Scheduler};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// What one burst does.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BurstConfig {
    /// The database.
    pub url: String,
    /// Instance ids are `<prefix>-<n>`.
    pub prefix: String,
    /// Single-instance requests to place.
    pub requests: usize,
    /// Plans committed per transaction.
    pub batch: usize,
    /// The random pick among the best `top_k` hosts (default [`RetryPolicy`]'s, 4).
    pub top_k: usize,
    /// Memory per instance, in MiB.
    pub memory_mb: f64,
    /// Claims expire this many milliseconds after their commit unless confirmed (`None`: never).
    pub ttl_ms: Option<u64>,
    /// How long to keep retrying while the database is away.
    pub patience: Duration,
    /// The seed of the random picks.
    pub seed: u64,
    /// Judge claims on changed hosts by fit ([`Validation::Fit`], the default, as
    /// [`RetryPolicy`]'s) instead of refusing them ([`Validation::Generation`]).
    pub fit: bool,
    /// Serve only the hosts whose `pool` label has this value ([`PartitionFilter`]).
    pub pool: Option<String>,
}

impl BurstConfig {
    /// `requests` requests of 1 GiB, committed 8 at a time, with [`RetryPolicy::default()`]'s
    /// pick among the best few and validation, and 60 s of patience.
    pub fn new(url: impl Into<String>, prefix: impl Into<String>, requests: usize) -> BurstConfig {
        let policy = RetryPolicy::default();
        BurstConfig {
            url: url.into(),
            prefix: prefix.into(),
            requests,
            batch: 8,
            top_k: policy.top_k as usize,
            memory_mb: 1024.0,
            ttl_ms: None,
            patience: Duration::from_secs(60),
            seed: 1,
            fit: policy.validation == Validation::Fit,
            pool: None,
        }
    }
}

/// What a burst achieved.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BurstReport {
    /// Instances placed (acknowledged).
    pub placed: usize,
    /// Instances no host could take.
    pub unplaced: usize,
    /// Claims that conflicted and were re-planned.
    pub conflicts: usize,
    /// Commits made again after a retryable store error.
    pub retries: usize,
    /// Transactions committed.
    pub transactions: usize,
    /// Commit latencies in microseconds, one per transaction.
    pub latencies_us: Vec<u64>,
    /// Reloads from a checkpoint.
    pub reloads: u64,
    /// When the burst started, after the store loaded, in milliseconds since the Unix epoch.
    pub started_ms: u64,
    /// When its last commit returned, in milliseconds since the Unix epoch.
    pub finished_ms: u64,
    /// How long loading the state took, in milliseconds.
    pub load_ms: u64,
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The scheduler every burst uses: compute and resource filters, spread on free memory, a
/// random pick among the best `top_k`; with `pool`, only the hosts labelled `pool=<pool>`.
///
/// # Errors
///
/// Never in practice (the configuration is fixed and valid); the builder's error otherwise.
pub fn burst_scheduler(top_k: usize, pool: Option<&str>) -> Result<Scheduler, placewise::BuildError> {
    let mut b = Scheduler::builder().filter(ComputeFilter).filter(ResourceFilter::new());
    if let Some(pool) = pool {
        b = b.filter(PartitionFilter::new(HostKey::Label("pool".into()), [pool]));
    }
    b.weigher(FreeResourceWeigher::ram(), 1.0).host_subset_size(top_k.max(1)).build()
}

/// Runs a burst; see the [module docs](self). `on_ack(instance, host)` is called for every
/// placement right after its transaction committed.
///
/// # Errors
///
/// A store error that is not retryable, or one that outlasted `patience`.
pub fn run_burst(config: &BurstConfig, mut on_ack: impl FnMut(&str, &str)) -> Result<BurstReport, SharedError> {
    let scheduler = burst_scheduler(config.top_k, config.pool.as_deref())
        .map_err(|e| SharedError::Store(StoreError::new(StoreErrorKind::Other, e)))?;
    let loading = Instant::now();
    let store = patiently(config.patience, || PgStore::connect(&config.url))?;
    let mut report = BurstReport {
        load_ms: u64::try_from(loading.elapsed().as_millis()).unwrap_or(u64::MAX),
        started_ms: unix_ms(),
        ..BurstReport::default()
    };
    let mut pending: Vec<usize> = (0..config.requests).rev().collect();
    let mut draw = config.seed;
    while !pending.is_empty() {
        let snapshot = match store.snapshot() {
            Ok(s) => s,
            Err(SharedError::Store(e)) if e.is_retryable() => {
                std::thread::sleep(Duration::from_millis(100));
                continue;
            }
            Err(e) => return Err(e),
        };
        let mut plans = Vec::new();
        let mut batch = Vec::new();
        let mut picked = HashSet::new();
        while plans.len() < config.batch.max(1) {
            let Some(n) = pending.pop() else { break };
            // Plans of one batch are made on one snapshot: a second pick of a host the batch
            // already claims would be stale at commit, so draw again (a few times at most).
            let mut tries = 0;
            let (request, placement) = loop {
                draw = draw.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
                let request = Request::new(1).memory_mb(config.memory_mb).seed(draw);
                let placement = scheduler.schedule(&snapshot, &request).map_err(SharedError::Schedule)?;
                tries += 1;
                let fresh = placement.selections.first().is_none_or(|s| !picked.contains(&s.host));
                if fresh || tries == 4 {
                    break (request, placement);
                }
            };
            picked.extend(placement.selections.iter().map(|s| s.host));
            if !placement.is_complete() {
                report.unplaced += 1;
                continue;
            }
            let id = format!("{}-{n}", config.prefix);
            let mut plan = Plan::from_placement(&snapshot, &request, &placement, &[id])?;
            if let Some(ttl) = config.ttl_ms {
                plan = plan.expires_after(ttl);
            }
            plan = plan.validation(if config.fit { Validation::Fit } else { Validation::Generation });
            plans.push(plan);
            batch.push(n);
        }
        if plans.is_empty() {
            continue;
        }
        let started = Instant::now();
        let deadline = started + config.patience;
        let outcomes = loop {
            match store.commit_all(&scheduler, &plans) {
                Ok(o) => break o,
                Err(SharedError::Store(e)) if e.is_retryable() && Instant::now() < deadline => {
                    report.retries += 1;
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(SharedError::ForeignPlan) => break Vec::new(),
                Err(e) => return Err(e),
            }
        };
        if outcomes.is_empty() {
            // The store reloaded: plan the batch again on the new state.
            pending.extend(batch.iter().rev());
            continue;
        }
        report.latencies_us.push(u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX));
        report.transactions += 1;
        for (outcome, &n) in outcomes.iter().zip(&batch) {
            for c in &outcome.committed {
                on_ack(&c.instance, &c.host_name);
                report.placed += 1;
            }
            if !outcome.conflicts.is_empty() {
                report.conflicts += outcome.conflicts.len();
                pending.push(n);
            }
        }
    }
    report.reloads = store.reloads();
    report.finished_ms = unix_ms();
    Ok(report)
}

/// Calls `f` until it succeeds, fails with an error that is not retryable, or `patience` runs
/// out.
fn patiently<T>(patience: Duration, mut f: impl FnMut() -> Result<T, SharedError>) -> Result<T, SharedError> {
    let deadline = Instant::now() + patience;
    loop {
        match f() {
            Err(SharedError::Store(e)) if e.is_retryable() && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(100));
            }
            other => return other,
        }
    }
}

/// The command line of a worker process: `--url U --prefix P --requests N --batch B --top-k K`
/// (and `--ttl-ms T`, `--seed S`, `--fit false` for generation validation, `--pool P`); what
/// is not given is [`BurstConfig::new`]'s. Prints `ACK <instance> <host>` (JSON strings) per
/// placement and `DONE <report as JSON>` at the end.
///
/// # Errors
///
/// A message for a malformed argument or a failed burst.
pub fn worker_main(args: &[String]) -> Result<(), String> {
    let mut config = BurstConfig::new("", "vm", 0);
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = || value.parse::<u64>().map_err(|e| format!("{flag} {value}: {e}"));
        match flag.as_str() {
            "--url" => config.url = value.clone(),
            "--prefix" => config.prefix = value.clone(),
            "--requests" => config.requests = number()? as usize,
            "--batch" => config.batch = number()? as usize,
            "--top-k" => config.top_k = number()? as usize,
            "--ttl-ms" => config.ttl_ms = Some(number()?),
            "--seed" => config.seed = number()?,
            "--fit" => config.fit = value == "true",
            "--pool" => config.pool = Some(value.clone()),
            other => return Err(format!("unknown flag {other}")),
        }
    }
    use std::io::Write;
    let stdout = std::io::stdout();
    let report = run_burst(&config, |instance, host| {
        let mut out = stdout.lock();
        let line = format!("ACK {} {}", json(instance), json(host));
        // A closed pipe means the parent is gone; nobody is left to tell.
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    })
    .map_err(|e| e.to_string())?;
    println!("DONE {}", serde_json::to_string(&report).map_err(|e| e.to_string())?);
    Ok(())
}

fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// Parses a worker's output: its acknowledged placements and, if it finished, its report.
pub fn parse_worker_output(text: &str) -> (Vec<(String, String)>, Option<BurstReport>) {
    let mut acks = Vec::new();
    let mut report = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("ACK ") {
            let mut de = serde_json::Deserializer::from_str(rest).into_iter::<String>();
            if let (Some(Ok(i)), Some(Ok(h))) = (de.next(), de.next()) {
                acks.push((i, h));
            }
        } else if let Some(rest) = line.strip_prefix("DONE ") {
            report = serde_json::from_str(rest).ok();
        }
    }
    (acks, report)
}
