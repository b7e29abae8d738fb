//! The product's label match expressions: a strict dialect parser producing the foundation's
//! [`LabelExpr`] tree, and a canonical printer for that dialect.

use crate::error::ParseError;
use crate::expr::{parse_in, CompiledExpr, Dialect, LabelExpr, Printed};
use crate::id::HostId;
use crate::snapshot::{Cluster, Interner};
use std::collections::BTreeMap;
use std::fmt;

/// A label match expression in the edge platform's grammar (see the [module
/// docs](super#label-match-expressions)), used for host labels, volume labels and device labels.
///
/// Only the product's constructs are accepted (`and`, `or`, `not`, parentheses, `label = value`,
/// `label ~ regexp`, a bare `label`, `{}`); the foundation's extensions (`!=`, `in`, `notin`,
/// `&&`, `||`, `!`, `,`) are parse errors here. The tree is a plain [`LabelExpr`], so it
/// compiles and evaluates with the foundation's machinery.
///
/// ```
/// use placewise::service::MatchExpr;
/// use std::collections::BTreeMap;
///
/// let e: MatchExpr = "(foo and not(bar = xx)) or (baz = 'red') or baz = \"blue\" or {}".parse()?;
/// assert_eq!(e.to_string(), "foo and not bar = xx or baz = red or baz = blue or {}");
/// assert!(e.matches_map(&BTreeMap::new()));
/// assert!("a != b".parse::<MatchExpr>().is_err());
/// # Ok::<(), placewise::error::ParseError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchExpr(LabelExpr);

impl MatchExpr {
    /// Parses an expression in the product grammar.
    ///
    /// # Errors
    ///
    /// A [`ParseError`] with the byte position and what was expected there.
    pub fn parse(input: &str) -> Result<MatchExpr, ParseError> {
        parse_in(input, Dialect::PRODUCT).map(MatchExpr)
    }

    /// The expression as the foundation's tree.
    pub fn as_label_expr(&self) -> &LabelExpr {
        &self.0
    }

    /// Evaluates against a string map (volume and device labels, fixtures).
    pub fn matches_map(&self, labels: &BTreeMap<String, String>) -> bool {
        self.0.matches_map(labels)
    }

    /// Evaluates against the labels of `host` in `cluster` (false for a host that does not exist).
    pub fn matches_host(&self, cluster: &Cluster, host: HostId) -> bool {
        let Some(h) = cluster.host(host) else { return false };
        let symbols = cluster.symbols();
        let get = |k: &str| symbols.get(k).and_then(|k| h.labels.get(k)).map(|v| cluster.resolve(v));
        self.0.matches_with(&get, h.labels.is_empty())
    }

    /// Compiles against a snapshot's interned strings for repeated evaluation.
    pub fn compile(&self, symbols: &Interner) -> CompiledExpr {
        CompiledExpr::new(&self.0, symbols)
    }
}

impl std::str::FromStr for MatchExpr {
    type Err = ParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        MatchExpr::parse(s)
    }
}

