//! The command line on openstack objects.

use crate::common::{fixture, fixtures, peer_objects, run};
use placewise::import::Document;
use placewise::nova::import;
use std::path::{Path, PathBuf};

const SYSTEM: &str = "openstack";

/// Every JSON file under `dir`, in path order, as the command line reads a directory.
fn documents(dir: &Path) -> Vec<Document> {
    let mut out = Vec::new();
    for file in files(dir) {
        let text = std::fs::read_to_string(&file).unwrap();
        out.push(Document::from_json(file.display().to_string(), &text).unwrap());
    }
    out
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    let mut out = Vec::new();
    for e in entries {
        if e.is_dir() {
            out.extend(files(&e));
        } else if e.extension().is_some_and(|x| x == "json") {
            out.push(e);
        }
    }
    out
}

/// The fixture cloud as the library reads it, under the fixture `nova.conf`.
fn library_cloud() -> import::OpenStackCloud {
    let conf = fixtures(SYSTEM).join("nova.conf");
    let (config, _) = import::read_conf(&conf.display().to_string(), &std::fs::read_to_string(&conf).unwrap()).unwrap();
    import::read_with(&documents(&fixtures(SYSTEM).join("cloud")), config).unwrap()
}

#[test]
fn inspect_says_what_was_read_and_writes_the_snapshot() {
    let cloud = fixture(SYSTEM, "cloud");
    let r = run(&["inspect", &cloud]);
    assert_eq!(r.status, Some(0), "{}", r.stderr);
    assert!(r.stdout.starts_with("format: OpenStack"), "{}", r.stdout);
    for expected in ["hosts: 6", "flavors: 5", "m1.small", "aggregates: 2", "server groups: 2"] {
        assert!(r.stdout.contains(expected), "`{expected}` in {}", r.stdout);
    }
    let j = run(&["inspect", &cloud, "--json"]).json();
    assert_eq!(j["format"], "openstack");
    assert_eq!(j["hosts"].as_array().map(Vec::len), Some(6));
    assert_eq!(j["flavors"].as_array().map(Vec::len), Some(5));
    assert_eq!(j["read"]["hypervisors"], 6);
    let out = std::env::temp_dir().join(format!("placewise-openstack-{}.json", std::process::id()));
    let r = run(&["inspect", &cloud, "--write-snapshot", &out.display().to_string()]);
    assert_eq!(r.status, Some(0), "{}", r.stderr);
    let snapshot = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    assert_eq!(
        placewise::Cluster::from_json(&snapshot).unwrap().to_json(),
        import::read(&documents(&fixtures(SYSTEM).join("cloud"))).unwrap().cluster.to_json()
    );
}

#[test]
fn place_answers_as_the_library_does() {
    let (cloud, conf) = (fixture(SYSTEM, "cloud"), fixture(SYSTEM, "nova.conf"));
    let library = library_cloud();
    for (flavor, count) in [("m1.small", 3), ("ssd.medium", 2), ("gpu.small", 2), ("m1.large", 40)] {
        let j = run(&["place", &cloud, "--flavor", flavor, "--count", &count.to_string(), "--config", &conf, "--json"])
            .json();
        let hosts: Vec<&str> = j["selections"].as_array().unwrap().iter().filter_map(|s| s["host"].as_str()).collect();
        let expected = library.place(flavor, count).unwrap();
        let expected: Vec<&str> = expected.selections.iter().map(|s| s.host_name.as_str()).collect();
        assert_eq!(hosts, expected, "{flavor} × {count}");
        assert_eq!(j["no_valid_host"], expected.len() < count as usize, "{flavor} × {count}");
    }
    let r = run(&["place", &cloud, "--flavor", "m1.large", "--count", "40", "--config", &conf]);
    assert_eq!(r.status, Some(0), "no valid host is an answer: {}", r.stderr);
    assert!(r.stdout.contains("no valid host"), "{}", r.stdout);
    let j = run(&["place", &cloud, "--flavor", "m1.small", "--count", "3", "--server-group", "web", "--json"]).json();
    assert!(j["selections"].as_array().unwrap().iter().all(|s| s["host"] != "compute-1"), "{j}");
}

