//! A Nova scenario drawn from fuzz bytes: the structure-aware twin of the `nova_scenario` target.
//!
//! Mutating a whole scenario's JSON text reaches a new combination of filters, weighers,
//! aggregates, hints and groups only by luck (campaign 13 in `fuzz/CAMPAIGN.md` measured it).
//! Here every byte is a choice: how many hosts, which filters in which order, which hint, which
//! value from the format's pools, so the fuzzer mutates decisions and every input is a
//! well-formed scenario. The draws follow the conformance generator
//! (`tests/data/nova/random_scenarios.py`) and go wider: every registered filter and weigher,
//! every scheduler option the reader knows, the host and request fields the generator leaves
//! out, and now and then a hostile number (negative, zero, the extremes of `i64`, `1e308`).
//! The text goes through the same checks as [`nova_scenario`].
//!
//! Within [`Scope::Nova`] the same bytes draw a scenario that Nova 34 and the reference tool run
//! deterministically and that placewise must decide as Nova does (no old names, no hostile
//! numbers, no record placewise refuses on purpose): `tests/data/nova/drawn_scenarios.sh`
//! turns such draws into conformance scenarios, with Nova's own answers.

use crate::{nova_scenario, Bytes, Checked};
use serde_json::{json, Map, Value};
use std::ops::{Deref, DerefMut};

const FILTERS: [&str; 34] = [
    "AllHostsFilter",
    "ComputeFilter",
    "AvailabilityZoneFilter",
    "ComputeCapabilitiesFilter",
    "ImagePropertiesFilter",
    "AggregateInstanceExtraSpecsFilter",
    "AggregateImagePropertiesIsolation",
    "AggregateMultiTenancyIsolation",
    "AggregateTypeAffinityFilter",
    "IsolatedHostsFilter",
    "JsonFilter",
    "RamFilter",
    "AggregateRamFilter",
    "CoreFilter",
    "AggregateCoreFilter",
    "DiskFilter",
    "AggregateDiskFilter",
    "SimpleCIDRAffinityFilter",
    "DifferentHostFilter",
    "SameHostFilter",
    "ServerGroupAntiAffinityFilter",
    "ServerGroupAffinityFilter",
    "IoOpsFilter",
    "AggregateIoOpsFilter",
    "NumInstancesFilter",
    "AggregateNumInstancesFilter",
    "MetricsFilter",
    "RetryFilter",
    "TrustedFilter",
    "TypeAffinityFilter",
    "GroupAntiAffinityFilter",
    "GroupAffinityFilter",
    "nova.scheduler.filters.ram_filter.RamFilter",
    "NoSuchFilter",
];

/// How many of [`FILTERS`], from the first, Nova 34 and the reference tool know: the rest are
/// filters Nova no longer ships, a dotted path and an unknown name.
const NOVA_FILTERS: usize = 27;

/// Weighers with the option that holds their multiplier.
const WEIGHERS: [(&str, &str); 14] = [
    ("RAMWeigher", "ram_weight_multiplier"),
    ("CPUWeigher", "cpu_weight_multiplier"),
    ("DiskWeigher", "disk_weight_multiplier"),
    ("IoOpsWeigher", "io_ops_weight_multiplier"),
    ("NumInstancesWeigher", "num_instances_weight_multiplier"),
    ("HypervisorVersionWeigher", "hypervisor_version_weight_multiplier"),
    ("BuildFailureWeigher", "build_failure_weight_multiplier"),
    ("MetricsWeigher", "metrics_weight_multiplier"),
    ("ServerGroupSoftAffinityWeigher", "soft_affinity_weight_multiplier"),
    ("ServerGroupSoftAntiAffinityWeigher", "soft_anti_affinity_weight_multiplier"),
    ("RamWeigher", "ram_weight_multiplier"),
    ("FreeRamWeigher", "ram_weight_multiplier"),
    ("FreeCpuWeigher", "cpu_weight_multiplier"),
    ("FreeDiskWeigher", "disk_weight_multiplier"),
];

/// How many of [`WEIGHERS`], from the first, Nova 34 knows: the rest are old names.
const NOVA_WEIGHERS: usize = 10;

