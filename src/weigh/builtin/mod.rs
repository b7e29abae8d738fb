//! The built-in weighers, one concept per file.
//!
//! [`FreeResourceWeigher`] is the library's own. The others are the filter scheduler's (Nova's)
//! weighers, named after its classes:
//!
//! | weigher | raw value per host | option (default) | normalisation |
//! |---|---|---|---|
//! | [`RamWeigher`] | `free_ram_mb` | `ram_weight_multiplier` (1.0) | min 0 → `x / max` |
//! | [`CpuWeigher`] | `vcpus_total × cpu_allocation_ratio − vcpus_used` | `cpu_weight_multiplier` (1.0) | min 0 → `x / max` |
//! | [`DiskWeigher`] | `free_disk_mb` | `disk_weight_multiplier` (1.0) | min 0 → `x / max` |
//! | [`IoOpsWeigher`] | `num_io_ops` | `io_ops_weight_multiplier` (−1.0) | min 0 → `x / max` |
//! | [`NumInstancesWeigher`] | `num_instances` | `num_instances_weight_multiplier` (0.0) | min–max |
//! | [`HypervisorVersionWeigher`] | `hypervisor_version`, 0 if unset | `hypervisor_version_weight_multiplier` (1.0) | min–max |
//! | [`BuildFailureWeigher`] | `failed_builds` | `build_failure_weight_multiplier` (1e6), applied negated | min–max |
//! | [`MetricsWeigher`] | Σ metric × ratio over `weight_setting` | `[metrics] weight_multiplier` (1.0) | min–max |
//! | [`ServerGroupSoftAffinityWeigher`] | group members on the host (`soft-affinity`) | `soft_affinity_weight_multiplier` (1.0) | min–max |
//! | [`ServerGroupSoftAntiAffinityWeigher`] | minus that count (`soft-anti-affinity`) | `soft_anti_affinity_weight_multiplier` (1.0) | min–max |
//!
//! Each exposes its class name, option and default as constants (`RamWeigher::OPTION`,
//! `RamWeigher::DEFAULT_MULTIPLIER` …); the scheduler takes the configured multiplier
//! (`builder.weigher(RamWeigher, 1.0)`). Every one of them overrides the multiplier per host with
//! the smallest value of its key across the host's aggregates ([`aggregate_multiplier`]), and
//! every one is host-local: its raw value depends only on the host and what earlier instances of
//! the request consumed there.

mod aggregate_multiplier;
mod build_failure;
mod cpu;
mod disk;
mod free;
mod hypervisor_version;
mod io_ops;
mod metrics;
mod num_instances;
mod ram;
mod soft_affinity;
mod soft_anti_affinity;
#[cfg(test)]
mod tests;

pub use aggregate_multiplier::aggregate_multiplier;
pub use build_failure::BuildFailureWeigher;
pub use cpu::CpuWeigher;
pub use disk::DiskWeigher;
pub use free::FreeResourceWeigher;
pub use hypervisor_version::HypervisorVersionWeigher;
pub use io_ops::IoOpsWeigher;
pub use metrics::MetricsWeigher;
pub use num_instances::NumInstancesWeigher;
pub use ram::RamWeigher;
pub use soft_affinity::ServerGroupSoftAffinityWeigher;
pub use soft_anti_affinity::ServerGroupSoftAntiAffinityWeigher;
