//! Disk choice strategies: v1.10's most usable storage and v1.11+'s two-stage balance score.

use super::space::DiskSpace;
use crate::id::{DiskId, HostId};
use serde::{Deserialize, Serialize};

/// How the final disk is chosen among the candidates that survived every check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum DiskChoice {
    /// v1.11+ `getDiskWithMostBalanceScore`: pick the node, then the disk, whose use leaves the
    /// usable space most even (smallest `(max − min) / mean`).
    #[default]
    BalanceScore,
    /// v1.10 and older `getDiskWithMostUsableStorage`: the largest `available − reserved`.
    MostUsableStorage,
}

/// One candidate disk as the choice sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub(crate) host: HostId,
    pub(crate) disk: DiskId,
    /// [`usable`] of its status values (no in-cycle adjustment).
    pub(crate) usable: i64,
    /// `available − reserved` (saturating) of its status values: what v1.10's rule maximises.
    pub(crate) free: i64,
}

impl Candidate {
    /// Disk `disk` of `host`, whose status values are `space`.
    #[inline(always)]
    pub(crate) fn new(host: HostId, disk: DiskId, space: DiskSpace) -> Self {
        Candidate { host, disk, usable: usable(space), free: space.available.saturating_sub(space.reserved) }
    }
}

/// Count, sum, two smallest and two largest of a multiset of usable-space values, plus the
/// largest `available − reserved` (for the v1.10 rule), so that per-host summaries merge in O(1)
/// and the spread with one value replaced costs O(1). Byte values are integers: summing in
/// `i128` gives the exact value Longhorn's f64 sum has below 2^53.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Agg {
    pub(crate) n: u32,
    /// Largest `available − reserved` position among the summarised candidates (first wins).
    pub(crate) mus_pos: u32,
    pub(crate) sum: i128,
    // Usable values lie in [0, i64::MAX] and `available − reserved` in i64 (inputs are ≥ 0).
    pub(crate) min: [i64; 2],
    pub(crate) max: [i64; 2],
    /// The largest `available − reserved`.
    pub(crate) mus: i64,
}

impl Agg {
    pub(crate) const EMPTY: Agg =
        Agg { n: 0, mus_pos: 0, sum: 0, min: [i64::MAX; 2], max: [i64::MIN; 2], mus: i64::MIN };

    fn add_value(&mut self, v: i64) {
        self.n += 1;
        self.sum += v as i128;
        ins_low(&mut self.min, v);
        ins_high(&mut self.max, v);
    }

    /// Adds one candidate disk (in candidate order).
    #[inline]
    pub(crate) fn push(&mut self, c: &Candidate) {
        let pos = self.n;
        self.add_value(c.usable);
        let m = c.free;
        if m > self.mus {
            self.mus = m;
            self.mus_pos = pos;
        }
    }

    /// Merges another summary's values (not its `mus`).
    pub(crate) fn merge(&mut self, o: &Agg) {
        self.n += o.n;
        self.sum += o.sum;
        // The two smallest of a union are among each part's two smallest (likewise the largest);
        // sentinels never displace a real value.
        for v in o.min {
            ins_low(&mut self.min, v);
        }
        for v in o.max {
            ins_high(&mut self.max, v);
        }
    }

    /// `spread(X)` = `(max X − min X) / mean X` with one value `v` of X replaced by `v − s`;
    /// +∞ (`f64::MAX`) when X is empty or the mean is ≤ 0.
    fn spread_with(&self, v: i128, s: i128) -> f64 {
        spread(self.range_with(v, s), self.n as usize, self.sum - s)
    }

    /// `max X − min X` with one value `v` of X replaced by `v − s`.
    fn range_with(&self, v: i128, s: i128) -> i128 {
        let nv = v - s;
        // The smallest and largest of the other values: the second extreme when `v` is the first.
        let lo = (if self.min[0] as i128 == v { self.min[1] } else { self.min[0] } as i128).min(nv);
        let hi = (if self.max[0] as i128 == v { self.max[1] } else { self.max[0] } as i128).max(nv);
        hi - lo
    }
}

/// Inserts `v` into the two smallest values kept in `low`, sorted (with multiplicity).
#[inline]
pub(crate) fn ins_low<T: Ord + Copy>(low: &mut [T; 2], v: T) {
    // `low` is sorted, so the commonest case, a value that changes nothing, is one comparison.
    if v < low[1] {
        if v < low[0] {
            *low = [v, low[0]];
        } else {
            low[1] = v;
        }
    }
}

