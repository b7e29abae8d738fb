//! Scenarios beyond the reference's vectors: the seed's datacenter / row / rack example, the
//! extensions (pack-into, weighted spread, node-level spread, hard spread), the explanation,
//! and composition with foundation filters and weighers.

use placewise::request::ExplainOptions;
use placewise::snapshot::ClusterSpec;
use placewise::snapshot::InstanceSpec;
use placewise::spread::{
    Availability, BranchNote, BranchReport, HardSpread, Preference, Role, SpreadError, SpreadMode, SpreadRequest,
    SpreadScheduler, SwarmNode, WhenUnsatisfiable,
};
use placewise::{filter_fn, weigher_fn, Cluster, HostSpec};
use std::collections::BTreeMap;

/// The seed's example: two datacenters with four rows of 20 racks, two nodes a rack.
fn datacenters() -> Cluster {
    let mut spec = ClusterSpec::default();
    for dc in 1..=2 {
        for row in 1..=4 {
            for rack in 1..=20 {
                for n in 0..2 {
                    spec.hosts.push(
                        HostSpec::new(format!("dc{dc}-row{row}-rack{rack:02}-n{n}"))
                            .label("dc", format!("dc{dc}"))
                            .label("row", format!("row{row}"))
                            .label("rack", format!("rack{rack:02}")),
                    );
                }
            }
        }
    }
    Cluster::from_spec(&spec).unwrap()
}

/// Tasks per value of the first `depth` name parts (`dc1`, `dc1-row2`, …).
fn per_prefix(per_host: &BTreeMap<&str, u32>, depth: usize) -> BTreeMap<String, u32> {
    let mut m = BTreeMap::new();
    for (h, n) in per_host {
        let key: Vec<&str> = h.split('-').take(depth).collect();
        *m.entry(key.join("-")).or_insert(0) += n;
    }
    m
}

fn three_levels(tasks: u32, mode: SpreadMode) -> SpreadRequest {
    SpreadRequest::new("web", tasks)
        .preference(Preference::spread("node.labels.dc"))
        .preference(Preference::spread("node.labels.row"))
        .preference(Preference::spread("node.labels.rack"))
        .mode(mode)
}

#[test]
fn seed_example_spreads_evenly_at_every_level() {
    let cluster = datacenters();
    for mode in [SpreadMode::SwarmCompatible, SpreadMode::Balanced] {
        let out = SpreadScheduler::new().schedule(&cluster, &three_levels(480, mode)).unwrap();
        assert!(out.is_complete());
        let hosts = out.per_host();
        assert!(per_prefix(&hosts, 1).values().all(|&n| n == 240), "{mode:?}: 240 per datacenter");
        assert!(per_prefix(&hosts, 2).values().all(|&n| n == 60), "{mode:?}: 60 per row");
        let racks = per_prefix(&hosts, 3);
        assert_eq!(racks.len(), 160);
        assert!(racks.values().all(|&n| n == 3), "{mode:?}: 3 per rack");
        assert!(hosts.values().all(|&n| n == 1 || n == 2), "{mode:?}: nodes within a rack differ by at most one");
    }
}

#[test]
fn balanced_mode_keeps_every_level_within_one_on_an_uneven_count() {
    let cluster = datacenters();
    let out = SpreadScheduler::new().schedule(&cluster, &three_levels(1001, SpreadMode::Balanced)).unwrap();
    let hosts = out.per_host();
    for depth in 1..=3 {
        let counts = per_prefix(&hosts, depth);
        let (lo, hi) = (counts.values().min().unwrap(), counts.values().max().unwrap());
        assert!(hi - lo <= 1, "depth {depth}: {lo}..{hi}");
    }
}

#[test]
fn balanced_mode_fills_the_least_loaded_branch_where_swarm_overshoots() {
    // dc1 holds 10 tasks; dc2 and dc3 none. Swarm's top-up (total 13 over 3: target 4, one
    // extra) asks dc2 for 5 first, and dc2 takes all 3; water-filling alternates.
    let mut dc1 = HostSpec::new("a").label("dc", "dc1");
    for i in 0..10 {
        dc1 = dc1.instance(InstanceSpec::new(format!("t{i}")).group("web"));
    }
    let cluster = Cluster::builder()
        .host(dc1)
        .host(HostSpec::new("b").label("dc", "dc2"))
        .host(HostSpec::new("c").label("dc", "dc3"))
        .build()
        .unwrap();
    let req = SpreadRequest::new("web", 3).preference(Preference::spread("dc"));
    let swarm = SpreadScheduler::new().schedule(&cluster, &req).unwrap();
    let balanced = SpreadScheduler::new().schedule(&cluster, &req.clone().mode(SpreadMode::Balanced)).unwrap();
    assert_eq!(swarm.per_host(), BTreeMap::from([("b", 3)]));
    assert_eq!(balanced.per_host(), BTreeMap::from([("b", 2), ("c", 1)]));
}

