//! Nova's JsonFilter query language (the `query` scheduler hint).
//!
//! A query is a JSON list `[op, arg, …]`, parsed once into a [`Query`] and evaluated against
//! each host through the [`Vars`] it exposes:
//!
//! | op | result |
//! |---|---|
//! | `=` | the first argument equals every other one |
//! | `<` `>` `<=` `>=` | the first argument compared with every other one holds for all (`['<', 1, 2, 3]`) |
//! | `in` | the first argument equals one of the others |
//! | `not` | the **list** of the negations of the arguments |
//! | `or`, `and` | any / all arguments truthy (`['and']` is true, `['or']` false) |
//!
//! Arguments are processed left to right: a nested list is evaluated (an empty one is true), a
//! string `$name.key.key` is a host attribute followed by dict lookups, any other string or value
//! is a literal. JSON `null`, the empty string and variables that resolve to `None` are
//! **dropped** before the operator sees them, so `['>=', '$nosuch', 1]` is `['>=', 1]`, which is
//! false: the comparisons and `in` need two arguments left. Values follow Python's rules
//! ([`pyvalue`](super::pyvalue)): `true == 1`, `1` is in `[1.0]`, `'5' != 5`.
//!
//! A top-level result that is a list (from `not`) passes when **any** element is truthy, so
//! `['not', X]` negates and `['not']` fails every host; nested in `and`/`or`, a non-empty list is
//! simply truthy, so `['and', ['not', X]]` is always true. These are Nova's quirks, kept on
//! purpose.
//!
//! Nova raises, failing the whole request, for an unknown operator (`!=` included), an ordering
//! between a number and a string (or anything with `None`), and a dotted lookup through a value
//! that is not a dict; evaluation returns a [`QueryError`] naming the operator or variable and
//! its place in the query as a path of list indices (`[2][0]`).
//!
//! A caller that evaluates one query on many hosts can resolve each variable's name once
//! ([`Query::bind`]) and answer by slot ([`Vars::attribute_at`]) instead of by name; a query
//! whose variables are all numbers and whose literals are numbers evaluates on plain `f64`s
//! ([`Query::numeric`]), with the same answers.
//!
//! Where this differs from Nova: the hint text is decoded by serde_json, which rejects the
//! `NaN` and `Infinity` literals Python's `json` accepts, and reads an integer beyond `i64` as a
//! float where Python keeps it exact; and values are copies, so Python's identity shortcut
//! (`x in [x]` is true for the same NaN object) does not apply.
//!
//! ```
//! use placewise::nova::json_query::{vars_fn, Query};
//! use placewise::nova::pyvalue::PyValue;
//! use serde_json::json;
//!
//! let query = Query::parse(&json!(["and", [">=", "$free_ram_mb", 1024], ["=", "$stats.rack", "r1"]]))?
//!     .expect("a non-empty query");
//! let host = vars_fn(|name| match name {
//!     "free_ram_mb" => PyValue::Int(2048),
//!     "stats" => PyValue::Dict(vec![("rack".into(), "r1".into())]),
//!     _ => PyValue::None,
//! });
//! assert!(query.passes(&host)?);
//! # Ok::<(), placewise::nova::json_query::QueryError>(())
//! ```

use super::pyvalue::{py_compare, py_eq, py_truthy, CompareOp, PyValue};
use smallvec::SmallVec;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

/// What a query can read from a host: Nova's `HostState` attributes.
pub trait Vars {
    /// The value of the attribute `name` (`free_ram_mb`, `stats`, `service` …), or
    /// [`PyValue::None`] when the host has no such attribute. Dotted lookups (`$stats.rack`) are
    /// done by the query on the returned [`PyValue::Dict`]; in anything else they raise, as in
    /// an attribute that holds an object without `get` (Nova's `metrics`, answered as a
    /// [`PyValue::Object`]). Called once per variable occurrence per evaluation.
    fn attribute(&self, name: &str) -> PyValue;

    /// The value of the attribute `name`, which [`Query::bind`] resolved to `slot` ahead of
    /// evaluation, so that an implementation can skip looking the name up for every host.
    /// The default ignores the slot and calls [`attribute`](Vars::attribute).
    fn attribute_at(&self, slot: u32, name: &str) -> PyValue {
        let _ = slot;
        self.attribute(name)
    }
}

impl<T: Vars + ?Sized> Vars for &T {
    fn attribute(&self, name: &str) -> PyValue {
        (**self).attribute(name)
    }

    fn attribute_at(&self, slot: u32, name: &str) -> PyValue {
        (**self).attribute_at(slot, name)
    }
}

impl<T: Vars + ?Sized> Vars for Box<T> {
    fn attribute(&self, name: &str) -> PyValue {
        (**self).attribute(name)
    }

    fn attribute_at(&self, slot: u32, name: &str) -> PyValue {
        (**self).attribute_at(slot, name)
    }
}

impl<T: Vars + ?Sized> Vars for Arc<T> {
    fn attribute(&self, name: &str) -> PyValue {
        (**self).attribute(name)
    }

    fn attribute_at(&self, slot: u32, name: &str) -> PyValue {
        (**self).attribute_at(slot, name)
    }
}

/// [`Vars`] from a closure; made by [`vars_fn`].
#[derive(Clone, Copy)]
pub struct VarsFn<F> {
    f: F,
}

/// Wraps a closure `|name| -> PyValue` as [`Vars`].
pub fn vars_fn<F: Fn(&str) -> PyValue>(f: F) -> VarsFn<F> {
    VarsFn { f }
}

impl<F: Fn(&str) -> PyValue> Vars for VarsFn<F> {
    fn attribute(&self, name: &str) -> PyValue {
        (self.f)(name)
    }
}

impl<F> fmt::Debug for VarsFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("VarsFn")
    }
}

/// The deepest nesting of lists a query may have (the query itself is depth 1). Parsing and
/// evaluation recurse once per level, so a deeper query is refused with
/// [`QueryError::TooDeep`] instead of risking the stack. Hint text is decoded by `serde_json`,
/// which already stops at 128 levels; this bound holds for values built in code as well.
pub const MAX_QUERY_DEPTH: usize = 100;

