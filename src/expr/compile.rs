//! Label expressions compiled against a snapshot's interned strings.

use super::{LabelExpr, Pattern};
use crate::id::Symbol;
use crate::snapshot::{ChunkLabels, Interner, Labels};
use smallvec::SmallVec;

#[derive(Debug, Clone)]
enum Node {
    Const(bool),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Not(Box<Node>),
    Eq(Symbol, Symbol),
    In(Symbol, SmallVec<[Symbol; 4]>),
    Matches(Symbol, Pattern),
    Has(Symbol),
    Empty,
}

/// A [`LabelExpr`] with its keys and values resolved to [`Symbol`]s of one snapshot, so that
/// evaluation compares integers. A key or value no host has is folded to a constant at compile
/// time (`k = v` false, `k != v` true).
///
/// Valid for the snapshot it was compiled against (and for any snapshot whose interned strings
/// it has not outgrown); compile again for a newer one.
#[derive(Debug, Clone)]
pub struct CompiledExpr {
    root: Node,
    /// `(key, value, negated)` when the whole expression is `key = value` (`key != value`
    /// when negated): chunk evaluation is then one index lookup.
    pair: Option<(Symbol, Symbol, bool)>,
}

impl CompiledExpr {
    /// Compiles `expr` against `symbols`. Computes in O(size of the expression).
    pub fn new(expr: &LabelExpr, symbols: &Interner) -> CompiledExpr {
        let root = compile(expr, symbols);
        let pair = match &root {
            Node::Eq(k, v) => Some((*k, *v, false)),
            Node::Not(x) => match **x {
                Node::Eq(k, v) => Some((k, v, true)),
                _ => None,
            },
            _ => None,
        };
        CompiledExpr { root, pair }
    }

    /// Evaluates against a whole chunk of hosts at once: bit `i` of the result is set when host
    /// `i` of the chunk matches. `live` masks the chunk's existing hosts.
    #[inline]
    pub fn matches_chunk(&self, labels: &ChunkLabels, live: u64, symbols: &Interner) -> u64 {
        if let Some((k, v, negated)) = self.pair {
            let hosts = labels.mask(k, v);
            return if negated { !hosts & live } else { hosts & live };
        }
        eval_chunk(&self.root, labels, live, symbols) & live
    }

    /// Evaluates against interned labels; `symbols` resolves values for `~` patterns.
    #[inline]
    pub fn matches(&self, labels: &Labels, symbols: &Interner) -> bool {
        eval(&self.root, labels, symbols)
    }
}

fn not(n: Node) -> Node {
    match n {
        Node::Const(b) => Node::Const(!b),
        other => Node::Not(Box::new(other)),
    }
}

fn compile(e: &LabelExpr, s: &Interner) -> Node {
    match e {
        LabelExpr::And(a, b) => match (compile(a, s), compile(b, s)) {
            (Node::Const(false), _) | (_, Node::Const(false)) => Node::Const(false),
            (Node::Const(true), x) | (x, Node::Const(true)) => x,
            (x, y) => Node::And(Box::new(x), Box::new(y)),
        },
        LabelExpr::Or(a, b) => match (compile(a, s), compile(b, s)) {
            (Node::Const(true), _) | (_, Node::Const(true)) => Node::Const(true),
            (Node::Const(false), x) | (x, Node::Const(false)) => x,
            (x, y) => Node::Or(Box::new(x), Box::new(y)),
        },
        LabelExpr::Not(x) => not(compile(x, s)),
        LabelExpr::Eq { key, value } => eq(s, key, value),
        LabelExpr::Ne { key, value } => not(eq(s, key, value)),
        LabelExpr::In { key, values } => is_in(s, key, values),
        LabelExpr::NotIn { key, values } => not(is_in(s, key, values)),
        LabelExpr::Matches { key, pattern } => match s.get(key) {
            Some(k) => Node::Matches(k, pattern.clone()),
            None => Node::Const(false),
        },
        LabelExpr::Has(key) => s.get(key).map_or(Node::Const(false), Node::Has),
        LabelExpr::Empty => Node::Empty,
    }
}

