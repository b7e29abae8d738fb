//! The command line's answers on OpenStack objects: the Placement and Nova APIs' JSON, with an
//! optional `nova.conf` (`--config`), through `placewise::nova::import`.

use crate::answer::{verdict_lines, Answer, CliError};
use crate::own::{number, summary};
use crate::svg::{bars, Bar};
use crate::Ask;
use placewise::import::Document;
use placewise::nova::import::{self, OpenStackCloud};
use placewise::nova::request::Flavor;
use serde_json::{json, Value};
use std::fmt::Write;

/// Whether a document is OpenStack's: a Placement or Nova API response the importer reads.
pub(crate) fn recognises(value: &Value) -> bool {
    import::recognises(value)
}

/// Reads the documents, under the `nova.conf` `--config` names (its warnings first).
fn cloud(docs: &[Document], ask: Option<&Ask>) -> Result<OpenStackCloud, CliError> {
    let Some(path) = ask.and_then(|a| a.config.as_ref()) else {
        return Ok(import::read(docs)?);
    };
    let text = std::fs::read_to_string(path).map_err(|source| CliError::Read { path: path.clone(), source })?;
    let (config, mut warnings) = import::read_conf(&path.display().to_string(), &text)?;
    let mut cloud = import::read_with(docs, config)?;
    warnings.append(&mut cloud.warnings);
    cloud.warnings = warnings;
    Ok(cloud)
}

/// The flavor `--flavor` names, refusing the other systems' flags.
fn flavor(ask: &Ask) -> Result<&str, CliError> {
    ask.only(&["--flavor", "--count", "--config", "--server-group"], "OpenStack")?;
    ask.flavor.as_deref().ok_or_else(|| CliError::Usage("OpenStack needs --flavor NAME (a flavor's name or id)".into()))
}

fn answer_error(e: import::CloudError) -> CliError {
    CliError::Usage(e.to_string())
}

fn warnings_text(cloud: &OpenStackCloud, text: &mut String) {
    if !cloud.warnings.is_empty() {
        let _ = writeln!(text, "warnings: {}", cloud.warnings.len());
        for w in &cloud.warnings {
            let _ = writeln!(text, "  {w}");
        }
    }
}

fn warnings_json(cloud: &OpenStackCloud) -> Value {
    json!(cloud.warnings.iter().map(ToString::to_string).collect::<Vec<_>>())
}

fn flavor_json(f: &Flavor) -> Value {
    let specs: serde_json::Map<String, Value> = f.extra_specs.iter().map(|(k, v)| (k.to_owned(), json!(v))).collect();
    json!({
        "name": f.name, "id": f.id, "vcpus": f.vcpus, "ram_mb": f.memory_mb, "disk_gb": f.root_gb,
        "ephemeral_gb": f.ephemeral_gb, "swap_mb": f.swap, "extra_specs": specs,
    })
}

