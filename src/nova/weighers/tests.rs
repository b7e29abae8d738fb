//! The filter scheduler's weighers against hand-computed Nova weights.

use super::*;
use crate::error::ScheduleError;
use crate::explain::RankedHost;
use crate::id::HostId;
use crate::nova::request::{NovaRequest, ServerGroup, VmSpec};
use crate::nova::NovaScheduler;
use crate::request::{Cx, ExplainOptions, Request};
use crate::schedule::{Outcome, Ties};
use crate::snapshot::{AggregateSpec, Cluster, ClusterBuilder, HostSpec, InstanceSpec, ResourceSpec};
use crate::weigh::Weigher;
use serde_json::json;

/// Schedules `request` with `weighers` (in order, with their configured multipliers), ties broken
/// by the previous order as in Nova's loop, and the weight breakdown of every candidate.
fn schedule(
    cluster: &Cluster,
    weighers: Vec<(Box<dyn Weigher>, f64)>,
    request: impl Into<NovaRequest>,
) -> Result<Outcome, ScheduleError> {
    let mut builder = NovaScheduler::builder().ties(Ties::PreviousOrder);
    for (w, m) in weighers {
        builder = builder.weigher_boxed(w, m);
    }
    let scheduler = builder.build().unwrap();
    scheduler.schedule(cluster, &request.into().explain(ExplainOptions::detailed(cluster.len() as u32)))
}

/// The first instance's ranking: `(host, weight)` best first.
fn weights(p: &Outcome) -> Vec<(&str, f64)> {
    p.explanation.top.iter().map(|r| (r.host.as_str(), r.scores[0])).collect()
}

fn ranked<'p>(p: &'p Outcome, host: &str) -> &'p RankedHost {
    p.explanation.top.iter().find(|r| r.host == host).unwrap()
}

fn picks(p: &Outcome) -> Vec<&str> {
    p.selections.iter().map(|s| s.host_name.as_str()).collect()
}

fn mem(name: &str, capacity: f64, used: f64) -> HostSpec {
    HostSpec::new(name).resource("memory_mb", ResourceSpec::new(capacity).used(used))
}

fn one(w: impl Weigher + 'static, m: f64) -> Vec<(Box<dyn Weigher>, f64)> {
    vec![(Box::new(w), m)]
}

#[test]
fn equal_positive_free_ram_scores_one_and_zero_free_scores_zero() {
    let c = Cluster::builder().host(mem("a", 4096.0, 0.0)).host(mem("b", 4096.0, 0.0)).build().unwrap();
    let p = schedule(&c, one(RamWeigher, 1.0), Request::new(1)).unwrap();
    // minval 0, every value 4096: x / max = 1 for both, not min–max's 0.
    assert_eq!(weights(&p), [("a", 1.0), ("b", 1.0)]);
    assert_eq!(ranked(&p, "b").terms[0].raw, 4096.0);
    // Every value 0: max == min == 0, every host 0.
    let c = Cluster::builder().host(mem("a", 4096.0, 4096.0)).host(mem("b", 4096.0, 4096.0)).build().unwrap();
    let p = schedule(&c, one(RamWeigher, 1.0), Request::new(1)).unwrap();
    assert_eq!(weights(&p), [("a", 0.0), ("b", 0.0)]);
}

#[test]
fn negative_free_ram_counts_as_zero() {
    let c = Cluster::builder()
        .host(mem("a", 1024.0, 2048.0))
        .host(mem("b", 4096.0, 0.0))
        .host(mem("c", 4096.0, 2048.0))
        .build()
        .unwrap();
    let p = schedule(&c, one(RamWeigher, 1.0), Request::new(1)).unwrap();
    assert_eq!(weights(&p), [("b", 1.0), ("c", 0.5), ("a", 0.0)]);
    assert_eq!(ranked(&p, "a").terms[0].raw, -1024.0);
    assert_eq!(ranked(&p, "a").terms[0].normalized, 0.0);
}

fn with_aggregates(b: ClusterBuilder, key: &str) -> ClusterBuilder {
    b.aggregate(AggregateSpec::new("neg").metadata(key, "-1.0"))
        .aggregate(AggregateSpec::new("five").metadata(key, "5"))
        .aggregate(AggregateSpec::new("bad").metadata(key, "abc"))
        .aggregate(AggregateSpec::new("py").metadata(key, " 1_0 "))
        .aggregate(AggregateSpec::new("inf").metadata(key, "inf"))
}

