//! The one-pass pick: for a round whose ranking is not kept (a request for one instance, or
//! every round of a request that re-ranks from scratch), no candidate list and no per-weigher
//! score vector is materialised.
//!
//! 1. **Filter and fold.** Chunk by chunk, the filters cut the chunk's mask (which filters run,
//!    with their contexts, is worked out once for the round), then every weigher
//!    writes the survivors' raw values into a 64-lane buffer ([`Weigher::weigh_chunk`]) and its
//!    clamped extremes are folded in. Only the candidate masks are written. A weigher whose
//!    values are a snapshot column ([`Weigher::column`]) is not folded at first: the column's
//!    own extremes bound the chunk, and afterwards only the chunks whose bounds reach past the
//!    range found so far are folded, most extreme first, until none does.
//! 2. **Score and keep.** Over the chunks that kept a host, the weighers write the raw values
//!    again, the tier scores are computed column-wise with the ranking's own arithmetic
//!    ([`add_terms`]), and the best `k` are kept in a heap whose root is the worst kept. A chunk
//!    whose best tier-0 score is below the root's cannot change the heap and is skipped after
//!    one vector pass.
//!
//! The answers are those of the ranking path, bit for bit: the filters see the same masks
//! (chunk-major instead of filter-major; each filter's calls come in the same order, and the
//! rejection counts this round adds are put back in filter order), the extremes are the same
//! (minimum and maximum do not depend on the order, and the sign of a zero extreme changes no
//! score), the scores come from the same function, and the heap keeps the same hosts as the
//! ranking's selection under the same comparison. A filter or weigher error is reported by
//! replaying the round the usual way, so even the error is the one the ranking path gives.

use super::rank::{add_terms, score_order};
use super::{filter_chunk, Scheduler};
use crate::error::ScheduleError;
use crate::filter::Rejections;
use crate::id::HostId;
use crate::request::{Cx, Prepared};
use crate::rng::SplitMix64;
use crate::snapshot::{push_lanes, CHUNK};
use crate::weigh::{lanes_of, Bounds, Multipliers};
use std::cmp::Ordering;

/// Buffers of the one-pass path, kept in the scheduler's scratch.
#[derive(Debug, Default)]
pub(super) struct OnePass {
    /// Each weigher's clamped `(lo, hi)` over the survivors.
    extremes: Vec<(f64, f64)>,
    /// Each weigher's raw values for the chunk at hand.
    raw: Vec<[f64; CHUNK]>,
    /// Per chunk and weigher (`chunk · weighers + w`): the clamped extremes of the survivors,
    /// and whether they are exact (`false`: the extremes of the chunk's whole column, bounds
    /// around the survivors' own).
    chunk_extremes: Vec<(f64, f64, bool)>,
    /// Per chunk: an upper bound of its survivors' tier-0 scores.
    ceilings: Vec<f64>,
    /// Each tier's scores for the chunk at hand.
    lanes: Vec<[f64; CHUNK]>,
    /// Per-host multipliers for the chunk at hand (weighers that have them).
    mults: Vec<f64>,
    /// The per-host multipliers asked in this pick, per aggregate class where they follow it.
    multipliers: Multipliers,
    /// Kept hosts: slot `i` is `kept[i]` with tier scores `kept_scores[i·tiers..]`; the last
    /// slot holds the host being compared.
    kept: Vec<HostId>,
    kept_scores: Vec<f64>,
    /// Heap of kept slots, the worst at the root.
    heap: Vec<u32>,
    /// The candidate masks before this round's filters, to replay them on an error.
    backup: Vec<u64>,
    /// Hosts that passed this round.
    survivors: u32,
}

impl OnePass {
    /// Hosts that passed the last [`filter_and_fold`](OnePass::filter_and_fold).
    pub(super) fn survivors(&self) -> u32 {
        self.survivors
    }

