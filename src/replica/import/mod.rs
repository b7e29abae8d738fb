//! Longhorn's own objects in: nodes, volumes, replicas, settings, engine images and instance
//! managers of `longhorn.io`, as `kubectl get … -o json` prints them; the replica engine's
//! answers out.
//!
//! # Design
//!
//! [`read`] takes [`Document`]s (a `List`, single objects, several files, in any order), sorts
//! their objects by kind, reads the settings, engine images and instance managers first (what
//! the nodes' attributes need), turns every node into a host with its disks, builds the
//! snapshot once, then reads the volumes and their replicas against it. Every field is read
//! through [`Object`](crate::import::Object), so an error names the file, the object and the
//! field. Nodes are read by walking the parsed value directly: no per-node allocation beyond the
//! strings the snapshot keeps (names, tags, zones). [`LonghornCluster`] then answers the three
//! questions through the engine's own API: where Longhorn would place a volume's missing
//! replicas ([`LonghornCluster::place`]), why a replica is unschedulable
//! ([`LonghornCluster::explain`]: Longhorn's condition text, which the engine's
//! [`Explanation::message`](crate::explain::Explanation::message) carries, and the verdict on
//! every node and disk), and how many more volumes of a size and replica count fit
//! ([`LonghornCluster::capacity`], through [`capacity::volumes`]).
//! [`write()`] is the way back, for round trips.
//!
//! ```
//! use placewise::import::Document;
//! use placewise::replica::import;
//!
//! let text = r#"{"apiVersion": "v1", "kind": "List", "items": [
//!   {"apiVersion": "longhorn.io/v1beta2", "kind": "Node", "metadata": {"name": "n1"},
//!    "spec": {"allowScheduling": true, "disks": {"d1": {"allowScheduling": true, "storageReserved": 0}}},
//!    "status": {"zone": "z1", "conditions": [{"type": "Ready", "status": "True"}, {"type": "Schedulable", "status": "True"}],
//!      "diskStatus": {"d1": {"diskUUID": "0f5c…-1", "storageMaximum": 107374182400,
//!        "storageAvailable": 96636764160, "storageScheduled": 0}}}},
//!   {"apiVersion": "longhorn.io/v1beta2", "kind": "Volume", "metadata": {"name": "data"},
//!    "spec": {"size": "10737418240", "numberOfReplicas": 1}}
//! ]}"#;
//! let cluster = import::read(&[Document::from_json("dump.json", text)?])?;
//! let volume = cluster.volume("data").unwrap();
//! let outcome = cluster.place(volume, 0)?;
//! let (replica, placement) = outcome.placed().next().unwrap();
//! assert_eq!((placement.node_id.as_str(), placement.disk_id.as_str()), ("n1", "d1"));
//! assert!(replica.starts_with("data-r-"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What is read, and how
//!
//! | Longhorn | placewise |
//! |---|---|
//! | `apiVersion` `longhorn.io/v1beta2`, `v1beta1` | read alike; conditions as a list (v1beta2) or a map keyed by type (v1beta1), either in both |
//! | `longhorn.rancher.io/v1alpha1` and other versions | [`ImportError::Invalid`] on `apiVersion` |
//! | a `kind` not of Longhorn, or not one Longhorn has | [`ImportError::UnknownKind`] |
//! | Longhorn's other kinds (`Engine`, `BackingImage`, `ShareManager` …) | skipped with a warning |
//! | a `CustomResourceDefinition` of `longhorn.io` | skipped with a warning: a definition of a kind, not an object |
//! | node `spec.allowScheduling`, `spec.evictionRequested`, `spec.tags` | [`HostState`](crate::snapshot::HostState) `enabled`, `evicting`; tags as label keys ([`LonghornNode`](crate::replica::LonghornNode)'s mapping) |
//! | node `Ready` / `Schedulable` conditions | `up` (a missing `Ready` is not ready) / `cordoned` (`Schedulable` not `True`) |
//! | node `status.zone`, `status.region` | topology `zone`, `region`; `""` is no zone, so those nodes form one zone |
//! | a node without `status` | not ready, its disks unavailable (size 0), with a warning: Longhorn has not reported on it |
//! | `spec.disks` joined to `status.diskStatus` by the map key | one [`DiskSpec`](crate::snapshot::DiskSpec) named by the key (`diskName` is not read: it can differ) |
//! | `storageMaximum`, `storageAvailable` | required ([`ImportError::Missing`]); `storageScheduled` (0 if absent) |
//! | disk `storageReserved`, `tags`, `allowScheduling`, `evictionRequested`, `diskType`, `filesystemType` | the disk's fields of the same meaning |
//! | disk `Ready` / `Schedulable` conditions | `ready` / `schedulable` as reported (absent: derived as the node controller derives it) |
//! | `scheduledReplica` | the disk's scheduled replicas; a replica it lists is [`Replica::counted`] |
//! | a disk in `spec.disks` without status | unavailable (size 0), with a warning; one in the status only takes no new replicas |
//! | `diskUUID` | what `replica.spec.diskID` names, looked up **on the replica's node**: cloned nodes may share one |
//! | instance managers (`spec.nodeID`, `spec.type` `aio`/`replica`, `spec.dataEngine`, `status.currentState` `running`) | [`ATTR_INSTANCE_MANAGER_RUNNING`] per node and data engine; none in the input: every node runs one |
//! | engine images (`spec.image`, `status.state` `deployed`/`deploying`, `status.nodeDeploymentMap`) | [`ATTR_ENGINE_IMAGE_DEPLOYED`] for the volume's `spec.image` (the snapshot holds the `default-engine-image` setting's, or the only one's); none in the input: deployed everywhere |
//! | volume `spec.size` (a string of bytes, or a quantity such as `10Gi`), `numberOfReplicas` (0 or absent: `default-replica-count`), selectors, `nodeID`, `dataLocality` (empty: `default-data-locality`), the anti-affinity and auto-balance overrides, `dataEngine`, `topologyRequirement` | [`Volume`] |
//! | volume `status.actualSize`, `robustness`, `lastDegradedAt` | [`Volume`] |
//! | volume `Scheduled` condition when `False` | [`LonghornVolume::reported`]: what Longhorn said, beside what the engine says |
//! | replica `spec.nodeID`, `spec.diskID`, `dataDirectoryName`, `failedAt`, `healthyAt`, `evictionRequested`, `rebuildRetryCount`, `active`, `hardNodeAffinity`, `metadata.deletionTimestamp` | [`Replica`], its disk the one whose `diskUUID` is `diskID` on that node |
//! | a replica naming a node or disk not in the input | [`ImportError::Dangling`] |
//! | a replica whose volume is not in the input | skipped with a warning (its disk's `storageScheduled` still counts it) |
//! | settings: the names [`ReplicaSettings`] has | applied; a value it cannot read is an [`ImportError::Invalid`] (decisions would be wrong otherwise); every other setting is ignored |
//! | a setting value holding JSON per data engine (`{"v1":"true","v2":"false"}`) | the `v1` value, with a warning when `v2`'s differs |
//! | times (`failedAt`, `lastDegradedAt`) | RFC 3339, seconds since the epoch; `""` is none |
//!
//! Fields placement does not read are ignored. Fields read but not modelled give warnings:
//! `topologyRequirement` (applied as Longhorn after v1.12.1 applies it), a backing image's
//! selectors, linked clones, sharded volumes.
//!
//! # Cost
//!
//! [`read`] is linear in the input: O(objects + disks), one snapshot build, a map from replica
//! volume names only when there are replicas. A volume whose engine image or data engine makes
//! the nodes' attributes differ from the snapshot's is answered on a copy with those attributes
//! ([`LonghornCluster::cluster_for`], O(hosts)).

