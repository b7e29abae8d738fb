//! How a SwarmKit node reads off a placewise host (the table in the [module docs](super)).

use crate::id::Symbol;
use crate::snapshot::{AttributeKey, AttributeType, Cluster, Host, HostSpec, HostState, ResourceSpec};
use serde_json::{Map, Value};
use std::fmt;

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

/// The host attribute holding a node's existing tasks by service, as counts
/// (`{"web": 3, "db": 1}`), for tasks not listed as instances ([`SwarmNode::tasks`]).
pub const SERVICE_TASKS_ATTRIBUTE: &str = "service_tasks";

/// `(active tasks of the service, active tasks in total)` on `host`: instances that are not
/// terminating (the service's are those whose group is `service`), plus the counts of
/// [`SERVICE_TASKS_ATTRIBUTE`] (by the service's name, `name`).
#[inline]
pub(crate) fn active_counts(host: &Host, service: Option<Symbol>, name: &str) -> (u32, u32) {
    let mut svc = 0u32;
    let mut total = 0u32;
    if let Some(Value::Object(counts)) = host.attribute(SERVICE_TASKS_ATTRIBUTE) {
        for (k, v) in counts {
            let n = v.as_u64().map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX));
            total = total.saturating_add(n);
            if k == name {
                svc = svc.saturating_add(n);
            }
        }
    }
    for i in &host.instances {
        if i.terminating {
            continue;
        }
        total = total.saturating_add(1);
        if service.is_some() && i.group == service {
            svc = svc.saturating_add(1);
        }
    }
    (svc, total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{Cluster, HostSpec, InstanceSpec};

    /// Counts from the attribute and the instances add up without overflowing: the sum of
    /// several counts near `u32::MAX` saturates instead of panicking (or wrapping to a small
    /// count in a release build).
    #[test]
    fn task_counts_that_sum_past_u32_saturate() {
        let tasks = serde_json::json!({ "web": u64::from(u32::MAX), "db": 7, "web2": u64::MAX });
        let cluster = Cluster::builder()
            .host(
                HostSpec::new("n1")
                    .attribute(SERVICE_TASKS_ATTRIBUTE, tasks)
                    .instance(InstanceSpec::new("i1").group("web")),
            )
            .build()
            .unwrap();
        let id = cluster.host_id("n1").unwrap();
        let host = cluster.host(id).unwrap();
        let web = cluster.symbols().get("web");
        assert_eq!(active_counts(host, web, "web"), (u32::MAX, u32::MAX));
        assert_eq!(active_counts(host, cluster.symbols().get("db"), "db"), (7, u32::MAX));
    }
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

/// A swarm node's role.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Role {
    /// A worker (the default).
    #[default]
    Worker,
    /// A manager.
    Manager,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Role::Worker => "worker",
            Role::Manager => "manager",
        })
    }
}

/// A swarm node's availability.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Availability {
    /// Takes new tasks (the default).
    #[default]
    Active,
    /// Takes no new task; running ones stay.
    Pause,
    /// Takes no new task; running ones move away.
    Drain,
}

/// A swarm node as typed fields, built into the [`HostSpec`] the spread engine reads (the
/// [module docs' mapping](super#mapping-swarmkit-onto-the-snapshot)), so that no node fact is
/// an attribute whose misspelt key would read as its default.
///
/// ```
/// use placewise::spread::{Availability, Role, SwarmNode};
///
/// let spec = SwarmNode::new("n1")
///     .role(Role::Manager)
///     .hostname("edge-1")
///     .label("zone", "z1")
///     .engine_label("storage", "ssd")
///     .availability(Availability::Drain)
///     .memory_mb(4096.0)
///     .tasks("web", 3, &[("memory_mb", 512.0)])
///     .build();
/// assert_eq!(spec.attributes["role"], "manager");
/// assert_eq!(spec.labels["engine.labels.storage"], "ssd");
/// assert!(spec.state.evicting);
/// assert_eq!(spec.resources["memory_mb"].used, 1536.0);
/// ```
#[derive(Debug, Clone)]
pub struct SwarmNode {
    spec: HostSpec,
    tasks: Map<String, Value>,
}

