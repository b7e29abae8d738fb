//! `RAMWeigher`: free memory.

/// The filter scheduler's `RAMWeigher`. A host's raw value is `free_ram_mb` (after earlier picks
/// of the request), which is negative on an over-committed host and then counts as 0. Normalised with the minimum fixed at 0 (`x / max`):
/// when every candidate has the same positive amount, each scores 1. A positive multiplier spreads
/// instances, a negative one stacks them.
///
/// The multiplier is the option `ram_weight_multiplier` (default 1.0), overridden per host by the
/// smallest aggregate value of the same key ([`aggregate_multiplier`](super::aggregate_multiplier)). Host-local.
///
/// ```
/// use placewise::nova::weighers::RamWeigher;
/// use placewise::{Scheduler, Weigher};
///
/// assert_eq!(RamWeigher.name(), "RAMWeigher");
/// let scheduler = Scheduler::builder().weigher(RamWeigher, RamWeigher::DEFAULT_MULTIPLIER).build()?;
/// # let _ = scheduler;
/// # Ok::<(), placewise::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RamWeigher;

nova_weigher!(
    RamWeigher,
    name: "RAMWeigher",
    option: "ram_weight_multiplier",
    default: 1.0,
    bounds: crate::weigh::Bounds::ZERO_MIN,
    raw: |cx, host| cx.host_state(host).free_ram_mb(),
);
