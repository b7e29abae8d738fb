//! How many more volumes the replica engine places: [`volumes`].

use crate::error::EventError;
use crate::id::{DiskId, HostId};
use crate::replica::{ReplicaScheduler, Volume};
use crate::snapshot::{Cluster, ClusterEvent};

/// The answer of [`volumes`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct VolumeCapacity {
    /// Volumes placed in full, one after another.
    pub total: u32,
    /// Whether the count stopped at the caller's limit rather than at a failure.
    pub capped: bool,
    /// Replicas placed per host, by host id (hosts with none left out).
    pub replicas: Vec<(HostId, u32)>,
    /// Replicas placed per disk, `(host, disk, replicas)` in id order.
    pub disks: Vec<(HostId, DiskId, u32)>,
    /// Why the next volume does not place: the volume's `Scheduled=False` message
    /// ([`VolumeSchedule::condition_message`](crate::replica::VolumeSchedule::condition_message)).
    pub stop: Option<String>,
    /// The cluster with every counted volume's replicas written into its disks' `scheduled`
    /// bytes and scheduled-replica lists.
    pub cluster: Cluster,
}

/// How many more volumes like `volume` (its size, replica count, selectors, anti-affinity)
/// `scheduler` places on `cluster`, one after another, as the engine would: each new volume
/// (named `<name>`, `<name>-1`, `<name>-2` …) is scheduled by
/// [`ReplicaScheduler::schedule_volume`] on a snapshot in which every earlier volume's replicas
/// hold their disk space, and counting stops at the first volume that does not place every
/// replica, or at `limit`. Greedy placement is what "can be placed" means for this engine: it
/// has no global packing, and an operator adding volumes gets exactly this sequence.
///
/// Computes in O(volumes × replicas × (hosts + disks)): one engine call per volume (its
/// per-call preparation included) and one copy-on-write snapshot update per replica (64 hosts'
/// hot columns and the chunk list).
///
/// # Errors
///
/// [`EventError`] only if a placed disk vanished from the snapshot, which the engine never
/// returns; bad volumes are outcomes (`stop`), as in the engine.
pub fn volumes(
    scheduler: &ReplicaScheduler,
    cluster: &Cluster,
    volume: &Volume,
    limit: u32,
) -> Result<VolumeCapacity, EventError> {
    let mut current = cluster.clone();
    let mut per_disk: Vec<(HostId, DiskId, u32)> = Vec::new();
    let mut stop = None;
    let mut total = 0;
    let mut next = volume.clone();
    while total < limit {
        next.name = if total == 0 { volume.name.clone() } else { format!("{}-{total}", volume.name) };
        let outcome = scheduler.schedule_volume(&current, &next, &[], 0);
        let placed: Vec<_> = outcome.placed().map(|(name, p)| (name.to_owned(), p.host, p.disk)).collect();
        if let Some(message) = outcome.condition_message() {
            stop = Some(message);
            break;
        }
        if placed.len() < volume.number_of_replicas as usize {
            stop = Some("replica scheduling failed".to_owned());
            break;
        }
        for (name, host, disk) in placed {
            current = take_space(&current, host, disk, &name, volume.size)?;
            match per_disk.iter_mut().find(|(h, d, _)| *h == host && *d == disk) {
                Some((_, _, n)) => *n += 1,
                None => per_disk.push((host, disk, 1)),
            }
        }
        total += 1;
    }
    per_disk.sort_by_key(|&(h, d, _)| (h, d));
    let mut replicas: Vec<(HostId, u32)> = Vec::new();
    for &(h, _, n) in &per_disk {
        match replicas.last_mut() {
            Some((last, m)) if *last == h => *m += n,
            _ => replicas.push((h, n)),
        }
    }
    Ok(VolumeCapacity { total, capped: stop.is_none(), replicas, disks: per_disk, stop, cluster: current })
}

/// `cluster` with replica `name` of `size` bytes counted on `disk` of `host`.
fn take_space(cluster: &Cluster, host: HostId, disk: DiskId, name: &str, size: i64) -> Result<Cluster, EventError> {
    let host_name = cluster.host_name(host).to_owned();
    let spec = cluster
        .host_to_spec(host)
        .and_then(|h| h.disks.into_iter().nth(disk.index()))
        .ok_or_else(|| EventError::UnknownHost { name: host_name.clone() })?;
    let mut spec = spec;
    spec.scheduled += size;
    spec.scheduled_replicas.push(name.to_owned());
    cluster.apply(&ClusterEvent::DiskUpdated { host: host_name, disk: spec })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replica::ReplicaSettings;
    use crate::snapshot::{DiskSpec, HostSpec};

    const G: i64 = 1 << 30;

    #[test]
    fn three_replica_volumes_until_the_smallest_disk_runs_out() {
        let cluster = Cluster::builder()
            .host(HostSpec::new("n1").zone("z1").disk(DiskSpec::new("d1", 100 * G, 100 * G)))
            .host(HostSpec::new("n2").zone("z2").disk(DiskSpec::new("d1", 100 * G, 100 * G)))
            .host(HostSpec::new("n3").zone("z3").disk(DiskSpec::new("d1", 30 * G, 30 * G)))
            .build()
            .unwrap();
        let s = ReplicaScheduler::new(ReplicaSettings::default()).unwrap();
        let cap = volumes(&s, &cluster, &Volume::new("v", 10 * G, 3), 1000).unwrap();
        // Over-provisioning 100 %, minimal available 25 %: n3 takes what 30 GiB allows.
        assert!(cap.total > 0 && cap.total < 10, "{cap:?}");
        assert!(!cap.capped);
        assert!(cap.stop.is_some());
        assert_eq!(cap.replicas.len(), 3);
        assert!(cap.replicas.iter().all(|&(_, n)| n == cap.total));
        let again = s.schedule_volume(&cap.cluster, &Volume::new("w", 10 * G, 3), &[], 0);
        assert!(again.condition_message().is_some(), "the next volume must fail");
    }

    #[test]
    fn the_limit_caps_the_count() {
        let cluster =
            Cluster::builder().host(HostSpec::new("n1").disk(DiskSpec::new("d1", 100 * G, 100 * G))).build().unwrap();
        let s = ReplicaScheduler::new(ReplicaSettings::default()).unwrap();
        let cap = volumes(&s, &cluster, &Volume::new("v", G, 1), 3).unwrap();
        assert_eq!((cap.total, cap.capped), (3, true));
    }
}
