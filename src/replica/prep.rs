//! Prepared state. [`Base`]: what depends only on the snapshot, the settings and the caller's
//! node hooks (kept across calls by a [`ReplicaScratch`](super::ReplicaScratch)). [`Prep`]:
//! every host's eligibility and every disk's derived state for one volume, computed once per
//! [`schedule_volume`](super::ReplicaScheduler::schedule_volume) or
//! [`schedule_replica`](super::ReplicaScheduler::schedule_replica) call and shared by the
//! replicas it schedules, plus the buffers they reuse.

use super::choice::{Agg, Candidate, Entry};
use super::disk_stage::{self, DiskBase, DiskPrep, HostDisks, HUGE_VOLUME};
use super::hooks;
use super::node::{ATTR_ENGINE_IMAGE_DEPLOYED, ATTR_INSTANCE_MANAGER_RUNNING, ATTR_V2_DISABLED};
use super::node_stage;
use super::reasons::{FailureReason, NodeNote};
use super::space::{is_under_pressure, DiskSpace};
use super::volume::{BackingImage, DataEngine, Replica, TopologyTerm};
use super::zones::ZoneLists;
use super::{attr_bool, Ctx, LonghornVersion};
use crate::id::{DiskId, DomainId, HostId, Symbol};
use crate::snapshot::{ChunkLabels, HotChunk, HotDisk, CHUNK};

/// One host's volume-independent state: what the snapshot and the settings say about it
/// (indexed by host id; part of [`Base`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct HostBase {
    pub(crate) exists: bool,
    /// Why step 2 drops it, the v2 check aside.
    pub(crate) state_note: Option<NodeNote>,
    pub(crate) v2_disabled: bool,
    pub(crate) im_running: bool,
    pub(crate) engine_image: bool,
    /// The first caller node filter rejecting it: its position + 1, or 0.
    pub(crate) caller: u16,
    /// Its disks in [`Base::disks`] (and [`Prep::disks`]).
    pub(crate) disk_start: u32,
}

const ABSENT_BASE: HostBase = HostBase {
    exists: false,
    state_note: None,
    v2_disabled: false,
    im_running: false,
    engine_image: false,
    caller: 0,
    disk_start: 0,
};

/// The volume-independent preparation: every host's and disk's state that depends only on the
/// snapshot, the settings and the caller's node hooks. Kept across calls by a
/// [`ReplicaScratch`](super::ReplicaScratch).
#[derive(Debug, Default)]
pub(crate) struct Base {
    pub(crate) hosts: Vec<HostBase>,
    pub(crate) disks: Vec<DiskBase>,
    /// With caller levels: each host's domain per level (`hosts × levels`, row-major).
    pub(crate) level_values: Vec<Option<Symbol>>,
    /// The disks that pass the pre-filter by their room, made when a volume of another size
    /// first reuses a preparation ([`Base::rooms`]).
    rooms: Rooms,
}

/// The disks that pass the pre-filter, in the order of their room ([`Limits::room`](disk_stage::Limits::room)):
/// the disks whose space verdict a change of the volume's size from `a` to `b` can change are
/// those with a room in `min(a, b)..max(a, b)`, one range of this order.
#[derive(Debug, Default)]
struct Rooms {
    built: bool,
    /// Ascending.
    keys: Vec<i128>,
    /// Each key's host.
    hosts: Vec<HostId>,
}

impl HostBase {
    /// Lane `lane` of chunk `c` (`hot`), whose first caller node filter rejecting it is
    /// `caller` (position + 1, or 0) and whose disks start at `disk_start`. A host itself is
    /// visited only when its lane is not plainly schedulable or has attributes.
    #[inline]
    fn compute(cx: &Ctx<'_>, hot: &HotChunk, c: usize, lane: usize, caller: u16, disk_start: u32) -> HostBase {
        let bit = 1u64 << lane;
        if hot.live & bit == 0 {
            return ABSENT_BASE;
        }
        let id = HostId::from_index(c * CHUNK + lane);
        let visit = hot.schedulable & bit == 0 || hot.attributed & bit != 0;
        // Not visited: up, enabled, not cordoned, not evicting, no attributes.
        let full = if visit { cx.cluster.host(id) } else { None };
        let state_note = full.and_then(|h| {
            let st = h.state;
            if !st.up {
                Some(NodeNote::NotReady)
            } else if st.cordoned && cx.settings.disable_scheduling_on_cordoned_node {
                Some(NodeNote::Cordoned)
            } else if !st.enabled || st.evicting {
                Some(NodeNote::SchedulingDisabled)
            } else {
                None
            }
        });
        HostBase {
            exists: true,
            state_note,
            v2_disabled: full.is_some_and(|h| attr_bool(h, ATTR_V2_DISABLED, false)),
            im_running: full.is_none_or(|h| attr_bool(h, ATTR_INSTANCE_MANAGER_RUNNING, true)),
            engine_image: full.is_none_or(|h| attr_bool(h, ATTR_ENGINE_IMAGE_DEPLOYED, true)),
            caller,
            disk_start,
        }
    }
}

