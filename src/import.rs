//! What the importers of real systems' objects share: documents in, typed errors and warnings
//! out, and a reader of one object's fields that names the file, the object and the field.
//!
//! Each engine that copies a real system reads that system's objects
//! ([`replica::import`](crate::replica::import) Longhorn's custom resources,
//! [`spread::import`](crate::spread::import) Docker Swarm's inspect output,
//! [`nova::import`](crate::nova::import) the OpenStack APIs' JSON). They all take
//! [`Document`]s: a parsed JSON value and the name of the file it came from. Parsing YAML is
//! the caller's business (the command-line crate does it), so this crate reads JSON only.
//!
//! ```
//! use placewise::import::{Document, Object};
//!
//! let doc = Document::from_json("nodes.json", r#"{"kind": "Node", "metadata": {"name": "n1"},
//!     "spec": {"allowScheduling": "yes"}}"#).unwrap();
//! let node = Object::new(&doc.origin, "Node", "n1", &doc.value);
//! let err = node.bool("spec.allowScheduling").unwrap_err();
//! assert_eq!(err.to_string(),
//!     "nodes.json: Node n1: field `spec.allowScheduling`: expected a boolean, found \"yes\"");
//! ```

use crate::error::{BuildError, ErrorSource};
use serde_json::Value;
use std::fmt;

/// One parsed input document and where it came from.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Document {
    /// The file (or other source) it was read from, as the user named it; errors quote it.
    pub origin: String,
    /// The parsed value.
    pub value: Value,
}

impl Document {
    /// A document from a value parsed elsewhere (from YAML, say).
    pub fn new(origin: impl Into<String>, value: Value) -> Self {
        Document { origin: origin.into(), value }
    }

    /// Parses JSON text; a syntax error names `origin`, the line and the column.
    pub fn from_json(origin: impl Into<String>, text: &str) -> Result<Self, ImportError> {
        let origin = origin.into();
        match serde_json::from_str(text) {
            Ok(value) => Ok(Document { origin, value }),
            Err(e) => Err(ImportError::Parse { origin, source: ErrorSource::new(e) }),
        }
    }

    /// [`from_json`](Document::from_json) leaving out the members an importer never reads
    /// ([`Unread`]: bookkeeping such as `uid`, `resourceVersion`, condition timestamps). Those
    /// values are checked as JSON but not kept, which saves much of the cost of parsing a
    /// large dump into a [`Value`]. The result is the whole document without those members; an
    /// importer that gives the same answer on both is pinned by its tests.
    pub fn from_json_dropping(origin: impl Into<String>, text: &str, unread: &Unread<'_>) -> Result<Self, ImportError> {
        let origin = origin.into();
        let mut de = serde_json::Deserializer::from_str(text);
        let seed = Dropping { unread, extra: &[] };
        let parsed = serde::de::DeserializeSeed::deserialize(seed, &mut de).and_then(|v| {
            de.end()?;
            Ok(v)
        });
        match parsed {
            Ok(value) => Ok(Document { origin, value }),
            Err(e) => Err(ImportError::Parse { origin, source: ErrorSource::new(e) }),
        }
    }
}

/// The members of a document an importer never reads, by key
/// ([`Document::from_json_dropping`]).
#[derive(Debug, Clone, Copy)]
pub struct Unread<'k> {
    /// Keys left out at any depth.
    pub anywhere: &'k [&'k str],
    /// Keys left out at any depth below a member of the given key (the innermost such member
    /// decides): `("diskStatus", &["message"])` drops a disk condition's message and keeps a
    /// volume's.
    pub below: &'k [(&'k str, &'k [&'k str])],
}

/// A [`Value`] read without the [`Unread`] members.
#[derive(Clone, Copy)]
struct Dropping<'k> {
    unread: &'k Unread<'k>,
    /// The keys dropped below the innermost member named in [`Unread::below`].
    extra: &'k [&'k str],
}

impl<'k> Dropping<'k> {
    #[inline]
    fn drops(&self, key: &str) -> bool {
        self.unread.anywhere.contains(&key) || self.extra.contains(&key)
    }

