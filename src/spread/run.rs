//! One batch in flight: the per-node state, the filter pipeline, the tree and the placements.
//! The two modes' algorithms are `impl Run` blocks in `compat.rs` and `balanced.rs`.

use super::filters::Stage;
use super::node;
use super::outcome::{BranchNote, BranchReport};
use super::skew::Domains;
use super::tree::Tree;
use super::SpreadError;
use crate::explain::{Explanation, HostVerdict, RankedHost, RejectionCount};
use crate::filter::chain::{every_reason, judge_chunk};
use crate::filter::{Filter, Reason, Rejections};
use crate::id::{HostId, ResourceId, Symbol};
use crate::request::{CompiledRequest, Cx, Prepared, Request};
use crate::snapshot::{refresh_pays, Cluster, Host, Lineage, Overlay, CHUNK};
use crate::weigh::{WeighPass, Weigher};
use std::cmp::Ordering;

/// One pipeline entry: a foundation filter with its prepared state, or a hard spread
/// constraint (by index into [`Run::hard`]).
pub(crate) struct Entry<'a> {
    pub(crate) filter: Option<&'a dyn Filter>,
    pub(crate) hard: Option<usize>,
    pub(crate) stage: Stage,
    pub(crate) state: Prepared,
}

/// Per-node arrays, indexed by host id, kept between calls.
#[derive(Debug, Default)]
pub(crate) struct NodeState {
    /// Active tasks of the service, including the batch's placed so far.
    pub(crate) svc: Vec<u32>,
    /// Active tasks in total, likewise.
    pub(crate) total: Vec<u32>,
    /// Failure penalty: recent failures when 5 or more, else 0.
    pub(crate) penalty: Vec<u32>,
    /// The user weighers' normalised weighted sum (higher is better).
    pub(crate) score: Vec<f64>,
    /// Position in its leaf's name order.
    pub(crate) rank: Vec<u32>,
    /// Passed the filters when the tree was built (balanced mode).
    pub(crate) eligible: Vec<bool>,
    /// SwarmKit's node keys packed (`penalty << 64 | svc << 32 | total`), kept beside the
    /// three columns so that one comparison orders two nodes.
    pub(crate) key: Vec<u128>,
    /// Before the first placement: the pipeline entry among the leading Ready and Resource
    /// stages that each host fails ([`PREFIX_PASSED`] when it passes them all), computed a
    /// chunk at a time ([`Run::initial_fails`]) and kept with the snapshot.
    pub(crate) prefix_fail: Vec<u32>,
    /// Placed on since it last passed the whole pipeline in this call. Every candidate passed
    /// when the leaves were filled and nothing is placed before, so the column starts all
    /// `false` and is set by [`Run::place`] only. With host-local entries only ([`Run::local`])
    /// a node that is not stale passes again, and is not re-checked.
    pub(crate) stale: Vec<bool>,
    /// The snapshot's active tasks of the service, by host (no task of the batch): what `svc`
    /// is restored to.
    base_svc: Vec<u32>,
    /// The snapshot's active tasks in total, likewise.
    base_total: Vec<u32>,
    /// The snapshot the kept columns were computed from (a held clone, see
    /// [`Cluster::is_same_snapshot`]): the base counts and [`NodeState::prefix_fail`].
    snapshot: Option<Cluster>,
    /// The service the base counts are of.
    counted_for: Option<String>,
    /// What [`NodeState::prefix_fail`] was computed for.
    prefix_for: Option<PrefixKey>,
    /// The chunks whose rows of [`NodeState::prefix_fail`] are of an earlier snapshot than
    /// `snapshot` (changed since), to redo before the table is read.
    prefix_stale: Vec<usize>,
    /// Hosts with a task in the snapshot: non-zero base counts.
    pub(crate) with_tasks: Vec<u32>,
    /// Hosts this call changed from their base (a task placed, a penalty set; repeats
    /// allowed): the next call restores these.
    pub(crate) changed: Vec<u32>,
    /// Whether some `score` may be non-zero.
    pub(crate) scored: bool,
}

