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
    /// Status values (no in-cycle adjustment).
    pub(crate) space: DiskSpace,
}

/// Sum, two smallest and two largest of a list, so that the spread with one value replaced
/// costs O(1). Byte values are integers: summing in `i128` gives the exact value Longhorn's f64
/// sum has below 2^53.
struct Stats {
    n: usize,
    sum: i128,
    min: [(i128, usize); 2],
    max: [(i128, usize); 2],
}

impl Stats {
    fn new(values: impl Iterator<Item = i128>) -> Self {
        let mut st = Stats { n: 0, sum: 0, min: [(i128::MAX, usize::MAX); 2], max: [(i128::MIN, usize::MAX); 2] };
        for (i, v) in values.enumerate() {
            st.n += 1;
            st.sum += v;
            if v < st.min[0].0 {
                st.min[1] = st.min[0];
                st.min[0] = (v, i);
            } else if v < st.min[1].0 {
                st.min[1] = (v, i);
            }
            if v > st.max[0].0 {
                st.max[1] = st.max[0];
                st.max[0] = (v, i);
            } else if v > st.max[1].0 {
                st.max[1] = (v, i);
            }
        }
        st
    }

    /// `spread(X)` = `(max X − min X) / mean X` with value `i` (= `v`) replaced by `v − s`;
    /// +∞ (`f64::MAX`) when the mean is ≤ 0.
    fn spread_with(&self, i: usize, v: i128, s: i128) -> f64 {
        let nv = v - s;
        let lo = if self.min[0].1 == i { self.min[1].0 } else { self.min[0].0 }.min(nv);
        let hi = if self.max[0].1 == i { self.max[1].0 } else { self.max[0].0 }.max(nv);
        let mean = (self.sum - s) as f64 / self.n as f64;
        if self.n == 0 || mean <= 0.0 {
            return f64::MAX;
        }
        (hi - lo) as f64 / mean
    }
}

fn usable(c: &Candidate) -> i128 {
    let u = c.space.available as i128 - c.space.reserved as i128 - c.space.scheduled as i128;
    u.max(0)
}

/// Chooses among `cands` (sorted by host id, then disk id; non-empty). Returns an index.
/// Exact ties and the "arbitrary disk" fallback take the lowest (host, disk). Computes in
/// O(candidates × nodes) for the balance score.
pub(crate) fn choose(
    strategy: DiskChoice,
    cands: &[Candidate],
    size: i64,
    nodes_buf: &mut Vec<(HostId, i128)>,
) -> usize {
    debug_assert!(!cands.is_empty());
    if cands.len() == 1 {
        return 0;
    }
    match strategy {
        DiskChoice::MostUsableStorage => {
            let mut best = 0;
            let mut best_v = i128::MIN;
            for (i, c) in cands.iter().enumerate() {
                let v = c.space.available as i128 - c.space.reserved as i128;
                if v > best_v {
                    best_v = v;
                    best = i;
                }
            }
            best
        }
        DiskChoice::BalanceScore => {
            let s = size as i128;
            // Per-node usable totals, in host order (candidates are sorted).
            nodes_buf.clear();
            for c in cands {
                match nodes_buf.last_mut() {
                    Some((h, u)) if *h == c.host => *u += usable(c),
                    _ => nodes_buf.push((c.host, usable(c))),
                }
            }
            let node_stats = Stats::new(nodes_buf.iter().map(|n| n.1));
            let mut best_node = None;
            let mut best_score = f64::MAX;
            for (i, &(_, total)) in nodes_buf.iter().enumerate() {
                if total < s {
                    continue;
                }
                let score = node_stats.spread_with(i, total, s);
                if best_node.is_none() || score < best_score {
                    best_score = score;
                    best_node = Some(i);
                }
            }
            let Some(node) = best_node.filter(|_| best_score < f64::MAX) else { return 0 };
            let host = nodes_buf[node].0;
            let disk_stats = Stats::new(cands.iter().map(usable));
            let mut best_disk = None;
            let mut best_score = f64::MAX;
            for (i, c) in cands.iter().enumerate() {
                let u = usable(c);
                if c.host != host || u < s {
                    continue;
                }
                let score = disk_stats.spread_with(i, u, s);
                if best_disk.is_none() || score < best_score {
                    best_score = score;
                    best_disk = Some(i);
                }
            }
            best_disk.unwrap_or(0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(host: u32, disk: u32, avail: i64, max: i64, reserved: i64, scheduled: i64) -> Candidate {
        Candidate { host: HostId(host), disk: DiskId(disk), space: DiskSpace::new(max, avail, reserved, scheduled) }
    }

    fn pick(strategy: DiskChoice, cands: &[Candidate], s: i64) -> usize {
        choose(strategy, cands, s, &mut Vec::new())
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