/// The caller's node filter verdicts for chunk `c` (see [`HookCx::filter_chunk`](hooks::HookCx::filter_chunk)),
/// all 0 without node filters.
fn caller_chunk(cx: &Ctx<'_>, c: usize, live: u64, out: &mut [u16; CHUNK]) {
    if let (Some(hooks), Some(hcx)) = (cx.hooks.filter(|h| !h.filters.is_empty()), cx.hook_cx.as_ref()) {
        *out = [0; CHUNK];
        hcx.filter_chunk(cx.cluster, hooks, c, live, out);
    }
}

impl Base {
    /// Rebuilds in place (keeping the allocations). O(hosts + disks), plus the caller's node
    /// filters over every live host when there are any. A host itself is visited only when its
    /// lane is not plainly schedulable or has attributes.
    pub(crate) fn build(&mut self, cx: &Ctx<'_>) {
        let cluster = cx.cluster;
        let settings = cx.settings;
        let len = cluster.id_bound();
        let disk_count = (0..cluster.chunk_count()).map(|c| cluster.hot_chunk(c).disks.len()).sum();
        self.hosts.clear();
        self.disks.clear();
        self.hosts.reserve(len);
        self.disks.reserve(disk_count);
        let mut caller = [0u16; CHUNK];
        for c in 0..cluster.chunk_count() {
            let hot = cluster.hot_chunk(c);
            caller_chunk(cx, c, hot.live, &mut caller);
            for lane in 0..CHUNK.min(len.saturating_sub(c * CHUNK)) {
                let caller = caller.get(lane).copied().unwrap_or(0);
                let hb = HostBase::compute(cx, hot, c, lane, caller, self.disks.len() as u32);
                if hb.exists {
                    self.disks.extend(hot.lane_disks(lane).iter().map(|d| DiskBase::new(settings, d)));
                }
                self.hosts.push(hb);
            }
        }
        match cx.hooks.filter(|h| !h.levels.is_empty()) {
            Some(h) => hooks::level_values(cluster, &h.levels, &mut self.level_values),
            None => self.level_values.clear(),
        }
        self.rooms.built = false;
    }

    /// The hosts of the disks whose space verdict can differ between sizes `a` and `b`, with
    /// repeats, in no particular order (see [`Rooms`]); the index is made on the first call
    /// after a build, in O(disks × log disks).
    fn rooms(&mut self, a: i64, b: i64) -> &[HostId] {
        if !self.rooms.built {
            let mut pairs: Vec<(i128, HostId)> = Vec::with_capacity(self.disks.len());
            for (i, hb) in self.hosts.iter().enumerate().filter(|(_, hb)| hb.exists) {
                let end = self.hosts.get(i + 1..).and_then(|rest| rest.iter().find(|h| h.exists));
                let end = end.map_or(self.disks.len(), |h| h.disk_start as usize);
                let disks = self.disks.get(hb.disk_start as usize..end).unwrap_or(&[]);
                let id = HostId::from_index(i);
                pairs.extend(disks.iter().filter(|d| d.pre.is_none()).map(|d| (d.lim.room(d.space), id)));
            }
            pairs.sort_unstable_by_key(|p| p.0);
            self.rooms.keys.clear();
            self.rooms.hosts.clear();
            self.rooms.keys.extend(pairs.iter().map(|p| p.0));
            self.rooms.hosts.extend(pairs.iter().map(|p| p.1));
            self.rooms.built = true;
        }
        let (lo, hi) = (a.min(b) as i128, a.max(b) as i128);
        let from = self.rooms.keys.partition_point(|&k| k < lo);
        let to = self.rooms.keys.partition_point(|&k| k < hi);
        self.rooms.hosts.get(from..to).unwrap_or(&[])
    }
}

