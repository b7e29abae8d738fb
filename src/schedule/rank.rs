//! Scores of the current candidates, kept between the instances of one request.
//!
//! For the first instance everything is computed: every weigher's raw values, each weigher's
//! normalisation range, every tier score, and a tournament tree whose root is the best candidate.
//! When only one host changed since (the previous pick, and every filter and weigher is
//! host-local), only that host's raw values are recomputed; if no weigher's normalisation range
//! moved, only its scores and its path in the tree change (O(weighers + log candidates));
//! otherwise all scores are recomputed from the kept raw values. The arithmetic is the same
//! in every case, so the answers are identical to recomputing from scratch.
//!
//! With [`Ties::PreviousOrder`] (the filter scheduler's loop) the ranking also keeps the full
//! order of the candidates: a stable sort of the previous round's order by the new scores. When
//! only one host changed, it moves to its new place, found by binary search (O(log candidates)
//! comparisons while no score is NaN), and the positions of the candidates it passed are
//! rewritten only when next read; when every score changed the order is re-sorted stably (with
//! one tier and no NaN, by integer keys: the score's order, then the previous place; an
//! insertion sort first, as a moved range mostly swaps a few neighbours, and a full sort of the
//! keys if it moves too much). A removed candidate leaves the order in place, and the
//! positions after it, like those after a re-sort, are rewritten only when next read.
//!
//! Each weigher's terms are kept as a column, so when a range moves only the columns of the
//! weighers whose range moved are recomputed before the sums. And while the scores (one tier,
//! no NaN) are pairwise distinct, which a set of them checks, the order is not kept at all: a
//! stable sort by distinct scores is the scores' own order whatever the previous one was, so
//! the tree finds the best and a moved range costs no re-sort. When two scores become equal
//! (or one NaN), the order is written out from the previous round's scores, which were
//! distinct, and the kept-order path goes on from there (a property test compares the two).
//! In that order a NaN score compares equal to every other, as in the filter scheduler's sort,
//! which is no total order; the standard sorts may panic on such a comparison, so an order that
//! meets one is sorted by [`merge_sort`]. With [`Ties::HostId`] a NaN ranks after every number
//! ([`score_order`]): a total order, so the tree, a scan and the one-pass heap agree.

use super::{Ties, Weighed};
use crate::error::ScheduleError;
use crate::id::HostId;
use crate::request::{Cx, Prepared};
use crate::weigh::{Bounds, Multipliers};
use std::cmp::Ordering;

/// The clamped, non-NaN extremes of one weigher's raw values and how many candidates sit on each.
#[derive(Debug, Clone, Copy)]
struct Extremes {
    lo: f64,
    hi: f64,
    n_lo: u32,
    n_hi: u32,
    /// Whether `n_lo` and `n_hi` are known. A one-instance request never needs them, so the
    /// first pass skips counting; the first update rescans.
    counted: bool,
}

impl Extremes {
    /// The extremes without their counts.
    fn scan_uncounted(values: &[f64], bounds: Bounds) -> Extremes {
        let (lo, hi) = Extremes::range(values, &[], bounds);
        Extremes { lo, hi, n_lo: 0, n_hi: 0, counted: false }
    }

    fn range(head: &[f64], tail: &[f64], bounds: Bounds) -> (f64, f64) {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for part in [head, tail] {
            for &v in part {
                let v = bounds.clamp(v);
                // Comparisons with a NaN are false, so NaN values never become extremes.
                if v < lo {
                    lo = v;
                }
                if v > hi {
                    hi = v;
                }
            }
        }
        (lo, hi)
    }

    /// The extremes of `values` without position `skip`: a min/max pass, then a counting pass,
    /// both branch-free so they vectorise.
    fn scan_except(values: &[f64], bounds: Bounds, skip: usize) -> Extremes {
        let (head, tail) = match values.get(skip) {
            Some(_) => (&values[..skip], &values[skip + 1..]),
            None => (values, &values[..0]),
        };
        let (lo, hi) = Extremes::range(head, tail, bounds);
        let (mut n_lo, mut n_hi) = (0u32, 0u32);
        for part in [head, tail] {
            for &v in part {
                let v = bounds.clamp(v);
                n_lo += u32::from(v == lo);
                n_hi += u32::from(v == hi);
            }
        }
        Extremes { lo, hi, n_lo, n_hi, counted: true }
    }

    #[inline]
    fn add(&mut self, v: f64) {
        if v.is_nan() {
            return;
        }
        if v > self.hi {
            self.hi = v;
            self.n_hi = 0;
        }
        if v == self.hi {
            self.n_hi += 1;
        }
        if v < self.lo {
            self.lo = v;
            self.n_lo = 0;
        }
        if v == self.lo {
            self.n_lo += 1;
        }
    }

    /// Replaces one value; `false` when an extreme that `bounds` does not fix can only be found
    /// by a rescan. (An end fixed by a bound never needs one: its tracked value is not used.)
    #[inline]
    fn replace(&mut self, old: f64, new: f64, bounds: Bounds) -> bool {
        if !self.counted {
            return false;
        }
        if !old.is_nan() {
            // A NaN `new` (a removal) leaves the extremes like any smaller or larger value.
            let lost_hi = old == self.hi && self.n_hi == 1 && (new < old || new.is_nan());
            let lost_lo = old == self.lo && self.n_lo == 1 && (new > old || new.is_nan());
            if (lost_hi && bounds.max.is_none()) || (lost_lo && bounds.min.is_none()) {
                return false;
            }
            if old == self.hi {
                self.n_hi = self.n_hi.saturating_sub(1);
            }
            if old == self.lo {
                self.n_lo = self.n_lo.saturating_sub(1);
            }
        }
        self.add(new);
        true
    }
}

