//! Nova's extra-spec operator grammar (`extra_specs_ops.match(value, requirement)`).
//!
//! A flavor extra spec such as `capabilities:cpu_info:features: '<in> avx'` or
//! `aggregate_instance_extra_specs:ssd: 'true'` pairs a key with a *requirement*; the host's
//! value for the key (a string, `None` when it has none) must satisfy it. A [`Requirement`] is
//! parsed once and matched against many hosts.
//!
//! The requirement is split into words on Python whitespace. If the first word is an operator,
//!
//! | operator | holds when |
//! |---|---|
//! | `=` | value ≥ operand, as floats (*at least*, not equality) |
//! | `==` `!=` `>=` `<=` | the float comparison (NaN equals nothing) |
//! | `s==` `s!=` `s<` `s<=` `s>` `s>=` | the string comparison, by code point |
//! | `<in> X` | `X` is a substring of the value |
//! | `<all-in> A B …` | every word is a substring of the value |
//! | `<or> A <or> B …` | the value equals the 2nd, 4th, 6th … word (the words between are not checked) |
//!
//! Otherwise (plain `<` and `>` are not operators) the whole value must equal the whole
//! requirement. Only the first operand is used, except by `<all-in>` and `<or>`; an operator
//! with no operand is false. A missing value is false whatever the requirement.
//!
//! Nova raises, failing the whole request, when a numeric operator meets a value or operand that
//! Python's `float()` rejects, and for a bare `<or>`; [`Requirement::matches`] returns a
//! [`SpecError`] in those cases.
//!
//! ```
//! use placewise::nova::extra_specs::Requirement;
//!
//! let at_least = Requirement::parse("= 512");
//! assert_eq!(at_least.matches(Some("1024")), Ok(true));
//! assert_eq!(at_least.matches(None), Ok(false));
//! assert!(at_least.matches(Some("lots")).is_err());
//!
//! let either = Requirement::parse("<or> kvm <or> qemu");
//! assert_eq!(either.matches(Some("qemu")), Ok(true));
//! assert_eq!(Requirement::parse("a b").matches(Some("a  b")), Ok(false));
//! ```

use super::pyvalue::{parse_py_float, py_split_whitespace};
use std::fmt;

/// One word of a requirement, with its byte offset.
#[derive(Debug, Clone, PartialEq)]
struct Word {
    text: String,
    position: usize,
}

/// A numeric operand, parsed once; `None` when `float()` rejects it.
#[derive(Debug, Clone, PartialEq)]
struct Operand {
    word: Word,
    value: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NumOp {
    AtLeast,
    Eq,
    Ne,
    Ge,
    Le,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StrOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, PartialEq)]
enum Op {
    /// No operator: whole-string equality with the requirement.
    Whole,
    Num(NumOp, Option<Operand>),
    Str(StrOp, Option<Word>),
    In(Option<Word>),
    AllIn(Vec<Word>),
    /// The words after `<or>`; the even-indexed ones are the alternatives.
    Or(Vec<Word>),
}