/// Inserts `v` into the two largest values kept in `high`, largest first (with multiplicity).
#[inline]
pub(crate) fn ins_high<T: Ord + Copy>(high: &mut [T; 2], v: T) {
    if v > high[1] {
        if v > high[0] {
            *high = [v, high[0]];
        } else {
            high[1] = v;
        }
    }
}

/// `range / (sum / n)`, or +∞ (`f64::MAX`) when there is no value or the mean is ≤ 0. For a
/// fixed `n` and `sum` it never decreases as `range` grows (float conversion and division by a
/// positive number are monotone), which lets the choice skip it for a range that cannot win.
pub(crate) fn spread(range: i128, n: usize, sum: i128) -> f64 {
    if n == 0 {
        return f64::MAX;
    }
    let mean = sum as f64 / n as f64;
    if mean <= 0.0 {
        return f64::MAX;
    }
    range as f64 / mean
}

/// The node-level counterpart of [`Agg`]: node totals can exceed `i64`.
pub(crate) struct Wide {
    pub(crate) n: usize,
    pub(crate) sum: i128,
    pub(crate) min: [i128; 2],
    pub(crate) max: [i128; 2],
}

impl Default for Wide {
    fn default() -> Self {
        Wide { n: 0, sum: 0, min: [i128::MAX; 2], max: [i128::MIN; 2] }
    }
}

impl Wide {
    fn push(&mut self, v: i128) {
        self.n += 1;
        self.sum += v;
        ins_low(&mut self.min, v);
        ins_high(&mut self.max, v);
    }

    /// As [`Agg::range_with`].
    pub(crate) fn range_with(&self, v: i128, s: i128) -> i128 {
        let nv = v - s;
        let lo = if self.min[0] == v { self.min[1] } else { self.min[0] }.min(nv);
        let hi = if self.max[0] == v { self.max[1] } else { self.max[0] }.max(nv);
        hi - lo
    }
}

/// No host (a [`HostSet`]'s `first` and `mus_host` when it is empty).
pub(crate) const NO_HOST: u32 = u32::MAX;

/// What the disk choice reads of a set of hosts, each with its candidate disks: the number of
/// hosts, the sum, two largest and two smallest of their usable totals (with multiplicity, as
/// [`Wide`]), the lowest host id, the best `available − reserved` and the lowest host id
/// holding it, and the disk-level summary ([`Agg`] merged). Merging is commutative, so a union
/// of sets is summarised whatever the order of its parts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HostSet {
    pub(crate) n: u32,
    pub(crate) first: u32,
    pub(crate) mus_host: u32,
    pub(crate) mus: i64,
    pub(crate) sum: i128,
    pub(crate) max: [i128; 2],
    pub(crate) min: [i128; 2],
    pub(crate) disks: Agg,
}

impl HostSet {
    pub(crate) const EMPTY: HostSet = HostSet {
        n: 0,
        first: NO_HOST,
        mus_host: NO_HOST,
        mus: i64::MIN,
        sum: 0,
        max: [i128::MIN; 2],
        min: [i128::MAX; 2],
        disks: Agg::EMPTY,
    };

    /// One host with candidates summarised in `agg` (empty when it has none).
    pub(crate) fn leaf(host: HostId, agg: &Agg) -> HostSet {
        let mut set = HostSet::EMPTY;
        set.push(host, agg);
        set
    }

    /// Adds one host (not in the set yet) with candidates summarised in `agg`: the same as
    /// adding its [`HostSet::leaf`], without the leaf.
    pub(crate) fn push(&mut self, host: HostId, agg: &Agg) {
        if agg.n == 0 {
            return;
        }
        self.push_host(host, agg.sum, agg.mus);
        self.disks.merge(agg);
    }

    /// [`HostSet::push`] without the disk summary: one host (not in the set yet) whose
    /// candidates' usable total is `total` and largest `available − reserved` is `mus`.
    #[inline(always)]
    pub(crate) fn push_host(&mut self, host: HostId, total: i128, mus: i64) {
        self.n += 1;
        self.sum += total;
        self.first = self.first.min(host.0);
        if mus > self.mus || (mus == self.mus && host.0 < self.mus_host) {
            self.mus = mus;
            self.mus_host = host.0;
        }
        ins_high(&mut self.max, total);
        ins_low(&mut self.min, total);
    }

