//! Label match expressions.
//!
//! One grammar serves host selectors, volume selectors and constraints. It is the edge-platform
//! grammar (`and`, `or`, `not`, parentheses, `key = value`, `key ~ regex`, a bare `key`, `{}`)
//! extended with the selector forms users know from Kubernetes (`!=`, `in (…)`, `notin (…)`):
//!
//! ```text
//! expr      := or
//! or        := and  ( ("or"  | "||") and )*
//! and       := unary ( ("and" | "&&" | ",") unary )*
//! unary     := ("not" | "!") unary | "(" expr ")" | "{}" | predicate
//! predicate := key [ ("=" | "==") value | "!=" value | "~" value
//!                  | "in" "(" value ("," value)* ")" | "notin" "(" value ("," value)* ")" ]
//! key       := word | quoted        value := word | quoted
//! word      := one or more of  A–Z a–z 0–9 . _ / - : * +   (not a keyword)
//! quoted    := '…' (literal)  |  "…" (with \" and \\ escapes)
//! ```
//!
//! Precedence is `not` > `and` > `or`; both binary operators are left-associative. Keywords are
//! reserved only as whole words, so `order = x` is fine.
//!
//! Semantics on a label set: `k = v` and `k ~ re` and `k in (…)` are false when `k` is absent;
//! `k != v` and `k notin (…)` are their negations, so they are **true** when `k` is absent; a bare
//! `k` means "has key `k`"; `{}` matches only the empty label set. Matching is case-sensitive.
//!
//! Regular expressions use the [`regex`] crate and are unanchored (like PCRE's default search):
//! `zone ~ "^eu-"` anchors explicitly. Unlike PCRE there are no look-around assertions and no
//! backreferences; such a pattern is a parse error naming its position.
//!
//! [`Display`](std::fmt::Display) prints a canonical form that parses back to the same tree.
//!
//! Limits: an expression is at most [`MAX_EXPR_LEN`] bytes long, as written and in its
//! canonical form (so every expression the parser accepts prints as text it accepts), its tree
//! is at most [`MAX_EXPR_DEPTH`] levels tall (counting `not`, parentheses and every `and`/`or`
//! of a chain), and each regular expression nests at most [`MAX_REGEX_NEST`] deep and compiles
//! within [`MAX_REGEX_SIZE`] bytes; anything beyond is a [`ParseError`](crate::error::ParseError)
//! naming the position, never a stack overflow.
//!
//! ```
//! use placewise::LabelExpr;
//! use std::collections::BTreeMap;
//!
//! let e: LabelExpr = "(gpu and not(tier = bronze)) or zone ~ '^eu-'".parse()?;
//! let labels = BTreeMap::from([("gpu".to_string(), "a100".to_string())]);
//! assert!(e.matches_map(&labels));
//! assert_eq!(e.to_string(), "gpu and not tier = bronze or zone ~ \"^eu-\"");
//! # Ok::<(), placewise::error::ParseError>(())
//! ```

mod compile;
mod parse;
pub(crate) use parse::parse_in;

pub use compile::CompiledExpr;

/// The longest expression text, in bytes, that the parsers accept (label expressions, the
/// product dialect). The limit holds for the canonical form too: text that fits but prints
/// longer (`a,b` prints as `a and b`) is refused, so what `Display` prints always parses back.
pub const MAX_EXPR_LEN: usize = 4096;

/// The tallest expression tree the parsers accept: nested `not`s and parentheses, and each
/// `and`/`or` of a chain (`a, b, c` is two levels), since evaluation, display and drop recurse
/// once per level.
pub const MAX_EXPR_DEPTH: usize = 128;

/// The compiled-size limit for a pattern in an expression, in bytes (the `regex` engine's
/// size limit); a pattern that needs more is a parse error.
pub const MAX_REGEX_SIZE: usize = 1 << 20;

/// The deepest nesting of groups and repetitions in a pattern (`a**…` nests once per `*`); the
/// `regex` crate's own default (250) lets its recursive passes overflow a small thread stack.
pub const MAX_REGEX_NEST: u32 = 64;

use std::collections::BTreeMap;
use std::fmt;

/// A compiled regular expression that remembers its source (equality compares sources).
///
/// The syntax and the matches are the `regex` crate's (it is built on the same engine), with
/// the literal prefilter turned off: label values are short strings, where a prefilter gains
/// nothing, while building one for a pattern of many optional pieces (`a?b??c?…`) could take a
/// tenth of a second.
#[derive(Clone)]
pub struct Pattern {
    source: String,
    regex: regex_automata::meta::Regex,
}

