//! Scenario files: every `tests/data/scenarios/*.json` is a cluster, a scheduler made of built-in
//! filters and weighers (by name), a request, optional events, and the expected outcome. This
//! module loads and runs them all, and reports every failing file at once.
//!
//! A file looks like this (every key but `description`, `cluster`, `scheduler` and `expect` is
//! optional):
//!
//! ```json
//! {
//!   "description": "what it shows, and the hand computation",
//!   "cluster": { "hosts": [ { "name": "a", "resources": { "memory_mb": 8192 } } ] },
//!   "events": [ { "type": "host_removed", "host": "a" } ],
//!   "scheduler": {
//!     "filters": ["compute", "resources", "availability_zone", "labels"],
//!     "weighers": [ { "name": "ram", "multiplier": 1.0, "tier": 0 } ],
//!     "host_subset_size": 1,
//!     "seed": 0
//!   },
//!   "request": { "count": 2, "resources": { "memory_mb": 4096 } },
//!   "expect": {
//!     "hosts": ["a", "a"],
//!     "complete": true,
//!     "explanation": "1/1 hosts are available",
//!     "among": ["a"],
//!     "error": "substring of the expected error"
//!   }
//! }
//! ```
//!
//! `cluster` is a [`ClusterSpec`](placewise::snapshot::ClusterSpec) object, or a string holding raw JSON
//! text (to test malformed JSON). `among` is the hand-computed set of the best `k` hosts when
//! `host_subset_size` is `k > 1`: every pick must be in it. `error` replaces `hosts`: the scenario
//! must fail (building the cluster, applying an event, parsing the request, building the scheduler
//! or scheduling) with an error containing that text.
//!
//! An unknown filter or weigher name, or an unknown key, fails the test: it is a broken file, never
//! an expected error.

use placewise::filter::builtin::LabelSelectorFilter;
use placewise::{
    AvailabilityZoneFilter, Cluster, ClusterEvent, ComputeFilter, FreeResourceWeigher, Outcome, Request,
    ResourceFilter, Scheduler, SchedulerBuilder, Scratch,
};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The folder of scenario files.
const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/scenarios");

/// Fewer files than this means the folder was not found or lost files: fail rather than pass empty.
const MIN_SCENARIOS: usize = 14;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Scenario {
    description: String,
    cluster: serde_json::Value,
    #[serde(default)]
    events: Vec<serde_json::Value>,
    scheduler: SchedulerSpec,
    #[serde(default = "empty_object")]
    request: serde_json::Value,
    expect: Expect,
}

