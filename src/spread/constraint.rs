//! SwarmKit's placement constraint grammar: `key == value` / `key != value`.

use super::error::ConstraintError;
use super::node;
use crate::id::HostId;
use crate::snapshot::Cluster;
use regex::Regex;
use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;
use std::sync::OnceLock;

/// The operator of a [`Constraint`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConstraintOp {
    /// `==`: the node's value equals the constraint's (Unicode case folding).
    Eq,
    /// `!=`: the negation of `==`.
    Ne,
}

/// What a constraint key reads.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    NodeId,
    Hostname,
    Ip,
    Role,
    Os,
    Arch,
    NodeLabel(String),
    /// The host label key, `engine.labels.<k>`.
    EngineLabel(String),
    Unknown,
}

/// One placement constraint, parsed with SwarmKit's rules (see the [module docs](super)).
///
/// ```
/// use placewise::spread::{Constraint, ConstraintError};
///
/// let c: Constraint = "node.labels.zone != z3".parse()?;
/// assert_eq!(c.to_string(), "node.labels.zone!=z3");
/// assert_eq!("zone ~ z3".parse::<Constraint>(), Err(ConstraintError::Operator));
/// # Ok::<(), ConstraintError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Constraint {
    key_text: String,
    key: Key,
    op: ConstraintOp,
    value: String,
}

// Both patterns are constants checked by the unit tests, so building them cannot fail.
fn key_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^[a-zA-Z_][a-zA-Z0-9\-_.]+$").expect("a constant pattern"))
}

fn value_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"^[a-zA-Z0-9:\-_\t\n\x0C\r .*()?+\[\]\\^$|/]+$").expect("a constant pattern"))
}

/// Whole-string equality under Unicode lower-case folding.
pub(crate) fn eq_fold(a: &str, b: &str) -> bool {
    a == b || a.chars().flat_map(char::to_lowercase).eq(b.chars().flat_map(char::to_lowercase))
}

fn prefixed<'a>(key: &'a str, prefix: &str) -> Option<&'a str> {
    (key.len() > prefix.len() && key.is_char_boundary(prefix.len()) && key[..prefix.len()].eq_ignore_ascii_case(prefix))
        .then(|| &key[prefix.len()..])
}

impl Constraint {
    /// Parses one constraint. The text is split at the first `==` if it has one, else at the
    /// first `!=`; key and value are trimmed.
    ///
    /// # Errors
    ///
    /// [`ConstraintError`] with SwarmKit's message for a missing operator, a bad key or a bad
    /// value.
    pub fn parse(text: &str) -> Result<Constraint, ConstraintError> {
        let (k, op, v) = if let Some(i) = text.find("==") {
            (&text[..i], ConstraintOp::Eq, &text[i + 2..])
        } else if let Some(i) = text.find("!=") {
            (&text[..i], ConstraintOp::Ne, &text[i + 2..])
        } else {
            return Err(ConstraintError::Operator);
        };
        let (k, v) = (k.trim(), v.trim());
        if !key_pattern().is_match(k) {
            return Err(ConstraintError::Key { key: k.to_owned() });
        }
        if !value_pattern().is_match(v) {
            return Err(ConstraintError::Value { value: v.to_owned() });
        }
        let key = if let Some(label) = prefixed(k, "node.labels.") {
            Key::NodeLabel(label.to_owned())
        } else if let Some(label) = prefixed(k, node::ENGINE_LABEL_PREFIX) {
            Key::EngineLabel(format!("{}{label}", node::ENGINE_LABEL_PREFIX))
        } else {
            match k.to_ascii_lowercase().as_str() {
                "node.id" => Key::NodeId,
                "node.hostname" => Key::Hostname,
                "node.ip" => Key::Ip,
                "node.role" => Key::Role,
                "node.platform.os" => Key::Os,
                "node.platform.arch" => Key::Arch,
                _ => Key::Unknown,
            }
        };
        Ok(Constraint { key_text: k.to_owned(), key, op, value: v.to_owned() })
    }

