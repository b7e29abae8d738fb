//! `IoOpsWeigher`: busy hosts.

use super::aggregate_multiplier;
use crate::id::HostId;
use crate::request::Cx;
use crate::weigh::{Bounds, Weigher};

/// The filter scheduler's `IoOpsWeigher`. A host's raw value is `num_io_ops` (the host's I/O
/// workload plus one per earlier pick of the request), normalised with the minimum fixed at 0
/// (`x / max`). The default multiplier is negative, so the least busy host wins.
///
/// The multiplier is the option `io_ops_weight_multiplier` (default -1.0), overridden per host by
/// the smallest aggregate value of the same key ([`aggregate_multiplier`]). Host-local.
///
/// ```
/// use placewise::weigh::builtin::IoOpsWeigher;
/// use placewise::{Scheduler, Weigher};
///
/// assert_eq!(IoOpsWeigher.name(), "IoOpsWeigher");
/// let scheduler = Scheduler::builder().weigher(IoOpsWeigher, IoOpsWeigher::DEFAULT_MULTIPLIER).build()?;
/// # let _ = scheduler;
/// # Ok::<(), placewise::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct IoOpsWeigher;

impl IoOpsWeigher {
    /// The Nova class name, which [`name`](Weigher::name) returns.
    pub const NAME: &'static str = "IoOpsWeigher";
    /// The option group of [`OPTION`](Self::OPTION).
    pub const GROUP: &'static str = "filter_scheduler";
    /// The multiplier option.
    pub const OPTION: &'static str = "io_ops_weight_multiplier";
    /// The aggregate metadata key that overrides the multiplier per host.
    pub const AGGREGATE_KEY: &'static str = "io_ops_weight_multiplier";
    /// The option's default.
    pub const DEFAULT_MULTIPLIER: f64 = -1.0;
    /// The smallest value the option accepts, if it has a minimum (not applied to aggregate
    /// overrides).
    pub const MIN_MULTIPLIER: Option<f64> = None;
}

impl Weigher for IoOpsWeigher {
    fn name(&self) -> &str {
        Self::NAME
    }

    #[inline]
    fn weigh(&self, cx: &Cx<'_>, host: HostId) -> f64 {
        cx.host_state(host).num_io_ops()
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