impl NodeState {
    /// Makes every column ready for a call on `cluster` for the service `name` (`service`, its
    /// symbol): each host's task counts as the snapshot has them, no penalty, scores zero, no
    /// node stale. Ranks and eligibility are left as they are: each call writes them for every
    /// live host before reading them. The base counts are kept with the snapshot and service
    /// they were read for: on that very snapshot and service only the hosts the previous call
    /// changed are restored, in O(those hosts); on a later snapshot of the same lineage where
    /// few chunks changed, also the hosts of those chunks are recounted
    /// ([`NodeState::update`]); otherwise every host record is read, in O(hosts + instances).
    pub(crate) fn prepare(&mut self, cluster: &Cluster, service: Option<Symbol>, name: &str) {
        let n = cluster.id_bound();
        let mut changed = Vec::new();
        let lineage = match &self.snapshot {
            Some(kept) if self.svc.len() == kept.id_bound() => Lineage::of(kept, cluster, true, &mut changed),
            _ => Lineage::Rebuild,
        };
        match lineage {
            Lineage::Same => {}
            Lineage::Refresh(chunks) => {
                self.update(cluster, chunks, service, name);
                self.snapshot = Some(cluster.clone());
            }
            Lineage::Rebuild => {
                self.forget_snapshot();
                self.snapshot = Some(cluster.clone());
            }
        }
        if self.counted_for.as_deref() == Some(name) {
            for &i in &self.changed {
                let i = i as usize;
                let (svc, total) = (self.base_svc[i], self.base_total[i]);
                (self.svc[i], self.total[i], self.penalty[i]) = (svc, total, 0);
                self.key[i] = pack_key(0, svc, total);
                self.stale[i] = false;
            }
        } else {
            if self.svc.len() == n {
                // Only the hosts with tasks and those the previous call changed hold non-zero
                // values (and only the latter a stale flag).
                for &i in &self.with_tasks {
                    let i = i as usize;
                    (self.svc[i], self.total[i], self.base_svc[i], self.base_total[i], self.key[i]) = (0, 0, 0, 0, 0);
                }
                for &i in &self.changed {
                    let i = i as usize;
                    (self.svc[i], self.total[i], self.penalty[i], self.key[i], self.stale[i]) = (0, 0, 0, 0, false);
                }
            } else {
                for v in [&mut self.svc, &mut self.total, &mut self.penalty, &mut self.base_svc, &mut self.base_total] {
                    v.clear();
                    v.resize(n, 0);
                }
                self.key.clear();
                self.key.resize(n, 0);
                self.stale.clear();
                self.stale.resize(n, false);
            }
            self.with_tasks.clear();
            for (id, host) in cluster.hosts() {
                let (svc, total) = task_counts(host, service, name);
                if (svc, total) != (0, 0) {
                    let i = id.index();
                    (self.svc[i], self.total[i]) = (svc, total);
                    (self.base_svc[i], self.base_total[i]) = (svc, total);
                    self.key[i] = pack_key(0, svc, total);
                    self.with_tasks.push(i as u32);
                }
            }
            self.counted_for = Some(name.to_owned());
        }
        self.changed.clear();
        if self.score.len() != n {
            self.score.clear();
            self.score.resize(n, 0.0);
        } else if self.scored {
            self.score.fill(0.0);
        }
        self.scored = false;
        self.rank.resize(n, 0);
        self.eligible.resize(n, false);
    }

    /// Brings what is kept from the snapshot held to `cluster`, a later snapshot of the same
    /// lineage in which `chunks` changed, few enough to refresh ([`Lineage::Refresh`]). The
    /// base counts, when of the service `name`, are recounted for the hosts of the changed
    /// chunks (the previous call's changes are restored by the caller); counts of another
    /// service are dropped. The changed chunks' rows of [`NodeState::prefix_fail`] are noted
    /// stale, redone by [`Run::initial_fails`] before they are read (all of them dropped once
    /// the stale chunks add up to more than a refresh pays for, [`refresh_pays`]). Computes in
    /// O(changed chunks × 64 + their instances + hosts with tasks).
    fn update(&mut self, cluster: &Cluster, chunks: &[usize], service: Option<Symbol>, name: &str) {
        if self.prefix_for.is_some() {
            self.prefix_stale.extend_from_slice(chunks);
            self.prefix_stale.sort_unstable();
            self.prefix_stale.dedup();
            if !refresh_pays(self.prefix_stale.len(), cluster.chunk_count()) {
                (self.prefix_for, self.prefix_stale) = (None, Vec::new());
            }
        }
        if self.counted_for.as_deref() != Some(name) {
            self.counted_for = None;
            return;
        }
        let n = cluster.id_bound();
        for v in [&mut self.svc, &mut self.total, &mut self.penalty, &mut self.base_svc, &mut self.base_total] {
            v.resize(n, 0);
        }
        self.key.resize(n, 0);
        self.stale.resize(n, false);
        for &c in chunks {
            let (lo, hi) = (c * CHUNK, ((c + 1) * CHUNK).min(n));
            for i in lo..hi {
                let (svc, total) = cluster.host(HostId(i as u32)).map_or((0, 0), |h| task_counts(h, service, name));
                (self.svc[i], self.total[i], self.base_svc[i], self.base_total[i]) = (svc, total, svc, total);
                (self.penalty[i], self.key[i], self.stale[i]) = (0, pack_key(0, svc, total), false);
            }
            // The hosts with tasks are listed by id: the chunk's range is replaced.
            let start = self.with_tasks.partition_point(|&i| (i as usize) < lo);
            let end = self.with_tasks.partition_point(|&i| (i as usize) < hi);
            let (base_svc, base_total) = (&self.base_svc, &self.base_total);
            let now = (lo..hi).filter(|&i| (base_svc[i], base_total[i]) != (0, 0)).map(|i| i as u32);
            self.with_tasks.splice(start..end, now);
        }
    }

    /// Forgets the snapshot and what was computed from it: the next call computes it all.
    pub(crate) fn forget_snapshot(&mut self) {
        (self.snapshot, self.counted_for, self.prefix_for) = (None, None, None);
        self.prefix_stale.clear();
    }

    /// Sets host `i`'s key from its columns and notes it changed.
    #[inline]
    pub(crate) fn rekey(&mut self, i: usize) {
        self.key[i] = pack_key(self.penalty[i], self.svc[i], self.total[i]);
        self.changed.push(i as u32);
    }
}

