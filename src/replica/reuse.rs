//! Volume-controller helpers around one scheduling call: `CheckAndReuseFailedReplica`,
//! `RequireNewReplica` and the precheck (`FindDiskCandidates` before creating a replica).

use super::disk_stage::{caller_disk_reject, volume_fit};
use super::prep::Prep;
use super::space::{percent_of, DiskSpace};
use super::volume::{DataEngine, Replica, Robustness, Volume};
use super::{Ctx, ReplicaError, ReplicaScheduler};
use crate::id::HostId;
use crate::snapshot::Cluster;

/// Longhorn's `IsPotentiallyReusableReplica` with a hard node affinity: failed, with a node and
/// a disk, fewer than 5 rebuild retries, not evicting, and on `hard_node_affinity` when given.
fn potentially_reusable(r: &Replica, hard_node_affinity: &str) -> bool {
    r.is_failed() && r.is_potentially_reusable() && (hard_node_affinity.is_empty() || r.node_id == hard_node_affinity)
}

impl ReplicaScheduler {
    /// Longhorn's `CheckAndReuseFailedReplica`: the index of the failed replica the volume
    /// controller would reuse instead of creating a new one, or `None`.
    ///
    /// Only active replicas are considered; v2 volumes need `fast-replica-rebuild-enabled`. A
    /// failed replica is reusable when it is potentially reusable (node and disk set, fewer than 5
    /// rebuild retries, not evicting, on `hard_node_affinity` when that is non-empty), its node is
    /// schedulable (step 2), matches the topology requirement and has a running instance manager
    /// and (v1) engine image, and its disk is `Ready`, allows scheduling, is not evicting, fits
    /// the volume (type, size, disk tags) and passes the size-0 space check, or fails it only
    /// with `available > trunc(max × min% / 100)` (the `DiskPressure` exception).
    ///
    /// The reusable replicas' disks then go through the tier cascade and disk anti-affinity
    /// (steps 7–11) with failed replicas ignored and no space check, using only the reusable
    /// replicas' nodes as candidates; among the replicas on the surviving disks the one with the
    /// latest `failedAt` wins (ties: lowest host id, then disk id, then name).
    ///
    /// With the caller's hooks, a replica on a host a node filter rejects or on a disk a disk
    /// filter rejects is not reusable; levels and weighers do not take part in the reuse.
    ///
    /// Computes in O(hosts + disks + replicas²).
    ///
    /// # Errors
    ///
    /// [`ReplicaError::Hook`] when a caller node filter's `prepare` fails.
    pub fn reusable_failed_replica(
        &self,
        cluster: &Cluster,
        volume: &Volume,
        replicas: &[Replica],
        hard_node_affinity: &str,
    ) -> Result<Option<usize>, ReplicaError> {
        super::hooks::check_levels(cluster, self.hooks.as_deref())?;
        let cx = Ctx::new(self, cluster, volume)?;
        Ok(self.reusable_in(&cx, &mut Prep::new(&cx, &[]), replicas, hard_node_affinity))
    }

