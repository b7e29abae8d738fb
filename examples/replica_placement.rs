//! Places the replicas of a few volumes on a small storage cluster in three zones, and explains
//! the one volume that cannot be placed.
//!
//! Run with `cargo run --release --example replica_placement`.
//!
//! Each volume's placements are recorded on the cluster (`ReplicaOutcome::apply`: the disk's
//! `scheduled` bytes grow and it lists the replica) before the next volume is scheduled, as
//! Longhorn's node controller would recompute them. Then the
//! same engine runs with the caller's own rules (a node filter, a disk weigher, a hard zone
//! level) through one reusable scratch.

use placewise::replica::{disk_weigher_fn, Level, ReplicaScheduler, ReplicaScratch, ReplicaSettings, Volume};
use placewise::snapshot::ClusterSpec;
use placewise::snapshot::DiskSpec;
use placewise::{filter_fn, Cluster, HostSpec};

const G: i64 = 1 << 30;

/// Six nodes, two per zone; `fast` nodes carry `ssd` disks.
fn cluster_spec() -> ClusterSpec {
    let node = |name: &str, zone: &str, fast: bool| {
        let mut h = HostSpec::new(name).zone(zone);
        if fast {
            h = h.label("fast", "").disk(DiskSpec::new("nvme0", 500 * G, 450 * G).tag("ssd"));
        }
        h.disk(DiskSpec::new("hdd0", 2000 * G, 1500 * G).reserved(200 * G).scheduled(600 * G))
    };
    let mut spec = ClusterSpec::default();
    spec.hosts = vec![
        node("node-a1", "zone-a", true),
        node("node-a2", "zone-a", false),
        node("node-b1", "zone-b", true),
        node("node-b2", "zone-b", false),
        node("node-c1", "zone-c", false),
        node("node-c2", "zone-c", false),
    ];
    spec
}

fn volumes() -> Vec<Volume> {
    let mut db = Volume::new("pvc-postgres", 200 * G, 2);
    db.node_selector = vec!["fast".into()];
    db.disk_selector = vec!["ssd".into()];
    let logs = Volume::new("pvc-logs", 400 * G, 3);
    let mut cache = Volume::new("pvc-cache", 50 * G, 2);
    cache.disk_selector = vec!["ssd".into()];
    // Only two nodes have `ssd` disks, and postgres already took 200G of each 500G disk.
    let mut big = Volume::new("pvc-analytics", 300 * G, 3);
    big.disk_selector = vec!["ssd".into()];
    vec![db, logs, cache, big]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let spec = cluster_spec();
    let mut cluster = Cluster::from_spec(&spec)?;
    let settings = ReplicaSettings::from_pairs([("storage-minimal-available-percentage", "10")])?;
    let scheduler = ReplicaScheduler::builder(settings).seed(7).explain(true).build()?;

    println!("{:<14} {:<24} {:<8} {:<7} {:<6}", "volume", "replica", "node", "zone", "disk");
    for volume in volumes() {
        let result = scheduler.schedule(&cluster, &volume, &[], 0)?;
        for (name, outcome) in &result.selections {
            let Some(p) = &outcome.placement else { continue };
            let zone = spec.hosts[p.host.index()].topology.get("zone").map_or("", String::as_str);
            println!("{:<14} {:<24} {:<8} {:<7} {:<6}", volume.name, name, p.node_id, zone, p.disk_id);
        }
        // Record the placements so the next volume sees the disks' new scheduled totals.
        cluster = result.apply(&cluster, &volume)?;
        let Some(message) = result.condition_message() else { continue };
        println!("\n{}: Scheduled=False, \"{message}\"", volume.name);
        // Every failed replica has the same story here: explain the first one.
        let Some((name, outcome)) = result.selections.iter().find(|(_, o)| o.placement.is_none()) else { continue };
        let e = &outcome.explanation;
        println!("  {name}: reasons \"{}\"; {e}", outcome.reasons.joined());
        // Every node and disk left out, with the rule that excluded it.
        for v in e.verdicts.iter().filter(|v| !v.passed) {
            let at = match &v.disk {
                Some(disk) => format!("disk {}/{disk}", v.host),
                None => format!("node {}", v.host),
            };
            let (rule, why) = (v.filter.as_deref().unwrap_or(""), v.reason.as_deref().unwrap_or(""));
            println!("    {at:<16} {rule}: {why}");
        }
        println!();
    }
    composed(&Cluster::from_spec(&cluster_spec())?)?;
    Ok(())
}

/// The same engine with the caller's rules: no replica on `node-a1` (under maintenance), at most
/// one replica per zone (a hard level over the zone topology level), and among equal nodes the
/// disk with the fewest scheduled replicas. One scratch serves the stream of volumes.
fn composed(cluster: &Cluster) -> Result<(), Box<dyn std::error::Error>> {
    let scheduler = ReplicaScheduler::builder(ReplicaSettings::default())
        .filter(filter_fn("maintenance", |cx, h| cx.cluster().host_name(h) != "node-a1"))
        .disk_weigher(disk_weigher_fn("fewer replicas", |cx| -(cx.disk().scheduled_replicas.len() as f64)), 1.0)
        .level(Level::hard("zone"))
        .explain(true)
        .build()?;
    let mut scratch = ReplicaScratch::new();
    println!("with the caller's rules (maintenance filter, one replica per zone):");
    for volume in [Volume::new("pvc-a", 10 * G, 3), Volume::new("pvc-b", 10 * G, 4)] {
        let result = scheduler.schedule_with(&mut scratch, cluster, &volume, &[], 0)?;
        let placed: Vec<String> = result.placed().map(|(_, p)| format!("{}/{}", p.node_id, p.disk_id)).collect();
        println!("  {}: {}", volume.name, placed.join(", "));
        if let Some((name, outcome)) = result.selections.iter().find(|(_, o)| o.placement.is_none()) {
            let hooks = ["maintenance", "zone anti-affinity"];
            for v in outcome.explanation.verdicts.iter().filter(|v| hooks.contains(&v.filter.as_deref().unwrap_or("")))
            {
                println!("    {name}: {} left out by {}", v.host, v.reason.as_deref().unwrap_or(""));
            }
        }
    }
    println!("  (snapshot prepared {} time(s) for both volumes)", scratch.rebuilds());
    Ok(())
}