    /// The seed for the value of member `key`.
    #[inline]
    fn below(self, key: &str) -> Self {
        match self.unread.below.iter().find(|(k, _)| *k == key) {
            Some((_, keys)) => Dropping { extra: keys, ..self },
            None => self,
        }
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Dropping<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

/// A map key, borrowed from the input when it holds no escape.
struct Key<'de>(std::borrow::Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> serde::de::Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(std::borrow::Cow::Owned(v.to_owned())))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

impl<'de> serde::de::Visitor<'de> for Dropping<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(v) = seq.next_element_seed(self)? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            if self.drops(&key) {
                map.next_value::<serde::de::IgnoredAny>()?;
            } else {
                let v = map.next_value_seed(self.below(&key))?;
                out.insert(key.into_owned(), v);
            }
        }
        Ok(Value::Object(out))
    }
}

/// Names one object of the input: its kind and its name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub struct ObjectRef {
    /// The kind (`Node`, `Volume`, `resource_provider`, `flavor` …).
    pub kind: String,
    /// The name or id the object goes by.
    pub name: String,
}

impl ObjectRef {
    /// An object reference.
    pub fn new(kind: impl Into<String>, name: impl Into<String>) -> Self {
        ObjectRef { kind: kind.into(), name: name.into() }
    }
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.kind, self.name)
    }
}

/// Something the importer read but did not use as written: a value it does not model, a
/// setting it fell back on, an object it skipped. The import still succeeded.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportWarning {
    /// The file.
    pub origin: String,
    /// The object, when the warning is about one.
    pub object: Option<ObjectRef>,
    /// The field, as a dotted path (empty when the warning is about the whole object).
    pub field: String,
    /// What was done instead, in a sentence.
    pub message: String,
}

impl fmt::Display for ImportWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.origin)?;
        if let Some(object) = &self.object {
            write!(f, ": {object}")?;
        }
        if !self.field.is_empty() {
            write!(f, ": field `{}`", self.field)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Why an import failed. Every variant names the file; those about one object name it and the
/// field.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// The text is not valid JSON.
    #[error("{origin}: not valid JSON: {source}")]
    Parse {
        /// The file.
        origin: String,
        /// The parser's error, with line and column.
        #[source]
        source: ErrorSource,
    },
    /// A field placement needs is not there.
    #[error("{origin}: {object}: missing field `{field}`")]
    Missing {
        /// The file.
        origin: String,
        /// The object (boxed: it keeps the error small enough to return unboxed).
        object: Box<ObjectRef>,
        /// The field, as a dotted path.
        field: String,
    },
    /// A field holds a value that cannot be read (a wrong type, a quantity that does not
    /// parse, a value outside its range).
    #[error("{origin}: {object}: field `{field}`: {reason}")]
    Invalid {
        /// The file.
        origin: String,
        /// The object (boxed: it keeps the error small enough to return unboxed).
        object: Box<ObjectRef>,
        /// The field, as a dotted path.
        field: String,
        /// What is wrong, with the value found.
        reason: String,
    },
    /// A document or object of a kind the importer does not read.
    #[error("{origin}: unknown kind `{kind}`{}", expected_list(.expected))]
    UnknownKind {
        /// The file.
        origin: String,
        /// The kind found (`apiVersion/kind`, or a description of the shape).
        kind: String,
        /// The kinds this importer reads.
        expected: Vec<String>,
    },
    /// A reference to an object that is not in the input (a replica's node or disk).
    #[error("{origin}: {object}: field `{field}` names {target}, which is not in the input")]
    Dangling {
        /// The file.
        origin: String,
        /// The object holding the reference.
        object: Box<ObjectRef>,
        /// The field, as a dotted path.
        field: String,
        /// What it names (`node n9`, `disk 0f1e… on node n2`).
        target: String,
    },
    /// Two objects of one kind share a name.
    #[error("{origin}: {object} is given twice (first in {first})")]
    Duplicate {
        /// The file of the second one.
        origin: String,
        /// The object (boxed: it keeps the error small enough to return unboxed).
        object: Box<ObjectRef>,
        /// The file of the first one.
        first: String,
    },
    /// The input holds nothing this importer reads, or lacks a kind it cannot do without.
    #[error("{0}")]
    Incomplete(String),
    /// The objects were read, but the snapshot they describe is not valid.
    #[error("the imported cluster is not valid: {source}")]
    Build {
        /// The snapshot builder's error.
        #[source]
        source: BuildError,
    },
}

fn expected_list(expected: &[String]) -> String {
    if expected.is_empty() {
        String::new()
    } else {
        format!(" (expected one of: {})", expected.join(", "))
    }
}

impl From<BuildError> for ImportError {
    fn from(source: BuildError) -> Self {
        ImportError::Build { source }
    }
}

