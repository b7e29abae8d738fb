//! The command line's answers on Longhorn objects: what was read, where a volume's missing
//! replicas go, why a replica is unschedulable, and how many more volumes fit.

use crate::answer::{verdict_lines, Answer, CliError};
use crate::own::{bytes, summary};
use crate::svg::{bars, Bar};
use crate::Ask;
use placewise::import::Document;
use placewise::replica::import::{self, parse_size, LonghornCluster, LonghornVolume};
use placewise::replica::{ReplicaOutcome, ReplicaSelection};
use serde_json::{json, Value};
use std::fmt::Write;

/// How many more volumes `capacity` counts at most.
const LIMIT: u32 = 100_000;

/// Whether a document is Longhorn's.
pub(crate) fn recognises(value: &Value) -> bool {
    import::recognises(value)
}

fn read(docs: &[Document]) -> Result<LonghornCluster, CliError> {
    Ok(import::read(docs)?)
}

/// Seconds since the epoch: when failed replicas stop holding their nodes is judged against it.
fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// `inspect`: what was read. `Answer::snapshot` holds placewise's own snapshot JSON.
pub(crate) fn inspect(docs: &[Document]) -> Result<Answer, CliError> {
    let lh = read(docs)?;
    let (totals, cluster_json) = summary(&lh.cluster);
    let mut text = String::new();
    let plural = if docs.len() == 1 { "" } else { "s" };
    let _ = writeln!(text, "format: {} ({} document{plural})", lh.format, docs.len());
    text.push_str(&totals);
    let mut nodes = Vec::new();
    let _ = writeln!(text, "nodes:");
    for (id, h) in lh.cluster.hosts() {
        let zone = lh.cluster.zone(id).unwrap_or("");
        let s = h.state;
        let mut state = Vec::new();
        if !s.up {
            state.push("not ready");
        }
        if !s.enabled {
            state.push("scheduling disabled");
        }
        if s.cordoned {
            state.push("cordoned");
        }
        if s.evicting {
            state.push("evicting");
        }
        for (attr, words) in [
            (placewise::replica::ATTR_INSTANCE_MANAGER_RUNNING, "no running instance manager"),
            (placewise::replica::ATTR_ENGINE_IMAGE_DEPLOYED, "engine image not deployed"),
        ] {
            if h.attribute(attr).and_then(Value::as_bool) == Some(false) {
                state.push(words);
            }
        }
        // Node tags are the host's label keys.
        let tags: Vec<&str> = h.labels.iter().map(|(k, _)| lh.cluster.resolve(k)).collect();
        let _ = writeln!(
            text,
            "  {} (zone {}{}){}",
            h.name,
            if zone.is_empty() { "\"\"" } else { zone },
            if tags.is_empty() { String::new() } else { format!(", tags {}", tags.join(",")) },
            if state.is_empty() { String::new() } else { format!(": {}", state.join(", ")) }
        );
        let mut disks = Vec::new();
        for d in h.disks.iter() {
            let disk_tags: Vec<&str> = d.tags.iter().map(|t| lh.cluster.resolve(*t)).collect();
            let _ = writeln!(
                text,
                "    {}: {} of {} available, {} reserved, {} scheduled{}{}",
                d.name,
                bytes(d.available as i64),
                bytes(d.maximum as i64),
                bytes(d.reserved as i64),
                bytes(d.scheduled as i64),
                if disk_tags.is_empty() { String::new() } else { format!(", tags {}", disk_tags.join(",")) },
                match (d.ready, d.schedulable) {
                    (false, _) => ", not ready",
                    (true, Some(false)) => ", not schedulable",
                    _ => "",
                }
            );
            disks.push(json!({
                "name": d.name, "maximum": d.maximum, "available": d.available, "reserved": d.reserved,
                "scheduled": d.scheduled, "tags": disk_tags, "ready": d.ready, "schedulable": d.schedulable,
            }));
        }
        nodes.push(json!({"name": h.name, "zone": zone, "tags": tags, "state": state, "disks": disks}));
    }
    let _ = writeln!(text, "volumes: {}", lh.volumes.len());
    let mut volumes = Vec::new();
    for v in &lh.volumes {
        let vol = &v.volume;
        let scheduled = v.replicas.iter().filter(|r| !r.node_id.is_empty()).count();
        let failed = v.replicas.iter().filter(|r| r.is_failed()).count();
        let _ = writeln!(
            text,
            "  {}: {}; {} replica objects ({scheduled} scheduled, {failed} failed){}",
            vol.name,
            shape(vol),
            v.replicas.len(),
            v.reported.as_deref().map(|r| format!("; Longhorn reports: {r}")).unwrap_or_default()
        );
        volumes.push(json!({
            "name": vol.name, "size": vol.size, "number_of_replicas": vol.number_of_replicas,
            "replicas": v.replicas.iter().map(|r| json!({
                "name": r.name, "node": r.node_id, "disk": r.disk_id, "failed": r.is_failed(),
            })).collect::<Vec<_>>(),
            "reported": v.reported,
        }));
    }
    let _ = writeln!(text, "settings read: {}", lh.settings_read.len());
    for (name, value) in &lh.settings_read {
        let _ = writeln!(text, "  {name} = {value}");
    }
    let _ = writeln!(text, "warnings: {}", lh.warnings.len());
    for w in &lh.warnings {
        let _ = writeln!(text, "  {w}");
    }
    let settings: serde_json::Map<String, Value> =
        lh.settings_read.iter().map(|(n, v)| (n.clone(), Value::String(v.clone()))).collect();
    let json = json!({
        "format": lh.format,
        "cluster": cluster_json,
        "nodes": nodes,
        "volumes": volumes,
        "settings": settings,
        "warnings": lh.warnings.iter().map(ToString::to_string).collect::<Vec<_>>(),
    });
    Ok(Answer { text, json, snapshot: Some(lh.to_json()), svg: None })
}

