//! Checking the host attributes a domain engine reads.
//!
//! Engines read a few named attributes (`im_running`, `role` …) and fall back to a default when
//! one is absent or of another type, which is right for a host that does not report it and wrong
//! for a misspelt key or a quoted boolean. [`check_attributes`] reports both, once per snapshot
//! and never on the hot path. [`check_metadata`] does the same for the aggregate metadata keys
//! an engine reads (the filter scheduler's `cpu_allocation_ratio` …), whose values are text that
//! the engine parses.

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
    /// A JSON number.
    Number,
    /// A JSON array.
    Array,
    /// A JSON object.
    Object,
    /// Any JSON value.
    Any,
}

impl AttributeType {
    fn admits(self, value: &serde_json::Value) -> bool {
        match self {
            AttributeType::Bool => value.is_boolean(),
            AttributeType::String => value.is_string(),
            AttributeType::Number => value.is_number(),
            AttributeType::Array => value.is_array(),
            AttributeType::Object => value.is_object(),
            AttributeType::Any => true,
        }
    }
}

/// An attribute an engine reads: its name and the type it expects.
pub type AttributeKey = (&'static str, AttributeType);

/// An aggregate metadata key an engine reads.
#[derive(Debug, Clone, Copy)]
pub struct MetadataKey {
    /// The key.
    pub name: &'static str,
    /// Every key that starts with `name` is read too (`filter_tenant_id_2`).
    pub prefix: bool,
    /// Whether the engine can read a value (`None`: any text).
    pub parses: Option<fn(&str) -> bool>,
}

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
    /// An aggregate metadata key that differs from one the engine reads only by case, `-`/`_`,
    /// or at most two letters.
    MisspeltMetadata {
        /// The aggregate.
        aggregate: String,
        /// The key as written.
        key: String,
        /// The key the engine reads.
        known: &'static str,
    },
    /// An aggregate metadata value the engine cannot parse, and so reads as unset or invalid.
    UnreadableMetadata {
        /// The aggregate.
        aggregate: String,
        /// The key.
        key: String,
        /// The value as written.
        value: String,
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
            AttributeWarning::MisspeltMetadata { aggregate, key, known } => {
                write!(f, "aggregate `{aggregate}`: metadata key `{key}` is not read; did you mean `{known}`?")
            }
            AttributeWarning::UnreadableMetadata { aggregate, key, value } => {
                write!(f, "aggregate `{aggregate}`: metadata `{key}` = `{value}` does not parse")
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

/// The name in `known` that `key` (not itself known) probably meant.
fn misspelling_of(key: &str, known: impl IntoIterator<Item = &'static str>) -> Option<&'static str> {
    let f = folded(key);
    known.into_iter().find(|k| {
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
            } else if let Some(meant) = misspelling_of(key, known.iter().map(|k| k.0)) {
                out.push(AttributeWarning::Misspelt { host: host.name.to_string(), key: key.to_owned(), known: meant });
            }
        }
    }
    out
}

/// Every aggregate metadata key of `cluster` that looks like a misspelling of a key in `known`,
/// and every value of a key in `known` that its parser refuses, in aggregate order. Computes in
/// O(aggregates × metadata keys × known keys × key length²); call it once per snapshot.
pub fn check_metadata(cluster: &Cluster, known: &[MetadataKey]) -> Vec<AttributeWarning> {
    let mut out = Vec::new();
    for aggregate in cluster.aggregates() {
        for (key, value) in &aggregate.metadata {
            let reads = |k: &&MetadataKey| k.name == key || (k.prefix && key.starts_with(k.name));
            if let Some(known_key) = known.iter().find(reads) {
                if known_key.parses.is_some_and(|parses| !parses(value)) {
                    out.push(AttributeWarning::UnreadableMetadata {
                        aggregate: aggregate.name.to_string(),
                        key: key.clone(),
                        value: value.clone(),
                    });
                }
            } else if let Some(meant) = misspelling_of(key, known.iter().map(|k| k.name)) {
                out.push(AttributeWarning::MisspeltMetadata {
                    aggregate: aggregate.name.to_string(),
                    key: key.clone(),
                    known: meant,
                });
            }
        }
    }
    out
}

/// Tests for an engine's list of attribute keys: for every key, a host holding it misspelt (in
/// case and separators, and for longer keys with a letter dropped) and one holding it with a
/// value of another type must each be reported, naming the host and the key.
#[cfg(test)]
pub(crate) fn assert_every_key_is_checked(
    known: &[AttributeKey],
    warnings: impl Fn(&Cluster) -> Vec<AttributeWarning>,
) {
    use crate::snapshot::HostSpec;
    use serde_json::json;
    for &(key, expected) in known {
        let shouted = key.to_uppercase().replace('_', "-");
        let mut misspelt = vec![shouted];
        if key.chars().count() >= 5 {
            misspelt.push(key[..key.len() - 1].to_owned());
        }
        for (i, wrong) in misspelt.iter().enumerate() {
            let cluster = Cluster::builder()
                .host(HostSpec::new(format!("h{i}")).attribute(wrong.clone(), json!(1)))
                .build()
                .unwrap();
            let found = warnings(&cluster);
            assert!(
                found.iter().any(|w| matches!(w, AttributeWarning::Misspelt { host, key: k, known } if host == &format!("h{i}") && k == wrong && *known == key)),
                "`{wrong}` is not reported as a misspelling of `{key}`: {found:?}"
            );
        }
        let other = match expected {
            AttributeType::Any => continue,
            AttributeType::String => json!(7),
            _ => json!("7"),
        };
        let cluster = Cluster::builder().host(HostSpec::new("typed").attribute(key, other)).build().unwrap();
        let found = warnings(&cluster);
        assert!(
            found.contains(&AttributeWarning::WrongType { host: "typed".into(), key, expected }),
            "`{key}` of the wrong type is not reported: {found:?}"
        );
    }
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
