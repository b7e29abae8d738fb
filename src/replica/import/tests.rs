//! Unit tests of the Longhorn importer: each rule of the module docs' table on a small object.

use super::*;
use serde_json::{json, Value};

const G: i64 = 1 << 30;

fn node(name: &str) -> Value {
    json!({
        "apiVersion": "longhorn.io/v1beta2", "kind": "Node", "metadata": {"name": name},
        "spec": {"allowScheduling": true, "tags": [], "disks": {"d1": {"allowScheduling": true, "storageReserved": 0, "tags": []}}},
        "status": {
            "zone": "", "region": "",
            "conditions": [{"type": "Ready", "status": "True"}, {"type": "Schedulable", "status": "True"}],
            "diskStatus": {"d1": {"diskUUID": format!("uuid-{name}"), "storageMaximum": 100 * G,
                "storageAvailable": 90 * G, "storageScheduled": 0, "scheduledReplica": {},
                "conditions": [{"type": "Ready", "status": "True"}, {"type": "Schedulable", "status": "True"}]}}
        }
    })
}

fn doc(value: Value) -> Document {
    Document::new("t.json", value)
}

fn read_one(items: Vec<Value>) -> Result<LonghornCluster, ImportError> {
    read(&[doc(json!({"apiVersion": "v1", "kind": "List", "items": items}))])
}

#[test]
fn recognises_longhorn_objects_lists_and_definitions_only() {
    assert!(recognises(&node("n1")));
    assert!(recognises(&json!({"apiVersion": "v1", "kind": "List", "items": [node("n1")]})));
    assert!(recognises(&json!({"apiVersion": "longhorn.rancher.io/v1alpha1", "kind": "Replica"})));
    assert!(recognises(&json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "spec": {"group": "longhorn.io"}})));
    assert!(!recognises(&json!({"apiVersion": "v1", "kind": "Node"})));
    assert!(!recognises(&json!([{"ID": "x"}])));
}

#[test]
fn a_disk_without_storage_maximum_is_missing_naming_file_node_and_field() {
    let mut n = node("n1");
    n["status"]["diskStatus"]["d1"].as_object_mut().unwrap().remove("storageMaximum");
    let err = read_one(vec![n]).unwrap_err();
    assert_eq!(err.to_string(), "t.json: Node n1: missing field `status.diskStatus.d1.storageMaximum`");
}

#[test]
fn legacy_api_versions_and_unknown_kinds_are_clear_errors() {
    let legacy = json!({"apiVersion": "longhorn.rancher.io/v1alpha1", "kind": "Replica", "metadata": {"name": "r"}});
    let err = read_one(vec![node("n1"), legacy]).unwrap_err().to_string();
    assert!(err.starts_with("t.json: Replica r: field `apiVersion`: unsupported apiVersion"), "{err}");
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}});
    let err = read_one(vec![node("n1"), pod]).unwrap_err();
    assert!(matches!(&err, ImportError::UnknownKind { kind, .. } if kind == "v1/Pod"), "{err}");
    let odd = json!({"apiVersion": "longhorn.io/v1beta2", "kind": "Gadget", "metadata": {"name": "g"}});
    assert!(matches!(read_one(vec![node("n1"), odd]), Err(ImportError::UnknownKind { .. })));
}

#[test]
fn conditions_read_as_a_list_and_as_a_map() {
    let mut n = node("n1");
    n["apiVersion"] = json!("longhorn.io/v1beta1");
    n["status"]["conditions"] = json!({"Ready": {"type": "Ready", "status": "False", "lastProbeTime": ""},
        "Schedulable": {"type": "Schedulable", "status": "True"}});
    n["status"]["diskStatus"]["d1"]["conditions"] =
        json!({"Schedulable": {"status": "False", "reason": "DiskPressure"}});
    let c = read_one(vec![n, node("n2")]).unwrap();
    let (_, h1) = c.cluster.hosts().next().unwrap();
    assert!(!h1.state.up);
    assert_eq!(h1.disks[0].schedulable, Some(false));
    assert_eq!(c.format, "Longhorn longhorn.io/v1beta1, longhorn.io/v1beta2");
}

