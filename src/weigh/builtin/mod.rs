//! The core's built-in weigher, [`FreeResourceWeigher`].
//!
//! The filter scheduler's weighers live in their engine, [`crate::nova::weighers`]; their names
//! are re-exported here until the public surface settles (see `CHANGELOG.md`).

mod free;

pub use free::FreeResourceWeigher;

#[doc(no_inline)]
pub use crate::nova::weighers::{
    aggregate_multiplier, BuildFailureWeigher, CpuWeigher, DiskWeigher, HypervisorVersionWeigher, IoOpsWeigher,
    MetricsWeigher, NumInstancesWeigher, RamWeigher, ServerGroupSoftAffinityWeigher,
    ServerGroupSoftAntiAffinityWeigher,
};