    /// The key as written (trimmed).
    pub fn key(&self) -> &str {
        &self.key_text
    }

    /// The operator.
    pub fn op(&self) -> ConstraintOp {
        self.op
    }

    /// The value as written (trimmed).
    pub fn value(&self) -> &str {
        &self.value
    }

    /// Whether host `id` of `cluster` satisfies the constraint. A key SwarmKit does not know
    /// matches no host under either operator; a missing label or attribute reads as `""`.
    /// Computes in O(labels + attributes of the host).
    pub fn matches(&self, cluster: &Cluster, id: HostId) -> bool {
        let Some(host) = cluster.host(id) else { return false };
        let actual = match &self.key {
            Key::Unknown => return false,
            Key::Ip => return self.ip_matches(node::str_attribute(host, "ip")),
            Key::NodeId => &*host.name,
            Key::Hostname => node::hostname(host),
            Key::Role => node::role(host),
            Key::Os => node::str_attribute(host, "os"),
            Key::Arch => node::str_attribute(host, "arch"),
            Key::NodeLabel(k) => node::node_label(cluster, host, cluster.symbols().get(k)),
            Key::EngineLabel(k) => node::engine_label(cluster, host, cluster.symbols().get(k)),
        };
        eq_fold(actual, &self.value) == (self.op == ConstraintOp::Eq)
    }

    fn ip_matches(&self, address: &str) -> bool {
        let Some(wanted) = IpPattern::parse(&self.value) else { return false };
        let Ok(addr) = address.parse::<IpAddr>() else {
            // No address never matches: `==` fails and `!=` passes.
            return self.op == ConstraintOp::Ne;
        };
        wanted.contains(addr) == (self.op == ConstraintOp::Eq)
    }
}

/// An IP address or a CIDR block.
enum IpPattern {
    Addr(IpAddr),
    Block(IpAddr, u32),
}

impl IpPattern {
    fn parse(text: &str) -> Option<IpPattern> {
        if let Some((a, bits)) = text.split_once('/') {
            let addr: IpAddr = a.parse().ok()?;
            let bits: u32 = bits.parse().ok()?;
            let max = if addr.is_ipv4() { 32 } else { 128 };
            return (bits <= max).then_some(IpPattern::Block(addr, bits));
        }
        text.parse().ok().map(IpPattern::Addr)
    }

    fn contains(&self, addr: IpAddr) -> bool {
        match *self {
            IpPattern::Addr(a) => a == addr,
            IpPattern::Block(net, bits) => match (net, addr) {
                (IpAddr::V4(n), IpAddr::V4(a)) => {
                    let mask = if bits == 0 { 0 } else { u32::MAX << (32 - bits) };
                    u32::from(n) & mask == u32::from(a) & mask
                }
                (IpAddr::V6(n), IpAddr::V6(a)) => {
                    let mask = if bits == 0 { 0 } else { u128::MAX << (128 - bits) };
                    u128::from(n) & mask == u128::from(a) & mask
                }
                _ => false,
            },
        }
    }
}

impl FromStr for Constraint {
    type Err = ConstraintError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Constraint::parse(s)
    }
}

impl fmt::Display for Constraint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = match self.op {
            ConstraintOp::Eq => "==",
            ConstraintOp::Ne => "!=",
        };
        write!(f, "{}{op}{}", self.key_text, self.value)
    }
}

impl serde::Serialize for Constraint {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Constraint {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Constraint::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::HostSpec;
    use serde_json::json;

