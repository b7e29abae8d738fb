//! A cluster as OpenStack's API responses, for the round trip.

use super::PLACEMENT_UNITS;
use crate::nova::request::Flavor;
use crate::snapshot::{Cluster, HostSpec};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// Placement's standard resource classes besides `VCPU`, `MEMORY_MB` and `DISK_GB`: every
/// other kind is written as `CUSTOM_<KIND>`.
const STANDARD_CLASSES: &[&str] = &[
    "PCPU",
    "VGPU",
    "VGPU_DISPLAY_HEAD",
    "SRIOV_NET_VF",
    "NUMA_SOCKET",
    "NUMA_CORE",
    "NUMA_THREAD",
    "NUMA_MEMORY_MB",
    "IPV4_ADDRESS",
    "PCI_DEVICE",
    "FPGA",
    "MEM_ENCRYPTION_CONTEXT",
    "NET_BW_EGR_KILOBIT_PER_SEC",
    "NET_BW_IGR_KILOBIT_PER_SEC",
];

/// A snapshot resource kind as a Placement resource class.
fn class_of(kind: &str) -> String {
    match kind {
        "vcpus" => "VCPU".into(),
        "memory_mb" => "MEMORY_MB".into(),
        "disk_gb" => "DISK_GB".into(),
        other => {
            let upper = other.to_ascii_uppercase();
            if STANDARD_CLASSES.contains(&upper.as_str()) {
                upper
            } else {
                format!("CUSTOM_{}", trait_word(&upper))
            }
        }
    }
}

/// Upper-case letters, digits and underscores only, as trait and class names are.
fn trait_word(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect()
}

/// An integral amount as a JSON integer, else a float.
fn amount(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        Value::from(v as i64)
    } else {
        Value::from(v)
    }
}

/// A uuid made from a number, for objects that have none.
fn made_uuid(kind: u32, i: usize) -> String {
    format!("{kind:08x}-0000-4000-8000-{i:012x}")
}

/// `cluster` and `flavors` as the responses [`read`](super::read) reads, keyed by a file name
/// for each: `resource_providers.json` (every host a root provider, with its inventories,
/// usages, traits and aggregates embedded), `os-hypervisors.json` (2.88 shape plus `servers`,
/// `running_vms` and `current_workload` where the host has them), `os-services.json`,
/// `os-aggregates.json` (the aggregates with metadata; zones become aggregates with
/// `availability_zone` where no aggregate gives them) and `flavors.json` (2.61+ shape).
///
/// Labels are written as traits: `key = true` as `key`, any other as `CUSTOM_KEY_VALUE`. A
/// cordoned or evicting host is written as a disabled service. Instances keep their ids
/// (as the hypervisor's `servers`); their use is in the usages.
pub fn write(cluster: &Cluster, flavors: &[Flavor]) -> Value {
    let spec = cluster.to_spec();
    let mut providers = Vec::new();
    let mut hypervisors = Vec::new();
    let mut services: BTreeMap<String, Value> = BTreeMap::new();
    let mut members: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut zones: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let agg_uuid = |name: &str| {
        spec.aggregates.iter().position(|a| a.name == name).map_or_else(|| name.to_owned(), |i| made_uuid(0xa661, i))
    };
    for (i, h) in spec.hosts.iter().enumerate() {
        let service_host = h.service_host.clone().unwrap_or_else(|| h.name.clone());
        let nodename = h.attributes.get("nodename").and_then(Value::as_str).map_or_else(
            || {
                if h.service_host.is_some() {
                    h.name.rsplit(':').next().unwrap_or(&h.name).to_owned()
                } else {
                    h.name.clone()
                }
            },
            str::to_owned,
        );
        let uuid = h.attributes.get("uuid").and_then(Value::as_str).map_or_else(|| made_uuid(0xc0, i), str::to_owned);
        providers.push(provider(h, &nodename, &uuid, &agg_uuid));
        hypervisors.push(hypervisor(h, &nodename, &uuid, &service_host));
        let enabled = h.state.enabled && !h.state.cordoned && !h.state.evicting;
        let forced = h.attributes.get("forced_down").and_then(Value::as_bool).unwrap_or(false);
        services.entry(service_host.clone()).or_insert_with(|| {
            json!({
                "binary": "nova-compute",
                "host": service_host,
                "state": if h.state.up || forced { "up" } else { "down" },
                "status": if enabled { "enabled" } else { "disabled" },
                "forced_down": forced,
                "disabled_reason": h.attributes.get("disabled_reason").cloned().unwrap_or(Value::Null),
            })
        });
        for a in &h.aggregates {
            let list = members.entry(a.clone()).or_default();
            if !list.contains(&service_host) {
                list.push(service_host.clone());
            }
        }
        let zoned = h
            .aggregates
            .iter()
            .any(|a| spec.aggregates.iter().any(|b| &b.name == a && b.metadata.contains_key("availability_zone")));
        if let (false, Some(zone)) = (zoned, h.topology.get("zone")) {
            let list = zones.entry(zone.clone()).or_default();
            if !list.contains(&service_host) {
                list.push(service_host.clone());
            }
        }
    }
    let mut aggregates: Vec<Value> = spec
        .aggregates
        .iter()
        .enumerate()
        .map(|(i, a)| {
            json!({
                "id": i + 1,
                "uuid": made_uuid(0xa661, i),
                "name": a.name,
                "availability_zone": a.metadata.get("availability_zone"),
                "hosts": members.get(&a.name).cloned().unwrap_or_default(),
                "metadata": a.metadata,
            })
        })
        .collect();
    for (zone, hosts) in zones {
        let i = aggregates.len();
        aggregates.push(json!({
            "id": i + 1,
            "uuid": made_uuid(0xa661, i),
            "name": format!("zone-{zone}"),
            "availability_zone": zone,
            "hosts": hosts,
            "metadata": {"availability_zone": zone},
        }));
    }
    let flavors: Vec<Value> = flavors.iter().map(flavor).collect();
    json!({
        "resource_providers.json": {"resource_providers": providers},
        "os-hypervisors.json": {"hypervisors": hypervisors},
        "os-services.json": {"services": services.into_values().collect::<Vec<_>>()},
        "os-aggregates.json": {"aggregates": aggregates},
        "flavors.json": {"flavors": flavors},
    })
}

