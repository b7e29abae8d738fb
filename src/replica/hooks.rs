//! The caller's hooks: node [`Filter`]s and [`Weigher`]s, disk filters and weighers
//! ([`ReplicaDiskFilter`], [`ReplicaDiskWeigher`]), and extra anti-affinity levels ([`Level`]).
//!
//! Longhorn's behaviour is the configuration without any: the scheduler then holds no hooks and
//! never looks at them (one `Option` test per call).

use super::choice::{
    choose_entries, push_dynamic, ranked, Agg, Candidate, DiskChoice, Entry, Pool, Ranked, EXPLAIN_TOP,
};
use super::space::DiskSpace;
use super::volume::Volume;
use super::{Ctx, ReplicaError};
use crate::filter::{Filter, FilterChain, Rejections};
use crate::id::{DiskId, HostId, Symbol};
use crate::request::{CompiledRequest, Cx, Request};
use crate::snapshot::{Cluster, Disk, Host, Overlay, CHUNK};
use crate::weigh::{Bounds, WeighPass, Weigher};
use std::fmt;
use std::sync::Arc;

/// The most hooks of each kind a scheduler takes (node filters, disk filters, levels).
pub const MAX_HOOKS: usize = 64;

/// What a [`ReplicaDiskFilter`] or [`ReplicaDiskWeigher`] sees: the snapshot, the volume being placed and one
/// disk of one host. `Copy`; a handful of references.
#[derive(Clone, Copy)]
pub struct DiskCx<'a> {
    cluster: &'a Cluster,
    volume: &'a Volume,
    host_id: HostId,
    disk_id: DiskId,
    host: &'a Host,
    disk: &'a Disk,
}

impl fmt::Debug for DiskCx<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DiskCx").field("host", &self.host.name).field("disk", &self.disk.name).finish_non_exhaustive()
    }
}

impl<'a> DiskCx<'a> {
    /// A context for disk `disk_id` of host `host_id`, or `None` when there is no such disk.
    pub fn new(cluster: &'a Cluster, volume: &'a Volume, host_id: HostId, disk_id: DiskId) -> Option<Self> {
        let host = cluster.host(host_id)?;
        let disk = host.disks.get(disk_id.index())?;
        Some(DiskCx { cluster, volume, host_id, disk_id, host, disk })
    }

    /// The snapshot.
    pub fn cluster(&self) -> &'a Cluster {
        self.cluster
    }

    /// The volume whose replica is being placed.
    pub fn volume(&self) -> &'a Volume {
        self.volume
    }

    /// The host's id.
    pub fn host_id(&self) -> HostId {
        self.host_id
    }

    /// The disk's position on its host.
    pub fn disk_id(&self) -> DiskId {
        self.disk_id
    }

    /// The host record.
    pub fn host(&self) -> &'a Host {
        self.host
    }

    /// The disk record (name, tags, type, space, scheduled replicas …).
    pub fn disk(&self) -> &'a Disk {
        self.disk
    }

    /// The disk's space numbers as reported (no in-cycle adjustment).
    pub fn space(&self) -> DiskSpace {
        DiskSpace::of(self.disk)
    }
}

/// Decides whether a disk may take a replica of the volume, after Longhorn's own disk checks
/// (pre-filter, type, filesystem size, tags) and before the space check. Object-safe; a closure
/// becomes one with [`disk_filter_fn`].
pub trait ReplicaDiskFilter: Send + Sync {
    /// A short name for explanations and failure reasons.
    fn name(&self) -> &str;

    /// Whether the disk passes.
    fn check(&self, cx: &DiskCx<'_>) -> bool;
}

/// Gives each candidate disk a raw score; higher wins. The scores of one weigher are normalised
/// over the candidate disks of the chosen nodes ([`crate::weigh::normalize`], with
/// [`bounds`](ReplicaDiskWeigher::bounds)), multiplied by the weigher's multiplier and summed.
/// Object-safe; a closure becomes one with [`disk_weigher_fn`].
pub trait ReplicaDiskWeigher: Send + Sync {
    /// A short name for explanations.
    fn name(&self) -> &str;

