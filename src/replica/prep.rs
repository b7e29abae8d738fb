//! Per-call state: every host's eligibility and every disk's derived state, computed once per
//! [`schedule_volume`](super::ReplicaScheduler::schedule_volume) or
//! [`schedule_replica`](super::ReplicaScheduler::schedule_replica) call and shared by the
//! replicas it schedules, plus the scratch buffers they reuse.

use super::choice::{Agg, Candidate, Entry};
use super::disk_stage::{self, DiskPrep, HostDisks};
use super::node::{ATTR_ENGINE_IMAGE_DEPLOYED, ATTR_INSTANCE_MANAGER_RUNNING, ATTR_V2_DISABLED};
use super::reasons::NodeNote;
use super::space::{is_under_pressure, DiskSpace};
use super::volume::{DataEngine, Replica};
use super::{attr_bool, Ctx, LonghornVersion};
use crate::id::{DiskId, DomainId, HostId, Symbol};
use crate::snapshot::{ChunkLabels, CHUNK};

/// One host's replica-independent state (indexed by host id).
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
    pub(crate) zone: DomainId,
    /// Its disks in [`Prep::disks`].
    pub(crate) disk_start: u32,
    /// Its static candidates in [`Prep::cands`].
    pub(crate) cand_start: u32,
    pub(crate) cand_len: u32,
    pub(crate) disks: HostDisks,
    /// Holds (or held earlier in the call) a replica of the volume: re-evaluated per replica.
    pub(crate) dirty: bool,
}

const ABSENT: HostPrep = HostPrep {
    exists: false,
    step2: None,
    topo_ok: false,
    engine_ok: false,
    selector_ok: false,
    pressured: false,
    zone: DomainId::NONE,
    disk_start: 0,
    cand_start: 0,
    cand_len: 0,
    disks: HostDisks { nonspace_bits: 0, static_bits: 0 },
    dirty: false,
};

/// The prepared state of one call. Building it costs O(hosts + disks); each replica then costs
/// O(hosts + replicas × disks of the hosts holding them).
#[derive(Debug)]
pub(crate) struct Prep {
    pub(crate) hosts: Vec<HostPrep>,
    pub(crate) disks: Vec<DiskPrep>,
    pub(crate) cands: Vec<Candidate>,
    /// Each host's static candidates summarised (indexed by host id).
    pub(crate) aggs: Vec<Agg>,
    /// The summaries of the current tier's dynamic entries.
    pub(crate) dyn_aggs: Vec<Agg>,
    /// Each replica's resolved host and disk (by name on that host).
    pub(crate) replica_at: Vec<(Option<HostId>, Option<DiskId>)>,
    pub(crate) cand_hosts: Vec<HostId>,
    pub(crate) tiers: [Vec<HostId>; 4],
    pub(crate) dyn_cands: Vec<Candidate>,
    pub(crate) entries: Vec<Entry>,
}

impl Prep {
    /// Prepares the hosts and disks, then binds `replicas` ([`Prep::bind`]).
    pub(crate) fn new(cx: &Ctx<'_>, replicas: &[Replica]) -> Self {
        let mut prep = Prep::hosts_only(cx);
        prep.bind(cx, replicas);
        prep
    }