#[test]
fn balanced_remainders_prefer_branches_with_more_eligible_nodes() {
    // moby/swarmkit#2162: a 3-node region and a 2-node region; 5 tasks → 3 go to the bigger.
    let mut b = Cluster::builder();
    for (r, k) in [("east", 2), ("west", 3)] {
        for i in 0..k {
            b = b.host(HostSpec::new(format!("{r}{i}")).label("region", r));
        }
    }
    let cluster = b.build().unwrap();
    let req = SpreadRequest::new("web", 5).preference(Preference::spread("region")).mode(SpreadMode::Balanced);
    let out = SpreadScheduler::new().schedule(&cluster, &req).unwrap();
    let west: u32 = out.per_host().iter().filter(|(h, _)| h.starts_with("west")).map(|(_, n)| n).sum();
    assert_eq!(west, 3);
}

#[test]
fn pack_into_fills_the_busiest_branch_then_overflows() {
    let cluster = Cluster::builder()
        .host(HostSpec::new("r1a").label("rack", "r1").instance(InstanceSpec::new("t").group("db")))
        .host(HostSpec::new("r1b").label("rack", "r1"))
        .host(HostSpec::new("r2a").label("rack", "r2"))
        .host(HostSpec::new("r2b").label("rack", "r2"))
        .build()
        .unwrap();
    for mode in [SpreadMode::SwarmCompatible, SpreadMode::Balanced] {
        let req = SpreadRequest::new("db", 3).preference(Preference::pack("rack")).mode(mode);
        let out = SpreadScheduler::new().schedule(&cluster, &req).unwrap();
        assert!(out.per_host().keys().all(|h| h.starts_with("r1")), "{mode:?}: {:?}", out.per_host());
        let limited = req.max_replicas(1);
        let out = SpreadScheduler::new().schedule(&cluster, &limited).unwrap();
        assert_eq!(out.per_host(), BTreeMap::from([("r1b", 1), ("r2a", 1), ("r2b", 1)]), "{mode:?}: overflow");
    }
}

#[test]
fn spread_over_datacenters_then_pack_into_racks() {
    let cluster = datacenters();
    let req = SpreadRequest::new("web", 8)
        .preference(Preference::spread("dc"))
        .preference(Preference::pack("rack"))
        .mode(SpreadMode::Balanced);
    let out = SpreadScheduler::new().schedule(&cluster, &req).unwrap();
    let hosts = out.per_host();
    assert_eq!(per_prefix(&hosts, 1), BTreeMap::from([("dc1".into(), 4), ("dc2".into(), 4)]));
    let racks: Vec<String> =
        hosts.keys().map(|h| h.rsplit_once('-').unwrap().0.split_once('-').unwrap().1.to_owned()).collect();
    assert!(racks.iter().all(|r| r.ends_with("rack01")), "one rack per datacenter: {hosts:?}");
}

