//! `ServerGroupSoftAffinityWeigher`: stay near the other members of a `soft-affinity` group.
//!
//! Also the member count both soft-affinity weighers share.

use crate::error::ScheduleError;
use crate::id::HostId;
use crate::nova::request::{GroupMembers, VmSpec};
use crate::request::{Cx, Prepared};
use crate::weigh::{Bounds, Extension, Weigher};

/// What a soft-affinity weigher prepares once per request: the group's members, when the
/// request's group has the weigher's policy.
#[derive(Debug)]
pub(super) struct PolicyMembers {
    /// `None` when the request has no group or its policy is another one: every host weighs 0.
    members: Option<GroupMembers>,
}

impl PolicyMembers {
    /// The members of the request's group if its policy is exactly `policy`.
    pub(super) fn new(cx: &Cx<'_>, policy: &str) -> Self {
        let vm = VmSpec::of(cx);
        let group = vm.group_with_policy(policy);
        PolicyMembers { members: group.map(|g| GroupMembers::new(vm, cx.request().count, g)) }
    }

    /// The number of group members on `host` ([`GroupMembers::on_host`]), 0 without the group.
    pub(super) fn count(&self, cx: &Cx<'_>, host: HostId) -> f64 {
        self.members.as_ref().map_or(0.0, |m| m.on_host(cx.cluster(), cx.overlay(), host) as f64)
    }
}

/// The member count of `host` for `policy`, from the prepared state when there is one.
pub(super) fn members_on_host(cx: &Cx<'_>, host: HostId, policy: &str) -> f64 {
    match cx.state::<PolicyMembers>() {
        Some(state) => state.count(cx, host),
        // Weighed without `prepare` (a direct call): build the state for this one host.
        None => PolicyMembers::new(cx, policy).count(cx, host),
    }
}

/// The filter scheduler's `ServerGroupSoftAffinityWeigher`. When the request's server group has
/// the policy `soft-affinity` (exactly), a host's raw value is the number of group members on it:
/// its running instances listed in the group's `members`, plus the earlier instances of this
/// request placed there that are members. Otherwise every host weighs 0. Normalised min–max over the candidates,
/// so the hosts with the most members score 1.
///
/// The multiplier is the option `soft_affinity_weight_multiplier` (default 1.0, at least 0),
/// overridden per host by the smallest aggregate value of the same key ([`aggregate_multiplier`](super::aggregate_multiplier);
/// the minimum of 0 does not apply to overrides). Host-local: a pick changes only the count of
/// the host it lands on.
///
/// ```
/// use placewise::nova::weighers::ServerGroupSoftAffinityWeigher as W;
/// use placewise::{Scheduler, Weigher};
///
/// assert_eq!(W.name(), "ServerGroupSoftAffinityWeigher");
/// let scheduler = Scheduler::builder().weigher(W, W::DEFAULT_MULTIPLIER).build()?;
/// # let _ = scheduler;
/// # Ok::<(), placewise::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ServerGroupSoftAffinityWeigher;

impl ServerGroupSoftAffinityWeigher {
    /// The Nova class name, which [`name`](Weigher::name) returns.
    pub const NAME: &'static str = "ServerGroupSoftAffinityWeigher";
    /// The group policy the weigher acts on.
    pub const POLICY: &'static str = "soft-affinity";
    /// The option group of [`OPTION`](Self::OPTION).
    pub const GROUP: &'static str = "filter_scheduler";
    /// The multiplier option.
    pub const OPTION: &'static str = "soft_affinity_weight_multiplier";
    /// The aggregate metadata key that overrides the multiplier per host.
    pub const AGGREGATE_KEY: &'static str = "soft_affinity_weight_multiplier";
    /// The option's default.
    pub const DEFAULT_MULTIPLIER: f64 = 1.0;
    /// The smallest value the option accepts (not applied to aggregate overrides).
    pub const MIN_MULTIPLIER: Option<f64> = Some(0.0);
}

impl Weigher for ServerGroupSoftAffinityWeigher {
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
        members_on_host(cx, host, Self::POLICY)
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

aggregate_extension!(ServerGroupSoftAffinityWeigher);
