//! What every subcommand shares: reading files and directories, detecting the system, refusing
//! what no system wrote, and placewise's own snapshots.

use crate::common::{fixture, run};
use std::path::PathBuf;

fn temp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("placewise-cli-detect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn two_systems_in_one_input_are_refused_naming_both_files() {
    let longhorn = fixture("longhorn", "cluster.json");
    let swarm = fixture("swarm", "cluster/nodes.json");
    let r = run(&["inspect", &longhorn, &swarm]);
    assert_eq!(r.status, Some(2));
    assert!(r.stderr.contains("the input mixes Longhorn"), "{}", r.stderr);
    assert!(r.stderr.contains(&swarm), "{}", r.stderr);
}

#[test]
fn a_document_no_system_wrote_is_an_unknown_kind_naming_the_file() {
    let path = temp("pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n");
    let r = run(&["inspect", &path.display().to_string()]);
    assert_eq!(r.status, Some(2));
    assert!(r.stderr.contains("pod.yaml: unknown kind `v1/Pod`"), "{}", r.stderr);
    let bad = temp("bad.yaml", "a: [1, 2\n");
    let r = run(&["inspect", "--json", &bad.display().to_string()]);
    assert_eq!(r.status, Some(2));
    assert!(r.json()["error"].as_str().is_some_and(|e| e.contains("bad.yaml: not valid YAML")), "{}", r.stdout);
    let missing = run(&["inspect", "/no/such/file.json"]);
    assert_eq!(missing.status, Some(2));
    assert!(missing.stderr.contains("/no/such/file.json"), "{}", missing.stderr);
}

#[test]
fn a_placewise_snapshot_is_inspected_and_has_no_workload_to_place() {
    let path = temp(
        "snapshot.json",
        r#"{"hosts": [{"name": "a", "resources": {"vcpus": 8, "memory_mb": 4096}},
                      {"name": "b", "resources": {"vcpus": {"capacity": 4, "used": 1}}}]}"#,
    );
    let r = run(&["inspect", "--json", &path.display().to_string()]);
    assert_eq!(r.status, Some(0), "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["format"], "placewise");
    assert_eq!(j["cluster"]["hosts"], 2);
    assert_eq!(j["cluster"]["resources"]["vcpus"]["usable"], 12.0);
    assert_eq!(j["cluster"]["resources"]["vcpus"]["free"], 11.0);
    let r = run(&["place", "--flavor", "x", &path.display().to_string()]);
    assert_eq!(r.status, Some(2));
    assert!(r.stderr.contains("carries no workload to place"), "{}", r.stderr);
}