/// A parsed extra-spec requirement; see the [module docs](self) for the grammar.
///
/// [`Display`](fmt::Display) prints the requirement as it was given.
#[derive(Debug, Clone, PartialEq)]
pub struct Requirement {
    source: String,
    operator: Option<(&'static str, usize)>,
    op: Op,
}

/// A flavor extra spec whose requirement Nova cannot evaluate against a host value: the error a
/// filter that reads extra specs fails the request with, naming the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("extra spec {key}: {source}")]
#[non_exhaustive]
pub struct ExtraSpecError {
    /// The extra spec's key, such as `capabilities:cpu_info:arch`.
    pub key: String,
    /// Why its requirement cannot be evaluated.
    #[source]
    pub source: SpecError,
}

impl ExtraSpecError {
    /// The requirement of extra spec `key` failed with `source`.
    pub fn new(key: impl Into<String>, source: SpecError) -> Self {
        ExtraSpecError { key: key.into(), source }
    }
}

/// A requirement that Nova cannot evaluate against a host value: Nova raises, and the whole
/// request fails.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// The operand of a numeric operator is not a number to Python's `float()` (`ValueError`).
    #[error("operand `{operand}` at byte {position} of requirement `{requirement}` is not a number")]
    OperandNotANumber {
        /// The whole requirement.
        requirement: String,
        /// The offending operand.
        operand: String,
        /// Its byte offset in the requirement.
        position: usize,
    },
    /// The host value is not a number to Python's `float()` but the requirement compares numbers
    /// (`ValueError`).
    #[error("host value `{value}` is not a number, but operator `{operator}` of requirement `{requirement}` compares numbers")]
    ValueNotANumber {
        /// The whole requirement.
        requirement: String,
        /// The numeric operator.
        operator: &'static str,
        /// The host value that did not parse.
        value: String,
    },
    /// `<or>` with no word after it (`IndexError`).
    #[error("`<or>` at byte {position} of requirement `{requirement}` has no operand")]
    OrWithoutOperand {
        /// The whole requirement.
        requirement: String,
        /// Byte offset of the `<or>`.
        position: usize,
    },
}

const OPERATORS: [&str; 14] =
    ["=", "==", "!=", ">=", "<=", "s==", "s!=", "s<", "s<=", "s>", "s>=", "<in>", "<all-in>", "<or>"];

impl Requirement {
    /// Parses a requirement. Never fails: text that starts with no operator is a literal for
    /// whole-string equality, and problems Nova reports only while matching are reported by
    /// [`matches`](Self::matches) (and up front by [`validate`](Self::validate)).
    /// Computes in O(length of `requirement`).
    pub fn parse(requirement: &str) -> Requirement {
        let mut words =
            py_split_whitespace(requirement).map(|(position, text)| Word { text: text.to_owned(), position });
        let first = words.next();
        let operator =
            first.as_ref().and_then(|w| OPERATORS.iter().find(|&&op| op == w.text).map(|&op| (op, w.position)));
        let op = match operator {
            None => Op::Whole,
            Some((name, _)) => {
                let num = |op: NumOp, words: &mut dyn Iterator<Item = Word>| {
                    Op::Num(op, words.next().map(|word| Operand { value: parse_py_float(&word.text), word }))
                };
                match name {
                    "=" => num(NumOp::AtLeast, &mut words),
                    "==" => num(NumOp::Eq, &mut words),
                    "!=" => num(NumOp::Ne, &mut words),
                    ">=" => num(NumOp::Ge, &mut words),
                    "<=" => num(NumOp::Le, &mut words),
                    "s==" => Op::Str(StrOp::Eq, words.next()),
                    "s!=" => Op::Str(StrOp::Ne, words.next()),
                    "s<" => Op::Str(StrOp::Lt, words.next()),
                    "s<=" => Op::Str(StrOp::Le, words.next()),
                    "s>" => Op::Str(StrOp::Gt, words.next()),
                    "s>=" => Op::Str(StrOp::Ge, words.next()),
                    "<in>" => Op::In(words.next()),
                    "<all-in>" => Op::AllIn(words.collect()),
                    _ => Op::Or(words.collect()),
                }
            }
        };
        Requirement { source: requirement.to_owned(), operator, op }
    }

