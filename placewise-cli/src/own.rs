//! placewise's own snapshot JSON, and the summary of a cluster every system's `inspect` shows.

use crate::answer::{Answer, CliError};
use placewise::import::Document;
use placewise::Cluster;
use serde_json::{json, Value};
use std::fmt::Write;

/// Whether a document is a placewise snapshot: an object with a `hosts` array.
pub(crate) fn recognises(value: &Value) -> bool {
    value.get("hosts").is_some_and(Value::is_array)
}

/// `inspect` of a snapshot.
pub(crate) fn inspect(docs: &[Document]) -> Result<Answer, CliError> {
    let [doc] = docs else {
        return Err(CliError::Usage(format!("a placewise snapshot is one document; {} were given", docs.len())));
    };
    let text = doc.value.to_string();
    let cluster = Cluster::from_json(&text).map_err(placewise::import::ImportError::from)?;
    let (summary, json) = summary(&cluster);
    Ok(Answer {
        text: format!("format: placewise snapshot ({})\n{summary}", doc.origin),
        json: json!({ "format": "placewise", "cluster": json }),
        snapshot: Some(cluster.to_json()),
        svg: None,
    })
}

/// What the other subcommands say on a bare snapshot.
pub(crate) fn no_request() -> CliError {
    CliError::Usage(
        "a placewise snapshot carries no workload to place; give a system's objects \
         (Longhorn, Swarm, OpenStack) or use the library with a request"
            .into(),
    )
}

/// A cluster's size and totals, as text lines and as JSON: hosts, disks, each resource's
/// schedulable total (`(capacity − reserved) × allocation ratio`) and what is free of it after
/// every use the snapshot knows (listed instances included) for the kinds some host declares,
/// instances.
pub(crate) fn summary(cluster: &Cluster) -> (String, Value) {
    let kinds = cluster.resource_kinds();
    let mut totals: Vec<Option<(f64, f64)>> = vec![None; kinds.len()];
    let (mut hosts, mut disks, mut disk_max, mut disk_avail, mut instances) = (0usize, 0usize, 0i64, 0i64, 0usize);
    for (_, host) in cluster.hosts() {
        hosts += 1;
        for (id, _) in kinds.iter() {
            let r = host.resource(id);
            if let (true, Some(t)) = (r.is_declared(), totals.get_mut(id.index())) {
                let t = t.get_or_insert((0.0, 0.0));
                t.0 += r.limit();
                t.1 += r.free();
            }
        }
        for d in host.disks.iter() {
            disks += 1;
            disk_max = disk_max.saturating_add(i64::try_from(d.maximum).unwrap_or(i64::MAX));
            disk_avail = disk_avail.saturating_add(i64::try_from(d.available).unwrap_or(i64::MAX));
        }
        instances += host.instances.len();
    }
    let mut text = String::new();
    let _ = writeln!(text, "hosts: {hosts}");
    if disks > 0 {
        let _ = writeln!(text, "disks: {disks} ({} of {} available)", bytes(disk_avail), bytes(disk_max));
    }
    let mut resources = serde_json::Map::new();
    // Kinds no host declares (the snapshot always knows the three standard ones) are left out.
    for (id, name) in kinds.iter() {
        let Some((usable, free)) = totals.get(id.index()).copied().flatten() else { continue };
        let _ = writeln!(text, "{name}: {} usable, {} free", number(usable), number(free));
        resources.insert(name.to_owned(), json!({ "usable": usable, "free": free }));
    }
    if instances > 0 {
        let _ = writeln!(text, "instances: {instances}");
    }
    let json = json!({
        "hosts": hosts,
        "disks": disks,
        "disk_maximum": disk_max,
        "disk_available": disk_avail,
        "resources": resources,
        "instances": instances,
    });
    (text, json)
}

/// Bytes in binary units, one decimal (`1.5 GiB`).
pub(crate) fn bytes(n: i64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut x = n as f64;
    let mut unit = 0;
    while x.abs() >= 1024.0 && unit + 1 < UNITS.len() {
        x /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{x:.1} {}", UNITS[unit])
    }
}

/// A number without a needless fraction.
pub(crate) fn number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(3 << 29), "1.5 GiB");
        assert_eq!(number(4.0), "4");
        assert_eq!(number(0.25), "0.25");
    }

    #[test]
    fn a_snapshot_is_summarised() {
        let doc = Document::new(
            "c.json",
            json!({"hosts": [
                {"name": "a", "resources": {"vcpus": {"capacity": 8, "allocation_ratio": 2.0}}},
                {"name": "b", "resources": {"vcpus": 4}}
            ]}),
        );
        let answer = inspect(&[doc]).unwrap();
        assert_eq!(answer.json["cluster"]["hosts"], 2);
        assert_eq!(answer.json["cluster"]["resources"]["vcpus"]["usable"], 20.0);
        assert!(answer.text.contains("vcpus: 20 usable, 20 free"), "{}", answer.text);
    }
}