/// The prepared state of one call. Building it costs O(hosts + disks) from a [`Base`]; each
/// replica then costs O(hosts + replicas × disks of the hosts holding them).
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
    /// With caller levels: [`Base::level_values`].
    pub(crate) level_values: Vec<Option<Symbol>>,
    /// Steps 2 and 4 without a hard node affinity: the candidate nodes, or the failure (the
    /// same for every replica of the call; see [`node_stage::candidates`](super::node_stage::candidates)).
    pub(crate) plain_cands: Result<Vec<HostId>, FailureReason>,
    /// The first tier's hosts zone by zone, from `plain_cands` (empty when that is a failure).
    pub(crate) zones: ZoneLists,
    /// What the volume-dependent part was last filled for (`None`: not reusable), and the
    /// volume size it was filled or last resized for.
    pub(crate) filled: Option<FillKey>,
    filled_size: i64,
    /// [`Prep::resize`] refills instead when more than `disks / resize_share` disks may change
    /// (0: never).
    pub(crate) resize_share: usize,
    /// Resizes made (for tests).
    pub(crate) resizes: u64,
    /// Buffers of [`Prep::reprepare_host`].
    disk_buf: Vec<DiskPrep>,
    cand_buf: Vec<Candidate>,
    touched: Vec<HostId>,
}

impl Default for Prep {
    fn default() -> Self {
        Prep {
            hosts: Vec::new(),
            disks: Vec::new(),
            cands: Vec::new(),
            aggs: Vec::new(),
            dyn_aggs: Vec::new(),
            replica_at: Vec::new(),
            cand_hosts: Vec::new(),
            tiers: Default::default(),
            dyn_cands: Vec::new(),
            entries: Vec::new(),
            level_values: Vec::new(),
            plain_cands: Ok(Vec::new()),
            zones: ZoneLists::default(),
            filled: None,
            filled_size: 0,
            resize_share: RESIZE_SHARE,
            resizes: 0,
            disk_buf: Vec::new(),
            cand_buf: Vec::new(),
            touched: Vec::new(),
        }
    }
}

/// Everything of a call that [`Prep::fill`] reads besides the snapshot, the settings, the node
/// hooks (which the scratch's stamp covers) and the volume's size below [`HUGE_VOLUME`]: equal
/// keys give fills that differ only in the space check's verdicts ([`Prep::resize`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FillKey {
    version: LonghornVersion,
    /// The size of a v1 volume of at least [`HUGE_VOLUME`] (its filesystem check reads it).
    huge_size: Option<i64>,
    actual_size: i64,
    data_engine: DataEngine,
    node_selector: Vec<String>,
    disk_selector: Vec<String>,
    backing_image: Option<BackingImage>,
    topology_requirement: Vec<TopologyTerm>,
    pressure_pct: Option<i64>,
}

impl FillKey {
    /// The key of `cx`, or `None` when the fill cannot be reused (the caller's disk filters see
    /// the whole volume).
    pub(crate) fn of(cx: &Ctx<'_>) -> Option<FillKey> {
        if cx.hooks.is_some_and(|h| !h.disk_filters.is_empty()) {
            return None;
        }
        let v = cx.volume;
        Some(FillKey {
            version: cx.version,
            huge_size: (v.data_engine == DataEngine::V1 && v.size >= HUGE_VOLUME).then_some(v.size),
            actual_size: v.actual_size,
            data_engine: v.data_engine,
            node_selector: v.node_selector.clone(),
            disk_selector: v.disk_selector.clone(),
            backing_image: v.backing_image.clone(),
            topology_requirement: v.topology_requirement.clone(),
            pressure_pct: cx.pressure_pct,
        })
    }
}

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
    /// Its disks in [`Prep::disks`], and the slots of its static candidates in [`Prep::cands`]
    /// (one slot per disk, the first `cand_len` used).
    pub(crate) disk_start: u32,
    pub(crate) cand_len: u32,
    pub(crate) disks: HostDisks,
    /// Holds (or held earlier in the call) a replica of the volume: re-evaluated per replica.
    pub(crate) dirty: bool,
}

/// A resize re-prepares at most one disk in this many (a host re-prepared costs a few times a
/// host filled), else the preparation is filled anew.
const RESIZE_SHARE: usize = 8;

/// An unused candidate slot.
const PAD: Candidate = Candidate {
    host: HostId(0),
    disk: DiskId(0),
    space: DiskSpace { maximum: 0, available: 0, reserved: 0, scheduled: 0 },
};

const ABSENT: HostPrep = HostPrep {
    exists: false,
    step2: None,
    topo_ok: false,
    engine_ok: false,
    selector_ok: false,
    pressured: false,
    caller: 0,
    zone: DomainId::NONE,
    disk_start: 0,
    cand_len: 0,
    disks: HostDisks { nonspace_bits: 0, static_bits: 0, caller: 0 },
    dirty: false,
};