#[test]
fn aggregate_override_is_the_smallest_python_float() {
    let c = with_aggregates(Cluster::builder(), RamWeigher::OPTION)
        .host(mem("a", 2048.0, 0.0).aggregate("neg").aggregate("five"))
        .host(mem("b", 4096.0, 0.0).aggregate("five"))
        .host(mem("c", 1024.0, 0.0))
        .host(mem("d", 1024.0, 0.0).aggregate("py"))
        .build()
        .unwrap();
    let p = schedule(&c, one(RamWeigher, 2.0), Request::new(1)).unwrap();
    // Normalised 0.5, 1, 0.25, 0.25; multipliers min(−1, 5), 5, the configured 2, float(' 1_0 ').
    assert_eq!(weights(&p), [("b", 5.0), ("d", 2.5), ("c", 0.5), ("a", -0.5)]);
    let terms: Vec<f64> = ["a", "b", "c", "d"].iter().map(|h| ranked(&p, h).terms[0].multiplier).collect();
    assert_eq!(terms, [-1.0, 5.0, 2.0, 10.0]);
}

#[test]
fn unparsable_or_infinite_override_falls_back_to_the_configured_multiplier() {
    let c = with_aggregates(Cluster::builder(), RamWeigher::OPTION)
        .host(mem("a", 2048.0, 0.0).aggregate("neg").aggregate("bad"))
        .host(mem("b", 4096.0, 0.0).aggregate("inf").aggregate("five"))
        .build()
        .unwrap();
    let p = schedule(&c, one(RamWeigher, 2.0), Request::new(1)).unwrap();
    assert_eq!(weights(&p), [("b", 2.0), ("a", 1.0)]);
    // Another weigher's key does not apply.
    let p = schedule(&c, one(DiskWeigher, 2.0), Request::new(1)).unwrap();
    assert_eq!(ranked(&p, "a").terms[0].multiplier, 2.0);
}

#[test]
fn build_failure_multiplier_is_negated_after_the_override() {
    let fails = |name: &str, n: i64| HostSpec::new(name).attribute("failed_builds", json!(n));
    let c = Cluster::builder()
        .aggregate(AggregateSpec::new("three").metadata(BuildFailureWeigher::OPTION, "3"))
        .host(fails("a", 0))
        .host(fails("b", 2))
        .host(fails("c", 4))
        .host(fails("d", 4).aggregate("three"))
        .build()
        .unwrap();
    let p = schedule(&c, one(BuildFailureWeigher, BuildFailureWeigher::DEFAULT_MULTIPLIER), Request::new(1)).unwrap();
    assert_eq!(weights(&p), [("a", 0.0), ("d", -3.0), ("b", -500_000.0), ("c", -1_000_000.0)]);
    assert_eq!(ranked(&p, "c").terms[0].multiplier, -1e6);
    assert_eq!(ranked(&p, "d").terms[0].multiplier, -3.0);
}

#[test]
#[allow(clippy::neg_multiply)] // the sums below are written term by term, as Nova computes them
fn the_host_state_weighers_sum_in_order() {
    let c = Cluster::builder()
        .host(
            HostSpec::new("a")
                .resource("vcpus", ResourceSpec::new(8.0).used(4.0).allocation_ratio(4.0))
                .resource("disk_gb", ResourceSpec::new(100.0).used(40.0))
                .attribute("num_io_ops", json!(2))
                .attribute("num_instances", json!(5))
                .attribute("hypervisor_version", json!(8_002_000)),
        )
        .host(
            HostSpec::new("b")
                .resource("vcpus", ResourceSpec::new(16.0).used(2.0))
                .resource("disk_gb", ResourceSpec::new(200.0).used(20.0))
                .attribute("num_io_ops", json!(6))
                .attribute("num_instances", json!(10)),
        )
        .build()
        .unwrap();
    let weighers: Vec<(Box<dyn Weigher>, f64)> = vec![
        (Box::new(CpuWeigher), 1.0),
        (Box::new(DiskWeigher), 1.0),
        (Box::new(IoOpsWeigher), IoOpsWeigher::DEFAULT_MULTIPLIER),
        (Box::new(NumInstancesWeigher), -1.0),
        (Box::new(HypervisorVersionWeigher), 1.0),
    ];
    let p = schedule(&c, weighers, Request::new(1)).unwrap();
    // Raw: cpu 8·4 − 4 = 28 and 16 − 2 = 14; disk 60·1024 and 180·1024; io 2 and 6; instances 5
    // and 10; version 8002000 and unset (0).
    let raw = |h: &str| ranked(&p, h).terms.iter().map(|t| t.raw).collect::<Vec<_>>();
    assert_eq!(raw("a"), [28.0, 61440.0, 2.0, 5.0, 8_002_000.0]);
    assert_eq!(raw("b"), [14.0, 184320.0, 6.0, 10.0, 0.0]);
    // Nova's sums: multiplier × normalised, in weigher order, from 0.0.
    let a = 0.0 + 1.0 * 1.0 + 1.0 * (61440.0 / 184320.0) + -1.0 * (2.0 / 6.0) + -1.0 * 0.0 + 1.0 * 1.0;
    let b = 0.0 + 1.0 * 0.5 + 1.0 * 1.0 + -1.0 * 1.0 + -1.0 * 1.0 + 1.0 * 0.0;
    assert_eq!(weights(&p), [("a", a), ("b", b)]);
}

