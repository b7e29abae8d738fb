//! placewise decides where workloads go.
//!
//! Give it an in-memory [`Cluster`] snapshot and a [`Request`]; a [`Scheduler`] made of
//! [`Filter`]s and [`Weigher`]s returns a [`Outcome`] that says which host takes each instance,
//! and an [`Explanation`] of every decision.
//!
//! # Contents
//!
//! - [Quick start](#quick-start)
//! - [API themes](#api-themes)
//! - [Modules](#modules)
//! - [Cargo features](#cargo-features)
//!
//! # Quick start
//!
//! ```
//! use placewise::{
//!     AvailabilityZoneFilter, Cluster, ComputeFilter, FreeResourceWeigher, HostSpec, Request,
//!     ResourceFilter, Scheduler,
//! };
//!
//! let cluster = Cluster::builder()
//!     .host(HostSpec::new("node-1").vcpus(16.0).memory_mb(65536.0).zone("az1"))
//!     .host(HostSpec::new("node-2").vcpus(16.0).memory_mb(32768.0).zone("az1"))
//!     .host(HostSpec::new("node-3").vcpus(16.0).memory_mb(65536.0).zone("az2"))
//!     .build()?;
//!
//! let scheduler = Scheduler::builder()
//!     .filter(ComputeFilter)
//!     .filter(ResourceFilter::new())
//!     .filter(AvailabilityZoneFilter)
//!     .weigher(FreeResourceWeigher::ram(), 1.0) // positive: spread by free memory
//!     .build()?;
//!
//! let request = Request::new(2).vcpus(4.0).memory_mb(16384.0).zone("az1");
//! let placement = scheduler.schedule(&cluster, &request)?;
//! let hosts: Vec<&str> = placement.selections.iter().map(|s| s.host_name.as_str()).collect();
//! assert_eq!(hosts, ["node-1", "node-1"]);
//!
//! let too_big = Request::new(1).memory_mb(100_000.0);
//! let failed = scheduler.schedule(&cluster, &too_big)?;
//! assert!(!failed.is_complete());
//! assert_eq!(failed.explanation.to_string(), "0/3 hosts are available: 3 insufficient memory");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # API themes
//!
//! - **Snapshots are values.** A [`Cluster`] never changes; [`Cluster::apply`] returns a new one
//!   for a [`ClusterEvent`] and shares every untouched host. Hosts are dense [`HostId`]s; labels
//!   are interned [`Symbol`](id::Symbol)s.
//! - **Validation at the edges.** [`ClusterBuilder`], JSON deserialisation and
//!   [`Request::compile`] check names, numbers and expressions once and report a typed
//!   [`BuildError`] naming the host, field or position. The core then trusts its input.
//! - **Composable traits.** [`Filter`] and [`Weigher`] are object-safe, have closure adapters
//!   ([`filter_fn`], [`weigher_fn`]) and pass-through impls for `&T`, `Box<T>` and `Arc<T>`;
//!   filters combine with [`FilterExt`](filter::FilterExt) (`and`, `or`, `not`, `named`).
//! - **Ranking is tiers.** Weighers in a tier are [normalised](weigh::normalize) and summed with their
//!   multipliers; tiers compare one after another; ties go to the lowest host id, or to a seeded
//!   pick among the best `k` ([`SchedulerBuilder::host_subset_size`]).
//! - **Rejections are data.** "No valid host" is a [`Outcome`] with fewer selections and an
//!   [`Explanation`] (`0/12 hosts are available: 7 insufficient memory, 5 not in zone az2`), not
//!   an error. `Err` means the input was wrong.
//! - **The filter scheduler, by name.** Every filter and weigher of OpenStack Nova's filter
//!   scheduler is built in under its class name in its engine, [`nova`] ([`nova::filters`], [`nova::weighers`]);
//!   [`SchedulerConfig`] reads a deployer's configuration by name, [`Ties::PreviousOrder`](schedule::Ties::PreviousOrder) is
//!   its selection loop, and [`nova::scenario`] replays the reference tool's scenarios, decision
//!   for decision.
//! - **How many more fit.** [`capacity`] counts, for the core scheduler, the replica engine and
//!   the spread engine, how many more instances, volumes or tasks fit, per zone and rack, and
//!   what runs out first: exact under the engine's own rules, at a cost per host rather than per
//!   instance.
//! - **No allocation per host on the hot path.** Candidate lists, scores and the [`Overlay`](snapshot::Overlay) of
//!   virtual consumption live in a reusable [`Scratch`] ([`Scheduler::schedule_with`]).
//!
//! # Modules
//!
//! | module | what it holds |
//! |---|---|
//! | [`id`] | dense `u32` ids |
//! | [`error`] | [`BuildError`], [`EventError`], [`ScheduleError`], [`ParseError`](error::ParseError) |
//! | [`rng`] | the seeded generator behind random picks |
//! | [`snapshot`] | [`Cluster`], its builder and JSON form, [`ClusterEvent`], [`Overlay`](snapshot::Overlay) |
//! | [`expr`] | label expressions ([`LabelExpr`]) and their compiled form |
//! | [`request`] | [`Request`], and [`Cx`], what filters and weighers see |
//! | [`filter`] | the [`Filter`] trait, adapters, combinators and the core's built-ins, [`filter::builtin`] |
//! | [`weigh`] | the [`Weigher`] trait, [`normalize`](weigh::normalize) and the core's built-in, [`weigh::builtin`] |
//! | [`schedule`] | [`Scheduler`], its builder, [`Outcome`] |
//! | [`explain`] | [`Explanation`] and its parts |
//! | [`import`] | what the importers of real systems' objects share: [`import::Document`], typed errors naming file, object and field, warnings |
//! | [`hooks`] | [`hooks::Hooks`]: the caller's filters and tiers of weighers as every engine's builder collects and validates them |
//! | [`nova`] | OpenStack Nova's filter scheduler: its filters and weighers by class name, its request parts and languages, configuration by name, the reference tool's scenarios |
//! | [`replica`] | the Longhorn-style replica scheduler: node/zone then disk stage, anti-affinity tiers, space formulas, disk choice, failed-replica reuse, locality and auto-balance plans, the caller's node and disk hooks and extra levels, [`replica::ReplicaScratch`] |
//! | [`spread`] | SwarmKit-style placement preferences: spread, pack and weighted levels, hard spread limits, SwarmKit's filter pipeline |
//! | [`service`] | the edge-site service scheduler: match expressions, filters, four-level ranking, sticky restarts, host-failure state machine, rebalance plans |
//! | [`capacity`] | how many more fit, where, and what runs out first, for the core scheduler, the replica engine and the spread engine |
//! | [`shared`] | concurrent schedulers on one shared state: claims, compare-and-swap commits, the update log, partitions |
//!
//! # Cargo features
//!
//! - `reference` (off): makes public the plain reference implementations the fast paths are
//!   tested and measured against (`capacity::volumes_stepwise`, one engine call per volume;
//!   `capacity::tasks_by_bisection`, one engine call per batch size). Not for production use
//!   and outside the stable API; the crate's own tests and benches turn it on.