    /// The raw value for one disk.
    fn weigh(&self, cx: &DiskCx<'_>) -> f64;

    /// Normalisation bounds; default plain min–max.
    fn bounds(&self) -> Bounds {
        Bounds::NONE
    }
}

macro_rules! forward_disk_filter {
    ($($ty:ty),*) => {$(
        impl<F: ReplicaDiskFilter + ?Sized> ReplicaDiskFilter for $ty {
            fn name(&self) -> &str { (**self).name() }
            fn check(&self, cx: &DiskCx<'_>) -> bool { (**self).check(cx) }
        }
    )*};
}

macro_rules! forward_disk_weigher {
    ($($ty:ty),*) => {$(
        impl<W: ReplicaDiskWeigher + ?Sized> ReplicaDiskWeigher for $ty {
            fn name(&self) -> &str { (**self).name() }
            fn weigh(&self, cx: &DiskCx<'_>) -> f64 { (**self).weigh(cx) }
            fn bounds(&self) -> Bounds { (**self).bounds() }
        }
    )*};
}

forward_disk_filter!(&F, Box<F>, Arc<F>);
forward_disk_weigher!(&W, Box<W>, Arc<W>);

/// A disk filter made from a closure; see [`disk_filter_fn`].
#[derive(Clone)]
pub struct DiskFilterFn<F> {
    name: String,
    f: F,
}

impl<F> fmt::Debug for DiskFilterFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DiskFilterFn").field("name", &self.name).finish_non_exhaustive()
    }
}

/// Wraps a closure `|cx| -> bool` as a [`ReplicaDiskFilter`] called `name`.
///
/// ```
/// use placewise::replica::{disk_filter_fn, ReplicaDiskFilter};
///
/// let no_hdd = disk_filter_fn("no hdd", |cx| !cx.disk().name.starts_with("hdd"));
/// let boxed: Box<dyn ReplicaDiskFilter> = Box::new(no_hdd);
/// assert_eq!(boxed.name(), "no hdd");
/// ```
pub fn disk_filter_fn<F>(name: impl Into<String>, f: F) -> DiskFilterFn<F>
where
    F: Fn(&DiskCx<'_>) -> bool + Send + Sync,
{
    DiskFilterFn { name: name.into(), f }
}

impl<F> ReplicaDiskFilter for DiskFilterFn<F>
where
    F: Fn(&DiskCx<'_>) -> bool + Send + Sync,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn check(&self, cx: &DiskCx<'_>) -> bool {
        (self.f)(cx)
    }
}

/// A disk weigher made from a closure; see [`disk_weigher_fn`].
#[derive(Clone)]
pub struct DiskWeigherFn<F> {
    name: String,
    bounds: Bounds,
    f: F,
}

impl<F> fmt::Debug for DiskWeigherFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DiskWeigherFn").field("name", &self.name).field("bounds", &self.bounds).finish_non_exhaustive()
    }
}

/// Wraps a closure `|cx| -> f64` as a [`ReplicaDiskWeigher`] called `name`, normalised min–max.
///
/// ```
/// use placewise::replica::{disk_weigher_fn, ReplicaDiskWeigher};
///
/// // Fewer scheduled replicas is better.
/// let few = disk_weigher_fn("few replicas", |cx| -(cx.disk().scheduled_replicas.len() as f64));
/// assert_eq!(few.name(), "few replicas");
/// ```
pub fn disk_weigher_fn<F>(name: impl Into<String>, f: F) -> DiskWeigherFn<F>
where
    F: Fn(&DiskCx<'_>) -> f64 + Send + Sync,
{
    DiskWeigherFn { name: name.into(), bounds: Bounds::NONE, f }
}

impl<F> DiskWeigherFn<F> {
    /// Sets the normalisation bounds.
    pub fn with_bounds(mut self, bounds: Bounds) -> Self {
        self.bounds = bounds;
        self
    }
}

impl<F> ReplicaDiskWeigher for DiskWeigherFn<F>
where
    F: Fn(&DiskCx<'_>) -> f64 + Send + Sync,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn weigh(&self, cx: &DiskCx<'_>) -> f64 {
        (self.f)(cx)
    }

    fn bounds(&self) -> Bounds {
        self.bounds
    }
}

