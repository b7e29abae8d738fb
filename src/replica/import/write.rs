//! The way back: a snapshot, settings and volumes as Longhorn's own objects.

use super::units::format_time;
use super::LonghornVolume;
use crate::replica::{
    is_schedulable_to_disk, DataEngine, DiskSpace, ReplicaSettings, ATTR_ENGINE_IMAGE_DEPLOYED,
    ATTR_INSTANCE_MANAGER_RUNNING,
};
use crate::rng::SplitMix64;
use crate::snapshot::{Cluster, DiskSpec, DiskType, HostSpec};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// The engine image [`write()`] names.
const ENGINE_IMAGE: &str = "longhornio/longhorn-engine:v1.12.1";
/// The instance manager image [`write()`] names.
const MANAGER_IMAGE: &str = "longhornio/longhorn-instance-manager:v1.12.1";
const NAMESPACE: &str = "longhorn-system";
const API: &str = "longhorn.io/v1beta2";

/// A disk's `diskUUID` as [`write()`] makes it: a UUID-shaped string drawn from the node and disk
/// names, so that the same cluster always gets the same UUIDs.
pub(super) fn disk_uuid(node: &str, disk: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in node.bytes().chain([0]).chain(disk.bytes()) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    let mut rng = SplitMix64::new(h);
    let (a, b) = (rng.next_u64(), rng.next_u64());
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        0x8000 | (b >> 48) & 0x3fff,
        b & 0xffff_ffff_ffff
    )
}

fn condition(kind: &str, ok: bool, reason: &str, message: String) -> Value {
    json!({
        "type": kind,
        "status": if ok { "True" } else { "False" },
        "reason": if ok { "" } else { reason },
        "message": message,
        "lastProbeTime": "",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    })
}

fn metadata(name: &str) -> Value {
    json!({ "name": name, "namespace": NAMESPACE })
}

