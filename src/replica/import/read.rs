//! Reading Longhorn's objects into a [`LonghornCluster`]: the documents sorted by kind, then
//! settings, engine images and instance managers (what the nodes' attributes need), nodes into
//! hosts and disks, the snapshot built, then volumes and their replicas against it.

use super::units::{parse_size, parse_time};
use super::{Facts, LonghornCluster, LonghornVolume};
use crate::import::{items, shown, Document, ImportError, ImportWarning, Object, ObjectRef};
use crate::replica::{
    AutoBalance, DataEngine, DataLocality, Replica, ReplicaError, ReplicaSettings, Robustness, SoftAntiAffinity,
    TopologyTerm, Volume, ATTR_ENGINE_IMAGE_DEPLOYED, ATTR_INSTANCE_MANAGER_RUNNING, MAX_VOLUME_REPLICAS,
    SETTING_NAMES,
};
use crate::snapshot::{Cluster, ClusterSpec, DiskSpec, DiskType, HostSpec, HostState};
use serde_json::{Map, Value};
use smallvec::SmallVec;
use std::collections::HashMap;

/// The API versions read.
pub(super) const VERSIONS: [&str; 2] = ["longhorn.io/v1beta2", "longhorn.io/v1beta1"];

/// The kinds read, as `kubectl get` names them.
pub(super) const KINDS: [&str; 6] = [
    "nodes.longhorn.io",
    "volumes.longhorn.io",
    "replicas.longhorn.io",
    "settings.longhorn.io",
    "engineimages.longhorn.io",
    "instancemanagers.longhorn.io",
];

/// Longhorn kinds that exist but say nothing placement reads: skipped with a warning.
const SKIPPED: [&str; 18] = [
    "Engine",
    "BackingImage",
    "BackingImageManager",
    "BackingImageDataSource",
    "BackupTarget",
    "BackupVolume",
    "Backup",
    "BackupBackingImage",
    "ShareManager",
    "Orphan",
    "Snapshot",
    "RecurringJob",
    "SupportBundle",
    "SystemBackup",
    "SystemRestore",
    "VolumeAttachment",
    "DataEngineUpgradeManager",
    "NodeDataEngineUpgrade",
];

/// One object of a kind the importer reads.
#[derive(Clone, Copy)]
struct Obj<'a> {
    origin: &'a str,
    name: &'a str,
    value: &'a Value,
}

impl<'a> Obj<'a> {
    fn object(&self, kind: &'a str) -> Object<'a> {
        Object::new(self.origin, kind, self.name, self.value)
    }
}

/// The documents sorted by kind.
#[derive(Default)]
struct Sorted<'a> {
    nodes: Vec<Obj<'a>>,
    volumes: Vec<Obj<'a>>,
    replicas: Vec<Obj<'a>>,
    settings: Vec<Obj<'a>>,
    images: Vec<Obj<'a>>,
    managers: Vec<Obj<'a>>,
    versions: Vec<&'a str>,
}

/// The objects of a document: [`items`], and also the items of a list whose `kind` an editor
/// trimmed (`{"apiVersion": "v1", "items": […]}`).
pub(super) fn objects(value: &Value) -> &[Value] {
    match value {
        Value::Object(map) if !map.contains_key("kind") => match map.get("items") {
            Some(Value::Array(list)) => list,
            _ => items(value),
        },
        _ => items(value),
    }
}

/// Whether `value` (one object, not a list) is Longhorn's: a `longhorn.io` (or the legacy
/// `longhorn.rancher.io`) object, or the definition of a `longhorn.io` kind.
pub(super) fn is_longhorn(value: &Value) -> bool {
    let api = value.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    api.starts_with("longhorn.io/") || api.starts_with("longhorn.rancher.io/") || is_longhorn_crd(value)
}

fn is_longhorn_crd(value: &Value) -> bool {
    value.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
        && value.pointer("/spec/group").and_then(Value::as_str) == Some("longhorn.io")
}

/// Replaces the field path of an error about a part of an object read through
/// [`Object::child`] with its full path under `prefix`.
fn within(prefix: &str, e: ImportError) -> ImportError {
    match e {
        ImportError::Missing { origin, object, field } => {
            ImportError::Missing { origin, object, field: format!("{prefix}.{field}") }
        }
        ImportError::Invalid { origin, object, field, reason } => {
            ImportError::Invalid { origin, object, field: format!("{prefix}.{field}"), reason }
        }
        other => other,
    }
}