const AZS: [&str; 4] = ["az1", "az2", "nova", "az3"];
const ARCHES: [[&str; 3]; 5] = [
    ["x86_64", "qemu", "hvm"],
    ["aarch64", "qemu", "hvm"],
    ["x86_64", "xen", "xen"],
    ["i686", "qemu", "hvm"],
    ["x86_64", "kvm", "exe"],
];
const FEATURES: [&str; 5] = ["sse4.2", "avx", "avx2", "aes", "vmx"];
const METRICS: [&str; 5] = ["cpu.frequency", "cpu.percent", "cpu.user.time", "numa.membw.max", "cpu.idle.percent"];
const PROJECTS: [&str; 3] = ["tenant-a", "tenant-b", "tenant-c"];
const FLAVORS: [&str; 2] = ["m1.small", "m1.big"];
const IMAGES: [&str; 2] = ["11111111-2222-3333-4444-555555555555", "99999999-2222-3333-4444-555555555555"];
/// Instance ids already running somewhere (`e…`), and the request's own default ids.
const EXISTING: [&str; 8] = [
    "e0000000-0000-4000-8000-000000000000",
    "e0000001-0000-4000-8000-000000000000",
    "e0000002-0000-4000-8000-000000000000",
    "e0000003-0000-4000-8000-000000000000",
    "e0000004-0000-4000-8000-000000000000",
    "e0000005-0000-4000-8000-000000000000",
    "e0000006-0000-4000-8000-000000000000",
    "e0000007-0000-4000-8000-000000000000",
];
const OWN: [&str; 4] = [
    "00000000-0000-0000-0000-000000000000",
    "00000000-0000-0000-0000-000000000001",
    "00000000-0000-0000-0000-000000000002",
    "00000000-0000-0000-0000-000000000003",
];
const HOSTILE_INTS: [i64; 6] = [0, -1, i64::MAX, i64::MIN, 1 << 53, -(1 << 40)];

/// Which scenarios a draw may give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Everything the reader reads or refuses: old and unknown names, placewise's own options,
    /// hostile numbers, inconsistent records. The fuzz target's draws.
    Wide,
    /// Only what Nova 34 and the reference tool (`../shared/nova-reference`, with its emulated
    /// legacy filters) run deterministically and what placewise reads as Nova does: Nova's own
    /// filter and weigher names, no hostile numbers, no free amount above its total, valid IP
    /// addresses, no aggregate member that is no host, `host_subset_size` 1, and none of
    /// placewise's own options. For conformance scenarios (`tests/data/nova/drawn_*`).
    Nova,
}

/// The fuzz bytes and the scope of the draw.
struct Draw<'a> {
    bytes: Bytes<'a>,
    scope: Scope,
}

impl<'a> Deref for Draw<'a> {
    type Target = Bytes<'a>;

    fn deref(&self) -> &Bytes<'a> {
        &self.bytes
    }
}

impl DerefMut for Draw<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.bytes
    }
}

impl Draw<'_> {
    fn wide(&self) -> bool {
        self.scope == Scope::Wide
    }
}

/// `k` times in `n`; a zero byte (past the end of the input) says no.
fn chance(b: &mut Draw<'_>, k: u8, n: u8) -> bool {
    b.byte() % n >= n - k
}

/// A count in `lo..=hi`.
fn range(b: &mut Draw<'_>, lo: u8, hi: u8) -> usize {
    usize::from(lo + b.byte() % (hi - lo + 1))
}

/// One of `pool`, or once in sixteen draws a hostile integer.
fn int(b: &mut Draw<'_>, pool: &[i64]) -> i64 {
    let at = b.byte();
    if at >= 240 && b.wide() {
        HOSTILE_INTS[usize::from(at - 240) % HOSTILE_INTS.len()]
    } else {
        pool[usize::from(at) % pool.len()]
    }
}

/// One of `pool` as a JSON number, or once in sixteen draws a hostile one (`1e308`, a
/// negative; NaN and infinity come out as `null`).
fn number(b: &mut Draw<'_>, pool: &[f64]) -> Value {
    if b.byte() >= 240 && b.wide() {
        json!(b.amount())
    } else {
        json!(b.pick(pool))
    }
}

/// Up to `most` distinct items of `items`, in the order the bytes pick them.
fn sample<T: Clone>(b: &mut Draw<'_>, items: &[T], least: u8, most: u8) -> Vec<T> {
    let mut left = items.to_vec();
    let n = range(b, least, most).min(left.len());
    (0..n).map(|_| left.remove(usize::from(b.byte()) % left.len())).collect()
}

