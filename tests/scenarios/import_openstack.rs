//! Importing openstack objects: the fixtures under `tests/data/import/openstack/`.
//!
//! The fixture cloud (`cloud/`) is six compute hosts described the ways an operator hands them
//! over: Placement's provider list with per-provider responses in folders and files named by
//! the provider's uuid, one provider with its sub-resources embedded, allocation candidates'
//! provider summaries, a nested provider; Nova's hypervisors over three pages of three
//! microversions (2.88 without capacity, 2.53 with servers, a legacy one with an integer id and
//! `cpu_info` as a string), services (one disabled, one forced down), aggregates with string
//! metadata and availability zones, flavors with `swap: ""` and extra specs inline and in a
//! flavor's own folder, server groups before and after 2.64. The same cloud built by hand with
//! the engine's API gives the same decisions.

use crate::support;

use placewise::filter::{filter_fn, FilterExt};
use placewise::import::{Document, ImportError};
use placewise::nova::config::SchedulerConfig;
use placewise::nova::import::{self, OpenStackCloud};
use placewise::nova::request::{Flavor, Image, NovaRequest};
use placewise::nova::NovaScheduler;
use placewise::snapshot::{AggregateSpec, ClusterSpec, HostState, InstanceSpec, ResourceSpec};
use placewise::{Cluster, HostSpec};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/import/openstack")
}

/// Every JSON file under `dir`, in path order, as the command line reads a directory.
fn documents(dir: &Path) -> Vec<Document> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for e in entries {
            if e.is_dir() {
                walk(&e, out);
            } else if e.extension().is_some_and(|x| x == "json") {
                out.push(e);
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, &mut files);
    files
        .iter()
        .map(|f| Document::from_json(f.display().to_string(), &std::fs::read_to_string(f).unwrap()).unwrap())
        .collect()
}

fn conf() -> SchedulerConfig {
    let path = data().join("nova.conf");
    let (config, _) = import::read_conf(&path.display().to_string(), &std::fs::read_to_string(&path).unwrap()).unwrap();
    config
}

fn fixture_cloud() -> OpenStackCloud {
    import::read_with(&documents(&data().join("cloud")), conf()).unwrap()
}

/// The fixture cloud built by hand, in the importer's host order (hypervisor files in path
/// order: the legacy page, then pages 1 and 2).
fn cluster_by_hand() -> Cluster {
    let r = ResourceSpec::new;
    let zone_of = |h: HostSpec, zone: &str, aggregate: Option<&str>| {
        let h = h.zone(zone);
        match aggregate {
            Some(a) => h.aggregate(a),
            None => h,
        }
    };
    let hosts = vec![
        // Only the pre-2.88 hypervisor fields: [DEFAULT] cpu_allocation_ratio = 2.0.
        zone_of(
            HostSpec::new("compute-4")
                .resource("vcpus", r(8.0).used(2.0).allocation_ratio(2.0))
                .resource("memory_mb", r(16384.0).used(2048.0))
                .resource("disk_gb", r(200.0).used(20.0))
                .attribute("num_instances", json!(1)),
            "az2",
            Some("general"),
        ),
        zone_of(
            HostSpec::new("compute-1")
                .resource("vcpus", r(16.0).used(8.0).allocation_ratio(4.0))
                .resource("memory_mb", r(65536.0).reserved(2048.0).used(16384.0))
                .resource("disk_gb", r(500.0).used(100.0))
                .label("HW_CPU_X86_AVX2", "true")
                .label("HW_CPU_X86_SSE42", "true")
                .instance(InstanceSpec::new("a0000000-0000-4000-8000-000000000001"))
                .instance(InstanceSpec::new("a0000000-0000-4000-8000-000000000002")),
            "az1",
            Some("fast"),
        ),
        zone_of(
            HostSpec::new("compute-2")
                .resource("vcpus", r(32.0).used(10.0).allocation_ratio(16.0))
                .resource("memory_mb", r(131072.0).reserved(4096.0).used(100000.0).allocation_ratio(1.5))
                .resource("disk_gb", r(1000.0))
                .resource("gpu", r(2.0).used(1.0))
                .resource("sriov_net_vf", r(8.0)),
            "az1",
            Some("fast"),
        ),
        zone_of(
            HostSpec::new("compute-3")
                .resource("vcpus", r(8.0).allocation_ratio(4.0))
                .resource("memory_mb", r(32768.0))
                .resource("disk_gb", r(200.0))
                .label("HW_CPU_X86_SSE42", "true"),
            "az2",
            Some("general"),
        ),
        zone_of(
            HostSpec::new("compute-5")
                .resource("vcpus", r(64.0))
                .resource("memory_mb", r(32768.0))
                .resource("disk_gb", r(400.0))
                .state(HostState { enabled: false, ..HostState::default() })
                .instance(InstanceSpec::new("b0000000-0000-4000-8000-000000000001")),
            "nova",
            None,
        ),
        zone_of(
            HostSpec::new("compute-6")
                .resource("vcpus", r(64.0).used(2.0))
                .resource("memory_mb", r(32768.0).used(4096.0))
                .resource("disk_gb", r(400.0).used(40.0))
                .label("HW_CPU_X86_AVX2", "true")
                .state(HostState { up: false, ..HostState::default() }),
            "nova",
            None,
        ),
    ];
    let mut fast = AggregateSpec::new("fast");
    fast.metadata = [("availability_zone", "az1"), ("ssd", "true")].map(|(k, v)| (k.into(), v.into())).into();
    let mut general = AggregateSpec::new("general");
    general.metadata = [("availability_zone", "az2"), ("ssd", "false")].map(|(k, v)| (k.into(), v.into())).into();
    let mut spec = ClusterSpec::default();
    spec.hosts = hosts;
    spec.aggregates = vec![fast, general];
    Cluster::from_spec(&spec).unwrap()
}

