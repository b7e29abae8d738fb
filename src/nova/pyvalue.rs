//! Python values, and the few Python rules Nova's scheduler languages depend on.
//!
//! Nova's extra-spec operators ([`extra_specs`](super::extra_specs)) and its JsonFilter
//! ([`json_query`](super::json_query)) work on Python objects, so matching Nova means matching
//! Python: which strings `float()` accepts, how `str()` prints a float or a list, and how `==`,
//! `<` and truth tests treat mixed types. This module holds those rules in one place.
//!
//! | Python | here |
//! |---|---|
//! | `float(s)` for a `str` | [`parse_py_float`] |
//! | `repr(x)` for a `float` | [`py_repr_float`] |
//! | `str(x)`, `repr(x)` | [`py_str`], [`py_repr`] |
//! | `a == b` | [`py_eq`] |
//! | `a < b`, `a <= b`, `a > b`, `a >= b` | [`py_cmp`], [`py_compare`] |
//! | `bool(x)` | [`py_truthy`] |
//! | `str.isspace()`, `str.strip()`, `str.split()` | [`is_py_whitespace`], [`py_strip`], [`py_split_whitespace`] |
//!
//! Character classes follow Unicode 14.0, the database of Python 3.11, on which the Nova 34
//! reference runs.
//!
//! ```
//! use placewise::nova::pyvalue::{parse_py_float, py_eq, py_repr_float, py_str, PyValue};
//!
//! assert_eq!(parse_py_float(" 1_000 "), Some(1000.0));
//! assert_eq!(parse_py_float("0x10"), None);
//! assert_eq!(py_repr_float(1e16), "1e+16");
//! let features = PyValue::List(vec!["avx".into(), "avx2".into()]);
//! assert_eq!(py_str(&features), "['avx', 'avx2']");
//! assert!(py_eq(&PyValue::Bool(true), &PyValue::Float(1.0)));
//! ```

use std::cmp::Ordering;
use std::fmt;

/// A Python value of the kinds Nova's host state and JSON queries hold.
///
/// The derived [`PartialEq`] is structural Rust equality (`Int(1) != Float(1.0)`, NaN unequal to
/// itself); Python's `==` is [`py_eq`].
#[derive(Debug, Clone, PartialEq, Default)]
pub enum PyValue {
    /// `None`.
    #[default]
    None,
    /// `True` or `False`.
    Bool(bool),
    /// An `int` (Python's are unbounded; these are the ones that fit in `i64`).
    Int(i64),
    /// A `float`.
    Float(f64),
    /// A `str`.
    Str(String),
    /// A `list`.
    List(Vec<PyValue>),
    /// A `dict` with string keys, in insertion order. Keys are expected to be unique; if one
    /// repeats, the last occurrence counts, as when Python builds a dict from pairs.
    Dict(Vec<(String, PyValue)>),
    /// An object known by its type and truth value only (see [`PyObject`]).
    Object(PyObject),
}

/// An object whose value is not modelled, known by its type and its truth value: Nova's host
/// state holds three, `metrics` (a `MonitorMetricList`), `pci_stats` (a `PciDeviceStats`) and
/// `updated` (a `datetime`), which a JSON query can name alone (`["or", "$metrics"]`).
///
/// The host state holds one object of each such type, so two objects of the same type are
/// taken to be that one object: [`py_eq`] holds between them (Python's default `==` is
/// identity), and a type that orders its values (`datetime`) orders them as equal. Ordered
/// against anything else, an object is a [`TypeError`], as in Python.
///
/// ```
/// use placewise::nova::pyvalue::{py_compare, py_eq, py_truthy, CompareOp, PyObject, PyValue};
///
/// let metrics = PyValue::Object(PyObject { type_name: "MonitorMetricList", truthy: false, ordered: false });
/// assert!(!py_truthy(&metrics) && py_eq(&metrics, &metrics) && !py_eq(&metrics, &PyValue::Int(0)));
/// let err = py_compare(CompareOp::Lt, &metrics, &PyValue::Int(1)).unwrap_err();
/// assert_eq!((err.left, err.right), ("MonitorMetricList", "int"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PyObject {
    /// Python's name for the type (`MonitorMetricList`, `datetime.datetime`).
    pub type_name: &'static str,
    /// `bool(object)`: a `MonitorMetricList` is false when empty; most objects are true.
    pub truthy: bool,
    /// Whether the type orders its values (`datetime` does, `MonitorMetricList` does not).
    pub ordered: bool,
}

impl PyValue {
    /// Python's name for the value's type: `NoneType`, `bool`, `int`, `float`, `str`, `list`,
    /// `dict`, or an object's type name.
    pub fn type_name(&self) -> &'static str {
        match self {
            PyValue::None => "NoneType",
            PyValue::Bool(_) => "bool",
            PyValue::Int(_) => "int",
            PyValue::Float(_) => "float",
            PyValue::Str(_) => "str",
            PyValue::List(_) => "list",
            PyValue::Dict(_) => "dict",
            PyValue::Object(o) => o.type_name,
        }
    }

    /// Whether this is `None`.
    pub fn is_none(&self) -> bool {
        matches!(self, PyValue::None)
    }

    /// The value stored under `key` when this is a dict holding it; `None` otherwise.
    /// Computes in O(number of keys).
    pub fn get(&self, key: &str) -> Option<&PyValue> {
        match self {
            PyValue::Dict(pairs) => dict_get(pairs, key),
            _ => None,
        }
    }
}

/// The last value stored under `key`: later pairs override earlier ones, as in `dict(pairs)`.
fn dict_get<'a>(pairs: &'a [(String, PyValue)], key: &str) -> Option<&'a PyValue> {
    pairs.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
}

