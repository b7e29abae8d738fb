//! The balanced mode: least-loaded branch first at every level, best node first in a leaf.

use super::run::{narrow_key, Run};
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

/// A leaf heap's entry: ordered as its node is in the leaf, and naming the node.
trait HeapKey: Ord + Copy {
    /// The node, from the leaf's nodes in name order.
    fn host(self, leaf_hosts: &[HostId]) -> HostId;
}

impl HeapKey for NodeKey {
    fn host(self, _: &[HostId]) -> HostId {
        self.host
    }
}

/// The narrow form: a [`narrow_key`] with the node's rank as its tie-break. Without scores the
/// rank (unique in the leaf) decides every tie, as in [`NodeKey`].
impl HeapKey for u64 {
    fn host(self, leaf_hosts: &[HostId]) -> HostId {
        leaf_hosts[self as u32 as usize]
    }
}

/// Per-leaf candidate heaps, indexed by branch: of [`NodeKey`]s, or of narrow keys (one u64)
/// when no node can need a wide one in the call ([`Run::narrow_heaps`]).
#[derive(Debug, Default)]
pub(crate) struct Heaps {
    wide: Vec<BinaryHeap<Reverse<NodeKey>>>,
    narrow: Vec<BinaryHeap<Reverse<u64>>>,
    narrow_on: bool,
}

impl Heaps {
    /// Empty heaps for `branches` branches, narrow or wide.
    pub(crate) fn reset(&mut self, branches: usize, narrow: bool) {
        self.narrow_on = narrow;
        let (on, off) = (&mut self.narrow, &mut self.wide);
        on.clear();
        off.clear();
        if narrow {
            on.resize_with(branches, Default::default);
        } else {
            off.resize_with(branches, Default::default);
        }
    }
}

impl Run<'_> {
    fn key(&self, host: HostId) -> NodeKey {
        let n = &*self.nodes;
        let i = host.index();
        NodeKey { key: n.key[i], score: n.score[i], rank: n.rank[i], host }
    }

    /// The narrow key of `host` ([`HeapKey`] for u64); a node that would need a wide one is
    /// ordered last (never, when [`narrow_heaps`](Run::narrow_heaps) held).
    fn narrow(&self, host: HostId) -> u64 {
        let i = host.index();
        narrow_key(self.nodes.key[i], self.nodes.rank[i]).unwrap_or(u64::MAX)
    }

    /// Whether every node's key stays narrow through the call: no scores, no penalty, and
    /// counts below 2^16 even with the whole batch on one node. Computes in O(nodes with tasks
    /// or a penalty).
    pub(crate) fn narrow_heaps(&self) -> bool {
        let n = &*self.nodes;
        // A batch of 2^16 - 1 tasks or more never fits: no room is left for counts.
        let Some(room) = u64::from(u16::MAX).checked_sub(u64::from(self.left)).filter(|&room| room > 0) else {
            return false;
        };
        !self.scored
            && [&n.with_tasks, &n.changed].into_iter().all(|hosts| {
                hosts.iter().all(|&i| {
                    let i = i as usize;
                    n.penalty[i] == 0 && u64::from(n.svc[i]) <= room && u64::from(n.total[i]) <= room
                })
            })
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
        if heaps.narrow_on {
            let mut heap = std::mem::take(&mut heaps.narrow[li]);
            let placed = self.leaf_heap(&mut heap, leaf, n, Run::narrow);
            heaps.narrow[li] = heap;
            placed
        } else {
            let mut heap = std::mem::take(&mut heaps.wide[li]);
            let placed = self.leaf_heap(&mut heap, leaf, n, Run::key);
            heaps.wide[li] = heap;
            placed
        }
    }

    /// Places up to `n` tasks in `leaf`, best node first, from the leaf's heap (filled on the
    /// first visit with `key` of each candidate).
    fn leaf_heap<K: HeapKey>(
        &mut self,
        heap: &mut BinaryHeap<Reverse<K>>,
        leaf: u32,
        n: u64,
        key: impl Fn(&Self, HostId) -> K,
    ) -> u64 {
        let li = leaf as usize;
        if !self.tree.branches[li].visited {
            self.tree.branches[li].visited = true;
            let keys: Vec<Reverse<K>> = self.tree.branches[li].cands.iter().map(|&h| Reverse(key(self, h))).collect();
            *heap = BinaryHeap::from(keys);
        }
        let mut parked = Vec::new();
        let mut placed = 0;
        while placed < n && self.left > 0 {
            let Some(Reverse(k)) = heap.pop() else { break };
            let host = k.host(&self.tree.branches[li].hosts);
            // Filters are monotone within a batch: a node failing now never passes again.
            if self.fails(host, false).is_some() {
                continue;
            }
            // A skew limit can open again once other domains catch up: keep the node aside.
            if !self.gate(host) {
                parked.push(Reverse(k));
                continue;
            }
            self.place(host, leaf);
            placed += 1;
            heap.push(Reverse(key(self, host)));
        }
        heap.extend(parked);
        if heap.is_empty() {
            self.tree.branches[li].full = true;
        }
        placed
    }
}

#[cfg(test)]
mod tests {
    use super::{HeapKey, NodeKey};
    use crate::id::HostId;
    use crate::spread::run::{narrow_key, pack_key};
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    proptest! {
        /// Without scores or penalties, a leaf's nodes leave the heap of narrow keys (rank as
        /// tie-break) in the order the heap of full node keys gives, each key naming its node.
        #[test]
        fn narrow_heap_keys_order_and_name_as_node_keys(counts in proptest::collection::vec((0u32..3, 0u32..3), 0..40)) {
            let hosts: Vec<HostId> = (0..counts.len() as u32).map(|i| HostId(i * 37 % 101)).collect();
            let wide: Vec<Reverse<NodeKey>> = counts
                .iter()
                .enumerate()
                .map(|(r, &(s, t))| Reverse(NodeKey { key: pack_key(0, s, t), score: 0.0, rank: r as u32, host: hosts[r] }))
                .collect();
            let narrow: Vec<Reverse<u64>> =
                counts.iter().enumerate().map(|(r, &(s, t))| Reverse(narrow_key(pack_key(0, s, t), r as u32).unwrap())).collect();
            let (mut wide, mut narrow) = (BinaryHeap::from(wide), BinaryHeap::from(narrow));
            while let Some(Reverse(w)) = wide.pop() {
                let n = narrow.pop().map(|Reverse(k)| k.host(&hosts));
                prop_assert_eq!(Some(w.host(&hosts)), n);
            }
            prop_assert!(narrow.is_empty());
        }
    }
}
