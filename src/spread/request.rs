//! What a spread request says: the service, its task count, preferences, constraints and
//! limits.

use super::constraint::Constraint;
use super::error::SpreadError;
use crate::error::BuildError;
use crate::request::ExplainOptions;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

// The types read from JSON take the object form only (see `crate::json`).
crate::json::object_form!(WeightedSpread, HardSpread, HostPort, Platform, SpreadRequest);

/// What a preference or hard spread constraint reads from a node.
///
/// Parsed from SwarmKit's descriptor text by [`Descriptor::parse`] (`From<&str>`):
///
/// | text | descriptor |
/// |---|---|
/// | `node.labels.<k>` (prefix case-insensitive, key exact, non-empty) | [`NodeLabel`](Descriptor::NodeLabel)`(k)` |
/// | `engine.labels.<k>` (likewise) | [`EngineLabel`](Descriptor::EngineLabel)`(k)` |
/// | `node.id`, `node.hostname` (case-insensitive) | [`NodeId`](Descriptor::NodeId), [`Hostname`](Descriptor::Hostname) |
/// | anything else starting with `node.` or `engine.` (`node.platform.os`, a bare `node.labels.`) | [`Unsupported`](Descriptor::Unsupported) |
/// | any other text | a plain node label key: [`NodeLabel`](Descriptor::NodeLabel) |
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Descriptor {
    /// A swarm node label: the host label with this key.
    NodeLabel(String),
    /// An engine label: the host label `engine.labels.<key>`.
    EngineLabel(String),
    /// The node itself (its id, the host name): one branch per node.
    NodeId,
    /// The node's reported hostname (attribute `hostname`, `""` when absent).
    Hostname,
    /// Text naming nothing the engine reads.
    Unsupported(String),
}

impl Descriptor {
    /// Parses descriptor text; see the table on [`Descriptor`].
    pub fn parse(text: &str) -> Descriptor {
        let prefixed = |p: &str| {
            (text.len() > p.len() && text.is_char_boundary(p.len()) && text[..p.len()].eq_ignore_ascii_case(p))
                .then(|| text[p.len()..].to_owned())
        };
        if let Some(k) = prefixed("node.labels.") {
            return Descriptor::NodeLabel(k);
        }
        if let Some(k) = prefixed("engine.labels.") {
            return Descriptor::EngineLabel(k);
        }
        let lower = text.to_ascii_lowercase();
        match lower.as_str() {
            "node.id" => Descriptor::NodeId,
            "node.hostname" => Descriptor::Hostname,
            _ if lower.starts_with("node.") || lower.starts_with("engine.") => Descriptor::Unsupported(text.to_owned()),
            _ => Descriptor::NodeLabel(text.to_owned()),
        }
    }
}

impl From<&str> for Descriptor {
    fn from(text: &str) -> Self {
        Descriptor::parse(text)
    }
}

impl fmt::Display for Descriptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Descriptor::NodeLabel(k) => write!(f, "node.labels.{k}"),
            Descriptor::EngineLabel(k) => write!(f, "engine.labels.{k}"),
            Descriptor::NodeId => f.write_str("node.id"),
            Descriptor::Hostname => f.write_str("node.hostname"),
            Descriptor::Unsupported(t) => f.write_str(t),
        }
    }
}

impl Serialize for Descriptor {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Descriptor {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Descriptor::parse(&String::deserialize(d)?))
    }
}

/// How a weighted spread shares tasks among the values of its descriptor.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum Targets {
    /// Relative weights per value. A value not listed (including `""`, the nodes missing the
    /// label, unless listed) weighs `unlisted` (default 0). When every branch under a parent
    /// weighs 0 the level spreads evenly.
    Weights {
        /// Weight per value.
        weights: BTreeMap<String, f64>,
        /// Weight of every value not listed.
        #[serde(default)]
        unlisted: f64,
    },
    /// Target percentages per value (Nomad's `target`), adding up to at most 100. The rest is
    /// shared equally by the values present but not listed (`""` included unless listed); when
    /// every value present is listed, the listed shares are scaled up to 100.
    Percent(BTreeMap<String, f64>),
}

