//! Reading the objects: nodes, services (inspected, bare specs and Compose services) and tasks.

use super::units::{cpus_in_nanos, ram_in_bytes, MIB, NANO};
use super::{ServiceMode, SwarmService};
use crate::import::{shown, ImportError, ImportWarning, Object};
use crate::snapshot::{HostSpec, InstanceSpec, ResourceSpec};
use crate::spread::{Availability, Descriptor, Preference, Role, SpreadRequest, SwarmNode, HOST_PORTS_LABEL};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The shape of one object of the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// `docker node inspect`, `GET /nodes`.
    Node,
    /// `docker service inspect`, `GET /services`.
    Service,
    /// A bare ServiceSpec (the body of `POST /services/create`): a service to plan.
    ServiceSpec,
    /// `docker inspect` of a task, `GET /tasks`.
    Task,
    /// A Compose file (parsed from YAML by the caller): its services, to plan.
    Compose,
    /// A NodeSpec alone (the body of a node update): no id, no resources; not read.
    NodeSpec,
    /// A Placement alone (constraints and preferences without a service); not read.
    Placement,
}

impl Shape {
    /// The kind's name in errors.
    pub(super) fn name(self) -> &'static str {
        match self {
            Shape::Node => "Node",
            Shape::Service => "Service",
            Shape::ServiceSpec => "ServiceSpec",
            Shape::Task => "Task",
            Shape::Compose => "Compose file",
            Shape::NodeSpec => "NodeSpec",
            Shape::Placement => "Placement",
        }
    }
}

/// The shape of `v`, if it is a Swarm object.
pub(super) fn shape(v: &Value) -> Option<Shape> {
    let o = v.as_object()?;
    let has = |k: &str| o.contains_key(k);
    if o.get("services").is_some_and(Value::is_object) {
        return Some(Shape::Compose);
    }
    if has("ID") {
        if has("ServiceID") || has("DesiredState") {
            return Some(Shape::Task);
        }
        let spec = o.get("Spec").and_then(Value::as_object);
        let spec_has = |k: &str| spec.is_some_and(|s| s.contains_key(k));
        if has("Description") || has("ManagerStatus") || spec_has("Role") || spec_has("Availability") {
            return Some(Shape::Node);
        }
        if spec_has("TaskTemplate") || spec_has("Mode") {
            return Some(Shape::Service);
        }
        return None;
    }
    if has("TaskTemplate") {
        return Some(Shape::ServiceSpec);
    }
    if has("Role") || has("Availability") {
        return Some(Shape::NodeSpec);
    }
    if has("Constraints") || has("Preferences") {
        return Some(Shape::Placement);
    }
    None
}

/// The kinds this importer reads, as [`ImportError::UnknownKind`] lists them.
pub(super) fn expected() -> Vec<String> {
    [
        "Node (docker node inspect, GET /nodes)",
        "Service (docker service inspect, GET /services)",
        "Task (docker inspect of tasks, GET /tasks)",
        "ServiceSpec (a service to plan)",
        "a Compose file's services (to plan)",
    ]
    .map(String::from)
    .to_vec()
}

fn non_negative(o: &Object<'_>, path: &str) -> Result<Option<i64>, ImportError> {
    match o.opt_i64(path, false)? {
        Some(n) if n < 0 => Err(o.invalid(path, format!("expected a non-negative number, found {n}"))),
        n => Ok(n),
    }
}

fn to_u32(o: &Object<'_>, path: &str, n: i64) -> Result<u32, ImportError> {
    u32::try_from(n).map_err(|_| o.invalid(path, format!("{n} is too large")))
}

/// A string map at `path` (labels), empty when absent.
fn string_map<'a>(o: &Object<'a>, path: &str) -> Result<Vec<(&'a str, &'a str)>, ImportError> {
    let Some(map) = o.opt_map(path)? else { return Ok(Vec::new()) };
    map.iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k.as_str(), s.as_str())),
            other => Err(o.invalid(&format!("{path}.{k}"), format!("expected a string, found {}", shown(other)))),
        })
        .collect()
}

