//! The site: what the service scheduler reads from host attributes and resources, parsed and
//! validated once per snapshot lineage.

use super::error::ServiceError;
use crate::id::{HostId, ResourceId};
use crate::snapshot::{AttributeKey, AttributeType, Cluster, HostSpec, ResourceSpec};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Host attribute listing the host's local volumes: `[{"name": "fast", "labels": {"type": "ssd"}}]`.
pub const LOCAL_VOLUMES: &str = "local_volumes";
/// Host attribute listing the host's discovered devices: `[{"name": "cam0", "labels": {"camera": "usb"}}]`.
pub const DEVICES: &str = "devices";
/// The host attributes the service scheduler reads, with their types: what
/// [`ServiceScheduler::attribute_warnings`](super::ServiceScheduler::attribute_warnings) checks.
pub const ATTRIBUTES: &[AttributeKey] = &[(LOCAL_VOLUMES, AttributeType::Array), (DEVICES, AttributeType::Array)];
/// Prefix of the resource that gives a local volume's size in MB: `volume/<name>`.
pub const VOLUME_RESOURCE_PREFIX: &str = "volume/";
/// Resource counting a host's ingress pool addresses (per-host pools), and each instance's use.
pub const INGRESS_IP: &str = "ingress_ip";
/// Resource counting a host's GPUs.
pub const GPU: &str = "gpu";
/// Resource giving a host's quota-enforced container layer space in MB.
pub const CONTAINER_LAYER_MB: &str = "container_layer_mb";

/// How the site hands out ingress addresses (`ingress-allocation-method`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum IngressAllocation {
    /// A pool per host: each host's resource `ingress_ip` is its number of addresses; a host
    /// with none free is rejected.
    #[default]
    HostPools,
    /// One pool for the whole site of `addresses` addresses, checked globally: every host
    /// passes while the site has a free address (instances' `ingress_ip` use summed over all
    /// hosts).
    SitePool {
        /// Size of the site-wide pool.
        addresses: u32,
    },
    /// Addresses come from DHCP when the instance starts: availability cannot be known in
    /// advance, so every host passes.
    Dhcp,
    /// Instances share the host's address with forwarded ports: no address is needed, every
    /// host passes (port clashes are not modelled).
    PortForward,
}

/// A local volume of a host.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LocalVolume {
    /// The volume's name on the host.
    pub name: String,
    /// The resource `volume/<name>` holding its size and allocations.
    pub resource: ResourceId,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
}

/// A discovered device of a host.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Device {
    /// The device's name.
    pub name: String,
    /// Its device labels.
    pub labels: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Default)]
struct HostSite {
    volumes: Vec<LocalVolume>,
    devices: Vec<Device>,
}

/// The parsed site: local volumes and devices per host (dense by [`HostId`]) and the ingress
/// allocation method.
///
/// Built once from a snapshot with [`Site::new`], which validates the attributes; valid for
/// every later snapshot that only places or removes instances (attributes and host ids do not
/// change then). Build it again after hosts are added, removed or updated.
///
/// Cloning is cheap (the per-host data is shared).
#[derive(Debug, Clone, Default)]
pub struct Site {
    hosts: Arc<Vec<HostSite>>,
    ingress: IngressAllocation,
}

fn string_map(v: &serde_json::Value) -> Option<BTreeMap<String, String>> {
    v.as_object()?.iter().map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect()
}

/// A named entry with labels.
type Entry = (String, BTreeMap<String, String>);

/// Parses `[{"name": …, "labels": {…}}]`.
fn named_entries(host: &str, attribute: &'static str, value: &serde_json::Value) -> Result<Vec<Entry>, ServiceError> {
    let err = |message: String| ServiceError::Attribute { host: host.to_owned(), attribute, message };
    let list = value.as_array().ok_or_else(|| err("expected an array of objects".into()))?;
    let mut out: Vec<Entry> = Vec::with_capacity(list.len());
    for (i, entry) in list.iter().enumerate() {
        let obj = entry.as_object().ok_or_else(|| err(format!("entry {i}: expected an object")))?;
        if let Some(k) = obj.keys().find(|k| *k != "name" && *k != "labels") {
            return Err(err(format!("entry {i}: unknown field `{k}`, expected `name` or `labels`")));
        }
        let name = obj
            .get("name")
            .and_then(|n| n.as_str())
            .filter(|n| !n.is_empty())
            .ok_or_else(|| err(format!("entry {i}: expected a non-empty string `name`")))?;
        let labels = match obj.get("labels") {
            None => BTreeMap::new(),
            Some(l) => string_map(l).ok_or_else(|| err(format!("entry {i}: `labels` must map strings to strings")))?,
        };
        if out.iter().any(|(n, _)| n == name) {
            return Err(err(format!("entry {i}: duplicate name `{name}`")));
        }
        out.push((name.to_owned(), labels));
    }
    Ok(out)
}

