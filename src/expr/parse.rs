//! Lexer and recursive-descent parser for label expressions.

use super::{Dialect, LabelExpr, Pattern, Printed, MAX_EXPR_DEPTH, MAX_EXPR_LEN};
use crate::error::ParseError;
use std::fmt::{self, Write as _};

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Quoted(String),
    LParen,
    RParen,
    Empty,
    Eq,
    Ne,
    Tilde,
    Comma,
    Bang,
    AndAnd,
    OrOr,
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
            Tok::Ne => "`!=`".into(),
            Tok::Tilde => "`~`".into(),
            Tok::Comma => "`,`".into(),
            Tok::Bang => "`!`".into(),
            Tok::AndAnd => "`&&`".into(),
            Tok::OrOr => "`||`".into(),
            Tok::End => "end of input".into(),
        }
    }
}

fn lex(input: &str, dialect: Dialect) -> Result<Vec<(Tok, usize)>, ParseError> {
    let err = |pos: usize, msg: &str| ParseError::new(input, pos, msg);
    let ext = dialect.extended();
    let bytes = input.as_bytes();
    let mut out = Vec::new();
    let mut chars = input.char_indices().peekable();
    while let Some(&(pos, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let next_is = |b: u8| bytes.get(pos + 1) == Some(&b);
        let tok = match c {
            '(' => Tok::LParen,
            ')' => Tok::RParen,
            ',' if ext => Tok::Comma,
            '~' => Tok::Tilde,
            '=' if ext && next_is(b'=') => {
                chars.next();
                Tok::Eq
            }
            '=' => Tok::Eq,
            '!' if ext && next_is(b'=') => {
                chars.next();
                Tok::Ne
            }
            '!' if ext => Tok::Bang,
            '&' if ext && next_is(b'&') => {
                chars.next();
                Tok::AndAnd
            }
            '|' if ext && next_is(b'|') => {
                chars.next();
                Tok::OrOr
            }
            '{' => {
                chars.next();
                while chars.peek().is_some_and(|&(_, c)| c.is_whitespace()) {
                    chars.next();
                }
                if chars.peek().is_none_or(|&(_, c)| c != '}') {
                    return Err(err(pos, "expected `}` after `{` (only `{}`, the empty label set, is allowed)"));
                }
                Tok::Empty
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
                        Some((_, '\\')) => match chars.peek() {
                            Some(&(_, c @ ('"' | '\\'))) => {
                                s.push(c);
                                chars.next();
                            }
                            _ => s.push('\\'),
                        },
                        Some((_, c)) => s.push(c),
                        None => return Err(err(pos, "expected a closing `\"`")),
                    }
                }
                out.push((Tok::Quoted(s), pos));
                continue;
            }
            c if dialect.is_word_char(c) => {
                let mut s = String::new();
                while let Some(&(_, c)) = chars.peek() {
                    if !dialect.is_word_char(c) {
                        break;
                    }
                    s.push(c);
                    chars.next();
                }
                out.push((Tok::Word(s), pos));
                continue;
            }
            other => {
                let what = "a label, a value, an operator, a parenthesis, `{}` or a quote";
                return Err(err(pos, &format!("expected {what}, found `{other}`")));
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
    dialect: Dialect,
}

pub(super) fn parse(input: &str) -> Result<LabelExpr, ParseError> {
    parse_in(input, Dialect::FULL)
}

/// Parses `input` in `dialect`.
pub(crate) fn parse_in(input: &str, dialect: Dialect) -> Result<LabelExpr, ParseError> {
    // Text past the length limit is refused at the limit; an error before it is reported as
    // such, so a deeply nested long text still says what is wrong with it first.
    let too_long = || {
        let expected = format!("expected an expression of at most {MAX_EXPR_LEN} bytes");
        ParseError::new(input, MAX_EXPR_LEN, expected)
    };
    // Lexing errors name where their token starts, always before the end of the text.
    let mut toks = match lex(input, dialect) {
        Err(e) if e.position >= MAX_EXPR_LEN => return Err(too_long()),
        other => other?,
    };
    // Text of exactly the limit ends at it (its `End` token): only longer text is cut.
    let over = input.len() > MAX_EXPR_LEN;
    let cut = if over { toks.iter().position(|t| t.1 >= MAX_EXPR_LEN) } else { None };
    if let Some(cut) = cut {
        toks.truncate(cut);
        toks.push((Tok::End, MAX_EXPR_LEN));
    }
    let mut p = Parser { input, toks, at: 0, depth: 0, dialect };
    let parsed = parse_all(&mut p);
    match (parsed, cut) {
        (Err(e), Some(_)) if e.position < MAX_EXPR_LEN => Err(e),
        (_, Some(_)) => Err(too_long()),
        (parsed, None) => parsed.and_then(|e| printed_within_limit(input, e, dialect)),
    }
}

/// `e` if its canonical form also fits the length limit. Text the parser accepts can print
/// longer (`a,b` prints as `a and b`, `k~v` as `k ~ v`); refusing those keeps `Display` a form
/// that parses back, in every dialect.
fn printed_within_limit(input: &str, e: LabelExpr, dialect: Dialect) -> Result<LabelExpr, ParseError> {
    /// Counts bytes, and fails (ending the print) once past the limit.
    struct Budget(usize);
    impl fmt::Write for Budget {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            self.0 = self.0.checked_sub(s.len()).ok_or(fmt::Error)?;
            Ok(())
        }
    }
    match write!(Budget(MAX_EXPR_LEN), "{}", Printed(&e, dialect)) {
        Ok(()) => Ok(e),
        Err(_) => {
            let expected = format!("expected an expression whose canonical form is at most {MAX_EXPR_LEN} bytes");
            Err(ParseError::new(input, 0, expected))
        }
    }
}

fn parse_all(p: &mut Parser<'_>) -> Result<LabelExpr, ParseError> {
    if p.peek() == &Tok::End {
        return Err(p.error("expected an expression"));
    }
    let (e, _) = p.or()?;
    if p.peek() != &Tok::End {
        return Err(p.error(&format!("expected `and`, `or` or end of input, found {}", p.peek().describe())));
    }
    Ok(e)
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

    /// Refuses a tree taller than [`MAX_EXPR_DEPTH`]: evaluation, display and drop recurse
    /// once per level, and a long `and`/`or` chain is as tall as it is long.
    fn height(&self, height: usize) -> Result<usize, ParseError> {
        if height > MAX_EXPR_DEPTH {
            return Err(self.error("expected a shallower expression (nested too deeply)"));
        }
        Ok(height)
    }

    /// Each rule returns the tree and its height.
    fn or(&mut self) -> Result<(LabelExpr, usize), ParseError> {
        let (mut left, mut height) = self.and()?;
        while self.is_word("or") || self.peek() == &Tok::OrOr {
            self.bump();
            let (right, h) = self.and()?;
            height = self.height(height.max(h) + 1)?;
            left = LabelExpr::Or(Box::new(left), Box::new(right));
        }
        Ok((left, height))
    }

    fn and(&mut self) -> Result<(LabelExpr, usize), ParseError> {
        let (mut left, mut height) = self.unary()?;
        while self.is_word("and") || matches!(self.peek(), Tok::AndAnd | Tok::Comma) {
            self.bump();
            let (right, h) = self.unary()?;
            height = self.height(height.max(h) + 1)?;
            left = LabelExpr::And(Box::new(left), Box::new(right));
        }
        Ok((left, height))
    }

    fn unary(&mut self) -> Result<(LabelExpr, usize), ParseError> {
        // The parser's own recursion is bounded here, before any height is known.
        self.depth += 1;
        if self.depth > MAX_EXPR_DEPTH {
            return Err(self.error("expected a shallower expression (nested too deeply)"));
        }
        let e = self.unary_inner();
        self.depth -= 1;
        e
    }

    fn unary_inner(&mut self) -> Result<(LabelExpr, usize), ParseError> {
        if self.is_word("not") || self.peek() == &Tok::Bang {
            self.bump();
            let (inner, h) = self.unary()?;
            return Ok((LabelExpr::Not(Box::new(inner)), self.height(h + 1)?));
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
                Ok((LabelExpr::Empty, 1))
            }
            _ => Ok((self.predicate()?, 1)),
        }
    }

    fn atom(&mut self, what: &str) -> Result<(String, usize), ParseError> {
        let pos = self.pos();
        match self.peek().clone() {
            Tok::Word(w) if !self.dialect.is_keyword(&w) => {
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
        let (key, _) = self.atom("a label, `not`, `(` or `{}`")?;
        match self.peek() {
            Tok::Eq => {
                self.bump();
                let (value, _) = self.atom("a value after `=`")?;
                Ok(LabelExpr::Eq { key, value })
            }
            Tok::Ne => {
                self.bump();
                let (value, _) = self.atom("a value after `!=`")?;
                Ok(LabelExpr::Ne { key, value })
            }
            Tok::Tilde => {
                self.bump();
                let (source, pos) = self.atom("a regular expression after `~`")?;
                let pattern = Pattern::compile(&source).map_err(|why| {
                    ParseError::new(self.input, pos, format!("expected a valid regular expression ({why})"))
                })?;
                Ok(LabelExpr::Matches { key, pattern })
            }
            Tok::Word(w) if self.dialect.extended() && (w == "in" || w == "notin") => {
                let negate = w == "notin";
                self.bump();
                let values = self.list()?;
                Ok(if negate { LabelExpr::NotIn { key, values } } else { LabelExpr::In { key, values } })
            }
            _ => Ok(LabelExpr::Has(key)),
        }
    }

    fn list(&mut self) -> Result<Vec<String>, ParseError> {
        if self.peek() != &Tok::LParen {
            return Err(self.error(&format!("expected `(` to open a value list, found {}", self.peek().describe())));
        }
        self.bump();
        if self.peek() == &Tok::RParen {
            // `k in ()` matches nothing and `k notin ()` everything.
            self.bump();
            return Ok(Vec::new());
        }
        let mut values = vec![self.atom("a value")?.0];
        while self.peek() == &Tok::Comma {
            self.bump();
            values.push(self.atom("a value")?.0);
        }
        if self.peek() != &Tok::RParen {
            return Err(self.error(&format!("expected `,` or `)` in a value list, found {}", self.peek().describe())));
        }
        self.bump();
        Ok(values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn published_examples_parse() {
        for src in [
            "(foo and not(bar = xx)) or (baz = red) or {}",
            "(foo and not(bar = xx)) or (baz = 'red') or baz = \"blue\" or {}",
            "function = heating",
            "system/type = edge and region = europe",
            "tier in (gold, silver), rack notin (r3)",
        ] {
            parse(src).unwrap_or_else(|e| panic!("{src}: {e}"));
        }
    }

    #[test]
    fn the_length_limit_holds_as_written_and_for_the_canonical_form_to_the_byte() {
        let longest = format!("a = {}", "x".repeat(MAX_EXPR_LEN - 4));
        assert_eq!(parse(&longest).unwrap().to_string(), longest);
        assert_eq!(parse(&format!("{longest}x")).unwrap_err().position, MAX_EXPR_LEN);
        // A lexing error in text of exactly the limit is that error, not the limit's.
        let open = format!("a = \"{}", "x".repeat(MAX_EXPR_LEN - 5));
        assert_eq!(open.len(), MAX_EXPR_LEN);
        assert!(!parse(&open).unwrap_err().expected.contains("at most"));
        // `k~x…` prints as `k ~ x…`, two bytes longer.
        let fits = format!("k~{}", "x".repeat(MAX_EXPR_LEN - 4));
        let shown = parse(&fits).unwrap().to_string();
        assert_eq!(shown.len(), MAX_EXPR_LEN);
        assert_eq!(parse(&shown).unwrap(), parse(&fits).unwrap());
        let over = format!("k~{}", "x".repeat(MAX_EXPR_LEN - 3));
        assert_eq!(over.len(), MAX_EXPR_LEN - 1);
        let err = parse(&over).unwrap_err();
        assert_eq!(err.position, 0);
        assert!(err.expected.contains("canonical form"), "{err}");
    }

    #[test]
    fn semantics() {
        let e = |s: &str| parse(s).unwrap();
        let l = labels(&[("foo", "1"), ("baz", "red"), ("system/type", "edge")]);
        assert!(e("(foo and not(bar = xx)) or (baz = red) or {}").matches_map(&l));
        assert!(e("{}").matches_map(&BTreeMap::new()));
        assert!(!e("{}").matches_map(&l));
        assert!(e("bar != xx").matches_map(&l), "!= holds when the key is absent");
        assert!(!e("bar = xx").matches_map(&l));
        assert!(e("not (bar = xx)").matches_map(&l));
        assert!(e("baz in (blue, red)").matches_map(&l));
        assert!(!e("baz notin (blue, red)").matches_map(&l));
        assert!(e("nope notin (a)").matches_map(&l));
        assert!(e("system/type ~ 'ed'").matches_map(&l), "regex is unanchored");
        assert!(!e("system/type ~ '^dge'").matches_map(&l));
        assert!(e("foo").matches_map(&l));
        assert!(!e("Foo").matches_map(&l), "case-sensitive");
        assert!(e("a = 1 or foo and baz = red").matches_map(&l), "and binds tighter than or");
        assert!(!e("not foo and baz = red").matches_map(&l), "not binds tightest");
    }

    #[test]
    fn errors_name_position_and_expectation() {
        let err = parse("zone = ").unwrap_err();
        assert_eq!(err.position, 7);
        assert!(err.expected.contains("a value after `=`"), "{err}");
        let err = parse("a = b or (c = d").unwrap_err();
        assert_eq!(err.position, 15);
        assert!(err.expected.contains("expected `)`"));
        let err = parse("a ~ '(unclosed'").unwrap_err();
        assert_eq!(err.position, 4);
        assert!(err.expected.contains("expected a valid regular expression"));
        let err = parse("a = 'open").unwrap_err();
        assert_eq!((err.position, err.expected.as_str()), (4, "expected a closing `'`"));
        assert_eq!(parse("").unwrap_err().expected, "expected an expression");
        assert_eq!(parse("a b").unwrap_err().position, 2);
        assert!(parse("a in b").unwrap_err().expected.contains("expected `(`"));
        assert!(parse("{ x").is_err());
        assert!(parse("a @ b").unwrap_err().expected.contains("found `@`"));
        assert!(parse("(?<=x)").is_err());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = "(".repeat(10_000) + "a" + &")".repeat(10_000);
        assert!(parse(&deep).unwrap_err().expected.contains("nested too deeply"));
        let nots = "not ".repeat(10_000) + "a";
        assert!(parse(&nots).is_err());
    }

    #[test]
    fn display_round_trips() {
        for src in [
            "a = 1 or b = 2 and c",
            "(a or b) and c",
            "a or (b or c)",
            "not (a and b)",
            "not not a",
            "k = \"with space\" and \"odd key\" != 'x\"y'",
            "k in (\"a b\", c) or k notin (\"and\")",
            "r ~ \"^eu-(west|north)\\\\d\"",
            "{} or x",
            "k in () or k notin ()",
        ] {
            let e = parse(src).unwrap_or_else(|err| panic!("{src}: {err}"));
            let printed = e.to_string();
            assert_eq!(parse(&printed).unwrap(), e, "{src} printed as {printed}");
        }
        assert_eq!(parse("(a or b) and c").unwrap().to_string(), "(a or b) and c");
        assert_eq!(parse("a==b && !c || {}").unwrap().to_string(), "a = b and not c or {}");
    }
}