fn sort<'a>(docs: &'a [Document], warnings: &mut Vec<ImportWarning>) -> Result<Sorted<'a>, ImportError> {
    let mut s = Sorted::default();
    for doc in docs {
        for item in objects(&doc.value) {
            let origin = doc.origin.as_str();
            let kind = item.get("kind").and_then(Value::as_str).unwrap_or("");
            let api = item.get("apiVersion").and_then(Value::as_str).unwrap_or("");
            let name = item.pointer("/metadata/name").and_then(Value::as_str);
            if is_longhorn_crd(item) {
                warnings.push(ImportWarning {
                    origin: origin.to_owned(),
                    object: Some(ObjectRef::new(kind, name.unwrap_or(""))),
                    field: String::new(),
                    message: "a definition of a kind, not an object of it: skipped".into(),
                });
                continue;
            }
            let unknown = || ImportError::UnknownKind {
                origin: origin.to_owned(),
                kind: if api.is_empty() && kind.is_empty() {
                    format!("an object without apiVersion and kind: {}", shown(item))
                } else {
                    format!("{api}/{kind}")
                },
                expected: KINDS.iter().map(|k| format!("{k} ({})", VERSIONS.join(", "))).collect(),
            };
            if !api.starts_with("longhorn.io/") && !api.starts_with("longhorn.rancher.io/") {
                return Err(unknown());
            }
            let Some(name) = name else {
                return Err(Object::new(origin, kind, "(unnamed)", item).missing("metadata.name"));
            };
            let obj = Obj { origin, name, value: item };
            if !VERSIONS.contains(&api) {
                let legacy = if api.starts_with("longhorn.rancher.io/") { " (Longhorn before 1.0)" } else { "" };
                return Err(obj.object(kind).invalid(
                    "apiVersion",
                    format!("unsupported apiVersion `{api}`{legacy}; read: {}", VERSIONS.join(", ")),
                ));
            }
            if !s.versions.contains(&api) {
                s.versions.push(api);
            }
            match kind {
                "Node" => s.nodes.push(obj),
                "Volume" => s.volumes.push(obj),
                "Replica" => s.replicas.push(obj),
                "Setting" => s.settings.push(obj),
                "EngineImage" => s.images.push(obj),
                "InstanceManager" => s.managers.push(obj),
                k if SKIPPED.contains(&k) => {
                    warnings.push(obj.object(kind).warning("", "not read for placement: skipped"))
                }
                _ => return Err(unknown()),
            }
        }
    }
    Ok(s)
}

/// The first object of `list` named as an earlier one, as [`ImportError::Duplicate`].
fn duplicates(list: &[Obj<'_>], kind: &str) -> Result<(), ImportError> {
    let mut seen: HashMap<&str, &str> = HashMap::with_capacity(list.len());
    for o in list {
        if let Some(first) = seen.insert(o.name, o.origin) {
            return Err(ImportError::Duplicate {
                origin: o.origin.to_owned(),
                object: ObjectRef::new(kind, o.name).into(),
                first: first.to_owned(),
            });
        }
    }
    Ok(())
}

/// A condition's `status` (`"True"` or not), `reason` and `message`, from a list of conditions
/// (v1beta2) or a map keyed by type (v1beta1).
#[derive(Debug, Clone, Copy)]
struct Condition<'a> {
    ok: bool,
    reason: &'a str,
    message: &'a str,
}

fn condition<'a>(o: &Object<'a>, path: &str, kind: &str) -> Result<Option<Condition<'a>>, ImportError> {
    let Some(conditions) = o.get(path) else { return Ok(None) };
    let found = match conditions {
        Value::Array(list) => list.iter().find(|c| c.get("type").and_then(Value::as_str) == Some(kind)),
        Value::Object(map) => map.get(kind),
        other => return Err(o.invalid(path, format!("expected a list or a map of conditions, found {}", shown(other)))),
    };
    let Some(c) = found else { return Ok(None) };
    let text = |key: &str| c.get(key).and_then(Value::as_str).unwrap_or("");
    match c.get("status").and_then(Value::as_str) {
        Some(status) => Ok(Some(Condition { ok: status == "True", reason: text("reason"), message: text("message") })),
        // The condition is not quoted: `read_json` may have left some of its members out.
        None => Err(o.invalid(path, format!("condition `{kind}` has no status"))),
    }
}