impl serde::Serialize for MatchExpr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for MatchExpr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for MatchExpr {
    /// The canonical form: single spaces, values bare when they are words and double-quoted
    /// otherwise, parentheses only where needed. It parses back to the same tree.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Printed(&self.0, Dialect::PRODUCT).fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn e(s: &str) -> MatchExpr {
        s.parse().unwrap_or_else(|err| panic!("{s}: {err}"))
    }

    #[test]
    fn published_examples_parse_and_evaluate() {
        let a = e("(foo and not(bar = xx)) or (baz = red) or {}");
        let b = e("(foo and not(bar = xx)) or (baz = 'red') or baz = \"blue\" or {}");
        assert!(a.matches_map(&labels(&[("foo", "1")])));
        assert!(!a.matches_map(&labels(&[("foo", "1"), ("bar", "xx")])));
        assert!(a.matches_map(&labels(&[])), "{{}} matches the empty set");
        assert!(b.matches_map(&labels(&[("baz", "blue")])));
        assert!(!b.matches_map(&labels(&[("baz", "green")])));
        assert!(e("system/type = edge and region = europe")
            .matches_map(&labels(&[("system/type", "edge"), ("region", "europe")])));
    }

    #[test]
    fn semantics_of_missing_keys_bare_labels_and_regex() {
        let l = labels(&[("gpu", "a100"), ("zone", "eu-north")]);
        assert!(e("gpu").matches_map(&l));
        assert!(!e("tpu").matches_map(&l));
        assert!(e("not (tier = gold)").matches_map(&l), "Eq on a missing key is false");
        assert!(e("zone ~ 'north'").matches_map(&l), "unanchored like PCRE's default search");
        assert!(!e("zone ~ '^north'").matches_map(&l));
        assert!(e(r#"zone ~ "^eu-\w+$""#).matches_map(&l), "unknown escapes stay for the regex");
        assert!(!e("gpu = A100").matches_map(&l), "case-sensitive");
    }

    #[test]
    fn precedence_not_and_or() {
        // not > and > or: `a or b and not c` is `a or (b and (not c))`.
        let x = e("a or b and not c");
        assert!(x.matches_map(&labels(&[("a", "1"), ("c", "1")])));
        assert!(!x.matches_map(&labels(&[("b", "1"), ("c", "1")])));
        assert_eq!(e("(a or b) and c").to_string(), "(a or b) and c");
        assert_eq!(e("a and (b and c)").to_string(), "a and (b and c)");
        assert_eq!(e("not (a and b)").to_string(), "not (a and b)");
        assert_eq!(e("order = x").to_string(), "order = x", "keywords only as whole words");
    }

    #[test]
    fn display_round_trips_and_quotes_what_needs_it() {
        for s in [
            "a = 'x y'",
            "a = \"q\\\"uote\"",
            "a ~ '^[0-9]+$'",
            "system/type = edge",
            "x = 'and'",
            "not not a",
            "{} or {}",
            "a = \"back\\\\slash\"",
        ] {
            let x = e(s);
            let printed = x.to_string();
            assert_eq!(e(&printed), x, "{s} -> {printed}");
        }
        assert_eq!(e("a = 'x y'").to_string(), "a = \"x y\"");
        assert_eq!(e("x = 'and'").to_string(), "x = \"and\"");
    }

    #[test]
    fn errors_name_position_and_expectation() {
        let err = MatchExpr::parse("a = ").unwrap_err();
        assert_eq!((err.position, err.expected.as_str()), (4, "expected a value after `=`, found end of input"));
        let err = MatchExpr::parse("a != b").unwrap_err();
        assert_eq!(err.position, 2);
        assert!(err.expected.contains("found `!`"), "{}", err.expected);
        let err = MatchExpr::parse("(a or b").unwrap_err();
        assert_eq!((err.position, err.expected.as_str()), (7, "expected `)`, found end of input"));
        let err = MatchExpr::parse("a in (b)").unwrap_err();
        assert_eq!(err.position, 2);
        let err = MatchExpr::parse("a ~ '(?=x)'").unwrap_err();
        assert_eq!(err.position, 4, "look-ahead is not supported by the regex crate");
        assert!(err.expected.starts_with("expected a valid regular expression"), "{}", err.expected);
        let err = MatchExpr::parse("a = 'open").unwrap_err();
        assert_eq!((err.position, err.expected.as_str()), (4, "expected a closing `'`"));
        let err = MatchExpr::parse("{x}").unwrap_err();
        assert_eq!(err.position, 0);
        assert_eq!(MatchExpr::parse("").unwrap_err().expected, "expected an expression");
        assert_eq!(MatchExpr::parse("and").unwrap_err().position, 0);
        let deep = "(".repeat(500) + "a" + &")".repeat(500);
        assert!(MatchExpr::parse(&deep).is_err());
    }

    #[test]
    fn serde_uses_the_text_form() {
        let x = e("a = 'b c' or d");
        let json = serde_json::to_string(&x).unwrap();
        assert_eq!(json, "\"a = \\\"b c\\\" or d\"");
        assert_eq!(serde_json::from_str::<MatchExpr>(&json).unwrap(), x);
        assert!(serde_json::from_str::<MatchExpr>("\"a !\"").is_err());
    }
}