/// Generic resources (`[{DiscreteResourceSpec: {Kind, Value}} | {NamedResourceSpec: {Kind,
/// Value}}]`, or Compose's `discrete_resource_spec: {kind, value}`) as counts per kind: a
/// named resource counts one. Returns whether a named one was seen.
fn generic(o: &Object<'_>, path: &str, into: &mut BTreeMap<String, f64>) -> Result<bool, ImportError> {
    let Some(items) = o.opt_array(path)? else { return Ok(false) };
    let mut named = false;
    for (i, item) in items.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let read = |key: &str| item.get(key).filter(|v| !v.is_null());
        let (kind, amount) = if let Some(d) = read("DiscreteResourceSpec").or_else(|| read("discrete_resource_spec")) {
            let kind = d.get("Kind").or_else(|| d.get("kind")).and_then(Value::as_str);
            let value = d.get("Value").or_else(|| d.get("value"));
            let Some(kind) = kind else { return Err(o.missing(&format!("{at}.DiscreteResourceSpec.Kind"))) };
            let Some(value) = value.and_then(Value::as_i64).filter(|v| *v >= 0) else {
                let found = value.map_or_else(|| "nothing".to_owned(), shown);
                return Err(o.invalid(
                    &format!("{at}.DiscreteResourceSpec.Value"),
                    format!("expected a non-negative whole number, found {found}"),
                ));
            };
            (kind, value as f64)
        } else if let Some(n) = read("NamedResourceSpec").or_else(|| read("named_resource_spec")) {
            let Some(kind) = n.get("Kind").or_else(|| n.get("kind")).and_then(Value::as_str) else {
                return Err(o.missing(&format!("{at}.NamedResourceSpec.Kind")));
            };
            named = true;
            (kind, 1.0)
        } else {
            return Err(o.invalid(
                &at,
                format!("expected a DiscreteResourceSpec or a NamedResourceSpec, found {}", shown(item)),
            ));
        };
        if kind.is_empty() || kind == "vcpus" || kind == "memory_mb" {
            return Err(
                o.invalid(&at, format!("generic resource kind `{kind}` is empty or clashes with CPU or memory"))
            );
        }
        *into.entry(kind.to_owned()).or_insert(0.0) += amount;
    }
    Ok(named)
}

/// Reservations `{NanoCPUs, MemoryBytes, GenericResources}` at `path` as resource amounts by
/// kind (zero amounts left out: SwarmKit's resource filter skips them).
fn reservations(o: &Object<'_>, path: &str) -> Result<BTreeMap<String, f64>, ImportError> {
    let mut out = BTreeMap::new();
    if let Some(n) = non_negative(o, &format!("{path}.NanoCPUs"))?.filter(|&n| n > 0) {
        out.insert("vcpus".to_owned(), n as f64 / NANO);
    }
    if let Some(b) = non_negative(o, &format!("{path}.MemoryBytes"))?.filter(|&b| b > 0) {
        out.insert("memory_mb".to_owned(), b as f64 / MIB);
    }
    generic(o, &format!("{path}.GenericResources"), &mut out)?;
    out.retain(|_, v| *v > 0.0);
    Ok(out)
}