/// Reads [`Targets`] in the object form only: serde's derived code would also take the
/// `weights` variant's fields as an array.
impl<'de> Deserialize<'de> for Targets {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// The fields of [`Targets::Weights`].
        #[derive(Deserialize)]
        #[serde(remote = "Self", deny_unknown_fields)]
        struct WeightsForm {
            weights: BTreeMap<String, f64>,
            #[serde(default)]
            unlisted: f64,
        }
        crate::json::object_form!(deserialize_only WeightsForm as "struct variant Targets::Weights");

        /// [`Targets`] with the struct variant's fields in [`WeightsForm`].
        #[derive(Deserialize)]
        #[serde(rename_all = "snake_case")]
        enum Form {
            Weights(WeightsForm),
            Percent(BTreeMap<String, f64>),
        }

        Ok(match Form::deserialize(deserializer)? {
            Form::Weights(WeightsForm { weights, unlisted }) => Targets::Weights { weights, unlisted },
            Form::Percent(targets) => Targets::Percent(targets),
        })
    }
}

/// A weighted spread: see [`Preference::Weighted`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct WeightedSpread {
    /// What the branches are.
    pub descriptor: Descriptor,
    /// Each branch's share.
    pub targets: Targets,
}

/// One placement preference; a request's list is in decreasing precedence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Preference {
    /// Spread tasks evenly over the descriptor's values (SwarmKit's `SpreadOver`).
    Spread(Descriptor),
    /// Put tasks where the service already has the most, overflowing to the next branch when
    /// one is full (the design's `PackInto`).
    Pack(Descriptor),
    /// Spread tasks in proportion to per-value weights or target percentages.
    Weighted(WeightedSpread),
}

impl Preference {
    /// Spread over `descriptor` (see [`Descriptor::parse`]).
    pub fn spread(descriptor: &str) -> Preference {
        Preference::Spread(Descriptor::parse(descriptor))
    }

    /// Pack into `descriptor`.
    pub fn pack(descriptor: &str) -> Preference {
        Preference::Pack(Descriptor::parse(descriptor))
    }

    /// Weighted spread with relative weights; unlisted values weigh 0.
    pub fn weights<'a>(descriptor: &str, weights: impl IntoIterator<Item = (&'a str, f64)>) -> Preference {
        Preference::Weighted(WeightedSpread {
            descriptor: Descriptor::parse(descriptor),
            targets: Targets::Weights {
                weights: weights.into_iter().map(|(v, w)| (v.to_owned(), w)).collect(),
                unlisted: 0.0,
            },
        })
    }

    /// Weighted spread with target percentages.
    pub fn percent<'a>(descriptor: &str, targets: impl IntoIterator<Item = (&'a str, f64)>) -> Preference {
        Preference::Weighted(WeightedSpread {
            descriptor: Descriptor::parse(descriptor),
            targets: Targets::Percent(targets.into_iter().map(|(v, w)| (v.to_owned(), w)).collect()),
        })
    }

    /// The descriptor.
    pub fn descriptor(&self) -> &Descriptor {
        match self {
            Preference::Spread(d) | Preference::Pack(d) => d,
            Preference::Weighted(w) => &w.descriptor,
        }
    }

    pub(crate) fn validate(&self) -> Result<(), SpreadError> {
        let Preference::Weighted(w) = self else { return Ok(()) };
        let bad = |value: &str, weight: f64| SpreadError::Weight {
            descriptor: w.descriptor.to_string(),
            value: value.to_owned(),
            weight,
        };
        match &w.targets {
            Targets::Weights { weights, unlisted } => {
                if !unlisted.is_finite() || *unlisted < 0.0 {
                    return Err(bad("*", *unlisted));
                }
                for (v, &x) in weights {
                    if !x.is_finite() || x < 0.0 {
                        return Err(bad(v, x));
                    }
                }
            }
            Targets::Percent(targets) => {
                for (v, &x) in targets {
                    if !x.is_finite() || x < 0.0 {
                        return Err(bad(v, x));
                    }
                }
                let total: f64 = targets.values().sum();
                if total > 100.0 + 1e-9 {
                    return Err(SpreadError::Percent { descriptor: w.descriptor.to_string(), total });
                }
            }
        }
        Ok(())
    }
}

