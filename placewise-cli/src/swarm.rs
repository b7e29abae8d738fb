//! The command line's answers on Docker Swarm objects: `docker node inspect`, `docker service
//! inspect` and `docker inspect` of tasks (or the API's `GET /nodes|/services|/tasks`), and
//! Compose files of services to plan, read by `placewise::spread::import`.

use crate::answer::{verdict_lines, Answer, CliError};
use crate::own;
use crate::svg::{self, Bar};
use crate::Ask;
use placewise::import::{Document, ImportWarning};
use placewise::spread::import::{self, ServiceMode, SwarmCluster, SwarmError, SwarmService};
use placewise::spread::{Preference, SpreadOutcome};
use serde_json::{json, Value};
use std::fmt::Write;

/// Whether a document is Swarm's.
pub(crate) fn recognises(value: &Value) -> bool {
    import::recognises(value)
}

/// Nodes listed one a line by `inspect` before the rest are summed up.
const NODES_SHOWN: usize = 50;
/// Warnings listed by the text answers before the rest are counted.
const WARNINGS_SHOWN: usize = 20;

/// `inspect`: what was read. `Answer::snapshot` holds placewise's own snapshot JSON.
pub(crate) fn inspect(docs: &[Document]) -> Result<Answer, CliError> {
    let swarm = import::read(docs)?;
    let (summary, cluster_json) = own::summary(&swarm.cluster);
    let mut text = String::new();
    let origins: Vec<&str> = docs.iter().map(|d| d.origin.as_str()).collect();
    let _ = writeln!(text, "format: Docker Swarm ({})", origins.join(", "));
    let objects: Vec<String> = swarm.objects.iter().map(|(k, n)| format!("{n} {k}")).collect();
    let _ = writeln!(text, "objects: {}", objects.join(", "));
    text.push_str(&summary);
    let held = held_by_tasks(&swarm);
    let free: Vec<String> = held
        .iter()
        .filter(|(_, (h, f))| *h != 0.0 || *f != 0.0)
        .map(|(k, (h, f))| format!("{k} {} held, {} free", own::number(*h), own::number(*f)))
        .collect();
    if !free.is_empty() {
        let _ = writeln!(text, "after the tasks' reservations (Swarm does not report them): {}", free.join("; "));
    }
    let spec = swarm.cluster.to_spec();
    let mut nodes = Vec::new();
    for (i, h) in spec.hosts.iter().enumerate() {
        let attr = |k: &str| h.attributes.get(k).and_then(Value::as_str).unwrap_or("");
        let state = if !h.state.up {
            "down"
        } else if h.state.evicting {
            "drain"
        } else if h.state.cordoned || !h.state.enabled {
            "pause"
        } else {
            "ready, active"
        };
        let labels: Vec<String> = h.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let capacity = |k: &str| h.resources.get(k).map_or(0.0, |r| r.capacity);
        if i < NODES_SHOWN {
            if i == 0 {
                text.push_str("nodes:\n");
            }
            let _ = writeln!(
                text,
                "  {} ({}): {}, {}, {} CPUs, {} memory, {} tasks{}{}",
                h.name,
                attr("hostname"),
                attr("role"),
                state,
                own::number(capacity("vcpus")),
                own::bytes((capacity("memory_mb") * 1_048_576.0) as i64),
                h.instances.len(),
                if labels.is_empty() { String::new() } else { format!(", labels {}", labels.join(" ")) },
                if h.attributes.get("engine").and_then(Value::as_bool) == Some(false) { ", no engine" } else { "" },
            );
        }
        nodes.push(json!({
            "id": h.name, "hostname": attr("hostname"), "role": attr("role"), "state": state,
            "labels": h.labels, "tasks": h.instances.len(),
            "resources": h.resources.iter().map(|(k, r)| (k.clone(), json!(r.capacity))).collect::<serde_json::Map<_, _>>(),
        }));
    }
    if spec.hosts.len() > NODES_SHOWN {
        let _ = writeln!(text, "  … and {} more nodes", spec.hosts.len() - NODES_SHOWN);
    }
    if !swarm.services.is_empty() {
        text.push_str("services:\n");
    }
    for s in &swarm.services {
        let _ = writeln!(text, "  {}", service_line(&swarm, s));
    }
    let t = &swarm.tasks;
    let ignored: Vec<String> = t.ignored.iter().map(|(state, n)| format!("{n} {state}")).collect();
    let _ = writeln!(
        text,
        "tasks: {} holding resources ({} being shut down){}",
        t.holding,
        t.terminating,
        if ignored.is_empty() { String::new() } else { format!("; holding nothing: {}", ignored.join(", ")) }
    );
    write_warnings(&mut text, &swarm.warnings);
    let services: Vec<Value> = swarm.services.iter().map(|s| service_json(&swarm, s)).collect();
    let json = json!({
        "format": "swarm",
        "objects": swarm.objects,
        "cluster": cluster_json,
        "reservations": held.iter().map(|(k, (h, f))| (k.clone(), json!({ "held": h, "free": f }))).collect::<serde_json::Map<_, _>>(),
        "nodes": nodes,
        "services": services,
        "tasks": { "holding": t.holding, "terminating": t.terminating, "ignored": t.ignored },
        "warnings": warnings_json(&swarm.warnings),
    });
    Ok(Answer { text, json, snapshot: Some(swarm.to_json()), svg: None })
}

