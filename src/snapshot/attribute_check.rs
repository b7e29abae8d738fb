//! Checking the host attributes a domain engine reads.
//!
//! Engines read a few named attributes (`im_running`, `role` …) and fall back to a default when
//! one is absent or of another type, which is right for a host that does not report it and wrong
//! for a misspelt key or a quoted boolean. [`check_attributes`] reports both, once per snapshot
//! and never on the hot path.

use super::Cluster;
use std::fmt;

/// The JSON type an engine expects of an attribute it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AttributeType {
    /// `true` or `false`.
    Bool,
    /// A JSON string.
    String,
    /// Any JSON value.
    Any,
}

impl AttributeType {
    fn admits(self, value: &serde_json::Value) -> bool {
        match self {
            AttributeType::Bool => value.is_boolean(),
            AttributeType::String => value.is_string(),
            AttributeType::Any => true,
        }
    }
}

/// An attribute an engine reads: its name and the type it expects.
pub type AttributeKey = (&'static str, AttributeType);

/// A host attribute that an engine would read as its default although the host meant to set it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AttributeWarning {
    /// A key that differs from one the engine reads only by case, `-`/`_`, or at most two
    /// letters: probably misspelt.
    Misspelt {
        /// The host.
        host: String,
        /// The key as written.
        key: String,
        /// The key the engine reads.
        known: &'static str,
    },
    /// A key the engine reads, holding a value of another type.
    WrongType {
        /// The host.
        host: String,
        /// The key.
        key: &'static str,
        /// The type the engine reads.
        expected: AttributeType,
    },
}

impl fmt::Display for AttributeWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttributeWarning::Misspelt { host, key, known } => {
                write!(f, "host `{host}`: attribute `{key}` is not read; did you mean `{known}`?")
            }
            AttributeWarning::WrongType { host, key, expected } => {
                write!(f, "host `{host}`: attribute `{key}` is not of type {expected:?} and reads as its default")
            }
        }
    }
}

/// Folds case and drops `-` and `_`, so `Engine-Image_Ready` and `engineimageready` compare equal.
fn folded(s: &str) -> String {
    s.chars().filter(|c| *c != '-' && *c != '_').flat_map(char::to_lowercase).collect()
}

/// Levenshtein distance, stopping early once every path exceeds `limit`.
fn within(a: &str, b: &str, limit: usize) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().abs_diff(b.len()) > limit {
        return false;
    }
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut row = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = prev[j] + usize::from(ca != cb);
            row[j + 1] = substitute.min(prev[j + 1] + 1).min(row[j] + 1);
        }
        if row.iter().all(|&d| d > limit) {
            return false;
        }
        std::mem::swap(&mut prev, &mut row);
    }
    prev[b.len()] <= limit
}

/// The known key that `key` probably meant, if `key` is not known itself.
fn misspelling_of(key: &str, known: &[AttributeKey]) -> Option<&'static str> {
    if known.iter().any(|k| k.0 == key) {
        return None;
    }
    let f = folded(key);
    known.iter().map(|k| k.0).find(|k| {
        let g = folded(k);
        // Short names differ from each other by two letters already (`os`, `ip`).
        f == g || (g.chars().count() >= 5 && within(&f, &g, 2))
    })
}

/// Every host attribute of `cluster` that looks like a misspelling of a key in `known`, and
/// every key of `known` holding a value of another type, in host order. Computes in
/// O(hosts × attributes × known keys × key length²); call it once per snapshot.
pub fn check_attributes(cluster: &Cluster, known: &[AttributeKey]) -> Vec<AttributeWarning> {
    let mut out = Vec::new();
    for (_, host) in cluster.hosts() {
        for (key, value) in host.attributes() {
            if let Some(known_key) = known.iter().find(|k| k.0 == key) {
                if !known_key.1.admits(value) {
                    out.push(AttributeWarning::WrongType {
                        host: host.name.to_string(),
                        key: known_key.0,
                        expected: known_key.1,
                    });
                }
            } else if let Some(meant) = misspelling_of(key, known) {
                out.push(AttributeWarning::Misspelt { host: host.name.to_string(), key: key.to_owned(), known: meant });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::HostSpec;
    use serde_json::json;

    const KNOWN: &[AttributeKey] = &[("engine_image_ready", AttributeType::Bool), ("role", AttributeType::String)];

    #[test]
    fn misspelt_and_wrongly_typed_keys_are_reported_and_the_rest_is_not() {
        let cluster = Cluster::builder()
            .host(HostSpec::new("a").attribute("engine_image_redy", json!(false)).attribute("role", json!("worker")))
            .host(HostSpec::new("b").attribute("Engine-Image-Ready", json!(true)).attribute("num_io_ops", json!(3)))
            .host(HostSpec::new("c").attribute("engine_image_ready", json!("false")).attribute("rol", json!("x")))
            .build()
            .unwrap();
        let warnings = check_attributes(&cluster, KNOWN);
        assert_eq!(
            warnings,
            [
                AttributeWarning::Misspelt {
                    host: "a".into(),
                    key: "engine_image_redy".into(),
                    known: "engine_image_ready"
                },
                AttributeWarning::Misspelt {
                    host: "b".into(),
                    key: "Engine-Image-Ready".into(),
                    known: "engine_image_ready"
                },
                AttributeWarning::WrongType {
                    host: "c".into(),
                    key: "engine_image_ready",
                    expected: AttributeType::Bool
                },
            ]
        );
        assert!(warnings[0].to_string().contains("did you mean `engine_image_ready`"));
    }

    #[test]
    fn distance_is_bounded() {
        assert!(within("kitten", "sitting", 3));
        assert!(!within("kitten", "sitting", 2));
        assert!(within("abc", "abc", 0));
    }
}
