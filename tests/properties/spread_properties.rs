//! Property tests for the spread engine against plain models.
//!
//! Generated: 1–14 nodes, each with a `zone` (z1–z3 or none) and a `rack` (r1–r3 or none),
//! 0–3 existing tasks of the service and 0–2 of another, some down or cordoned; a batch of
//! 0–24 tasks spread over zone, or zone then rack, with or without a max-replicas limit.
//!
//! - **(a) Balanced skew.** In the balanced mode, at every internal branch, the max–min spread
//!   of the children's task counts is no larger than a plain water-fill of the same number of
//!   tasks over the children's capacities (eligible nodes × room under max replicas) gives,
//!   which is the least achievable; and the batch is placed in full whenever capacity exists.
//! - **(b) Determinism.** The compatible mode gives the same assignments twice, and the same
//!   per-node counts and message when the nodes are listed in reverse (different host ids);
//!   and it places the batch in full whenever capacity exists.
//! - **(c) Max replicas.** In both modes no node that received a task ends with more active
//!   tasks of the service than the limit.
//! - **(d) Weighted spread.** With random per-zone weights, no existing tasks and no limit,
//!   every zone's count is within one task of `tasks × weight share`, in both modes.
//! - **(e) Verdict reuse.** In both compatible modes, with vCPU reservations and max replicas,
//!   adding a pass-all filter that is not host-local (which turns off the reuse of a revisited
//!   candidate's last verdict) changes no assignment, count, message or tree.
//! - **(f) Kept tree.** A sequence of batches in all three modes (other levels, services,
//!   sizes) through one [`SpreadScratch`], with events between some of them (a node relabelled,
//!   a task placed, a node cordoned), gives exactly the outcome of a fresh call every time; and
//!   the scratch rebuilds its tree exactly when the snapshot or the levels changed since the
//!   call before.
//! - **(g) Kept node state.** Batches that differ in what the scratch keeps per node (the
//!   service's task counts, the leading Ready and Resource verdicts) and the tree's counts: other
//!   services, memory reservations some nodes cannot hold, recent failures, max replicas, in all
//!   three modes through one scratch, with tasks placed and nodes resized between some of them,
//!   give exactly the outcome of a fresh call every time.
//! - **(h) Updated tree and node state.** Random event sequences on up to three chunks of
//!   nodes (nodes relabelled, to values seen before or none, added and removed; tasks placed
//!   and removed; nodes cordoned, marked down and back, resized) interleaved with batches in
//!   all three modes through one scratch give exactly the outcome of a fresh call every time;
//!   and the scratch updates its kept tree for the chunks that changed (rather than building
//!   it) exactly when the levels are those of the call before and at most about half the
//!   chunks changed.

use placewise::snapshot::ClusterSpec;
use placewise::snapshot::HostState;
use placewise::snapshot::InstanceSpec;
use placewise::snapshot::{ClusterEvent, ResourceSpec, StateChange};
use placewise::spread::{Preference, SpreadMode, SpreadRequest, SpreadScheduler, SpreadScratch};
use placewise::{Cluster, HostSpec};
use proptest::prelude::*;
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
struct Node {
    zone: Option<usize>,
    rack: Option<usize>,
    existing: u32,
    other: u32,
    down: bool,
}

fn node() -> impl Strategy<Value = Node> {
    (
        prop::option::weighted(0.85, 0usize..3),
        prop::option::weighted(0.85, 0usize..3),
        0u32..4,
        0u32..3,
        prop::bool::weighted(0.2),
    )
        .prop_map(|(zone, rack, existing, other, down)| Node { zone, rack, existing, other, down })
}

fn spec(nodes: &[Node], reverse: bool) -> ClusterSpec {
    let mut spec = ClusterSpec::default();
    for (i, n) in nodes.iter().enumerate() {
        let mut h = HostSpec::new(format!("n{i:02}"));
        if let Some(z) = n.zone {
            h = h.label("zone", format!("z{}", z + 1));
        }
        if let Some(r) = n.rack {
            h = h.label("rack", format!("r{}", r + 1));
        }
        for t in 0..n.existing {
            h = h.instance(InstanceSpec::new(format!("n{i}-s{t}")).group("svc"));
        }
        for t in 0..n.other {
            h = h.instance(InstanceSpec::new(format!("n{i}-o{t}")).group("other"));
        }
        if n.down {
            h = h.state(HostState { cordoned: true, ..HostState::default() });
        }
        spec.hosts.push(h);
    }
    if reverse {
        spec.hosts.reverse();
    }
    spec
}

