//! The service scheduler: edge-site filters, four-level ranking, sticky restarts, host-failure
//! handling.
//!
//! A domain engine over the core for an edge platform's per-site scheduler: it assigns the
//! instances of services to the hosts of one site, keeps them where they are while they may
//! stay, and moves them when their host fails or leaves.
//!
//! # Design
//!
//! [`ServiceScheduler::schedule`] reconciles the services of a [`ServiceRequest`] with a
//! snapshot: services in (application, service) order, instances by index. An assigned
//! instance stays while its host passes its service's hard filters; every other instance goes
//! through the service's filters (one [`Filter`](crate::filter::Filter) type per rule, then the
//! caller's, run as a [`FilterChain`](crate::filter::FilterChain) a chunk of 64 hosts at a
//! time), the soft [`PreferredAffinity`], then the smallest [`RankKey`], ties to the caller's
//! weighers (a [`WeighPass`](crate::weigh::WeighPass)) and then the lowest host id. Each
//! placement is applied to a working snapshot before the next instance. Instances no host
//! takes, and the call itself, are explained by the core's
//! [`Explanation`](crate::explain::Explanation). [`FailureMonitor`] turns host reports and a
//! clock into actions. The engine has no fast path yet: each placement is the general path.
//!
//! # Paths
//!
//! | path | when it runs | pinned by |
//! |---|---|---|
//! | general: the filter chain over every schedulable host, chunk by chunk, the soft affinity, the smallest [`RankKey`] (`best_host`), the caller's weighers among the hosts of that key | every new placement | `ranking_follows_the_lexicographic_model` and, with a caller weigher, `caller_weighers_break_only_ties_of_the_lexicographic_model` (`tests/properties/service_properties.rs`), against a model that recomputes every host's counts for every instance |
//! | the one-host scan: the same chain over one host's lane, whatever its state | the sticky check of an assigned instance, a rebalance move's destination | `one_host_scan_matches_the_full_scan_on_that_host` (`src/service/scheduler.rs`) |
//! | the same order as four weigher tiers of the core [`Scheduler`](crate::schedule::Scheduler) ([`ranking_tiers`]) | a caller who ranks with the core scheduler | `foundation_tiers_rank_like_the_model` (`tests/properties/service_properties.rs`) |
//!
//! # Contents
//!
//! - [Example](#example)
//! - [API](#api)
//! - [The snapshot mapping](#the-snapshot-mapping)
//! - [Label match expressions](#label-match-expressions)
//! - [Filters](#filters)
//! - [Ranking](#ranking)
//! - [Caller filters and weighers](#caller-filters-and-weighers)
//! - [Sticky restarts and modes](#sticky-restarts-and-modes)
//! - [Host failures, removals and additions](#host-failures-removals-and-additions)
//! - [Rebalancing](#rebalancing)
//! - [Unschedulable instances](#unschedulable-instances)
//! - [Cost](#cost)
//! - [Decisions](#decisions)
//!
//! # Example
//!
//! ```
//! use placewise::service::{
//!     Decision, EdgeHost, IngressAllocation, ServiceRequest, ServiceScheduler, ServiceSpec, Site, VolumeRequest,
//! };
//! use placewise::Cluster;
//!
//! let cluster = Cluster::builder()
//!     .host(EdgeHost::new("edge-1").memory_mb(4096.0).label("camera", "yes").build())
//!     .host(EdgeHost::new("edge-2").memory_mb(4096.0).label("camera", "yes")
//!         .volume("data", 10_000.0, &[("type", "ssd")]).build())
//!     .host(EdgeHost::new("edge-3").memory_mb(4096.0).build())
//!     .build()?;
//! let site = Site::new(&cluster, IngressAllocation::Dhcp)?;
//! let services = [
//!     ServiceSpec::replicated("vision", "detector", 1)
//!         .match_host_labels("camera = yes".parse()?)
//!         .volume(VolumeRequest::ephemeral("frames", 2_000.0).labels("type = ssd".parse()?))
//!         .memory_mb(1024.0),
//!     ServiceSpec::replicated("vision", "api", 2).memory_mb(512.0),
//! ];
//! let request = ServiceRequest::new(site, services);
//! let outcome = ServiceScheduler::new().schedule(&cluster, &request)?;
//! let placed: Vec<(&str, &str)> = outcome.decisions.iter().filter_map(|d| match d {
//!     Decision::Placed { instance, host, .. } => Some((instance.as_str(), host.as_str())),
//!     _ => None,
//! }).collect();
//! // `api` comes first (batch order); each of its instances takes the emptiest host.
//! assert_eq!(placed, [("vision/api/0", "edge-1"), ("vision/api/1", "edge-2"), ("vision/detector/0", "edge-2")]);
//!
//! // Scheduling again with the result keeps everything where it is.
//! let again = ServiceScheduler::new().schedule(&outcome.cluster, &request)?;
//! assert!(again.decisions.iter().all(|d| matches!(d, Decision::Kept { .. })));
//! assert!(again.events.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # API
//!
//! The engine has the shape of every engine of the crate: [`ServiceScheduler::builder`]`()…`
//! [`build`](ServiceSchedulerBuilder::build)`()` returns `Result<ServiceScheduler,
//! ServiceError>` ([`ServiceScheduler::new`] is the engine's rules alone), and each call takes
//! the snapshot and a [`ServiceRequest`] (the [`Site`], the services, the explanation
//! options): [`schedule`](ServiceScheduler::schedule)`(&cluster, &request)`,
//! [`reschedule`](ServiceScheduler::reschedule)`(&cluster, &request, host, scope)` for a
//! failure action, [`rebalance_plan`](ServiceScheduler::rebalance_plan)`(&cluster, &request)`.
//! The scheduler is stateless, so there is no scratch and no `schedule_with`. Options live in
//! the builder (filters, weighers) or the request ([`ExplainOptions`](crate::request::ExplainOptions));
//! nothing is set after `build()`.
//!
//! # The snapshot mapping
//!
//! The engine reads an ordinary [`Cluster`](crate::snapshot::Cluster); nothing in the snapshot is
//! specific to it. [`EdgeHost`] writes a host in this shape.
//!
//! | product concept | snapshot |
//! |---|---|
//! | site | the cluster; [`Site`] holds the parsed per-host data and the [`IngressAllocation`] |
//! | service type `(application, service)` | instance group `application/service` |
//! | service instance | an [`Instance`](crate::snapshot::Instance) with id `application/service/index` |
//! | delayed shutdown | the instance's `terminating` flag |
//! | host labels | host labels |
//! | memory, CPU | resources `memory_mb`, `vcpus` |
//! | container layer quota | resource `container_layer_mb` (declared only where quotas are enforced) |
//! | GPUs | resource `gpu` |
//! | local volume | attribute `local_volumes`: `[{"name": n, "labels": {…}}]`; its size is resource `volume/<n>` in MB |
//! | device | attribute `devices`: `[{"name": n, "labels": {…}}]` |
//! | per-host ingress pool | resource `ingress_ip` (number of addresses) |
//! | allocations | each placed instance uses its limits, `gpu`, one `ingress_ip` (pools only) and `volume/<n>` per volume |
//!
//! [`Site::new`] validates both attributes and fails with a typed [`ServiceError`] naming host,
//! attribute and entry (wrong shape, non-string label, duplicate name, a local volume without
//! its `volume/<n>` resource). A misspelt attribute key (`local-volumes`, `Devices`) would read
//! as no volumes or devices; [`ServiceScheduler::attribute_warnings`] reports it, naming host,
//! key and the key meant.
//!
//! # Label match expressions
//!
//! [`MatchExpr`] parses the product's grammar and builds the foundation's
//! [`LabelExpr`](crate::expr::LabelExpr) tree:
//!
//! ```text
//! expr      := and ( "or" and )*
//! and       := unary ( "and" unary )*
//! unary     := "not" unary | "(" expr ")" | "{}" | predicate
//! predicate := key [ "=" value | "~" value ]
//! key       := word                      value := word | '…' | "…"
//! word      := [A-Za-z0-9._/-]+ that is not "and", "or" or "not"
//! ```
//!
//! - Precedence `not` > `and` > `or`; both binary operators left-associative; `not(…)` needs no
//!   space. Keywords are reserved only as whole words.
//! - Single quotes are literal; in double quotes `\"` and `\\` are escapes and any other
//!   backslash is kept as written (so `"\d+"` reaches the regex intact).
//! - `k = v` and `k ~ re` are false when `k` is absent, so `not (k = v)` is true then. A bare
//!   `k` means "has the key". `{}` matches only the empty label set, also inside compound
//!   expressions. Matching is case-sensitive.
//! - The foundation's extensions (`!=`, `in`, `notin`, `&&`, `||`, `!`, `,`) are errors here.
//! - `Display` prints a canonical form (single spaces, words bare, other values double-quoted,
//!   parentheses only where needed) that parses back to the same tree.
//! - Errors are [`ParseError`](crate::error::ParseError)s with the byte position and what was expected.
//!
//! **Regular expressions** use the [`regex`] crate, not PCRE: matching is unanchored like PCRE's
//! default search (`^`/`$` anchor explicitly), but there are **no look-around assertions
//! (`(?=`, `(?!`, `(?<=`, `(?<!`), no backreferences (`\1`), no possessive quantifiers or atomic
//! groups, no recursion or callouts**; such a pattern is a parse error at the pattern's position.
//! `\d`, `\w` and `\s` are Unicode-aware in `regex` (ASCII in PCRE by default; `(?-u:\d)` for
//! ASCII), and matching time is linear in the input.
//!
//! # Filters
//!
//! Each is its own [`Filter`](crate::filter::Filter) type in [`filters`], so it composes with the
//! foundation's filters too: [`HostLabelsFilter`], [`DeviceFilter`] (device labels and GPUs),
//! [`ContainerLimitsFilter`] (memory, CPU, container layer), [`VolumesFilter`],
//! [`IngressFilter`], [`InstanceCountFilter`] (even distribution), applied in that order, and the
//! soft [`PreferredAffinity`]. New placements also need a schedulable host (up, enabled, not
//! cordoned, not evicting).
//!
//! # Ranking
//!
//! Among the hosts that pass, the soft affinity rule keeps those satisfying the most
//! preferences, then the host with the smallest [`RankKey`] wins: the four counts compared
//! lexicographically, in the document's priority order (same service live, same service in
//! delayed shutdown, other services live, other services in delayed shutdown). **Ties go to
//! the lowest [`HostId`](crate::id::HostId)** (no random pick). Counts are updated after every
//! placement: each placement is applied to a working snapshot before the next instance.
//!
//! The same order is available to the foundation's [`Scheduler`](crate::schedule::Scheduler) as four
//! weigher tiers ([`ranking_tiers`], [`RankLevelWeigher`]); both agree host for host.
//!
//! # Caller filters and weighers
//!
//! [`ServiceScheduler::builder`] takes the caller's [`Filter`](crate::filter::Filter)s and
//! [`Weigher`](crate::weigh::Weigher)s, which behave as under every other engine (the contract in
//! `tests/scenarios/contract.rs`):
//!
//! - The caller's filters are hard filters: they run after the engine's own (before the even
//!   distribution's count rule), count towards the eligible hosts of decision 9, and take part
//!   in the sticky check (an instance whose host fails one moves) and a rebalance move's
//!   destination. A filter whose `prepare` fails, or that records an error with
//!   [`Rejections::fail`](crate::filter::Rejections::fail), fails the call with
//!   [`ServiceError::Prepare`]; a filter that rejects every host makes the instance
//!   [`Unschedulable`], under the filter's name.
//! - The caller's weighers break ties between the hosts of the smallest [`RankKey`] (after the
//!   soft affinity): normalised over those hosts, times their multipliers, summed; the highest
//!   sum wins, then the lowest host id. They never outrank a count, so every decision below
//!   holds with them, and with none the engine is unchanged. A multiplier that is not finite
//!   is refused when building ([`ServiceError::Build`]) or, per host, when weighing
//!   ([`ServiceError::Prepare`]).
//! - Both see the working snapshot with the call's earlier placements applied: a hook reads
//!   them in the host records ([`Cx::instances`](crate::request::Cx::instances),
//!   [`Cx::free`](crate::request::Cx::free)); the [`Overlay`](crate::snapshot::Overlay) stays empty.
//!
//! # Sticky restarts and modes
//!
//! An assigned instance stays on its host while that host passes its service's hard filters,
//! judged with the instance's own use released. This also covers a configuration change (the
//! instance moves only if its host stops passing; a kept instance's recorded use is left as it
//! is, for the caller to update when it restarts the instance) and the ephemeral-volume pin
//! (decision 10).
//!
//! - [`ServiceMode::Replicated`]: instances `0..replicas`; an instance whose host stops passing is
//!   taken off and placed again like a new one ([`Decision::Moved`]); instances beyond the
//!   replica count are [`Decision::Removed`].
//! - [`ServiceMode::OnePerMatchingHost`]: one instance on every schedulable host passing the filters;
//!   instances are bound to their host: kept while it passes, removed when it does not, and a
//!   newly matching host gets a new instance with the next free index.
//!
//! # Host failures, removals and additions
//!
//! [`FailureMonitor`] turns reports ([`HostEvent`]) and an injected clock into [`Action`]s:
//! a failure report waits [`FailureTimers::down_wait`] (30 s), then asks for a probe that may
//! take [`FailureTimers::check_timeout`] (5 s); still down (or no answer) → reschedule the
//! single-replica instances; up without its supervisor → wait
//! [`FailureTimers::supd_wait`] (30 s) more, then reschedule the same way. Coming back at any
//! point before cancels everything. A removed host reschedules every instance; an added host
//! moves nothing. [`ServiceScheduler::reschedule`] carries a reschedule action out.
//!
//! # Rebalancing
//!
//! [`ServiceScheduler::rebalance_plan`] returns the fewest moves that even out each service's
//! per-host counts (what an operator's "reschedule applications on a site" does), without
//! applying them.
//!
//! # Unschedulable instances
//!
//! An instance no host can take is an [`Unschedulable`] outcome, never an `Err`; it stays
//! unassigned. Its [`Explanation`](crate::explain::Explanation) counts the hosts each filter
//! rejected (hosts not schedulable first, under the filter `host`), lists every host's verdict
//! when the request [asks](ServiceRequest::explain), and carries the instance's text
//! (`shop/web/0 cannot be scheduled: 0/3 hosts are available: …`) as its `message`. The
//! outcome's own [`explanation`](ServiceOutcome::explanation) is the first unschedulable
//! instance's, else the last placement's, with the best hosts and their ranking terms when the
//! request [asks](ServiceRequest::explain). Calling [`ServiceScheduler::schedule`] again
//! retries it. Retry on: a host added ([`ActionKind::RetryUnschedulable`]), a host recovered
//! ([`ActionKind::Recovered`]), host labels changed, capacity freed (an instance removed or a
//! service scaled down) and a service specification changed.
//!
//! # Cost
//!
//! - Placing 1,000 instances of 50 services (labels, limits, volumes, ingress, GPUs,
//!   anti-affinity) on 2,000 hosts from nothing takes about 32 ms; reconciling the result
//!   (every instance kept) about 5 ms; rescheduling a removed host's instances about 5 ms
//!   (criterion medians on the 2-core CI machine class, `cargo bench --bench service`).
//! - Each placement costs one filtering pass over the hosts (chunk by chunk), one ranking pass
//!   over the survivors and one snapshot event.
//! - A sticky check costs one snapshot event (the instance's own use released) and one pass
//!   of the chain over the host's lane.
//!
//! # Decisions
//!
//! The reference leaves these open; each is settled here and tested (unit tests beside the
//! code, scenario files under `tests/data/service/`, timelines in `tests/scenarios/service_timeline.rs`).
//!
//! | # | question | settled |
//! |---|---|---|
//! | 1 | combining the four counts | lexicographic [`RankKey`], fewest wins, not a weighted sum |
//! | 2 | final tie-break | lowest host id, always (no seeded pick) |
//! | 3 | "service type" | `(application, service)`, the group `application/service`; "other" is every other instance on the host, grouped or not |
//! | 4 | which instances count | every instance record on the host (assigned but not started included; the snapshot does not know "failed"); delayed-shutdown instances of the same service count at level 2; the instance being placed is taken off its old host first and does not count there |
//! | 5 | batch order | services by (application, service name), instances by index; counts updated after each placement |
//! | 6 | soft affinity | a soft filter before the ranking: keep the hosts satisfying the most preferences (never empty), so affinity outranks spreading |
//! | 7 | several services listed | maximise the number satisfied; only instances already placed (earlier ones of the batch included) count; directional; names are services of the same application |
//! | 8 | stickiness vs soft rules | stickiness wins: the sticky check uses the hard filters only |
//! | 9 | number-of-instances filter | at most `ceil(replicas / eligible hosts)` live instances per host, eligible = hosts passing the other filters before the batch; new placements only (a kept instance is never evicted by it; [`rebalance_plan`](ServiceScheduler::rebalance_plan) evens out) |
//! | 10 | volume fitting | first fit in the host's local-volume order; volumes may share a local volume; capacity = `volume/<n>` size minus allocated sizes; the ephemeral pin is the sticky rule (hard while the host passes); a rescheduled instance gets new volumes (data on a failed host is lost); persistent volumes are not pinned |
//! | 11 | layer / memory / CPU | against unallocated capacity with the snapshot's allocation ratio (1 = no over-commit); a layer limit rejects hosts without `container_layer_mb`; resource-profile caps are not modelled |
//! | 12 | GPUs / devices | devices by label only, shared, in their own namespace (not host labels); GPUs counted and exclusive |
//! | 13 | ingress | by [`IngressAllocation`]: per-host pool, site pool (global check), DHCP and port forwarding always pass; the address is taken at scheduling time |
//! | 14 | expression details | see [above](#label-match-expressions) |
//! | 15 | failure timing | one probe with a timeout, no polling; a return within any wait cancels; after the supervisor wait, reschedule without another check |
//! | 16 | single-replica only | multi-replica instances stay assigned to the failed host (degraded, no alert) until it returns or is removed; one-per-host instances are never rescheduled (a removed host's are removed) |
//! | 17 | host deletion | every instance is rescheduled with fresh volumes; the old volumes go with the host |
//! | 18 | retry triggers | see [above](#unschedulable-instances); a spec change evicts only instances whose host fails the new filters |
//! | 19 | failure reporting | [`Unschedulable`] with the core's [`Explanation`](crate::explain::Explanation) (per-filter counts); the instance stays unassigned |
//! | 20 | delayed shutdown | an instance told to stop but still in its grace period: the `terminating` flag, for as long as the snapshot carries it; it counts in the ranking, is never kept, moved or rescheduled |