#[test]
fn weighted_spread_70_30_and_percentages() {
    let mut b = Cluster::builder();
    for dc in ["dc1", "dc2"] {
        for i in 0..10 {
            b = b.host(HostSpec::new(format!("{dc}-{i}")).label("dc", dc));
        }
    }
    b = b.host(HostSpec::new("lab-0"));
    let cluster = b.build().unwrap();
    let count = |out: &placewise::spread::SpreadOutcome, p: &str| -> u32 {
        out.per_host().iter().filter(|(h, _)| h.starts_with(p)).map(|(_, n)| n).sum()
    };
    for mode in [SpreadMode::SwarmCompatible, SpreadMode::Balanced] {
        let pct = SpreadRequest::new("web", 10).preference(Preference::percent("dc", [("dc1", 70.0), ("dc2", 30.0)]));
        let out = SpreadScheduler::new().schedule(&cluster, &pct.mode(mode)).unwrap();
        assert_eq!((count(&out, "dc1"), count(&out, "dc2"), count(&out, "lab")), (7, 3, 0), "{mode:?}");
        // 60/20 leaves 20% to the unlisted values present: here only "" (the unlabelled node).
        let rest = SpreadRequest::new("web", 10).preference(Preference::percent("dc", [("dc1", 60.0), ("dc2", 20.0)]));
        let out = SpreadScheduler::new().schedule(&cluster, &rest.mode(mode)).unwrap();
        assert_eq!((count(&out, "dc1"), count(&out, "dc2"), count(&out, "lab")), (6, 2, 2), "{mode:?}");
        let w = SpreadRequest::new("web", 8).preference(Preference::weights("dc", [("dc1", 3.0), ("dc2", 1.0)]));
        let out = SpreadScheduler::new().schedule(&cluster, &w.mode(mode)).unwrap();
        assert_eq!((count(&out, "dc1"), count(&out, "dc2")), (6, 2), "{mode:?}");
    }
}

#[test]
fn node_level_spread_is_an_opt_in_extension_of_the_balanced_mode() {
    let cluster = Cluster::builder()
        .host(HostSpec::new("a").instance(InstanceSpec::new("t").group("web")))
        .host(HostSpec::new("b"))
        .build()
        .unwrap();
    let req = SpreadRequest::new("web", 3).preference(Preference::spread("node.id"));
    // Without the opt-in both modes skip it, as SwarmKit does.
    for mode in [SpreadMode::SwarmCompatible, SpreadMode::Balanced] {
        let out = SpreadScheduler::new().schedule(&cluster, &req.clone().mode(mode)).unwrap();
        assert_eq!(out.skipped, vec!["node.id".to_owned()], "{mode:?}");
        assert!(out.levels.is_empty(), "{mode:?}");
    }
    let opted = req.clone().node_level_spread(true);
    let out = SpreadScheduler::new().schedule(&cluster, &opted.clone().mode(SpreadMode::Balanced)).unwrap();
    assert_eq!(out.per_host(), BTreeMap::from([("a", 1), ("b", 2)]));
    assert_eq!(out.levels, vec!["node.id".to_owned()]);
    // The compatible mode stays SwarmKit's.
    let compat = SpreadScheduler::new().schedule(&cluster, &opted).unwrap();
    assert_eq!(compat.skipped, vec!["node.id".to_owned()]);
}

#[test]
fn descriptors_swarmkit_ignores_are_skipped_in_both_modes_unless_strict() {
    let cluster = Cluster::builder()
        .host(HostSpec::new("a").label("dc", "1"))
        .host(HostSpec::new("b").label("dc", "2"))
        .host(HostSpec::new("c").label("dc", "2"))
        .build()
        .unwrap();
    for ignored in ["node.ip", "node.role", "node.platform.os", "node.labels.", "engine.labels.", "node.hostname"] {
        let req = SpreadRequest::new("web", 4)
            .preference(Preference::spread(ignored))
            .preference(Preference::spread("node.labels.dc"));
        for mode in [SpreadMode::SwarmCompatible, SpreadMode::SwarmCompatibleStable, SpreadMode::Balanced] {
            let out = SpreadScheduler::new().schedule(&cluster, &req.clone().mode(mode)).unwrap();
            // The same tree as SwarmKit's: the ignored descriptor adds no level.
            assert_eq!(out.skipped, vec![ignored.to_owned()], "{ignored} {mode:?}");
            assert_eq!(out.levels, vec!["node.labels.dc".to_owned()], "{ignored} {mode:?}");
            let strict = SpreadScheduler::new().schedule(&cluster, &req.clone().mode(mode).strict_descriptors(true));
            assert!(matches!(strict, Err(SpreadError::UnsupportedDescriptor { .. })), "{ignored} {mode:?}");
        }
    }
    // Outside `spread` preferences (placewise's pack and weights) nothing is skipped silently.
    let pack = SpreadRequest::new("web", 1).preference(Preference::pack("node.ip"));
    assert!(matches!(SpreadScheduler::new().schedule(&cluster, &pack), Err(SpreadError::UnsupportedDescriptor { .. })));
}