/// Which algorithm splits the tasks; see the [module docs](super#the-two-modes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SpreadMode {
    /// SwarmKit's algorithm, exactly: on a leaf's later visit the candidates that now fail a
    /// filter are dropped by moving the last one into their slot, and the rest are heap-sorted
    /// (Go's `container/heap` Init, then Pop), so tied nodes come out where SwarmKit's heap
    /// leaves them. Every result is one SwarmKit produces.
    #[default]
    SwarmCompatible,
    /// SwarmKit's algorithm with a stable re-sort on a leaf's later visit (failing candidates
    /// dropped in place, ties keeping their previous positions): the reference's canonical
    /// outcomes. Rarely (about 0.5% of random cases) an outcome SwarmKit never produces.
    SwarmCompatibleStable,
    /// Least-loaded branch first at every level: the max–min skew is the least achievable.
    Balanced,
}

impl SpreadMode {
    /// Whether this is one of the two SwarmKit modes.
    pub fn is_swarm_compatible(self) -> bool {
        matches!(self, SpreadMode::SwarmCompatible | SpreadMode::SwarmCompatibleStable)
    }
}

/// What a hard spread constraint does when a node would break it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum WhenUnsatisfiable {
    /// The node is not a candidate.
    #[default]
    DoNotSchedule,
    /// Nodes that keep the skew are preferred; others are used only when none is left.
    ScheduleAnyway,
}

/// A maxSkew-style hard spread constraint over a label (Kubernetes' topology spread).
///
/// A node's domain is its value of `key`; **nodes without the key belong to no domain** and
/// never satisfy a `DoNotSchedule` constraint. A node may take the next task when
/// `count(domain) + 1 − min ≤ max_skew`, `min` being the least count over the domains, or 0
/// while fewer than `min_domains` domains exist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct HardSpread {
    /// The label defining domains (a node label, an engine label or a plain key).
    pub key: Descriptor,
    /// Largest allowed gap between a domain's count and the minimum; at least 1.
    pub max_skew: u32,
    /// Hard or soft.
    #[serde(default)]
    pub when_unsatisfiable: WhenUnsatisfiable,
    /// Fewer domains than this count as a global minimum of 0 (0 or 1: no effect).
    #[serde(default)]
    pub min_domains: u32,
}

impl HardSpread {
    /// `never more than max_skew apart across the values of key`, hard.
    pub fn new(key: &str, max_skew: u32) -> HardSpread {
        HardSpread {
            key: Descriptor::parse(key),
            max_skew,
            when_unsatisfiable: WhenUnsatisfiable::DoNotSchedule,
            min_domains: 0,
        }
    }

    /// Sets what happens when the skew would break.
    pub fn when_unsatisfiable(mut self, when: WhenUnsatisfiable) -> HardSpread {
        self.when_unsatisfiable = when;
        self
    }

    /// Sets `min_domains`.
    pub fn min_domains(mut self, min_domains: u32) -> HardSpread {
        self.min_domains = min_domains;
        self
    }

    pub(crate) fn validate(&self) -> Result<(), SpreadError> {
        if self.max_skew == 0 {
            return Err(SpreadError::MaxSkew { key: self.key.to_string() });
        }
        match self.key {
            Descriptor::NodeLabel(_) | Descriptor::EngineLabel(_) => Ok(()),
            _ => Err(SpreadError::UnsupportedDescriptor { descriptor: self.key.to_string() }),
        }
    }
}

/// A host-mode published port.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
pub struct HostPort {
    /// `tcp`, `udp` or `sctp` (compared case-insensitively).
    pub protocol: String,
    /// The published port; 0 publishes nothing.
    pub port: u16,
}

