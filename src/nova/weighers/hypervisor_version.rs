//! `HypervisorVersionWeigher`: hypervisor version.

/// The filter scheduler's `HypervisorVersionWeigher`. A host's raw value is `hypervisor_version`
/// (an integer such as 8002000), 0 when the host has none, normalised min–max over the candidates.
/// The default multiplier prefers the newest hypervisor.
///
/// The multiplier is the option `hypervisor_version_weight_multiplier` (default 1.0), overridden
/// per host by the smallest aggregate value of the same key ([`aggregate_multiplier`](super::aggregate_multiplier)). Host-local.
///
/// ```
/// use placewise::nova::weighers::HypervisorVersionWeigher;
/// use placewise::{Scheduler, Weigher};
///
/// assert_eq!(HypervisorVersionWeigher.name(), "HypervisorVersionWeigher");
/// let scheduler = Scheduler::builder().weigher(HypervisorVersionWeigher, HypervisorVersionWeigher::DEFAULT_MULTIPLIER).build()?;
/// # let _ = scheduler;
/// # Ok::<(), placewise::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct HypervisorVersionWeigher;

nova_weigher!(
    HypervisorVersionWeigher,
    name: "HypervisorVersionWeigher",
    option: "hypervisor_version_weight_multiplier",
    default: 1.0,
    bounds: crate::weigh::Bounds::NONE,
    raw: |cx, host| cx.host_state(host).hypervisor_version(),
);