fn label(v: Option<usize>, prefix: char) -> String {
    v.map_or(String::new(), |x| format!("{prefix}{}", x + 1))
}

/// Gives `n` tasks one at a time to the least-loaded child with room: the water-fill.
fn water_fill(counts: &mut [u64], room: &mut [u64], n: u64) {
    for _ in 0..n {
        let Some(i) = (0..counts.len()).filter(|&i| room[i] > 0).min_by_key(|&i| (counts[i], i)) else { return };
        counts[i] += 1;
        room[i] -= 1;
    }
}

fn spread(counts: &[u64]) -> u64 {
    counts.iter().max().unwrap_or(&0) - counts.iter().min().unwrap_or(&0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    #[test]
    fn balanced_skew_is_optimal(
        nodes in prop::collection::vec(node(), 1..14),
        tasks in 0u32..24,
        two_levels in any::<bool>(),
        max in prop::option::of(1u32..4),
    ) {
        let cluster = Cluster::from_spec(&spec(&nodes, false)).unwrap();
        let mut req = SpreadRequest::new("svc", tasks).mode(SpreadMode::Balanced).preference(Preference::spread("zone"));
        if two_levels {
            req = req.preference(Preference::spread("rack"));
        }
        if let Some(m) = max {
            req = req.max_replicas(m);
        }
        let out = SpreadScheduler::new().schedule(&cluster, &req).unwrap();
        let placed = out.per_host();
        let got = |i: usize| u64::from(placed.get(format!("n{i:02}").as_str()).copied().unwrap_or(0));
        let room = |n: &Node| -> u64 {
            if n.down { 0 } else { max.map_or(1_000, |m| u64::from(m.saturating_sub(n.existing))) }
        };
        // Groups: the root's children (zones), and per zone its racks when two levels.
        let mut groups: Vec<BTreeMap<String, Vec<usize>>> = Vec::new();
        let mut zones: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, n) in nodes.iter().enumerate() {
            zones.entry(label(n.zone, 'z')).or_default().push(i);
        }
        if two_levels {
            for members in zones.values() {
                let mut racks: BTreeMap<String, Vec<usize>> = BTreeMap::new();
                for &i in members {
                    racks.entry(label(nodes[i].rack, 'r')).or_default().push(i);
                }
                groups.push(racks);
            }
        }
        groups.push(zones);
        for g in &groups {
            let existing: Vec<u64> = g.values().map(|m| m.iter().map(|&i| u64::from(nodes[i].existing)).sum()).collect();
            let new: Vec<u64> = g.values().map(|m| m.iter().map(|&i| got(i)).sum()).collect();
            let mut caps: Vec<u64> = g.values().map(|m| m.iter().map(|&i| room(&nodes[i])).sum()).collect();
            let after: Vec<u64> = existing.iter().zip(&new).map(|(e, n)| e + n).collect();
            let mut model = existing.clone();
            water_fill(&mut model, &mut caps, new.iter().sum());
            prop_assert!(spread(&after) <= spread(&model), "group {:?}: {:?} vs model {:?}", g.keys().collect::<Vec<_>>(), after, model);
        }
        let capacity: u64 = nodes.iter().map(room).sum();
        prop_assert_eq!(u64::from(out.unplaced), u64::from(tasks).saturating_sub(capacity));
    }

    #[test]
    fn compatible_mode_is_deterministic(
        nodes in prop::collection::vec(node(), 1..14),
        tasks in 0u32..24,
        two_levels in any::<bool>(),
        max in 0u32..3,
    ) {
        let mut req = SpreadRequest::new("svc", tasks).preference(Preference::spread("zone")).max_replicas(max);
        if two_levels {
            req = req.preference(Preference::spread("rack"));
        }
        let s = SpreadScheduler::new();
        let forward = Cluster::from_spec(&spec(&nodes, false)).unwrap();
        let backward = Cluster::from_spec(&spec(&nodes, true)).unwrap();
        let a = s.schedule(&forward, &req).unwrap();
        let b = s.schedule(&forward, &req).unwrap();
        prop_assert_eq!(&a, &b);
        let c = s.schedule(&backward, &req).unwrap();
        prop_assert_eq!(a.per_host(), c.per_host());
        prop_assert_eq!(a.message(), c.message());
        prop_assert_eq!(a.unplaced, c.unplaced);
        // The reference's property: the batch is placed in full whenever capacity exists.
        let room: u32 = nodes
            .iter()
            .filter(|n| !n.down)
            .map(|n| if max == 0 { 1_000 } else { max.saturating_sub(n.existing) })
            .sum();
        prop_assert_eq!(a.unplaced, tasks.saturating_sub(room));
    }

    #[test]
    fn no_node_exceeds_max_replicas(
        nodes in prop::collection::vec(node(), 1..14),
        tasks in 0u32..30,
        max in 1u32..4,
        balanced in any::<bool>(),
    ) {
        let cluster = Cluster::from_spec(&spec(&nodes, false)).unwrap();
        let mode = if balanced { SpreadMode::Balanced } else { SpreadMode::SwarmCompatible };
        let req = SpreadRequest::new("svc", tasks)
            .preference(Preference::spread("zone"))
            .preference(Preference::spread("rack"))
            .max_replicas(max)
            .mode(mode);
        let out = SpreadScheduler::new().schedule(&cluster, &req).unwrap();
        for (name, n) in out.per_host() {
            let i: usize = name[1..].parse().unwrap();
            prop_assert!(nodes[i].existing + n <= max, "{} had {} and got {}", name, nodes[i].existing, n);
            prop_assert!(!nodes[i].down);
        }
    }

    #[test]
    fn weighted_spread_lands_within_one_task(
        weights in prop::collection::vec(1u32..10, 3),
        per_zone in prop::collection::vec(1usize..4, 3),
        tasks in 0u32..40,
        balanced in any::<bool>(),
    ) {
        let mut spec = ClusterSpec::default();
        for (z, &k) in per_zone.iter().enumerate() {
            for j in 0..k {
                spec.hosts.push(HostSpec::new(format!("z{z}-{j}")).label("zone", format!("z{z}")));
            }
        }
        let cluster = Cluster::from_spec(&spec).unwrap();
        let names = ["z0", "z1", "z2"];
        let pref = Preference::weights("zone", names.iter().zip(&weights).map(|(n, &w)| (*n, f64::from(w))));
        let mode = if balanced { SpreadMode::Balanced } else { SpreadMode::SwarmCompatible };
        let out = SpreadScheduler::new().schedule(&cluster, &SpreadRequest::new("svc", tasks).preference(pref).mode(mode)).unwrap();
        prop_assert_eq!(out.unplaced, 0);
        let total: u32 = weights.iter().sum();
        for (z, name) in names.iter().enumerate() {
            let count: u32 = out.per_host().iter().filter(|(h, _)| h.starts_with(name)).map(|(_, n)| n).sum();
            let target = f64::from(tasks) * f64::from(weights[z]) / f64::from(total);
            prop_assert!((f64::from(count) - target).abs() <= 1.0 + 1e-9, "{}: {} vs target {}", name, count, target);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    /// (e) Verdict reuse. With SwarmKit's pipeline only (host-local), a revisited candidate that
    /// took no task since it last passed is not checked again; adding a pass-all filter that is
    /// not host-local turns that off, and must change nothing: the same assignments, unplaced
    /// count, message and tree, in both compatible modes.
    #[test]
    fn reused_verdicts_change_nothing(
        nodes in prop::collection::vec(node(), 1..14),
        cpus in prop::collection::vec(0u32..6, 14),
        tasks in 0u32..30,
        two_levels in any::<bool>(),
        max in 0u32..4,
        stable in any::<bool>(),
    ) {
        let mut spec = spec(&nodes, false);
        for (h, &c) in spec.hosts.iter_mut().zip(&cpus) {
            *h = h.clone().vcpus(f64::from(c));
        }
        let cluster = Cluster::from_spec(&spec).unwrap();
        let mode = if stable { SpreadMode::SwarmCompatibleStable } else { SpreadMode::SwarmCompatible };
        let mut req = SpreadRequest::new("svc", tasks)
            .preference(Preference::spread("zone"))
            .resource("vcpus", 1.0)
            .max_replicas(max)
            .mode(mode);
        if two_levels {
            req = req.preference(Preference::spread("rack"));
        }
        let plain = SpreadScheduler::new().schedule(&cluster, &req).unwrap();
        let checked = SpreadScheduler::builder()
            .filter(placewise::filter::filter_fn("pass", |_, _| true))
            .build()
            .unwrap()
            .schedule(&cluster, &req)
            .unwrap();
        let names = |o: &placewise::spread::SpreadOutcome| o.selections.iter().map(|a| a.host_name.clone()).collect::<Vec<_>>();
        prop_assert_eq!(names(&plain), names(&checked));
        prop_assert_eq!(plain.unplaced, checked.unplaced);
        prop_assert_eq!(plain.message(), checked.message());
        prop_assert_eq!(&plain.tree, &checked.tree);
    }
}

/// One step of a sequence through one scratch: a batch, or an event on the snapshot.
#[derive(Debug, Clone)]
enum Step {
    /// Mode (0 compatible, 1 stable, 2 balanced), levels (0 none, 1 zone, 2 zone then rack,
    /// 3 rack), tasks, service (`svc` or `other`), ignore ineligible nodes' tasks.
    Batch { mode: u8, levels: u8, tasks: u32, other: bool, ignore: bool },
    /// Node `node % nodes` gets zone `zone` (none when 3).
    Relabel { node: usize, zone: usize },
    /// A task of the service starts on node `node % nodes`.
    Place { node: usize },
    /// Node `node % nodes` is cordoned.
    Cordon { node: usize },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0u8..3, 0u8..4, 0u32..20, prop::bool::weighted(0.3), any::<bool>())
            .prop_map(|(mode, levels, tasks, other, ignore)| Step::Batch { mode, levels, tasks, other, ignore }),
        1 => (0usize..14, 0usize..4).prop_map(|(node, zone)| Step::Relabel { node, zone }),
        1 => (0usize..14).prop_map(|node| Step::Place { node }),
        1 => (0usize..14).prop_map(|node| Step::Cordon { node }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    /// (f) Kept tree: one scratch through a sequence of batches and events answers as fresh
    /// calls do, and rebuilds its tree exactly when the snapshot or the level sources changed
    /// (a label key the snapshot never interned reads as absent, whatever its name: `rack`
    /// and `zone` on a snapshot with neither are the same level).
    #[test]
    fn a_kept_tree_answers_as_a_fresh_one(
        nodes in prop::collection::vec(node(), 1..14),
        steps in prop::collection::vec(step(), 1..12),
    ) {
        let mut cluster = Cluster::from_spec(&spec(&nodes, false)).unwrap();
        let scheduler = SpreadScheduler::new();
        let mut scratch = SpreadScratch::new();
        // The generation and level sources of the call before, while the snapshot is unchanged.
        let mut last: Option<(u64, Vec<Option<placewise::id::Symbol>>)> = None;
        for (i, step) in steps.iter().enumerate() {
            let name = |node: usize| format!("n{:02}", node % nodes.len());
            let event = match *step {
                Step::Batch { mode, levels, tasks, other, ignore } => {
                    let mode = [SpreadMode::SwarmCompatible, SpreadMode::SwarmCompatibleStable, SpreadMode::Balanced][mode as usize];
                    let mut req = SpreadRequest::new(if other { "other" } else { "svc" }, tasks)
                        .mode(mode)
                        .ignore_ineligible_tasks(ignore);
                    let keys: &[&str] = match levels {
                        0 => &[],
                        1 => &["zone"],
                        2 => &["zone", "rack"],
                        _ => &["rack"],
                    };
                    for k in keys {
                        req = req.preference(Preference::spread(k));
                    }
                    let builds = scratch.tree_builds();
                    let kept = scheduler.schedule_with(&mut scratch, &cluster, &req).unwrap();
                    let fresh = scheduler.schedule(&cluster, &req).unwrap();
                    prop_assert_eq!(&kept, &fresh, "step {}", i);
                    let sources: Vec<_> = keys.iter().map(|k| cluster.symbols().get(k)).collect();
                    let now = Some((cluster.generation(), sources));
                    prop_assert_eq!(scratch.tree_builds() - builds, u64::from(last != now), "step {}", i);
                    last = now;
                    continue;
                }
                Step::Relabel { node, zone } => {
                    let id = cluster.host_id(&name(node)).unwrap();
                    let mut host = cluster.host_to_spec(id).unwrap();
                    host.labels.insert("zone".to_owned(), label((zone < 3).then_some(zone), 'z'));
                    ClusterEvent::HostUpdated { host }
                }
                Step::Place { node } => ClusterEvent::InstancePlaced {
                    host: name(node),
                    instance: InstanceSpec::new(format!("placed-{i}")).group("svc"),
                },
                Step::Cordon { node } => ClusterEvent::HostStateChanged {
                    host: name(node),
                    change: StateChange::default().cordoned(true),
                },
            };
            cluster = cluster.apply(&event).unwrap();
        }
    }
}

/// One step of (g): a batch, or an event on the snapshot.
#[derive(Debug, Clone)]
enum NodeStep {
    /// Mode (0 compatible, 1 stable, 2 balanced), service (`svc` or `other`), tasks, memory
    /// reserved per task (none when 0), max replicas (none when 0), the node with 5 recent
    /// failures (none when 14).
    Batch { mode: u8, other: bool, tasks: u32, memory: u8, max: u32, failing: usize },
    /// A task of the service starts on node `node % nodes`.
    Place { node: usize },
    /// Node `node % nodes` gets `memory` (GiB) in all.
    Resize { node: usize, memory: u8 },
}

fn node_step() -> impl Strategy<Value = NodeStep> {
    prop_oneof![
        5 => (0u8..3, prop::bool::weighted(0.3), 0u32..20, 0u8..4, 0u32..3, 0usize..15).prop_map(
            |(mode, other, tasks, memory, max, failing)| NodeStep::Batch { mode, other, tasks, memory, max, failing }
        ),
        1 => (0usize..14).prop_map(|node| NodeStep::Place { node }),
        1 => (0usize..14, 0u8..4).prop_map(|(node, memory)| NodeStep::Resize { node, memory }),
    ]
}

/// The request of a batch step of (g) and (h): the mode by index (compatible, stable,
/// balanced), the service `svc` or `other`, and `memory` × 512 MiB a task when not 0.
fn batch_request(mode: u8, other: bool, tasks: u32, max: u32, memory: u8) -> SpreadRequest {
    let mode = [SpreadMode::SwarmCompatible, SpreadMode::SwarmCompatibleStable, SpreadMode::Balanced][mode as usize];
    let req = SpreadRequest::new(if other { "other" } else { "svc" }, tasks).mode(mode).max_replicas(max);
    if memory > 0 {
        req.resource("memory_mb", f64::from(memory) * 512.0)
    } else {
        req
    }
}

/// The event that gives node `name` `memory` GiB.
fn resized(cluster: &Cluster, name: &str, memory: u8) -> ClusterEvent {
    let id = cluster.host_id(name).unwrap();
    let host = cluster.host_to_spec(id).unwrap().resource("memory_mb", ResourceSpec::new(f64::from(memory) * 1024.0));
    ClusterEvent::HostUpdated { host }
}

/// `nodes` with `memory[i] % 4` GiB each.
fn sized_spec(nodes: &[Node], memory: &[u8]) -> ClusterSpec {
    let mut spec = spec(nodes, false);
    for (h, m) in spec.hosts.iter_mut().zip(memory) {
        *h = h.clone().resource("memory_mb", ResourceSpec::new(f64::from(m % 4) * 1024.0));
    }
    spec
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    /// (g) Kept node state: one scratch through batches that differ in service, resources,
    /// failures and limits, and through events, answers as fresh calls do.
    #[test]
    fn kept_node_state_answers_as_a_fresh_one(
        nodes in prop::collection::vec(node(), 1..14),
        memory in prop::collection::vec(0u8..4, 14),
        steps in prop::collection::vec(node_step(), 1..12),
    ) {
        let mut cluster = Cluster::from_spec(&sized_spec(&nodes, &memory)).unwrap();
        let scheduler = SpreadScheduler::new();
        let mut scratch = SpreadScratch::new();
        for (i, step) in steps.iter().enumerate() {
            let name = |node: usize| format!("n{:02}", node % nodes.len());
            let event = match *step {
                NodeStep::Batch { mode, other, tasks, memory, max, failing } => {
                    let mut req = batch_request(mode, other, tasks, max, memory)
                        .preference(Preference::spread("zone"))
                        .preference(Preference::spread("rack"));
                    if failing < nodes.len() {
                        req = req.recent_failures(name(failing), 5);
                    }
                    let kept = scheduler.schedule_with(&mut scratch, &cluster, &req).unwrap();
                    let fresh = scheduler.schedule(&cluster, &req).unwrap();
                    prop_assert_eq!(&kept, &fresh, "step {}", i);
                    continue;
                }
                NodeStep::Place { node } => ClusterEvent::InstancePlaced {
                    host: name(node),
                    instance: InstanceSpec::new(format!("placed-{i}")).group("svc"),
                },
                NodeStep::Resize { node, memory } => resized(&cluster, &name(node), memory),
            };
            cluster = cluster.apply(&event).unwrap();
        }
    }
}

/// One step of (h): a batch, or an event on the snapshot. Nodes are picked by `node % live`.
#[derive(Debug, Clone)]
enum LineageStep {
    /// Mode (0 compatible, 1 stable, 2 balanced), levels (0 none, 1 zone, 2 zone then rack,
    /// 3 rack), tasks, service (`svc` or `other`), memory reserved per task (none when 0), max
    /// replicas (none when 0), ignore ineligible nodes' tasks.
    Batch { mode: u8, levels: u8, tasks: u32, other: bool, memory: u8, max: u32, ignore: bool },
    /// The node gets zone `zone` and rack `rack` (none when 4).
    Relabel { node: usize, zone: usize, rack: usize },
    /// A node joins with zone `zone` and rack `rack` (none when 4) and `tasks` of the service.
    Add { zone: usize, rack: usize, tasks: u32 },
    /// The node leaves.
    Remove { node: usize },
    /// A task of the service, reserving 512 MiB, starts on the node.
    Place { node: usize },
    /// The node's first instance (if any) ends.
    Unplace { node: usize },
    /// The node is cordoned or not, up or down.
    State { node: usize, cordoned: bool, up: bool },
    /// The node gets `memory` (GiB) in all.
    Resize { node: usize, memory: u8 },
}

fn lineage_step() -> impl Strategy<Value = LineageStep> {
    prop_oneof![
        4 => (0u8..3, 0u8..4, 0u32..30, prop::bool::weighted(0.2), 0u8..3, 0u32..3, any::<bool>()).prop_map(
            |(mode, levels, tasks, other, memory, max, ignore)| LineageStep::Batch { mode, levels, tasks, other, memory, max, ignore }
        ),
        2 => (0usize..200, 0usize..5, 0usize..5).prop_map(|(node, zone, rack)| LineageStep::Relabel { node, zone, rack }),
        1 => (0usize..5, 0usize..5, 0u32..3).prop_map(|(zone, rack, tasks)| LineageStep::Add { zone, rack, tasks }),
        1 => (0usize..200).prop_map(|node| LineageStep::Remove { node }),
        2 => (0usize..200).prop_map(|node| LineageStep::Place { node }),
        1 => (0usize..200).prop_map(|node| LineageStep::Unplace { node }),
        1 => (0usize..200, any::<bool>(), prop::bool::weighted(0.8)).prop_map(|(node, cordoned, up)| LineageStep::State { node, cordoned, up }),
        1 => (0usize..200, 0u8..4).prop_map(|(node, memory)| LineageStep::Resize { node, memory }),
    ]
}

/// `host` with zone `zone` and rack `rack` (none when 4) in place of its own.
fn placed_in(mut host: HostSpec, zone: usize, rack: usize) -> HostSpec {
    host.labels.retain(|k, _| k != "zone" && k != "rack");
    if zone < 4 {
        host = host.label("zone", format!("z{}", zone + 1));
    }
    if rack < 4 {
        host = host.label("rack", format!("r{}", rack + 1));
    }
    host
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// (h) Updated tree and node state: one scratch through random events and batches answers
    /// as fresh calls do, builds exactly when the snapshot or levels changed, and updates its
    /// tree for the changed chunks only when it may.
    #[test]
    fn an_updated_tree_answers_as_a_fresh_one(
        nodes in prop::collection::vec(node(), 1..140),
        memory in prop::collection::vec(0u8..4, 140),
        steps in prop::collection::vec(lineage_step(), 1..16),
    ) {
        let mut spec = sized_spec(&nodes, &memory);
        // Every zone and rack value, and the two keys (as values, when no node has them yet), is
        // interned from the start: relabelling keeps the lineage comparable.
        let first = spec.hosts[0].clone().label("zone-key", "zone").label("rack-key", "rack");
        spec.hosts[0] = (1..=4).fold(first, |h, v| h.label(format!("z-{v}"), format!("z{v}")).label(format!("r-{v}"), format!("r{v}")));
        let mut cluster = Cluster::from_spec(&spec).unwrap();
        let scheduler = SpreadScheduler::new();
        let mut scratch = SpreadScratch::new();
        // The levels of the call before, and the chunks events changed since.
        let mut last: Option<u8> = None;
        let mut touched: Vec<usize> = Vec::new();
        for (i, step) in steps.iter().enumerate() {
            let live: Vec<String> = cluster.hosts().map(|(_, h)| h.name.to_string()).collect();
            let name = |node: usize| live[node % live.len()].clone();
            let event = match *step {
                LineageStep::Batch { mode, levels, tasks, other, memory, max, ignore } => {
                    let mut req = batch_request(mode, other, tasks, max, memory).ignore_ineligible_tasks(ignore);
                    let keys: &[&str] = match levels {
                        0 => &[],
                        1 => &["zone"],
                        2 => &["zone", "rack"],
                        _ => &["rack"],
                    };
                    for k in keys {
                        req = req.preference(Preference::spread(k));
                    }
                    let (builds, updates) = (scratch.tree_builds(), scratch.tree_updates());
                    let kept = scheduler.schedule_with(&mut scratch, &cluster, &req).unwrap();
                    let fresh = scheduler.schedule(&cluster, &req).unwrap();
                    prop_assert_eq!(&kept, &fresh, "step {}", i);
                    touched.sort_unstable();
                    touched.dedup();
                    let same_levels = last == Some(levels);
                    let changed = !touched.is_empty();
                    let updated = same_levels && changed && 2 * touched.len() <= cluster.chunk_count() + 1;
                    prop_assert_eq!(scratch.tree_builds() - builds, u64::from(!same_levels || changed), "step {}", i);
                    // An update needs the same topology too: an event that adds a zone or rack
                    // domain no node had yet rebuilds, which the steps here do not track.
                    prop_assert!(scratch.tree_updates() - updates <= u64::from(updated), "step {}", i);
                    (last, touched) = (Some(levels), Vec::new());
                    continue;
                }
                LineageStep::Relabel { node, zone, rack } => {
                    let id = cluster.host_id(&name(node)).unwrap();
                    ClusterEvent::HostUpdated { host: placed_in(cluster.host_to_spec(id).unwrap(), zone, rack) }
                }
                LineageStep::Add { zone, rack, tasks } => {
                    let mut host = placed_in(HostSpec::new(format!("m{i:02}")), zone, rack).resource("memory_mb", ResourceSpec::new(2048.0));
                    for t in 0..tasks {
                        host = host.instance(InstanceSpec::new(format!("m{i}-s{t}")).group("svc"));
                    }
                    touched.push(cluster.id_bound() / 64);
                    ClusterEvent::HostAdded { host }
                }
                LineageStep::Remove { node } if live.len() > 1 => ClusterEvent::HostRemoved { host: name(node) },
                LineageStep::Remove { .. } => continue,
                LineageStep::Place { node } => ClusterEvent::InstancePlaced {
                    host: name(node),
                    instance: InstanceSpec::new(format!("placed-{i}")).group("svc").resource("memory_mb", 512.0),
                },
                LineageStep::Unplace { node } => {
                    let id = cluster.host_id(&name(node)).unwrap();
                    let Some(first) = cluster.host(id).unwrap().instances.first() else { continue };
                    ClusterEvent::InstanceRemoved { host: name(node), instance: first.id.to_string() }
                }
                LineageStep::State { node, cordoned, up } => ClusterEvent::HostStateChanged {
                    host: name(node),
                    change: StateChange::default().cordoned(cordoned).up(up),
                },
                LineageStep::Resize { node, memory } => resized(&cluster, &name(node), memory),
            };
            if let Some(id) = cluster.host_id(event.host_name()) {
                touched.push(id.index() / 64);
            }
            cluster = cluster.apply(&event).unwrap();
        }
    }
}