/// One object of the input, with the file and the name errors quote. Field paths are dotted
/// (`status.diskStatus`); a key that itself holds dots is reached through [`Object::value`] and
/// [`Object::child`].
#[derive(Debug, Clone, Copy)]
pub struct Object<'a> {
    origin: &'a str,
    kind: &'a str,
    name: &'a str,
    value: &'a Value,
    prefix: &'a str,
}

impl<'a> Object<'a> {
    /// The object `value`, of `kind` and `name`, read from `origin`.
    pub fn new(origin: &'a str, kind: &'a str, name: &'a str, value: &'a Value) -> Self {
        Object { origin, kind, name, value, prefix: "" }
    }

    /// The same object seen at `value`, a part of it found at `path`: errors name the field as
    /// `path.field`. `path` must live as long as the object (a literal, or a key of the input).
    pub fn child(&self, path: &'a str, value: &'a Value) -> Self {
        Object { prefix: path, value, ..*self }
    }

    /// The value this object reads fields of.
    pub fn value(&self) -> &'a Value {
        self.value
    }

    /// The file.
    pub fn origin(&self) -> &'a str {
        self.origin
    }

    /// The object's kind and name.
    pub fn object_ref(&self) -> ObjectRef {
        ObjectRef::new(self.kind, self.name)
    }

    fn full(&self, path: &str) -> String {
        if self.prefix.is_empty() {
            path.to_owned()
        } else if path.is_empty() {
            self.prefix.to_owned()
        } else {
            format!("{}.{path}", self.prefix)
        }
    }

    /// The value at a dotted `path`; `None` when a step is missing or is `null`.
    pub fn get(&self, path: &str) -> Option<&'a Value> {
        let mut at = self.value;
        let mut rest = path;
        // Step by step without `split`, whose searcher costs more than the lookups on a
        // large dump.
        while !rest.is_empty() {
            let (step, next) = match rest.as_bytes().iter().position(|&b| b == b'.') {
                Some(i) => (&rest[..i], &rest[i + 1..]),
                None => (rest, ""),
            };
            at = at.as_object()?.get(step)?;
            rest = next;
        }
        (!at.is_null()).then_some(at)
    }

    /// [`ImportError::Missing`] for `path`.
    pub fn missing(&self, path: &str) -> ImportError {
        ImportError::Missing {
            origin: self.origin.to_owned(),
            object: self.object_ref().into(),
            field: self.full(path),
        }
    }

    /// [`ImportError::Invalid`] for `path`, with `reason`.
    pub fn invalid(&self, path: &str, reason: impl Into<String>) -> ImportError {
        ImportError::Invalid {
            origin: self.origin.to_owned(),
            object: self.object_ref().into(),
            field: self.full(path),
            reason: reason.into(),
        }
    }

    /// [`ImportError::Dangling`] for `path`, naming `target`.
    pub fn dangling(&self, path: &str, target: impl Into<String>) -> ImportError {
        ImportError::Dangling {
            origin: self.origin.to_owned(),
            object: self.object_ref().into(),
            field: self.full(path),
            target: target.into(),
        }
    }

    /// An [`ImportWarning`] about `path` (empty: about the whole object).
    pub fn warning(&self, path: &str, message: impl Into<String>) -> ImportWarning {
        ImportWarning {
            origin: self.origin.to_owned(),
            object: Some(self.object_ref()),
            field: self.full(path),
            message: message.into(),
        }
    }

    /// The value at `path`, which must be there.
    pub fn require(&self, path: &str) -> Result<&'a Value, ImportError> {
        self.get(path).ok_or_else(|| self.missing(path))
    }

    fn typed<T>(
        &self,
        path: &str,
        expected: &str,
        read: impl FnOnce(&'a Value) -> Option<T>,
    ) -> Result<Option<T>, ImportError> {
        match self.get(path) {
            None => Ok(None),
            Some(v) => match read(v) {
                Some(t) => Ok(Some(t)),
                None => Err(self.invalid(path, format!("expected {expected}, found {}", shown(v)))),
            },
        }
    }

    /// The string at `path`, if there.
    pub fn opt_str(&self, path: &str) -> Result<Option<&'a str>, ImportError> {
        self.typed(path, "a string", Value::as_str)
    }

    /// The string at `path`, which must be there.
    pub fn str(&self, path: &str) -> Result<&'a str, ImportError> {
        self.opt_str(path)?.ok_or_else(|| self.missing(path))
    }

    /// The boolean at `path`, if there.
    pub fn opt_bool(&self, path: &str) -> Result<Option<bool>, ImportError> {
        self.typed(path, "a boolean", Value::as_bool)
    }

    /// The boolean at `path`, which must be there.
    pub fn bool(&self, path: &str) -> Result<bool, ImportError> {
        self.opt_bool(path)?.ok_or_else(|| self.missing(path))
    }

    /// The whole number at `path`, if there: a JSON integer, or a string holding one when
    /// `string_too` (Kubernetes writes int64 fields such as a volume's size as strings).
    pub fn opt_i64(&self, path: &str, string_too: bool) -> Result<Option<i64>, ImportError> {
        let expected = if string_too { "a whole number (or a string holding one)" } else { "a whole number" };
        self.typed(path, expected, |v| match v {
            Value::Number(n) => n.as_i64(),
            Value::String(s) if string_too => s.trim().parse().ok(),
            _ => None,
        })
    }

    /// The whole number at `path`, which must be there (see [`Object::opt_i64`]).
    pub fn i64(&self, path: &str, string_too: bool) -> Result<i64, ImportError> {
        self.opt_i64(path, string_too)?.ok_or_else(|| self.missing(path))
    }

    /// The finite number at `path`, if there (a JSON number, or a string holding one when
    /// `string_too`).
    pub fn opt_f64(&self, path: &str, string_too: bool) -> Result<Option<f64>, ImportError> {
        let expected = if string_too { "a number (or a string holding one)" } else { "a number" };
        self.typed(path, expected, |v| {
            match v {
                Value::Number(n) => n.as_f64(),
                Value::String(s) if string_too => s.trim().parse().ok(),
                _ => None,
            }
            .filter(|x: &f64| x.is_finite())
        })
    }

    /// The finite number at `path`, which must be there (see [`Object::opt_f64`]).
    pub fn f64(&self, path: &str, string_too: bool) -> Result<f64, ImportError> {
        self.opt_f64(path, string_too)?.ok_or_else(|| self.missing(path))
    }

    /// The object (JSON map) at `path`, if there.
    pub fn opt_map(&self, path: &str) -> Result<Option<&'a serde_json::Map<String, Value>>, ImportError> {
        self.typed(path, "an object", Value::as_object)
    }

    /// The array at `path`, if there.
    pub fn opt_array(&self, path: &str) -> Result<Option<&'a [Value]>, ImportError> {
        self.typed(path, "an array", |v| v.as_array().map(Vec::as_slice))
    }

    /// The strings of the array at `path` (empty when absent).
    pub fn strings(&self, path: &str) -> Result<Vec<&'a str>, ImportError> {
        let Some(items) = self.opt_array(path)? else { return Ok(Vec::new()) };
        items
            .iter()
            .map(|v| v.as_str().ok_or_else(|| self.invalid(path, format!("expected strings, found {}", shown(v)))))
            .collect()
    }
}

