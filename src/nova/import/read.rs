//! The documents to tables: every response shape read, by its top-level keys.

use crate::import::{items, shown, Document, ImportError, ImportWarning, Object, ObjectRef};
use crate::nova::request::{Flavor, ServerGroup};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One inventory of a resource provider.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Inventory {
    pub(super) total: f64,
    pub(super) reserved: f64,
    pub(super) min_unit: f64,
    pub(super) max_unit: f64,
    pub(super) step_size: f64,
    pub(super) allocation_ratio: f64,
}

/// A resource provider, with whatever of its sub-resources the input gave.
#[derive(Debug, Clone, Default)]
pub(super) struct Provider {
    pub(super) origin: String,
    pub(super) uuid: String,
    pub(super) name: String,
    pub(super) parent: Option<String>,
    pub(super) inventories: BTreeMap<String, Inventory>,
    pub(super) usages: BTreeMap<String, f64>,
    pub(super) traits: Vec<String>,
    pub(super) aggregates: Vec<String>,
    pub(super) consumers: Vec<String>,
}

/// A hypervisor (compute node) of `os-hypervisors`.
#[derive(Debug, Clone, Default)]
pub(super) struct Hypervisor {
    pub(super) origin: String,
    pub(super) nodename: String,
    pub(super) id: Option<String>,
    pub(super) service_host: Option<String>,
    pub(super) up: bool,
    pub(super) enabled: bool,
    pub(super) disabled_reason: Option<String>,
    pub(super) attributes: Map<String, Value>,
    /// `(vcpus, vcpus_used, memory_mb, memory_mb_used, local_gb, local_gb_used)` before 2.88.
    pub(super) capacity: Option<[f64; 6]>,
    pub(super) servers: Vec<String>,
}

/// A `nova-compute` service.
#[derive(Debug, Clone, Default)]
pub(super) struct Service {
    pub(super) origin: String,
    pub(super) up: bool,
    pub(super) enabled: bool,
    pub(super) forced_down: bool,
    pub(super) disabled_reason: Option<String>,
}

/// A host aggregate of `os-aggregates`.
#[derive(Debug, Clone, Default)]
pub(super) struct NovaAggregate {
    pub(super) origin: String,
    pub(super) name: String,
    pub(super) uuid: Option<String>,
    pub(super) metadata: BTreeMap<String, String>,
    pub(super) hosts: Vec<String>,
}

