//! Importing longhorn objects: the fixtures under `tests/data/import/longhorn/`.
//!
//! Each fixture's decisions are compared with the decisions on the same cluster built by hand
//! with the engine's API ([`LonghornNode`], [`DiskSpec`], [`Volume`], [`Replica`]); a cluster
//! from the seeded generator, written as Longhorn's objects and read back, gives the same
//! decisions and the same volume capacity.

use crate::support;

use placewise::capacity;
use placewise::import::{Document, ImportError};
use placewise::replica::import::{self, LonghornCluster, LonghornVolume};
use placewise::replica::{
    LonghornNode, Replica, ReplicaScheduler, ReplicaSettings, Robustness, SoftAntiAffinity, Volume,
};
use placewise::rng::SplitMix64;
use placewise::snapshot::{DiskSpec, HostState};
use placewise::Cluster;
use std::path::PathBuf;

const G: i64 = 1 << 30;
/// `2025-03-04T05:06:07Z`, the fixtures' `healthyAt`.
const T0: i64 = 1_741_064_767;
/// `2025-03-04T05:00:00Z`, when `pvc-logs` degraded and its replica failed.
const DEGRADED: i64 = 1_741_064_400;
/// When the questions are asked: a day later, past the replenishment wait.
const NOW: i64 = 1_741_132_800;

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/import/longhorn").join(name)
}

fn load(name: &str) -> Result<LonghornCluster, ImportError> {
    let p = path(name);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    import::read(&[Document::from_json(name, &text)?])
}

/// `cluster.json` built by hand.
fn by_hand() -> (Cluster, ReplicaSettings, Vec<(Volume, Vec<Replica>)>) {
    let disk =
        |name: &str, max: i64, avail: i64| DiskSpec::new(name, max * G, avail * G).fs_type("ext4").schedulable(true);
    let nodes = [
        LonghornNode::new("node-a")
            .zone("zone-1")
            .region("region-1")
            .tag("fast")
            .disk(
                disk("default-disk-a1", 200, 150)
                    .reserved(20 * G)
                    .scheduled(30 * G)
                    .tag("ssd")
                    .scheduled_replica("pvc-data-r-1a2b3c4d")
                    .scheduled_replica("pvc-logs-r-5e6f7a8b")
                    .scheduled_replica("pvc-fast-r-9c0d1e2f"),
            )
            .disk(disk("disk-2", 100, 95).fs_type("xfs").tag("nvme")),
        LonghornNode::new("node-b").zone("zone-1").region("region-1").disk(
            disk("default-disk-b1", 200, 120)
                .scheduled(15 * G)
                .scheduled_replica("pvc-data-r-2b3c4d5e")
                .scheduled_replica("pvc-logs-r-6f7a8b9c"),
        ),
        LonghornNode::new("node-c")
            .zone("zone-2")
            .region("region-1")
            .tag("fast")
            .disk(disk("default-disk-c1", 200, 180).scheduled(10 * G).scheduled_replica("pvc-data-r-3c4d5e6f"))
            .disk(disk("full-disk", 100, 10).schedulable(false)),
        LonghornNode::new("node-d").cordoned(true).disk(disk("default-disk-d1", 200, 190)),
        LonghornNode::new("node-e").zone("zone-2").region("region-1").engine_image_deployed(false).disk(disk(
            "default-disk-e1",
            200,
            170,
        )),
    ];
    let mut b = Cluster::builder();
    for n in nodes {
        b = b.host(n.build());
    }
    let cluster = b.build().unwrap();
    let mut settings = ReplicaSettings::default();
    settings.storage_over_provisioning_percentage = 200;
    let on = |name: &str, node: &str, disk: &str| {
        let mut r = Replica::on(name, node, disk);
        r.healthy_at = Some(T0);
        r.data_directory_name = name.replace("-r-", "-");
        r
    };
    let healthy = |mut v: Volume| {
        v.robustness = Robustness::Healthy;
        v
    };
    let data = healthy(Volume::new("pvc-data", 10 * G, 3));
    let data_replicas = vec![
        on("pvc-data-r-1a2b3c4d", "node-a", "default-disk-a1"),
        on("pvc-data-r-2b3c4d5e", "node-b", "default-disk-b1"),
        on("pvc-data-r-3c4d5e6f", "node-c", "default-disk-c1"),
    ];
    let mut logs = Volume::new("pvc-logs", 5 * G, 3);
    logs.robustness = Robustness::Degraded;
    logs.last_degraded_at = Some(DEGRADED);
    let mut failed = on("pvc-logs-r-6f7a8b9c", "node-b", "default-disk-b1");
    failed.failed_at = Some(DEGRADED);
    failed.rebuild_retry_count = 1;
    let logs_replicas = vec![on("pvc-logs-r-5e6f7a8b", "node-a", "default-disk-a1"), failed];
    let mut fast = healthy(Volume::new("pvc-fast", 15 * G, 2));
    fast.node_selector = vec!["fast".into()];
    fast.disk_selector = vec!["ssd".into()];
    fast.replica_zone_soft_anti_affinity = SoftAntiAffinity::Disabled;
    let mut pending = Replica::new("pvc-fast-r-0d1e2f3a");
    pending.counted = false;
    let fast_replicas = vec![pending, on("pvc-fast-r-9c0d1e2f", "node-a", "default-disk-a1")];
    let volumes = vec![
        (data, data_replicas),
        (logs, logs_replicas),
        (fast, fast_replicas),
        (healthy(Volume::new("pvc-new", 2 * G, 2)), Vec::new()),
    ];
    (cluster, settings, volumes)
}

