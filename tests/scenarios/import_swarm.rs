//! Importing swarm objects: the fixtures under `tests/data/import/swarm/` (what `docker node
//! inspect`, `docker service inspect` and `docker inspect` of tasks print) give the same
//! snapshot and the same decisions as the cluster built by hand with the spread engine's API;
//! every Swarm pitfall of the reference (constraints with spaces, reservations Swarm does not
//! report, Compose's binary `20M`, nanosecond durations, nodes without labels, generic
//! resources) reads as Swarm means it; and a generated cluster written as Swarm's objects and
//! read back decides and counts as before.

#[path = "../support/spread_gen.rs"]
mod spread_gen;

use placewise::capacity;
use placewise::import::{Document, ImportError};
use placewise::schedule::DEFAULT_MAX_COUNT;
use placewise::snapshot::{InstanceSpec, ResourceSpec};
use placewise::spread::import::{self, ServiceMode, SwarmCluster};
use placewise::spread::{Availability, Preference, Role, SpreadOutcome, SpreadRequest, SpreadScheduler, SwarmNode};
use placewise::{Cluster, HostSpec};
use serde_json::json;
use std::path::PathBuf;

const GIB_MB: f64 = 1024.0;

fn fixture(name: &str) -> Document {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/import/swarm").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Document::from_json(name, &text).unwrap()
}

fn imported() -> SwarmCluster {
    import::read(&[fixture("cluster/nodes.json"), fixture("cluster/services.json"), fixture("cluster/tasks.json")])
        .unwrap()
}

const M1: &str = "m1abc0ts3k9q2x7w1v5u8y4z0";
const W1: &str = "w1def2lm8n4p6r0t3s7q9u1v5";
const W2: &str = "w2ghi4jk6m8o0q2s4u6w8y0a2";
const W3: &str = "w3jkl6no8q0s2u4w6y8a0c2e4";
const W4: &str = "w4mno8pq0s2u4w6y8a0c2e4g6";
const W5: &str = "w5pqr0st2v4x6z8b0d2f4h6j8";

fn task(id: &str, service: &str, resources: &[(&str, f64)]) -> InstanceSpec {
    resources.iter().fold(InstanceSpec::new(id).group(service), |t, &(k, v)| t.resource(k, v))
}

/// The fixtures' cluster, written with the engine's own API.
fn by_hand() -> Cluster {
    let node = |id: &str, host: &str, ip: &str| {
        SwarmNode::new(id).hostname(host).platform("linux", "x86_64").ip(ip).role(Role::Worker)
    };
    let web = [("vcpus", 0.5), ("memory_mb", 512.0)];
    let agent = [("memory_mb", 128.0)];
    let m1 = node(M1, "mgr-1", "10.0.0.10")
        .role(Role::Manager)
        .vcpus(4.0)
        .memory_mb(8.0 * GIB_MB)
        .label("dc", "dc1")
        .label("rack", "r1")
        .engine_label("storage", "ssd")
        .build()
        .instance(task("t06agentm15f6g7h8i9j0k1l2", "shop_agent", &agent));
    let mut w1 = node(W1, "work-1", "10.0.0.11")
        .vcpus(8.0)
        .memory_mb(16.0 * GIB_MB)
        .resource("SSD", 2.0)
        .resource("GPU", 2.0)
        .label("dc", "dc1")
        .label("rack", "r1")
        .engine_label("storage", "ssd")
        .build()
        .instance(task("t01webrun0a1b2c3d4e5f6g7h", "shop_web", &web))
        .instance(task("t03webold2c3d4e5f6g7h8i9j", "shop_web", &web).terminating(true))
        .instance(task("t07agentw16g7h8i9j0k1l2m3", "shop_agent", &agent))
        .instance(task("t10train9j0k1l2m3n4o5p6q7", "shop_train", &[("GPU", 1.0)]));
    w1.resources.insert("GPU".into(), ResourceSpec::new(2.0));
    let w2 = node(W2, "work-2", "10.0.0.12")
        .vcpus(8.0)
        .memory_mb(16.0 * GIB_MB)
        .label("dc", "dc1")
        .label("rack", "r2")
        .engine_label("storage", "hdd")
        .build()
        .instance(task("t02webrun1b2c3d4e5f6g7h8i", "shop_web", &web))
        .instance(task("t08agentw27h8i9j0k1l2m3n4", "shop_agent", &agent))
        .instance(
            task("t09db1run8i9j0k1l2m3n4o5p", "shop_db", &[("memory_mb", 4.0 * GIB_MB)])
                .label(placewise::spread::HOST_PORTS_LABEL, "tcp/5432"),
        );
    let w3 = node(W3, "work-3", "10.0.0.13")
        .vcpus(8.0)
        .memory_mb(16.0 * GIB_MB)
        .label("dc", "dc2")
        .label("rack", "r1")
        .availability(Availability::Drain)
        .build();
    let w4 = node(W4, "work-4", "10.0.0.14")
        .vcpus(4.0)
        .memory_mb(8.0 * GIB_MB)
        .label("dc", "dc2")
        .label("rack", "r2")
        .engine_label("storage", "ssd")
        .ready(false)
        .build();
    let w5 = node(W5, "work-5", "10.0.0.15").vcpus(2.0).memory_mb(4.0 * GIB_MB).no_engine().build();
    [m1, w1, w2, w3, w4, w5].into_iter().fold(Cluster::builder(), |b, h: HostSpec| b.host(h)).build().unwrap()
}

