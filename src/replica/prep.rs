//! Prepared state. [`Base`]: what depends only on the snapshot, the settings and the caller's
//! node hooks (kept across calls by a [`ReplicaScratch`](super::ReplicaScratch)). [`Prep`]:
//! every host's eligibility and every disk's derived state for one volume, computed once per
//! [`schedule`](super::ReplicaScheduler::schedule) or
//! [`schedule_replica`](super::ReplicaScheduler::schedule_replica) call and shared by the
//! replicas it schedules, plus the buffers they reuse.

use super::choice::{Agg, Candidate, Entry};
use super::disk_stage::{self, DiskBase, DiskPrep, DiskRules, HostDisks, HUGE_VOLUME};
use super::hooks;
use super::node::{ATTR_ENGINE_IMAGE_DEPLOYED, ATTR_INSTANCE_MANAGER_RUNNING, ATTR_V2_DISABLED};
use super::node_stage::{self, HostPrep};
use super::reasons::{FailureReason, NodeNote};
use super::space::{is_under_pressure, DiskSpace};
use super::volume::{BackingImage, DataEngine, Replica, TopologyTerm};
use super::zones::{self, ZoneLists};
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
    /// Where each chunk's hosts' disks start in `disks` (one entry per chunk and a last one,
    /// `disks.len()`): chunk `c`'s are `chunk_disks[c]..chunk_disks[c + 1]`. A [`Prep`] filled
    /// from this base lays its disks out alike.
    chunk_disks: Vec<u32>,
    /// With caller levels: each host's domain per level (`hosts × levels`, row-major).
    pub(crate) level_values: Vec<Option<Symbol>>,
    /// The disks that pass the pre-filter by their room, made when a volume of another size
    /// first reuses a preparation ([`Base::rooms`]).
    rooms: Rooms,
    /// Buffers of [`Base::refresh_chunk`] and [`refresh`].
    host_buf: Vec<HostBase>,
    disk_buf: Vec<DiskBase>,
    grown: Vec<(usize, i64)>,
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
    /// Chunks refreshed since the order was made ([`Base::refresh_chunk`]): their hosts'
    /// entries are replaced when the order is next read.
    stale: Vec<usize>,
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
    if let (Some(_), Some(hcx)) = (cx.hooks.filter(|h| !h.filters.is_empty()), cx.hook_cx.as_ref()) {
        *out = [0; CHUNK];
        hcx.filter_chunk(cx.cluster, c, live, out);
    }
}

/// The lanes of chunk `c` below `bound` (the snapshot's [`id_bound`](crate::snapshot::Cluster::id_bound)).
fn lanes(bound: usize, c: usize) -> usize {
    CHUNK.min(bound.saturating_sub(c * CHUNK))
}

/// Replaces `v[start..start + old_len]` with `new`.
fn splice<T: Copy>(v: &mut Vec<T>, start: usize, old_len: usize, new: &[T]) {
    match v.get_mut(start..start + old_len) {
        Some(dst) if old_len == new.len() => dst.copy_from_slice(new),
        _ => {
            v.splice(start..start + old_len, new.iter().copied());
        }
    }
}

/// Chunk `c`'s hosts' volume-independent state appended to `hosts`, their disks' to `disks`
/// (whose first position is `offset` in [`Base::disks`]).
fn build_chunk(cx: &Ctx<'_>, c: usize, offset: u32, hosts: &mut Vec<HostBase>, disks: &mut Vec<DiskBase>) {
    let hot = cx.cluster.hot_chunk(c);
    let mut caller = [0u16; CHUNK];
    caller_chunk(cx, c, hot.live, &mut caller);
    for lane in 0..lanes(cx.cluster.id_bound(), c) {
        let caller = caller.get(lane).copied().unwrap_or(0);
        let hb = HostBase::compute(cx, hot, c, lane, caller, offset + disks.len() as u32);
        if hb.exists {
            disks.extend(hot.lane_disks(lane).iter().map(|d| DiskBase::new(cx.settings, d)));
        }
        hosts.push(hb);
    }
}

