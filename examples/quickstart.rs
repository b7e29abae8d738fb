//! The main job on the bundled sample cluster (48 hosts in 3 zones): place a few requests,
//! record each placement as events so the next request sees it, and explain one that cannot fit.
//!
//! Run with `cargo run --release --example quickstart`.

use placewise::filter::builtin::LabelSelectorFilter;
use placewise::snapshot::InstanceSpec;
use placewise::{
    AvailabilityZoneFilter, Cluster, ClusterEvent, ComputeFilter, FreeResourceWeigher, Outcome, Request,
    ResourceFilter, Scheduler,
};
use std::error::Error;

const SAMPLE: &str = include_str!("data/sample_cluster.json");

fn main() -> Result<(), Box<dyn Error>> {
    let mut cluster = Cluster::from_json(SAMPLE)?;
    println!("sample cluster: {} hosts in zones {:?}\n", cluster.len(), zones(&cluster));

    // Spread: the host with the most free memory wins (positive multiplier).
    let spread = Scheduler::standard();
    // Stack: fill the fullest host that still fits (negative multipliers), for batch work.
    let stack = Scheduler::builder()
        .filter(ComputeFilter)
        .filter(ResourceFilter::new())
        .filter(AvailabilityZoneFilter)
        .filter(LabelSelectorFilter)
        .weigher(FreeResourceWeigher::ram(), -1.0)
        .weigher(FreeResourceWeigher::cpu(), -0.5)
        .build()?;

    let requests = [
        ("web", &spread, Request::new(6).vcpus(4.0).memory_mb(8192.0).disk_gb(40.0).group("web")),
        ("batch", &stack, Request::new(4).vcpus(16.0).memory_mb(32768.0).disk_gb(100.0).group("batch")),
        (
            "ml",
            &spread,
            Request::new(2)
                .vcpus(8.0)
                .memory_mb(32768.0)
                .resource("gpu", 1.0)
                .zone("az2")
                .selector("gpu = a100".parse()?),
        ),
        ("in-memory-db", &spread, Request::new(1).memory_mb(600_000.0).selector("kind = memory".parse()?)),
    ];

    for (name, scheduler, request) in &requests {
        let placement = scheduler.schedule(&cluster, request)?;
        print_placement(name, &cluster, &placement);
        cluster = record(&cluster, name, request, &placement)?;
    }
    println!("cluster generation after recording the placements: {}", cluster.generation());
    Ok(())
}

fn zones(cluster: &Cluster) -> Vec<&str> {
    let topology = cluster.topology();
    let level = topology.zone_level().unwrap_or(0);
    topology.domains(level).iter().map(|&z| cluster.resolve(z)).collect()
}

fn print_placement(name: &str, cluster: &Cluster, placement: &Outcome) {
    let status = if placement.is_complete() { "placed" } else { "NOT PLACED" };
    println!("{name}: {status} {}/{}", placement.selections.len(), placement.requested);
    for s in &placement.selections {
        println!(
            "  instance {} -> {:<12} zone {:<4} score {:.3}",
            s.instance,
            s.host_name,
            cluster.zone(s.host).unwrap_or("-"),
            s.scores.first().copied().unwrap_or(0.0)
        );
    }
    println!("  why: {}\n", placement.explanation);
}

/// Turns a placement into `InstancePlaced` events and applies them: a new snapshot, the old one
/// untouched.
fn record(cluster: &Cluster, name: &str, request: &Request, placement: &Outcome) -> Result<Cluster, Box<dyn Error>> {
    let mut next = cluster.clone();
    for s in &placement.selections {
        let mut instance = InstanceSpec::new(format!("{name}-{}", s.instance)).group(name);
        for (kind, &amount) in &request.resources {
            instance = instance.resource(kind.clone(), amount);
        }
        next = next.apply(&ClusterEvent::InstancePlaced { host: s.host_name.clone(), instance })?;
    }
    Ok(next)
}