/// A platform the service's image runs on; an empty field is a wildcard.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(remote = "Self", default, deny_unknown_fields)]
pub struct Platform {
    /// Operating system (`linux`, `windows` …).
    pub os: String,
    /// Architecture; `x86_64` means `amd64` and `aarch64` means `arm64`.
    pub arch: String,
}

/// A batch of identical tasks of one service to place.
///
/// ```
/// use placewise::spread::{SpreadMode, Preference, SpreadRequest};
///
/// let req = SpreadRequest::new("web", 6)
///     .preference(Preference::spread("node.labels.dc"))
///     .preference(Preference::spread("rack"))
///     .constraint("node.role==worker")?
///     .max_replicas(2)
///     .mode(SpreadMode::Balanced);
/// assert_eq!(req.preferences.len(), 2);
/// # Ok::<(), placewise::spread::SpreadError>(())
/// ```
///
/// In JSON every field but `service` is optional:
/// `{"service": "web", "tasks": 6, "preferences": [{"spread": "node.labels.dc"}],
/// "constraints": ["node.role==worker"], "max_replicas": 2, "mode": "balanced",
/// "explain": {"verdicts": true}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct SpreadRequest {
    /// The service (the group of its tasks' instances).
    pub service: String,
    /// Number of tasks in the batch.
    #[serde(default = "one")]
    pub tasks: u32,
    /// Placement preferences, highest precedence first.
    #[serde(default)]
    pub preferences: Vec<Preference>,
    /// Placement constraints, all of which must hold.
    #[serde(default)]
    pub constraints: Vec<Constraint>,
    /// At most this many active tasks of the service per node; 0 = no limit.
    #[serde(default)]
    pub max_replicas: u32,
    /// Resources each task reserves, by kind name (`vcpus`, `memory_mb`, generic kinds).
    #[serde(default)]
    pub resources: BTreeMap<String, f64>,
    /// Host-mode published ports of each task.
    #[serde(default)]
    pub ports: Vec<HostPort>,
    /// Platforms the image supports; empty = any.
    #[serde(default)]
    pub platforms: Vec<Platform>,
    /// The algorithm.
    #[serde(default)]
    pub mode: SpreadMode,
    /// Hard (or soft) skew limits.
    #[serde(default)]
    pub hard_spread: Vec<HardSpread>,
    /// Recent failures of this service's tasks per node (by host name), over SwarmKit's
    /// five-minute window; 5 or more make a node less preferred.
    #[serde(default)]
    pub recent_failures: BTreeMap<String, u32>,
    /// Balanced mode only: tasks on nodes that fail the filters do not count in branch loads.
    #[serde(default)]
    pub ignore_ineligible_tasks: bool,
    /// Refuse a `spread` descriptor that SwarmKit silently ignores (`node.ip`, `node.role`,
    /// `node.platform.os`, a bare `node.labels.` …, and `node.id` / `node.hostname` unless
    /// [`node_level_spread`](SpreadRequest::node_level_spread) makes them levels) with
    /// [`SpreadError::UnsupportedDescriptor`](super::SpreadError::UnsupportedDescriptor),
    /// instead of skipping it, and a preference over a label no node carries with
    /// [`SpreadError::LabelNotCarried`](super::SpreadError::LabelNotCarried). Default false:
    /// both modes skip the former, as SwarmKit does, and list them in the outcome's `skipped`;
    /// they keep the latter's level (one branch of every node, as SwarmKit) and list it in the
    /// outcome's `warnings`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub strict_descriptors: bool,
    /// Balanced mode only: a `spread` over `node.id` or `node.hostname` makes one branch per node
    /// (or per hostname), an extension SwarmKit does not have (it ignores those descriptors).
    /// Default false: skipped, as in SwarmKit, so the same request means the same in both modes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub node_level_spread: bool,
    /// How much detail the outcome's [`Explanation`](crate::explain::Explanation) carries beyond the
    /// per-filter counts: with [`verdicts`](ExplainOptions::verdicts), every node's verdict
    /// over the final state (one more pass of the pipeline over every node); with
    /// [`top`](ExplainOptions::top) `k`, the `k` nodes SwarmKit's node order ranks best over
    /// the final state (where the next task would go within its branch), each with the order's
    /// keys as terms: failure penalty, service tasks, total tasks (multiplier −1), then the
    /// caller weighers' score.
    #[serde(default, skip_serializing_if = "is_default")]
    pub explain: ExplainOptions,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