/// One node, as the spread engine models it ([`SwarmNode`]), with its id.
pub(super) fn node(o: &Object<'_>, warnings: &mut Vec<ImportWarning>) -> Result<(String, HostSpec), ImportError> {
    let id = o.str("ID")?;
    let mut n = SwarmNode::new(id);
    n = match o.opt_str("Spec.Role")?.map(str::to_ascii_lowercase).as_deref() {
        None | Some("worker") => n.role(Role::Worker),
        Some("manager") => n.role(Role::Manager),
        Some(other) => return Err(o.invalid("Spec.Role", format!("expected worker or manager, found {other:?}"))),
    };
    n = match o.opt_str("Spec.Availability")?.map(str::to_ascii_lowercase).as_deref() {
        None | Some("active") => n.availability(Availability::Active),
        Some("pause") => n.availability(Availability::Pause),
        Some("drain") => n.availability(Availability::Drain),
        Some(other) => {
            return Err(o.invalid("Spec.Availability", format!("expected active, pause or drain, found {other:?}")))
        }
    };
    n = match o.opt_str("Status.State")?.map(str::to_ascii_lowercase).as_deref() {
        Some("ready") => n.ready(true),
        Some("down" | "unknown" | "disconnected") => n.ready(false),
        Some(other) => {
            return Err(
                o.invalid("Status.State", format!("expected ready, down, unknown or disconnected, found {other:?}"))
            )
        }
        None => {
            warnings.push(o.warning("Status.State", "no state reported: taken as not ready"));
            n.ready(false)
        }
    };
    if let Some(h) = o.opt_str("Description.Hostname")? {
        n = n.hostname(h);
    }
    let (os, arch) = (o.opt_str("Description.Platform.OS")?, o.opt_str("Description.Platform.Architecture")?);
    if os.is_some() || arch.is_some() {
        n = n.platform(os.unwrap_or(""), arch.unwrap_or(""));
    }
    if let Some(addr) = o.opt_str("Status.Addr")? {
        n = n.ip(addr);
    }
    if o.get("Description.Resources").is_none() {
        warnings.push(o.warning("Description.Resources", "no resources reported: 0 CPUs and no memory"));
    }
    let cpus = non_negative(o, "Description.Resources.NanoCPUs")?.unwrap_or(0);
    let memory = non_negative(o, "Description.Resources.MemoryBytes")?.unwrap_or(0);
    n = n.vcpus(cpus as f64 / NANO).memory_mb(memory as f64 / MIB);
    let mut kinds = BTreeMap::new();
    if generic(o, "Description.Resources.GenericResources", &mut kinds)? {
        warnings.push(o.warning(
            "Description.Resources.GenericResources",
            "named generic resources are counted per kind; which named unit a task gets is not modelled",
        ));
    }
    for (kind, amount) in kinds {
        n = n.resource(kind, amount);
    }
    for (k, v) in string_map(o, "Spec.Labels")? {
        n = n.label(k, v);
    }
    if o.opt_map("Description.Engine")?.is_some() {
        for (k, v) in string_map(o, "Description.Engine.Labels")? {
            n = n.engine_label(k, v);
        }
    } else {
        n = n.no_engine();
    }
    Ok((id.to_owned(), n.build()))
}

/// A ServiceSpec (`o` reads its fields: `Name`, `TaskTemplate` …) as a service to place.
pub(super) fn service_spec(
    o: &Object<'_>,
    id: Option<&str>,
    deployed: bool,
    warnings: &mut Vec<ImportWarning>,
) -> Result<SwarmService, ImportError> {
    let name = o.str("Name")?;
    let mode = if o.get("Mode.Global").is_some() {
        ServiceMode::Global
    } else if o.get("Mode.GlobalJob").is_some() {
        warnings.push(o.warning("Mode.GlobalJob", "a global job is placed as a global service"));
        ServiceMode::Global
    } else if o.get("Mode.ReplicatedJob").is_some() {
        warnings.push(o.warning("Mode.ReplicatedJob", "a replicated job is placed as its MaxConcurrent tasks"));
        let n = non_negative(o, "Mode.ReplicatedJob.MaxConcurrent")?.unwrap_or(1);
        ServiceMode::Replicated(to_u32(o, "Mode.ReplicatedJob.MaxConcurrent", n)?)
    } else {
        let n = non_negative(o, "Mode.Replicated.Replicas")?.unwrap_or(1);
        ServiceMode::Replicated(to_u32(o, "Mode.Replicated.Replicas", n)?)
    };
    let mut request = SpreadRequest::new(name, 0);
    let placement = "TaskTemplate.Placement";
    for (i, text) in o.strings(&format!("{placement}.Constraints"))?.into_iter().enumerate() {
        request = constraint(o, &format!("{placement}.Constraints[{i}]"), request, text)?;
    }
    if let Some(prefs) = o.opt_array(&format!("{placement}.Preferences"))? {
        for (i, p) in prefs.iter().enumerate() {
            let at = format!("{placement}.Preferences[{i}]");
            match p.get("Spread").and_then(|s| s.get("SpreadDescriptor")) {
                Some(Value::String(d)) => request = request.preference(preference(o, &at, d, warnings)),
                Some(other) => {
                    return Err(o.invalid(
                        &format!("{at}.Spread.SpreadDescriptor"),
                        format!("expected a string, found {}", shown(other)),
                    ))
                }
                None => warnings.push(o.warning(&at, "not a Spread preference: skipped, as SwarmKit does")),
            }
        }
    }
    if let Some(m) = non_negative(o, &format!("{placement}.MaxReplicas"))? {
        request = request.max_replicas(to_u32(o, &format!("{placement}.MaxReplicas"), m)?);
    }
    if let Some(platforms) = o.opt_array(&format!("{placement}.Platforms"))? {
        for (i, p) in platforms.iter().enumerate() {
            let at = format!("{placement}.Platforms[{i}]");
            let field = |key: &str| match p.get(key) {
                None | Some(Value::Null) => Ok(""),
                Some(Value::String(s)) => Ok(s.as_str()),
                Some(other) => {
                    Err(o.invalid(&format!("{at}.{key}"), format!("expected a string, found {}", shown(other))))
                }
            };
            request = request.platform(field("OS")?, field("Architecture")?);
        }
    }
    request.resources = reservations(o, "TaskTemplate.Resources.Reservations")?;
    if let Some(ports) = o.opt_array("EndpointSpec.Ports")? {
        for (i, p) in ports.iter().enumerate() {
            if let Some((protocol, port)) = host_port(o, &format!("EndpointSpec.Ports[{i}]"), p, false)? {
                request = request.port(&protocol, port);
            }
        }
    }
    if o.opt_array("TaskTemplate.Networks")?.is_some_and(|n| !n.is_empty()) {
        warnings.push(o.warning(
            "TaskTemplate.Networks",
            "SwarmKit's plugin filter (network drivers) is not modelled: every node is taken to have them",
        ));
    }
    if let Some(mounts) = o.opt_array("TaskTemplate.ContainerSpec.Mounts")? {
        let plugin = mounts.iter().any(|m| {
            let driver = m.pointer("/VolumeOptions/DriverConfig/Name").and_then(Value::as_str).unwrap_or("");
            m.get("Type").and_then(Value::as_str) == Some("cluster")
                || (m.get("Type").and_then(Value::as_str) == Some("volume") && !matches!(driver, "" | "local"))
        });
        if plugin {
            warnings.push(o.warning(
                "TaskTemplate.ContainerSpec.Mounts",
                "volume plugins and cluster (CSI) volumes are not modelled: every node is taken to have them",
            ));
        }
    }
    finish(o, id.unwrap_or(name), name, mode, deployed, request, warnings)
}