#[test]
fn replicas_find_their_disk_by_uuid_on_their_own_node() {
    // Cloned nodes: the same disk UUID on two nodes, under another map key on the second.
    let mut n2 = node("n2");
    n2["status"]["diskStatus"]["d1"]["diskUUID"] = json!("uuid-n1");
    let mut n3 = node("n3");
    let d = n3["spec"]["disks"]["d1"].take();
    n3["spec"]["disks"] = json!({"disk-9": d});
    let st = n3["status"]["diskStatus"]["d1"].take();
    n3["status"]["diskStatus"] = json!({"disk-9": st});
    n3["status"]["diskStatus"]["disk-9"]["diskName"] = json!("disk-3n1");
    n3["status"]["diskStatus"]["disk-9"]["scheduledReplica"] = json!({"v-r-3": 1073741824});
    let volume = json!({"apiVersion": "longhorn.io/v1beta2", "kind": "Volume", "metadata": {"name": "v"},
        "spec": {"size": "1073741824", "numberOfReplicas": 3}});
    let replica = |name: &str, node: &str, disk: &str| {
        json!({"apiVersion": "longhorn.io/v1beta2", "kind": "Replica",
        "metadata": {"name": name}, "spec": {"volumeName": "v", "nodeID": node, "diskID": disk,
        "healthyAt": "2025-01-01T00:00:00Z", "failedAt": ""}})
    };
    let c = read_one(vec![
        node("n1"),
        n2,
        n3,
        volume,
        replica("v-r-1", "n2", "uuid-n1"),
        replica("v-r-3", "n3", "uuid-n3"),
    ])
    .unwrap();
    let v = c.volume("v").unwrap();
    assert_eq!((v.replicas[0].node_id.as_str(), v.replicas[0].disk_id.as_str()), ("n2", "d1"));
    assert_eq!(v.replicas[1].disk_id, "disk-9", "the map key, not diskName");
    assert!(v.replicas[1].counted && !v.replicas[0].counted);
    assert_eq!(v.replicas[0].healthy_at, Some(1_735_689_600));
    assert_eq!(v.replicas[0].failed_at, None, "an empty time is none");
}

#[test]
fn a_replica_naming_a_missing_node_or_disk_is_dangling() {
    let volume = json!({"apiVersion": "longhorn.io/v1beta2", "kind": "Volume", "metadata": {"name": "v"},
        "spec": {"size": "1073741824"}});
    let replica = |node: &str, disk: &str| {
        json!({"apiVersion": "longhorn.io/v1beta2", "kind": "Replica",
        "metadata": {"name": "v-r"}, "spec": {"volumeName": "v", "nodeID": node, "diskID": disk}})
    };
    let err = read_one(vec![node("n1"), volume.clone(), replica("n9", "uuid-n1")]).unwrap_err();
    assert_eq!(err.to_string(), "t.json: Replica v-r: field `spec.nodeID` names node n9, which is not in the input");
    let err = read_one(vec![node("n1"), volume, replica("n1", "nope")]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "t.json: Replica v-r: field `spec.diskID` names disk nope on node n1, which is not in the input"
    );
}

#[test]
fn settings_are_strings_some_json_per_engine() {
    let setting = |name: &str, value: &str| {
        json!({"apiVersion": "longhorn.io/v1beta2", "kind": "Setting",
        "metadata": {"name": name}, "value": value, "status": {"applied": true}})
    };
    let c = read_one(vec![
        node("n1"),
        setting("replica-soft-anti-affinity", "{\"v1\":\"true\",\"v2\":\"false\"}"),
        setting("storage-minimal-available-percentage", "10"),
        setting("backup-target", "s3://bucket@us-east-1/"),
    ])
    .unwrap();
    assert!(c.settings.replica_soft_anti_affinity);
    assert_eq!(c.settings.storage_minimal_available_percentage, 10);
    assert_eq!(c.settings_read.len(), 2, "settings not about placement are ignored");
    assert!(c.warnings.iter().any(|w| w.field == "value" && w.message.contains("v2 volumes would read `false`")));
    let err = read_one(vec![node("n1"), setting("storage-over-provisioning-percentage", "lots")]).unwrap_err();
    assert!(
        err.to_string().starts_with("t.json: Setting storage-over-provisioning-percentage: field `value`: "),
        "{err}"
    );
}

