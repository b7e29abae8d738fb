//! Volumes and replicas: what the scheduler places.

use serde::{Deserialize, Serialize};

// The types read from JSON take the object form only (see `crate::json`).
crate::json::object_form!(TopologyTerm, BackingImage, Volume, Replica);

macro_rules! string_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident = $s:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vm])* #[serde(rename = $s)] $v,)+
        }
        impl $name {
            /// The Longhorn spelling.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$v => $s,)+ }
            }
            /// Parses the Longhorn spelling.
            pub fn parse(s: &str) -> Option<Self> {
                match s { $($s => Some($name::$v),)+ _ => None }
            }
        }
    };
}

string_enum!(
    /// A volume's override of one anti-affinity setting.
    SoftAntiAffinity {
        /// Use the global setting (also what an empty value means).
        #[default]
        Ignored = "ignored",
        /// Soft anti-affinity on.
        Enabled = "enabled",
        /// Soft anti-affinity off (hard).
        Disabled = "disabled",
    }
);

string_enum!(
    /// Replica auto-balance, as a setting or a volume override.
    AutoBalance {
        /// Volume: use the global setting. Global: read as `disabled`.
        Ignored = "ignored",
        /// No auto-balance.
        #[default]
        Disabled = "disabled",
        /// Spread over more zones and nodes when possible.
        LeastEffort = "least-effort",
        /// Also even the counts and relieve disk pressure.
        BestEffort = "best-effort",
    }
);

string_enum!(
    /// Whether a volume wants a replica on the node it is attached to.
    DataLocality {
        /// No preference.
        #[default]
        Disabled = "disabled",
        /// Prefer a local replica.
        BestEffort = "best-effort",
        /// Exactly one replica, on the attached node.
        StrictLocal = "strict-local",
    }
);

string_enum!(
    /// Longhorn's data engine.
    DataEngine {
        /// Filesystem disks.
        #[default]
        V1 = "v1",
        /// Block disks (SPDK).
        V2 = "v2",
    }
);

string_enum!(
    /// A volume's health.
    Robustness {
        /// Every replica healthy.
        #[default]
        Healthy = "healthy",
        /// Some replicas missing or failed.
        Degraded = "degraded",
        /// No usable replica.
        Faulted = "faulted",
        /// Not known (detached).
        Unknown = "unknown",
    }
);

/// A `topologyRequirement` term: matches a node when each non-empty field equals the node's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", default, deny_unknown_fields)]
#[non_exhaustive]
pub struct TopologyTerm {
    /// Zone, or empty for any.
    pub zone: String,
    /// Region, or empty for any.
    pub region: String,
}

impl TopologyTerm {
    /// A term with this zone and region (empty = any).
    pub fn new(zone: impl Into<String>, region: impl Into<String>) -> Self {
        TopologyTerm { zone: zone.into(), region: region.into() }
    }
}

/// The selectors of a volume's backing image.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", default, deny_unknown_fields)]
#[non_exhaustive]
pub struct BackingImage {
    /// Node tags every replica's node must carry.
    pub node_selector: Vec<String>,
    /// Disk tags every replica's disk must carry.
    pub disk_selector: Vec<String>,
}

/// The largest `number_of_replicas` the replica scheduler accepts. The work of one
/// [`schedule`](super::ReplicaScheduler::schedule) call grows with the count, so
/// it is bounded, far above any replica count a volume needs.
pub const MAX_VOLUME_REPLICAS: u32 = 100;

fn replica_count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let n = u32::deserialize(d)?;
    if n > MAX_VOLUME_REPLICAS {
        let msg = format!("number_of_replicas {n} is above the limit of {MAX_VOLUME_REPLICAS}");
        return Err(serde::de::Error::custom(msg));
    }
    Ok(n)
}

/// A Longhorn volume, with the fields the scheduler reads. Sizes are bytes, times are seconds.
/// Every scheduling entry checks the fields against what a Longhorn volume can hold
/// ([`Volume::validate`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", default, deny_unknown_fields)]
#[non_exhaustive]
pub struct Volume {
    /// Name; the prefix of data directory names.
    pub name: String,
    /// `spec.size`: the provisioned size (space check and balance score); at least 0.
    pub size: i64,
    /// `status.actualSize`: bytes written (actual-space check); at least 0.
    pub actual_size: i64,
    /// `numberOfReplicas`, from 1 to [`MAX_VOLUME_REPLICAS`] (1 with `strict-local` data
    /// locality); a larger count is also refused when read from JSON.
    #[serde(deserialize_with = "replica_count")]
    pub number_of_replicas: u32,
    /// Node tags a node must all carry.
    pub node_selector: Vec<String>,
    /// Disk tags a disk must all carry.
    pub disk_selector: Vec<String>,
    /// `spec.nodeID`: the attached node, empty when detached.
    pub node_id: String,
    /// Data locality.
    pub data_locality: DataLocality,
    /// Auto-balance override.
    pub replica_auto_balance: AutoBalance,
    /// Node-level anti-affinity override.
    pub replica_soft_anti_affinity: SoftAntiAffinity,
    /// Zone-level anti-affinity override.
    pub replica_zone_soft_anti_affinity: SoftAntiAffinity,
    /// Disk-level anti-affinity override.
    pub replica_disk_soft_anti_affinity: SoftAntiAffinity,
    /// Data engine.
    pub data_engine: DataEngine,
    /// Backing image selectors, if the volume has one.
    pub backing_image: Option<BackingImage>,
    /// Zonal or regional pinning (HEAD only); empty = none.
    pub topology_requirement: Vec<TopologyTerm>,
    /// Health.
    pub robustness: Robustness,
    /// When the volume last became degraded (seconds).
    pub last_degraded_at: Option<i64>,
}

