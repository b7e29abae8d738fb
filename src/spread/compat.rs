//! The compatible mode: SwarmKit's tree walk (reference §3–§5) in the canonical order.

use super::run::{narrow_key, RevisitOrder, Run, PREFIX_PASSED};
use super::tree::{allocate, Kid, LevelKind};
use crate::id::HostId;

/// Go's `container/heap` push and fix on a node array, as SwarmKit's bounded `nodeMaxHeap`
/// uses them while building the tree: `less(a, b)` is the node order, and the heap keeps the
/// *worst* node at the root, the one a better node replaces.
mod goheap {
    use crate::id::HostId;

    /// Keeps the candidates for which `keep` holds the way SwarmKit drops the others: a failing
    /// one is replaced by the last candidate, which is then checked in its slot.
    pub(super) fn drop_failing(v: &mut Vec<HostId>, mut keep: impl FnMut(HostId) -> bool) {
        let mut i = 0;
        while i < v.len() {
            if keep(v[i]) {
                i += 1;
            } else {
                v.swap_remove(i);
            }
        }
    }

    fn hless<T: Copy>(v: &[T], less: &impl Fn(T, T) -> bool, i: usize, j: usize) -> bool {
        less(v[j], v[i])
    }

    pub(super) fn down<T: Copy>(v: &mut [T], i0: usize, n: usize, less: &impl Fn(T, T) -> bool) -> bool {
        let mut i = i0;
        loop {
            let j1 = 2 * i + 1;
            if j1 >= n {
                break;
            }
            let mut j = j1;
            let j2 = j1 + 1;
            if j2 < n && hless(v, less, j2, j1) {
                j = j2;
            }
            if !hless(v, less, j, i) {
                break;
            }
            v.swap(i, j);
            i = j;
        }
        i > i0
    }

    pub(super) fn up<T: Copy>(v: &mut [T], mut j: usize, less: &impl Fn(T, T) -> bool) {
        while j > 0 {
            let i = (j - 1) / 2;
            if !hless(v, less, j, i) {
                break;
            }
            v.swap(i, j);
            j = i;
        }
    }

    pub(super) fn push(v: &mut Vec<HostId>, x: HostId, less: &impl Fn(HostId, HostId) -> bool) {
        v.push(x);
        let last = v.len() - 1;
        up(v, last, less);
    }

    pub(super) fn fix_root(v: &mut [HostId], less: &impl Fn(HostId, HostId) -> bool) {
        let n = v.len();
        if !down(v, 0, n, less) {
            up(v, 0, less);
        }
    }

    /// `heap.Init` then popping every element: the array ends sorted best first, ties in
    /// whatever order the heap operations leave them.
    pub(super) fn init_and_drain<T: Copy>(v: &mut [T], less: &impl Fn(T, T) -> bool) {
        let n = v.len();
        for i in (0..n / 2).rev() {
            down(v, i, n, less);
        }
        for len in (1..=n).rev() {
            v.swap(0, len - 1);
            down(v, 0, len - 1, less);
        }
    }

    /// The low halves of a narrow key, which its comparison ignores.
    const LOW: u64 = u32::MAX as u64;

    /// [`down`] from `i0` over the whole of `v` with `narrow_less` (the keys in the high halves
    /// compared, the low halves ignored): the same comparisons in the same order, so the same
    /// moves, with the sifted element held aside and written once where it stops.
    #[inline(always)]
    fn down_narrow(v: &mut [u64], i0: usize) {
        let n = v.len();
        let x = v[i0];
        // `narrow_less(x, c)`: `c`'s key above `x`'s, whatever the low halves.
        let x_max = x | LOW;
        let mut i = i0;
        loop {
            let (j1, j2) = (2 * i + 1, 2 * i + 2);
            if j2 >= n {
                // One child at most (then the last element, with none below it).
                if j1 < n && v[j1] > x_max {
                    v[i] = v[j1];
                    i = j1;
                }
                break;
            }
            let (c1, c2) = (v[j1], v[j2]);
            let (j, c) = if c2 > c1 | LOW { (j2, c2) } else { (j1, c1) };
            if c <= x_max {
                break;
            }
            v[i] = c;
            i = j;
        }
        v[i] = x;
    }