fn zones(z1: usize, z2: usize) -> Cluster {
    let mut b = Cluster::builder();
    for (z, k) in [("z1", z1), ("z2", z2)] {
        for i in 0..k {
            b = b.host(HostSpec::new(format!("{z}-{i}")).label("zone", z));
        }
    }
    b.host(HostSpec::new("nozone")).build().unwrap()
}

fn zone_counts(out: &placewise::spread::SpreadOutcome) -> (u32, u32, u32) {
    let c = |p: &str| out.per_host().iter().filter(|(h, _)| h.starts_with(p)).map(|(_, n)| *n).sum();
    (c("z1"), c("z2"), c("nozone"))
}

#[test]
fn hard_spread_never_lets_zones_drift_more_than_max_skew() {
    let cluster = zones(2, 5);
    for mode in [SpreadMode::SwarmCompatible, SpreadMode::Balanced] {
        let req = SpreadRequest::new("web", 6).max_replicas(1).hard_spread(HardSpread::new("zone", 1)).mode(mode);
        let out = SpreadScheduler::new().schedule(&cluster, &req).unwrap();
        let (z1, z2, none) = zone_counts(&out);
        assert_eq!(none, 0, "{mode:?}: a node without the key is in no domain");
        assert!(z1.abs_diff(z2) <= 1, "{mode:?}: {z1} vs {z2}");
        assert!(out.unplaced > 0);
        let m = out.message().unwrap();
        assert!(m.starts_with("no suitable node (") && m.contains("hard spread constraint not satisfied"), "{m}");
    }
    let balanced =
        SpreadRequest::new("web", 6).max_replicas(1).hard_spread(HardSpread::new("zone", 1)).mode(SpreadMode::Balanced);
    let out = SpreadScheduler::new().schedule(&cluster, &balanced).unwrap();
    assert_eq!(zone_counts(&out), (2, 3, 0), "the most the limit allows");
    assert_eq!(
        out.message(),
        Some("no suitable node (max replicas per node limit exceed; hard spread constraint not satisfied on 3 nodes)")
    );
}

#[test]
fn schedule_anyway_prefers_the_skew_but_places_everything() {
    let cluster = zones(2, 5);
    let soft = HardSpread::new("zone", 1).when_unsatisfiable(WhenUnsatisfiable::ScheduleAnyway);
    let req = SpreadRequest::new("web", 6).max_replicas(1).hard_spread(soft).mode(SpreadMode::Balanced);
    let out = SpreadScheduler::new().schedule(&cluster, &req).unwrap();
    assert!(out.is_complete());
    let (z1, z2, _) = zone_counts(&out);
    assert_eq!((z1, z2), (2, 3), "the first five keep the skew; the sixth goes anywhere");
}

#[test]
fn min_domains_forces_new_domains() {
    let cluster = zones(3, 3);
    let hard = HardSpread::new("zone", 1).min_domains(3);
    let req = SpreadRequest::new("web", 4).hard_spread(hard).mode(SpreadMode::Balanced);
    let out = SpreadScheduler::new().schedule(&cluster, &req).unwrap();
    assert_eq!(zone_counts(&out), (1, 1, 0), "two domains of three required: the minimum stays 0");
    assert_eq!(out.unplaced, 2);
}

fn find<'a>(r: &'a BranchReport, value: &str) -> &'a BranchReport {
    r.children.iter().find(|c| c.value == value).unwrap()
}

