//! The decision tree: one level per effective preference, branches per value, leaves holding
//! nodes; and the per-level choice of which branch takes the next task.

use super::node;
use super::outcome::SpreadWarning;
use super::request::{Descriptor, Preference, SpreadMode, Targets};
use crate::id::{HostId, IdHashing, InputMap, Symbol};
use crate::snapshot::{Cluster, HotChunk, Lineage, CHUNK};
use std::collections::HashMap;
use std::sync::Arc;

/// How a level shares tasks among its branches.
#[derive(Debug, Clone)]
pub(crate) enum LevelKind {
    Spread,
    Pack,
    Weighted(Targets),
}

/// Where a level's value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    NodeLabel(Option<Symbol>),
    EngineLabel(Option<Symbol>),
    NodeId,
    Hostname,
}

/// One effective level of the tree.
#[derive(Debug, Clone)]
pub(crate) struct Level {
    pub(crate) kind: LevelKind,
    source: Source,
    pub(crate) descriptor: String,
}

/// What [`levels`] finds: the levels, the descriptors skipped, the warnings.
pub(crate) type LevelsFound = (Vec<Level>, Vec<String>, Vec<SpreadWarning>);

/// The levels a request's preferences make, the descriptors skipped, and the warnings.
///
/// SwarmKit reads labels only and skips any other `spread` descriptor without a word (Q9);
/// both modes do the same, so one request means the same tree in both, unless the request is
/// [strict](super::SpreadRequest::strict_descriptors) (an error instead) or, in the balanced
/// mode, opts into [node-level spread](super::SpreadRequest::node_level_spread).
///
/// A label level whose key no node carries is refused in a
/// [strict](super::SpreadRequest::strict_descriptors) request and kept with a
/// [`SpreadWarning`] otherwise. Finding a key costs a
/// binary search per chunk until a chunk holds it: O(log labels) for a key the first chunk
/// holds, O(chunks × log labels) for one no node carries.
pub(crate) fn levels(cluster: &Cluster, request: &super::SpreadRequest) -> Result<LevelsFound, super::SpreadError> {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    let mut warnings = Vec::new();
    let node_levels = request.node_level_spread && request.mode == SpreadMode::Balanced;
    for p in &request.preferences {
        p.validate()?;
        let d = p.descriptor();
        let is_spread = matches!(p, Preference::Spread(_));
        let source = match d {
            Descriptor::NodeLabel(k) => Source::NodeLabel(cluster.symbols().get(k)),
            Descriptor::EngineLabel(k) => {
                Source::EngineLabel(cluster.symbols().get(&format!("{}{k}", node::ENGINE_LABEL_PREFIX)))
            }
            Descriptor::NodeId | Descriptor::Hostname | Descriptor::Unsupported(_)
                if is_spread && !(node_levels && matches!(d, Descriptor::NodeId | Descriptor::Hostname)) =>
            {
                if request.strict_descriptors {
                    return Err(super::SpreadError::UnsupportedDescriptor { descriptor: d.to_string() });
                }
                skipped.push(d.to_string());
                continue;
            }
            Descriptor::NodeId => Source::NodeId,
            Descriptor::Hostname => Source::Hostname,
            Descriptor::Unsupported(t) => {
                return Err(super::SpreadError::UnsupportedDescriptor { descriptor: t.clone() });
            }
        };
        if let Source::NodeLabel(key) | Source::EngineLabel(key) = source {
            if !carried(cluster, key) {
                let descriptor = d.to_string();
                if request.strict_descriptors {
                    return Err(super::SpreadError::LabelNotCarried { descriptor });
                }
                warnings.push(SpreadWarning::LabelNotCarried { descriptor });
            }
        }
        let kind = match p {
            Preference::Spread(_) => LevelKind::Spread,
            Preference::Pack(_) => LevelKind::Pack,
            Preference::Weighted(w) => LevelKind::Weighted(w.targets.clone()),
        };
        out.push(Level { kind, source, descriptor: d.to_string() });
    }
    Ok((out, skipped, warnings))
}

/// Whether some host of `cluster` carries label `key` (`None`: a key never interned, which no
/// host carries), from the chunks' label indexes.
fn carried(cluster: &Cluster, key: Option<Symbol>) -> bool {
    key.is_some_and(|k| (0..cluster.chunk_count()).any(|c| cluster.hot_chunk(c).labels.values(k).any(|(_, m)| m != 0)))
}

/// A branch of the tree (the root, an inner branch or a leaf).
#[derive(Debug, Clone, Default)]
pub(crate) struct Branch {
    pub(crate) value: Box<str>,
    pub(crate) depth: usize,
    pub(crate) parent: u32,
    pub(crate) children: Vec<u32>,
    /// Tasks of the service beneath, counted when the tree was built (frozen).
    pub(crate) existing: u64,
    /// `existing` plus the batch's tasks placed beneath so far.
    pub(crate) live: u64,
    /// Nodes beneath.
    pub(crate) nodes: u32,
    /// Nodes beneath that passed the filters when the tree was built.
    pub(crate) eligible: u32,
    /// Share of the parent's tasks (weighted levels; 0 elsewhere).
    pub(crate) share: f64,
    pub(crate) asked: u32,
    pub(crate) placed: u32,
    /// Asked while no task was left.
    pub(crate) starved: bool,
    /// Balanced mode: no candidate is left beneath.
    pub(crate) full: bool,
    /// Leaf: every node, in canonical (name) order.
    pub(crate) hosts: Vec<HostId>,
    /// Leaf: the candidates (compatible mode: SwarmKit's node array).
    pub(crate) cands: Vec<HostId>,
    pub(crate) visited: bool,
    /// The values from the root down to this branch, once asked for ([`Tree::path`]): part of
    /// the shape, kept with it.
    path: Option<Arc<[String]>>,
    /// The key of the value at its level (a label value's symbol, [`MISSING`] for `""`, a host
    /// id or a hostname's number): with the parent, its entry in [`Tree::index`].
    key: u32,
    /// The least host id beneath (`u32::MAX` for none). A build creates branches in the order
    /// of `(first, depth)`, which an update restores ([`Tree::update`]).
    first: u32,
}