/// Reads a node's tags or a disk's, refusing an empty one.
fn tags<'a>(o: &Object<'a>, path: &str) -> Result<Vec<&'a str>, ImportError> {
    let tags = o.strings(path)?;
    if tags.iter().any(|t| t.trim().is_empty()) {
        return Err(o.invalid(path, "an empty tag"));
    }
    Ok(tags)
}

/// Reads the documents (see the [module docs](super)).
pub(super) fn read(docs: &[Document]) -> Result<LonghornCluster, ImportError> {
    let mut warnings = Vec::new();
    let s = sort(docs, &mut warnings)?;
    if s.nodes.is_empty() {
        let files: Vec<&str> = docs.iter().map(|d| d.origin.as_str()).collect();
        return Err(ImportError::Incomplete(format!(
            "no nodes.longhorn.io in the input ({}): the nodes are what replicas are placed on",
            if files.is_empty() { "no documents".to_owned() } else { files.join(", ") }
        )));
    }
    duplicates(&s.volumes, "Volume")?;
    duplicates(&s.settings, "Setting")?;
    duplicates(&s.images, "EngineImage")?;
    let (settings, settings_read, default_image) = read_settings(&s.settings, &mut warnings)?;
    let facts = read_facts(&s, default_image, &mut warnings)?;

    let mut spec = ClusterSpec::default();
    spec.hosts.reserve_exact(s.nodes.len());
    let mut node_im = Vec::new();
    for (i, n) in s.nodes.iter().enumerate() {
        let mut host = read_node(n, &mut warnings)?;
        if let Some(ims) = &facts.managers {
            let running = ims.get(n.name).copied().unwrap_or_default();
            node_im.push(running);
            if !running[0] {
                host.attributes.insert(ATTR_INSTANCE_MANAGER_RUNNING.into(), false.into());
            }
        }
        if let Some(b) = facts.base_image {
            if !facts.images[b].1[i] {
                host.attributes.insert(ATTR_ENGINE_IMAGE_DEPLOYED.into(), false.into());
            }
        }
        spec.hosts.push(host);
    }
    let cluster = match Cluster::from_spec(&spec) {
        Ok(c) => c,
        Err(crate::error::BuildError::DuplicateHost { name }) => {
            let mut same = s.nodes.iter().filter(|n| n.name == name);
            let first = same.next().map_or("", |n| n.origin);
            let second = same.next().map_or("", |n| n.origin);
            return Err(ImportError::Duplicate {
                origin: second.to_owned(),
                object: ObjectRef::new("Node", name).into(),
                first: first.to_owned(),
            });
        }
        Err(source) => return Err(ImportError::Build { source }),
    };
    drop(spec);

    let mut volumes = Vec::with_capacity(s.volumes.len());
    for v in &s.volumes {
        volumes.push(read_volume(v, &cluster, &settings, &facts, &mut warnings)?);
    }
    read_replicas(&s, &cluster, &mut volumes, &mut warnings)?;
    for v in &mut volumes {
        v.replicas.sort_by(|a, b| a.name.cmp(&b.name));
    }
    let mut format = String::from("Longhorn ");
    format.push_str(&s.versions.join(", "));
    Ok(LonghornCluster {
        cluster,
        warnings,
        settings,
        settings_read,
        volumes,
        format,
        facts: Facts { node_im, images: facts.images, base_image: facts.base_image },
    })
}

/// The settings placement reads (every other one is ignored), the `(name, value)` pairs applied,
/// and the `default-engine-image`.
#[allow(clippy::type_complexity)]
fn read_settings<'a>(
    list: &[Obj<'a>],
    warnings: &mut Vec<ImportWarning>,
) -> Result<(ReplicaSettings, Vec<(String, String)>, Option<&'a str>), ImportError> {
    let mut settings = ReplicaSettings::default();
    let mut read = Vec::new();
    let mut default_image = None;
    for s in list {
        let o = s.object("Setting");
        if s.name == "default-engine-image" {
            default_image = o.opt_str("value")?.filter(|v| !v.is_empty());
            continue;
        }
        if !SETTING_NAMES.contains(&s.name) {
            continue;
        }
        let raw = o.str("value")?;
        let value = per_engine(&o, raw, warnings)?;
        match settings.set(s.name, &value) {
            Ok(()) => read.push((s.name.to_owned(), value)),
            Err(ReplicaError::InvalidSetting { .. }) => {
                return Err(o.invalid(
                    "value",
                    format!("{} is not a valid value for this setting", shown(&Value::String(value))),
                ))
            }
            Err(e) => return Err(o.invalid("value", e.to_string())),
        }
    }
    Ok((settings, read, default_image))
}

