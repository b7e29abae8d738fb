//! Longhorn's scheduling settings, with their documented names and defaults.

use super::volume::{AutoBalance, DataLocality, SoftAntiAffinity};
use super::ReplicaError;
use serde::{Deserialize, Serialize};

// The types read from JSON take the object form only (see `crate::json`).
crate::json::object_form!(ReplicaSettings);

/// The cluster-wide settings the replica scheduler reads, under Longhorn's setting names
/// (kebab-case in JSON). A setting missing from the input takes its default.
///
/// ```
/// use placewise::replica::ReplicaSettings;
///
/// let s: ReplicaSettings = serde_json::from_str(r#"{"storage-minimal-available-percentage": 10}"#).unwrap();
/// assert_eq!(s.storage_minimal_available_percentage, 10);
/// assert!(s.replica_zone_soft_anti_affinity);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "kebab-case", default, deny_unknown_fields)]
#[non_exhaustive]
pub struct ReplicaSettings {
    /// `replica-soft-anti-affinity` (default false): two replicas of a volume may share a node.
    pub replica_soft_anti_affinity: bool,
    /// `replica-zone-soft-anti-affinity` (default true): two replicas may share a zone.
    pub replica_zone_soft_anti_affinity: bool,
    /// `replica-disk-soft-anti-affinity` (default true): two replicas may share a disk.
    pub replica_disk_soft_anti_affinity: bool,
    /// `storage-minimal-available-percentage` (default 25, 0–100): the actual-space floor.
    pub storage_minimal_available_percentage: i64,
    /// `storage-over-provisioning-percentage` (default 100, ≥ 0): the provisioned-space limit.
    pub storage_over_provisioning_percentage: i64,
    /// `storage-reserved-percentage-for-default-disk` (default 30): only initialises a default
    /// disk's reserved space; the scheduler does not read it.
    pub storage_reserved_percentage_for_default_disk: i64,
    /// `allow-empty-node-selector-volume` (default true): a volume without node selector may use
    /// tagged nodes.
    pub allow_empty_node_selector_volume: bool,
    /// `allow-empty-disk-selector-volume` (default true): a volume without disk selector may use
    /// tagged disks.
    pub allow_empty_disk_selector_volume: bool,
    /// `disable-scheduling-on-cordoned-node` (default true): cordoned nodes take no replicas.
    pub disable_scheduling_on_cordoned_node: bool,
    /// `replica-auto-balance` (default `disabled`).
    pub replica_auto_balance: AutoBalance,
    /// `replica-auto-balance-disk-pressure-percentage` (default 90; 0 disables disk-pressure
    /// handling).
    pub replica_auto_balance_disk_pressure_percentage: i64,
    /// `replica-replenishment-wait-interval` in seconds (default 600): how long a reusable failed
    /// replica keeps its node and zone.
    pub replica_replenishment_wait_interval: i64,
    /// `default-replica-count` (default 3).
    pub default_replica_count: u32,
    /// `default-data-locality` (default `disabled`).
    pub default_data_locality: DataLocality,
    /// `allow-volume-creation-with-degraded-availability` (default true).
    pub allow_volume_creation_with_degraded_availability: bool,
    /// `concurrent-replica-rebuild-per-node-limit` (default 5; 0 disables rebuilds). Recorded,
    /// not read by the scheduler.
    pub concurrent_replica_rebuild_per_node_limit: i64,
    /// `fast-replica-rebuild-enabled` (default true): v2 volumes reuse failed replicas only
    /// when it is on.
    pub fast_replica_rebuild_enabled: bool,
}

impl Default for ReplicaSettings {
    fn default() -> Self {
        ReplicaSettings {
            replica_soft_anti_affinity: false,
            replica_zone_soft_anti_affinity: true,
            replica_disk_soft_anti_affinity: true,
            storage_minimal_available_percentage: 25,
            storage_over_provisioning_percentage: 100,
            storage_reserved_percentage_for_default_disk: 30,
            allow_empty_node_selector_volume: true,
            allow_empty_disk_selector_volume: true,
            disable_scheduling_on_cordoned_node: true,
            replica_auto_balance: AutoBalance::Disabled,
            replica_auto_balance_disk_pressure_percentage: 90,
            replica_replenishment_wait_interval: 600,
            default_replica_count: 3,
            default_data_locality: DataLocality::Disabled,
            allow_volume_creation_with_degraded_availability: true,
            concurrent_replica_rebuild_per_node_limit: 5,
            fast_replica_rebuild_enabled: true,
        }
    }
}

/// Every setting name [`ReplicaSettings::set`] knows, in the order of the struct.
pub const SETTING_NAMES: &[&str] = &[
    "replica-soft-anti-affinity",
    "replica-zone-soft-anti-affinity",
    "replica-disk-soft-anti-affinity",
    "storage-minimal-available-percentage",
    "storage-over-provisioning-percentage",
    "storage-reserved-percentage-for-default-disk",
    "allow-empty-node-selector-volume",
    "allow-empty-disk-selector-volume",
    "disable-scheduling-on-cordoned-node",
    "replica-auto-balance",
    "replica-auto-balance-disk-pressure-percentage",
    "replica-replenishment-wait-interval",
    "default-replica-count",
    "default-data-locality",
    "allow-volume-creation-with-degraded-availability",
    "concurrent-replica-rebuild-per-node-limit",
    "fast-replica-rebuild-enabled",
];