#[test]
fn the_explanation_says_where_tasks_went_and_why_a_branch_got_none() {
    let cluster = Cluster::builder()
        .host(HostSpec::new("a1").label("az", "a").instance(InstanceSpec::new("t").group("svc")))
        .host(HostSpec::new("b1").label("az", "b"))
        .host(HostSpec::new("c1").label("az", "c").label("bad", "1"))
        .host(HostSpec::new("d1").label("az", "d").memory_mb(10.0))
        .build()
        .unwrap();
    let req =
        SpreadRequest::new("svc", 2).preference(Preference::spread("az")).constraint("node.labels.bad!=1").unwrap();
    for mode in [SpreadMode::SwarmCompatible, SpreadMode::Balanced] {
        let out = SpreadScheduler::new().schedule(&cluster, &req.clone().mode(mode)).unwrap();
        let tree = &out.tree;
        assert_eq!(tree.placed, 2);
        assert_eq!(find(tree, "a").note, Some(BranchNote::AtOrAboveShare), "{mode:?}\n{tree}");
        assert_eq!(find(tree, "c").note, Some(BranchNote::NoEligibleNode), "{mode:?}\n{tree}");
        assert_eq!(find(tree, "b").placed + find(tree, "d").placed, 2);
        assert_eq!(find(tree, "a").existing, 1);
        for a in &out.selections {
            assert!(["b", "d"].contains(&a.branch[0].as_str()), "{mode:?}: task {} went to {:?}", a.task, a.branch);
        }
        let text = tree.to_string();
        assert!(text.contains("node.labels.az=\"c\"") && text.contains("no eligible node"), "{text}");
    }
    let full = SpreadRequest::new("svc", 3).preference(Preference::spread("az")).resource("memory_mb", 8.0);
    let out = SpreadScheduler::new().schedule(&cluster, &full).unwrap();
    assert_eq!(find(&out.tree, "d").placed, 1);
    let out = SpreadScheduler::new().schedule(&cluster, &full.clone().resource("memory_mb", 20.0)).unwrap();
    assert_eq!(out.unplaced, 3);
    assert_eq!(out.message(), Some("no suitable node (insufficient resources on 4 nodes)"));
}

/// The core's explanation in both modes: each filter's rejections in its own words, SwarmKit's
/// failure text as the message, the hosts left available, and every node's verdict over the
/// final state only when the request asks for them.
#[test]
fn the_outcome_carries_the_core_explanation_with_swarmkits_message() {
    let cluster = Cluster::builder()
        .host(HostSpec::new("a1").label("az", "a").memory_mb(1024.0))
        .host(HostSpec::new("a2").label("az", "a").memory_mb(64.0))
        .host(HostSpec::new("b1").label("az", "b").memory_mb(1024.0).label("bad", "1"))
        .host(HostSpec::new("b2").label("az", "b").memory_mb(64.0))
        .build()
        .unwrap();
    let req = SpreadRequest::new("svc", 3)
        .preference(Preference::spread("az"))
        .resource("memory_mb", 512.0)
        .constraint("node.labels.bad!=1")
        .unwrap()
        .max_replicas(1);
    for mode in [SpreadMode::SwarmCompatible, SpreadMode::Balanced] {
        let out = SpreadScheduler::new().schedule(&cluster, &req.clone().mode(mode)).unwrap();
        assert_eq!(out.per_host(), BTreeMap::from([("a1", 1)]), "{mode:?}");
        let e = &out.explanation;
        assert_eq!(e.hosts, 4);
        assert_eq!(e.instance, 1, "{mode:?}: the first task left");
        assert_eq!(e.message.as_deref(), out.message());
        let parts: Vec<(&str, &str, u32)> =
            e.rejections.iter().map(|r| (r.filter.as_str(), r.reason.as_str(), r.count)).collect();
        assert_eq!(
            out.message(),
            Some(
                "no suitable node (insufficient resources on 2 nodes; scheduling constraints not satisfied on 1 node; \
                 max replicas per node limit exceed)"
            ),
            "{mode:?}"
        );
        assert_eq!(
            parts,
            [
                ("resource", "insufficient resources", 2),
                ("constraint", "scheduling constraints not satisfied", 1),
                ("max replicas", "max replicas per node limit exceed", 1)
            ],
            "{mode:?}: each filter's own words"
        );
        assert_eq!(e.available, 4 - parts.iter().map(|p| p.2).sum::<u32>());
        assert!(e.verdicts.is_empty() && e.top.is_empty(), "nothing asked for");

        let asked = SpreadScheduler::new()
            .schedule(&cluster, &req.clone().mode(mode).explain(ExplainOptions::detailed(3)))
            .unwrap();
        assert_eq!(asked.selections, out.selections);
        assert_eq!(asked.message(), out.message());
        let verdicts: Vec<(&str, bool, Option<&str>)> =
            asked.explanation.verdicts.iter().map(|v| (v.host.as_str(), v.passed, v.filter.as_deref())).collect();
        assert_eq!(
            verdicts,
            [
                ("a1", false, Some("max replicas")),
                ("a2", false, Some("resource")),
                ("b1", false, Some("constraint")),
                ("b2", false, Some("resource")),
            ],
            "{mode:?}"
        );
        assert!(asked.explanation.verdicts.iter().all(|v| v.instance == Some(1)));
    }
    let mut one = req.max_replicas(0);
    one.tasks = 1;
    for mode in [SpreadMode::SwarmCompatible, SpreadMode::Balanced] {
        // Every task placed: no pass over the final state, the nodes that passed when the tree
        // was built.
        let placed = SpreadScheduler::new().schedule(&cluster, &one.clone().mode(mode)).unwrap();
        assert!(placed.is_complete() && placed.message().is_none());
        assert!(placed.explanation.rejections.is_empty());
        assert_eq!((placed.explanation.available, placed.explanation.instance), (1, 0), "{mode:?}");
        // With verdicts, the final state judged: a1 keeps room for one more.
        let asked = SpreadScheduler::new()
            .schedule(&cluster, &one.clone().mode(mode).explain(ExplainOptions::detailed(0)))
            .unwrap();
        assert_eq!(asked.selections, placed.selections);
        let e = &asked.explanation;
        let passed: Vec<&str> = e.verdicts.iter().filter(|v| v.passed).map(|v| v.host.as_str()).collect();
        assert_eq!(passed, ["a1"], "{mode:?}");
        let counts: Vec<(&str, u32)> = e.rejections.iter().map(|r| (r.filter.as_str(), r.count)).collect();
        assert_eq!(counts, [("resource", 2), ("constraint", 1)], "{mode:?}");
        assert_eq!(e.available, 1);
    }
}

