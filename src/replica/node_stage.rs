//! Node and zone stage: schedulable nodes, hard affinity, topology, engine image, used nodes and
//! zones, the node classes the tier cascade walks, and the domains of the caller's levels that
//! hold a replica. It reads each host's prepared verdicts ([`HostPrep`], made once per call by
//! [`Prep`](super::prep::Prep)), passed in as borrowed slices.

use super::disk_stage::HostDisks;
use super::hooks::ReplicaHooks;
use super::reasons::{FailureReason, NodeNote};
use super::volume::{Replica, Volume};
use super::{Ctx, LonghornVersion};
use crate::id::{DiskId, DomainId, HostId, Symbol};

/// One host's volume-dependent state (indexed by host id).
#[derive(Debug, Clone, Copy)]
pub(crate) struct HostPrep {
    pub(crate) exists: bool,
    /// Why step 2 drops it, if it does.
    pub(crate) step2: Option<NodeNote>,
    /// Matches a topology term (or there is no requirement).
    pub(crate) topo_ok: bool,
    /// Instance manager running and (v1) engine image ready.
    pub(crate) engine_ok: bool,
    /// Tags satisfy the node selector and the backing image's.
    pub(crate) selector_ok: bool,
    /// Counts as unused under best-effort disk pressure.
    pub(crate) pressured: bool,
    /// The first caller node filter rejecting it: its position + 1, or 0.
    pub(crate) caller: u16,
    pub(crate) zone: DomainId,
    /// Its disks in [`Prep::disks`](super::prep::Prep::disks), and the slots of its static
    /// candidates in [`Prep::cands`](super::prep::Prep::cands) (one slot per disk, the first
    /// `cand_len` used).
    pub(crate) disk_start: u32,
    pub(crate) cand_len: u32,
    pub(crate) disks: HostDisks,
    /// Holds (or held earlier in the call) a replica of the volume: re-evaluated per replica.
    pub(crate) dirty: bool,
}

/// Host `id`'s prepared state in `hosts` (indexed by host id), when it exists.
#[inline]
pub(crate) fn host(hosts: &[HostPrep], id: HostId) -> Option<&HostPrep> {
    hosts.get(id.index()).filter(|h| h.exists)
}

/// Steps 2 and 4: the candidate nodes in host id order, or the failure reason. Without a hard
/// node affinity and without notes, the list prepared once per call (`plain`,
/// [`Prep::plain_cands`](super::prep::Prep::plain_cands)). `hosts` is indexed by host id.
pub(crate) fn candidates(
    cx: &Ctx<'_>,
    hosts: &[HostPrep],
    plain: &Result<Vec<HostId>, FailureReason>,
    replica: &Replica,
    out: &mut Vec<HostId>,
    notes: &mut Option<Vec<(HostId, NodeNote)>>,
) -> Result<(), FailureReason> {
    if replica.hard_node_affinity.is_empty() && notes.is_none() {
        let plain = plain.as_ref().map_err(|&r| r)?;
        out.clear();
        out.extend_from_slice(plain);
        return Ok(());
    }
    candidates_for(cx, hosts, &replica.hard_node_affinity, out, notes)
}

