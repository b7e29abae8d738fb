//! A host's typed attributes, laid out for fast lookups: one sorted, contiguous table whose short
//! keys are stored inline, so a lookup touches a few neighbouring entries instead of chasing a
//! tree of separately allocated strings.

use serde_json::Value;
use std::fmt;

const INLINE: usize = 23;

/// An attribute name: inline when short (almost always), else on the heap.
#[derive(Clone, PartialEq, Eq)]
enum Key {
    Inline([u8; INLINE], u8),
    Heap(Box<str>),
}

impl Key {
    fn new(name: &str) -> Key {
        if name.len() <= INLINE {
            let mut bytes = [0u8; INLINE];
            bytes[..name.len()].copy_from_slice(name.as_bytes());
            Key::Inline(bytes, name.len() as u8)
        } else {
            Key::Heap(name.into())
        }
    }

    #[inline]
    fn as_str(&self) -> &str {
        match self {
            // The bytes were copied from a `&str` and cut at its length: always valid UTF-8.
            Key::Inline(bytes, len) => std::str::from_utf8(&bytes[..usize::from(*len)]).unwrap_or_default(),
            Key::Heap(s) => s,
        }
    }
}

/// The attributes of one host (JSON values by name), with the JSON text of string attributes
/// that hold an object or array decoded once.
#[derive(Clone, PartialEq)]
pub(crate) struct AttributeTable {
    entries: Box<[(Key, Value)]>,
    decoded: Box<[(usize, Value)]>,
}

impl fmt::Debug for AttributeTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl AttributeTable {
    /// Builds from `(name, value)` pairs; a later duplicate name wins.
    pub(crate) fn new<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a Value)>) -> Option<Box<AttributeTable>> {
        let mut entries: Vec<(Key, Value)> = pairs.into_iter().map(|(k, v)| (Key::new(k), v.clone())).collect();
        if entries.is_empty() {
            return None;
        }
        entries.reverse();
        entries.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
        entries.dedup_by(|later, earlier| later.0 == earlier.0);
        let decoded = entries
            .iter()
            .enumerate()
            .filter_map(|(i, (_, v))| match v {
                Value::String(s) if s.starts_with('{') || s.starts_with('[') => {
                    serde_json::from_str::<Value>(s).ok().map(|d| (i, d))
                }
                _ => None,
            })
            .collect();
        Some(Box::new(AttributeTable { entries: entries.into_boxed_slice(), decoded }))
    }

    #[inline]
    fn position(&self, name: &str) -> Option<usize> {
        self.entries.binary_search_by(|e| e.0.as_str().cmp(name)).ok()
    }

    /// The value of `name`. Computes in O(log attributes).
    #[inline]
    pub(crate) fn get(&self, name: &str) -> Option<&Value> {
        self.position(name).map(|i| &self.entries[i].1)
    }

    /// The decoded JSON text of string attribute `name`.
    pub(crate) fn decoded(&self, name: &str) -> Option<&Value> {
        let i = self.position(name)?;
        self.decoded.iter().find(|d| d.0 == i).map(|d| &d.1)
    }

    /// `(name, value)` in name order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &Value)> + '_ {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lookups_decoding_and_long_keys() {
        let long = "a_very_long_attribute_name_beyond_inline";
        let values = [json!(1), json!("{\"arch\": \"x86_64\"}"), json!(true), json!(2)];
        let pairs =
            [("num_io_ops", &values[0]), ("cpu_info", &values[1]), (long, &values[2]), ("num_io_ops", &values[3])];
        let t = AttributeTable::new(pairs).unwrap();
        assert_eq!(t.get("num_io_ops"), Some(&json!(2)), "the later duplicate wins");
        assert_eq!(t.get(long), Some(&json!(true)));
        assert_eq!(t.get("nope"), None);
        assert_eq!(t.decoded("cpu_info").unwrap()["arch"], "x86_64");
        assert_eq!(t.decoded("num_io_ops"), None);
        assert_eq!(t.iter().map(|e| e.0).collect::<Vec<_>>(), [long, "cpu_info", "num_io_ops"]);
        assert!(AttributeTable::new([]).is_none());
    }
}