/// `inspect`: what was read. `Answer::snapshot` holds placewise's own snapshot JSON.
pub(crate) fn inspect(docs: &[Document]) -> Result<Answer, CliError> {
    let cloud = cloud(docs, None)?;
    let c = &cloud.cluster;
    let (totals, totals_json) = summary(c);
    let mut text = String::from("format: OpenStack (Placement and Nova API responses)\n");
    let read: Vec<String> = cloud.kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
    let _ = writeln!(text, "read: {}", read.join(", "));
    text.push_str(&totals);
    let mut hosts = Vec::new();
    for (id, h) in c.hosts() {
        let zone = c.zone(id).unwrap_or_default();
        let state = if !h.state.up {
            "down"
        } else if !h.state.enabled {
            "disabled"
        } else {
            "up"
        };
        let aggregates: Vec<&str> =
            h.aggregates.iter().filter_map(|a| c.aggregates().get(a.index())).map(|a| &*a.name).collect();
        let _ = writeln!(
            text,
            "  host {} (zone {zone}, {state}){}",
            h.name,
            if aggregates.is_empty() { String::new() } else { format!(", aggregates {}", aggregates.join(", ")) }
        );
        hosts.push(json!({"name": &*h.name, "zone": zone, "state": state, "aggregates": aggregates}));
    }
    let _ = writeln!(text, "flavors: {}", cloud.flavors.len());
    for f in &cloud.flavors {
        let _ = writeln!(
            text,
            "  {} ({} vCPU, {} MiB, {} GiB disk{})",
            f.name,
            number(f.vcpus),
            number(f.memory_mb),
            number(f.root_gb + f.ephemeral_gb),
            if f.extra_specs.is_empty() { String::new() } else { format!(", {} extra specs", f.extra_specs.len()) }
        );
    }
    let _ = writeln!(text, "aggregates: {}", c.aggregates().len());
    for a in c.aggregates() {
        let meta: Vec<String> = a.metadata.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(text, "  {} {}", a.name, meta.join(" "));
    }
    let _ = writeln!(text, "server groups: {}", cloud.server_groups.len());
    for g in &cloud.server_groups {
        let _ = writeln!(text, "  {} ({}, {} members)", g.name, g.policy, g.members.len());
    }
    warnings_text(&cloud, &mut text);
    let json = json!({
        "format": "openstack",
        "read": cloud.kinds,
        "cluster": totals_json,
        "hosts": hosts,
        "flavors": cloud.flavors.iter().map(flavor_json).collect::<Vec<_>>(),
        "aggregates": c.aggregates().iter().map(|a| json!({"name": &*a.name, "metadata": a.metadata})).collect::<Vec<_>>(),
        "server_groups": cloud.server_groups.iter().map(|g| json!({
            "id": g.name, "policy": g.policy, "members": g.members, "hosts": g.hosts,
            "max_server_per_host": g.max_server_per_host,
        })).collect::<Vec<_>>(),
        "warnings": warnings_json(&cloud),
    });
    Ok(Answer { text, json, snapshot: Some(c.to_json()), svg: None })
}

/// `place`: where the filter scheduler puts `--count` (default 1) instances of `--flavor`.
pub(crate) fn place(docs: &[Document], ask: &Ask) -> Result<Answer, CliError> {
    let name = flavor(ask)?;
    let cloud = cloud(docs, Some(ask))?;
    let count = ask.count.unwrap_or(1);
    let request = match &ask.server_group {
        Some(group) => cloud.request_in_group(name, count, group),
        None => cloud.request(name, count),
    };
    let outcome = request.and_then(|r| cloud.schedule(&r)).map_err(answer_error)?;
    let mut text = String::new();
    let placed = outcome.selections.len();
    let _ = writeln!(text, "flavor {name}: {placed} of {count} placed");
    for s in &outcome.selections {
        let _ = writeln!(text, "  instance {} -> {}", s.instance, s.host_name);
    }
    if !outcome.is_complete() {
        let _ = writeln!(text, "no valid host for instance {}: {}", outcome.explanation.instance, outcome.explanation);
    }
    warnings_text(&cloud, &mut text);
    let json = json!({
        "flavor": name,
        "count": count,
        "placed": placed,
        "no_valid_host": !outcome.is_complete(),
        "selections": outcome.selections.iter().map(|s| json!({"instance": s.instance, "host": s.host_name})).collect::<Vec<_>>(),
        "explanation": outcome.explanation.to_string(),
        "rejections": outcome.explanation.rejections,
        "warnings": warnings_json(&cloud),
    });
    Ok(Answer { text, json, snapshot: None, svg: None })
}

/// `explain`: every filter's verdict on every host for one instance of `--flavor`, and the
/// weighed hosts.
pub(crate) fn explain(docs: &[Document], ask: &Ask) -> Result<Answer, CliError> {
    let name = flavor(ask)?;
    let cloud = cloud(docs, Some(ask))?;
    if ask.count.is_some() {
        return Err(CliError::Usage("explain looks at one instance; it takes no --count".into()));
    }
    let outcome = match &ask.server_group {
        Some(group) => cloud
            .request_in_group(name, 1, group)
            .and_then(|r| cloud.schedule(&r.explain(placewise::request::ExplainOptions::detailed(20)))),
        None => cloud.explain(name),
    }
    .map_err(answer_error)?;
    let e = &outcome.explanation;
    let mut text = String::new();
    let _ = writeln!(text, "flavor {name}: {e}");
    if let Some(s) = outcome.selections.first() {
        let _ = writeln!(text, "selected: {}", s.host_name);
    }
    let scheduler = cloud.scheduler().map_err(|e| CliError::Usage(e.to_string()))?;
    let _ = writeln!(text, "filters, in order:");
    for f in scheduler.filters() {
        let removed: Vec<&str> =
            e.verdicts.iter().filter(|v| v.filter.as_deref() == Some(f.name())).map(|v| v.host.as_str()).collect();
        let _ = writeln!(
            text,
            "  {}: {} removed{}",
            f.name(),
            removed.len(),
            if removed.is_empty() { String::new() } else { format!(" ({})", removed.join(", ")) }
        );
    }
    let _ = writeln!(text, "hosts:");
    verdict_lines(&mut text, "  ", &e.verdicts);
    if !e.top.is_empty() {
        let _ = writeln!(text, "weighed:");
        for r in &e.top {
            let _ = writeln!(text, "  {} {}", r.host, r.scores.first().map_or(String::new(), |s| format!("{s:.4}")));
        }
    }
    warnings_text(&cloud, &mut text);
    let json = json!({
        "flavor": name,
        "selected": outcome.selections.first().map(|s| s.host_name.clone()),
        "filters": scheduler.filters().map(|f| f.name().to_owned()).collect::<Vec<_>>(),
        "explanation": e,
        "summary": e.to_string(),
        "warnings": warnings_json(&cloud),
    });
    Ok(Answer { text, json, snapshot: None, svg: None })
}