impl Base {
    /// Rebuilds in place (keeping the allocations). O(hosts + disks), plus the caller's node
    /// filters over every live host when there are any. A host itself is visited only when its
    /// lane is not plainly schedulable or has attributes.
    pub(crate) fn build(&mut self, cx: &Ctx<'_>) {
        let cluster = cx.cluster;
        let disk_count = (0..cluster.chunk_count()).map(|c| cluster.hot_chunk(c).disks.len()).sum();
        self.hosts.clear();
        self.disks.clear();
        self.chunk_disks.clear();
        self.hosts.reserve(cluster.id_bound());
        self.disks.reserve(disk_count);
        for c in 0..cluster.chunk_count() {
            self.chunk_disks.push(self.disks.len() as u32);
            build_chunk(cx, c, 0, &mut self.hosts, &mut self.disks);
        }
        self.chunk_disks.push(self.disks.len() as u32);
        self.build_levels(cx);
        self.rooms.built = false;
        self.rooms.stale.clear();
    }

    fn build_levels(&mut self, cx: &Ctx<'_>) {
        match cx.hooks.filter(|h| !h.levels.is_empty()) {
            Some(h) => hooks::level_values(cx.cluster, &h.levels, &mut self.level_values),
            None => self.level_values.clear(),
        }
    }

    /// The disks of chunk `c`'s hosts in [`Base::disks`] (empty past the last chunk).
    fn chunk_range(&self, c: usize) -> std::ops::Range<usize> {
        let end = self.chunk_disks.last().copied().unwrap_or(0);
        let at = |i: usize| self.chunk_disks.get(i).copied().unwrap_or(end) as usize;
        at(c)..at(c + 1)
    }

    /// Rebuilds chunk `c`'s hosts, whose disks now start at `start` and took `old_len`
    /// positions, in place (the disks after them move when their number changed; the later
    /// hosts' positions are left to the caller). Returns the chunk's new number of disks.
    fn refresh_chunk(&mut self, cx: &Ctx<'_>, c: usize, start: usize, old_len: usize) -> usize {
        let mut hosts = std::mem::take(&mut self.host_buf);
        let mut disks = std::mem::take(&mut self.disk_buf);
        hosts.clear();
        disks.clear();
        build_chunk(cx, c, start as u32, &mut hosts, &mut disks);
        if let Some(dst) = self.hosts.get_mut(c * CHUNK..c * CHUNK + hosts.len()) {
            dst.copy_from_slice(&hosts);
        }
        splice(&mut self.disks, start, old_len, &disks);
        if self.rooms.built {
            self.rooms.stale.push(c);
        }
        let len = disks.len();
        self.host_buf = hosts;
        self.disk_buf = disks;
        len
    }

    /// Pushes `(room, host)` for each disk of the hosts `ids` that passes the pre-filter; the
    /// disks of those hosts end at `end`.
    fn push_rooms(&self, ids: std::ops::Range<usize>, end: usize, out: &mut Vec<(i128, HostId)>) {
        let mut push = |id: usize, disks: std::ops::Range<usize>| {
            let host = HostId::from_index(id);
            let disks = self.disks.get(disks).unwrap_or(&[]);
            out.extend(disks.iter().filter(|d| d.pre.is_none()).map(|d| (d.lim.room(d.space), host)));
        };
        let mut open: Option<(usize, usize)> = None;
        for (i, hb) in self.hosts.iter().enumerate().take(ids.end).skip(ids.start).filter(|(_, hb)| hb.exists) {
            if let Some((id, start)) = open {
                push(id, start..hb.disk_start as usize);
            }
            open = Some((i, hb.disk_start as usize));
        }
        if let Some((id, start)) = open {
            push(id, start..end);
        }
    }