/// A setting's value for the v1 data engine: the value itself, or its `v1` entry when it is a
/// JSON map per data engine (`{"v1":"true","v2":"false"}`); a differing `v2` entry is warned
/// about, since the one settings value serves both engines.
fn per_engine(o: &Object<'_>, raw: &str, warnings: &mut Vec<ImportWarning>) -> Result<String, ImportError> {
    let trimmed = raw.trim();
    if !trimmed.starts_with('{') {
        return Ok(trimmed.to_owned());
    }
    let map: Map<String, Value> = serde_json::from_str(trimmed)
        .map_err(|e| o.invalid("value", format!("a JSON value per data engine that does not parse: {e}")))?;
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(_) | Value::Number(_) => Some(v.to_string()),
        _ => None,
    };
    let v1 = map.get("v1").or_else(|| map.values().next()).and_then(text);
    let Some(v1) = v1 else {
        return Err(
            o.invalid("value", format!("no value for the v1 data engine in {}", shown(&Value::Object(map.clone()))))
        );
    };
    if let Some(v2) = map.get("v2").and_then(text).filter(|v2| *v2 != v1) {
        warnings.push(o.warning(
            "value",
            format!("the v1 data engine's value `{v1}` is used for every volume; v2 volumes would read `{v2}`"),
        ));
    }
    Ok(v1)
}

/// What engine images and instance managers say about each node.
struct ReadFacts<'a> {
    /// Per node name: a running instance manager for v1 and for v2; `None` without any
    /// instance manager in the input.
    managers: Option<HashMap<&'a str, [bool; 2]>>,
    /// Per engine image, by node position: ready there.
    images: Vec<(String, Vec<bool>)>,
    /// The image the snapshot's attribute is about.
    base_image: Option<usize>,
}

fn read_facts<'a>(
    s: &Sorted<'a>,
    default_image: Option<&str>,
    warnings: &mut Vec<ImportWarning>,
) -> Result<ReadFacts<'a>, ImportError> {
    let mut managers = None;
    if s.managers.is_empty() {
        if !s.volumes.is_empty() {
            warnings.push(note("instancemanagers.longhorn.io", "none in the input: every node is taken to run one"));
        }
    } else {
        let mut map: HashMap<&str, [bool; 2]> = HashMap::new();
        for m in &s.managers {
            let o = m.object("InstanceManager");
            let node = o.str("spec.nodeID")?;
            let kind = o.opt_str("spec.type")?.unwrap_or("");
            let engine = match o.opt_str("spec.dataEngine")?.unwrap_or("") {
                "" | "v1" => 0,
                "v2" => 1,
                other => return Err(o.invalid("spec.dataEngine", format!("unknown data engine `{other}` (v1, v2)"))),
            };
            let running = o.opt_str("status.currentState")? == Some("running");
            let entry = map.entry(node).or_default();
            // The aio manager (Longhorn 1.5+) or the replica manager (before) hosts replicas.
            if running && matches!(kind, "aio" | "replica" | "") {
                entry[engine] = true;
            }
        }
        managers = Some(map);
    }
    let mut images = Vec::with_capacity(s.images.len());
    for e in &s.images {
        let o = e.object("EngineImage");
        let image = o.str("spec.image")?;
        // Longhorn's CheckEngineImageReadiness: the image deployed or deploying, and the node
        // true in its deployment map.
        let usable = matches!(o.opt_str("status.state")?, Some("deployed" | "deploying"));
        let map = o.opt_map("status.nodeDeploymentMap")?;
        let ready = s
            .nodes
            .iter()
            .map(|n| usable && map.and_then(|m| m.get(n.name)).and_then(Value::as_bool) == Some(true))
            .collect();
        images.push((image.to_owned(), ready));
    }
    let base_image = match default_image {
        Some(d) => {
            let found = images.iter().position(|(i, _)| i == d);
            if found.is_none() && !images.is_empty() {
                warnings.push(note(
                    "engineimages.longhorn.io",
                    &format!("none for the default engine image `{d}`: it is taken as deployed on every node"),
                ));
            }
            found
        }
        None if images.len() == 1 => Some(0),
        None if images.is_empty() => {
            if !s.volumes.is_empty() {
                warnings.push(note("engineimages.longhorn.io", "none in the input: every image is taken as deployed"));
            }
            None
        }
        None => {
            warnings.push(note(
                "engineimages.longhorn.io",
                "several, and no default-engine-image setting: the snapshot takes every image as deployed; \
                 each volume is answered for its own image",
            ));
            None
        }
    };
    Ok(ReadFacts { managers, images, base_image })
}