/// The configuration of `nova.conf` built by hand, with Placement's step first and the one
/// host whose inventories restrict units (compute-3: memory in steps of 4096 from 4096, at
/// most 2 vCPUs) as a filter of its own.
fn scheduler_by_hand() -> NovaScheduler {
    let config = SchedulerConfig::try_from(json!({
        "enabled_filters": ["ResourceFilter", "LabelSelectorFilter", "ComputeFilter",
            "AggregateInstanceExtraSpecsFilter", "ServerGroupAntiAffinityFilter", "ServerGroupAffinityFilter"],
        "weighers": ["RAMWeigher", "CPUWeigher"],
        "multipliers": {"ram_weight_multiplier": 1.0, "cpu_weight_multiplier": 0.5},
    }))
    .unwrap();
    let units = filter_fn("PlacementUnitsFilter", |cx, h| {
        if &*cx.host(h).name != "compute-3" {
            return true;
        }
        let want = |k: &str| cx.request().resources.get(k).copied().unwrap_or(0.0);
        want("vcpus") <= 2.0 && want("memory_mb") >= 4096.0 && want("memory_mb") % 4096.0 == 0.0
    })
    .local_to_host()
    .named("PlacementUnitsFilter");
    config.builder().unwrap().filter(units).build().unwrap()
}

/// The fixture's flavors built by hand, with what a request of each asks.
fn requests_by_hand(count: u32) -> Vec<(&'static str, NovaRequest)> {
    let mut out = Vec::new();
    let mut add = |name: &'static str, flavor: Flavor, f: &dyn Fn(NovaRequest) -> NovaRequest| {
        let mut r = NovaRequest::for_flavor(count, flavor);
        r.vm.image = Some(Image::default());
        out.push((name, f(r)));
    };
    add("m1.small", Flavor::new("m1.small", 2048.0, 1.0, 20.0), &|r| r);
    add("m1.large", Flavor::new("m1.large", 8192.0, 4.0, 80.0), &|r| r);
    add("m1.quarter", Flavor::new("m1.quarter", 6144.0, 3.0, 10.0).extra_spec("hw:numa_nodes", "1"), &|r| r);
    let mut ssd = Flavor::new("ssd.medium", 4096.0, 2.0, 40.0)
        .extra_spec("aggregate_instance_extra_specs:ssd", "true")
        .extra_spec("trait:HW_CPU_X86_AVX2", "required")
        .extra_spec("hw:cpu_policy", "shared");
    ssd.ephemeral_gb = 10.0;
    // Placement counts root, ephemeral and swap (512 MiB: 1 GiB) disk.
    add("ssd.medium", ssd, &|r| r.with_request(|q| q.disk_gb(51.0).selector("HW_CPU_X86_AVX2".parse().unwrap())));
    let gpu = Flavor::new("gpu.small", 4096.0, 2.0, 20.0)
        .extra_spec("resources:CUSTOM_GPU", "1")
        .extra_spec("trait:HW_CPU_X86_SSE42", "forbidden");
    add("gpu.small", gpu, &|r| {
        r.with_request(|q| q.resource("gpu", 1.0).selector("not HW_CPU_X86_SSE42".parse().unwrap()))
    });
    out
}

