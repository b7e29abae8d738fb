//! [`SpreadScheduler`]: the entry point; builds the pipeline, the tree and the node state for
//! a batch and runs the mode's algorithm.

use super::balanced::Heaps;
use super::filters::{
    ConstraintFilter, HostPortFilter, MaxReplicasFilter, PlatformFilter, ReadyFilter, Stage, SwarmResourceFilter,
};
use super::node;
use super::outcome::{SpreadOutcome, SpreadSelection};
use super::request::{SpreadMode, SpreadRequest, WhenUnsatisfiable};
use super::run::{Entry, NodeState, RevisitOrder, Run};
use super::skew::Domains;
use super::tree::{levels, Refresh, Tree};
use super::SpreadError;
use crate::error::{BuildError, ScheduleError};
use crate::filter::Filter;
use crate::hooks::{hook_methods, Hooks};
use crate::request::{Cx, Request};
use crate::schedule::DEFAULT_MAX_COUNT;
use crate::snapshot::{check_attributes, AttributeWarning, Cluster, Overlay};
use crate::weigh::Weigher;
use std::fmt;

/// Places batches of a service's tasks by placement preferences; see the [module docs](super).
///
/// Extra foundation [`Filter`]s run after SwarmKit's pipeline, in the order added; extra
/// [`Weigher`]s order the nodes of a leaf after the failure penalty and the two task counts.
///
/// ```
/// use placewise::spread::{Preference, SpreadRequest, SpreadScheduler};
/// use placewise::{filter_fn, Cluster, HostSpec};
///
/// let cluster = Cluster::builder()
///     .host(HostSpec::new("a1").label("zone", "a"))
///     .host(HostSpec::new("b1").label("zone", "b").label("canary", "yes"))
///     .host(HostSpec::new("b2").label("zone", "b"))
///     .build()?;
/// let scheduler = SpreadScheduler::builder()
///     .filter(filter_fn("no canary", |cx, h| cx.cluster().label(h, "canary").is_none()))
///     .build()?;
/// let out = scheduler.schedule(&cluster, &SpreadRequest::new("web", 4).preference(Preference::spread("zone")))?;
/// assert_eq!(out.per_host().into_iter().collect::<Vec<_>>(), [("a1", 2), ("b2", 2)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Default)]
pub struct SpreadScheduler {
    filters: Vec<Box<dyn Filter>>,
    weighers: Vec<(Box<dyn Weigher>, f64)>,
}

impl fmt::Debug for SpreadScheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let filters: Vec<&str> = self.filters.iter().map(|x| x.name()).collect();
        let weighers: Vec<(&str, f64)> = self.weighers.iter().map(|(w, m)| (w.name(), *m)).collect();
        f.debug_struct("SpreadScheduler").field("filters", &filters).field("weighers", &weighers).finish()
    }
}

/// Builds a [`SpreadScheduler`].
#[derive(Debug, Default)]
pub struct SpreadSchedulerBuilder {
    hooks: Hooks,
}

/// The caller's filters run after SwarmKit's pipeline; the caller's weighers order the
/// candidates of a leaf (see the [module docs](super)).
impl SpreadSchedulerBuilder {
    hook_methods!(hooks);

    /// Validates and builds.
    ///
    /// # Errors
    ///
    /// [`BuildError::NonFiniteMultiplier`] for a non-finite multiplier.
    pub fn build(self) -> Result<SpreadScheduler, BuildError> {
        let (filters, tiers) = self.hooks.into_parts()?;
        Ok(SpreadScheduler { filters, weighers: tiers.into_iter().flatten().collect() })
    }
}