/// A warning about the input as a whole.
fn note(what: &str, message: &str) -> ImportWarning {
    ImportWarning { origin: "(input)".into(), object: None, field: what.into(), message: message.into() }
}

/// One node as a host with its disks.
fn read_node(n: &Obj<'_>, warnings: &mut Vec<ImportWarning>) -> Result<HostSpec, ImportError> {
    let o = n.object("Node");
    let mut host = HostSpec::new(n.name);
    let allow = match o.opt_bool("spec.allowScheduling")? {
        Some(a) => a,
        None => {
            warnings.push(o.warning("spec.allowScheduling", "absent: scheduling taken as allowed"));
            true
        }
    };
    let evicting = o.opt_bool("spec.evictionRequested")?.unwrap_or(false);
    for t in tags(&o, "spec.tags")? {
        host.labels.insert(t.to_owned(), String::new());
    }
    let status = o.opt_map("status")?;
    let (up, cordoned) = if status.is_some() {
        let ready = condition(&o, "status.conditions", "Ready")?;
        let schedulable = condition(&o, "status.conditions", "Schedulable")?;
        if ready.is_none() {
            warnings.push(o.warning("status.conditions", "no Ready condition: the node is taken as not ready"));
        }
        (ready.is_some_and(|c| c.ok), schedulable.is_some_and(|c| !c.ok))
    } else {
        warnings.push(o.warning(
            "status",
            "absent (Longhorn has not reported on the node): it is taken as not ready, its disks as unavailable",
        ));
        (false, false)
    };
    host.state = HostState { up, enabled: allow, cordoned, evicting };
    for level in ["zone", "region"] {
        let path = if level == "zone" { "status.zone" } else { "status.region" };
        if let Some(value) = o.opt_str(path)?.filter(|v| !v.is_empty()) {
            host.topology.insert(level.to_owned(), value.to_owned());
        }
    }
    host.disks = read_disks(&o, status.is_some(), warnings)?;
    Ok(host)
}

fn read_disks(
    o: &Object<'_>,
    has_status: bool,
    warnings: &mut Vec<ImportWarning>,
) -> Result<Vec<DiskSpec>, ImportError> {
    let spec_disks = o.opt_map("spec.disks")?;
    let status_disks = if has_status { o.opt_map("status.diskStatus")? } else { None };
    let mut disks = Vec::with_capacity(spec_disks.map_or(0, Map::len));
    let mut uuids: SmallVec<[(&str, &str); 8]> = SmallVec::new();
    for (key, sd) in spec_disks.into_iter().flatten() {
        let spec_o = o.child(key, sd);
        let status = status_disks.and_then(|m| m.get(key));
        let disk = match status {
            Some(st) => {
                let st_o = o.child(key, st);
                let disk = disk_status(&st_o, key).map_err(|e| within("status.diskStatus", e))?;
                if let Some(uuid) = st_o.opt_str("diskUUID").map_err(|e| within("status.diskStatus", e))? {
                    if let Some((other, _)) = uuids.iter().find(|(_, u)| *u == uuid) {
                        let reason = format!("`{uuid}` is also the UUID of disk `{other}` of this node");
                        return Err(within("status.diskStatus", st_o.invalid("diskUUID", reason)));
                    }
                    uuids.push((key, uuid));
                }
                disk
            }
            None => {
                if has_status {
                    warnings.push(o.warning(
                        "status.diskStatus",
                        format!("no entry for disk `{key}`: it is taken as unavailable (size 0)"),
                    ));
                }
                DiskSpec::new(key.as_str(), 0, 0).ready(false).schedulable(false)
            }
        };
        disks.push(disk_spec(o, &spec_o, key, disk, warnings).map_err(|e| within("spec.disks", e))?);
    }
    for (key, st) in status_disks.into_iter().flatten() {
        if spec_disks.is_some_and(|m| m.contains_key(key)) {
            continue;
        }
        let st_o = o.child(key, st);
        let disk = disk_status(&st_o, key).map_err(|e| within("status.diskStatus", e))?;
        warnings.push(o.warning(
            "spec.disks",
            format!("no entry for disk `{key}`, which the status reports: it takes no new replicas"),
        ));
        disks.push(disk.allow_scheduling(false));
    }
    Ok(disks)
}