    /// Filters the candidate masks chunk by chunk and folds every weigher's extremes over the
    /// survivors (only when at least two survive are they used, as in the ranking).
    ///
    /// # Errors
    ///
    /// The error the ranking path reports for this round: a filter's, or a weigher's
    /// validation (with two or more survivors).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn filter_and_fold(
        &mut self,
        scheduler: &Scheduler,
        cx: &Cx<'_>,
        filter_states: &[Prepared],
        weigher_states: &[Prepared],
        masks: &mut [u64],
        rejections: &mut Rejections,
        filter: Option<&[bool]>,
        candidates: &mut Vec<HostId>,
    ) -> Result<(), ScheduleError> {
        let count = scheduler.tiers.iter().map(Vec::len).sum::<usize>();
        self.extremes.clear();
        self.extremes.resize(count, (f64::INFINITY, f64::NEG_INFINITY));
        self.raw.resize(count, [0.0; CHUNK]);
        self.chunk_extremes.resize(masks.len() * count, (0.0, 0.0, true));
        let bounds: smallvec::SmallVec<[Bounds; 8]> =
            scheduler.tiers.iter().flatten().map(|x| x.weigher.bounds()).collect();
        let validating = scheduler.tiers.iter().flatten().any(|x| x.weigher.validates());
        self.backup.clear();
        self.backup.extend_from_slice(masks);
        let from = rejections.counts().len();
        let mut survivors = 0u32;
        let mut invalid = false;
        let mut ids = [HostId(0); CHUNK];
        let mut keep = [0u64; CHUNK];
        let mut inexact = false;
        // The filters that run are worked out once for all chunks.
        let active: smallvec::SmallVec<[_; 8]> = match filter {
            Some(passed) => scheduler.active_filters(cx, filter_states, passed, cx.instance()).collect(),
            None => Default::default(),
        };
        // So are the weighers' contexts, and which of them validate.
        let weighers: smallvec::SmallVec<[_; 8]> = scheduler
            .tiers
            .iter()
            .flatten()
            .zip(weigher_states)
            .map(|(x, state)| (&*x.weigher, cx.with_state(state.as_deref()), validating && x.weigher.validates()))
            .collect();
        for (chunk, mask) in masks.iter_mut().enumerate() {
            if *mask == 0 {
                continue;
            }
            *mask = filter_chunk(&active, chunk, *mask, rejections);
            let m = *mask;
            if m == 0 {
                continue;
            }
            survivors += m.count_ones();
            let n = if validating { lanes_of(chunk, m, &mut ids) } else { 0 };
            for (w, &(weigher, ref wcx, validates)) in weighers.iter().enumerate() {
                if validates && weigher.validate(wcx, &ids[..n]).is_err() {
                    invalid = true;
                }
                if let Some(column) = weigher.column(wcx, chunk, m) {
                    let (lo, hi) = (bounds[w].clamp(column.min), bounds[w].clamp(column.max));
                    if !lo.is_nan() && !hi.is_nan() {
                        // Folded later only if these bounds can move the survivors' range.
                        self.chunk_extremes[chunk * count + w] = (lo, hi, false);
                        inexact = true;
                        continue;
                    }
                }
                self.fold_exact(scheduler, cx, weigher_states, &bounds, chunk, m, w, &mut keep);
            }
        }
        self.survivors = survivors;
        let failed = rejections.take_error();
        if failed.is_some() {
            // Replay the round filter by filter so the error is the one that path reports.
            masks.copy_from_slice(&self.backup);
            scheduler.run_filters(cx, filter_states, filter.unwrap_or_default(), cx.instance(), 0, masks, rejections);
            invalid = true;
        } else {
            rejections.order_by_filter(from);
        }
        if invalid {
            // The ranking validates every weigher over the whole candidate list, in order, when
            // two or more are left, and only then reports a filter's error.
            candidates.clear();
            for (c, &m) in masks.iter().enumerate() {
                push_lanes(candidates, c, m);
            }
            if candidates.len() >= 2 {
                for (w, x) in scheduler.tiers.iter().flatten().enumerate() {
                    x.weigher.validate(&cx.with_state(weigher_states[w].as_deref()), candidates)?;
                }
            }
            if let Some(error) = rejections.take_error().or(failed) {
                return Err(error);
            }
        }
        if inexact {
            self.settle(scheduler, cx, weigher_states, &bounds, masks, &mut keep);
        }
        Ok(())
    }

    /// Folds weigher `w`'s survivors of chunk `chunk` (mask `m`) exactly into the chunk's
    /// entry and the range.
    #[allow(clippy::too_many_arguments)]
    fn fold_exact(
        &mut self,
        scheduler: &Scheduler,
        cx: &Cx<'_>,
        weigher_states: &[Prepared],
        bounds: &[Bounds],
        chunk: usize,
        m: u64,
        w: usize,
        keep: &mut [u64; CHUNK],
    ) {
        let Some(x) = scheduler.tiers.iter().flatten().nth(w) else { return };
        let wcx = cx.with_state(weigher_states[w].as_deref());
        keep_of(m, keep);
        let raw = match x.weigher.column(&wcx, chunk, m) {
            Some(column) => column.values,
            None => {
                x.weigher.weigh_chunk(&wcx, chunk, m, &mut self.raw[w]);
                &self.raw[w]
            }
        };
        // A set minimum bound is the range's minimum; the survivors' own minimum is only a
        // negative multiplier's ceiling.
        let (lo, hi) = fold(raw, keep, bounds[w], x.multiplier < 0.0);
        self.chunk_extremes[chunk * bounds.len() + w] = (lo, hi, true);
        let e = &mut self.extremes[w];
        if lo < e.0 {
            e.0 = lo;
        }
        if hi > e.1 {
            e.1 = hi;
        }
    }

    /// Makes the range exact where chunks were left with their columns' bounds: while some
    /// such chunk's maximum lies above the range's (or, where the minimum counts, its minimum
    /// below), the chunk with the most extreme bound is folded exactly. A chunk left unfolded
    /// holds no survivor beyond the range, so the range is the survivors' own.
    ///
    /// One scan over the chunks finds every weigher's first chunk to fold and the furthest
    /// bounds of the others; only a weigher for which one of those still reaches past its range
    /// after that fold scans again ([`settle_weigher`](OnePass::settle_weigher)). The chunks
    /// folded are the ones a scan per fold would choose.
    fn settle(
        &mut self,
        scheduler: &Scheduler,
        cx: &Cx<'_>,
        weigher_states: &[Prepared],
        bounds: &[Bounds],
        masks: &[u64],
        keep: &mut [u64; CHUNK],
    ) {
        let count = bounds.len();
        let low_counts: smallvec::SmallVec<[bool; 8]> = scheduler
            .tiers
            .iter()
            .flatten()
            .enumerate()
            .map(|(w, x)| bounds[w].min.is_none() || x.multiplier < 0.0)
            .collect();
        let mut reach: smallvec::SmallVec<[Reach; 8]> = smallvec::smallvec![Reach::default(); count];
        for (chunk, &m) in masks.iter().enumerate() {
            if m == 0 {
                continue;
            }
            let entries = &self.chunk_extremes[chunk * count..(chunk + 1) * count];
            for (w, (r, &(lo, hi, exact))) in reach.iter_mut().zip(entries).enumerate() {
                if !exact {
                    r.offer(chunk, lo, hi, self.extremes[w], low_counts[w]);
                }
            }
        }
        for (w, r) in reach.iter().enumerate() {
            let Some((chunk, _)) = r.next else { continue };
            self.fold_exact(scheduler, cx, weigher_states, bounds, chunk, masks[chunk], w, keep);
            let (range_lo, range_hi) = self.extremes[w];
            let (hi, lo) = r.others(chunk);
            if hi > range_hi || (low_counts[w] && lo < range_lo) {
                self.settle_weigher(scheduler, cx, weigher_states, bounds, masks, keep, w, low_counts[w]);
            }
        }
    }

    /// [`settle`](OnePass::settle) for weigher `w`, a scan over the chunks for every fold.
    #[allow(clippy::too_many_arguments)]
    fn settle_weigher(
        &mut self,
        scheduler: &Scheduler,
        cx: &Cx<'_>,
        weigher_states: &[Prepared],
        bounds: &[Bounds],
        masks: &[u64],
        keep: &mut [u64; CHUNK],
        w: usize,
        low_counts: bool,
    ) {
        let count = bounds.len();
        loop {
            let mut r = Reach::default();
            for (chunk, &m) in masks.iter().enumerate() {
                let (lo, hi, exact) = self.chunk_extremes[chunk * count + w];
                if m != 0 && !exact {
                    r.offer(chunk, lo, hi, self.extremes[w], low_counts);
                }
            }
            let Some((chunk, _)) = r.next else { break };
            self.fold_exact(scheduler, cx, weigher_states, bounds, chunk, masks[chunk], w, keep);
        }
    }

    /// Picks among the survivors of the last [`filter_and_fold`](OnePass::filter_and_fold):
    /// the best, or with `subset > 1` a seeded random one of the best `subset`. Returns the
    /// host and its tier scores (all 0 when it was the only survivor); `None` when none
    /// survived.
    ///
    /// # Errors
    ///
    /// A weigher's non-finite per-host multiplier ([`ScheduleError::Weigher`]).
    pub(super) fn pick(
        &mut self,
        scheduler: &Scheduler,
        cx: &Cx<'_>,
        weigher_states: &[Prepared],
        masks: &[u64],
        subset: usize,
        rng: &mut SplitMix64,
    ) -> Result<Option<(HostId, Vec<f64>)>, ScheduleError> {
        let tiers = scheduler.tiers.len();
        if self.survivors == 0 {
            return Ok(None);
        }
        if self.survivors == 1 {
            let Some(chunk) = masks.iter().position(|&m| m != 0) else { return Ok(None) };
            let host = HostId::from_index(chunk * CHUNK + masks[chunk].trailing_zeros() as usize);
            return Ok(Some((host, vec![0.0; tiers])));
        }
        let k = subset.min(self.survivors as usize);
        self.kept.clear();
        self.kept.resize(k + 1, HostId(0));
        self.kept_scores.clear();
        self.kept_scores.resize((k + 1) * tiers, 0.0);
        self.heap.clear();
        self.lanes.resize(tiers, [0.0; CHUNK]);
        self.mults.resize(CHUNK, 0.0);
        self.multipliers.start(self.extremes.len());
        let ranges: smallvec::SmallVec<[(Bounds, f64, f64); 8]> = scheduler
            .tiers
            .iter()
            .flatten()
            .zip(&self.extremes)
            .map(|(x, &(lo, hi))| {
                let bounds = x.weigher.bounds();
                let (min, max) = bounds.effective(lo, hi);
                (bounds, min, max)
            })
            .collect();
        // Without per-host multipliers every score is finite, the order is total and the
        // visiting order cannot change the result: the chunk with the highest ceiling goes
        // first, and a chunk whose ceiling is below the worst kept score is skipped unweighed.
        let prunable = tiers > 0 && scheduler.tiers.iter().flatten().all(|x| !x.weigher.per_host_multiplier());
        let first = if prunable { self.ceilings(scheduler, &ranges, masks) } else { None };
        let rest = (0..masks.len()).filter(|&c| Some(c) != first);
        for chunk in first.into_iter().chain(rest) {
            let m = masks[chunk];
            if m == 0 {
                continue;
            }
            if prunable && self.heap.len() == k {
                // With one tier, a host that ties the worst kept one loses on its higher id when
                // its chunk comes after that host's.
                let root = self.heap[0] as usize;
                let (worst, worst_chunk) = (self.kept_scores[root * tiers], self.kept[root].index() / CHUNK);
                let ceiling = self.ceilings[chunk];
                if ceiling < worst || (tiers == 1 && ceiling == worst && chunk > worst_chunk) {
                    continue;
                }
            }
            if !self.score_chunk(scheduler, cx, weigher_states, &ranges, chunk, m) {
                return Err(refused_multiplier(scheduler, cx, weigher_states, masks));
            }
            if tiers > 0 && self.heap.len() == k {
                let root = self.kept_scores[self.heap[0] as usize * tiers];
                if let Some(best) = masked_max(&self.lanes[0], m) {
                    if best < root {
                        continue;
                    }
                }
            }
            let mut rest = m;
            while rest != 0 {
                let lane = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                self.offer(tiers, k, HostId::from_index(chunk * CHUNK + lane), lane);
            }
        }
        let mut heap = std::mem::take(&mut self.heap);
        heap.sort_unstable_by(|a, b| self.rank(tiers, *a as usize, *b as usize));
        let chosen = if k <= 1 { heap[0] } else { heap[rng.below(k)] } as usize;
        self.heap = heap;
        let scores = self.kept_scores[chosen * tiers..(chosen + 1) * tiers].to_vec();
        Ok(Some((self.kept[chosen], scores)))
    }

    /// Fills `ceilings` with an upper bound of each chunk's tier-0 scores and returns the chunk
    /// with the highest. Each term is the weigher's multiplier times the normalised chunk
    /// extreme it grows towards (and the 0 a NaN value scores), summed in weigher order: every
    /// step (subtraction, division by a positive range, product, sum) is monotone under
    /// rounding, so no survivor's score computed the same way can exceed it.
    fn ceilings(&mut self, scheduler: &Scheduler, ranges: &[(Bounds, f64, f64)], masks: &[u64]) -> Option<usize> {
        let weighers = ranges.len();
        let tier0 = &scheduler.tiers[0];
        self.ceilings.clear();
        self.ceilings.resize(masks.len(), 0.0);
        // Weigher by weigher over all chunks (a chunk without survivors too, its sum dropped
        // below), so each weigher's loop is straight arithmetic; every chunk's terms are still
        // added in weigher order.
        for (w, x) in tier0.iter().enumerate() {
            let (bounds, min, max) = ranges[w];
            let m = x.multiplier;
            if !Bounds::usable(min, max) {
                for ceiling in &mut self.ceilings {
                    *ceiling += m * 0.0;
                }
                continue;
            }
            let (high, nan_scores_zero) = (m >= 0.0, bounds.min.is_none());
            let extremes = self.chunk_extremes.iter().skip(w).step_by(weighers);
            for (ceiling, &(lo, hi, _)) in self.ceilings.iter_mut().zip(extremes) {
                let v = if high { hi } else { lo };
                let grown = m * ((bounds.clamp(v) - min) / (max - min));
                // A NaN value (possible only with no minimum bound) scores 0.
                *ceiling += if nan_scores_zero && grown.partial_cmp(&(m * 0.0)).is_none_or(Ordering::is_lt) {
                    m * 0.0
                } else {
                    grown
                };
            }
        }
        let mut best: Option<usize> = None;
        for (chunk, &m) in masks.iter().enumerate() {
            if m == 0 {
                self.ceilings[chunk] = f64::NEG_INFINITY;
            } else if best.is_none_or(|b| self.ceilings[chunk] > self.ceilings[b]) {
                best = Some(chunk);
            }
        }
        best
    }

    /// The tier score columns of chunk `chunk` (lanes of `mask` are meaningful); `false` when
    /// a weigher's per-host multiplier for one of its hosts is not finite.
    fn score_chunk(
        &mut self,
        scheduler: &Scheduler,
        cx: &Cx<'_>,
        weigher_states: &[Prepared],
        ranges: &[(Bounds, f64, f64)],
        chunk: usize,
        mask: u64,
    ) -> bool {
        let mut w = 0;
        for (t, tier) in scheduler.tiers.iter().enumerate() {
            let out = &mut self.lanes[t];
            out.fill(0.0);
            for x in tier {
                let wcx = cx.with_state(weigher_states[w].as_deref());
                let raw = match x.weigher.column(&wcx, chunk, mask) {
                    Some(column) => column.values,
                    None => {
                        x.weigher.weigh_chunk(&wcx, chunk, mask, &mut self.raw[w]);
                        &self.raw[w]
                    }
                };
                let mults = if x.weigher.per_host_multiplier() {
                    let mut rest = mask;
                    while rest != 0 {
                        let lane = rest.trailing_zeros() as usize;
                        let host = HostId::from_index(chunk * CHUNK + lane);
                        self.mults[lane] = self.multipliers.get(w, &*x.weigher, &wcx, host, x.multiplier);
                        rest &= rest - 1;
                    }
                    if self.multipliers.refused(&*x.weigher, &wcx).is_err() {
                        return false;
                    }
                    Some(&self.mults[..])
                } else {
                    None
                };
                let (bounds, min, max) = ranges[w];
                add_terms(out, raw, mults, x.multiplier, bounds, min, max);
                w += 1;
            }
        }
        true
    }

    /// Offers `host` (lane `lane` of the score columns) to the heap of the best `k`.
    fn offer(&mut self, tiers: usize, k: usize, host: HostId, lane: usize) {
        let incoming = k;
        self.kept[incoming] = host;
        for t in 0..tiers {
            self.kept_scores[incoming * tiers + t] = self.lanes[t][lane];
        }
        if self.heap.len() < k {
            let slot = self.heap.len();
            self.copy_slot(tiers, incoming, slot);
            self.heap.push(slot as u32);
            let mut heap = std::mem::take(&mut self.heap);
            super::sift_up(&mut heap, slot, &|a: &u32, b: &u32| self.rank(tiers, *a as usize, *b as usize));
            self.heap = heap;
        } else if self.rank(tiers, incoming, self.heap[0] as usize) == Ordering::Less {
            let slot = self.heap[0] as usize;
            self.copy_slot(tiers, incoming, slot);
            let mut heap = std::mem::take(&mut self.heap);
            super::sift_down(&mut heap, 0, &|a: &u32, b: &u32| self.rank(tiers, *a as usize, *b as usize));
            self.heap = heap;
        }
    }

    fn copy_slot(&mut self, tiers: usize, from: usize, to: usize) {
        self.kept[to] = self.kept[from];
        self.kept_scores.copy_within(from * tiers..(from + 1) * tiers, to * tiers);
    }

    /// The ranking's comparison of kept slots: `Less` means `a` ranks first (higher tier
    /// scores, then the lower host id).
    fn rank(&self, tiers: usize, a: usize, b: usize) -> Ordering {
        for t in 0..tiers {
            match score_order(self.kept_scores[a * tiers + t], self.kept_scores[b * tiers + t]) {
                Ordering::Equal => {}
                o => return o,
            }
        }
        self.kept[a].cmp(&self.kept[b])
    }
}