/// A host's active tasks of the service `name` (`service`, its symbol) and in total
/// ([`node::active_counts`]); a host without instances or attributes runs none.
fn task_counts(host: &Host, service: Option<Symbol>, name: &str) -> (u32, u32) {
    if host.instances.is_empty() && host.attributes.is_none() {
        (0, 0)
    } else {
        node::active_counts(host, service, name)
    }
}

/// What the leading Ready and Resource verdicts of a snapshot's hosts depend on besides the
/// snapshot: the stages and the request's resources (amounts by their bits).
#[derive(Debug, PartialEq)]
struct PrefixKey {
    stages: Vec<Stage>,
    resources: Vec<(ResourceId, u64)>,
    unknown: bool,
}

/// [`NodeState::prefix_fail`] of a host that passes every leading Ready and Resource stage.
pub(crate) const PREFIX_PASSED: u32 = u32::MAX;

/// The packed node key of [`NodeState::key`].
#[inline]
pub(crate) fn pack_key(penalty: u32, svc: u32, total: u32) -> u128 {
    u128::from(penalty) << 64 | u128::from(svc) << 32 | u128::from(total)
}

/// A packed node key ([`NodeState::key`]) and a tie-break in one
/// u64, ordered as `key << 32 | tie` is: `None` when the key has a penalty or a count of 2^16
/// or more.
pub(crate) fn narrow_key(key: u128, tie: u32) -> Option<u64> {
    if key >> 48 != 0 || (key as u32) >> 16 != 0 {
        return None;
    }
    let (svc, total) = ((key >> 32) as u64, key as u64 & 0xffff);
    Some(svc << 48 | total << 32 | u64::from(tie))
}

/// How the compatible modes revisit a leaf, from the request's [`SpreadMode`](super::request::SpreadMode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RevisitOrder {
    /// Drop failing candidates in place, then sort stably
    /// ([`SpreadMode::SwarmCompatibleStable`](super::request::SpreadMode::SwarmCompatibleStable)).
    Stable,
    /// Drop failing candidates by moving the last into their slot, then heap-sort
    /// ([`SpreadMode::SwarmCompatible`](super::request::SpreadMode::SwarmCompatible)).
    GoHeap,
}

pub(crate) struct Run<'a> {
    pub(crate) cluster: &'a Cluster,
    pub(crate) request: &'a Request,
    pub(crate) compiled: &'a CompiledRequest,
    pub(crate) overlay: &'a mut Overlay,
    pub(crate) entries: Vec<Entry<'a>>,
    /// SwarmKit's per-filter failure counters (compatible mode).
    pub(crate) counters: Vec<u32>,
    /// Whether some counter may be non-zero: a failure since the last pass.
    pub(crate) counted: bool,
    pub(crate) hard: Vec<Domains>,
    /// Whether `ScheduleAnyway` constraints still gate candidates (balanced mode).
    pub(crate) soft_on: bool,
    pub(crate) nodes: &'a mut NodeState,
    pub(crate) tree: Tree,
    /// Tasks of the batch not yet placed.
    pub(crate) left: u32,
    pub(crate) placed: Vec<HostId>,
    /// The leaf of each placed task.
    pub(crate) leaves: Vec<u32>,
    pub(crate) revisit: RevisitOrder,
    /// Whether the user weighers gave any node a score.
    pub(crate) scored: bool,
    /// Sort keys of a leaf's candidates, each with its tie-break in the low 32 bits.
    pub(crate) sort_buf: Vec<u128>,
    /// The same packed in a u64 when the counts allow ([`NodeState::key`] without a penalty,
    /// counts below 2^16).
    pub(crate) sort_buf64: Vec<u64>,
    /// The nodes of a leaf visit that failed a filter (compatible mode).
    pub(crate) failed_buf: Vec<bool>,
    /// A leaf's candidates' key classes in a counting sort.
    pub(crate) class_buf: Vec<u8>,
    /// A leaf's candidates before a stable re-sort.
    pub(crate) pos_buf: Vec<HostId>,
    /// A revisited leaf's candidates with their keys and scores (compatible mode's heap).
    pub(crate) heap_buf: Vec<(u128, f64, HostId)>,
    /// The number of leading Ready and Resource entries, set by [`Run::initial_fails`].
    pub(crate) prefix: usize,
    /// Every pipeline entry is host-local (no hard spread entry; every user filter says so):
    /// a node's verdict changes only when a task is placed on it.
    pub(crate) local: bool,
}

