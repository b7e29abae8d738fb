//! How many more volumes the replica engine places: [`volumes`].

use crate::error::EventError;
use crate::id::{DiskId, HostId};
use crate::replica::{record, ReplicaOutcome, ReplicaScheduler, Volume};
use crate::snapshot::Cluster;
#[cfg(doc)]
use crate::snapshot::ClusterEvent;

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
    /// Why the next volume does not place: the binding rule of its first replica that fails
    /// ([`ReplicaSelection::binding`](crate::replica::ReplicaSelection::binding), its reason:
    /// the rule that ruled out the last candidate node or disk in Longhorn's step order, such
    /// as `insufficient storage` or `rack r2 already used (rack level, hard)`); the volume's
    /// `Scheduled=False` message when no replica names one (a precheck that stops creation);
    /// the error's text when the engine refuses the volume or snapshot. `None` when the count
    /// stopped at the limit.
    pub stop: Option<String>,
    /// The next volume's `Scheduled=False` message, as Longhorn writes it
    /// ([`ReplicaOutcome::condition_message`](crate::replica::ReplicaOutcome::condition_message)):
    /// Longhorn's joined reason keys, or `replica scheduling failed`. `None` when the count
    /// stopped at the limit or at an error.
    pub message: Option<String>,
    /// The cluster with every counted volume's replicas written into its disks' `scheduled`
    /// bytes and scheduled-replica lists.
    pub cluster: Cluster,
}

/// How many more volumes like `volume` (its size, replica count, selectors, anti-affinity)
/// `scheduler` places on `cluster`, one after another, as the engine would: each new volume
/// (named `<name>`, `<name>-1`, `<name>-2` …) is scheduled as
/// [`ReplicaScheduler::schedule`] schedules it on a snapshot in which every earlier
/// volume's replicas hold their disk space, and counting stops at the first volume that does not
/// place every replica, or at `limit`. Greedy placement is what "can be placed" means for this
/// engine: it has no global packing, and an operator adding volumes gets exactly this sequence.
///
/// The answer is always `volumes_stepwise`'s (one engine call per volume), in every field:
/// the count, the per-host and per-disk replicas, the stop message and the resulting cluster
/// (the same events in the same order). It is computed without an engine call per volume: the
/// volume's preparation is made once, and each volume then re-judges only the disks its
/// replicas landed on, choosing every replica by the engine's own rules (tier cascade, disk
/// anti-affinity, the disk choice with its tie-breaks) over a tree of per-host summaries. The
/// volume that stops the count is scheduled by the engine itself, which gives its message.
///
/// The count falls back to `volumes_stepwise` (same answer, its cost) for what it does not
/// reproduce: a scheduler with the caller's hooks
/// ([`ReplicaScheduler::builder`](crate::replica::ReplicaScheduler::builder) filters, weighers,
/// disk filters, disk weighers or levels: they may read anything, the replica lists included),
/// a volume with data locality, and a volume or snapshot the engine refuses
/// ([`Volume::validate`], a disk with more available space than its maximum).
///
/// Computes in O(hosts + disks) once, plus per counted volume O(replicas × ((zones + replicas)
/// × log hosts + replicas × the disks of the hosts holding them)), plus one engine call for the
/// volume that stops the count and one copy-on-write snapshot update per placed replica (64
/// hosts' hot columns and the chunk list, as [`Cluster::apply`]). On 10,000 hosts with 4 disks
/// each that is far below one engine call per volume (`benches/capacity.rs` measures both).
///
/// # Errors
///
/// [`EventError`] only if a placed disk vanished from the snapshot, which the engine never
/// returns. A volume or snapshot the engine refuses ([`ReplicaError`](crate::replica::ReplicaError))
/// stops the count where it is, with the error's text as `stop`.
pub fn volumes(
    scheduler: &ReplicaScheduler,
    cluster: &Cluster,
    volume: &Volume,
    limit: u32,
) -> Result<VolumeCapacity, EventError> {
    let mut run = Stepwise::new(cluster);
    if let Some(count) = scheduler.count_volumes(cluster, volume, limit) {
        // The next volume is the one that stops the count: scheduled with the explanation on,
        // it names its binding rule in the one engine call.
        run.explain_next = true;
        for (name, host, disk) in &count.placed {
            // The event's effect written directly (the stepwise count applies the event).
            if run.current.add_scheduled_replica(*host, *disk, name, volume.size) {
                run.placed.push((*host, *disk));
            } else {
                run.take(*host, *disk, name, volume.size)?;
            }
        }
        run.total = count.volumes;
    }
    run.finish(scheduler, volume, limit)
}