    /// [`ReplicaScheduler::reusable_failed_replica`] against prepared hosts (bound to
    /// `replicas` on return).
    pub(super) fn reusable_in(
        &self,
        cx: &Ctx<'_>,
        prep: &mut Prep,
        replicas: &[Replica],
        hard_node_affinity: &str,
    ) -> Option<usize> {
        let (cluster, volume) = (cx.cluster, cx.volume);
        if volume.data_engine == DataEngine::V2 && !self.settings.fast_replica_rebuild_enabled {
            return None;
        }
        prep.bind(cx, replicas);
        let prep = &*prep;
        let min_pct = self.settings.storage_minimal_available_percentage;
        // (replica index, host, disk index)
        let mut reusable: Vec<(usize, HostId, usize)> = Vec::new();
        for (i, (r, &(host, disk))) in replicas.iter().zip(&prep.replica_at).enumerate() {
            if !r.active || !potentially_reusable(r, hard_node_affinity) {
                continue;
            }
            let (Some(host), Some(disk)) = (host, disk) else { continue };
            let Some(hp) = prep.host(host) else { continue };
            // A host or disk the caller's filters reject is not reused either.
            if hp.step2.is_some() || !hp.topo_ok || !hp.engine_ok || hp.caller != 0 {
                continue;
            }
            if cx.hooks.is_some_and(|h| caller_disk_reject(cx, h, host, disk.index()).is_some()) {
                continue;
            }
            let Some(d) = cluster.host(host).and_then(|h| h.disks.get(disk.index())) else { continue };
            if !d.ready
                || !d.allow_scheduling
                || d.eviction_requested
                || volume_fit(cx, &crate::snapshot::HotDisk::of(d), Some(d)).is_err()
            {
                continue;
            }
            let space = DiskSpace::of(d);
            let size0 = super::space::is_schedulable_to_disk(
                0,
                0,
                space,
                min_pct,
                self.settings.storage_over_provisioning_percentage,
            );
            if size0.is_err() && space.available <= percent_of(space.maximum, min_pct) {
                continue;
            }
            reusable.push((i, host, disk.index()));
        }
        if reusable.is_empty() {
            return None;
        }
        // Candidate nodes: those of the reusable replicas, in id order.
        let mut nodes: Vec<HostId> = reusable.iter().map(|x| x.1).collect();
        nodes.sort_unstable();
        nodes.dedup();
        // Step 7 with failed replicas ignored: (host, only evicting) and (zone, only evicting).
        let mut used_nodes: Vec<(HostId, bool)> = Vec::new();
        let mut used_zones = Vec::new();
        for (r, &(host, _)) in replicas.iter().zip(&prep.replica_at) {
            let Some(host) = host.filter(|h| nodes.binary_search(h).is_ok()) else { continue };
            if r.deleted || r.is_failed() {
                continue;
            }
            match used_nodes.iter_mut().find(|x| x.0 == host) {
                Some(x) => x.1 &= r.eviction_requested,
                None => used_nodes.push((host, r.eviction_requested)),
            }
            let z = prep.host(host).map(|h| h.zone);
            match used_zones.iter_mut().find(|x: &&mut (_, bool)| x.0 == z) {
                Some(x) => x.1 &= r.eviction_requested,
                None => used_zones.push((z, r.eviction_requested)),
            }
        }
        used_nodes.sort_unstable();
        let node_used = |id: HostId| used_nodes.iter().find(|x| x.0 == id).map(|x| x.1);
        let zone_used = |id: HostId| {
            let z = prep.host(id).map(|h| h.zone);
            used_zones.iter().find(|x| x.0 == z).map(|x| x.1)
        };
        // Step 8.
        let (node_soft, zone_soft, disk_soft) = self.effective_anti_affinity(volume);
        let selected: Vec<HostId> =
            nodes.iter().copied().filter(|&id| prep.host(id).is_some_and(|h| h.selector_ok)).collect();
        let pressured = |id: HostId| prep.host(id).is_some_and(|h| h.pressured);
        let t_new_zone: Vec<HostId> = selected.iter().copied().filter(|&id| zone_used(id).is_none()).collect();
        let t_unused: Vec<HostId> =
            selected.iter().copied().filter(|&id| node_used(id).is_none() || pressured(id)).collect();
        let t_evict: Vec<HostId> = selected.iter().copied().filter(|&id| node_used(id) == Some(true)).collect();
        let t_evict_zone: Vec<HostId> =
            t_evict.iter().copied().filter(|&id| zone_used(id) == Some(true) || cx.best_effort).collect();
        let t_used: Vec<HostId> = used_nodes.iter().map(|x| x.0).collect();
        let mut tiers: Vec<&[HostId]> = vec![&t_new_zone];
        match (zone_soft, node_soft) {
            (false, _) => tiers.push(&t_evict_zone),
            (true, false) => {
                tiers.push(&t_unused);
                tiers.push(&t_evict);
            }
            (true, true) => {
                tiers.push(&t_unused);
                tiers.push(&t_used);
            }
        }
        // Steps 9–11: candidate disks are the reusable replicas' disks on the tier's nodes.
        let holds = |host: HostId, disk: usize| {
            replicas
                .iter()
                .zip(&prep.replica_at)
                .any(|(r, &(h, d))| !r.is_failed() && h == Some(host) && d.map(|d| d.index()) == Some(disk))
        };
        for tier in tiers {
            let mut disks: Vec<(HostId, usize)> =
                reusable.iter().filter(|x| tier.contains(&x.1)).map(|x| (x.1, x.2)).collect();
            disks.sort_unstable();
            disks.dedup();
            if disks.iter().any(|&(h, d)| !holds(h, d)) {
                disks.retain(|&(h, d)| !holds(h, d));
            } else if !disk_soft {
                disks.clear();
            }
            if disks.is_empty() {
                continue;
            }
            return reusable
                .iter()
                .filter(|x| disks.contains(&(x.1, x.2)))
                .min_by(|a, b| {
                    let fa = replicas[a.0].failed_at;
                    let fb = replicas[b.0].failed_at;
                    fb.cmp(&fa)
                        .then(a.1.cmp(&b.1))
                        .then(a.2.cmp(&b.2))
                        .then_with(|| replicas[a.0].name.cmp(&replicas[b.0].name))
                })
                .map(|x| x.0);
        }
        None
    }