/// A set of pairwise distinct, non-NaN scores, by [`descending_key`] (so `-0.0` and `0.0` are
/// one), that refuses a score equal to one it holds: an open-addressed table with linear
/// probing. A slot belongs to the current fill when its stamp is the fill's, so starting a new
/// fill writes nothing per slot; a removed score leaves a [`ScoreSet::GONE`] mark, and the
/// table is refilled when marks and scores take three quarters of it.
#[derive(Debug, Default)]
struct ScoreSet {
    /// `[key, stamp]` per slot, the stamp being the fill that wrote it (0: none); a
    /// power-of-two length.
    slots: Vec<[u64; 2]>,
    fill: u64,
    /// Slots of this fill (scores and marks).
    used: usize,
}

impl ScoreSet {
    /// No non-NaN score has this key (it is the key of a NaN bit pattern).
    const GONE: u64 = u64::MAX;

    /// Holds exactly `scores` (none NaN) if they are pairwise distinct: `false` (and the set
    /// left unusable) at the first one equal to an earlier one. Computes in O(scores).
    fn fill(&mut self, scores: &[f64]) -> bool {
        let len = (2 * scores.len()).next_power_of_two().max(16);
        if self.slots.len() != len {
            // Zeroed memory: no fill owns a slot.
            self.slots = vec![[0; 2]; len];
            self.fill = 0;
        }
        self.fill += 1;
        self.used = 0;
        scores.iter().all(|&s| self.insert(s))
    }

    /// The slot holding `key`, else the free slot that ends its probe sequence, with the first
    /// [`GONE`](ScoreSet::GONE) mark met on the way (or `usize::MAX`).
    #[inline(always)]
    fn probe(&self, key: u64) -> (usize, usize) {
        let mask = self.slots.len() - 1;
        let mut i = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize & mask;
        let mut gone = usize::MAX;
        loop {
            let [k, stamp] = self.slots[i];
            if stamp != self.fill || k == key {
                return (i, gone);
            }
            if k == ScoreSet::GONE && gone == usize::MAX {
                gone = i;
            }
            i = (i + 1) & mask;
        }
    }

    /// Adds a non-NaN score; `false` (nothing added) when it equals one held.
    #[inline]
    fn insert(&mut self, score: f64) -> bool {
        let key = descending_key(score);
        let (i, gone) = self.probe(key);
        if self.slots[i][1] == self.fill {
            return false;
        }
        let at = if gone == usize::MAX {
            self.used += 1;
            i
        } else {
            gone
        };
        self.slots[at] = [key, self.fill];
        true
    }

    /// Takes out a score it holds.
    #[inline]
    fn remove(&mut self, score: f64) {
        let (i, _) = self.probe(descending_key(score));
        debug_assert!(self.slots[i][1] == self.fill, "removing a score not held");
        self.slots[i][0] = ScoreSet::GONE;
    }

    /// Whether the table should be refilled before more scores come.
    fn crowded(&self) -> bool {
        4 * self.used > 3 * self.slots.len()
    }
}

#[derive(Debug, Default)]
pub(super) struct Ranking {
    /// Candidates in this ranking.
    n: usize,
    /// Column stride: the candidate count when the ranking was last built (removals shrink `n`).
    cap: usize,
    /// Raw values, weigher-major: `raw[w * cap + c]`.
    raw: Vec<f64>,
    extremes: Vec<Extremes>,
    /// Each weigher's term of each candidate (its multiplier times its normalised value),
    /// weigher-major like `raw`: the tier scores are their sums, so when a range moves only that
    /// weigher's column is recomputed before the sums.
    terms: Vec<f64>,
    /// Per weigher: whether its column of `terms` waits for [`rescore_all`](Ranking::rescore_all).
    stale: Vec<bool>,
    /// Tier scores, tier-major: `scores[t * cap + c]`.
    scores: Vec<f64>,
    /// Each weigher's normalisation bounds, read once per ranking.
    bounds: Vec<Bounds>,
    /// Per-host multipliers, weigher-major like `raw`, for weighers that have them.
    mults: Vec<f64>,
    per_host: Vec<bool>,
    /// The per-host multipliers asked so far, per aggregate class where they follow it.
    multipliers: Multipliers,
    /// Tournament tree over candidate indices; `tree[1]` is the best. Built on first need: a
    /// one-instance request never pays for it.
    tree: Vec<u32>,
    tree_valid: bool,
    leaves: usize,
    /// How ties end.
    ties: Ties,
    /// With [`Ties::PreviousOrder`]: the candidates, best first.
    order: Vec<u32>,
    /// With [`Ties::PreviousOrder`]: each candidate's index in `order`.
    pos: Vec<u32>,
    /// With [`Ties::PreviousOrder`]: each host's position in the latest order (by host id), the
    /// tie key when a new round rebuilds the candidate list.
    host_rank: Vec<u32>,
    /// The range of the order whose `pos` and `host_rank` entries may be stale: a relocation
    /// shifts every candidate between the old and the new place, and most rounds never read
    /// their positions, so they are rewritten only when read ([`settle`](Ranking::settle)).
    unsettled: Option<(usize, usize)>,
    /// Whether a score may be NaN (set when one is written, cleared when all are rewritten
    /// without one). Without NaNs the scores order the candidates strictly weakly, which the
    /// order's binary searches and keyed re-sorts rely on.
    nan_scores: bool,
    /// [`keyed_sort`](Ranking::keyed_sort)'s keys: (descending score key, tie key, candidate).
    keys: Vec<(u64, u32, u32)>,
    /// The buffer of [`merge_sort`], for orders sorted while a NaN score is present.
    spare: Vec<u32>,
    /// With [`Ties::PreviousOrder`]: the order is not kept because it is the scores' own. While
    /// the scores (one tier, no NaN) are pairwise distinct, a stable sort of any previous order
    /// by them gives the same order, so none is kept: the tree finds the best, and `distinct`
    /// tells when two scores become equal, at which point the order is rebuilt from the
    /// previous round's scores (distinct, so their sort is that round's order). See
    /// [`materialize`](Ranking::materialize).
    implicit: bool,
    /// The current scores, while `implicit`.
    distinct: ScoreSet,
    /// The scores before a range moved, kept while `implicit` to rebuild the order they gave.
    previous: Vec<f64>,
    /// Never leave the order implicit (the plain path the fast one is tested against).
    plain: bool,
}

