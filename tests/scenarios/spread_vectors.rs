//! The reference's 27 spread vectors (§7) as data files under `tests/data/spread/`, run by
//! this module of the scenario runner.
//!
//! A file holds a `description`, the `cluster` (a `ClusterSpec`), the `request` (a
//! `SpreadRequest`, run `batches` times, each batch's tasks joining the snapshot before the
//! next), the real implementation's `outcomes` (new tasks per node; every one SwarmKit can
//! produce), the `canonical` outcome under the reference's recommended order, `unplaced`, and
//! the allowed failure `messages` (the canonical one first). The stable compatible mode
//! (`SpreadMode::SwarmCompatibleStable`) must give the canonical outcome, and the exact one
//! (`SpreadMode::SwarmCompatible`: SwarmKit's heap re-sort of revisited leaves) one of the real
//! outcomes. An optional `balanced` gives the
//! outcome of the balanced mode, worked out by hand from its documented rules.
//!
//! Expectations come from the reference's tables, not from the library's output.

use crate::data;

use placewise::snapshot::ClusterSpec;
use placewise::snapshot::InstanceSpec;
use placewise::spread::{SpreadMode, SpreadRequest, SpreadScheduler};
use placewise::{Cluster, ClusterEvent};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Vector {
    description: String,
    cluster: ClusterSpec,
    request: SpreadRequest,
    batches: u32,
    outcomes: Vec<BTreeMap<String, u32>>,
    canonical: BTreeMap<String, u32>,
    unplaced: u32,
    messages: Vec<String>,
    balanced: Option<BTreeMap<String, u32>>,
}

struct Result {
    per_host: BTreeMap<String, u32>,
    unplaced: u32,
    message: Option<String>,
}

fn run(v: &Vector, mode: SpreadMode) -> Result {
    let scheduler = SpreadScheduler::builder().build().unwrap();
    let mut cluster = Cluster::from_spec(&v.cluster).expect("valid cluster");
    let mut request = v.request.clone();
    request.mode = mode;
    let mut per_host = BTreeMap::new();
    let (mut unplaced, mut message) = (0, None);
    for batch in 0..v.batches {
        let out = scheduler.schedule(&cluster, &request).expect("valid request");
        for a in &out.selections {
            *per_host.entry(a.host_name.clone()).or_insert(0) += 1;
            let id = format!("new-{batch}-{}", a.task);
            let event = ClusterEvent::InstancePlaced {
                host: a.host_name.clone(),
                instance: InstanceSpec::new(id).group(request.service.clone()),
            };
            cluster = cluster.apply(&event).expect("known host");
        }
        unplaced += out.unplaced;
        message = out.message().map(str::to_owned).or(message);
    }
    Result { per_host, unplaced, message }
}

#[test]
fn reference_vectors() {
    let mut seen = 0;
    for path in &data::files("spread", ".json", 27) {
        let text = std::fs::read_to_string(path).unwrap();
        let v: Vector = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let name = &v.description;
        assert!(v.outcomes.contains(&v.canonical), "{name}: the canonical outcome is one of the real ones");

        let r = run(&v, SpreadMode::SwarmCompatibleStable);
        assert!(v.outcomes.contains(&r.per_host), "{name}: {:?} is not in the outcome set", r.per_host);
        assert_eq!(r.per_host, v.canonical, "{name}: canonical outcome");
        assert_eq!(r.unplaced, v.unplaced, "{name}: unplaced");
        if v.messages.is_empty() {
            assert_eq!(r.message, None, "{name}: no message when all are placed");
        } else {
            let m = r.message.as_deref().expect("a message");
            assert!(v.messages.iter().any(|x| x == m), "{name}: message {m:?}");
            assert_eq!(m, v.messages[0], "{name}: canonical message");
        }

        let heap = run(&v, SpreadMode::SwarmCompatible);
        assert!(v.outcomes.contains(&heap.per_host), "{name}: heap re-sort {:?} not in the set", heap.per_host);
        assert_eq!(heap.unplaced, v.unplaced, "{name}: heap re-sort unplaced");

        if let Some(expected) = &v.balanced {
            let b = run(&v, SpreadMode::Balanced);
            assert_eq!(&b.per_host, expected, "{name}: balanced outcome");
            assert_eq!(b.unplaced, v.unplaced, "{name}: balanced unplaced");
        }
        seen += 1;
    }
    assert_eq!(seen, 27, "every vector of the reference");
}