/// The error the ranking path gives when a per-host multiplier is not finite: the first such
/// multiplier weigher by weigher, each over the survivors (`masks`) in host order, as that path
/// asks them.
#[cold]
#[inline(never)]
fn refused_multiplier(scheduler: &Scheduler, cx: &Cx<'_>, weigher_states: &[Prepared], masks: &[u64]) -> ScheduleError {
    let mut multipliers = Multipliers::default();
    multipliers.start(weigher_states.len());
    let mut lanes = [HostId(0); CHUNK];
    for (w, x) in scheduler.tiers.iter().flatten().enumerate().filter(|(_, x)| x.weigher.per_host_multiplier()) {
        let wcx = cx.with_state(weigher_states[w].as_deref());
        for (chunk, &m) in masks.iter().enumerate() {
            let n = lanes_of(chunk, m, &mut lanes);
            for &host in lanes.get(..n).unwrap_or(&[]) {
                multipliers.get(w, &*x.weigher, &wcx, host, x.multiplier);
                if let Err(error) = multipliers.refused(&*x.weigher, &wcx) {
                    return error;
                }
            }
        }
    }
    // Only a weigher that answers differently when asked again gets here.
    ScheduleError::weigher("per-host multiplier", "not finite once, finite when asked again")
}

/// One weigher's scan of the chunks left with their columns' bounds, against its range: the
/// chunk to fold next (the one reaching furthest past the range, the first of equals), and the
/// two largest maxima and two smallest minima with their chunks.
#[derive(Debug, Clone, Copy)]
struct Reach {
    next: Option<(usize, f64)>,
    hi: [(f64, usize); 2],
    lo: [(f64, usize); 2],
}