fn empty_object() -> serde_json::Value {
    serde_json::Value::Object(serde_json::Map::new())
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SchedulerSpec {
    #[serde(default)]
    filters: Vec<String>,
    #[serde(default)]
    weighers: Vec<WeigherSpec>,
    host_subset_size: Option<usize>,
    seed: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct WeigherSpec {
    name: String,
    multiplier: f64,
    #[serde(default)]
    tier: usize,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    hosts: Option<Vec<String>>,
    explanation: Option<String>,
    complete: Option<bool>,
    among: Option<Vec<String>>,
    error: Option<String>,
}

/// Maps scenario names to the built-ins.
mod loader {
    use super::*;

    pub(super) const FILTERS: [&str; 4] = ["compute", "resources", "availability_zone", "labels"];
    pub(super) const WEIGHERS: [&str; 3] = ["ram", "cpu", "disk"];

    /// A builder with the named filters and weighers. `Err` is a broken scenario file (an unknown
    /// name, a gap in the tier numbers), not a library error.
    pub(super) fn scheduler(spec: &SchedulerSpec) -> Result<SchedulerBuilder, String> {
        let mut b = Scheduler::builder();
        for name in &spec.filters {
            b = match name.as_str() {
                "compute" => b.filter(ComputeFilter),
                "resources" => b.filter(ResourceFilter::new()),
                "availability_zone" => b.filter(AvailabilityZoneFilter),
                "labels" => b.filter(LabelSelectorFilter),
                other => return Err(format!("unknown filter `{other}` (known: {})", FILTERS.join(", "))),
            };
        }
        let mut weighers = spec.weighers.clone();
        // Stable: weighers of one tier keep their file order.
        weighers.sort_by_key(|w| w.tier);
        let mut current: Option<usize> = None;
        for w in &weighers {
            let next = current.map_or(0, |t| t + 1);
            if w.tier > next {
                return Err(format!("weigher `{}` is in tier {} but tier {next} is empty", w.name, w.tier));
            }
            if current.is_some() && w.tier == next {
                b = b.tier();
            }
            current = Some(w.tier);
            let weigher = match w.name.as_str() {
                "ram" => FreeResourceWeigher::ram(),
                "cpu" => FreeResourceWeigher::cpu(),
                "disk" => FreeResourceWeigher::disk(),
                other => return Err(format!("unknown weigher `{other}` (known: {})", WEIGHERS.join(", "))),
            };
            b = b.weigher(weigher, w.multiplier);
        }
        if let Some(k) = spec.host_subset_size {
            b = b.host_subset_size(k);
        }
        if let Some(seed) = spec.seed {
            b = b.seed(seed);
        }
        Ok(b)
    }
}

/// Everything the library is asked to do for one scenario; `Err` is the library's error text.
fn execute(s: &Scenario, builder: SchedulerBuilder) -> Result<(Cluster, Request, Scheduler, Outcome), String> {
    let mut cluster = match &s.cluster {
        serde_json::Value::String(text) => Cluster::from_json(text).map_err(|e| e.to_string())?,
        value => serde_json::from_value::<Cluster>(value.clone()).map_err(|e| e.to_string())?,
    };
    for event in &s.events {
        let event: ClusterEvent = serde_json::from_value(event.clone()).map_err(|e| e.to_string())?;
        cluster = cluster.apply(&event).map_err(|e| e.to_string())?;
    }
    let request: Request = serde_json::from_value(s.request.clone()).map_err(|e| e.to_string())?;
    let scheduler = builder.build().map_err(|e| e.to_string())?;
    let placement = scheduler.schedule(&cluster, &request).map_err(|e| e.to_string())?;
    Ok((cluster, request, scheduler, placement))
}

fn names(p: &Outcome) -> Vec<&str> {
    p.selections.iter().map(|s| s.host_name.as_str()).collect()
}

/// Runs one file; `Err` says what went wrong.
fn run(path: &Path, scratch: &mut Scratch) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))?;
    let s: Scenario = serde_json::from_str(&text).map_err(|e| format!("broken scenario file: {e}"))?;
    if s.description.trim().is_empty() {
        return Err("broken scenario file: empty description".into());
    }
    let builder = loader::scheduler(&s.scheduler).map_err(|e| format!("broken scenario file: {e}"))?;
    let e = &s.expect;
    match (&e.error, &e.hosts) {
        (Some(_), Some(_)) => return Err("broken scenario file: `expect` has both `error` and `hosts`".into()),
        (None, None) => return Err("broken scenario file: `expect` needs `hosts` or `error`".into()),
        (Some(_), None) if e.explanation.is_some() || e.complete.is_some() || e.among.is_some() => {
            return Err("broken scenario file: an `error` scenario expects nothing else".into())
        }
        _ => {}
    }
    let k = s.scheduler.host_subset_size.unwrap_or(1);
    if e.error.is_none() && k > 1 && e.among.as_ref().map(Vec::len) != Some(k) {
        return Err(format!("broken scenario file: host_subset_size {k} needs `among` listing the {k} best hosts"));
    }

    let (cluster, request, scheduler, placement) = match (execute(&s, builder), &e.error) {
        (Err(got), Some(want)) if got.contains(want.as_str()) => return Ok(()),
        (Err(got), Some(want)) => return Err(format!("expected an error containing {want:?}, got {got:?}")),
        (Err(got), None) => return Err(format!("unexpected error: {got}")),
        (Ok((.., p)), Some(want)) => return Err(format!("expected an error containing {want:?}, got {p}")),
        (Ok(done), None) => done,
    };

    let mut problems = Vec::new();
    let got = names(&placement);
    if let Some(want) = &e.hosts {
        if got != *want {
            problems.push(format!("hosts: expected {want:?}, got {got:?}"));
        }
    }
    if let Some(want) = e.complete {
        if placement.is_complete() != want {
            problems.push(format!("complete: expected {want}, got {}", placement.is_complete()));
        }
    }
    if let Some(want) = &e.explanation {
        let got = placement.explanation.to_string();
        if got != *want {
            problems.push(format!("explanation:\n  expected {want:?}\n  got      {got:?}"));
        }
    }
    if let Some(among) = &e.among {
        for (i, host) in got.iter().enumerate() {
            if !among.iter().any(|a| a == host) {
                problems.push(format!("instance {i} went to {host}, not one of the {k} best {among:?}"));
            }
        }
    }
    // Invariants every scenario must keep, beyond its own expectation.
    if placement.selections.len() > request.count as usize {
        problems.push("more selections than instances requested".into());
    }
    for (i, sel) in placement.selections.iter().enumerate() {
        if sel.instance as usize != i || cluster.host_name(sel.host) != sel.host_name {
            problems.push(format!("selection {i} is inconsistent: {sel:?}"));
        }
    }
    let reused = scheduler.schedule_with(scratch, &cluster, &request).map_err(|e| e.to_string())?;
    if reused != placement {
        problems.push(format!("a reused Scratch changed the answer: {reused} vs {placement}"));
    }
    let rebuilt = Cluster::from_json(&cluster.to_json()).map_err(|e| format!("to_json does not parse back: {e}"))?;
    let again = scheduler.schedule(&rebuilt, &request).map_err(|e| e.to_string())?;
    if names(&again) != got || again.explanation.to_string() != placement.explanation.to_string() {
        problems.push(format!("the cluster rebuilt from its JSON answers differently: {again} vs {placement}"));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

fn scenario_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(DIR)
        .unwrap_or_else(|e| panic!("cannot read {DIR}: {e}"))
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn scenarios() {
    let files = scenario_files();
    assert!(
        files.len() >= MIN_SCENARIOS,
        "found {} scenario files in {DIR}, expected at least {MIN_SCENARIOS}",
        files.len()
    );
    // One Scratch for every file: leftovers from one scenario must not leak into the next.
    let mut scratch = Scratch::new();
    let mut failures = Vec::new();
    for path in &files {
        // A panic in the library fails this file only; the others still run and are reported.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(path, &mut scratch)));
        let why = match outcome {
            Ok(Ok(())) => continue,
            Ok(Err(why)) => why,
            Err(panic) => {
                scratch = Scratch::new();
                let message = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("(no message)");
                format!("panicked: {message}")
            }
        };
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        failures.push(format!("--- {name}\n{why}"));
    }
    assert!(failures.is_empty(), "{} of {} scenarios failed:\n{}", failures.len(), files.len(), failures.join("\n"));
}

#[test]
fn unknown_names_fail_with_the_known_ones() {
    let spec = SchedulerSpec { filters: vec!["compute".into(), "RamFilter".into()], ..SchedulerSpec::default() };
    let err = loader::scheduler(&spec).unwrap_err();
    assert_eq!(err, "unknown filter `RamFilter` (known: compute, resources, availability_zone, labels)");

    let spec = SchedulerSpec {
        weighers: vec![WeigherSpec { name: "memory".into(), multiplier: 1.0, tier: 0 }],
        ..SchedulerSpec::default()
    };
    let err = loader::scheduler(&spec).unwrap_err();
    assert_eq!(err, "unknown weigher `memory` (known: ram, cpu, disk)");

    let spec = SchedulerSpec {
        weighers: vec![WeigherSpec { name: "ram".into(), multiplier: 1.0, tier: 2 }],
        ..SchedulerSpec::default()
    };
    assert_eq!(loader::scheduler(&spec).unwrap_err(), "weigher `ram` is in tier 2 but tier 0 is empty");
}

#[test]
fn a_broken_file_is_a_failure_even_when_an_error_is_expected() {
    let dir = std::env::temp_dir().join(format!("placewise-scenarios-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("broken.json");
    let file = r#"{
        "description": "an unknown filter name must not count as the expected error",
        "cluster": {"hosts": []},
        "scheduler": {"filters": ["nope"]},
        "expect": {"error": "unknown"}
    }"#;
    std::fs::write(&path, file).unwrap();
    let err = run(&path, &mut Scratch::new()).unwrap_err();
    assert!(err.starts_with("broken scenario file: unknown filter `nope`"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