/// Per resource kind, what the tasks hold and what is left free on the nodes, summed.
fn held_by_tasks(swarm: &SwarmCluster) -> std::collections::BTreeMap<String, (f64, f64)> {
    let kinds = swarm.cluster.resource_kinds();
    let mut out = std::collections::BTreeMap::new();
    for (id, kind) in kinds.iter() {
        let (mut held, mut free) = (0.0, 0.0);
        for (_, host) in swarm.cluster.hosts() {
            free += host.resource(id).free();
            held +=
                host.instances.iter().flat_map(|i| &i.resources).filter(|(r, _)| *r == id).map(|(_, a)| a).sum::<f64>();
        }
        out.insert(kind.to_owned(), (held, free));
    }
    out
}

/// One service as `inspect` lists it.
fn service_line(swarm: &SwarmCluster, s: &SwarmService) -> String {
    let r = &s.request;
    let mut line = format!(
        "{} ({}{}): {} running, next {}",
        s.name,
        s.mode,
        if s.deployed { "" } else { ", to plan" },
        s.running,
        swarm.request(&s.name, None).map_or(0, |r| r.tasks)
    );
    if !r.constraints.is_empty() {
        let c: Vec<String> = r.constraints.iter().map(ToString::to_string).collect();
        let _ = write!(line, "; constraints {}", c.join(", "));
    }
    if !r.preferences.is_empty() {
        let _ = write!(line, "; spread {}", preferences(&r.preferences).join(" > "));
    }
    if r.max_replicas > 0 {
        let _ = write!(line, "; at most {} a node", r.max_replicas);
    }
    if !r.resources.is_empty() {
        let res: Vec<String> = r.resources.iter().map(|(k, v)| format!("{k} {}", own::number(*v))).collect();
        let _ = write!(line, "; reserves {}", res.join(", "));
    }
    if !r.ports.is_empty() {
        let p: Vec<String> = r.ports.iter().map(|p| format!("{}/{}", p.protocol, p.port)).collect();
        let _ = write!(line, "; host ports {}", p.join(", "));
    }
    line
}

fn preferences(prefs: &[Preference]) -> Vec<String> {
    prefs.iter().map(|p| p.descriptor().to_string()).collect()
}

fn service_json(swarm: &SwarmCluster, s: &SwarmService) -> Value {
    let r = &s.request;
    json!({
        "id": s.id,
        "name": s.name,
        "origin": s.origin,
        "mode": match s.mode { ServiceMode::Replicated(_) => "replicated", _ => "global" },
        "replicas": match s.mode { ServiceMode::Replicated(n) => Some(n), _ => None },
        "deployed": s.deployed,
        "running": s.running,
        "next": swarm.request(&s.name, None).map_or(0, |r| r.tasks),
        "constraints": r.constraints.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "preferences": preferences(&r.preferences),
        "max_replicas": r.max_replicas,
        "reservations": r.resources,
        "host_ports": r.ports.iter().map(|p| format!("{}/{}", p.protocol, p.port)).collect::<Vec<_>>(),
    })
}

fn write_warnings(text: &mut String, warnings: &[ImportWarning]) {
    if warnings.is_empty() {
        return;
    }
    let _ = writeln!(text, "warnings ({}):", warnings.len());
    for w in warnings.iter().take(WARNINGS_SHOWN) {
        let _ = writeln!(text, "  {w}");
    }
    if warnings.len() > WARNINGS_SHOWN {
        let _ = writeln!(text, "  … and {} more", warnings.len() - WARNINGS_SHOWN);
    }
}

fn warnings_json(warnings: &[ImportWarning]) -> Vec<Value> {
    warnings
        .iter()
        .map(|w| {
            json!({
                "origin": w.origin,
                "object": w.object.as_ref().map(ToString::to_string),
                "field": w.field,
                "message": w.message,
            })
        })
        .collect()
}

/// Refuses the flags of the other systems, and asks for `--service`.
fn service<'a>(swarm: &SwarmCluster, ask: &'a Ask) -> Result<&'a str, CliError> {
    ask.only(&["--service", "--tasks"], "Docker Swarm")?;
    ask.service.as_deref().ok_or_else(|| {
        let names: Vec<&str> = swarm.services.iter().map(|s| s.name.as_str()).collect();
        CliError::Usage(format!(
            "which service? give --service NAME (services read: {})",
            if names.is_empty() { "none".to_owned() } else { names.join(", ") }
        ))
    })
}