/// Refuses the flags of other systems.
fn only_longhorn(ask: &Ask) -> Result<(), CliError> {
    ask.only(&["--volume", "--size", "--replicas"], "Longhorn")
}

/// The size flag as bytes.
fn size(text: &str) -> Result<i64, CliError> {
    parse_size(text).ok_or_else(|| {
        CliError::Usage(format!(
            "--size `{text}` is not bytes or a Kubernetes quantity (10Gi = 10 × 2^30 bytes, 500M = 500 × 10^6)"
        ))
    })
}

/// The volume asked about: `--volume NAME`, or a new one of `--size` and `--replicas`.
fn volume(lh: &LonghornCluster, ask: &Ask) -> Result<LonghornVolume, CliError> {
    only_longhorn(ask)?;
    match (&ask.volume, &ask.size) {
        (Some(_), Some(_)) => Err(CliError::Usage("give --volume or --size, not both".into())),
        (Some(name), None) => {
            if ask.replicas.is_some() {
                return Err(CliError::Usage("--replicas is for a new volume (with --size)".into()));
            }
            lh.volume(name).cloned().ok_or_else(|| {
                let known: Vec<&str> = lh.volumes.iter().map(|v| v.volume.name.as_str()).collect();
                CliError::Usage(format!(
                    "no volume `{name}` in the input (volumes: {})",
                    if known.is_empty() { "none".to_owned() } else { known.join(", ") }
                ))
            })
        }
        (None, Some(s)) => Ok(lh.new_volume("new-volume", size(s)?, ask.replicas)),
        (None, None) => Err(CliError::Usage("give --volume NAME, or --size (and --replicas) for a new volume".into())),
    }
}

/// A volume's size and replica count, `10.0 GiB × 3 replicas`.
fn shape(vol: &placewise::replica::Volume) -> String {
    format!("{} × {} replicas", bytes(vol.size), vol.number_of_replicas)
}

fn engine_error(e: placewise::replica::ReplicaError) -> CliError {
    CliError::Usage(e.to_string())
}

/// The text and JSON of an outcome: placements, reuses, failures with Longhorn's message.
fn outcome(v: &LonghornVolume, out: &ReplicaOutcome, explain: bool) -> (String, Value) {
    let vol = &v.volume;
    let mut text = String::new();
    let _ = writeln!(text, "volume {}: {}, {} replica objects", vol.name, shape(vol), v.replicas.len());
    if let Some(r) = &v.reported {
        let _ = writeln!(text, "Longhorn reports: {r}");
    }
    if out.waiting_for_attachment {
        let _ = writeln!(text, "nothing placed: data locality is on and the volume is detached");
    }
    if out.wait_seconds > 0 {
        let _ = writeln!(text, "no new replica for {} s: a failed replica may still be reused", out.wait_seconds);
    }
    if let Some(p) = &out.precheck_failure {
        let _ = writeln!(text, "no replica created: {p}");
    }
    for r in &out.reused {
        let _ = writeln!(text, "reuse failed replica {r}");
    }
    if out.selections.is_empty() && !out.waiting_for_attachment && out.precheck_failure.is_none() {
        let _ = writeln!(text, "nothing to place: the volume lacks no replica");
    }
    let mut selections = Vec::new();
    for (name, s) in &out.selections {
        selections.push(selection(&mut text, name, s, explain));
    }
    if let Some(m) = out.condition_message() {
        let _ = writeln!(text, "condition Scheduled=False: {m}");
    }
    let json = json!({
        "volume": vol.name,
        "size": vol.size,
        "number_of_replicas": vol.number_of_replicas,
        "reported": v.reported,
        "created": out.created,
        "reused": out.reused,
        "wait_seconds": out.wait_seconds,
        "precheck_failure": out.precheck_failure,
        "waiting_for_attachment": out.waiting_for_attachment,
        "selections": selections,
        "condition_message": out.condition_message(),
    });
    (text, json)
}