const EMPTY: u32 = u32::MAX;

/// How many places per candidate [`nearly_sorted`] may move keys before a keyed re-sort falls
/// back to a full sort.
const NEARLY_SORTED_MOVES: usize = 4;

/// What breaks ties between equal scores in [`Ranking::keyed_sort`].
#[derive(Debug, Clone, Copy)]
enum Tie {
    /// `pos`: the previous round's place (a new round's list).
    Pos,
    /// The place in the order being sorted (a stable sort of it).
    Place,
}

fn grow(buffer: &mut Vec<f64>, len: usize) {
    if buffer.len() < len {
        // Its contents do not matter; zeroed memory costs no writes.
        *buffer = vec![0.0; len];
    }
}

impl Ranking {
    /// Starts a request: sets the tie policy.
    pub(super) fn start(&mut self, ties: Ties) {
        self.ties = ties;
        self.unsettled = None;
        self.implicit = false;
    }

    /// Makes this ranking keep the order explicitly in every case (no
    /// [`implicit`](Ranking::implicit) order): the plain path.
    #[cfg(test)]
    pub(super) fn set_plain(&mut self, plain: bool) {
        self.plain = plain;
    }

    /// Score of candidate `c` in tier `t`.
    #[inline]
    pub(super) fn score(&self, t: usize, c: usize) -> f64 {
        self.scores[t * self.cap + c]
    }

    /// `(raw, normalised, multiplier)` of weigher `w` for candidate `c`.
    pub(super) fn term(&self, w: usize, c: usize, configured: f64) -> (f64, f64, f64) {
        let bounds = self.bounds[w];
        let raw = self.raw[w * self.cap + c];
        let (min, max) = bounds.effective(self.extremes[w].lo, self.extremes[w].hi);
        let m = if self.per_host[w] { self.mults[w * self.cap + c] } else { configured };
        (raw, bounds.normalized(raw, min, max), m)
    }

    /// Computes everything for `candidates`. With fewer than two candidates nothing is weighed
    /// and every score is 0.
    pub(super) fn full(
        &mut self,
        tiers: &[Vec<Weighed>],
        cx: &Cx<'_>,
        states: &[Prepared],
        candidates: &[HostId],
        first_round: bool,
    ) -> Result<(), ScheduleError> {
        let n = candidates.len();
        self.n = n;
        self.cap = n;
        // The caller settled any implicit order; everything is rebuilt below.
        self.implicit = false;
        let weighers = tiers.iter().map(Vec::len).sum::<usize>();
        // Buffers only grow: every slot used below is written before it is read.
        grow(&mut self.scores, tiers.len() * n);
        self.extremes.clear();
        self.bounds.clear();
        self.bounds.extend(tiers.iter().flatten().map(|x| x.weigher.bounds()));
        self.per_host.clear();
        self.per_host.extend(tiers.iter().flatten().map(|x| x.weigher.per_host_multiplier()));
        if n < 2 {
            self.scores[..tiers.len() * n].fill(0.0);
            self.nan_scores = false;
        } else {
            grow(&mut self.raw, weighers * n);
            grow(&mut self.terms, weighers * n);
            self.stale.clear();
            self.stale.resize(weighers, true);
            self.multipliers.start(weighers);
            for (w, x) in tiers.iter().flatten().enumerate() {
                let wcx = cx.with_state(states[w].as_deref());
                x.weigher.validate(&wcx, candidates)?;
                let out = &mut self.raw[w * n..(w + 1) * n];
                x.weigher.weigh_batch(&wcx, candidates, out);
                self.extremes.push(Extremes::scan_uncounted(out, self.bounds[w]));
                if self.per_host[w] {
                    grow(&mut self.mults, weighers * n);
                    for (m, &h) in self.mults[w * n..(w + 1) * n].iter_mut().zip(candidates) {
                        *m = self.multipliers.get(w, &*x.weigher, &wcx, h, x.multiplier);
                    }
                    self.multipliers.refused(&*x.weigher, &wcx)?;
                }
            }
            self.rescore_all(tiers);
        }
        self.tree_valid = false;
        if self.ties == Ties::PreviousOrder {
            self.build_order(tiers.len(), candidates, first_round);
        }
        Ok(())
    }

    /// Sorts the candidates by score, ties by their position in the previous round (by input
    /// order in the first round), and records the positions.
    fn build_order(&mut self, tiers: usize, candidates: &[HostId], first_round: bool) {
        let n = self.n;
        // Every position is rewritten below; the caller settled the previous order's.
        self.unsettled = None;
        self.pos.clear();
        if first_round {
            self.pos.extend(0..n as u32);
        } else {
            self.pos.extend(candidates.iter().map(|h| self.host_rank.get(h.index()).copied().unwrap_or(u32::MAX)));
        }
        self.order.clear();
        self.order.extend(0..n as u32);
        // In the first round `pos` is the place in `order` (0..n).
        if !self.keyed_sort(tiers, if first_round { Tie::Place } else { Tie::Pos }) {
            let (mut order, mut spare) = (std::mem::take(&mut self.order), std::mem::take(&mut self.spare));
            stable_sort(&mut order, &mut spare, self.nan_scores, |&a, &b| {
                self.by_score(tiers, a as usize, b as usize).then(self.pos[a as usize].cmp(&self.pos[b as usize]))
            });
            (self.order, self.spare) = (order, spare);
        }
        self.renumber(candidates, 0);
    }

    /// Compares two candidates by tier scores only (`Less`: `a` ranks first).
    #[inline]
    fn by_score(&self, tiers: usize, a: usize, b: usize) -> Ordering {
        for t in 0..tiers {
            match self.score(t, b).partial_cmp(&self.score(t, a)) {
                Some(Ordering::Equal) | None => {}
                Some(o) => return o,
            }
        }
        Ordering::Equal
    }

