//! `ServerGroupSoftAntiAffinityWeigher`: keep away from the other members of a
//! `soft-anti-affinity` group.

use super::soft_affinity::{members_on_host, PolicyMembers};
use crate::error::ScheduleError;
use crate::id::HostId;
use crate::request::{Cx, Prepared};
use crate::weigh::{Bounds, Extension, Weigher};

/// The filter scheduler's `ServerGroupSoftAntiAffinityWeigher`. When the request's server group
/// has the policy `soft-anti-affinity` (exactly), a host's raw value is **minus** the number of
/// group members on it (counted as by
/// [`ServerGroupSoftAffinityWeigher`](super::ServerGroupSoftAffinityWeigher): running members plus
/// earlier instances of this request placed there that are members). Otherwise every host weighs 0. Normalised
/// min–max over the candidates, so the hosts with the fewest members score 1.
///
/// The multiplier is the option `soft_anti_affinity_weight_multiplier` (default 1.0, at least 0),
/// overridden per host by the smallest aggregate value of the same key ([`aggregate_multiplier`](super::aggregate_multiplier);
/// the minimum of 0 does not apply to overrides). Host-local.
///
/// ```
/// use placewise::nova::weighers::ServerGroupSoftAntiAffinityWeigher as W;
/// use placewise::{Scheduler, Weigher};
///
/// assert_eq!(W.name(), "ServerGroupSoftAntiAffinityWeigher");
/// let scheduler = Scheduler::builder().weigher(W, W::DEFAULT_MULTIPLIER).build()?;
/// # let _ = scheduler;
/// # Ok::<(), placewise::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ServerGroupSoftAntiAffinityWeigher;

impl ServerGroupSoftAntiAffinityWeigher {
    /// The Nova class name, which [`name`](Weigher::name) returns.
    pub const NAME: &'static str = "ServerGroupSoftAntiAffinityWeigher";
    /// The group policy the weigher acts on.
    pub const POLICY: &'static str = "soft-anti-affinity";
    /// The option group of [`OPTION`](Self::OPTION).
    pub const GROUP: &'static str = "filter_scheduler";
    /// The multiplier option.
    pub const OPTION: &'static str = "soft_anti_affinity_weight_multiplier";
    /// The aggregate metadata key that overrides the multiplier per host.
    pub const AGGREGATE_KEY: &'static str = "soft_anti_affinity_weight_multiplier";
    /// The option's default.
    pub const DEFAULT_MULTIPLIER: f64 = 1.0;
    /// The smallest value the option accepts (not applied to aggregate overrides).
    pub const MIN_MULTIPLIER: Option<f64> = Some(0.0);
}

impl Weigher for ServerGroupSoftAntiAffinityWeigher {
    fn name(&self) -> &str {
        Self::NAME
    }

    /// Collects the group's members once per request. Computes in O(members + instances of the
    /// request).
    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(Some(Box::new(PolicyMembers::new(cx, Self::POLICY))))
    }

    /// Computes in O(instances on the host) when the policy applies, else O(1).
    #[inline]
    fn weigh(&self, cx: &Cx<'_>, host: HostId) -> f64 {
        // `0.0 - n` rather than `-n`: Nova's `-1 * 0` is the integer 0, never −0.0.
        0.0 - members_on_host(cx, host, Self::POLICY)
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

aggregate_extension!(ServerGroupSoftAntiAffinityWeigher);
