//! Places the replicas of a 3-replica volume on a small zoned cluster and prints each decision.

use placewise::replica::{ReplicaScheduler, ReplicaSettings, Volume};
use placewise::{Cluster, DiskSpec, HostSpec};

const G: i64 = 1 << 30;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut builder = Cluster::builder();
    for (i, zone) in ["z1", "z1", "z2", "z3"].iter().enumerate() {
        builder = builder.host(
            HostSpec::new(format!("node-{i}"))
                .zone(*zone)
                .disk(DiskSpec::new("disk-a", 1000 * G, (900 - 100 * i as i64) * G))
                .disk(DiskSpec::new("disk-b", 1000 * G, 500 * G).scheduled(200 * G)),
        );
    }
    let cluster = builder.build()?;
    let settings = ReplicaSettings::from_pairs([("storage-minimal-available-percentage", "10")])?;
    let scheduler = ReplicaScheduler::new(settings)?.seed(7);
    let result = scheduler.schedule_volume(&cluster, &Volume::new("pvc-demo", 50 * G, 3), &[], 0);
    for (name, outcome) in &result.results {
        match &outcome.placement {
            Some(p) => println!("{name}: {}/{} ({})", p.node_id, p.disk_id, p.data_directory_name),
            None => println!("{name}: {}", outcome.reasons.condition_message()),
        }
    }
    Ok(())
}
