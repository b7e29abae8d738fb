//! The filter scheduler's (Nova's) weighers, one concept per file, named after its classes:
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
//! | [`PCIWeigher`] | `100 − min(free PCI devices, 99)`, 0 devices unless the host says | `pci_weight_multiplier` (1.0, min 0) | min–max |
//! | [`CrossCellWeigher`] | 0: the model has one cell and no cross-cell moves | `cross_cell_move_weight_multiplier` (1e6) | min–max |
//! | [`ImagePropertiesWeigher`] | 0: its multiplier must be 0 (a non-zero one is not modelled) | `image_props_weight_multiplier` (0.0) | min–max |
//!
//! These are the thirteen of Nova 34's `all_weighers`. Each exposes its class name, option and
//! default as constants (`RamWeigher::OPTION`, `RamWeigher::DEFAULT_MULTIPLIER` …); the scheduler
//! takes the configured multiplier (`builder.weigher(RamWeigher, 1.0)`). Every one of them but
//! `ImagePropertiesWeigher`, whose raw values are all 0, overrides the multiplier per host with
//! the smallest value of its key across the host's aggregates ([`aggregate_multiplier`]), and
//! every one is host-local: its raw value depends only on the host and what earlier instances of
//! the request consumed there.

/// The filter scheduler's per-aggregate multiplier override as a weigher's
/// [`Extension`](crate::weigh::Extension): the smallest value of the type's `AGGREGATE_KEY`
/// across the host's aggregates, else the configured multiplier; asked once per aggregate class;
/// no candidate check. `negated`: the weigher adds the multiplier's negative
/// (`BuildFailureWeigher`: fewer failures weigh more).
macro_rules! aggregate_extension {
    ($ty:ty) => {
        aggregate_extension!(@impl $ty, |m| m);
    };
    ($ty:ty, negated) => {
        aggregate_extension!(@impl $ty, |m| -m);
    };
    (@impl $ty:ty, |$m:ident| $signed:expr) => {
        impl $crate::weigh::Extension for $ty {
            fn multiplier(&self, cx: &$crate::request::Cx<'_>, host: $crate::id::HostId, configured: f64) -> f64 {
                let $m = $crate::nova::weighers::aggregate_multiplier(cx, host, Self::AGGREGATE_KEY, configured);
                $signed
            }

            fn per_host_multiplier(&self) -> bool {
                true
            }

            fn multiplier_by_aggregates(&self) -> bool {
                true
            }

            fn validates(&self) -> bool {
                false
            }
        }
    };
}

/// The filter scheduler's plain weighers share one shape: class-name and option constants, a raw
/// value read from the host-state view, fixed bounds, the per-aggregate multiplier override, and
/// host locality. Each weigher file declares and documents its type and states what differs.
macro_rules! nova_weigher {
    (@min) => {
        None
    };
    (@min $min:expr) => {
        Some($min)
    };
    (
        $ty:ident,
        name: $name:literal,
        option: $option:literal,
        default: $default:expr,
        $(min: $min:expr,)?
        bounds: $bounds:expr,
        raw: |$cx:ident, $host:ident| $raw:expr $(,)?
    ) => {
        impl $ty {
            /// The Nova class name, which [`name`](crate::weigh::Weigher::name) returns.
            pub const NAME: &'static str = $name;
            /// The option group of [`OPTION`](Self::OPTION).
            pub const GROUP: &'static str = "filter_scheduler";
            /// The multiplier option.
            pub const OPTION: &'static str = $option;
            /// The aggregate metadata key that overrides the multiplier per host.
            pub const AGGREGATE_KEY: &'static str = $option;
            /// The option's default.
            pub const DEFAULT_MULTIPLIER: f64 = $default;
            /// The smallest value the option accepts, if it has a minimum (not applied to
            /// aggregate overrides).
            pub const MIN_MULTIPLIER: Option<f64> = nova_weigher!(@min $($min)?);
        }

        impl $crate::weigh::Weigher for $ty {
            fn name(&self) -> &str {
                Self::NAME
            }

            #[inline]
            fn weigh(&self, $cx: &$crate::request::Cx<'_>, $host: $crate::id::HostId) -> f64 {
                $raw
            }

            fn bounds(&self) -> $crate::weigh::Bounds {
                $bounds
            }

            fn host_local(&self) -> bool {
                true
            }

            fn extension(&self) -> Option<&dyn $crate::weigh::Extension> {
                Some(self)
            }
        }

        aggregate_extension!($ty);
    };
}

mod aggregate_multiplier;
mod build_failure;
mod cpu;
mod cross_cell;
mod disk;
mod hypervisor_version;
mod image_properties;
mod io_ops;
mod metrics;
mod num_instances;
mod pci;
mod ram;
mod soft_affinity;
mod soft_anti_affinity;
#[cfg(test)]
mod tests;

pub use aggregate_multiplier::aggregate_multiplier;
pub use build_failure::BuildFailureWeigher;
pub use cpu::CpuWeigher;
pub use cross_cell::CrossCellWeigher;
pub use disk::DiskWeigher;
pub use hypervisor_version::HypervisorVersionWeigher;
pub use image_properties::ImagePropertiesWeigher;
pub use io_ops::IoOpsWeigher;
pub use metrics::MetricsWeigher;
pub use num_instances::NumInstancesWeigher;
pub use pci::PCIWeigher;
pub use ram::RamWeigher;
pub use soft_affinity::ServerGroupSoftAffinityWeigher;
pub use soft_anti_affinity::ServerGroupSoftAntiAffinityWeigher;