#[test]
fn explain_gives_every_filter_in_order_and_every_hosts_verdict() {
    let (cloud, conf) = (fixture(SYSTEM, "cloud"), fixture(SYSTEM, "nova.conf"));
    let j = run(&["explain", &cloud, "--flavor", "m1.small", "--config", &conf, "--json"]).json();
    let filters: Vec<&str> = j["filters"].as_array().unwrap().iter().filter_map(|f| f.as_str()).collect();
    assert_eq!(&filters[..3], ["ResourceFilter", "LabelSelectorFilter", "ComputeFilter"]);
    assert_eq!(filters.last(), Some(&"PlacementUnitsFilter"));
    assert_eq!(j["explanation"]["verdicts"].as_array().map(Vec::len), Some(6));
    let r = run(&["explain", &cloud, "--flavor", "m1.small", "--config", &conf]);
    assert_eq!(r.status, Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("compute-5: rejected by ComputeFilter: host disabled"), "{}", r.stdout);
    assert!(r.stdout.contains("compute-6: rejected by ComputeFilter: host down"), "{}", r.stdout);
    assert!(r.stdout.contains("compute-3: rejected by PlacementUnitsFilter"), "{}", r.stdout);
}

#[test]
fn capacity_counts_per_zone_and_aggregate_and_draws_them() {
    let (cloud, conf) = (fixture(SYSTEM, "cloud"), fixture(SYSTEM, "nova.conf"));
    let svg = std::env::temp_dir().join(format!("placewise-openstack-{}.svg", std::process::id()));
    let r = run(&[
        "capacity",
        &cloud,
        "--flavor",
        "m1.large",
        "--config",
        &conf,
        "--json",
        "--svg",
        &svg.display().to_string(),
    ]);
    assert_eq!(r.status, Some(0), "{}", r.stderr);
    let j = r.json();
    let expected = library_cloud().capacity("m1.large").unwrap();
    assert_eq!(j["total"], expected.total);
    let zones: u64 = j["zones"].as_array().unwrap().iter().filter_map(|z| z["fits"].as_u64()).sum();
    assert_eq!(zones, expected.total, "the zones add up to the total");
    assert!(j["aggregates"].as_array().unwrap().iter().any(|a| a["aggregate"] == "fast"));
    let chart = std::fs::read_to_string(&svg).unwrap();
    let _ = std::fs::remove_file(&svg);
    assert!(chart.starts_with("<svg") && chart.contains("zone az1") && chart.contains("aggregate fast"), "{chart}");
}