impl Default for Volume {
    fn default() -> Self {
        Volume {
            name: String::new(),
            size: 0,
            actual_size: 0,
            number_of_replicas: 3,
            node_selector: Vec::new(),
            disk_selector: Vec::new(),
            node_id: String::new(),
            data_locality: DataLocality::Disabled,
            replica_auto_balance: AutoBalance::Ignored,
            replica_soft_anti_affinity: SoftAntiAffinity::Ignored,
            replica_zone_soft_anti_affinity: SoftAntiAffinity::Ignored,
            replica_disk_soft_anti_affinity: SoftAntiAffinity::Ignored,
            data_engine: DataEngine::V1,
            backing_image: None,
            topology_requirement: Vec::new(),
            robustness: Robustness::Healthy,
            last_degraded_at: None,
        }
    }
}

impl Volume {
    /// A healthy, detached v1 volume of `size` bytes with `replicas` replicas.
    pub fn new(name: impl Into<String>, size: i64, replicas: u32) -> Self {
        Volume { name: name.into(), size, number_of_replicas: replicas, ..Volume::default() }
    }
}

/// One replica of a volume. An empty `node_id` means "not scheduled yet".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", default, deny_unknown_fields)]
#[non_exhaustive]
pub struct Replica {
    /// Name (unique within the volume); pending replicas are scheduled in name order.
    pub name: String,
    /// The host name, empty when unscheduled.
    pub node_id: String,
    /// The disk name on that host (placewise's stand-in for Longhorn's disk UUID).
    pub disk_id: String,
    /// Data directory, `<volume>-<8 hex digits>`, set when scheduled.
    pub data_directory_name: String,
    /// When it failed (seconds), if it did.
    pub failed_at: Option<i64>,
    /// When it was last healthy (seconds), if ever.
    pub healthy_at: Option<i64>,
    /// It is being evicted.
    pub eviction_requested: bool,
    /// Failed rebuilds so far.
    pub rebuild_retry_count: u32,
    /// It has a deletion timestamp.
    pub deleted: bool,
    /// It belongs to the volume's active set.
    pub active: bool,
    /// The only host it may go to (strict-local, locality relocation).
    pub hard_node_affinity: String,
    /// Whether the disk's `scheduled` total already includes this replica (Longhorn's
    /// `scheduledReplica` entry). False for replicas placed in the current cycle.
    pub counted: bool,
}

impl Default for Replica {
    fn default() -> Self {
        Replica {
            name: String::new(),
            node_id: String::new(),
            disk_id: String::new(),
            data_directory_name: String::new(),
            failed_at: None,
            healthy_at: None,
            eviction_requested: false,
            rebuild_retry_count: 0,
            deleted: false,
            active: true,
            hard_node_affinity: String::new(),
            counted: true,
        }
    }
}

impl Replica {
    /// An unscheduled replica.
    pub fn new(name: impl Into<String>) -> Self {
        Replica { name: name.into(), ..Replica::default() }
    }

    /// A healthy replica already on `node` / `disk`.
    pub fn on(name: impl Into<String>, node: impl Into<String>, disk: impl Into<String>) -> Self {
        Replica {
            name: name.into(),
            node_id: node.into(),
            disk_id: disk.into(),
            healthy_at: Some(0),
            ..Replica::default()
        }
    }

    /// Whether it is failed.
    pub fn is_failed(&self) -> bool {
        self.failed_at.is_some()
    }

    /// Longhorn's "potentially reusable": a failed replica with a node and a disk, fewer than 5
    /// rebuild retries, not evicting.
    pub fn is_potentially_reusable(&self) -> bool {
        !self.node_id.is_empty() && !self.disk_id.is_empty() && self.rebuild_retry_count < 5 && !self.eviction_requested
    }
}

/// `IsSelectorsInTags` over interned tags: every selector present (AND); an empty selector
/// matches when `allow_empty` or the object has no tags. `None` in `selector` is a tag no object
/// carries.
pub(crate) fn tags_match(
    has: impl Fn(crate::id::Symbol) -> bool,
    tag_count: usize,
    selector: &[Option<crate::id::Symbol>],
    allow_empty: bool,
) -> bool {
    if selector.is_empty() {
        return allow_empty || tag_count == 0;
    }
    selector.iter().all(|s| s.is_some_and(&has))
}
