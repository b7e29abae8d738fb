//! Service scheduler scenarios as data files under `tests/data/service/`, run by this
//! module of the scenario runner.
//!
//! A file holds a `description`, defaults for its cases (`cluster` as a `ClusterSpec`,
//! `ingress` as an `IngressAllocation`, `services`) and `cases`. A case may override any
//! default, names the `call` (`"schedule"`, `{"reschedule": {"host": h, "scope": "all" |
//! "single_replica"}}` or `"rebalance"`) and what to `expect`; every listed field must match
//! exactly, unlisted ones are not checked:
//!
//! - `placed`: `[instance, host]` for `Placed` and `Moved` decisions, in order;
//! - `moved`: `[instance, from, to]` for `Moved` decisions;
//! - `kept` / `removed`: `[instance, host]`;
//! - `keys`: the four ranking counts of each placed instance's host when chosen;
//! - `unschedulable`: the rendered messages;
//! - `moves`: a rebalance plan's `[instance, from, to]`.
//!
//! Expectations are worked out by hand from the rules in the module docs.

use crate::data;

use placewise::service::{Decision, IngressAllocation, Scope, ServiceRequest, ServiceScheduler, ServiceSpec, Site};
use placewise::snapshot::ClusterSpec;
use placewise::Cluster;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenarioFile {
    description: String,
    cluster: Option<ClusterSpec>,
    #[serde(default)]
    ingress: Option<IngressAllocation>,
    #[serde(default)]
    services: Option<Vec<ServiceSpec>>,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    cluster: Option<ClusterSpec>,
    ingress: Option<IngressAllocation>,
    services: Option<Vec<ServiceSpec>>,
    #[serde(default = "schedule")]
    call: Call,
    expect: Expect,
}

fn schedule() -> Call {
    Call::Schedule
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Call {
    Schedule,
    Reschedule { host: String, scope: Scope },
    Rebalance,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Expect {
    placed: Option<Vec<[String; 2]>>,
    moved: Option<Vec<[String; 3]>>,
    kept: Option<Vec<[String; 2]>>,
    removed: Option<Vec<[String; 2]>>,
    keys: Option<Vec<[u32; 4]>>,
    unschedulable: Option<Vec<String>>,
    moves: Option<Vec<[String; 3]>>,
}

fn run_case(file: &ScenarioFile, case: &Case) -> Result<(), String> {
    let spec = case.cluster.as_ref().or(file.cluster.as_ref()).ok_or("no cluster")?;
    let cluster = Cluster::from_spec(spec).map_err(|e| e.to_string())?;
    let ingress = case.ingress.or(file.ingress).unwrap_or_default();
    let site = Site::new(&cluster, ingress).map_err(|e| e.to_string())?;
    let services = case.services.as_ref().or(file.services.as_ref()).ok_or("no services")?;
    let request = ServiceRequest::new(site, services.iter().cloned());
    let scheduler = ServiceScheduler::new();
    let outcome = match &case.call {
        Call::Rebalance => {
            let plan = scheduler.rebalance_plan(&cluster, &request).map_err(|e| e.to_string())?;
            let got: Vec<[String; 3]> = plan.into_iter().map(|m| [m.instance, m.from, m.to]).collect();
            let want = case.expect.moves.as_ref().ok_or("a rebalance case expects `moves`")?;
            return if &got == want { Ok(()) } else { Err(format!("moves: got {got:?}, want {want:?}")) };
        }
        Call::Schedule => scheduler.schedule(&cluster, &request),
        Call::Reschedule { host, scope } => scheduler.reschedule(&cluster, &request, host, *scope),
    }
    .map_err(|e| e.to_string())?;
    let mut placed = Vec::new();
    let mut moved = Vec::new();
    let mut kept = Vec::new();
    let mut removed = Vec::new();
    let mut keys = Vec::new();
    for d in &outcome.decisions {
        match d {
            Decision::Placed { instance, host, key } => {
                placed.push([instance.clone(), host.clone()]);
                keys.push([key.same_live, key.same_delayed, key.other_live, key.other_delayed]);
            }
            Decision::Moved { instance, from, to, key } => {
                placed.push([instance.clone(), to.clone()]);
                moved.push([instance.clone(), from.clone(), to.clone()]);
                keys.push([key.same_live, key.same_delayed, key.other_live, key.other_delayed]);
            }
            Decision::Kept { instance, host } => kept.push([instance.clone(), host.clone()]),
            Decision::Removed { instance, host } => removed.push([instance.clone(), host.clone()]),
            _ => return Err(format!("unexpected decision {d:?}")),
        }
    }
    let unschedulable: Vec<String> = outcome.unschedulable.iter().map(|u| u.to_string()).collect();
    let e = &case.expect;
    let mut errors = Vec::new();
    macro_rules! check {
        ($field:ident) => {
            if let Some(want) = &e.$field {
                if &$field != want {
                    errors.push(format!("{}: got {:?}, want {:?}", stringify!($field), $field, want));
                }
            }
        };
    }
    check!(placed);
    check!(moved);
    check!(kept);
    check!(removed);
    check!(keys);
    check!(unschedulable);
    if e.moves.is_some() {
        errors.push("`moves` is for rebalance cases".into());
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

#[test]
fn service_scenarios() {
    let mut failures = Vec::new();
    let mut count = 0;
    for path in &data::files("service", ".json", 1) {
        let text = std::fs::read_to_string(path).unwrap();
        let file: ScenarioFile = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(!file.description.is_empty());
        for case in &file.cases {
            count += 1;
            if let Err(why) = run_case(&file, case) {
                failures.push(format!("{} / {}: {why}", path.file_name().unwrap().to_string_lossy(), case.name));
            }
        }
    }
    assert!(count >= 20, "only {count} cases found");
    assert!(failures.is_empty(), "{} failing:\n{}", failures.len(), failures.join("\n"));
}