#[test]
fn bad_input_exits_2_naming_the_file_the_object_and_the_field() {
    let bad = |name: &str| fixture(SYSTEM, &format!("bad/{name}"));
    let cases = [
        (vec!["inspect".to_owned(), bad("total_not_a_number")], "resource_providers.json: resource_provider 9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d: field `inventories.MEMORY_MB.total`"),
        (vec!["inspect".to_owned(), bad("no_provider")], "inventories.json: cannot tell which resource provider"),
        (vec!["inspect".to_owned(), bad("dangling_host")], "os-aggregates.json: aggregate edge: field `hosts` names host `compute-9`"),
        (vec!["inspect".to_owned(), bad("flavor_ram")], "flavors.json: flavor m1.odd: field `ram`"),
        (vec!["inspect".to_owned(), bad("malformed.json")], "malformed.json: not valid JSON"),
        (
            vec!["place".to_owned(), fixture(SYSTEM, "cloud"), "--flavor".into(), "m1.small".into(), "--config".into(), bad("nova.conf")],
            "nova.conf: section filter_scheduler: field `host_subset_size`",
        ),
        (vec!["place".to_owned(), fixture(SYSTEM, "cloud"), "--flavor".into(), "m9.huge".into()], "no flavor `m9.huge`"),
        (vec!["place".to_owned(), fixture(SYSTEM, "cloud"), "--volume".into(), "v".into()], "--volume is not for OpenStack objects (OpenStack takes --flavor, --count, --config, --server-group)"),
    ];
    for (args, expected) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = run(&args);
        assert_eq!(r.status, Some(2), "{args:?}: {}", r.stdout);
        assert!(r.stderr.contains(expected), "{args:?}: `{expected}` in {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
}

/// Files of `peer_objects/openstack/` that are not read alone, and why. Every other file must
/// import on its own.
const NOT_ALONE: &[(&str, &str)] = &[
    // Request bodies and answers that are not cluster state: an unknown kind.
    ("nova/os-aggregates/aggregate-metadata-post-req.json", "unknown kind"),
    ("nova/os-server-groups/server-groups-post-req.json", "unknown kind"),
    ("nova/os-server-groups/v2.64/server-groups-post-req.json", "unknown kind"),
    ("nova/servers/server-create-req.json", "unknown kind"),
    ("nova/servers/v2.100/server-create-req.json", "unknown kind"),
    ("nova/servers/v2.52/server-create-req.json", "unknown kind"),
    ("placement/aggregates/update-aggregates-request.json", "unknown kind"),
    ("placement/allocations/get-allocations-1.28.json", "unknown kind"),
    ("placement/allocations/get-allocations-1.38.json", "unknown kind"),
    ("placement/allocations/get-allocations.json", "unknown kind"),
    ("placement/allocations/manage-allocations-request-1.28.json", "unknown kind"),
    ("placement/allocations/manage-allocations-request-1.38.json", "unknown kind"),
    ("placement/allocations/manage-allocations-request.json", "unknown kind"),
    ("placement/allocations/update-allocations-request-1.12.json", "unknown kind"),
    ("placement/allocations/update-allocations-request-1.28.json", "unknown kind"),
    ("placement/allocations/update-allocations-request-1.38.json", "unknown kind"),
    ("placement/allocations/update-allocations-request.json", "unknown kind"),
    ("placement/inventories/get-inventory.json", "unknown kind"),
    ("placement/inventories/update-inventory-request.json", "unknown kind"),
    ("placement/inventories/update-inventory.json", "unknown kind"),
    ("placement/reshaper/post-reshaper-1.30.json", "unknown kind"),
    ("placement/reshaper/post-reshaper-1.38.json", "unknown kind"),
    ("placement/resource_classes/create-resource_classes-request.json", "unknown kind"),
    ("placement/resource_classes/get-resource_class.json", "unknown kind"),
    ("placement/resource_classes/get-resource_classes.json", "unknown kind"),
    ("placement/resource_classes/update-resource_class-request.json", "unknown kind"),
    ("placement/resource_classes/update-resource_class.json", "unknown kind"),
    ("placement/resource_providers/create-resource_providers-request.json", "unknown kind"),
    ("placement/resource_providers/update-resource_provider-request.json", "unknown kind"),
    ("placement/root/get-root.json", "unknown kind"),
    // One provider's responses, which do not carry its uuid: read alone, the provider
    // cannot be known (the request bodies of the same shape read as the responses).
    ("placement/aggregates/get-aggregates-1.19.json", "cannot tell which resource provider"),
    ("placement/aggregates/get-aggregates.json", "cannot tell which resource provider"),
    ("placement/aggregates/update-aggregates-1.19.json", "cannot tell which resource provider"),
    ("placement/aggregates/update-aggregates-request-1.19.json", "cannot tell which resource provider"),
    ("placement/aggregates/update-aggregates.json", "cannot tell which resource provider"),
    ("placement/inventories/get-inventories.json", "cannot tell which resource provider"),
    ("placement/inventories/update-inventories-request.json", "cannot tell which resource provider"),
    ("placement/inventories/update-inventories.json", "cannot tell which resource provider"),
    (
        "placement/resource_provider_allocations/get-resource_provider_allocations.json",
        "cannot tell which resource provider",
    ),
    ("placement/resource_provider_traits/get-resource_provider-traits.json", "cannot tell which resource provider"),
    (
        "placement/resource_provider_traits/update-resource_provider-traits-request.json",
        "cannot tell which resource provider",
    ),
    ("placement/resource_provider_traits/update-resource_provider-traits.json", "cannot tell which resource provider"),
    ("placement/resource_provider_usages/get-resource_provider_usages.json", "cannot tell which resource provider"),
    // A flavor's extra specs (and the create body of the same shape): the flavor is not known.
    ("nova/flavor-extra-specs/flavor-extra-specs-create-req.json", "cannot tell which flavor"),
    ("nova/flavor-extra-specs/flavor-extra-specs-list-resp.json", "cannot tell which flavor"),
];

#[test]
fn every_peer_object_imports_alone_or_fails_naming_its_file() {
    let Some(dir) = peer_objects(SYSTEM) else { return };
    let all = files(&dir);
    assert!(all.len() >= 70, "the OpenStack peer objects are all there: {}", all.len());
    for file in all {
        let path = file.display().to_string();
        let rel = file.strip_prefix(&dir).unwrap().display().to_string();
        let r = run(&["inspect", &path]);
        assert!(!r.stderr.contains("panicked"), "{rel}: {}", r.stderr);
        match NOT_ALONE.iter().find(|(f, _)| *f == rel) {
            Some((_, why)) => {
                assert_eq!(r.status, Some(2), "{rel} must be refused ({why}): {}", r.stdout);
                assert!(r.stderr.contains(&path) && r.stderr.contains(why), "{rel}: `{why}` in {}", r.stderr);
            }
            None => assert_eq!(r.status, Some(0), "{rel} must import: {}", r.stderr),
        }
    }
}

#[test]
fn peer_objects_of_one_provider_import_when_their_paths_name_it() {
    let Some(dir) = peer_objects(SYSTEM) else { return };
    let read = |rel: &str, origin: &str| {
        let text = std::fs::read_to_string(dir.join(rel)).unwrap();
        Document::from_json(origin, &text).unwrap()
    };
    // pony1 (d0b381e9-…) of the provider list, with the per-provider samples given under its uuid.
    let rp = "d0b381e9-8761-42de-8e6c-bba99a96d5f5";
    let docs = vec![
        read("placement/resource_providers/get-resource_providers.json", "resource_providers.json"),
        read("placement/inventories/get-inventories.json", &format!("{rp}/inventories.json")),
        read("placement/resource_provider_usages/get-resource_provider_usages.json", &format!("{rp}/usages.json")),
        read("placement/resource_provider_traits/get-resource_provider-traits.json", &format!("{rp}/traits.json")),
        read("placement/aggregates/get-aggregates-1.19.json", &format!("{rp}/aggregates.json")),
        read("nova/flavors/v2.61/flavors-detail-resp.json", "flavors.json"),
        read("nova/flavor-extra-specs/flavor-extra-specs-list-resp.json", "flavors/7/extra_specs.json"),
    ];
    let cloud = import::read(&docs).unwrap();
    let pony = cloud.cluster.host(cloud.cluster.host_id("pony1").unwrap()).unwrap();
    // MEMORY_MB: total 5825, reserved 512, allocation ratio 1.5, 512 used.
    let mem = pony.resource(placewise::id::ResourceId::MEMORY_MB);
    assert_eq!((mem.capacity, mem.reserved, mem.allocation_ratio, mem.used), (5825.0, 512.0, 1.5, 512.0));
    assert_eq!(cloud.flavor("7").unwrap().extra_specs.get("hw:cpu_policy"), Some("shared"));
    let outcome = cloud.place("m1.tiny", 1).unwrap();
    assert_eq!(outcome.selections.first().map(|s| s.host_name.as_str()), Some("pony1"));
    // vgr.localdomain's parent is not in the sample: a host of its own, with a warning.
    assert!(cloud.warnings.iter().any(|w| w.to_string().contains("parent provider is not in the input")));
}