#[test]
fn consumption_feeds_the_next_round() {
    let c = Cluster::builder()
        .host(HostSpec::new("a").attribute("num_io_ops", json!(1)))
        .host(HostSpec::new("b").attribute("num_io_ops", json!(2)))
        .build()
        .unwrap();
    // Fewer I/O ops wins; each pick adds one: a (1 vs 2), then a and b tie at 2 and a keeps its
    // place, then b (3 vs 2).
    let p = schedule(&c, one(IoOpsWeigher, -1.0), Request::new(3)).unwrap();
    assert_eq!(picks(&p), ["a", "a", "b"]);
    assert_eq!(p.selections[1].scores, [-1.0]);
    assert_eq!(p.selections[2].scores, [-2.0 / 3.0]);
}

fn metric_hosts() -> ClusterBuilder {
    Cluster::builder()
        .aggregate(AggregateSpec::new("off").metadata(MetricsWeigher::AGGREGATE_KEY, "0"))
        .host(HostSpec::new("a").metric("cpu.frequency", 1000.0))
        .host(HostSpec::new("b").metric("cpu.frequency", 2000.0).metric("numa.membw.current", 7.0))
        .host(HostSpec::new("c"))
}

#[test]
fn metrics_not_required_give_weight_of_unavailable() {
    let c = metric_hosts().host(HostSpec::new("d").aggregate("off")).build().unwrap();
    // `numa.membw.current` has ratio 0: missing on a, it is skipped. `cpu.frequency` is missing on
    // c (multiplier 1: weight_of_unavailable) and on d (multiplier 0 there: skipped, raw 0).
    let w = MetricsWeigher::new(&["cpu.frequency=1.0", "numa.membw.current=0", "junk"]).required(false);
    assert_eq!(w.problems().len(), 1);
    let p = schedule(&c, one(w, 1.0), Request::new(1)).unwrap();
    let raw: Vec<f64> = ["a", "b", "c", "d"].iter().map(|h| ranked(&p, h).terms[0].raw).collect();
    assert_eq!(raw, [1000.0, 2000.0, -10000.0, 0.0]);
    let (min, max) = (-10000.0, 2000.0);
    let norm = |x: f64| (x - min) / (max - min);
    assert_eq!(weights(&p), [("b", 1.0), ("a", norm(1000.0)), ("c", 0.0), ("d", 0.0 * norm(0.0))]);
    assert!(norm(1000.0) > 0.9, "the unavailable host squeezes the others toward 1");
    // Without the unavailable host the same two hosts spread over [0, 1].
    let c = metric_hosts().build().unwrap();
    let w = MetricsWeigher::new(&["cpu.frequency=1.0"]).required(false).weight_of_unavailable(1500.0);
    let p = schedule(&c, one(w, 1.0), Request::new(1)).unwrap();
    assert_eq!(weights(&p), [("b", 1.0), ("c", 0.5), ("a", 0.0)]);
}