    /// [`init_and_drain`] with `narrow_less`, by [`down_narrow`].
    #[inline(never)]
    pub(super) fn init_and_drain_narrow(v: &mut [u64]) {
        let n = v.len();
        for i in (0..n / 2).rev() {
            down_narrow(v, i);
        }
        // The last pop (one element left) moves nothing.
        for len in (2..=n).rev() {
            v.swap(0, len - 1);
            down_narrow(&mut v[..len - 1], 0);
        }
    }
}

/// Fills `out` with the [`narrow_key`]s of `cands` (keys by host index, tie-breaks from
/// `tie(position, host index)`): `false` when one has none.
fn narrow_keys(key: &[u128], cands: &[HostId], tie: impl Fn(usize, usize) -> u32, out: &mut Vec<u64>) -> bool {
    out.clear();
    for (pos, &h) in cands.iter().enumerate() {
        let Some(k) = narrow_key(key[h.index()], tie(pos, h.index())) else { return false };
        out.push(k);
    }
    true
}

/// [`Run::node_less`] on two [`narrow_key`]s without scores: the keys alone, the tie-breaks
/// in the low halves ignored (the order `goheap::init_and_drain_narrow` sorts by).
#[cfg(test)]
fn narrow_less(a: u64, b: u64) -> bool {
    a >> 32 < b >> 32
}

/// Sorts `packed` (each a node's key with its tie-break in the low 32 bits, `low` reading the
/// tie-break back) and writes to `cands` the nodes the tie-breaks name in `from`.
fn sort_packed<K: Ord + Copy>(packed: &mut [K], low: impl Fn(K) -> usize, from: &[HostId], cands: &mut [HostId]) {
    packed.sort_unstable();
    for (c, &k) in cands.iter_mut().zip(packed.iter()) {
        *c = from[low(k)];
    }
}

/// The most distinct keys [`sort_by_few_keys`] sorts.
const FEW_KEYS: usize = 8;

/// Sorts `cands` stably by their keys (`key` by host index) when they hold at most
/// [`FEW_KEYS`] distinct ones and, given `rank` (by host index), are in rank order, by
/// counting: O(candidates × distinct keys), no comparison sort. `false`, `cands` untouched,
/// otherwise. `classes` and `before` are buffers.
#[inline(never)]
fn sort_by_few_keys(
    key: &[u128],
    rank: Option<&[u32]>,
    cands: &mut [HostId],
    classes: &mut Vec<u8>,
    before: &mut Vec<HostId>,
) -> bool {
    let mut seen = [0u128; FEW_KEYS];
    let mut count = [0u32; FEW_KEYS];
    let mut k = 0;
    let mut last_rank = None;
    classes.clear();
    classes.resize(cands.len(), 0);
    for (class, &h) in classes.iter_mut().zip(cands.iter()) {
        if let Some(rank) = rank {
            let r = rank[h.index()];
            if last_rank.is_some_and(|l| l >= r) {
                return false;
            }
            last_rank = Some(r);
        }
        let x = key[h.index()];
        let c = match seen[..k].iter().position(|&s| s == x) {
            Some(c) => c,
            None if k < FEW_KEYS => {
                seen[k] = x;
                k += 1;
                k - 1
            }
            None => return false,
        };
        count[c] += 1;
        *class = c as u8;
    }
    // Each class's first slot: the candidates of every smaller key come before it.
    let mut next = [0u32; FEW_KEYS];
    for c in 0..k {
        next[c] = (0..k).filter(|&d| seen[d] < seen[c]).map(|d| count[d]).sum();
    }
    before.clear();
    before.extend_from_slice(cands);
    for (&h, &c) in before.iter().zip(classes.iter()) {
        let slot = &mut next[usize::from(c)];
        cands[*slot as usize] = h;
        *slot += 1;
    }
    true
}

/// [`Run::node_less`] on copies: the packed key, then the score (higher first).
fn wide_less(a: (u128, f64, HostId), b: (u128, f64, HostId)) -> bool {
    a.0 < b.0 || (a.0 == b.0 && a.1 > b.1)
}

