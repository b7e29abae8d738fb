//! `CPUWeigher`: free vCPUs after over-commit.

use super::aggregate_multiplier;
use crate::id::{HostId, ResourceId};
use crate::request::Cx;
use crate::weigh::{Bounds, Weigher};

/// The filter scheduler's `CPUWeigher`. A host's raw value is
/// `vcpus_total × cpu_allocation_ratio − vcpus_used` (earlier picks of the request included),
/// which is negative on a host already past its ratio and then counts as 0. Normalised with the
/// minimum fixed at 0 (`x / max`).
///
/// The multiplier is the option `cpu_weight_multiplier` (default 1.0), overridden per host by the
/// smallest aggregate value of the same key ([`aggregate_multiplier`]). Host-local.
///
/// ```
/// use placewise::weigh::builtin::CpuWeigher;
/// use placewise::{Scheduler, Weigher};
///
/// assert_eq!(CpuWeigher.name(), "CPUWeigher");
/// let scheduler = Scheduler::builder().weigher(CpuWeigher, CpuWeigher::DEFAULT_MULTIPLIER).build()?;
/// # let _ = scheduler;
/// # Ok::<(), placewise::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CpuWeigher;

impl CpuWeigher {
    /// The Nova class name, which [`name`](Weigher::name) returns.
    pub const NAME: &'static str = "CPUWeigher";
    /// The option group of [`OPTION`](Self::OPTION).
    pub const GROUP: &'static str = "filter_scheduler";
    /// The multiplier option.
    pub const OPTION: &'static str = "cpu_weight_multiplier";
    /// The aggregate metadata key that overrides the multiplier per host.
    pub const AGGREGATE_KEY: &'static str = "cpu_weight_multiplier";
    /// The option's default.
    pub const DEFAULT_MULTIPLIER: f64 = 1.0;
    /// The smallest value the option accepts, if it has a minimum (not applied to aggregate
    /// overrides).
    pub const MIN_MULTIPLIER: Option<f64> = None;
}

impl Weigher for CpuWeigher {
    fn name(&self) -> &str {
        Self::NAME
    }

    #[inline]
    fn weigh(&self, cx: &Cx<'_>, host: HostId) -> f64 {
        let s = cx.host_state(host);
        s.vcpus_total() * s.allocation_ratio(ResourceId::VCPUS) - s.vcpus_used()
    }

    fn bounds(&self) -> Bounds {
        Bounds::ZERO_MIN
    }

    fn multiplier(&self, cx: &Cx<'_>, host: HostId, configured: f64) -> f64 {
        aggregate_multiplier(cx, host, Self::AGGREGATE_KEY, configured)
    }

    fn per_host_multiplier(&self) -> bool {
        true
    }

    fn host_local(&self) -> bool {
        true
    }
}