mod read;
mod units;
mod write;

pub use units::parse_size;
pub use write::write;

use crate::capacity::{self, VolumeCapacity};
use crate::import::{Document, ImportError, ImportWarning, Unread};
use crate::replica::{
    DataEngine, Replica, ReplicaError, ReplicaOutcome, ReplicaScheduler, ReplicaSettings, Volume,
    ATTR_ENGINE_IMAGE_DEPLOYED, ATTR_INSTANCE_MANAGER_RUNNING,
};
use crate::snapshot::Cluster;
use std::borrow::Cow;

/// Whether a document is Longhorn's: a `longhorn.io` object (or a legacy `longhorn.rancher.io`
/// one, which [`read`] refuses clearly), a `List` whose first item is one, or the definition of
/// a `longhorn.io` kind.
pub fn recognises(value: &serde_json::Value) -> bool {
    read::objects(value).first().is_some_and(read::is_longhorn)
}

/// The members [`read`] never reads: Kubernetes' bookkeeping, condition timestamps, disk
/// paths and drivers anywhere, and a disk condition's reason and message (a volume's are read).
/// [`read_json`] leaves them out while parsing.
pub const UNREAD: Unread<'static> = Unread {
    anywhere: &[
        "annotations",
        "autoEvicting",
        "creationTimestamp",
        "diskDriver",
        "diskName",
        "diskPath",
        "finalizers",
        "generation",
        "instanceManagerCPURequest",
        "instanceManagerName",
        "lastProbeTime",
        "lastTransitionTime",
        "managedFields",
        "namespace",
        "ownerReferences",
        "path",
        "resourceVersion",
        "scheduledBackingImage",
        "selfLink",
        "uid",
    ],
    below: &[("diskStatus", &["message", "reason"])],
};