impl Prep {
    /// Prepares the volume in one pass (no [`Base`] kept), then binds `replicas`
    /// ([`Prep::bind`]).
    pub(crate) fn new(cx: &Ctx<'_>, replicas: &[Replica]) -> Self {
        let mut prep = Prep::default();
        prep.fill(cx, None);
        prep.bind(cx, replicas);
        prep
    }

    /// The volume-dependent part, from `base` (made for this snapshot, settings and hooks),
    /// reusing this preparation's buffers; no replica bound. O(hosts + disks): a host itself is
    /// visited only when the volume asks for topology or disk detail.
    ///
    /// Without `base` the volume-independent state is computed on the way, in the same pass, and
    /// not kept: a one-off call then costs no more than one pass.
    pub(crate) fn fill(&mut self, cx: &Ctx<'_>, base: Option<&Base>) {
        self.filled = None;
        let cluster = cx.cluster;
        let volume = cx.volume;
        let settings = cx.settings;
        let len = cluster.id_bound();
        self.hosts.clear();
        self.aggs.clear();
        self.disks.clear();
        self.cands.clear();
        self.replica_at.clear();
        self.hosts.reserve(len);
        self.aggs.reserve(len);
        let disk_count = match base {
            Some(b) => b.disks.len(),
            None => (0..cluster.chunk_count()).map(|c| cluster.hot_chunk(c).disks.len()).sum(),
        };
        self.disks.reserve(disk_count);
        self.cands.reserve(disk_count);
        // Without a kept base: the caller's node filter verdicts of the chunk.
        let mut caller = [0u16; CHUNK];
        let allow_empty = settings.allow_empty_node_selector_volume;
        let v1 = volume.data_engine == DataEngine::V1;
        let v2 = !v1;
        let topo = !volume.topology_requirement.is_empty() && cx.version != LonghornVersion::V1_10;
        let detail = cx.disk_detail;
        match (base, cx.hooks.filter(|h| !h.levels.is_empty())) {
            (Some(b), _) => self.level_values.clone_from(&b.level_values),
            (None, Some(h)) => hooks::level_values(cluster, &h.levels, &mut self.level_values),
            (None, None) => self.level_values.clear(),
        }
        for c in 0..cluster.chunk_count() {
            let hot = cluster.hot_chunk(c);
            let mut selected = selector_mask(&hot.labels, &cx.node_selector, allow_empty);
            if cx.has_backing_image {
                selected &= selector_mask(&hot.labels, &cx.image_node_selector, allow_empty);
            }
            if base.is_none() {
                caller_chunk(cx, c, hot.live, &mut caller);
            }
            for lane in 0..CHUNK.min(len.saturating_sub(c * CHUNK)) {
                let id = HostId::from_index(c * CHUNK + lane);
                let hb = match base {
                    Some(b) => b.hosts.get(id.index()).copied().unwrap_or(ABSENT_BASE),
                    None => HostBase::compute(cx, hot, c, lane, caller.get(lane).copied().unwrap_or(0), 0),
                };
                if !hb.exists {
                    self.hosts.push(ABSENT);
                    self.aggs.push(Agg::EMPTY);
                    continue;
                }
                let step2 = hb.state_note.or((v2 && hb.v2_disabled).then_some(NodeNote::V2Disabled));
                // v1.10 has no topology requirement.
                let topo_ok = !topo || {
                    let zone = cx.zone_name(id);
                    let region = cx.region_name(id);
                    volume
                        .topology_requirement
                        .iter()
                        .any(|t| (t.zone.is_empty() || t.zone == zone) && (t.region.is_empty() || t.region == region))
                };
                let disk_start = self.disks.len() as u32;
                let mut agg = Agg::EMPTY;
                let full = if detail { cluster.host(id) } else { None };
                let hot_disks = hot.lane_disks(lane);
                let disk_base = base.map(|b| b.disks.get(hb.disk_start as usize..).unwrap_or(&[]));
                let summary = disk_stage::prepare_host(
                    cx,
                    id,
                    hot_disks,
                    disk_base,
                    full,
                    &mut self.disks,
                    &mut self.cands,
                    &mut agg,
                );
                let cand_len = self.cands.len() as u32 - disk_start;
                self.cands.resize(self.disks.len(), PAD);
                self.hosts.push(HostPrep {
                    exists: true,
                    step2,
                    topo_ok,
                    engine_ok: hb.im_running && (!v1 || hb.engine_image),
                    selector_ok: selected & (1u64 << lane) != 0,
                    // Only under best-effort auto-balance: the volume decides (rarely on).
                    pressured: cx.pressure_pct.is_some_and(|p| {
                        hot.lane_disks(lane).iter().any(|d| is_under_pressure(DiskSpace::of_hot(d), p))
                    }),
                    caller: hb.caller,
                    zone: hot.zone[lane],
                    disk_start,
                    cand_len,
                    disks: summary,
                    dirty: false,
                });
                self.aggs.push(agg);
            }
        }
        let mut plain = std::mem::replace(&mut self.plain_cands, Ok(Vec::new())).unwrap_or_default();
        self.plain_cands = node_stage::plain_candidates(cx, self, &mut plain).map(|()| plain);
        let plain = self.plain_cands.as_deref().unwrap_or(&[]);
        self.zones.build(&self.hosts, &self.aggs, plain);
        self.filled_size = volume.size;
    }