/// The fixtures' services as requests, written with the engine's own API (`tasks` = 0).
fn requests_by_hand() -> Vec<SpreadRequest> {
    vec![
        SpreadRequest::new("shop_web", 0)
            .constraint("node.role==worker")
            .unwrap()
            .preference(Preference::spread("node.labels.dc"))
            .preference(Preference::spread("node.labels.rack"))
            .max_replicas(3)
            .resource("vcpus", 0.5)
            .resource("memory_mb", 512.0),
        SpreadRequest::new("shop_train", 0)
            .constraint("node.platform.os==linux")
            .unwrap()
            .constraint("engine.labels.storage==ssd")
            .unwrap()
            .platform("linux", "amd64")
            .resource("GPU", 1.0),
        SpreadRequest::new("shop_agent", 0).resource("memory_mb", 128.0),
        SpreadRequest::new("shop_db", 0)
            .constraint("node.labels.dc==dc1")
            .unwrap()
            .resource("memory_mb", 4.0 * GIB_MB)
            .port("tcp", 5432),
    ]
}

#[test]
fn imported_fixtures_are_the_cluster_built_by_hand() {
    let swarm = imported();
    assert_eq!(swarm.cluster.to_spec(), by_hand().to_spec());
    let names: Vec<&str> = swarm.services.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["shop_web", "shop_train", "shop_agent", "shop_db"]);
    for (service, mut hand) in swarm.services.iter().zip(requests_by_hand()) {
        hand.tasks = service.request.tasks;
        if service.mode == ServiceMode::Global {
            hand.max_replicas = 1;
        }
        assert_eq!(service.request, hand, "{}", service.name);
    }
    assert_eq!(swarm.tasks.holding, 8);
    assert_eq!(swarm.tasks.terminating, 1);
    assert_eq!(swarm.tasks.ignored.values().sum::<u32>(), 2, "failed and pending");
}

#[test]
fn decisions_on_imported_fixtures_equal_decisions_by_hand() {
    let swarm = imported();
    let hand = by_hand();
    let scheduler = SpreadScheduler::new();
    for request in requests_by_hand() {
        for tasks in [1, 3, 7, 20] {
            let mut r = request.clone();
            r.tasks = tasks;
            if r.service == "shop_agent" {
                r.max_replicas = 1;
            }
            let want = scheduler.schedule(&hand, &r).unwrap();
            let got = swarm.place(&r.service, Some(tasks)).unwrap();
            assert_eq!(got, want, "{} × {tasks}", r.service);
        }
        let mut r = request.clone();
        r.max_replicas = if r.service == "shop_agent" { 1 } else { r.max_replicas };
        let want = capacity::tasks(&scheduler, &hand, &r, DEFAULT_MAX_COUNT).unwrap();
        assert_eq!(swarm.capacity(&r.service).unwrap(), want, "{}", r.service);
    }
}