#[test]
fn a_required_metric_that_is_missing_fails_the_request() {
    let c = metric_hosts().build().unwrap();
    let err = schedule(&c, one(MetricsWeigher::new(&["cpu.frequency=1.0"]), 1.0), Request::new(1)).unwrap_err();
    assert_eq!(err, ScheduleError::weigher("MetricsWeigher", "metric `cpu.frequency` not found on host `c`"));
    // Even with a ratio of 0, and for a metric no host reports.
    let err = schedule(&c, one(MetricsWeigher::new(&["nosuch=0"]), 1.0), Request::new(1)).unwrap_err();
    assert_eq!(err.to_string(), "weigher `MetricsWeigher` failed: metric `nosuch` not found on host `a`");
    // Every host reports it: weighed normally.
    let c = Cluster::builder()
        .host(HostSpec::new("a").metric("cpu.frequency", 1000.0))
        .host(HostSpec::new("b").metric("cpu.frequency", 2000.0))
        .build()
        .unwrap();
    let p = schedule(&c, one(MetricsWeigher::new(&["cpu.frequency=-1"]), 1.0), Request::new(1)).unwrap();
    assert_eq!(weights(&p), [("a", 1.0), ("b", 0.0)]);
}

#[test]
fn one_candidate_is_not_weighed() {
    // A lone host missing a required metric cannot fail: nothing is weighed, its weight is 0.
    let c = Cluster::builder().host(HostSpec::new("c")).build().unwrap();
    let p = schedule(&c, one(MetricsWeigher::new(&["cpu.frequency=1.0"]), 1.0), Request::new(1)).unwrap();
    assert_eq!(picks(&p), ["c"]);
    assert_eq!(weights(&p), [("c", 0.0)]);
    let c = Cluster::builder().host(mem("a", 4096.0, 0.0)).build().unwrap();
    let p = schedule(&c, one(RamWeigher, 1.0), Request::new(1)).unwrap();
    assert_eq!(weights(&p), [("a", 0.0)]);
    assert_eq!(p.selections[0].scores, [0.0]);
}

fn group_hosts() -> Cluster {
    Cluster::builder()
        .host(
            HostSpec::new("a")
                .instance(InstanceSpec::new("m1"))
                .instance(InstanceSpec::new("m2"))
                .instance(InstanceSpec::new("x")),
        )
        .host(HostSpec::new("b").instance(InstanceSpec::new("m3")))
        .host(HostSpec::new("c"))
        .build()
        .unwrap()
}

fn group_request(policy: &str, request_members: bool) -> NovaRequest {
    let uuids: Vec<String> = (0..3).map(|i| format!("r{i}")).collect();
    let mut members: Vec<String> = ["m1", "m2", "m3"].map(String::from).to_vec();
    if request_members {
        members.extend(uuids.iter().cloned());
    }
    let group = ServerGroup { policy: policy.into(), members, ..ServerGroup::default() };
    NovaRequest::new(Request::new(3), VmSpec { server_group: Some(group), instance_uuids: uuids, ..VmSpec::default() })
}

#[test]
fn soft_affinity_counts_members_and_earlier_picks() {
    let c = group_hosts();
    let p = schedule(&c, one(ServerGroupSoftAffinityWeigher, 1.0), group_request("soft-affinity", true)).unwrap();
    assert_eq!(weights(&p), [("a", 1.0), ("b", 0.5), ("c", 0.0)]);
    assert_eq!(picks(&p), ["a", "a", "a"]);
    // Another policy: every host weighs 0.
    let p = schedule(&c, one(ServerGroupSoftAffinityWeigher, 1.0), group_request("soft-anti-affinity", true)).unwrap();
    assert_eq!(weights(&p), [("a", 0.0), ("b", 0.0), ("c", 0.0)]);
}

#[test]
fn soft_anti_affinity_spreads_with_earlier_picks() {
    let c = group_hosts();
    let w = || one(ServerGroupSoftAntiAffinityWeigher, 1.0);
    let p = schedule(&c, w(), group_request("soft-anti-affinity", true)).unwrap();
    // Raw −2, −1, 0. Then c holds one member (−1): a 0, b and c 1, c keeps its earlier place;
    // then c holds two: b wins.
    assert_eq!(weights(&p), [("c", 1.0), ("b", 0.5), ("a", 0.0)]);
    assert_eq!(ranked(&p, "a").terms[0].raw, -2.0);
    assert_eq!(picks(&p), ["c", "c", "b"]);
    // The request's own instances are not members: earlier picks do not count.
    let p = schedule(&c, w(), group_request("soft-anti-affinity", false)).unwrap();
    assert_eq!(picks(&p), ["c", "c", "c"]);
    let p = schedule(&c, w(), group_request("anti-affinity", true)).unwrap();
    assert_eq!(weights(&p), [("a", 0.0), ("b", 0.0), ("c", 0.0)]);
}