/// Reusable per-node buffers, overlay and decision tree for
/// [`SpreadScheduler::schedule_with`].
///
/// The tree's shape (branches by label value, each leaf's nodes in name order) is kept with
/// the snapshot it was built from and the request's level sources (which labels, in which
/// order); a later call on that very snapshot with the same levels keeps it and refills only
/// the counts, in O(hosts) without reading a host record (the compatible mode keeps the
/// counts too, for the same service). Likewise each node's task counts of the service are
/// kept with the snapshot and service they were read for (a later call restores only the
/// nodes the call before placed on), and the leading Ready and Resource verdicts with the
/// snapshot and the request's resources. On a later snapshot of the same lineage (events
/// applied to it, no new string interned) where at most about half the 64-node chunks changed,
/// all three are updated for the nodes of the changed chunks instead (the tree when every
/// level reads a label). Any other snapshot (another cluster even at the same generation, one
/// changed too much), other levels, another
/// service or other resources recompute what they change, before it is read: a kept part never
/// gives a different answer from a fresh one. The scratch holds clones of the snapshots these
/// were computed from (cheap: shared chunks), which keep that memory alive until the next
/// rebuild or until the scratch is dropped or [cleared](SpreadScratch::clear).
///
/// One scratch serves one thread; it is not tied to a scheduler.
#[derive(Debug, Default)]
pub struct SpreadScratch {
    nodes: NodeState,
    overlay: Overlay,
    heaps: Heaps,
    tree: Tree,
    tree_builds: u64,
    tree_updates: u64,
}

impl SpreadScratch {
    /// Empty buffers: the first call builds the tree.
    pub fn new() -> Self {
        SpreadScratch::default()
    }

    /// How many times a tree was built or updated for another snapshot rather than kept (for
    /// tests and tuning).
    pub fn tree_builds(&self) -> u64 {
        self.tree_builds
    }

    /// How many of the [`tree_builds`](SpreadScratch::tree_builds) updated the tree kept for
    /// an earlier snapshot of the same lineage for the chunks that changed, rather than
    /// building it from every node (for tests and tuning).
    pub fn tree_updates(&self) -> u64 {
        self.tree_updates
    }

    /// Forgets the kept tree, the task counts and the snapshot they were read from (the
    /// buffers stay allocated).
    pub fn clear(&mut self) {
        self.tree = Tree::default();
        self.nodes.forget_snapshot();
    }
}

impl SpreadScheduler {
    /// A scheduler with SwarmKit's pipeline only.
    pub fn new() -> SpreadScheduler {
        SpreadScheduler::default()
    }

    /// A builder for extra filters and weighers.
    pub fn builder() -> SpreadSchedulerBuilder {
        SpreadSchedulerBuilder::default()
    }

    /// Whether the scheduler has user filters.
    pub(crate) fn has_filters(&self) -> bool {
        !self.filters.is_empty()
    }

    /// The attributes of `cluster` that this engine would silently read as their defaults: keys
    /// that look like misspellings of [`ATTRIBUTES`](super::ATTRIBUTES), and those keys holding
    /// a value of another type. Call it once per snapshot (it visits every attribute).
    pub fn attribute_warnings(&self, cluster: &Cluster) -> Vec<AttributeWarning> {
        check_attributes(cluster, node::ATTRIBUTES)
    }

    /// Places `request.tasks` tasks on `cluster`; the snapshot is never changed.
    ///
    /// Costs O(hosts × (levels + filters)) to build the tree (O(hosts) to refill a tree kept
    /// in the scratch, see [`SpreadScratch`]) and run the pipeline once per node, plus, per
    /// task, O(levels × branches per level) to split and O(log leaf size) to
    /// pick a node (the compatible mode's leaves re-sort on a revisit: O(leaf log leaf)).
    ///
    /// # Errors
    ///
    /// [`SpreadError`] for a request the engine cannot interpret (a bad weight, an unsupported
    /// descriptor outside the compatible mode's silent skip, negative resources) or a user
    /// filter or weigher that cannot prepare. A batch that does not fit is an `Ok` outcome
    /// with unplaced tasks and a message.
    pub fn schedule(&self, cluster: &Cluster, request: &SpreadRequest) -> Result<SpreadOutcome, SpreadError> {
        self.schedule_with(&mut SpreadScratch::new(), cluster, request)
    }

