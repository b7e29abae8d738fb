//! Capacity against naive models: the core count is the largest request count `schedule`
//! places in full; the volume count is a loop of engine calls on snapshots rebuilt from their
//! spec; the spread count is every batch size tried in turn.

use placewise::capacity::{self, Method, TaskMethod};
use placewise::filter::builtin::{AvailabilityZoneFilter, ComputeFilter, ResourceFilter};
use placewise::filter::{filter_fn, Filter};
use placewise::nova::filters::{GroupAffinityFilter, GroupAntiAffinityFilter, NumInstancesFilter};
use placewise::nova::request::{ServerGroup, VmSpec};
use placewise::nova::{NovaRequest, NovaScheduler};
use placewise::replica::{ReplicaScheduler, ReplicaSettings, Volume};
use placewise::request::Request;
use placewise::snapshot::{Cluster, ClusterSpec, DiskSpec, HostSpec, HostState, InstanceSpec, ResourceSpec};
use placewise::spread::{BranchReport, HardSpread, Preference, SpreadMode, SpreadRequest, SpreadScheduler};
use placewise::weigh::builtin::FreeResourceWeigher;
use proptest::prelude::*;

#[derive(Debug, Clone)]
struct GenHost {
    vcpus: u32,
    ratio: u32,
    memory: u32,
    used_memory: u32,
    zone: usize,
    rack: usize,
    down: bool,
}

fn gen_host() -> impl Strategy<Value = GenHost> {
    (1u32..9, 1u32..3, 1u32..17, 0u32..6, 0usize..3, 0usize..2, prop::bool::weighted(0.1)).prop_map(
        |(vcpus, ratio, memory, used_memory, zone, rack, down)| GenHost {
            vcpus,
            ratio,
            memory: memory * 1024,
            used_memory: (used_memory * 1024).min(memory * 1024),
            zone,
            rack,
            down,
        },
    )
}

fn build(hosts: &[GenHost]) -> Cluster {
    let mut spec = ClusterSpec::default();
    spec.topology_levels = vec!["region".into(), "zone".into(), "rack".into()];
    for (i, h) in hosts.iter().enumerate() {
        let zone = format!("z{}", h.zone);
        let mut host = HostSpec::new(format!("h{i:02}"))
            .zone(zone.clone())
            .topology("rack", format!("{zone}-r{}", h.rack))
            .resource("vcpus", ResourceSpec::new(f64::from(h.vcpus)).allocation_ratio(f64::from(h.ratio)))
            .resource("memory_mb", ResourceSpec::new(f64::from(h.memory)).used(f64::from(h.used_memory)));
        if h.down {
            host = host.state(HostState { up: false, ..HostState::default() });
        }
        spec.hosts.push(host);
    }
    Cluster::from_spec(&spec).unwrap()
}

#[derive(Debug, Clone)]
struct GenCase {
    vcpus: u32,
    memory: u32,
    zone: Option<usize>,
    /// 0: compute + resources (+ zone); 1: + per-host instance limit; 2: + legacy
    /// anti-affinity group; 3: + a filter that couples hosts (at most 5 in all); 4: legacy
    /// affinity group.
    extra: u8,
    per_host: i64,
    weigh: bool,
}

fn gen_case() -> impl Strategy<Value = GenCase> {
    (0u32..4, 0u32..5, prop::option::of(0usize..3), 0u8..5, 1i64..4, any::<bool>()).prop_map(
        |(vcpus, memory, zone, extra, per_host, weigh)| GenCase {
            vcpus: vcpus.max(u32::from(memory == 0)),
            memory: memory * 512,
            zone,
            extra,
            per_host,
            weigh,
        },
    )
}

fn scheduler(case: &GenCase) -> NovaScheduler {
    let mut b =
        NovaScheduler::builder().filter(ComputeFilter).filter(ResourceFilter::new()).filter(AvailabilityZoneFilter);
    match case.extra {
        1 => b = b.filter(NumInstancesFilter::new().max_instances_per_host(case.per_host)),
        2 => b = b.filter(GroupAntiAffinityFilter),
        3 => b = b.filter(filter_fn("five in all", |cx, _| cx.overlay().picks().len() < 5)),
        4 => b = b.filter(GroupAffinityFilter),
        _ => {}
    }
    if case.weigh {
        b = b.weigher(FreeResourceWeigher::ram(), 1.0);
    }
    b.max_count(2_000).build().unwrap()
}