impl Default for Reach {
    fn default() -> Self {
        Reach { next: None, hi: [(f64::NEG_INFINITY, usize::MAX); 2], lo: [(f64::INFINITY, usize::MAX); 2] }
    }
}

impl Reach {
    /// Takes in chunk `chunk` with bounds `lo..=hi`, against the range `(range_lo, range_hi)`;
    /// `low_counts`: whether a minimum below the range matters.
    #[inline]
    fn offer(&mut self, chunk: usize, lo: f64, hi: f64, (range_lo, range_hi): (f64, f64), low_counts: bool) {
        // How far past the range the chunk may reach, on either side that counts.
        let over = if hi > range_hi { hi - range_hi } else { 0.0 };
        let under = if low_counts && lo < range_lo { range_lo - lo } else { 0.0 };
        let reach = if over > under { over } else { under };
        let beyond = hi > range_hi || (low_counts && lo < range_lo);
        if beyond && self.next.is_none_or(|(_, r)| reach > r || r.is_nan()) {
            self.next = Some((chunk, reach));
        }
        if hi > self.hi[1].0 {
            self.hi[1] = (hi, chunk);
            if hi > self.hi[0].0 {
                self.hi.swap(0, 1);
            }
        }
        if lo < self.lo[1].0 {
            self.lo[1] = (lo, chunk);
            if lo < self.lo[0].0 {
                self.lo.swap(0, 1);
            }
        }
    }