fn host_entry(b: &mut Draw<'_>, name: &str, i: usize, nodename: Option<String>) -> Value {
    let arch = b.pick(&ARCHES);
    let ram = int(b, &[4096, 8192, 16384, 512]);
    let vcpus = int(b, &[2, 4, 8, 1]);
    let disk = int(b, &[40, 80, 200, 0]);
    let mut free_ram = int(b, &[ram, ram.saturating_sub(1024), ram / 2, 2048, 1024, 512, -256]);
    if !b.wide() {
        free_ram = free_ram.min(ram);
    }
    let mut h = Map::new();
    h.insert("name".into(), json!(name));
    h.insert("total_usable_ram_mb".into(), json!(ram));
    h.insert("free_ram_mb".into(), json!(free_ram));
    h.insert("vcpus_total".into(), json!(vcpus));
    h.insert("vcpus_used".into(), json!(int(b, &[0, 1, 2, 4, 8, 10])));
    match b.byte() % 4 {
        0 | 1 => {
            h.insert("total_usable_disk_gb".into(), json!(disk));
            let mut free = int(b, &[disk, disk / 2, 10, 0]);
            if !b.wide() {
                free = free.min(disk);
            }
            h.insert("free_disk_mb".into(), json!(free.saturating_mul(1024)));
        }
        2 => {
            h.insert("free_disk_gb".into(), json!(int(b, &[disk, disk / 2, 10, 0])));
            if chance(b, 1, 2) {
                h.insert("disk_available_least_gb".into(), json!(int(b, &[disk, 5, -3])));
            }
        }
        _ => {
            h.insert("free_disk_mb".into(), json!(int(b, &[disk, 10, 0]).saturating_mul(1024)));
        }
    }
    h.insert("hypervisor_type".into(), json!(if arch[1] == "xen" { "Xen" } else { "QEMU" }));
    h.insert("hypervisor_version".into(), json!(int(b, &[6002000, 8002000, 9001000])));
    // Once in 32 hosts of a wide draw, an address that is no IP address (an octet above 255).
    let at = b.byte();
    let last = 1 + i % 4 + if at >= 248 && b.wide() { 255 } else { [0, 0, 100, 250][usize::from(at) % 4] };
    h.insert("host_ip".into(), json!(format!("10.0.{}.{last}", i / 4)));
    let features = sample(b, &FEATURES, 0, 3);
    h.insert(
        "cpu_info".into(),
        match b.byte() % 8 {
            0 => json!(format!("{{\"arch\": \"{}\"}}", arch[0])),
            1 => Value::Null,
            _ => json!({"arch": arch[0], "features": features, "topology": {"cores": b.pick(&[2, 4]), "sockets": 1}}),
        },
    );
    h.insert("supported_instances".into(), json!([arch]));
    h.insert("num_instances".into(), json!(int(b, &[0, 1, 2, 3, 5, 6])));
    h.insert("num_io_ops".into(), json!(int(b, &[0, 1, 2, 3, 4])));
    h.insert("failed_builds".into(), json!(int(b, &[0, 0, 0, 1, 3])));
    let mut stats = json!({"rack": format!("r{}", b.byte() % 3)});
    if chance(b, 1, 4) {
        stats["num_proj_tenant-a"] = json!(b.pick(&["1", "2"]));
    }
    h.insert("stats".into(), stats);
    if let Some(node) = nodename {
        h.insert("nodename".into(), json!(node));
    }
    for key in ["cpu_allocation_ratio", "ram_allocation_ratio", "disk_allocation_ratio"] {
        if chance(b, 1, 5) {
            h.insert(key.into(), number(b, &[0.5, 1.0, 1.5, 16.0]));
        }
    }
    if chance(b, 4, 5) {
        let metrics: Map<String, Value> = sample(b, &METRICS, 1, 3)
            .into_iter()
            .map(|m| (m.into(), number(b, &[0.25, 0.5, 2400.0, 3000.0])))
            .collect();
        h.insert("metrics".into(), Value::Object(metrics));
    }
    if chance(b, 1, 2) {
        h.insert("availability_zone".into(), json!(b.pick(&AZS)));
    }
    if chance(b, 1, 3) {
        h.insert("instances".into(), json!(sample(b, &EXISTING, 1, 2)));
    }
    for key in ["enabled", "up", "forced_down"] {
        if chance(b, 1, 10) {
            h.insert(key.into(), json!(key == "forced_down"));
        }
    }
    if chance(b, 1, 8) {
        h.insert("trust_level".into(), json!(b.pick(&["trusted", "untrusted", "unknown"])));
    }
    if chance(b, 1, 16) {
        h.insert("disabled_reason".into(), json!("maintenance"));
    }
    if chance(b, 1, 16) {
        h.insert("uuid".into(), json!(format!("c0000000-0000-4000-8000-00000000000{}", i % 10)));
    }
    Value::Object(h)
}