const MISSING: u32 = u32::MAX;

/// The tree: `branches[0]` is the root; children sorted by ascending byte order of value.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tree {
    pub(crate) branches: Vec<Branch>,
    pub(crate) levels: Vec<Level>,
    /// What the shape (branches, their values and nodes, each leaf's hosts in name order) was
    /// built from, so that a later call on the very same snapshot with the same level sources
    /// keeps it and refills only the counts ([`Tree::reuse_or_build`]).
    stamp: Option<Stamp>,
    /// The service whose snapshot counts the `existing` counts are, every host counted and none
    /// eligible (the compatible mode's fill): a later call with the same shape and the same
    /// counts keeps them ([`Tree::reuse_or_build`]).
    existing_of: Option<String>,
    /// `(parent, key) -> child` for every branch but the root.
    index: HashMap<(u32, u32), u32, IdHashing>,
    /// Each host's leaf, by host id ([`MISSING`] for an id of no host).
    leaf_of: Vec<u32>,
    /// While `existing_of` is set: each host's count in its leaf's `existing`, by host id.
    counted: Vec<u32>,
}

/// How [`Tree::reuse_or_build`] came by the tree's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refresh {
    /// Kept: built from this very snapshot.
    Kept,
    /// Updated from an earlier snapshot of the same lineage for the chunks that changed.
    Updated,
    /// Built from every host.
    Built,
}

/// The snapshot (a held clone, which keeps its chunks shared: any event then copies the chunks
/// it changes, so [`Cluster::is_same_snapshot`] tells a changed snapshot from this one) and the
/// level sources a tree's shape was built from.
#[derive(Debug, Clone)]
struct Stamp {
    cluster: Cluster,
    sources: Vec<Source>,
}

impl Tree {
    /// Builds the tree from every host. `names[h]` is host `h`'s name (the leaves' node order),
    /// `svc[h]` its count of the service's tasks;
    /// `counted(h)` says whether they count in branch loads; `eligible(h)` whether the host
    /// passed the filters (balanced mode; the compatible mode fills it in later).
    /// Computes in O(hosts × levels) plus sorting each leaf's hosts by name.
    #[cfg(test)]
    pub(crate) fn build(
        cluster: &Cluster,
        levels: Vec<Level>,
        names: &[&str],
        svc: &[u32],
        counted: impl FnMut(HostId) -> bool,
        eligible: impl FnMut(HostId) -> bool,
    ) -> Tree {
        let mut tree = Tree::shape(cluster, levels, names);
        tree.fill(svc, counted, eligible);
        tree
    }