pub mod capacity;
pub mod error;
pub mod explain;
pub mod expr;
pub mod filter;
pub mod hooks;
pub mod id;
pub mod import;
mod json;
pub mod nova;
pub mod replica;
pub mod request;
pub mod rng;
pub mod schedule;
pub mod service;
pub mod shared;
pub mod snapshot;
pub mod spread;
pub mod weigh;

pub use error::{BuildError, EventError, ScheduleError};
pub use explain::Explanation;
pub use expr::LabelExpr;
pub use filter::builtin::{AvailabilityZoneFilter, ComputeFilter, ResourceFilter};
pub use filter::{filter_fn, Filter, Verdict};
pub use id::HostId;
pub use nova::config::SchedulerConfig;
pub use nova::request::NovaRequest;
pub use nova::NovaScheduler;
pub use replica::{ReplicaError, ReplicaScheduler, ReplicaSettings, Volume};
pub use request::{Cx, Request};
pub use schedule::{Outcome, Scheduler, SchedulerBuilder, Scratch, Selection};
pub use service::{ServiceError, ServiceRequest, ServiceScheduler, ServiceSpec};
pub use snapshot::{Cluster, ClusterBuilder, ClusterEvent, HostSpec};
pub use spread::{SpreadError, SpreadRequest, SpreadScheduler};
pub use weigh::builtin::FreeResourceWeigher;
pub use weigh::{weigher_fn, Weigher};

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

#[cfg(test)]
mod tests {
    /// The crate docs' module table lists every public module (issue 42, item 13: it once
    /// left out `replica`).
    #[test]
    fn module_table_lists_every_public_module() {
        let source = include_str!("lib.rs");
        let table: Vec<&str> = source
            .lines()
            .skip_while(|line| *line != "//! # Modules")
            .take_while(|line| line.starts_with("//!"))
            .filter(|line| line.starts_with("//! | [`"))
            .collect();
        let modules = source.lines().filter_map(|line| {
            let rest = line.strip_prefix("pub mod ")?;
            Some(&rest[..rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?])
        });
        let mut count = 0;
        for module in modules {
            count += 1;
            let cell = format!("//! | [`{module}`] |");
            assert!(table.iter().any(|row| row.starts_with(&cell)), "module table lacks `{module}`");
        }
        assert_eq!(count, table.len(), "the module table has a row for a module that is not public");
    }
}