fn aggregates(b: &mut Draw<'_>, services: &[String]) -> Value {
    let menu: [(&str, &[&str]); 17] = [
        ("ssd", &["true", "false"]),
        ("speed", &["fast", "slow"]),
        ("filter_tenant_id", &["tenant-a", "tenant-b", "tenant-a,tenant-c", ""]),
        ("instance_type", &["m1.small", "m1.big", "m1.small, m1.big"]),
        ("max_io_ops_per_host", &["1", "2", "bad"]),
        ("max_instances_per_host", &["2", "4", "-1"]),
        ("ram_allocation_ratio", &["0.5", "1.5", "x"]),
        ("cpu_allocation_ratio", &["2.0", "0"]),
        ("disk_allocation_ratio", &["0.5", "1e308"]),
        ("ram_weight_multiplier", &["-1.0", "2.5"]),
        ("cpu_weight_multiplier", &["0.5", "nan"]),
        ("hw_architecture", &["x86_64", "aarch64"]),
        ("img_hv_type", &["qemu", "xen"]),
        ("os_type", &["linux", "windows"]),
        ("availability_zone", &["az1", "az3"]),
        ("trust:trusted_host", &["trusted", "untrusted"]),
        ("isolation.hw_architecture", &["x86_64"]),
    ];
    let mut out = Vec::new();
    for k in 0..b.byte() % 5 {
        let mut metadata = Map::new();
        for (key, values) in sample(b, &menu, 1, 3) {
            let mut value = b.pick(values);
            // Nova weighs with a NaN multiplier override, where placewise deliberately keeps
            // the configured one (`nova::weighers::aggregate_multiplier`), and raises on an
            // infinite disk limit.
            if !b.wide() && matches!(value, "nan" | "1e308") {
                value = values[0];
            }
            metadata.insert(key.into(), json!(value));
        }
        let mut hosts = sample(b, services, 0, 3);
        hosts.sort();
        // Now and then a member that is no host of the scenario.
        let hosts = if chance(b, 1, 32) && b.wide() { json!(["nowhere"]) } else { json!(hosts) };
        out.push(json!({"name": format!("agg{k}"), "metadata": metadata, "hosts": hosts}));
    }
    Value::Array(out)
}

fn extra_specs(b: &mut Draw<'_>) -> Value {
    let menu: [(&str, &[&str]); 12] = [
        ("capabilities:cpu_info:arch", &["x86_64", "s== aarch64"]),
        ("capabilities:cpu_info:features", &["<in> avx", "<all-in> avx aes"]),
        ("capabilities:hypervisor_version", &[">= 8002000", "<or> 6002000 <or> 9001000"]),
        ("capabilities:stats:rack", &["s!= r1", "r0", "<or>", "r1"]),
        ("aggregate_instance_extra_specs:ssd", &["true", "<or> true <or> false"]),
        ("speed", &["<in> fast", "fast"]),
        ("hw:cpu_policy", &["shared", "dedicated"]),
        ("capabilities:hypervisor_type", &[">= 5", "QEMU", "s>= Q"]),
        ("capabilities:vcpus_total", &[">= 4", "== 8"]),
        ("trust:trusted_host", &["trusted", "untrusted"]),
        ("capabilities:free_ram_mb", &["<= 4096", "> 100"]),
        ("hw_architecture", &["x86_64"]),
    ];
    let mut specs = Map::new();
    for (key, values) in sample(b, &menu, 0, 3) {
        specs.insert(key.into(), json!(b.pick(values)));
    }
    Value::Object(specs)
}