    /// `self` (a tree kept from an earlier call) made into the tree [`build`](Tree::build)
    /// gives. When its shape was built from this very snapshot with the same level sources,
    /// only the per-call parts are reset and the counts refilled, in O(hosts) without sorting
    /// or reading a host record. When it was built from an earlier snapshot of the same lineage
    /// with the same label levels, and few chunks changed since ([`Lineage`]),
    /// the shape is updated for the hosts of those chunks ([`Tree::update`]). Otherwise the tree
    /// is built anew (`names` gives the names by host id, read only then). `all_of` names the
    /// service when `svc` are its counts in this snapshot, every host counted and none eligible
    /// (the compatible mode): a kept or updated tree filled so for the same service keeps its
    /// counts, in O(branches) (plus the changed chunks' hosts when updated).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn reuse_or_build<'c>(
        &mut self,
        cluster: &'c Cluster,
        levels: Vec<Level>,
        names: impl FnOnce() -> Vec<&'c str>,
        svc: &[u32],
        all_of: Option<&str>,
        counted: impl FnMut(HostId) -> bool,
        eligible: impl FnMut(HostId) -> bool,
    ) -> Refresh {
        let keep = all_of.is_some() && self.existing_of.as_deref() == all_of;
        let mut changed = Vec::new();
        let lineage = match &self.stamp {
            Some(s)
                if s.sources.len() == levels.len() && s.sources.iter().zip(&levels).all(|(a, l)| *a == l.source) =>
            {
                // Only a shape whose every level reads a label is updated chunk by chunk.
                let labels = s.sources.iter().all(|src| matches!(src, Source::NodeLabel(_) | Source::EngineLabel(_)));
                Lineage::of(&s.cluster, cluster, labels, &mut changed)
            }
            _ => Lineage::Rebuild,
        };
        let refresh = match lineage {
            Lineage::Same => Refresh::Kept,
            Lineage::Refresh(chunks) if self.update(cluster, chunks, keep.then_some(svc)) => Refresh::Updated,
            Lineage::Refresh(_) | Lineage::Rebuild => Refresh::Built,
        };
        if refresh == Refresh::Built {
            *self = Tree::shape(cluster, levels, &names());
        } else {
            self.levels = levels;
            for b in &mut self.branches {
                // Every field named: a new per-call field cannot be left out of the reset.
                let Branch {
                    value: _,
                    depth: _,
                    parent: _,
                    children: _,
                    nodes: _,
                    hosts: _,
                    path: _,
                    key: _,
                    first: _,
                    existing,
                    live,
                    eligible,
                    share,
                    asked,
                    placed,
                    starved,
                    full,
                    cands,
                    visited,
                } = b;
                if !keep {
                    *existing = 0;
                }
                (*live, *eligible, *share, *asked, *placed) = (*existing, 0, 0.0, 0, 0);
                (*starved, *full, *visited) = (false, false, false);
                cands.clear();
            }
            if keep {
                self.compute_shares();
                return refresh;
            }
        }
        self.fill(svc, counted, eligible);
        self.existing_of = all_of.map(str::to_owned);
        if all_of.is_some() {
            self.counted.clear();
            self.counted.extend_from_slice(svc);
        }
        refresh
    }

    /// The shape: branches with their values, nodes and children in value order, each leaf's
    /// hosts in name order; counts, shares and the per-call parts left empty.
    fn shape(cluster: &Cluster, levels: Vec<Level>, names: &[&str]) -> Tree {
        let mut branches = vec![Branch { first: u32::MAX, ..Branch::default() }];
        let mut index: HashMap<(u32, u32), u32, IdHashing> = HashMap::default();
        let mut hostnames: InputMap<&str, u32> = InputMap::default();
        let empty = cluster.symbols().get("");
        // Host records are read only for levels that need them (engine labels, node id,
        // hostname): with label values from the chunks' inverted label indexes (a chunk's
        // lanes at a time) and names given, a plain label tree never touches them.
        let mut lane_values: Vec<[u32; CHUNK]> = vec![[MISSING; CHUNK]; levels.len()];
        // Every host's leaf, by id: each leaf's list is sized before it is filled.
        let mut leaf_of: Vec<u32> = vec![MISSING; cluster.id_bound()];
        // The last `(parent, key) -> child` step taken at each depth: hosts listed by rack or
        // zone repeat it, and skip the hash lookup.
        let mut last: Vec<(u32, u32, u32)> = vec![(u32::MAX, u32::MAX, 0); levels.len()];
        for c in 0..cluster.chunk_count() {
            let hot = cluster.hot_chunk(c);
            label_values(&levels, hot, empty, &mut lane_values);
            let mut live = hot.live;
            while live != 0 {
                let lane = live.trailing_zeros() as usize;
                live &= live - 1;
                let id = HostId((c * CHUNK + lane) as u32);
                branches[0].first = branches[0].first.min(id.0);
                let mut cur = 0u32;
                for (depth, level) in levels.iter().enumerate() {
                    // Counts are added at the leaf only, then summed upwards below.
                    let (key, text): (u32, &str) = match level.source {
                        // The text is resolved when a branch is created.
                        Source::NodeLabel(_) | Source::EngineLabel(_) => {
                            (label_key(cluster, level.source, lane_values[depth][lane], id), "")
                        }
                        Source::NodeId => (id.0, names[id.index()]),
                        Source::Hostname => {
                            let name = cluster.host(id).map_or("", node::hostname);
                            let next = hostnames.len() as u32;
                            (*hostnames.entry(name).or_insert(next), name)
                        }
                    };
                    let (lp, lk, lc) = last[depth];
                    if lp == cur && lk == key {
                        cur = lc;
                        continue;
                    }
                    // Hosts come in id order: the first to reach a branch has its least id.
                    let child = child(&mut branches, &mut index, cur, key, depth, id.0, false, || {
                        branch_value(cluster, level.source, key, text)
                    });
                    last[depth] = (cur, key, child);
                    cur = child;
                }
                branches[cur as usize].nodes += 1;
                leaf_of[id.index()] = cur;
            }
        }
        // Only leaves hold hosts, and only they have counted nodes so far.
        for b in &mut branches {
            b.hosts.reserve_exact(b.nodes as usize);
        }
        for (id, &leaf) in leaf_of.iter().enumerate() {
            if leaf != MISSING {
                branches[leaf as usize].hosts.push(HostId(id as u32));
            }
        }
        sum_up(&mut branches, |b| &mut b.nodes);
        for i in 0..branches.len() {
            let mut children = std::mem::take(&mut branches[i].children);
            children.sort_by(|&a, &b| branches[a as usize].value.as_bytes().cmp(branches[b as usize].value.as_bytes()));
            branches[i].children = children;
            // Usually already in order (names follow ids), which the stable sort checks in O(n).
            branches[i].hosts.sort_by(|&a, &b| names[a.index()].cmp(names[b.index()]));
        }
        let sources = levels.iter().map(|l| l.source).collect();
        Tree {
            branches,
            levels,
            stamp: Some(Stamp { cluster: cluster.clone(), sources }),
            existing_of: None,
            index,
            leaf_of,
            counted: Vec::new(),
        }
    }

    /// Updates a shape built from the stamp's snapshot, whose every level reads a label, to
    /// `cluster`, a later snapshot of the same lineage in which `chunks` changed, few enough
    /// to refresh ([`Lineage::Refresh`]); returns whether it did (`false`, with nothing
    /// changed, without a stamp).
    ///
    /// Only the hosts of the changed chunks are visited: a host whose path changed (labels,
    /// engine, added, removed) leaves its old leaf and is inserted into its new one by name,
    /// branches are created for new values and dropped when no host is left beneath, and the
    /// branches are renumbered into the order a build gives when that order changed. With
    /// `svc` (the counts the tree's `existing` counts were filled with, every host counted),
    /// the changed hosts' counts are brought to `svc` too. The result is exactly the shape (and
    /// counts) [`shape`](Tree::shape) gives for `cluster`. Computes in O(changed chunks × 64 ×
    /// levels) plus, per host that changed its leaf, O(leaf size) and a binary search by name;
    /// when branches are created, dropped or reordered, O(hosts + branches) more.
    fn update(&mut self, cluster: &Cluster, chunks: &[usize], svc: Option<&[u32]>) -> bool {
        let Some(stamp) = self.stamp.take() else { return false };
        let old = &stamp.cluster;
        let n = cluster.id_bound();
        self.leaf_of.resize(n, MISSING);
        if svc.is_some() {
            self.counted.resize(n, 0);
        }
        let empty = cluster.symbols().get("");
        // An engine label's value also depends on the host record's engine attribute.
        let engine = self.levels.iter().any(|l| matches!(l.source, Source::EngineLabel(_)));
        let mut lane_values: Vec<[u32; CHUNK]> = vec![[MISSING; CHUNK]; self.levels.len()];
        // Hosts whose leaf changed: (host, old leaf, new leaf), MISSING for none.
        let mut moves: Vec<(HostId, u32, u32)> = Vec::new();
        for &c in chunks {
            let hot = cluster.hot_chunk(c);
            let before = (c < old.chunk_count()).then(|| old.hot_chunk(c));
            let old_live = before.map_or(0, |b| b.live);
            // A host live in both keeps its leaf when no level's labels changed in the chunk.
            let same_labels = !engine
                && before.is_some_and(|b| {
                    self.levels.iter().all(|l| match l.source {
                        Source::NodeLabel(Some(k)) => b.labels.values(k).eq(hot.labels.values(k)),
                        _ => true,
                    })
                });
            // Only the hosts that do not keep their leaf read the chunk's values: those of
            // another chunk are left in the rows otherwise.
            if !same_labels || hot.live & !old_live != 0 {
                label_values(&self.levels, hot, empty, &mut lane_values);
            }
            let mut lanes = old_live | hot.live;
            while lanes != 0 {
                let lane = lanes.trailing_zeros() as usize;
                lanes &= lanes - 1;
                let id = HostId((c * CHUNK + lane) as u32);
                let from = self.leaf_of[id.index()];
                let to = if hot.live >> lane & 1 == 0 {
                    MISSING
                } else if same_labels && old_live >> lane & 1 == 1 {
                    from
                } else {
                    let mut cur = 0u32;
                    for (depth, level) in self.levels.iter().enumerate() {
                        let key = label_key(cluster, level.source, lane_values[depth][lane], id);
                        cur = child(&mut self.branches, &mut self.index, cur, key, depth, u32::MAX, true, || {
                            branch_value(cluster, level.source, key, "")
                        });
                    }
                    cur
                };
                if let Some(svc) = svc {
                    let now = if to == MISSING { 0 } else { svc[id.index()] };
                    if from != MISSING {
                        self.branches[from as usize].existing -= u64::from(self.counted[id.index()]);
                    }
                    if to != MISSING {
                        self.branches[to as usize].existing += u64::from(now);
                    }
                    self.counted[id.index()] = now;
                }
                if from != to {
                    moves.push((id, from, to));
                }
            }
        }
        if !moves.is_empty() {
            self.move_hosts(cluster, &moves);
        }
        if svc.is_some() {
            for b in &mut self.branches {
                if !b.children.is_empty() {
                    b.existing = 0;
                }
            }
            sum_up(&mut self.branches, |b| &mut b.existing);
        }
        self.stamp = Some(Stamp { cluster: cluster.clone(), sources: stamp.sources });
        true
    }

    /// Moves each host of `moves` (host, old leaf, new leaf; [`MISSING`] for none) from its
    /// old leaf to its new one at its place by name in `cluster`; then recounts the nodes and
    /// least host ids beneath every branch, and drops the branches left without a node and
    /// renumbers the rest into a build's order when either is needed.
    fn move_hosts(&mut self, cluster: &Cluster, moves: &[(HostId, u32, u32)]) {
        // Every host leaves first: the leaves then hold only hosts of `cluster`.
        for &(id, from, _) in moves {
            if from != MISSING {
                let hosts = &mut self.branches[from as usize].hosts;
                let at = hosts.iter().position(|&h| h == id).expect("a host is in its leaf");
                hosts.remove(at);
            }
        }
        for &(id, _, to) in moves {
            if to != MISSING {
                let hosts = &mut self.branches[to as usize].hosts;
                let name = cluster.host_name(id);
                let at = hosts.partition_point(|&h| cluster.host_name(h) < name);
                hosts.insert(at, id);
            }
            self.leaf_of[id.index()] = to;
        }
        let depth = self.levels.len();
        for &(_, from, to) in moves {
            for leaf in [from, to] {
                if leaf != MISSING {
                    let b = &mut self.branches[leaf as usize];
                    b.first = b.hosts.iter().map(|h| h.0).min().unwrap_or(u32::MAX);
                }
            }
        }
        for b in &mut self.branches {
            if b.depth == depth {
                b.nodes = b.hosts.len() as u32;
            } else {
                (b.nodes, b.first) = (0, u32::MAX);
            }
        }
        fold_up(&mut self.branches, |parent, child| {
            parent.nodes += child.nodes;
            parent.first = parent.first.min(child.first);
        });
        let dropped = self.branches[1..].iter().any(|b| b.nodes == 0);
        let in_order = self.branches.windows(2).all(|w| (w[0].first, w[0].depth) < (w[1].first, w[1].depth));
        if dropped || !in_order {
            self.renumber();
        }
    }

    /// Drops the branches without a node (but the root) and numbers the rest in a build's
    /// order, `(first, depth)`, with their parents, children, index entries and hosts' leaves.
    fn renumber(&mut self) {
        let mut order: Vec<u32> =
            (0..self.branches.len() as u32).filter(|&i| i == 0 || self.branches[i as usize].nodes > 0).collect();
        order.sort_unstable_by_key(|&i| (self.branches[i as usize].first, self.branches[i as usize].depth));
        let mut new_of = vec![MISSING; self.branches.len()];
        for (new, &old) in order.iter().enumerate() {
            new_of[old as usize] = new as u32;
        }
        let mut old = std::mem::take(&mut self.branches);
        self.index.clear();
        for &o in &order {
            let mut b = std::mem::take(&mut old[o as usize]);
            b.parent = new_of[b.parent as usize];
            b.children.retain(|&c| new_of[c as usize] != MISSING);
            for c in &mut b.children {
                *c = new_of[*c as usize];
            }
            if o != 0 {
                self.index.insert((b.parent, b.key), self.branches.len() as u32);
            }
            self.branches.push(b);
        }
        for leaf in &mut self.leaf_of {
            if *leaf != MISSING {
                *leaf = new_of[*leaf as usize];
            }
        }
    }

    /// Fills the counts of a shape whose counts are zero: each leaf's existing tasks and
    /// eligible nodes from its hosts, every branch's as the sum over its children; then the
    /// live counts and the weighted levels' shares. Computes in O(hosts + branches).
    fn fill(&mut self, svc: &[u32], mut counted: impl FnMut(HostId) -> bool, mut eligible: impl FnMut(HostId) -> bool) {
        for b in &mut self.branches {
            // Only leaves hold hosts.
            for &id in &b.hosts {
                if counted(id) {
                    b.existing += u64::from(svc[id.index()]);
                }
                b.eligible += u32::from(eligible(id));
            }
        }
        sum_up(&mut self.branches, |b| &mut b.existing);
        sum_up(&mut self.branches, |b| &mut b.eligible);
        for b in &mut self.branches {
            b.live = b.existing;
        }
        self.compute_shares();
    }

    /// Sets each child of a weighted level's branches to its share.
    fn compute_shares(&mut self) {
        for i in 0..self.branches.len() {
            let depth = self.branches[i].depth;
            let Some(LevelKind::Weighted(targets)) = self.levels.get(depth).map(|l| &l.kind) else { continue };
            let children = &self.branches[i].children;
            let values: Vec<&str> = children.iter().map(|&c| &*self.branches[c as usize].value).collect();
            let shares = shares(targets, &values);
            for (&c, s) in self.branches[i].children.clone().iter().zip(shares) {
                self.branches[c as usize].share = s;
            }
        }
    }

    /// The level of `branch`'s children.
    pub(crate) fn child_kind(&self, branch: u32) -> &LevelKind {
        &self.levels[self.branches[branch as usize].depth].kind
    }

    /// The values from the root down to `branch`, computed once per shape.
    pub(crate) fn path(&mut self, branch: u32) -> Arc<[String]> {
        if let Some(p) = &self.branches[branch as usize].path {
            return p.clone();
        }
        let mut path = Vec::new();
        let mut cur = branch;
        while cur != 0 {
            let b = &self.branches[cur as usize];
            path.push(b.value.to_string());
            cur = b.parent;
        }
        path.reverse();
        let path: Arc<[String]> = path.into();
        self.branches[branch as usize].path = Some(path.clone());
        path
    }

    /// Adds one placed task to `leaf` and every branch above it.
    pub(crate) fn record(&mut self, leaf: u32) {
        let mut cur = leaf;
        loop {
            let b = &mut self.branches[cur as usize];
            b.live += 1;
            b.placed += 1;
            if cur == 0 {
                break;
            }
            cur = b.parent;
        }
    }
}