/// A value as an error message quotes it: short, on one line.
pub fn shown(v: &Value) -> String {
    const MAX: usize = 60;
    let text = v.to_string();
    if text.chars().count() <= MAX {
        text
    } else {
        let cut: String = text.chars().take(MAX).collect();
        format!("{cut}…")
    }
}

/// The objects of a document: the items of a JSON array or of a Kubernetes `List` (`kind:
/// List` or `…List` with `items`), else the document itself.
pub fn items(value: &Value) -> &[Value] {
    match value {
        Value::Array(items) => items,
        Value::Object(map) => match (map.get("kind").and_then(Value::as_str), map.get("items")) {
            (Some(kind), Some(Value::Array(items))) if kind.ends_with("List") => items,
            _ => std::slice::from_ref(value),
        },
        _ => std::slice::from_ref(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(v: &Value) -> Object<'_> {
        Object::new("f.json", "Node", "n1", v)
    }

    #[test]
    fn a_syntax_error_names_the_file_line_and_column() {
        let err = Document::from_json("bad.json", "{\"a\": 1,\n \"b\" 2}").unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("bad.json: not valid JSON: "), "{text}");
        assert!(text.contains("line 2"), "{text}");
    }

    #[test]
    fn fields_are_read_by_dotted_path_and_errors_name_object_and_field() {
        let v = json!({"spec": {"size": "1073741824", "n": 3, "tags": ["a", 1], "ok": true},
                       "status": null});
        let o = node(&v);
        assert_eq!(o.i64("spec.size", true).unwrap(), 1 << 30);
        assert_eq!(o.i64("spec.n", false).unwrap(), 3);
        assert!(o.bool("spec.ok").unwrap());
        assert_eq!(o.opt_map("status").unwrap(), None, "null reads as absent");
        let err = o.i64("spec.size", false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "f.json: Node n1: field `spec.size`: expected a whole number, found \"1073741824\""
        );
        assert_eq!(o.str("spec.nodeID").unwrap_err().to_string(), "f.json: Node n1: missing field `spec.nodeID`");
        let err = o.strings("spec.tags").unwrap_err().to_string();
        assert_eq!(err, "f.json: Node n1: field `spec.tags`: expected strings, found 1");
    }

    #[test]
    fn a_child_object_prefixes_its_path() {
        let v = json!({"status": {"diskStatus": {"d.1": {"storageMaximum": "x"}}}});
        let o = node(&v);
        let disk = &v["status"]["diskStatus"]["d.1"];
        let err = o.child("status.diskStatus.d.1", disk).i64("storageMaximum", false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "f.json: Node n1: field `status.diskStatus.d.1.storageMaximum`: \
             expected a whole number, found \"x\""
        );
    }

    #[test]
    fn dropping_leaves_out_the_listed_members_at_any_depth_and_nothing_else() {
        let text = r#"{"uid": "x", "a": {"uid": 1, "b": [{"uid": [1, 2], "c": 1.5}, -3, null]},
                       "esc\u0061ped": "v\n", "big": 18446744073709551615, "t": true}"#;
        let full = Document::from_json("f", text).unwrap().value;
        let unread = Unread { anywhere: &["uid"], below: &[] };
        let dropped = Document::from_json_dropping("f", text, &unread).unwrap().value;
        let mut expected = full.clone();
        fn strip(v: &mut Value) {
            match v {
                Value::Object(m) => {
                    m.remove("uid");
                    m.values_mut().for_each(strip);
                }
                Value::Array(a) => a.iter_mut().for_each(strip),
                _ => {}
            }
        }
        strip(&mut expected);
        assert_eq!(dropped, expected);
        assert_eq!(dropped["escaped"], "v\n");
        let nothing = Unread { anywhere: &[], below: &[] };
        assert_eq!(Document::from_json_dropping("f", text, &nothing).unwrap().value, full);
        // Below a named member only: `c` goes under `b`, stays elsewhere.
        let below = Unread { anywhere: &[], below: &[("b", &["c"])] };
        let text = r#"{"c": 1, "b": [{"c": 2, "d": {"c": 3}}], "e": {"c": 4}}"#;
        let v = Document::from_json_dropping("f", text, &below).unwrap().value;
        assert_eq!(v, serde_json::json!({"c": 1, "b": [{"d": {}}], "e": {"c": 4}}));
        // A syntax error, also inside a dropped member, or trailing text, is the same error.
        for bad in [r#"{"uid": [1,}"#, r#"{"a": 1} x"#, r#"{"a": tru}"#] {
            let e = Document::from_json_dropping("bad.json", bad, &unread).unwrap_err().to_string();
            let f = Document::from_json("bad.json", bad).unwrap_err().to_string();
            assert_eq!(e, f);
        }
    }

    #[test]
    fn an_import_error_is_small_enough_to_return_unboxed() {
        // clippy's `result_large_err` fires at 128 bytes, in every caller's code.
        assert!(std::mem::size_of::<ImportError>() < 128, "{}", std::mem::size_of::<ImportError>());
    }

    #[test]
    fn lists_and_arrays_give_their_items() {
        let list = json!({"apiVersion": "v1", "kind": "List", "items": [{"a": 1}, {"a": 2}]});
        assert_eq!(items(&list).len(), 2);
        let typed = json!({"kind": "NodeList", "items": [{"a": 1}]});
        assert_eq!(items(&typed).len(), 1);
        let array = json!([{"a": 1}, {"a": 2}, {"a": 3}]);
        assert_eq!(items(&array).len(), 3);
        let single = json!({"kind": "Node", "items": [1]});
        assert_eq!(items(&single), std::slice::from_ref(&single));
    }

    #[test]
    fn long_values_are_cut_in_messages() {
        let v = Value::String("x".repeat(200));
        let s = shown(&v);
        assert!(s.ends_with('…') && s.chars().count() == 61, "{s}");
    }
}
