//! Volumes and replicas: what the scheduler places.

use super::ReplicaError;
use crate::error::BuildError;
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
    #[serde(alias = "nodeSelector")]
    pub node_selector: Vec<String>,
    /// Disk tags every replica's disk must carry.
    #[serde(alias = "diskSelector")]
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
///
/// In JSON ([`Volume::from_json`]) each field is read under its name here (snake_case) or
/// under Longhorn's camelCase name for it (`actualSize`, `numberOfReplicas`, `nodeID`,
/// `dataLocality`, `replicaAutoBalance` …), so a Longhorn volume's `spec` and `status`
/// fields read as they are; it is written back in snake_case. An unknown field is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", default, deny_unknown_fields)]
#[non_exhaustive]
pub struct Volume {
    /// Name; the prefix of data directory names.
    pub name: String,
    /// `spec.size`: the provisioned size (space check and balance score); at least 0.
    pub size: i64,
    /// `status.actualSize`: bytes written (actual-space check); at least 0.
    #[serde(alias = "actualSize")]
    pub actual_size: i64,
    /// `numberOfReplicas`, from 1 to [`MAX_VOLUME_REPLICAS`] (1 with `strict-local` data
    /// locality); a larger count is also refused when read from JSON.
    #[serde(alias = "numberOfReplicas", deserialize_with = "replica_count")]
    pub number_of_replicas: u32,
    /// Node tags a node must all carry.
    #[serde(alias = "nodeSelector")]
    pub node_selector: Vec<String>,
    /// Disk tags a disk must all carry.
    #[serde(alias = "diskSelector")]
    pub disk_selector: Vec<String>,
    /// `spec.nodeID`: the attached node, empty when detached.
    #[serde(alias = "nodeID")]
    pub node_id: String,
    /// Data locality.
    #[serde(alias = "dataLocality")]
    pub data_locality: DataLocality,
    /// Auto-balance override.
    #[serde(alias = "replicaAutoBalance")]
    pub replica_auto_balance: AutoBalance,
    /// Node-level anti-affinity override.
    #[serde(alias = "replicaSoftAntiAffinity")]
    pub replica_soft_anti_affinity: SoftAntiAffinity,
    /// Zone-level anti-affinity override.
    #[serde(alias = "replicaZoneSoftAntiAffinity")]
    pub replica_zone_soft_anti_affinity: SoftAntiAffinity,
    /// Disk-level anti-affinity override.
    #[serde(alias = "replicaDiskSoftAntiAffinity")]
    pub replica_disk_soft_anti_affinity: SoftAntiAffinity,
    /// Data engine.
    #[serde(alias = "dataEngine")]
    pub data_engine: DataEngine,
    /// Backing image selectors, if the volume has one.
    #[serde(alias = "backingImage")]
    pub backing_image: Option<BackingImage>,
    /// Zonal or regional pinning (HEAD only); empty = none.
    #[serde(alias = "topologyRequirement")]
    pub topology_requirement: Vec<TopologyTerm>,
    /// Health.
    pub robustness: Robustness,
    /// When the volume last became degraded (seconds).
    #[serde(alias = "lastDegradedAt")]
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

    /// Reads a volume from JSON, its fields under their snake_case names or Longhorn's
    /// camelCase ones (`{"name": "vol", "size": 1073741824, "numberOfReplicas": 3}`), and
    /// checks it as every scheduling entry does ([`Volume::validate`]). A missing field takes
    /// its default ([`Volume::default`]).
    ///
    /// # Errors
    ///
    /// [`BuildError::Json`] with the line and column for malformed text, a field of the wrong
    /// type or an unknown field; [`BuildError::NotAnObject`] with its path for an array where
    /// an object is documented; [`BuildError::InvalidNumber`] for a volume [`Volume::validate`]
    /// refuses, with the field, problem and value of its [`ReplicaError::InvalidVolume`] and
    /// the volume's name in the context.
    pub fn from_json(json: &str) -> Result<Volume, BuildError> {
        let volume: Volume = crate::json::from_str(json)?;
        match volume.validate() {
            Err(ReplicaError::InvalidVolume { volume, field, problem, value }) => {
                Err(BuildError::number(format!("volume `{volume}`"), field, problem, value as f64))
            }
            _ => Ok(volume),
        }
    }
}