    /// The hosts of the disks whose space verdict can differ between sizes `a` and `b`, with
    /// repeats, in no particular order (see [`Rooms`]); the index is made on the first call
    /// after a build, in O(disks × log disks), and brought up to date after a refresh in
    /// O(disks + the refreshed chunks' disks × log disks).
    fn rooms(&mut self, a: i64, b: i64) -> &[HostId] {
        let chunks = self.chunk_disks.len().saturating_sub(1);
        if self.rooms.built && self.rooms.stale.len() * 2 > chunks {
            self.rooms.built = false;
        }
        if !self.rooms.built {
            let mut pairs: Vec<(i128, HostId)> = Vec::with_capacity(self.disks.len());
            self.push_rooms(0..self.hosts.len(), self.disks.len(), &mut pairs);
            pairs.sort_unstable_by_key(|p| p.0);
            self.rooms.keys.clear();
            self.rooms.hosts.clear();
            self.rooms.keys.extend(pairs.iter().map(|p| p.0));
            self.rooms.hosts.extend(pairs.iter().map(|p| p.1));
            self.rooms.built = true;
            self.rooms.stale.clear();
        }
        if !self.rooms.stale.is_empty() {
            self.update_rooms();
        }
        let (lo, hi) = (a.min(b) as i128, a.max(b) as i128);
        let from = self.rooms.keys.partition_point(|&k| k < lo);
        let to = self.rooms.keys.partition_point(|&k| k < hi);
        self.rooms.hosts.get(from..to).unwrap_or(&[])
    }

    /// Everything of the base a call reads, as text (for tests comparing two bases): its hosts
    /// and disks, their layout, the level values, and with `rooms` the room order (made, or
    /// brought up to date, first), as a set.
    #[cfg(test)]
    pub(crate) fn digest(&mut self, rooms: bool) -> String {
        let rooms = if rooms {
            self.rooms(0, 0);
            let mut pairs: Vec<(i128, HostId)> =
                self.rooms.keys.iter().copied().zip(self.rooms.hosts.iter().copied()).collect();
            pairs.sort_unstable();
            format!("{pairs:?}")
        } else {
            String::new()
        };
        format!("{:?}\n{:?}\n{:?}\n{:?}\n{rooms}", self.hosts, self.disks, self.chunk_disks, self.level_values)
    }

    /// Whether the room order was made (for tests).
    #[cfg(test)]
    pub(crate) fn rooms_built(&self) -> bool {
        self.rooms.built
    }

