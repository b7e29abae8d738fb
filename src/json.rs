//! Reading JSON in the documented form only.
//!
//! serde's derived `Deserialize` for a struct also accepts a JSON array of the field values in
//! declaration order (`["h1", {}, …]` for a host). That form is undocumented, unreadable and
//! silently breaks when a field is added, so it is refused on both paths:
//!
//! - **The types themselves.** Every struct the crate reads from JSON derives `Deserialize` with
//!   `#[serde(remote = "Self")]`, which makes the derived code an inherent
//!   `deserialize` function instead of the trait impl, and names itself in
//!   [`object_form!`]: the trait impl that macro writes asks the deserializer for a map
//!   (`deserialize_map`), so an array is a type error ("invalid type: sequence, expected struct
//!   HostSpec"), and hands the map to the derived code. Field handling, defaults, unknown-field
//!   and missing-field messages are serde's own. `serde_json::from_str::<ClusterSpec>("[]")` and
//!   every other generic path therefore refuse arrays.
//! - **The `from_json` functions** ([`read`]) also name where the array stands
//!   ([`BuildError::NotAnObject`] with its path). When the strict read fails they read again
//!   with the sequence form let through to the derived code ([`let_through`] sets a per-thread
//!   flag for the duration of that read); if that succeeds, they serialise the value back and
//!   walk the input beside it, and report the first array where the value's own form is an
//!   object. The walk also runs after a successful read, for an enum's struct variant, which
//!   serde reads through its derived code only. This costs one extra parse and one
//!   serialisation per call, at the edge only.
//!
//! (Called as an inherent function, `HostSpec::deserialize(d)` is serde's derived code and
//! takes the sequence form; the trait, `<HostSpec as Deserialize>::deserialize`, which every
//! generic caller uses, refuses it. A format that writes structs as sequences, such as bincode,
//! cannot read these types back; the crate reads and writes JSON only.)

use crate::error::BuildError;
use serde::de::value::MapAccessDeserializer;
use serde::de::{DeserializeOwned, MapAccess, Visitor};
use serde::{Deserializer, Serialize};
use serde_json::Value;
use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;

thread_local! {
    /// Set while [`let_through`] runs: [`object_only`] then lets the sequence form through to the
    /// derived code, so that [`read`] can name the array's path.
    static SEQUENCE_FORM_LET_THROUGH: Cell<bool> = const { Cell::new(false) };
}

/// Resets [`SEQUENCE_FORM_LET_THROUGH`] to what it was, also when unwinding.
struct Restore(bool);

impl Drop for Restore {
    fn drop(&mut self) {
        SEQUENCE_FORM_LET_THROUGH.with(|f| f.set(self.0));
    }
}

/// Runs `read` with the sequence form let through to the derived code on this thread.
fn let_through<R>(read: impl FnOnce() -> R) -> R {
    let _restore = Restore(SEQUENCE_FORM_LET_THROUGH.with(|f| f.replace(true)));
    read()
}

/// A type whose derived `Deserialize` is generated as an inherent function
/// (`#[serde(remote = "Self")]`); implemented by [`object_form!`].
pub(crate) trait Derived: Sized {
    /// What the type is, for "expected …" in serde's messages (`struct HostSpec`).
    const EXPECTING: &'static str;

    /// The derived code: reads the object form and the sequence form.
    fn derived<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error>;
}

/// Reads a `T` in its object form only: an array is serde's invalid-type error.
pub(crate) fn object_only<'de, T: Derived, D: Deserializer<'de>>(deserializer: D) -> Result<T, D::Error> {
    if SEQUENCE_FORM_LET_THROUGH.with(Cell::get) {
        return T::derived(deserializer);
    }
    deserializer.deserialize_map(ObjectVisitor(PhantomData))
}

/// Accepts a map only and hands it to the derived code.
struct ObjectVisitor<T>(PhantomData<T>);

impl<'de, T: Derived> Visitor<'de> for ObjectVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(T::EXPECTING)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::derived(MapAccessDeserializer::new(map))
    }
}

/// Writes `Deserialize` (object form only, through [`object_only`]) and `Serialize` for types
/// that derive both with `#[serde(remote = "Self")]`: `object_form!(HostSpec, DiskSpec)`;
/// `object_form!(ClusterEvent as "internally tagged enum ClusterEvent")` names the expected
/// form; `object_form!(deserialize_only ResourceSpecFull)` for a type that derives only
/// `Deserialize`.
macro_rules! object_form {
    ($($t:ident),+ $(,)?) => {
        $($crate::json::object_form!($t as concat!("struct ", stringify!($t)));)+
    };
    ($t:ident as $expecting:expr) => {
        $crate::json::object_form!(deserialize_only $t as $expecting);
        impl ::serde::Serialize for $t {
            fn serialize<S: ::serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                // The inherent function serde derived under `remote = "Self"`.
                $t::serialize(self, serializer)
            }
        }
    };
    (deserialize_only $t:ident) => {
        $crate::json::object_form!(deserialize_only $t as concat!("struct ", stringify!($t)));
    };
    (deserialize_only $t:ident as $expecting:expr) => {
        impl $crate::json::Derived for $t {
            const EXPECTING: &'static str = $expecting;

            fn derived<'de, D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                // The inherent function serde derived under `remote = "Self"`.
                $t::deserialize(deserializer)
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $t {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                $crate::json::object_only(deserializer)
            }
        }
    };
}
pub(crate) use object_form;