/// A score ordered by `f64::total_cmp`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct OrdScore(f64);

impl Eq for OrdScore {}

impl Ord for OrdScore {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

impl PartialOrd for OrdScore {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Run<'_> {
    /// Fills every leaf's bounded heap (at most `max` nodes), visiting leaves in value order and
    /// nodes by name, running the pipeline as SwarmKit does: for every node while the heap is
    /// not full, afterwards only for a node strictly better than the heap's worst.
    pub(crate) fn fill_heaps(&mut self, max: usize) {
        let mut stack = vec![0u32];
        let mut leaves = Vec::new();
        while let Some(b) = stack.pop() {
            let br = &self.tree.branches[b as usize];
            if br.children.is_empty() {
                leaves.push(b);
            }
            stack.extend(br.children.iter().rev());
        }
        for &leaf in &leaves {
            let hosts = std::mem::take(&mut self.tree.branches[leaf as usize].hosts);
            let mut heap = std::mem::take(&mut self.tree.branches[leaf as usize].cands);
            heap.clear();
            heap.reserve(hosts.len().min(max));
            let mut passed = 0;
            if hosts.len() <= max && self.prefix == self.entries.len() {
                // As below, with every verdict in the leading stages' table: `process_initially`
                // written out.
                let Run { nodes, counters, counted, .. } = self;
                heap.resize(hosts.len(), HostId(0));
                let mut kept = 0;
                for (r, &h) in hosts.iter().enumerate() {
                    nodes.rank[h.index()] = r as u32;
                    match nodes.prefix_fail[h.index()] {
                        PREFIX_PASSED => {
                            if *counted {
                                counters.fill(0);
                                *counted = false;
                            }
                            heap[kept] = h;
                            kept += 1;
                        }
                        f => {
                            counters[f as usize] += 1;
                            *counted = true;
                        }
                    }
                }
                heap.truncate(kept);
                passed = kept as u32;
            } else if hosts.len() <= max {
                // The heap never fills: every node is checked and every passing one kept, and
                // the first visit sorts them, so the heap's shape does not matter.
                for (r, &h) in hosts.iter().enumerate() {
                    self.nodes.rank[h.index()] = r as u32;
                    if self.process_initially(h) {
                        passed += 1;
                        heap.push(h);
                    }
                }
            } else {
                for (r, &h) in hosts.iter().enumerate() {
                    self.nodes.rank[h.index()] = r as u32;
                }
                for &h in &hosts {
                    let ok = if heap.len() < max {
                        self.process_initially(h)
                    } else {
                        let less = |a, b| self.full_order(a, b).is_lt();
                        less(h, heap[0]) && self.process_initially(h)
                    };
                    if !ok {
                        continue;
                    }
                    passed += 1;
                    let less = |a, b| self.full_order(a, b).is_lt();
                    if heap.len() < max {
                        goheap::push(&mut heap, h, &less);
                    } else {
                        heap[0] = h;
                        goheap::fix_root(&mut heap, &less);
                    }
                }
            }
            let mut cur = leaf;
            loop {
                self.tree.branches[cur as usize].eligible += passed;
                if cur == 0 {
                    break;
                }
                cur = self.tree.branches[cur as usize].parent;
            }
            let br = &mut self.tree.branches[leaf as usize];
            br.hosts = hosts;
            br.cands = heap;
        }
    }

    /// Every candidate of every leaf.
    pub(crate) fn all_candidates(&self) -> Vec<HostId> {
        self.tree.branches.iter().flat_map(|b| b.cands.iter().copied()).collect()
    }

    /// `scheduleNTasksOnSubtree`: asks `branch` for `n` tasks, returns how many it placed.
    pub(crate) fn split_compat(&mut self, branch: u32, n: i64) -> i64 {
        if self.left == 0 {
            self.tree.branches[branch as usize].starved = true;
        }
        if self.tree.branches[branch as usize].children.is_empty() {
            return self.leaf_compat(branch, n);
        }
        match self.tree.child_kind(branch) {
            LevelKind::Spread => self.spread_compat(branch, n),
            _ => self.share_compat(branch, n),
        }
    }

