//! Unit tests of the Swarm importer: shapes, fields, errors, warnings, the way back.

use super::*;
use serde_json::{json, Value};

fn doc(origin: &str, value: Value) -> Document {
    Document::new(origin, value)
}

fn node(id: &str, labels: Value) -> Value {
    json!({"ID": id, "Spec": {"Role": "worker", "Availability": "active", "Labels": labels},
           "Description": {"Hostname": id, "Resources": {"NanoCPUs": 2_000_000_000i64, "MemoryBytes": 2_147_483_648i64}},
           "Status": {"State": "ready"}})
}

#[test]
fn shapes_are_recognised() {
    assert!(recognises(&json!([node("n1", json!({}))])));
    assert!(recognises(&json!({"ID": "t", "ServiceID": "s", "NodeID": "n"})));
    assert!(recognises(&json!({"services": {"web": {"image": "nginx"}}})));
    assert!(recognises(&json!({"Name": "web", "TaskTemplate": {}})));
    assert!(!recognises(&json!({"services": [{"binary": "nova-compute"}]})), "OpenStack's services list");
    assert!(!recognises(&json!([])));
    assert!(!recognises(&json!({"apiVersion": "longhorn.io/v1beta2", "kind": "Node"})));
}

#[test]
fn a_task_on_a_node_not_in_the_input_dangles() {
    let services = json!([{"ID": "s1", "Spec": {"Name": "web", "TaskTemplate": {}}}]);
    let tasks = json!([{"ID": "t1", "ServiceID": "s1", "NodeID": "gone", "Status": {"State": "running"},
                        "DesiredState": "running"}]);
    let err = read(&[doc("n.json", json!([node("n1", json!({}))])), doc("s.json", services), doc("t.json", tasks)])
        .unwrap_err();
    assert!(matches!(err, ImportError::Dangling { .. }), "{err}");
    assert_eq!(err.to_string(), "t.json: Task t1: field `NodeID` names node gone, which is not in the input");
}

#[test]
fn finished_and_pending_tasks_hold_nothing() {
    let services = json!([{"ID": "s1", "Spec": {"Name": "web", "Mode": {"Replicated": {"Replicas": 3}},
        "TaskTemplate": {"Resources": {"Reservations": {"MemoryBytes": 1_073_741_824i64}}}}}]);
    let tasks = json!([
        {"ID": "t1", "ServiceID": "s1", "NodeID": "n1", "Status": {"State": "running"}, "DesiredState": "running"},
        {"ID": "t2", "ServiceID": "s1", "NodeID": "n1", "Status": {"State": "running"}, "DesiredState": "shutdown"},
        {"ID": "t3", "ServiceID": "s1", "NodeID": "gone", "Status": {"State": "failed"}, "DesiredState": "shutdown"},
        {"ID": "t4", "ServiceID": "s1", "Status": {"State": "pending"}, "DesiredState": "running"}
    ]);
    let swarm =
        read(&[doc("n.json", json!([node("n1", json!({}))])), doc("s.json", services), doc("t.json", tasks)]).unwrap();
    assert_eq!(swarm.tasks.holding, 2);
    assert_eq!(swarm.tasks.terminating, 1);
    assert_eq!(swarm.tasks.ignored.get("failed"), Some(&1));
    assert_eq!(swarm.services[0].running, 1, "the one being shut down is not active");
    assert_eq!(swarm.request("web", None).unwrap().tasks, 2);
    let spec = swarm.cluster.to_spec();
    // Two tasks of 1 GiB hold memory, the terminating one included; the node reports 2 GiB.
    let free = swarm.place("web", Some(1)).unwrap();
    assert_eq!(free.message(), Some("no suitable node (insufficient resources on 1 node)"));
    assert_eq!(spec.hosts[0].instances.len(), 2);
}