fn bad(name: &str, value: &str) -> ReplicaError {
    ReplicaError::InvalidSetting { name: name.to_owned(), value: value.to_owned() }
}

fn parse_bool(name: &str, value: &str) -> Result<bool, ReplicaError> {
    match value {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(bad(name, value)),
    }
}

fn parse_int(name: &str, value: &str, min: i64, max: i64) -> Result<i64, ReplicaError> {
    value.parse::<i64>().ok().filter(|v| (min..=max).contains(v)).ok_or_else(|| bad(name, value))
}

impl ReplicaSettings {
    /// Builds from `(name, value)` string pairs as Longhorn's setting store holds them; names not
    /// given keep their defaults.
    ///
    /// # Errors
    ///
    /// [`ReplicaError::UnknownSetting`] for a name not in [`SETTING_NAMES`],
    /// [`ReplicaError::InvalidSetting`] for a value out of range or of the wrong kind.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self, ReplicaError> {
        let mut s = ReplicaSettings::default();
        for (name, value) in pairs {
            s.set(name, value)?;
        }
        Ok(s)
    }

    /// Sets one setting from its string form.
    ///
    /// # Errors
    ///
    /// As [`ReplicaSettings::from_pairs`].
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), ReplicaError> {
        let v = value.trim();
        match name {
            "replica-soft-anti-affinity" => self.replica_soft_anti_affinity = parse_bool(name, v)?,
            "replica-zone-soft-anti-affinity" => self.replica_zone_soft_anti_affinity = parse_bool(name, v)?,
            "replica-disk-soft-anti-affinity" => self.replica_disk_soft_anti_affinity = parse_bool(name, v)?,
            "storage-minimal-available-percentage" => {
                self.storage_minimal_available_percentage = parse_int(name, v, 0, 100)?
            }
            "storage-over-provisioning-percentage" => {
                self.storage_over_provisioning_percentage = parse_int(name, v, 0, i64::MAX)?
            }
            "storage-reserved-percentage-for-default-disk" => {
                self.storage_reserved_percentage_for_default_disk = parse_int(name, v, 0, 100)?
            }
            "allow-empty-node-selector-volume" => self.allow_empty_node_selector_volume = parse_bool(name, v)?,
            "allow-empty-disk-selector-volume" => self.allow_empty_disk_selector_volume = parse_bool(name, v)?,
            "disable-scheduling-on-cordoned-node" => self.disable_scheduling_on_cordoned_node = parse_bool(name, v)?,
            "replica-auto-balance" => self.replica_auto_balance = AutoBalance::parse(v).ok_or_else(|| bad(name, v))?,
            "replica-auto-balance-disk-pressure-percentage" => {
                self.replica_auto_balance_disk_pressure_percentage = parse_int(name, v, 0, 100)?
            }
            "replica-replenishment-wait-interval" => {
                self.replica_replenishment_wait_interval = parse_int(name, v, 0, i64::MAX)?
            }
            "default-replica-count" => {
                self.default_replica_count = parse_int(name, v, 1, 20)? as u32;
            }
            "default-data-locality" => {
                self.default_data_locality = DataLocality::parse(v).ok_or_else(|| bad(name, v))?
            }
            "allow-volume-creation-with-degraded-availability" => {
                self.allow_volume_creation_with_degraded_availability = parse_bool(name, v)?
            }
            "concurrent-replica-rebuild-per-node-limit" => {
                self.concurrent_replica_rebuild_per_node_limit = parse_int(name, v, 0, i64::MAX)?
            }
            "fast-replica-rebuild-enabled" => self.fast_replica_rebuild_enabled = parse_bool(name, v)?,
            _ => return Err(ReplicaError::UnknownSetting { name: name.to_owned(), known: SETTING_NAMES.join(", ") }),
        }
        Ok(())
    }

    /// Checks the ranges that serde cannot: percentages and the wait interval.
    ///
    /// # Errors
    ///
    /// [`ReplicaError::InvalidSetting`] naming the first offending setting.
    pub fn validate(&self) -> Result<(), ReplicaError> {
        let checks: [(&str, i64, bool); 4] = [
            (
                "storage-minimal-available-percentage",
                self.storage_minimal_available_percentage,
                (0..=100).contains(&self.storage_minimal_available_percentage),
            ),
            (
                "storage-over-provisioning-percentage",
                self.storage_over_provisioning_percentage,
                self.storage_over_provisioning_percentage >= 0,
            ),
            (
                "replica-auto-balance-disk-pressure-percentage",
                self.replica_auto_balance_disk_pressure_percentage,
                (0..=100).contains(&self.replica_auto_balance_disk_pressure_percentage),
            ),
            (
                "replica-replenishment-wait-interval",
                self.replica_replenishment_wait_interval,
                self.replica_replenishment_wait_interval >= 0,
            ),
        ];
        for (name, value, ok) in checks {
            if !ok {
                return Err(bad(name, &value.to_string()));
            }
        }
        Ok(())
    }

    /// The effective flag for one anti-affinity level: the global `setting` unless the volume
    /// override is `enabled` or `disabled`.
    pub fn effective(setting: bool, over: SoftAntiAffinity) -> bool {
        match over {
            SoftAntiAffinity::Enabled => true,
            SoftAntiAffinity::Disabled => false,
            SoftAntiAffinity::Ignored => setting,
        }
    }
}