    fn ask(&mut self, child: u32, n: i64) -> i64 {
        self.tree.branches[child as usize].asked += n as u32;
        self.split_compat(child, n)
    }

    /// SwarmKit's top-up split (reference §4), with the counts frozen at build time.
    fn spread_compat(&mut self, branch: u32, n: i64) -> i64 {
        let children = self.tree.branches[branch as usize].children.clone();
        let k = children.len() as i64;
        let mut full = vec![false; children.len()];
        let mut nfull = 0i64;
        let mut placed = 0i64;
        let mut pool = self.tree.branches[branch as usize].existing as i64;
        let mut converging = true;
        while placed != n && nfull != k && converging {
            let open = k - nfull;
            let total = pool + n - placed;
            let target = total / open;
            let mut extra = total % open;
            converging = false;
            for (ci, &child) in children.iter().enumerate() {
                if full[ci] {
                    continue;
                }
                let e = self.tree.branches[child as usize].existing as i64;
                if e < target || (e == target && extra > 0) {
                    converging = true;
                    let ask = target - e + i64::from(extra > 0);
                    let got = self.ask(child, ask);
                    if got < ask {
                        full[ci] = true;
                        nfull += 1;
                        pool -= e;
                    } else if extra > 0 {
                        extra -= 1;
                    }
                    placed += got;
                }
            }
        }
        placed
    }

    /// Pack and weighted levels in the compatible mode (placewise's extensions): allocate the
    /// tasks left with the level's rule over the frozen counts plus what each branch took in
    /// this call, ask each branch in value order, retire branches that come back short.
    fn share_compat(&mut self, branch: u32, n: i64) -> i64 {
        let children = self.tree.branches[branch as usize].children.clone();
        let kind = self.tree.child_kind(branch).clone();
        let mut full = vec![false; children.len()];
        let mut given = vec![0u64; children.len()];
        let mut placed = 0i64;
        let mut open = Vec::new();
        let mut kids = Vec::new();
        loop {
            let remaining = n - placed;
            if remaining <= 0 {
                break;
            }
            open.clear();
            kids.clear();
            let mut others = 0;
            for (ci, &c) in children.iter().enumerate() {
                let b = &self.tree.branches[c as usize];
                if full[ci] {
                    others += b.existing + given[ci];
                } else {
                    open.push(ci);
                    kids.push(Kid { count: b.existing + given[ci], eligible: b.eligible, share: b.share });
                }
            }
            if open.is_empty() {
                break;
            }
            let mut alloc = vec![0u64; open.len()];
            allocate(&kind, &kids, others, remaining as u64, &mut alloc);
            let mut asked_any = false;
            for (oi, &ci) in open.iter().enumerate() {
                let a = alloc[oi] as i64;
                if a == 0 {
                    continue;
                }
                asked_any = true;
                let got = self.ask(children[ci], a);
                given[ci] += got.max(0) as u64;
                placed += got;
                if got < a {
                    full[ci] = true;
                }
            }
            if !asked_any {
                break;
            }
        }
        placed
    }

    /// SwarmKit's node keys packed in one integer, then the weighers' score (higher first).
    fn sort_key(&self, h: HostId) -> (u128, std::cmp::Reverse<OrdScore>) {
        let n = &*self.nodes;
        let i = h.index();
        (n.key[i], std::cmp::Reverse(OrdScore(n.score[i])))
    }