impl From<&serde_json::Value> for PyValue {
    /// What Python's `json.loads` gives: `null` is `None`, an integer is an `Int` when it fits in
    /// `i64` (else a `Float`, where Python would keep an exact big `int`), an object keeps its
    /// keys in serde_json's order.
    fn from(v: &serde_json::Value) -> Self {
        match v {
            serde_json::Value::Null => PyValue::None,
            serde_json::Value::Bool(b) => PyValue::Bool(*b),
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => PyValue::Int(i),
                None => n.as_f64().map_or(PyValue::None, PyValue::Float),
            },
            serde_json::Value::String(s) => PyValue::Str(s.clone()),
            serde_json::Value::Array(items) => PyValue::List(items.iter().map(PyValue::from).collect()),
            serde_json::Value::Object(map) => {
                PyValue::Dict(map.iter().map(|(k, v)| (k.clone(), PyValue::from(v))).collect())
            }
        }
    }
}

impl From<&PyValue> for serde_json::Value {
    /// The JSON form. JSON has no NaN or infinity, so a non-finite float becomes `null`; an
    /// object, whose value is not modelled, is `null` too.
    fn from(v: &PyValue) -> Self {
        match v {
            PyValue::None => serde_json::Value::Null,
            PyValue::Bool(b) => serde_json::Value::Bool(*b),
            PyValue::Int(i) => serde_json::Value::from(*i),
            PyValue::Float(f) => serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, Into::into),
            PyValue::Str(s) => serde_json::Value::String(s.clone()),
            PyValue::List(items) => serde_json::Value::Array(items.iter().map(Into::into).collect()),
            PyValue::Dict(pairs) => {
                serde_json::Value::Object(pairs.iter().map(|(k, v)| (k.clone(), v.into())).collect())
            }
            PyValue::Object(_) => serde_json::Value::Null,
        }
    }
}

impl From<bool> for PyValue {
    fn from(b: bool) -> Self {
        PyValue::Bool(b)
    }
}

impl From<i64> for PyValue {
    fn from(i: i64) -> Self {
        PyValue::Int(i)
    }
}

impl From<f64> for PyValue {
    fn from(f: f64) -> Self {
        PyValue::Float(f)
    }
}

impl From<&str> for PyValue {
    fn from(s: &str) -> Self {
        PyValue::Str(s.to_owned())
    }
}

impl From<String> for PyValue {
    fn from(s: String) -> Self {
        PyValue::Str(s)
    }
}

impl From<Vec<PyValue>> for PyValue {
    fn from(items: Vec<PyValue>) -> Self {
        PyValue::List(items)
    }
}