/// Everything read, before the cluster is built.
#[derive(Debug, Default)]
pub(super) struct Tables {
    pub(super) providers: Vec<Provider>,
    pub(super) hypervisors: Vec<Hypervisor>,
    pub(super) services: BTreeMap<String, Service>,
    pub(super) aggregates: Vec<NovaAggregate>,
    pub(super) zones: Vec<(String, Vec<String>, String)>,
    pub(super) flavors: Vec<(Flavor, String)>,
    pub(super) server_groups: Vec<ServerGroup>,
    pub(super) kinds: BTreeMap<&'static str, usize>,
    pub(super) group_names: BTreeMap<String, String>,
    pub(super) warnings: Vec<ImportWarning>,
    /// Per-provider responses whose provider comes from the path: `(uuid, origin, kind, value)`.
    pending: Vec<(Option<String>, String, &'static str, Value)>,
    /// Flavor extra-specs responses: `(flavor from the path, origin, specs)`.
    extra_specs: Vec<(Option<String>, String, Value)>,
    /// The first hypervisors page that links a next page, as its warning.
    next_page: Option<ImportWarning>,
    /// A hypervisors page without a next link (the last page, or the only one) was read.
    last_page: bool,
}

/// The response kinds read, as [`recognises`](super::recognises) and errors name them.
pub(super) const KINDS: &[&str] = &[
    "Placement resource_providers (list or one provider, sub-resources embedded or not)",
    "Placement inventories, usages, traits, aggregates, allocations of one provider",
    "Placement allocation_candidates (provider_summaries)",
    "Nova hypervisors (detail)",
    "Nova os-aggregates",
    "Nova flavors (detail) and flavor extra_specs",
    "Nova os-server-groups",
    "Nova os-services",
    "Nova os-availability-zone (detail)",
];

/// The response kind of `value`, by its keys; `None` for a shape not read (request bodies,
/// resource classes, versions …).
pub(super) fn kind_of(value: &Value) -> Option<&'static str> {
    let map = value.as_object()?;
    let has = |k: &str| map.contains_key(k);
    let array_of_strings =
        |k: &str| map.get(k).and_then(Value::as_array).is_some_and(|a| a.iter().all(Value::is_string));
    Some(if has("resource_providers") {
        "resource_providers"
    } else if has("provider_summaries") {
        "allocation_candidates"
    } else if has("uuid") && has("generation") && has("name") {
        "resource_provider"
    } else if map.get("inventories").is_some_and(Value::is_object) && !has("allocations") {
        "inventories"
    } else if has("usages") && has("resource_provider_generation") {
        "usages"
    } else if has("usages") {
        "project_usages"
    } else if has("traits") && has("resource_provider_generation") {
        "traits"
    } else if has("traits") && array_of_strings("traits") && map.len() == 1 {
        "trait_list"
    } else if has("aggregates")
        && array_of_strings("aggregates")
        && map.get("aggregates").is_some_and(|a| a.as_array().is_some_and(|a| !a.is_empty()))
    {
        "provider_aggregates"
    } else if has("allocations") && has("resource_provider_generation") {
        "provider_allocations"
    } else if has("hypervisors") {
        "hypervisors"
    } else if has("hypervisor_statistics") {
        "hypervisor_statistics"
    } else if has("aggregates") || map.get("aggregate").is_some_and(|a| a.get("id").is_some()) {
        "os-aggregates"
    } else if has("flavors") || map.get("flavor").is_some_and(|f| f.get("id").is_some()) {
        "flavors"
    } else if map.get("extra_specs").is_some_and(Value::is_object) && map.len() == 1 {
        "extra_specs"
    } else if has("server_groups") || map.get("server_group").is_some_and(|g| g.get("id").is_some()) {
        "os-server-groups"
    } else if map.get("services").is_some_and(Value::is_array) {
        "os-services"
    } else if has("availabilityZoneInfo") {
        "os-availability-zone"
    } else {
        return None;
    })
}

/// The last path component of `origin` that is a UUID (a provider's folder or file name), else
/// `None`.
pub(super) fn uuid_in_path(origin: &str) -> Option<String> {
    origin.split(['/', '\\']).flat_map(|part| part.split(['.', '_'])).rfind(|p| is_uuid(p)).map(str::to_ascii_lowercase)
}

fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups.iter().zip([8, 4, 4, 4, 12]).all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The folder holding `origin` (a flavor's id or name for its extra specs).
fn parent_folder(origin: &str) -> Option<String> {
    let mut parts: Vec<&str> = origin.split(['/', '\\']).filter(|p| !p.is_empty()).collect();
    parts.pop()?;
    parts.pop().map(str::to_owned)
}

impl Tables {
    /// Reads every document.
    pub(super) fn read(docs: &[Document]) -> Result<Tables, ImportError> {
        let mut t = Tables::default();
        for doc in docs {
            for value in items(&doc.value) {
                t.document(&doc.origin, value)?;
            }
        }
        // Pages link the next one; the last links none. Without it, hosts are missing.
        if let (Some(w), false) = (t.next_page.take(), t.last_page) {
            t.warnings.push(w);
        }
        t.resolve()?;
        Ok(t)
    }

    fn count(&mut self, kind: &'static str, n: usize) {
        *self.kinds.entry(kind).or_default() += n;
    }

    fn note(&mut self, origin: &str, kind: &str, message: &str) {
        self.warnings.push(ImportWarning {
            origin: origin.to_owned(),
            object: Some(ObjectRef::new(kind, "response")),
            field: String::new(),
            message: message.to_owned(),
        });
    }

    fn document(&mut self, origin: &str, value: &Value) -> Result<(), ImportError> {
        let Some(kind) = kind_of(value) else {
            return Err(ImportError::UnknownKind {
                origin: origin.to_owned(),
                kind: describe(value),
                expected: KINDS.iter().map(|k| k.to_string()).collect(),
            });
        };
        let doc = Object::new(origin, kind, "response", value);
        match kind {
            "resource_providers" => {
                let list = doc.opt_array("resource_providers")?.unwrap_or_default();
                for rp in list {
                    self.provider(origin, rp)?;
                }
                self.count(kind, list.len());
            }
            "resource_provider" => {
                self.provider(origin, value)?;
                self.count("resource_providers", 1);
            }
            "allocation_candidates" => self.summaries(&doc)?,
            "inventories" | "usages" | "traits" | "provider_aggregates" | "provider_allocations" => {
                self.pending.push((uuid_in_path(origin), origin.to_owned(), kind, value.clone()));
            }
            "project_usages" => self.note(origin, "usages", "a project's usages are not per provider; ignored"),
            "trait_list" => self.note(origin, "traits", "the list of every trait is not a provider's; ignored"),
            "hypervisor_statistics" => {
                self.note(origin, "hypervisor_statistics", "totals over all hypervisors are not per host; ignored")
            }
            "hypervisors" => {
                for h in doc.opt_array("hypervisors")?.unwrap_or_default() {
                    self.hypervisor(origin, h)?;
                }
                self.count(kind, doc.opt_array("hypervisors")?.map_or(0, <[Value]>::len));
                let next = doc.opt_array("hypervisors_links")?.unwrap_or_default();
                if !next.iter().any(|l| l.get("rel").and_then(Value::as_str) == Some("next")) {
                    self.last_page = true;
                } else if self.next_page.is_none() {
                    self.next_page = Some(doc.warning(
                        "hypervisors_links",
                        "the response has a next page and no last page was given: give every page, or the hosts on later pages are missing",
                    ));
                }
            }
            "os-aggregates" => {
                let list = list_or_one(&doc, "aggregates", "aggregate")?;
                for a in &list {
                    self.nova_aggregate(origin, a)?;
                }
                self.count(kind, list.len());
            }
            "flavors" => {
                let list = list_or_one(&doc, "flavors", "flavor")?;
                for f in &list {
                    self.flavor(origin, f)?;
                }
                self.count(kind, list.len());
            }
            "extra_specs" => {
                let specs = value.get("extra_specs").cloned().unwrap_or(Value::Null);
                self.extra_specs.push((parent_folder(origin), origin.to_owned(), specs))
            }
            "os-server-groups" => {
                let list = list_or_one(&doc, "server_groups", "server_group")?;
                for g in &list {
                    self.server_group(origin, g)?;
                }
                self.count(kind, list.len());
            }
            "os-services" => {
                for s in doc.opt_array("services")?.unwrap_or_default() {
                    self.service(origin, s)?;
                }
            }
            "os-availability-zone" => {
                for z in doc.opt_array("availabilityZoneInfo")?.unwrap_or_default() {
                    let name = Object::new(origin, "availability_zone", "(unnamed)", z).str("zoneName")?;
                    let zone = Object::new(origin, "availability_zone", name, z);
                    let hosts = zone.opt_map("hosts")?;
                    let compute: Vec<String> = hosts
                        .into_iter()
                        .flatten()
                        .filter(|(_, services)| services.get("nova-compute").is_some())
                        .map(|(h, _)| h.clone())
                        .collect();
                    if name != "internal" {
                        self.zones.push((name.to_owned(), compute, origin.to_owned()));
                    }
                }
                self.count(kind, 1);
            }
            _ => {}
        }
        Ok(())
    }

    fn provider(&mut self, origin: &str, value: &Value) -> Result<(), ImportError> {
        let uuid = Object::new(origin, "resource_provider", "(unnamed)", value).str("uuid")?;
        let rp = Object::new(origin, "resource_provider", uuid, value);
        let name = rp.opt_str("name")?.unwrap_or(uuid);
        let parent = rp.opt_str("parent_provider_uuid")?.map(str::to_ascii_lowercase);
        let mut p = Provider {
            origin: origin.to_owned(),
            uuid: uuid.to_ascii_lowercase(),
            name: name.to_owned(),
            parent,
            ..Provider::default()
        };
        // Sub-resources embedded in the provider object (the shape `write` gives).
        if let Some(inv) = rp.get("inventories") {
            p.inventories = inventories(&rp.child("inventories", inv))?;
        }
        if let Some(u) = rp.get("usages") {
            p.usages = usages(&rp.child("usages", u))?;
        }
        p.traits = rp.strings("traits")?.into_iter().map(str::to_owned).collect();
        p.aggregates = rp.strings("aggregates")?.into_iter().map(str::to_ascii_lowercase).collect();
        if let Some(first) = self.providers.iter().find(|q| q.uuid == p.uuid) {
            return Err(ImportError::Duplicate {
                origin: origin.to_owned(),
                object: ObjectRef::new("resource_provider", uuid).into(),
                first: first.origin.clone(),
            });
        }
        self.providers.push(p);
        Ok(())
    }

    /// `allocation_candidates`' provider summaries: each provider's capacity (already
    /// `(total − reserved) × allocation_ratio`), use and traits.
    fn summaries(&mut self, doc: &Object<'_>) -> Result<(), ImportError> {
        let origin = doc.origin();
        let Some(map) = doc.opt_map("provider_summaries")? else { return Ok(()) };
        for (uuid, summary) in map {
            let s = Object::new(origin, "provider_summary", uuid, summary);
            let mut p = Provider {
                origin: origin.to_owned(),
                uuid: uuid.to_ascii_lowercase(),
                name: uuid.clone(),
                parent: s.opt_str("parent_provider_uuid")?.map(str::to_ascii_lowercase),
                ..Provider::default()
            };
            for class in s.opt_map("resources")?.into_iter().flatten().map(|(k, _)| k) {
                let capacity = s.f64(&format!("resources.{class}.capacity"), false)?;
                let used = s.opt_f64(&format!("resources.{class}.used"), false)?.unwrap_or(0.0);
                p.inventories.insert(
                    class.clone(),
                    Inventory {
                        total: capacity,
                        reserved: 0.0,
                        min_unit: 1.0,
                        max_unit: capacity,
                        step_size: 1.0,
                        allocation_ratio: 1.0,
                    },
                );
                p.usages.insert(class.clone(), used);
            }
            p.traits = s.strings("traits")?.into_iter().map(str::to_owned).collect();
            match self.providers.iter_mut().find(|q| q.uuid == p.uuid) {
                // The same provider from another response: the summary fills what is missing.
                Some(q) => {
                    if q.inventories.is_empty() {
                        q.inventories = p.inventories;
                        q.usages = p.usages;
                    }
                    if q.traits.is_empty() {
                        q.traits = p.traits;
                    }
                }
                None => self.providers.push(p),
            }
        }
        self.count("allocation_candidates", 1);
        Ok(())
    }

    fn hypervisor(&mut self, origin: &str, value: &Value) -> Result<(), ImportError> {
        let nodename = Object::new(origin, "hypervisor", "(unnamed)", value).str("hypervisor_hostname")?;
        let h = Object::new(origin, "hypervisor", nodename, value);
        if let Some(first) = self.hypervisors.iter().find(|g| g.nodename == nodename) {
            return Err(ImportError::Duplicate {
                origin: origin.to_owned(),
                object: h.object_ref().into(),
                first: first.origin.clone(),
            });
        }
        let id = match h.get("id") {
            Some(Value::String(s)) => Some(s.to_ascii_lowercase()),
            _ => None,
        };
        let state = h.opt_str("state")?;
        let status = h.opt_str("status")?;
        for (field, v) in [("state", state), ("status", status)] {
            if let Some(v) = v.filter(|v| !matches!(*v, "up" | "down" | "enabled" | "disabled")) {
                return Err(h.invalid(field, format!("expected up/down or enabled/disabled, found \"{v}\"")));
            }
        }
        let mut attributes = Map::new();
        if let Some(t) = h.opt_str("hypervisor_type")? {
            attributes.insert("hypervisor_type".into(), Value::from(t));
        }
        if let Some(v) = h.opt_i64("hypervisor_version", false)? {
            attributes.insert("hypervisor_version".into(), Value::from(v));
        }
        if let Some(ip) = h.opt_str("host_ip")? {
            if ip.parse::<std::net::IpAddr>().is_ok() {
                attributes.insert("host_ip".into(), Value::from(ip));
            } else {
                self.warnings.push(h.warning("host_ip", format!("`{ip}` is not an IP address; ignored")));
            }
        }
        match h.get("cpu_info") {
            Some(Value::String(s)) => {
                attributes.insert("cpu_info".into(), Value::from(s.as_str()));
            }
            Some(other) => {
                attributes.insert("cpu_info".into(), Value::from(other.to_string()));
            }
            None => {}
        }
        if let Some(w) = h.opt_i64("current_workload", false)? {
            attributes.insert("num_io_ops".into(), Value::from(w));
        }
        if let Some(n) = h.opt_i64("running_vms", false)? {
            attributes.insert("num_instances".into(), Value::from(n));
        }
        let capacity = match h.get("memory_mb") {
            Some(_) => {
                let f = |path: &str| -> Result<f64, ImportError> {
                    let v = h.f64(path, false)?;
                    if v < 0.0 && !path.ends_with("_used") {
                        return Err(h.invalid(path, format!("expected an amount from 0, found {v}")));
                    }
                    Ok(v)
                };
                Some([
                    f("vcpus")?,
                    f("vcpus_used")?,
                    f("memory_mb")?,
                    f("memory_mb_used")?,
                    f("local_gb")?,
                    f("local_gb_used")?,
                ])
            }
            None => None,
        };
        let mut servers = Vec::new();
        for s in h.opt_array("servers")?.unwrap_or_default() {
            let uuid = s.get("uuid").and_then(Value::as_str).ok_or_else(|| h.missing("servers.uuid"))?;
            servers.push(uuid.to_owned());
        }
        if !servers.is_empty() {
            attributes.remove("num_instances");
        }
        self.hypervisors.push(Hypervisor {
            origin: origin.to_owned(),
            nodename: nodename.to_owned(),
            id,
            service_host: h.opt_str("service.host")?.map(str::to_owned),
            up: state != Some("down"),
            enabled: status != Some("disabled"),
            disabled_reason: h.opt_str("service.disabled_reason")?.map(str::to_owned),
            attributes,
            capacity,
            servers,
        });
        Ok(())
    }

    fn service(&mut self, origin: &str, value: &Value) -> Result<(), ImportError> {
        let o = Object::new(origin, "service", "(unnamed)", value);
        let binary = o.str("binary")?;
        if binary != "nova-compute" {
            return Ok(());
        }
        let host = o.str("host")?;
        let s = Object::new(origin, "service", host, value);
        let status = s.opt_str("status")?.unwrap_or("enabled");
        let state = s.opt_str("state")?.unwrap_or("up");
        if status == "UNKNOWN" {
            self.warnings.push(s.warning("status", "UNKNOWN (its cell did not answer): taken as enabled and up"));
        } else if !matches!(status, "enabled" | "disabled") {
            return Err(s.invalid("status", format!("expected enabled or disabled, found \"{status}\"")));
        }
        if !matches!(state, "up" | "down") {
            return Err(s.invalid("state", format!("expected up or down, found \"{state}\"")));
        }
        self.services.insert(
            host.to_owned(),
            Service {
                origin: origin.to_owned(),
                up: state == "up",
                enabled: status != "disabled",
                forced_down: s.opt_bool("forced_down")?.unwrap_or(false),
                disabled_reason: s.opt_str("disabled_reason")?.map(str::to_owned),
            },
        );
        self.count("os-services", 1);
        Ok(())
    }

    fn nova_aggregate(&mut self, origin: &str, value: &Value) -> Result<(), ImportError> {
        let name = Object::new(origin, "aggregate", "(unnamed)", value).str("name")?;
        let a = Object::new(origin, "aggregate", name, value);
        let mut metadata = BTreeMap::new();
        for (k, v) in a.opt_map("metadata")?.into_iter().flatten() {
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Number(_) | Value::Bool(_) => v.to_string(),
                other => {
                    return Err(
                        a.invalid(&format!("metadata.{k}"), format!("expected a string, found {}", shown(other)))
                    )
                }
            };
            metadata.insert(k.clone(), text);
        }
        if let Some(az) = a.opt_str("availability_zone")? {
            metadata.entry("availability_zone".into()).or_insert_with(|| az.to_owned());
        }
        if let Some(first) = self.aggregates.iter().find(|b| b.name == name) {
            return Err(ImportError::Duplicate {
                origin: origin.to_owned(),
                object: ObjectRef::new("aggregate", name).into(),
                first: first.origin.clone(),
            });
        }
        self.aggregates.push(NovaAggregate {
            origin: origin.to_owned(),
            name: name.to_owned(),
            uuid: a.opt_str("uuid")?.map(str::to_ascii_lowercase),
            metadata,
            hosts: a.strings("hosts")?.into_iter().map(str::to_owned).collect(),
        });
        Ok(())
    }

    fn flavor(&mut self, origin: &str, value: &Value) -> Result<(), ImportError> {
        let name = Object::new(origin, "flavor", "(unnamed)", value).str("name")?;
        let f = Object::new(origin, "flavor", name, value);
        let id = match f.get("id") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => return Err(f.missing("id")),
        };
        let amount = |path: &str, required: bool| -> Result<f64, ImportError> {
            match f.get(path) {
                // Before 2.75 a flavor without swap says "".
                Some(Value::String(s)) if s.is_empty() => Ok(0.0),
                None if !required => Ok(0.0),
                _ => {
                    let v = f.i64(path, true)?;
                    if v < 0 {
                        return Err(f.invalid(path, format!("expected an amount from 0, found {v}")));
                    }
                    Ok(v as f64)
                }
            }
        };
        let mut flavor = Flavor::new(name, amount("ram", true)?, amount("vcpus", true)?, amount("disk", true)?);
        flavor.id = Some(id);
        flavor.ephemeral_gb = amount("OS-FLV-EXT-DATA:ephemeral", false)?;
        flavor.swap = amount("swap", false)?;
        if let Some(specs) = f.get("extra_specs") {
            add_specs(&mut flavor, &f.child("extra_specs", specs), specs)?;
        }
        if f.opt_bool("OS-FLV-DISABLED:disabled")? == Some(true) {
            self.warnings.push(f.warning("OS-FLV-DISABLED:disabled", "the flavor is disabled; read anyway"));
        }
        if let Some((_, first)) = self.flavors.iter().find(|(g, _)| g.id == flavor.id) {
            return Err(ImportError::Duplicate {
                origin: origin.to_owned(),
                object: ObjectRef::new("flavor", name).into(),
                first: first.clone(),
            });
        }
        self.flavors.push((flavor, origin.to_owned()));
        Ok(())
    }

    fn server_group(&mut self, origin: &str, value: &Value) -> Result<(), ImportError> {
        let id = Object::new(origin, "server_group", "(unnamed)", value).str("id")?;
        let g = Object::new(origin, "server_group", id, value);
        let policy = match g.opt_str("policy")? {
            Some(p) => p.to_owned(),
            // Before 2.64: `policies`, a list of one.
            None => match g.strings("policies")?.first() {
                Some(p) => (*p).to_owned(),
                None => return Err(g.missing("policy")),
            },
        };
        if !matches!(policy.as_str(), "affinity" | "anti-affinity" | "soft-affinity" | "soft-anti-affinity") {
            return Err(g.invalid("policy", format!("expected a server group policy, found \"{policy}\"")));
        }
        let max = match g.opt_i64("rules.max_server_per_host", true)? {
            None => None,
            Some(n) => Some(u32::try_from(n).ok().filter(|&n| n >= 1).ok_or_else(|| {
                g.invalid("rules.max_server_per_host", format!("expected a whole number from 1, found {n}"))
            })?),
        };
        if let Some(name) = g.opt_str("name")? {
            self.group_names.insert(id.to_owned(), name.to_owned());
        }
        self.server_groups.push(ServerGroup {
            name: id.to_owned(),
            policy,
            members: g.strings("members")?.into_iter().map(str::to_owned).collect(),
            hosts: Vec::new(),
            max_server_per_host: max,
        });
        Ok(())
    }

    /// Puts the per-provider responses and the flavor extra specs where their paths say.
    fn resolve(&mut self) -> Result<(), ImportError> {
        for (uuid, origin, kind, value) in std::mem::take(&mut self.pending) {
            let Some(uuid) = uuid else {
                return Err(ImportError::Incomplete(format!(
                    "{origin}: cannot tell which resource provider these {kind} are of: a Placement \
                     {kind} response does not carry the provider's uuid. Put it in a folder or file named \
                     by the uuid (`<uuid>/{kind}.json`), or embed it in the provider object \
                     (`{{\"uuid\": …, \"{kind}\": …}}`)"
                )));
            };
            let at = match self.providers.iter().position(|p| p.uuid == uuid) {
                Some(at) => at,
                None if self.kinds.contains_key("resource_providers") => {
                    return Err(ImportError::Dangling {
                        origin: origin.clone(),
                        object: ObjectRef::new(kind, "response").into(),
                        field: "(path)".into(),
                        target: format!("resource provider {uuid}"),
                    });
                }
                None => {
                    self.providers.push(Provider {
                        origin: origin.clone(),
                        uuid: uuid.clone(),
                        name: uuid.clone(),
                        ..Provider::default()
                    });
                    self.providers.len() - 1
                }
            };
            let o = Object::new(&origin, kind, &uuid, &value);
            let p = &mut self.providers[at];
            match kind {
                "inventories" => {
                    let inv = o.get("inventories").unwrap_or(&Value::Null);
                    p.inventories = inventories(&o.child("inventories", inv))?;
                }
                "usages" => {
                    let u = o.get("usages").unwrap_or(&Value::Null);
                    p.usages = usages(&o.child("usages", u))?;
                }
                "traits" => p.traits = o.strings("traits")?.into_iter().map(str::to_owned).collect(),
                "provider_aggregates" => {
                    p.aggregates = o.strings("aggregates")?.into_iter().map(str::to_ascii_lowercase).collect()
                }
                _ => p.consumers = o.opt_map("allocations")?.into_iter().flatten().map(|(k, _)| k.clone()).collect(),
            }
            *self.kinds.entry(kind).or_default() += 1;
        }
        for (folder, origin, specs) in std::mem::take(&mut self.extra_specs) {
            let found = folder
                .as_deref()
                .and_then(|f| self.flavors.iter().position(|(fl, _)| fl.id.as_deref() == Some(f) || fl.name == f));
            let Some(at) = found else {
                if self.flavors.is_empty() {
                    return Err(ImportError::Incomplete(format!(
                        "{origin}: cannot tell which flavor these extra_specs are of: give the flavors too, \
                         and put the response in a folder named by the flavor's id or name \
                         (`<flavor>/extra_specs.json`)"
                    )));
                }
                return Err(ImportError::Dangling {
                    origin,
                    object: ObjectRef::new("extra_specs", "response").into(),
                    field: "(path)".into(),
                    target: format!("flavor `{}`", folder.unwrap_or_default()),
                });
            };
            let (flavor, _) = &mut self.flavors[at];
            let name = flavor.name.clone();
            let o = Object::new(&origin, "flavor", &name, &specs);
            add_specs(flavor, &o.child("extra_specs", &specs), &specs)?;
            *self.kinds.entry("extra_specs").or_default() += 1;
        }
        for (flavor, origin) in &self.flavors {
            let unmodelled: Vec<&str> =
                flavor.extra_specs.iter().filter(|(k, v)| not_modelled(k, v)).map(|(k, _)| k).collect();
            if !unmodelled.is_empty() {
                self.warnings.push(ImportWarning {
                    origin: origin.clone(),
                    object: Some(ObjectRef::new("flavor", flavor.name.clone())),
                    field: "extra_specs".into(),
                    message: format!(
                        "read but not modelled (NUMA, CPU pinning, PCI, granular groups): {}",
                        unmodelled.join(", ")
                    ),
                });
            }
        }
        Ok(())
    }
}

