//! Node and zone stage: schedulable nodes, hard affinity, topology, engine image, used nodes and
//! zones, and the node classes the tier cascade walks.

use super::prep::Prep;
use super::reasons::{FailureReason, NodeNote};
use super::volume::{Replica, Volume};
use super::{Ctx, LonghornVersion};
use crate::id::{DomainId, HostId};

/// Steps 2 and 4: the candidate nodes in host id order, or the failure reason. Without a hard
/// node affinity and without notes, the list prepared once per call ([`Prep::plain_cands`]).
pub(crate) fn candidates(
    cx: &Ctx<'_>,
    prep: &Prep,
    replica: &Replica,
    out: &mut Vec<HostId>,
    notes: &mut Option<Vec<(HostId, NodeNote)>>,
) -> Result<(), FailureReason> {
    if replica.hard_node_affinity.is_empty() && notes.is_none() {
        let plain = prep.plain_cands.as_ref().map_err(|&r| r)?;
        out.clear();
        out.extend_from_slice(plain);
        return Ok(());
    }
    candidates_for(cx, prep, &replica.hard_node_affinity, out, notes)
}

/// [`candidates`] for a replica without a hard node affinity, without notes: the same for every
/// replica of a call. One pass over the hosts; the failure is the first stage that leaves no
/// host, as [`candidates`] finds it stage by stage.
pub(crate) fn plain_candidates(cx: &Ctx<'_>, prep: &Prep, out: &mut Vec<HostId>) -> Result<(), FailureReason> {
    let topo = !cx.volume.topology_requirement.is_empty() && cx.version == LonghornVersion::Head;
    out.clear();
    // Some host passed step 2, and the topology requirement when there is one.
    let mut passed = false;
    for (i, hp) in prep.hosts.iter().enumerate() {
        if !hp.exists || hp.step2.is_some() || (topo && !hp.topo_ok) {
            continue;
        }
        passed = true;
        if hp.engine_ok {
            out.push(HostId::from_index(i));
        }
    }
    match (passed, topo) {
        (false, true) => Err(FailureReason::TopologyRequirement),
        (false, false) => Err(FailureReason::NodesUnavailable),
        _ if out.is_empty() => Err(FailureReason::NoReadyEngineImage),
        _ => Ok(()),
    }
}

fn candidates_for(
    cx: &Ctx<'_>,
    prep: &Prep,
    hard_node_affinity: &str,
    out: &mut Vec<HostId>,
    notes: &mut Option<Vec<(HostId, NodeNote)>>,
) -> Result<(), FailureReason> {
    let volume: &Volume = cx.volume;
    let mut note = |id, n| {
        if let Some(v) = notes.as_mut() {
            v.push((id, n));
        }
    };
    out.clear();
    for (i, hp) in prep.hosts.iter().enumerate() {
        if !hp.exists {
            continue;
        }
        let id = HostId::from_index(i);
        match hp.step2 {
            Some(n) => note(id, n),
            None => out.push(id),
        }
    }
    if !hard_node_affinity.is_empty() {
        let target = cx.cluster.host_id(hard_node_affinity);
        out.retain(|&id| {
            let keep = Some(id) == target;
            if !keep {
                note(id, NodeNote::HardAffinity);
            }
            keep
        });
        if out.is_empty() {
            return Err(FailureReason::HardAffinity);
        }
    }
    if !volume.topology_requirement.is_empty() && cx.version == LonghornVersion::Head {
        out.retain(|&id| {
            let keep = prep.host(id).is_some_and(|h| h.topo_ok);
            if !keep {
                note(id, NodeNote::Topology);
            }
            keep
        });
        if out.is_empty() {
            return Err(FailureReason::TopologyRequirement);
        }
    }
    if out.is_empty() {
        return Err(FailureReason::NodesUnavailable);
    }
    out.retain(|&id| {
        let keep = prep.host(id).is_some_and(|h| h.engine_ok);
        if !keep {
            note(id, NodeNote::EngineImage);
        }
        keep
    });
    if out.is_empty() {
        return Err(FailureReason::NoReadyEngineImage);
    }
    Ok(())
}

/// Step 7's result: which candidate nodes and zones hold counted replicas.
#[derive(Debug, Default)]
pub(crate) struct Used {
    /// (host, only evicting), in host id order.
    pub(crate) nodes: Vec<(HostId, bool)>,
    /// (zone domain, only evicting).
    pub(crate) zones: Vec<(DomainId, bool)>,
}

impl Used {
    pub(crate) fn node(&self, id: HostId) -> Option<bool> {
        self.nodes.binary_search_by_key(&id, |n| n.0).ok().map(|i| self.nodes[i].1)
    }

    pub(crate) fn zone(&self, z: DomainId) -> Option<bool> {
        self.zones.iter().find(|x| x.0 == z).map(|x| x.1)
    }
}

/// Step 7: used nodes and zones, from replicas on candidate nodes only.
pub(crate) fn used(prep: &Prep, cands: &[HostId], replicas: &[Replica], replenishing: bool) -> Used {
    let mut used = Used::default();
    for (r, &(host, _)) in replicas.iter().zip(&prep.replica_at) {
        if r.node_id.is_empty() || r.deleted {
            continue;
        }
        if r.is_failed() && (!r.is_potentially_reusable() || replenishing) {
            continue;
        }
        let Some(host) = host else { continue };
        if cands.binary_search(&host).is_err() {
            continue;
        }
        let evicting = r.eviction_requested;
        match used.nodes.binary_search_by_key(&host, |n| n.0) {
            Ok(i) => used.nodes[i].1 &= evicting,
            Err(i) => used.nodes.insert(i, (host, evicting)),
        }
        let z = prep.host(host).map_or(DomainId::NONE, |h| h.zone);
        match used.zones.iter_mut().find(|x| x.0 == z) {
            Some(x) => x.1 &= evicting,
            None => used.zones.push((z, evicting)),
        }
    }
    used
}