    /// [`Prep::fill`], or, when this preparation was filled for an equal [`FillKey`] since
    /// `base` was built (`fresh_base` says it was just rebuilt), only what the volume's size
    /// changes ([`Prep::resize`]); unbinds any replica.
    pub(crate) fn refill(&mut self, cx: &Ctx<'_>, base: &mut Base, fresh_base: bool) {
        let key = FillKey::of(cx);
        if fresh_base || key.is_none() || self.filled != key || !self.resize(cx, base) {
            self.fill(cx, Some(base));
            self.filled = key;
        }
        self.bind(cx, &[]);
    }

    /// Brings a fill for another size of an equal [`FillKey`] to `cx`'s volume size: re-prepares
    /// the hosts of the disks whose space verdict differs between the two sizes ([`Base::rooms`])
    /// and their zone lists' summaries; what it leaves is the same for both sizes (the disks'
    /// states are size-independent, [`DiskPrep`]). `false` (nothing changed) when so many disks
    /// may change that a fill costs less. O(log disks + the changed disks' hosts × (their
    /// disks + a block of the zone lists) + the changed zones' blocks).
    fn resize(&mut self, cx: &Ctx<'_>, base: &mut Base) -> bool {
        let size = cx.volume.size;
        if size == self.filled_size {
            return true;
        }
        let hosts = base.rooms(self.filled_size, size);
        if self.resize_share > 0 && hosts.len() > self.disks.len() / self.resize_share {
            return false;
        }
        let mut touched = std::mem::take(&mut self.touched);
        touched.clear();
        touched.extend_from_slice(hosts);
        touched.sort_unstable();
        touched.dedup();
        for &id in &touched {
            let disks = cx.cluster.hot_disks(id);
            let kept = base.hosts.get(id.index()).map(|hb| hb.disk_start as usize);
            let kept = kept.and_then(|start| base.disks.get(start..));
            self.reprepare_host(cx, id, disks, kept);
            self.zones.update(id, self.aggs.get(id.index()).unwrap_or(&Agg::EMPTY));
        }
        self.zones.refresh(&self.aggs);
        self.touched = touched;
        self.filled_size = size;
        self.resizes += 1;
        true
    }

    /// Re-prepares host `id`'s disks (`disks` in hot form, `base` their kept state as for
    /// [`disk_stage::prepare_host`]) in place: their states, its candidate slots, count, summary
    /// and reason bits. The zone lists are left to the caller.
    pub(crate) fn reprepare_host(&mut self, cx: &Ctx<'_>, id: HostId, disks: &[HotDisk], base: Option<&[DiskBase]>) {
        let Some(hp) = self.hosts.get(id.index()).copied().filter(|h| h.exists) else { return };
        let full = if cx.disk_detail { cx.cluster.host(id) } else { None };
        self.disk_buf.clear();
        self.cand_buf.clear();
        let mut agg = Agg::EMPTY;
        let summary =
            disk_stage::prepare_host(cx, id, disks, base, full, &mut self.disk_buf, &mut self.cand_buf, &mut agg);
        let start = hp.disk_start as usize;
        if let Some(dst) = self.disks.get_mut(start..start + self.disk_buf.len()) {
            dst.copy_from_slice(&self.disk_buf);
        }
        if let Some(dst) = self.cands.get_mut(start..start + self.cand_buf.len()) {
            dst.copy_from_slice(&self.cand_buf);
        }
        if let Some(h) = self.hosts.get_mut(id.index()) {
            h.cand_len = self.cand_buf.len() as u32;
            h.disks = summary;
        }
        if let Some(a) = self.aggs.get_mut(id.index()) {
            *a = agg;
        }
    }

    /// Host `id`'s static candidates (status values, no replica of the volume considered).
    pub(crate) fn static_cands(&self, id: HostId) -> &[Candidate] {
        let Some(hp) = self.host(id) else { return &[] };
        self.cands.get(hp.disk_start as usize..(hp.disk_start + hp.cand_len) as usize).unwrap_or(&[])
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