    /// Sorts `leaf`'s candidates by SwarmKit's keys, then the weighers' score, then the name
    /// order (`by_rank`) or the current position (a stable sort).
    fn sort_leaf(&mut self, leaf: u32, cands: &mut [HostId], by_rank: bool) {
        if self.scored {
            if by_rank {
                cands.sort_by_cached_key(|&h| (self.sort_key(h), self.nodes.rank[h.index()]));
            } else {
                cands.sort_by_cached_key(|&h| self.sort_key(h));
            }
            return;
        }
        // Without scores, candidates in their tie-break order (by name as the leaves are filled
        // unbounded, or by position) with few distinct keys (the usual case: a leaf's nodes
        // run few tasks) are sorted stably by key, by counting.
        let n = &*self.nodes;
        let rank = by_rank.then_some(&n.rank[..]);
        if sort_by_few_keys(&n.key, rank, cands, &mut self.class_buf, &mut self.pos_buf) {
            return;
        }
        // Otherwise the whole key and its tie-break fit one integer, unique in the leaf:
        // sort plain integers, then find each node from its tie-break (its rank in the leaf's
        // name order, or its position before the sort). With no penalty and counts below 2^16
        // (the usual case) the integer is a u64, half the width to sort.
        let mut buf = std::mem::take(&mut self.sort_buf);
        buf.clear();
        let mut narrow = std::mem::take(&mut self.sort_buf64);
        let mut before = std::mem::take(&mut self.pos_buf);
        before.clear();
        if !by_rank {
            before.extend_from_slice(cands);
        }
        let by_name = by_rank.then(|| std::mem::take(&mut self.tree.branches[leaf as usize].hosts));
        let n = &*self.nodes;
        let tie = |pos: usize, i: usize| if by_rank { n.rank[i] } else { pos as u32 };
        let from = by_name.as_deref().unwrap_or(&before);
        if narrow_keys(&n.key, cands, tie, &mut narrow) {
            sort_packed(&mut narrow, |k| (k & u64::from(u32::MAX)) as usize, from, cands);
        } else {
            buf.extend(
                cands.iter().enumerate().map(|(pos, &h)| n.key[h.index()] << 32 | u128::from(tie(pos, h.index()))),
            );
            sort_packed(&mut buf, |k| (k & u128::from(u32::MAX)) as usize, from, cands);
        }
        if let Some(hosts) = by_name {
            self.tree.branches[leaf as usize].hosts = hosts;
        }
        self.sort_buf = buf;
        self.sort_buf64 = narrow;
        self.pos_buf = before;
    }

    /// SwarmKit's re-sort of a revisited leaf: Go's heap sort of `cands` by
    /// [`node_less`](Run::node_less). The heap works on copies of the keys (the same
    /// comparisons, so the same permutation, without a lookup per comparison); without scores,
    /// penalties or counts of 2^16 (the usual case) each copy is one u64, the key in the high
    /// half and the node's position before the sort in the low half, which the comparison
    /// ignores.
    fn heap_sort(&mut self, cands: &mut [HostId]) {
        let n = &*self.nodes;
        let mut narrow = std::mem::take(&mut self.sort_buf64);
        if !self.scored && narrow_keys(&n.key, cands, |pos, _| pos as u32, &mut narrow) {
            goheap::init_and_drain_narrow(&mut narrow);
            let mut before = std::mem::take(&mut self.pos_buf);
            before.clear();
            before.extend_from_slice(cands);
            for (c, &k) in cands.iter_mut().zip(&narrow) {
                *c = before[k as u32 as usize];
            }
            self.pos_buf = before;
        } else {
            let mut buf = std::mem::take(&mut self.heap_buf);
            buf.clear();
            buf.extend(cands.iter().map(|&h| (n.key[h.index()], n.score[h.index()], h)));
            goheap::init_and_drain(&mut buf, &wide_less);
            for (c, &(_, _, h)) in cands.iter_mut().zip(&buf) {
                *c = h;
            }
            self.heap_buf = buf;
        }
        self.sort_buf64 = narrow;
    }

    /// `scheduleNTasksOnNodes` (reference §5).
    fn leaf_compat(&mut self, leaf: u32, n: i64) -> i64 {
        let mut cands = std::mem::take(&mut self.tree.branches[leaf as usize].cands);
        if !self.tree.branches[leaf as usize].visited {
            self.tree.branches[leaf as usize].visited = true;
            self.sort_leaf(leaf, &mut cands, true);
        } else {
            match self.revisit {
                // Ties keep their previous positions: the reference's canonical outcomes (V08).
                RevisitOrder::Stable => {
                    cands.retain(|&h| self.process(h));
                    self.sort_leaf(leaf, &mut cands, false);
                }
                RevisitOrder::GoHeap => {
                    goheap::drop_failing(&mut cands, |h| self.process(h));
                    self.heap_sort(&mut cands);
                }
            }
        }
        let placed = self.assign_compat(leaf, &cands, n);
        self.tree.branches[leaf as usize].cands = cands;
        placed
    }