/// Every volume of `imported` placed, explained and counted as the hand-built cluster's.
fn same_decisions(imported: &LonghornCluster) {
    let (cluster, settings, volumes) = by_hand();
    assert_eq!(imported.settings, settings);
    assert_eq!(imported.cluster.to_spec(), cluster.to_spec());
    let plain = ReplicaScheduler::new(settings.clone()).unwrap();
    let explaining = ReplicaScheduler::builder(settings).explain(true).build().unwrap();
    for (volume, replicas) in &volumes {
        let found = imported.volume(&volume.name).unwrap();
        assert_eq!((&found.volume, &found.replicas), (volume, replicas), "{}", volume.name);
        assert_eq!(imported.place(found, NOW).unwrap(), plain.schedule(&cluster, volume, replicas, NOW).unwrap());
        assert_eq!(
            imported.explain(found, NOW).unwrap(),
            explaining.schedule(&cluster, volume, replicas, NOW).unwrap()
        );
    }
    let new = imported.new_volume("new", 10 * G, Some(3));
    let ours = imported.capacity(&new, 1000).unwrap();
    let theirs = capacity::volumes(&plain, &cluster, &Volume::new("new", 10 * G, 3), 1000).unwrap();
    assert_eq!(
        (ours.total, &ours.stop, &ours.message, &ours.disks),
        (theirs.total, &theirs.stop, &theirs.message, &theirs.disks)
    );
    assert!(ours.total > 0 && ours.stop.is_some());
}

#[test]
fn the_v1beta2_list_decides_as_the_cluster_built_by_hand() {
    let imported = load("cluster.json").unwrap();
    same_decisions(&imported);
    assert_eq!(imported.format, "Longhorn longhorn.io/v1beta2");
    // What the answers say on this cluster, beside their equality with the engine's.
    let fast = imported.volume("pvc-fast").unwrap();
    assert_eq!(fast.reported.as_deref(), Some("tags not fulfilled"), "Longhorn's own condition");
    let out = imported.explain(fast, NOW).unwrap();
    assert_eq!(out.condition_message().as_deref(), Some("tags not fulfilled"));
    let (_, failed) = &out.selections[0];
    assert_eq!(failed.explanation.message.as_deref(), Some("tags not fulfilled"));
    assert!(failed.explanation.verdicts.iter().any(|v| v.host == "node-c" && v.disk.is_some()), "disk verdicts");
    let data = imported.volume("pvc-data").unwrap();
    assert!(imported.place(data, NOW).unwrap().selections.is_empty(), "a healthy volume lacks nothing");
    // The disk under pressure and the cordoned node do not count; node-e lacks the engine image.
    let new = imported.new_volume("pvc-wide", G, Some(5));
    let placed: Vec<String> = imported.place(&new, NOW).unwrap().placed().map(|(_, p)| p.node_id.clone()).collect();
    assert_eq!(placed.len(), 3, "{placed:?}");
    assert!(!placed.iter().any(|n| n == "node-d" || n == "node-e"), "{placed:?}");
    // Settings read: the placement ones only, the v1 value of a per-engine one.
    assert!(imported.settings_read.iter().any(|(n, v)| n == "default-replica-count" && v == "3"));
    assert!(!imported.settings_read.iter().any(|(n, _)| n == "disable-revision-counter" || n == "backup-target"));
}