/// An anti-affinity level beyond Longhorn's zone and node: hosts grouped by the value of a
/// topology level of the snapshot or, when the snapshot has no level of that name, of a host
/// label (a host without it is in the domain `""`, as Longhorn treats a node without a zone).
/// A key that is neither a topology level nor a label key of any host is refused when the
/// scheduler runs on that snapshot ([`ReplicaError::UnknownLevel`]).
///
/// A **hard** level never places two replicas of a volume in one domain; a **soft** level
/// prefers a domain without one. Levels refine Longhorn's tiers: within each tier of the cascade
/// (new node in a new zone, new node in a used zone, used node, as the settings allow) the
/// scheduler first tries the tier's hosts whose domains hold no replica at **every** level,
/// then drops the soft levels one at a time, **last added first**; the hard levels always stay.
/// Only then does it move to Longhorn's next tier. A domain is used when a replica counted for
/// node anti-affinity (step 7: on a candidate node, not deleted, failed ones only while they are
/// reusable) lies in it and is not being evicted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Level {
    key: String,
    hard: bool,
}

impl Level {
    /// Never two replicas in one domain of `key` (`"rack"`, `"row"` …).
    pub fn hard(key: impl Into<String>) -> Self {
        Level { key: key.into(), hard: true }
    }

    /// Prefer a domain of `key` that holds no replica.
    pub fn soft(key: impl Into<String>) -> Self {
        Level { key: key.into(), hard: false }
    }

    /// The topology level or label key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Whether the level is hard.
    pub fn is_hard(&self) -> bool {
        self.hard
    }
}

/// Every hook of a scheduler, with one name per node filter, disk filter and level (the names
/// explanations and reasons use, in that order).
pub(crate) struct ReplicaHooks {
    pub(crate) filters: Vec<Box<dyn Filter>>,
    pub(crate) weighers: Vec<(Box<dyn Weigher>, f64)>,
    pub(crate) disk_filters: Vec<Box<dyn ReplicaDiskFilter>>,
    pub(crate) disk_weighers: Vec<(Box<dyn ReplicaDiskWeigher>, f64)>,
    pub(crate) levels: Vec<Level>,
    /// Node filters, disk filters, levels (`<key> anti-affinity`), node weighers, disk weighers.
    pub(crate) names: Vec<String>,
}

impl fmt::Debug for ReplicaHooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let weighers: Vec<(&str, f64)> = self.weighers.iter().map(|(w, m)| (w.name(), *m)).collect();
        let disk_weighers: Vec<(&str, f64)> = self.disk_weighers.iter().map(|(w, m)| (w.name(), *m)).collect();
        f.debug_struct("ReplicaHooks")
            .field("names", &self.names)
            .field("weighers", &weighers)
            .field("disk_weighers", &disk_weighers)
            .finish()
    }
}

impl ReplicaHooks {
    pub(crate) fn is_empty(&self) -> bool {
        self.filters.is_empty()
            && self.weighers.is_empty()
            && self.disk_filters.is_empty()
            && self.disk_weighers.is_empty()
            && self.levels.is_empty()
    }

    /// The name index of disk filter `i`.
    pub(crate) fn disk_filter_index(&self, i: usize) -> u16 {
        (self.filters.len() + i) as u16
    }

    /// The name index of level `i`.
    pub(crate) fn level_index(&self, i: usize) -> u16 {
        (self.filters.len() + self.disk_filters.len() + i) as u16
    }
}

/// The core-trait context the caller's node filters and weighers run in: the snapshot and an
/// empty one-instance [`Request`] (the volume is not part of it, so a node hook's verdict depends
/// on the snapshot only), with the node filters prepared once per call as a [`FilterChain`].
pub(crate) struct HookCx<'h> {
    request: Request,
    compiled: CompiledRequest,
    overlay: Overlay,
    chain: FilterChain<'h>,
}

impl<'h> HookCx<'h> {
    /// Prepares the node filters of `hooks` for `cluster`.
    ///
    /// # Errors
    ///
    /// [`ReplicaError::Hook`] with the first filter's error from its `prepare`.
    pub(crate) fn new(cluster: &Cluster, hooks: &'h ReplicaHooks) -> Result<Self, ReplicaError> {
        let request = Request::new(1);
        let hook = |error| ReplicaError::Hook { error };
        // An empty request carries no resource, zone, selector or group: it always compiles.
        let compiled = request.compile(cluster).map_err(hook)?;
        let overlay = Overlay::new();
        let chain =
            FilterChain::prepare(&hooks.filters, &Cx::new(cluster, &request, &compiled, &overlay, 0)).map_err(hook)?;
        Ok(HookCx { request, compiled, overlay, chain })
    }

    pub(crate) fn cx<'a>(&'a self, cluster: &'a Cluster) -> Cx<'a> {
        Cx::new(cluster, &self.request, &self.compiled, &self.overlay, 0)
    }