impl Site {
    /// Reads every host's [`LOCAL_VOLUMES`] and [`DEVICES`] attributes. Computes in O(hosts +
    /// volumes + devices).
    ///
    /// # Errors
    ///
    /// [`ServiceError::Attribute`] for an attribute of the wrong shape (naming host, attribute
    /// and entry); [`ServiceError::MissingVolumeCapacity`] for a local volume without its
    /// `volume/<name>` resource.
    pub fn new(cluster: &Cluster, ingress: IngressAllocation) -> Result<Site, ServiceError> {
        let mut hosts = vec![HostSite::default(); cluster.id_bound()];
        for (id, host) in cluster.hosts() {
            let slot = &mut hosts[id.index()];
            if let Some(v) = host.attribute(LOCAL_VOLUMES) {
                for (name, labels) in named_entries(&host.name, LOCAL_VOLUMES, v)? {
                    let resource = cluster
                        .resource_kinds()
                        .get(&format!("{VOLUME_RESOURCE_PREFIX}{name}"))
                        .filter(|&r| host.resource(r).is_declared())
                        .ok_or_else(|| ServiceError::MissingVolumeCapacity {
                            host: host.name.to_string(),
                            volume: name.clone(),
                        })?;
                    slot.volumes.push(LocalVolume { name, resource, labels });
                }
            }
            if let Some(v) = host.attribute(DEVICES) {
                slot.devices = named_entries(&host.name, DEVICES, v)?
                    .into_iter()
                    .map(|(name, labels)| Device { name, labels })
                    .collect();
            }
        }
        Ok(Site { hosts: Arc::new(hosts), ingress })
    }

    /// The local volumes of `host` (empty for an unknown host).
    pub fn volumes(&self, host: HostId) -> &[LocalVolume] {
        self.hosts.get(host.index()).map_or(&[], |h| &h.volumes)
    }

    /// The devices of `host` (empty for an unknown host).
    pub fn devices(&self, host: HostId) -> &[Device] {
        self.hosts.get(host.index()).map_or(&[], |h| &h.devices)
    }

    /// One past the highest host id the site knows (the snapshot's
    /// [`id_bound`](Cluster::id_bound) when it was read).
    pub fn host_bound(&self) -> usize {
        self.hosts.len()
    }

    /// The ingress allocation method.
    pub fn ingress(&self) -> IngressAllocation {
        self.ingress
    }
}

/// A builder for an edge host that writes the attributes and resources the service scheduler
/// reads, so that they stay consistent ([`EdgeHost::build`] gives a [`HostSpec`]).
///
/// ```
/// use placewise::service::EdgeHost;
///
/// let spec = EdgeHost::new("h1")
///     .memory_mb(8192.0)
///     .cpus(4.0)
///     .container_layer_mb(20_000.0)
///     .gpus(1)
///     .ingress_addresses(2)
///     .volume("fast", 50_000.0, &[("type", "ssd")])
///     .device("cam0", &[("camera", "usb")])
///     .label("site-role", "camera")
///     .build();
/// assert_eq!(spec.resources["volume/fast"].capacity, 50_000.0);
/// ```
#[derive(Debug, Clone)]
pub struct EdgeHost {
    spec: HostSpec,
    volumes: Vec<serde_json::Value>,
    devices: Vec<serde_json::Value>,
}

fn labels_json(labels: &[(&str, &str)]) -> serde_json::Value {
    serde_json::Value::Object(labels.iter().map(|(k, v)| ((*k).to_owned(), serde_json::Value::from(*v))).collect())
}

impl EdgeHost {
    /// A host with nothing.
    pub fn new(name: impl Into<String>) -> Self {
        EdgeHost { spec: HostSpec::new(name), volumes: Vec::new(), devices: Vec::new() }
    }

    /// Memory in MB.
    pub fn memory_mb(mut self, mb: f64) -> Self {
        self.spec = self.spec.memory_mb(mb);
        self
    }

    /// CPUs.
    pub fn cpus(mut self, cpus: f64) -> Self {
        self.spec = self.spec.vcpus(cpus);
        self
    }

    /// Quota-enforced container layer space in MB.
    pub fn container_layer_mb(mut self, mb: f64) -> Self {
        self.spec = self.spec.resource(CONTAINER_LAYER_MB, ResourceSpec::new(mb));
        self
    }

    /// Number of GPUs.
    pub fn gpus(mut self, n: u32) -> Self {
        self.spec = self.spec.resource(GPU, ResourceSpec::new(f64::from(n)));
        self
    }

    /// Size of the host's own ingress address pool.
    pub fn ingress_addresses(mut self, n: u32) -> Self {
        self.spec = self.spec.resource(INGRESS_IP, ResourceSpec::new(f64::from(n)));
        self
    }