fn one() -> u32 {
    1
}

impl SpreadRequest {
    /// A batch of `tasks` tasks of `service` with no preference, constraint or limit.
    pub fn new(service: impl Into<String>, tasks: u32) -> SpreadRequest {
        SpreadRequest {
            service: service.into(),
            tasks,
            preferences: Vec::new(),
            constraints: Vec::new(),
            max_replicas: 0,
            resources: BTreeMap::new(),
            ports: Vec::new(),
            platforms: Vec::new(),
            mode: SpreadMode::SwarmCompatible,
            hard_spread: Vec::new(),
            recent_failures: BTreeMap::new(),
            ignore_ineligible_tasks: false,
            strict_descriptors: false,
            node_level_spread: false,
            explain: ExplainOptions::default(),
        }
    }

    /// Sets [`explain`](SpreadRequest::explain).
    pub fn explain(mut self, explain: ExplainOptions) -> SpreadRequest {
        self.explain = explain;
        self
    }

    /// Sets [`strict_descriptors`](SpreadRequest::strict_descriptors).
    pub fn strict_descriptors(mut self, strict: bool) -> SpreadRequest {
        self.strict_descriptors = strict;
        self
    }

    /// Sets [`node_level_spread`](SpreadRequest::node_level_spread).
    pub fn node_level_spread(mut self, on: bool) -> SpreadRequest {
        self.node_level_spread = on;
        self
    }

    /// Parses a request from JSON.
    ///
    /// # Errors
    ///
    /// [`BuildError::Json`] with the position; a bad constraint is reported there too.
    /// [`BuildError::NotAnObject`] with its path for an array where an object is documented
    /// (serde's sequence form of a struct).
    pub fn from_json(json: &str) -> Result<SpreadRequest, BuildError> {
        crate::json::from_str(json)
    }

    /// Appends a preference (lower precedence than those before it).
    pub fn preference(mut self, preference: Preference) -> SpreadRequest {
        self.preferences.push(preference);
        self
    }

    /// Parses and appends a constraint.
    ///
    /// # Errors
    ///
    /// [`SpreadError::Constraint`] when it does not parse.
    pub fn constraint(mut self, text: &str) -> Result<SpreadRequest, SpreadError> {
        let c =
            Constraint::parse(text).map_err(|error| SpreadError::Constraint { constraint: text.to_owned(), error })?;
        self.constraints.push(c);
        Ok(self)
    }

    /// Sets the per-node limit (0 = none).
    pub fn max_replicas(mut self, max: u32) -> SpreadRequest {
        self.max_replicas = max;
        self
    }

    /// Sets a per-task resource reservation.
    pub fn resource(mut self, kind: impl Into<String>, amount: f64) -> SpreadRequest {
        self.resources.insert(kind.into(), amount);
        self
    }

    /// Adds a host-mode published port.
    pub fn port(mut self, protocol: &str, port: u16) -> SpreadRequest {
        self.ports.push(HostPort { protocol: protocol.to_ascii_lowercase(), port });
        self
    }

    /// Adds a supported platform.
    pub fn platform(mut self, os: &str, arch: &str) -> SpreadRequest {
        self.platforms.push(Platform { os: os.to_owned(), arch: arch.to_owned() });
        self
    }

    /// Sets the mode.
    pub fn mode(mut self, mode: SpreadMode) -> SpreadRequest {
        self.mode = mode;
        self
    }