#[test]
fn names_options_and_traits() {
    let all: Vec<(Box<dyn Weigher>, &str, f64)> = vec![
        (Box::new(RamWeigher), RamWeigher::OPTION, RamWeigher::DEFAULT_MULTIPLIER),
        (Box::new(CpuWeigher), CpuWeigher::OPTION, CpuWeigher::DEFAULT_MULTIPLIER),
        (Box::new(DiskWeigher), DiskWeigher::OPTION, DiskWeigher::DEFAULT_MULTIPLIER),
        (Box::new(IoOpsWeigher), IoOpsWeigher::OPTION, IoOpsWeigher::DEFAULT_MULTIPLIER),
        (Box::new(NumInstancesWeigher), NumInstancesWeigher::OPTION, NumInstancesWeigher::DEFAULT_MULTIPLIER),
        (
            Box::new(HypervisorVersionWeigher),
            HypervisorVersionWeigher::OPTION,
            HypervisorVersionWeigher::DEFAULT_MULTIPLIER,
        ),
        (Box::new(BuildFailureWeigher), BuildFailureWeigher::OPTION, BuildFailureWeigher::DEFAULT_MULTIPLIER),
        (Box::new(MetricsWeigher::new::<&str>(&[])), MetricsWeigher::AGGREGATE_KEY, MetricsWeigher::DEFAULT_MULTIPLIER),
        (
            Box::new(ServerGroupSoftAffinityWeigher),
            ServerGroupSoftAffinityWeigher::OPTION,
            ServerGroupSoftAffinityWeigher::DEFAULT_MULTIPLIER,
        ),
        (
            Box::new(ServerGroupSoftAntiAffinityWeigher),
            ServerGroupSoftAntiAffinityWeigher::OPTION,
            ServerGroupSoftAntiAffinityWeigher::DEFAULT_MULTIPLIER,
        ),
    ];
    let names: Vec<&str> = all.iter().map(|(w, _, _)| w.name()).collect();
    assert_eq!(
        names,
        [
            "RAMWeigher",
            "CPUWeigher",
            "DiskWeigher",
            "IoOpsWeigher",
            "NumInstancesWeigher",
            "HypervisorVersionWeigher",
            "BuildFailureWeigher",
            "MetricsWeigher",
            "ServerGroupSoftAffinityWeigher",
            "ServerGroupSoftAntiAffinityWeigher",
        ]
    );
    let defaults: Vec<(&str, f64)> = all.iter().map(|(_, o, d)| (*o, *d)).collect();
    assert_eq!(
        defaults,
        [
            ("ram_weight_multiplier", 1.0),
            ("cpu_weight_multiplier", 1.0),
            ("disk_weight_multiplier", 1.0),
            ("io_ops_weight_multiplier", -1.0),
            ("num_instances_weight_multiplier", 0.0),
            ("hypervisor_version_weight_multiplier", 1.0),
            ("build_failure_weight_multiplier", 1e6),
            ("metrics_weight_multiplier", 1.0),
            ("soft_affinity_weight_multiplier", 1.0),
            ("soft_anti_affinity_weight_multiplier", 1.0),
        ]
    );
    for (w, _, _) in &all {
        assert!(w.host_local() && w.per_host_multiplier(), "{}", w.name());
    }
    let zero_min: Vec<&str> =
        all.iter().filter(|(w, _, _)| w.bounds() == crate::weigh::Bounds::ZERO_MIN).map(|(w, _, _)| w.name()).collect();
    assert_eq!(zero_min, ["RAMWeigher", "CPUWeigher", "DiskWeigher", "IoOpsWeigher"]);
}

/// The filter scheduler's loop under the soft-anti-affinity weigher alone, as a model: each round
/// sorts the previous round's order stably by the number of member picks on each host (fewest
/// first) and takes the first; a pick counts only when the instance is a member.
fn soft_anti_affinity_model(hosts: usize, members: &[bool]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..hosts).collect();
    let mut count = vec![0usize; hosts];
    let mut picks = Vec::new();
    for &member in members {
        order.sort_by_key(|&h| count[h]);
        let h = order[0];
        picks.push(h);
        count[h] += usize::from(member);
    }
    picks
}