    /// Longhorn's `RequireNewReplica`: how many seconds the volume controller waits before
    /// creating a new replica; 0 means "create now".
    ///
    /// Non-zero only when the volume is degraded, some replica is potentially reusable (failed,
    /// node and disk set, fewer than 5 retries, not evicting, on `hard_node_affinity` when that
    /// is non-empty), and `now` is before `lastDegradedAt + replica-replenishment-wait-interval`
    /// (at exact equality the wait is over). A degraded volume without `lastDegradedAt` does not
    /// wait. Computes in O(replicas).
    pub fn require_new_replica(
        &self,
        volume: &Volume,
        replicas: &[Replica],
        hard_node_affinity: &str,
        now: i64,
    ) -> i64 {
        if volume.robustness != Robustness::Degraded
            || !replicas.iter().any(|r| potentially_reusable(r, hard_node_affinity))
        {
            return 0;
        }
        let Some(degraded) = volume.last_degraded_at else { return 0 };
        let until = degraded.saturating_add(self.settings.replica_replenishment_wait_interval);
        until.saturating_sub(now).max(0)
    }

    /// The precheck the volume controller runs before creating a replica without a hard node
    /// affinity (`FindDiskCandidates`): schedules a fresh replica against `replicas` as they are
    /// (unscheduled siblings occupy nothing) and reports whether some disk would take it:
    /// `None` when one would, else the volume condition message: `precheck new replica failed:
    /// <joined keys>`, or `disks are unavailable` when no reason was recorded
    /// ([`Reasons::precheck_message`](super::Reasons::precheck_message)).
    ///
    /// # Errors
    ///
    /// [`ReplicaError::InvalidVolume`] or [`ReplicaError::DiskAboveMaximum`] for a volume or
    /// disk the scheduler refuses ([`Volume::validate`]); [`ReplicaError::Hook`] when a caller's
    /// node filter or weigher fails.
    pub fn precheck(
        &self,
        cluster: &Cluster,
        volume: &Volume,
        replicas: &[Replica],
        now: i64,
    ) -> Result<Option<String>, ReplicaError> {
        volume.validate()?;
        super::check_disks(cluster)?;
        super::hooks::check_levels(cluster, self.hooks.as_deref())?;
        let cx = Ctx::new(self, cluster, volume)?;
        let mut out = super::ReplicaSelection::new(cluster.len());
        self.precheck_in(&cx, &mut Prep::new(&cx, &[]), &mut replicas.to_vec(), now, &mut out)?;
        Ok(out.placement.is_none().then(|| out.reasons.precheck_message()))
    }

    /// [`ReplicaScheduler::precheck`] against prepared hosts: the probe replica's outcome, written
    /// into `out` (a fresh [`ReplicaSelection::new`](super::ReplicaSelection::new)). The
    /// probe is appended to `list` for the check and removed again; `prep` is left bound to
    /// `list`.
    pub(super) fn precheck_in(
        &self,
        cx: &Ctx<'_>,
        prep: &mut Prep,
        list: &mut Vec<Replica>,
        now: i64,
        out: &mut super::ReplicaSelection,
    ) -> Result<(), ReplicaError> {
        list.push(Replica::new(format!("{}-precheck", cx.volume.name)));
        prep.bind(cx, list);
        let done = self.schedule_into(cx, prep, list, list.len() - 1, now, out);
        list.pop();
        prep.bind(cx, list);
        done
    }
}