mod error;
mod expr;
mod failure;
pub mod filters;
mod rank;
mod request;
mod scheduler;
mod site;
mod spec;

pub use error::ServiceError;
pub use expr::MatchExpr;
pub use failure::{Action, ActionKind, FailureMonitor, FailureTimers, HostEvent, Phase, Scope};
pub use filters::{
    ContainerLimitsFilter, DeviceFilter, HostLabelsFilter, IngressFilter, InstanceCountFilter, PreferredAffinity,
    VolumesFilter,
};
pub use rank::{ranking_tiers, RankKey, RankLevel, RankLevelWeigher};
pub use request::ServiceRequest;
pub use scheduler::{
    Decision, RebalanceMove, ServiceOutcome, ServiceScheduler, ServiceSchedulerBuilder, Unschedulable,
};
pub use site::{
    Device, EdgeHost, IngressAllocation, LocalVolume, Site, ATTRIBUTES, CONTAINER_LAYER_MB, DEVICES, GPU, INGRESS_IP,
    LOCAL_VOLUMES, VOLUME_RESOURCE_PREFIX,
};
pub use spec::{Limits, PlacementRules, ServiceMode, ServiceSpec, VolumeKind, VolumeRequest, MAX_REPLICAS};

#[cfg(test)]
mod tests;
