//! A seeded generator of SwarmKit-shaped clusters and services for the spread engine: what
//! Swarm can say (node and engine labels, roles, availability, platforms, CPUs, memory,
//! generic resources, running and terminating tasks with their reservations and host ports),
//! and nothing it cannot, so that a round trip through Swarm's own objects keeps every fact.
//!
//! Included with `#[path = "../support/spread_gen.rs"] mod spread_gen;` where needed.
#![allow(dead_code)]

use placewise::rng::SplitMix64;
use placewise::snapshot::InstanceSpec;
use placewise::spread::{Availability, Preference, Role, SpreadRequest, SwarmNode, HOST_PORTS_LABEL};
use placewise::{Cluster, HostSpec};

/// The services the generated tasks belong to: `web` (spread over dc then rack, workers
/// only), `api` (spread over an engine label, not in dc3, at most 3 a node), `train` (one GPU,
/// linux/amd64 only) and `db` (a host-mode port, 4 GiB, spread over dc).
pub(crate) fn swarm_services() -> Vec<SpreadRequest> {
    let constraint = |r: SpreadRequest, c: &str| r.constraint(c).expect("a valid constraint");
    vec![
        constraint(
            SpreadRequest::new("web", 0)
                .preference(Preference::spread("node.labels.dc"))
                .preference(Preference::spread("node.labels.rack"))
                .resource("vcpus", 0.5)
                .resource("memory_mb", 512.0),
            "node.role==worker",
        ),
        constraint(
            SpreadRequest::new("api", 0)
                .preference(Preference::spread("engine.labels.storage"))
                .resource("memory_mb", 1024.0)
                .max_replicas(3),
            "node.labels.dc!=dc3",
        ),
        SpreadRequest::new("train", 0).resource("GPU", 1.0).platform("linux", "amd64"),
        SpreadRequest::new("db", 0)
            .preference(Preference::spread("node.labels.dc"))
            .resource("memory_mb", 4096.0)
            .port("tcp", 5432),
    ]
}

/// `nodes` nodes over three datacenters and four racks (some without labels or an engine),
/// with the tasks of [`swarm_services`] already running on some of them.
pub(crate) fn swarm_cluster(nodes: usize, seed: u64) -> Cluster {
    let mut rng = SplitMix64::new(seed);
    let services = swarm_services();
    let mut b = Cluster::builder();
    for i in 0..nodes {
        let id = format!("node-{i:04}");
        let mut n = SwarmNode::new(&id)
            .role(if i < 3 { Role::Manager } else { Role::Worker })
            .hostname(format!("host{i}"))
            .vcpus([2.0, 4.0, 8.0, 16.0][rng.below(4)])
            .memory_mb([4096.0, 8192.0, 16384.0, 32768.0][rng.below(4)]);
        if rng.below(10) != 0 {
            n = n.label("dc", format!("dc{}", 1 + rng.below(3)));
            if rng.below(8) != 0 {
                n = n.label("rack", format!("r{}", 1 + rng.below(4)));
            }
        }
        if rng.below(12) == 0 {
            n = n.no_engine();
        } else {
            n = n.engine_label("storage", ["ssd", "hdd"][rng.below(2)]);
        }
        n = n.platform("linux", if rng.below(5) == 0 { "aarch64" } else { "x86_64" });
        match rng.below(40) {
            0 | 1 => n = n.availability(Availability::Pause),
            2 => n = n.availability(Availability::Drain),
            3 => n = n.ready(false),
            _ => {}
        }
        if rng.below(6) == 0 {
            n = n.resource("GPU", (1 + rng.below(4)) as f64);
        }
        let mut host: HostSpec = n.build();
        for s in &services {
            for k in 0..rng.below(3) {
                let mut task = InstanceSpec::new(format!("{}-{id}-{k}", s.service)).group(&s.service);
                for (kind, &amount) in &s.resources {
                    task = task.resource(kind, amount);
                    host.resources.entry(kind.clone()).or_insert_with(|| placewise::snapshot::ResourceSpec::new(0.0));
                }
                if !s.ports.is_empty() {
                    task = task.label(HOST_PORTS_LABEL, "tcp/5432");
                }
                host = host.instance(task.terminating(rng.below(6) == 0));
            }
        }
        b = b.host(host);
    }
    b.build().expect("generated swarm clusters are valid")
}
