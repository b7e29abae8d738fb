//! What to place, and the context filters and weighers see while placing it.

use crate::error::{BuildError, ScheduleError};
use crate::expr::{CompiledExpr, LabelExpr};
use crate::id::{DomainId, HostId, ResourceId, Symbol};
use crate::snapshot::{Cluster, Host, Overlay};
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use std::any::Any;
use std::collections::BTreeMap;

// The types read from JSON take the object form only (see `crate::json`).
crate::json::object_form!(ExplainOptions, Request);

fn one() -> u32 {
    1
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// How much detail a [`Outcome`](crate::schedule::Outcome)'s [`Explanation`](crate::explain::Explanation)
/// carries beyond the per-filter histogram, which is always there.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", default, deny_unknown_fields)]
#[non_exhaustive]
pub struct ExplainOptions {
    /// Record every host's verdict (which filter rejected it, and why).
    pub verdicts: bool,
    /// Record the per-weigher score breakdown of this many best hosts for the first instance.
    pub top: u32,
}

impl ExplainOptions {
    /// Verdicts on, and the breakdown of the `top` best hosts.
    pub fn detailed(top: u32) -> Self {
        ExplainOptions { verdicts: true, top }
    }
}

/// A request to place `count` identical instances.
///
/// ```
/// use placewise::Request;
///
/// let req = Request::new(3).vcpus(2.0).memory_mb(4096.0).zone("az1").selector("tier != bronze".parse()?);
/// assert_eq!(req.count, 3);
/// # Ok::<(), placewise::error::ParseError>(())
/// ```
///
/// In JSON: `{"count": 3, "resources": {"vcpus": 2, "memory_mb": 4096}, "zone": "az1",
/// "selector": "tier != bronze"}`; every field is optional (`count` defaults to 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", deny_unknown_fields)]
#[non_exhaustive]
pub struct Request {
    /// Number of instances.
    #[serde(default = "one")]
    pub count: u32,
    /// Resources per instance, by kind name (`vcpus`, `memory_mb`, `disk_gb`, `gpu` …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resources: BTreeMap<String, f64>,
    /// Required availability zone (the `zone` topology level).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// Host label selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelExpr>,
    /// The group or service the instances join.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Seed for the random pick among the top hosts; overrides the scheduler's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Extra explanation detail.
    #[serde(default, skip_serializing_if = "is_default")]
    pub explain: ExplainOptions,
}

impl Default for Request {
    fn default() -> Self {
        Request::new(1)
    }
}

impl Request {
    /// A request for `count` instances that need nothing.
    pub fn new(count: u32) -> Self {
        Request {
            count,
            resources: BTreeMap::new(),
            zone: None,
            selector: None,
            group: None,
            seed: None,
            explain: ExplainOptions::default(),
        }
    }

    /// Parses a request from JSON.
    ///
    /// # Errors
    ///
    /// [`BuildError::Json`] with the position; a bad selector is reported there too, with the
    /// expression's own position in the message. [`BuildError::NotAnObject`] for an array where
    /// an object is documented.
    pub fn from_json(json: &str) -> Result<Request, BuildError> {
        crate::json::from_str(json)
    }

    /// Sets the amount of a resource kind per instance.
    pub fn resource(mut self, kind: impl Into<String>, amount: f64) -> Self {
        self.resources.insert(kind.into(), amount);
        self
    }

    /// Sets vCPUs per instance.
    pub fn vcpus(self, n: f64) -> Self {
        self.resource("vcpus", n)
    }

    /// Sets memory (MiB) per instance.
    pub fn memory_mb(self, n: f64) -> Self {
        self.resource("memory_mb", n)
    }

    /// Sets disk (GiB) per instance.
    pub fn disk_gb(self, n: f64) -> Self {
        self.resource("disk_gb", n)
    }

    /// Requires an availability zone.
    pub fn zone(mut self, zone: impl Into<String>) -> Self {
        self.zone = Some(zone.into());
        self
    }

    /// Requires hosts whose labels match `selector`.
    pub fn selector(mut self, selector: LabelExpr) -> Self {
        self.selector = Some(selector);
        self
    }

    /// Sets the group.
    pub fn group(mut self, group: impl Into<String>) -> Self {
        self.group = Some(group.into());
        self
    }

    /// Sets the seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Sets the explanation detail.
    pub fn explain(mut self, explain: ExplainOptions) -> Self {
        self.explain = explain;
        self
    }

    /// Resolves names against `cluster` once, so that filters compare integers.
    ///
    /// # Errors
    ///
    /// [`ScheduleError::Request`] for a negative or non-finite resource amount, or one whose
    /// total over `count` instances is not finite.
    pub fn compile(&self, cluster: &Cluster) -> Result<CompiledRequest, ScheduleError> {
        let mut resources = SmallVec::new();
        let mut unknown = SmallVec::new();
        for (kind, &amount) in &self.resources {
            if kind.is_empty() {
                return Err(ScheduleError::Request(BuildError::EmptyName { what: "a resource of the request".into() }));
            }
            if !amount.is_finite() || amount < 0.0 {
                let problem = if amount.is_finite() { "negative" } else { "not finite" };
                return Err(ScheduleError::Request(BuildError::number("request", kind.clone(), problem, amount)));
            }
            if !(amount * f64::from(self.count)).is_finite() {
                // The overlay adds one amount per placed instance: the total must stay finite.
                let field = format!("{kind} × count");
                return Err(ScheduleError::Request(BuildError::number("request", field, "not finite", amount)));
            }
            if amount == 0.0 {
                continue;
            }
            match cluster.resource_kinds().get(kind) {
                Some(id) => resources.push((id, amount)),
                None => unknown.push((kind.as_str().into(), amount)),
            }
        }
        let topology = cluster.topology();
        let zone = self.zone.as_deref().map(|z| {
            let domain = topology
                .zone_level()
                .zip(cluster.symbols().get(z))
                .and_then(|(level, sym)| topology.domain(level, sym))
                .unwrap_or(DomainId::NONE);
            ZoneDemand { level: topology.zone_level(), domain }
        });
        Ok(CompiledRequest {
            resources,
            unknown,
            zone,
            selector: self.selector.as_ref().map(|s| CompiledExpr::new(s, cluster.symbols())),
            group: self.group.as_deref().and_then(|g| cluster.symbols().get(g)),
        })
    }
}

/// A required zone resolved against a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ZoneDemand {
    /// The position of the `zone` level, if the cluster has one.
    pub level: Option<usize>,
    /// The zone's domain, or [`DomainId::NONE`] if no host is in it.
    pub domain: DomainId,
}