/// [`volumes`] the plain way, the reference it is tested against: one
/// [`ReplicaScheduler::schedule`] call per volume, each on the snapshot the earlier
/// volumes' replicas were written into (one [`ClusterEvent::DiskUpdated`] per replica, in the
/// order placed).
///
/// Computes in O(volumes × (hosts + disks + replicas × hosts)): one engine call per volume (its
/// per-call preparation included) and one copy-on-write snapshot update per replica.
///
/// # Errors
///
/// As [`volumes`].
#[cfg(feature = "reference")]
pub fn volumes_stepwise(
    scheduler: &ReplicaScheduler,
    cluster: &Cluster,
    volume: &Volume,
    limit: u32,
) -> Result<VolumeCapacity, EventError> {
    Stepwise::new(cluster).finish(scheduler, volume, limit)
}

/// The stepwise count's state: the snapshot so far, the replicas written, the volumes counted.
struct Stepwise {
    current: Cluster,
    placed: Vec<(HostId, DiskId)>,
    total: u32,
    /// Schedule the next volume with the explanation on: it is expected to stop the count.
    explain_next: bool,
}

impl Stepwise {
    fn new(cluster: &Cluster) -> Self {
        Stepwise { current: cluster.clone(), placed: Vec::new(), total: 0, explain_next: false }
    }

    /// Writes replica `name` of `size` bytes into `disk` of `host`. On error the snapshot may
    /// be partly changed (the count then returns the error).
    fn take(&mut self, host: HostId, disk: DiskId, name: &str, size: i64) -> Result<(), EventError> {
        take_space(&mut self.current, host, disk, name, size)?;
        self.placed.push((host, disk));
        Ok(())
    }

    /// Schedules volume after volume from where the count is, up to `limit`.
    fn finish(
        mut self,
        scheduler: &ReplicaScheduler,
        volume: &Volume,
        limit: u32,
    ) -> Result<VolumeCapacity, EventError> {
        let (mut stop, mut message) = (None, None);
        let mut next = volume.clone();
        let explaining = scheduler.explaining();
        while self.total < limit {
            let total = self.total;
            next.name = if total == 0 { volume.name.clone() } else { format!("{}-{total}", volume.name) };
            // Explanations change no decision: the answer is the same with either.
            let engine = match &explaining {
                Some(explaining) if std::mem::take(&mut self.explain_next) => explaining,
                _ => scheduler,
            };
            let explained = explaining.is_none() || !std::ptr::eq(engine, scheduler);
            let outcome = match engine.schedule(&self.current, &next, &[], 0) {
                Ok(outcome) => outcome,
                Err(error) => {
                    stop = Some(error.to_string());
                    break;
                }
            };
            let placed: Vec<_> = outcome.placed().map(|(name, p)| (name.to_owned(), p.host, p.disk)).collect();
            if let Some(said) = outcome.condition_message() {
                let binding = binding(explaining.as_ref().filter(|_| !explained), &self.current, &next, &outcome);
                stop = Some(binding.unwrap_or_else(|| said.clone()));
                message = Some(said);
                break;
            }
            if placed.len() < volume.number_of_replicas as usize {
                message = Some("replica scheduling failed".to_owned());
                stop = message.clone();
                break;
            }
            for (name, host, disk) in placed {
                self.take(host, disk, &name, volume.size)?;
            }
            self.total += 1;
        }
        self.placed.sort_unstable();
        let mut disks: Vec<(HostId, DiskId, u32)> = Vec::new();
        for &(h, d) in &self.placed {
            match disks.last_mut() {
                Some((lh, ld, n)) if (*lh, *ld) == (h, d) => *n += 1,
                _ => disks.push((h, d, 1)),
            }
        }
        let mut replicas: Vec<(HostId, u32)> = Vec::new();
        for &(h, _, n) in &disks {
            match replicas.last_mut() {
                Some((last, m)) if *last == h => *m += n,
                _ => replicas.push((h, n)),
            }
        }
        let capped = stop.is_none();
        Ok(VolumeCapacity { total: self.total, capped, replicas, disks, stop, message, cluster: self.current })
    }
}