/// A disk's status: sizes, conditions, filesystem, scheduled replicas.
fn disk_status(o: &Object<'_>, key: &str) -> Result<DiskSpec, ImportError> {
    let maximum = o.i64("storageMaximum", true)?;
    let available = o.i64("storageAvailable", true)?;
    for (field, v) in [("storageMaximum", maximum), ("storageAvailable", available)] {
        if v < 0 {
            return Err(o.invalid(field, format!("negative ({v})")));
        }
    }
    let mut d = DiskSpec::new(key, maximum, available);
    d.scheduled = o.opt_i64("storageScheduled", true)?.unwrap_or(0).max(0);
    if let Some(ready) = condition(o, "conditions", "Ready")? {
        d.ready = ready.ok;
    }
    d.schedulable = condition(o, "conditions", "Schedulable")?.map(|c| c.ok);
    if let Some(fs) = o.opt_str("filesystemType")? {
        d.fs_type = fs.to_owned();
    }
    if let Some(t) = o.opt_str("diskType")? {
        d.disk_type = disk_type(o, "diskType", t)?;
    }
    if let Some(listed) = o.opt_map("scheduledReplica")? {
        d.scheduled_replicas = listed.keys().cloned().collect();
    }
    Ok(d)
}

fn disk_type(o: &Object<'_>, path: &str, t: &str) -> Result<DiskType, ImportError> {
    match t {
        "" | "filesystem" => Ok(DiskType::Filesystem),
        "block" => Ok(DiskType::Block),
        other => Err(o.invalid(path, format!("unknown disk type `{other}` (filesystem, block)"))),
    }
}

/// A disk's spec over its status: scheduling, eviction, reservation, tags, type.
fn disk_spec(
    node: &Object<'_>,
    o: &Object<'_>,
    key: &str,
    mut d: DiskSpec,
    warnings: &mut Vec<ImportWarning>,
) -> Result<DiskSpec, ImportError> {
    d.allow_scheduling = match o.opt_bool("allowScheduling")? {
        Some(a) => a,
        None => {
            let path = format!("spec.disks.{key}.allowScheduling");
            warnings.push(node.warning(&path, "absent: scheduling taken as allowed"));
            true
        }
    };
    d.eviction_requested = o.opt_bool("evictionRequested")?.unwrap_or(false);
    d.reserved = o.opt_i64("storageReserved", true)?.unwrap_or(0);
    if d.reserved < 0 {
        return Err(o.invalid("storageReserved", format!("negative ({})", d.reserved)));
    }
    d.tags = tags(o, "tags")?.into_iter().map(str::to_owned).collect();
    if let Some(t) = o.opt_str("diskType")? {
        d.disk_type = disk_type(o, "diskType", t)?;
    }
    Ok(d)
}

/// An enum field spelt as Longhorn spells it; empty or absent is `empty`.
fn spelt<T: Copy>(
    o: &Object<'_>,
    path: &str,
    parse: fn(&str) -> Option<T>,
    empty: T,
    allowed: &str,
) -> Result<T, ImportError> {
    match o.opt_str(path)?.unwrap_or("") {
        "" => Ok(empty),
        s => parse(s).ok_or_else(|| o.invalid(path, format!("unknown value `{s}` ({allowed})"))),
    }
}