fn names(outcome: &placewise::schedule::Outcome) -> Vec<String> {
    outcome.selections.iter().map(|s| s.host_name.clone()).collect()
}

#[test]
fn decisions_on_the_imported_fixture_equal_decisions_on_the_cloud_built_by_hand() {
    let cloud = fixture_cloud();
    let (cluster, scheduler) = (cluster_by_hand(), scheduler_by_hand());
    for count in [1, 3, 8] {
        for (name, by_hand) in requests_by_hand(count) {
            let imported = cloud.place(name, count).unwrap();
            let expected = scheduler.schedule(&cluster, &by_hand).unwrap();
            assert_eq!(names(&imported), names(&expected), "{name} × {count}");
            assert_eq!(imported.explanation.rejections, expected.explanation.rejections, "{name} × {count}");
        }
    }
    for (name, by_hand) in requests_by_hand(1) {
        let imported = cloud.capacity(name).unwrap();
        let expected = scheduler.instances(&cluster, &by_hand).unwrap();
        assert_eq!(imported.total, expected.total, "{name}");
        let zones: Vec<(String, u64)> = expected.zones.iter().map(|z| (z.name.clone(), z.fits)).collect();
        let imported_zones: Vec<(String, u64)> = imported.zones.iter().map(|z| (z.0.clone(), z.2)).collect();
        assert_eq!(imported_zones, zones, "{name}");
        let explained = cloud.explain(name).unwrap().explanation;
        let by_hand = scheduler.schedule(&cluster, &by_hand.explain(placewise::request::ExplainOptions::detailed(20)));
        let by_hand = by_hand.unwrap().explanation;
        let verdicts = |e: &placewise::explain::Explanation| {
            e.verdicts.iter().map(|v| (v.host.clone(), v.passed, v.filter.clone())).collect::<Vec<_>>()
        };
        assert_eq!(verdicts(&explained), verdicts(&by_hand), "{name}");
    }
}

#[test]
fn capacity_is_total_less_reserved_times_the_allocation_ratio_less_usage() {
    let cloud = fixture_cloud();
    let c = &cloud.cluster;
    let id = c.host_id("compute-2").unwrap();
    let mem = c.host(id).unwrap().resource(placewise::id::ResourceId::MEMORY_MB);
    assert_eq!((mem.capacity, mem.reserved, mem.allocation_ratio, mem.used), (131072.0, 4096.0, 1.5, 100000.0));
    // m1.large (8192 MiB, 4 vCPU, 80 GiB) on compute-2 alone: memory binds at
    // ⌊((131072 − 4096) × 1.5 − 100000) / 8192⌋ = 11.
    let cap = cloud.capacity("m1.large").unwrap();
    let host = cap.instances.hosts.iter().find(|h| h.host == id).unwrap();
    assert_eq!(u64::from(host.fits), ((131072.0_f64 - 4096.0) * 1.5 - 100000.0).div_euclid(8192.0) as u64);
    // Per aggregate: the sum over its hosts.
    let fast: u64 = ["compute-1", "compute-2"]
        .iter()
        .map(|n| cap.instances.hosts.iter().find(|h| Some(h.host) == c.host_id(n)).map_or(0, |h| u64::from(h.fits)))
        .sum();
    assert_eq!(cap.aggregates.iter().find(|a| a.0 == "fast").map(|a| a.2), Some(fast));
}