fn provider(h: &HostSpec, nodename: &str, uuid: &str, agg_uuid: &dyn Fn(&str) -> String) -> Value {
    let units = h.attributes.get(PLACEMENT_UNITS).and_then(Value::as_object);
    let mut inventories = Map::new();
    let mut usages = Map::new();
    for (kind, r) in &h.resources {
        let instance_use: f64 = h.instances.iter().filter_map(|i| i.resources.get(kind)).sum();
        let class = class_of(kind);
        let unit = |i: usize, default: f64| {
            units.and_then(|u| u.get(kind)).and_then(|u| u.get(i)).and_then(Value::as_f64).unwrap_or(default)
        };
        inventories.insert(
            class.clone(),
            json!({
                "total": amount(r.capacity),
                "reserved": amount(r.reserved),
                "allocation_ratio": r.allocation_ratio,
                "min_unit": amount(unit(0, 1.0)),
                "max_unit": amount(unit(1, r.capacity.max(1.0))),
                "step_size": amount(unit(2, 1.0)),
            }),
        );
        usages.insert(class, amount(r.used + instance_use));
    }
    let mut traits: Vec<String> = h
        .labels
        .iter()
        .map(|(k, v)| if v == "true" { k.clone() } else { format!("CUSTOM_{}_{}", trait_word(k), trait_word(v)) })
        .collect();
    traits.sort();
    json!({
        "uuid": uuid,
        "name": nodename,
        "generation": 1,
        "parent_provider_uuid": null,
        "root_provider_uuid": uuid,
        "inventories": inventories,
        "usages": usages,
        "traits": traits,
        "aggregates": h.aggregates.iter().map(|a| agg_uuid(a)).collect::<Vec<_>>(),
    })
}

fn hypervisor(h: &HostSpec, nodename: &str, uuid: &str, service_host: &str) -> Value {
    let mut v = json!({
        "id": uuid,
        "hypervisor_hostname": nodename,
        "state": if h.state.up { "up" } else { "down" },
        "status": if h.state.enabled { "enabled" } else { "disabled" },
        "service": {
            "host": service_host,
            "id": made_uuid(0x5e, 0),
            "disabled_reason": h.attributes.get("disabled_reason").cloned().unwrap_or(Value::Null),
        },
        "hypervisor_type": h.attributes.get("hypervisor_type").cloned().unwrap_or(json!("QEMU")),
        "hypervisor_version": h.attributes.get("hypervisor_version").cloned().unwrap_or(json!(0)),
        "servers": h.instances.iter().map(|i| json!({"uuid": i.id, "name": i.id})).collect::<Vec<_>>(),
    });
    for (attribute, field) in [
        ("host_ip", "host_ip"),
        ("cpu_info", "cpu_info"),
        ("num_io_ops", "current_workload"),
        ("num_instances", "running_vms"),
    ] {
        if let Some(value) = h.attributes.get(attribute) {
            v[field] = value.clone();
        }
    }
    if h.attributes.contains_key("num_instances") {
        if let Some(map) = v.as_object_mut() {
            map.remove("servers");
        }
    }
    v
}

fn flavor(f: &Flavor) -> Value {
    let specs: Map<String, Value> = f.extra_specs.iter().map(|(k, v)| (k.to_owned(), Value::from(v))).collect();
    json!({
        "id": f.id.clone().unwrap_or_else(|| f.name.clone()),
        "name": f.name,
        "ram": amount(f.memory_mb),
        "vcpus": amount(f.vcpus),
        "disk": amount(f.root_gb),
        "OS-FLV-EXT-DATA:ephemeral": amount(f.ephemeral_gb),
        "swap": amount(f.swap),
        "extra_specs": specs,
    })
}
