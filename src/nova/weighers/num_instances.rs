//! `NumInstancesWeigher`: instance count.

/// The filter scheduler's `NumInstancesWeigher`. A host's raw value is `num_instances` (plus one
/// per earlier pick of the request), normalised min–max over the candidates. The default multiplier
/// is 0: the weigher is off until configured; a negative one prefers hosts with fewer instances.
///
/// The multiplier is the option `num_instances_weight_multiplier` (default 0.0), overridden per
/// host by the smallest aggregate value of the same key ([`aggregate_multiplier`](super::aggregate_multiplier)). Host-local.
///
/// ```
/// use placewise::nova::weighers::NumInstancesWeigher;
/// use placewise::{Scheduler, Weigher};
///
/// assert_eq!(NumInstancesWeigher.name(), "NumInstancesWeigher");
/// let scheduler = Scheduler::builder().weigher(NumInstancesWeigher, NumInstancesWeigher::DEFAULT_MULTIPLIER).build()?;
/// # let _ = scheduler;
/// # Ok::<(), placewise::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct NumInstancesWeigher;

nova_weigher!(
    NumInstancesWeigher,
    name: "NumInstancesWeigher",
    option: "num_instances_weight_multiplier",
    default: 0.0,
    bounds: crate::weigh::Bounds::NONE,
    raw: |cx, host| cx.host_state(host).num_instances(),
);