#[test]
fn leaf_choice_uses_foundation_filters_and_weighers() {
    let cluster = Cluster::builder()
        .host(HostSpec::new("slow").label("zone", "z").metric("speed", 1.0))
        .host(HostSpec::new("fast").label("zone", "z").metric("speed", 9.0))
        .host(HostSpec::new("banned").label("zone", "z").metric("speed", 99.0).label("banned", "yes"))
        .build()
        .unwrap();
    let scheduler = SpreadScheduler::builder()
        .filter(filter_fn("not banned", |cx, h| cx.cluster().label(h, "banned").is_none()))
        .weigher(
            weigher_fn("speed", |cx, h| {
                let sym = cx.cluster().symbols().get("speed");
                sym.and_then(|s| cx.host(h).metric(s)).unwrap_or(0.0)
            }),
            1.0,
        )
        .build()
        .unwrap();
    for mode in [SpreadMode::SwarmCompatible, SpreadMode::Balanced] {
        let req = SpreadRequest::new("web", 3).preference(Preference::spread("zone")).mode(mode);
        let out = scheduler.schedule(&cluster, &req).unwrap();
        assert_eq!(out.selections[0].host_name, "fast", "{mode:?}: the weigher breaks the tie");
        assert_eq!(out.per_host(), BTreeMap::from([("fast", 2), ("slow", 1)]), "{mode:?}");
        let none = scheduler.schedule(&cluster, &req.clone().constraint("node.labels.banned==yes").unwrap()).unwrap();
        assert_eq!(
            none.message(),
            Some(
                "no suitable node (scheduling constraints not satisfied on 2 nodes; rejected by not banned on 1 node)"
            ),
            "{mode:?}"
        );
    }
}

#[test]
fn ignoring_ineligible_tasks_in_balanced_mode() {
    // V11's shape: a paused node in zone a holds 4 tasks.
    let cluster = Cluster::builder()
        .host(
            HostSpec::new("a1")
                .label("az", "a")
                .state(placewise::snapshot::HostState { cordoned: true, ..Default::default() })
                .instance(InstanceSpec::new("t1").group("svc"))
                .instance(InstanceSpec::new("t2").group("svc")),
        )
        .host(HostSpec::new("a2").label("az", "a"))
        .host(HostSpec::new("b1").label("az", "b"))
        .build()
        .unwrap();
    let req = SpreadRequest::new("svc", 4).preference(Preference::spread("az")).mode(SpreadMode::Balanced);
    let counted = SpreadScheduler::new().schedule(&cluster, &req).unwrap();
    assert_eq!(counted.per_host(), BTreeMap::from([("a2", 1), ("b1", 3)]));
    let ignored = SpreadScheduler::new().schedule(&cluster, &req.ignore_ineligible_tasks(true)).unwrap();
    assert_eq!(ignored.per_host(), BTreeMap::from([("a2", 2), ("b1", 2)]));
}

