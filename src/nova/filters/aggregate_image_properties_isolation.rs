//! AggregateImagePropertiesIsolation: aggregate metadata that names an image property must
//! agree with the image.

use super::classes::{ClassKey, ClassMemo, KeyPart};
use super::common::{canon, metadata_values, sets_key, LEGACY_IMAGE_PROPERTIES};
use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::nova::pyvalue::{py_str, py_truthy, PyValue};
use crate::nova::request::VmSpec;
use crate::request::{Cx, Prepared};
use std::collections::BTreeMap;

/// Nova's `AggregateImagePropertiesIsolation` (reference §7.3): for every metadata key of the
/// host's aggregates that is an image property the image sets to a truthy value, the property's
/// Python string form must be among that key's comma-split, stripped values. Keys the image does
/// not set, or sets to a falsy value, and keys that are not image properties, are skipped.
///
/// With `aggregate_image_properties_isolation_namespace` set, only keys starting with the
/// namespace followed by the separator (default `.`) are considered; they are still looked up
/// under their full name, so with the default separator none of them is an image property and
/// every host passes.
///
/// The image's properties are taken as Nova's image metadata loader leaves them: legacy names
/// (`architecture`, `hypervisor_type`, `vm_mode`, `hypervisor_version_requires`) are mapped to
/// their current names (the current name wins) and the architecture, hypervisor type and VM mode
/// are canonicalised; other values print as Python's `str()` does (`True`, `4`, `1.5`). Runs once
/// per request, and on rebuilds. Reason: `image property <name>=<value> not allowed by aggregate`.
///
/// **Host classes.** The verdict reads the host's aggregate set alone, so the filter judges each
/// distinct set ([`Cluster::aggregate_class`](crate::snapshot::Cluster::aggregate_class)) once per request
/// and reuses the verdict for every host that belongs to the same aggregates.
///
/// ```
/// use placewise::nova::filters::AggregateImagePropertiesIsolation;
///
/// let filter = AggregateImagePropertiesIsolation::new()
///     .aggregate_image_properties_isolation_namespace("hw")
///     .aggregate_image_properties_isolation_separator("_");
/// assert_eq!(filter.namespace(), Some("hw"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AggregateImagePropertiesIsolation {
    namespace: Option<String>,
    separator: String,
}

impl Default for AggregateImagePropertiesIsolation {
    fn default() -> Self {
        AggregateImagePropertiesIsolation::new()
    }
}

/// The image's truthy properties under their current names, with their string forms, sorted,
/// and the verdicts judged so far per aggregate class.
#[derive(Debug, Clone, Default)]
struct ImageProps {
    props: Vec<(String, String)>,
    memo: ClassMemo,
}

impl AggregateImagePropertiesIsolation {
    /// No namespace, separator `.` (Nova's defaults).
    pub fn new() -> Self {
        AggregateImagePropertiesIsolation { namespace: None, separator: ".".into() }
    }

    /// Sets `aggregate_image_properties_isolation_namespace`.
    pub fn aggregate_image_properties_isolation_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// Sets `aggregate_image_properties_isolation_separator` (default `.`).
    pub fn aggregate_image_properties_isolation_separator(mut self, separator: impl Into<String>) -> Self {
        self.separator = separator.into();
        self
    }

    /// The namespace.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The separator.
    pub fn separator(&self) -> &str {
        &self.separator
    }

    fn image_props(&self, cx: &Cx<'_>) -> ImageProps {
        // The verdict reads the host's aggregates alone.
        let memo = ClassMemo::new(Some(ClassKey::new(vec![KeyPart::Aggregates])));
        let Some(image) = VmSpec::of(cx).image.as_ref() else { return ImageProps { props: Vec::new(), memo } };
        let mut by_name: BTreeMap<&str, &serde_json::Value> = BTreeMap::new();
        // Legacy names first, so that current names overwrite them.
        for (legacy, current) in LEGACY_IMAGE_PROPERTIES {
            if let Some(v) = image.properties.get(*legacy).filter(|v| !v.is_null()) {
                by_name.insert(current, v);
            }
        }
        for (name, v) in &image.properties {
            if LEGACY_IMAGE_PROPERTIES.iter().any(|(legacy, _)| legacy == name) || v.is_null() {
                continue;
            }
            by_name.insert(name, v);
        }
        let props = by_name
            .into_iter()
            .filter_map(|(name, v)| {
                let value = PyValue::from(v);
                if !py_truthy(&value) {
                    return None;
                }
                let text = py_str(&value);
                let text = match name {
                    "hw_architecture" => canon::architecture(&text),
                    "img_hv_type" => canon::hv_type(&text),
                    "hw_vm_mode" => canon::vm_mode(&text),
                    _ => text,
                };
                Some((name.to_owned(), text))
            })
            .filter(|(name, _)| match &self.namespace {
                // An empty namespace is unset, as in Python.
                Some(ns) if !ns.is_empty() => {
                    name.strip_prefix(ns.as_str()).is_some_and(|rest| rest.starts_with(self.separator.as_str()))
                }
                _ => true,
            })
            .collect();
        ImageProps { props, memo }
    }

    fn judge(&self, cx: &Cx<'_>, props: &ImageProps, host: HostId) -> Verdict {
        let cluster = cx.cluster();
        let h = cx.host(host);
        for (i, (name, text)) in props.props.iter().enumerate() {
            if sets_key(cluster, h, name) && !metadata_values(cluster, h, name).any(|v| v == text) {
                return Verdict::reject(i as u32);
            }
        }
        Verdict::Pass
    }
}