    /// Runs the node filters over chunk `chunk`'s lanes `mask`: writes into `out[lane]` the name
    /// index + 1 of the first filter rejecting each lane (0 when every filter passes).
    pub(crate) fn filter_chunk(&self, cluster: &Cluster, chunk: usize, mask: u64, out: &mut [u16; CHUNK]) {
        let mut rejected = Rejections::new(false);
        self.chain.judge_chunk_noting(&self.cx(cluster), chunk, mask, &mut rejected, out);
    }

    /// The node weighers' score of each host in `hosts` into `out`, through the one weighing
    /// pass ([`WeighPass`]: normalised over `hosts`, times the multipliers, summed). The
    /// weighers' context sees `picks`, the hosts of the replicas placed earlier in the call, as
    /// its overlay (one instance each) and their number as the instance being placed, as the
    /// core's weighers see a request's earlier instances.
    ///
    /// # Errors
    ///
    /// [`ReplicaError::Hook`] with the first weigher's error: its `prepare`, its candidate
    /// check, or a per-host multiplier that is not finite.
    pub(crate) fn weigh(
        &self,
        cluster: &Cluster,
        hooks: &ReplicaHooks,
        hosts: &[HostId],
        picks: &[HostId],
        out: &mut Vec<f64>,
    ) -> Result<(), ReplicaError> {
        out.clear();
        out.resize(hosts.len(), 0.0);
        let mut overlay = Overlay::new();
        for &h in picks {
            overlay.consume(h, &[]);
        }
        let instance = u32::try_from(picks.len()).unwrap_or(u32::MAX);
        let cx = Cx::new(cluster, &self.request, &self.compiled, &overlay, instance);
        WeighPass::new().score(&hooks.weighers, &cx, hosts, out).map_err(|error| ReplicaError::Hook { error })
    }
}

/// The position of the first of `levels` whose key no host of `cluster` carries: neither a
/// topology level of the snapshot nor a label key any host has (with any value). Such a level
/// would put every host in one domain `""`, so a hard one places one replica and a soft one
/// nothing; the scheduler refuses it ([`ReplicaError::UnknownLevel`]).
///
/// Computes in O(levels) when every label key is carried by a host of the first chunk, at most
/// O(levels × hosts / 64): once per snapshot a preparation is kept for.
pub(crate) fn unknown_level(cluster: &Cluster, levels: &[Level]) -> Option<usize> {
    levels.iter().position(|level| {
        if cluster.topology().level(&level.key).is_some() {
            return false;
        }
        let Some(key) = cluster.symbols().get(&level.key) else { return true };
        !(0..cluster.chunk_count()).any(|c| cluster.hot_chunk(c).labels.values(key).next().is_some())
    })
}

/// [`unknown_level`] as the error, for a scheduler's hooks.
pub(crate) fn check_levels(cluster: &Cluster, hooks: Option<&ReplicaHooks>) -> Result<(), ReplicaError> {
    let Some(levels) = hooks.map(|h| h.levels.as_slice()).filter(|l| !l.is_empty()) else { return Ok(()) };
    level_error(levels, unknown_level(cluster, levels))
}

/// The error for `found`, the position of a level no host carries, if there is one.
pub(crate) fn level_error(levels: &[Level], found: Option<usize>) -> Result<(), ReplicaError> {
    match found.and_then(|i| levels.get(i)) {
        Some(level) => Err(ReplicaError::UnknownLevel { key: level.key.clone() }),
        None => Ok(()),
    }
}

/// A host's domain at each level, resolved once per preparation: the symbol of its value
/// (`None` for `""`).
pub(crate) fn level_values(cluster: &Cluster, levels: &[Level], out: &mut Vec<Option<Symbol>>) {
    let n = cluster.id_bound();
    out.clear();
    out.resize(n * levels.len(), None);
    for (l, level) in levels.iter().enumerate() {
        if let Some(t) = cluster.topology().level(&level.key) {
            for (id, h) in cluster.hosts() {
                out[id.index() * levels.len() + l] = cluster.topology().value(t, h.domain(t));
            }
        } else if let Some(key) = cluster.symbols().get(&level.key) {
            for c in 0..cluster.chunk_count() {
                for (value, lanes) in cluster.hot_chunk(c).labels.values(key) {
                    let mut rest = lanes;
                    while rest != 0 {
                        let lane = rest.trailing_zeros() as usize;
                        if let Some(slot) = out.get_mut((c * CHUNK + lane) * levels.len() + l) {
                            *slot = Some(value);
                        }
                        rest &= rest - 1;
                    }
                }
            }
        }
    }
    // The empty string is the domain of hosts without a value.
    if let Some(empty) = cluster.symbols().get("") {
        for v in out.iter_mut() {
            if *v == Some(empty) {
                *v = None;
            }
        }
    }
}