fn eq(s: &Interner, key: &str, value: &str) -> Node {
    match (s.get(key), s.get(value)) {
        (Some(k), Some(v)) => Node::Eq(k, v),
        _ => Node::Const(false),
    }
}

fn is_in(s: &Interner, key: &str, values: &[String]) -> Node {
    let Some(k) = s.get(key) else { return Node::Const(false) };
    let vs: SmallVec<[Symbol; 4]> = values.iter().filter_map(|v| s.get(v)).collect();
    if vs.is_empty() {
        Node::Const(false)
    } else {
        Node::In(k, vs)
    }
}

fn eval(n: &Node, labels: &Labels, s: &Interner) -> bool {
    match n {
        Node::Const(b) => *b,
        Node::And(a, b) => eval(a, labels, s) && eval(b, labels, s),
        Node::Or(a, b) => eval(a, labels, s) || eval(b, labels, s),
        Node::Not(x) => !eval(x, labels, s),
        Node::Eq(k, v) => labels.get(*k) == Some(*v),
        Node::In(k, vs) => labels.get(*k).is_some_and(|v| vs.contains(&v)),
        Node::Matches(k, p) => labels.get(*k).is_some_and(|v| p.is_match(s.resolve(v))),
        Node::Has(k) => labels.contains_key(*k),
        Node::Empty => labels.is_empty(),
    }
}

fn eval_chunk(n: &Node, labels: &ChunkLabels, all: u64, s: &Interner) -> u64 {
    match n {
        Node::Const(true) => all,
        Node::Const(false) => 0,
        Node::And(a, b) => eval_chunk(a, labels, all, s) & eval_chunk(b, labels, all, s),
        Node::Or(a, b) => eval_chunk(a, labels, all, s) | eval_chunk(b, labels, all, s),
        Node::Not(x) => !eval_chunk(x, labels, all, s) & all,
        Node::Eq(k, v) => labels.mask(*k, *v),
        Node::In(k, vs) => vs.iter().fold(0, |m, v| m | labels.mask(*k, *v)),
        Node::Matches(k, p) => {
            labels.values(*k).filter(|(v, _)| p.is_match(s.resolve(*v))).fold(0, |m, (_, hosts)| m | hosts)
        }
        Node::Has(k) => labels.values(*k).fold(0, |m, (_, hosts)| m | hosts),
        Node::Empty => all & !labels.labelled(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::Cluster;
    use crate::snapshot::HostSpec;
    use std::collections::BTreeMap;

    #[test]
    fn compiled_agrees_with_the_string_evaluator() {
        let cluster = Cluster::builder()
            .host(HostSpec::new("a").label("tier", "gold").label("zone", "eu-west"))
            .host(HostSpec::new("b").label("tier", "bronze"))
            .host(HostSpec::new("c"))
            .build()
            .unwrap();
        for src in [
            "tier = gold",
            "tier != gold",
            "tier in (gold, platinum)",
            "tier notin (gold, platinum)",
            "zone ~ '^eu'",
            "zone",
            "{}",
            "nosuchkey = x or tier = bronze",
            "not nosuchkey",
            "tier = nosuchvalue",
            "tier != nosuchvalue and {} or zone",
        ] {
            let expr: LabelExpr = src.parse().unwrap();
            let compiled = CompiledExpr::new(&expr, cluster.symbols());
            for (id, host) in cluster.hosts() {
                let map: BTreeMap<String, String> = host
                    .labels
                    .iter()
                    .map(|(k, v)| (cluster.resolve(k).to_owned(), cluster.resolve(v).to_owned()))
                    .collect();
                assert_eq!(
                    compiled.matches(&host.labels, cluster.symbols()),
                    expr.matches_map(&map),
                    "{src} on {}",
                    host.name
                );
                let hot = cluster.hot_chunk(id.index() / 64);
                let bit = compiled.matches_chunk(&hot.labels, hot.live, cluster.symbols()) >> (id.0 % 64) & 1;
                assert_eq!(bit == 1, expr.matches_map(&map), "chunk evaluation of {src} on {}", host.name);
            }
        }
    }
}
