//! Plans for data locality and replica auto-balance: lists of moves, never applied.

use super::disk_stage::schedulable_condition;
use super::space::{is_pressure_move_target, is_schedulable_to_disk, is_under_pressure, DiskSpace};
use super::volume::{DataLocality, Replica, Robustness, Volume};
use super::{AutoBalance, ReplicaScheduler};
use crate::snapshot::Cluster;

/// What a move does.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MoveKind {
    /// Create a replica, optionally with a hard node affinity (a host name).
    AddReplica {
        /// The only host the new replica may go to, if any.
        hard_node_affinity: Option<String>,
    },
    /// Delete the named replica once the added one is rebuilt.
    DeleteReplica {
        /// The replica.
        name: String,
    },
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReplicaMove {
    /// What to do.
    pub kind: MoveKind,
    /// Why, in a few words.
    pub why: &'static str,
}

fn usable(r: &Replica) -> bool {
    !r.node_id.is_empty() && !r.is_failed() && !r.eviction_requested && r.active && !r.deleted
}

/// The best-effort data-locality plan: when the volume is healthy, attached, and has no usable
/// replica on the attached node, add one with a hard affinity to it, then delete the non-local
/// replica with the alphabetically smallest name. Empty otherwise (and always for
/// `strict-local`, whose single replica is created with the affinity).
pub fn plan_data_locality(cluster: &Cluster, volume: &Volume, replicas: &[Replica]) -> Vec<ReplicaMove> {
    if volume.data_locality != DataLocality::BestEffort
        || volume.node_id.is_empty()
        || volume.robustness != Robustness::Healthy
        || cluster.host_id(&volume.node_id).is_none()
        || replicas.iter().any(|r| usable(r) && r.node_id == volume.node_id)
    {
        return Vec::new();
    }
    let mut moves = vec![ReplicaMove {
        kind: MoveKind::AddReplica { hard_node_affinity: Some(volume.node_id.clone()) },
        why: "local replica",
    }];
    if let Some(victim) = replicas.iter().filter(|r| usable(r)).map(|r| &r.name).min() {
        moves.push(ReplicaMove { kind: MoveKind::DeleteReplica { name: victim.clone() }, why: "non-local replica" });
    }
    moves
}

/// The auto-balance plan for a healthy volume with all replicas usable.
///
/// 1. `least-effort` and `best-effort`: one added replica per missing zone (then per missing
///    node), capped by the ready, schedulable, engine-image-ready hosts (and their zones) holding
///    no replica; the normal scheduler then places each.
/// 2. `best-effort` only, when step 1 adds nothing: count evening. Per node (then per zone), the
///    *extras* are the replicas beyond the first on each owner; `adjust = most − least − 1`
///    replicas are added with a hard node affinity to the lowest-id least-loaded owner (for
///    zones: a ready host of a least-loaded zone holding no replica) that has a disk passing the
///    space check; with no such host the adds carry no affinity.
/// 3. `best-effort` with pressure% > 0, when nothing is left to even: one disk-pressure move. The
///    first replica (by name) on the first pressured disk (by host id, disk id) whose
///    replacement the scheduler, with a hard affinity to the same host, puts on another disk
///    of that host satisfying the move-target condition: an add with that affinity, then the
///    deletion of the pressured replica.
///
/// Steps 1 and 2 leave deletions to [`plan_cleanup`], run once the added replicas are rebuilt.
///
/// Step 3 here sees this volume's replicas only; [`plan_auto_balance_among`] applies Longhorn's
/// rule across every healthy volume.
pub fn plan_auto_balance(
    scheduler: &ReplicaScheduler,
    cluster: &Cluster,
    volume: &Volume,
    replicas: &[Replica],
) -> Vec<ReplicaMove> {
    plan_auto_balance_among(scheduler, cluster, volume, replicas, &[])
}

