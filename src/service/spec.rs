//! Service specifications under the product's field names, and the instance naming scheme.

use super::error::ServiceError;
use super::expr::MatchExpr;
use serde::{Deserialize, Serialize};

// The types read from JSON take the object form only (see `crate::json`).
crate::json::object_form!(VolumeRequest, PlacementRules, Limits, ServiceSpec);

/// The most replicas a service may ask for (a site runs far fewer; the bound keeps a typo from
/// allocating per-replica state for billions).
pub const MAX_REPLICAS: u32 = 100_000;

/// How many instances a service runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ServiceMode {
    /// `mode: replicated` with `replicas: N`: instances `0..N`, placed by the ranking.
    Replicated(u32),
    /// One instance on every schedulable host passing the hard filters; instances are bound to
    /// their host and never moved.
    OnePerMatchingHost,
}

/// A volume kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VolumeKind {
    /// Lives as long as the instance stays on its host.
    Ephemeral,
    /// Outlives the instance (kept by hand).
    Persistent,
}

/// A volume a service's instances need: `volumes[].ephemeral-volume.size` and the like.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub struct VolumeRequest {
    /// The volume's name within the service.
    pub name: String,
    /// Ephemeral or persistent.
    pub kind: VolumeKind,
    /// Requested size in MB.
    pub size_mb: f64,
    /// Which local volumes may hold it (`None`: any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_volume_labels: Option<MatchExpr>,
}

impl VolumeRequest {
    /// An ephemeral volume of `size_mb` on any local volume.
    pub fn ephemeral(name: impl Into<String>, size_mb: f64) -> Self {
        VolumeRequest { name: name.into(), kind: VolumeKind::Ephemeral, size_mb, match_volume_labels: None }
    }

    /// A persistent volume of `size_mb` on any local volume.
    pub fn persistent(name: impl Into<String>, size_mb: f64) -> Self {
        VolumeRequest { name: name.into(), kind: VolumeKind::Persistent, size_mb, match_volume_labels: None }
    }

    /// Restricts the local volumes that may hold it.
    pub fn labels(mut self, expr: MatchExpr) -> Self {
        self.match_volume_labels = Some(expr);
        self
    }
}

/// `placement`: hard host labels and soft (anti-)affinity to services of the same application.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub struct PlacementRules {
    /// `match-host-labels`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub match_host_labels: Option<MatchExpr>,
    /// `preferred-affinity.services`: prefer hosts running these services.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preferred_affinity: Vec<String>,
    /// `preferred-anti-affinity.services`: prefer hosts not running these services.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preferred_anti_affinity: Vec<String>,
}

/// Per-instance resource limits (summed over the instance's containers).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub struct Limits {
    /// Memory in MB (resource `memory_mb`).
    #[serde(default)]
    pub memory_mb: f64,
    /// CPUs (resource `vcpus`).
    #[serde(default)]
    pub cpus: f64,
    /// Writable container layer in MB (resource `container_layer_mb`).
    #[serde(default)]
    pub container_layer_mb: f64,
}

/// One service of an application, as the service scheduler needs it.
///
/// In JSON (kebab-case, as in the product's specs):
/// `{"application": "shop", "name": "web", "mode": {"replicated": 2}, "placement":
/// {"match-host-labels": "gpu"}, "volumes": [{"name": "cache", "kind": "ephemeral", "size-mb": 100}],
/// "ingress": true, "limits": {"memory-mb": 512}, "devices": ["camera"], "gpus": 1}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub struct ServiceSpec {
    /// The application's name (no `/`).
    pub application: String,
    /// The service's name within the application (no `/`).
    pub name: String,
    /// Replicated or one per matching host.
    pub mode: ServiceMode,
    /// Host labels and soft affinity.
    #[serde(default)]
    pub placement: PlacementRules,
    /// Volumes each instance needs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<VolumeRequest>,
    /// Whether each instance needs an ingress IP (`network.ingress-ip-per-instance`).
    #[serde(default)]
    pub ingress: bool,
    /// Memory, CPU and container layer limits.
    #[serde(default)]
    pub limits: Limits,
    /// Required devices: each expression must match at least one device label set on the host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<MatchExpr>,
    /// GPUs each instance needs (resource `gpu`, counted and exclusive).
    #[serde(default)]
    pub gpus: u32,
}