fn request(case: &GenCase, count: u32) -> NovaRequest {
    let mut r = Request::new(count).vcpus(f64::from(case.vcpus)).memory_mb(f64::from(case.memory));
    if let Some(z) = case.zone {
        r = r.zone(format!("z{z}"));
    }
    if case.extra == 2 || case.extra == 4 {
        let mut group = ServerGroup::default();
        group.policy = "legacy".into();
        let mut vm = VmSpec::default();
        vm.server_group = Some(group);
        return NovaRequest::new(r, vm);
    }
    r.into()
}

/// The naive model: the largest count `schedule` places in full, asking count by count.
fn naive_instances(s: &NovaScheduler, cluster: &Cluster, case: &GenCase) -> u64 {
    let mut n = 0;
    while s.schedule(cluster, &request(case, n + 1)).unwrap().is_complete() {
        n += 1;
    }
    u64::from(n)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn instance_capacity_is_the_largest_count_schedule_places(
        hosts in prop::collection::vec(gen_host(), 1..10),
        case in gen_case(),
    ) {
        let cluster = build(&hosts);
        let s = scheduler(&case);
        let cap = s.instances(&cluster, &request(&case, 1)).unwrap();
        let naive = naive_instances(&s, &cluster, &case);
        prop_assert_eq!(cap.total, naive, "{:?}", cap);
        // One more never places.
        let over = request(&case, (naive + 1) as u32);
        prop_assert!(!s.schedule(&cluster, &over).unwrap().is_complete());
        let expect = if matches!(case.extra, 3 | 4) { Method::Replay } else { Method::PerHost };
        prop_assert_eq!(cap.method, expect);
        // The zones and racks add up to the total, and every stopped host names a stop.
        prop_assert_eq!(cap.zones.iter().map(|z| z.fits).sum::<u64>(), cap.total);
        prop_assert_eq!(cap.racks.iter().map(|z| z.fits).sum::<u64>(), cap.total);
        for h in &cap.hosts {
            prop_assert!(h.stop.is_some_and(|i| (i as usize) < cap.stops.len()));
        }
        if cap.method == Method::PerHost {
            // A host counted alone takes what `schedule` puts on it when only it may be used.
            for h in &cap.hosts {
                let target = h.host;
                let only = NovaScheduler::builder()
                    .filter(ComputeFilter)
                    .filter(ResourceFilter::new())
                    .filter(AvailabilityZoneFilter)
                    .filter(filter_fn("only", move |_, x| x == target))
                    .filter_boxed(match case.extra {
                        1 => Box::new(NumInstancesFilter::new().max_instances_per_host(case.per_host)) as Box<dyn Filter>,
                        2 => Box::new(GroupAntiAffinityFilter),
                        _ => Box::new(filter_fn("any", |_, _| true)),
                    })
                    .max_count(2_000)
                    .build()
                    .unwrap();
                let placed = only.schedule(&cluster, &request(&case, 2_000)).unwrap().selections.len() as u32;
                prop_assert_eq!(h.fits, placed, "host {:?}", h.host);
            }
        }
    }
}

#[test]
fn anti_affinity_caps_each_host_at_one() {
    let hosts: Vec<GenHost> = (0..4)
        .map(|i| GenHost { vcpus: 8, ratio: 1, memory: 8192, used_memory: 0, zone: i % 2, rack: 0, down: false })
        .collect();
    let cluster = build(&hosts);
    let case = GenCase { vcpus: 1, memory: 512, zone: None, extra: 2, per_host: 1, weigh: false };
    let cap = scheduler(&case).instances(&cluster, &request(&case, 1)).unwrap();
    assert_eq!(cap.method, Method::PerHost);
    assert_eq!(cap.total, 4);
    assert_eq!(cap.stops[cap.hosts[0].stop.unwrap() as usize].reason, "host of a group member");
}

// Replica engine: volumes one after another.

const G: i64 = 1 << 30;