    /// Rewrites `pos` and `host_rank` for the order from index `from` on.
    fn renumber(&mut self, candidates: &[HostId], from: usize) {
        let needed = candidates.iter().map(|h| h.index() + 1).max().unwrap_or(0);
        if self.host_rank.len() < needed {
            self.host_rank.resize(needed, u32::MAX);
        }
        self.pos.resize(self.n, 0);
        for (i, &c) in self.order.iter().enumerate().skip(from) {
            self.pos[c as usize] = i as u32;
            self.host_rank[candidates[c as usize].index()] = i as u32;
        }
    }

    /// Moves candidate `c`, whose score alone changed, to its place in the order: past every
    /// candidate it now beats or loses to by score; ties keep the previous order.
    ///
    /// The rest of the order is sorted by score, so the place is found by binary search
    /// (O(tiers × log candidates) comparisons) and the candidates between the old and the new
    /// place shift by one. While a NaN score may be present the order is not a strict weak
    /// ordering, so the place is found by the walk the binary search stands for.
    fn relocate(&mut self, tiers: usize, candidates: &[HostId], c: usize) {
        // The candidate that moves is usually the previous pick, the first.
        let start = if self.order.first() == Some(&(c as u32)) {
            0
        } else {
            self.settle(candidates);
            self.pos[c] as usize
        };
        let k = if self.nan_scores { self.walk(tiers, c, start) } else { self.place(tiers, c, start) };
        if k > start {
            self.order.copy_within(start + 1..=k, start);
        } else if k < start {
            self.order.copy_within(k..start, k + 1);
        }
        self.order[k] = c as u32;
        let (lo, hi) = (start.min(k), start.max(k));
        self.unsettled = Some(self.unsettled.map_or((lo, hi), |(a, b)| (a.min(lo), b.max(hi))));
    }

    /// Candidate `c`'s place in the order: `pos[c]` where that is current, else found by a scan
    /// (O(candidates)). Reads nothing without [`Ties::PreviousOrder`] (and answers 0).
    fn place_of(&self, c: usize) -> usize {
        if self.ties != Ties::PreviousOrder {
            return 0;
        }
        match self.pos.get(c) {
            // The order is a permutation: if `c` sits at `pos[c]`, that is its place.
            Some(&p) if self.order.get(p as usize) == Some(&(c as u32)) => p as usize,
            _ => self.order[..self.n].iter().position(|&d| d as usize == c).unwrap_or(0),
        }
    }

    /// Rewrites the stale positions ([`unsettled`](Ranking::unsettled)) of the order over
    /// `candidates`. Whoever reads `pos` or `host_rank`, or changes the candidates, calls it
    /// first. Computes in O(the stale range), or O(candidates × log candidates) to build an
    /// implicit order.
    pub(super) fn settle(&mut self, candidates: &[HostId]) {
        if self.implicit {
            self.materialize(candidates);
            return;
        }
        let Some((lo, hi)) = self.unsettled.take() else { return };
        for i in lo..(hi + 1).min(self.n) {
            let d = self.order[i] as usize;
            self.pos[d] = i as u32;
            self.host_rank[candidates[d].index()] = i as u32;
        }
    }

    /// [`relocate`](Ranking::relocate)'s new place for `c`, now at `start`, by walking: down
    /// past every candidate that ranks strictly before it, else up past every one that ranks
    /// strictly after it.
    fn walk(&self, tiers: usize, c: usize, start: usize) -> usize {
        let mut k = start;
        while k + 1 < self.n && self.by_score(tiers, self.order[k + 1] as usize, c) == Ordering::Less {
            k += 1;
        }
        if k == start {
            while k > 0 && self.by_score(tiers, c, self.order[k - 1] as usize) == Ordering::Less {
                k -= 1;
            }
        }
        k
    }

    /// The place [`walk`](Ranking::walk) finds, by binary search over the order without `c`
    /// (sorted by score, NaN-free): those that rank strictly before `c` are a prefix, those that
    /// rank strictly after it a suffix.
    fn place(&self, tiers: usize, c: usize, start: usize) -> usize {
        let others = self.n - 1;
        let at = |i: usize| self.order[if i < start { i } else { i + 1 }] as usize;
        let partition = |pred: &dyn Fn(usize) -> bool| {
            let (mut lo, mut hi) = (0, others);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if pred(at(mid)) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            lo
        };
        let before = partition(&|d| self.by_score(tiers, d, c) == Ordering::Less);
        if before > start {
            return before;
        }
        let not_after = partition(&|d| self.by_score(tiers, c, d) != Ordering::Less);
        not_after.min(start)
    }

    /// Moves candidate `c` to the front of the order (a random pick among the best `k` leads the
    /// list the next round starts from).
    pub(super) fn promote(&mut self, candidates: &[HostId], c: usize) {
        if self.ties != Ties::PreviousOrder {
            return;
        }
        self.settle(candidates);
        let k = self.pos[c] as usize;
        self.order[..=k].rotate_right(1);
        for i in 0..=k {
            let d = self.order[i] as usize;
            self.pos[d] = i as u32;
            self.host_rank[candidates[d].index()] = i as u32;
        }
    }

    /// The candidates in order, with [`Ties::PreviousOrder`] and an order kept. (An implicit
    /// order is the scores' own, which [`rank`](Ranking::rank) gives, as no two are equal.)
    pub(super) fn ordered(&self) -> Option<&[u32]> {
        (self.ties == Ties::PreviousOrder && !self.implicit).then_some(&self.order[..self.n.min(self.order.len())])
    }

    /// Writes out an [`implicit`](Ranking::implicit) order: the candidates sorted by their
    /// scores, which are distinct (and not NaN), so the sort is the stable sort of any previous
    /// order. Computes in O(candidates × log candidates).
    fn materialize(&mut self, candidates: &[HostId]) {
        let scores = &self.scores[..self.n];
        self.keys.clear();
        self.keys.extend((0..self.n as u32).map(|c| (descending_key(scores[c as usize]), 0, c)));
        self.keys.sort_unstable();
        self.order.clear();
        self.order.extend(self.keys.iter().map(|k| k.2));
        self.unsettled = None;
        self.renumber(candidates, 0);
        self.implicit = false;
        // The order now finds the best; the tree is not kept up to date beside it.
        self.tree_valid = false;
    }

