//! How a SwarmKit node reads off a placewise host (the table in the [module docs](super)).

use crate::id::Symbol;
use crate::snapshot::{AttributeKey, AttributeType, Cluster, Host};

/// The instance label that lists a task's host-mode published ports: `tcp/8080,udp/53`.
pub const HOST_PORTS_LABEL: &str = "host_ports";

/// The host label prefix under which a node's engine labels are stored.
pub const ENGINE_LABEL_PREFIX: &str = "engine.labels.";

/// The host attributes the spread engine reads (see the table in the module docs).
pub const ATTRIBUTES: &[AttributeKey] = &[
    ("engine", AttributeType::Bool),
    ("hostname", AttributeType::String),
    ("role", AttributeType::String),
    ("os", AttributeType::String),
    ("arch", AttributeType::String),
    ("ip", AttributeType::String),
];

/// A string attribute of `host`, `""` when absent or not a string.
pub(crate) fn str_attribute<'a>(host: &'a Host, name: &str) -> &'a str {
    host.attribute(name).and_then(|v| v.as_str()).unwrap_or("")
}

/// Whether the node reports an engine description (attribute `engine` is not `false`).
pub(crate) fn has_engine(host: &Host) -> bool {
    host.attribute("engine").and_then(|v| v.as_bool()).unwrap_or(true)
}

/// The reported hostname (`""` when the node reports none).
pub(crate) fn hostname(host: &Host) -> &str {
    str_attribute(host, "hostname")
}

/// The observed role, `worker` by default.
pub(crate) fn role(host: &Host) -> &str {
    host.attribute("role").and_then(|v| v.as_str()).unwrap_or("worker")
}

/// Whether the node has any platform information.
pub(crate) fn has_platform(host: &Host) -> bool {
    host.attribute("os").is_some() || host.attribute("arch").is_some()
}

/// The value of a swarm node label: a host label with a plain key.
pub(crate) fn node_label<'a>(cluster: &'a Cluster, host: &Host, key: Option<Symbol>) -> &'a str {
    key.and_then(|k| host.labels.get(k)).map_or("", |v| cluster.resolve(v))
}

/// The value of an engine label: the host label `engine.labels.<key>` (its symbol given), `""`
/// when the node has no engine description.
pub(crate) fn engine_label<'a>(cluster: &'a Cluster, host: &Host, full_key: Option<Symbol>) -> &'a str {
    if !has_engine(host) {
        return "";
    }
    node_label(cluster, host, full_key)
}

/// `(active tasks of the service, active tasks in total)` on `host`: instances that are not
/// terminating; the service's are those whose group is `service`.
pub(crate) fn active_counts(host: &Host, service: Option<Symbol>) -> (u32, u32) {
    let mut svc = 0;
    let mut total = 0;
    for i in &host.instances {
        if i.terminating {
            continue;
        }
        total += 1;
        if service.is_some() && i.group == service {
            svc += 1;
        }
    }
    (svc, total)
}

/// Whether `(protocol, port)` is published in host mode by a task on `host` (terminating ones
/// included: they still hold the port).
pub(crate) fn port_in_use(cluster: &Cluster, host: &Host, protocol: &str, port: u16) -> bool {
    let Some(key) = cluster.symbols().get(HOST_PORTS_LABEL) else { return false };
    host.instances.iter().filter_map(|i| i.labels.get(key)).any(|v| {
        cluster.resolve(v).split(',').any(|p| {
            let (proto, num) = p.trim().split_once('/').unwrap_or(("tcp", p.trim()));
            proto.eq_ignore_ascii_case(protocol) && num.trim().parse::<u16>() == Ok(port)
        })
    })
}
