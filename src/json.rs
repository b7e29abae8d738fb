//! Reading JSON in the documented form only.
//!
//! serde's derived `Deserialize` for a struct also accepts a JSON array of the field values in
//! declaration order (`["h1", {}, …]` for a host). That form is undocumented, unreadable and
//! silently breaks when a field is added, so the crate's `from_json` functions refuse it: after
//! reading a value they serialise it back and walk the input beside the result; an array where
//! the value's own form is an object is reported with its path. This costs one extra parse and
//! one serialisation per call, at the edge only.

use crate::error::BuildError;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

/// Reads a `T` from `json`, refusing the sequence form of any struct inside it.
pub(crate) fn from_str<T: DeserializeOwned + Serialize>(json: &str) -> Result<T, BuildError> {
    let value: T = serde_json::from_str(json).map_err(|e| BuildError::from_json(&e))?;
    let input: Value = serde_json::from_str(json).map_err(|e| BuildError::from_json(&e))?;
    check(&input, &value)?;
    Ok(value)
}

/// Refuses `input` if it holds an array where `value` (read from it) serialises as an object.
pub(crate) fn check<T: Serialize>(input: &Value, value: &T) -> Result<(), BuildError> {
    // Types read from JSON serialise back to JSON: strings, numbers, maps and lists.
    let Ok(shape) = serde_json::to_value(value) else { return Ok(()) };
    match array_for_object(input, &shape) {
        Some(path) => Err(BuildError::NotAnObject { path }),
        None => Ok(()),
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
                    if let Some(y) = b.get(key) {
                        stack.push((x, y, format!("{path}.{key}")));
                    }
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Inner {
        a: u32,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Outer {
        name: String,
        inner: Vec<Inner>,
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
    fn malformed_text_keeps_its_line_and_column() {
        assert!(matches!(from_str::<Outer>("{\n  \"name\": }"), Err(BuildError::Json { line: 2, .. })));
    }
}
