//! Faults against a real server, each ending with an audit of the whole database: a scheduler
//! process killed mid-burst, the server killed mid-burst and restarted, a connection
//! terminated server-side mid-commit. (A follower away while the log was compacted is in
//! `store.rs`.)

use placewise::shared::{RetryPolicy, SharedState};
use placewise::snapshot::{Cluster, HostSpec};
use placewise::Request;
use placewise_postgres::fleet::{burst_scheduler, parse_worker_output, BurstReport};
use placewise_postgres::server::{require_server, TempServer};
use placewise_postgres::{PgStore, Stage};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

fn seeded(test: &str, hosts: usize) -> Option<TempServer> {
    let server = require_server(test)?;
    PgStore::migrate(&server.url()).unwrap();
    let mut b = Cluster::builder();
    for i in 0..hosts {
        b = b.host(HostSpec::new(format!("node-{i:03}")).vcpus(64.0).memory_mb(65536.0));
    }
    assert!(PgStore::connect(&server.url()).unwrap().bootstrap(&b.build().unwrap()).unwrap());
    Some(server)
}

/// A worker process with its output collected line by line; `acks` counts its ACK lines.
struct Worker {
    child: Child,
    output: JoinHandle<String>,
    acks: Arc<AtomicUsize>,
}

fn spawn(url: &str, prefix: &str, requests: usize) -> Worker {
    spawn_with(url, prefix, requests, &[])
}

fn spawn_with(url: &str, prefix: &str, requests: usize, extra: &[&str]) -> Worker {
    let mut child = Command::new(env!("CARGO_BIN_EXE_placewise-burst"))
        .args(["--url", url, "--prefix", prefix, "--requests", &requests.to_string()])
        .args(["--batch", "4", "--top-k", "8", "--seed", &prefix.len().to_string()])
        .args(extra)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let acks = Arc::new(AtomicUsize::new(0));
    let counter = acks.clone();
    let output = std::thread::spawn(move || {
        let mut text = String::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.starts_with("ACK ") {
                counter.fetch_add(1, Ordering::SeqCst);
            }
            text.push_str(&line);
            text.push('\n');
        }
        text
    });
    Worker { child, output, acks }
}