/// Adds every branch's `field` to its parent's.
fn sum_up<T: std::ops::AddAssign + Copy>(branches: &mut [Branch], field: impl Fn(&mut Branch) -> &mut T) {
    fold_up(branches, |parent, child| *field(parent) += *field(child));
}

/// Folds every branch into its parent, `f(parent, child)`, each after its own children.
/// Children are created after their parent: going through the branches in reverse creation
/// order does.
fn fold_up(branches: &mut [Branch], mut f: impl FnMut(&mut Branch, &mut Branch)) {
    for i in (1..branches.len()).rev() {
        let parent = branches[i].parent as usize;
        let (head, tail) = branches.split_at_mut(i);
        f(&mut head[parent], &mut tail[0]);
    }
}

/// Fills `out[depth][lane]` with each lane's value of every label level in chunk `hot` (its
/// symbol; [`MISSING`] for no value or `""`); other levels' rows are left as they are.
fn label_values(levels: &[Level], hot: &HotChunk, empty: Option<Symbol>, out: &mut [[u32; CHUNK]]) {
    for (level, values) in levels.iter().zip(out) {
        if let Source::NodeLabel(k) | Source::EngineLabel(k) = level.source {
            values.fill(MISSING);
            for (value, mut mask) in k.into_iter().flat_map(|k| hot.labels.values(k)) {
                if Some(value) == empty {
                    continue;
                }
                while mask != 0 {
                    values[mask.trailing_zeros() as usize] = value.0;
                    mask &= mask - 1;
                }
            }
        }
    }
}

