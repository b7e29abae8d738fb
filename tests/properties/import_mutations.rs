//! Every importer on its own fixtures damaged at random: a member removed, or its value
//! replaced by one of another type or an extreme number. Whatever the damage, reading gives an
//! answer or a typed error naming the file it came from, and never panics; the damaged
//! Longhorn dump reads the same through `read_json` as through `read`.

use placewise::import::{Document, ImportError};
use placewise::{nova, replica, spread};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Every JSON fixture of one system, in name order (bad ones left out: they fail already).
fn fixtures(system: &str) -> Vec<Document> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for e in entries {
            if e.is_dir() {
                if !e.ends_with("bad") && !e.ends_with("bundle") {
                    walk(&e, out);
                }
            } else if e.extension().is_some_and(|x| x == "json")
                && !e.file_name().is_some_and(|n| n.to_string_lossy().starts_with("bad"))
            {
                out.push(e);
            }
        }
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/import").join(system);
    let mut files = Vec::new();
    walk(&root, &mut files);
    files
        .iter()
        .map(|p| Document::from_json(p.display().to_string(), &std::fs::read_to_string(p).unwrap()).unwrap())
        .collect()
}

/// The fixture sets the damage is applied to: Longhorn's main dump, Swarm's cluster, the
/// OpenStack cloud.
fn inputs() -> &'static [(&'static str, Vec<Document>)] {
    static INPUTS: OnceLock<Vec<(&'static str, Vec<Document>)>> = OnceLock::new();
    INPUTS.get_or_init(|| {
        let longhorn = fixtures("longhorn").into_iter().filter(|d| d.origin.ends_with("cluster.json")).collect();
        let swarm = fixtures("swarm").into_iter().filter(|d| d.origin.contains("/cluster/")).collect();
        let openstack = fixtures("openstack").into_iter().filter(|d| d.origin.contains("/cloud/")).collect();
        vec![("longhorn", longhorn), ("swarm", swarm), ("openstack", openstack)]
    })
}

/// Every JSON pointer into `v`, in document order.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                out.push(p.clone());
                pointers(x, p, out);
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                let p = format!("{at}/{i}");
                out.push(p.clone());
                pointers(x, p, out);
            }
        }
        _ => {}
    }
}

/// The replacements: each of another JSON type than most fields, or an extreme number.
fn replacement(kind: u8) -> Option<Value> {
    Some(match kind % 10 {
        0 => return None, // remove the member
        1 => Value::Null,
        2 => json!("x"),
        3 => json!(""),
        4 => json!(-1),
        5 => json!(1e300),
        6 => json!(u64::MAX),
        7 => json!([]),
        8 => json!({}),
        _ => json!(true),
    })
}

/// Applies one damage at the pointer picked by `pick` (modulo the pointers of that document).
fn damage(doc: &mut Value, pick: usize, kind: u8) {
    let mut all = Vec::new();
    pointers(doc, String::new(), &mut all);
    let Some(target) = all.get(pick % all.len().max(1)).cloned() else { return };
    let (parent, last) = target.rsplit_once('/').unwrap();
    let key = last.replace("~1", "/").replace("~0", "~");
    let Some(container) = doc.pointer_mut(parent) else { return };
    match (container, replacement(kind)) {
        (Value::Object(map), None) => {
            map.remove(&key);
        }
        (Value::Object(map), Some(v)) => {
            map.insert(key, v);
        }
        (Value::Array(items), r) => {
            if let Ok(i) = key.parse::<usize>() {
                match r {
                    None if i < items.len() => {
                        items.remove(i);
                    }
                    Some(v) if i < items.len() => items[i] = v,
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// Reads `docs` as `system` reads them; `Err` is the error's text.
fn read(system: &str, docs: &[Document]) -> Result<(), ImportError> {
    match system {
        "longhorn" => replica::import::read(docs).map(drop),
        "swarm" => spread::import::read(docs).map(drop),
        _ => nova::import::read(docs).map(drop),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn damaged_input_is_answered_or_refused_naming_its_file(
        system in 0usize..3,
        damages in proptest::collection::vec((any::<usize>(), any::<usize>(), any::<u8>()), 1..4),
    ) {
        let (name, docs) = &inputs()[system];
        let mut docs = docs.clone();
        prop_assume!(!docs.is_empty());
        let mut touched = Vec::new();
        for &(which, pick, kind) in &damages {
            let i = which % docs.len();
            damage(&mut docs[i].value, pick, kind);
            touched.push(docs[i].origin.clone());
        }
        match read(name, &docs) {
            Ok(()) => {}
            Err(e) => {
                let text = e.to_string();
                // An error about an object names a file of the input; a whole-input one
                // (nothing to read, an invalid snapshot) need not.
                let named = docs.iter().any(|d| text.contains(&d.origin));
                let whole = matches!(e, ImportError::Incomplete(_) | ImportError::Build { .. });
                prop_assert!(named || whole, "{name}: {text}");
            }
        }
        if *name == "longhorn" {
            for d in &docs {
                let text = d.value.to_string();
                let fast = replica::import::read_json(&d.origin, &text).map(|c| c.cluster.to_json());
                let whole = replica::import::read(std::slice::from_ref(d)).map(|c| c.cluster.to_json());
                match (fast, whole) {
                    (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
                    (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
                    (a, b) => prop_assert!(false, "read_json {:?} but read {:?}", a.err(), b.err()),
                }
            }
        }
    }
}