/// A query that Nova cannot evaluate: Nova raises, and the whole request fails.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// The hint text is not JSON (Python's `json.loads` raises `ValueError`).
    #[error("query is not valid json: {source}")]
    InvalidJson {
        /// What the JSON parser reported: a [`serde_json::Error`].
        #[source]
        source: crate::error::ErrorSource,
    },
    /// The decoded query is a non-empty dict, a non-zero number or `true`: Nova cannot take its
    /// element 0.
    #[error("query is a value of type `{found}`, not a list")]
    NotAList {
        /// Python type name of the query.
        found: &'static str,
    },
    /// The query nests lists deeper than [`MAX_QUERY_DEPTH`].
    #[error("query nests deeper than {max} levels")]
    TooDeep {
        /// The limit.
        max: usize,
    },
    /// The first element of a list is not one of the operators (`KeyError`).
    #[error("unknown operator `{op}` at {path}")]
    UnknownOperator {
        /// The operator as written: the string itself, or the JSON text of a non-string.
        op: String,
        /// Where it is, as list indices into the query, such as `[2][0]`.
        path: String,
    },
    /// A dotted variable looks up a key in a value that is not a dict (`AttributeError`), such
    /// as `$cpu_info.arch` where `cpu_info` is a string.
    #[error("variable `{variable}` at {path} looks up `{key}` in a value of type `{found}`, which is not a dict")]
    NotADict {
        /// The variable as written.
        variable: String,
        /// The key it tried to look up.
        key: String,
        /// Python type name of the value it looked in.
        found: &'static str,
        /// Where the variable is in the query.
        path: String,
    },
    /// An ordering between values Python cannot order (`TypeError`), such as a number and a
    /// string.
    #[error("operator `{op}` at {path} cannot order a `{left}` and a `{right}` (operand at {operand_path})")]
    Unorderable {
        /// The operator.
        op: &'static str,
        /// Where the operator is in the query.
        path: String,
        /// Python type name of the left value (of the innermost pair, for lists).
        left: &'static str,
        /// Python type name of the right value.
        right: &'static str,
        /// Where the right-hand operand is in the query.
        operand_path: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
enum Op {
    Eq,
    Cmp(CompareOp),
    In,
    Not,
    Or,
    And,
    /// Kept as written: Nova raises only when the list is evaluated.
    Unknown(String),
}

#[derive(Debug, Clone, PartialEq)]
struct Node {
    op: Op,
    /// Indices from the root to this list.
    path: Vec<usize>,
    args: Vec<Arg>,
}

#[derive(Debug, Clone, PartialEq)]
struct Arg {
    path: Vec<usize>,
    kind: ArgKind,
}

#[derive(Debug, Clone, PartialEq)]
enum ArgKind {
    Node(Node),
    Value(PyValue),
    /// `$name.key.key…`, as written, with its parts.
    Var {
        text: String,
        name: String,
        keys: Vec<String>,
        /// The slot [`Query::bind`] resolved `name` to.
        slot: Option<u32>,
    },
}

#[derive(Debug, Clone, PartialEq)]
enum Root {
    Node(Node),
    NotAList(&'static str),
}

/// A parsed JsonFilter query; see the [module docs](self) for the language.
///
/// [`Display`](fmt::Display) prints the decoded query as JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    source: serde_json::Value,
    root: Root,
}

fn path_string(path: &[usize]) -> String {
    if path.is_empty() {
        return "the top level".to_owned();
    }
    path.iter().map(|i| format!("[{i}]")).collect()
}

fn child(path: &[usize], i: usize) -> Vec<usize> {
    let mut p = Vec::with_capacity(path.len() + 1);
    p.extend_from_slice(path);
    p.push(i);
    p
}

/// Python's truth value of a JSON value.
fn json_truthy(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Null => false,
        serde_json::Value::Bool(b) => *b,
        serde_json::Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        serde_json::Value::String(s) => !s.is_empty(),
        serde_json::Value::Array(a) => !a.is_empty(),
        serde_json::Value::Object(o) => !o.is_empty(),
    }
}