    /// Replaces the room order's entries of the hosts of the stale chunks with their current
    /// disks' (one merge).
    fn update_rooms(&mut self) {
        let mut stale = std::mem::take(&mut self.rooms.stale);
        stale.sort_unstable();
        stale.dedup();
        let mut fresh: Vec<(i128, HostId)> = Vec::new();
        for &c in &stale {
            let end = self.chunk_range(c).end;
            self.push_rooms(c * CHUNK..(c + 1) * CHUNK, end, &mut fresh);
        }
        fresh.sort_unstable_by_key(|p| p.0);
        let is_stale = |h: HostId| stale.binary_search(&(h.index() / CHUNK)).is_ok();
        let rooms = &mut self.rooms;
        let old = rooms.keys.iter().copied().zip(rooms.hosts.iter().copied()).filter(|&(_, h)| !is_stale(h));
        let mut merged: Vec<(i128, HostId)> = Vec::with_capacity(rooms.keys.len() + fresh.len());
        let mut fresh = fresh.into_iter().peekable();
        for (k, h) in old {
            while let Some(f) = fresh.next_if(|f| f.0 < k) {
                merged.push(f);
            }
            merged.push((k, h));
        }
        merged.extend(fresh);
        rooms.keys.clear();
        rooms.hosts.clear();
        rooms.keys.extend(merged.iter().map(|p| p.0));
        rooms.hosts.extend(merged.iter().map(|p| p.1));
        stale.clear();
        rooms.stale = stale;
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
    /// The host of each replica placed since the last [`Prep::bind`], in order: the call's
    /// earlier picks, which the caller's node weighers see as their context's overlay.
    pub(crate) picks: Vec<HostId>,
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
    /// Buffers of [`Prep::reprepare_host`] and [`Prep::refresh_chunk`].
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
            picks: Vec::new(),
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

/// A resize re-prepares at most one disk in this many (a host re-prepared costs a few times a
/// host filled), else the preparation is filled anew.
const RESIZE_SHARE: usize = 8;

/// An unused candidate slot.
const PAD: Candidate = Candidate { host: HostId(0), disk: DiskId(0), usable: 0, free: 0 };

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
        let fill = Fill::of(cx);
        // Never written: each host's summary is filled in place in `aggs`.
        let mut spare = Agg::EMPTY;
        match (base, cx.hooks.filter(|h| !h.levels.is_empty())) {
            (Some(b), _) => self.level_values.clone_from(&b.level_values),
            (None, Some(h)) => hooks::level_values(cluster, &h.levels, &mut self.level_values),
            (None, None) => self.level_values.clear(),
        }
        for c in 0..cluster.chunk_count() {
            let hot = cluster.hot_chunk(c);
            let selected = fill.selected(cx, hot);
            if base.is_none() {
                caller_chunk(cx, c, hot.live, &mut caller);
            }
            let plain = if base.is_none() { fill.plain_lanes(hot) } else { 0 };
            for lane in 0..lanes(len, c) {
                let id = HostId::from_index(c * CHUNK + lane);
                if plain & (1u64 << lane) != 0 {
                    let caller = caller.get(lane).copied().unwrap_or(0);
                    if let Some((hp, agg)) =
                        fill.lean_host(hot, id, lane, selected, caller, &mut self.disks, &mut self.cands)
                    {
                        self.aggs.push(agg);
                        self.hosts.push(hp);
                        continue;
                    }
                }
                let hb = match base {
                    Some(b) => b.hosts.get(id.index()).copied().unwrap_or(ABSENT_BASE),
                    None => HostBase::compute(cx, hot, c, lane, caller.get(lane).copied().unwrap_or(0), 0),
                };
                let kept = base.map(|b| b.disks.get(hb.disk_start as usize..).unwrap_or(&[]));
                let at = self.aggs.len();
                self.aggs.push(Agg::EMPTY);
                let agg = self.aggs.get_mut(at).unwrap_or(&mut spare);
                let hp = fill.host(cx, hot, id, lane, hb, selected, kept, 0, &mut self.disks, &mut self.cands, agg);
                self.hosts.push(hp);
            }
        }
        let mut plain = std::mem::replace(&mut self.plain_cands, Ok(Vec::new())).unwrap_or_default();
        self.plain_cands = node_stage::plain_candidates(cx, &self.hosts, &mut plain).map(|()| plain);
        let plain = self.plain_cands.as_deref().unwrap_or(&[]);
        self.zones.build(&self.hosts, &self.aggs, plain);
        self.filled_size = cx.volume.size;
    }

    /// Re-prepares chunk `c`'s hosts from `base` (already refreshed for them) for `cx`'s
    /// volume, their disks now starting at `start` and having taken `old_len` positions (the
    /// disks after them move when their number changed; the later hosts' positions are left to
    /// the caller), and splices the chunk's candidate nodes into [`Prep::plain_cands`] (when it
    /// lists some). Records in `touched` the hosts whose zone list totals to update, and returns
    /// whether a host joined, left or changed zone in the zone lists.
    fn refresh_chunk(
        &mut self,
        cx: &Ctx<'_>,
        fill: &Fill,
        base: &Base,
        c: usize,
        start: usize,
        old_len: usize,
    ) -> bool {
        let hot = cx.cluster.hot_chunk(c);
        let selected = fill.selected(cx, hot);
        let mut disks = std::mem::take(&mut self.disk_buf);
        let mut cands = std::mem::take(&mut self.cand_buf);
        disks.clear();
        cands.clear();
        let mut moved = false;
        let first = c * CHUNK;
        for lane in 0..lanes(cx.cluster.id_bound(), c) {
            let id = HostId::from_index(first + lane);
            let hb = base.hosts.get(id.index()).copied().unwrap_or(ABSENT_BASE);
            let kept = base.disks.get(hb.disk_start as usize..).unwrap_or(&[]);
            let mut agg = Agg::EMPTY;
            let hp =
                fill.host(cx, hot, id, lane, hb, selected, Some(kept), start as u32, &mut disks, &mut cands, &mut agg);
            let (Some(slot), Some(a)) = (self.hosts.get_mut(id.index()), self.aggs.get_mut(id.index())) else {
                continue;
            };
            let (was, now) = (fill.listed(slot), fill.listed(&hp));
            moved |= was != now || (now && slot.zone != hp.zone);
            if now {
                self.touched.push(id);
            }
            *slot = hp;
            *a = agg;
        }
        splice(&mut self.disks, start, old_len, &disks);
        splice(&mut self.cands, start, old_len, &cands);
        self.disk_buf = disks;
        self.cand_buf = cands;
        if let Ok(plain) = &mut self.plain_cands {
            let from = plain.partition_point(|h| h.index() < first);
            let to = plain.partition_point(|h| h.index() < first + CHUNK);
            let hosts = self.hosts.get(first..).unwrap_or(&[]).iter().take(CHUNK);
            let now =
                hosts.enumerate().filter(|(_, hp)| fill.candidate(hp)).map(|(l, _)| HostId::from_index(first + l));
            plain.splice(from..to, now);
        }
        moved
    }