/// A [`Request`] resolved against one snapshot.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CompiledRequest {
    /// Positive per-instance amounts of kinds the cluster knows.
    pub resources: SmallVec<[(ResourceId, f64); 4]>,
    /// Positive amounts of kinds no host of the cluster has.
    pub unknown: SmallVec<[(Box<str>, f64); 1]>,
    /// The required zone.
    pub zone: Option<ZoneDemand>,
    /// The compiled selector.
    pub selector: Option<CompiledExpr>,
    /// The group's symbol, if any host runs a member (else `None` even when a group is named).
    pub group: Option<Symbol>,
}

/// A filter's or weigher's per-request state, made by its `prepare` method.
pub type Prepared = Option<Box<dyn Any + Send + Sync>>;

/// An engine's own part of a request (a virtual machine's flavor, image and hints, say), handed
/// to that engine's filters and weighers through [`Cx::part`]; see
/// [`Scope::part`](crate::schedule::Scope::part).
pub type Part<'a> = &'a (dyn Any + Send + Sync);

/// What a filter or weigher sees: the snapshot, the request (raw and compiled), the engine's
/// own part of the request if any ([`part`](Cx::part)), the virtual consumption of earlier
/// instances of the same request, and its own prepared state.
///
/// `Cx` is a handful of references and is `Copy`.
#[derive(Clone, Copy)]
pub struct Cx<'a> {
    cluster: &'a Cluster,
    request: &'a Request,
    compiled: &'a CompiledRequest,
    overlay: &'a Overlay,
    instance: u32,
    state: Option<&'a (dyn Any + Send + Sync)>,
    part: Option<Part<'a>>,
}

impl std::fmt::Debug for Cx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cx").field("instance", &self.instance).finish_non_exhaustive()
    }
}

impl<'a> Cx<'a> {
    /// A context for instance `instance` of `request`.
    pub fn new(
        cluster: &'a Cluster,
        request: &'a Request,
        compiled: &'a CompiledRequest,
        overlay: &'a Overlay,
        instance: u32,
    ) -> Self {
        Cx { cluster, request, compiled, overlay, instance, state: None, part: None }
    }

    /// The same context carrying an engine's own part of the request ([`part`](Cx::part)).
    pub fn with_part(self, part: Option<Part<'a>>) -> Self {
        Cx { part, ..self }
    }

    /// The same context carrying another prepared state (combinators hand their children theirs).
    pub fn with_state(self, state: Option<&'a (dyn Any + Send + Sync)>) -> Self {
        Cx { state, ..self }
    }