fn replica_spec(disks: &[(usize, i64, i64)]) -> ClusterSpec {
    let mut spec = ClusterSpec::default();
    for (i, &(zone, max, avail)) in disks.iter().enumerate() {
        spec.hosts.push(
            HostSpec::new(format!("n{i}"))
                .zone(format!("z{zone}"))
                .disk(DiskSpec::new("d1", max * G, avail.min(max) * G))
                .disk(DiskSpec::new("d2", max * G / 2, avail.min(max) * G / 2)),
        );
    }
    spec
}

/// The naive loop: every volume scheduled on a snapshot rebuilt from its spec, with the
/// earlier volumes' replicas added to the spec's disks.
fn naive_volumes(s: &ReplicaScheduler, mut spec: ClusterSpec, volume: &Volume, limit: u32) -> u32 {
    let mut n = 0;
    while n < limit {
        let cluster = Cluster::from_spec(&spec).unwrap();
        let mut v = volume.clone();
        v.name = if n == 0 { volume.name.clone() } else { format!("{}-{n}", volume.name) };
        let out = s.schedule(&cluster, &v, &[], 0).unwrap();
        if out.condition_message().is_some() || out.placed().count() < volume.number_of_replicas as usize {
            break;
        }
        for (name, p) in out.placed() {
            let host = spec.hosts.iter_mut().find(|h| h.name == p.node_id).unwrap();
            let disk = host.disks.iter_mut().find(|d| d.name == p.disk_id).unwrap();
            disk.scheduled += volume.size;
            disk.scheduled_replicas.push(name.to_owned());
        }
        n += 1;
    }
    n
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn volume_capacity_matches_the_naive_loop(
        disks in prop::collection::vec((0usize..3, 10i64..200, 5i64..200), 1..6),
        size in 1i64..40,
        replicas in 1u32..4,
        soft in any::<bool>(),
    ) {
        let spec = replica_spec(&disks);
        let cluster = Cluster::from_spec(&spec).unwrap();
        let mut settings = ReplicaSettings::default();
        settings.replica_soft_anti_affinity = soft;
        let s = ReplicaScheduler::new(settings).unwrap();
        let volume = Volume::new("v", size * G, replicas);
        let cap = capacity::volumes(&s, &cluster, &volume, 200).unwrap();
        prop_assert_eq!(cap.total, naive_volumes(&s, spec, &volume, 200));
        prop_assert_eq!(cap.replicas.iter().map(|r| r.1).sum::<u32>(), cap.total * replicas);
        prop_assert_eq!(cap.capped, cap.stop.is_none());
    }
}

// Spread engine: batch sizes one after another.

fn ran_out(b: &BranchReport) -> bool {
    b.children.iter().any(|c| (c.eligible_nodes > 0 && c.asked > c.placed) || ran_out(c))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn task_capacity_matches_every_batch_size(
        nodes in prop::collection::vec((0usize..3, 0usize..2, 1u32..5), 1..8),
        balanced in any::<bool>(),
        two_levels in any::<bool>(),
    ) {
        let mut b = Cluster::builder();
        for (i, &(az, rack, cpus)) in nodes.iter().enumerate() {
            b = b.host(
                HostSpec::new(format!("n{i}"))
                    .label("az", format!("a{az}"))
                    .label("rack", format!("r{rack}"))
                    .vcpus(f64::from(cpus))
                    .memory_mb(4096.0),
            );
        }
        let cluster = b.build().unwrap();
        let mut request = SpreadRequest::new("svc", 1).preference(Preference::spread("node.labels.az")).resource("vcpus", 1.0);
        if two_levels {
            request = request.preference(Preference::spread("node.labels.rack"));
        }
        if balanced {
            request = request.mode(SpreadMode::Balanced);
        }
        let s = SpreadScheduler::new();
        let cap = capacity::tasks(&s, &cluster, &request, 500).unwrap();
        let total: u32 = nodes.iter().map(|n| n.2).sum();
        prop_assert_eq!(cap.total, total);
        prop_assert_eq!(cap.branches[0].capacity, total);
        // Naive: the first batch size at which a branch runs out.
        let mut naive = 0;
        loop {
            let mut r = request.clone();
            r.tasks = naive + 1;
            let out = s.schedule(&cluster, &r).unwrap();
            if naive + 1 > total || !out.is_complete() || ran_out(&out.tree) {
                break;
            }
            naive += 1;
        }
        prop_assert_eq!(cap.until_branch_full, naive);
        prop_assert_eq!(cap.first_full.is_empty(), naive == total);
    }
}