#[test]
fn volume_sizes_are_strings_or_quantities_and_bad_ones_are_named() {
    let volume = |size: Value| {
        json!({"apiVersion": "longhorn.io/v1beta2", "kind": "Volume",
        "metadata": {"name": "v"}, "spec": {"size": size}})
    };
    let c = read_one(vec![node("n1"), volume(json!("21474836480"))]).unwrap();
    assert_eq!(c.volume("v").unwrap().volume.size, 20 * G);
    assert_eq!(c.volume("v").unwrap().volume.number_of_replicas, 3, "default-replica-count");
    let c = read_one(vec![node("n1"), volume(json!("2Gi"))]).unwrap();
    assert_eq!(c.volume("v").unwrap().volume.size, 2 * G);
    let err = read_one(vec![node("n1"), volume(json!("2 gigs"))]).unwrap_err().to_string();
    assert!(err.starts_with("t.json: Volume v: field `spec.size`: expected bytes or a quantity"), "{err}");
}

#[test]
fn a_node_without_status_is_not_ready() {
    let mut n = node("n1");
    n.as_object_mut().unwrap().remove("status");
    let c = read_one(vec![n]).unwrap();
    let (_, h) = c.cluster.hosts().next().unwrap();
    assert!(!h.state.up);
    assert_eq!(h.disks[0].maximum, 0);
    assert!(c.warnings.iter().any(|w| w.field == "status"));
}

#[test]
fn engine_images_and_instance_managers_set_the_node_attributes() {
    let ei = json!({"apiVersion": "longhorn.io/v1beta2", "kind": "EngineImage", "metadata": {"name": "ei-1"},
        "spec": {"image": "engine:1"}, "status": {"state": "deployed", "nodeDeploymentMap": {"n1": true, "n2": false}}});
    let im = |node: &str, state: &str| {
        json!({"apiVersion": "longhorn.io/v1beta2", "kind": "InstanceManager",
        "metadata": {"name": format!("im-{node}")}, "spec": {"nodeID": node, "type": "aio", "dataEngine": "v1"},
        "status": {"currentState": state}})
    };
    let c = read_one(vec![
        node("n1"),
        node("n2"),
        node("n3"),
        ei,
        im("n1", "running"),
        im("n2", "running"),
        im("n3", "stopped"),
    ])
    .unwrap();
    let attr = |h: usize, name: &str| {
        c.cluster.hosts().nth(h).unwrap().1.attribute(name).and_then(Value::as_bool).unwrap_or(true)
    };
    assert!(attr(0, ATTR_ENGINE_IMAGE_DEPLOYED) && attr(0, ATTR_INSTANCE_MANAGER_RUNNING));
    assert!(!attr(1, ATTR_ENGINE_IMAGE_DEPLOYED));
    assert!(!attr(2, ATTR_INSTANCE_MANAGER_RUNNING));
    let v = c.new_volume("v", G, Some(3));
    let out = c.place(&v, 0).unwrap();
    let nodes: Vec<&str> = out.placed().map(|(_, p)| p.node_id.as_str()).collect();
    assert_eq!(nodes, ["n1"], "only n1 has the engine image and a running instance manager");
}

#[test]
fn write_then_read_gives_the_same_snapshot_and_volumes() {
    let c = read_one(vec![node("n1"), node("n2")]).unwrap();
    let mut v = c.new_volume("v", G, Some(2));
    v.replicas.push(Replica::on("v-r-1", "n1", "d1"));
    let written = write(&c.cluster, &c.settings, std::slice::from_ref(&v));
    let back = read(&[doc(written)]).unwrap();
    assert_eq!(back.cluster.len(), 2);
    let again = back.volume("v").unwrap();
    assert_eq!(again.replicas[0].disk_id, "d1");
    assert_eq!(c.place(&v, 0).unwrap().selections, back.place(again, 0).unwrap().selections);
}