fn read_volume(
    v: &Obj<'_>,
    cluster: &Cluster,
    settings: &ReplicaSettings,
    facts: &ReadFacts<'_>,
    warnings: &mut Vec<ImportWarning>,
) -> Result<LonghornVolume, ImportError> {
    let o = v.object("Volume");
    let raw_size = o.require("spec.size")?;
    let size = match raw_size {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => parse_size(s),
        _ => None,
    };
    let size = size.ok_or_else(|| {
        o.invalid("spec.size", format!("expected bytes or a quantity such as \"10Gi\", found {}", shown(raw_size)))
    })?;
    let replicas = match o.opt_i64("spec.numberOfReplicas", true)? {
        None | Some(0) => settings.default_replica_count,
        Some(n) if (1..=i64::from(MAX_VOLUME_REPLICAS)).contains(&n) => n as u32,
        Some(n) => {
            return Err(o.invalid("spec.numberOfReplicas", format!("{n} is outside 1–{MAX_VOLUME_REPLICAS}")));
        }
    };
    let mut volume = Volume::new(v.name, size, replicas);
    volume.actual_size = o.opt_i64("status.actualSize", true)?.unwrap_or(0);
    volume.node_selector = o.strings("spec.nodeSelector")?.into_iter().map(str::to_owned).collect();
    volume.disk_selector = o.strings("spec.diskSelector")?.into_iter().map(str::to_owned).collect();
    if let Some(node) = o.opt_str("spec.nodeID")?.filter(|n| !n.is_empty()) {
        if cluster.host_id(node).is_none() {
            return Err(o.dangling("spec.nodeID", format!("node {node}")));
        }
        volume.node_id = node.to_owned();
    }
    volume.data_locality = spelt(
        &o,
        "spec.dataLocality",
        DataLocality::parse,
        settings.default_data_locality,
        "disabled, best-effort, strict-local",
    )?;
    volume.replica_auto_balance = spelt(
        &o,
        "spec.replicaAutoBalance",
        AutoBalance::parse,
        AutoBalance::Ignored,
        "ignored, disabled, least-effort, best-effort",
    )?;
    let soft = |path| spelt(&o, path, SoftAntiAffinity::parse, SoftAntiAffinity::Ignored, "ignored, enabled, disabled");
    volume.replica_soft_anti_affinity = soft("spec.replicaSoftAntiAffinity")?;
    volume.replica_zone_soft_anti_affinity = soft("spec.replicaZoneSoftAntiAffinity")?;
    volume.replica_disk_soft_anti_affinity = soft("spec.replicaDiskSoftAntiAffinity")?;
    volume.data_engine = spelt(&o, "spec.dataEngine", DataEngine::parse, DataEngine::V1, "v1, v2")?;
    if let Some(terms) = o.opt_array("spec.topologyRequirement")? {
        for t in terms {
            let zone = t.get("zone").and_then(Value::as_str).unwrap_or("");
            let region = t.get("region").and_then(Value::as_str).unwrap_or("");
            volume.topology_requirement.push(TopologyTerm::new(zone, region));
        }
        if !terms.is_empty() {
            warnings.push(o.warning(
                "spec.topologyRequirement",
                "exists only in Longhorn after v1.12.1: applied as that version does; released versions ignore it",
            ));
        }
    }
    if o.opt_str("spec.backingImage")?.is_some_and(|b| !b.is_empty()) {
        warnings.push(o.warning("spec.backingImage", "the backing image's own node and disk selectors are not read"));
    }
    if o.opt_str("spec.cloneMode")? == Some("linked-clone") {
        warnings.push(o.warning("spec.cloneMode", "linked clones are not modelled: placed as a plain volume"));
    }
    if o.opt_str("spec.dataLayout.type")? == Some("sharded") {
        warnings.push(
            o.warning("spec.dataLayout.type", "sharded (erasure-coded) volumes are not modelled: placed as replicated"),
        );
    }
    volume.robustness = match o.opt_str("status.robustness")?.unwrap_or("") {
        "" => Robustness::Unknown,
        s => Robustness::parse(s).unwrap_or_else(|| {
            warnings.push(o.warning("status.robustness", format!("unknown value `{s}`: taken as unknown")));
            Robustness::Unknown
        }),
    };
    volume.last_degraded_at = time(&o, "status.lastDegradedAt")?;
    if let Err(ReplicaError::InvalidVolume { field, problem, value, .. }) = volume.validate() {
        let path = match field {
            "size" => "spec.size",
            "actual_size" => "status.actualSize",
            _ => "spec.numberOfReplicas",
        };
        return Err(o.invalid(path, format!("{problem} ({value})")));
    }
    let reported = condition(&o, "status.conditions", "Scheduled")?.filter(|c| !c.ok).map(|c| {
        if c.message.is_empty() {
            c.reason.to_owned()
        } else {
            c.message.to_owned()
        }
    });
    let image = o.opt_str("spec.image")?.filter(|i| !i.is_empty()).map(str::to_owned);
    if let Some(i) = image.as_ref().filter(|_| volume.data_engine == DataEngine::V1) {
        if !facts.images.is_empty() && !facts.images.iter().any(|(name, _)| name == i) {
            warnings.push(
                o.warning("spec.image", format!("no engine image `{i}` in the input: it is taken as deployed nowhere")),
            );
        }
    }
    Ok(LonghornVolume { volume, replicas: Vec::new(), image, origin: v.origin.to_owned(), reported })
}