/// [`plan_auto_balance`] with the replicas of the cluster's *other* healthy volumes as
/// `neighbours` (their name, node and disk are read): a pressured disk's replica moves only
/// when it comes first in name order among the replicas of all healthy volumes on that disk,
/// as Longhorn's volume controller decides. Computes in O(disks × (replicas + neighbours)) for
/// step 3, plus one scheduling probe per qualifying disk.
pub fn plan_auto_balance_among(
    scheduler: &ReplicaScheduler,
    cluster: &Cluster,
    volume: &Volume,
    replicas: &[Replica],
    neighbours: &[Replica],
) -> Vec<ReplicaMove> {
    let mode = scheduler.effective_auto_balance(volume);
    let mut running: Vec<&Replica> = replicas.iter().filter(|r| usable(r)).collect();
    running.sort_by(|a, b| a.name.cmp(&b.name));
    if mode == AutoBalance::Disabled
        || volume.robustness != Robustness::Healthy
        || running.len() != volume.number_of_replicas as usize
    {
        return Vec::new();
    }
    let n = volume.number_of_replicas as usize;
    let zone_of = |name: &str| zone_name(cluster, name);
    let mut used_zones: Vec<String> = running.iter().map(|r| zone_of(&r.node_id)).collect();
    if !volume.node_id.is_empty() {
        used_zones.push(zone_of(&volume.node_id));
    }
    used_zones.sort();
    used_zones.dedup();
    let mut used_nodes: Vec<&str> = running.iter().map(|r| r.node_id.as_str()).collect();
    used_nodes.sort_unstable();
    used_nodes.dedup();
    let mut free_zones: Vec<String> = Vec::new();
    let mut free_nodes = 0usize;
    for (id, h) in cluster.hosts() {
        if !ready(h) || used_nodes.contains(&&*h.name) {
            continue;
        }
        free_nodes += 1;
        let z = cluster.zone(id).unwrap_or("").to_owned();
        if !used_zones.contains(&z) && !free_zones.contains(&z) {
            free_zones.push(z);
        }
    }
    let add = if used_zones.len() < n { (n - used_zones.len()).min(free_zones.len()) } else { 0 };
    let add = if add == 0 && used_nodes.len() < n { (n - used_nodes.len()).min(free_nodes) } else { add };
    if add > 0 || mode != AutoBalance::BestEffort {
        return adds(add, None, "auto-balance");
    }
    // Step 2: count evening, per node then per zone.
    if let Some(e) = best_effort(node_extras(cluster, n, &running)) {
        if e.adjust > 0 {
            let owners: Vec<&str> = e.least_owners.iter().map(String::as_str).collect();
            let target = first_schedulable(cluster, scheduler, volume, &owners);
            return adds(e.adjust, target, "auto-balance best-effort (node)");
        }
    }
    if let Some(e) = best_effort(zone_extras(cluster, n, volume, replicas, &running)) {
        if e.adjust > 0 {
            let mut hosts: Vec<(crate::id::HostId, &str)> = cluster
                .hosts()
                .filter(|(id, h)| {
                    ready(h)
                        && e.least_owners.iter().any(|z| z == cluster.zone(*id).unwrap_or(""))
                        && !replicas.iter().any(|r| r.node_id == *h.name)
                })
                .map(|(id, h)| (id, &*h.name))
                .collect();
            hosts.sort();
            let names: Vec<&str> = hosts.iter().map(|&(_, n)| n).collect();
            let target = first_schedulable(cluster, scheduler, volume, &names);
            return adds(e.adjust, target, "auto-balance best-effort (zone)");
        }
    }
    // Step 3: disk pressure.
    plan_disk_pressure(scheduler, cluster, volume, replicas, &running, neighbours)
}