    /// A local volume of `size_mb` with labels.
    pub fn volume(mut self, name: &str, size_mb: f64, labels: &[(&str, &str)]) -> Self {
        self.spec = self.spec.resource(format!("{VOLUME_RESOURCE_PREFIX}{name}"), ResourceSpec::new(size_mb));
        self.volumes.push(serde_json::json!({"name": name, "labels": labels_json(labels)}));
        self
    }

    /// A discovered device with its device labels.
    pub fn device(mut self, name: &str, labels: &[(&str, &str)]) -> Self {
        self.devices.push(serde_json::json!({"name": name, "labels": labels_json(labels)}));
        self
    }

    /// A host label.
    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.spec = self.spec.label(key, value);
        self
    }

    /// Edits the underlying spec (state, instances, topology …).
    pub fn with(mut self, f: impl FnOnce(HostSpec) -> HostSpec) -> Self {
        self.spec = f(self.spec);
        self
    }

    /// The host spec.
    pub fn build(self) -> HostSpec {
        let mut spec = self.spec;
        if !self.volumes.is_empty() {
            spec = spec.attribute(LOCAL_VOLUMES, serde_json::Value::Array(self.volumes));
        }
        if !self.devices.is_empty() {
            spec = spec.attribute(DEVICES, serde_json::Value::Array(self.devices));
        }
        spec
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn site_reads_volumes_and_devices() {
        let cluster = Cluster::builder()
            .host(
                EdgeHost::new("a")
                    .volume("fast", 100.0, &[("type", "ssd")])
                    .device("cam", &[("camera", "usb")])
                    .build(),
            )
            .host(EdgeHost::new("b").build())
            .build()
            .unwrap();
        let site = Site::new(&cluster, IngressAllocation::HostPools).unwrap();
        let a = cluster.host_id("a").unwrap();
        assert_eq!(site.volumes(a)[0].name, "fast");
        assert_eq!(site.volumes(a)[0].labels["type"], "ssd");
        assert_eq!(site.devices(a)[0].labels["camera"], "usb");
        assert!(site.volumes(cluster.host_id("b").unwrap()).is_empty());
        assert!(site.volumes(HostId(99)).is_empty());
    }

    #[test]
    fn bad_attributes_are_typed_errors() {
        let bad = |spec: HostSpec| Site::new(&Cluster::builder().host(spec).build().unwrap(), IngressAllocation::Dhcp);
        let e = bad(HostSpec::new("h").attribute(LOCAL_VOLUMES, serde_json::json!({"name": "x"}))).unwrap_err();
        assert_eq!(e.to_string(), "host `h`: attribute `local_volumes`: expected an array of objects");
        let e = bad(HostSpec::new("h").attribute(LOCAL_VOLUMES, serde_json::json!([{"name": "x"}]))).unwrap_err();
        assert_eq!(e, ServiceError::MissingVolumeCapacity { host: "h".into(), volume: "x".into() });
        let e = bad(HostSpec::new("h").attribute(DEVICES, serde_json::json!([{"name": "d", "labels": {"a": 1}}])))
            .unwrap_err();
        assert!(e.to_string().contains("entry 0: `labels` must map strings to strings"), "{e}");
        let e =
            bad(HostSpec::new("h").attribute(DEVICES, serde_json::json!([{"name": "d"}, {"name": "d"}]))).unwrap_err();
        assert!(e.to_string().contains("duplicate name `d`"), "{e}");
        let e = bad(HostSpec::new("h").attribute(DEVICES, serde_json::json!([{"nam": "d"}]))).unwrap_err();
        assert!(e.to_string().contains("unknown field `nam`"), "{e}");
    }

    #[test]
    fn every_attribute_the_engine_reads_is_checked_for_misspelling_and_type() {
        let engine = crate::service::ServiceScheduler::new();
        crate::snapshot::assert_every_key_is_checked(ATTRIBUTES, |c| engine.attribute_warnings(c));
        // An edge host as EdgeHost writes it raises nothing.
        let cluster = Cluster::builder()
            .host(EdgeHost::new("a").volume("fast", 100.0, &[]).device("cam", &[("camera", "usb")]).build())
            .build()
            .unwrap();
        assert_eq!(engine.attribute_warnings(&cluster), []);
        let typo = Cluster::builder()
            .host(HostSpec::new("b").attribute("local-volume", serde_json::json!([{"name": "fast"}])))
            .build()
            .unwrap();
        let warnings = engine.attribute_warnings(&typo);
        assert_eq!(warnings.len(), 1);
        assert_eq!(
            warnings[0].to_string(),
            "host `b`: attribute `local-volume` is not read; did you mean `local_volumes`?"
        );
    }
}