#[test]
fn the_snapshot_is_never_changed_and_json_round_trips() {
    let cluster = datacenters();
    let before = cluster.to_json();
    let out = SpreadScheduler::new().schedule(&cluster, &three_levels(50, SpreadMode::Balanced)).unwrap();
    assert_eq!(cluster.to_json(), before);
    let json = serde_json::to_string(&out).unwrap();
    let back: placewise::spread::SpreadOutcome = serde_json::from_str(&json).unwrap();
    assert_eq!(back, out);
}

#[test]
fn existing_tasks_given_as_counts_weigh_like_one_instance_per_task() {
    // The same cluster twice: node `a` runs 3 tasks of `web` and 1 of `db` (512 MiB each),
    // listed as instances, then given as counts with their reservation.
    let listed = Cluster::builder()
        .host((0..4).fold(HostSpec::new("a").memory_mb(4096.0).label("zone", "z1"), |h, i| {
            let group = if i < 3 { "web" } else { "db" };
            h.instance(InstanceSpec::new(format!("t{i}")).group(group).resource("memory_mb", 512.0))
        }))
        .host(HostSpec::new("b").memory_mb(4096.0).label("zone", "z2"))
        .build()
        .unwrap();
    let counted = Cluster::builder()
        .host(
            SwarmNode::new("a")
                .memory_mb(4096.0)
                .label("zone", "z1")
                .tasks("web", 2, &[("memory_mb", 512.0)])
                .tasks("web", 1, &[("memory_mb", 512.0)])
                .tasks("db", 1, &[("memory_mb", 512.0)])
                .build(),
        )
        .host(SwarmNode::new("b").memory_mb(4096.0).label("zone", "z2").build())
        .build()
        .unwrap();
    let a =
        |c: &Cluster| c.host(c.host_id("a").unwrap()).unwrap().resource(placewise::id::ResourceId::MEMORY_MB).free();
    assert_eq!(a(&listed), a(&counted), "the reservations are used on the node");
    for mode in [SpreadMode::SwarmCompatible, SpreadMode::Balanced] {
        for req in [
            SpreadRequest::new("web", 5).preference(Preference::spread("node.labels.zone")),
            SpreadRequest::new("web", 4).max_replicas(4).resource("memory_mb", 512.0),
            SpreadRequest::new("db", 3).preference(Preference::spread("node.labels.zone")),
        ] {
            let req = req.mode(mode);
            let one = SpreadScheduler::new().schedule(&listed, &req).unwrap();
            let two = SpreadScheduler::new().schedule(&counted, &req).unwrap();
            assert_eq!(one.per_host(), two.per_host(), "{req:?}");
            assert_eq!(one.unplaced, two.unplaced, "{req:?}");
        }
    }
}

#[test]
fn typed_node_fields_read_as_swarmkit_reads_them() {
    let cluster = Cluster::builder()
        .host(SwarmNode::new("m").role(Role::Manager).hostname("edge-m").engine_label("disk", "ssd").build())
        .host(SwarmNode::new("w1").hostname("edge-1").engine_label("disk", "hdd").build())
        .host(SwarmNode::new("p").availability(Availability::Pause).build())
        .host(SwarmNode::new("d").availability(Availability::Drain).build())
        .host(SwarmNode::new("x").engine_label("disk", "ssd").no_engine().ready(true).build())
        .build()
        .unwrap();
    let place = |req: SpreadRequest| -> BTreeMap<String, u32> {
        let out = SpreadScheduler::new().schedule(&cluster, &req).unwrap();
        out.per_host().into_iter().map(|(h, n)| (h.to_owned(), n)).collect()
    };
    let only = |h: &str, n: u32| BTreeMap::from([(h.to_owned(), n)]);
    assert_eq!(place(SpreadRequest::new("s", 2).constraint("node.role==manager").unwrap()), only("m", 2));
    assert_eq!(place(SpreadRequest::new("s", 2).constraint("node.hostname==edge-1").unwrap()), only("w1", 2));
    assert_eq!(place(SpreadRequest::new("s", 2).constraint("engine.labels.disk==ssd").unwrap()), only("m", 2));
    // Paused and drained nodes take nothing; the others share the batch.
    let spread = place(SpreadRequest::new("s", 6));
    assert!(!spread.contains_key("p") && !spread.contains_key("d"), "{spread:?}");
    assert_eq!(spread.values().sum::<u32>(), 6);
}