    fn assign_compat(&mut self, leaf: u32, nodes: &[HostId], n: i64) -> i64 {
        let m = nodes.len();
        if m == 0 {
            return 0;
        }
        let mut failed = std::mem::take(&mut self.failed_buf);
        failed.clear();
        failed.resize(m, false);
        let placed = self.assign_visit(leaf, nodes, n, &mut failed);
        self.failed_buf = failed;
        placed
    }

    /// [`assign_compat`](Run::assign_compat) with `failed`, one flag per node (all clear), for
    /// the nodes that failed a filter in this visit.
    fn assign_visit(&mut self, leaf: u32, nodes: &[HostId], n: i64, failed: &mut [bool]) -> i64 {
        let m = nodes.len();
        let mut placed = 0i64;
        let mut i = 0usize;
        while self.left > 0 {
            let current = nodes[i % m];
            self.place(current, leaf);
            placed += 1;
            if placed == n {
                return placed;
            }
            if i + 1 < m {
                // First pass: move on only when the next node is now strictly better.
                if self.node_less(nodes[(i + 1) % m], current) {
                    i += 1;
                }
            } else {
                i += 1;
            }
            let origin = i;
            while failed[i % m] || !self.process(nodes[i % m]) {
                failed[i % m] = true;
                i += 1;
                if i - origin == m {
                    return placed;
                }
            }
        }
        placed
    }
}

#[cfg(test)]
mod tests {
    use super::{goheap, narrow_less, wide_less};
    use crate::id::HostId;
    use crate::spread::run::{narrow_key, pack_key};
    use proptest::prelude::*;

    proptest! {
        /// The narrow sort key orders two nodes as the wide one does, and exists exactly when
        /// there is no penalty and both counts are below 2^16.
        #[test]
        fn narrow_keys_order_as_wide_ones(
            a in (prop_oneof![3 => Just(0u32), 1 => 1u32..3], prop_oneof![0u32..4, 0u32..70_000], prop_oneof![0u32..4, 0u32..70_000], 0u32..4),
            b in (prop_oneof![3 => Just(0u32), 1 => 1u32..3], prop_oneof![0u32..4, 0u32..70_000], prop_oneof![0u32..4, 0u32..70_000], 0u32..4),
        ) {
            let wide = |(p, s, t, tie): (u32, u32, u32, u32)| pack_key(p, s, t) << 32 | u128::from(tie);
            let narrow = |(p, s, t, tie): (u32, u32, u32, u32)| narrow_key(pack_key(p, s, t), tie);
            prop_assert_eq!(narrow(a).is_some(), a.0 == 0 && a.1 < 1 << 16 && a.2 < 1 << 16);
            if let (Some(x), Some(y)) = (narrow(a), narrow(b)) {
                prop_assert_eq!(x.cmp(&y), wide(a).cmp(&wide(b)));
            }
        }
    }

    proptest! {
        /// The revisit's heap sort on narrow keys (positions in the low halves) moves the
        /// nodes exactly as the heap sort on the wide copies does, ties (frequent here)
        /// included.
        #[test]
        fn narrow_heap_sort_permutes_as_the_wide_one(counts in proptest::collection::vec((0u32..3, 0u32..3), 0..80)) {
            let mut wide: Vec<(u128, f64, HostId)> =
                counts.iter().enumerate().map(|(i, &(s, t))| (pack_key(0, s, t), 0.0, HostId(i as u32))).collect();
            let mut narrow: Vec<u64> =
                counts.iter().enumerate().map(|(i, &(s, t))| narrow_key(pack_key(0, s, t), i as u32).unwrap()).collect();
            goheap::init_and_drain(&mut wide, &wide_less);
            goheap::init_and_drain(&mut narrow, &narrow_less);
            let by_wide: Vec<u32> = wide.iter().map(|w| w.2 .0).collect();
            let by_narrow: Vec<u32> = narrow.iter().map(|&k| k as u32).collect();
            prop_assert_eq!(by_wide, by_narrow);
        }
    }