/// A Compose service (`o` reads the service's mapping; its name is the key) as a service to
/// plan.
pub(super) fn compose_service(
    o: &Object<'_>,
    name: &str,
    warnings: &mut Vec<ImportWarning>,
) -> Result<SwarmService, ImportError> {
    let replicas = match o.get("deploy.replicas") {
        None => 1,
        Some(v) => match v.as_u64().or_else(|| v.as_str().and_then(|s| s.trim().parse().ok())) {
            Some(n) => to_u32(o, "deploy.replicas", i64::try_from(n).unwrap_or(i64::MAX))?,
            None => return Err(o.invalid("deploy.replicas", format!("expected a whole number, found {}", shown(v)))),
        },
    };
    let mode = match o.opt_str("deploy.mode")? {
        None | Some("replicated") => ServiceMode::Replicated(replicas),
        Some("global") => ServiceMode::Global,
        Some("replicated-job") => {
            warnings.push(o.warning("deploy.mode", "a replicated job is placed as its replicas"));
            ServiceMode::Replicated(replicas)
        }
        Some("global-job") => {
            warnings.push(o.warning("deploy.mode", "a global job is placed as a global service"));
            ServiceMode::Global
        }
        Some(other) => return Err(o.invalid("deploy.mode", format!("expected replicated or global, found {other:?}"))),
    };
    let mut request = SpreadRequest::new(name, 0);
    for (i, text) in o.strings("deploy.placement.constraints")?.into_iter().enumerate() {
        request = constraint(o, &format!("deploy.placement.constraints[{i}]"), request, text)?;
    }
    if let Some(prefs) = o.opt_array("deploy.placement.preferences")? {
        for (i, p) in prefs.iter().enumerate() {
            let at = format!("deploy.placement.preferences[{i}]");
            let descriptor = match p {
                Value::Object(m) => m.get("spread").and_then(Value::as_str),
                Value::String(s) => s.strip_prefix("spread="),
                _ => None,
            };
            match descriptor {
                Some(d) => request = request.preference(preference(o, &at, d, warnings)),
                None => warnings.push(o.warning(&at, "not a spread preference: skipped, as SwarmKit does")),
            }
        }
    }
    match o.get("deploy.placement.max_replicas_per_node") {
        None => {}
        Some(v) => match v.as_u64().and_then(|n| u32::try_from(n).ok()) {
            Some(m) => request = request.max_replicas(m),
            None => {
                return Err(o.invalid(
                    "deploy.placement.max_replicas_per_node",
                    format!("expected a whole number, found {}", shown(v)),
                ))
            }
        },
    }
    let res = "deploy.resources.reservations";
    if let Some(v) = o.get(&format!("{res}.cpus")) {
        let text = match v {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            other => {
                return Err(
                    o.invalid(&format!("{res}.cpus"), format!("expected a decimal number, found {}", shown(other)))
                )
            }
        };
        let Some(nanos) = cpus_in_nanos(&text) else {
            return Err(o.invalid(
                &format!("{res}.cpus"),
                format!("expected a non-negative decimal number of CPUs, found {}", shown(v)),
            ));
        };
        if nanos > 0 {
            request.resources.insert("vcpus".to_owned(), nanos as f64 / NANO);
        }
    }
    if let Some(v) = o.get(&format!("{res}.memory")) {
        let bytes = match v {
            Value::String(s) => ram_in_bytes(s),
            Value::Number(n) => n.as_i64().filter(|b| *b >= 0),
            _ => None,
        };
        let Some(bytes) = bytes else {
            return Err(o.invalid(
                &format!("{res}.memory"),
                format!("expected a size such as 512M (binary units: 20M is 20 MiB), found {}", shown(v)),
            ));
        };
        if bytes > 0 {
            request.resources.insert("memory_mb".to_owned(), bytes as f64 / MIB);
        }
    }
    generic(o, &format!("{res}.generic_resources"), &mut request.resources)?;
    request.resources.retain(|_, v| *v > 0.0);
    if let Some(ports) = o.opt_array("ports")? {
        for (i, p) in ports.iter().enumerate() {
            if let Some((protocol, port)) = host_port(o, &format!("ports[{i}]"), p, true)? {
                request = request.port(&protocol, port);
            }
        }
    }
    finish(o, name, name, mode, false, request, warnings)
}

