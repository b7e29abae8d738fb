//! A placement written back: the events that record a scheduled volume on the snapshot.
//!
//! Longhorn records a scheduled replica on its disk: the node controller adds the volume's
//! `spec.size` to the disk's `storageScheduled` and the replica to its `scheduledReplica` map.
//! `storageAvailable`, the filesystem's free space, does not drop until data is written, so a
//! record leaves it as it is. [`ReplicaOutcome::events`] and [`ReplicaOutcome::apply`] write an
//! outcome's placements so; [`capacity::volumes`](crate::capacity::volumes) counts each volume
//! through the same rule ([`record`]).

use super::{ReplicaError, ReplicaOutcome, Volume};
use crate::error::EventError;
use crate::id::{DiskId, HostId};
use crate::snapshot::{Cluster, ClusterEvent, DiskSpec};

/// Records replica `name` of a `size`-byte volume in its disk's spec: `size` more bytes
/// scheduled (saturating) and the replica in its scheduled list.
pub(crate) fn record(spec: &mut DiskSpec, name: &str, size: i64) {
    spec.scheduled = spec.scheduled.saturating_add(size);
    spec.scheduled_replicas.push(name.to_owned());
}

/// The spec of disk `disk` of host `host` in `cluster`, to record a replica in.
///
/// # Errors
///
/// [`EventError::UnknownHost`] or [`EventError::UnknownDisk`] when the snapshot has no such
/// host or disk.
pub(crate) fn disk_spec(cluster: &Cluster, host: HostId, disk: DiskId) -> Result<DiskSpec, EventError> {
    if cluster.host(host).is_none() {
        return Err(EventError::UnknownHost { name: format!("#{}", host.index()) });
    }
    cluster.disk_to_spec(host, disk).ok_or_else(|| EventError::UnknownDisk {
        host: cluster.host_name(host).to_owned(),
        disk: format!("#{}", disk.index()),
    })
}

/// The `DiskUpdated` event of `spec` on host `host`.
pub(crate) fn disk_event(cluster: &Cluster, host: HostId, spec: DiskSpec) -> ClusterEvent {
    ClusterEvent::DiskUpdated { host: cluster.host_name(host).to_owned(), disk: spec }
}

impl ReplicaOutcome {
    /// The events that record this outcome's placements on `cluster`, the snapshot it was
    /// scheduled on (or a later one holding the same hosts and disks): one
    /// [`ClusterEvent::DiskUpdated`] per placed replica, in the order placed, each adding
    /// `volume.size` to the disk's `scheduled` bytes and the replica's name to its
    /// `scheduled_replicas`, with `available` unchanged (Longhorn's `storageAvailable` is the
    /// filesystem's free space, which drops when data is written, not when a replica is
    /// scheduled). Two replicas on one disk give two events, the second carrying both.
    /// Applied in order ([`Cluster::apply`]), they give the snapshot the next volume sees:
    /// [`capacity::volumes`](crate::capacity::volumes) writes each counted volume so.
    ///
    /// Computes in O(placed replicas × the disk's scheduled replicas).
    ///
    /// # Errors
    ///
    /// [`ReplicaError::Record`] when `cluster` has no host or disk a placement names (by id
    /// and name): the outcome was scheduled on another snapshot.
    pub fn events(&self, cluster: &Cluster, volume: &Volume) -> Result<Vec<ClusterEvent>, ReplicaError> {
        let mut written: Vec<(HostId, DiskId, DiskSpec)> = Vec::new();
        let mut events = Vec::new();
        for (name, p) in self.placed() {
            let spec = match written.iter_mut().find(|(h, d, _)| (*h, *d) == (p.host, p.disk)) {
                Some((_, _, spec)) => spec,
                None => {
                    let spec = disk_spec(cluster, p.host, p.disk).map_err(|error| ReplicaError::Record { error })?;
                    if cluster.host_name(p.host) != p.node_id || spec.name != p.disk_id {
                        let error = EventError::UnknownDisk { host: p.node_id.clone(), disk: p.disk_id.clone() };
                        return Err(ReplicaError::Record { error });
                    }
                    written.push((p.host, p.disk, spec));
                    let last = written.len() - 1;
                    &mut written[last].2
                }
            };
            record(spec, name, volume.size);
            events.push(disk_event(cluster, p.host, spec.clone()));
        }
        Ok(events)
    }

