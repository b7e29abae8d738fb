//! The engine's split rules on counts alone: what each branch is asked for and places in a
//! batch of `n` tasks, given what every leaf can take. Used by
//! [`capacity::tasks`](crate::capacity::tasks) to try batch sizes without running the engine.
//!
//! A leaf's placements in a batch are `min(asked, room left in the leaf, tasks left in the
//! batch)` when every filter judges a node by that node alone and a node that fails stays
//! failing (the built-in pipeline: Ready, Resource, Constraint, Platform, HostPort,
//! MaxReplicas): nodes then take tasks independently of each other and a leaf stops only when
//! its nodes are full. The branches above follow the mode's split rule, which reads only
//! counts. [`Shadow::new`] refuses the cases where that does not hold.

use super::outcome::{BranchReport, SpreadOutcome};
use super::request::{SpreadMode, SpreadRequest};
use super::scheduler::SpreadScheduler;
use super::tree::{allocate, levels, Kid, LevelKind};
use super::SpreadError;
use crate::snapshot::Cluster;

/// One branch, parents before children (the report's pre-order).
#[derive(Debug, Clone)]
struct Node {
    value: String,
    depth: usize,
    parent: usize,
    children: Vec<usize>,
    existing: u64,
    eligible: u32,
    share: f64,
    /// Leaf: the tasks its nodes take in all.
    capacity: u64,
}

/// A batch's counts per branch.
#[derive(Debug, Clone, Default)]
struct State {
    asked: Vec<u64>,
    placed: Vec<u64>,
    live: Vec<u64>,
    full: Vec<bool>,
    left: u64,
}

/// The engine's split of a batch over the tree, on counts; see the module docs.
#[derive(Debug, Clone)]
pub(crate) struct Shadow {
    nodes: Vec<Node>,
    kinds: Vec<LevelKind>,
    compatible: bool,
    state: State,
}

impl Shadow {
    /// The shadow of the tree in `full`, the outcome of a batch that placed everything the
    /// service takes (fewer tasks than it asked for), so that every leaf's placements are its
    /// capacity. `None` when counts alone do not decide a batch: a user filter (it may couple
    /// nodes or pass a node again), a hard or soft spread constraint (it couples branches), or
    /// a pack or weighted level in a compatible mode (their ties read the eligible nodes, which
    /// that mode counts only up to the batch size).
    ///
    /// # Errors
    ///
    /// As [`SpreadScheduler::schedule`]: a request the engine refuses.
    pub(crate) fn new(
        scheduler: &SpreadScheduler,
        cluster: &Cluster,
        request: &SpreadRequest,
        full: &SpreadOutcome,
    ) -> Result<Option<Shadow>, SpreadError> {
        let compatible = request.mode != SpreadMode::Balanced;
        let kinds: Vec<LevelKind> = levels(cluster, request)?.0.into_iter().map(|l| l.kind).collect();
        if scheduler.has_filters()
            || !request.hard_spread.is_empty()
            || full.is_complete()
            || (compatible && kinds.iter().any(|k| !matches!(k, LevelKind::Spread)))
        {
            return Ok(None);
        }
        let mut nodes = Vec::new();
        flatten(&full.tree, 0, 0, &mut nodes);
        Ok(Some(Shadow { nodes, kinds, compatible, state: State::default() }))
    }

    /// Runs a batch of `n` tasks; returns the tasks placed.
    pub(crate) fn run(&mut self, n: u32) -> u64 {
        let len = self.nodes.len();
        let s = &mut self.state;
        for v in [&mut s.asked, &mut s.placed] {
            v.clear();
            v.resize(len, 0);
        }
        s.live.clear();
        s.live.extend(self.nodes.iter().map(|b| b.existing));
        s.full.clear();
        s.full.resize(len, false);
        s.left = u64::from(n);
        s.asked[0] = u64::from(n);
        if self.compatible {
            if n > 0 {
                self.split_compat(0, i64::from(n));
            }
        } else {
            while self.state.left > 0 {
                if self.split_balanced(0, self.state.left) == 0 {
                    break;
                }
            }
        }
        u64::from(n) - self.state.left
    }

    /// Whether the last batch placed every task with no branch running out (a branch with an
    /// eligible node asked for more than it placed).
    pub(crate) fn holds(&self) -> bool {
        self.state.left == 0 && self.run_out().is_empty()
    }

    /// The paths of the branches that ran out in the last batch, in pre-order.
    pub(crate) fn run_out(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        let mut path = Vec::new();
        self.collect_run_out(0, &mut path, &mut out);
        out
    }

    fn collect_run_out(&self, b: usize, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        for &c in &self.nodes[b].children {
            path.push(self.nodes[c].value.clone());
            if self.nodes[c].eligible > 0 && self.state.asked[c] > self.state.placed[c] {
                out.push(path.clone());
            }
            self.collect_run_out(c, path, out);
            path.pop();
        }
    }

    /// Places up to `n` tasks in leaf `b`: the leaf's nodes take tasks until it is asked no
    /// more, the batch is done or they are full.
    fn leaf(&mut self, b: usize, n: u64) -> u64 {
        let room = self.nodes[b].capacity - self.state.placed[b];
        let placed = n.min(room).min(self.state.left);
        // Balanced: the leaf's heap empties when its nodes fill up before it is done.
        if room < n.min(self.state.left) {
            self.state.full[b] = true;
        }
        self.record(b, placed);
        placed
    }

