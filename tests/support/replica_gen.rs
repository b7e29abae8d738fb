//! Proptest generators of replica-scheduler settings, shared by the replica properties and the
//! volume-capacity test. Included with `#[path = "../support/replica_gen.rs"] mod replica_gen;`
//! by the property binary (`tests/properties/main.rs`).
#![allow(dead_code)]

use placewise::replica::{AutoBalance, ReplicaSettings, SoftAntiAffinity};
use placewise::snapshot::{DiskSpec, HostState};
use proptest::prelude::*;

const G: i64 = 1 << 30;

/// The node tags the generated clusters and volume node selectors draw from.
pub(crate) const NODE_TAGS: [&str; 2] = ["fast", "ssd"];
/// The disk tags the generated disks and volume disk selectors draw from.
pub(crate) const DISK_TAGS: [&str; 2] = ["ssd", "hdd"];

/// A subset of `tags` chosen by the low bits of `mask`.
pub(crate) fn subset(tags: &[&str], mask: u8) -> Vec<String> {
    tags.iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, t)| (*t).to_owned()).collect()
}

/// Disk `d{index}` of `max` bytes with the given percentages of it available, reserved and
/// scheduled (scheduled rounded down to quarter GiB, so sizes land on the limits now and then).
pub(crate) fn disk(index: usize, max: i64, avail_pct: u32, res_pct: u32, sched_pct: u32) -> DiskSpec {
    DiskSpec::new(format!("d{index}"), max, max * avail_pct as i64 / 100)
        .reserved(max * res_pct as i64 / 100)
        .scheduled(max * sched_pct as i64 / 100 / (G / 4) * (G / 4))
}

/// Settings over every soft anti-affinity, cordon and empty-selector switch and a few space
/// percentages; with `auto_balance`, a quarter of them use best-effort auto-balance with a 50 %
/// disk-pressure threshold.
pub(crate) fn settings(auto_balance: bool) -> impl Strategy<Value = ReplicaSettings> {
    (
        any::<[bool; 6]>(),
        prop::sample::select(vec![0i64, 10, 25]),
        prop::sample::select(vec![50i64, 100, 150, 200]),
        0u8..4,
    )
        .prop_map(move |([node, zone, disk, cordon, empty_node, empty_disk], min, over, balance)| {
            let mut s = ReplicaSettings::default();
            s.replica_soft_anti_affinity = node;
            s.replica_zone_soft_anti_affinity = zone;
            s.replica_disk_soft_anti_affinity = disk;
            s.disable_scheduling_on_cordoned_node = cordon;
            s.allow_empty_node_selector_volume = empty_node;
            s.allow_empty_disk_selector_volume = empty_disk;
            s.storage_minimal_available_percentage = min;
            s.storage_over_provisioning_percentage = over;
            if auto_balance && balance == 0 {
                s.replica_auto_balance = AutoBalance::BestEffort;
                s.replica_auto_balance_disk_pressure_percentage = 50;
            }
            s
        })
}

/// A volume's override of a soft anti-affinity setting: half of them leave the setting alone.
pub(crate) fn soft_override() -> impl Strategy<Value = SoftAntiAffinity> {
    prop::sample::select(vec![
        SoftAntiAffinity::Ignored,
        SoftAntiAffinity::Ignored,
        SoftAntiAffinity::Enabled,
        SoftAntiAffinity::Disabled,
    ])
}

/// A node state from four draws: up and enabled unless 0, cordoned and evicting only when 0.
pub(crate) fn host_state([up, enabled, cordoned, evicting]: [u8; 4]) -> HostState {
    HostState { up: up != 0, enabled: enabled != 0, cordoned: cordoned == 0, evicting: evicting == 0 }
}