    /// Adds the hosts of `o` (disjoint from these).
    pub(crate) fn add(&mut self, o: &HostSet) {
        if o.n == 0 {
            return;
        }
        self.n += o.n;
        self.sum += o.sum;
        self.first = self.first.min(o.first);
        if o.mus > self.mus || (o.mus == self.mus && o.mus_host < self.mus_host) {
            self.mus = o.mus;
            self.mus_host = o.mus_host;
        }
        for v in o.max {
            ins_high(&mut self.max, v);
        }
        for v in o.min {
            ins_low(&mut self.min, v);
        }
        self.disks.merge(&o.disks);
    }

    /// The balance score's node stage over this set: the host the engine's loop keeps (the
    /// first, in host id order, of those with the lowest score), or `None` when it keeps none
    /// (no host has `s` usable bytes, or the mean is not positive). `first_host(t, at_least)`
    /// is the lowest host id of the set whose total is `≥ t` (`at_least`) or `≤ t`, or
    /// [`NO_HOST`].
    ///
    /// A host's score is a function of its total `v` alone: `spread` of
    /// `max(M', v − s) − min(m', v − s)`, where `M'` and `m'` are the largest and smallest of
    /// the other totals (the second extreme when `v` is the extreme). For `v` strictly between
    /// the smallest total `m` and the largest `M` (and `s ≥ 0`) that range is
    /// `M − min(m, v − s)`, which never grows with `v`, and it is never below the largest
    /// host's range. So the lowest score is that of `M` or of `m`; the hosts scoring it are
    /// those with `v ≥ lo` for some `lo` (found by bisection on the same float formula) when
    /// `M`'s score is the lowest, plus those with `v = m` when `m`'s is; each set's first host
    /// is one `first_host` search.
    pub(crate) fn balance_host(&self, s: i128, first_host: impl Fn(i128, bool) -> u32) -> Option<HostId> {
        let wide = Wide { n: self.n as usize, sum: self.sum, min: self.min, max: self.max };
        let score = |v: i128| spread(wide.range_with(v, s), wide.n, wide.sum - s);
        let (big, small) = (self.max[0], self.min[0]);
        if big < s {
            return None;
        }
        let score_big = score(big);
        let score_small = (small < big && small >= s).then(|| score(small));
        let best = match score_small {
            Some(x) if x < score_big => x,
            _ => score_big,
        };
        if best >= f64::MAX {
            return None;
        }
        let mut win = NO_HOST;
        if score_big == best {
            // The smallest total in `lo_bound..=big` scoring `best` (the scores of the totals
            // between never grow with the total; `big` scores it).
            let (mut lo, mut hi) = (s.max(small + 1), big);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if score(mid) <= best {
                    hi = mid;
                } else {
                    lo = mid + 1;
                }
            }
            win = win.min(first_host(hi, true));
        }
        if score_small == Some(best) {
            win = win.min(first_host(small, false));
        }
        (win != NO_HOST).then_some(HostId(win))
    }

    /// The engine's pick among this set's hosts (non-empty, `s ≥ 0`), as [`choose_entries`]
    /// makes it over the same hosts: `cands(h)` and `agg(h)` are host `h`'s candidates (kept,
    /// or worked out when asked) and their summary, `first_host` as for
    /// [`HostSet::balance_host`].
    pub(crate) fn choose<C: std::ops::Deref<Target = [Candidate]>>(
        &self,
        strategy: DiskChoice,
        s: i128,
        cands: impl Fn(HostId) -> C,
        agg: impl Fn(HostId) -> Agg,
        first_host: impl Fn(i128, bool) -> u32,
    ) -> Option<Candidate> {
        let first = cands(HostId(self.first)).first().copied();
        match strategy {
            DiskChoice::MostUsableStorage => {
                let host = HostId(self.mus_host);
                cands(host).get(agg(host).mus_pos as usize).copied().or(first)
            }
            DiskChoice::BalanceScore => match self.balance_host(s, first_host) {
                Some(host) => best_disk(&cands(host), &self.disks, s).or(first),
                None => first,
            },
        }
    }
}

/// One host's candidates in a tier's union: `len` candidates from `start` in either the static
/// list (disks no replica of the volume touches) or the per-replica dynamic list, summarised by
/// `agg` (an index into the matching summaries of the [`Pool`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    pub(crate) host: HostId,
    pub(crate) dynamic: bool,
    pub(crate) start: u32,
    pub(crate) len: u32,
    pub(crate) agg: u32,
}