#[test]
fn the_missing_tasks_are_placed_by_default() {
    let swarm = imported();
    // shop_web wants 8 and runs 2 (a third is being shut down): 6 to place.
    let web = swarm.place("shop_web", None).unwrap();
    assert_eq!(web.requested, 6);
    // Workers only: w1 (dc1/r1), w2 (dc1/r2) ready; w3 drains, w4 is down, w5 has no labels.
    for s in &web.selections {
        assert!([W1, W2, W5].contains(&s.host_name.as_str()), "{}", s.host_name);
    }
    // The global agent runs on m1, w1 and w2: the other three nodes lack it; w3 and w4 take
    // no new task, so only w5 gets one and SwarmKit's words say why the rest did not.
    let agent = swarm.place("shop_agent", None).unwrap();
    assert_eq!(agent.requested, 3);
    assert_eq!(agent.per_host().into_iter().collect::<Vec<_>>(), [(W5, 1)]);
    assert!(agent.message().is_some_and(|m| m.starts_with("no suitable node (")), "{:?}", agent.message());
}

#[test]
fn swarm_pitfalls_read_as_swarm_means_them() {
    let swarm = imported();
    let spec = swarm.cluster.to_spec();
    let host = |id: &str| spec.hosts.iter().find(|h| h.name == id).unwrap();
    // Constraints with spaces around `==` parse as SwarmKit's grammar does.
    assert_eq!(swarm.services[0].request.constraints[0].to_string(), "node.role==worker");
    // Reservations Swarm does not report: the tasks on w1 hold 2 × 512 MiB (the one being shut
    // down included) and 128 MiB, out of 16 GiB.
    let w1 = swarm.cluster.host(swarm.cluster.host_id(W1).unwrap()).unwrap();
    let memory = swarm.cluster.resource_kinds().get("memory_mb").unwrap();
    assert_eq!(w1.resource(memory).free(), 16.0 * GIB_MB - 1024.0 - 128.0);
    // Generic resources: a discrete one's value, named ones counted; the task's assigned GPU.
    assert_eq!(host(W1).resources["SSD"].capacity, 2.0);
    assert_eq!(host(W1).resources["GPU"].capacity, 2.0);
    assert!(swarm.warnings.iter().any(|w| w.field == "Description.Resources.GenericResources"), "{:?}", swarm.warnings);
    // A node without labels reads `""` at every level: its own branch.
    let web = swarm.place("shop_web", Some(6)).unwrap();
    let empty = web.tree.children.iter().find(|b| b.value.is_empty()).expect("a branch of unlabelled nodes");
    assert_eq!(empty.nodes, 1);
    // Durations in integer nanoseconds (UpdateConfig, StopGracePeriod) are not read: no error,
    // no warning about them.
    assert!(!swarm.warnings.iter().any(|w| w.field.contains("UpdateConfig")));
}

