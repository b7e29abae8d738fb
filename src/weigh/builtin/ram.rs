//! `RAMWeigher`: free memory.

use super::aggregate_multiplier;
use crate::id::HostId;
use crate::request::Cx;
use crate::weigh::{Bounds, Weigher};

/// The filter scheduler's `RAMWeigher`. A host's raw value is `free_ram_mb` (after earlier picks
/// of the request), which is negative on an over-committed host and then counts as 0. Normalised with the minimum fixed at 0 (`x / max`):
/// when every candidate has the same positive amount, each scores 1. A positive multiplier spreads
/// instances, a negative one stacks them.
///
/// The multiplier is the option `ram_weight_multiplier` (default 1.0), overridden per host by the
/// smallest aggregate value of the same key ([`aggregate_multiplier`]). Host-local.
///
/// ```
/// use placewise::weigh::builtin::RamWeigher;
/// use placewise::{Scheduler, Weigher};
///
/// assert_eq!(RamWeigher.name(), "RAMWeigher");
/// let scheduler = Scheduler::builder().weigher(RamWeigher, RamWeigher::DEFAULT_MULTIPLIER).build()?;
/// # let _ = scheduler;
/// # Ok::<(), placewise::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RamWeigher;

impl RamWeigher {
    /// The Nova class name, which [`name`](Weigher::name) returns.
    pub const NAME: &'static str = "RAMWeigher";
    /// The option group of [`OPTION`](Self::OPTION).
    pub const GROUP: &'static str = "filter_scheduler";
    /// The multiplier option.
    pub const OPTION: &'static str = "ram_weight_multiplier";
    /// The aggregate metadata key that overrides the multiplier per host.
    pub const AGGREGATE_KEY: &'static str = "ram_weight_multiplier";
    /// The option's default.
    pub const DEFAULT_MULTIPLIER: f64 = 1.0;
    /// The smallest value the option accepts, if it has a minimum (not applied to aggregate
    /// overrides).
    pub const MIN_MULTIPLIER: Option<f64> = None;
}

impl Weigher for RamWeigher {
    fn name(&self) -> &str {
        Self::NAME
    }

    #[inline]
    fn weigh(&self, cx: &Cx<'_>, host: HostId) -> f64 {
        cx.host_state(host).free_ram_mb()
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