    /// After every score changed (a range moved): the order the stable sort of the previous
    /// one by the new scores gives. Implicit when the new scores are distinct (one tier, no
    /// NaN, not [`plain`](Ranking::plain)); otherwise the previous order is written out if it
    /// was implicit (from the scores it had, kept in `previous`) and re-sorted.
    fn reorder(&mut self, tiers: usize, candidates: &[HostId]) {
        self.tree_valid = false;
        if self.ties != Ties::PreviousOrder {
            self.build_tree(tiers, candidates);
            return;
        }
        if tiers == 1 && !self.nan_scores && !self.plain && self.distinct.fill(&self.scores[..self.n]) {
            self.implicit = true;
            self.build_tree(tiers, candidates);
            return;
        }
        if self.implicit {
            std::mem::swap(&mut self.scores, &mut self.previous);
            self.materialize(candidates);
            std::mem::swap(&mut self.scores, &mut self.previous);
        }
        self.resort(tiers);
    }

    /// Keeps the scores before a range moved, while the order is implicit.
    fn keep_previous(&mut self) {
        if self.implicit {
            self.previous.clear();
            self.previous.extend_from_slice(&self.scores[..self.n]);
        }
    }

    /// Recomputes candidate `c` (whose host alone changed). Falls back to rescoring everyone when
    /// a normalisation range moved.
    pub(super) fn update(
        &mut self,
        tiers: &[Vec<Weighed>],
        cx: &Cx<'_>,
        states: &[Prepared],
        candidates: &[HostId],
        c: usize,
    ) -> Result<(), ScheduleError> {
        if self.n < 2 {
            return Ok(());
        }
        let mut moved = false;
        for (w, x) in tiers.iter().flatten().enumerate() {
            let wcx = cx.with_state(states[w].as_deref());
            x.weigher.validate(&wcx, &candidates[c..=c])?;
            let mut new = [0.0];
            x.weigher.weigh_batch(&wcx, &candidates[c..=c], &mut new);
            moved |= self.set_raw(w, c, Some(new[0]));
        }
        if moved {
            self.keep_previous();
            // `c`'s terms in the columns that are not rewritten.
            self.rescore(tiers, c);
            self.rescore_all(tiers);
            self.reorder(tiers.len(), candidates);
            return Ok(());
        }
        // Implicit only with one tier, so there is a score to keep (none without weighers).
        let old = self.implicit.then(|| self.scores[c]);
        self.rescore(tiers, c);
        if let Some(old) = old {
            // One tier: `c`'s score alone changed.
            let new = self.scores[c];
            self.distinct.remove(old);
            if new.is_nan() || !self.distinct.insert(new) {
                // The previous round's order is its scores' order; from it, as below.
                self.scores[c] = old;
                self.materialize(candidates);
                self.scores[c] = new;
            } else {
                if self.distinct.crowded() {
                    // Distinct, so the refill takes them all.
                    self.distinct.fill(&self.scores[..self.n]);
                }
                self.update_tree(1, candidates, c);
                return Ok(());
            }
        }
        if self.ties == Ties::PreviousOrder {
            self.relocate(tiers.len(), candidates, c);
        } else {
            self.update_tree(tiers.len(), candidates, c);
        }
        Ok(())
    }

    /// After every score changed: a stable sort of the current order (ties keep it). Every
    /// position is left to be rewritten when next read.
    fn resort(&mut self, tiers: usize) {
        if self.ties != Ties::PreviousOrder {
            return;
        }
        if !self.keyed_sort(tiers, Tie::Place) {
            let (mut order, mut spare) = (std::mem::take(&mut self.order), std::mem::take(&mut self.spare));
            stable_sort(&mut order, &mut spare, self.nan_scores, |&a, &b| self.by_score(tiers, a as usize, b as usize));
            (self.order, self.spare) = (order, spare);
        }
        self.unsettled = (self.n > 0).then(|| (0, self.n - 1));
    }

    /// Sorts the order by score, ties by `tie`, then by candidate index, when that can be done
    /// by keys: with one tier and no NaN score, each candidate's key is its score as an integer
    /// that orders like it (higher first, `-0.0` as `0.0`), its tie key and its index. The keys
    /// are distinct, so an unstable sort of them gives a stable sort's order, with much cheaper
    /// comparisons; ties by place try an insertion sort first (O(candidates) when the order
    /// is nearly sorted already). `false` (and nothing done) otherwise.
    fn keyed_sort(&mut self, tiers: usize, tie: Tie) -> bool {
        if tiers != 1 || self.nan_scores {
            return false;
        }
        let (scores, pos) = (&self.scores[..self.n], &self.pos);
        self.keys.clear();
        self.keys.extend(self.order.iter().enumerate().map(|(i, &c)| {
            let tie = match tie {
                Tie::Pos => pos[c as usize],
                Tie::Place => i as u32,
            };
            (descending_key(scores[c as usize]), tie, c)
        }));
        // A stable re-sort after a normalisation range moved mostly finds the order nearly
        // sorted: a few neighbours swap.
        let n = self.keys.len();
        if !matches!(tie, Tie::Place) || !nearly_sorted(&mut self.keys, NEARLY_SORTED_MOVES * n) {
            self.keys.sort_unstable();
        }
        for (slot, key) in self.order.iter_mut().zip(&self.keys) {
            *slot = key.2;
        }
        true
    }

