//! The way back: a cluster and its services as Docker Swarm's own objects.

use super::units::{MIB, NANO};
use crate::snapshot::{Cluster, HostSpec};
use crate::spread::{Preference, SpreadRequest, ENGINE_LABEL_PREFIX, HOST_PORTS_LABEL};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// `cluster` and `services` as Swarm's objects, in one array: what `docker node inspect`,
/// `docker service inspect` and `docker inspect` of the tasks print, concatenated. [`read`]
/// reads it back to the same hosts, tasks and requests.
///
/// Every host is a node (`vcpus` as `NanoCPUs`, `memory_mb` as `MemoryBytes`, any other kind
/// a discrete generic resource; labels `engine.labels.<k>` as engine labels, the others as
/// node labels; the attributes of [`SwarmNode`](crate::spread::SwarmNode)); every instance
/// with a group is a running task of the service of that name (desired `shutdown` when
/// terminating) reserving its own resources. Each request is a replicated service asking for
/// its `tasks` beyond the active ones, with its constraints, `spread` preferences, max
/// replicas, platforms, reservations and host ports; a group no request names is a service
/// with no placement. Swarm has no words for the rest, which is left out: reserved and other
/// used amounts and allocation ratios, instances without a group, task counts kept as numbers
/// ([`SwarmNode::tasks`](crate::spread::SwarmNode::tasks)), pack and weighted preferences,
/// hard spread, the mode, recent failures. Amounts are rounded to whole nanoCPUs, bytes and
/// generic units.
///
/// Computes in O(hosts + instances + labels).
///
/// [`read`]: super::read
pub fn write(cluster: &Cluster, services: &[SpreadRequest]) -> Value {
    let spec = cluster.to_spec();
    let mut out = Vec::new();
    let mut active: BTreeMap<&str, u32> = BTreeMap::new();
    let mut groups: Vec<&str> = Vec::new();
    for host in &spec.hosts {
        out.push(node(host));
        for i in &host.instances {
            if let Some(g) = i.group.as_deref() {
                if !groups.contains(&g) {
                    groups.push(g);
                }
                if !i.terminating {
                    *active.entry(g).or_insert(0) += 1;
                }
            }
        }
    }
    for r in services {
        out.push(service(r, active.get(r.service.as_str()).copied().unwrap_or(0)));
    }
    for g in groups.iter().filter(|g| !services.iter().any(|r| r.service == **g)) {
        let r = SpreadRequest::new(*g, 0);
        out.push(service(&r, active.get(g).copied().unwrap_or(0)));
    }
    for host in &spec.hosts {
        for (slot, i) in host.instances.iter().enumerate() {
            let Some(group) = i.group.as_deref() else { continue };
            let mut status = json!({ "State": "running" });
            if let Some(ports) = i.labels.get(HOST_PORTS_LABEL) {
                status["PortStatus"] = json!({ "Ports": ports_json(ports) });
            }
            out.push(json!({
                "ID": i.id,
                "ServiceID": group,
                "NodeID": host.name,
                "Slot": slot + 1,
                "Spec": { "Resources": { "Reservations": resources(&i.resources) } },
                "Status": status,
                "DesiredState": if i.terminating { "shutdown" } else { "running" },
            }));
        }
    }
    Value::Array(out)
}

