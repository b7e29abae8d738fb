//! Per-call state: every host's eligibility and every disk's derived state, computed once per
//! [`schedule_volume`](super::ReplicaScheduler::schedule_volume) or
//! [`schedule_replica`](super::ReplicaScheduler::schedule_replica) call and shared by the
//! replicas it schedules, plus the scratch buffers they reuse.

use super::choice::{Agg, Candidate, Entry};
use super::disk_stage::{self, DiskPrep, HostDisks};
use super::node_stage::node_tags_match;
use super::reasons::NodeNote;
use super::space::{is_under_pressure, DiskSpace};
use super::volume::{DataEngine, Replica};
use super::{attr_bool, Ctx};
use crate::id::{DiskId, DomainId, HostId};

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
    pub(crate) agg: Agg,
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
    agg: Agg::EMPTY,
    dirty: false,
};

/// The prepared state of one call. Building it costs O(hosts + disks); each replica then costs
/// O(hosts + replicas × disks of the hosts holding them).
#[derive(Debug)]
pub(crate) struct Prep {
    pub(crate) hosts: Vec<HostPrep>,
    pub(crate) disks: Vec<DiskPrep>,
    pub(crate) cands: Vec<Candidate>,
    /// Each replica's resolved host and disk (by name on that host).
    pub(crate) replica_at: Vec<(Option<HostId>, Option<DiskId>)>,
    pub(crate) cand_hosts: Vec<HostId>,
    pub(crate) tiers: [Vec<HostId>; 4],
    pub(crate) dyn_cands: Vec<Candidate>,
    pub(crate) entries: Vec<Entry>,
}

impl Prep {
    pub(crate) fn new(cx: &Ctx<'_>, replicas: &[Replica]) -> Self {
        let cluster = cx.cluster;
        let volume = cx.volume;
        let settings = cx.settings;
        let len = cluster.hosts().last().map_or(0, |(id, _)| id.index() + 1);
        let mut hosts = vec![ABSENT; len];
        let mut disks = Vec::new();
        let mut cands = Vec::new();
        let allow_empty = settings.allow_empty_node_selector_volume;
        let v1 = volume.data_engine == DataEngine::V1;
        for (id, h) in cluster.hosts() {
            let st = h.state;
            let step2 = if !st.up {
                Some(NodeNote::NotReady)
            } else if st.cordoned && settings.disable_scheduling_on_cordoned_node {
                Some(NodeNote::Cordoned)
            } else if !st.enabled || st.evicting {
                Some(NodeNote::SchedulingDisabled)
            } else if volume.data_engine == DataEngine::V2 && attr_bool(h, "v2_disabled", false) {
                Some(NodeNote::V2Disabled)
            } else {
                None
            };
            let topo_ok = volume.topology_requirement.is_empty() || {
                let zone = cx.zone_name(id);
                let region = cx.region_name(id);
                volume
                    .topology_requirement
                    .iter()
                    .any(|t| (t.zone.is_empty() || t.zone == zone) && (t.region.is_empty() || t.region == region))
            };
            let engine_ok = attr_bool(h, "im_running", true) && (!v1 || attr_bool(h, "engine_image_ready", true));
            let selector_ok = node_tags_match(h, &cx.node_selector, allow_empty)
                && (!cx.has_backing_image || node_tags_match(h, &cx.image_node_selector, allow_empty));
            let pressured =
                cx.pressure_pct.is_some_and(|p| h.disks.iter().any(|d| is_under_pressure(DiskSpace::of(d), p)));
            let disk_start = disks.len() as u32;
            let cand_start = cands.len() as u32;
            let mut agg = Agg::EMPTY;
            let summary = disk_stage::prepare_host(cx, id, h, &mut disks, &mut cands, &mut agg);
            hosts[id.index()] = HostPrep {
                exists: true,
                step2,
                topo_ok,
                engine_ok,
                selector_ok,
                pressured,
                zone: cx.zone(id),
                disk_start,
                cand_start,
                cand_len: cands.len() as u32 - cand_start,
                disks: summary,
                agg,
                dirty: false,
            };
        }
        let mut prep = Prep {
            hosts,
            disks,
            cands,
            replica_at: Vec::with_capacity(replicas.len()),
            cand_hosts: Vec::new(),
            tiers: Default::default(),
            dyn_cands: Vec::new(),
            entries: Vec::new(),
        };
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
        prep
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