    /// The largest maximum and the smallest minimum over the chunks offered other than `chunk`.
    fn others(&self, chunk: usize) -> (f64, f64) {
        let hi = if self.hi[0].1 == chunk { self.hi[1].0 } else { self.hi[0].0 };
        let lo = if self.lo[0].1 == chunk { self.lo[1].0 } else { self.lo[0].0 };
        (hi, lo)
    }
}

/// The clamped extremes `(lo, hi)` of the lanes `keep` marks (all ones: kept; zero: dropped),
/// NaN values skipped. The extremes do not depend on the order, and the sign of a zero extreme
/// changes no score.
#[inline]
fn fold(raw: &[f64; CHUNK], keep: &[u64; CHUNK], bounds: Bounds, lo: bool) -> (f64, f64) {
    // One loop per shape of the bounds, so each compiles to plain vector operations. A set
    // bound turns a NaN into a number, so only unbounded values need the NaN-aware steps.
    match (bounds.min, bounds.max, lo) {
        (None, None, _) => fold_with::<true>(raw, keep, |v| v, true),
        // The minimum bound's clamp as one vector max (NaN and smaller values become `min`).
        // The minimum itself is then needed only for a negative multiplier's ceiling.
        (Some(min), None, false) => fold_with::<false>(raw, keep, |v| if v > min { v } else { min }, false),
        (Some(min), None, true) => fold_with::<true>(raw, keep, |v| if v > min { v } else { min }, false),
        _ => fold_with::<true>(raw, keep, |v| bounds.clamp(v), false),
    }
}