    /// As [`schedule`](SpreadScheduler::schedule), with caller-owned buffers.
    ///
    /// # Errors
    ///
    /// As [`schedule`](SpreadScheduler::schedule).
    pub fn schedule_with(
        &self,
        scratch: &mut SpreadScratch,
        cluster: &Cluster,
        request: &SpreadRequest,
    ) -> Result<SpreadOutcome, SpreadError> {
        if request.tasks > DEFAULT_MAX_COUNT {
            let error = ScheduleError::CountTooLarge { count: request.tasks, max: DEFAULT_MAX_COUNT };
            return Err(SpreadError::Request { error });
        }
        let (levels, skipped, warnings) = levels(cluster, request)?;
        for h in &request.hard_spread {
            h.validate()?;
        }
        let mut freq = Request::new(request.tasks).group(request.service.clone());
        for (kind, &amount) in &request.resources {
            freq = freq.resource(kind.clone(), amount);
        }
        let compiled = freq.compile(cluster).map_err(|error| SpreadError::Request { error })?;

        let ready = ReadyFilter;
        let resource = SwarmResourceFilter;
        let constraint = ConstraintFilter::new(request.constraints.clone());
        let platform = PlatformFilter::new(request.platforms.clone());
        let ports = HostPortFilter::new(request.ports.clone());
        let max = MaxReplicasFilter::new(request.max_replicas);
        let swarm: [(&dyn Filter, Stage, bool); 6] = [
            (&ready, Stage::Ready, true),
            (&resource, Stage::Resource, !compiled.resources.is_empty() || !compiled.unknown.is_empty()),
            (&constraint, Stage::Constraint, !request.constraints.is_empty()),
            (&platform, Stage::Platform, !request.platforms.is_empty()),
            (&ports, Stage::HostPort, request.ports.iter().any(|p| p.port != 0)),
            (&max, Stage::MaxReplicas, request.max_replicas > 0),
        ];
        let mut entries: Vec<Entry<'_>> = swarm
            .iter()
            .filter(|s| s.2)
            .map(|&(filter, stage, _)| Entry { filter: Some(filter), hard: None, stage, state: None })
            .collect();
        let service = cluster.symbols().get(&request.service);
        let mut hard = Vec::new();
        for h in &request.hard_spread {
            let d = Domains::build(cluster, h, service, &request.service, |id| {
                request.constraints.iter().all(|c| c.matches(cluster, id))
            });
            if h.when_unsatisfiable == WhenUnsatisfiable::DoNotSchedule {
                entries.push(Entry { filter: None, hard: Some(hard.len()), stage: Stage::HardSpread, state: None });
            }
            hard.push(d);
        }
        {
            let cx = Cx::new(cluster, &freq, &compiled, &scratch.overlay, 0);
            for f in &self.filters {
                let state = f.prepare(&cx).map_err(|error| SpreadError::Prepare { error })?;
                entries.push(Entry { filter: Some(&**f), hard: None, stage: Stage::User, state });
            }
        }

        let SpreadScratch { nodes, overlay, heaps, tree, tree_builds, tree_updates } = scratch;
        overlay.clear();
        prepare_nodes(nodes, cluster, request, service);
        // Taken for the call and put back when it succeeds: a call that fails leaves no tree.
        let mut kept = std::mem::take(tree);
        let names = || {
            cluster.hosts().fold(vec![""; cluster.id_bound()], |mut names, (id, host)| {
                names[id.index()] = &*host.name;
                names
            })
        };
        let mut run = Run::new(cluster, &freq, &compiled, overlay, nodes, entries, hard);
        if request.mode == SpreadMode::SwarmCompatibleStable {
            run.revisit = RevisitOrder::Stable;
        }
        run.local = run.entries.iter().all(|e| {
            e.hard.is_none() && e.filter.is_some_and(|f| f.host_local_for(&run.cx().with_state(e.state.as_deref())))
        });

        match request.mode {
            SpreadMode::SwarmCompatible | SpreadMode::SwarmCompatibleStable => {
                let refresh = kept.reuse_or_build(
                    cluster,
                    levels,
                    names,
                    &run.nodes.svc,
                    Some(&request.service),
                    |_| true,
                    |_| false,
                );
                count_refresh(refresh, tree_builds, tree_updates);
                run.tree = kept;
                run.tree.branches[0].asked = request.tasks;
                if request.tasks > 0 {
                    run.initial_fails();
                    run.fill_heaps(request.tasks as usize);
                    if !self.weighers.is_empty() {
                        let cands = run.all_candidates();
                        run.weigh(&self.weighers, &cands)?;
                    }
                    run.split_compat(0, i64::from(request.tasks));
                }
            }
            SpreadMode::Balanced => {
                run.initial_fails();
                for id in cluster.host_ids() {
                    run.nodes.eligible[id.index()] = run.fails_initially(id, false).is_none();
                }
                let ignore = request.ignore_ineligible_tasks;
                let eligible = std::mem::take(&mut run.nodes.eligible);
                let refresh = kept.reuse_or_build(
                    cluster,
                    levels,
                    names,
                    &run.nodes.svc,
                    None,
                    |h| !ignore || eligible[h.index()],
                    |h| eligible[h.index()],
                );
                count_refresh(refresh, tree_builds, tree_updates);
                run.tree = kept;
                run.tree.branches[0].asked = request.tasks;
                let mut cands = Vec::new();
                for b in &mut run.tree.branches {
                    for (r, &h) in b.hosts.iter().enumerate() {
                        run.nodes.rank[h.index()] = r as u32;
                    }
                    b.cands.extend(b.hosts.iter().copied().filter(|h| eligible[h.index()]));
                    cands.extend_from_slice(&b.cands);
                }
                run.nodes.eligible = eligible;
                run.weigh(&self.weighers, &cands)?;
                heaps.reset(run.tree.branches.len(), run.narrow_heaps());
                run.run_balanced(heaps);
            }
        }

        let unplaced = run.left;
        let instance = explained_task(&run);
        // The final state judged again when it is explained: tasks left, or verdicts asked for.
        let verdicts = request.explain.verdicts;
        let last = (unplaced > 0 || verdicts).then(|| run.final_pass(instance, verdicts));
        // SwarmKit's message counts: its counters in the compatible modes, the final state's in
        // the balanced mode.
        let counted = (unplaced > 0 && request.mode != SpreadMode::Balanced).then(|| run.swarm_counts());
        let swarm = counted.as_ref().or(last.as_ref());
        let mut explanation = run.explain(swarm, last.as_ref(), instance);
        explanation.top = run.top(request.explain.top as usize);
        // One path per leaf, shared by its tasks (and kept with the tree's shape).
        let mut assignments = Vec::with_capacity(run.placed.len());
        for (i, (&h, &leaf)) in run.placed.iter().zip(&run.leaves).enumerate() {
            let branch = run.tree.path(leaf);
            assignments.push(SpreadSelection {
                task: i as u32,
                host: h,
                host_name: cluster.host_name(h).to_owned(),
                branch,
            });
        }
        let levels = run.tree.levels.iter().map(|l| l.descriptor.clone()).collect();
        let report = run.report(0, request.tasks);
        *tree = std::mem::take(&mut run.tree);
        Ok(SpreadOutcome {
            requested: request.tasks,
            selections: assignments,
            unplaced,
            explanation,
            mode: request.mode,
            levels,
            skipped,
            warnings,
            tree: report,
        })
    }
}