impl<'a> Run<'a> {
    /// A run of `request.count` tasks through `entries`, with the hard spread domains `hard`;
    /// every buffer empty, no task placed, no counter or score set, revisited leaves in
    /// SwarmKit's heap order. [`Run::local`] is left `false` for the caller to decide.
    pub(crate) fn new(
        cluster: &'a Cluster,
        request: &'a Request,
        compiled: &'a CompiledRequest,
        overlay: &'a mut Overlay,
        nodes: &'a mut NodeState,
        entries: Vec<Entry<'a>>,
        hard: Vec<Domains>,
    ) -> Self {
        let tasks = request.count;
        Run {
            cluster,
            request,
            compiled,
            overlay,
            counters: vec![0; entries.len()],
            entries,
            counted: false,
            soft_on: hard.iter().any(|d| d.soft),
            hard,
            nodes,
            tree: Tree::default(),
            left: tasks,
            placed: Vec::with_capacity(tasks as usize),
            leaves: Vec::with_capacity(tasks as usize),
            revisit: RevisitOrder::GoHeap,
            scored: false,
            sort_buf: Vec::new(),
            sort_buf64: Vec::new(),
            heap_buf: Vec::new(),
            pos_buf: Vec::new(),
            class_buf: Vec::new(),
            failed_buf: Vec::new(),
            prefix: 0,
            local: false,
        }
    }