#[test]
fn the_pitfalls_of_the_api_shapes_are_read_as_nova_means_them() {
    let cloud = fixture_cloud();
    let c = &cloud.cluster;
    let host = |n: &str| c.host(c.host_id(n).unwrap()).unwrap();
    // `swap: ""` (before 2.75) is no swap; an integer swap is MiB.
    assert_eq!(cloud.flavor("m1.small").unwrap().swap, 0.0);
    assert_eq!(cloud.flavor("ssd.medium").unwrap().swap, 512.0);
    // A flavor's own extra-specs response, found by its folder (the flavor's id).
    assert_eq!(cloud.flavor("g1").unwrap().extra_specs.get("resources:CUSTOM_GPU"), Some("1"));
    // The nested provider's inventory counts on its root's host.
    assert_eq!(host("compute-2").resource(c.resource_kinds().get("sriov_net_vf").unwrap()).capacity, 8.0);
    // Service state: disabled, forced down; the legacy hypervisor's integer id and cpu_info string.
    assert!(!host("compute-5").state.enabled && host("compute-5").state.up);
    assert!(!host("compute-6").state.up);
    assert!(host("compute-4").attribute("cpu_info").is_some_and(Value::is_string));
    // The hypervisor host name differs from the service host: the service host names the host.
    assert_eq!(host("compute-1").attribute("nodename"), Some(&json!("compute-1.example.org")));
    // Zones from aggregate metadata, else the default zone.
    assert_eq!(c.zone(c.host_id("compute-3").unwrap()), Some("az2"));
    assert_eq!(c.zone(c.host_id("compute-6").unwrap()), Some("nova"));
    // Server groups in both shapes, with the hosts their members run on.
    let web = cloud.server_group("web").unwrap();
    assert_eq!(
        (web.policy.as_str(), web.max_server_per_host, web.hosts.as_slice()),
        ("anti-affinity", Some(1), &["compute-1".to_owned()][..])
    );
    assert_eq!(cloud.server_group("db").unwrap().policy, "affinity");
    // The paged response, the nested provider and the NUMA spec are warned about.
    assert!(
        cloud
            .warnings
            .iter()
            .any(|w| w.to_string().ends_with("not modelled (NUMA, CPU pinning, PCI, granular groups): hw:numa_nodes")),
        "{:?}",
        cloud.warnings
    );
    let warnings: Vec<String> = cloud.warnings.iter().map(ToString::to_string).collect();
    // Every page given: no warning about the paging; the first page without the last: one.
    assert!(!warnings.iter().any(|w| w.contains("next page")), "{warnings:?}");
    let mut first_only = documents(&data().join("cloud"));
    first_only.retain(|d| d.origin.ends_with("detail-page1.json"));
    let paged = import::read(&first_only).unwrap();
    let paged: Vec<String> = paged.warnings.iter().map(ToString::to_string).collect();
    assert!(paged.iter().any(|w| w.contains("hypervisors_links") && w.contains("no last page")), "{paged:?}");
    assert!(warnings.iter().any(|w| w.contains("nested provider")), "{warnings:?}");
    // Under Nova's defaults instead of nova.conf, the hypervisor-only host over-commits vCPUs 4 times.
    let defaults = import::read(&documents(&data().join("cloud"))).unwrap();
    let vcpus = defaults.cluster.host(defaults.cluster.host_id("compute-4").unwrap()).unwrap();
    assert_eq!(vcpus.resource(placewise::id::ResourceId::VCPUS).allocation_ratio, 4.0);
}

#[test]
fn an_anti_affinity_group_keeps_its_members_apart() {
    let cloud = fixture_cloud();
    let request = cloud.request_in_group("m1.small", 3, "web").unwrap();
    let outcome = cloud.schedule(&request).unwrap();
    let hosts = names(&outcome);
    assert!(!hosts.contains(&"compute-1".to_owned()), "compute-1 runs a member already: {hosts:?}");
    let mut distinct = hosts.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), hosts.len(), "max_server_per_host 1: {hosts:?}");
}