/// `cluster`, `settings` and `volumes` as Longhorn's objects, in one `List` as `kubectl get
/// … -o json` prints it: every setting [`ReplicaSettings`] has, one engine image (deployed where
/// the engine image attribute is not false), an instance manager per node (and per data engine
/// when a volume is v2; running where the instance manager attribute is not false), a node per
/// host, then the volumes and their replicas. [`read`](super::read) gives back the same
/// decisions.
///
/// Disk UUIDs are drawn from the node and disk names; a disk's `Schedulable` condition is the
/// one the snapshot holds, or, when it derives it, the derived value. What Longhorn's objects
/// cannot hold is not written: host labels other than tags (a label's value; node tags are label
/// keys), topology levels other than `zone` and `region`, the `v2_disabled` attribute (a
/// Kubernetes node label), a volume's backing image selectors, resources and instances.
///
/// Computes in O(hosts + disks + replicas).
pub fn write(cluster: &Cluster, settings: &ReplicaSettings, volumes: &[LonghornVolume]) -> Value {
    let spec = cluster.to_spec();
    let mut items = Vec::with_capacity(spec.hosts.len() * 2 + 32);
    if let Value::Object(all) = serde_json::to_value(settings).unwrap_or_default() {
        for (name, value) in all {
            let value = match value {
                Value::String(s) => s,
                other => other.to_string(),
            };
            items.push(json!({"apiVersion": API, "kind": "Setting", "metadata": metadata(&name), "value": value}));
        }
    }
    items.push(
        json!({"apiVersion": API, "kind": "Setting", "metadata": metadata("default-engine-image"), "value": ENGINE_IMAGE}),
    );
    let attr = |h: &HostSpec, name: &str| h.attributes.get(name).and_then(Value::as_bool).unwrap_or(true);
    let deployment: Map<String, Value> =
        spec.hosts.iter().map(|h| (h.name.clone(), Value::Bool(attr(h, ATTR_ENGINE_IMAGE_DEPLOYED)))).collect();
    items.push(json!({
        "apiVersion": API, "kind": "EngineImage", "metadata": metadata("ei-placewise"),
        "spec": {"image": ENGINE_IMAGE},
        "status": {"state": "deployed", "nodeDeploymentMap": deployment},
    }));
    let v2 = volumes.iter().any(|v| v.volume.data_engine == DataEngine::V2);
    for h in &spec.hosts {
        let running = attr(h, ATTR_INSTANCE_MANAGER_RUNNING);
        for engine in if v2 { &["v1", "v2"][..] } else { &["v1"][..] } {
            items.push(json!({
                "apiVersion": API, "kind": "InstanceManager",
                "metadata": metadata(&format!("instance-manager-{}-{engine}", h.name)),
                "spec": {"nodeID": h.name, "type": "aio", "dataEngine": engine, "image": MANAGER_IMAGE},
                "status": {"currentState": if running { "running" } else { "stopped" }},
            }));
        }
    }
    // Replicas a disk's `scheduled` already counts, by (node, disk).
    let mut counted: HashMap<(&str, &str), Vec<(&str, i64)>> = HashMap::new();
    for v in volumes {
        for r in v.replicas.iter().filter(|r| r.counted && !r.node_id.is_empty()) {
            counted.entry((&r.node_id, &r.disk_id)).or_default().push((&r.name, v.volume.size));
        }
    }
    for h in &spec.hosts {
        items.push(node(h, settings, &counted));
    }
    for v in volumes {
        items.push(volume(v));
        for r in &v.replicas {
            let disk_id = if r.node_id.is_empty() || r.disk_id.is_empty() {
                String::new()
            } else {
                disk_uuid(&r.node_id, &r.disk_id)
            };
            let mut meta = metadata(&r.name);
            if r.deleted {
                meta["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
            }
            meta["labels"] =
                json!({"longhornvolume": v.volume.name, "longhornnode": r.node_id, "longhorndiskuuid": disk_id});
            let time = |t: Option<i64>| t.map(format_time).unwrap_or_default();
            items.push(json!({
                "apiVersion": API, "kind": "Replica", "metadata": meta,
                "spec": {
                    "volumeName": v.volume.name,
                    "volumeSize": v.volume.size.to_string(),
                    "nodeID": r.node_id,
                    "diskID": disk_id,
                    "diskPath": if r.disk_id.is_empty() { String::new() } else { format!("/var/lib/longhorn/{}", r.disk_id) },
                    "dataDirectoryName": r.data_directory_name,
                    "failedAt": time(r.failed_at),
                    "healthyAt": time(r.healthy_at),
                    "evictionRequested": r.eviction_requested,
                    "rebuildRetryCount": r.rebuild_retry_count,
                    "active": r.active,
                    "hardNodeAffinity": r.hard_node_affinity,
                    "dataEngine": v.volume.data_engine.as_str(),
                    "image": v.image.as_deref().unwrap_or(ENGINE_IMAGE),
                },
            }));
        }
    }
    json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items})
}

fn node(h: &HostSpec, settings: &ReplicaSettings, counted: &HashMap<(&str, &str), Vec<(&str, i64)>>) -> Value {
    let name = h.name.as_str();
    let s = &h.state;
    let conditions = [
        condition("Ready", s.up, "KubernetesNodeNotReady", format!("Node {name} is ready")),
        condition("Schedulable", !s.cordoned, "KubernetesNodeCordoned", String::new()),
    ];
    let mut spec_disks = Map::new();
    let mut status_disks = Map::new();
    for d in &h.disks {
        let (spec, status) = disk(name, d, settings, counted.get(&(name, d.name.as_str())));
        spec_disks.insert(d.name.clone(), spec);
        status_disks.insert(d.name.clone(), status);
    }
    let tags: Vec<&str> = h.labels.keys().map(String::as_str).collect();
    let level = |l: &str| h.topology.get(l).map_or("", String::as_str);
    json!({
        "apiVersion": API, "kind": "Node", "metadata": metadata(name),
        "spec": {
            "name": name,
            "allowScheduling": s.enabled,
            "evictionRequested": s.evicting,
            "tags": tags,
            "disks": spec_disks,
            "instanceManagerCPURequest": 0,
        },
        "status": {
            "conditions": conditions,
            "diskStatus": status_disks,
            "zone": level("zone"),
            "region": level("region"),
            "autoEvicting": false,
        },
    })
}