    pub(crate) fn cx(&self) -> Cx<'_> {
        Cx::new(self.cluster, self.request, self.compiled, self.overlay, self.placed.len() as u32)
    }

    /// The first pipeline entry `host` fails, skipping hard spread entries unless `with_hard`.
    pub(crate) fn fails(&self, host: HostId, with_hard: bool) -> Option<usize> {
        self.fails_from(host, with_hard, 0)
    }

    /// [`fails`](Run::fails) over the entries from `start` on.
    fn fails_from(&self, host: HostId, with_hard: bool, start: usize) -> Option<usize> {
        let cx = self.cx();
        self.entries[start..]
            .iter()
            .position(|e| match (e.hard, e.filter) {
                (Some(d), _) => with_hard && !self.hard[d].allows(host),
                (None, Some(f)) => !f.check(&cx.with_state(e.state.as_deref()), host).is_pass(),
                (None, None) => false,
            })
            .map(|i| i + start)
    }

    /// The number of leading Ready and Resource entries: the stages [`initial_fails`]
    /// evaluates a chunk at a time.
    ///
    /// [`initial_fails`]: Run::initial_fails
    fn prefix_len(&self) -> usize {
        self.entries.iter().take_while(|e| matches!(e.stage, Stage::Ready | Stage::Resource)).count()
    }

    /// Fills [`NodeState::prefix_fail`] while nothing is placed (the overlay is empty), a chunk
    /// at a time through the filters' own chunk checks ([`Filter::check_chunk`]: Ready from the
    /// chunk's schedulable mask, Resource from the free columns, the same comparisons they make
    /// for one host). Computes in O(hosts × reserved kinds) without reading a
    /// host record (except for reserved kinds beyond the dense columns), or O(1) when the table
    /// of an earlier call on this snapshot, with the same stages and resources, is kept
    /// (O(64 × reserved kinds) per chunk changed since, when kept from an earlier snapshot of
    /// the lineage: [`NodeState::update`]).
    pub(crate) fn initial_fails(&mut self) {
        let prefix = self.prefix_len();
        self.prefix = prefix;
        let key = PrefixKey {
            stages: self.entries[..prefix].iter().map(|e| e.stage).collect(),
            resources: self.compiled.resources.iter().map(|&(r, a)| (r, a.to_bits())).collect(),
            unknown: !self.compiled.unknown.is_empty(),
        };
        let n = self.cluster.id_bound();
        let mut out = std::mem::take(&mut self.nodes.prefix_fail);
        let mut stale = std::mem::take(&mut self.nodes.prefix_stale);
        let mut rejections = Rejections::new(false);
        // Kept from an earlier call on this snapshot, or on an earlier one but for the chunks
        // changed since ([`NodeState::prepare`] checked it).
        if self.nodes.prefix_for.as_ref() == Some(&key) {
            out.resize(n, PREFIX_PASSED);
            for &c in &stale {
                self.prefix_chunk(c, &mut out, &mut rejections);
            }
        } else {
            out.clear();
            out.resize(n, PREFIX_PASSED);
            for c in 0..self.cluster.chunk_count() {
                self.prefix_chunk(c, &mut out, &mut rejections);
            }
            self.nodes.prefix_for = Some(key);
        }
        stale.clear();
        self.nodes.prefix_stale = stale;
        self.nodes.prefix_fail = out;
    }

    /// Writes chunk `c`'s rows of [`NodeState::prefix_fail`] into `out` ([`initial_fails`]):
    /// the leading entries judge the chunk's live lanes one after the other through the core's
    /// filter chain ([`judge_chunk`]), each with its own chunk check, and a lane dropped by an
    /// entry is noted there. The counts go to `rejections` (not read: SwarmKit's counters are
    /// kept node by node, in visit order).
    ///
    /// [`initial_fails`]: Run::initial_fails
    fn prefix_chunk(&self, c: usize, out: &mut [u32], rejections: &mut Rejections) {
        let lanes = (c * CHUNK..((c + 1) * CHUNK).min(out.len())).len();
        out[c * CHUNK..c * CHUNK + lanes].fill(PREFIX_PASSED);
        let cx = self.cx();
        let mut mask = self.cluster.hot_chunk(c).live;
        for (i, e) in self.entries[..self.prefix].iter().enumerate() {
            let Some(filter) = e.filter else { continue };
            let fcx = cx.with_state(e.state.as_deref());
            let pass = judge_chunk([(i as u32, filter, &fcx)], c, mask, rejections) & mask;
            let mut failed = mask & !pass;
            while failed != 0 {
                out[c * CHUNK + failed.trailing_zeros() as usize] = i as u32;
                failed &= failed - 1;
            }
            mask = pass;
        }
    }

    /// [`fails`](Run::fails) before the first placement, from [`initial_fails`]'s table: the
    /// leading stages are read from it, the rest checked as usual.
    ///
    /// [`initial_fails`]: Run::initial_fails
    pub(crate) fn fails_initially(&self, host: HostId, with_hard: bool) -> Option<usize> {
        match self.nodes.prefix_fail[host.index()] {
            PREFIX_PASSED => {
                let start = self.prefix;
                if start == self.entries.len() {
                    return None;
                }
                self.fails_from(host, with_hard, start)
            }
            i => Some(i as usize),
        }
    }

    /// SwarmKit's `Pipeline.Process`: a failing node bumps its first failing filter's counter,
    /// a passing node resets every counter.
    #[inline(always)]
    pub(crate) fn process(&mut self, host: HostId) -> bool {
        if self.local && !self.nodes.stale[host.index()] {
            self.count_pass();
            return true;
        }
        let first = self.fails(host, true);
        self.count(host, first)
    }

    /// [`process`](Run::process) before the first placement ([`fails_initially`]).
    ///
    /// [`fails_initially`]: Run::fails_initially
    #[inline]
    pub(crate) fn process_initially(&mut self, host: HostId) -> bool {
        if self.nodes.prefix_fail[host.index()] == PREFIX_PASSED && self.prefix == self.entries.len() {
            self.count_pass();
            return true;
        }
        let first = self.fails_initially(host, true);
        self.count(host, first)
    }

    /// Updates SwarmKit's counters for `host`'s verdict (`first`: the entry it failed).
    fn count(&mut self, host: HostId, first: Option<usize>) -> bool {
        match first {
            Some(i) => {
                self.counters[i] += 1;
                self.counted = true;
                false
            }
            None => {
                self.count_pass();
                self.nodes.stale[host.index()] = false;
                true
            }
        }
    }

    /// A pass resets every counter ([`Run::counted`] says whether one may be non-zero).
    #[inline]
    fn count_pass(&mut self) {
        if self.counted {
            self.counters.fill(0);
            self.counted = false;
        }
    }

    /// Whether the hard (and, while on, soft) spread constraints allow one more task on `host`.
    pub(crate) fn gate(&self, host: HostId) -> bool {
        self.hard.iter().all(|d| (d.soft && !self.soft_on) || d.allows(host))
    }

    /// SwarmKit's node order: failure penalty, tasks of the service, total tasks; then the user
    /// weighers' score (higher first). `true` when `a` is strictly better than `b`.
    pub(crate) fn node_less(&self, a: HostId, b: HostId) -> bool {
        let n = &*self.nodes;
        let (i, j) = (a.index(), b.index());
        let (ka, kb) = (n.key[i], n.key[j]);
        if ka != kb {
            return ka < kb;
        }
        n.score[i] > n.score[j]
    }

    /// [`node_less`](Run::node_less) with the name order as the last key: a total order.
    pub(crate) fn full_order(&self, a: HostId, b: HostId) -> Ordering {
        if self.node_less(a, b) {
            Ordering::Less
        } else if self.node_less(b, a) {
            Ordering::Greater
        } else {
            self.nodes.rank[a.index()].cmp(&self.nodes.rank[b.index()])
        }
    }

    /// Places one task on `host` in `leaf`: consumes its resources virtually and updates the
    /// counts of the node, the hard spread domains and the branches above.
    pub(crate) fn place(&mut self, host: HostId, leaf: u32) {
        self.overlay.consume(host, &self.compiled.resources);
        self.nodes.svc[host.index()] += 1;
        self.nodes.total[host.index()] += 1;
        self.nodes.stale[host.index()] = true;
        self.nodes.rekey(host.index());
        for d in &mut self.hard {
            d.record(host);
        }
        self.tree.record(leaf);
        self.placed.push(host);
        self.leaves.push(leaf);
        self.left -= 1;
    }

    /// Scores `hosts` with the user weighers, through the core's [`WeighPass`] (normalised over
    /// `hosts`, times their multipliers, a non-finite multiplier refused).
    pub(crate) fn weigh(&mut self, weighers: &[(Box<dyn Weigher>, f64)], hosts: &[HostId]) -> Result<(), SpreadError> {
        if weighers.is_empty() || hosts.len() < 2 {
            return Ok(());
        }
        let mut scores = vec![0.0; hosts.len()];
        WeighPass::new()
            .score(weighers, &self.cx(), hosts, &mut scores)
            .map_err(|error| SpreadError::Prepare { error })?;
        for (&h, &s) in hosts.iter().zip(&scores) {
            self.nodes.score[h.index()] += s;
        }
        self.nodes.scored = true;
        self.scored = true;
        Ok(())
    }

    /// SwarmKit's counters (compatible mode) as the core's rejection counts: each entry's
    /// count under its position, in pipeline order. No host is recorded.
    pub(crate) fn swarm_counts(&self) -> Rejections {
        let mut out = Rejections::new(false);
        for (i, &n) in self.counters.iter().enumerate() {
            out.set_filter(i as u32);
            let mut left = n;
            while left > 0 {
                // Lanes of no chunk in particular: a count of up to 64 at once.
                let k = left.min(CHUNK as u32);
                out.reject_lanes(0, u64::MAX >> (64 - k), Reason(0));
                left -= k;
            }
        }
        out
    }

    /// Every live node judged by the whole pipeline over the state in hand, a chunk at a time
    /// through the core's filter chain ([`judge_chunk`]; a hard spread entry lane by lane), each
    /// rejection counted under the first entry that fails the node, with that filter's reason,
    /// in pipeline order, as rejections of `instance`; `per_host` also records each rejected
    /// node. Computes in O(chunks × entries) chunk checks.
    pub(crate) fn final_pass(&self, instance: u32, per_host: bool) -> Rejections {
        let mut out = Rejections::new(per_host);
        out.set_instance(instance);
        let cx = self.cx();
        for c in 0..self.cluster.chunk_count() {
            let mut mask = self.cluster.hot_chunk(c).live;
            for (i, e) in self.entries.iter().enumerate() {
                if mask == 0 {
                    break;
                }
                mask = match (e.hard, e.filter) {
                    (Some(d), _) => {
                        out.set_filter(i as u32);
                        let domains = &self.hard[d];
                        out.check_lanes(c, mask, |h| domains.allows(h).into())
                    }
                    (None, Some(f)) => {
                        judge_chunk([(i as u32, f, &cx.with_state(e.state.as_deref()))], c, mask, &mut out)
                    }
                    (None, None) => mask,
                };
            }
        }
        out.order_by_filter(0);
        out
    }

    /// Entry `i`'s name and its words for `reason`: the filter's own, or the hard spread
    /// constraint's.
    fn describe(&self, cx: &Cx<'_>, i: usize, reason: Reason) -> (String, String) {
        let e = &self.entries[i];
        match e.filter {
            Some(f) => (f.name().to_owned(), f.describe(&cx.with_state(e.state.as_deref()), reason)),
            None => ("hard spread".to_owned(), "hard spread constraint not satisfied".to_owned()),
        }
    }

    /// Entry `i`'s name and the words of every reason it has against `host`, `reason`'s first
    /// ([`Filter::all_reasons`]); the hard spread constraint has one.
    fn reasons(&self, cx: &Cx<'_>, i: usize, host: HostId, reason: Reason) -> (String, Vec<String>) {
        let e = &self.entries[i];
        match e.filter {
            Some(f) => {
                let words = every_reason(f, &cx.with_state(e.state.as_deref()), host, reason, &mut Vec::new());
                (f.name().to_owned(), words)
            }
            None => ("hard spread".to_owned(), vec!["hard spread constraint not satisfied".to_owned()]),
        }
    }

    /// The core's [`Explanation`] of the batch. With tasks left, SwarmKit's message
    /// (`no suitable node (…)`) from `swarm`'s counts per entry, highest first (ties in pipeline
    /// order), in SwarmKit's wording. From `last` (a [`final_pass`](Run::final_pass)), when
    /// there is one: the rejections, highest first (ties in pipeline order), each in its
    /// filter's own words, the nodes left available and, when it recorded them, every node's
    /// verdict; without one, no rejection and the nodes that passed when the tree was built.
    pub(crate) fn explain(&self, swarm: Option<&Rejections>, last: Option<&Rejections>, instance: u32) -> Explanation {
        let cx = self.cx();
        let hosts = self.cluster.len() as u32;
        let mut explanation = Explanation::new(hosts);
        explanation.instance = instance;
        if let Some(swarm) = swarm.filter(|_| self.left > 0) {
            // Per entry, whatever the reasons: a user filter reads as its reason 0.
            let mut per_entry: Vec<(u32, u32)> = Vec::new();
            for &(i, _, count) in swarm.counts() {
                match per_entry.iter_mut().find(|c| c.0 == i) {
                    Some(c) => c.1 += count,
                    None => per_entry.push((i, count)),
                }
            }
            per_entry.retain(|c| c.1 > 0);
            per_entry.sort_by_key(|&(i, count)| (std::cmp::Reverse(count), i));
            explanation.message = Some(if per_entry.is_empty() {
                "no suitable node".to_owned()
            } else {
                let parts: Vec<String> = per_entry
                    .iter()
                    .map(|&(i, count)| {
                        let (_, text) = self.describe(&cx, i as usize, Reason(0));
                        self.entries[i as usize].stage.wording(count, &text)
                    })
                    .collect();
                format!("no suitable node ({})", parts.join("; "))
            });
        }
        let Some(last) = last else {
            explanation.available = self.tree.branches.first().map_or(0, |b| b.eligible);
            return explanation;
        };
        let mut rejections: Vec<RejectionCount> = last
            .counts()
            .iter()
            .map(|&(i, reason, count)| {
                let (filter, reason) = self.describe(&cx, i as usize, reason);
                RejectionCount { filter, reason, count }
            })
            .collect();
        rejections.sort_by_key(|r| std::cmp::Reverse(r.count));
        explanation.available = hosts.saturating_sub(last.total());
        explanation.rejections = rejections;
        if let Some(rejected) = last.hosts() {
            let mut rejected = rejected.to_vec();
            rejected.sort_by_key(|r| r.host);
            for (id, host) in self.cluster.hosts() {
                let found = rejected.binary_search_by_key(&id, |r| r.host).ok().map(|k| rejected[k]);
                let (filter, reasons) = match found {
                    Some(r) => {
                        let (filter, reasons) = self.reasons(&cx, r.filter as usize, id, r.reason);
                        (Some(filter), reasons)
                    }
                    None => (None, Vec::new()),
                };
                explanation.verdicts.push(HostVerdict {
                    host: host.name.to_string(),
                    passed: found.is_none(),
                    filter,
                    reason: reasons.first().cloned(),
                    reasons,
                    instance: found.map(|r| r.instance),
                    disk: None,
                });
            }
        }
        explanation
    }

    /// The `k` nodes SwarmKit's node order ranks best over the state the batch left, among
    /// the nodes the whole pipeline passes there: where the next task would go within its
    /// branch. Each lists the order's keys as terms, lower counts first (multiplier −1): the
    /// failure penalty, the service's tasks, the total tasks, then the user weighers' score.
    /// Explanations only: it judges every node once more and allocates.
    pub(crate) fn top(&self, k: usize) -> Vec<RankedHost> {
        if k == 0 {
            return Vec::new();
        }
        let mut passing: Vec<HostId> =
            self.cluster.hosts().map(|(h, _)| h).filter(|&h| self.fails(h, true).is_none()).collect();
        let order = |a: &HostId, b: &HostId| self.full_order(*a, *b).then(a.cmp(b));
        if passing.len() > k {
            passing.select_nth_unstable_by(k - 1, order);
            passing.truncate(k);
        }
        passing.sort_by(order);
        let n = &*self.nodes;
        passing
            .into_iter()
            .map(|h| {
                let i = h.index();
                let mut keys = vec![
                    ("failure penalty", f64::from(n.penalty[i]), -1.0),
                    ("service tasks", f64::from(n.svc[i]), -1.0),
                    ("total tasks", f64::from(n.total[i]), -1.0),
                ];
                if self.scored {
                    keys.push(("weighers", n.score[i], 1.0));
                }
                RankedHost::by_keys(self.cluster.host_name(h).to_owned(), None, &keys)
            })
            .collect()
    }

    /// The tree as a report.
    pub(crate) fn report(&self, branch: u32, requested: u32) -> BranchReport {
        let b = &self.tree.branches[branch as usize];
        let note = if branch == 0 || b.placed > 0 || requested == 0 {
            None
        } else if b.eligible == 0 {
            Some(BranchNote::NoEligibleNode)
        } else if b.asked == 0 {
            Some(BranchNote::AtOrAboveShare)
        } else if b.starved {
            Some(BranchNote::BatchExhausted)
        } else {
            Some(BranchNote::NoCapacity)
        };
        let weighted = b.depth > 0 && matches!(self.tree.levels[b.depth - 1].kind, super::tree::LevelKind::Weighted(_));
        BranchReport {
            descriptor: (b.depth > 0).then(|| self.tree.levels[b.depth - 1].descriptor.clone()),
            value: b.value.to_string(),
            nodes: b.nodes,
            eligible_nodes: b.eligible,
            existing: b.existing,
            asked: b.asked,
            placed: b.placed,
            share: weighted.then_some(b.share),
            note,
            children: b.children.iter().map(|&c| self.report(c, requested)).collect(),
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::{NodeState, Run, PREFIX_PASSED};
    use crate::filter::{filter_fn, Filter};
    use crate::id::HostId;
    use crate::request::Request;
    use crate::rng::SplitMix64;
    use crate::snapshot::{Cluster, HostSpec, HostState, Overlay, ResourceSpec};
    use crate::spread::filters::{ReadyFilter, Stage, SwarmResourceFilter};
    use crate::spread::run::Entry;

    /// Runs `f` on a fresh compatible-mode [`Run`] of `request` over `cluster`, with the
    /// pipeline the engine builds for it (Ready, Resource when the request reserves something)
    /// followed by `user`, nothing placed yet.
    pub(crate) fn with_run<R>(
        cluster: &Cluster,
        request: &Request,
        user: Option<&dyn Filter>,
        f: impl FnOnce(&mut Run<'_>) -> R,
    ) -> R {
        let compiled = request.compile(cluster).unwrap();
        let (ready, resource) = (ReadyFilter, SwarmResourceFilter);
        let mut entries =
            vec![Entry { filter: Some(&ready as &dyn Filter), hard: None, stage: Stage::Ready, state: None }];
        if !compiled.resources.is_empty() || !compiled.unknown.is_empty() {
            entries.push(Entry { filter: Some(&resource), hard: None, stage: Stage::Resource, state: None });
        }
        if let Some(u) = user {
            entries.push(Entry { filter: Some(u), hard: None, stage: Stage::User, state: None });
        }
        let mut overlay = Overlay::new();
        let mut nodes = NodeState::default();
        nodes.prepare(cluster, None, "web");
        let mut run = Run::new(cluster, request, &compiled, &mut overlay, &mut nodes, entries, Vec::new());
        f(&mut run)
    }

    /// A seeded cluster of `n` hosts: memory, vCPUs and a `gpu` resource beyond the dense
    /// columns drawn from a few levels (so a request's amount often equals a host's free
    /// amount), reserved amounts, and some hosts down, disabled, cordoned or evicting.
    pub(crate) fn cluster(seed: u64, n: usize) -> Cluster {
        let mut rng = SplitMix64::new(seed);
        let mut b = Cluster::builder();
        for i in 0..n {
            let mut host = HostSpec::new(format!("h{i}"))
                .memory_mb(1024.0 * rng.below(4) as f64)
                .vcpus(rng.below(5) as f64)
                .resource("gpu", {
                    let reserved = rng.below(2) as f64;
                    ResourceSpec::new(reserved + rng.below(3) as f64).reserved(reserved)
                });
            let draw = rng.below(12);
            if draw < 4 {
                host = host.state(HostState {
                    up: draw != 0,
                    enabled: draw != 1,
                    cordoned: draw == 2,
                    evicting: draw == 3,
                });
            }
            b = b.host(host);
        }
        b.build().unwrap()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// The leading Ready and Resource stages judged a chunk at a time from the dense
        /// columns ([`Run::initial_fails`], read by [`Run::fails_initially`]) against the
        /// pipeline run node by node ([`Run::fails`]): the same first failing entry, or the same
        /// pass, for every host, with and without a user filter after them.
        #[test]
        fn chunked_leading_stages_match_the_pipeline_node_by_node(
            seed in proptest::prelude::any::<u64>(),
            n in 1usize..200,
            memory in 0usize..4,
            vcpus in 0usize..4,
            gpu in 0usize..3,
            unknown in proptest::bool::weighted(0.1),
            user in proptest::bool::ANY,
        ) {
            let c = cluster(seed, n);
            let mut request = Request::new(1);
            if memory > 0 {
                request = request.memory_mb(1024.0 * (memory - 1) as f64);
            }
            if vcpus > 0 {
                request = request.vcpus((vcpus - 1) as f64);
            }
            if gpu > 0 {
                request = request.resource("gpu", (gpu - 1) as f64);
            }
            if unknown {
                request = request.resource("fpga", 1.0);
            }
            let odd = filter_fn("odd", |_, h| h.0 % 2 == 1);
            let user: Option<&dyn Filter> = if user { Some(&odd) } else { None };
            with_run(&c, &request, user, |run| {
                run.initial_fails();
                for h in c.host_ids() {
                    proptest::prop_assert_eq!(run.fails_initially(h, true), run.fails(h, true), "host {}", h.0);
                    let passed = run.nodes.prefix_fail[h.index()] == PREFIX_PASSED;
                    proptest::prop_assert_eq!(passed, run.fails(h, true).is_none_or(|i| i >= run.prefix));
                }
                Ok(())
            })?;
        }

        /// The final state judged a chunk at a time through the core's filter chain
        /// ([`Run::final_pass`]: the balanced mode's failure counts, the verdicts) against the
        /// pipeline run node by node ([`Run::fails`]): every node rejected by the same entry, the
        /// same counts, with some nodes already holding tasks of the batch.
        #[test]
        fn final_pass_matches_the_pipeline_node_by_node(
            seed in proptest::prelude::any::<u64>(),
            n in 1usize..200,
            memory in 0usize..4,
            placed in proptest::collection::vec(0usize..200, 0..12),
            user in proptest::bool::ANY,
        ) {
            let c = cluster(seed, n);
            let mut request = Request::new(1).vcpus(1.0);
            if memory > 0 {
                request = request.memory_mb(1024.0 * (memory - 1) as f64);
            }
            let odd = filter_fn("odd", |_, h| h.0 % 2 == 1);
            let user: Option<&dyn Filter> = if user { Some(&odd) } else { None };
            with_run(&c, &request, user, |run| {
                let resources = run.compiled.resources.clone();
                for &p in placed.iter().filter(|&&p| p < n) {
                    run.overlay.consume(HostId(p as u32), &resources);
                    run.placed.push(HostId(p as u32));
                }
                let last = run.final_pass(3, true);
                let mut want = vec![0u32; run.entries.len()];
                for h in c.host_ids() {
                    let rejected = last.hosts().unwrap().iter().find(|r| r.host == h);
                    proptest::prop_assert_eq!(rejected.map(|r| r.filter as usize), run.fails(h, true), "host {}", h.0);
                    proptest::prop_assert!(rejected.is_none_or(|r| r.instance == 3));
                    if let Some(i) = run.fails(h, true) {
                        want[i] += 1;
                    }
                }
                let got: Vec<(u32, u32)> = last.counts().iter().map(|&(i, _, count)| (i, count)).collect();
                let want: Vec<(u32, u32)> =
                    want.iter().enumerate().filter(|c| *c.1 > 0).map(|(i, &count)| (i as u32, count)).collect();
                proptest::prop_assert_eq!(got, want, "in pipeline order");
                Ok(())
            })?;
        }
    }
}
