//! `NumInstancesWeigher`: instance count.

use super::aggregate_multiplier;
use crate::id::HostId;
use crate::request::Cx;
use crate::weigh::{Bounds, Weigher};

/// The filter scheduler's `NumInstancesWeigher`. A host's raw value is `num_instances` (plus one
/// per earlier pick of the request), normalised min–max over the candidates. The default multiplier
/// is 0: the weigher is off until configured; a negative one prefers hosts with fewer instances.
///
/// The multiplier is the option `num_instances_weight_multiplier` (default 0.0), overridden per
/// host by the smallest aggregate value of the same key ([`aggregate_multiplier`]). Host-local.
///
/// ```
/// use placewise::weigh::builtin::NumInstancesWeigher;
/// use placewise::{Scheduler, Weigher};
///
/// assert_eq!(NumInstancesWeigher.name(), "NumInstancesWeigher");
/// let scheduler = Scheduler::builder().weigher(NumInstancesWeigher, NumInstancesWeigher::DEFAULT_MULTIPLIER).build()?;
/// # let _ = scheduler;
/// # Ok::<(), placewise::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct NumInstancesWeigher;

impl NumInstancesWeigher {
    /// The Nova class name, which [`name`](Weigher::name) returns.
    pub const NAME: &'static str = "NumInstancesWeigher";
    /// The option group of [`OPTION`](Self::OPTION).
    pub const GROUP: &'static str = "filter_scheduler";
    /// The multiplier option.
    pub const OPTION: &'static str = "num_instances_weight_multiplier";
    /// The aggregate metadata key that overrides the multiplier per host.
    pub const AGGREGATE_KEY: &'static str = "num_instances_weight_multiplier";
    /// The option's default.
    pub const DEFAULT_MULTIPLIER: f64 = 0.0;
    /// The smallest value the option accepts, if it has a minimum (not applied to aggregate
    /// overrides).
    pub const MIN_MULTIPLIER: Option<f64> = None;
}

impl Weigher for NumInstancesWeigher {
    fn name(&self) -> &str {
        Self::NAME
    }

    #[inline]
    fn weigh(&self, cx: &Cx<'_>, host: HostId) -> f64 {
        cx.host_state(host).num_instances()
    }

    fn bounds(&self) -> Bounds {
        Bounds::NONE
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