fn disk(node: &str, d: &DiskSpec, settings: &ReplicaSettings, counted: Option<&Vec<(&str, i64)>>) -> (Value, Value) {
    let path = format!("/var/lib/longhorn/{}", d.name);
    let kind = match d.disk_type {
        DiskType::Filesystem => "filesystem",
        DiskType::Block => "block",
    };
    // What the node controller writes when the snapshot derives the condition: ready and the
    // space check with size 0.
    let space = DiskSpace::new(d.maximum, d.available, d.reserved, d.scheduled);
    let fits = || {
        is_schedulable_to_disk(
            0,
            0,
            space,
            settings.storage_minimal_available_percentage,
            settings.storage_over_provisioning_percentage,
        )
        .is_ok()
    };
    let schedulable = d.schedulable.unwrap_or_else(|| d.ready && fits());
    let mut listed: Map<String, Value> = d.scheduled_replicas.iter().map(|r| (r.clone(), Value::from(0))).collect();
    for (r, size) in counted.into_iter().flatten() {
        listed.insert((*r).to_owned(), Value::from(*size));
    }
    let spec = json!({
        "path": path,
        "allowScheduling": d.allow_scheduling,
        "evictionRequested": d.eviction_requested,
        "storageReserved": d.reserved,
        "tags": d.tags,
        "diskType": kind,
        "diskDriver": "",
    });
    let status = json!({
        "conditions": [
            condition("Ready", d.ready, "DiskNotReady", format!("Disk {}({path}) on node {node} is ready", d.name)),
            condition("Schedulable", schedulable, "DiskPressure", format!("Disk {}({path}) on node {node} is schedulable", d.name)),
        ],
        "diskName": d.name,
        "diskPath": path,
        "diskType": kind,
        "diskDriver": "",
        "diskUUID": disk_uuid(node, &d.name),
        "filesystemType": d.fs_type,
        "storageMaximum": d.maximum,
        "storageAvailable": d.available,
        "storageScheduled": d.scheduled,
        "scheduledReplica": listed,
    });
    (spec, status)
}

fn volume(v: &LonghornVolume) -> Value {
    let vol = &v.volume;
    let mut spec = json!({
        "size": vol.size.to_string(),
        "numberOfReplicas": vol.number_of_replicas,
        "nodeSelector": vol.node_selector,
        "diskSelector": vol.disk_selector,
        "nodeID": vol.node_id,
        "dataLocality": vol.data_locality.as_str(),
        "replicaAutoBalance": vol.replica_auto_balance.as_str(),
        "replicaSoftAntiAffinity": vol.replica_soft_anti_affinity.as_str(),
        "replicaZoneSoftAntiAffinity": vol.replica_zone_soft_anti_affinity.as_str(),
        "replicaDiskSoftAntiAffinity": vol.replica_disk_soft_anti_affinity.as_str(),
        "dataEngine": vol.data_engine.as_str(),
        "image": v.image.as_deref().unwrap_or(ENGINE_IMAGE),
        "frontend": "blockdev",
        "accessMode": "rwo",
    });
    if !vol.topology_requirement.is_empty() {
        let terms: Vec<Value> =
            vol.topology_requirement.iter().map(|t| json!({"zone": t.zone, "region": t.region})).collect();
        spec["topologyRequirement"] = Value::Array(terms);
    }
    json!({
        "apiVersion": API, "kind": "Volume", "metadata": metadata(&vol.name),
        "spec": spec,
        "status": {
            "actualSize": vol.actual_size,
            "robustness": vol.robustness.as_str(),
            "lastDegradedAt": vol.last_degraded_at.map(format_time).unwrap_or_default(),
        },
    })
}
