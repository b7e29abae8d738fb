//! Seeded generators shared by the integration tests, the benches and the examples.
//!
//! Included with `#[path = "../tests/support/mod.rs"] mod support;` so it stays out of the
//! library's public API.
#![allow(dead_code)]

use placewise::filter::builtin::LabelFilter;
use placewise::filter::builtin::LabelSelectorFilter;
use placewise::rng::SplitMix64;
use placewise::snapshot::ClusterSpec;
use placewise::snapshot::HostState;
use placewise::snapshot::InstanceSpec;
use placewise::snapshot::ResourceSpec;
use placewise::{
    AvailabilityZoneFilter, Cluster, ComputeFilter, Filter, FreeResourceWeigher, HostSpec, ResourceFilter, Scheduler,
    Weigher,
};

/// `nodes` storage nodes over three zones, four disks each (1,000 GiB, 300–999 GiB available,
/// up to 499 GiB already scheduled): the cluster of the replica and volume-capacity benches.
pub(crate) fn storage_cluster(nodes: usize, seed: u64) -> Cluster {
    const G: i64 = 1 << 30;
    let mut rng = SplitMix64::new(seed);
    let mut b = Cluster::builder();
    for n in 0..nodes {
        let mut h = HostSpec::new(format!("n{n}")).zone(format!("z{}", n % 3));
        for d in 0..4 {
            let avail = 300 + rng.below(700) as i64;
            h = h.disk(
                placewise::snapshot::DiskSpec::new(format!("d{d}"), 1000 * G, avail * G)
                    .scheduled(rng.below(500) as i64 * G),
            );
        }
        b = b.host(h);
    }
    b.build().unwrap()
}

/// `nodes` identical storage nodes over three zones, each with a 2 TiB and a 1 TiB empty disk:
/// every disk choice ties, which the volume-capacity test and bench want.
pub(crate) fn uniform_storage_cluster(nodes: usize) -> Cluster {
    const G: i64 = 1 << 30;
    let mut b = Cluster::builder();
    for i in 0..nodes {
        b = b.host(
            HostSpec::new(format!("n{i:03}"))
                .zone(format!("z{}", i % 3))
                .disk(placewise::snapshot::DiskSpec::new("d1", 2048 * G, 2048 * G))
                .disk(placewise::snapshot::DiskSpec::new("d2", 1024 * G, 1024 * G)),
        );
    }
    b.build().unwrap()
}

/// Zones used by generated clusters.
pub(crate) const ZONES: [&str; 3] = ["az1", "az2", "az3"];

/// A seeded cluster of `hosts` hosts over three zones and racks of 20, with mixed sizes, some
/// hosts already loaded, and a few down, disabled or cordoned.
pub(crate) fn cluster_spec(hosts: usize, seed: u64) -> ClusterSpec {
    let mut rng = SplitMix64::new(seed);
    let mut spec = ClusterSpec::default();
    spec.topology_levels = vec!["region".into(), "zone".into(), "rack".into()];
    for i in 0..hosts {
        let zone = ZONES[i % ZONES.len()];
        let size = [16.0, 32.0, 64.0][rng.below(3)];
        let mem = size * 4096.0;
        let used = (rng.below(5) as f64) / 8.0;
        let mut h = HostSpec::new(format!("host-{i:06}"))
            .region("r1")
            .zone(zone)
            .topology("rack", format!("{zone}-rack{:03}", i / 60))
            .resource("vcpus", ResourceSpec::new(size).allocation_ratio(4.0).used((size * used * 4.0).floor()))
            .resource("memory_mb", ResourceSpec::new(mem).reserved(2048.0).used((mem * used).floor()))
            .resource("disk_gb", ResourceSpec::new(size * 50.0).used((size * 50.0 * used).floor()))
            .label("tier", ["gold", "silver", "bronze"][rng.below(3)]);
        if rng.below(10) == 0 {
            h = h.label("maintenance", "true");
        }
        if rng.below(8) == 0 {
            h = h.resource("gpu", ResourceSpec::new([1.0, 2.0, 4.0][rng.below(3)]));
        }
        match rng.below(40) {
            0 => h = h.state(HostState { up: false, ..HostState::default() }),
            1 => h = h.state(HostState { enabled: false, ..HostState::default() }),
            2 => h = h.state(HostState { cordoned: true, ..HostState::default() }),
            _ => {}
        }
        if rng.below(4) == 0 {
            h = h.instance(
                InstanceSpec::new(format!("vm-{i}"))
                    .group(["web", "db", "cache"][rng.below(3)])
                    .resource("vcpus", 2.0)
                    .resource("memory_mb", 4096.0),
            );
        }
        spec.hosts.push(h);
    }
    spec
}