#[test]
fn soft_anti_affinity_counts_only_the_picks_that_are_members() {
    let cluster = Cluster::builder().host(mem("a", 1.0, 0.0)).host(mem("b", 1.0, 0.0)).host(mem("c", 1.0, 0.0)).build();
    let cluster = cluster.unwrap();
    let uuids: Vec<String> = (0..4).map(|i| format!("00000000-0000-0000-0000-{i:012}")).collect();
    // Every membership pattern of a four-instance request.
    for pattern in 0u32..16 {
        let members: Vec<bool> = (0..4).map(|j| pattern >> j & 1 == 1).collect();
        let listed = uuids.iter().zip(&members).filter(|p| *p.1).map(|p| p.0.clone()).collect();
        let group = ServerGroup { policy: "soft-anti-affinity".into(), members: listed, ..ServerGroup::default() };
        let request = NovaRequest::new(Request::new(4), VmSpec { server_group: Some(group), ..VmSpec::default() });
        let p = schedule(&cluster, one(ServerGroupSoftAntiAffinityWeigher, 1.0), request).unwrap();
        let expected: Vec<&str> = soft_anti_affinity_model(3, &members).iter().map(|&h| ["a", "b", "c"][h]).collect();
        assert_eq!(picks(&p), expected, "members {members:?}");
    }
}

/// A host reporting `numa.membw.current` without a value (and `cpu.frequency` with one).
fn without_value(name: &str, frequency: f64) -> HostSpec {
    HostSpec::new(name)
        .metric("cpu.frequency", frequency)
        .attribute(crate::nova::host_state::METRICS_WITHOUT_VALUE, json!(["numa.membw.current"]))
}

#[test]
fn a_metric_without_a_value_fails_the_weigher_that_reads_it_and_no_other() {
    let c = Cluster::builder()
        .host(HostSpec::new("a").metric("cpu.frequency", 1000.0).metric("numa.membw.current", 5.0))
        .host(without_value("b", 2000.0))
        .build()
        .unwrap();
    // Nova raises reading the value, whether or not metrics are required.
    for required in [true, false] {
        let w = MetricsWeigher::new(&["cpu.frequency=1.0", "numa.membw.current=1.0"]).required(required);
        let err = schedule(&c, one(w, 1.0), Request::new(1)).unwrap_err();
        assert_eq!(
            err,
            ScheduleError::weigher(
                "MetricsWeigher",
                "metric `numa.membw.current` has no value (Nova raises NotImplementedError) on host `b`"
            ),
            "required {required}"
        );
    }
    // A setting that does not name it weighs as usual.
    let p = schedule(&c, one(MetricsWeigher::new(&["cpu.frequency=1.0"]), 1.0), Request::new(1)).unwrap();
    assert_eq!(weights(&p), [("b", 1.0), ("a", 0.0)]);
    // Not required: a host whose sum already ended at a missing metric never reads it.
    let c = Cluster::builder()
        .host(HostSpec::new("a").metric("cpu.frequency", 1000.0).metric("numa.membw.current", 5.0))
        .host(
            HostSpec::new("b").attribute(crate::nova::host_state::METRICS_WITHOUT_VALUE, json!(["numa.membw.current"])),
        )
        .build()
        .unwrap();
    let w = MetricsWeigher::new(&["cpu.frequency=1.0", "numa.membw.current=1.0"]).required(false);
    let p = schedule(&c, one(w, 1.0), Request::new(1)).unwrap();
    assert_eq!(weights(&p), [("a", 1.0), ("b", 0.0)]);
    assert_eq!(ranked(&p, "b").terms[0].raw, -10000.0);
}

fn free_pci(name: &str, devices: f64) -> HostSpec {
    HostSpec::new(name).attribute("free_pci_devices", json!(devices))
}