impl fmt::Display for PyValue {
    /// Python's `str()`: see [`py_str`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PyValue::Str(s) => f.write_str(s),
            other => {
                let mut out = String::new();
                write_repr(&mut out, other);
                f.write_str(&out)
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Whitespace
// ---------------------------------------------------------------------------------------------

/// Python's `str.isspace()` for one character: Rust's [`char::is_whitespace`] plus the ASCII
/// separators U+001C–U+001F, which Python counts and Rust does not.
pub fn is_py_whitespace(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.strip()` with no argument.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_whitespace)
}

/// Python's `str.split()` with no argument: the words between runs of Python whitespace, each
/// with its byte offset in `s`. Leading and trailing whitespace give no empty words.
pub fn py_split_whitespace(s: &str) -> impl Iterator<Item = (usize, &str)> + '_ {
    let mut pos = 0;
    std::iter::from_fn(move || {
        let rest = &s[pos..];
        let start = pos + rest.find(|c: char| !is_py_whitespace(c))?;
        let end = s[start..].find(is_py_whitespace).map_or(s.len(), |i| start + i);
        pos = end;
        Some((start, &s[start..end]))
    })
}

// ---------------------------------------------------------------------------------------------
// float()
// ---------------------------------------------------------------------------------------------

/// The zero digit of every Unicode 14.0 run of decimal digits (general category Nd) outside
/// ASCII. Each run holds the ten digits 0–9 in order. Generated with Python 3.11:
/// `[c for c in range(0x80, 0x110000) if unicodedata.decimal(chr(c), -1) == 0]`.
const DECIMAL_ZEROS: [u32; 65] = [
    0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66, 0xDE6, 0xE50, 0xED0, 0xF20,
    0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0,
    0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10, 0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0,
    0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0,
    0x16B50, 0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0,
];

/// The decimal value of a non-ASCII Unicode digit (`unicodedata.decimal`).
fn unicode_decimal(c: char) -> Option<u8> {
    let c = c as u32;
    let i = DECIMAL_ZEROS.partition_point(|&z| z <= c).checked_sub(1)?;
    let d = c - DECIMAL_ZEROS[i];
    // d < 10, so the cast cannot truncate.
    (d < 10).then_some(d as u8)
}

/// Python's `float()` applied to a `str`; `None` where Python raises `ValueError`.
///
/// Accepted, as in CPython 3.11:
///
/// - surrounding whitespace, ASCII (`\t \n \v \f \r` and space) or any non-ASCII Python
///   whitespace (U+0085, U+00A0, U+2000 …). The ASCII separators U+001C–U+001F are rejected:
///   `float()` strips with C's `isspace`, unlike `str.split()`;
/// - an optional sign, then decimal digits with an optional point (`1.`, `.5`, `1.5`) and an
///   optional exponent (`1e3`, `1E-3`, `1e+03`); at least one digit before the exponent;
/// - non-ASCII decimal digits, read as their value (`'١٢'` is 12.0);
/// - single underscores between two digits (`1_000`, `1.0_5`, `1e1_0`);
/// - `inf`, `infinity` and `nan` in any case, with an optional sign.
///
/// Rejected: hexadecimal (`0x10`), an empty or blank string, `nan(…)`, a lone point, inner
/// whitespace. Out-of-range values become infinities or zeros as in Python. Never panics.
/// Computes in O(length of `s`).
pub fn parse_py_float(s: &str) -> Option<f64> {
    // Python first maps non-ASCII whitespace to a space and non-ASCII digits to ASCII ones; any
    // other non-ASCII character makes the string invalid.
    let mut buf: Vec<u8> = Vec::with_capacity(s.len());
    for c in s.chars() {
        if (c as u32) < 0x7f {
            buf.push(c as u8);
        } else if is_py_whitespace(c) {
            buf.push(b' ');
        } else {
            buf.push(b'0' + unicode_decimal(c)?);
        }
    }
    if buf.contains(&b'_') {
        buf = remove_underscores(&buf)?;
    }
    let is_c_space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
    let start = buf.iter().position(|b| !is_c_space(b))?;
    let end = buf.iter().rposition(|b| !is_c_space(b)).map_or(start, |i| i + 1);
    parse_float_body(&buf[start..end])
}

/// Removes underscores that each sit between two ASCII digits; `None` for any other underscore.
fn remove_underscores(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut prev = 0u8;
    for &b in bytes {
        if b == b'_' {
            if !prev.is_ascii_digit() {
                return None;
            }
        } else {
            if prev == b'_' && !b.is_ascii_digit() {
                return None;
            }
            out.push(b);
        }
        prev = b;
    }
    (prev != b'_').then_some(out)
}

/// The stripped, ASCII body of a float literal: Python's `_Py_dg_strtod` grammar, then its
/// `inf`/`nan` spellings. The whole body must be consumed.
fn parse_float_body(body: &[u8]) -> Option<f64> {
    let (negative, unsigned) = match body.first() {
        Some(b'-') => (true, &body[1..]),
        Some(b'+') => (false, &body[1..]),
        _ => (false, body),
    };
    let special = if unsigned.eq_ignore_ascii_case(b"inf") || unsigned.eq_ignore_ascii_case(b"infinity") {
        Some(f64::INFINITY)
    } else if unsigned.eq_ignore_ascii_case(b"nan") {
        Some(f64::NAN)
    } else {
        None
    };
    if let Some(v) = special {
        return Some(if negative { -v } else { v });
    }

    let digits_at = |from: usize| unsigned[from..].iter().take_while(|b| b.is_ascii_digit()).count();
    let int_len = digits_at(0);
    let mut i = int_len;
    let mut frac_len = 0;
    if unsigned.get(i) == Some(&b'.') {
        frac_len = digits_at(i + 1);
        i += 1 + frac_len;
    }
    if int_len + frac_len == 0 {
        return None;
    }
    // CPython refuses more than 10^9 significant (or fraction) digits.
    const MAX_DIGITS: usize = 1_000_000_000;
    let significant = unsigned[..i].iter().filter(|b| b.is_ascii_digit()).skip_while(|&&b| b == b'0').count();
    if significant > MAX_DIGITS || frac_len > MAX_DIGITS {
        return None;
    }
    if matches!(unsigned.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(unsigned.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let exp_len = digits_at(j);
        if exp_len == 0 {
            // Python leaves a bare `e` unconsumed, so the literal does not end where it should.
            return None;
        }
        i = j + exp_len;
    }
    if i != unsigned.len() {
        return None;
    }
    // The body is now plain ASCII in a grammar Rust's correctly rounded parser accepts.
    let text = std::str::from_utf8(body).ok()?;
    text.parse::<f64>().ok()
}

// ---------------------------------------------------------------------------------------------
// repr() and str()
// ---------------------------------------------------------------------------------------------

/// Python's `repr()` of a float: the shortest digits that read back to the same value, laid out
/// fixed (`4.0`, `0.0001`, `123.5`) when the decimal exponent is in `-4 ..= 15`, else in
/// exponent form with a signed exponent of at least two digits (`1e+16`, `1e-05`,
/// `1.5e+300`); `inf`, `-inf` and `nan`.
pub fn py_repr_float(f: f64) -> String {
    if f.is_nan() {
        return "nan".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.to_owned();
    }
    let (digits, exp) = shortest_digits(f.abs());
    // Python's `decpt`: the value is 0.DIGITS × 10^decpt.
    let decpt = exp + 1;
    let mut out = String::with_capacity(digits.len() + 8);
    if f.is_sign_negative() {
        out.push('-');
    }
    if decpt > 16 || decpt <= -4 {
        let (first, rest) = digits.split_at(1);
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        out.push_str(&format!("e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.unsigned_abs()));
    } else if decpt <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', decpt.unsigned_abs() as usize));
        out.push_str(&digits);
    } else {
        // 1 <= decpt <= 16 here.
        let point = decpt as usize;
        if digits.len() <= point {
            out.push_str(&digits);
            out.extend(std::iter::repeat_n('0', point - digits.len()));
            out.push_str(".0");
        } else {
            out.push_str(&digits[..point]);
            out.push('.');
            out.push_str(&digits[point..]);
        }
    }
    out
}

/// The significant digits of `{:e}` and its decimal exponent: `1.25e-7` gives (`125`, -7).
fn sci_digits(sci: &str) -> Option<(String, i32)> {
    let (mantissa, exp) = sci.split_once('e')?;
    Some((mantissa.chars().filter(char::is_ascii_digit).collect(), exp.parse().ok()?))
}

/// The shortest digits that read back as `f` (finite, non-negative), and the decimal exponent
/// of the first one, choosing among equally short candidates as Python does.
fn shortest_digits(f: f64) -> (String, i32) {
    // `{:e}` gives Rust's shortest round-trip digits.
    let (digits, exp) = sci_digits(&format!("{f:e}")).unwrap_or_else(|| ("0".to_owned(), 0));
    // When `f` lies exactly halfway between two equally short candidates, Rust takes the upper
    // one and Python's dtoa (David Gay's) the one with the even last digit.
    let odd = digits.bytes().last().is_some_and(|d| (d - b'0') % 2 == 1);
    let even = odd.then(|| tie_alternative(f, &digits, exp)).flatten();
    (even.unwrap_or(digits), exp)
}

/// For `f` exactly halfway between `digits` and a neighbour of the same length (one unit of
/// the last digit away) that also reads back as `f`: that neighbour, whose last digit is even.
fn tie_alternative(f: f64, digits: &str, exp: i32) -> Option<String> {
    let n = digits.len();
    // A tie needs the exact value to have n + 1 significant digits, the last a 5.
    let (longer, longer_exp) = sci_digits(&format!("{f:.n$e}"))?;
    if longer_exp != exp || !longer.ends_with('5') {
        return None;
    }
    // A double's exact expansion has at most 767 significant digits, so 800 shows all of them.
    let (exact, _) = sci_digits(&format!("{f:.800e}"))?;
    if exact.trim_end_matches('0') != longer {
        return None;
    }
    let lower = &longer[..n];
    let other = if lower == digits { increment_digits(lower)? } else { lower.to_owned() };
    if other.len() != n || other.bytes().last().is_some_and(|d| (d - b'0') % 2 == 1) {
        return None;
    }
    let text = format!("{}.{}e{exp}", &other[..1], &other[1..]);
    (text.parse::<f64>().ok()? == f).then_some(other)
}

/// A decimal digit string plus one unit in its last place; `None` when it gains a digit.
fn increment_digits(digits: &str) -> Option<String> {
    let mut bytes = digits.as_bytes().to_vec();
    for b in bytes.iter_mut().rev() {
        if *b == b'9' {
            *b = b'0';
        } else {
            *b += 1;
            return String::from_utf8(bytes).ok();
        }
    }
    None
}

/// Python's `str()`: integers plainly, floats as [`py_repr_float`], `True`, `False`, `None`,
/// strings as they are, lists and dicts in their repr form (`['avx', 'avx2']`, `{'a': 1}`). An
/// object, whose value is not modelled, prints as `<type object>`, where Python prints its
/// own form.
pub fn py_str(v: &PyValue) -> String {
    match v {
        PyValue::Str(s) => s.clone(),
        other => py_repr(other),
    }
}

/// Python's `repr()`: like [`py_str`] but strings are quoted and escaped (`'a'`, `"it's"`).
pub fn py_repr(v: &PyValue) -> String {
    let mut out = String::new();
    write_repr(&mut out, v);
    out
}

fn write_repr(out: &mut String, v: &PyValue) {
    match v {
        PyValue::None => out.push_str("None"),
        PyValue::Bool(true) => out.push_str("True"),
        PyValue::Bool(false) => out.push_str("False"),
        PyValue::Int(i) => out.push_str(&i.to_string()),
        PyValue::Float(f) => out.push_str(&py_repr_float(*f)),
        PyValue::Str(s) => write_str_repr(out, s),
        PyValue::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_repr(out, item);
            }
            out.push(']');
        }
        PyValue::Dict(pairs) => {
            out.push('{');
            for (i, (k, item)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_str_repr(out, k);
                out.push_str(": ");
                write_repr(out, item);
            }
            out.push('}');
        }
        PyValue::Object(o) => {
            out.push('<');
            out.push_str(o.type_name);
            out.push_str(" object>");
        }
    }
}

/// Non-ASCII characters that Python's `str.isprintable()` rejects, as inclusive ranges: the
/// assigned ones of categories Cc, Cf, Zs, Zl, Zp, Cs and Co in Unicode 14.0. Of the unassigned
/// code points (Cn), which Python also escapes, only the noncharacters are known here (they
/// never change); the others are printed as they are, since that set changes with every Unicode
/// version and no single table matches every Python that runs Nova.
const NOT_PRINTABLE: [(u32, u32); 27] = [
    (0x80, 0xA0),
    (0xAD, 0xAD),
    (0x600, 0x605),
    (0x61C, 0x61C),
    (0x6DD, 0x6DD),
    (0x70F, 0x70F),
    (0x890, 0x891),
    (0x8E2, 0x8E2),
    (0x1680, 0x1680),
    (0x180E, 0x180E),
    (0x2000, 0x200F),
    (0x2028, 0x202F),
    (0x205F, 0x2064),
    (0x2066, 0x206F),
    (0x3000, 0x3000),
    (0xD800, 0xF8FF),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x13438),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
    (0xF0000, 0xFFFFD),
    (0x100000, 0x10FFFD),
];

fn is_printable_non_ascii(c: char) -> bool {
    let c = c as u32;
    let noncharacter = (0xFDD0..=0xFDEF).contains(&c) || c & 0xFFFE == 0xFFFE;
    let i = NOT_PRINTABLE.partition_point(|&(lo, _)| lo <= c);
    !(noncharacter || i > 0 && c <= NOT_PRINTABLE[i - 1].1)
}

/// Python's `repr()` of a `str`: single quotes unless the text has a single quote and no
/// double quote; backslash escapes for the quote, `\`, `\t`, `\n`, `\r` and unprintable
/// characters.
fn write_str_repr(out: &mut String, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if c < ' ' || c == '\x7f' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_ascii() || is_printable_non_ascii(c) => out.push(c),
            c if (c as u32) <= 0xff => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) <= 0xffff => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push(quote);
}

// ---------------------------------------------------------------------------------------------
// Comparison and truth
// ---------------------------------------------------------------------------------------------

/// An ordering between two values that Python refuses, as its `TypeError` does
/// (`'<' not supported between instances of 'int' and 'str'`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("values of type `{left}` and `{right}` cannot be ordered")]
#[non_exhaustive]
pub struct TypeError {
    /// Python type name of the left operand (of the innermost pair, for lists).
    pub left: &'static str,
    /// Python type name of the right operand.
    pub right: &'static str,
}

/// An ordering operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CompareOp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CompareOp {
    /// The operator's Python spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            CompareOp::Lt => "<",
            CompareOp::Le => "<=",
            CompareOp::Gt => ">",
            CompareOp::Ge => ">=",
        }
    }

    /// Whether `ord` (from [`py_cmp`]) satisfies the operator; an unordered pair satisfies none.
    pub fn holds(self, ord: Option<Ordering>) -> bool {
        match (self, ord) {
            (_, None) => false,
            (CompareOp::Lt, Some(o)) => o == Ordering::Less,
            (CompareOp::Le, Some(o)) => o != Ordering::Greater,
            (CompareOp::Gt, Some(o)) => o == Ordering::Greater,
            (CompareOp::Ge, Some(o)) => o != Ordering::Less,
        }
    }
}

impl fmt::Display for CompareOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

fn as_num(v: &PyValue) -> Option<Num> {
    match v {
        PyValue::Bool(b) => Some(Num::Int(i64::from(*b))),
        PyValue::Int(i) => Some(Num::Int(*i)),
        PyValue::Float(f) => Some(Num::Float(*f)),
        _ => None,
    }
}

/// Exact comparison of an integer with a float, as Python does it (no rounding of the integer).
fn cmp_int_float(i: i64, f: f64) -> Option<Ordering> {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if f.is_nan() {
        return None;
    }
    if f >= TWO_63 {
        return Some(Ordering::Less);
    }
    if f < -TWO_63 {
        return Some(Ordering::Greater);
    }
    let t = f.trunc();
    // |t| < 2^63 and t is integral, so the cast is exact.
    let ti = t as i64;
    Some(i.cmp(&ti).then_with(|| 0.0f64.partial_cmp(&(f - t)).unwrap_or(Ordering::Equal)))
}

fn cmp_num(a: Num, b: Num) -> Option<Ordering> {
    match (a, b) {
        (Num::Int(x), Num::Int(y)) => Some(x.cmp(&y)),
        (Num::Float(x), Num::Float(y)) => x.partial_cmp(&y),
        (Num::Int(x), Num::Float(y)) => cmp_int_float(x, y),
        (Num::Float(x), Num::Int(y)) => cmp_int_float(y, x).map(Ordering::reverse),
    }
}

/// The pairs that count in a dict: the last occurrence of each key.
fn dict_entries(pairs: &[(String, PyValue)]) -> impl Iterator<Item = &(String, PyValue)> {
    pairs.iter().enumerate().filter(|(i, (k, _))| !pairs[i + 1..].iter().any(|(l, _)| l == k)).map(|(_, p)| p)
}

/// Python's `a == b`: numbers (`bool`, `int`, `float`) compare numerically and exactly
/// (`True == 1`, `1 == 1.0`, NaN equal to nothing); strings by content; lists element by
/// element; dicts by key set and values, whatever the order; `None` only to `None`; an object
/// only to an object of its type ([`PyObject`]); values of different kinds are unequal.
/// Computes in O(size) for lists, O(keys²) for dicts.
pub fn py_eq(a: &PyValue, b: &PyValue) -> bool {
    match (a, b) {
        (PyValue::None, PyValue::None) => true,
        (PyValue::Object(x), PyValue::Object(y)) => x.type_name == y.type_name,
        (PyValue::Str(x), PyValue::Str(y)) => x == y,
        (PyValue::List(x), PyValue::List(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q)),
        (PyValue::Dict(x), PyValue::Dict(y)) => {
            dict_entries(x).count() == dict_entries(y).count()
                && dict_entries(x).all(|(k, v)| dict_get(y, k).is_some_and(|w| py_eq(v, w)))
        }
        _ => match (as_num(a), as_num(b)) {
            (Some(x), Some(y)) => cmp_num(x, y) == Some(Ordering::Equal),
            _ => false,
        },
    }
}

/// Python's ordering of two values, for `<`, `<=`, `>` and `>=`.
///
/// - Numbers (`bool` included) compare numerically and exactly; `Ok(None)` when a NaN makes
///   every ordering false.
/// - Strings compare by code point (the same as Rust's byte order on UTF-8).
/// - Lists compare lexicographically: the first pair of elements that are not `==` decides
///   (and may itself raise); if there is none, the shorter list is smaller.
/// - An object of a type that orders its values is equal to an object of its type
///   ([`PyObject`]).
///
/// # Errors
///
/// A [`TypeError`] for any other pair, as Python raises: a number with a string, anything with
/// `None`, two dicts, a list with a non-list.
pub fn py_cmp(a: &PyValue, b: &PyValue) -> Result<Option<Ordering>, TypeError> {
    match (a, b) {
        (PyValue::Str(x), PyValue::Str(y)) => Ok(Some(x.cmp(y))),
        (PyValue::Object(x), PyValue::Object(y)) if x.ordered && x.type_name == y.type_name => {
            Ok(Some(Ordering::Equal))
        }
        (PyValue::List(x), PyValue::List(y)) => match x.iter().zip(y).find(|(p, q)| !py_eq(p, q)) {
            Some((p, q)) => py_cmp(p, q),
            None => Ok(Some(x.len().cmp(&y.len()))),
        },
        _ => match (as_num(a), as_num(b)) {
            (Some(x), Some(y)) => Ok(cmp_num(x, y)),
            _ => Err(TypeError { left: a.type_name(), right: b.type_name() }),
        },
    }
}

/// Python's `a OP b` for an ordering operator.
///
/// # Errors
///
/// As [`py_cmp`].
pub fn py_compare(op: CompareOp, a: &PyValue, b: &PyValue) -> Result<bool, TypeError> {
    py_cmp(a, b).map(|ord| op.holds(ord))
}

/// Python's `bool(v)`: `None`, `False`, zero, and empty strings, lists and dicts are false; an
/// object is as its [`PyObject::truthy`] says; everything else is true, NaN included.
pub fn py_truthy(v: &PyValue) -> bool {
    match v {
        PyValue::None => false,
        PyValue::Bool(b) => *b,
        PyValue::Int(i) => *i != 0,
        PyValue::Float(f) => *f != 0.0,
        PyValue::Str(s) => !s.is_empty(),
        PyValue::List(items) => !items.is_empty(),
        PyValue::Dict(pairs) => !pairs.is_empty(),
        PyValue::Object(o) => o.truthy,
    }
}

/// Python's `int()` applied to a `str`; `None` where Python raises `ValueError` (`"4.0"`, `"0x10"`,
/// `""`). Surrounding whitespace, a sign, non-ASCII decimal digits and single underscores between
/// digits are accepted. Values beyond `i64` saturate. Computes in O(length of `s`).
pub fn parse_py_int(s: &str) -> Option<i64> {
    // int() strips what float() strips: ASCII whitespace without U+001C–U+001F, and non-ASCII
    // whitespace.
    let space =
        |c: char| matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r') || (!c.is_ascii() && c.is_whitespace());
    let body = s.trim_matches(space);
    let (negative, digits) = match body.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, body.strip_prefix('+').unwrap_or(body)),
    };
    let mut value: i128 = 0;
    let mut any = false;
    let mut after_underscore = false;
    for c in digits.chars() {
        if c == '_' {
            if !any || after_underscore {
                return None;
            }
            after_underscore = true;
            continue;
        }
        let d = match c.to_digit(10) {
            Some(d) => d,
            // A non-ASCII decimal digit: float() reads it as its value.
            None if !c.is_ascii() => {
                let mut buf = [0u8; 4];
                let f = parse_py_float(c.encode_utf8(&mut buf))?;
                if !(0.0..=9.0).contains(&f) || f.fract() != 0.0 {
                    return None;
                }
                f as u32
            }
            None => return None,
        };
        value = (value * 10 + i128::from(d)).min(i128::from(i64::MAX) + 1);
        any = true;
        after_underscore = false;
    }
    if !any || after_underscore {
        return None;
    }
    let value = if negative { -value } else { value };
    Some(value.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn s(x: &str) -> PyValue {
        PyValue::Str(x.to_owned())
    }

    #[test]
    fn float_parsing_matches_python() {
        // Expected values from CPython 3.11's float().
        let accepted: &[(&str, f64)] = &[
            ("5", 5.0),
            (" 5 ", 5.0),
            ("\t5\n", 5.0),
            ("\x0b5\x0c", 5.0),
            ("\u{85}5", 5.0),
            ("\u{a0}5\u{3000}", 5.0),
            ("1_000", 1000.0),
            ("1.0_5", 1.05),
            ("1e1_0", 1e10),
            (".5", 0.5),
            ("1.", 1.0),
            ("-1.5e-3", -0.0015),
            ("+1E+03", 1000.0),
            ("1e3", 1000.0),
            ("1024.0", 1024.0),
            ("0001", 1.0),
            ("1e400", f64::INFINITY),
            ("-1e400", f64::NEG_INFINITY),
            ("1e-400", 0.0),
            ("1e99999999999999999999", f64::INFINITY),
            ("0e99999999999999999999", 0.0),
            ("infinity", f64::INFINITY),
            ("INFINITY", f64::INFINITY),
            ("-Inf", f64::NEG_INFINITY),
            ("+inf", f64::INFINITY),
            ("\u{ff15}", 5.0),
            ("\u{661}\u{662}", 12.0),
            ("\u{661}_\u{662}", 12.0),
            ("0.1", 0.1),
            ("2.2250738585072014e-308", 2.2250738585072014e-308),
            ("9007199254740993", 9007199254740992.0),
        ];
        for &(text, want) in accepted {
            let got = parse_py_float(text);
            assert_eq!(got.map(f64::to_bits), Some(want.to_bits()), "{text:?}");
        }
        for text in ["nan", "NaN", "-nan", "+NAN"] {
            assert!(parse_py_float(text).is_some_and(f64::is_nan), "{text:?}");
        }
        let rejected = [
            "",
            "  ",
            "0x10",
            "0X10",
            "abc",
            "1__0",
            "_1",
            "1_",
            "1_.5",
            "in_f",
            ".",
            "e5",
            "1e",
            "1e+",
            "+-5",
            "--5",
            "nan(1)",
            "1\0",
            "5\u{200b}",
            "\u{b2}",
            "1\u{a0}5",
            "1 5",
            "\u{1c}5",
            "5\u{1f}",
            "infinit",
            "infinityx",
            "inf inity",
            "1.5.2",
            "1e5.5",
            "1,5",
            "- 5",
            "0b1",
            "1j",
            "\u{7f}",
            "5_e3",
            "5e_3",
            "_",
            "+",
            "-",
        ];
        for text in rejected {
            assert_eq!(parse_py_float(text), None, "{text:?}");
        }
    }

    #[test]
    fn decimal_digit_table_is_consistent() {
        assert_eq!(unicode_decimal('\u{660}'), Some(0));
        assert_eq!(unicode_decimal('\u{669}'), Some(9));
        assert_eq!(unicode_decimal('\u{66a}'), None);
        assert_eq!(unicode_decimal('\u{1fbf9}'), Some(9));
        assert_eq!(unicode_decimal('\u{1fbfa}'), None);
        assert_eq!(unicode_decimal('\u{80}'), None);
        assert!(DECIMAL_ZEROS.windows(2).all(|w| w[0] + 10 <= w[1]));
    }

    #[test]
    fn float_repr_matches_python() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (4.0, "4.0"),
            (1024.0, "1024.0"),
            (0.1, "0.1"),
            (123.5, "123.5"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (9999999999999998.0, "9999999999999998.0"),
            (1.5e16, "1.5e+16"),
            (12345678901234567890.0, "1.2345678901234567e+19"),
            (1e-4, "0.0001"),
            (1.5e-4, "0.00015"),
            (1e-5, "1e-05"),
            (1.5e300, "1.5e+300"),
            (1e100, "1e+100"),
            (-2.5e-7, "-2.5e-07"),
            (f64::MAX, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (f64::NAN, "nan"),
            (1.0 / 3.0, "0.3333333333333333"),
            (2.0f64.powi(53), "9007199254740992.0"),
            // Exact ties between two shortest candidates go to the even digit, as in Python.
            (1735297044525758.0 + 0.25, "1735297044525758.2"),
            (-189608179068116.0 - 0.625, "-189608179068116.62"),
            (168246012148649.0 + 0.125, "168246012148649.12"),
            (141805765220040.0 + 0.625, "141805765220040.62"),
            (5e-324 * 3.0, "1.5e-323"),
        ];
        for &(f, want) in cases {
            assert_eq!(py_repr_float(f), want, "{f:e}");
        }
    }

    #[test]
    fn str_of_values_matches_python() {
        assert_eq!(py_str(&PyValue::Int(-7)), "-7");
        assert_eq!(py_str(&PyValue::Float(4.0)), "4.0");
        assert_eq!(py_str(&PyValue::Bool(true)), "True");
        assert_eq!(py_str(&PyValue::Bool(false)), "False");
        assert_eq!(py_str(&PyValue::None), "None");
        assert_eq!(py_str(&s("it's")), "it's");
        assert_eq!(py_str(&PyValue::List(vec![s("avx"), s("avx2")])), "['avx', 'avx2']");
        assert_eq!(py_str(&PyValue::List(vec![])), "[]");
        assert_eq!(py_str(&PyValue::Dict(vec![])), "{}");
        let dict = PyValue::Dict(vec![
            ("a".into(), PyValue::Int(1)),
            ("b".into(), PyValue::List(vec![PyValue::Float(1e-5), PyValue::None, PyValue::Bool(true)])),
        ]);
        assert_eq!(py_str(&dict), "{'a': 1, 'b': [1e-05, None, True]}");
        assert_eq!(dict.to_string(), "{'a': 1, 'b': [1e-05, None, True]}");
        // Quote choice and escapes, as CPython's repr.
        let reprs: &[(&str, &str)] = &[
            ("it's", "\"it's\""),
            ("say \"hi\"", "'say \"hi\"'"),
            ("both ' and \"", "'both \\' and \"'"),
            ("a\\b", "'a\\\\b'"),
            ("t\tn\nr\r", "'t\\tn\\nr\\r'"),
            ("\0\u{1b}\u{7f}", "'\\x00\\x1b\\x7f'"),
            ("\u{85}\u{a0}\u{ad}", "'\\x85\\xa0\\xad'"),
            ("\u{200b}\u{2028}\u{feff}", "'\\u200b\\u2028\\ufeff'"),
            ("\u{e0001}\u{f0000}", "'\\U000e0001\\U000f0000'"),
            ("\u{fdd0}\u{fffe}\u{10ffff}\u{1fffe}", "'\\ufdd0\\ufffe\\U0010ffff\\U0001fffe'"),
            ("é日本🙂", "'é日本🙂'"),
        ];
        for &(text, want) in reprs {
            assert_eq!(py_repr(&s(text)), want, "{text:?}");
        }
    }

    #[test]
    fn equality_follows_python() {
        let t = PyValue::Bool(true);
        assert!(py_eq(&t, &PyValue::Int(1)));
        assert!(py_eq(&t, &PyValue::Float(1.0)));
        assert!(py_eq(&PyValue::Int(1), &PyValue::Float(1.0)));
        assert!(!py_eq(&PyValue::Int(5), &s("5")));
        assert!(!py_eq(&PyValue::Float(f64::NAN), &PyValue::Float(f64::NAN)));
        assert!(py_eq(&PyValue::None, &PyValue::None));
        assert!(!py_eq(&PyValue::None, &PyValue::Int(0)));
        assert!(!py_eq(&PyValue::Bool(false), &s("")));
        // Exact int/float comparison: 2**53 + 1 != 2.0**53.
        assert!(!py_eq(&PyValue::Int((1 << 53) + 1), &PyValue::Float(9007199254740992.0)));
        assert!(py_eq(&PyValue::Int(i64::MIN), &PyValue::Float(-9223372036854775808.0)));
        assert!(!py_eq(&PyValue::Int(i64::MAX), &PyValue::Float(9223372036854775808.0)));
        assert!(py_eq(&PyValue::List(vec![t.clone(), s("a")]), &PyValue::List(vec![PyValue::Int(1), s("a")])));
        assert!(!py_eq(&PyValue::List(vec![t.clone()]), &PyValue::List(vec![t.clone(), t.clone()])));
        let d1 = PyValue::Dict(vec![("a".into(), PyValue::Int(1)), ("b".into(), s("x"))]);
        let d2 = PyValue::Dict(vec![("b".into(), s("x")), ("a".into(), PyValue::Float(1.0))]);
        assert!(py_eq(&d1, &d2));
        let dup =
            PyValue::Dict(vec![("a".into(), PyValue::Int(9)), ("a".into(), PyValue::Int(1)), ("b".into(), s("x"))]);
        assert!(py_eq(&dup, &d1));
        assert!(py_eq(&d1, &dup));
        assert!(!py_eq(&d1, &PyValue::Dict(vec![("a".into(), PyValue::Int(1))])));
        assert!(!py_eq(&d1, &PyValue::List(vec![])));
    }

    #[test]
    fn ordering_follows_python() {
        use CompareOp::*;
        let i = PyValue::Int;
        let f = PyValue::Float;
        assert_eq!(py_compare(Lt, &i(1), &i(2)), Ok(true));
        assert_eq!(py_compare(Le, &PyValue::Bool(true), &f(1.0)), Ok(true));
        assert_eq!(py_compare(Gt, &f(2.5), &i(2)), Ok(true));
        assert_eq!(py_compare(Gt, &i((1 << 53) + 1), &f(9007199254740992.0)), Ok(true));
        assert_eq!(py_compare(Lt, &i(i64::MAX), &f(9223372036854775808.0)), Ok(true));
        assert_eq!(py_compare(Gt, &i(i64::MIN), &f(-1e300)), Ok(true));
        assert_eq!(py_compare(Lt, &i(3), &f(f64::INFINITY)), Ok(true));
        assert_eq!(py_compare(Lt, &f(-0.5), &i(0)), Ok(true));
        assert_eq!(py_compare(Gt, &f(-0.5), &i(-1)), Ok(true));
        for op in [Lt, Le, Gt, Ge] {
            assert_eq!(py_compare(op, &f(f64::NAN), &i(1)), Ok(false));
            assert_eq!(py_compare(op, &i(1), &f(f64::NAN)), Ok(false));
        }
        assert_eq!(py_compare(Lt, &s("10"), &s("9")), Ok(true));
        assert_eq!(py_compare(Lt, &s("Z"), &s("a")), Ok(true));
        assert_eq!(py_compare(Lt, &s("\u{ffff}"), &s("\u{10000}")), Ok(true));
        assert_eq!(py_cmp(&i(1), &s("1")), Err(TypeError { left: "int", right: "str" }));
        assert_eq!(py_cmp(&PyValue::None, &PyValue::None), Err(TypeError { left: "NoneType", right: "NoneType" }));
        assert!(py_cmp(&PyValue::Dict(vec![]), &PyValue::Dict(vec![])).is_err());
        assert!(py_cmp(&PyValue::List(vec![]), &i(1)).is_err());
        let l = |v: Vec<PyValue>| PyValue::List(v);
        assert_eq!(py_compare(Lt, &l(vec![i(1)]), &l(vec![i(1), s("a")])), Ok(true));
        assert_eq!(py_compare(Lt, &l(vec![i(1), i(2)]), &l(vec![f(1.0), i(3)])), Ok(true));
        assert_eq!(py_compare(Le, &l(vec![PyValue::None]), &l(vec![PyValue::None])), Ok(true));
        assert_eq!(py_cmp(&l(vec![i(1), s("a")]), &l(vec![i(1), i(2)])), Err(TypeError { left: "str", right: "int" }));
        assert_eq!(py_compare(Le, &l(vec![f(f64::NAN)]), &l(vec![f(f64::NAN)])), Ok(false));
    }

    #[test]
    fn truthiness_follows_python() {
        assert!(!py_truthy(&PyValue::None));
        assert!(!py_truthy(&PyValue::Int(0)));
        assert!(!py_truthy(&PyValue::Float(-0.0)));
        assert!(py_truthy(&PyValue::Float(f64::NAN)));
        assert!(!py_truthy(&s("")));
        assert!(py_truthy(&s("False")));
        assert!(!py_truthy(&PyValue::List(vec![])));
        assert!(py_truthy(&PyValue::List(vec![PyValue::Bool(false)])));
        assert!(!py_truthy(&PyValue::Dict(vec![])));
    }

    #[test]
    fn whitespace_is_pythons() {
        let words: Vec<_> = py_split_whitespace("\u{1c}a  b\u{a0}c\u{3000}").collect();
        assert_eq!(words, [(1, "a"), (4, "b"), (7, "c")]);
        assert_eq!(py_split_whitespace(" \t ").count(), 0);
        assert_eq!(py_strip("\u{1f} x y\u{85}"), "x y");
        assert!(!is_py_whitespace('\u{200b}'));
    }

    #[test]
    fn json_conversion() {
        let v: serde_json::Value =
            serde_json::json!({"a": [1, 2.5, null, true, "x"], "big": 18446744073709551615u64, "neg": -3});
        let p = PyValue::from(&v);
        assert_eq!(p.get("neg"), Some(&PyValue::Int(-3)));
        assert_eq!(p.get("big"), Some(&PyValue::Float(18446744073709551615.0)));
        assert_eq!(
            p.get("a"),
            Some(&PyValue::List(vec![
                PyValue::Int(1),
                PyValue::Float(2.5),
                PyValue::None,
                PyValue::Bool(true),
                s("x")
            ]))
        );
        let back = serde_json::Value::from(&PyValue::List(vec![PyValue::Float(f64::NAN), PyValue::Int(1)]));
        assert_eq!(back, serde_json::json!([null, 1]));
        assert_eq!(
            serde_json::Value::from(&PyValue::from(&serde_json::json!({"k": [1, "v"]}))),
            serde_json::json!({"k": [1, "v"]})
        );
    }

    proptest! {
        #[test]
        fn float_parsing_never_panics(text in any::<String>()) {
            let _ = parse_py_float(&text);
        }

        #[test]
        fn float_parsing_never_panics_on_numberish(text in "[ _0-9eE.+\\-infaINFAtyx\u{a0}\u{661}\u{1c}]{0,24}") {
            if let Some(f) = parse_py_float(&text) {
                // What Python accepts without underscores or odd digits, Rust's parser accepts
                // too (with its own spelling of the specials).
                let plain = text.trim_matches(|c: char| c == ' ' || c == '\u{a0}');
                if plain.chars().all(|c| c.is_ascii_digit() || ".eE+-".contains(c)) {
                    prop_assert_eq!(plain.parse::<f64>().ok().map(f64::to_bits), Some(f.to_bits()));
                }
            }
        }

        #[test]
        fn float_repr_round_trips(bits in any::<u64>()) {
            let f = f64::from_bits(bits);
            let text = py_repr_float(f);
            let back = parse_py_float(&text);
            if f.is_nan() {
                prop_assert!(back.is_some_and(f64::is_nan));
            } else {
                prop_assert_eq!(back.map(f64::to_bits), Some(bits));
            }
        }

        #[test]
        fn repr_never_panics(text in any::<String>()) {
            let _ = py_repr(&PyValue::Str(text));
        }
    }

    #[test]
    fn python_int_rules() {
        assert_eq!(parse_py_int(" 5 "), Some(5));
        assert_eq!(parse_py_int("+5"), Some(5));
        assert_eq!(parse_py_int("-0"), Some(0));
        assert_eq!(parse_py_int("1_0"), Some(10));
        assert_eq!(parse_py_int("0005"), Some(5));
        assert_eq!(parse_py_int("\u{665}"), Some(5));
        assert_eq!(parse_py_int("\u{a0}5"), Some(5));
        assert_eq!(parse_py_int("5\u{2003}"), Some(5));
        for bad in ["1__0", "_1", "1_", "4.0", "", " ", "0x10", "\x1c5", "5\x1c", "+", "-_1", "1e3", "²"] {
            assert_eq!(parse_py_int(bad), None, "{bad:?}");
        }
        assert_eq!(parse_py_int("99999999999999999999999"), Some(i64::MAX));
        assert_eq!(parse_py_int("-99999999999999999999999"), Some(i64::MIN));
    }
}