fn query(b: &mut Draw<'_>) -> Value {
    let atoms = [
        json!([">=", "$free_ram_mb", b.pick(&[1024, 4096])]),
        json!(["<", "$num_io_ops", 3]),
        json!(["=", "$stats.rack", "r0"]),
        json!(["not", ["=", "$host", "s1"]]),
        json!(["in", "$vcpus_total", 4, 8]),
        json!(["=", "$hypervisor_type", "QEMU"]),
        json!(["or"]),
        json!(["<", 1, "$vcpus_used", 4]),
        json!(["!=", 1, 2]),
        json!(["<", "$stats.rack", 3]),
        json!([">", "$metrics.cpu.percent", 0.3]),
        json!(["and", ["<=", "$free_disk_mb", 81920], ["=", "$capabilities.arch", "x86_64"]]),
    ];
    let q = if chance(b, 1, 2) {
        let mut all = vec![json!("and")];
        all.extend(sample(b, &atoms.iter().collect::<Vec<_>>(), 1, 3).into_iter().cloned());
        Value::Array(all)
    } else {
        atoms[usize::from(b.byte()) % atoms.len()].clone()
    };
    if chance(b, 1, 3) {
        json!(q.to_string())
    } else {
        q
    }
}

fn config(b: &mut Draw<'_>, services: &[String]) -> Value {
    let filters = sample(b, if b.wide() { &FILTERS[..] } else { &FILTERS[..NOVA_FILTERS] }, 1, 7);
    let weighers = sample(b, if b.wide() { &WEIGHERS[..] } else { &WEIGHERS[..NOVA_WEIGHERS] }, 0, 4);
    let mut config = Map::new();
    config.insert("enabled_filters".into(), json!(filters));
    config.insert("weighers".into(), json!(weighers.iter().map(|w| w.0).collect::<Vec<_>>()));
    let mut multipliers = Map::new();
    for (_, option) in &weighers {
        if chance(b, 1, 2) {
            multipliers.insert((*option).into(), number(b, &[-1.0, 0.5, 1.0, 2.0, 10.0, 0.0]));
        }
    }
    if chance(b, 1, 32) && b.wide() {
        multipliers.insert("image_props_weight_multiplier".into(), json!(1.0));
    }
    if !multipliers.is_empty() {
        config.insert("multipliers".into(), Value::Object(multipliers));
    }
    let mut fs = Map::new();
    if chance(b, 1, 3) {
        fs.insert("max_io_ops_per_host".into(), json!(int(b, &[1, 2, 8])));
    }
    if chance(b, 1, 3) {
        fs.insert("max_instances_per_host".into(), json!(int(b, &[2, 5, 50])));
    }
    if filters.contains(&"IsolatedHostsFilter") || chance(b, 1, 16) {
        let isolated = sample(b, services, 0, 2);
        fs.insert("isolated_hosts".into(), json!(isolated));
        fs.insert("isolated_images".into(), json!(sample(b, &IMAGES[..1], 0, 1)));
        if chance(b, 1, 3) {
            fs.insert("restrict_isolated_hosts_to_isolated_images".into(), json!(false));
        }
    }
    if chance(b, 1, 6) {
        fs.insert("host_subset_size".into(), json!(int(b, &[1, 2, 3])));
    }
    if chance(b, 1, 32) {
        fs.insert("shuffle_best_same_weighed_hosts".into(), json!(true));
    }
    if chance(b, 1, 8) {
        fs.insert("image_properties_default_architecture".into(), json!(b.pick(&["x86_64", "aarch64"])));
    }
    if chance(b, 1, 8) {
        fs.insert("aggregate_image_properties_isolation_namespace".into(), json!("isolation"));
        fs.insert("aggregate_image_properties_isolation_separator".into(), json!(b.pick(&[".", ":"])));
    }
    if !b.wide() {
        // Nova draws among the best hosts from Python's `random` (placewise refuses to shuffle).
        fs.remove("shuffle_best_same_weighed_hosts");
        if fs.contains_key("host_subset_size") {
            fs.insert("host_subset_size".into(), json!(1));
        }
    }
    if !fs.is_empty() {
        config.insert("filter_scheduler".into(), Value::Object(fs));
    }
    if filters.contains(&"MetricsFilter") || weighers.iter().any(|w| w.0 == "MetricsWeigher") {
        let settings = ["cpu.frequency=1.0", "cpu.percent=-0.5", "numa.membw.max=2", "cpu.idle.percent=bad"];
        let mut metrics = json!({
            "weight_setting": sample(b, &settings, 1, 2),
            "required": chance(b, 1, 5),
            "weight_of_unavailable": number(b, &[-10000.0, 0.0]),
        });
        if chance(b, 1, 4) {
            metrics["weight_multiplier"] = number(b, &[1.0, -2.0, 0.0]);
        }
        config.insert("metrics".into(), metrics);
    }
    if chance(b, 1, 8) {
        let mut ratios = Map::new();
        for kind in sample(b, &["cpu", "ram", "disk"], 1, 2) {
            ratios.insert(kind.into(), number(b, &[0.5, 2.0, 16.0]));
        }
        config.insert("allocation_ratios".into(), Value::Object(ratios));
    }
    if chance(b, 1, 8) {
        config.insert("default_availability_zone".into(), json!(b.pick(&AZS)));
    }
    if chance(b, 1, 8) {
        config.insert("ties".into(), json!(b.pick(&["host_id", "previous_order"])));
    }
    if chance(b, 1, 8) {
        config.insert("random_seed".into(), json!(b.byte()));
    }
    if chance(b, 1, 16) {
        config.insert("max_request_count".into(), json!(b.pick(&[1, 3, 1000])));
    }
    if !b.wide() {
        // placewise's own options.
        config.remove("ties");
        config.remove("max_request_count");
    }
    Value::Object(config)
}