fn node(host: &HostSpec) -> Value {
    let text = |key: &str| host.attributes.get(key).and_then(Value::as_str);
    let (mut labels, mut engine_labels) = (Map::new(), Map::new());
    for (k, v) in &host.labels {
        match k.strip_prefix(ENGINE_LABEL_PREFIX) {
            Some(e) => engine_labels.insert(e.to_owned(), Value::from(v.as_str())),
            None => labels.insert(k.clone(), Value::from(v.as_str())),
        };
    }
    let capacity = |kind: &str| host.resources.get(kind).map_or(0.0, |r| r.capacity);
    let mut resources = json!({
        "NanoCPUs": (capacity("vcpus") * NANO).round() as i64,
        "MemoryBytes": (capacity("memory_mb") * MIB).round() as i64,
    });
    let generic: Vec<Value> = host
        .resources
        .iter()
        .filter(|(k, _)| k.as_str() != "vcpus" && k.as_str() != "memory_mb")
        .map(|(k, r)| json!({ "DiscreteResourceSpec": { "Kind": k, "Value": r.capacity.round() as i64 } }))
        .collect();
    if !generic.is_empty() {
        resources["GenericResources"] = Value::Array(generic);
    }
    let mut description = json!({ "Resources": resources });
    if let Some(h) = text("hostname") {
        description["Hostname"] = Value::from(h);
    }
    if text("os").is_some() || text("arch").is_some() {
        description["Platform"] = json!({ "OS": text("os").unwrap_or(""), "Architecture": text("arch").unwrap_or("") });
    }
    if host.attributes.get("engine").and_then(Value::as_bool) != Some(false) {
        description["Engine"] = json!({ "Labels": engine_labels });
    }
    let availability = if host.state.evicting {
        "drain"
    } else if host.state.cordoned || !host.state.enabled {
        "pause"
    } else {
        "active"
    };
    let mut status = json!({ "State": if host.state.up { "ready" } else { "down" } });
    if let Some(ip) = text("ip") {
        status["Addr"] = Value::from(ip);
    }
    json!({
        "ID": host.name,
        "Spec": { "Role": text("role").unwrap_or("worker"), "Availability": availability, "Labels": labels },
        "Description": description,
        "Status": status,
    })
}

fn service(r: &SpreadRequest, active: u32) -> Value {
    let mut placement = Map::new();
    if !r.constraints.is_empty() {
        placement.insert("Constraints".into(), r.constraints.iter().map(|c| Value::from(c.to_string())).collect());
    }
    let prefs: Vec<Value> = r
        .preferences
        .iter()
        .filter_map(|p| match p {
            Preference::Spread(d) => Some(json!({ "Spread": { "SpreadDescriptor": d.to_string() } })),
            _ => None,
        })
        .collect();
    if !prefs.is_empty() {
        placement.insert("Preferences".into(), Value::Array(prefs));
    }
    if r.max_replicas > 0 {
        placement.insert("MaxReplicas".into(), Value::from(r.max_replicas));
    }
    if !r.platforms.is_empty() {
        let platforms = r.platforms.iter().map(|p| json!({ "OS": p.os, "Architecture": p.arch })).collect();
        placement.insert("Platforms".into(), Value::Array(platforms));
    }
    let ports: Vec<Value> = r
        .ports
        .iter()
        .map(
            |p| json!({ "Protocol": p.protocol, "PublishedPort": p.port, "TargetPort": p.port, "PublishMode": "host" }),
        )
        .collect();
    json!({
        "ID": r.service,
        "Spec": {
            "Name": r.service,
            "TaskTemplate": {
                "Placement": placement,
                "Resources": { "Limits": {}, "Reservations": resources(&r.resources) },
            },
            "Mode": { "Replicated": { "Replicas": active.saturating_add(r.tasks) } },
            "EndpointSpec": { "Ports": ports },
        },
    })
}

/// Amounts by kind as Swarm's `Resources`: `NanoCPUs`, `MemoryBytes`, discrete generic ones.
fn resources(amounts: &BTreeMap<String, f64>) -> Value {
    let mut out = Map::new();
    let mut generic = Vec::new();
    for (kind, &amount) in amounts {
        match kind.as_str() {
            "vcpus" => drop(out.insert("NanoCPUs".into(), Value::from((amount * NANO).round() as i64))),
            "memory_mb" => drop(out.insert("MemoryBytes".into(), Value::from((amount * MIB).round() as i64))),
            _ => generic.push(json!({ "DiscreteResourceSpec": { "Kind": kind, "Value": amount.round() as i64 } })),
        }
    }
    if !generic.is_empty() {
        out.insert("GenericResources".into(), Value::Array(generic));
    }
    Value::Object(out)
}

/// An instance's `host_ports` label (`tcp/8080,udp/53`) as a task's port status.
fn ports_json(ports: &str) -> Value {
    ports
        .split(',')
        .filter_map(|p| {
            let (protocol, port) = p.trim().split_once('/').unwrap_or(("tcp", p.trim()));
            let port: u16 = port.trim().parse().ok()?;
            Some(json!({ "Protocol": protocol, "PublishedPort": port, "TargetPort": port, "PublishMode": "host" }))
        })
        .collect()
}
