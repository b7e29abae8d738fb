//! `PCIWeigher`: keep hosts with free PCI devices for the requests that need them.

/// The filter scheduler's `PCIWeigher`. A host's raw value is `100 − min(free, 99)`, where `free`
/// is the number of free PCI devices in the host's device pools: a host without PCI devices
/// weighs 100, one with 99 or more weighs 1. Normalised min–max over the candidates, so with the
/// default multiplier the hosts with the fewest free devices win and PCI hosts are kept for the
/// requests that need them.
///
/// **What the model assumes.** The snapshot has no PCI device pools. A host's free devices are
/// its number attribute `free_pci_devices` (Nova's sum of its pools' counts), 0 when the host has
/// none: then every host weighs 100 and the weigher changes nothing, as in Nova for a cloud
/// without PCI devices. The filter scheduler's scenario format carries no PCI devices, so its
/// hosts have none. Free devices do not change within a request: the model places no PCI
/// requests (see [`PciPassthroughFilter`](crate::nova::filters::PciPassthroughFilter)).
///
/// The multiplier is the option `pci_weight_multiplier` (default 1.0, at least 0), overridden per
/// host by the smallest aggregate value of the same key ([`aggregate_multiplier`](super::aggregate_multiplier);
/// the minimum of 0 does not apply to overrides). Host-local.
///
/// ```
/// use placewise::nova::weighers::PCIWeigher;
/// use placewise::{Scheduler, Weigher};
///
/// assert_eq!(PCIWeigher.name(), "PCIWeigher");
/// assert_eq!(PCIWeigher::MIN_MULTIPLIER, Some(0.0));
/// let scheduler = Scheduler::builder().weigher(PCIWeigher, PCIWeigher::DEFAULT_MULTIPLIER).build()?;
/// # let _ = scheduler;
/// # Ok::<(), placewise::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct PCIWeigher;

impl PCIWeigher {
    /// Nova's `MAX_DEVS`: the raw value of a host without free PCI devices.
    pub const MAX_DEVS: f64 = 100.0;
}

nova_weigher!(
    PCIWeigher,
    name: "PCIWeigher",
    option: "pci_weight_multiplier",
    default: 1.0,
    min: 0.0,
    bounds: crate::weigh::Bounds::NONE,
    raw: |cx, host| PCIWeigher::MAX_DEVS - cx.host_state(host).free_pci_devices().min(PCIWeigher::MAX_DEVS - 1.0),
);
