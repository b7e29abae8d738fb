//! `CPUWeigher`: free vCPUs after over-commit.

use crate::id::ResourceId;

/// The filter scheduler's `CPUWeigher`. A host's raw value is
/// `vcpus_total × cpu_allocation_ratio − vcpus_used` (earlier picks of the request included),
/// which is negative on a host already past its ratio and then counts as 0. Normalised with the
/// minimum fixed at 0 (`x / max`).
///
/// The multiplier is the option `cpu_weight_multiplier` (default 1.0), overridden per host by the
/// smallest aggregate value of the same key ([`aggregate_multiplier`](super::aggregate_multiplier)). Host-local.
///
/// ```
/// use placewise::nova::weighers::CpuWeigher;
/// use placewise::{Scheduler, Weigher};
///
/// assert_eq!(CpuWeigher.name(), "CPUWeigher");
/// let scheduler = Scheduler::builder().weigher(CpuWeigher, CpuWeigher::DEFAULT_MULTIPLIER).build()?;
/// # let _ = scheduler;
/// # Ok::<(), placewise::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CpuWeigher;

nova_weigher!(
    CpuWeigher,
    name: "CPUWeigher",
    option: "cpu_weight_multiplier",
    default: 1.0,
    bounds: crate::weigh::Bounds::ZERO_MIN,
    raw: |cx, host| {
        let s = cx.host_state(host);
        s.vcpus_total() * s.allocation_ratio(ResourceId::VCPUS) - s.vcpus_used()
    },
);