impl ServiceSpec {
    /// A replicated service with `replicas` instances and no requirements.
    pub fn replicated(application: impl Into<String>, name: impl Into<String>, replicas: u32) -> Self {
        Self::new(application.into(), name.into(), ServiceMode::Replicated(replicas))
    }

    /// A service with one instance per matching host.
    pub fn one_per_matching_host(application: impl Into<String>, name: impl Into<String>) -> Self {
        Self::new(application.into(), name.into(), ServiceMode::OnePerMatchingHost)
    }

    fn new(application: String, name: String, mode: ServiceMode) -> Self {
        ServiceSpec {
            application,
            name,
            mode,
            placement: PlacementRules::default(),
            volumes: Vec::new(),
            ingress: false,
            limits: Limits::default(),
            devices: Vec::new(),
            gpus: 0,
        }
    }

    /// Sets `match-host-labels`.
    pub fn match_host_labels(mut self, expr: MatchExpr) -> Self {
        self.placement.match_host_labels = Some(expr);
        self
    }

    /// Adds a preferred-affinity service.
    pub fn preferred_affinity(mut self, service: impl Into<String>) -> Self {
        self.placement.preferred_affinity.push(service.into());
        self
    }

    /// Adds a preferred-anti-affinity service.
    pub fn preferred_anti_affinity(mut self, service: impl Into<String>) -> Self {
        self.placement.preferred_anti_affinity.push(service.into());
        self
    }

    /// Adds a volume.
    pub fn volume(mut self, volume: VolumeRequest) -> Self {
        self.volumes.push(volume);
        self
    }

    /// Asks for an ingress IP per instance.
    pub fn ingress(mut self) -> Self {
        self.ingress = true;
        self
    }

    /// Sets the memory limit in MB.
    pub fn memory_mb(mut self, mb: f64) -> Self {
        self.limits.memory_mb = mb;
        self
    }

    /// Sets the CPU limit.
    pub fn cpus(mut self, cpus: f64) -> Self {
        self.limits.cpus = cpus;
        self
    }

    /// Sets the container layer limit in MB.
    pub fn container_layer_mb(mut self, mb: f64) -> Self {
        self.limits.container_layer_mb = mb;
        self
    }

    /// Requires a device matching `expr`.
    pub fn device(mut self, expr: MatchExpr) -> Self {
        self.devices.push(expr);
        self
    }

    /// Sets the number of GPUs per instance.
    pub fn gpus(mut self, gpus: u32) -> Self {
        self.gpus = gpus;
        self
    }

    /// The service type, `<application>/<service>`: the snapshot group of its instances.
    pub fn group(&self) -> String {
        format!("{}/{}", self.application, self.name)
    }

    /// The id of instance `index`: `<application>/<service>/<index>`.
    pub fn instance_id(&self, index: u32) -> String {
        format!("{}/{}/{index}", self.application, self.name)
    }

    /// Whether the failure handling reschedules this service's instances from a failed host:
    /// replicated with exactly one replica.
    pub fn is_single_replica(&self) -> bool {
        self.mode == ServiceMode::Replicated(1)
    }