/// The extremes of the kept clamped lanes by halving: a dropped lane reads as +∞ for the
/// minimum and −∞ for the maximum (a bit select), and every step is an element-wise vector min
/// and max. With `nan`, a NaN never wins a step unless both sides are NaN, so a NaN survives
/// only where every lane is NaN, which reads as the empty range.
#[inline(always)]
fn fold_with<const LO: bool>(
    raw: &[f64; CHUNK],
    keep: &[u64; CHUNK],
    clamp: impl Fn(f64) -> f64,
    nan: bool,
) -> (f64, f64) {
    const HALF: usize = CHUNK / 2;
    let less = |x: f64, y: f64| if y < x || (nan && x.is_nan()) { y } else { x };
    let more = |x: f64, y: f64| if y > x || (nan && x.is_nan()) { y } else { x };
    let gated = |i: usize, fill: f64| {
        let (v, k) = (clamp(raw[i]).to_bits(), keep[i]);
        f64::from_bits(v & k | fill.to_bits() & !k)
    };
    let mut lo = [0.0; HALF];
    let mut hi = [0.0; HALF];
    for i in 0..HALF {
        if LO {
            lo[i] = less(gated(i, f64::INFINITY), gated(i + HALF, f64::INFINITY));
        }
        hi[i] = more(gated(i, f64::NEG_INFINITY), gated(i + HALF, f64::NEG_INFINITY));
    }
    let mut width = HALF / 2;
    while width > 0 {
        for i in 0..width {
            if LO {
                lo[i] = less(lo[i], lo[i + width]);
            }
            hi[i] = more(hi[i], hi[i + width]);
        }
        width /= 2;
    }
    // Without `LO` the minimum is not asked for: −∞, the loosest.
    let l = if !LO {
        f64::NEG_INFINITY
    } else if lo[0].is_nan() {
        f64::INFINITY
    } else {
        lo[0]
    };
    let h = if hi[0].is_nan() { f64::NEG_INFINITY } else { hi[0] };
    (l, h)
}