    /// The snapshot.
    #[inline]
    pub fn cluster(&self) -> &'a Cluster {
        self.cluster
    }

    /// The request as given.
    #[inline]
    pub fn request(&self) -> &'a Request {
        self.request
    }

    /// The request resolved against the snapshot.
    #[inline]
    pub fn compiled(&self) -> &'a CompiledRequest {
        self.compiled
    }

    /// Virtual consumption by earlier instances of this request.
    #[inline]
    pub fn overlay(&self) -> &'a Overlay {
        self.overlay
    }

    /// Index of the instance being placed (0 for the first).
    #[inline]
    pub fn instance(&self) -> u32 {
        self.instance
    }

    /// The engine's own part of the request, if the call carries one and it is a `T`: what an
    /// engine hands its filters and weighers beyond the core [`Request`] (see
    /// [`Scope::part`](crate::schedule::Scope::part)). `None` in a plain core call; a filter then reads
    /// its part's defaults. One type check per call: read it once per chunk or in `prepare`
    /// where it is hot.
    #[inline]
    pub fn part<T: 'static>(&self) -> Option<&'a T> {
        self.part.and_then(|p| p.downcast_ref::<T>())
    }

    /// The prepared state of the filter or weigher being run, if it is a `T`.
    #[inline]
    pub fn state<T: 'static>(&self) -> Option<&'a T> {
        self.state.and_then(|s| s.downcast_ref::<T>())
    }

    /// The prepared state of type `T`, or one made by `make` and kept in `slot` when the filter
    /// or weigher runs unprepared (a direct `check` call, or a combinator that did not prepare it).
    #[inline]
    pub fn state_or<'s, T: 'static>(&self, slot: &'s mut Option<T>, make: impl FnOnce() -> T) -> &'s T
    where
        'a: 's,
    {
        match self.state::<T>() {
            Some(state) => state,
            None => slot.insert(make()),
        }
    }

    /// The host record.
    ///
    /// # Panics
    ///
    /// Panics if `host` is not a live host of the snapshot; the scheduler only hands out live ids.
    #[inline]
    pub fn host(&self, host: HostId) -> &'a Host {
        // Candidates come from the live masks of this same snapshot, so the host exists.
        self.cluster.host(host).expect("candidate ids are live hosts")
    }

    /// What is left of `r` on `host` after earlier instances of this request.
    #[inline]
    pub fn free(&self, host: HostId, r: ResourceId) -> f64 {
        self.overlay.free(self.cluster, host, r)
    }

    /// The instances on `host` as this instance of the request sees them: those the snapshot
    /// lists plus the request's earlier picks of `host`. The count a "fewest instances" rule
    /// reads; `host(h).instances` alone misses the picks, so a burst would stack on one host.
    ///
    /// # Panics
    ///
    /// As [`host`](Cx::host).
    #[inline]
    pub fn instances(&self, host: HostId) -> usize {
        self.host(host).instances.len() + self.overlay.placed(host) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::HostSpec;

    #[test]
    fn instances_count_the_requests_earlier_picks() {
        let c = Cluster::builder()
            .host(HostSpec::new("a").instance(crate::snapshot::InstanceSpec::new("i0")))
            .host(HostSpec::new("b"))
            .build()
            .unwrap();
        let r = Request::new(3);
        let compiled = r.compile(&c).unwrap();
        let mut overlay = Overlay::new();
        overlay.consume(HostId(1), &compiled.resources);
        overlay.consume(HostId(1), &compiled.resources);
        let cx = Cx::new(&c, &r, &compiled, &overlay, 2);
        assert_eq!((cx.instances(HostId(0)), cx.instances(HostId(1))), (1, 2));
    }

    #[test]
    fn compile_resolves_names() {
        let c = Cluster::builder().host(HostSpec::new("h").zone("az1").label("tier", "gold")).build().unwrap();
        let r = Request::new(1).memory_mb(10.0).resource("gpu", 1.0).vcpus(0.0).zone("az1");
        let compiled = r.compile(&c).unwrap();
        assert_eq!(compiled.resources.as_slice(), &[(ResourceId::MEMORY_MB, 10.0)]);
        assert_eq!(compiled.unknown[0].0.as_ref(), "gpu");
        assert_eq!(compiled.zone.unwrap().domain, DomainId(0));
        let missing = Request::new(1).zone("az9").compile(&c).unwrap();
        assert!(missing.zone.unwrap().domain.is_none());
        let bad = Request::new(1).memory_mb(-1.0).compile(&c).unwrap_err();
        assert!(bad.to_string().contains("memory_mb is negative"), "{bad}");
    }

    #[test]
    fn json_round_trip_and_selector_errors() {
        let r = Request::new(2).vcpus(1.0).selector("a = b or c".parse().unwrap()).seed(7);
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(Request::from_json(&json).unwrap(), r);
        let err = Request::from_json(r#"{"selector": "a = "}"#).unwrap_err();
        assert!(err.to_string().contains("at position 4"), "{err}");
        assert_eq!(Request::from_json("{}").unwrap().count, 1);
    }
}