/// An RFC 3339 time in seconds; absent or `""` is `None`.
fn time(o: &Object<'_>, path: &str) -> Result<Option<i64>, ImportError> {
    match o.opt_str(path)?.map(str::trim).filter(|t| !t.is_empty()) {
        None => Ok(None),
        Some(t) => parse_time(t).map(Some).ok_or_else(|| {
            o.invalid(path, format!("expected an RFC 3339 time such as \"2025-01-17T17:38:27Z\", found \"{t}\""))
        }),
    }
}

fn read_replicas(
    s: &Sorted<'_>,
    cluster: &Cluster,
    volumes: &mut [LonghornVolume],
    warnings: &mut Vec<ImportWarning>,
) -> Result<(), ImportError> {
    if s.replicas.is_empty() {
        return Ok(());
    }
    let by_name: HashMap<&str, usize> = volumes.iter().enumerate().map(|(i, v)| (v.volume.name.as_str(), i)).collect();
    let mut seen: HashMap<&str, &str> = HashMap::with_capacity(s.replicas.len());
    let mut found = Vec::with_capacity(s.replicas.len());
    for r in &s.replicas {
        let o = r.object("Replica");
        if let Some(first) = seen.insert(r.name, r.origin) {
            return Err(ImportError::Duplicate {
                origin: r.origin.to_owned(),
                object: ObjectRef::new("Replica", r.name).into(),
                first: first.to_owned(),
            });
        }
        let volume_name = o.str("spec.volumeName")?;
        let Some(&vi) = by_name.get(volume_name) else {
            warnings.push(o.warning(
                "spec.volumeName",
                format!("volume `{volume_name}` is not in the input: the replica is skipped (its disk's storageScheduled counts it)"),
            ));
            continue;
        };
        let mut replica = Replica::new(r.name);
        let node = o.opt_str("spec.nodeID")?.unwrap_or("");
        let disk_uuid = o.opt_str("spec.diskID")?.unwrap_or("");
        if !node.is_empty() {
            let Some(id) = cluster.host_id(node) else {
                return Err(o.dangling("spec.nodeID", format!("node {node}")));
            };
            replica.node_id = node.to_owned();
            if disk_uuid.is_empty() {
                warnings.push(o.warning("spec.diskID", "empty on a scheduled replica: its disk is not known"));
            } else {
                let Some(n) = s.nodes.get(id.index()) else {
                    return Err(o.dangling("spec.nodeID", format!("node {node}")));
                };
                let statuses = n.value.pointer("/status/diskStatus").and_then(Value::as_object);
                let found = statuses
                    .into_iter()
                    .flatten()
                    .find(|(_, st)| st.get("diskUUID").and_then(Value::as_str) == Some(disk_uuid));
                let Some((key, st)) = found else {
                    return Err(o.dangling("spec.diskID", format!("disk {disk_uuid} on node {node}")));
                };
                replica.disk_id = key.clone();
                replica.counted =
                    st.pointer("/scheduledReplica").and_then(Value::as_object).is_some_and(|m| m.contains_key(r.name));
            }
        } else {
            replica.counted = false;
        }
        replica.data_directory_name = o.opt_str("spec.dataDirectoryName")?.unwrap_or("").to_owned();
        replica.failed_at = time(&o, "spec.failedAt")?;
        replica.healthy_at = time(&o, "spec.healthyAt")?;
        replica.eviction_requested = o.opt_bool("spec.evictionRequested")?.unwrap_or(false)
            || o.opt_bool("status.evictionRequested")?.unwrap_or(false);
        let retries = o.opt_i64("spec.rebuildRetryCount", true)?.unwrap_or(0);
        replica.rebuild_retry_count = u32::try_from(retries)
            .map_err(|_| o.invalid("spec.rebuildRetryCount", format!("{retries} is not a count")))?;
        replica.deleted = o.opt_str("metadata.deletionTimestamp")?.is_some_and(|t| !t.is_empty());
        replica.active = o.opt_bool("spec.active")?.unwrap_or(true);
        replica.hard_node_affinity = o.opt_str("spec.hardNodeAffinity")?.unwrap_or("").to_owned();
        found.push((vi, replica));
    }
    for (vi, replica) in found {
        if let Some(v) = volumes.get_mut(vi) {
            v.replicas.push(replica);
        }
    }
    Ok(())
}