/// Whether placewise places without extra spec `key = value`: the NUMA topology, CPU pinning
/// (`hw:cpu_policy` other than `shared`) and every other `hw:` spec, PCI devices and Placement's
/// granular request groups (`resources1:`, `trait_x:`).
fn not_modelled(key: &str, value: &str) -> bool {
    let prefix = key.split(':').next().unwrap_or(key);
    let granular = ["resources", "trait"].iter().any(|p| prefix.len() > p.len() && prefix.starts_with(p));
    let shared_cpus = key == "hw:cpu_policy" && value == "shared";
    granular || (key.starts_with("hw:") && !shared_cpus) || key.starts_with("pci_passthrough:")
}

/// The items of a list response (`plural`) or the one object of a single response (`single`).
fn list_or_one<'a>(doc: &Object<'a>, plural: &str, single: &str) -> Result<Vec<&'a Value>, ImportError> {
    Ok(match doc.opt_array(plural)? {
        Some(list) => list.iter().collect(),
        None => doc.get(single).into_iter().collect(),
    })
}

/// A flavor's extra specs (all values are strings; numbers and booleans are read as their text).
fn add_specs(flavor: &mut Flavor, o: &Object<'_>, specs: &Value) -> Result<(), ImportError> {
    let Some(map) = specs.as_object() else {
        return Err(o.invalid("", format!("expected an object, found {}", shown(specs))));
    };
    for (k, v) in map {
        let text = match v {
            Value::String(s) => s.clone(),
            Value::Number(_) | Value::Bool(_) => v.to_string(),
            other => return Err(o.invalid(k, format!("expected a string, found {}", shown(other)))),
        };
        flavor.extra_specs.insert(k.clone(), text);
    }
    Ok(())
}