/// The task an explanation is about: the first left unplaced, else the last placed.
fn explained_task(run: &Run<'_>) -> u32 {
    let placed = run.placed.len() as u32;
    if run.left > 0 {
        placed
    } else {
        placed.saturating_sub(1)
    }
}

/// Counts a tree that was not kept in `builds`, and an updated one also in `updates`.
fn count_refresh(refresh: Refresh, builds: &mut u64, updates: &mut u64) {
    *builds += u64::from(refresh != Refresh::Kept);
    *updates += u64::from(refresh == Refresh::Updated);
}

/// Fills the per-node arrays from the snapshot: task counts, failure penalties, keys
/// ([`NodeState::prepare`]). Computes in O(hosts + instances), or O(hosts the previous call
/// changed) on the same snapshot and service.
fn prepare_nodes(
    nodes: &mut NodeState,
    cluster: &Cluster,
    request: &SpreadRequest,
    service: Option<crate::id::Symbol>,
) {
    nodes.prepare(cluster, service, &request.service);
    for (name, &failures) in &request.recent_failures {
        if let Some(id) = cluster.host_id(name) {
            nodes.penalty[id.index()] = if failures >= 5 { failures } else { 0 };
            nodes.rekey(id.index());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{SpreadScheduler, SpreadScratch};
    use crate::snapshot::{Cluster, ClusterEvent, HostSpec};
    use crate::spread::{Preference, SpreadRequest};

    fn per_host(
        s: &SpreadScheduler,
        scratch: &mut SpreadScratch,
        c: &Cluster,
        r: &SpreadRequest,
    ) -> Vec<(String, u32)> {
        let out = s.schedule_with(scratch, c, r).unwrap();
        assert_eq!(out, s.schedule(c, r).unwrap(), "the kept tree answers as a fresh one");
        out.per_host().into_iter().map(|(h, n)| (h.to_owned(), n)).collect()
    }

    /// A snapshot changed in place (the capacity counts' `apply_mut`), or another snapshot at the
    /// same generation, never reuses the kept tree; the very same snapshot does.
    #[test]
    fn a_changed_or_other_snapshot_rebuilds_the_kept_tree() {
        let zones = |b2: &str| {
            Cluster::builder()
                .host(HostSpec::new("a1").label("zone", "a"))
                .host(HostSpec::new("b1").label("zone", "b"))
                .host(HostSpec::new("b2").label("zone", b2))
                .build()
                .unwrap()
        };
        let s = SpreadScheduler::new();
        let req = SpreadRequest::new("web", 4).preference(Preference::spread("zone"));
        let mut scratch = SpreadScratch::new();
        let mut cluster = zones("b");
        let want = |v: &[(&str, u32)]| v.iter().map(|&(h, n)| (h.to_owned(), n)).collect::<Vec<_>>();
        assert_eq!(per_host(&s, &mut scratch, &cluster, &req), want(&[("a1", 2), ("b1", 1), ("b2", 1)]));
        assert_eq!(per_host(&s, &mut scratch, &cluster, &req), want(&[("a1", 2), ("b1", 1), ("b2", 1)]));
        assert_eq!(scratch.tree_builds(), 1, "the same snapshot keeps the tree");

        cluster.apply_mut(&ClusterEvent::HostUpdated { host: HostSpec::new("b2").label("zone", "a") }).unwrap();
        assert_eq!(per_host(&s, &mut scratch, &cluster, &req), want(&[("a1", 1), ("b1", 2), ("b2", 1)]));
        assert_eq!(scratch.tree_builds(), 2, "a snapshot changed in place rebuilds");

        let other = zones("c");
        assert_eq!(other.generation(), 0);
        assert_eq!(per_host(&s, &mut scratch, &other, &req), want(&[("a1", 2), ("b1", 1), ("b2", 1)]));
        assert_eq!(scratch.tree_builds(), 3, "another snapshot rebuilds");
        let fresh = zones("c");
        assert_eq!(fresh.generation(), other.generation());
        per_host(&s, &mut scratch, &fresh, &req);
        assert_eq!(scratch.tree_builds(), 4, "an equal snapshot built apart, at the same generation, rebuilds");

        per_host(&s, &mut scratch, &fresh, &req.clone().preference(Preference::spread("rack")));
        assert_eq!(scratch.tree_builds(), 5, "other levels rebuild");
        scratch.clear();
        per_host(&s, &mut scratch, &fresh, &req);
        assert_eq!(scratch.tree_builds(), 6, "a cleared scratch rebuilds");
    }

    /// With `explain.top`, the explanation ranks the nodes as SwarmKit's node order does over
    /// the state the batch left (the next task's order): fewer tasks of the service first, then
    /// fewer tasks in all; nodes the pipeline rejects are not ranked.
    #[test]
    fn top_ranks_nodes_by_swarmkit_order_after_the_batch() {
        use crate::request::ExplainOptions;
        use crate::snapshot::InstanceSpec;
        let task = |id: &str, group: &str| InstanceSpec::new(id).group(group);
        let cluster = Cluster::builder()
            .host(HostSpec::new("a").instance(task("w1", "web")).instance(task("w2", "web")))
            .host(HostSpec::new("b").instance(task("o1", "other")).instance(task("o2", "other")))
            .host(HostSpec::new("c"))
            .host(HostSpec::new("d").label("role", "manager"))
            .build()
            .unwrap();
        let s = SpreadScheduler::new();
        let req = SpreadRequest::new("web", 1)
            .constraint("node.labels.role!=manager")
            .unwrap()
            .explain(ExplainOptions { verdicts: false, top: 5 });
        let out = s.schedule(&cluster, &req).unwrap();
        assert_eq!(out.selections[0].host_name, "c");
        let top: Vec<(&str, Vec<f64>)> =
            out.explanation.top.iter().map(|r| (r.host.as_str(), r.terms.iter().map(|t| t.raw).collect())).collect();
        // After the batch: b has 0 web tasks (2 in all), c 1 (1), a 2 (2); d is rejected.
        assert_eq!(top, [("b", vec![0.0, 0.0, 2.0]), ("c", vec![0.0, 1.0, 1.0]), ("a", vec![0.0, 2.0, 2.0])]);
        let names: Vec<&str> = out.explanation.top[0].terms.iter().map(|t| t.weigher.as_str()).collect();
        assert_eq!(names, ["failure penalty", "service tasks", "total tasks"]);
        // Fewer than the passing nodes: the first of the same order.
        let two = s.schedule(&cluster, &req.clone().explain(ExplainOptions { verdicts: false, top: 2 })).unwrap();
        let names: Vec<&str> = two.explanation.top.iter().map(|r| r.host.as_str()).collect();
        assert_eq!(names, ["b", "c"]);
        assert!(s.schedule(&cluster, &req.explain(ExplainOptions::default())).unwrap().explanation.top.is_empty());
    }

    /// Issue 42.3: a preference over a label no node carries (`node.labels.rackk` for `rack`)
    /// puts every node in one branch. Checked from the rule, in every mode and for each kind of
    /// preference: such a level is listed in `warnings`, naming it, and places exactly as the
    /// request without it (SwarmKit ignores it); a label some node carries (even one node only)
    /// gives no warning; a key interned by an earlier snapshot of the lineage that no node
    /// carries any more is still warned about; a strict request is refused naming the key.
    #[test]
    fn a_preference_over_a_label_no_node_carries_is_reported() {
        use crate::spread::{SpreadError, SpreadMode, SpreadWarning};
        let mut cluster = Cluster::builder()
            .host(HostSpec::new("a1").label("rack", "r1").label("zone", "a"))
            .host(HostSpec::new("a2").label("zone", "a"))
            .host(HostSpec::new("b1").label("zone", "b"))
            .build()
            .unwrap();
        let s = SpreadScheduler::new();
        let modes = [SpreadMode::SwarmCompatible, SpreadMode::SwarmCompatibleStable, SpreadMode::Balanced];
        let bogus = [
            Preference::spread("node.labels.rackk"),
            Preference::spread("rackk"),
            Preference::pack("node.labels.rackk"),
            Preference::spread("engine.labels.rack"),
        ];
        for mode in modes {
            let base = SpreadRequest::new("web", 7).mode(mode).preference(Preference::spread("zone"));
            let plain = s.schedule(&cluster, &base).unwrap();
            assert!(plain.warnings.is_empty());
            let carried =
                s.schedule(&cluster, &base.clone().preference(Preference::spread("node.labels.rack"))).unwrap();
            assert!(carried.warnings.is_empty(), "{mode:?}: `rack` is carried by a1");
            for p in &bogus {
                let req = base.clone().preference(p.clone());
                let out = s.schedule(&cluster, &req).unwrap();
                let descriptor = out.levels.last().cloned().unwrap();
                assert_eq!(
                    out.warnings,
                    [SpreadWarning::LabelNotCarried { descriptor: descriptor.clone() }],
                    "{mode:?}"
                );
                assert!(out.warnings[0].to_string().contains(&format!("`{descriptor}`")));
                assert!(out.warnings[0].to_string().contains("SwarmKit ignores it"));
                assert_eq!(out.per_host(), plain.per_host(), "{mode:?} {descriptor}: placed as without it");
                let strict = s.schedule(&cluster, &req.strict_descriptors(true));
                assert_eq!(strict, Err(SpreadError::LabelNotCarried { descriptor }));
            }
        }
        // `rack` interned, then dropped from its only node: no node carries it now.
        cluster.apply_mut(&ClusterEvent::HostUpdated { host: HostSpec::new("a1").label("zone", "a") }).unwrap();
        let req = SpreadRequest::new("web", 3).preference(Preference::spread("node.labels.rack"));
        let out = s.schedule(&cluster, &req).unwrap();
        assert_eq!(out.warnings.len(), 1);
    }
}
