//! The command line on longhorn objects: our fixtures (a multi-document YAML stream, a
//! directory shaped like a support bundle's, JSON lists, bad input) and the real objects in
//! `peer_objects/longhorn/` and the Longhorn CRDs in `peer_objects/schemas/`.

use crate::common::{fixture, peer_objects, run};
use std::path::{Path, PathBuf};

const BUNDLE: &str = "bundle/yamls/namespaced/longhorn-system/longhorn.io/v1beta2";

fn nodes_yaml() -> String {
    fixture("longhorn", &format!("{BUNDLE}/nodes.yaml"))
}

#[test]
fn inspect_reads_a_yaml_stream_and_writes_the_snapshot() {
    let out = std::env::temp_dir().join(format!("placewise-longhorn-{}.json", std::process::id()));
    let out_arg = out.display().to_string();
    let run = run(&["inspect", &fixture("longhorn", "cluster.yaml"), "--write-snapshot", &out_arg]);
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    for line in
        ["format: Longhorn longhorn.io/v1beta2", "hosts: 5", "disks: 7", "volumes: 4", "node-d (zone \"\"): cordoned"]
    {
        assert!(run.stdout.contains(line), "{line}: {}", run.stdout);
    }
    assert!(run.stdout.contains("default-replica-count = 3"), "{}", run.stdout);
    let snapshot = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    let cluster = placewise::Cluster::from_json(&snapshot).unwrap();
    assert_eq!(cluster.len(), 5);
}

#[test]
fn a_support_bundle_directory_answers_as_the_stream() {
    let dir = fixture("longhorn", "bundle");
    let stream = fixture("longhorn", "cluster.yaml");
    for args in [["place", "--volume", "pvc-logs"], ["explain", "--volume", "pvc-fast"]] {
        let a = run(&[args[0], args[1], args[2], &dir, "--json"]);
        let b = run(&[args[0], args[1], args[2], &stream, "--json"]);
        assert_eq!((a.status, b.status), (Some(0), Some(0)), "{} {}", a.stderr, b.stderr);
        // Created replicas draw their names from the same seed: the answers are equal.
        assert_eq!(a.json(), b.json());
    }
}

#[test]
fn place_reuses_a_failed_replica_and_places_the_rest() {
    let run = run(&["place", "--volume", "pvc-logs", &fixture("longhorn", "cluster.json"), "--json"]);
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    let json = run.json();
    assert_eq!(json["reused"][0], "pvc-logs-r-6f7a8b9c");
    let placed = json["selections"].as_array().unwrap();
    assert!(placed.iter().any(|s| s["node"] == "node-c"), "{json}");
}

#[test]
fn explain_gives_longhorns_text_and_every_verdict() {
    let run = run(&["explain", "--volume", "pvc-fast", &fixture("longhorn", "cluster.yaml")]);
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("Longhorn reports: tags not fulfilled"), "{}", run.stdout);
    assert!(run.stdout.contains("pvc-fast-r-0d1e2f3a: unschedulable: tags not fulfilled"), "{}", run.stdout);
    assert!(
        run.stdout.contains("node-c disk default-disk-c1: rejected by disk selector: tags not fulfilled"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("node-d: rejected by node condition: node is cordoned"), "{}", run.stdout);
    let json =
        crate::common::run(&["explain", "--volume", "pvc-fast", &fixture("longhorn", "cluster.yaml"), "--json"]).json();
    let failed = &json["selections"][0];
    assert_eq!(failed["message"], "tags not fulfilled");
    assert_eq!(failed["explanation"]["message"], "tags not fulfilled");
    assert!(failed["explanation"]["verdicts"].as_array().unwrap().len() >= 5);
}

#[test]
fn a_new_volume_is_placed_from_a_kubernetes_quantity() {
    let run = run(&["place", "--size", "2Gi", "--replicas", "3", &fixture("longhorn", "cluster.json"), "--json"]);
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    let json = run.json();
    assert_eq!(json["size"], 2i64 << 30);
    assert_eq!(json["selections"].as_array().unwrap().iter().filter(|s| s["node"].is_string()).count(), 3);
    let m = crate::common::run(&["place", "--size", "500M", &fixture("longhorn", "cluster.json"), "--json"]).json();
    assert_eq!(m["size"], 500_000_000, "Kubernetes M is 10^6");
    assert_eq!(m["number_of_replicas"], 3, "default-replica-count");
}

#[test]
fn capacity_counts_volumes_and_draws_them() {
    let svg = std::env::temp_dir().join(format!("placewise-longhorn-{}.svg", std::process::id()));
    let svg_arg = svg.display().to_string();
    let path = fixture("longhorn", "cluster.json");
    let run = run(&["capacity", "--size", "50Gi", "--replicas", "2", &path, "--svg", &svg_arg]);
    assert_eq!(run.status, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("more volumes of 50.0 GiB × 2 replicas fit"), "{}", run.stdout);
    assert!(run.stdout.contains("the next one stops at: "), "{}", run.stdout);
    let chart = std::fs::read_to_string(&svg).unwrap();
    let _ = std::fs::remove_file(&svg);
    assert!(chart.starts_with("<svg") && chart.contains("node-a"));
    let json = crate::common::run(&["capacity", "--size", "50Gi", "--replicas", "2", &path, "--json"]).json();
    let per_node: u64 = json["per_node"].as_array().unwrap().iter().map(|n| n["replicas"].as_u64().unwrap()).sum();
    assert_eq!(per_node, json["total"].as_u64().unwrap() * 2);
}

