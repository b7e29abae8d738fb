//! The product's label match expressions: a strict dialect parser producing the foundation's
//! [`LabelExpr`] tree, and a canonical printer for that dialect.

use crate::error::ParseError;
use crate::expr::{CompiledExpr, LabelExpr, Pattern};
use crate::id::HostId;
use crate::snapshot::{Cluster, Interner};
use std::collections::BTreeMap;
use std::fmt;

const MAX_DEPTH: usize = 128;

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
/// # Ok::<(), placewise::ParseError>(())
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
        let toks = lex(input)?;
        let mut p = Parser { input, toks, at: 0, depth: 0 };
        if p.peek() == &Tok::End {
            return Err(p.error("expected an expression"));
        }
        let e = p.or()?;
        if p.peek() != &Tok::End {
            return Err(p.error(&format!("expected `and`, `or` or end of input, found {}", p.peek().describe())));
        }
        Ok(MatchExpr(e))
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

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '-')
}

fn is_keyword(s: &str) -> bool {
    matches!(s, "and" | "or" | "not")
}

fn precedence(e: &LabelExpr) -> u8 {
    match e {
        LabelExpr::Or(..) => 1,
        LabelExpr::And(..) => 2,
        LabelExpr::Not(_) => 3,
        _ => 4,
    }
}

/// A word is printed bare; anything else double-quoted, escaping `"` and `\`.
fn write_atom(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    if !s.is_empty() && s.chars().all(is_word_char) && !is_keyword(s) {
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

struct Canonical<'a>(&'a LabelExpr);

impl fmt::Display for Canonical<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Parentheses only where the grammar would regroup: a looser operator, or the same
        // operator on the right (both are left-associative).
        let child = |f: &mut fmt::Formatter<'_>, e: &LabelExpr, min: u8| {
            if precedence(e) < min {
                write!(f, "({})", Canonical(e))
            } else {
                write!(f, "{}", Canonical(e))
            }
        };
        let e = self.0;
        match e {
            LabelExpr::Or(a, b) | LabelExpr::And(a, b) => {
                let p = precedence(e);
                child(f, a, p)?;
                f.write_str(if p == 1 { " or " } else { " and " })?;
                child(f, b, p + 1)
            }
            LabelExpr::Not(x) => {
                f.write_str("not ")?;
                child(f, x, 3)
            }
            LabelExpr::Eq { key, value } => {
                write_atom(f, key)?;
                f.write_str(" = ")?;
                write_atom(f, value)
            }
            LabelExpr::Matches { key, pattern } => {
                write_atom(f, key)?;
                f.write_str(" ~ ")?;
                write_atom(f, pattern.as_str())
            }
            LabelExpr::Has(key) => write_atom(f, key),
            LabelExpr::Empty => f.write_str("{}"),
            // The parser builds only the constructs above; another tree prints in the
            // foundation's syntax rather than failing.
            other => write!(f, "{other}"),
        }
    }
}

impl fmt::Display for MatchExpr {
    /// The canonical form: single spaces, values bare when they are words and double-quoted
    /// otherwise, parentheses only where needed. It parses back to the same tree.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Canonical(&self.0).fmt(f)
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Quoted(String),
    LParen,
    RParen,
    Empty,
    Eq,
    Tilde,
    End,
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Word(w) => format!("`{w}`"),
            Tok::Quoted(q) => format!("quoted `{q}`"),
            Tok::LParen => "`(`".into(),
            Tok::RParen => "`)`".into(),
            Tok::Empty => "`{}`".into(),
            Tok::Eq => "`=`".into(),
            Tok::Tilde => "`~`".into(),
            Tok::End => "end of input".into(),
        }
    }
}