/// Appends candidate `c`, stored at `at` in a dynamic list sorted by host, to the per-host
/// entries and summaries being built: it joins the last entry when that is its host's.
pub(crate) fn push_dynamic(entries: &mut Vec<Entry>, aggs: &mut Vec<Agg>, c: &Candidate, at: usize) {
    match (entries.last_mut(), aggs.last_mut()) {
        (Some(e), Some(agg)) if e.host == c.host => {
            e.len += 1;
            agg.push(c);
        }
        _ => {
            let mut agg = Agg::EMPTY;
            agg.push(c);
            entries.push(Entry { host: c.host, dynamic: true, start: at as u32, len: 1, agg: aggs.len() as u32 });
            aggs.push(agg);
        }
    }
}

/// Where [`Entry`] ranges point: the static and dynamic candidates and their summaries.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pool<'a> {
    pub(crate) stat: &'a [Candidate],
    pub(crate) dynamic: &'a [Candidate],
    /// Static summaries, indexed by host.
    pub(crate) stat_aggs: &'a [Agg],
    pub(crate) dyn_aggs: &'a [Agg],
}

impl<'a> Pool<'a> {
    pub(crate) fn cands(&self, e: &Entry) -> &'a [Candidate] {
        let list = if e.dynamic { self.dynamic } else { self.stat };
        list.get(e.start as usize..(e.start + e.len) as usize).unwrap_or(&[])
    }

    pub(crate) fn agg(&self, e: &Entry) -> &'a Agg {
        let list = if e.dynamic { self.dyn_aggs } else { self.stat_aggs };
        list.get(e.agg as usize).unwrap_or(&Agg::EMPTY)
    }
}

/// `max(0, available − reserved − scheduled)`; inputs are ≥ 0, so the result fits an `i64`.
#[inline]
pub(crate) fn usable(space: DiskSpace) -> i64 {
    let DiskSpace { available: a, reserved: r, scheduled: s, .. } = space;
    // Without overflow the difference is exact and at most `i64::MAX`: only the floor applies.
    match a.checked_sub(r).and_then(|x| x.checked_sub(s)) {
        Some(u) => u.max(0),
        None => (a as i128 - r as i128 - s as i128).clamp(0, i64::MAX as i128) as i64,
    }
}

/// Chooses among the candidates of `entries` (in host order, each host's candidates in disk
/// order; entries with no candidate are not allowed). Exact ties and the "arbitrary disk"
/// fallback take the lowest (host, disk). Computes in O(hosts + the chosen host's disks).
pub(crate) fn choose_entries(strategy: DiskChoice, entries: &[Entry], pool: Pool<'_>, size: i64) -> Option<Candidate> {
    let first = entries.iter().find_map(|e| pool.cands(e).first().copied())?;
    match strategy {
        DiskChoice::MostUsableStorage => {
            let mut best: Option<(&Entry, &Agg)> = None;
            for e in entries {
                let agg = pool.agg(e);
                if agg.n > 0 && best.is_none_or(|(_, b)| agg.mus > b.mus) {
                    best = Some((e, agg));
                }
            }
            best.and_then(|(e, agg)| pool.cands(e).get(agg.mus_pos as usize).copied()).or(Some(first))
        }
        DiskChoice::BalanceScore => {
            let s = size as i128;
            let (node_stats, disk_stats) = stats(entries, pool);
            // Every score shares the mean `(sum − s) / n`, so a range no smaller than the best
            // one's cannot score strictly lower and is skipped without the float division.
            let mut best_node = None;
            let mut best_score = f64::MAX;
            let mut best_range = i128::MAX;
            for e in entries {
                let total = pool.agg(e).sum;
                if total < s {
                    continue;
                }
                let range = node_stats.range_with(total, s);
                if best_node.is_some() && range >= best_range {
                    continue;
                }
                let score = spread(range, node_stats.n, node_stats.sum - s);
                if best_node.is_none() || score < best_score {
                    best_score = score;
                    best_range = range;
                    best_node = Some(e);
                }
            }
            let Some(node) = best_node.filter(|_| best_score < f64::MAX) else { return Some(first) };
            Some(best_disk(pool.cands(node), &disk_stats, s).unwrap_or(first))
        }
    }
}

/// The balance score's summaries of `entries`: the nodes' usable totals and every disk's.
fn stats(entries: &[Entry], pool: Pool<'_>) -> (Wide, Agg) {
    let mut node_stats = Wide::default();
    let mut disk_stats = Agg::EMPTY;
    for e in entries {
        let agg = pool.agg(e);
        node_stats.push(agg.sum);
        disk_stats.merge(agg);
    }
    (node_stats, disk_stats)
}

