//! Places three services on two datacenters of three rows of four racks, and prints where each
//! went, level by level, as a small tree.
//!
//! Run with `cargo run --release --example spread`.
//!
//! - `web` spreads over datacenter, then row, then rack (SwarmKit's compatible mode);
//! - `db` spreads over datacenters and packs into one rack within each (balanced mode);
//! - `batch` is weighted 70/30 between the datacenters.
//!
//! Each service's tasks join the snapshot before the next one is placed.

use placewise::snapshot::InstanceSpec;
use placewise::spread::{BranchReport, Preference, SpreadMode, SpreadRequest, SpreadScheduler};
use placewise::{Cluster, ClusterEvent, HostSpec};

/// Two nodes per rack; `dc2` has a smaller third row.
fn cluster() -> Result<Cluster, placewise::BuildError> {
    let mut b = Cluster::builder();
    for dc in ["dc1", "dc2"] {
        for row in ["row1", "row2", "row3"] {
            let racks = if dc == "dc2" && row == "row3" { 2 } else { 4 };
            for rack in 1..=racks {
                for n in 1..=2 {
                    b = b.host(
                        HostSpec::new(format!("{dc}-{row}-r{rack}-n{n}"))
                            .label("dc", dc)
                            .label("row", row)
                            .label("rack", format!("r{rack}"))
                            .memory_mb(16384.0),
                    );
                }
            }
        }
    }
    b.build()
}

/// Prints the branches that received tasks: `value: placed` per line, indented by level.
fn print_tree(branch: &BranchReport, depth: usize) {
    for child in branch.children.iter().filter(|c| c.placed > 0) {
        let label = child.descriptor.as_deref().unwrap_or("").trim_start_matches("node.labels.");
        println!("{:indent$}{label}={}: {}", "", child.value, child.placed, indent = 2 * depth + 2);
        print_tree(child, depth + 1);
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut cluster = cluster()?;
    let scheduler = SpreadScheduler::new();
    let requests = [
        SpreadRequest::new("web", 24)
            .preference(Preference::spread("node.labels.dc"))
            .preference(Preference::spread("node.labels.row"))
            .preference(Preference::spread("node.labels.rack"))
            .resource("memory_mb", 1024.0),
        SpreadRequest::new("db", 4)
            .preference(Preference::spread("dc"))
            .preference(Preference::pack("rack"))
            .max_replicas(1)
            .mode(SpreadMode::Balanced),
        SpreadRequest::new("batch", 10).preference(Preference::percent("dc", [("dc1", 70.0), ("dc2", 30.0)])),
    ];
    for request in &requests {
        let out = scheduler.schedule(&cluster, request)?;
        println!(
            "{} ({:?}): {} placed, {} unplaced",
            request.service,
            request.mode,
            out.selections.len(),
            out.unplaced
        );
        print_tree(&out.tree, 0);
        if let Some(message) = out.message() {
            println!("  {message}");
        }
        for a in &out.selections {
            let instance = InstanceSpec::new(format!("{}-{}", request.service, a.task))
                .group(request.service.clone())
                .resource("memory_mb", request.resources.get("memory_mb").copied().unwrap_or(0.0));
            cluster = cluster.apply(&ClusterEvent::InstancePlaced { host: a.host_name.clone(), instance })?;
        }
    }
    // The full explanation of one more, uneven batch of web: existing, asked and placed per branch.
    let more = SpreadRequest::new("web", 5)
        .preference(Preference::spread("dc"))
        .preference(Preference::spread("row"))
        .mode(SpreadMode::Balanced);
    let out = scheduler.schedule(&cluster, &more)?;
    println!("web +5 (Balanced), explained:\n{}", out.tree);
    Ok(())
}