/// [`cluster_spec`] built.
pub(crate) fn cluster(hosts: usize, seed: u64) -> Cluster {
    Cluster::from_spec(&cluster_spec(hosts, seed)).expect("generated clusters are valid")
}

/// Filters in run order, and weighers with their multipliers.
pub(crate) type Parts = (Vec<Box<dyn Filter>>, Vec<(Box<dyn Weigher>, f64)>);

/// The benchmark configuration's parts: five filters and three weighers with multipliers.
pub(crate) fn standard_parts(ram_multiplier: f64) -> Parts {
    let filters: Vec<Box<dyn Filter>> = vec![
        Box::new(ComputeFilter),
        Box::new(ResourceFilter::new()),
        Box::new(AvailabilityZoneFilter),
        Box::new(LabelSelectorFilter),
        Box::new(LabelFilter::new("in maintenance", "maintenance != true".parse().expect("valid expression"))),
    ];
    let weighers: Vec<(Box<dyn Weigher>, f64)> = vec![
        (Box::new(FreeResourceWeigher::ram()), ram_multiplier),
        (Box::new(FreeResourceWeigher::cpu()), 0.5),
        (Box::new(FreeResourceWeigher::disk()), 0.25),
    ];
    (filters, weighers)
}

/// The benchmark configuration as a scheduler.
pub(crate) fn standard_scheduler(ram_multiplier: f64) -> Scheduler {
    let (filters, weighers) = standard_parts(ram_multiplier);
    let mut builder = Scheduler::builder();
    for f in filters {
        builder = builder.filter_boxed(f);
    }
    for (w, m) in weighers {
        builder = builder.weigher_boxed(w, m);
    }
    builder.build().expect("valid configuration")
}

/// The memory floor of a pass over the hosts: every hot column a one-instance request of the
/// benchmarks reads (the state masks, the three free and physical columns, the zone column and
/// the label masks of `labels`, key = value pairs) read once for every host, folded with xor so
/// nothing is decided and nothing waits on floating-point arithmetic. Benchmarks report their
/// fast paths as a multiple of it, measured in the same run.
pub(crate) fn hot_floor(cluster: &Cluster, labels: &[(&str, &str)]) -> u64 {
    let symbols = cluster.symbols();
    let pairs: Vec<_> = labels.iter().filter_map(|(k, v)| Some((symbols.get(k)?, symbols.get(v)?))).collect();
    let mut acc = 0u64;
    for c in 0..cluster.chunk_count() {
        let hot = cluster.hot_chunk(c);
        acc ^= hot.live ^ hot.schedulable ^ hot.up ^ hot.enabled ^ hot.cordoned;
        for r in 0..hot.free.len() {
            for lane in 0..hot.free[r].len() {
                acc ^= hot.free[r][lane].to_bits() ^ hot.physical[r][lane].to_bits();
            }
        }
        for zone in &hot.zone {
            acc ^= u64::from(zone.0);
        }
        for &(k, v) in &pairs {
            acc ^= hot.labels.mask(k, v);
        }
    }
    acc
}