    /// [`Prep::fill`], or, when this preparation was filled for an equal [`FillKey`] (`key`,
    /// [`FillKey::of`] `cx`) since `base` was built or refreshed with it (`fresh_base`: `base`
    /// was just made without it), only what the volume's size changes ([`Prep::resize`]);
    /// unbinds any replica.
    pub(crate) fn refill(&mut self, cx: &Ctx<'_>, base: &mut Base, key: Option<FillKey>, fresh_base: bool) {
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
        let rules = DiskRules::of(cx);
        let (disk_buf, cand_buf) = (&mut self.disk_buf, &mut self.cand_buf);
        let summary = disk_stage::prepare_host::<true>(cx, &rules, id, disks, base, full, disk_buf, cand_buf, &mut agg);
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
        self.picks.clear();
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
        self.picks.push(host);
        if let Some(hp) = self.hosts.get_mut(host.index()) {
            hp.dirty = true;
        }
    }

    pub(crate) fn host(&self, id: HostId) -> Option<&HostPrep> {
        node_stage::host(&self.hosts, id)
    }
}

/// Brings `base`, made for an earlier snapshot of `cx`'s lineage with `cx`'s settings and
/// hooks, and `prep` when given (filled from it for a volume of `cx`'s [`FillKey`]), to `cx`'s
/// snapshot, in which `changed` (ascending) are the chunks that are not the earlier snapshot's
/// ([`Cluster::changed_chunks`](crate::snapshot::Cluster::changed_chunks)): their hosts are
/// prepared anew and their disks spliced into place (the later hosts' disks move when a chunk's
/// number of disks changed), and the candidate nodes, zone lists and room order are redone for
/// them. `prep`'s refreshed hosts are prepared for `cx`'s volume size, the others keep the size
/// they were prepared for ([`Prep::resize`] brings them to it). It leaves what [`Base::build`]
/// and [`Prep::fill`] make for the snapshot. The snapshot's host id bound must be at least the
/// earlier one's.
///
/// O(changed chunks × (64 + their disks) + the hosts after the first chunk whose number of
/// disks changed + the candidate nodes), plus, when a host joined, left or changed zone in the
/// zone lists, O(candidate nodes) to rebuild them, else O(the refreshed hosts' blocks and
/// zones); with caller levels O(hosts × levels).
pub(crate) fn refresh(cx: &Ctx<'_>, base: &mut Base, mut prep: Option<&mut Prep>, changed: &[usize]) {
    let cluster = cx.cluster;
    let bound = cluster.id_bound();
    let chunks = cluster.chunk_count();
    // Chunks the earlier snapshot had not: empty ranges at the end.
    let end = base.chunk_disks.last().copied().unwrap_or(0);
    base.chunk_disks.resize(chunks + 1, end);
    base.hosts.resize(bound, ABSENT_BASE);
    let fill = Fill::of(cx);
    if let Some(p) = prep.as_deref_mut() {
        p.hosts.resize(bound, ABSENT);
        p.aggs.resize(bound, Agg::EMPTY);
        p.touched.clear();
    }
    let mut moved = false;
    let mut grown = std::mem::take(&mut base.grown);
    grown.clear();
    let mut shift = 0i64;
    for &c in changed {
        let old = base.chunk_range(c);
        let start = (old.start as i64 + shift) as usize;
        let len = base.refresh_chunk(cx, c, start, old.len());
        if let Some(p) = prep.as_deref_mut() {
            moved |= p.refresh_chunk(cx, &fill, base, c, start, old.len());
        }
        let delta = len as i64 - old.len() as i64;
        grown.push((c, delta));
        shift += delta;
    }
    // The chunks after the first that grew or shrank: their ranges move, and so do their hosts'
    // disks unless they were just refreshed in place.
    if let Some(first) = grown.iter().find(|g| g.1 != 0).map(|g| g.0) {
        let mut shift = 0i64;
        let mut next = grown.iter().copied().skip_while(|g| g.0 < first).peekable();
        for k in first..=chunks {
            let Some(s) = base.chunk_disks.get_mut(k) else { break };
            *s = (*s as i64 + shift) as u32;
            if let Some((_, delta)) = next.next_if(|g| g.0 == k) {
                shift += delta;
            } else if shift != 0 && k < chunks {
                let ids = k * CHUNK..(k * CHUNK + CHUNK).min(bound);
                let moved_by = |start: &mut u32| *start = (*start as i64 + shift) as u32;
                base.hosts
                    .get_mut(ids.clone())
                    .unwrap_or(&mut [])
                    .iter_mut()
                    .filter(|h| h.exists)
                    .for_each(|h| moved_by(&mut h.disk_start));
                if let Some(p) = prep.as_deref_mut() {
                    p.hosts
                        .get_mut(ids)
                        .unwrap_or(&mut [])
                        .iter_mut()
                        .filter(|h| h.exists)
                        .for_each(|h| moved_by(&mut h.disk_start));
                }
            }
        }
    }
    base.grown = grown;
    if cx.hooks.is_some_and(|h| !h.levels.is_empty()) {
        base.build_levels(cx);
    }
    let Some(p) = prep else { return };
    p.level_values.clone_from(&base.level_values);
    if p.plain_cands.as_ref().is_ok_and(|l| !l.is_empty()) && !moved {
        let touched = std::mem::take(&mut p.touched);
        for &id in &touched {
            p.zones.update(id, p.aggs.get(id.index()).unwrap_or(&Agg::EMPTY));
        }
        p.zones.refresh(&p.aggs);
        p.touched = touched;
        return;
    }
    if !p.plain_cands.as_ref().is_ok_and(|l| !l.is_empty()) {
        let mut plain = std::mem::replace(&mut p.plain_cands, Ok(Vec::new())).unwrap_or_default();
        p.plain_cands = node_stage::plain_candidates(cx, &p.hosts, &mut plain).map(|()| plain);
    }
    p.zones.build(&p.hosts, &p.aggs, p.plain_cands.as_deref().unwrap_or(&[]));
}