fn lex(input: &str) -> Result<Vec<(Tok, usize)>, ParseError> {
    let err = |pos: usize, msg: &str| ParseError::new(input, pos, msg);
    let mut out = Vec::new();
    let mut chars = input.char_indices().peekable();
    while let Some(&(pos, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let tok = match c {
            '(' => Tok::LParen,
            ')' => Tok::RParen,
            '=' => Tok::Eq,
            '~' => Tok::Tilde,
            '{' => {
                chars.next();
                while chars.peek().is_some_and(|&(_, c)| c.is_whitespace()) {
                    chars.next();
                }
                match chars.peek() {
                    Some(&(_, '}')) => Tok::Empty,
                    _ => return Err(err(pos, "expected `}` after `{` (only `{}`, the empty label set, is allowed)")),
                }
            }
            '\'' => {
                chars.next();
                let mut s = String::new();
                loop {
                    match chars.next() {
                        Some((_, '\'')) => break,
                        Some((_, c)) => s.push(c),
                        None => return Err(err(pos, "expected a closing `'`")),
                    }
                }
                out.push((Tok::Quoted(s), pos));
                continue;
            }
            '"' => {
                chars.next();
                let mut s = String::new();
                loop {
                    match chars.next() {
                        Some((_, '"')) => break,
                        Some((_, '\\')) => match chars.next() {
                            Some((_, c @ ('"' | '\\'))) => s.push(c),
                            // Any other escape stays as written, so regexes like "\d+" work.
                            Some((_, c)) => {
                                s.push('\\');
                                s.push(c);
                            }
                            None => return Err(err(pos, "expected a closing `\"`")),
                        },
                        Some((_, c)) => s.push(c),
                        None => return Err(err(pos, "expected a closing `\"`")),
                    }
                }
                out.push((Tok::Quoted(s), pos));
                continue;
            }
            c if is_word_char(c) => {
                let mut w = String::new();
                while let Some(&(_, c)) = chars.peek() {
                    if !is_word_char(c) {
                        break;
                    }
                    w.push(c);
                    chars.next();
                }
                out.push((Tok::Word(w), pos));
                continue;
            }
            other => {
                return Err(err(
                    pos,
                    &format!("expected a label, a value, `(`, `)`, `=`, `~`, `{{}}` or a quote, found `{other}`"),
                ))
            }
        };
        chars.next();
        out.push((tok, pos));
    }
    out.push((Tok::End, input.len()));
    Ok(out)
}

struct Parser<'a> {
    input: &'a str,
    toks: Vec<(Tok, usize)>,
    at: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.toks[self.at].0
    }

    fn pos(&self) -> usize {
        self.toks[self.at].1
    }

    fn bump(&mut self) -> Tok {
        let t = self.toks[self.at].0.clone();
        if self.at + 1 < self.toks.len() {
            self.at += 1;
        }
        t
    }

    fn error(&self, msg: &str) -> ParseError {
        ParseError::new(self.input, self.pos(), msg)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Tok::Word(x) if x == w)
    }

    fn or(&mut self) -> Result<LabelExpr, ParseError> {
        let mut left = self.and()?;
        while self.is_word("or") {
            self.bump();
            let right = self.and()?;
            left = LabelExpr::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<LabelExpr, ParseError> {
        let mut left = self.unary()?;
        while self.is_word("and") {
            self.bump();
            let right = self.unary()?;
            left = LabelExpr::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<LabelExpr, ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error("expected a shallower expression (nested too deeply)"));
        }
        let e = self.unary_inner();
        self.depth -= 1;
        e
    }

    fn unary_inner(&mut self) -> Result<LabelExpr, ParseError> {
        if self.is_word("not") {
            self.bump();
            return Ok(LabelExpr::Not(Box::new(self.unary()?)));
        }
        match self.peek() {
            Tok::LParen => {
                self.bump();
                let e = self.or()?;
                if self.peek() != &Tok::RParen {
                    return Err(self.error(&format!("expected `)`, found {}", self.peek().describe())));
                }
                self.bump();
                Ok(e)
            }
            Tok::Empty => {
                self.bump();
                Ok(LabelExpr::Empty)
            }
            _ => self.predicate(),
        }
    }

    fn value(&mut self, what: &str) -> Result<(String, usize), ParseError> {
        let pos = self.pos();
        match self.peek().clone() {
            Tok::Word(w) if !is_keyword(&w) => {
                self.bump();
                Ok((w, pos))
            }
            Tok::Quoted(q) => {
                self.bump();
                Ok((q, pos))
            }
            other => Err(self.error(&format!("expected {what}, found {}", other.describe()))),
        }
    }

    fn predicate(&mut self) -> Result<LabelExpr, ParseError> {
        let key = match self.peek().clone() {
            Tok::Word(w) if !is_keyword(&w) => {
                self.bump();
                w
            }
            other => {
                return Err(self.error(&format!("expected a label, `not`, `(` or `{{}}`, found {}", other.describe())))
            }
        };
        match self.peek() {
            Tok::Eq => {
                self.bump();
                let (value, _) = self.value("a value after `=`")?;
                Ok(LabelExpr::Eq { key, value })
            }
            Tok::Tilde => {
                self.bump();
                let (source, pos) = self.value("a regular expression after `~`")?;
                let pattern = Pattern::compile(&source).map_err(|why| {
                    ParseError::new(self.input, pos, format!("expected a valid regular expression ({why})"))
                })?;
                Ok(LabelExpr::Matches { key, pattern })
            }
            _ => Ok(LabelExpr::Has(key)),
        }
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