    /// The replica-independent part: every host's and disk's state, read from the snapshot's
    /// hot chunks; a host itself is visited only when its lane is not plainly schedulable, has
    /// attributes, or the volume asks for topology or disk detail.
    fn hosts_only(cx: &Ctx<'_>) -> Self {
        let cluster = cx.cluster;
        let volume = cx.volume;
        let settings = cx.settings;
        let len = cluster.id_bound();
        let disk_count = (0..cluster.chunk_count()).map(|c| cluster.hot_chunk(c).disks.len()).sum();
        let mut hosts = Vec::with_capacity(len);
        let mut aggs = Vec::with_capacity(len);
        let mut disks = Vec::with_capacity(disk_count);
        let mut cands = Vec::with_capacity(disk_count);
        let allow_empty = settings.allow_empty_node_selector_volume;
        let v1 = volume.data_engine == DataEngine::V1;
        let v2 = !v1;
        let per_host = v2 || !volume.topology_requirement.is_empty() || cx.disk_detail;
        for c in 0..cluster.chunk_count() {
            let hot = cluster.hot_chunk(c);
            let mut selected = selector_mask(&hot.labels, &cx.node_selector, allow_empty);
            if cx.has_backing_image {
                selected &= selector_mask(&hot.labels, &cx.image_node_selector, allow_empty);
            }
            for lane in 0..CHUNK.min(len.saturating_sub(c * CHUNK)) {
                let bit = 1u64 << lane;
                if hot.live & bit == 0 {
                    hosts.push(ABSENT);
                    aggs.push(Agg::EMPTY);
                    continue;
                }
                let id = HostId::from_index(c * CHUNK + lane);
                let visit = per_host || hot.schedulable & bit == 0 || hot.attributed & bit != 0;
                let full = if visit { cluster.host(id) } else { None };
                // Not visited: up, enabled, not cordoned, not evicting, no attributes, v1.
                let step2 = full.and_then(|h| {
                    let st = h.state;
                    if !st.up {
                        Some(NodeNote::NotReady)
                    } else if st.cordoned && settings.disable_scheduling_on_cordoned_node {
                        Some(NodeNote::Cordoned)
                    } else if !st.enabled || st.evicting {
                        Some(NodeNote::SchedulingDisabled)
                    } else if v2 && attr_bool(h, ATTR_V2_DISABLED, false) {
                        Some(NodeNote::V2Disabled)
                    } else {
                        None
                    }
                });
                // v1.10 has no topology requirement.
                let topo_ok = volume.topology_requirement.is_empty() || cx.version == LonghornVersion::V1_10 || {
                    let zone = cx.zone_name(id);
                    let region = cx.region_name(id);
                    volume
                        .topology_requirement
                        .iter()
                        .any(|t| (t.zone.is_empty() || t.zone == zone) && (t.region.is_empty() || t.region == region))
                };
                let engine_ok = full.is_none_or(|h| {
                    attr_bool(h, ATTR_INSTANCE_MANAGER_RUNNING, true)
                        && (!v1 || attr_bool(h, ATTR_ENGINE_IMAGE_DEPLOYED, true))
                });
                let hot_disks = hot.lane_disks(lane);
                let pressured = cx
                    .pressure_pct
                    .is_some_and(|p| hot_disks.iter().any(|d| is_under_pressure(DiskSpace::of_hot(d), p)));
                let disk_start = disks.len() as u32;
                let cand_start = cands.len() as u32;
                let mut agg = Agg::EMPTY;
                let detail = full.filter(|_| cx.disk_detail);
                let summary = disk_stage::prepare_host(cx, id, hot_disks, detail, &mut disks, &mut cands, &mut agg);
                hosts.push(HostPrep {
                    exists: true,
                    step2,
                    topo_ok,
                    engine_ok,
                    selector_ok: selected & bit != 0,
                    pressured,
                    zone: hot.zone[lane],
                    disk_start,
                    cand_start,
                    cand_len: cands.len() as u32 - cand_start,
                    disks: summary,
                    dirty: false,
                });
                aggs.push(agg);
            }
        }
        Prep {
            hosts,
            disks,
            cands,
            aggs,
            dyn_aggs: Vec::new(),
            replica_at: Vec::new(),
            cand_hosts: Vec::new(),
            tiers: Default::default(),
            dyn_cands: Vec::new(),
            entries: Vec::new(),
        }
    }

    /// Resolves each replica's host and disk and marks the hosts holding one for per-replica
    /// re-evaluation, forgetting any list bound (or placement recorded) before. O(replicas).
    pub(crate) fn bind(&mut self, cx: &Ctx<'_>, replicas: &[Replica]) {
        let cluster = cx.cluster;
        for &(host, _) in &self.replica_at {
            if let Some(hp) = host.and_then(|id| self.hosts.get_mut(id.index())) {
                hp.dirty = false;
            }
        }
        self.replica_at.clear();
        let prep = self;
        for r in replicas {
            let host = if r.node_id.is_empty() { None } else { cluster.host_id(&r.node_id) };
            let disk = host
                .and_then(|id| cluster.host(id))
                .and_then(|h| h.disks.iter().position(|d| *d.name == *r.disk_id))
                .map(DiskId::from_index);
            prep.replica_at.push((host, disk));
            if let Some(hp) = host.and_then(|id| prep.hosts.get_mut(id.index())) {
                hp.dirty = true;
            }
        }
    }

    /// Records that replica `i` was placed on `host` / `disk` in this call.
    pub(crate) fn place(&mut self, i: usize, host: HostId, disk: DiskId) {
        if let Some(slot) = self.replica_at.get_mut(i) {
            *slot = (Some(host), Some(disk));
        }
        if let Some(hp) = self.hosts.get_mut(host.index()) {
            hp.dirty = true;
        }
    }

    pub(crate) fn host(&self, id: HostId) -> Option<&HostPrep> {
        self.hosts.get(id.index()).filter(|h| h.exists)
    }
}

/// The lanes of a chunk whose labels satisfy `selector` as [`tags_match`](super::volume::tags_match) does over
/// host labels: every
/// selector key present; an empty selector matches when `allow_empty` or the host has no label.
fn selector_mask(labels: &ChunkLabels, selector: &[Option<Symbol>], allow_empty: bool) -> u64 {
    if selector.is_empty() {
        return if allow_empty { u64::MAX } else { !labels.labelled() };
    }
    selector
        .iter()
        .fold(u64::MAX, |mask, key| mask & key.map_or(0, |k| labels.values(k).fold(0, |m, (_, lanes)| m | lanes)))
}