/// The key of host `id` at a label level whose value is `value` ([`label_values`]): also
/// [`MISSING`] for an engine label of a node without an engine description.
fn label_key(cluster: &Cluster, source: Source, value: u32, id: HostId) -> u32 {
    let engine_missing =
        matches!(source, Source::EngineLabel(_)) && cluster.host(id).is_some_and(|h| !node::has_engine(h));
    if engine_missing {
        MISSING
    } else {
        value
    }
}

/// The value of a branch with `key` at a level of `source`: a label value's string, else
/// `text` (`""` for a missing label).
fn branch_value(cluster: &Cluster, source: Source, key: u32, text: &str) -> Box<str> {
    match source {
        Source::NodeLabel(_) | Source::EngineLabel(_) if key != MISSING => cluster.resolve(Symbol(key)).into(),
        _ => text.into(),
    }
}

/// The child of `parent` for `key` at the level `depth` (0 for the first), created when
/// missing with the value `value()`, `first` as its least host id and its place among its
/// siblings at the end or, when `sorted`, in value order.
#[allow(clippy::too_many_arguments)]
fn child(
    branches: &mut Vec<Branch>,
    index: &mut HashMap<(u32, u32), u32, IdHashing>,
    parent: u32,
    key: u32,
    depth: usize,
    first: u32,
    sorted: bool,
    value: impl FnOnce() -> Box<str>,
) -> u32 {
    let n = branches.len() as u32;
    let child = *index.entry((parent, key)).or_insert(n);
    if child == n {
        let value = value();
        let siblings = &branches[parent as usize].children;
        let at = if sorted {
            siblings.partition_point(|&c| branches[c as usize].value.as_bytes() < value.as_bytes())
        } else {
            siblings.len()
        };
        branches.push(Branch { value, depth: depth + 1, parent, key, first, ..Branch::default() });
        branches[parent as usize].children.insert(at, n);
    }
    child
}