/// [`read`] of one JSON text (a `List`, or a single object), parsed without the members
/// [`read`] never reads ([`UNREAD`], through
/// [`Document::from_json_dropping`](crate::import::Document::from_json_dropping)): the same
/// answer for less: on the import bench's 10,000 nodes, 335 ms against 396 ms for
/// `Document::from_json` then `read`. A fast path,
/// pinned to `read` of the whole document by the tests.
///
/// # Errors
///
/// As [`read`], and [`ImportError::Parse`] for text that is not JSON.
pub fn read_json(origin: &str, text: &str) -> Result<LonghornCluster, ImportError> {
    read(&[Document::from_json_dropping(origin, text, &UNREAD)?])
}

/// Reads Longhorn's objects (see the [module docs](self)).
///
/// # Errors
///
/// An [`ImportError`] naming the file, the object and the field: [`ImportError::UnknownKind`]
/// for an object that is not Longhorn's, [`ImportError::Invalid`] for an unsupported
/// `apiVersion` or a value that cannot be read, [`ImportError::Missing`] for a disk without
/// `storageMaximum` (or any other field placement needs), [`ImportError::Dangling`] for a
/// replica naming a node or disk that is not there, [`ImportError::Duplicate`] for two objects
/// of one kind and name, [`ImportError::Incomplete`] without any node.
pub fn read(docs: &[Document]) -> Result<LonghornCluster, ImportError> {
    read::read(docs)
}

/// A Longhorn volume as read, with its replicas, ready for the engine.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LonghornVolume {
    /// The volume as the engine reads it.
    pub volume: Volume,
    /// Its replicas, in name order.
    pub replicas: Vec<Replica>,
    /// `spec.image`: its engine image; `None` for the default one.
    pub image: Option<String>,
    /// The file it was read from (empty for a volume made by [`LonghornCluster::new_volume`]).
    pub origin: String,
    /// Longhorn's own message when its `Scheduled` condition is `False`.
    pub reported: Option<String>,
}

impl LonghornVolume {
    /// A volume with these replicas, of the default engine image.
    pub fn new(volume: Volume, replicas: Vec<Replica>) -> Self {
        LonghornVolume { volume, replicas, image: None, origin: String::new(), reported: None }
    }
}

/// What the nodes' engine images and instance managers say, beyond the snapshot's attributes.
#[derive(Debug, Clone, Default)]
struct Facts {
    /// Per host (in id order): a running instance manager for v1 and v2; empty without any in
    /// the input.
    node_im: Vec<[bool; 2]>,
    /// Per engine image, per host: ready there.
    images: Vec<(String, Vec<bool>)>,
    /// The image whose readiness the snapshot's attribute holds.
    base_image: Option<usize>,
}

/// A Longhorn cluster as read by [`read`]: the snapshot, the settings, the volumes, and the
/// warnings; it answers through the replica engine.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct LonghornCluster {
    /// The snapshot: one host per node, one disk per disk.
    pub cluster: Cluster,
    /// What was read but not used as written.
    pub warnings: Vec<ImportWarning>,
    /// The settings, defaults where the input has none.
    pub settings: ReplicaSettings,
    /// The settings read, `(name, value)` as applied (the v1 value of a per-engine one).
    pub settings_read: Vec<(String, String)>,
    /// The volumes, in input order.
    pub volumes: Vec<LonghornVolume>,
    /// The format read: `Longhorn longhorn.io/v1beta2` (every API version seen).
    pub format: String,
    facts: Facts,
}

impl LonghornCluster {
    /// The volume named `name`.
    pub fn volume(&self, name: &str) -> Option<&LonghornVolume> {
        self.volumes.iter().find(|v| v.volume.name == name)
    }

    /// A new volume of `size` bytes and `replicas` replicas (`None`: `default-replica-count`),
    /// with the `default-data-locality` setting, as Longhorn creates one.
    pub fn new_volume(&self, name: &str, size: i64, replicas: Option<u32>) -> LonghornVolume {
        let mut volume = Volume::new(name, size, replicas.unwrap_or(self.settings.default_replica_count));
        volume.data_locality = self.settings.default_data_locality;
        LonghornVolume::new(volume, Vec::new())
    }

