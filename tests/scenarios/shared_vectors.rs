//! Commit scenarios as data files under `tests/data/shared/`, run by this module of the scenario runner.
//!
//! A file holds a `description`, a `cluster` (a `ClusterSpec`), the `scheduler` (`"stack"`:
//! compute and resource filters, fill-first on memory; `"spread"`: the same filters, most free
//! memory first) and `steps`, run in order:
//!
//! - `{"plan": {"name": "a", "request": {...}, "ids": ["vm-1"]}}` schedules the request on a
//!   snapshot taken now and keeps the plan under its name; `"hosts": [...]` asserts where it
//!   went;
//! - `{"publish": <ClusterEvent>}` applies an event;
//! - `{"commit": {"plan": "a", "mode": "gang", "validation": "fit", "expires_at": 5,
//!   "landed": ["vm-1"], "conflicts": {"vm-2": "stale"}}}` commits and asserts which instances
//!   landed and why the others did not (`stale`, `host_gone`, `no_fit`, `over_commit`,
//!   `rejected`, `gang_aborted`);
//! - `{"release": "vm-1"}`, `{"expire": {"now": 5, "released": ["vm-1"]}}`;
//! - `{"used": {"h1": 2048}}` asserts the hosts' used memory, `{"seq": 3}` the log's head.
//!
//! Expectations follow from the commit rules in the module docs, worked out by hand.

use crate::data;

use placewise::id::ResourceId;
use placewise::shared::{ClaimId, CommitMode, ConflictReason, Plan, SharedCluster, Validation};
use placewise::snapshot::ClusterSpec;
use placewise::{Cluster, ClusterEvent, ComputeFilter, FreeResourceWeigher, Request, ResourceFilter, Scheduler};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Scenario {
    description: String,
    cluster: ClusterSpec,
    scheduler: String,
    steps: Vec<Step>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum Step {
    Plan {
        name: String,
        request: Box<Request>,
        ids: Vec<String>,
        #[serde(default)]
        hosts: Option<Vec<String>>,
    },
    Publish(ClusterEvent),
    Commit {
        plan: String,
        #[serde(default)]
        mode: CommitMode,
        #[serde(default)]
        validation: Validation,
        #[serde(default)]
        expires_at: Option<u64>,
        landed: Vec<String>,
        #[serde(default)]
        conflicts: BTreeMap<String, String>,
    },
    Release(String),
    Expire {
        now: u64,
        released: Vec<String>,
    },
    Used(BTreeMap<String, f64>),
    Seq(u64),
}

fn scheduler(name: &str) -> Scheduler {
    let multiplier = match name {
        "stack" => -1.0,
        "spread" => 1.0,
        other => panic!("unknown scheduler {other}"),
    };
    Scheduler::builder()
        .filter(ComputeFilter)
        .filter(ResourceFilter::new())
        .weigher(FreeResourceWeigher::ram(), multiplier)
        .build()
        .unwrap()
}

fn kind(reason: &ConflictReason) -> &'static str {
    match reason {
        ConflictReason::Stale { .. } => "stale",
        ConflictReason::HostGone => "host_gone",
        ConflictReason::NoFit { .. } => "no_fit",
        ConflictReason::OverCommit { .. } => "over_commit",
        ConflictReason::Rejected(_) => "rejected",
        ConflictReason::GangAborted => "gang_aborted",
        _ => "other",
    }
}

fn run(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let scenario: Scenario = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let at = |i: usize| format!("{} ({}), step {i}", path.display(), scenario.description);
    let shared = SharedCluster::new(Cluster::from_spec(&scenario.cluster).unwrap());
    let s = scheduler(&scenario.scheduler);
    let mut plans: BTreeMap<String, Plan> = BTreeMap::new();
    let mut claims: BTreeMap<String, ClaimId> = BTreeMap::new();
    for (i, step) in scenario.steps.into_iter().enumerate() {
        match step {
            Step::Plan { name, request, ids, hosts } => {
                let snap = shared.snapshot();
                let placement = s.schedule(&snap, &request).unwrap();
                let plan = Plan::from_placement(&snap, &request, &placement, &ids).unwrap();
                if let Some(hosts) = hosts {
                    let got: Vec<&str> = plan.claims().iter().map(|c| c.host_name.as_str()).collect();
                    assert_eq!(got, hosts, "{}", at(i));
                }
                plans.insert(name, plan);
            }
            Step::Publish(event) => {
                shared.publish(event).unwrap_or_else(|e| panic!("{}: {e}", at(i)));
            }
            Step::Commit { plan, mode, validation, expires_at, landed, conflicts } => {
                let mut plan = plans[&plan].clone().mode(mode).validation(validation);
                if let Some(t) = expires_at {
                    plan = plan.expires_at(t);
                }
                let out = shared.commit(&s, &plan).unwrap();
                let got: Vec<&str> = out.committed.iter().map(|c| c.instance.as_str()).collect();
                assert_eq!(got, landed, "{}", at(i));
                let got: BTreeMap<String, String> = out
                    .conflicts
                    .iter()
                    .map(|c| (plan.claims()[c.claim].instance.id.clone(), kind(&c.reason).to_string()))
                    .collect();
                assert_eq!(got, conflicts, "{}", at(i));
                for c in out.committed {
                    claims.insert(c.instance, c.id);
                }
            }
            Step::Release(instance) => {
                shared.release(claims[&instance]).unwrap();
            }
            Step::Expire { now, released } => {
                let expected: Vec<ClaimId> = released.iter().map(|r| claims[r]).collect();
                assert_eq!(shared.expire(now), expected, "{}", at(i));
            }
            Step::Used(used) => {
                let snap = shared.snapshot();
                for (host, amount) in used {
                    let id = snap.host_id(&host).unwrap_or_else(|| panic!("{}: no host {host}", at(i)));
                    let got = snap.host(id).unwrap().resource(ResourceId::MEMORY_MB).used;
                    assert_eq!(got, amount, "{}: memory used on {host}", at(i));
                }
            }
            Step::Seq(seq) => assert_eq!(shared.seq(), seq, "{}", at(i)),
        }
    }
    // Whatever the scenario did, the log replays to the final state.
    assert_eq!(shared.log().replay().unwrap().to_spec(), shared.snapshot().to_spec(), "{}", path.display());
}

#[test]
fn shared_scenarios() {
    for f in data::files("shared", ".json", 5) {
        run(&f);
    }
}
