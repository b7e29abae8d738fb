//! `BuildFailureWeigher`: hosts where recent builds failed.

use crate::id::HostId;
use crate::request::Cx;
use crate::weigh::{Bounds, Extension, Weigher};

/// The filter scheduler's `BuildFailureWeigher`. A host's raw value is `failed_builds` (the
/// compute node's count of recent failed builds), normalised min–max over the candidates.
///
/// The configured multiplier is the option `build_failure_weight_multiplier` (default 1e6, a
/// positive number), overridden per host by the smallest aggregate value of the same key
/// ([`aggregate_multiplier`](super::aggregate_multiplier)), and the result is **negated**: the weight a host gets is
/// `−multiplier × normalised`, so with the default a host with failures drops below every
/// difference the other default weighers can make. Host-local.
///
/// ```
/// use placewise::nova::weighers::BuildFailureWeigher;
/// use placewise::{Scheduler, Weigher};
///
/// assert_eq!(BuildFailureWeigher.name(), "BuildFailureWeigher");
/// let scheduler =
///     Scheduler::builder().weigher(BuildFailureWeigher, BuildFailureWeigher::DEFAULT_MULTIPLIER).build()?;
/// # let _ = scheduler;
/// # Ok::<(), placewise::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct BuildFailureWeigher;

impl BuildFailureWeigher {
    /// The Nova class name, which [`name`](Weigher::name) returns.
    pub const NAME: &'static str = "BuildFailureWeigher";
    /// The option group of [`OPTION`](Self::OPTION).
    pub const GROUP: &'static str = "filter_scheduler";
    /// The multiplier option (a positive value; the weigher negates it).
    pub const OPTION: &'static str = "build_failure_weight_multiplier";
    /// The aggregate metadata key that overrides the multiplier per host (before the negation).
    pub const AGGREGATE_KEY: &'static str = "build_failure_weight_multiplier";
    /// The option's default.
    pub const DEFAULT_MULTIPLIER: f64 = 1_000_000.0;
    /// The smallest value the option accepts, if it has a minimum (not applied to aggregate
    /// overrides).
    pub const MIN_MULTIPLIER: Option<f64> = None;
}

impl Weigher for BuildFailureWeigher {
    fn name(&self) -> &str {
        Self::NAME
    }

    #[inline]
    fn weigh(&self, cx: &Cx<'_>, host: HostId) -> f64 {
        cx.host_state(host).failed_builds()
    }

    fn bounds(&self) -> Bounds {
        Bounds::NONE
    }

    fn host_local(&self) -> bool {
        true
    }

    fn extension(&self) -> Option<&dyn Extension> {
        Some(self)
    }
}

// `−(smallest aggregate override, else the configured value)`: even without overrides the
// multiplier differs from the configured one, so it is always asked per host.
aggregate_extension!(BuildFailureWeigher, negated);