/// One host at a time prepared as [`Prep::fill`] prepares it without a kept base and without
/// caller hooks, keeping nothing: for a pass that keeps less than a [`Prep`] per host
/// ([`cold`](super::cold)).
pub(crate) struct Lone {
    fill: Fill,
    disks: Vec<DiskPrep>,
    cands: Vec<Candidate>,
}

impl Lone {
    /// For `cx`'s volume, which has no caller hooks.
    pub(crate) fn new(cx: &Ctx<'_>) -> Self {
        Lone { fill: Fill::of(cx), disks: Vec::new(), cands: Vec::new() }
    }

    /// The lanes of chunk `hot` that pass the volume's node selectors.
    pub(crate) fn selected(&self, cx: &Ctx<'_>, hot: &HotChunk) -> u64 {
        self.fill.selected(cx, hot)
    }

    /// Host `lane` of chunk `c` (`hot`, whose lanes `selected` pass the node selectors): its
    /// state and its static candidates' summary, as [`Prep::fill`] makes them; its candidates
    /// are then [`Lone::cands`].
    #[inline(always)]
    pub(crate) fn host(
        &mut self,
        cx: &Ctx<'_>,
        hot: &HotChunk,
        c: usize,
        lane: usize,
        selected: u64,
    ) -> (HostPrep, Agg) {
        self.disks.clear();
        self.cands.clear();
        let id = HostId::from_index(c * CHUNK + lane);
        if self.fill.plain_lanes(hot) >> lane & 1 == 1 {
            if let Some(x) = self.fill.lean_host(hot, id, lane, selected, 0, &mut self.disks, &mut self.cands) {
                return x;
            }
        }
        let hb = HostBase::compute(cx, hot, c, lane, 0, 0);
        let mut agg = Agg::EMPTY;
        let hp = self.fill.host(cx, hot, id, lane, hb, selected, None, 0, &mut self.disks, &mut self.cands, &mut agg);
        (hp, agg)
    }