    proptest! {
        /// The narrow drain written out (the sifted element held aside, comparisons on the
        /// high halves) moves every element as the generic drain with `narrow_less` does, ties
        /// (frequent here) included.
        #[test]
        fn written_out_narrow_drain_permutes_as_the_generic_one(
            keys in proptest::collection::vec(prop_oneof![0u64..3, 0u64..200], 0..130),
        ) {
            let packed: Vec<u64> = keys.iter().enumerate().map(|(i, &k)| k << 32 | i as u64).collect();
            let (mut generic, mut written) = (packed.clone(), packed);
            goheap::init_and_drain(&mut generic, &narrow_less);
            goheap::init_and_drain_narrow(&mut written);
            prop_assert_eq!(generic, written);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// A leaf's first sort without scores, when it holds too many distinct keys to count
        /// (the packed integers: one u64 when the counts allow, else a u128), against a sort by
        /// the node order: by name rank, [`Run::full_order`](crate::spread::run::Run::full_order);
        /// by position, a stable sort by [`Run::node_less`](crate::spread::run::Run::node_less).
        #[test]
        fn packed_sort_orders_as_the_node_order(
            seed in any::<u64>(),
            n in 1usize..150,
            wide in prop_oneof![3 => Just(0usize), 1 => 1usize..4],
            by_rank in any::<bool>(),
            in_rank_order in any::<bool>(),
        ) {
            let c = (0..n)
                .fold(crate::snapshot::Cluster::builder(), |b, i| b.host(crate::snapshot::HostSpec::new(format!("h{i}"))))
                .build()
                .unwrap();
            let mut rng = crate::rng::SplitMix64::new(seed);
            let shuffle = |v: &mut Vec<HostId>, rng: &mut crate::rng::SplitMix64| {
                for i in (1..v.len()).rev() {
                    v.swap(i, rng.below(i + 1));
                }
            };
            // The leaf's name order, and its candidates: a subset, in that order or another.
            let mut names: Vec<HostId> = (0..n as u32).map(HostId).collect();
            shuffle(&mut names, &mut rng);
            let mut cands: Vec<HostId> = names.iter().copied().filter(|_| rng.below(4) != 0).collect();
            if !in_rank_order {
                shuffle(&mut cands, &mut rng);
            }
            crate::spread::run::tests::with_run(&c, &crate::request::Request::new(1), None, |run| {
                for (r, h) in names.iter().enumerate() {
                    run.nodes.rank[h.index()] = r as u32;
                }
                // Many distinct keys (more than the counting sort takes), ties among them; with
                // `wide`, some penalties or counts of 2^16 and more.
                for h in &names {
                    let big = |rng: &mut crate::rng::SplitMix64| if rng.below(8) < wide { 1 << 16 | rng.below(3) as u32 } else { rng.below(12) as u32 };
                    let penalty = if rng.below(8) < wide { 5 + rng.below(2) as u32 } else { 0 };
                    run.nodes.key[h.index()] = pack_key(penalty, big(&mut rng), big(&mut rng));
                }
                let mut leaf = crate::spread::tree::Branch::default();
                leaf.hosts = names.clone();
                run.tree.branches = vec![leaf];
                let mut want = cands.clone();
                if by_rank {
                    want.sort_by(|&a, &b| run.full_order(a, b));
                } else {
                    want.sort_by(|&a, &b| {
                        if run.node_less(a, b) {
                            std::cmp::Ordering::Less
                        } else if run.node_less(b, a) {
                            std::cmp::Ordering::Greater
                        } else {
                            std::cmp::Ordering::Equal
                        }
                    });
                }
                let mut got = cands.clone();
                run.sort_leaf(0, &mut got, by_rank);
                prop_assert_eq!(got, want);
                Ok(())
            })?;
        }
    }

    proptest! {
        /// The counting sort of few distinct keys orders candidates as a stable sort by key
        /// does, and declines (leaving them as they were) exactly when they hold more than
        /// `FEW_KEYS` distinct keys.
        #[test]
        fn few_keys_sort_as_a_stable_sort_by_key(
            keys in proptest::collection::vec(prop_oneof![4 => 0u128..4, 1 => 0u128..12, 1 => Just(u128::MAX)], 0..60),
            order_seed in any::<u64>(),
        ) {
            // Candidates in some order other than the host ids'.
            let mut cands: Vec<HostId> = (0..keys.len() as u32).map(HostId).collect();
            let mut rng = crate::rng::SplitMix64::new(order_seed);
            for i in (1..cands.len()).rev() {
                cands.swap(i, rng.below(i + 1));
            }
            let distinct = keys.iter().collect::<std::collections::BTreeSet<_>>().len();
            let mut want = cands.clone();
            want.sort_by_key(|h| keys[h.index()]);
            let mut got = cands.clone();
            let sorted = super::sort_by_few_keys(&keys, None, &mut got, &mut Vec::new(), &mut Vec::new());
            prop_assert_eq!(sorted, distinct <= super::FEW_KEYS);
            prop_assert_eq!(got, if sorted { want.clone() } else { cands.clone() });
            // Given ranks, only candidates in rank order are sorted: by key, then rank.
            let rank: Vec<u32> = (0..keys.len() as u32).map(|i| i * 7 % 64).collect();
            let mut ranked = cands.clone();
            ranked.sort_by_key(|h| rank[h.index()]);
            for input in [cands, ranked] {
                let in_order = input.windows(2).all(|w| rank[w[0].index()] < rank[w[1].index()]);
                let mut got = input.clone();
                let sorted = super::sort_by_few_keys(&keys, Some(&rank), &mut got, &mut Vec::new(), &mut Vec::new());
                prop_assert_eq!(sorted, in_order && distinct <= super::FEW_KEYS);
                let mut want = input.clone();
                want.sort_by_key(|h| (keys[h.index()], rank[h.index()]));
                prop_assert_eq!(got, if sorted { want } else { input });
            }
        }
    }

    #[test]
    fn heap_drain_sorts_best_first() {
        let mut v: Vec<HostId> = [5, 3, 9, 1, 7, 2].iter().map(|&i| HostId(i)).collect();
        goheap::init_and_drain(&mut v, &|a: HostId, b: HostId| a.0 < b.0);
        assert_eq!(v.iter().map(|h| h.0).collect::<Vec<_>>(), vec![1, 2, 3, 5, 7, 9]);
    }

    #[test]
    fn a_failing_candidate_is_replaced_by_the_last_one() {
        let ids = |v: &[u32]| v.iter().map(|&i| HostId(i)).collect::<Vec<_>>();
        let mut v = ids(&[0, 1, 2, 3, 4]);
        let mut seen = Vec::new();
        goheap::drop_failing(&mut v, |h| {
            seen.push(h.0);
            h.0 % 2 == 0
        });
        // 1 fails: 4 takes its slot and is checked there; 3 fails and is last: dropped.
        assert_eq!(v, ids(&[0, 4, 2]));
        assert_eq!(seen, [0, 1, 4, 2, 3], "every candidate is checked once, in Go's order");
    }

    #[test]
    fn heap_drain_swaps_two_tied_nodes() {
        let mut v = vec![HostId(0), HostId(1)];
        goheap::init_and_drain(&mut v, &|_: HostId, _: HostId| false);
        assert_eq!(v, vec![HostId(1), HostId(0)], "what SwarmKit's re-sort does to a tie");
    }

    #[test]
    fn bounded_push_keeps_the_worst_at_the_root() {
        let less = |a: HostId, b: HostId| a.0 < b.0;
        let mut v = Vec::new();
        for i in [4, 8, 1, 6] {
            goheap::push(&mut v, HostId(i), &less);
        }
        assert_eq!(v[0], HostId(8));
        v[0] = HostId(2);
        goheap::fix_root(&mut v, &less);
        assert_eq!(v[0], HostId(6));
    }
}