#[test]
fn pci_weigher_prefers_hosts_with_fewer_free_devices() {
    // No host has PCI devices: every raw value is 100, every weight 0.
    let c = Cluster::builder().host(HostSpec::new("a")).host(HostSpec::new("b")).build().unwrap();
    let p = schedule(&c, one(PCIWeigher, PCIWeigher::DEFAULT_MULTIPLIER), Request::new(1)).unwrap();
    assert_eq!(weights(&p), [("a", 0.0), ("b", 0.0)]);
    assert_eq!(ranked(&p, "b").terms[0].raw, 100.0);
    // 100 − min(free, 99): 0 → 100, 10 → 90, 99 and 500 → 1; min–max over [1, 100].
    let c = Cluster::builder()
        .host(free_pci("many", 500.0))
        .host(free_pci("ten", 10.0))
        .host(HostSpec::new("none"))
        .host(free_pci("max", 99.0))
        .build()
        .unwrap();
    let p = schedule(&c, one(PCIWeigher, 2.0), Request::new(1)).unwrap();
    let raw: Vec<f64> = ["many", "ten", "none", "max"].iter().map(|h| ranked(&p, h).terms[0].raw).collect();
    assert_eq!(raw, [1.0, 90.0, 100.0, 1.0]);
    assert_eq!(weights(&p), [("none", 2.0), ("ten", 2.0 * (89.0 / 99.0)), ("many", 0.0), ("max", 0.0)]);
    // The aggregate override applies, as for every weigher.
    let c = with_aggregates(Cluster::builder().host(HostSpec::new("a").aggregate("neg")), PCIWeigher::AGGREGATE_KEY)
        .host(free_pci("b", 4.0))
        .build()
        .unwrap();
    let p = schedule(&c, one(PCIWeigher, 1.0), Request::new(1)).unwrap();
    assert_eq!(weights(&p), [("b", 0.0), ("a", -1.0)]);
}

#[test]
fn cross_cell_and_image_properties_weighers_add_zero_with_one_cell_and_multiplier_zero() {
    let c = with_aggregates(Cluster::builder().host(mem("a", 4096.0, 0.0).aggregate("five")), "x")
        .host(mem("b", 4096.0, 2048.0))
        .build()
        .unwrap();
    let c2 = with_aggregates(
        Cluster::builder().host(mem("a", 4096.0, 0.0).aggregate("neg")),
        CrossCellWeigher::AGGREGATE_KEY,
    )
    .host(mem("b", 4096.0, 2048.0))
    .build()
    .unwrap();
    for cluster in [&c, &c2] {
        let alone = schedule(cluster, one(RamWeigher, 1.0), Request::new(2)).unwrap();
        let with: Vec<(Box<dyn Weigher>, f64)> = vec![
            (Box::new(CrossCellWeigher), CrossCellWeigher::DEFAULT_MULTIPLIER),
            (Box::new(RamWeigher), 1.0),
            (Box::new(ImagePropertiesWeigher), ImagePropertiesWeigher::DEFAULT_MULTIPLIER),
        ];
        let p = schedule(cluster, with, Request::new(2)).unwrap();
        assert_eq!(picks(&p), picks(&alone));
        assert_eq!(weights(&p), weights(&alone));
        for host in ["a", "b"] {
            let terms = &ranked(&p, host).terms;
            assert_eq!((terms[0].raw, terms[2].raw), (0.0, 0.0), "{host}");
        }
    }
    assert_eq!(
        ImagePropertiesWeigher::check_multiplier(-0.5).unwrap_err(),
        crate::error::BuildError::NotModelled {
            name: "ImagePropertiesWeigher".into(),
            part: "`image_props_weight_multiplier` = -0.5 (not 0: the weigher reads the images of the hosts' \
                   instances from the cell database)"
                .into()
        }
    );
}

#[test]
fn the_nova_34_weighers_name_their_options_and_defaults() {
    assert_eq!(
        (PCIWeigher.name(), PCIWeigher::OPTION, PCIWeigher::DEFAULT_MULTIPLIER),
        ("PCIWeigher", "pci_weight_multiplier", 1.0)
    );
    assert_eq!(PCIWeigher::MIN_MULTIPLIER, Some(0.0));
    assert_eq!(
        (CrossCellWeigher.name(), CrossCellWeigher::OPTION, CrossCellWeigher::DEFAULT_MULTIPLIER),
        ("CrossCellWeigher", "cross_cell_move_weight_multiplier", 1e6)
    );
    assert_eq!(CrossCellWeigher::MIN_MULTIPLIER, None);
    assert_eq!(
        (ImagePropertiesWeigher.name(), ImagePropertiesWeigher::OPTION, ImagePropertiesWeigher::DEFAULT_MULTIPLIER),
        ("ImagePropertiesWeigher", "image_props_weight_multiplier", 0.0)
    );
    let all: [Box<dyn Weigher>; 3] =
        [Box::new(PCIWeigher), Box::new(CrossCellWeigher), Box::new(ImagePropertiesWeigher)];
    let per_host: Vec<bool> = all.iter().map(|w| w.per_host_multiplier()).collect();
    // Every raw value of ImagePropertiesWeigher is 0: an override could not change a weight.
    assert_eq!(per_host, [true, true, false]);
    assert!(all.iter().all(|w| w.host_local()));
}

