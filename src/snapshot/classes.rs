//! Host classes: the interned values of the cluster's class attributes and the interned
//! aggregate sets, so that a filter judging data most hosts share can judge each distinct value
//! once per request ([`Cluster::attribute_class`](crate::snapshot::Cluster::attribute_class),
//! [`Cluster::aggregate_class`](crate::snapshot::Cluster::aggregate_class)).
//!
//! The table is append-only and shared by every snapshot of a lineage: a class, once issued,
//! names the same value (or aggregate set) in every later snapshot. A host's classes are set
//! whenever its record is (building, or an event that replaces it), and only then.

use crate::id::{AggregateId, ClassId, InputMap};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// The interned class values and aggregate sets of a lineage of snapshots.
#[derive(Clone, Default)]
pub(crate) struct Classes {
    /// A value's compact JSON text → its class. Equal texts are equal values (in the strict
    /// sense: `1` and `1.0`, `0.0` and `-0.0` print differently), so one class is one value.
    values: InputMap<Box<str>, ClassId>,
    /// By value class, the classes of the value's members `(member name, class)`, sorted by
    /// name: the entries of an object, or of the object a JSON string holds.
    members: Vec<Box<[(u32, ClassId)]>>,
    /// Member names → their ids.
    member_names: InputMap<Box<str>, u32>,
    /// The aggregate sets by class.
    sets: Vec<Box<[AggregateId]>>,
    /// A set (sorted, as hosts keep it) → its class.
    set_index: InputMap<Box<[AggregateId]>, ClassId>,
}

impl fmt::Debug for Classes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Classes").field("values", &self.values.len()).field("sets", &self.sets.len()).finish()
    }
}

impl Classes {
    /// The class of `value`; [`ClassId::NONE`] for an absent or `null` one. Copies a shared
    /// table only when the value is new. Computes in O(the value's size).
    pub(crate) fn value_class(table: &mut Arc<Classes>, value: Option<&Value>) -> ClassId {
        let Some(value) = value.filter(|v| !v.is_null()) else { return ClassId::NONE };
        let text = value.to_string();
        if let Some(&class) = table.values.get(text.as_str()) {
            return class;
        }
        let t = Arc::make_mut(table);
        let class = ClassId::from_index(t.values.len());
        t.values.insert(text.into_boxed_str(), class);
        t.members.push(Box::default());
        // The members' classes, interned in turn (a new value's members may be new too).
        let decoded;
        let object = match value {
            Value::Object(map) => Some(map),
            Value::String(s) => {
                decoded = serde_json::from_str::<Value>(s).ok();
                decoded.as_ref().and_then(Value::as_object)
            }
            _ => None,
        };
        if let Some(map) = object {
            let mut members: Vec<(u32, ClassId)> = Vec::with_capacity(map.len());
            for (name, member) in map {
                let next = u32::try_from(table.member_names.len()).unwrap_or(u32::MAX);
                let id = *Arc::make_mut(table).member_names.entry(name.as_str().into()).or_insert(next);
                members.push((id, Classes::value_class(table, Some(member))));
            }
            members.sort_unstable();
            Arc::make_mut(table).members[class.index()] = members.into_boxed_slice();
        }
        class
    }

    /// The id of member name `name`, if a value with such a member was ever interned.
    pub(crate) fn member_name(&self, name: &str) -> Option<u32> {
        self.member_names.get(name).copied()
    }

    /// The class of member `name` (an id from [`member_name`](Classes::member_name)) of the
    /// value of class `class`: of an object's entry, or of the entry of the object a JSON string
    /// holds. [`ClassId::NONE`] when there is no such member or it is `null`.
    #[inline]
    pub(crate) fn member_class(&self, class: ClassId, name: u32) -> ClassId {
        let Some(members) = self.members.get(class.index()) else { return ClassId::NONE };
        match members.binary_search_by_key(&name, |m| m.0) {
            Ok(i) => members[i].1,
            Err(_) => ClassId::NONE,
        }
    }

    /// The class of the aggregate set `set` (sorted). Copies a shared table only when the set is
    /// new. Computes in O(the set's size).
    pub(crate) fn aggregate_class(table: &mut Arc<Classes>, set: &[AggregateId]) -> ClassId {
        if let Some(&class) = table.set_index.get(set) {
            return class;
        }
        let t = Arc::make_mut(table);
        let class = ClassId::from_index(t.sets.len());
        t.sets.push(set.into());
        t.set_index.insert(set.into(), class);
        class
    }

    /// The aggregate set of `class`; empty for a class this table did not issue.
    pub(crate) fn aggregate_set(&self, class: ClassId) -> &[AggregateId] {
        self.sets.get(class.index()).map_or(&[], |s| s)
    }

    /// Number of value classes issued.
    pub(crate) fn value_classes(&self) -> usize {
        self.values.len()
    }

    /// Number of aggregate classes issued.
    pub(crate) fn aggregate_classes(&self) -> usize {
        self.sets.len()
    }
}