/// How deeply `value` nests arrays and objects (a scalar is 0), without recursing.
fn nesting(value: &serde_json::Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((v, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &serde_json::Value>> = match v {
            serde_json::Value::Array(a) => Box::new(a.iter()),
            serde_json::Value::Object(o) => Box::new(o.values()),
            _ => continue,
        };
        deepest = deepest.max(depth + 1);
        stack.extend(children.map(|c| (c, depth + 1)));
    }
    deepest
}

fn parse_node(items: &[serde_json::Value], path: Vec<usize>) -> Node {
    let op = match items.first() {
        Some(serde_json::Value::String(s)) => match s.as_str() {
            "=" => Op::Eq,
            "<" => Op::Cmp(CompareOp::Lt),
            ">" => Op::Cmp(CompareOp::Gt),
            "<=" => Op::Cmp(CompareOp::Le),
            ">=" => Op::Cmp(CompareOp::Ge),
            "in" => Op::In,
            "not" => Op::Not,
            "or" => Op::Or,
            "and" => Op::And,
            other => Op::Unknown(other.to_owned()),
        },
        Some(other) => Op::Unknown(other.to_string()),
        None => Op::Unknown(String::new()),
    };
    let mut args = Vec::with_capacity(items.len().saturating_sub(1));
    for (i, item) in items.iter().enumerate().skip(1) {
        let path = child(&path, i);
        let kind = match item {
            // Nova drops these before the operator sees them.
            serde_json::Value::Null => continue,
            serde_json::Value::String(s) if s.is_empty() => continue,
            serde_json::Value::Array(a) if a.is_empty() => ArgKind::Value(PyValue::Bool(true)),
            serde_json::Value::Array(a) => ArgKind::Node(parse_node(a, path.clone())),
            serde_json::Value::String(s) => match s.strip_prefix('$') {
                Some(var) => {
                    let mut parts = var.split('.').map(str::to_owned);
                    let name = parts.next().unwrap_or_default();
                    ArgKind::Var { text: s.clone(), name, keys: parts.collect(), slot: None }
                }
                None => ArgKind::Value(PyValue::Str(s.clone())),
            },
            other => ArgKind::Value(PyValue::from(other)),
        };
        args.push(Arg { path, kind });
    }
    Node { op, path, args }
}

impl Query {
    /// Parses a query given either as the hint text (a JSON string, which is decoded first, as
    /// Nova does) or as the already-decoded JSON value.
    ///
    /// Returns `Ok(None)` for the query that lets every host pass: an empty hint, or a decoded
    /// value that Python finds false (`[]`, `null`, `""`, `0`, `false`, `{}`). A decoded string
    /// is, as in Nova, a sequence of one-character elements (`"<ab"` is `['<', 'a', 'b']`).
    /// Computes in O(size of the query).
    ///
    /// # Errors
    ///
    /// [`QueryError::InvalidJson`] when the hint text does not decode. Nothing else is checked
    /// here: an unknown operator or a non-list query is reported when the query is evaluated,
    /// as Nova raises only then (see [`validate`](Self::validate) to find such errors early).
    pub fn parse(query: &serde_json::Value) -> Result<Option<Query>, QueryError> {
        let decoded = match query {
            serde_json::Value::String(text) if text.is_empty() => return Ok(None),
            serde_json::Value::String(text) => serde_json::from_str::<serde_json::Value>(text)
                .map_err(|e| QueryError::InvalidJson { source: crate::error::ErrorSource::new(e) })?,
            other => other.clone(),
        };
        if !json_truthy(&decoded) {
            return Ok(None);
        }
        if nesting(&decoded) > MAX_QUERY_DEPTH {
            return Err(QueryError::TooDeep { max: MAX_QUERY_DEPTH });
        }
        let root = match &decoded {
            serde_json::Value::Array(items) => Root::Node(parse_node(items, Vec::new())),
            serde_json::Value::String(text) => {
                // Python indexes a string as a sequence of one-character strings.
                let chars: Vec<serde_json::Value> = text.chars().map(|c| c.to_string().into()).collect();
                Root::Node(parse_node(&chars, Vec::new()))
            }
            other => Root::NotAList(PyValue::from(other).type_name()),
        };
        Ok(Some(Query { source: decoded, root }))
    }

    /// Resolves every variable's attribute name once, ahead of evaluation: `slot(name)` gives
    /// the number a [`Vars`] later receives in [`Vars::attribute_at`] instead of looking the
    /// name up for every host (`None` keeps [`Vars::attribute`] for that name). Binding changes
    /// no result as long as the [`Vars`] answers a slot as it answers the name. Computes in
    /// O(size of the query) calls of `slot`.
    pub fn bind(&mut self, slot: impl Fn(&str) -> Option<u32>) {
        let Root::Node(root) = &mut self.root else { return };
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            for arg in &mut node.args {
                match &mut arg.kind {
                    ArgKind::Node(n) => stack.push(n),
                    ArgKind::Var { name, slot: s, .. } => *s = slot(name),
                    ArgKind::Value(_) => {}
                }
            }
        }
    }

    /// [`parse`](Self::parse) for the hint text.
    ///
    /// # Errors
    ///
    /// As [`parse`](Self::parse).
    pub fn parse_str(hint: &str) -> Result<Option<Query>, QueryError> {
        Query::parse(&serde_json::Value::String(hint.to_owned()))
    }

    /// The decoded query.
    pub fn as_json(&self) -> &serde_json::Value {
        &self.source
    }

    /// Reports an error that every evaluation raises whatever the host: a non-list query, or
    /// the first unknown operator in evaluation order. (An evaluation may raise a host-dependent
    /// error first, from a variable or a comparison earlier in the query.) Nova raises these only
    /// when the filter runs on a host, so a caller that wants Nova's exact outcome reports them
    /// only then.
    ///
    /// # Errors
    ///
    /// [`QueryError::NotAList`] or [`QueryError::UnknownOperator`].
    pub fn validate(&self) -> Result<(), QueryError> {
        fn first_unknown(node: &Node) -> Result<(), QueryError> {
            if let Op::Unknown(op) = &node.op {
                return Err(QueryError::UnknownOperator { op: op.clone(), path: path_string(&child(&node.path, 0)) });
            }
            node.args.iter().try_for_each(|a| match &a.kind {
                ArgKind::Node(n) => first_unknown(n),
                _ => Ok(()),
            })
        }
        match &self.root {
            Root::NotAList(found) => Err(QueryError::NotAList { found }),
            Root::Node(node) => first_unknown(node),
        }
    }

    /// Whether the host passes, exactly as Nova's `JsonFilter.host_passes`. Computes in
    /// O(size of the query) plus the [`Vars`] lookups; allocates the argument lists.
    ///
    /// # Errors
    ///
    /// Where Nova raises; see [`QueryError`]. Every argument is evaluated before its operator
    /// runs (Nova does not short-circuit `and`/`or`), so the first error in evaluation order is
    /// returned.
    pub fn passes(&self, vars: &dyn Vars) -> Result<bool, QueryError> {
        match &self.root {
            Root::NotAList(found) => Err(QueryError::NotAList { found }),
            Root::Node(node) => Ok(match eval(node, vars)? {
                PyValue::List(items) => items.iter().any(py_truthy),
                other => py_truthy(&other),
            }),
        }
    }
}

/// The largest integer literal a [`NumericQuery`] takes: every integer up to it in magnitude is
/// exact as an `f64`.
const EXACT_INT: i64 = 1 << 53;

/// A [`Query`] that reads only variables the caller knows to be numbers, with number literals,
/// made by [`Query::numeric`]: it evaluates on plain `f64`s, with no [`PyValue`] and no
/// allocation, and answers as [`Query::passes`] does.
///
/// Why the answers agree: every value it compares is exact as an `f64` (a variable's finite
/// value, whether the [`Vars`] shows it as an `int` or a `float`; an integer literal of at most
/// 2^53 in magnitude; a finite float literal; a `bool` as 0 or 1), Python compares numbers
/// exactly, and so does `f64` arithmetic on exact values. No such query can raise.
#[derive(Debug, Clone, PartialEq)]
pub struct NumericQuery {
    root: NumNode,
    slots: Vec<u32>,
}

/// A list of a [`NumericQuery`]: its result is a `bool`.
#[derive(Debug, Clone, PartialEq)]
enum NumNode {
    /// `=`, `in` or an ordering over its operands (two or more, or the list is false).
    Compare { op: Op, operands: Vec<Operand> },
    /// `and` (`true`) or `or` (`false`) over the truth of its arguments.
    Join { all: bool, args: Vec<Truth> },
}

/// An operand of a comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Operand {
    /// The value of variable number `.0` (an index into [`NumericQuery::slots`]).
    Var(usize),
    /// A literal.
    Lit(f64),
}

/// An argument of `and` or `or`.
#[derive(Debug, Clone, PartialEq)]
enum Truth {
    Node(NumNode),
    /// A literal's truth.
    Const(bool),
    /// Whether variable number `.0` is not zero.
    Var(usize),
}

impl Query {
    /// The query on numbers alone, when it is one: every list is `=`, `in`, an ordering, `and`
    /// or `or`; a comparison's operands are number or `bool` literals (integers up to 2^53 in
    /// magnitude) and variables without dotted keys whose slot ([`bind`](Query::bind)) satisfies
    /// `numeric`; `and` and `or` take lists, literals of any kind and such variables. `None`
    /// for any other query (a top-level `not`, a string compared, a nested list compared, an
    /// unbound variable). `numeric(slot)` must hold only for slots the caller's [`Vars`]
    /// answers with a number. Computes in O(size of the query).
    pub fn numeric(&self, numeric: impl Fn(u32) -> bool) -> Option<NumericQuery> {
        let Root::Node(node) = &self.root else { return None };
        let mut slots = Vec::new();
        let root = numeric_node(node, &numeric, &mut slots)?;
        Some(NumericQuery { root, slots })
    }
}