    /// Removes candidate `c` (a host that no longer passes the filters) by moving the last
    /// candidate into its place, in `candidates` and in every column.
    pub(super) fn remove(&mut self, tiers: &[Vec<Weighed>], candidates: &mut Vec<HostId>, c: usize) {
        debug_assert!(self.n > 2, "small rankings are rebuilt instead");
        let last = self.n - 1;
        // Places in the order, found before `last` is renamed.
        let (at, last_at) = if self.implicit { (0, 0) } else { (self.place_of(c), self.place_of(last)) };
        if self.implicit {
            self.distinct.remove(self.scores[c]);
        }
        candidates.swap_remove(c);
        let mut moved = false;
        for w in 0..self.bounds.len() {
            let cap = self.cap;
            moved |= self.set_raw(w, c, None);
            self.raw[w * cap + c] = self.raw[w * cap + last];
            self.terms[w * cap + c] = self.terms[w * cap + last];
            if self.per_host[w] {
                self.mults[w * cap + c] = self.mults[w * cap + last];
            }
        }
        for t in 0..tiers.len() {
            self.scores[t * self.cap + c] = self.scores[t * self.cap + last];
        }
        self.n = last;
        if self.ties == Ties::PreviousOrder && !self.implicit {
            // Drop `c` from the order and rename `last` to `c`: the others keep their order, and
            // those after `at` move up one place, written when next read.
            self.order.remove(at);
            let moved_at = if last_at > at { last_at - 1 } else { last_at };
            if c < last {
                self.order[moved_at] = c as u32;
                self.pos[c] = moved_at as u32;
            }
            if at < self.n {
                let (lo, hi) = (self.unsettled.map_or(at, |(a, _)| a.min(at)), self.n - 1);
                self.unsettled = Some((lo, hi));
            }
        }
        if moved {
            self.keep_previous();
            self.rescore_all(tiers);
            self.reorder(tiers.len(), candidates);
        } else if self.tree_valid {
            self.tree[self.leaves + last] = EMPTY;
            self.update_tree(tiers.len(), candidates, last);
            if c < last {
                self.update_tree(tiers.len(), candidates, c);
            }
        }
    }

    /// Sets weigher `w`'s raw value of candidate `c`, or takes `c` out of the extremes (`None`),
    /// keeping the extremes current. Returns whether the normalisation range moved.
    fn set_raw(&mut self, w: usize, c: usize, new: Option<f64>) -> bool {
        let (cap, n, bounds) = (self.cap, self.n, self.bounds[w]);
        let slot = &mut self.raw[w * cap + c];
        let old = *slot;
        if let Some(v) = new {
            *slot = v;
        }
        let e = &mut self.extremes[w];
        let before = bounds.effective(e.lo, e.hi);
        if !e.replace(bounds.clamp(old), new.map_or(f64::NAN, |v| bounds.clamp(v)), bounds) {
            let skip = if new.is_none() { c } else { usize::MAX };
            *e = Extremes::scan_except(&self.raw[w * cap..w * cap + n], bounds, skip);
        }
        let moved = bounds.effective(e.lo, e.hi) != before;
        self.stale[w] |= moved;
        moved
    }

    /// All tier scores, column by column: the [stale](Ranking::stale) term columns rewritten,
    /// then every tier's terms summed, the same sums, in the same order, as [`rescore`].
    fn rescore_all(&mut self, tiers: &[Vec<Weighed>]) {
        let (cap, n) = (self.cap, self.n);
        let mut w = 0;
        for (t, tier) in tiers.iter().enumerate() {
            let out = &mut self.scores[t * cap..t * cap + n];
            out.fill(0.0);
            for x in tier {
                let column = &mut self.terms[w * cap..w * cap + n];
                if std::mem::take(&mut self.stale[w]) {
                    let bounds = self.bounds[w];
                    let (min, max) = bounds.effective(self.extremes[w].lo, self.extremes[w].hi);
                    let raw = &self.raw[w * cap..w * cap + n];
                    let mults = self.per_host[w].then(|| &self.mults[w * cap..w * cap + n]);
                    fold_terms::<true>(column, raw, mults, x.multiplier, bounds, min, max);
                }
                for (s, &term) in out.iter_mut().zip(&*column) {
                    *s += term;
                }
                w += 1;
            }
        }
        self.nan_scores = (0..tiers.len()).any(|t| self.scores[t * cap..t * cap + n].iter().any(|s| s.is_nan()));
    }

    /// Tier scores of one candidate: the multiplier times the normalised value, summed in
    /// weigher order from +0.0.
    #[inline]
    fn rescore(&mut self, tiers: &[Vec<Weighed>], c: usize) {
        let cap = self.cap;
        let mut w = 0;
        for (t, tier) in tiers.iter().enumerate() {
            let mut sum = 0.0;
            for x in tier {
                let bounds = self.bounds[w];
                let (min, max) = bounds.effective(self.extremes[w].lo, self.extremes[w].hi);
                let m = if self.per_host[w] { self.mults[w * cap + c] } else { x.multiplier };
                let term = m * bounds.normalized(self.raw[w * cap + c], min, max);
                self.terms[w * cap + c] = term;
                sum += term;
                w += 1;
            }
            self.nan_scores |= sum.is_nan();
            self.scores[t * cap + c] = sum;
        }
    }

    /// Compares candidates: `Less` means `a` ranks first (higher tier scores, then lower id).
    #[inline]
    pub(super) fn rank(&self, tiers: usize, candidates: &[HostId], a: usize, b: usize) -> Ordering {
        for t in 0..tiers {
            match score_order(self.score(t, a), self.score(t, b)) {
                Ordering::Equal => {}
                o => return o,
            }
        }
        candidates[a].cmp(&candidates[b])
    }

    /// Whether candidates `a` and `b` have equal scores in every tier (two NaN scores are
    /// equal, as [`rank`](Ranking::rank) orders them).
    #[inline]
    pub(super) fn same_scores(&self, tiers: usize, a: usize, b: usize) -> bool {
        (0..tiers).all(|t| score_order(self.score(t, a), self.score(t, b)) == Ordering::Equal)
    }

    #[inline]
    fn better(&self, tiers: usize, candidates: &[HostId], a: u32, b: u32) -> u32 {
        if b == EMPTY {
            return a;
        }
        if a == EMPTY {
            return b;
        }
        if first(&self.scores, self.cap, tiers, candidates, a as usize, b as usize) {
            a
        } else {
            b
        }
    }

