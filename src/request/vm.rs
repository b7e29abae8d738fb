//! What a virtual-machine request carries beyond resources: the flavor, the image, scheduler
//! hints and the server group, in the shapes the filter scheduler's filters read.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// An instance type: sizes and extra specs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct Flavor {
    /// Name (`m1.medium`), used by the type-affinity filters.
    pub name: String,
    /// Id; the legacy type-affinity filter compares instances' flavor ids.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Memory in MiB.
    pub memory_mb: f64,
    /// Virtual CPUs.
    pub vcpus: f64,
    /// Root disk in GiB.
    pub root_gb: f64,
    /// Ephemeral disk in GiB.
    pub ephemeral_gb: f64,
    /// Swap in MiB (the disk filter counts it; consumption does not).
    pub swap: f64,
    /// Extra specs, `key → requirement` (see [`extra_specs`](crate::expr::extra_specs)).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub extra_specs: BTreeMap<String, String>,
}

impl Flavor {
    /// A flavor with a name and sizes, no swap, no ephemeral disk, no extra specs.
    pub fn new(name: impl Into<String>, memory_mb: f64, vcpus: f64, root_gb: f64) -> Self {
        Flavor { name: name.into(), memory_mb, vcpus, root_gb, ..Flavor::default() }
    }

    /// Adds an extra spec.
    pub fn extra_spec(mut self, key: impl Into<String>, requirement: impl Into<String>) -> Self {
        self.extra_specs.insert(key.into(), requirement.into());
        self
    }
}

/// The image an instance boots from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct Image {
    /// Id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Properties (`hw_architecture`, `img_hv_type`, `hw_vm_mode`, …).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, serde_json::Value>,
}

/// A server group the instances join, with its policy and current state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct ServerGroup {
    /// Name or id.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// `affinity`, `anti-affinity`, `soft-affinity`, `soft-anti-affinity`, or `legacy` for the old
    /// `group` hint's groups.
    pub policy: String,
    /// Member instance ids (the request's own instances are members too).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
    /// Hosts of the existing members.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// The anti-affinity rule's `max_server_per_host` (default 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_server_per_host: Option<u32>,
}

/// The VM-specific part of a [`Request`](crate::Request). Every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct VmSpec {
    /// The flavor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flavor: Option<Flavor>,
    /// The image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<Image>,
    /// Scheduler hints by name (`different_host`, `same_host`, `build_near_host_ip`, `cidr`,
    /// `group`, `query`): a string or a list of strings, or for `query` a JSON query.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub hints: BTreeMap<String, serde_json::Value>,
    /// Hosts already tried for this instance, as `host` or `host:node`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub retry_hosts: Vec<String>,
    /// The project (tenant) the instances belong to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The server group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_group: Option<ServerGroup>,
    /// Instance ids, one per instance of the request (used by group and affinity rules).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub instance_uuids: Vec<String>,
    /// Only these hosts (case-insensitive names); they skip every filter.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub force_hosts: Vec<String>,
    /// Only these nodes (exact `nodename` attribute, default the host name); they skip every filter.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub force_nodes: Vec<String>,
    /// Never these hosts (case-insensitive names).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignore_hosts: Vec<String>,
    /// Rebuild: only filters marked to run on rebuild check hosts.
    #[serde(skip_serializing_if = "is_default")]
    pub rebuild: bool,
}

impl VmSpec {
    /// A VM part with this flavor and nothing else.
    pub fn with_flavor(flavor: Flavor) -> Self {
        VmSpec { flavor: Some(flavor), ..VmSpec::default() }
    }

    /// The hint `name` as a list of strings (a bare string is a one-item list).
    pub fn hint_list(&self, name: &str) -> Vec<&str> {
        match self.hints.get(name) {
            Some(serde_json::Value::String(s)) => vec![s.as_str()],
            Some(serde_json::Value::Array(items)) => items.iter().filter_map(|v| v.as_str()).collect(),
            _ => Vec::new(),
        }
    }

    /// Whether the request forces hosts or nodes (which then skip every filter).
    pub fn forces(&self) -> bool {
        !self.force_hosts.is_empty() || !self.force_nodes.is_empty()
    }
}
