//! The balanced mode: least-loaded branch first at every level, best node first in a leaf.

use super::run::Run;
use super::tree::{allocate, Kid};
use crate::id::HostId;
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// A candidate's place in its leaf: SwarmKit's node order (the packed key of
/// [`NodeState::key`](super::run::NodeState::key), one comparison), then the weighers' score
/// (higher first), then the name order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct NodeKey {
    key: u128,
    score: f64,
    rank: u32,
    host: HostId,
}

impl Eq for NodeKey {}

impl Ord for NodeKey {
    fn cmp(&self, o: &Self) -> Ordering {
        self.key
            .cmp(&o.key)
            .then_with(|| o.score.total_cmp(&self.score))
            .then_with(|| (self.rank, self.host).cmp(&(o.rank, o.host)))
    }
}

impl PartialOrd for NodeKey {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// Per-leaf candidate heaps, indexed by branch.
pub(crate) type Heaps = Vec<BinaryHeap<Reverse<NodeKey>>>;

impl Run<'_> {
    fn key(&self, host: HostId) -> NodeKey {
        let n = &*self.nodes;
        let i = host.index();
        NodeKey { key: n.key[i], score: n.score[i], rank: n.rank[i], host }
    }

    /// Places the whole batch: splits what is left from the root until everything is placed or
    /// nothing more fits; `ScheduleAnyway` constraints are dropped when they are all that stops
    /// the batch.
    pub(crate) fn run_balanced(&mut self, heaps: &mut Heaps) {
        while self.left > 0 {
            let got = self.split_balanced(heaps, 0, u64::from(self.left));
            if got == 0 {
                if self.soft_on {
                    self.soft_on = false;
                    continue;
                }
                break;
            }
        }
    }

    fn split_balanced(&mut self, heaps: &mut Heaps, branch: u32, n: u64) -> u64 {
        if self.left == 0 {
            self.tree.branches[branch as usize].starved = true;
            return 0;
        }
        if self.tree.branches[branch as usize].children.is_empty() {
            return self.leaf_balanced(heaps, branch, n);
        }
        let children = self.tree.branches[branch as usize].children.clone();
        let kind = self.tree.child_kind(branch).clone();
        let mut blocked = vec![false; children.len()];
        let mut placed = 0u64;
        let (mut open, mut kids, mut alloc) = (Vec::new(), Vec::new(), Vec::new());
        while placed < n && self.left > 0 {
            open.clear();
            kids.clear();
            let mut others = 0;
            for (ci, &c) in children.iter().enumerate() {
                let b = &self.tree.branches[c as usize];
                if b.full || blocked[ci] {
                    others += b.live;
                } else {
                    open.push(ci);
                    kids.push(Kid { count: b.live, eligible: b.eligible, share: b.share });
                }
            }
            if open.is_empty() {
                break;
            }
            alloc.clear();
            alloc.resize(open.len(), 0);
            allocate(&kind, &kids, others, n - placed, &mut alloc);
            for (oi, &ci) in open.iter().enumerate() {
                let a = alloc[oi];
                if a == 0 {
                    continue;
                }
                let child = children[ci];
                self.tree.branches[child as usize].asked += a as u32;
                let got = self.split_balanced(heaps, child, a);
                placed += got;
                if got < a {
                    blocked[ci] = true;
                }
            }
        }
        if children.iter().all(|&c| self.tree.branches[c as usize].full) {
            self.tree.branches[branch as usize].full = true;
        }
        placed
    }

    fn leaf_balanced(&mut self, heaps: &mut Heaps, leaf: u32, n: u64) -> u64 {
        let li = leaf as usize;
        if !self.tree.branches[li].visited {
            self.tree.branches[li].visited = true;
            let keys: Vec<Reverse<NodeKey>> =
                self.tree.branches[li].cands.iter().map(|&h| Reverse(self.key(h))).collect();
            heaps[li] = BinaryHeap::from(keys);
        }
        let mut heap = std::mem::take(&mut heaps[li]);
        let mut parked = Vec::new();
        let mut placed = 0;
        while placed < n && self.left > 0 {
            let Some(Reverse(k)) = heap.pop() else { break };
            // Filters are monotone within a batch: a node failing now never passes again.
            if self.fails(k.host, false).is_some() {
                continue;
            }
            // A skew limit can open again once other domains catch up: keep the node aside.
            if !self.gate(k.host) {
                parked.push(Reverse(k));
                continue;
            }
            self.place(k.host, leaf);
            placed += 1;
            heap.push(Reverse(self.key(k.host)));
        }
        heap.extend(parked);
        if heap.is_empty() {
            self.tree.branches[li].full = true;
        }
        heaps[li] = heap;
        placed
    }

    /// Counts, over the final state, the first filter each node fails (the balanced mode's
    /// failure message).
    pub(crate) fn final_counts(&self) -> Vec<u32> {
        let mut counts = vec![0; self.entries.len()];
        for id in self.cluster.host_ids() {
            if let Some(i) = self.fails(id, true) {
                counts[i] += 1;
            }
        }
        counts
    }
}