/// Which healthy replica `cleanupAutoBalancedReplicas` deletes when the volume has more usable
/// replicas than `numberOfReplicas` (`None` when it has not, when auto-balance is disabled, or
/// when the deletion would re-unbalance).
///
/// Candidates: under `best-effort`, the extras of the most-loaded node (then zone), as in
/// [`plan_auto_balance`]; otherwise, or when those are empty, the replicas sharing the most
/// crowded disk, else node, else zone (groups of at least two; equal groups → lowest host id,
/// then disk id / zone name), else all. Among the candidates the one whose disk has the least
/// `storageAvailable` is deleted (a disk missing from the snapshot counts as 0), ties → smallest
/// name. The deletion is skipped when the remaining replicas would span fewer nodes, or fewer
/// zones, than `min(numberOfReplicas, before)`.
pub fn plan_cleanup(
    scheduler: &ReplicaScheduler,
    cluster: &Cluster,
    volume: &Volume,
    replicas: &[Replica],
) -> Option<String> {
    let mode = scheduler.effective_auto_balance(volume);
    let mut healthy: Vec<&Replica> = replicas.iter().filter(|r| usable(r)).collect();
    healthy.sort_by(|a, b| a.name.cmp(&b.name));
    let n = volume.number_of_replicas as usize;
    if mode == AutoBalance::Disabled || healthy.len() <= n {
        return None;
    }
    let mut names: Vec<String> = Vec::new();
    if mode == AutoBalance::BestEffort {
        names = best_effort(node_extras(cluster, n, &healthy)).map(|e| e.most).unwrap_or_default();
        if names.is_empty() {
            names =
                best_effort(zone_extras(cluster, n, volume, replicas, &healthy)).map(|e| e.most).unwrap_or_default();
        }
    }
    if names.is_empty() {
        names = preferred_deletion_candidates(cluster, &healthy);
    }
    let avail = |r: &Replica| {
        cluster
            .host_id(&r.node_id)
            .and_then(|id| cluster.host(id))
            .and_then(|h| h.disks.iter().find(|d| *d.name == *r.disk_id))
            .map_or(0, |d| d.available)
    };
    let victim = healthy.iter().filter(|r| names.contains(&r.name)).min_by_key(|r| (avail(r), r.name.clone()))?;
    let spread = |rs: &[&&Replica]| {
        let mut nodes: Vec<&str> = rs.iter().map(|r| r.node_id.as_str()).collect();
        nodes.sort_unstable();
        nodes.dedup();
        let mut zones: Vec<String> = rs.iter().map(|r| zone_name(cluster, &r.node_id)).collect();
        zones.sort();
        zones.dedup();
        (nodes.len(), zones.len())
    };
    let all: Vec<&&Replica> = healthy.iter().collect();
    let rest: Vec<&&Replica> = healthy.iter().filter(|r| r.name != victim.name).collect();
    let ((nb, zb), (na, za)) = (spread(&all), spread(&rest));
    if na < nb.min(n) || za < zb.min(n) {
        return None;
    }
    Some(victim.name.clone())
}

fn zone_name(cluster: &Cluster, node: &str) -> String {
    cluster.host_id(node).and_then(|id| cluster.zone(id)).unwrap_or("").to_owned()
}

fn ready(h: &crate::snapshot::Host) -> bool {
    h.state.up
        && h.state.enabled
        && !h.state.evicting
        && !h.state.cordoned
        && super::attr_bool(h, super::node::ATTR_ENGINE_IMAGE_DEPLOYED, true)
}

fn adds(count: usize, affinity: Option<String>, why: &'static str) -> Vec<ReplicaMove> {
    (0..count)
        .map(|_| ReplicaMove { kind: MoveKind::AddReplica { hard_node_affinity: affinity.clone() }, why })
        .collect()
}

/// Owners (node or zone names) in a deterministic order with their extra replicas' names, and
/// the least-effort adjust count computed alongside (Longhorn's `replicaAutoBalanceCount`).
struct Extras {
    adjust: usize,
    owners: Vec<(String, Vec<String>)>,
}

/// The best-effort result: replicas to add, the most-loaded owner's extras, the least-loaded owners.
struct Evening {
    adjust: usize,
    most: Vec<String>,
    least_owners: Vec<String>,
}

fn owner_entry<'a>(owners: &'a mut [(String, Vec<String>)], key: &str) -> Option<&'a mut Vec<String>> {
    owners.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// `getReplicaCountForAutoBalanceNode`: running replicas on ready hosts, grouped by host (in
/// host-id order); the first replica of each host (by name) is not an extra.
fn node_extras(cluster: &Cluster, n: usize, running: &[&Replica]) -> Extras {
    let mut hosts: Vec<(crate::id::HostId, &Replica)> = running
        .iter()
        .filter_map(|r| {
            cluster.host_id(&r.node_id).filter(|&id| cluster.host(id).is_some_and(ready)).map(|id| (id, *r))
        })
        .collect();
    hosts.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.name.cmp(&b.1.name)));
    let mut owners: Vec<(String, Vec<String>)> = Vec::new();
    for (_, r) in hosts {
        match owner_entry(&mut owners, &r.node_id) {
            Some(v) => v.push(r.name.clone()),
            None => owners.push((r.node_id.clone(), Vec::new())),
        }
    }
    let ready_count = cluster.hosts().filter(|(_, h)| ready(h)).count();
    let adjust = if n == owners.len() || owners.len() >= ready_count {
        0
    } else {
        n.saturating_sub(owners.len()).min(ready_count - owners.len())
    };
    Extras { adjust, owners }
}

