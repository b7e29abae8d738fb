//! An edge site of twelve hosts with labels, local volumes, GPUs, cameras and per-host ingress
//! pools; a few services are placed, then a host fails and the failure handling's timeline is
//! printed with what the scheduler does at each step.
//!
//! Run with `cargo run --release --example edge_site`.

use placewise::service::{
    ActionKind, Decision, EdgeHost, FailureMonitor, HostEvent, IngressAllocation, ServiceOutcome, ServiceRequest,
    ServiceScheduler, ServiceSpec, Site, VolumeRequest,
};
use placewise::snapshot::StateChange;
use placewise::{Cluster, ClusterEvent};
use std::error::Error;
use std::time::Duration;

/// Twelve hosts: four with GPUs and SSDs in the back room, four with cameras on the shop floor,
/// four general hosts; each has a small ingress pool.
fn site() -> Result<Cluster, Box<dyn Error>> {
    let mut b = Cluster::builder();
    for i in 0..12 {
        let mut h = EdgeHost::new(format!("edge-{i:02}")).memory_mb(16_384.0).cpus(8.0).ingress_addresses(2);
        h = match i / 4 {
            0 => h
                .label("room", "back")
                .gpus(1)
                .volume("nvme", 200_000.0, &[("type", "ssd")])
                .container_layer_mb(20_000.0),
            1 => h.label("room", "floor").device("cam0", &[("camera", "usb"), ("resolution", "4k")]),
            _ => h.label("room", "office").volume("disk", 500_000.0, &[("type", "hdd")]),
        };
        b = b.host(h.build());
    }
    Ok(b.build()?)
}

fn services() -> Result<Vec<ServiceSpec>, Box<dyn Error>> {
    Ok(vec![
        ServiceSpec::replicated("vision", "detector", 2)
            .match_host_labels("room = back".parse()?)
            .gpus(1)
            .memory_mb(4096.0)
            .volume(VolumeRequest::ephemeral("frames", 50_000.0).labels("type = ssd".parse()?)),
        ServiceSpec::replicated("vision", "feed", 4)
            .device("camera = usb and resolution ~ '^4k$'".parse()?)
            .memory_mb(512.0)
            .preferred_anti_affinity("detector"),
        ServiceSpec::replicated("vision", "ui", 1).ingress().memory_mb(1024.0).preferred_affinity("detector"),
        ServiceSpec::replicated("shop", "pos", 3).ingress().memory_mb(2048.0),
        ServiceSpec::replicated("shop", "ledger", 1)
            .memory_mb(2048.0)
            .volume(VolumeRequest::persistent("db", 100_000.0).labels("type = hdd".parse()?)),
        ServiceSpec::one_per_matching_host("ops", "metrics").match_host_labels("room = back or room = floor".parse()?),
        ServiceSpec::replicated("vision", "trainer", 1).gpus(2).memory_mb(8192.0),
    ])
}

fn print(outcome: &ServiceOutcome) {
    for d in &outcome.decisions {
        match d {
            Decision::Placed { instance, host, key } => {
                let counts = (key.same_live, key.same_delayed, key.other_live, key.other_delayed);
                println!("  placed  {instance:<24} on {host}   counts {counts:?}")
            }
            Decision::Moved { instance, from, to, .. } => println!("  moved   {instance:<24} {from} -> {to}"),
            Decision::Removed { instance, host } => println!("  removed {instance:<24} from {host}"),
            Decision::Kept { .. } => {}
            _ => println!("  {d:?}"),
        }
    }
    for u in &outcome.unschedulable {
        println!("  {u}");
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let cluster = site()?;
    let site_data = Site::new(&cluster, IngressAllocation::HostPools)?;
    let request = ServiceRequest::new(site_data, services()?);
    let scheduler = ServiceScheduler::new();

    println!("Placing {} services on {} hosts:", request.services.len(), cluster.len());
    let placed = scheduler.schedule(&cluster, &request)?;
    print(&placed);
    let mut cluster = placed.cluster;

    let kept = scheduler.schedule(&cluster, &request)?;
    println!(
        "\nRestarting everything: {} instances kept, {} events.",
        kept.decisions.iter().filter(|d| matches!(d, Decision::Kept { .. })).count(),
        kept.events.len()
    );

    // The host running the ui (one replica), a detector (two replicas) and a metrics agent (one
    // per host) fails: only the ui moves, to the other detector host (its preferred affinity).
    let failed = cluster
        .hosts()
        .find(|(_, h)| h.has_instance("vision/ui/0"))
        .map(|(id, _)| cluster.host_name(id).to_owned())
        .ok_or("ui not placed")?;
    println!("\nTimeline for a failure of {failed}:");
    let s = Duration::from_secs;
    let mut monitor = FailureMonitor::default();
    let mut actions = monitor.handle(s(0), &failed, HostEvent::HostDown);
    cluster = cluster
        .apply(&ClusterEvent::HostStateChanged { host: failed.clone(), change: StateChange::default().up(false) })?;
    while let Some(next) = monitor.next_deadline() {
        actions.extend(monitor.advance(next));
    }
    for a in &actions {
        println!("  t={:>3}s  {:<10} {:?}", a.at.as_secs(), a.host, a.kind);
        if let ActionKind::Reschedule { scope } = a.kind {
            let out = scheduler.reschedule(&cluster, &request, &a.host, scope)?;
            print(&out);
            cluster = out.cluster;
        }
    }

    println!("\nThe host comes back at t=120s:");
    for a in monitor.handle(s(120), &failed, HostEvent::HostUp) {
        println!("  t={:>3}s  {:<10} {:?}  (nothing moves back)", a.at.as_secs(), a.host, a.kind);
    }

    let plan = scheduler.rebalance_plan(&cluster, &request)?;
    println!("\nRebalance plan on request ({} moves, not applied):", plan.len());
    for m in &plan {
        println!("  {:<24} {} -> {}", m.instance, m.from, m.to);
    }
    Ok(())
}