/// The balance score's disk stage: among `cands` (the chosen node's, in disk order) with at
/// least `s` usable bytes, the first whose use leaves the tier's disks (`disk_stats`) most even.
#[inline]
pub(crate) fn best_disk(cands: &[Candidate], disk_stats: &Agg, s: i128) -> Option<Candidate> {
    let mut best_disk = None;
    let mut best_score = f64::MAX;
    for c in cands {
        let u = c.usable as i128;
        if u < s {
            continue;
        }
        let score = disk_stats.spread_with(u, s);
        if best_disk.is_none() || score < best_score {
            best_score = score;
            best_disk = Some(*c);
        }
    }
    best_disk
}

/// How many candidates an explanation ranks ([`Explanation::top`](crate::explain::Explanation::top)).
pub(crate) const EXPLAIN_TOP: usize = 3;

/// One candidate as an explanation lists it: the disk choice's terms, each `(name, raw value,
/// multiplier)`, in the order the rule compares them.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ranked {
    pub(crate) cand: Candidate,
    pub(crate) terms: Vec<(&'static str, f64, f64)>,
}

/// The candidates of `entries` in the order `strategy` prefers them, best first, at most `k`,
/// each with the terms the rule compared; `pick` (what [`choose_entries`] chose on the same
/// entries) comes first even when it was Longhorn's "first candidate" fallback, which no score
/// ranks. For the balance score, a node or disk without room for `size` is not ranked (the
/// rule skips it). Used for explanations only: it allocates.
pub(crate) fn ranked(
    strategy: DiskChoice,
    entries: &[Entry],
    pool: Pool<'_>,
    size: i64,
    pick: Candidate,
    k: usize,
) -> Vec<Ranked> {
    let mut out: Vec<Ranked> = Vec::new();
    match strategy {
        DiskChoice::MostUsableStorage => {
            for e in entries {
                for c in pool.cands(e) {
                    out.push(Ranked { cand: *c, terms: vec![("usable storage", c.free as f64, 1.0)] });
                }
            }
            // Stable: equal values keep host, then disk order, as the rule's first-wins scan.
            out.sort_by_key(|r| std::cmp::Reverse(r.cand.free));
        }
        DiskChoice::BalanceScore => {
            let s = size as i128;
            let (node_stats, disk_stats) = stats(entries, pool);
            let mut keyed: Vec<(f64, f64, Ranked)> = Vec::new();
            for e in entries {
                let total = pool.agg(e).sum;
                if total < s {
                    continue;
                }
                let node = spread(node_stats.range_with(total, s), node_stats.n, node_stats.sum - s);
                for c in pool.cands(e) {
                    if (c.usable as i128) < s {
                        continue;
                    }
                    let disk = disk_stats.spread_with(c.usable as i128, s);
                    let terms = vec![("node balance", node, -1.0), ("disk balance", disk, -1.0)];
                    keyed.push((node, disk, Ranked { cand: *c, terms }));
                }
            }
            // Lower is better at both stages; stable, so ties keep host and disk order.
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
            out = keyed.into_iter().map(|(_, _, r)| r).collect();
        }
    }
    let same = |r: &Ranked| (r.cand.host, r.cand.disk) == (pick.host, pick.disk);
    match out.iter().position(same) {
        Some(0) => {}
        Some(i) => {
            let r = out.remove(i);
            out.insert(0, r);
        }
        None => out.insert(0, Ranked { cand: pick, terms: Vec::new() }),
    }
    out.truncate(k);
    out
}