/// One replica of a volume. An empty `node_id` means "not scheduled yet".
///
/// In JSON ([`Replica::from_json`]) each field is read under its name here or under
/// Longhorn's camelCase name for it (`nodeID`, `diskID`, `dataDirectoryName`, `failedAt` …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", default, deny_unknown_fields)]
#[non_exhaustive]
pub struct Replica {
    /// Name (unique within the volume); pending replicas are scheduled in name order.
    pub name: String,
    /// The host name, empty when unscheduled.
    #[serde(alias = "nodeID")]
    pub node_id: String,
    /// The disk name on that host (placewise's stand-in for Longhorn's disk UUID).
    #[serde(alias = "diskID")]
    pub disk_id: String,
    /// Data directory, `<volume>-<8 hex digits>`, set when scheduled.
    #[serde(alias = "dataDirectoryName")]
    pub data_directory_name: String,
    /// When it failed (seconds), if it did.
    #[serde(alias = "failedAt")]
    pub failed_at: Option<i64>,
    /// When it was last healthy (seconds), if ever.
    #[serde(alias = "healthyAt")]
    pub healthy_at: Option<i64>,
    /// It is being evicted.
    #[serde(alias = "evictionRequested")]
    pub eviction_requested: bool,
    /// Failed rebuilds so far.
    #[serde(alias = "rebuildRetryCount")]
    pub rebuild_retry_count: u32,
    /// It has a deletion timestamp.
    pub deleted: bool,
    /// It belongs to the volume's active set.
    pub active: bool,
    /// The only host it may go to (strict-local, locality relocation).
    #[serde(alias = "hardNodeAffinity")]
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

    /// Reads a replica from JSON, its fields under their snake_case names or Longhorn's
    /// camelCase ones (`{"name": "r1", "nodeID": "n1", "diskID": "d1"}`). A missing field
    /// takes its default ([`Replica::default`]).
    ///
    /// # Errors
    ///
    /// [`BuildError::Json`] with the line and column for malformed text, a field of the wrong
    /// type or an unknown field; [`BuildError::NotAnObject`] with its path for an array where
    /// an object is documented.
    pub fn from_json(json: &str) -> Result<Replica, BuildError> {
        crate::json::from_str(json)
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, Value};

    /// Longhorn's camelCase name of a snake_case field: `node_id` → `nodeID`, `disk_id` →
    /// `diskID` (Longhorn spells `ID` in capitals), any other `a_b` → `aB`.
    fn camel(snake: &str) -> String {
        let mut out = String::new();
        for (i, part) in snake.split('_').enumerate() {
            match (i, part) {
                (0, p) => out.push_str(p),
                (_, "id") => out.push_str("ID"),
                (_, p) => {
                    let mut c = p.chars();
                    out.extend(c.next().map(|f| f.to_ascii_uppercase()));
                    out.push_str(c.as_str());
                }
            }
        }
        out
    }

    /// Every key of an object renamed by `rename`, at the top level only.
    fn renamed(value: &Value, rename: impl Fn(&str) -> String) -> String {
        let object: Map<String, Value> =
            value.as_object().unwrap().iter().map(|(k, v)| (rename(k), v.clone())).collect();
        Value::Object(object).to_string()
    }

    fn full_volume() -> Volume {
        Volume {
            name: "vol".into(),
            size: 1 << 30,
            actual_size: 1 << 20,
            number_of_replicas: 2,
            node_selector: vec!["ssd".into()],
            disk_selector: vec!["fast".into()],
            node_id: "n1".into(),
            data_locality: DataLocality::BestEffort,
            replica_auto_balance: AutoBalance::LeastEffort,
            replica_soft_anti_affinity: SoftAntiAffinity::Enabled,
            replica_zone_soft_anti_affinity: SoftAntiAffinity::Disabled,
            replica_disk_soft_anti_affinity: SoftAntiAffinity::Enabled,
            data_engine: DataEngine::V2,
            backing_image: None,
            topology_requirement: vec![TopologyTerm::new("z1", "")],
            robustness: Robustness::Degraded,
            last_degraded_at: Some(7),
        }
    }

