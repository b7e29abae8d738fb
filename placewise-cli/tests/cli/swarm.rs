//! The command line on swarm objects: our fixtures (`tests/data/import/swarm/`: a cluster as
//! `docker node|service inspect` and `docker inspect` of tasks print it, a Compose stack, bad
//! input) and the real objects of `peer_objects/swarm/`.

use crate::common::{fixture, peer_objects, run};

const W1: &str = "w1def2lm8n4p6r0t3s7q9u1v5";

fn cluster() -> String {
    fixture("swarm", "cluster")
}

#[test]
fn inspect_says_what_was_read() {
    let out = run(&["inspect", &cluster()]);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert!(out.stdout.contains("format: Docker Swarm"), "{}", out.stdout);
    assert!(out.stdout.contains("objects: 6 Node, 4 Service, 10 Task"), "{}", out.stdout);
    assert!(out.stdout.contains("shop_web (replicated, 8 tasks): 2 running, next 6"), "{}", out.stdout);
    assert!(out.stdout.contains("holding nothing: 1 failed, 1 pending"), "{}", out.stdout);
    assert!(out.stdout.contains("warnings (1):"), "{}", out.stdout);
    let json = run(&["inspect", "--json", &cluster()]).json();
    assert_eq!(json["format"], "swarm");
    assert_eq!(json["cluster"]["hosts"], 6);
    assert_eq!(json["services"][0]["next"], 6);
    assert_eq!(json["tasks"]["holding"], 8);
    // What the tasks hold, which Swarm does not report: 3 × 512 MiB of web (one being shut
    // down), 3 × 128 MiB of the agent, 4 GiB of the database.
    assert_eq!(json["reservations"]["memory_mb"]["held"], 3.0 * 512.0 + 3.0 * 128.0 + 4096.0);
}