/// Reads a `T` from `json`, refusing the sequence form of any struct inside it with its path.
pub(crate) fn from_str<T: DeserializeOwned + Serialize>(json: &str) -> Result<T, BuildError> {
    read(json).map_err(|refused| match refused {
        Refused::Json(e) => BuildError::from_json(e),
        Refused::Array(path) => BuildError::NotAnObject { path },
    })
}

/// Why [`read`] refused a text.
#[derive(Debug)]
pub(crate) enum Refused {
    /// Malformed, or not of the type (serde's message, with the position).
    Json(serde_json::Error),
    /// An array stands where the documented form is an object: its path (`$.hosts[0]`).
    Array(String),
}

/// Reads a `T` from `json`. When that fails, reads it again with the sequence form let
/// through; if that succeeds, the failure was an array where an object belongs, and its path
/// is reported. Either way the value is compared with the input, for types whose nested parts
/// do not refuse the sequence form themselves (an enum's struct variant).
pub(crate) fn read<T: DeserializeOwned + Serialize>(json: &str) -> Result<T, Refused> {
    let (value, strict) = match serde_json::from_str::<T>(json) {
        Ok(value) => (value, None),
        Err(strict) => match let_through(|| serde_json::from_str::<T>(json)) {
            Ok(value) => (value, Some(strict)),
            Err(_) => return Err(Refused::Json(strict)),
        },
    };
    let input: Value = serde_json::from_str(json).map_err(Refused::Json)?;
    // Types read from JSON serialise back to JSON: strings, numbers, maps and lists.
    if let Ok(shape) = serde_json::to_value(&value) {
        if let Some(path) = array_for_object(&input, &shape) {
            return Err(Refused::Array(path));
        }
    }
    match strict {
        Some(e) => Err(Refused::Json(e)),
        None => Ok(value),
    }
}