fn asked(e: SwarmError) -> CliError {
    CliError::Usage(e.to_string())
}

/// The answer of `place` and `explain`: where the tasks went, the split per branch, and
/// SwarmKit's words when some did not fit.
fn outcome_text(name: &str, out: &SpreadOutcome) -> String {
    let mut text = format!("service {name}: {} task(s) asked\n", out.requested);
    let _ = writeln!(text, "{out}");
    if !out.levels.is_empty() {
        let _ = writeln!(text, "spread over: {}", out.levels.join(" > "));
    }
    if !out.skipped.is_empty() {
        let _ = writeln!(text, "descriptors SwarmKit ignores: {}", out.skipped.join(", "));
    }
    let _ = write!(text, "branches:\n{}", out.tree);
    text
}

/// `place`.
pub(crate) fn place(docs: &[Document], ask: &Ask) -> Result<Answer, CliError> {
    let swarm = import::read(docs)?;
    let name = service(&swarm, ask)?;
    let out = swarm.place(name, ask.tasks).map_err(asked)?;
    let json = json!({ "service": name, "outcome": out });
    Ok(Answer { text: outcome_text(name, &out), json, snapshot: None, svg: None })
}

/// `explain`.
pub(crate) fn explain(docs: &[Document], ask: &Ask) -> Result<Answer, CliError> {
    let swarm = import::read(docs)?;
    let name = service(&swarm, ask)?;
    let out = swarm.explain(name, ask.tasks).map_err(asked)?;
    let mut text = outcome_text(name, &out);
    let e = &out.explanation;
    let _ = writeln!(text, "{e}");
    let _ = writeln!(text, "SwarmKit says: {}", out.message().unwrap_or("every task found a node"));
    text.push_str("nodes:\n");
    verdict_lines(&mut text, "  ", &e.verdicts);
    write_warnings(&mut text, &swarm.warnings);
    let json = json!({ "service": name, "outcome": out, "warnings": warnings_json(&swarm.warnings) });
    Ok(Answer { text, json, snapshot: None, svg: None })
}

/// A branch's value as the capacity answer shows it: `(no value)` for the nodes without the
/// label (or with an empty one).
fn value(v: &str) -> &str {
    if v.is_empty() {
        "(no value)"
    } else {
        v
    }
}

/// `capacity`; `Answer::svg` holds the chart: a bar per branch.
pub(crate) fn capacity(docs: &[Document], ask: &Ask) -> Result<Answer, CliError> {
    let swarm = import::read(docs)?;
    let name = service(&swarm, ask)?;
    if ask.tasks.is_some() {
        return Err(CliError::Usage("capacity counts every batch size: --tasks is not used".into()));
    }
    let cap = swarm.capacity(name).map_err(asked)?;
    let path = |p: &[String]| {
        if p.is_empty() {
            "(all)".to_owned()
        } else {
            p.iter().map(|v| value(v)).collect::<Vec<_>>().join(" / ")
        }
    };
    let mut text = format!(
        "service {name}: {}{} more task(s) fit\n",
        cap.total,
        if cap.capped { " (or more: the count stopped at its limit)" } else { "" }
    );
    let _ = writeln!(text, "the largest batch that runs no branch out: {}", cap.until_branch_full);
    if !cap.first_full.is_empty() {
        let first: Vec<String> = cap.first_full.iter().map(|p| path(p)).collect();
        let _ = writeln!(text, "first to run out: {}", first.join(", "));
    }
    text.push_str("per branch (more tasks, eligible nodes, existing tasks):\n");
    let mut bars = Vec::new();
    let mut branches = Vec::new();
    for b in &cap.branches {
        let _ = writeln!(
            text,
            "  {:indent$}{}: {} ({} nodes, {} existing)",
            "",
            b.path.last().map_or("(all)", |v| value(v)),
            b.capacity,
            b.eligible_nodes,
            b.existing,
            indent = 2 * b.path.len()
        );
        bars.push(Bar {
            label: path(&b.path),
            value: f64::from(b.capacity),
            note: format!("({} nodes, {} existing)", b.eligible_nodes, b.existing),
        });
        branches.push(json!({
            "path": b.path, "capacity": b.capacity, "eligible_nodes": b.eligible_nodes, "existing": b.existing,
        }));
    }
    let json = json!({
        "service": name,
        "total": cap.total,
        "capped": cap.capped,
        "until_branch_full": cap.until_branch_full,
        "first_full": cap.first_full,
        "branches": branches,
    });
    let chart = svg::bars(&format!("more tasks of {name} per branch"), &bars);
    Ok(Answer { text, json, snapshot: None, svg: Some(chart) })
}