/// Moved from the core's weigh module: the Nova weighers opt in to the `Extension`.
#[test]
fn a_plain_weigher_has_no_extension_and_is_asked_as_one() {
    use crate::snapshot::{Cluster, HostSpec};
    let cluster = Cluster::builder().host(HostSpec::new("a").memory_mb(8.0)).build().unwrap();
    let request = crate::request::Request::new(1);
    let compiled = request.compile(&cluster).unwrap();
    let overlay = crate::snapshot::Overlay::new();
    let cx = Cx::new(&cluster, &request, &compiled, &overlay, 0);
    let plain: Box<dyn Weigher> = Box::new(crate::weigh::weigher_fn("plain", |_: &Cx<'_>, _| 1.0));
    assert!(plain.extension().is_none());
    assert_eq!(plain.multiplier(&cx, HostId(0), 2.5), 2.5);
    assert!(!plain.per_host_multiplier() && !plain.multiplier_by_aggregates() && !plain.validates());
    assert!(plain.validate(&cx, &[HostId(0)]).is_ok());
    // The filter scheduler's weighers opt in, and the extension survives `Arc` and `&`.
    let ram: std::sync::Arc<dyn Weigher> = std::sync::Arc::new(RamWeigher);
    let by_ref: &dyn Weigher = &ram;
    assert!(by_ref.per_host_multiplier() && by_ref.multiplier_by_aggregates() && !by_ref.validates());
    let metrics: Box<dyn Weigher> = Box::new(MetricsWeigher::new(&["cpu=1.0"]));
    assert!(metrics.validates());
}

// Moved from the core's weigh module: the per-class multiplier memo, with the Nova weighers.
proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(100))]

    /// A multiplier kept per aggregate class is the one the weigher gives for each host, in
    /// any order the hosts are asked.
    #[test]
    fn multipliers_per_aggregate_class_match_each_hosts_own(
        sets in proptest::collection::vec(0u8..8, 1..40),
        values in proptest::collection::vec(proptest::sample::select(vec!["2.0", "-1", "0.5", "x", ""]), 3),
        order in proptest::collection::vec(proptest::num::usize::ANY, 0..80),
    ) {
        use crate::request::Request;
        use crate::snapshot::{AggregateSpec, Cluster, ClusterSpec, HostSpec, Overlay};
        let mut spec = ClusterSpec::default();
        for (a, v) in values.iter().enumerate() {
            let mut agg = AggregateSpec::new(format!("a{a}"));
            if !v.is_empty() {
                agg = agg.metadata("ram_weight_multiplier", *v).metadata("build_failure_weight_multiplier", *v);
            }
            spec.aggregates.push(agg);
        }
        for (i, set) in sets.iter().enumerate() {
            let mut h = HostSpec::new(format!("h{i}"));
            for a in 0..3 {
                if set >> a & 1 == 1 {
                    h = h.aggregate(format!("a{a}"));
                }
            }
            spec.hosts.push(h);
        }
        let cluster = Cluster::from_spec(&spec).unwrap();
        let request = Request::new(1);
        let compiled = request.compile(&cluster).unwrap();
        let overlay = Overlay::new();
        let cx = Cx::new(&cluster, &request, &compiled, &overlay, 0);
        let weighers: [&dyn Weigher; 2] = [&RamWeigher, &BuildFailureWeigher];
        let mut memo = crate::weigh::Multipliers::default();
        memo.start(weighers.len());
        for &i in order.iter().chain(&(0..sets.len()).collect::<Vec<_>>()) {
            let host = HostId::from_index(i % sets.len());
            for (w, weigher) in weighers.iter().enumerate() {
                let direct = weigher.multiplier(&cx, host, 1.5);
                proptest::prop_assert_eq!(memo.get(w, *weigher, &cx, host, 1.5), direct);
            }
        }
    }
}
