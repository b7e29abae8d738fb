//! The scenario runner: one test binary for every engine's data files under `tests/data/` (the
//! core scheduler's scenarios, Nova's conformance scenarios, the replica, spread, service and
//! shared-state vectors, the capacity scenarios) and the example-based tests beside them: the
//! public API's promises, the one contract every engine's caller filters and weighers honour,
//! hostile input and its limits, the service's failure timelines and the shared cluster under
//! concurrent bursts. The property tests are the `properties` binary, the
//! fuzz corpus replay is `fuzzing/tests/corpus.rs`.

#[path = "../support/data.rs"]
mod data;
#[path = "../support/mod.rs"]
mod support;

mod api;
mod capacity;
mod contract;
mod hostile_input;
mod import_longhorn;
mod import_openstack;
mod import_swarm;
mod nova_conformance;
mod replica_vectors;
mod scheduler;
mod service_scenarios;
mod service_timeline;
mod shared_stress;
mod shared_vectors;
mod spread_scenarios;
mod spread_vectors;