    /// The lanes of chunk `hot` whose base state is the plain one, when the volume needs nothing
    /// else of such a host than its disks (else none): see [`Lone::disk_rules`].
    #[inline(always)]
    pub(crate) fn plain_lanes(&self, hot: &HotChunk) -> u64 {
        self.fill.plain_lanes(hot)
    }

    /// The disk stage's rules for the volume, a copy a pass keeps at hand. For a host of
    /// [`Lone::plain_lanes`], [`DiskRules::add_all_candidates`] answering means the host is what
    /// [`Fill::lean_host`] makes (a candidate node, listed when its lane passes the node
    /// selectors); when it does not answer, [`Lone::host`] prepares the host.
    pub(crate) fn disk_rules(&self) -> DiskRules {
        self.fill.disk_rules
    }

    /// The static candidates of the host [`Lone::host`] prepared last.
    pub(crate) fn cands(&self, hp: &HostPrep) -> &[Candidate] {
        self.cands.get(..hp.cand_len as usize).unwrap_or(&[])
    }

    /// Whether the first tier lists host `hp` when the candidate nodes are not a failure.
    pub(crate) fn listed(&self, hp: &HostPrep) -> bool {
        self.fill.listed(hp)
    }
}

/// What [`Prep::fill`] reads of the volume for every host, worked out once per fill or refresh.
struct Fill {
    /// The disk stage's per-call part.
    disk_rules: DiskRules,
    allow_empty: bool,
    v1: bool,
    /// The topology requirement is checked per host (HEAD).
    topo: bool,
    /// A host in the plain base state whose disks [`DiskRules::all_candidates`] takes needs
    /// nothing else of the volume ([`Fill::lean_host`]).
    lean: bool,
}

impl Fill {
    fn of(cx: &Ctx<'_>) -> Self {
        let volume = cx.volume;
        let topo = !volume.topology_requirement.is_empty() && cx.version != LonghornVersion::V1_10;
        Fill {
            disk_rules: DiskRules::of(cx),
            allow_empty: cx.settings.allow_empty_node_selector_volume,
            v1: volume.data_engine == DataEngine::V1,
            topo,
            lean: !topo && !cx.disk_detail && cx.pressure_pct.is_none(),
        }
    }

    /// The lanes of chunk `hot` that pass the volume's node selector and its backing image's.
    #[inline]
    fn selected(&self, cx: &Ctx<'_>, hot: &HotChunk) -> u64 {
        let mut selected = selector_mask(&hot.labels, &cx.node_selector, self.allow_empty);
        if cx.has_backing_image {
            selected &= selector_mask(&hot.labels, &cx.image_node_selector, self.allow_empty);
        }
        selected
    }

    /// The lanes of chunk `hot` whose base state is the plain one (live, schedulable, no
    /// attributes: see `HostBase::compute`) when the volume needs nothing else of such a host
    /// ([`Fill::lean`]); none otherwise.
    #[inline(always)]
    fn plain_lanes(&self, hot: &HotChunk) -> u64 {
        if self.lean {
            hot.live & hot.schedulable & !hot.attributed
        } else {
            0
        }
    }