/// `getReplicaCountForAutoBalanceZone`: the engine node's zone first (when a replica is on the
/// engine node), then running replicas on ready hosts other than the engine node, grouped by
/// zone; the first replica of each zone is not an extra.
fn zone_extras(cluster: &Cluster, n: usize, volume: &Volume, replicas: &[Replica], running: &[&Replica]) -> Extras {
    let ready_host = |name: &str| cluster.host_id(name).and_then(|id| cluster.host(id)).is_some_and(ready);
    let mut owners: Vec<(String, Vec<String>)> = Vec::new();
    let mut used_nodes: Vec<&str> = Vec::new();
    if !volume.node_id.is_empty() && ready_host(&volume.node_id) && replicas.iter().any(|r| r.node_id == volume.node_id)
    {
        owners.push((zone_name(cluster, &volume.node_id), Vec::new()));
    }
    let mut rs: Vec<(crate::id::HostId, &Replica)> = running
        .iter()
        .filter(|r| r.node_id != volume.node_id && ready_host(&r.node_id))
        .filter_map(|r| cluster.host_id(&r.node_id).map(|id| (id, *r)))
        .collect();
    rs.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.name.cmp(&b.1.name)));
    for (_, r) in rs {
        let z = zone_name(cluster, &r.node_id);
        match owner_entry(&mut owners, &z) {
            Some(v) => v.push(r.name.clone()),
            None => owners.push((z, Vec::new())),
        }
        if !used_nodes.contains(&r.node_id.as_str()) {
            used_nodes.push(&r.node_id);
        }
    }
    if n == owners.len() {
        return Extras { adjust: 0, owners };
    }
    let mut unused: Vec<&str> = Vec::new();
    for (id, h) in cluster.hosts() {
        let z = cluster.zone(id).unwrap_or("");
        if ready(h) && !owners.iter().any(|(k, _)| k == z) && !used_nodes.contains(&&*h.name) && !unused.contains(&z) {
            unused.push(z);
        }
    }
    let adjust = n.saturating_sub(owners.len()).min(unused.len());
    Extras { adjust, owners }
}

/// `getReplicaCountForAutoBalanceBestEffort`, with the least-loaded owners taken as all owners
/// with the fewest extras.
fn best_effort(e: Extras) -> Option<Evening> {
    if e.adjust == 0 && e.owners.len() <= 1 {
        return None;
    }
    let least = e.owners.iter().map(|(_, v)| v.len()).min()?;
    let empty = Vec::new();
    let mut most = &empty;
    for (_, v) in &e.owners {
        if v.len() > most.len() {
            most = v;
        }
    }
    let most_count = most.len();
    if most_count == 0 || most_count == least {
        return None;
    }
    Some(Evening {
        adjust: most_count - least - 1,
        most: most.clone(),
        least_owners: e.owners.iter().filter(|(_, v)| v.len() == least).map(|(k, _)| k.clone()).collect(),
    })
}

/// `getIsSchedulableToDiskNodes` then the first: the first host (in the given order) with a disk
/// that allows scheduling, is not evicting, is `Schedulable`, and passes the space check.
fn first_schedulable(cluster: &Cluster, s: &ReplicaScheduler, volume: &Volume, names: &[&str]) -> Option<String> {
    let (min, over) =
        (s.settings.storage_minimal_available_percentage, s.settings.storage_over_provisioning_percentage);
    names
        .iter()
        .find(|name| {
            cluster.host_id(name).and_then(|id| cluster.host(id)).is_some_and(|h| {
                h.disks.iter().any(|d| {
                    let sp = DiskSpace::of(d);
                    d.allow_scheduling
                        && !d.eviction_requested
                        && schedulable_condition(d.schedulable, d.ready, || is_schedulable_to_disk(0, 0, sp, min, over))
                            .is_ok()
                        && is_schedulable_to_disk(volume.size, volume.actual_size, sp, min, over).is_ok()
                })
            })
        })
        .map(|s| (*s).to_owned())
}