/// `capacity`: how many more of `--flavor` fit, per availability zone and aggregate;
/// `Answer::svg` holds the chart.
pub(crate) fn capacity(docs: &[Document], ask: &Ask) -> Result<Answer, CliError> {
    let name = flavor(ask)?;
    if ask.count.is_some() {
        return Err(CliError::Usage("capacity counts how many fit; it takes no --count".into()));
    }
    let cloud = cloud(docs, Some(ask))?;
    if ask.server_group.is_some() {
        return Err(CliError::Usage("capacity counts a flavor alone; it takes no --server-group".into()));
    }
    let cap = cloud.capacity(name).map_err(answer_error)?;
    let mut text = String::new();
    let _ = writeln!(
        text,
        "flavor {name}: {} more fit{}",
        cap.total,
        if cap.instances.capped { " (at least)" } else { "" }
    );
    let mut chart = Vec::new();
    let _ = writeln!(text, "per availability zone:");
    for (zone, hosts, fits) in &cap.zones {
        let _ = writeln!(text, "  {zone}: {fits} ({hosts} hosts)");
        chart.push(Bar { label: format!("zone {zone}"), value: *fits as f64, note: format!("{fits}") });
    }
    if !cap.aggregates.is_empty() {
        let _ = writeln!(text, "per aggregate:");
    }
    for (agg, hosts, fits) in &cap.aggregates {
        let _ = writeln!(text, "  {agg}: {fits} ({hosts} hosts)");
        chart.push(Bar { label: format!("aggregate {agg}"), value: *fits as f64, note: format!("{fits}") });
    }
    let mut stops = Vec::new();
    for (i, stop) in cap.instances.stops.iter().enumerate() {
        let n = cap.instances.hosts.iter().filter(|h| h.stop == Some(i as u32)).count();
        stops.push(json!({"filter": stop.filter, "reason": stop.reason, "hosts": n}));
    }
    if !stops.is_empty() {
        let _ = writeln!(text, "what stops the next one:");
        for (stop, s) in cap.instances.stops.iter().zip(&stops) {
            let _ = writeln!(text, "  {} host(s): {}", s["hosts"], stop.reason);
        }
    }
    warnings_text(&cloud, &mut text);
    let hosts: Vec<Value> = cap
        .instances
        .hosts
        .iter()
        .map(|h| {
            json!({
                "host": cloud.cluster.host(h.host).map(|x| x.name.to_string()),
                "fits": h.fits,
                "stop": h.stop.and_then(|s| cap.instances.stops.get(s as usize)).map(|s| s.reason.clone()),
            })
        })
        .collect();
    let json = json!({
        "flavor": name,
        "total": cap.total,
        "capped": cap.instances.capped,
        "zones": cap.zones.iter().map(|(z, h, f)| json!({"zone": z, "hosts": h, "fits": f})).collect::<Vec<_>>(),
        "aggregates": cap.aggregates.iter().map(|(a, h, f)| json!({"aggregate": a, "hosts": h, "fits": f})).collect::<Vec<_>>(),
        "hosts": hosts,
        "stops": stops,
        "warnings": warnings_json(&cloud),
    });
    let svg = bars(&format!("More {name} instances that fit"), &chart);
    Ok(Answer { text, json, snapshot: None, svg: Some(svg) })
}