    /// Whether host `hp` is a candidate node ([`node_stage::plain_candidates`] lists it when
    /// it lists any).
    fn candidate(&self, hp: &HostPrep) -> bool {
        hp.exists && hp.step2.is_none() && hp.topo_ok && hp.engine_ok
    }

    /// Whether the zone lists hold host `hp` (when the candidate nodes are not a failure).
    fn listed(&self, hp: &HostPrep) -> bool {
        self.candidate(hp) && zones::listed(hp)
    }

    /// [`Fill::host`] without a kept base for host `id`, lane `lane` of chunk `hot`, whose base
    /// state is the plain one (live, schedulable, no attributes) and whose first rejecting
    /// caller node filter is `caller`, when [`DiskRules::all_candidates`] takes all its disks
    /// (appended to `disks` and `cands`): its state and its candidates' summary; `None`, with
    /// both unchanged, when it does not.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn lean_host(
        &self,
        hot: &HotChunk,
        id: HostId,
        lane: usize,
        selected: u64,
        caller: u16,
        disks: &mut Vec<DiskPrep>,
        cands: &mut Vec<Candidate>,
    ) -> Option<(HostPrep, Agg)> {
        let disk_start = disks.len() as u32;
        let hot_disks = hot.lane_disks(lane);
        let agg = self.disk_rules.all_candidates(id, hot_disks, disks, cands)?;
        let hp = HostPrep {
            exists: true,
            step2: None,
            topo_ok: true,
            engine_ok: true,
            selector_ok: selected & (1u64 << lane) != 0,
            pressured: false,
            caller,
            zone: hot.zone[lane],
            disk_start,
            cand_len: hot_disks.len() as u32,
            disks: disk_stage::ALL_CANDIDATES,
            dirty: false,
        };
        Some((hp, agg))
    }

    /// Host `id` of base state `hb` (lane `lane` of chunk `hot`, whose lanes `selected` pass the node selectors)
    /// with its disks' kept state `kept` (`None`: computed on the way) prepared for `cx`'s
    /// volume: appends its disks' states to `disks` and its static candidates, padded to one
    /// slot per disk, to `cands` (both of which start at position `offset` of the
    /// preparation), and summarises its candidates in `agg` (empty before); returns its state.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn host(
        &self,
        cx: &Ctx<'_>,
        hot: &HotChunk,
        id: HostId,
        lane: usize,
        hb: HostBase,
        selected: u64,
        kept: Option<&[DiskBase]>,
        offset: u32,
        disks: &mut Vec<DiskPrep>,
        cands: &mut Vec<Candidate>,
        agg: &mut Agg,
    ) -> HostPrep {
        if !hb.exists {
            return ABSENT;
        }
        let step2 = hb.state_note.or((!self.v1 && hb.v2_disabled).then_some(NodeNote::V2Disabled));
        // v1.10 has no topology requirement.
        let topo_ok = !self.topo || {
            let zone = cx.zone_name(id);
            let region = cx.region_name(id);
            cx.volume
                .topology_requirement
                .iter()
                .any(|t| (t.zone.is_empty() || t.zone == zone) && (t.region.is_empty() || t.region == region))
        };
        let disk_start = offset + disks.len() as u32;
        let full = if cx.disk_detail { cx.cluster.host(id) } else { None };
        let hot_disks = hot.lane_disks(lane);
        let summary =
            disk_stage::prepare_host::<true>(cx, &self.disk_rules, id, hot_disks, kept, full, disks, cands, agg);
        let cand_len = (cands.len() - (disk_start - offset) as usize) as u32;
        cands.resize(disks.len(), PAD);
        HostPrep {
            exists: true,
            step2,
            topo_ok,
            engine_ok: hb.im_running && (!self.v1 || hb.engine_image),
            selector_ok: selected & (1u64 << lane) != 0,
            // Only under best-effort auto-balance: the volume decides (rarely on).
            pressured: cx
                .pressure_pct
                .is_some_and(|p| hot_disks.iter().any(|d| is_under_pressure(DiskSpace::of_hot(d), p))),
            caller: hb.caller,
            zone: hot.zone[lane],
            disk_start,
            cand_len,
            disks: summary,
            dirty: false,
        }
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
