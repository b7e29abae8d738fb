//! A Longhorn node as typed fields: [`LonghornNode`] builds the [`HostSpec`] the replica
//! scheduler reads, so that no fact about a node is a free-form attribute whose misspelt key
//! would read as its default.

use crate::snapshot::{DiskSpec, HostSpec};

/// Host attribute: the node's default instance manager is running (bool, default true).
pub const ATTR_INSTANCE_MANAGER_RUNNING: &str = "im_running";
/// Host attribute: the volume's engine image is deployed on the node (v1; bool, default true).
pub const ATTR_ENGINE_IMAGE_DEPLOYED: &str = "engine_image_ready";
/// Host attribute: the v2 data engine is disabled on the node (bool, default false).
pub const ATTR_V2_DISABLED: &str = "v2_disabled";

/// The boolean host attributes the replica scheduler reads, with their defaults.
pub const NODE_ATTRIBUTES: &[(&str, bool)] =
    &[(ATTR_INSTANCE_MANAGER_RUNNING, true), (ATTR_ENGINE_IMAGE_DEPLOYED, true), (ATTR_V2_DISABLED, false)];

/// A Longhorn node, built field by field into a [`HostSpec`] (see the
/// [module docs' mapping](super#mapping-longhorn-onto-the-snapshot)).
///
/// ```
/// use placewise::replica::LonghornNode;
/// use placewise::snapshot::DiskSpec;
///
/// let spec = LonghornNode::new("n1")
///     .zone("z1")
///     .tag("fast")
///     .engine_image_deployed(false)
///     .disk(DiskSpec::new("d1", 100 << 30, 80 << 30).tag("ssd"))
///     .build();
/// assert_eq!(spec.labels["fast"], "");
/// assert_eq!(spec.attributes["engine_image_ready"], false);
/// ```
#[derive(Debug, Clone)]
pub struct LonghornNode {
    spec: HostSpec,
}

impl LonghornNode {
    /// A ready node that allows scheduling, with its instance manager running and the engine
    /// image deployed, no tags, no zone and no disk.
    pub fn new(name: impl Into<String>) -> Self {
        LonghornNode { spec: HostSpec::new(name) }
    }

    /// `status.zone`.
    pub fn zone(mut self, zone: impl Into<String>) -> Self {
        self.spec = self.spec.zone(zone);
        self
    }

    /// `status.region`.
    pub fn region(mut self, region: impl Into<String>) -> Self {
        self.spec = self.spec.topology("region", region);
        self
    }

    /// A node tag.
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.spec = self.spec.label(tag, "");
        self
    }

    /// The `Ready` condition (default true).
    pub fn ready(mut self, ready: bool) -> Self {
        self.spec.state.up = ready;
        self
    }

    /// `spec.allowScheduling` (default true).
    pub fn allow_scheduling(mut self, allow: bool) -> Self {
        self.spec.state.enabled = allow;
        self
    }

    /// The kube node is cordoned (default false).
    pub fn cordoned(mut self, cordoned: bool) -> Self {
        self.spec.state.cordoned = cordoned;
        self
    }

    /// `spec.evictionRequested` (default false).
    pub fn eviction_requested(mut self, evict: bool) -> Self {
        self.spec.state.evicting = evict;
        self
    }

    /// The default instance manager is running (default true).
    pub fn instance_manager_running(mut self, running: bool) -> Self {
        self.spec = self.spec.attribute(ATTR_INSTANCE_MANAGER_RUNNING, running.into());
        self
    }

    /// The engine image is deployed (v1; default true).
    pub fn engine_image_deployed(mut self, deployed: bool) -> Self {
        self.spec = self.spec.attribute(ATTR_ENGINE_IMAGE_DEPLOYED, deployed.into());
        self
    }

    /// The v2 data engine is disabled on the node (default false).
    pub fn v2_data_engine_disabled(mut self, disabled: bool) -> Self {
        self.spec = self.spec.attribute(ATTR_V2_DISABLED, disabled.into());
        self
    }

    /// Adds a disk (its conditions, tags and scheduled replicas are [`DiskSpec`] fields).
    pub fn disk(mut self, disk: DiskSpec) -> Self {
        self.spec = self.spec.disk(disk);
        self
    }

    /// The host spec.
    pub fn build(self) -> HostSpec {
        self.spec
    }
}