/// A host name as given, or now and then in capitals (the filter scheduler compares them
/// case-insensitively).
fn case(b: &mut Draw<'_>, name: &str) -> String {
    if chance(b, 1, 3) {
        name.to_uppercase()
    } else {
        name.to_owned()
    }
}

fn request(b: &mut Draw<'_>, filters: &[Value], services: &[String], nodes: &[String]) -> Value {
    let count = range(b, 1, 5);
    let uses = |name: &str| filters.iter().any(|f| f == name);
    let mut flavor = json!({
        "name": b.pick(&FLAVORS),
        "memory_mb": int(b, &[512, 1024, 2048]),
        "vcpus": int(b, &[1, 2]),
        "root_gb": int(b, &[0, 10, 40]),
        "extra_specs": extra_specs(b),
    });
    if chance(b, 1, 6) {
        flavor["ephemeral_gb"] = json!(int(b, &[5, 20]));
        flavor["swap"] = json!(512);
        flavor["flavorid"] = json!(b.pick(&[json!(7), json!("m1")]));
    }
    let mut request = json!({"num_instances": count, "project_id": b.pick(&PROJECTS), "flavor": flavor});
    if chance(b, 3, 5) {
        let arch = b.pick(&ARCHES);
        let mut props = json!({"hw_architecture": arch[0]});
        if chance(b, 1, 2) {
            props["img_hv_type"] = json!(arch[1]);
        }
        if chance(b, 1, 3) {
            props["os_type"] = json!(b.pick(&["linux", "windows"]));
        }
        if chance(b, 1, 4) {
            props["hw_vm_mode"] = json!(arch[2]);
        }
        if chance(b, 1, 6) {
            props["img_hv_requested_version"] = json!(b.pick(&[">=6.0", "<8.0", "==9.1"]));
        }
        request["image"] = json!({"id": b.pick(&IMAGES), "properties": props});
    }
    if chance(b, 1, 8) {
        request["image_props"] = json!({"hw_architecture": b.pick(&ARCHES)[0]});
    }
    let mut hints = Map::new();
    if chance(b, 1, 3) {
        hints.insert("same_host".into(), json!(sample(b, &EXISTING, 1, 2)));
    }
    if chance(b, 1, 3) {
        hints.insert("different_host".into(), json!(b.pick(&EXISTING)));
    }
    if uses("JsonFilter") || chance(b, 1, 10) {
        hints.insert("query".into(), query(b));
    }
    if uses("SimpleCIDRAffinityFilter") || chance(b, 1, 10) {
        hints.insert("build_near_host_ip".into(), json!(format!("10.0.{}.1", b.byte() % 3)));
        hints.insert("cidr".into(), json!(b.pick(&["/24", "/30", "/16", "/33", "24"])));
    }
    if chance(b, 1, 7) {
        let check = b.pick(&[json!("rebuild"), json!(["rebuild"]), json!("resize"), json!(""), json!([])]);
        hints.insert("_nova_check_type".into(), check);
    }
    if chance(b, 1, 10) {
        hints.insert("group".into(), json!("g"));
    }
    if !hints.is_empty() {
        request["scheduler_hints"] = Value::Object(hints);
    }
    if chance(b, 1, 4) {
        request["availability_zone"] = json!(b.pick(&AZS));
    }
    if chance(b, 1, 2) {
        let policy = b.pick(&["affinity", "anti-affinity", "soft-affinity", "soft-anti-affinity", "spread"]);
        let mut members = sample(b, &EXISTING, 0, 3);
        let hosts = sample(b, services, 0, 1);
        let mut group = json!({"name": "g", "policy": policy, "hosts": hosts});
        if chance(b, 2, 5) {
            group["add_request_instances_to_members"] = json!(false);
            members.extend(OWN.iter().take(count).copied().filter(|_| chance(b, 1, 2)));
        }
        group["members"] = json!(members);
        if chance(b, 1, 3) {
            let limit = b.pick(&[json!(1), json!(2), json!("2"), json!("x")]);
            // The reader refuses `x` at once; Nova raises only once the anti-affinity filter
            // reads it (its API never lets such a group exist).
            group["max_server_per_host"] = if b.wide() || limit != "x" { limit } else { json!(1) };
        }
        if chance(b, 1, 8) {
            group["uuid"] = json!("99999999-0000-4000-8000-000000000000");
        }
        request["instance_group"] = group;
    }
    if chance(b, 1, 8) {
        let uuids: Vec<String> = (0..count).map(|i| format!("a0000000-0000-4000-8000-00000000000{i}")).collect();
        request["instance_uuids"] = json!(uuids);
    }
    for (key, one_in) in [("ignore_hosts", 5), ("force_hosts", 7)] {
        if chance(b, 1, one_in) {
            let names: Vec<String> = sample(b, services, 1, 2).iter().map(|n| case(b, n)).collect();
            request[key] = json!(names);
        }
    }
    if chance(b, 1, 10) {
        request["force_nodes"] = json!(sample(b, nodes, 1, 2));
    }
    if uses("RetryFilter") || chance(b, 1, 12) {
        request["retry_hosts"] = json!(sample(b, nodes, 0, 2));
    }
    request
}