impl SwarmNode {
    /// A ready, active worker with the node id `id` (the host name) and nothing else.
    pub fn new(id: impl Into<String>) -> Self {
        SwarmNode { spec: HostSpec::new(id), tasks: Map::new() }
    }

    /// The role (default worker).
    pub fn role(mut self, role: Role) -> Self {
        self.spec = self.spec.attribute("role", Value::from(role.to_string()));
        self
    }

    /// The reported hostname (`node.hostname`).
    pub fn hostname(mut self, hostname: impl Into<String>) -> Self {
        self.spec = self.spec.attribute("hostname", Value::from(hostname.into()));
        self
    }

    /// A node label (`node.labels.<key>`).
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.spec = self.spec.label(key, value);
        self
    }

    /// An engine label (`engine.labels.<key>`).
    pub fn engine_label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.spec = self.spec.label(format!("{ENGINE_LABEL_PREFIX}{}", key.into()), value);
        self
    }

    /// The node reports no engine description: its engine labels read as `""`.
    pub fn no_engine(mut self) -> Self {
        self.spec = self.spec.attribute("engine", Value::from(false));
        self
    }

    /// The availability (default active).
    pub fn availability(mut self, availability: Availability) -> Self {
        self.spec.state.cordoned = availability == Availability::Pause;
        self.spec.state.evicting = availability == Availability::Drain;
        self
    }

    /// Whether the node is READY (default true).
    pub fn ready(mut self, ready: bool) -> Self {
        self.spec.state = HostState { up: ready, ..self.spec.state };
        self
    }

    /// The platform (`node.platform.os`, `node.platform.arch`).
    pub fn platform(mut self, os: impl Into<String>, arch: impl Into<String>) -> Self {
        self.spec = self.spec.attribute("os", Value::from(os.into())).attribute("arch", Value::from(arch.into()));
        self
    }

    /// The address (`node.ip`).
    pub fn ip(mut self, ip: impl Into<String>) -> Self {
        self.spec = self.spec.attribute("ip", Value::from(ip.into()));
        self
    }

    /// CPUs.
    pub fn vcpus(mut self, capacity: f64) -> Self {
        self.spec = self.spec.vcpus(capacity);
        self
    }

    /// Memory in MiB.
    pub fn memory_mb(mut self, capacity: f64) -> Self {
        self.spec = self.spec.memory_mb(capacity);
        self
    }

    /// Any resource kind (generic resources).
    pub fn resource(mut self, kind: impl Into<String>, capacity: f64) -> Self {
        self.spec = self.spec.resource(kind, ResourceSpec::new(capacity));
        self
    }

    /// `count` running tasks of `service`, each reserving `reservation` (by resource kind): the
    /// count is kept as one number ([`SERVICE_TASKS_ATTRIBUTE`]), not one instance record per
    /// task, and the reservations are added to the node's used amounts (a kind not declared yet
    /// is declared with capacity 0). Calls for the same service add up.
    pub fn tasks(mut self, service: impl Into<String>, count: u32, reservation: &[(&str, f64)]) -> Self {
        let service = service.into();
        let before = self.tasks.get(&service).and_then(Value::as_u64).unwrap_or(0);
        self.tasks.insert(service, Value::from(before + u64::from(count)));
        for &(kind, amount) in reservation {
            let r = self.spec.resources.entry(kind.to_owned()).or_insert_with(|| ResourceSpec::new(0.0));
            r.used += amount * f64::from(count);
        }
        self
    }

    /// The host spec.
    pub fn build(self) -> HostSpec {
        let mut spec = self.spec;
        if !self.tasks.is_empty() {
            spec = spec.attribute(SERVICE_TASKS_ATTRIBUTE, Value::Object(self.tasks));
        }
        spec
    }
}