#[test]
fn bad_fields_name_file_object_and_field() {
    let bad_constraint = json!([{"ID": "s1", "Spec": {"Name": "web",
        "TaskTemplate": {"Placement": {"Constraints": ["node.role = worker"]}}}}]);
    let err = read(&[doc("s.json", bad_constraint)]).unwrap_err().to_string();
    assert!(err.starts_with("s.json: Service web: field `Spec.TaskTemplate.Placement.Constraints[0]`: "), "{err}");
    assert!(err.contains("constraint expected one operator from ==, !="), "{err}");
    let bad_memory = json!({"services": {"db": {"deploy": {"resources": {"reservations": {"memory": "20MB!"}}}}}});
    let err = read(&[doc("c.yml", bad_memory)]).unwrap_err().to_string();
    assert!(err.starts_with("c.yml: Service db: field `deploy.resources.reservations.memory`: "), "{err}");
    let no_id = json!([{"Description": {"Hostname": "x"}, "Spec": {"Role": "worker"}, "Status": {"State": "ready"}}]);
    assert!(read(&[doc("n.json", no_id)]).is_err());
}

#[test]
fn twice_the_same_node_is_a_duplicate() {
    let err = read(&[doc("a.json", json!([node("n1", json!({}))])), doc("b.json", json!([node("n1", json!({}))]))])
        .unwrap_err();
    assert_eq!(err.to_string(), "b.json: Node n1 is given twice (first in a.json)");
}

#[test]
fn plain_descriptors_are_skipped_as_swarmkit_does() {
    let services = json!([{"ID": "s1", "Spec": {"Name": "web", "TaskTemplate": {"Placement": {"Preferences": [
        {"Spread": {"SpreadDescriptor": "az"}}, {"Spread": {"SpreadDescriptor": "node.labels.az"}}]}}}}]);
    let nodes = json!([node("a1", json!({"az": "a"})), node("b1", json!({"az": "b"})), node("b2", json!({"az": "b"}))]);
    let swarm = read(&[doc("n.json", nodes), doc("s.json", services)]).unwrap();
    assert_eq!(swarm.warnings.len(), 1, "{:?}", swarm.warnings);
    let out = swarm.place("web", Some(4)).unwrap();
    assert_eq!(out.skipped, ["az"]);
    assert_eq!(out.levels, ["node.labels.az"]);
    assert_eq!(out.per_host().into_iter().collect::<Vec<_>>(), [("a1", 2), ("b1", 1), ("b2", 1)]);
}

#[test]
fn what_is_written_reads_back() {
    let services = json!([{"ID": "s1", "Spec": {"Name": "web", "Mode": {"Replicated": {"Replicas": 5}},
        "TaskTemplate": {"Placement": {"Constraints": ["node.labels.az != c"], "MaxReplicas": 2,
            "Preferences": [{"Spread": {"SpreadDescriptor": "node.labels.az"}}]},
            "Resources": {"Reservations": {"NanoCPUs": 500_000_000, "MemoryBytes": 268_435_456}}}}}]);
    let tasks = json!([{"ID": "t1", "ServiceID": "s1", "NodeID": "a1", "Status": {"State": "running"},
                        "DesiredState": "running", "Spec": {"Resources": {"Reservations": {"NanoCPUs": 500_000_000}}}}]);
    let nodes = json!([node("a1", json!({"az": "a"})), node("b1", json!({"az": "b"})), node("c1", json!({"az": "c"}))]);
    let first = read(&[doc("n.json", nodes), doc("s.json", services), doc("t.json", tasks)]).unwrap();
    let requests: Vec<SpreadRequest> = first.services.iter().map(|s| s.request.clone()).collect();
    let written = write(&first.cluster, &requests);
    let second = read(&[doc("w.json", written)]).unwrap();
    assert_eq!(second.cluster.to_spec(), first.cluster.to_spec());
    assert_eq!(second.services[0].request, first.services[0].request);
    assert_eq!(second.place("web", None).unwrap(), first.place("web", None).unwrap());
}

#[test]
fn a_host_port_that_is_no_port_is_named() {
    let compose = json!({"services": {"api": {"ports": [{"target": 80, "published": "eighty", "mode": "host"}]}}});
    let err = read(&[doc("c.yml", compose)]).unwrap_err().to_string();
    assert_eq!(err, "c.yml: Service api: field `ports[0].published`: expected a port number, found \"eighty\"");
    let ingress = json!({"services": {"api": {"ports": [{"target": 80, "published": 8080}, "9090:90"]}}});
    assert!(
        read(&[doc("c.yml", ingress)]).unwrap().services[0].request.ports.is_empty(),
        "ingress ports hold no node port"
    );
}