/// The scenario the bytes choose, as JSON text (the `nova_scenario` target's input format).
pub fn draw_nova_scenario(data: &[u8]) -> String {
    draw_scenario(data, Scope::Wide)
}

/// The scenario the bytes choose within `scope`, as JSON text.
pub fn draw_scenario(data: &[u8], scope: Scope) -> String {
    let b = &mut Draw { bytes: Bytes::new(data), scope };
    let mut hosts = Vec::new();
    let mut services = Vec::new();
    let mut nodes = Vec::new();
    for s in 0..range(b, 1, 7) {
        let name = format!("s{s}");
        let count = b.pick(&[1, 1, 1, 2, 3]);
        for n in 0..count {
            let node = if count == 1 && chance(b, 4, 5) { None } else { Some(format!("{name}-n{n}")) };
            nodes.push(node.clone().unwrap_or_else(|| name.clone()));
            hosts.push(host_entry(b, &name, hosts.len(), node));
        }
        services.push(name);
    }
    // Tied clones: the same numbers under another name, without nodes or instances.
    for k in 0..b.pick(&[0, 0, 1, 2]) {
        let mut clone = hosts[usize::from(b.byte()) % hosts.len()].clone();
        let name = format!("c{k}");
        clone["name"] = json!(name);
        if let Some(h) = clone.as_object_mut() {
            h.remove("nodename");
            h.remove("instances");
        }
        nodes.push(name.clone());
        services.push(name);
        hosts.push(clone);
    }
    // A rotation stands for the generator's shuffle.
    let turn = usize::from(b.byte()) % hosts.len();
    hosts.rotate_left(turn);
    // An instance runs on one host only (a duplicate is a finding of the `events` target).
    let mut seen = Vec::new();
    for h in &mut hosts {
        let Some(list) = h.get_mut("instances").and_then(Value::as_array_mut) else { continue };
        list.retain(|u| !seen.contains(u));
        seen.extend(list.iter().cloned());
    }
    let config = config(b, &services);
    let filters = config["enabled_filters"].as_array().cloned().unwrap_or_default();
    let aggregates = aggregates(b, &services);
    let request = request(b, &filters, &services, &nodes);
    json!({"config": config, "aggregates": aggregates, "hosts": hosts, "request": request}).to_string()
}