    /// Builds the tree level by level. The candidates fill a prefix of the leaves, so each
    /// level's entries are a prefix of winners and then [`EMPTY`]. Computes in O(candidates).
    fn build_tree(&mut self, tiers: usize, candidates: &[HostId]) {
        let (leaves, n) = (self.cap.next_power_of_two().max(1), self.n);
        self.leaves = leaves;
        // Only grows: every entry is written below.
        self.tree.resize(2 * leaves, EMPTY);
        for (c, leaf) in self.tree[leaves..].iter_mut().enumerate() {
            *leaf = if c < n { c as u32 } else { EMPTY };
        }
        let (scores, cap) = (&self.scores, self.cap);
        let (mut width, mut live) = (leaves / 2, n);
        while width >= 1 {
            // Parents `width..2 width`, children `2 width..4 width`, the first `live` of them
            // candidates.
            let (upper, lower) = self.tree.split_at_mut(2 * width);
            let (parents, children) = (&mut upper[width..], &lower[..2 * width]);
            let pairs = live / 2;
            for (p, ab) in parents[..pairs].iter_mut().zip(children.chunks_exact(2)) {
                let (a, b) = (ab[0], ab[1]);
                *p = if first(scores, cap, tiers, candidates, a as usize, b as usize) { a } else { b };
            }
            live = live.div_ceil(2);
            if live > pairs {
                parents[pairs] = children[2 * pairs];
            }
            parents[live..].fill(EMPTY);
            width /= 2;
        }
        self.tree_valid = true;
    }

    fn update_tree(&mut self, tiers: usize, candidates: &[HostId], c: usize) {
        if !self.tree_valid {
            self.build_tree(tiers, candidates);
            return;
        }
        let mut i = (self.leaves + c) / 2;
        while i >= 1 {
            self.tree[i] = self.better(tiers, candidates, self.tree[2 * i], self.tree[2 * i + 1]);
            i /= 2;
        }
    }

    /// The best candidate (`None` when there is none): the tree's root, or a linear scan when
    /// the tree is not built.
    pub(super) fn best(&self, tiers: usize, candidates: &[HostId]) -> Option<usize> {
        if let Some(order) = self.ordered() {
            return order.first().map(|&c| c as usize);
        }
        if self.tree_valid {
            return self.tree.get(1).filter(|&&b| b != EMPTY).map(|&b| b as usize);
        }
        if self.n == 0 {
            return None;
        }
        if tiers == 1 {
            // One tier: the highest score, ties to the lower host id.
            let scores = &self.scores[..self.n];
            let mut best = 0;
            for c in 1..self.n {
                if !first(scores, 0, 1, candidates, best, c) {
                    best = c;
                }
            }
            return Some(best);
        }
        (0..self.n).reduce(|best, c| if self.rank(tiers, candidates, c, best) == Ordering::Less { c } else { best })
    }
}

/// A stable sort of `v` by `cmp`: the standard one, or [`merge_sort`] (with `spare`) when
/// `nan`, a NaN score making `cmp` no total order.
fn stable_sort(v: &mut [u32], spare: &mut Vec<u32>, nan: bool, cmp: impl Fn(&u32, &u32) -> Ordering) {
    if nan {
        merge_sort(v, spare, cmp);
    } else {
        v.sort_by(cmp);
    }
}

/// A stable merge sort of `v` by `cmp` (`Less`: the first argument goes first), with `spare` as
/// its buffer. Unlike the standard sorts it never panics and always ends, whatever `cmp` answers:
/// a NaN score compares equal to every other, which is no total order.
fn merge_sort(v: &mut [u32], spare: &mut Vec<u32>, cmp: impl Fn(&u32, &u32) -> Ordering) {
    let n = v.len();
    spare.clear();
    spare.resize(n, 0);
    let mut width = 1;
    while width < n {
        let mut start = 0;
        while start < n {
            let (mid, end) = ((start + width).min(n), (start + 2 * width).min(n));
            let (mut i, mut j) = (start, mid);
            for slot in &mut spare[start..end] {
                // The right run's head goes first only when it ranks strictly first: stable.
                let right = j < end && (i == mid || cmp(&v[j], &v[i]) == Ordering::Less);
                *slot = if right { v[j] } else { v[i] };
                if right {
                    j += 1;
                } else {
                    i += 1;
                }
            }
            start = end;
        }
        v.copy_from_slice(spare);
        width *= 2;
    }
}

/// Whether candidate `a` ranks no later than `b` by tier scores (`scores[t * cap + c]`), ties
/// to the lower host id: [`Ranking::rank`] is not `Greater`.
#[inline(always)]
fn first(scores: &[f64], cap: usize, tiers: usize, candidates: &[HostId], a: usize, b: usize) -> bool {
    if tiers == 1 {
        // The common case, without the loop: a higher score, else an equal one (or two NaNs)
        // and the lower id, else a number against a NaN.
        let (x, y) = (scores[a], scores[b]);
        return x > y
            || (x == y || x.is_nan() && y.is_nan()) && candidates[a] <= candidates[b]
            || y.is_nan() && !x.is_nan();
    }
    for t in 0..tiers {
        let (x, y) = (scores[t * cap + a], scores[t * cap + b]);
        if x > y {
            return true;
        }
        if y > x {
            return false;
        }
        if x != y && x.is_nan() != y.is_nan() {
            // Unordered with one NaN: the number ranks first.
            return y.is_nan();
        }
    }
    candidates[a] <= candidates[b]
}

/// The order of two tier scores under [`Ties::HostId`] (`Less`: `x` ranks first): the higher
/// first, and a NaN after every number (two NaNs are equal), so the order is total and the
/// tournament tree, a scan and a heap agree whatever order they meet the candidates in.
#[inline(always)]
pub(super) fn score_order(x: f64, y: f64) -> Ordering {
    match y.partial_cmp(&x) {
        Some(o) => o,
        None => x.is_nan().cmp(&y.is_nan()),
    }
}

/// An integer that orders non-NaN scores from the highest to the lowest, with `-0.0` and `0.0`
/// equal (as they compare).
#[inline]
fn descending_key(score: f64) -> u64 {
    let bits = (score + 0.0).to_bits();
    let ascending = if bits >> 63 == 1 { !bits } else { bits | 1 << 63 };
    !ascending
}

