//! `IoOpsWeigher`: busy hosts.

/// The filter scheduler's `IoOpsWeigher`. A host's raw value is `num_io_ops` (the host's I/O
/// workload plus one per earlier pick of the request), normalised with the minimum fixed at 0
/// (`x / max`). The default multiplier is negative, so the least busy host wins.
///
/// The multiplier is the option `io_ops_weight_multiplier` (default -1.0), overridden per host by
/// the smallest aggregate value of the same key ([`aggregate_multiplier`](super::aggregate_multiplier)). Host-local.
///
/// ```
/// use placewise::nova::weighers::IoOpsWeigher;
/// use placewise::{Scheduler, Weigher};
///
/// assert_eq!(IoOpsWeigher.name(), "IoOpsWeigher");
/// let scheduler = Scheduler::builder().weigher(IoOpsWeigher, IoOpsWeigher::DEFAULT_MULTIPLIER).build()?;
/// # let _ = scheduler;
/// # Ok::<(), placewise::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct IoOpsWeigher;

nova_weigher!(
    IoOpsWeigher,
    name: "IoOpsWeigher",
    option: "io_ops_weight_multiplier",
    default: -1.0,
    bounds: crate::weigh::Bounds::ZERO_MIN,
    raw: |cx, host| cx.host_state(host).num_io_ops(),
);
