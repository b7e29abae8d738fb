//! OpenStack Nova's filter scheduler, an engine over the core.
//!
//! # Design
//!
//! [`NovaScheduler`] places a [`NovaRequest`] (the core [`Request`](crate::request::Request) and the VM
//! part, [`VmSpec`](request::VmSpec)) on the core [`Scheduler`](crate::schedule::Scheduler), whose own
//! paths its module docs list: it hands the VM part to the filters and weighers
//! ([`Cx::part`](crate::request::Cx::part)), resolves forced and ignored hosts to the core's
//! [`HostLists`](crate::schedule::HostLists) once per call, and on a rebuild passes the filters that do
//! not [run on rebuild](runs_on_rebuild). Every filter and weigher Nova ships, under its class
//! name and with Nova 34's semantics ([`filters`], [`weighers`]), is a core
//! [`Filter`](crate::filter::Filter) or [`Weigher`](crate::weigh::Weigher), so it also runs in a plain core
//! call, with an empty VM part; the languages they read: Python values and Python's `float()`
//! and `int()` ([`pyvalue`]), extra-spec operators ([`extra_specs`]), the JSON query
//! ([`json_query`]) and metric weight settings ([`weight_setting`]); the VM part of a request:
//! flavor, image, hints, server group, forced and ignored hosts ([`request`]); a host in the
//! filter scheduler's vocabulary ([`host_state`]); configuration by name ([`config`]); the
//! reference tool's scenario format, replayed decision for decision ([`scenario`]); and OpenStack's
//! own API JSON and `nova.conf` read into a snapshot and a configuration ([`import`]).
//!
//! # Paths
//!
//! | path | when it runs | pinned by |
//! |---|---|---|
//! | general: each host judged on its own, the JSON query read by attribute names through [`Vars`](json_query::Vars), each host's weight multiplier asked of it | a check that reads anything but class data (a value derived from resources, an attribute that is not a class attribute); a query that cannot be bound or made numeric | `every_scenario_matches_nova` (`tests/scenarios/nova_conformance.rs`), against the reference tool's recorded decisions; each path below against this one |
//! | class memo (`ClassMemo`, `filters/classes.rs`): one verdict per distinct key of class ids, reused with its reason for every host that shares it | ImagePropertiesFilter, AggregateInstanceExtraSpecsFilter, AggregateImagePropertiesIsolation, when every check reads class data | `memoised_verdicts_equal_per_host_verdicts` (`src/nova/filters/classes.rs`) |
//! | a verdict per spec and class of the value it reads (`ClassMemo::by_check`) | ComputeCapabilitiesFilter | `memoised_verdicts_equal_per_host_verdicts` (`src/nova/filters/classes.rs`) |
//! | a verdict per aggregate class (`ByAggregates`), skipped outright when no aggregate sets a key they read | AggregateMultiTenancyIsolation, AggregateTypeAffinityFilter | `memoised_verdicts_equal_per_host_verdicts` (`src/nova/filters/classes.rs`) |
//! | per-host weight multipliers asked once per aggregate class | every built-in multiplier override (it follows the aggregate set) | `multipliers_per_aggregate_class_match_each_hosts_own` (`src/nova/weighers/tests.rs`) |
//! | the JsonFilter's query bound to `HostState` attribute slots once per request ([`Query::bind`](json_query::Query::bind)) | every JsonFilter request | `bound_queries_answer_as_unbound` (`src/nova/json_query.rs`), `slots_answer_as_names` (`src/nova/filters/json.rs`) |
//! | the numeric query ([`NumericQuery`](json_query::NumericQuery)), numbers only | a bound query of `=`, `in`, orderings, `and` and `or` over number and `bool` literals and numeric slots without dotted keys | `numeric_queries_answer_as_the_query` (`src/nova/json_query.rs`), `numbers_judge_as_the_query` (`src/nova/filters/json.rs`) |
//!
//! # Cost
//!
//! - A class-memoised filter judges each distinct key once per request; a lookup reads the
//!   chunk's class columns once per chunk and indexes a table by them, and nothing is
//!   allocated per host (the [`filters`] module's class memo).
//! - Unique values (addresses, names) are left out of the classes, so they cost nothing.
//! - ComputeCapabilitiesFilter's nearly unique combinations (a feature list with a hypervisor
//!   version) cost one judgement per distinct value of each part a spec reads.
//! - A weigher's per-host multiplier that follows the aggregate set is asked once per
//!   aggregate class, not per host, in both of the core scheduler's scoring paths.
//! - The JsonFilter resolves each variable's attribute name once per request, not per host;
//!   a numeric query compares numbers without building Python values.

pub mod config;
pub mod extra_specs;
pub mod filters;
pub mod host_state;
pub mod import;
pub mod json_query;
pub mod pyvalue;
pub mod request;
pub mod scenario;
mod scheduler;
pub mod weighers;
pub mod weight_setting;

pub use request::NovaRequest;
pub use scheduler::{runs_on_rebuild, NovaScheduler, NovaSchedulerBuilder, RUN_ON_REBUILD};