// Spread engine: the arithmetic against the bisection it replaces, field by field.

#[derive(Debug, Clone)]
struct GenNode {
    az: Option<usize>,
    rack: usize,
    cpus: u32,
    existing: u32,
    cordoned: bool,
}

fn gen_node() -> impl Strategy<Value = GenNode> {
    (prop::option::weighted(0.85, 0usize..3), 0usize..3, 0u32..5, 0u32..4, prop::bool::weighted(0.15))
        .prop_map(|(az, rack, cpus, existing, cordoned)| GenNode { az, rack, cpus, existing, cordoned })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// `tasks` (arithmetic where it applies) equals `tasks_by_bisection` (one engine call per
    /// batch size) in every field but the method, over the three modes, zero to two levels of
    /// spread, pack or weighted spread, existing tasks, cordoned nodes, nodes missing the label,
    /// max replicas, a limit that sometimes caps the count, a user filter, a hard spread limit.
    #[test]
    fn task_capacity_arithmetic_matches_the_bisection(
        nodes in prop::collection::vec(gen_node(), 1..14),
        mode in 0usize..3,
        first in 0usize..4,
        second in 0usize..3,
        max_replicas in 0u32..4,
        limit in prop_oneof![Just(500u32), 0u32..40],
        user_filter in prop::bool::weighted(0.15),
        hard in prop::bool::weighted(0.1),
    ) {
        let mut b = Cluster::builder();
        for (i, n) in nodes.iter().enumerate() {
            let mut h = HostSpec::new(format!("n{i:02}")).label("rack", format!("r{}", n.rack)).vcpus(f64::from(n.cpus));
            if let Some(az) = n.az {
                h = h.label("az", format!("a{az}"));
            }
            for t in 0..n.existing {
                h = h.instance(InstanceSpec::new(format!("n{i}-t{t}")).group("svc"));
            }
            if n.cordoned {
                h = h.state(HostState { cordoned: true, ..HostState::default() });
            }
            b = b.host(h);
        }
        let cluster = b.build().unwrap();
        let mode = [SpreadMode::SwarmCompatible, SpreadMode::SwarmCompatibleStable, SpreadMode::Balanced][mode];
        let mut request = SpreadRequest::new("svc", 1).resource("vcpus", 1.0).mode(mode).max_replicas(max_replicas);
        let level = |kind: usize, key: &str| match kind {
            1 => Some(Preference::spread(key)),
            2 => Some(Preference::pack(key)),
            3 => Some(Preference::weights(key, [("a0", 3.0), ("a1", 1.0)])),
            _ => None,
        };
        for p in [level(first, "az"), level(second, "rack")].into_iter().flatten() {
            request = request.preference(p);
        }
        if hard {
            request = request.hard_spread(HardSpread::new("rack", 1));
        }
        let s = if user_filter {
            SpreadScheduler::builder().filter(filter_fn("not n00", |cx, h| cx.cluster().host_name(h) != "n00")).build().unwrap()
        } else {
            SpreadScheduler::new()
        };
        let fast = capacity::tasks(&s, &cluster, &request, limit).unwrap();
        let slow = capacity::tasks_by_bisection(&s, &cluster, &request, limit).unwrap();
        prop_assert_eq!(slow.method, TaskMethod::Bisection);
        prop_assert_eq!(fast.total, slow.total);
        prop_assert_eq!(fast.capped, slow.capped);
        prop_assert_eq!(fast.until_branch_full, slow.until_branch_full);
        prop_assert_eq!(&fast.first_full, &slow.first_full);
        prop_assert_eq!(&fast.branches, &slow.branches);
        // The arithmetic is used wherever it is documented to apply.
        let plain_levels = mode == SpreadMode::Balanced || (first < 2 && second < 2);
        let arithmetic = !user_filter && !hard && !fast.capped && plain_levels;
        prop_assert_eq!(fast.method == TaskMethod::Arithmetic, arithmetic);
    }
}