#[test]
fn the_v1beta1_list_with_conditions_as_maps_decides_the_same() {
    let imported = load("cluster-v1beta1.json").unwrap();
    same_decisions(&imported);
    assert_eq!(imported.format, "Longhorn longhorn.io/v1beta1");
}

#[test]
fn single_objects_in_several_documents_read_as_the_list() {
    let text = std::fs::read_to_string(path("cluster.json")).unwrap();
    let list = Document::from_json("cluster.json", &text).unwrap();
    let docs: Vec<Document> = placewise::import::items(&list.value)
        .iter()
        .enumerate()
        .map(|(i, v)| Document::new(format!("object-{i}.json"), v.clone()))
        .collect();
    same_decisions(&import::read(&docs).unwrap());
}

#[test]
fn cloned_nodes_sharing_a_disk_uuid_keep_their_replicas_apart() {
    let imported = load("cloned-disk-uuid.json").unwrap();
    let data = imported.volume("pvc-data").unwrap();
    let on: Vec<(&str, &str)> = data.replicas.iter().map(|r| (r.node_id.as_str(), r.disk_id.as_str())).collect();
    assert_eq!(on, [("node-a", "default-disk-a1"), ("node-b", "default-disk-b1"), ("node-b2", "default-disk-b1")]);
    assert!(data.replicas.iter().all(|r| r.counted), "each listed by its own node's disk");
}

#[test]
fn a_node_without_status_is_read_as_not_ready() {
    let imported = load("node-without-status.json").unwrap();
    let id = imported.cluster.host_id("node-new").unwrap();
    assert!(!imported.cluster.host(id).unwrap().state.up);
    assert!(imported.warnings.iter().any(|w| w.object.as_ref().is_some_and(|o| o.name == "node-new")));
    let new = imported.new_volume("v", G, Some(3));
    let out = imported.place(&new, NOW).unwrap();
    assert!(out.placed().all(|(_, p)| p.node_id != "node-new"));
}

#[test]
fn bad_input_names_the_file_the_object_and_the_field() {
    let cases = [
        ("bad-missing-maximum.json", "bad-missing-maximum.json: Node node-b: missing field `status.diskStatus.default-disk-b1.storageMaximum`"),
        ("bad-dangling-disk.json", "bad-dangling-disk.json: Replica pvc-data-r-2b3c4d5e: field `spec.diskID` names disk ffffffff-0000-4000-8000-000000000000 on node node-b, which is not in the input"),
        ("bad-size.json", "bad-size.json: Volume pvc-new: field `spec.size`: expected bytes or a quantity such as \"10Gi\", found \"2 gigabytes\""),
        ("bad-legacy-api.json", "bad-legacy-api.json: Replica old-r-1: field `apiVersion`: unsupported apiVersion `longhorn.rancher.io/v1alpha1` (Longhorn before 1.0); read: longhorn.io/v1beta2, longhorn.io/v1beta1"),
    ];
    for (file, message) in cases {
        let err = load(file).unwrap_err();
        assert_eq!(err.to_string(), message);
    }
}

/// The generator's storage cluster made more varied: node states, tags, zones without a name,
/// disk tags, conditions and reservations, an engine image or instance manager missing.
fn varied(nodes: usize, seed: u64) -> Cluster {
    let mut spec = support::storage_cluster(nodes, seed).to_spec();
    let mut rng = SplitMix64::new(seed ^ 0x5eed);
    for h in &mut spec.hosts {
        match rng.below(12) {
            0 => h.state = HostState { up: false, ..HostState::default() },
            1 => h.state = HostState { cordoned: true, ..HostState::default() },
            2 => h.state = HostState { enabled: false, ..HostState::default() },
            3 => {
                h.attributes.insert("engine_image_ready".into(), false.into());
            }
            4 => {
                h.attributes.insert("im_running".into(), false.into());
            }
            5 => {
                h.topology.remove("zone");
            }
            _ => {}
        }
        if rng.below(3) == 0 {
            h.labels.insert("fast".into(), String::new());
        }
        for d in &mut h.disks {
            d.reserved = d.maximum / 100 * rng.below(20) as i64;
            match rng.below(10) {
                0 => d.tags.push("ssd".into()),
                1 => d.ready = false,
                2 => d.schedulable = Some(false),
                3 => d.allow_scheduling = false,
                _ => {}
            }
        }
    }
    Cluster::from_spec(&spec).unwrap()
}