fn wait_for_acks(w: &Worker, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while w.acks.load(Ordering::SeqCst) < n {
        assert!(Instant::now() < deadline, "the worker never acknowledged {n} placements");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn finish(w: Worker) -> (Vec<(String, String)>, Option<BurstReport>, bool) {
    let mut child = w.child;
    let status = child.wait().unwrap();
    let (acks, report) = parse_worker_output(&w.output.join().unwrap());
    (acks, report, status.success())
}

fn assert_clean(url: &str, acknowledged: &[(String, String)]) {
    let audit = PgStore::audit(url, acknowledged).unwrap();
    assert!(audit.is_clean(), "{:#?}", audit.problems);
    assert!(audit.claims >= acknowledged.len());
}

#[test]
fn killing_a_scheduler_process_mid_burst_loses_no_acknowledged_placement() {
    let Some(server) = seeded("killing_a_scheduler_process_mid_burst_loses_no_acknowledged_placement", 50) else {
        return;
    };
    // The victim's claims expire 1.5 s after their commit unless confirmed; the others' never.
    let victim = spawn_with(&server.url(), "a", 300, &["--ttl-ms", "1500"]);
    let others: Vec<Worker> = ["bb", "ccc"].iter().map(|p| spawn(&server.url(), p, 300)).collect();
    wait_for_acks(&victim, 20);
    let mut victim = victim;
    victim.child.kill().unwrap(); // SIGKILL, between commit and confirm
    let victims = finish(victim).0;
    assert!(!victims.is_empty());
    let mut acknowledged = victims.clone();
    for w in others {
        let (acks, report, ok) = finish(w);
        assert!(ok);
        assert_eq!(report.unwrap().placed, 300);
        acknowledged.extend(acks);
    }
    assert_clean(&server.url(), &acknowledged);
    // Nothing of the killed scheduler outlives its expiry: any process releases it.
    std::thread::sleep(Duration::from_millis(1600));
    let store = PgStore::connect(&server.url()).unwrap();
    let released = store.expire_due().unwrap();
    assert!(released.len() >= victims.len(), "{} released, {} acknowledged", released.len(), victims.len());
    let left: Vec<String> = store.claims().unwrap().into_iter().map(|c| c.instance).collect();
    assert_eq!(left.len(), 600);
    assert!(left.iter().all(|i| !i.starts_with("a-")));
    let survivors: Vec<(String, String)> = acknowledged.into_iter().filter(|(i, _)| !i.starts_with("a-")).collect();
    assert_clean(&server.url(), &survivors);
}

#[test]
fn killing_the_database_mid_burst_loses_no_acknowledged_placement() {
    let Some(mut server) = seeded("killing_the_database_mid_burst_loses_no_acknowledged_placement", 50) else {
        return;
    };
    let workers: Vec<Worker> = ["a", "bb"].iter().map(|p| spawn(&server.url(), p, 400)).collect();
    wait_for_acks(&workers[0], 40);
    server.kill(); // SIGKILL to the postmaster and every backend
    std::thread::sleep(Duration::from_millis(300));
    server.restart().unwrap_or_else(|e| panic!("restart: {e}"));
    let mut acknowledged = Vec::new();
    let mut retries = 0;
    for w in workers {
        let (acks, report, ok) = finish(w);
        assert!(ok, "a scheduler did not survive the restart");
        let report = report.unwrap();
        assert_eq!(report.placed, 400);
        retries += report.retries;
        acknowledged.extend(acks);
    }
    assert_eq!(acknowledged.len(), 800);
    assert!(retries > 0, "the crash was not noticed");
    assert_clean(&server.url(), &acknowledged);
}

/// Terminates backend `pid` from a connection of its own and waits until it is gone.
fn terminate(url: &str, pid: i32) {
    let mut admin = postgres::Client::connect(url, postgres::NoTls).unwrap();
    admin.execute("SELECT pg_terminate_backend($1)", &[&pid]).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while admin.query_opt("SELECT 1 FROM pg_stat_activity WHERE pid = $1", &[&pid]).unwrap().is_some() {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_connection_terminated_mid_commit_is_retried_and_lands_once() {
    let Some(server) = seeded("a_connection_terminated_mid_commit_is_retried_and_lands_once", 10) else { return };
    let url = server.url();
    // Terminate the backend before the 2nd write's COMMIT and after the 4th write's COMMIT.
    let (tx, rx) = mpsc::channel();
    let writes = AtomicUsize::new(0);
    let hook_url = url.clone();
    let store = PgStore::connect(&url).unwrap().with_hook(move |stage, pid| {
        let n = writes.fetch_add(usize::from(stage == Stage::BeforeCommit), Ordering::SeqCst) + 1;
        if (stage == Stage::BeforeCommit && n == 2) || (stage == Stage::AfterCommit && n == 4) {
            terminate(&hook_url, pid);
            tx.send((stage, n)).unwrap();
        }
    });
    let s = burst_scheduler(1, None).unwrap();
    let mut acknowledged = Vec::new();
    for i in 0..6 {
        let id = format!("vm-{i}");
        let placed = store.place(&s, &Request::new(1).memory_mb(1024.0), &[id], &RetryPolicy::default()).unwrap();
        assert!(placed.is_complete());
        acknowledged.extend(placed.committed.iter().map(|c| (c.instance.clone(), c.host_name.clone())));
    }
    let fired: Vec<(Stage, usize)> = rx.try_iter().collect();
    assert_eq!(fired, vec![(Stage::BeforeCommit, 2), (Stage::AfterCommit, 4)]);
    // Six instances, each in the log once, after seven commit attempts.
    assert_eq!(store.log_since(0).unwrap().iter().map(|e| e.events.len()).sum::<usize>(), 6);
    assert_eq!(store.stats().retries, 1);
    assert_clean(&url, &acknowledged);
}