/// [`candidates`] for a replica without a hard node affinity, without notes: the same for every
/// replica of a call. One pass over the hosts; the failure is the first stage that leaves no
/// host, as [`candidates`] finds it stage by stage.
pub(crate) fn plain_candidates(cx: &Ctx<'_>, hosts: &[HostPrep], out: &mut Vec<HostId>) -> Result<(), FailureReason> {
    let topo = !cx.volume.topology_requirement.is_empty() && cx.version == LonghornVersion::Head;
    out.clear();
    // Some host passed step 2, and the topology requirement when there is one.
    let mut passed = false;
    for (i, hp) in hosts.iter().enumerate() {
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
    hosts: &[HostPrep],
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
    for (i, hp) in hosts.iter().enumerate() {
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
            let keep = host(hosts, id).is_some_and(|h| h.topo_ok);
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
        let keep = host(hosts, id).is_some_and(|h| h.engine_ok);
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

/// Step 7: used nodes and zones, from replicas on candidate nodes only. `hosts` is indexed by
/// host id, `replica_at` holds each replica's resolved host and disk.
pub(crate) fn used(
    hosts: &[HostPrep],
    replica_at: &[(Option<HostId>, Option<DiskId>)],
    cands: &[HostId],
    replicas: &[Replica],
    replenishing: bool,
) -> Used {
    let mut used = Used::default();
    for (r, &(at, _)) in replicas.iter().zip(replica_at) {
        if r.node_id.is_empty() || r.deleted {
            continue;
        }
        if r.is_failed() && (!r.is_potentially_reusable() || replenishing) {
            continue;
        }
        let Some(at) = at else { continue };
        if cands.binary_search(&at).is_err() {
            continue;
        }
        let evicting = r.eviction_requested;
        match used.nodes.binary_search_by_key(&at, |n| n.0) {
            Ok(i) => used.nodes[i].1 &= evicting,
            Err(i) => used.nodes.insert(i, (at, evicting)),
        }
        let z = host(hosts, at).map_or(DomainId::NONE, |h| h.zone);
        match used.zones.iter_mut().find(|x| x.0 == z) {
            Some(x) => x.1 &= evicting,
            None => used.zones.push((z, evicting)),
        }
    }
    used
}

/// The caller's levels for one replica: the domains that hold a replica at each level and the
/// levels each pass keeps (pass 0 every level; each later pass drops one more soft level, last
/// added first; the last keeps only the hard ones).
pub(crate) struct LevelPasses<'a> {
    hooks: &'a ReplicaHooks,
    /// Per level, the domains holding a replica.
    used: Vec<Vec<Option<Symbol>>>,
    /// Per pass, a mask of the levels kept.
    pub(crate) passes: Vec<u64>,
}

impl<'a> LevelPasses<'a> {
    /// The levels of `hooks` for a replica whose used nodes are `used`; `values` holds each
    /// host's domain per level (`hosts × levels`, row-major: [`Prep::level_values`]).
    ///
    /// [`Prep::level_values`]: super::prep::Prep::level_values
    pub(crate) fn new(hooks: &'a ReplicaHooks, values: &[Option<Symbol>], used: &Used) -> Self {
        let n = hooks.levels.len();
        let mut domains = vec![Vec::new(); n];
        // Nodes holding a counted replica that is not only being evicted.
        for &(host, only_evicting) in &used.nodes {
            if only_evicting {
                continue;
            }
            for (l, d) in domains.iter_mut().enumerate() {
                let v = values.get(host.index() * n + l).copied().flatten();
                if !d.contains(&v) {
                    d.push(v);
                }
            }
        }
        let hard: u64 = hooks.levels.iter().enumerate().filter(|(_, l)| l.is_hard()).fold(0, |m, (i, _)| m | 1u64 << i);
        let soft: Vec<usize> = (0..n).filter(|&i| !hooks.levels[i].is_hard()).collect();
        let passes =
            (0..=soft.len()).map(|p| soft[..soft.len() - p].iter().fold(hard, |m, &i| m | 1u64 << i)).collect();
        LevelPasses { hooks, used: domains, passes }
    }

    /// The first kept level of pass `pass` whose domain of `id` holds a replica, if any
    /// (`values` as for [`LevelPasses::new`]).
    pub(crate) fn excludes(&self, values: &[Option<Symbol>], id: HostId, pass: usize) -> Option<usize> {
        let n = self.used.len();
        let kept = self.passes.get(pass).copied().unwrap_or(0);
        (0..n).find(|&l| {
            kept & (1u64 << l) != 0 && {
                let v = values.get(id.index() * n + l).copied().flatten();
                self.used[l].contains(&v)
            }
        })
    }

    pub(crate) fn hard(&self, level: usize) -> bool {
        self.hooks.levels.get(level).is_some_and(|l| l.is_hard())
    }
}