    #[test]
    fn parse_splits_at_first_double_equals_then_not_equals() {
        let c = Constraint::parse(" node.labels.a == b!=c ").unwrap_err();
        assert_eq!(c, ConstraintError::Value { value: "b!=c".into() });
        let c = Constraint::parse("node.role != manager").unwrap();
        assert_eq!((c.key(), c.op(), c.value()), ("node.role", ConstraintOp::Ne, "manager"));
        assert_eq!(Constraint::parse("a = b"), Err(ConstraintError::Operator));
        assert_eq!(Constraint::parse("x==y"), Err(ConstraintError::Key { key: "x".into() }));
        assert_eq!(Constraint::parse("1a==y"), Err(ConstraintError::Key { key: "1a".into() }));
        assert_eq!(Constraint::parse("ab=="), Err(ConstraintError::Value { value: "".into() }));
        assert_eq!(Constraint::parse("ab==a,b"), Err(ConstraintError::Value { value: "a,b".into() }));
        assert!(Constraint::parse("node.labels.x==a*[b] (c)?+^$|/\\").is_ok());
    }

    #[test]
    fn matching_follows_the_swarm_rules() {
        let c = Cluster::builder()
            .host(
                HostSpec::new("n1")
                    .label("Zone", "Z1")
                    .label("engine.labels.disk", "ssd")
                    .attribute("hostname", json!("h1"))
                    .attribute("role", json!("manager"))
                    .attribute("ip", json!("10.0.0.5"))
                    .attribute("os", json!("linux")),
            )
            .host(HostSpec::new("n2").label("engine.labels.disk", "ssd").attribute("engine", json!(false)))
            .build()
            .unwrap();
        let (n1, n2) = (HostId(0), HostId(1));
        let m = |text: &str, h| Constraint::parse(text).unwrap().matches(&c, h);
        assert!(m("node.labels.Zone==z1", n1), "values fold case");
        assert!(!m("node.labels.zone==z1", n1), "label keys are case-sensitive");
        assert!(m("NODE.LABELS.Zone==Z1", n1), "the prefix is not");
        assert!(m("node.labels.zone!=z1", n1), "a missing label is \"\"");
        assert!(m("engine.labels.disk==ssd", n1));
        assert!(!m("engine.labels.disk==ssd", n2), "no engine description");
        assert!(m("node.hostname==H1", n1) && m("node.hostname!=h1", n2));
        assert!(m("node.role==manager", n1) && m("node.role==worker", n2));
        assert!(m("node.id==n2", n2) && m("node.platform.os==linux", n1) && m("node.platform.arch!=x", n1));
        assert!(!m("node.typo==x", n1) && !m("node.typo!=x", n1), "unknown keys match nothing");
        assert!(!m("node.labels.==x", n1) && !m("node.labels.!=x", n1), "a bare prefix is unknown");
        assert!(m("node.ip==10.0.0.0/24", n1) && !m("node.ip!=10.0.0.0/24", n1));
        assert!(m("node.ip==10.0.0.5", n1) && !m("node.ip==10.0.0.6", n1));
        assert!(!m("node.ip==nonsense", n1) && !m("node.ip!=nonsense", n1), "a bad value fails both");
        assert!(!m("node.ip==10.0.0.5", n2) && m("node.ip!=10.0.0.5", n2), "no address");
    }

    #[test]
    fn ipv6_addresses_compare_normalised() {
        let p = IpPattern::parse("2001:db8:0::2").unwrap();
        assert!(p.contains("2001:db8::2".parse().unwrap()));
        let b = IpPattern::parse("2001:db8::/32").unwrap();
        assert!(b.contains("2001:db8:ffff::1".parse().unwrap()));
        assert!(!b.contains("10.0.0.1".parse().unwrap()));
    }

    #[test]
    fn display_and_serde_round_trip() {
        let c: Constraint = "node.labels.az!=c".parse().unwrap();
        let json = serde_json::to_string(&c).unwrap();
        assert_eq!(json, "\"node.labels.az!=c\"");
        assert_eq!(serde_json::from_str::<Constraint>(&json).unwrap(), c);
        assert!(serde_json::from_str::<Constraint>("\"nope\"").is_err());
    }
}