/// An `inventories` map: resource class to inventory, with Placement's defaults for fields a
/// request body leaves out.
fn inventories(o: &Object<'_>) -> Result<BTreeMap<String, Inventory>, ImportError> {
    let mut out = BTreeMap::new();
    let Some(map) = o.value().as_object() else {
        return Err(o.invalid("", format!("expected an object, found {}", shown(o.value()))));
    };
    for class in map.keys() {
        let f = |name: &str| format!("{class}.{name}");
        let total = o.f64(&f("total"), false)?;
        let reserved = o.opt_f64(&f("reserved"), false)?.unwrap_or(0.0);
        let ratio = o.opt_f64(&f("allocation_ratio"), false)?.unwrap_or(1.0);
        let min_unit = o.opt_f64(&f("min_unit"), false)?.unwrap_or(1.0);
        let max_unit = o.opt_f64(&f("max_unit"), false)?.unwrap_or(f64::from(i32::MAX));
        let step = o.opt_f64(&f("step_size"), false)?.unwrap_or(1.0);
        if total < 0.0 || reserved < 0.0 || reserved > total {
            return Err(o.invalid(&f("reserved"), format!("expected 0 ≤ reserved ({reserved}) ≤ total ({total})")));
        }
        if ratio <= 0.0 {
            return Err(o.invalid(&f("allocation_ratio"), format!("expected a positive number, found {ratio}")));
        }
        if step < 1.0 || min_unit < 1.0 || max_unit < min_unit {
            return Err(o.invalid(
                &f("step_size"),
                format!("expected 1 ≤ min_unit ≤ max_unit and step_size ≥ 1, found {min_unit}, {max_unit}, {step}"),
            ));
        }
        out.insert(
            class.clone(),
            Inventory { total, reserved, min_unit, max_unit, step_size: step, allocation_ratio: ratio },
        );
    }
    Ok(out)
}

/// A `usages` map: resource class to amount used.
fn usages(o: &Object<'_>) -> Result<BTreeMap<String, f64>, ImportError> {
    let Some(map) = o.value().as_object() else {
        return Err(o.invalid("", format!("expected an object, found {}", shown(o.value()))));
    };
    let mut out = BTreeMap::new();
    for class in map.keys() {
        let v = o.f64(class, false)?;
        if v < 0.0 {
            return Err(o.invalid(class, format!("expected an amount from 0, found {v}")));
        }
        out.insert(class.clone(), v);
    }
    Ok(out)
}

/// A short description of a shape not read.
fn describe(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let keys: Vec<&str> = map.keys().take(4).map(String::as_str).collect();
            format!("an object with keys {}", keys.join(", "))
        }
        Value::Array(_) => "a JSON array".into(),
        other => format!("the value {}", shown(other)),
    }
}