/// Whether `a` and `b` are the same value in the strict sense of a class (so `0.0` and `-0.0`
/// differ, which `Value`'s `==` does not tell apart): then they have the same class.
pub(crate) fn identical(a: Option<&Value>, b: Option<&Value>) -> bool {
    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => match (x.is_f64(), y.is_f64()) {
                (true, true) => x.as_f64().map(f64::to_bits) == y.as_f64().map(f64::to_bits),
                (false, false) => x == y,
                _ => false,
            },
            (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y)),
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|((kx, x), (ky, y))| kx == ky && same(x, y))
            }
            _ => a == b,
        }
    }
    match (a.filter(|v| !v.is_null()), b.filter(|v| !v.is_null())) {
        (Some(a), Some(b)) => same(a, b),
        (None, None) => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_values_share_a_class_and_different_ones_do_not() {
        let mut t = Arc::new(Classes::default());
        let a = Classes::value_class(&mut t, Some(&json!({"arch": "x86_64", "features": ["avx"]})));
        let b = Classes::value_class(&mut t, Some(&json!({"features": ["avx"], "arch": "x86_64"})));
        assert_eq!(a, b, "maps compare by content");
        // Strictly different values print differently and get their own class.
        let one = Classes::value_class(&mut t, Some(&json!(1)));
        let one_f = Classes::value_class(&mut t, Some(&json!(1.0)));
        let zero = Classes::value_class(&mut t, Some(&json!(0.0)));
        let minus_zero = Classes::value_class(&mut t, Some(&json!(-0.0)));
        let text = Classes::value_class(&mut t, Some(&json!("1")));
        let all = [a, one, one_f, zero, minus_zero, text];
        for (i, x) in all.iter().enumerate() {
            assert!(all[i + 1..].iter().all(|y| y != x), "{all:?}");
        }
        assert_eq!(Classes::value_class(&mut t, None), ClassId::NONE);
        assert_eq!(Classes::value_class(&mut t, Some(&Value::Null)), ClassId::NONE);
        assert_eq!(t.value_classes(), 6 + 2, "the object's members have their classes too");
    }

    #[test]
    fn members_of_objects_and_of_json_text_have_classes() {
        let mut t = Arc::new(Classes::default());
        let object =
            Classes::value_class(&mut t, Some(&json!({"arch": "x86_64", "n": null, "topology": {"cores": 8}})));
        let text = Classes::value_class(&mut t, Some(&json!(json!({"arch": "x86_64"}).to_string())));
        let other = Classes::value_class(&mut t, Some(&json!({"arch": "aarch64"})));
        let x86 = Classes::value_class(&mut t, Some(&json!("x86_64")));
        let arch = t.member_name("arch").unwrap();
        assert_eq!(t.member_class(object, arch), x86);
        assert_eq!(t.member_class(text, arch), x86, "JSON text has the members of its object");
        assert_ne!(t.member_class(other, arch), x86);
        assert_eq!(t.member_class(object, t.member_name("n").unwrap()), ClassId::NONE);
        assert_eq!(t.member_class(x86, arch), ClassId::NONE);
        assert_eq!(t.member_class(ClassId::NONE, arch), ClassId::NONE);
        let topology = t.member_class(object, t.member_name("topology").unwrap());
        assert_eq!(
            t.member_class(topology, t.member_name("cores").unwrap()),
            Classes::value_class(&mut t, Some(&json!(8)))
        );
        assert_eq!(t.member_name("nosuch"), None);
    }

    #[test]
    fn identical_values_are_strictly_equal() {
        let v = json!({"a": [1, 2.5, {"b": "c"}], "d": 0.0});
        assert!(identical(Some(&v), Some(&v.clone())));
        assert!(identical(None, Some(&Value::Null)));
        for other in [json!({"a": [1, 2.5, {"b": "c"}], "d": -0.0}), json!({"a": [1.0, 2.5, {"b": "c"}], "d": 0.0})] {
            assert!(!identical(Some(&v), Some(&other)), "{other}");
        }
        assert!(!identical(Some(&json!(1)), None));
    }

    #[test]
    fn aggregate_sets_are_interned_and_copied_on_write() {
        let mut t = Arc::new(Classes::default());
        let empty = Classes::aggregate_class(&mut t, &[]);
        let ab = Classes::aggregate_class(&mut t, &[AggregateId(0), AggregateId(1)]);
        let older = t.clone();
        let b = Classes::aggregate_class(&mut t, &[AggregateId(1)]);
        assert_eq!(Classes::aggregate_class(&mut t, &[AggregateId(0), AggregateId(1)]), ab);
        assert_ne!(empty, ab);
        assert_eq!(t.aggregate_set(b), [AggregateId(1)]);
        assert_eq!(t.aggregate_set(ClassId::NONE), []);
        // The older table never sees the new set but keeps its own.
        assert_eq!(older.aggregate_classes(), 2);
        assert_eq!(older.aggregate_set(ab), [AggregateId(0), AggregateId(1)]);
    }
}