#[test]
fn bad_input_exits_2_naming_file_object_and_field() {
    let cases = [
        ("bad-missing-maximum.yaml", "Node node-b: missing field `status.diskStatus.default-disk-b1.storageMaximum`"),
        ("bad-dangling-disk.yaml", "Replica pvc-data-r-2b3c4d5e: field `spec.diskID` names disk"),
        ("bad-size.json", "Volume pvc-new: field `spec.size`"),
        ("bad-legacy-api.json", "Replica old-r-1: field `apiVersion`: unsupported apiVersion"),
    ];
    for (file, message) in cases {
        let path = fixture("longhorn", file);
        let run = run(&["inspect", &path]);
        assert_eq!(run.status, Some(2), "{file}: {}", run.stdout);
        assert!(run.stderr.contains(&path) && run.stderr.contains(message), "{file}: {}", run.stderr);
    }
    let cluster = fixture("longhorn", "cluster.json");
    for args in [
        vec!["place", "--volume", "nope", &cluster],
        vec!["place", "--size", "10GB", &cluster],
        vec!["place", "--size", "1Gi", "--volume", "pvc-data", &cluster],
        vec!["capacity", "--service", "web", &cluster],
    ] {
        let run = run(&args);
        assert_eq!(run.status, Some(2), "{args:?}: {}", run.stdout);
        assert!(run.stderr.starts_with("placewise: "), "{}", run.stderr);
    }
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
    out.sort();
    out
}

/// Every file of `peer_objects/longhorn/` and every Longhorn CRD of `peer_objects/schemas/`.
///
/// - Nodes import on their own. Volumes import beside our nodes (a volume alone has nothing to
///   be placed on, which is a clear `no nodes.longhorn.io` error).
/// - CRDs are definitions of kinds, not objects: beside our nodes they are skipped with a
///   warning naming them; alone they leave no node (the same clear error).
/// - Negative, with the error naming the file: the simplified node (no `storageMaximum`, a
///   `Missing` error), the legacy `longhorn.rancher.io/v1alpha1` replica (unsupported
///   apiVersion), and what is not a Longhorn object: the ConfigMaps and the StorageClass
///   (Kubernetes kinds whose settings are YAML inside strings), the `diskStatus` fragments and
///   the node annotations (parts of objects).
#[test]
fn every_longhorn_peer_object_imports_or_fails_clearly() {
    let Some(dir) = peer_objects("longhorn") else { return };
    let mut crds: Vec<PathBuf> = files(&dir);
    let schemas = dir.join("../schemas");
    for d in [schemas.clone(), schemas.join("v1.10.2")] {
        if d.is_dir() {
            crds.extend(files(&d).into_iter().filter(|p| p.to_string_lossy().contains("longhorn.io")));
        }
    }
    let mut seen = 0;
    for path in crds {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let arg = path.display().to_string();
        seen += 1;
        if name.starts_with("node_kubernetes") {
            let run = run(&["inspect", &arg, "--json"]);
            assert_eq!(run.status, Some(0), "{name}: {}", run.stderr);
            assert_eq!(run.json()["cluster"]["hosts"], 1);
        } else if name.starts_with("volume_") {
            let run = run(&["inspect", &nodes_yaml(), &arg, "--json"]);
            assert_eq!(run.status, Some(0), "{name}: {}", run.stderr);
            let json = run.json();
            let volume = json["volumes"][0]["name"].as_str().unwrap().to_owned();
            let place = crate::common::run(&["place", "--volume", &volume, &nodes_yaml(), &arg]);
            assert_eq!(place.status, Some(0), "{name}: {}", place.stderr);
        } else if name.starts_with("crd_") {
            let run = run(&["inspect", &nodes_yaml(), &arg]);
            assert_eq!(run.status, Some(0), "{name}: {}", run.stderr);
            assert!(run.stdout.contains(&format!("{arg}: CustomResourceDefinition")), "{name}: {}", run.stdout);
            let alone = crate::common::run(&["inspect", &arg]);
            assert_eq!(alone.status, Some(2), "{name}");
            assert!(alone.stderr.contains("no nodes.longhorn.io") && alone.stderr.contains(&arg), "{}", alone.stderr);
        } else {
            let expected = if name.starts_with("node_worker") {
                "missing field `status.diskStatus.my-disk-name.storageMaximum`"
            } else if name.starts_with("replica_") {
                "unsupported apiVersion `longhorn.rancher.io/v1alpha1`"
            } else {
                "unknown kind"
            };
            let run = run(&["inspect", &arg]);
            assert_eq!(run.status, Some(2), "{name}: {}", run.stdout);
            assert!(run.stderr.contains(&arg) && run.stderr.contains(expected), "{name}: {}", run.stderr);
        }
    }
    assert!(seen >= 17 + 8, "{seen} files read");
}