    /// Adds `k` placed tasks to `b` and the branches above.
    fn record(&mut self, b: usize, k: u64) {
        self.state.left -= k;
        let mut i = b;
        loop {
            self.state.placed[i] += k;
            self.state.live[i] += k;
            if i == 0 {
                break;
            }
            i = self.nodes[i].parent;
        }
    }

    /// `split_compat`: SwarmKit's top-up split.
    fn split_compat(&mut self, b: usize, n: i64) -> i64 {
        if self.nodes[b].children.is_empty() {
            return self.leaf(b, n.max(0) as u64) as i64;
        }
        let children = self.nodes[b].children.clone();
        let k = children.len() as i64;
        let mut full = vec![false; children.len()];
        let mut nfull = 0i64;
        let mut placed = 0i64;
        let mut pool = self.nodes[b].existing as i64;
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
                let e = self.nodes[child].existing as i64;
                if e < target || (e == target && extra > 0) {
                    converging = true;
                    let ask = target - e + i64::from(extra > 0);
                    self.state.asked[child] += ask as u64;
                    let got = self.split_compat(child, ask);
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

    /// `split_balanced`: the level's allocation over the live counts, short children set aside.
    fn split_balanced(&mut self, b: usize, n: u64) -> u64 {
        if self.state.left == 0 {
            return 0;
        }
        if self.nodes[b].children.is_empty() {
            return self.leaf(b, n);
        }
        let children = self.nodes[b].children.clone();
        let kind = self.kinds[self.nodes[b].depth].clone();
        let mut blocked = vec![false; children.len()];
        let mut placed = 0u64;
        let (mut open, mut kids, mut alloc) = (Vec::new(), Vec::new(), Vec::new());
        while placed < n && self.state.left > 0 {
            open.clear();
            kids.clear();
            let mut others = 0;
            for (ci, &c) in children.iter().enumerate() {
                if self.state.full[c] || blocked[ci] {
                    others += self.state.live[c];
                } else {
                    open.push(ci);
                    let node = &self.nodes[c];
                    kids.push(Kid { count: self.state.live[c], eligible: node.eligible, share: node.share });
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
                self.state.asked[child] += a;
                let got = self.split_balanced(child, a);
                placed += got;
                if got < a {
                    blocked[ci] = true;
                }
            }
        }
        if children.iter().all(|&c| self.state.full[c]) {
            self.state.full[b] = true;
        }
        placed
    }
}

/// Appends `b` and its subtree to `out` in pre-order.
fn flatten(b: &BranchReport, depth: usize, parent: usize, out: &mut Vec<Node>) -> usize {
    let i = out.len();
    out.push(Node {
        value: b.value.clone(),
        depth,
        parent,
        children: Vec::new(),
        existing: b.existing,
        eligible: b.eligible_nodes,
        share: b.share.unwrap_or(0.0),
        capacity: u64::from(b.placed),
    });
    for c in &b.children {
        let ci = flatten(c, depth + 1, i, out);
        out[i].children.push(ci);
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::HostSpec;
    use crate::spread::Preference;

    #[test]
    fn a_batch_splits_as_the_engine_does() {
        let mut b = Cluster::builder();
        for (name, az, cpus) in [("a1", "a", 4.0), ("a2", "a", 1.0), ("b1", "b", 2.0), ("c1", "c", 0.0)] {
            b = b.host(HostSpec::new(name).label("az", az).vcpus(cpus));
        }
        let cluster = b.build().unwrap();
        let scheduler = SpreadScheduler::new();
        for mode in [SpreadMode::SwarmCompatible, SpreadMode::Balanced] {
            let request =
                SpreadRequest::new("web", 100).preference(Preference::spread("az")).resource("vcpus", 1.0).mode(mode);
            let full = scheduler.schedule(&cluster, &request).unwrap();
            let mut shadow = Shadow::new(&scheduler, &cluster, &request, &full).unwrap().unwrap();
            for n in 0..9 {
                let mut r = request.clone();
                r.tasks = n;
                let out = scheduler.schedule(&cluster, &r).unwrap();
                assert_eq!(shadow.run(n), out.selections.len() as u64, "{mode:?} {n}");
                let tree = &out.tree;
                for (i, c) in tree.children.iter().enumerate() {
                    let s = shadow.nodes[0].children[i];
                    assert_eq!((shadow.state.asked[s], shadow.state.placed[s]), (c.asked.into(), c.placed.into()));
                }
            }
        }
    }

    #[test]
    fn a_complete_batch_or_a_user_filter_has_no_shadow() {
        let cluster = Cluster::builder().host(HostSpec::new("a").vcpus(1.0)).build().unwrap();
        let request = SpreadRequest::new("web", 1).resource("vcpus", 1.0);
        let s = SpreadScheduler::new();
        let full = s.schedule(&cluster, &request).unwrap();
        assert!(Shadow::new(&s, &cluster, &request, &full).unwrap().is_none(), "every task placed: capped");
        let mut request = request.clone();
        request.tasks = 5;
        let full = s.schedule(&cluster, &request).unwrap();
        assert!(Shadow::new(&s, &cluster, &request, &full).unwrap().is_some());
        let filtered = SpreadScheduler::builder().filter(crate::filter::filter_fn("any", |_, _| true)).build().unwrap();
        assert!(Shadow::new(&filtered, &cluster, &request, &full).unwrap().is_none());
    }
}
