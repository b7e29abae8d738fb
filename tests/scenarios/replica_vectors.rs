//! The reference's replica scheduling test vectors (§9) and the seed's Disk X / Disk Y example,
//! as data files under `tests/data/replica/`, run by this module of the scenario runner.
//!
//! A file holds a `description`, defaults for its cases (`cluster` as a `ClusterSpec`,
//! `settings` under Longhorn's kebab-case names, `version` `head` or `v1-10`, `disk_choice`,
//! `now` in seconds) and `cases`. A case may override any default and gives the `volume`, its
//! `replicas`, what to `schedule` (`"volume"` for `schedule`, or `{"replica": name}` for
//! `schedule_replica`) and what to `expect`:
//!
//! - `{"placement": "node/disk", "tied": [...]}`: the replica lands there; `tied` lists every
//!   disk the real implementation may pick (Go map order), the placement being the deterministic
//!   rule's pick;
//! - `{"reasons": "a; b"}`: the replica fails with exactly these joined reason keys (`""` = no
//!   reason, shown as `replica scheduling failed`);
//! - `{"placements": ["node/disk", ...], "message": null | "..."}`: the volume's placements in
//!   the order made and its `Scheduled=False` message.
//!
//! Expectations come from the reference's tables, not from the library's output.

use crate::data;

use placewise::replica::{DiskChoice, LonghornVersion, Replica, ReplicaScheduler, ReplicaSettings, Volume};
use placewise::snapshot::ClusterSpec;
use placewise::Cluster;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VectorFile {
    description: String,
    cluster: Option<ClusterSpec>,
    settings: Option<ReplicaSettings>,
    version: Option<LonghornVersion>,
    disk_choice: Option<DiskChoice>,
    now: Option<i64>,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    cluster: Option<ClusterSpec>,
    settings: Option<ReplicaSettings>,
    version: Option<LonghornVersion>,
    disk_choice: Option<DiskChoice>,
    now: Option<i64>,
    volume: Volume,
    #[serde(default)]
    replicas: Vec<Replica>,
    schedule: Schedule,
    expect: Expect,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Schedule {
    Volume,
    Replica(String),
}

#[derive(Deserialize)]
#[serde(untagged, deny_unknown_fields)]
enum Expect {
    Outcome {
        placement: String,
        #[serde(default)]
        tied: Vec<String>,
    },
    Reasons {
        reasons: String,
    },
    Volume {
        placements: Vec<String>,
        message: Option<String>,
    },
}

/// Runs one case; `Err` carries what differed.
fn run(file: &VectorFile, case: &Case) -> Result<(), String> {
    let spec = case.cluster.as_ref().or(file.cluster.as_ref()).ok_or("no cluster")?;
    let cluster = Cluster::from_spec(spec).map_err(|e| format!("cluster: {e}"))?;
    let settings = case.settings.clone().or_else(|| file.settings.clone()).unwrap_or_default();
    let mut builder = ReplicaScheduler::builder(settings);
    if let Some(v) = case.version.or(file.version) {
        builder = builder.version(v);
    }
    if let Some(c) = case.disk_choice.or(file.disk_choice) {
        builder = builder.disk_choice(c);
    }
    let scheduler = builder.build().map_err(|e| format!("settings: {e}"))?;
    let now = case.now.or(file.now).unwrap_or(0);
    match (&case.schedule, &case.expect) {
        (Schedule::Replica(name), Expect::Outcome { .. } | Expect::Reasons { .. }) => {
            let index = case.replicas.iter().position(|r| &r.name == name).ok_or("no such replica")?;
            let o = scheduler
                .schedule_replica(&cluster, &case.volume, &case.replicas, index, now)
                .map_err(|e| e.to_string())?;
            let got = match &o.placement {
                Some(p) => format!("{}/{}", p.node_id, p.disk_id),
                None => format!("FAIL[{}]", o.reasons.joined()),
            };
            match &case.expect {
                Expect::Outcome { placement, tied } => {
                    if &got != placement {
                        return Err(format!("expected {placement}, got {got}"));
                    }
                    if !tied.is_empty() && !tied.contains(placement) {
                        return Err(format!("the pick {placement} is not in the tied set {tied:?}"));
                    }
                }
                Expect::Reasons { reasons } => {
                    if got != format!("FAIL[{reasons}]") {
                        return Err(format!("expected FAIL[{reasons}], got {got}"));
                    }
                    let message = if reasons.is_empty() { "replica scheduling failed" } else { reasons };
                    if o.message().as_deref() != Some(message) {
                        return Err(format!("message {:?}, expected {message:?}", o.message()));
                    }
                }
                Expect::Volume { .. } => unreachable!(),
            }
        }
        (Schedule::Volume, Expect::Volume { placements, message }) => {
            let r = scheduler
                .schedule(&cluster, &case.volume, &case.replicas, now)
                .map_err(|e| format!("schedule: {e}"))?;
            let got: Vec<String> = r.placed().map(|(_, p)| format!("{}/{}", p.node_id, p.disk_id)).collect();
            if &got != placements || &r.condition_message() != message {
                return Err(format!(
                    "expected {placements:?} / {message:?}, got {got:?} / {:?}",
                    r.condition_message()
                ));
            }
        }
        _ => return Err("`schedule` and `expect` do not match".into()),
    }
    Ok(())
}

#[test]
fn reference_vectors() {
    let paths = data::files("replica", ".json", 10);
    let (mut cases, mut failures) = (0, Vec::new());
    for path in &paths {
        let text = std::fs::read_to_string(path).unwrap();
        let file: VectorFile = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(!file.description.is_empty(), "{}: no description", path.display());
        for case in &file.cases {
            cases += 1;
            if let Err(e) = run(&file, case) {
                failures.push(format!("{} / {}: {e}", path.file_name().unwrap().to_string_lossy(), case.name));
            }
        }
    }
    assert!(failures.is_empty(), "{} of {cases} cases failed:\n{}", failures.len(), failures.join("\n"));
}
