//! `DiskWeigher`: free disk.

/// The filter scheduler's `DiskWeigher`. A host's raw value is `free_disk_mb` (after earlier picks
/// of the request, swap not counted), normalised with the minimum fixed at 0 (`x / max`); a
/// negative amount counts as 0.
///
/// The multiplier is the option `disk_weight_multiplier` (default 1.0), overridden per host by the
/// smallest aggregate value of the same key ([`aggregate_multiplier`](super::aggregate_multiplier)). Host-local.
///
/// ```
/// use placewise::nova::weighers::DiskWeigher;
/// use placewise::{Scheduler, Weigher};
///
/// assert_eq!(DiskWeigher.name(), "DiskWeigher");
/// let scheduler = Scheduler::builder().weigher(DiskWeigher, DiskWeigher::DEFAULT_MULTIPLIER).build()?;
/// # let _ = scheduler;
/// # Ok::<(), placewise::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct DiskWeigher;

nova_weigher!(
    DiskWeigher,
    name: "DiskWeigher",
    option: "disk_weight_multiplier",
    default: 1.0,
    bounds: crate::weigh::Bounds::ZERO_MIN,
    raw: |cx, host| cx.host_state(host).free_disk_mb(),
);