/// A drawn scenario ([`draw_nova_scenario`]) through the checks of [`nova_scenario`].
pub fn nova_drawn(data: &[u8]) -> Checked {
    nova_scenario(draw_nova_scenario(data).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use placewise::nova::scenario::Scenario;

    #[test]
    fn every_input_draws_a_scenario_that_parses_as_json() {
        for data in [&[][..], &[0; 64], &[255; 300], b"a scenario drawn from text bytes"] {
            let text = draw_nova_scenario(data);
            let value: Value = serde_json::from_str(&text).unwrap();
            assert!(!value["hosts"].as_array().unwrap().is_empty());
            assert_eq!(nova_drawn(data), Ok(()));
        }
    }

    #[test]
    fn the_empty_input_draws_a_plain_scenario_the_reader_accepts() {
        let scenario = Scenario::from_json(&draw_nova_scenario(&[])).unwrap();
        assert_eq!(scenario.cluster.len(), 1);
        assert_eq!(scenario.request.request.count, 1);
    }

    #[test]
    fn nova_scope_draws_only_what_nova_runs_deterministically() {
        fn no_hostile_number(v: &Value) {
            match v {
                Value::Number(n) => {
                    let x = n.as_f64().unwrap();
                    assert!(x.abs() < 1e15, "{x}");
                }
                Value::Array(items) => items.iter().for_each(no_hostile_number),
                Value::Object(map) => map.values().for_each(no_hostile_number),
                _ => {}
            }
        }
        let mut wide_differs = 0;
        for seed in 0..150u32 {
            let data: Vec<u8> = (0..600u32).map(|i| (i.wrapping_mul(seed * 2 + 1) ^ (seed * 7)) as u8).collect();
            let text = draw_scenario(&data, Scope::Nova);
            wide_differs += usize::from(text != draw_nova_scenario(&data));
            let v: Value = serde_json::from_str(&text).unwrap();
            no_hostile_number(&v);
            let config = &v["config"];
            for f in config["enabled_filters"].as_array().unwrap() {
                assert!(FILTERS[..NOVA_FILTERS].contains(&f.as_str().unwrap()), "{f}");
            }
            for w in config["weighers"].as_array().unwrap() {
                assert!(WEIGHERS[..NOVA_WEIGHERS].iter().any(|(name, _)| w == name), "{w}");
            }
            assert!(config.get("ties").is_none() && config.get("max_request_count").is_none());
            let fs = &config["filter_scheduler"];
            assert!(fs.get("host_subset_size").is_none_or(|k| k == 1));
            assert!(fs.get("shuffle_best_same_weighed_hosts").is_none());
            let hosts = v["hosts"].as_array().unwrap();
            for h in hosts {
                assert!(h["free_ram_mb"].as_i64() <= h["total_usable_ram_mb"].as_i64(), "{h}");
                assert!(h["host_ip"].as_str().unwrap().parse::<std::net::IpAddr>().is_ok(), "{h}");
            }
            for a in v["aggregates"].as_array().unwrap() {
                for member in a["hosts"].as_array().unwrap() {
                    assert!(hosts.iter().any(|h| h["name"] == *member), "{member}");
                }
                for value in a["metadata"].as_object().unwrap().values() {
                    assert!(value != "nan" && value != "1e308", "{a}");
                }
            }
            assert_ne!(v["request"]["instance_group"]["max_server_per_host"], "x");
            assert_eq!(nova_scenario(text.as_bytes()), Ok(()));
        }
        assert!(wide_differs > 50, "only {wide_differs} of 150 wide draws differ from Nova's");
    }

    #[test]
    fn different_bytes_draw_different_scenarios_and_the_same_bytes_the_same() {
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..200u32 {
            let data: Vec<u8> = (0..400u32).map(|i| (i.wrapping_mul(seed * 2 + 1) ^ seed) as u8).collect();
            let text = draw_nova_scenario(&data);
            assert_eq!(text, draw_nova_scenario(&data));
            seen.insert(text);
        }
        assert!(seen.len() > 150, "only {} distinct scenarios of 200", seen.len());
    }
}
