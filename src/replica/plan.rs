//! Plans for data locality and replica auto-balance: lists of moves, never applied.

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
pub struct Move {
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
pub fn plan_data_locality(cluster: &Cluster, volume: &Volume, replicas: &[Replica]) -> Vec<Move> {
    if volume.data_locality != DataLocality::BestEffort
        || volume.node_id.is_empty()
        || volume.robustness != Robustness::Healthy
        || cluster.host_id(&volume.node_id).is_none()
        || replicas.iter().any(|r| usable(r) && r.node_id == volume.node_id)
    {
        return Vec::new();
    }
    let mut moves = vec![Move {
        kind: MoveKind::AddReplica { hard_node_affinity: Some(volume.node_id.clone()) },
        why: "local replica",
    }];
    if let Some(victim) = replicas.iter().filter(|r| usable(r)).map(|r| &r.name).min() {
        moves.push(Move { kind: MoveKind::DeleteReplica { name: victim.clone() }, why: "non-local replica" });
    }
    moves
}

/// The auto-balance plan for a healthy volume with all replicas usable: under `least-effort` or
/// `best-effort`, one added replica per missing zone (then per missing node), capped by the
/// ready, schedulable, engine-image-ready hosts (and their zones) holding no replica; the normal
/// scheduler then places each. Deletions are left to the cleanup that follows the rebuild.
/// `best-effort`'s count evening and disk-pressure moves are not planned here.
pub fn plan_auto_balance(
    scheduler: &ReplicaScheduler,
    cluster: &Cluster,
    volume: &Volume,
    replicas: &[Replica],
) -> Vec<Move> {
    let mode = scheduler.effective_auto_balance(volume);
    let running: Vec<&Replica> = replicas.iter().filter(|r| usable(r)).collect();
    if mode == AutoBalance::Disabled
        || volume.robustness != Robustness::Healthy
        || running.len() != volume.number_of_replicas as usize
    {
        return Vec::new();
    }
    let n = volume.number_of_replicas as usize;
    let zone_of = |name: &str| cluster.host_id(name).and_then(|id| cluster.zone(id)).unwrap_or("").to_owned();
    let mut used_zones: Vec<String> = running.iter().map(|r| zone_of(&r.node_id)).collect();
    if !volume.node_id.is_empty() {
        used_zones.push(zone_of(&volume.node_id));
    }
    used_zones.sort();
    used_zones.dedup();
    let mut used_nodes: Vec<&str> = running.iter().map(|r| r.node_id.as_str()).collect();
    used_nodes.sort_unstable();
    used_nodes.dedup();
    let ready = |h: &crate::Host| {
        h.state.up
            && h.state.enabled
            && !h.state.evicting
            && !h.state.cordoned
            && super::attr_bool(h, "engine_image_ready", true)
    };
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
    (0..add).map(|_| Move { kind: MoveKind::AddReplica { hard_node_affinity: None }, why: "auto-balance" }).collect()
}