    /// Longhorn's scheduler with the settings read; `explain` turns on the full explanation.
    ///
    /// # Errors
    ///
    /// [`ReplicaError::InvalidSetting`] for a setting out of range (never, for settings read).
    pub fn scheduler(&self, explain: bool) -> Result<ReplicaScheduler, ReplicaError> {
        ReplicaScheduler::builder(self.settings.clone()).explain(explain).build()
    }

    /// The snapshot as `volume` sees it: the nodes' instance managers for its data engine and
    /// its engine image's deployment. The snapshot itself when they are what it holds (every
    /// volume of the default image and v1, and every volume when the input has neither engine
    /// images nor instance managers); else a copy, O(hosts).
    pub fn cluster_for(&self, volume: &LonghornVolume) -> Cow<'_, Cluster> {
        let f = &self.facts;
        let engine = usize::from(volume.volume.data_engine == DataEngine::V2);
        let image = match &volume.image {
            Some(i) if !f.images.is_empty() => Some(f.images.iter().position(|(name, _)| name == i)),
            _ => f.base_image.map(Some),
        };
        let v1 = engine == 0;
        let same_im = f.node_im.is_empty() || v1;
        let same_image = !v1 || image.is_none() || image == Some(f.base_image);
        if same_im && same_image {
            return Cow::Borrowed(&self.cluster);
        }
        let mut spec = self.cluster.to_spec();
        for (i, host) in spec.hosts.iter_mut().enumerate() {
            host.attributes.remove(ATTR_INSTANCE_MANAGER_RUNNING);
            host.attributes.remove(ATTR_ENGINE_IMAGE_DEPLOYED);
            if f.node_im.get(i).is_some_and(|im| !im[engine]) {
                host.attributes.insert(ATTR_INSTANCE_MANAGER_RUNNING.into(), false.into());
            }
            // The engine image is checked for v1 volumes only.
            let deployed = match image {
                Some(Some(k)) if v1 => f.images.get(k).and_then(|(_, d)| d.get(i).copied()).unwrap_or(true),
                Some(None) if v1 => false,
                _ => true,
            };
            if !deployed {
                host.attributes.insert(ATTR_ENGINE_IMAGE_DEPLOYED.into(), false.into());
            }
        }
        // The spec is the snapshot's own, with boolean attributes changed: it builds.
        match Cluster::from_spec(&spec) {
            Ok(c) => Cow::Owned(c),
            Err(_) => Cow::Borrowed(&self.cluster),
        }
    }

    /// Where Longhorn would place the replicas `volume` lacks (and its unscheduled ones), at
    /// `now` (seconds since the epoch: it decides whether failed replicas still hold their
    /// nodes): [`ReplicaScheduler::schedule`] on [`cluster_for`](Self::cluster_for).
    ///
    /// # Errors
    ///
    /// As [`ReplicaScheduler::schedule`].
    pub fn place(&self, volume: &LonghornVolume, now: i64) -> Result<ReplicaOutcome, ReplicaError> {
        self.scheduler(false)?.schedule(&self.cluster_for(volume), &volume.volume, &volume.replicas, now)
    }

    /// As [`place`](Self::place), with the full explanation: for each replica not placed,
    /// Longhorn's condition text ([`ReplicaSelection::message`](crate::replica::ReplicaSelection::message),
    /// also the explanation's `message`), the verdict on every node and disk left out, and the
    /// binding rule.
    ///
    /// # Errors
    ///
    /// As [`ReplicaScheduler::schedule`].
    pub fn explain(&self, volume: &LonghornVolume, now: i64) -> Result<ReplicaOutcome, ReplicaError> {
        self.scheduler(true)?.schedule(&self.cluster_for(volume), &volume.volume, &volume.replicas, now)
    }

    /// How many more volumes like `volume` (its size, replica count, selectors) fit, one after
    /// another, and what stops the next one: [`capacity::volumes`] up to `limit`.
    ///
    /// # Errors
    ///
    /// [`ReplicaError::Record`] if a placed disk vanished from the snapshot, which the engine
    /// never returns.
    pub fn capacity(&self, volume: &LonghornVolume, limit: u32) -> Result<VolumeCapacity, ReplicaError> {
        let scheduler = self.scheduler(false)?;
        capacity::volumes(&scheduler, &self.cluster_for(volume), &volume.volume, limit)
            .map_err(|error| ReplicaError::Record { error })
    }

    /// placewise's own snapshot JSON of the cluster ([`Cluster::to_json`]).
    pub fn to_json(&self) -> String {
        self.cluster.to_json()
    }
}

#[cfg(test)]
mod tests;
