//! `CrossCellWeigher`: prefer the source cell of a cross-cell move.

/// The filter scheduler's `CrossCellWeigher`. In Nova a host's raw value is +1 when the request is
/// a cross-cell move (`requested_destination` names a cell and allows cross-cell moves) and the
/// host is in that preferred cell, −1 when it is in another cell, and 0 for every other request.
///
/// **What the model assumes.** The model has one cell, and its requests are no cross-cell moves,
/// so every host's raw value is 0 and the weigher adds 0 to every weight, as in Nova for any
/// request that is not a cross-cell move.
///
/// The multiplier is the option `cross_cell_move_weight_multiplier` (default 1e6), overridden per
/// host by the smallest aggregate value of the same key ([`aggregate_multiplier`](super::aggregate_multiplier)).
/// Host-local.
///
/// ```
/// use placewise::nova::weighers::CrossCellWeigher;
/// use placewise::{Scheduler, Weigher};
///
/// assert_eq!(CrossCellWeigher.name(), "CrossCellWeigher");
/// let scheduler = Scheduler::builder().weigher(CrossCellWeigher, CrossCellWeigher::DEFAULT_MULTIPLIER).build()?;
/// # let _ = scheduler;
/// # Ok::<(), placewise::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CrossCellWeigher;

nova_weigher!(
    CrossCellWeigher,
    name: "CrossCellWeigher",
    option: "cross_cell_move_weight_multiplier",
    default: 1_000_000.0,
    bounds: crate::weigh::Bounds::NONE,
    raw: |_cx, _host| 0.0,
);