/// Per lane: all ones where `mask` keeps the lane, zero where it drops it.
#[inline]
fn keep_of(mask: u64, keep: &mut [u64; CHUNK]) {
    for (n, lanes) in keep.chunks_exact_mut(4).enumerate() {
        lanes.copy_from_slice(&KEEP[(mask >> (4 * n) & 15) as usize]);
    }
}

/// The lanes [`keep_of`] writes for each 4-bit mask.
const KEEP: [[u64; 4]; 16] = {
    let mut table = [[0; 4]; 16];
    let mut bits = 0;
    while bits < 16 {
        let mut lane = 0;
        while lane < 4 {
            if bits >> lane & 1 == 1 {
                table[bits][lane] = u64::MAX;
            }
            lane += 1;
        }
        bits += 1;
    }
    table
};

/// The largest value on the lanes of `mask`, or `None` when one of them is NaN (the caller then
/// compares lane by lane).
#[inline]
fn masked_max(values: &[f64; CHUNK], mask: u64) -> Option<f64> {
    let mut hi = [f64::NEG_INFINITY; 8];
    let mut nan = false;
    for (g, group) in values.chunks_exact(8).enumerate() {
        for (j, &v) in group.iter().enumerate() {
            let on = mask >> (g * 8 + j) & 1 == 1;
            nan |= on & v.is_nan();
            let v = if on { v } else { f64::NEG_INFINITY };
            if v > hi[j] {
                hi[j] = v;
            }
        }
    }
    (!nan).then(|| hi.iter().fold(f64::NEG_INFINITY, |a, &b| if b > a { b } else { a }))
}