    /// Adds a hard spread constraint.
    pub fn hard_spread(mut self, hard: HardSpread) -> SpreadRequest {
        self.hard_spread.push(hard);
        self
    }

    /// Records recent failures of the service on a node.
    pub fn recent_failures(mut self, host: impl Into<String>, failures: u32) -> SpreadRequest {
        self.recent_failures.insert(host.into(), failures);
        self
    }

    /// Balanced mode: do not count tasks on nodes that fail the filters.
    pub fn ignore_ineligible_tasks(mut self, ignore: bool) -> SpreadRequest {
        self.ignore_ineligible_tasks = ignore;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptors_parse_like_swarm_with_plain_keys() {
        assert_eq!(Descriptor::parse("NODE.LABELS.zone"), Descriptor::NodeLabel("zone".into()));
        assert_eq!(Descriptor::parse("engine.labels.disk"), Descriptor::EngineLabel("disk".into()));
        assert_eq!(Descriptor::parse("Node.Hostname"), Descriptor::Hostname);
        assert_eq!(Descriptor::parse("node.id"), Descriptor::NodeId);
        assert_eq!(Descriptor::parse("node.labels."), Descriptor::Unsupported("node.labels.".into()));
        assert_eq!(Descriptor::parse("node.platform.os"), Descriptor::Unsupported("node.platform.os".into()));
        assert_eq!(Descriptor::parse("rack"), Descriptor::NodeLabel("rack".into()));
        assert_eq!(Descriptor::parse("rack").to_string(), "node.labels.rack");
    }

    #[test]
    fn weights_and_percentages_are_validated() {
        assert!(Preference::percent("dc", [("a", 70.0), ("b", 30.0)]).validate().is_ok());
        assert!(matches!(
            Preference::percent("dc", [("a", 70.0), ("b", 40.0)]).validate(),
            Err(SpreadError::Percent { .. })
        ));
        assert!(matches!(Preference::weights("dc", [("a", -1.0)]).validate(), Err(SpreadError::Weight { .. })));
        assert!(matches!(HardSpread::new("zone", 0).validate(), Err(SpreadError::MaxSkew { .. })));
        assert!(matches!(HardSpread::new("node.id", 1).validate(), Err(SpreadError::UnsupportedDescriptor { .. })));
    }

    #[test]
    fn request_json_round_trips() {
        let req = SpreadRequest::new("web", 3)
            .preference(Preference::spread("dc"))
            .preference(Preference::percent("rack", [("r1", 70.0)]))
            .constraint("node.role==worker")
            .unwrap()
            .port("TCP", 80)
            .hard_spread(HardSpread::new("zone", 1).min_domains(3));
        let json = serde_json::to_string(&req).unwrap();
        assert_eq!(SpreadRequest::from_json(&json).unwrap(), req);
        let bad = SpreadRequest::from_json(r#"{"service": "s", "constraints": ["a = b"]}"#);
        assert!(bad.unwrap_err().to_string().contains("constraint expected one operator"));
    }

    /// `from_json` returns the crate's typed error, as `Request::from_json` does: the position
    /// of a bad text, the path of an array where an object belongs.
    #[test]
    fn from_json_returns_the_typed_error_with_position_and_path() {
        let bad = SpreadRequest::from_json("{\n  \"service\": \"s\",\n  \"tasks\": -1\n}").unwrap_err();
        assert!(
            matches!(bad, BuildError::Json { line: 3, column: 13, ref source } if source.to_string().contains("-1")),
            "{bad:?}"
        );
        let unknown = SpreadRequest::from_json(r#"{"service": "s", "colour": 1}"#).unwrap_err();
        assert!(
            matches!(unknown, BuildError::Json { line: 1, ref source, .. } if source.to_string().starts_with("unknown field `colour`"))
        );
        let array = SpreadRequest::from_json(r#"{"service": "s", "ports": [["tcp", 80]]}"#).unwrap_err();
        assert_eq!(array, BuildError::NotAnObject { path: "$.ports[0]".into() });
    }
}