    /// Checks names and numbers.
    ///
    /// # Errors
    ///
    /// [`ServiceError::InvalidName`] for an empty name or one containing `/`;
    /// [`ServiceError::InvalidNumber`] for a negative or non-finite limit or size;
    /// [`ServiceError::DuplicateVolume`] for two volumes of one name;
    /// [`ServiceError::TooManyReplicas`] above [`MAX_REPLICAS`].
    pub fn validate(&self) -> Result<(), ServiceError> {
        for (what, name) in [("application", &self.application), ("service", &self.name)] {
            if name.is_empty() || name.contains('/') {
                return Err(ServiceError::InvalidName { what, name: name.clone() });
            }
        }
        let group = self.group();
        if let ServiceMode::Replicated(n) = self.mode {
            if n > MAX_REPLICAS {
                return Err(ServiceError::TooManyReplicas { service: group, replicas: n });
            }
        }
        let number = |field: String, value: f64| {
            if value.is_finite() && value >= 0.0 {
                Ok(())
            } else {
                Err(ServiceError::InvalidNumber { service: group.clone(), field, value })
            }
        };
        number("memory-mb".into(), self.limits.memory_mb)?;
        number("cpus".into(), self.limits.cpus)?;
        number("container-layer-mb".into(), self.limits.container_layer_mb)?;
        for (i, v) in self.volumes.iter().enumerate() {
            number(format!("volumes[{}].size-mb", v.name), v.size_mb)?;
            if self.volumes[..i].iter().any(|w| w.name == v.name) {
                return Err(ServiceError::DuplicateVolume { service: group.clone(), volume: v.name.clone() });
            }
        }
        Ok(())
    }
}

/// A parsed instance id: service type and index.
pub(crate) fn parse_instance_index(group: &str, id: &str) -> Option<u32> {
    id.strip_prefix(group)?.strip_prefix('/')?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn naming_and_json_field_names() {
        let s = ServiceSpec::replicated("shop", "web", 2)
            .match_host_labels("gpu".parse().unwrap())
            .volume(VolumeRequest::ephemeral("cache", 100.0))
            .ingress()
            .memory_mb(512.0);
        assert_eq!(s.group(), "shop/web");
        assert_eq!(s.instance_id(3), "shop/web/3");
        assert_eq!(parse_instance_index("shop/web", "shop/web/3"), Some(3));
        assert_eq!(parse_instance_index("shop/web", "shop/webx/3"), None);
        let json = serde_json::to_string(&s).unwrap();
        assert!(json.contains("\"match-host-labels\":\"gpu\""), "{json}");
        assert!(json.contains("\"size-mb\":100"), "{json}");
        assert!(json.contains("\"mode\":{\"replicated\":2}"), "{json}");
        assert_eq!(serde_json::from_str::<ServiceSpec>(&json).unwrap(), s);
        let one: ServiceSpec =
            serde_json::from_str(r#"{"application": "a", "name": "b", "mode": "one-per-matching-host"}"#).unwrap();
        assert_eq!(one.mode, ServiceMode::OnePerMatchingHost);
    }

    #[test]
    fn validation_names_the_field() {
        let bad = ServiceSpec::replicated("a/b", "c", 1).validate().unwrap_err();
        assert!(matches!(bad, ServiceError::InvalidName { what: "application", .. }));
        let bad = ServiceSpec::replicated("a", "c", 1).memory_mb(-1.0).validate().unwrap_err();
        assert_eq!(bad.to_string(), "service `a/c`: memory-mb is -1, expected a finite number ≥ 0");
        let bad = ServiceSpec::replicated("a", "c", 1)
            .volume(VolumeRequest::ephemeral("v", 1.0))
            .volume(VolumeRequest::persistent("v", 1.0))
            .validate()
            .unwrap_err();
        assert!(matches!(bad, ServiceError::DuplicateVolume { .. }));
        let bad = ServiceSpec::replicated("a", "c", u32::MAX).validate().unwrap_err();
        assert_eq!(bad.to_string(), "service `a/c` asks for 4294967295 replicas, at most 100000 are allowed");
        assert!(ServiceSpec::replicated("a", "c", 1).is_single_replica());
        assert!(!ServiceSpec::replicated("a", "c", 2).is_single_replica());
        assert!(!ServiceSpec::one_per_matching_host("a", "c").is_single_replica());
    }
}