fn finish(
    o: &Object<'_>,
    id: &str,
    name: &str,
    mode: ServiceMode,
    deployed: bool,
    mut request: SpreadRequest,
    warnings: &mut Vec<ImportWarning>,
) -> Result<SwarmService, ImportError> {
    if mode == ServiceMode::Global && !request.preferences.is_empty() {
        warnings.push(o.warning("", "placement preferences do nothing for a global service (SwarmKit ignores them)"));
        request.preferences.clear();
    }
    Ok(SwarmService {
        id: id.to_owned(),
        name: name.to_owned(),
        origin: o.origin().to_owned(),
        mode,
        deployed,
        running: 0,
        request,
    })
}

fn constraint(o: &Object<'_>, at: &str, request: SpreadRequest, text: &str) -> Result<SpreadRequest, ImportError> {
    request.constraint(text).map_err(|e| match e {
        crate::spread::SpreadError::Constraint { constraint, error } => {
            o.invalid(at, format!("constraint {constraint:?}: {error} (the Docker API refuses it)"))
        }
        other => o.invalid(at, other.to_string()),
    })
}

/// A spread descriptor as SwarmKit reads it: `node.labels.<k>` and `engine.labels.<k>` add a
/// level; anything else (a plain key, `node.id`, `node.hostname` …) is skipped by SwarmKit and
/// so stays unsupported here, with a warning.
fn preference(o: &Object<'_>, at: &str, descriptor: &str, warnings: &mut Vec<ImportWarning>) -> Preference {
    let level = |p: &str| {
        descriptor.len() > p.len()
            && descriptor.is_char_boundary(p.len())
            && descriptor[..p.len()].eq_ignore_ascii_case(p)
    };
    if level("node.labels.") || level("engine.labels.") {
        Preference::spread(descriptor)
    } else {
        warnings
            .push(o.warning(at, format!("SwarmKit ignores the spread descriptor `{descriptor}`: it adds no level")));
        Preference::Spread(Descriptor::Unsupported(descriptor.to_owned()))
    }
}