/// Chooses among `cands` (sorted by host id, then disk id; non-empty). Returns an index.
/// The plain counterpart of [`choose_entries`], used by tests and the reference vectors.
#[cfg(test)]
pub(crate) fn choose(strategy: DiskChoice, cands: &[Candidate], size: i64) -> usize {
    let mut entries: Vec<Entry> = Vec::new();
    let mut aggs: Vec<Agg> = Vec::new();
    for (i, c) in cands.iter().enumerate() {
        push_dynamic(&mut entries, &mut aggs, c, i);
    }
    let pool = Pool { stat: &[], dynamic: cands, stat_aggs: &[], dyn_aggs: &aggs };
    let pick = choose_entries(strategy, &entries, pool, size);
    pick.and_then(|p| cands.iter().position(|c| (c.host, c.disk) == (p.host, p.disk))).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(host: u32, disk: u32, avail: i64, max: i64, reserved: i64, scheduled: i64) -> Candidate {
        Candidate::new(HostId(host), DiskId(disk), DiskSpace::new(max, avail, reserved, scheduled))
    }

    fn pick(strategy: DiskChoice, cands: &[Candidate], s: i64) -> usize {
        choose(strategy, cands, s)
    }

    proptest::proptest! {
        /// The usable bytes of a candidate are the exact difference floored at 0, for any
        /// numbers (the checked path and the wide one agree).
        #[test]
        fn usable_is_the_exact_floored_difference(a: i64, r: i64, s: i64, small in proptest::bool::ANY) {
            let (a, r, s) = if small { (a >> 2, r.abs() >> 2, s.abs() >> 2) } else { (a, r, s) };
            let want = (a as i128 - r as i128 - s as i128).clamp(0, i64::MAX as i128) as i64;
            proptest::prop_assert_eq!(c(0, 0, a, 0, r, s).usable, want);
        }

        /// Values inserted one by one leave the two smallest and the two largest of them, with
        /// multiplicity, as sorting them gives (sentinels where fewer than two were inserted).
        #[test]
        fn the_two_extremes_are_those_of_the_sorted_values(values in proptest::collection::vec(-3i64..3, 0..8)) {
            let (mut low, mut high) = ([i64::MAX; 2], [i64::MIN; 2]);
            for &v in &values {
                ins_low(&mut low, v);
                ins_high(&mut high, v);
            }
            let mut sorted = values.clone();
            sorted.sort_unstable();
            let at = |i: usize, none: i64| sorted.get(i).copied().unwrap_or(none);
            let from_top = |i: usize| sorted.len().checked_sub(i + 1).map_or(i64::MIN, |j| sorted[j]);
            proptest::prop_assert_eq!(low, [at(0, i64::MAX), at(1, i64::MAX)]);
            proptest::prop_assert_eq!(high, [from_top(0), from_top(1)]);
        }
    }

    /// The reference's balance-function vectors (HEAD column, then v1.10.2 column).
    #[test]
    fn balance_function_vectors() {
        use DiskChoice::*;
        let v = [c(0, 0, 900, 1000, 100, 500), c(1, 0, 500, 1000, 0, 0)];
        assert_eq!((pick(BalanceScore, &v, 10), pick(MostUsableStorage, &v, 10)), (1, 0));
        let v = [c(0, 0, 100, 1000, 50, 500), c(1, 0, 30, 1000, 0, 0)];
        assert_eq!((pick(BalanceScore, &v, 10), pick(MostUsableStorage, &v, 10)), (1, 0));
        let v = [c(0, 0, 60, 1000, 0, 0), c(0, 1, 60, 1000, 0, 0), c(1, 0, 50, 1000, 0, 0)];
        assert_eq!((pick(BalanceScore, &v, 100), pick(MostUsableStorage, &v, 100)), (0, 0));
        let v = [c(0, 0, 50, 1000, 0, 0), c(1, 0, 60, 1000, 0, 0)];
        assert_eq!((pick(BalanceScore, &v, 100), pick(MostUsableStorage, &v, 100)), (0, 1));
        let v = [c(0, 0, 100, 400, 0, 0), c(0, 1, 0, 800, 0, 0)];
        assert_eq!((pick(BalanceScore, &v, 100), pick(MostUsableStorage, &v, 100)), (0, 0));
        let v = [c(0, 0, 1000, 1000, 0, 0), c(1, 0, 600, 1000, 0, 0), c(1, 1, 500, 1000, 0, 0), c(2, 0, 0, 1000, 0, 0)];
        assert_eq!((pick(BalanceScore, &v, 10), pick(MostUsableStorage, &v, 10)), (1, 0));
        let v = [c(0, 0, 100, 1000, 0, 0), c(1, 0, 90, 1000, 0, 0), c(2, 0, 10, 1000, 0, 0)];
        assert_eq!((pick(BalanceScore, &v, 50), pick(MostUsableStorage, &v, 50)), (0, 0));
        let v = [c(0, 0, 100, 1000, 0, 0), c(1, 0, 100, 1000, 0, 0), c(2, 0, 50, 1000, 0, 0), c(3, 0, 0, 1000, 0, 0)];
        assert_eq!((pick(BalanceScore, &v, 10), pick(MostUsableStorage, &v, 10)), (0, 0));
    }
}