/// The disk weighers' score of each candidate in `cands` into `out` (as
/// [`HookCx::weigh`] for nodes).
pub(crate) fn weigh_disks(
    cluster: &Cluster,
    volume: &Volume,
    hooks: &ReplicaHooks,
    cands: &[(HostId, DiskId)],
    out: &mut Vec<f64>,
) {
    out.clear();
    out.resize(cands.len(), 0.0);
    if cands.len() < 2 {
        return;
    }
    let mut raw = vec![0.0; cands.len()];
    for (w, multiplier) in &hooks.disk_weighers {
        for (r, &(h, d)) in raw.iter_mut().zip(cands) {
            *r = DiskCx::new(cluster, volume, h, d).map_or(f64::NAN, |cx| w.weigh(&cx));
        }
        crate::weigh::normalize(&mut raw, w.bounds());
        for (o, &r) in out.iter_mut().zip(&raw) {
            *o += r * multiplier;
        }
    }
}

/// The choice with the caller's weighers: node weighers keep the entries with the best score,
/// disk weighers then keep the candidates with the best score, and `strategy` chooses among
/// what is left. `entries` may be narrowed; `picks` are the call's earlier replicas' hosts
/// ([`HookCx::weigh`]).
pub(crate) fn weighed_choice(
    cx: &Ctx<'_>,
    hooks: &ReplicaHooks,
    strategy: DiskChoice,
    entries: &mut Vec<Entry>,
    pool: Pool<'_>,
    picks: &[HostId],
    mut top: Option<&mut Vec<Ranked>>,
) -> Result<Option<Candidate>, ReplicaError> {
    let size = cx.volume.size;
    let mut scores = Vec::new();
    let mut caller_terms: Vec<(&'static str, f64, f64)> = Vec::new();
    if let (false, Some(hcx)) = (hooks.weighers.is_empty() || entries.len() < 2, cx.hook_cx.as_ref()) {
        let hosts: Vec<HostId> = entries.iter().map(|e| e.host).collect();
        hcx.weigh(cx.cluster, hooks, &hosts, picks, &mut scores)?;
        let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        caller_terms.push(("node weighers", best, 1.0));
        let mut k = 0;
        entries.retain(|_| {
            k += 1;
            scores[k - 1] == best
        });
    }
    // The explanation's ranking of what the disk choice saw, after the caller's scores, which
    // every candidate left shares.
    let mut rank = |entries: &[Entry], pool: Pool<'_>, pick: Option<Candidate>, caller: &[(&'static str, f64, f64)]| {
        if let (Some(top), Some(pick)) = (top.as_deref_mut(), pick) {
            *top = ranked(strategy, entries, pool, size, pick, EXPLAIN_TOP);
            for r in top.iter_mut() {
                r.terms.splice(0..0, caller.iter().copied());
            }
        }
        pick
    };
    if hooks.disk_weighers.is_empty() {
        let pick = choose_entries(strategy, entries, pool, size);
        return Ok(rank(entries, pool, pick, &caller_terms));
    }
    let all: Vec<Candidate> = entries.iter().flat_map(|e| pool.cands(e).iter().copied()).collect();
    let keys: Vec<(HostId, DiskId)> = all.iter().map(|c| (c.host, c.disk)).collect();
    weigh_disks(cx.cluster, cx.volume, hooks, &keys, &mut scores);
    let best = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut kept: Vec<Candidate> = Vec::new();
    let mut aggs: Vec<Agg> = Vec::new();
    let mut narrowed: Vec<Entry> = Vec::new();
    for (c, &score) in all.iter().zip(&scores) {
        if score != best {
            continue;
        }
        push_dynamic(&mut narrowed, &mut aggs, c, kept.len());
        kept.push(*c);
    }
    let pool = Pool { stat: &[], dynamic: &kept, stat_aggs: &[], dyn_aggs: &aggs };
    caller_terms.push(("disk weighers", best, 1.0));
    let pick = choose_entries(strategy, &narrowed, pool, size);
    Ok(rank(&narrowed, pool, pick, &caller_terms))
}
