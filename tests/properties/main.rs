//! The property tests: one test binary for every proptest suite, each engine against a plain
//! model (the core scheduler, capacity counts, the replica engine, its hooks and its kept
//! scratch, spread, service, the shared cluster, operation sequences). proptest keeps a
//! suite's failing cases in `tests/proptest-regressions/<module>.txt` (its `SourceParallel`
//! rule: the folder beside the one holding `main.rs`) and replays them first.

#[path = "../support/replica_gen.rs"]
mod replica_gen;
#[path = "../support/mod.rs"]
mod support;

mod capacity;
mod import_mutations;
mod operation_sequences;
mod replica_hooks;
mod replica_properties;
mod replica_scratch;
mod scheduler;
mod service_properties;
mod shared_properties;
mod spread_properties;
mod volume_capacity;