/// A host-mode published port of an endpoint (or, with `compose`, a Compose long-syntax port
/// entry), if it is one.
fn host_port(o: &Object<'_>, at: &str, p: &Value, compose: bool) -> Result<Option<(String, u16)>, ImportError> {
    let Value::Object(m) = p else { return Ok(None) }; // Compose's short syntax is ingress
    let (mode, published, protocol) =
        if compose { ("mode", "published", "protocol") } else { ("PublishMode", "PublishedPort", "Protocol") };
    if !m.get(mode).and_then(Value::as_str).is_some_and(|s| s.eq_ignore_ascii_case("host")) {
        return Ok(None);
    }
    let found = match m.get(published) {
        None | Some(Value::Null) => return Ok(None),
        Some(v) => v,
    };
    let port = found.as_u64().or_else(|| found.as_str().and_then(|s| s.trim().parse().ok()));
    let Some(port) = port.and_then(|n| u16::try_from(n).ok()) else {
        return Err(o.invalid(&format!("{at}.{published}"), format!("expected a port number, found {}", shown(found))));
    };
    let protocol = m.get(protocol).and_then(Value::as_str).unwrap_or("tcp").to_ascii_lowercase();
    Ok((port != 0).then_some((protocol, port)))
}

/// What a task holds on its node, when it holds anything.
#[derive(Debug)]
pub(super) struct HeldTask<'a> {
    pub(super) node: &'a str,
    pub(super) service: &'a str,
    pub(super) instance: InstanceSpec,
}

/// SwarmKit's task states in order; those from `assigned` to `running` hold resources.
const STATES: [&str; 14] = [
    "new",
    "pending",
    "assigned",
    "accepted",
    "preparing",
    "ready",
    "starting",
    "running",
    "complete",
    "shutdown",
    "failed",
    "rejected",
    "remove",
    "orphaned",
];

fn state_rank(o: &Object<'_>, path: &str, state: &str) -> Result<usize, ImportError> {
    STATES
        .iter()
        .position(|s| s.eq_ignore_ascii_case(state))
        .ok_or_else(|| o.invalid(path, format!("unknown task state {state:?}")))
}

/// One task: `Ok(None)` when its state holds nothing (`new`, `pending`, or past `running`).
/// The reservations are the task's own spec's (what SwarmKit subtracts), else `service`'s;
/// its assigned generic resources, when listed, replace the generic part.
pub(super) fn task<'a>(
    o: &Object<'a>,
    service_reservations: impl FnOnce(&str) -> Option<BTreeMap<String, f64>>,
) -> Result<(String, Option<HeldTask<'a>>), ImportError> {
    let id = o.str("ID")?;
    let state = o.str("Status.State")?;
    let rank = state_rank(o, "Status.State", state)?;
    let desired = match o.opt_str("DesiredState")? {
        Some(d) => state_rank(o, "DesiredState", d)?,
        None => 7,
    };
    if !(2..=7).contains(&rank) {
        return Ok((id.to_owned(), None));
    }
    let node = o.str("NodeID")?;
    let service = o.str("ServiceID")?;
    let mut resources = if o.get("Spec.Resources").is_some() {
        reservations(o, "Spec.Resources.Reservations")?
    } else {
        service_reservations(service).unwrap_or_default()
    };
    if o.get("AssignedGenericResources").is_some() {
        resources.retain(|k, _| k == "vcpus" || k == "memory_mb");
        generic(o, "AssignedGenericResources", &mut resources)?;
    }
    let mut instance = InstanceSpec::new(id).terminating(desired > 8);
    instance.resources = resources;
    if let Some(ports) = o.opt_array("Status.PortStatus.Ports")? {
        let mut held = Vec::new();
        for (i, p) in ports.iter().enumerate() {
            if let Some((protocol, port)) = host_port(o, &format!("Status.PortStatus.Ports[{i}]"), p, false)? {
                held.push(format!("{protocol}/{port}"));
            }
        }
        if !held.is_empty() {
            instance = instance.label(HOST_PORTS_LABEL, held.join(","));
        }
    }
    Ok((id.to_owned(), Some(HeldTask { node, service, instance })))
}

/// Declares on `host` every kind `resources` names (capacity 0 when the node reports none), so
/// that a task's reservation of a kind its node lacks leaves that kind overdrawn, not unknown.
pub(super) fn declare_kinds(host: &mut HostSpec, resources: &BTreeMap<String, f64>) {
    for kind in resources.keys() {
        host.resources.entry(kind.clone()).or_insert_with(|| ResourceSpec::new(0.0));
    }
}

/// The keys of a Compose file's `services` map with their values.
pub(super) fn compose_services(value: &Value) -> Option<&Map<String, Value>> {
    value.get("services").and_then(Value::as_object)
}