impl Pattern {
    /// The source text.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether the pattern matches anywhere in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        self.regex.is_match(text)
    }

    /// Compiles `source` with the same limits as the parser; the error is the last line of the
    /// syntax error's explanation, or the size limit. For other dialects' parsers inside the
    /// crate.
    pub(crate) fn compile(source: &str) -> Result<Pattern, String> {
        use regex_automata::meta;
        let config = meta::Config::new()
            .nfa_size_limit(Some(MAX_REGEX_SIZE))
            .onepass_size_limit(Some(MAX_REGEX_SIZE))
            .auto_prefilter(false);
        let syntax = regex_automata::util::syntax::Config::new().nest_limit(MAX_REGEX_NEST);
        match meta::Builder::new().configure(config).syntax(syntax).build(source) {
            Ok(regex) => Ok(Pattern { source: source.to_owned(), regex }),
            Err(e) => Err(match (e.size_limit(), e.syntax_error()) {
                (Some(limit), _) => format!("compiled pattern exceeds the size limit of {limit} bytes"),
                (None, Some(syntax)) => last_line(&syntax.to_string()),
                (None, None) => last_line(&e.to_string()),
            }),
        }
    }
}

/// The last line of a multi-line explanation, trimmed.
fn last_line(text: &str) -> String {
    text.lines().last().unwrap_or("").trim().to_owned()
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Eq for Pattern {}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Pattern({:?})", self.source)
    }
}

/// A parsed label expression. Build one with [`str::parse`]; see the [module docs](self) for the
/// grammar and semantics.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LabelExpr {
    /// Both hold.
    And(Box<LabelExpr>, Box<LabelExpr>),
    /// Either holds.
    Or(Box<LabelExpr>, Box<LabelExpr>),
    /// The inner one does not hold.
    Not(Box<LabelExpr>),
    /// The key is present with this value.
    Eq {
        /// Label key.
        key: String,
        /// Required value.
        value: String,
    },
    /// The key is absent or has another value.
    Ne {
        /// Label key.
        key: String,
        /// Excluded value.
        value: String,
    },
    /// The key is present with one of these values.
    In {
        /// Label key.
        key: String,
        /// Allowed values.
        values: Vec<String>,
    },
    /// The key is absent or has none of these values.
    NotIn {
        /// Label key.
        key: String,
        /// Excluded values.
        values: Vec<String>,
    },
    /// The key is present and its value matches the pattern (unanchored).
    Matches {
        /// Label key.
        key: String,
        /// The pattern.
        pattern: Pattern,
    },
    /// The key is present.
    Has(String),
    /// The label set is empty (`{}`).
    Empty,
}

impl std::str::FromStr for LabelExpr {
    type Err = crate::error::ParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse::parse(s)
    }
}

impl LabelExpr {
    /// Parses an expression.
    ///
    /// # Errors
    ///
    /// A [`ParseError`](crate::error::ParseError) with the byte position and what was expected.
    pub fn parse(s: &str) -> Result<LabelExpr, crate::error::ParseError> {
        parse::parse(s)
    }

    /// Evaluates against labels given as a lookup function and an "is the set empty" flag.
    pub fn matches_with<'a>(&self, get: &dyn Fn(&str) -> Option<&'a str>, empty: bool) -> bool {
        match self {
            LabelExpr::And(a, b) => a.matches_with(get, empty) && b.matches_with(get, empty),
            LabelExpr::Or(a, b) => a.matches_with(get, empty) || b.matches_with(get, empty),
            LabelExpr::Not(e) => !e.matches_with(get, empty),
            LabelExpr::Eq { key, value } => get(key) == Some(value.as_str()),
            LabelExpr::Ne { key, value } => get(key) != Some(value.as_str()),
            LabelExpr::In { key, values } => get(key).is_some_and(|v| values.iter().any(|x| x == v)),
            LabelExpr::NotIn { key, values } => !get(key).is_some_and(|v| values.iter().any(|x| x == v)),
            LabelExpr::Matches { key, pattern } => get(key).is_some_and(|v| pattern.is_match(v)),
            LabelExpr::Has(key) => get(key).is_some(),
            LabelExpr::Empty => empty,
        }
    }

    /// Evaluates against a string map (volume labels, site labels, test fixtures).
    pub fn matches_map(&self, labels: &BTreeMap<String, String>) -> bool {
        self.matches_with(&|k| labels.get(k).map(String::as_str), labels.is_empty())
    }

    fn precedence(&self) -> u8 {
        match self {
            LabelExpr::Or(..) => 1,
            LabelExpr::And(..) => 2,
            LabelExpr::Not(_) => 3,
            _ => 4,
        }
    }
}

/// Which grammar an expression is read and printed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dialect {
    /// placewise's extensions: `!=`, `==`, `in`, `notin`, `&&`, `||`, `!`, `,`, and `:` `*` `+`
    /// in bare words.
    extended: bool,
}

impl Dialect {
    /// placewise's grammar ([`LabelExpr`]'s `FromStr` and `Display`).
    pub(crate) const FULL: Dialect = Dialect { extended: true };
    /// The edge product's grammar: `and`, `or`, `not`, parentheses, `=`, `~`, bare keys, `{}`,
    /// single and double quotes; the extensions are errors.
    pub(crate) const PRODUCT: Dialect = Dialect { extended: false };

    pub(crate) fn extended(self) -> bool {
        self.extended
    }

    pub(crate) fn is_word_char(self, c: char) -> bool {
        c.is_ascii_alphanumeric()
            || matches!(c, '.' | '_' | '/' | '-')
            || (self.extended && matches!(c, ':' | '*' | '+'))
    }