#[test]
fn a_generated_cluster_written_and_read_back_decides_the_same() {
    for seed in [3, 11, 42] {
        let cluster = varied(90, seed);
        let mut settings = ReplicaSettings::default();
        settings.storage_over_provisioning_percentage = 150;
        settings.replica_soft_anti_affinity = seed == 11;
        let scheduler = ReplicaScheduler::new(settings.clone()).unwrap();
        // Volumes with replicas the engine placed, one failed and one pending among them.
        let mut volumes = Vec::new();
        for i in 0..6 {
            let mut v = Volume::new(format!("vol-{i}"), (i + 1) * 7 * G, 3);
            if i == 4 {
                v.node_selector = vec!["fast".into()];
                v.disk_selector = vec!["ssd".into()];
            }
            let out = scheduler.schedule(&cluster, &v, &[], 0).unwrap();
            let mut replicas = out.replicas;
            for r in &mut replicas {
                r.healthy_at = Some(T0);
            }
            if i == 1 {
                if let Some(r) = replicas.first_mut() {
                    r.failed_at = Some(DEGRADED);
                }
                v.robustness = Robustness::Degraded;
                v.last_degraded_at = Some(DEGRADED);
            }
            if i == 2 {
                replicas.pop();
            }
            volumes.push(LonghornVolume::new(v, replicas));
        }
        let written = import::write(&cluster, &settings, &volumes);
        let text = serde_json::to_string(&written).unwrap();
        let back = import::read(&[Document::from_json("written.json", &text).unwrap()]).unwrap();
        assert_eq!(back.settings, settings);
        assert_eq!(back.cluster.len(), cluster.len());
        for v in &volumes {
            let read = back.volume(&v.volume.name).unwrap();
            assert_eq!(read.replicas.len(), v.replicas.len());
            let expected = scheduler.schedule(&cluster, &v.volume, &v.replicas, NOW).unwrap();
            assert_eq!(back.place(read, NOW).unwrap(), expected, "seed {seed}, {}", v.volume.name);
        }
        for (size, count) in [(10 * G, 3), (300 * G, 2)] {
            let volume = Volume::new("more", size, count);
            let theirs = capacity::volumes(&scheduler, &cluster, &volume, 10_000).unwrap();
            let ours = back.capacity(&LonghornVolume::new(volume, Vec::new()), 10_000).unwrap();
            assert_eq!(
                (ours.total, &ours.stop, &ours.disks),
                (theirs.total, &theirs.stop, &theirs.disks),
                "seed {seed}"
            );
        }
    }
}

/// `read_json`, which parses without the members `read` never reads, gives what `read` gives
/// on the whole document: the same snapshot, settings, volumes and warnings, or the same error.
fn assert_same_read(origin: &str, text: &str) {
    let fast = import::read_json(origin, text);
    let whole = match Document::from_json(origin, text) {
        Ok(d) => import::read(&[d]),
        Err(e) => Err(e),
    };
    match (fast, whole) {
        (Ok(f), Ok(w)) => {
            assert_eq!(f.cluster.to_json(), w.cluster.to_json(), "{origin}");
            assert_eq!((&f.settings, &f.settings_read, &f.format), (&w.settings, &w.settings_read, &w.format));
            assert_eq!(f.volumes, w.volumes, "{origin}");
            assert_eq!(f.warnings, w.warnings, "{origin}");
        }
        (Err(f), Err(w)) => assert_eq!(f.to_string(), w.to_string(), "{origin}"),
        (f, w) => panic!("{origin}: read_json {:?}, read {:?}", f.err(), w.err()),
    }
}

#[test]
fn read_json_answers_as_read_of_the_whole_document() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(path(""))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "the JSON fixtures");
    for p in &files {
        assert_same_read(&p.display().to_string(), &std::fs::read_to_string(p).unwrap());
    }
    for seed in [5, 9] {
        let cluster = varied(60, seed);
        let text = serde_json::to_string(&import::write(&cluster, &ReplicaSettings::default(), &[])).unwrap();
        assert_same_read("written.json", &text);
    }
}