/// The binding rule of `outcome`'s first replica that failed, by its reason
/// ([`ReplicaSelection::binding`](crate::replica::ReplicaSelection::binding)). An outcome
/// scheduled without the explanation is scheduled again by `explaining`, the scheduler with it
/// on (the same decisions): one more engine call, for the volume that stops the count only.
fn binding(
    explaining: Option<&ReplicaScheduler>,
    cluster: &Cluster,
    volume: &Volume,
    outcome: &ReplicaOutcome,
) -> Option<String> {
    let first =
        |o: &ReplicaOutcome| o.selections.iter().find(|(_, s)| s.placement.is_none()).map(|(_, s)| s.binding.clone());
    let binding = match explaining {
        None => first(outcome)?,
        Some(explaining) => first(&explaining.schedule(cluster, volume, &[], 0).ok()?)?,
    };
    binding.map(|b| b.reason)
}

/// Counts replica `name` of `size` bytes on `disk` of `host` in `cluster` as the replica engine
/// records a placement ([`ReplicaOutcome::events`](crate::replica::ReplicaOutcome::events): one
/// [`ClusterEvent::DiskUpdated`]), applied in place: the result is [`Cluster::apply`]'s.
fn take_space(cluster: &mut Cluster, host: HostId, disk: DiskId, name: &str, size: i64) -> Result<(), EventError> {
    let mut spec = record::disk_spec(cluster, host, disk)?;
    record::record(&mut spec, name, size);
    cluster.apply_mut(&record::disk_event(cluster, host, spec))
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
        let again = s.schedule(&cap.cluster, &Volume::new("w", 10 * G, 3), &[], 0).unwrap();
        assert!(again.condition_message().is_some(), "the next volume must fail");
        // Space is what ran out: the binding rule; Longhorn's message as Longhorn writes it.
        assert_eq!(cap.stop.as_deref(), Some("insufficient storage"));
        let next = Volume::new(format!("v-{}", cap.total), 10 * G, 3);
        assert_eq!(cap.message, s.schedule(&cap.cluster, &next, &[], 0).unwrap().condition_message());
    }

    #[test]
    fn the_stop_is_the_rule_of_the_last_candidate_ruled_out() {
        let host = |n: &str, z: &str, avail: i64| HostSpec::new(n).zone(z).disk(DiskSpec::new("d1", 100 * G, avail));
        // n4, in a used zone, is the last candidate; hard zone anti-affinity rules it out after
        // the node checks ruled out nothing and before any disk is looked at.
        let cluster = Cluster::builder()
            .host(host("n1", "z1", 90 * G))
            .host(host("n2", "z2", 90 * G))
            .host(host("n3", "z3", 90 * G))
            .host(host("n4", "z1", 90 * G))
            .build()
            .unwrap();
        let settings = ReplicaSettings { replica_zone_soft_anti_affinity: false, ..ReplicaSettings::default() };
        let s = ReplicaScheduler::new(settings).unwrap();
        let cap = volumes(&s, &cluster, &Volume::new("v", G, 4), 10).unwrap();
        assert_eq!(cap.total, 0);
        assert_eq!(cap.stop.as_deref(), Some("zone z1 already used (zone anti-affinity, hard)"));
        assert_eq!(cap.message.as_deref(), Some("replica scheduling failed"));
        // Soft zone anti-affinity: n4 is tried, and its disk's space is what rules it out.
        let cluster = Cluster::builder()
            .host(host("n1", "z1", 90 * G))
            .host(host("n2", "z2", 90 * G))
            .host(host("n3", "z3", 90 * G))
            .host(HostSpec::new("n4").zone("z1").disk(DiskSpec::new("d1", 100 * G, 90 * G).scheduled(95 * G)))
            .build()
            .unwrap();
        let s = ReplicaScheduler::new(ReplicaSettings::default()).unwrap();
        let cap = volumes(&s, &cluster, &Volume::new("v", 10 * G, 4), 10).unwrap();
        assert_eq!((cap.total, cap.stop.as_deref()), (0, Some("insufficient storage")));
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