/// The path of the first array in `input` whose counterpart in `shape` is an object.
fn array_for_object(input: &Value, shape: &Value) -> Option<String> {
    let mut stack = vec![(input, shape, String::from("$"))];
    while let Some((i, s, path)) = stack.pop() {
        match (i, s) {
            (Value::Array(_), Value::Object(_)) => return Some(path),
            (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
                stack.extend(a.iter().zip(b).enumerate().map(|(n, (x, y))| (x, y, format!("{path}[{n}]"))));
            }
            (Value::Object(a), Value::Object(b)) => {
                for (key, x) in a {
                    // A key read under a serde alias (Longhorn's `numberOfReplicas` for
                    // `number_of_replicas`) is written back under the field's name.
                    let aliased = || b.iter().find(|(name, _)| same_field(name, key)).map(|(_, y)| y);
                    if let Some(y) = b.get(key).or_else(aliased) {
                        stack.push((x, y, format!("{path}.{key}")));
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether two keys name one field in different cases: `number_of_replicas`,
/// `numberOfReplicas` and `number-of-replicas` do, as do `node_id` and `nodeID`.
fn same_field(a: &str, b: &str) -> bool {
    let letters =
        |s: &str| s.chars().filter(|c| *c != '_' && *c != '-').map(|c| c.to_ascii_lowercase()).collect::<Vec<_>>();
    letters(a) == letters(b)
}

/// A JSON object kept as `(key, value)` pairs in the order it was written, for a field
/// declared `#[serde(with = "crate::json::ordered")]` of type `Vec<(String, V)>`.
///
/// Nova reads a flavor's extra specs with Python's `json`, whose dicts keep their keys in the
/// order written, and checks them in that order. A key written twice keeps its first place and
/// its last value, as a Python dict built from the pairs does. Written back, the pairs form an
/// object in the same order.
pub(crate) mod ordered {
    use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
    use serde::{Serialize, Serializer};
    use std::collections::HashMap;
    use std::fmt;
    use std::marker::PhantomData;

    /// Writes the pairs as a JSON object, in order.
    pub(crate) fn serialize<S: Serializer, V: Serialize>(
        pairs: &[(String, V)],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.collect_map(pairs.iter().map(|(k, v)| (k, v)))
    }

    /// Reads a JSON object into pairs, in order, a repeated key merged as [`dedup`] does.
    pub(crate) fn deserialize<'de, D, V>(deserializer: D) -> Result<Vec<(String, V)>, D::Error>
    where
        D: Deserializer<'de>,
        V: Deserialize<'de>,
    {
        deserializer.deserialize_map(Pairs(PhantomData))
    }

    /// Merges repeated keys the way a Python dict does when it is built from the pairs in order:
    /// a key keeps the place where it first stood and takes the value it was last given.
    pub(crate) fn dedup<V>(pairs: Vec<(String, V)>) -> Vec<(String, V)> {
        let mut merged: Vec<(String, V)> = Vec::with_capacity(pairs.len());
        let mut place: HashMap<String, usize> = HashMap::with_capacity(pairs.len());
        for (key, value) in pairs {
            match place.get(&key) {
                Some(&at) => merged[at].1 = value,
                None => {
                    place.insert(key.clone(), merged.len());
                    merged.push((key, value));
                }
            }
        }
        merged
    }

    /// Reads a map into pairs.
    struct Pairs<V>(PhantomData<V>);

    impl<'de, V: Deserialize<'de>> Visitor<'de> for Pairs<V> {
        type Value = Vec<(String, V)>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a map")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            // The hint comes from the input: trust it only so far.
            let mut pairs = Vec::with_capacity(map.size_hint().unwrap_or(0).min(1024));
            while let Some(pair) = map.next_entry::<String, V>()? {
                pairs.push(pair);
            }
            Ok(dedup(pairs))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(remote = "Self", deny_unknown_fields)]
    struct Inner {
        a: u32,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(remote = "Self")]
    struct Outer {
        name: String,
        inner: Vec<Inner>,
    }

    object_form!(Inner, Outer);

    /// Reads through serde's trait, the way every generic caller does.
    fn serde_reads<T: DeserializeOwned>(json: &str) -> Result<T, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn serde_itself_refuses_the_sequence_form_at_any_depth() {
        let top = serde_reads::<Outer>(r#"["x", []]"#).unwrap_err();
        assert!(top.starts_with("invalid type: sequence, expected struct Outer"), "{top}");
        let nested = serde_reads::<Outer>(r#"{"name": "x", "inner": [[1]]}"#).unwrap_err();
        assert!(nested.starts_with("invalid type: sequence, expected struct Inner"), "{nested}");
        let value = serde_json::from_value::<Outer>(serde_json::json!(["x", []])).unwrap_err();
        assert!(value.to_string().contains("expected struct Outer"), "{value}");
        // serde's own messages for the object form stay.
        let unknown = serde_reads::<Inner>(r#"{"a": 1, "b": 2}"#).unwrap_err();
        assert!(unknown.starts_with("unknown field `b`, expected `a`"), "{unknown}");
        assert!(serde_reads::<Inner>("{}").unwrap_err().starts_with("missing field `a`"));
        let good = serde_reads::<Outer>(r#"{"name": "x", "inner": [{"a": 1}]}"#).unwrap();
        assert_eq!(serde_json::to_string(&good).unwrap(), r#"{"name":"x","inner":[{"a":1}]}"#);
    }

    #[test]
    fn from_str_lets_the_sequence_form_through_only_for_its_own_call() {
        assert_eq!(from_str::<Outer>(r#"["x", []]"#).unwrap_err(), BuildError::NotAnObject { path: "$".into() });
        assert!(from_str::<Outer>("{").is_err());
        assert!(!SEQUENCE_FORM_LET_THROUGH.with(Cell::get));
        assert!(serde_reads::<Outer>(r#"["x", []]"#).is_err());
    }

    #[test]
    fn the_object_form_reads() {
        let v: Outer = from_str(r#"{"name": "x", "inner": [{"a": 1}]}"#).unwrap();
        assert_eq!(v, Outer { name: "x".into(), inner: vec![Inner { a: 1 }] });
    }

    #[test]
    fn a_struct_written_as_an_array_is_refused_with_its_path() {
        assert_eq!(from_str::<Outer>(r#"["x", []]"#).unwrap_err(), BuildError::NotAnObject { path: "$".into() });
        let nested = from_str::<Outer>(r#"{"name": "x", "inner": [{"a": 1}, [2]]}"#).unwrap_err();
        assert_eq!(nested, BuildError::NotAnObject { path: "$.inner[1]".into() });
    }

    #[test]
    fn an_array_the_derived_code_cannot_read_either_keeps_the_strict_message() {
        let short = from_str::<Outer>(r#"{"name": "x", "inner": [[]]}"#).unwrap_err();
        assert!(short.to_string().contains("invalid type: sequence, expected struct Inner"), "{short}");
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(remote = "Self")]
    struct Aliased {
        #[serde(alias = "innerList")]
        inner_list: Vec<Inner>,
    }

    object_form!(Aliased);

    #[test]
    fn an_array_under_a_fields_alias_is_refused_with_the_path_as_written() {
        let err = from_str::<Aliased>(r#"{"innerList": [{"a": 1}, [2]]}"#).unwrap_err();
        assert_eq!(err, BuildError::NotAnObject { path: "$.innerList[1]".into() });
        assert!(same_field("node_id", "nodeID") && !same_field("node_id", "node"));
    }

    #[test]
    fn malformed_text_keeps_its_line_and_column() {
        assert!(matches!(from_str::<Outer>("{\n  \"name\": }"), Err(BuildError::Json { line: 2, .. })));
    }
}