fn selection(text: &mut String, name: &str, s: &ReplicaSelection, explain: bool) -> Value {
    match &s.placement {
        Some(p) => {
            let _ = writeln!(text, "{name} → node {} disk {}", p.node_id, p.disk_id);
        }
        None => {
            let _ = writeln!(text, "{name}: unschedulable: {}", s.message().unwrap_or_default());
        }
    }
    if explain {
        let e = &s.explanation;
        let _ = writeln!(text, "  {e}");
        if let Some(b) = &s.binding {
            let _ = writeln!(text, "  binding rule: {} ({})", b.filter, b.reason);
        }
        verdict_lines(text, "    ", &e.verdicts);
    }
    json!({
        "replica": name,
        "node": s.placement.as_ref().map(|p| p.node_id.clone()),
        "disk": s.placement.as_ref().map(|p| p.disk_id.clone()),
        "message": s.message(),
        "reasons": s.reasons.as_slice().iter().map(|r| r.to_string()).collect::<Vec<_>>(),
        "explanation": if explain { serde_json::to_value(&s.explanation).unwrap_or_default() } else { Value::Null },
        "binding": s.binding.as_ref().map(|b| json!({"filter": b.filter, "reason": b.reason, "count": b.count})),
    })
}

/// `place`: where Longhorn would place the replicas a volume lacks.
pub(crate) fn place(docs: &[Document], ask: &Ask) -> Result<Answer, CliError> {
    placement(docs, ask, false)
}

/// `explain`: why each replica goes where it goes, or is unschedulable.
pub(crate) fn explain(docs: &[Document], ask: &Ask) -> Result<Answer, CliError> {
    placement(docs, ask, true)
}

/// `place`, or with `explain` every verdict.
fn placement(docs: &[Document], ask: &Ask, explain: bool) -> Result<Answer, CliError> {
    let lh = read(docs)?;
    let v = volume(&lh, ask)?;
    let out = if explain { lh.explain(&v, now()) } else { lh.place(&v, now()) }.map_err(engine_error)?;
    let (text, json) = outcome(&v, &out, explain);
    Ok(Answer { text, json, snapshot: None, svg: None })
}

/// `capacity`: how many more volumes of a size and replica count fit; `Answer::svg` holds the
/// replicas per node.
pub(crate) fn capacity(docs: &[Document], ask: &Ask) -> Result<Answer, CliError> {
    let lh = read(docs)?;
    let v = volume(&lh, ask)?;
    let cap = lh.capacity(&v, LIMIT).map_err(engine_error)?;
    let vol = &v.volume;
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{} more volumes of {} fit{}",
        cap.total,
        shape(vol),
        if cap.capped { format!(" (counting stopped at {LIMIT})") } else { String::new() }
    );
    if let Some(stop) = &cap.stop {
        let _ = writeln!(text, "the next one stops at: {stop}");
    }
    if let Some(m) = &cap.message {
        let _ = writeln!(text, "Longhorn would report: {m}");
    }
    let mut chart = Vec::new();
    let mut per_node = Vec::new();
    for &(host, n) in &cap.replicas {
        let name = lh.cluster.host_name(host);
        let _ = writeln!(text, "  {name}: {n} replicas");
        chart.push(Bar { label: name.to_owned(), value: f64::from(n), note: "replicas".into() });
        per_node.push(json!({"node": name, "replicas": n}));
    }
    let per_disk: Vec<Value> = cap
        .disks
        .iter()
        .map(|&(h, d, n)| {
            let disk = lh.cluster.host(h).and_then(|x| x.disks.get(d.index())).map_or("", |d| &*d.name);
            json!({"node": lh.cluster.host_name(h), "disk": disk, "replicas": n})
        })
        .collect();
    let title = format!(
        "{} more volumes of {}: per node{}",
        cap.total,
        shape(vol),
        cap.stop.as_deref().map(|s| format!(" (then: {s})")).unwrap_or_default()
    );
    let json = json!({
        "size": vol.size,
        "number_of_replicas": vol.number_of_replicas,
        "total": cap.total,
        "capped": cap.capped,
        "stop": cap.stop,
        "message": cap.message,
        "per_node": per_node,
        "per_disk": per_disk,
    });
    Ok(Answer { text, json, snapshot: None, svg: Some(bars(&title, &chart)) })
}