#[test]
fn inspect_writes_a_snapshot_placewise_reads_back() {
    let dir = std::env::temp_dir().join(format!("placewise-swarm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let snapshot = dir.join("snapshot.json");
    let out = run(&["inspect", &cluster(), "--write-snapshot", &snapshot.display().to_string()]);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    let again = run(&["inspect", "--json", &snapshot.display().to_string()]);
    assert_eq!(again.status, Some(0), "{}", again.stderr);
    assert_eq!(again.json()["cluster"]["hosts"], 6);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn place_gives_the_nodes_and_the_split_per_branch() {
    let out = run(&["place", &cluster(), "--service", "shop_web"]);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert!(out.stdout.contains("placed 6/6"), "{}", out.stdout);
    assert!(out.stdout.contains("spread over: node.labels.dc > node.labels.rack"), "{}", out.stdout);
    assert!(out.stdout.contains("node.labels.dc=\"dc1\""), "{}", out.stdout);
    let json = run(&["place", "--json", &cluster(), "--service", "shop_web", "--tasks", "2"]).json();
    assert_eq!(json["outcome"]["requested"], 2);
    assert_eq!(json["outcome"]["selections"].as_array().map(Vec::len), Some(2));
    assert!(json["outcome"]["tree"]["children"].is_array());
}

#[test]
fn explain_gives_swarmkits_words_and_every_nodes_verdict() {
    let out = run(&["explain", &cluster(), "--service", "shop_web", "--tasks", "20"]);
    assert_eq!(out.status, Some(0), "an answer, though the tasks do not fit: {}", out.stderr);
    assert!(
        out.stdout.contains("SwarmKit says: no suitable node (max replicas per node limit exceed)"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("rejected by ready: not available for new tasks"), "{}", out.stdout);
    let json = run(&["explain", "--json", &cluster(), "--service", "shop_web", "--tasks", "20"]).json();
    assert_eq!(json["outcome"]["explanation"]["verdicts"].as_array().map(Vec::len), Some(6));
    assert_eq!(json["outcome"]["unplaced"], 13);
}

#[test]
fn capacity_counts_per_branch_and_draws_a_bar_each() {
    let dir = std::env::temp_dir().join(format!("placewise-swarm-svg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("web.svg");
    let out = run(&["capacity", &cluster(), "--service", "shop_web", "--svg", &svg.display().to_string()]);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert!(out.stdout.contains("service shop_web: 7 more task(s) fit"), "{}", out.stdout);
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert_eq!(chart.matches("<rect").count(), 9, "a bar per branch: {chart}");
    let json = run(&["capacity", "--json", &cluster(), "--service", "shop_web"]).json();
    assert_eq!(json["total"], 7);
    let dc1 = json["branches"].as_array().unwrap().iter().find(|b| b["path"] == serde_json::json!(["dc1"])).cloned();
    assert_eq!(dc1.map(|b| b["capacity"].clone()), Some(serde_json::json!(4)));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_compose_stack_is_planned_on_the_nodes() {
    let nodes = fixture("swarm", "cluster/nodes.json");
    let stack = fixture("swarm", "stack.yml");
    let out = run(&["place", "--json", &nodes, &stack, "--service", "api"]);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    let json = out.json();
    assert_eq!(json["outcome"]["requested"], 4);
    assert_eq!(json["outcome"]["selections"][0]["host_name"], W1);
    let inspect = run(&["inspect", &nodes, &stack]);
    assert!(inspect.stdout.contains("api (replicated, 4 tasks, to plan)"), "{}", inspect.stdout);
    assert!(inspect.stdout.contains("memory_mb 20,"), "20M is 20 MiB: {}", inspect.stdout);
}

#[test]
fn bad_input_exits_2_naming_file_object_and_field() {
    let cases = [
        (
            "bad/task_on_missing_node.json",
            "Task t99lost0a1b2c3d4e5f6g7h8i: field `NodeID` names node zz9retired0node1234567890",
        ),
        ("bad/node_cpus_as_string.json", "Node w9xyz: field `Description.Resources.NanoCPUs`: expected a whole number"),
        ("bad/service_bad_constraint.json", "Service shop_broken: field `Spec.TaskTemplate.Placement.Constraints[0]`"),
        ("bad/compose_bad_memory.yml", "Service api: field `deploy.resources.reservations.memory`"),
    ];
    for (file, says) in cases {
        let path = fixture("swarm", file);
        let out = run(&["inspect", &cluster(), &path]);
        assert_eq!(out.status, Some(2), "{file}: {}", out.stdout);
        assert!(out.stderr.contains(&path), "{file}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{file}: {}", out.stderr);
    }
    let no_service = run(&["place", &cluster()]);
    assert_eq!(no_service.status, Some(2));
    assert!(no_service.stderr.contains("give --service NAME (services read: shop_web"), "{}", no_service.stderr);
    let unknown = run(&["place", &cluster(), "--service", "shop_nope"]);
    assert_eq!(unknown.status, Some(2));
    assert!(unknown.stderr.contains("no service `shop_nope`"), "{}", unknown.stderr);
    let foreign = run(&["place", &cluster(), "--service", "shop_web", "--volume", "v1"]);
    assert_eq!(foreign.status, Some(2));
    assert!(
        foreign.stderr.contains("--volume is not for Docker Swarm objects (Docker Swarm takes --service, --tasks)"),
        "{}",
        foreign.stderr
    );
}

/// What each file of `peer_objects/swarm/` is, and what reading it alone must give.
enum Expect {
    /// A supported kind: `inspect` reads it.
    Reads,
    /// A supported kind, but it cannot stand alone or is refused: exit 2, stderr says this.
    Fails(&'static str),
}

/// Every file of `peer_objects/swarm/`, decided: the kinds the importer reads (nodes, services,
/// bare ServiceSpecs, tasks, Compose files) import or fail with their clear error; the
/// malformed one gives a located parse error; a NodeSpec or a Placement alone is not a kind it
/// reads (neither names a node or a service).
const PEER_FILES: [(&str, Expect); 12] = [
    ("node_inspect_swarm-manager.docker-cli-docs.json", Expect::Reads),
    ("node_list_api-v1.24.moby-docs.MALFORMED.json", Expect::Fails("not valid JSON: expected `,` or `}` at line 13")),
    ("nodespec_example.moby-swagger-v1.56.json", Expect::Fails("unknown kind `NodeSpec")),
    ("placement_property_examples.moby-swagger-v1.56.json", Expect::Fails("unknown kind `Placement")),
    ("service_inspect_redis.docker-cli-docs.json", Expect::Reads),
    ("service_list_api-v1.24.moby-docs.json", Expect::Reads),
    ("service_example.moby-swagger-v1.56.json", Expect::Reads),
    ("service_create_request.moby-swagger-v1.56.json", Expect::Reads),
    ("service_create_request_api-v1.24.moby-docs.json", Expect::Reads),
    // A task alone names a node and a service that are not there.
    ("task_example.moby-swagger-v1.56.json", Expect::Fails("Task 0kzzo1i0y4jz6027t0k7aezc7: field `NodeID` names node")),
    // The loader's fixture has `constraints: [node=foo]`, which the Docker API refuses.
    ("compose_full-example.docker-cli.yml", Expect::Fails("Service foo: field `deploy.placement.constraints[0]`: constraint \"node=foo\": constraint expected one operator from ==, !=")),
    ("compose_full-example.normalized.docker-cli.json.golden", Expect::Fails("Service foo: field `deploy.placement.constraints[0]`")),
];

#[test]
fn peer_objects_import_or_fail_clearly() {
    let Some(dir) = peer_objects("swarm") else { return };
    let mut names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    let mut decided: Vec<&str> = PEER_FILES.iter().map(|(n, _)| *n).collect();
    decided.sort();
    assert_eq!(names, decided, "every peer file is decided here");
    for (name, expect) in &PEER_FILES {
        let path = dir.join(name).display().to_string();
        let out = run(&["inspect", &path]);
        match expect {
            Expect::Reads => {
                assert_eq!(out.status, Some(0), "{name}: {}", out.stderr);
                assert!(out.stdout.contains("format: Docker Swarm"), "{name}: {}", out.stdout);
            }
            Expect::Fails(says) => {
                assert_eq!(out.status, Some(2), "{name}: {}", out.stdout);
                assert!(out.stderr.contains(&path), "{name} names the file: {}", out.stderr);
                assert!(out.stderr.contains(says), "{name}: {}", out.stderr);
            }
        }
    }
    // Together: the real node takes the real redis service (1 task; the manager is the only
    // node), and the v1.24 constraint with spaces (`node.role == worker`) reads and rejects it.
    let node = dir.join(PEER_FILES[0].0).display().to_string();
    let redis = dir.join(PEER_FILES[4].0).display().to_string();
    let out = run(&["place", "--json", &node, &redis, "--service", "redis"]);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(out.json()["outcome"]["selections"][0]["host_name"], "e216jshn25ckzbvmwlnh5jr3g");
    let listed = dir.join(PEER_FILES[5].0).display().to_string();
    let out = run(&["explain", &node, &listed, "--service", "hopeful_cori"]);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert!(
        out.stdout.contains("SwarmKit says: no suitable node (scheduling constraints not satisfied on 1 node)"),
        "{}",
        out.stdout
    );
}