fn plan_disk_pressure(
    scheduler: &ReplicaScheduler,
    cluster: &Cluster,
    volume: &Volume,
    replicas: &[Replica],
    running: &[&Replica],
    neighbours: &[Replica],
) -> Vec<ReplicaMove> {
    let pct = scheduler.settings.replica_auto_balance_disk_pressure_percentage;
    if pct <= 0 {
        return Vec::new();
    }
    let mut pressured: Vec<(crate::id::HostId, usize, &Replica)> = Vec::new();
    for (hid, h) in cluster.hosts() {
        for (di, d) in h.disks.iter().enumerate() {
            if !is_under_pressure(DiskSpace::of(d), pct) {
                continue;
            }
            // Replicas are in name order: the first on the disk qualifies, unless a replica of
            // another volume on it comes before.
            let on_disk = |r: &&Replica| *r.node_id == *h.name && *r.disk_id == *d.name;
            let Some(r) = running.iter().find(|r| on_disk(r)) else { continue };
            if !neighbours.iter().any(|o| on_disk(&o) && o.name < r.name) {
                pressured.push((hid, di, r));
            }
        }
    }
    pressured.sort_by_key(|p| (p.0, p.1));
    for (hid, _, r) in pressured {
        let mut probe: Vec<Replica> = replicas.to_vec();
        let mut new = Replica::new(format!("{}-pressure-move", r.name));
        new.hard_node_affinity = r.node_id.clone();
        probe.push(new);
        let Ok(o) = scheduler.schedule_replica(cluster, volume, &probe, probe.len() - 1, PROBE_NOW) else { continue };
        let Some(p) = o.placement else { continue };
        let target = cluster.host(hid).and_then(|h| h.disks.iter().find(|d| *d.name == *p.disk_id));
        if p.host == hid
            && p.disk_id != r.disk_id
            && target.is_some_and(|d| is_pressure_move_target(volume.actual_size, DiskSpace::of(d), pct))
        {
            return vec![
                ReplicaMove {
                    kind: MoveKind::AddReplica { hard_node_affinity: Some(r.node_id.clone()) },
                    why: "disk pressure",
                },
                ReplicaMove { kind: MoveKind::DeleteReplica { name: r.name.clone() }, why: "disk pressure" },
            ];
        }
    }
    Vec::new()
}

/// The probe's clock: a healthy volume's replenishment window is long over.
const PROBE_NOW: i64 = i64::MAX / 4;

/// Longhorn's `getPreferredReplicaCandidatesForDeletion`: the replicas of the most crowded disk,
/// else node, else zone (when that group has at least two), else all.
fn preferred_deletion_candidates(cluster: &Cluster, rs: &[&Replica]) -> Vec<String> {
    let key = |r: &Replica| cluster.host_id(&r.node_id).map_or(usize::MAX, |id| id.index());
    let groups = |f: &dyn Fn(&Replica) -> Option<(usize, String)>| -> Vec<String> {
        let mut g: Vec<((usize, String), Vec<String>)> = Vec::new();
        for r in rs {
            let Some(k) = f(r) else { continue };
            match g.iter_mut().find(|(gk, _)| *gk == k) {
                Some((_, v)) => v.push(r.name.clone()),
                None => g.push((k, vec![r.name.clone()])),
            }
        }
        g.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
        g.into_iter().next().map(|(_, v)| v).filter(|v| v.len() > 1).unwrap_or_default()
    };
    let by_disk = groups(&|r| Some((key(r), r.disk_id.clone())));
    if !by_disk.is_empty() {
        return by_disk;
    }
    let by_node = groups(&|r| Some((key(r), String::new())));
    if !by_node.is_empty() {
        return by_node;
    }
    let by_zone = groups(&|r| cluster.host_id(&r.node_id).map(|_| (0, zone_name(cluster, &r.node_id))));
    if !by_zone.is_empty() {
        return by_zone;
    }
    rs.iter().map(|r| r.name.clone()).collect()
}