    pub(crate) fn is_keyword(self, s: &str) -> bool {
        matches!(s, "and" | "or" | "not") || (self.extended && matches!(s, "in" | "notin"))
    }

    /// Writes a key or value bare when it is a plain word, else double-quoted with escapes.
    fn write_atom(self, f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
        if !s.is_empty() && s.chars().all(|c| self.is_word_char(c)) && !self.is_keyword(s) {
            return f.write_str(s);
        }
        f.write_str("\"")?;
        for c in s.chars() {
            if c == '"' || c == '\\' {
                f.write_str("\\")?;
            }
            write!(f, "{c}")?;
        }
        f.write_str("\"")
    }

    fn write_list(self, f: &mut fmt::Formatter<'_>, values: &[String]) -> fmt::Result {
        f.write_str("(")?;
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            self.write_atom(f, v)?;
        }
        f.write_str(")")
    }
}

/// An expression printed in a dialect: single spaces, words bare and other atoms
/// double-quoted, parentheses only where needed. It parses back to the same tree in that
/// dialect (constructs the dialect lacks print in the full grammar).
pub(crate) struct Printed<'a>(pub(crate) &'a LabelExpr, pub(crate) Dialect);

impl fmt::Display for Printed<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Printed(e, d) = *self;
        // Parenthesise a child only where the grammar would otherwise regroup it: a looser
        // operator anywhere, or the same operator on the right (both are left-associative).
        let child = |f: &mut fmt::Formatter<'_>, c: &LabelExpr, min: u8| {
            if c.precedence() < min {
                write!(f, "({})", Printed(c, d))
            } else {
                write!(f, "{}", Printed(c, d))
            }
        };
        let binary = |f: &mut fmt::Formatter<'_>, key: &str, op: &str, value: &str| {
            d.write_atom(f, key)?;
            f.write_str(op)?;
            d.write_atom(f, value)
        };
        match e {
            LabelExpr::Or(a, b) | LabelExpr::And(a, b) => {
                let p = e.precedence();
                let op = if p == 1 { " or " } else { " and " };
                child(f, a, p)?;
                f.write_str(op)?;
                child(f, b, p + 1)
            }
            LabelExpr::Not(x) => {
                f.write_str("not ")?;
                child(f, x, 3)
            }
            LabelExpr::Eq { key, value } => binary(f, key, " = ", value),
            LabelExpr::Ne { key, value } => binary(f, key, " != ", value),
            LabelExpr::Matches { key, pattern } => binary(f, key, " ~ ", pattern.as_str()),
            LabelExpr::In { key, values } | LabelExpr::NotIn { key, values } => {
                d.write_atom(f, key)?;
                f.write_str(if matches!(e, LabelExpr::In { .. }) { " in " } else { " notin " })?;
                d.write_list(f, values)
            }
            LabelExpr::Has(key) => d.write_atom(f, key),
            LabelExpr::Empty => f.write_str("{}"),
        }
    }
}

impl fmt::Display for LabelExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Printed(self, Dialect::FULL).fmt(f)
    }
}

impl serde::Serialize for LabelExpr {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for LabelExpr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::Pattern;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]

        /// A pattern compiled without the prefilter accepts the patterns and matches the texts
        /// the `regex` crate does, with the same limits.
        #[test]
        fn patterns_match_as_the_regex_crate(
            pattern in proptest::collection::vec(
                proptest::sample::select(vec!["a", "b", "ab", "?", "*", "+", "??", "|", "(", ")", ".", "^", "$", "[ab]", "{2}", "\\d", "é", "(?i)"]),
                0..16,
            ),
            texts in proptest::collection::vec("[abé1A]{0,8}", 1..8),
        ) {
            let pattern = pattern.concat();
            let ours = Pattern::compile(&pattern);
            let theirs = regex::RegexBuilder::new(&pattern).size_limit(super::MAX_REGEX_SIZE).nest_limit(super::MAX_REGEX_NEST).build();
            proptest::prop_assert_eq!(ours.is_ok(), theirs.is_ok(), "{}", pattern);
            if let (Ok(ours), Ok(theirs)) = (ours, theirs) {
                for text in &texts {
                    proptest::prop_assert_eq!(ours.is_match(text), theirs.is_match(text), "{} on {}", pattern, text);
                }
            }
        }
    }

    #[test]
    fn a_pattern_of_many_optional_pieces_compiles_and_matches() {
        // From the `request_json` fuzz corpus: with the prefilter, building its Aho-Corasick
        // automaton took 30 to 120 ms in a release build.
        let source = "uu<<<</<<<<<<<<<8<<<<<<<<<<<<<<<<<Y|u?l????????????????????????p?????I????????=?>??????????1??<<<<<<<<|<<<<uuu>=u=puu0uuuu|444lY<<<<";
        let p = Pattern::compile(source).unwrap();
        assert!(p.is_match("xx444lY<<<<yy"));
        assert!(p.is_match("ulpI=>1<<<<<<<<"));
        assert!(!p.is_match("uu<<"));
    }
}