/// The index of a variable argument in `slots` (added on first use), if it is a numeric one.
fn numeric_var(kind: &ArgKind, numeric: &impl Fn(u32) -> bool, slots: &mut Vec<u32>) -> Option<usize> {
    let ArgKind::Var { name, keys, slot: Some(slot), .. } = kind else { return None };
    if name.is_empty() || !keys.is_empty() || !numeric(*slot) {
        return None;
    }
    Some(slots.iter().position(|s| s == slot).unwrap_or_else(|| {
        slots.push(*slot);
        slots.len() - 1
    }))
}

fn numeric_node(node: &Node, numeric: &impl Fn(u32) -> bool, slots: &mut Vec<u32>) -> Option<NumNode> {
    match node.op {
        Op::Eq | Op::In | Op::Cmp(_) => {
            let operands = node
                .args
                .iter()
                .map(|arg| match &arg.kind {
                    ArgKind::Value(PyValue::Int(i)) if i.unsigned_abs() <= EXACT_INT as u64 => {
                        Some(Operand::Lit(*i as f64))
                    }
                    ArgKind::Value(PyValue::Float(f)) if f.is_finite() => Some(Operand::Lit(*f)),
                    ArgKind::Value(PyValue::Bool(b)) => Some(Operand::Lit(f64::from(u8::from(*b)))),
                    var @ ArgKind::Var { .. } => numeric_var(var, numeric, slots).map(Operand::Var),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()?;
            Some(NumNode::Compare { op: node.op.clone(), operands })
        }
        Op::And | Op::Or => {
            let args = node
                .args
                .iter()
                .map(|arg| match &arg.kind {
                    ArgKind::Node(n) => numeric_node(n, numeric, slots).map(Truth::Node),
                    ArgKind::Value(v) => Some(Truth::Const(py_truthy(v))),
                    var @ ArgKind::Var { .. } => numeric_var(var, numeric, slots).map(Truth::Var),
                })
                .collect::<Option<Vec<_>>>()?;
            Some(NumNode::Join { all: node.op == Op::And, args })
        }
        Op::Not | Op::Unknown(_) => None,
    }
}

impl NumericQuery {
    /// The slots the query reads, in the order [`passes`](NumericQuery::passes) takes their
    /// values.
    pub fn slots(&self) -> &[u32] {
        &self.slots
    }

    /// [`Query::passes`] for a host whose variable of slot `slots()[i]` is the number
    /// `values[i]` (values past the slots are ignored); `None` when one of them is not finite
    /// (not a JSON number: evaluate the [`Query`] instead) or is missing. Computes in O(size of the query), without allocating.
    pub fn passes(&self, values: &[f64]) -> Option<bool> {
        let values = values.get(..self.slots.len())?;
        if values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        Some(self.root.holds(values))
    }
}

impl NumNode {
    fn holds(&self, values: &[f64]) -> bool {
        match self {
            NumNode::Compare { op, operands } => {
                let value = |o: &Operand| match *o {
                    Operand::Var(i) => values[i],
                    Operand::Lit(x) => x,
                };
                let Some((first, rest)) = operands.split_first() else { return false };
                if rest.is_empty() {
                    return false;
                }
                let a = value(first);
                match op {
                    Op::Eq => rest.iter().all(|o| a == value(o)),
                    Op::In => rest.iter().any(|o| a == value(o)),
                    Op::Cmp(c) => rest.iter().all(|o| c.holds(a.partial_cmp(&value(o)))),
                    _ => false,
                }
            }
            NumNode::Join { all, args } => {
                let truth = |t: &Truth| match t {
                    Truth::Node(n) => n.holds(values),
                    Truth::Const(b) => *b,
                    Truth::Var(i) => values[*i] != 0.0,
                };
                if *all {
                    args.iter().all(truth)
                } else {
                    args.iter().any(truth)
                }
            }
        }
    }
}

impl fmt::Display for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.source)
    }
}

fn resolve(
    text: &str,
    name: &str,
    keys: &[String],
    slot: Option<u32>,
    path: &[usize],
    vars: &dyn Vars,
) -> Result<PyValue, QueryError> {
    // Python's getattr(host_state, '', None) is None.
    if name.is_empty() {
        return Ok(PyValue::None);
    }
    let mut value = match slot {
        Some(slot) => vars.attribute_at(slot, name),
        None => vars.attribute(name),
    };
    for key in keys {
        value = match value {
            PyValue::None => return Ok(PyValue::None),
            PyValue::Dict(mut pairs) => match pairs.iter().rposition(|(k, _)| k == key) {
                Some(i) => pairs.swap_remove(i).1,
                None => return Ok(PyValue::None),
            },
            other => {
                return Err(QueryError::NotADict {
                    variable: text.to_owned(),
                    key: key.clone(),
                    found: other.type_name(),
                    path: path_string(path),
                })
            }
        };
    }
    Ok(value)
}