#[test]
fn a_cloud_written_and_read_back_decides_and_counts_as_the_generated_one() {
    for seed in [3, 11] {
        let cluster = support::cluster(150, seed);
        let flavors = vec![
            Flavor::new("small", 4096.0, 2.0, 20.0),
            Flavor::new("big", 65536.0, 16.0, 400.0),
            Flavor::new("gpu", 8192.0, 4.0, 40.0).extra_spec("resources:CUSTOM_GPU", "1"),
        ];
        let written = import::write(&cluster, &flavors);
        let docs: Vec<Document> = written
            .as_object()
            .unwrap()
            .iter()
            .map(|(file, value)| Document::new(file.clone(), value.clone()))
            .collect();
        let cloud = import::read(&docs).unwrap();
        assert_eq!(cloud.cluster.len(), cluster.len());
        let scheduler = cloud.scheduler().unwrap();
        for flavor in &flavors {
            for count in [1, 7, 60] {
                let request = cloud.request(&flavor.name, count).unwrap();
                let original = scheduler.schedule(&cluster, &request).unwrap();
                let imported = cloud.schedule(&request).unwrap();
                assert_eq!(names(&imported), names(&original), "seed {seed}: {} × {count}", flavor.name);
            }
            let request = cloud.request(&flavor.name, 1).unwrap();
            let original = scheduler.instances(&cluster, &request).unwrap();
            let imported = cloud.capacity(&flavor.name).unwrap();
            assert_eq!(imported.total, original.total, "seed {seed}: {}", flavor.name);
            let zones: Vec<(String, u64)> = original.zones.iter().map(|z| (z.name.clone(), z.fits)).collect();
            let imported_zones: Vec<(String, u64)> = imported.zones.iter().map(|z| (z.0.clone(), z.2)).collect();
            assert_eq!(imported_zones, zones, "seed {seed}: {}", flavor.name);
        }
        // Once imported, writing and reading again changes nothing.
        let again = import::write(&cloud.cluster, &cloud.flavors);
        let docs: Vec<Document> =
            again.as_object().unwrap().iter().map(|(f, v)| Document::new(f.clone(), v.clone())).collect();
        let read_again = import::read(&docs).unwrap();
        assert_eq!(import::write(&read_again.cluster, &read_again.flavors), again, "seed {seed}");
    }
}

fn error_of(files: &[(&str, Value)]) -> ImportError {
    let docs: Vec<Document> = files.iter().map(|(f, v)| Document::new(*f, v.clone())).collect();
    import::read(&docs).unwrap_err()
}

#[test]
fn bad_input_is_refused_naming_the_file_the_object_and_the_field() {
    let dir = data().join("bad");
    let err = |name: &str| import::read(&documents(&dir.join(name))).unwrap_err().to_string();
    let e = err("total_not_a_number");
    assert!(e.contains("resource_providers.json: resource_provider 9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d: field `inventories.MEMORY_MB.total`: expected a number"), "{e}");
    let e = err("no_provider");
    assert!(e.contains("inventories.json: cannot tell which resource provider"), "{e}");
    let e = err("dangling_host");
    assert!(
        e.contains(
            "os-aggregates.json: aggregate edge: field `hosts` names host `compute-9`, which is not in the input"
        ),
        "{e}"
    );
    let e = err("flavor_ram");
    assert!(e.contains("flavors.json: flavor m1.odd: field `ram`: expected a whole number"), "{e}");
    let text = std::fs::read_to_string(dir.join("malformed.json")).unwrap();
    let e = Document::from_json("malformed.json", &text).unwrap_err().to_string();
    assert!(e.starts_with("malformed.json: not valid JSON: "), "{e}");
    let conf = std::fs::read_to_string(dir.join("nova.conf")).unwrap();
    let e = import::read_conf("bad/nova.conf", &conf).unwrap_err().to_string();
    assert!(e.starts_with("bad/nova.conf: section filter_scheduler: field `host_subset_size`: "), "{e}");

    // Shapes that are not cluster state, and an object given twice.
    let e = error_of(&[("server.json", json!({"server": {"name": "vm", "flavorRef": "1"}}))]).to_string();
    assert!(e.starts_with("server.json: unknown kind `an object with keys server`"), "{e}");
    let rp = json!({"uuid": "11111111-2222-4333-8444-555555555555", "name": "n", "generation": 1});
    let e = error_of(&[("a.json", rp.clone()), ("b.json", rp)]).to_string();
    assert_eq!(e, "b.json: resource_provider 11111111-2222-4333-8444-555555555555 is given twice (first in a.json)");
    let page = json!({"hypervisors": [{"hypervisor_hostname": "cn", "state": "up", "status": "enabled"}]});
    let e = error_of(&[("p1.json", page.clone()), ("p2.json", page)]).to_string();
    assert_eq!(e, "p2.json: hypervisor cn is given twice (first in p1.json)");
    let e = error_of(&[("h.json", json!({"hypervisors": [{"hypervisor_hostname": "x", "state": "sideways"}]}))]);
    assert_eq!(
        e.to_string(),
        "h.json: hypervisor x: field `state`: expected up/down or enabled/disabled, found \"sideways\""
    );
}