    /// The requirement as given.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The operator (`=`, `s==`, `<or>` …), or `None` for whole-string equality.
    pub fn operator(&self) -> Option<&'static str> {
        self.operator.map(|(name, _)| name)
    }

    /// Whether `value` satisfies the requirement, exactly as Nova's `extra_specs_ops.match`.
    /// `None` (the host lacks the capability) never matches. Computes in O(length of the value
    /// × length of the requirement) at worst (substring searches).
    ///
    /// # Errors
    ///
    /// Where Nova raises: a numeric operator whose host value ([`SpecError::ValueNotANumber`],
    /// checked first) or operand ([`SpecError::OperandNotANumber`]) Python's `float()` rejects,
    /// and a bare `<or>` ([`SpecError::OrWithoutOperand`]). A missing value or a missing operand
    /// gives `Ok(false)` before either check.
    pub fn matches(&self, value: Option<&str>) -> Result<bool, SpecError> {
        // A missing value is false in every case, whole-string equality included.
        let Some(value) = value else {
            return Ok(false);
        };
        Ok(match &self.op {
            Op::Whole => value == self.source,
            Op::Num(_, None) | Op::Str(_, None) | Op::In(None) => false,
            Op::AllIn(words) => !words.is_empty() && words.iter().all(|w| value.contains(w.text.as_str())),
            Op::In(Some(w)) => value.contains(w.text.as_str()),
            Op::Str(op, Some(w)) => {
                let (a, b) = (value, w.text.as_str());
                match op {
                    StrOp::Eq => a == b,
                    StrOp::Ne => a != b,
                    StrOp::Lt => a < b,
                    StrOp::Le => a <= b,
                    StrOp::Gt => a > b,
                    StrOp::Ge => a >= b,
                }
            }
            Op::Num(op, Some(operand)) => {
                // Python evaluates float(value) before float(operand).
                let a = parse_py_float(value).ok_or_else(|| SpecError::ValueNotANumber {
                    requirement: self.source.clone(),
                    operator: self.operator().unwrap_or("="),
                    value: value.to_owned(),
                })?;
                let b = operand.value.ok_or_else(|| self.operand_error(&operand.word))?;
                match op {
                    NumOp::AtLeast | NumOp::Ge => a >= b,
                    NumOp::Eq => a == b,
                    NumOp::Ne => a != b,
                    NumOp::Le => a <= b,
                }
            }
            Op::Or(words) => {
                if words.is_empty() {
                    return Err(self.or_error());
                }
                words.iter().step_by(2).any(|w| w.text == value)
            }
        })
    }

    /// Reports, without a host value, an error that [`matches`](Self::matches) returns for
    /// every present value: a bare `<or>`, or a numeric operand that is not a number (a value
    /// that is not a number either gets [`SpecError::ValueNotANumber`] instead). Nova raises
    /// these only when the filter meets a host that has the capability, so a caller that wants
    /// Nova's exact outcome reports them only then.
    ///
    /// # Errors
    ///
    /// The [`SpecError`] described above.
    pub fn validate(&self) -> Result<(), SpecError> {
        match &self.op {
            Op::Num(_, Some(Operand { word, value: None })) => Err(self.operand_error(word)),
            Op::Or(words) if words.is_empty() => Err(self.or_error()),
            _ => Ok(()),
        }
    }

    fn operand_error(&self, word: &Word) -> SpecError {
        SpecError::OperandNotANumber {
            requirement: self.source.clone(),
            operand: word.text.clone(),
            position: word.position,
        }
    }

    fn or_error(&self) -> SpecError {
        SpecError::OrWithoutOperand { requirement: self.source.clone(), position: self.operator.map_or(0, |(_, p)| p) }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl std::str::FromStr for Requirement {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Requirement::parse(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn m(value: &str, req: &str) -> Result<bool, SpecError> {
        Requirement::parse(req).matches(Some(value))
    }

    fn yes(value: &str, req: &str) {
        assert_eq!(m(value, req), Ok(true), "{value:?} vs {req:?}");
    }

    fn no(value: &str, req: &str) {
        assert_eq!(m(value, req), Ok(false), "{value:?} vs {req:?}");
    }

    #[test]
    fn no_operator_is_whole_string_equality() {
        no("a b", "a  b");
        yes("a  b", "a  b");
        no("True", "true");
        yes("> 100", "> 100");
        no("100", "> 100");
        yes("", "");
        no("x", "");
        no("", " ");
        yes(" ", " ");
        // Plain < and > are not operators.
        no("5", "< 10");
        yes("< 10", "< 10");
        no("5", "> 1");
        // Not an operator unless it is the whole first word.
        no("5", "=5");
        yes("=5", "=5");
        assert_eq!(Requirement::parse("> 100").operator(), None);
    }

    #[test]
    fn missing_value_never_matches() {
        for req in ["", "x", "= 1", "= abc", "s== a", "<in> a", "<all-in> a", "<or> a", "<or>", "=="] {
            assert_eq!(Requirement::parse(req).matches(None), Ok(false), "{req:?}");
        }
    }

    #[test]
    fn extra_operands_are_ignored() {
        yes("5", "= 3 99");
        yes("abc", "s== abc extra");
        yes("5", "== 5 x");
        yes("avx2", "<in> avx zzz");
    }

    #[test]
    fn operator_without_operand_is_false() {
        for req in ["==", "s==", "<in>", "<all-in>", "=", "!=", ">=", "<=", "s!=", "s<", "s<=", "s>", "s>=", " = "] {
            no("abc", req);
            no("5", req);
        }
        // No operand: false even when the value is not a number.
        no("abc", "=");
    }

    #[test]
    fn numeric_operators() {
        yes("1024", "= 512");
        no("512", "= 1024");
        yes("512", "= 512");
        yes("1024", "== 1024.0");
        yes("1e3", "== 1000");
        no("5", "!= 5.0");
        yes("5", "!= 6");
        yes("5", ">= 5");
        no("4.9", ">= 5");
        yes("-1", "<= 0");
        yes("1_000", "== 1000");
        yes(" 5 ", "== 5");
        yes("5", "== \u{a0}5");
        yes("inf", "= 1e308");
        yes("-Infinity", "<= -1e308");
        yes("10", "= 9");
    }

    #[test]
    fn nan_never_equal() {
        no("nan", "== nan");
        yes("nan", "!= nan");
        no("nan", "= 0");
        no("nan", ">= 0");
        no("nan", "<= 0");
        no("0", "= nan");
        yes("NaN", "!= 1");
    }

    #[test]
    fn unparsable_numbers_are_errors() {
        assert_eq!(
            m("abc", "= 1"),
            Err(SpecError::ValueNotANumber { requirement: "= 1".into(), operator: "=", value: "abc".into() })
        );
        assert_eq!(
            m("5", "= 0x10"),
            Err(SpecError::OperandNotANumber { requirement: "= 0x10".into(), operand: "0x10".into(), position: 2 })
        );
        assert!(matches!(m("0x10", "== 16"), Err(SpecError::ValueNotANumber { .. })));
        // The value is checked first.
        assert!(matches!(m("x", "== y"), Err(SpecError::ValueNotANumber { .. })));
        assert!(matches!(m("", ">= 1"), Err(SpecError::ValueNotANumber { .. })));
        assert!(matches!(m("1__0", "<= 1"), Err(SpecError::ValueNotANumber { .. })));
        assert!(matches!(m("5", "!=  1e"), Err(SpecError::OperandNotANumber { position: 4, .. })));
        let e = m("abc", "= 1").unwrap_err().to_string();
        assert_eq!(e, "host value `abc` is not a number, but operator `=` of requirement `= 1` compares numbers");
        let e = m("5", "  >=  1.2.3").unwrap_err().to_string();
        assert_eq!(e, "operand `1.2.3` at byte 6 of requirement `  >=  1.2.3` is not a number");
    }

    #[test]
    fn string_operators() {
        yes("10", "s< 9");
        no("9", "s< 10");
        yes("abc", "s== abc");
        no("abc", "s== abd");
        yes("abc", "s!= abd");
        yes("b", "s> a");
        yes("a", "s>= a");
        yes("a", "s<= a");
        yes("Z", "s< a");
        yes("\u{ffff}", "s< \u{10000}");
        // s== compares with the first operand word only, not the rest of the requirement.
        no("a b", "s== a b");
        // String operators never parse numbers.
        no("1.0", "s== 1");
    }

    #[test]
    fn substring_operators() {
        yes("avx2", "<in> avx");
        no("sse", "<in> avx");
        yes("['avx', 'avx2']", "<in> avx");
        yes("avx avx2 sse4", "<all-in> avx sse");
        no("avx avx2", "<all-in> avx sse");
        yes("x", "<all-in> x x");
    }

    #[test]
    fn or_compares_every_other_word() {
        yes("x", "<or> a zz x");
        yes("a", "<or> a <or> b");
        yes("b", "<or> a <or> b");
        no("<or>", "<or> a <or> b");
        no("c", "<or> a <or> b");
        yes("v1", "<or> v1");
        no("x", "<or> v1 <or>");
        yes("zz", "<or> zz <or>");
        no("a b", "<or> a b");
        // The separator words are not checked and not compared.
        no("zz", "<or> a zz x");
    }

    #[test]
    fn bare_or_is_an_error() {
        let e = m("x", "<or>");
        assert_eq!(e, Err(SpecError::OrWithoutOperand { requirement: "<or>".into(), position: 0 }));
        assert_eq!(
            m("x", "  <or>  "),
            Err(SpecError::OrWithoutOperand { requirement: "  <or>  ".into(), position: 2 })
        );
        assert_eq!(Requirement::parse("<or>").validate(), e.clone().map(|_| ()));
        assert_eq!(e.unwrap_err().to_string(), "`<or>` at byte 0 of requirement `<or>` has no operand");
    }

    #[test]
    fn validate_reports_certain_errors_only() {
        assert!(Requirement::parse("= abc").validate().is_err());
        assert!(Requirement::parse("<or>").validate().is_err());
        for ok in ["= 1", "=", "s== abc", "abc", "", "<or> a", "<in> x", "== nan"] {
            assert_eq!(Requirement::parse(ok).validate(), Ok(()), "{ok:?}");
        }
    }

    #[test]
    fn splits_on_python_whitespace() {
        // U+001C–U+001F separate words in Python's str.split(), not in Rust's split_whitespace.
        yes("1024", "=\u{1c}512");
        yes("x", "<or>\u{1f}a\u{1e}b\u{1d}x");
        yes("5", "\u{3000}==\u{a0}5\u{85}");
        // Zero-width space is not whitespace: "=\u{200b}" is not an operator.
        no("5", "=\u{200b}5");
        assert_eq!(Requirement::parse("\u{1c}s== a").operator(), Some("s=="));
    }

    #[test]
    fn display_and_accessors() {
        let r: Requirement = "  <in>  avx ".parse().unwrap_or_else(|e| match e {});
        assert_eq!(r.to_string(), "  <in>  avx ");
        assert_eq!(r.as_str(), "  <in>  avx ");
        assert_eq!(r.operator(), Some("<in>"));
    }

    proptest! {
        #[test]
        fn never_panics(req in any::<String>(), value in proptest::option::of(any::<String>())) {
            let r = Requirement::parse(&req);
            let _ = r.matches(value.as_deref());
            let _ = r.validate();
        }

        #[test]
        fn never_panics_on_operator_shapes(
            op in prop::sample::select(OPERATORS.to_vec()),
            rest in "[ a-z0-9._<>=\u{1c}\u{a0}-]{0,12}",
            value in "[ a-z0-9._\u{a0}-]{0,8}",
        ) {
            let r = Requirement::parse(&format!("{op}{rest}"));
            let _ = r.matches(Some(&value));
        }

        #[test]
        fn validate_errors_are_certain(req in "(= |<or>|== )?[ a-z0-9.x]{0,6}", value in "[0-9]{1,3}") {
            let r = Requirement::parse(&req);
            if r.validate().is_err() {
                prop_assert!(r.matches(Some(&value)).is_err());
            }
        }
    }
}