/// Shares (summing to 1) of the values present under one parent.
pub(crate) fn shares(targets: &Targets, values: &[&str]) -> Vec<f64> {
    let mut raw: Vec<f64> = match targets {
        Targets::Weights { weights, unlisted } => {
            values.iter().map(|v| weights.get(*v).copied().unwrap_or(*unlisted)).collect()
        }
        Targets::Percent(targets) => {
            let listed: f64 = targets.values().sum();
            let unlisted = values.iter().filter(|v| !targets.contains_key(**v)).count();
            let rest = if unlisted > 0 { (100.0 - listed).max(0.0) / unlisted as f64 } else { 0.0 };
            values.iter().map(|v| targets.get(*v).copied().unwrap_or(rest)).collect()
        }
    };
    let total: f64 = raw.iter().sum();
    if total > 0.0 {
        raw.iter_mut().for_each(|x| *x /= total);
    } else {
        let even = 1.0 / values.len().max(1) as f64;
        raw.iter_mut().for_each(|x| *x = even);
    }
    raw
}

/// A branch as the allocation sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Kid {
    pub(crate) count: u64,
    pub(crate) eligible: u32,
    pub(crate) share: f64,
}

/// Splits `n` tasks among `kids` one task at a time, each to the branch the level's rule
/// prefers: spread, the least loaded (ties: more eligible nodes, then value order); pack, the
/// most loaded (same ties); weighted, the largest deficit `share × (C + 1) − count` where `C`
/// is the parent's count including `others` (ties: larger share, more eligible nodes, value
/// order). Adds to `out` (same length as `kids`). Computes in O(n × kids).
pub(crate) fn allocate(kind: &LevelKind, kids: &[Kid], others: u64, n: u64, out: &mut [u64]) {
    if kids.is_empty() {
        return;
    }
    let before: u64 = others + kids.iter().map(|k| k.count).sum::<u64>();
    for total in before..before + n {
        let count = |i: usize| kids[i].count + out[i];
        let mut best = 0;
        for i in 1..kids.len() {
            let (a, b) = (&kids[i], &kids[best]);
            let better = match kind {
                LevelKind::Spread => {
                    (count(i), std::cmp::Reverse(a.eligible)) < (count(best), std::cmp::Reverse(b.eligible))
                }
                LevelKind::Pack => (count(i), a.eligible) > (count(best), b.eligible),
                LevelKind::Weighted(_) => {
                    let d = |k: &Kid, c: u64| k.share * (total + 1) as f64 - c as f64;
                    let (da, db) = (d(a, count(i)), d(b, count(best)));
                    da > db + 1e-9 || ((da - db).abs() <= 1e-9 && (a.share, a.eligible) > (b.share, b.eligible))
                }
            };
            if better {
                best = i;
            }
        }
        out[best] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::refresh_pays;
    use std::collections::BTreeMap;

    fn kids(counts: &[u64]) -> Vec<Kid> {
        counts.iter().map(|&count| Kid { count, eligible: 1, share: 0.0 }).collect()
    }

    #[test]
    fn spread_allocation_water_fills() {
        let mut out = vec![0; 3];
        allocate(&LevelKind::Spread, &kids(&[5, 0, 2]), 0, 6, &mut out);
        assert_eq!(out, vec![0, 4, 2], "levels 4 and 4, the remainder to the first");
    }

    #[test]
    fn pack_allocation_fills_the_most_loaded() {
        let mut out = vec![0; 3];
        allocate(&LevelKind::Pack, &kids(&[1, 3, 2]), 0, 4, &mut out);
        assert_eq!(out, vec![0, 4, 0]);
    }

    #[test]
    fn weighted_allocation_follows_shares() {
        let targets = Targets::Percent(BTreeMap::from([("a".to_owned(), 70.0), ("b".to_owned(), 30.0)]));
        let s = shares(&targets, &["a", "b"]);
        let ks: Vec<Kid> = s.iter().map(|&share| Kid { count: 0, eligible: 1, share }).collect();
        let mut out = vec![0; 2];
        allocate(&LevelKind::Weighted(targets), &ks, 0, 10, &mut out);
        assert_eq!(out, vec![7, 3]);
    }

    #[test]
    fn shares_of_unlisted_values() {
        let pct = Targets::Percent(BTreeMap::from([("a".to_owned(), 50.0)]));
        assert_eq!(shares(&pct, &["", "a", "c"]), vec![0.25, 0.5, 0.25]);
        assert_eq!(shares(&pct, &["a"]), vec![1.0], "all present values listed: scaled up");
        let w = Targets::Weights { weights: BTreeMap::from([("a".to_owned(), 3.0)]), unlisted: 1.0 };
        assert_eq!(shares(&w, &["a", "b"]), vec![0.75, 0.25]);
        let zero = Targets::Weights { weights: BTreeMap::new(), unlisted: 0.0 };
        assert_eq!(shares(&zero, &["a", "b"]), vec![0.5, 0.5], "all zero: even");
    }

    proptest::proptest! {
        /// The tree read off the chunks' label indexes a chunk's lanes at a time, leaf lists
        /// sized before they are filled, against the plain computation: every host's label path read
        /// off its record, hosts grouped by path, each group sorted by name. Names share long
        /// prefixes and come in any id order; labels may be missing or empty.
        #[test]
        fn leaves_are_the_hosts_of_each_label_path_in_name_order(
            hosts in proptest::collection::vec((0u32..40, proptest::option::of(0u8..3), proptest::option::of(0u8..4)), 0..150),
        ) {
            use crate::snapshot::HostSpec;
            let mut b = Cluster::builder();
            for (i, (name, zone, rack)) in hosts.iter().enumerate() {
                // Short names, and long ones equal in their first eight bytes.
                let name = if name % 2 == 0 { format!("n{name}-{i}") } else { format!("node-000-{name}-{i}") };
                let mut h = HostSpec::new(name);
                if let Some(z) = zone {
                    h = h.label("zone", if *z == 2 { String::new() } else { format!("z{z}") });
                }
                if let Some(r) = rack {
                    h = h.label("rack", format!("r{r}"));
                }
                b = b.host(h);
            }
            let cluster = b.build().unwrap();
            let request = super::super::SpreadRequest::new("svc", 1)
                .preference(Preference::spread("zone"))
                .preference(Preference::spread("rack"));
            let (levels, _, _) = super::levels(&cluster, &request).unwrap();
            let names: Vec<&str> = cluster.host_ids().map(|h| cluster.host_name(h)).collect();
            // A host's tasks of the service: its id mod 3, summed by each leaf.
            let svc: Vec<u32> = (0..cluster.id_bound() as u32).map(|i| i % 3).collect();
            let tree = Tree::build(&cluster, levels, &names, &svc, |_| true, |_| false);
            let mut want: BTreeMap<Vec<String>, (Vec<&str>, u64)> = BTreeMap::new();
            for (id, h) in cluster.hosts() {
                let path = ["zone", "rack"].map(|k| cluster.label(id, k).unwrap_or("").to_owned());
                let leaf = want.entry(path.to_vec()).or_default();
                leaf.0.push(&h.name);
                leaf.1 += u64::from(svc[id.index()]);
            }
            for v in want.values_mut() {
                v.0.sort_unstable();
            }
            let mut got: BTreeMap<Vec<String>, (Vec<&str>, u64)> = BTreeMap::new();
            for (i, br) in tree.branches.iter().enumerate() {
                if br.children.is_empty() && i != 0 {
                    let mut path = Vec::new();
                    let mut cur = i;
                    while cur != 0 {
                        path.push(tree.branches[cur].value.to_string());
                        cur = tree.branches[cur].parent as usize;
                    }
                    path.reverse();
                    proptest::prop_assert_eq!(br.nodes as usize, br.hosts.len());
                    got.insert(path, (br.hosts.iter().map(|&h| cluster.host_name(h)).collect(), br.existing));
                }
            }
            proptest::prop_assert_eq!(got, want);
        }

        /// A shape updated for the chunks that changed is exactly the one a build gives:
        /// branches in the same order with the same values, parents, children, least host ids
        /// and nodes, leaves with the same hosts in name order, the same index and each host's
        /// leaf, and (the compatible mode's kept counts) the same existing counts. Events
        /// relabel nodes (to values interned before, so the lineage stays comparable, or none),
        /// turn a node's engine description off or on (the engine label level reads it), add and
        /// remove nodes and place tasks, over one to four chunks.
        #[test]
        fn an_updated_shape_is_the_built_one(
            hosts in proptest::collection::vec((0u8..5, 0u8..5, 0u8..3), 1..230),
            events in proptest::collection::vec((0u8..5, 0usize..1000, 0u8..5, 0u8..5, proptest::arbitrary::any::<bool>()), 1..10),
            engine_level in proptest::arbitrary::any::<bool>(),
        ) {
            use crate::snapshot::{ClusterEvent, HostSpec, InstanceSpec};
            use super::super::SpreadRequest;
            // Values 0-3, or 4: no label.
            let labelled = |mut h: HostSpec, zone: u8, rack: u8| {
                if zone < 4 {
                    h = h.label("zone", format!("z{zone}"));
                }
                if rack < 4 {
                    h = h.label("engine.labels.rack", format!("r{rack}")).label("rack", format!("r{rack}"));
                }
                h
            };
            // The first host interns every value and the engine attribute's name.
            let mut b = Cluster::builder().host(
                (0..4).fold(HostSpec::new("spare").attribute("engine", true.into()), |h, v| {
                    h.label(format!("z-{v}"), format!("z{v}")).label(format!("r-{v}"), format!("r{v}"))
                }),
            );
            for (i, &(zone, rack, tasks)) in hosts.iter().enumerate() {
                // Names out of id order, sharing prefixes.
                let mut h = labelled(HostSpec::new(format!("h{}-{i}", (i * 7919) % 97)), zone, rack);
                for t in 0..tasks {
                    h = h.instance(InstanceSpec::new(format!("h{i}-t{t}")).group("svc"));
                }
                b = b.host(h);
            }
            let mut cluster = b.build().unwrap();
            let mut request = SpreadRequest::new("svc", 1).preference(Preference::spread("zone"));
            request = request.preference(Preference::spread(if engine_level { "engine.labels.rack" } else { "rack" }));
            let counts = |c: &Cluster| -> Vec<u32> {
                let service = c.symbols().get("svc");
                (0..c.id_bound() as u32).map(|i| c.host(HostId(i)).map_or(0, |h| node::active_counts(h, service, "svc").0)).collect()
            };
            let names = |c: &Cluster| -> Vec<String> { (0..c.id_bound() as u32).map(|i| c.host_name(HostId(i)).to_owned()).collect() };
            let shape = |t: &Tree| {
                let branches: Vec<_> = t
                    .branches
                    .iter()
                    .map(|b| (b.value.clone(), b.depth, b.parent, b.key, b.first, b.children.clone(), b.nodes, b.hosts.clone(), b.existing, b.eligible))
                    .collect();
                let mut index: Vec<_> = t.index.iter().map(|(&k, &v)| (k, v)).collect();
                index.sort_unstable();
                (branches, index, t.leaf_of.clone())
            };
            let mut kept = Tree::default();
            for step in 0..=events.len() {
                // The last event's compatible flag serves the check after it.
                let compatible = events[step.min(events.len() - 1)].4;
                let svc = counts(&cluster);
                let all_names = names(&cluster);
                let name_refs = || all_names.iter().map(String::as_str).collect::<Vec<_>>();
                let (levels, _, _) = super::levels(&cluster, &request).unwrap();
                let changed = kept.stamp.as_ref().and_then(|s| cluster.changed_chunks(&s.cluster).map(Iterator::count));
                let all_of = compatible.then_some("svc");
                // The compatible mode's fill: every node counted, none eligible.
                let eligible = |h: HostId| !compatible && h.0 % 3 != 0;
                let refresh = kept.reuse_or_build(&cluster, levels.clone(), name_refs, &svc, all_of, |_| true, eligible);
                let mut fresh = Tree::default();
                fresh.reuse_or_build(&cluster, levels, name_refs, &svc, all_of, |_| true, eligible);
                proptest::prop_assert_eq!(shape(&kept), shape(&fresh), "step {}", step);
                if let Some(changed) = changed {
                    let expected = if changed == 0 {
                        Refresh::Kept
                    } else if refresh_pays(changed, cluster.chunk_count()) {
                        Refresh::Updated
                    } else {
                        Refresh::Built
                    };
                    proptest::prop_assert_eq!(refresh, expected, "step {}", step);
                }
                let Some(&(kind, pick, zone, rack, _)) = events.get(step) else { break };
                let live: Vec<HostId> = cluster.host_ids().collect();
                let target = live[pick % live.len()];
                let event = match kind {
                    0 => {
                        let mut h = cluster.host_to_spec(target).unwrap();
                        h.labels.retain(|k, _| k != "zone" && k != "rack" && k != "engine.labels.rack");
                        ClusterEvent::HostUpdated { host: labelled(h, zone, rack) }
                    }
                    1 => {
                        let h = cluster.host_to_spec(target).unwrap();
                        ClusterEvent::HostUpdated { host: h.attribute("engine", (zone % 2 == 0).into()) }
                    }
                    2 => ClusterEvent::HostAdded { host: labelled(HostSpec::new(format!("h{pick}-added-{step}")), zone, rack) },
                    3 if live.len() > 1 => ClusterEvent::HostRemoved { host: cluster.host_name(target).to_owned() },
                    _ => ClusterEvent::InstancePlaced {
                        host: cluster.host_name(target).to_owned(),
                        instance: InstanceSpec::new(format!("placed-{step}")).group("svc"),
                    },
                };
                cluster = cluster.apply(&event).unwrap();
            }
        }
    }
}