impl Filter for AggregateImagePropertiesIsolation {
    fn name(&self) -> &str {
        "AggregateImagePropertiesIsolation"
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(Some(Box::new(self.image_props(cx))))
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        let mut owned = None;
        let props = cx.state_or::<ImageProps>(&mut owned, || self.image_props(cx));
        let verdict = props.memo.verdict(cx, host, |_, h| Ok(self.judge(cx, props, h)));
        // The judge never fails.
        verdict.unwrap_or(Verdict::Pass)
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        let mut owned = None;
        let props = cx.state_or::<ImageProps>(&mut owned, || self.image_props(cx));
        if props.props.is_empty() {
            return mask;
        }
        props.memo.lanes(cx, chunk, mask, rejected, Reason(u32::MAX), |_, h| Ok(self.judge(cx, props, h)))
    }

    fn describe(&self, cx: &Cx<'_>, reason: Reason) -> String {
        let mut owned = None;
        let props = cx.state_or::<ImageProps>(&mut owned, || self.image_props(cx));
        match props.props.get(reason.0 as usize) {
            Some((name, text)) => format!("image property {name}={text} not allowed by aggregate"),
            None => "image property not allowed by aggregate".into(),
        }
    }

    fn once_per_request(&self) -> bool {
        true
    }

    fn host_local(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nova::filters::common::testkit::{names, reason, run, vm_request};
    use crate::nova::request::NovaRequest;
    use crate::nova::request::{Image, VmSpec};
    use crate::request::Request;
    use crate::snapshot::Cluster;
    use crate::snapshot::{AggregateSpec, HostSpec};
    use serde_json::json;

    fn request(props: serde_json::Value) -> NovaRequest {
        let properties = props.as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        vm_request(1, VmSpec { image: Some(Image { id: None, properties }), ..Default::default() })
    }

    fn cluster() -> Cluster {
        Cluster::builder()
            .aggregate(AggregateSpec::new("linux").metadata("os_type", "linux").metadata("note", "not a property"))
            .aggregate(AggregateSpec::new("arch").metadata("hw_architecture", "x86_64, i686"))
            .aggregate(
                AggregateSpec::new("cores").metadata("hw_cpu_cores", "4").metadata("hw_qemu_guest_agent", "True"),
            )
            .aggregate(AggregateSpec::new("ns").metadata("ns.os_type", "windows"))
            .host(HostSpec::new("linux").aggregate("linux"))
            .host(HostSpec::new("arch").aggregate("arch"))
            .host(HostSpec::new("cores").aggregate("cores"))
            .host(HostSpec::new("ns").aggregate("ns"))
            .host(HostSpec::new("plain"))
            .build()
            .unwrap()
    }

    #[test]
    fn metadata_naming_a_property_must_agree() {
        let c = cluster();
        let f = AggregateImagePropertiesIsolation::new();
        assert_eq!(
            run(&f, &c, &request(json!({"os_type": "windows"}))).unwrap(),
            names(&["arch", "cores", "ns", "plain"])
        );
        assert_eq!(run(&f, &c, &request(json!({"os_type": "linux"}))).unwrap().len(), 5);
        assert_eq!(
            reason(&f, &c, &request(json!({"os_type": "windows"})), "linux"),
            "image property os_type=windows not allowed by aggregate"
        );
        // Canonical architecture names, and legacy property names.
        assert_eq!(run(&f, &c, &request(json!({"architecture": "AMD64"}))).unwrap().len(), 5);
        assert_eq!(run(&f, &c, &request(json!({"hw_architecture": "aarch64"}))).unwrap().len(), 4);
        // Values print as Python's str(): 4 and True.
        assert_eq!(run(&f, &c, &request(json!({"hw_cpu_cores": 4, "hw_qemu_guest_agent": true}))).unwrap().len(), 5);
        assert_eq!(run(&f, &c, &request(json!({"hw_cpu_cores": 2}))).unwrap().len(), 4);
        // Falsy values and absent properties pass.
        assert_eq!(run(&f, &c, &request(json!({"os_type": "", "hw_cpu_cores": 0}))).unwrap().len(), 5);
        assert_eq!(run(&f, &c, &Request::new(1)).unwrap().len(), 5);
    }

    #[test]
    fn namespace_keys_keep_their_full_name() {
        let c = cluster();
        // With the default separator, `ns.os_type` is not a property name: every host passes.
        let f = AggregateImagePropertiesIsolation::new().aggregate_image_properties_isolation_namespace("ns");
        assert_eq!(run(&f, &c, &request(json!({"os_type": "linux"}))).unwrap().len(), 5);
        assert_eq!(run(&f, &c, &request(json!({"os_type": "solaris"}))).unwrap().len(), 5);
        // A namespace that is a property prefix: only keys under it count.
        let hw = AggregateImagePropertiesIsolation::new()
            .aggregate_image_properties_isolation_namespace("hw")
            .aggregate_image_properties_isolation_separator("_");
        assert_eq!(
            run(&hw, &c, &request(json!({"os_type": "solaris", "hw_cpu_cores": 2}))).unwrap(),
            names(&["linux", "arch", "ns", "plain"])
        );
        assert!(hw.once_per_request() && crate::nova::runs_on_rebuild(hw.name()) && hw.host_local());
    }
}