fn eval(node: &Node, vars: &dyn Vars) -> Result<PyValue, QueryError> {
    // Nova looks the operator up before it evaluates any argument.
    if let Op::Unknown(op) = &node.op {
        return Err(QueryError::UnknownOperator { op: op.clone(), path: path_string(&child(&node.path, 0)) });
    }
    // Most lists are short: their arguments stay on the stack.
    let mut args: SmallVec<[(Cow<'_, PyValue>, &[usize]); 4]> = SmallVec::with_capacity(node.args.len());
    for arg in &node.args {
        let value = match &arg.kind {
            ArgKind::Node(n) => Cow::Owned(eval(n, vars)?),
            ArgKind::Value(v) => Cow::Borrowed(v),
            ArgKind::Var { text, name, keys, slot } => match resolve(text, name, keys, *slot, &arg.path, vars)? {
                PyValue::None => continue,
                v => Cow::Owned(v),
            },
        };
        args.push((value, &arg.path));
    }
    let compared = |args: &[(Cow<'_, PyValue>, &[usize])]| args.len() >= 2;
    Ok(PyValue::Bool(match &node.op {
        Op::Eq => compared(&args) && args[1..].iter().all(|(v, _)| py_eq(&args[0].0, v)),
        Op::In => compared(&args) && args[1..].iter().any(|(v, _)| py_eq(&args[0].0, v)),
        Op::Cmp(op) => {
            if !compared(&args) {
                false
            } else {
                // Nova compares with every operand, so a later TypeError still raises.
                let mut all = true;
                for (v, operand_path) in &args[1..] {
                    match py_compare(*op, &args[0].0, v) {
                        Ok(holds) => all &= holds,
                        Err(e) => {
                            return Err(QueryError::Unorderable {
                                op: op.as_str(),
                                path: path_string(&child(&node.path, 0)),
                                left: e.left,
                                right: e.right,
                                operand_path: path_string(operand_path),
                            })
                        }
                    }
                }
                all
            }
        }
        Op::Not => return Ok(PyValue::List(args.iter().map(|(v, _)| PyValue::Bool(!py_truthy(v))).collect())),
        Op::Or => args.iter().any(|(v, _)| py_truthy(v)),
        Op::And => args.iter().all(|(v, _)| py_truthy(v)),
        Op::Unknown(_) => false,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// A host like Nova's test fixtures: stats values are strings, cpu_info is a JSON string.
    fn host() -> impl Vars {
        vars_fn(|name| match name {
            "free_ram_mb" => PyValue::Int(1024),
            "free_disk_mb" => PyValue::Int(200 * 1024),
            "vcpus_total" => PyValue::Int(4),
            "vcpus_used" => PyValue::Int(0),
            "ratio" => PyValue::Float(1.5),
            "enabled" => PyValue::Bool(true),
            "disabled_flag" => PyValue::Bool(false),
            "zero" => PyValue::Int(0),
            "empty" => PyValue::Str(String::new()),
            "host" => PyValue::Str("host1".into()),
            "cpu_info" => PyValue::Str("{\"arch\": \"x86_64\"}".into()),
            "features" => PyValue::List(vec!["avx".into()]),
            "stats" => PyValue::Dict(vec![
                ("n".into(), "5".into()),
                ("rack".into(), "r1".into()),
                ("nested".into(), PyValue::Dict(vec![("deep".into(), PyValue::Int(7))])),
                ("nothing".into(), PyValue::None),
            ]),
            "service" => PyValue::Dict(vec![("disabled".into(), PyValue::Bool(false))]),
            _ => PyValue::None,
        })
    }

    fn run(q: serde_json::Value) -> Result<bool, QueryError> {
        match Query::parse(&q)? {
            None => Ok(true),
            Some(query) => query.passes(&host()),
        }
    }

    fn pass(q: serde_json::Value) {
        assert_eq!(run(q.clone()), Ok(true), "{q}");
    }

    fn fail(q: serde_json::Value) {
        assert_eq!(run(q.clone()), Ok(false), "{q}");
    }

    #[test]
    fn empty_queries_pass_every_host() {
        for q in [json!(""), json!("[]"), json!("null"), json!([]), json!(null), json!("0"), json!("{}"), json!(false)]
        {
            assert_eq!(Query::parse(&q), Ok(None), "{q}");
        }
        assert_eq!(Query::parse_str(""), Ok(None));
        assert!(matches!(Query::parse_str("  "), Err(QueryError::InvalidJson { .. })));
        assert!(matches!(Query::parse_str("[1,"), Err(QueryError::InvalidJson { .. })));
    }

    #[test]
    fn hint_text_is_decoded() {
        assert_eq!(
            Query::parse_str(r#"[">=", "$free_ram_mb", 512]"#).map(|q| q.map(|q| q.passes(&host()))),
            Ok(Some(Ok(true)))
        );
        pass(json!(r#"["=", "$stats.rack", "r1"]"#));
        fail(json!(r#"["=", "$stats.rack", "r2"]"#));
        let q = Query::parse_str(r#"["=", 1, 1]"#).ok().flatten();
        assert_eq!(q.map(|q| q.to_string()), Some(r#"["=",1,1]"#.to_owned()));
    }

    #[test]
    fn equality() {
        pass(json!(["=", "$free_ram_mb", 1024]));
        fail(json!(["=", "$free_ram_mb", 1023]));
        pass(json!(["=", 1, 1, 1.0, true]));
        fail(json!(["=", 1, 1, 2]));
        // Stats values are strings.
        fail(json!(["=", "$stats.n", 5]));
        pass(json!(["=", "$stats.n", "5"]));
        pass(json!(["=", true, 1]));
        pass(json!(["=", "$enabled", 1]));
        pass(json!(["=", {"a": 1}, {"a": 1.0}]));
        fail(json!(["=", "a", "A"]));
        fail(json!(["=", 1]));
        fail(json!(["="]));
    }

    #[test]
    fn ordering() {
        pass(json!(["<", 1, 2, 3]));
        fail(json!(["<", 2, 1, 3]));
        pass(json!([">=", "$free_ram_mb", 1024, 512]));
        pass(json!([">", "$ratio", 1]));
        pass(json!(["<=", "$vcpus_used", 0]));
        pass(json!(["<", "10", "9"]));
        pass(json!(["<", false, true]));
        fail(json!(["<", 1]));
        // A dropped argument leaves too few.
        fail(json!([">=", "$nosuch", 1]));
        fail(json!([">=", 1, "$nosuch"]));
        fail(json!([">=", 1, null]));
        fail(json!(["<", "", 1]));
        pass(json!(["<", ["not", true], ["not", false]]));
        pass(json!(["<", ["=", 1, 2], ["=", 1, 1]]));
    }

    #[test]
    fn ordering_errors() {
        let err = run(json!(["<", "$free_ram_mb", "2048"]));
        assert_eq!(
            err,
            Err(QueryError::Unorderable {
                op: "<",
                path: "[0]".into(),
                left: "int",
                right: "str",
                operand_path: "[2]".into()
            })
        );
        assert_eq!(
            err.unwrap_err().to_string(),
            "operator `<` at [0] cannot order a `int` and a `str` (operand at [2])"
        );
        // Nova compares with every operand, so a TypeError after a false comparison still raises.
        assert!(matches!(run(json!(["<", 5, 1, "a"])), Err(QueryError::Unorderable { .. })));
        assert!(matches!(run(json!([">", {"a": 1}, {"a": 0}])), Err(QueryError::Unorderable { .. })));
        assert!(matches!(run(json!(["<", "$stats.n", 5])), Err(QueryError::Unorderable { .. })));
        assert!(matches!(
            run(json!(["and", [">=", ["not", 1], 1]])),
            Err(QueryError::Unorderable { left: "list", right: "int", .. })
        ));
        // Equality between a number and a string is just false.
        fail(json!(["=", "$free_ram_mb", "1024"]));
    }

    #[test]
    fn membership() {
        pass(json!(["in", 1, [], 1.0]));
        pass(json!(["in", "$stats.rack", "r0", "r1"]));
        fail(json!(["in", "$stats.rack", "r0", "r2"]));
        pass(json!(["in", 1, 1.0]));
        pass(json!(["in", true, 1]));
        fail(json!(["in", "$nosuch", "r1", "r2"]));
        fail(json!(["in", "r1"]));
        // A variable holding a list is one value, not a container to search.
        fail(json!(["in", "avx", "$features"]));
    }

    #[test]
    fn not_returns_a_list() {
        pass(json!(["not", false]));
        fail(json!(["not", true]));
        // Top level: any negation truthy.
        pass(json!(["not", true, false]));
        fail(json!(["not", true, 1]));
        fail(json!(["not"]));
        fail(json!(["not", null]));
        // Nested in and/or, a non-empty list is simply true.
        pass(json!(["and", ["not", true]]));
        pass(json!(["and", ["not", ["=", 1, 1]]]));
        fail(json!(["and", ["not"]]));
        pass(json!(["or", ["not", true]]));
        // The inner result [false] is a non-empty list, so truthy: double negation is false.
        fail(json!(["not", ["not", true]]));
    }

    #[test]
    fn and_or() {
        pass(json!(["and"]));
        fail(json!(["or"]));
        pass(json!(["and", true, 1, "x"]));
        fail(json!(["and", true, 0]));
        pass(json!(["or", false, 0, "x"]));
        fail(json!(["or", false, 0, "$nosuch"]));
        pass(json!(["and", [], true]));
        pass(json!(["or", []]));
        pass(json!(["and", ["=", "$stats.rack", "r1"], [">=", "$free_disk_mb", 1024]]));
        fail(json!(["and", ["=", "$stats.rack", "r1"], [">=", "$free_disk_mb", 1024 * 1024]]));
        // A dict literal is truthy when non-empty.
        pass(json!(["and", {"a": 1}]));
        fail(json!(["and", {}]));
    }

    #[test]
    fn dropping() {
        // Not dropped: a variable holding "", 0 or false.
        fail(json!(["or", "$empty"]));
        pass(json!(["=", "$empty", "$empty"]));
        pass(json!(["=", "$zero", 0]));
        pass(json!(["=", "$disabled_flag", false]));
        pass(json!(["not", "$disabled_flag"]));
        // Dropped: null, "", a missing attribute or key, a key whose value is None, bare "$".
        pass(json!(["=", 1, null, 1]));
        pass(json!(["=", 1, "", 1]));
        pass(json!(["=", 1, "$nosuch", 1]));
        pass(json!(["=", 1, "$stats.nosuch", 1]));
        pass(json!(["=", 1, "$stats.nothing", 1]));
        pass(json!(["=", 1, "$", 1]));
        pass(json!(["=", 1, "$.x", 1]));
        pass(json!(["=", 1, "$nosuch.x.y", 1]));
        fail(json!(["=", "$", "$"]));
        // "$" alone is a variable, but "a$" is a literal.
        pass(json!(["=", "a$", "a$"]));
    }

    #[test]
    fn dotted_lookups() {
        pass(json!(["=", "$service.disabled", false]));
        pass(json!(["=", "$stats.nested.deep", 7]));
        // A missing key ends the lookup: nothing is looked up in the None.
        pass(json!(["=", 1, "$stats.nested.nosuch.more", 1]));
        pass(json!(["=", 1, "$stats.nothing.more", 1]));
        let err = run(json!(["and", ["=", "$cpu_info.arch", "x86_64"]]));
        assert_eq!(
            err,
            Err(QueryError::NotADict {
                variable: "$cpu_info.arch".into(),
                key: "arch".into(),
                found: "str",
                path: "[1][1]".into()
            })
        );
        assert_eq!(
            err.unwrap_err().to_string(),
            "variable `$cpu_info.arch` at [1][1] looks up `arch` in a value of type `str`, which is not a dict"
        );
        assert!(matches!(run(json!(["=", "$stats.n.x", 1])), Err(QueryError::NotADict { found: "str", .. })));
        assert!(matches!(run(json!(["=", "$free_ram_mb.x", 1])), Err(QueryError::NotADict { found: "int", .. })));
        assert!(matches!(run(json!(["=", "$features.0", 1])), Err(QueryError::NotADict { found: "list", .. })));
        assert!(matches!(run(json!(["=", "$enabled.", 1])), Err(QueryError::NotADict { found: "bool", .. })));
    }

    /// Nova's three object attributes; `metrics` as reported (`has_metrics`).
    fn objects(has_metrics: bool) -> impl Vars {
        use crate::nova::pyvalue::PyObject;
        vars_fn(move |name| {
            let (type_name, truthy, ordered) = match name {
                "metrics" => ("MonitorMetricList", has_metrics, false),
                "pci_stats" => ("PciDeviceStats", true, false),
                "updated" => ("datetime.datetime", true, true),
                "free_ram_mb" => return PyValue::Int(1024),
                _ => return PyValue::None,
            };
            PyValue::Object(PyObject { type_name, truthy, ordered })
        })
    }

    #[test]
    fn a_dotted_lookup_in_an_object_without_get_raises() {
        let passes = |q| Query::parse(&q).unwrap().unwrap().passes(&objects(true));
        assert_eq!(
            passes(json!(["=", "$metrics.cpu.percent", 1])),
            Err(QueryError::NotADict {
                variable: "$metrics.cpu.percent".into(),
                key: "cpu".into(),
                found: "MonitorMetricList",
                path: "[1]".into()
            })
        );
        // Without a key nothing is looked up; other attributes answer as before.
        assert_eq!(passes(json!(["=", "$metrics", 1])), Ok(false));
        assert_eq!(passes(json!(["=", "$stats.x", 1])), Ok(false));
    }

    #[test]
    fn objects_alone_are_tested_compared_and_refused_ordering_as_in_python() {
        let passes = |has_metrics, q| Query::parse(&q).unwrap().unwrap().passes(&objects(has_metrics));
        // Truth: a metric list is true when the host reports a metric; the others always.
        for (q, with, without) in [
            (json!(["or", "$metrics"]), true, false),
            (json!(["not", "$metrics"]), false, true),
            (json!(["and", "$metrics", ["=", 1, 1]]), true, false),
            (json!(["or", "$pci_stats"]), true, true),
            (json!(["or", "$updated"]), true, true),
        ] {
            assert_eq!((passes(true, q.clone()), passes(false, q.clone())), (Ok(with), Ok(without)), "{q}");
        }
        // An object equals itself only; `in` tests equality.
        for q in [json!(["=", "$metrics", "$metrics"]), json!(["in", "$metrics", 1, "$metrics"])] {
            assert_eq!(passes(false, q.clone()), Ok(true), "{q}");
        }
        for q in [json!(["=", "$metrics", "$pci_stats"]), json!(["=", "$metrics", []]), json!(["in", 1, "$metrics"])] {
            assert_eq!(passes(true, q.clone()), Ok(false), "{q}");
        }
        // Ordering raises, except a datetime against itself.
        let unorderable = |q: serde_json::Value, left: &str, right: &str| match passes(true, q.clone()) {
            Err(QueryError::Unorderable { left: l, right: r, .. }) => assert_eq!((l, r), (left, right), "{q}"),
            other => panic!("{q}: {other:?}"),
        };
        unorderable(json!(["<", "$metrics", 1]), "MonitorMetricList", "int");
        unorderable(json!([">", 1, "$metrics"]), "int", "MonitorMetricList");
        unorderable(json!(["<", "$pci_stats", "$pci_stats"]), "PciDeviceStats", "PciDeviceStats");
        unorderable(json!([">=", "$free_ram_mb", "$updated"]), "int", "datetime.datetime");
        assert_eq!(passes(true, json!(["<", "$updated", "$updated"])), Ok(false));
        assert_eq!(passes(true, json!(["<=", "$updated", "$updated"])), Ok(true));
    }

    #[test]
    fn unknown_operators() {
        let err = run(json!(["!=", 1, 2]));
        assert_eq!(err, Err(QueryError::UnknownOperator { op: "!=".into(), path: "[0]".into() }));
        assert_eq!(err.unwrap_err().to_string(), "unknown operator `!=` at [0]");
        assert_eq!(
            run(json!(["and", true, ["or", ["==", 1, 1]]])),
            Err(QueryError::UnknownOperator { op: "==".into(), path: "[2][1][0]".into() })
        );
        assert_eq!(run(json!([null, 1])), Err(QueryError::UnknownOperator { op: "null".into(), path: "[0]".into() }));
        assert_eq!(
            run(json!([["="], 1])),
            Err(QueryError::UnknownOperator { op: "[\"=\"]".into(), path: "[0]".into() })
        );
        assert!(matches!(run(json!([1])), Err(QueryError::UnknownOperator { .. })));
        assert!(matches!(run(json!(["AND", true])), Err(QueryError::UnknownOperator { .. })));
        // Raised even where the result would not matter (no short-circuit).
        assert!(matches!(run(json!(["or", true, ["nope"]])), Err(QueryError::UnknownOperator { .. })));
        // The operator is looked up before its arguments are evaluated.
        assert!(matches!(run(json!(["bad", "$cpu_info.arch"])), Err(QueryError::UnknownOperator { .. })));
        // Arguments left to right: the variable error comes first here.
        assert!(matches!(run(json!(["and", ["=", "$cpu_info.arch"], ["bad"]])), Err(QueryError::NotADict { .. })));
    }

    #[test]
    fn non_list_queries() {
        for (q, found) in [(json!({"a": 1}), "dict"), (json!(5), "int"), (json!(true), "bool"), (json!("2.5"), "float")]
        {
            let parsed = Query::parse(&q);
            let query = parsed.ok().flatten();
            assert_eq!(query.as_ref().map(|q| q.passes(&host())), Some(Err(QueryError::NotAList { found })), "{q}");
            assert_eq!(query.map(|q| q.validate()), Some(Err(QueryError::NotAList { found })));
        }
        // A decoded string is a sequence of characters: "<ab" is ['<', 'a', 'b'].
        pass(json!("\"<ab\""));
        fail(json!("\"<ba\""));
        fail(json!("\"=\""));
        assert!(matches!(run(json!("\"and\"")), Err(QueryError::UnknownOperator { .. })));
    }

    #[test]
    fn validate_finds_unknown_operators_in_evaluation_order() {
        let q = |v: serde_json::Value| Query::parse(&v).ok().flatten();
        assert_eq!(
            q(json!(["and", ["=", 1, 1], ["or", ["x"]], ["y"]])).map(|q| q.validate()),
            Some(Err(QueryError::UnknownOperator { op: "x".into(), path: "[2][1][0]".into() }))
        );
        assert_eq!(q(json!(["and", ["=", "$cpu_info.arch", 1]])).map(|q| q.validate()), Some(Ok(())));
        assert_eq!(
            q(json!(["bad", ["worse"]])).map(|q| q.validate()),
            Some(Err(QueryError::UnknownOperator { op: "bad".into(), path: "[0]".into() }))
        );
    }

    #[test]
    fn pass_through_impls_and_object_safety() {
        let q = Query::parse(&json!(["=", "$host", "host1"])).ok().flatten();
        let boxed: Box<dyn Vars> = Box::new(host());
        let arc: Arc<dyn Vars> = Arc::new(host());
        let h = host();
        assert_eq!(q.as_ref().map(|q| q.passes(&boxed)), Some(Ok(true)));
        assert_eq!(q.as_ref().map(|q| q.passes(&arc)), Some(Ok(true)));
        assert_eq!(q.as_ref().map(|q| q.passes(&&h)), Some(Ok(true)));
        assert_eq!(format!("{:?}", vars_fn(|_| PyValue::None)), "VarsFn");
    }

    fn json_value() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(json!(null)),
            any::<bool>().prop_map(|b| json!(b)),
            (-3i64..4).prop_map(|i| json!(i)),
            prop::sample::select(vec![0.5, 1.0, -2.0, 1e300]).prop_map(|f| json!(f)),
            prop::sample::select(vec![
                "=",
                "<",
                ">",
                "<=",
                ">=",
                "in",
                "not",
                "or",
                "and",
                "!=",
                "",
                "$",
                "$free_ram_mb",
                "$stats",
                "$stats.n",
                "$stats.nested.deep",
                "$cpu_info.arch",
                "$nosuch",
                "$enabled",
                "a",
                "5",
            ])
            .prop_map(|s| json!(s)),
        ];
        leaf.prop_recursive(4, 32, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(serde_json::Value::Array),
                prop::collection::vec(inner, 0..2).prop_map(|v| json!({"k": v})),
            ]
        })
    }

    /// The attributes [`Slotted`] answers by slot, in slot order.
    const SLOTTED: &[&str] = &["free_ram_mb", "stats", "enabled", "cpu_info", "zero", "empty", "features"];

    /// [`host`] for a query bound with [`slotted`]: it answers slots only, and a name it is
    /// asked for directly gets a value no query expects.
    struct Slotted;

    impl Vars for Slotted {
        fn attribute(&self, _name: &str) -> PyValue {
            PyValue::Str("asked by name".into())
        }

        fn attribute_at(&self, slot: u32, _name: &str) -> PyValue {
            SLOTTED.get(slot as usize).map_or(PyValue::None, |name| host().attribute(name))
        }
    }

    fn slotted(name: &str) -> Option<u32> {
        Some(SLOTTED.iter().position(|&n| n == name).unwrap_or(SLOTTED.len()) as u32)
    }

    #[test]
    fn numeric_queries_take_numbers_only() {
        let numeric = |v: serde_json::Value| {
            let mut q = Query::parse(&v).ok().flatten().expect("a query");
            q.bind(|name| (name == "free_ram_mb" || name == "num_io_ops").then_some(7));
            q.numeric(|slot| slot == 7).map(|n| n.slots().to_vec())
        };
        assert_eq!(numeric(json!(["and", [">=", "$free_ram_mb", 1024], ["<", "$num_io_ops", 8]])), Some(vec![7]));
        assert_eq!(numeric(json!(["or", true, "$free_ram_mb", ["in", 1, 2.5, false]])), Some(vec![7]));
        for refused in [
            json!(["not", ["=", "$free_ram_mb", 1]]),
            json!(["=", "$free_ram_mb", "1"]),
            json!(["=", "$free_ram_mb", 9_007_199_254_740_993i64]),
            json!(["=", "$stats", 1]),
            json!(["=", "$free_ram_mb.x", 1]),
            json!(["<", ["=", 1, 1], 2]),
            json!(["and", ["bad"]]),
        ] {
            assert_eq!(numeric(refused.clone()), None, "{refused}");
        }
    }

    #[test]
    fn bound_variables_read_slots() {
        let mut q = Query::parse(&json!(["and", ["=", "$stats.rack", "r1"], ["or", [">", "$free_ram_mb", 1]]]))
            .ok()
            .flatten()
            .expect("a query");
        assert!(q.passes(&Slotted).is_err(), "unbound: `stats` asked by name is a string");
        q.bind(slotted);
        assert_eq!(q.passes(&Slotted), Ok(true));
        // Pass-through impls forward slots.
        let boxed: Box<dyn Vars> = Box::new(Slotted);
        assert_eq!(
            (q.passes(&boxed), q.passes(&Arc::new(Slotted)), q.passes(&&Slotted)),
            (Ok(true), Ok(true), Ok(true))
        );
    }

    /// Queries whose every list starts with a known operator, so that evaluation reaches the
    /// variables at every depth.
    fn well_formed() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            (-3i64..4).prop_map(|i| json!(i)),
            prop::sample::select(vec![
                "$free_ram_mb",
                "$stats",
                "$stats.n",
                "$stats.rack",
                "$enabled",
                "$zero",
                "$empty",
                "$features",
                "$nosuch",
                "r1",
                "5",
            ])
            .prop_map(|s| json!(s)),
        ];
        let ops = prop::sample::select(vec!["=", "<", ">=", "in", "not", "or", "and"]);
        leaf.prop_recursive(4, 32, 4, move |inner| {
            (ops.clone(), prop::collection::vec(inner, 0..4)).prop_map(|(op, args)| {
                let mut list = vec![json!(op)];
                list.extend(args);
                serde_json::Value::Array(list)
            })
        })
    }

    /// Queries mostly on the numeric variables `$a`, `$b`, `$c` (slots 0 to 2) and number
    /// literals, with now and then something [`Query::numeric`] must refuse.
    fn numeric_like() -> impl Strategy<Value = serde_json::Value> {
        let operand = prop_oneof![
            4 => (-3i64..4).prop_map(|i| json!(i)),
            1 => prop::sample::select(vec![0.5, -0.0, 2.5, 1e300, -1e300, 9_007_199_254_740_992.0]).prop_map(|f| json!(f)),
            1 => prop::sample::select(vec![9_007_199_254_740_993i64, -9_007_199_254_740_993, i64::MAX]).prop_map(|i| json!(i)),
            1 => any::<bool>().prop_map(|b| json!(b)),
            8 => prop::sample::select(vec!["$a", "$b", "$c"]).prop_map(|s| json!(s)),
            1 => prop::sample::select(vec!["$a.x", "$nosuch", "$", "", "a", "5"]).prop_map(|s| json!(s)),
            1 => Just(json!(null)),
        ];
        let list = |(op, args): (&str, Vec<serde_json::Value>)| {
            let mut list = vec![json!(op)];
            list.extend(args);
            serde_json::Value::Array(list)
        };
        let compare =
            (prop::sample::select(vec!["=", "<", ">", "<=", ">=", "in"]), prop::collection::vec(operand.clone(), 0..5))
                .prop_map(list);
        compare.prop_recursive(3, 24, 4, move |inner| {
            let join = prop::sample::select(vec!["and", "or", "and", "or", "and", "or", "not"]);
            (join, prop::collection::vec(prop_oneof![3 => inner, 1 => operand.clone()], 0..4)).prop_map(list)
        })
    }

    /// A host value: a number, shown as an `int` where it is integral and small (the way the
    /// filter scheduler's counters show) unless `float`, and as `None` when not finite.
    fn shown(value: f64, float: bool) -> PyValue {
        if !value.is_finite() {
            PyValue::None
        } else if !float && value.fract() == 0.0 && value.abs() < 9.0e15 {
            PyValue::Int(value as i64)
        } else {
            PyValue::Float(value)
        }
    }

    fn host_number() -> impl Strategy<Value = (f64, bool)> {
        let value = prop_oneof![
            4 => (-3i64..4).prop_map(|i| i as f64),
            1 => prop::sample::select(vec![0.5, -0.0, 2.5, 1e300, 9_007_199_254_740_992.0, f64::NAN, f64::INFINITY]),
        ];
        (value, any::<bool>())
    }

    proptest! {
        // Many generated queries are refused; enough cases that the accepted ones cover each operator.
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn numeric_queries_answer_as_the_query(
            v in numeric_like(),
            values in prop::collection::vec(host_number(), 3),
        ) {
            let Ok(Some(mut q)) = Query::parse(&v) else { return Ok(()) };
            q.bind(|name| ["a", "b", "c"].iter().position(|&n| n == name).map(|i| i as u32));
            let Some(numeric) = q.numeric(|slot| slot < 3) else { return Ok(()) };
            let vars = vars_fn(|name| match ["a", "b", "c"].iter().position(|&n| n == name) {
                Some(i) => shown(values[i].0, values[i].1),
                None => PyValue::None,
            });
            let given: Vec<f64> = numeric.slots().iter().map(|&s| values[s as usize].0).collect();
            match numeric.passes(&given) {
                Some(pass) => prop_assert_eq!(Ok(pass), q.passes(&vars)),
                None => prop_assert!(given.iter().any(|x| !x.is_finite())),
            }
        }
    }

    proptest! {
        #[test]
        fn bound_queries_answer_as_unbound(v in prop_oneof![json_value(), well_formed()]) {
            if let Ok(Some(q)) = Query::parse(&v) {
                let mut bound = q.clone();
                bound.bind(slotted);
                prop_assert_eq!(bound.passes(&Slotted), q.passes(&host()));
            }
        }

        #[test]
        fn never_panics_on_text(text in any::<String>()) {
            if let Ok(Some(q)) = Query::parse_str(&text) {
                let _ = q.passes(&host());
                let _ = q.validate();
            }
        }

        #[test]
        fn never_panics_on_structures(v in json_value()) {
            if let Ok(Some(q)) = Query::parse(&v) {
                let result = q.passes(&host());
                prop_assume!(!v.is_string());
                // An error validate() finds is raised by every evaluation (perhaps preceded
                // by a host-dependent one).
                if q.validate().is_err() {
                    prop_assert!(result.is_err());
                }
                let text = serde_json::Value::String(v.to_string());
                let again = Query::parse(&text).ok().flatten().map(|q| q.passes(&host()));
                prop_assert_eq!(again, Some(result));
            }
        }
    }
}