#[test]
fn compose_memory_is_binary_and_cpus_are_decimal() {
    // `docker stack deploy` reads `20M` as 20 MiB (Kubernetes would read 20 × 10^6 bytes).
    let compose = json!({"version": "3.8", "services": {
        "api": {"image": "x", "deploy": {"replicas": 4,
            "placement": {"constraints": ["node.labels.dc == dc1"], "preferences": [{"spread": "node.labels.rack"}],
                          "max_replicas_per_node": 2},
            "resources": {"reservations": {"cpus": "0.25", "memory": "20M",
                          "generic_resources": [{"discrete_resource_spec": {"kind": "SSD", "value": 1}}]}},
            "update_config": {"delay": "10s", "monitor": "1m0s"}},
            "ports": [{"target": 8443, "published": 8443, "mode": "host"}, "8080:80"]},
        "cache": {"image": "redis", "deploy": {"mode": "global",
            "placement": {"preferences": [{"spread": "node.labels.dc"}]},
            "resources": {"reservations": {"memory": "256M"}}}}}});
    let swarm = import::read(&[fixture("cluster/nodes.json"), Document::new("stack.yml", compose)]).unwrap();
    let api = swarm.service("api").unwrap();
    assert_eq!(api.request.resources["memory_mb"], 20.0);
    assert_eq!(api.request.resources["vcpus"], 0.25);
    assert_eq!(api.request.resources["SSD"], 1.0);
    assert_eq!(api.request.ports.len(), 1, "only the host-mode port");
    assert_eq!(api.request.tasks, 4);
    let hand = SpreadRequest::new("api", 4)
        .constraint("node.labels.dc==dc1")
        .unwrap()
        .preference(Preference::spread("node.labels.rack"))
        .max_replicas(2)
        .resource("vcpus", 0.25)
        .resource("memory_mb", 20.0)
        .resource("SSD", 1.0)
        .port("tcp", 8443);
    assert_eq!(api.request, hand);
    // Only w1 has an SSD and is in dc1, and its host-mode port takes one task a node: one task
    // fits, then SwarmKit's words.
    let out = swarm.place("api", None).unwrap();
    assert_eq!(out.per_host().into_iter().collect::<Vec<_>>(), [(W1, 1)]);
    let message = out.message().unwrap_or_default();
    assert!(
        message.starts_with("no suitable node (") && message.contains("host-mode port already in use on 1 node"),
        "{message}"
    );
    // A global service's preferences do nothing: dropped, with a warning.
    let cache = swarm.service("cache").unwrap();
    assert_eq!(cache.mode, ServiceMode::Global);
    assert!(cache.request.preferences.is_empty());
    assert!(swarm.warnings.iter().any(|w| w.object.as_ref().is_some_and(|o| o.name == "cache")));
}

#[test]
fn bad_input_names_file_object_and_field() {
    let nodes = fixture("cluster/nodes.json");
    let services = fixture("cluster/services.json");
    let dangling = fixture("bad/task_on_missing_node.json");
    let err = import::read(&[nodes.clone(), services.clone(), dangling]).unwrap_err();
    assert!(matches!(err, ImportError::Dangling { .. }), "{err}");
    assert!(err.to_string().starts_with("bad/task_on_missing_node.json: Task "), "{err}");
    let err = import::read(&[fixture("bad/node_cpus_as_string.json")]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "bad/node_cpus_as_string.json: Node w9xyz: field `Description.Resources.NanoCPUs`: \
         expected a whole number, found \"4000000000\""
    );
    let err = import::read(&[nodes, fixture("bad/service_bad_constraint.json")]).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("Service shop_broken: field `Spec.TaskTemplate.Placement.Constraints[0]`"), "{text}");
}

/// A generated cluster and its services, written as Swarm's objects and read back, give the
/// same decisions and the same task capacity.
#[test]
fn a_generated_cluster_round_trips_through_swarm_objects() {
    let scheduler = SpreadScheduler::new();
    for seed in 0..6 {
        let cluster = spread_gen::swarm_cluster(30 + 17 * seed as usize, seed);
        let mut requests = spread_gen::swarm_services();
        for (i, r) in requests.iter_mut().enumerate() {
            r.tasks = 1 + (seed as u32 + i as u32) % 5;
        }
        let written = import::write(&cluster, &requests);
        let swarm = import::read(&[Document::new("written.json", written)]).unwrap();
        assert_eq!(swarm.cluster.len(), cluster.len());
        for r in &requests {
            for tasks in [r.tasks, 12, 60] {
                let mut want_request = r.clone();
                want_request.tasks = tasks;
                assert_eq!(swarm.request(&r.service, Some(tasks)).unwrap(), want_request, "seed {seed}");
                let want: SpreadOutcome = scheduler.schedule(&cluster, &want_request).unwrap();
                let got = swarm.place(&r.service, Some(tasks)).unwrap();
                assert_eq!(got, want, "seed {seed}, {} × {tasks}", r.service);
            }
            let want = capacity::tasks(&scheduler, &cluster, r, DEFAULT_MAX_COUNT).unwrap();
            assert_eq!(swarm.capacity(&r.service).unwrap(), want, "seed {seed}, {}", r.service);
        }
        // The default batch is what the written service lacks: its request's tasks.
        assert_eq!(swarm.request(&requests[0].service, None).unwrap().tasks, requests[0].tasks);
    }
}