    #[test]
    fn every_volume_field_reads_under_its_name_and_longhorns_camel_case_name() {
        let volume = full_volume();
        let written = serde_json::to_value(&volume).unwrap();
        // Every field is written, so every field's both names are read.
        assert_eq!(written.as_object().unwrap().len(), 17);
        assert_eq!(Volume::from_json(&written.to_string()).unwrap(), volume);
        assert_eq!(Volume::from_json(&renamed(&written, camel)).unwrap(), volume);
        let longhorn =
            r#"{"name": "v", "size": 1024, "numberOfReplicas": 2, "nodeID": "n1", "dataLocality": "best-effort"}"#;
        let v = Volume::from_json(longhorn).unwrap();
        assert_eq!((v.number_of_replicas, v.node_id.as_str(), v.data_locality), (2, "n1", DataLocality::BestEffort));
        let image = r#"{"backingImage": {"nodeSelector": ["a"], "diskSelector": ["b"]}}"#;
        let image = Volume::from_json(image).unwrap().backing_image.unwrap();
        assert_eq!((image.node_selector, image.disk_selector), (vec!["a".to_owned()], vec!["b".to_owned()]));
    }

    #[test]
    fn every_replica_field_reads_under_its_name_and_longhorns_camel_case_name() {
        let replica = Replica {
            name: "r1".into(),
            node_id: "n1".into(),
            disk_id: "d1".into(),
            data_directory_name: "vol-0000abcd".into(),
            failed_at: Some(3),
            healthy_at: Some(1),
            eviction_requested: true,
            rebuild_retry_count: 2,
            deleted: true,
            active: false,
            hard_node_affinity: "n2".into(),
            counted: false,
        };
        let written = serde_json::to_value(&replica).unwrap();
        assert_eq!(written.as_object().unwrap().len(), 12);
        assert_eq!(Replica::from_json(&written.to_string()).unwrap(), replica);
        assert_eq!(Replica::from_json(&renamed(&written, camel)).unwrap(), replica);
    }

    #[test]
    fn an_unknown_field_is_a_json_error_with_its_position() {
        for json in [r#"{"name": "v", "replicas": 3}"#, r#"{"name": "v", "NumberOfReplicas": 3}"#] {
            let err = Volume::from_json(json).unwrap_err();
            assert!(
                matches!(&err, BuildError::Json { line: 1, column, source } if *column > 0 && source.to_string().contains("unknown field")),
                "{err}"
            );
        }
        assert!(matches!(Replica::from_json(r#"{"node": "n1"}"#), Err(BuildError::Json { .. })));
        // Wrong types keep their position too.
        assert!(matches!(Volume::from_json("{\n \"size\": \"big\"}"), Err(BuildError::Json { line: 2, .. })));
    }

    #[test]
    fn an_array_for_an_object_is_refused_with_its_path() {
        assert_eq!(Volume::from_json("[]").unwrap_err(), BuildError::NotAnObject { path: "$".into() });
        let term = r#"{"topologyRequirement": [["z1", "r1"]]}"#;
        assert_eq!(
            Volume::from_json(term).unwrap_err(),
            BuildError::NotAnObject { path: "$.topologyRequirement[0]".into() }
        );
        assert_eq!(Replica::from_json(r#"["r1"]"#).unwrap_err(), BuildError::NotAnObject { path: "$".into() });
    }

    #[test]
    fn a_volume_validate_refuses_is_refused_as_validate_words_it() {
        for bad in [
            Volume { size: -1, ..full_volume() },
            Volume { actual_size: -5, ..full_volume() },
            Volume { number_of_replicas: 0, ..full_volume() },
            Volume { data_locality: DataLocality::StrictLocal, ..full_volume() },
        ] {
            let Err(ReplicaError::InvalidVolume { field, problem, value, .. }) = bad.validate() else {
                panic!("{bad:?} must be invalid");
            };
            let err = Volume::from_json(&serde_json::to_string(&bad).unwrap()).unwrap_err();
            let expected = BuildError::InvalidNumber {
                context: "volume `vol`".into(),
                field: field.into(),
                problem,
                value: value as f64,
            };
            assert_eq!(err, expected);
        }
    }
}