/// Sorts `keys` (distinct triples) when they are nearly sorted already: an insertion sort that
/// gives up once it has moved keys `budget` places in all, leaving them partly sorted, and
/// returns whether it finished. Computes in O(keys + budget).
fn nearly_sorted(keys: &mut [(u64, u32, u32)], budget: usize) -> bool {
    let mut moves = 0;
    for i in 1..keys.len() {
        let key = keys[i];
        let mut j = i;
        while j > 0 && key < keys[j - 1] {
            j -= 1;
        }
        if j < i {
            moves += i - j;
            if moves > budget {
                return false;
            }
            keys.copy_within(j..i, j + 1);
            keys[j] = key;
        }
    }
    true
}

/// Adds one weigher's terms to a tier's score column: `out[c] += m × normalised(raw[c])` over
/// `[min, max]`, where `m` is `mults[c]` for a weigher with per-host multipliers and
/// `multiplier` otherwise. Every path that scores a column uses it (or writes the terms with
/// [`fold_terms`] and adds them), so they agree bit for bit with [`Bounds::normalized`] one
/// host at a time. Every sum in `out` must have started at `+0.0`, as the tier scores do.
#[inline]
pub(super) fn add_terms(
    out: &mut [f64],
    raw: &[f64],
    mults: Option<&[f64]>,
    multiplier: f64,
    bounds: Bounds,
    min: f64,
    max: f64,
) {
    fold_terms::<false>(out, raw, mults, multiplier, bounds, min, max);
}

/// [`add_terms`], or with `SET` the terms written to `out` rather than added.
#[inline]
fn fold_terms<const SET: bool>(
    out: &mut [f64],
    raw: &[f64],
    mults: Option<&[f64]>,
    multiplier: f64,
    bounds: Bounds,
    min: f64,
    max: f64,
) {
    let fold = |s: &mut f64, term: f64| if SET { *s = term } else { *s += term };
    if let Some(mults) = mults {
        for ((s, &r), &m) in out.iter_mut().zip(raw).zip(mults) {
            fold(s, m * bounds.normalized(r, min, max));
        }
    } else if !Bounds::usable(min, max) {
        // Every normalised value is 0, exactly as `Bounds::normalized` gives, so every term is
        // a zero (the multiplier is finite). Adding a zero changes no sum: a sum that started at
        // +0.0 is never −0.0 (only −0.0 + −0.0 is), and x + ±0 is x for every other x.
        if SET {
            out.fill(multiplier * 0.0);
        }
    } else {
        let range = max - min;
        for (s, &r) in out.iter_mut().zip(raw) {
            let v = bounds.clamp(r);
            let norm = if v.is_nan() { 0.0 } else { (v - min) / range };
            fold(s, multiplier * norm);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The NaN-proof merge sort is the standard stable sort wherever the comparison is a
        /// total order, and a permutation (without a panic) where NaN makes it none.
        #[test]
        fn merge_sort_is_the_stable_sort(
            keys in proptest::collection::vec(proptest::sample::select(vec![0.0, 1.0, 2.0, 3.0, f64::NAN]), 0..300),
        ) {
            let by = |&a: &u32, &b: &u32| keys[b as usize].partial_cmp(&keys[a as usize]).unwrap_or(Ordering::Equal);
            let mut merged: Vec<u32> = (0..keys.len() as u32).collect();
            merge_sort(&mut merged, &mut Vec::new(), by);
            if keys.iter().all(|k| !k.is_nan()) {
                let mut std_sorted: Vec<u32> = (0..keys.len() as u32).collect();
                std_sorted.sort_by(by);
                proptest::prop_assert_eq!(merged, std_sorted);
            } else {
                merged.sort_unstable();
                proptest::prop_assert_eq!(merged, (0..keys.len() as u32).collect::<Vec<_>>());
            }
        }

        #[test]
        fn nearly_sorted_sorts_or_gives_up(
            keys in proptest::collection::vec(0u64..6, 0..200),
            swaps in proptest::collection::vec((0usize..200, 0usize..200), 0..20),
            budget in 0usize..400,
        ) {
            let mut sorted: Vec<(u64, u32, u32)> = keys.iter().enumerate().map(|(i, &k)| (k, i as u32, 7)).collect();
            sorted.sort_unstable();
            let mut items = sorted.clone();
            for (a, b) in swaps {
                if a < items.len() && b < items.len() {
                    items.swap(a, b);
                }
            }
            let mut partly = items.clone();
            if nearly_sorted(&mut partly, budget) {
                proptest::prop_assert_eq!(&partly, &sorted);
            } else {
                partly.sort_unstable();
                proptest::prop_assert_eq!(&partly, &sorted);
            }
        }
    }

    #[test]
    fn extremes_track_counts_and_ask_for_rescans() {
        assert!(!Extremes::scan_uncounted(&[1.0], Bounds::NONE).replace(1.0, 2.0, Bounds::NONE), "uncounted: rescan");
        let mut e = Extremes::scan_except(&[1.0, 5.0, 5.0, 3.0], Bounds::NONE, usize::MAX);
        assert_eq!((e.lo, e.hi, e.n_lo, e.n_hi), (1.0, 5.0, 1, 2));
        let b = Bounds::NONE;
        assert!(e.replace(5.0, 4.0, b), "another host still holds the maximum");
        assert_eq!((e.hi, e.n_hi), (5.0, 1));
        assert!(!e.replace(5.0, 4.0, b), "the last maximum moved down: rescan");
        assert!(e.replace(3.0, 9.0, b));
        assert_eq!((e.hi, e.n_hi), (9.0, 1));
        assert!(!e.replace(1.0, 2.0, b), "the last minimum moved up: rescan");
        let mut z = Extremes::scan_except(&[-3.0, 2.0, 5.0], Bounds::ZERO_MIN, usize::MAX);
        assert_eq!((z.lo, z.hi), (0.0, 5.0));
        assert!(z.replace(0.0, 1.0, Bounds::ZERO_MIN), "a fixed minimum never needs a rescan");
        assert!(!z.replace(5.0, 1.0, Bounds::ZERO_MIN), "the free maximum does");
    }
}