    /// `cluster` with this outcome's placements recorded: its [`events`](ReplicaOutcome::events)
    /// applied in order. The snapshot to schedule the next volume on, so that it sees this one.
    ///
    /// Computes as [`events`](ReplicaOutcome::events), plus one copy-on-write update per event
    /// ([`Cluster::apply`]).
    ///
    /// # Errors
    ///
    /// As [`events`](ReplicaOutcome::events); [`ReplicaError::Record`] also when an event does
    /// not apply.
    pub fn apply(&self, cluster: &Cluster, volume: &Volume) -> Result<Cluster, ReplicaError> {
        let mut next = cluster.clone();
        for event in self.events(cluster, volume)? {
            next.apply_mut(&event).map_err(|error| ReplicaError::Record { error })?;
        }
        Ok(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replica::{ReplicaScheduler, ReplicaSettings};
    use crate::snapshot::HostSpec;

    const G: i64 = 1 << 30;

    /// One host per zone, each with a larger and a smaller disk.
    fn zones(larger: i64, smaller: i64) -> Cluster {
        let host = |n: &str, z: &str| {
            HostSpec::new(n)
                .zone(z)
                .disk(DiskSpec::new("d1", larger, larger).scheduled(G).scheduled_replica("old-r"))
                .disk(DiskSpec::new("d2", smaller, smaller))
        };
        Cluster::builder().host(host("n1", "z1")).host(host("n2", "z2")).host(host("n3", "z3")).build().unwrap()
    }

    /// Every event records its replica by the rule: the disk as it was plus `size` per replica
    /// of the outcome recorded on it so far, its name listed, `available` as it was.
    fn assert_recorded(before: &Cluster, outcome: &ReplicaOutcome, volume: &Volume, events: &[ClusterEvent]) {
        let placed: Vec<_> = outcome.placed().collect();
        assert_eq!(events.len(), placed.len());
        for (k, (event, (name, p))) in events.iter().zip(&placed).enumerate() {
            let ClusterEvent::DiskUpdated { host, disk } = event else { panic!("{event:?}") };
            let was = before.disk_to_spec(p.host, p.disk).unwrap();
            let earlier: Vec<&str> =
                placed[..=k].iter().filter(|(_, q)| (q.host, q.disk) == (p.host, p.disk)).map(|(n, _)| *n).collect();
            assert_eq!((host.as_str(), disk.name.as_str()), (p.node_id.as_str(), p.disk_id.as_str()));
            assert_eq!(disk.scheduled, was.scheduled + volume.size * earlier.len() as i64);
            assert_eq!((disk.available, disk.maximum, disk.reserved), (was.available, was.maximum, was.reserved));
            assert!(earlier
                .iter()
                .chain(was.scheduled_replicas.iter().map(String::as_str).collect::<Vec<_>>().iter())
                .all(|n| disk.scheduled_replicas.iter().any(|m| m == n)));
            assert!(earlier.contains(name));
        }
    }

    #[test]
    fn each_placed_replica_is_recorded_on_its_disk() {
        let settings = ReplicaSettings { replica_soft_anti_affinity: true, ..ReplicaSettings::default() };
        let soft = ReplicaScheduler::new(settings).unwrap();
        let hard = ReplicaScheduler::new(ReplicaSettings::default()).unwrap();
        let one_disk =
            Cluster::builder().host(HostSpec::new("n1").disk(DiskSpec::new("d1", 100 * G, 100 * G))).build().unwrap();
        // Two replicas on one disk (node and disk anti-affinity soft), and one per node.
        for (s, cluster, replicas) in [(&soft, &one_disk, 2), (&hard, &zones(100 * G, 95 * G), 3)] {
            let volume = Volume::new("vol", 10 * G, replicas);
            let outcome = s.schedule(cluster, &volume, &[], 0).unwrap();
            assert_eq!(outcome.placed().count(), replicas as usize);
            let events = outcome.events(cluster, &volume).unwrap();
            assert_recorded(cluster, &outcome, &volume, &events);
            let applied = outcome.apply(cluster, &volume).unwrap();
            let by_hand = events.iter().try_fold(cluster.clone(), |c, e| c.apply(e)).unwrap();
            assert_eq!(applied.to_spec(), by_hand.to_spec());
        }
    }

    #[test]
    fn a_second_volume_sees_the_first_as_capacity_counts_them() {
        let s = ReplicaScheduler::new(ReplicaSettings::default()).unwrap();
        // Roomy disks: the second volume places elsewhere than it would alone. Tight ones: it
        // does not place at all once the first holds its space.
        for (cluster, fits) in [(zones(100 * G, 95 * G), true), (zones(20 * G, 5 * G), false)] {
            let first = Volume::new("vol", 10 * G, 3);
            let second = Volume { name: "vol-1".into(), ..first.clone() };
            let one = s.schedule(&cluster, &first, &[], 0).unwrap();
            let after = one.apply(&cluster, &first).unwrap();
            let two = s.schedule(&after, &second, &[], 0).unwrap();
            let alone = s.schedule(&cluster, &second, &[], 0).unwrap();
            let at = |o: &ReplicaOutcome| o.placed().map(|(_, p)| (p.host, p.disk)).collect::<Vec<_>>();
            assert_ne!(at(&two), at(&alone), "the second volume must see the first");
            let cap = crate::capacity::volumes(&s, &cluster, &first, 2).unwrap();
            assert_eq!(two.condition_message().is_none(), fits);
            if fits {
                assert_eq!(cap.total, 2);
                let both = two.apply(&after, &second).unwrap();
                assert_eq!(cap.cluster.to_spec(), both.to_spec());
            } else {
                assert_eq!(cap.total, 1);
                assert_eq!(cap.cluster.to_spec(), after.to_spec());
            }
        }
    }

    #[test]
    fn a_placement_on_another_snapshot_is_refused() {
        let s = ReplicaScheduler::new(ReplicaSettings::default()).unwrap();
        let cluster = zones(100 * G, 95 * G);
        let volume = Volume::new("vol", G, 3);
        let outcome = s.schedule(&cluster, &volume, &[], 0).unwrap();
        let other =
            Cluster::builder().host(HostSpec::new("m1").disk(DiskSpec::new("d9", 100 * G, 100 * G))).build().unwrap();
        assert!(matches!(outcome.events(&other, &volume), Err(ReplicaError::Record { .. })));
        assert!(matches!(outcome.apply(&other, &volume), Err(ReplicaError::Record { .. })));
    }
}
