//! NUMATopologyFilter: passes every host for a request without a NUMA topology; a request with
//! one is refused as not modelled.

use super::common::{flavor, image_property};
use crate::nova::pyvalue::parse_py_int;
use crate::request::Cx;
use serde_json::Value;

/// Nova's `NUMATopologyFilter` (reference §4), for what the model expresses.
///
/// Nova's filter fits the request's NUMA topology (`RequestSpec.numa_topology`) to the host's;
/// without a requested topology it passes every host (its CPU-policy check needs a host NUMA
/// topology, which the model does not carry). The model has no NUMA topologies, so:
///
/// - a request without one passes every host, as in Nova;
/// - a request with one fails with [`ScheduleError::NotModelled`](crate::error::ScheduleError::NotModelled) naming the key that asks for
///   it, never a silent pass.
///
/// **When a request has a NUMA topology.** Nova derives it from the flavor and the image
/// (`nova.virt.hardware.numa_get_constraints`, Nova 34). The filter reads the keys that make
/// Nova build one (or refuse the request), each flavor extra spec then its image property; an
/// image property counts when it is set to anything but `null` or the empty string:
///
/// | flavor extra spec | image property | asks for a topology when |
/// |---|---|---|
/// | `hw:numa_nodes` | `hw_numa_nodes` | set and non-empty (`0` makes Nova refuse the request) |
/// | `hw:mem_page_size` | `hw_mem_page_size` | set and non-empty (the image alone makes Nova refuse the request) |
/// | `hw:cpu_policy` | `hw_cpu_policy` | set, non-empty and not `shared` (`dedicated`, `mixed`; any other value makes Nova refuse the request) |
/// | `hw:pmem` | – | set and non-empty |
/// | `resources:PCPU`, `resources<N>:PCPU` | – | Python's `int()` of the values adds up to more than 0 (dedicated CPUs) |
///
/// Other NUMA keys (`hw:numa_cpus.N`, `hw:cpu_thread_policy` …) only shape a topology one of
/// these asks for, or make Nova refuse the request. Runs for every instance, not on rebuilds;
/// host-local.
///
/// ```
/// use placewise::nova::filters::NUMATopologyFilter;
/// use placewise::Filter;
///
/// assert_eq!(NUMATopologyFilter.name(), "NUMATopologyFilter");
/// assert!(!NUMATopologyFilter.once_per_request());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct NUMATopologyFilter;

/// Flavor extra specs and image properties whose non-empty value asks for a NUMA topology.
const NUMA_KEYS: [(&str, &str); 2] = [("hw:numa_nodes", "hw_numa_nodes"), ("hw:mem_page_size", "hw_mem_page_size")];

/// The CPU policy that asks for no topology.
const SHARED: &str = "shared";

impl NUMATopologyFilter {
    /// The Nova class name, which [`name`](crate::filter::Filter::name) returns.
    pub const NAME: &'static str = "NUMATopologyFilter";

    /// What asks the request of `cx` for a NUMA topology, if anything: ``a NUMA topology
    /// (flavor extra spec `hw:numa_nodes`)``. Computes in O(extra specs).
    pub(crate) fn requested(cx: &Cx<'_>) -> Option<String> {
        let spec = |key: &str| flavor(cx).and_then(|f| f.extra_specs.get(key)).filter(|v| !v.is_empty());
        let image = |key: &str| image_property(cx, key).filter(|v| !matches!(v, Value::String(s) if s.is_empty()));
        let from_spec = |key: &str| format!("a NUMA topology (flavor extra spec `{key}`)");
        let from_image = |key: &str| format!("a NUMA topology (image property `{key}`)");
        for (spec_key, image_key) in NUMA_KEYS {
            if spec(spec_key).is_some() {
                return Some(from_spec(spec_key));
            }
            if image(image_key).is_some() {
                return Some(from_image(image_key));
            }
        }
        if spec("hw:cpu_policy").is_some_and(|p| p != SHARED) {
            return Some(from_spec("hw:cpu_policy"));
        }
        if image("hw_cpu_policy").is_some_and(|p| p.as_str() != Some(SHARED)) {
            return Some(from_image("hw_cpu_policy"));
        }
        if spec("hw:pmem").is_some() {
            return Some(from_spec("hw:pmem"));
        }
        let specs = flavor(cx).map(|f| f.extra_specs.iter());
        let pcpus: Vec<(&str, i64)> = specs
            .into_iter()
            .flatten()
            .filter(|(key, _)| is_pcpu_resource(key))
            .filter_map(|(key, value)| parse_py_int(value).map(|n| (key, n)))
            .collect();
        if pcpus.iter().map(|p| i128::from(p.1)).sum::<i128>() > 0 {
            return pcpus.first().map(|p| from_spec(p.0));
        }
        None
    }
}

/// Whether `key` is a dedicated-CPU resource request, as Nova matches it:
/// `re.match('resources([1-9][0-9]*)?:PCPU', key)`, anchored at the start only.
fn is_pcpu_resource(key: &str) -> bool {
    let Some(rest) = key.strip_prefix("resources") else { return false };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && rest.starts_with('0') {
        return false;
    }
    rest[digits..].starts_with(":PCPU")
}

pass_unless_not_modelled!(NUMATopologyFilter);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ScheduleError;
    use crate::filter::Filter;
    use crate::nova::filters::common::testkit::{names, run, vm_request};
    use crate::nova::request::{Flavor, Image, NovaRequest, VmSpec};
    use crate::snapshot::Cluster;
    use crate::snapshot::{HostSpec, HostState};
    use serde_json::json;

    fn cluster() -> Cluster {
        Cluster::builder()
            .host(HostSpec::new("a"))
            .host(HostSpec::new("b").state(HostState { up: false, ..HostState::default() }))
            .build()
            .unwrap()
    }

    fn with(specs: &[(&str, &str)], props: &[(&str, Value)]) -> NovaRequest {
        let mut flavor = Flavor::new("m1", 1024.0, 1.0, 10.0);
        for (k, v) in specs {
            flavor = flavor.extra_spec(*k, *v);
        }
        let image =
            Image { properties: props.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(), ..Image::default() };
        vm_request(1, VmSpec { flavor: Some(flavor), image: Some(image), ..VmSpec::default() })
    }

    #[test]
    fn a_request_without_a_numa_topology_passes_every_host() {
        let f = NUMATopologyFilter;
        assert_eq!(run(&f, &cluster(), &crate::request::Request::new(1)).unwrap(), names(&["a", "b"]));
        // Keys that ask for no topology: a shared policy, empty values, shaping keys alone,
        // PCPU resources of 0 or not a number, other scopes.
        let plain = with(
            &[
                ("hw:cpu_policy", "shared"),
                ("hw:numa_nodes", ""),
                ("hw:numa_cpus.0", "0"),
                ("resources:PCPU", "0"),
                ("resources1:PCPU", "x"),
                ("resources01:PCPU", "2"),
                ("capabilities:hw:numa_nodes", "2"),
            ],
            &[("hw_cpu_policy", json!("shared")), ("hw_numa_nodes", json!(null)), ("hw_architecture", json!("x86_64"))],
        );
        assert_eq!(run(&f, &cluster(), &plain).unwrap(), names(&["a", "b"]));
        assert!(!f.once_per_request() && !crate::nova::runs_on_rebuild(f.name()) && f.host_local());
    }

    #[test]
    fn a_request_with_a_numa_topology_is_refused_naming_the_key() {
        let cases: [(NovaRequest, &str); 9] = [
            (with(&[("hw:numa_nodes", "2")], &[]), "flavor extra spec `hw:numa_nodes`"),
            (with(&[], &[("hw_numa_nodes", json!(2))]), "image property `hw_numa_nodes`"),
            (with(&[("hw:mem_page_size", "large")], &[]), "flavor extra spec `hw:mem_page_size`"),
            (with(&[], &[("hw_mem_page_size", json!("2MB"))]), "image property `hw_mem_page_size`"),
            (with(&[("hw:cpu_policy", "dedicated")], &[]), "flavor extra spec `hw:cpu_policy`"),
            (with(&[("hw:cpu_policy", "mixed")], &[]), "flavor extra spec `hw:cpu_policy`"),
            (with(&[], &[("hw_cpu_policy", json!("dedicated"))]), "image property `hw_cpu_policy`"),
            (with(&[("hw:pmem", "4GB")], &[]), "flavor extra spec `hw:pmem`"),
            (with(&[("resources:PCPU", "1"), ("resources2:PCPU", "1")], &[]), "flavor extra spec `resources:PCPU`"),
        ];
        for (request, key) in cases {
            let err = run(&NUMATopologyFilter, &cluster(), &request).unwrap_err();
            assert_eq!(
                err,
                ScheduleError::NotModelled {
                    by: "NUMATopologyFilter".into(),
                    part: format!("a NUMA topology ({key})")
                },
                "{key}"
            );
            assert!(err.to_string().contains("is not modelled"), "{err}");
        }
    }

    #[test]
    fn pcpu_resource_keys_match_as_nova_matches_them() {
        for key in ["resources:PCPU", "resources1:PCPU", "resources10:PCPU", "resources:PCPUS"] {
            assert!(is_pcpu_resource(key), "{key}");
        }
        for key in ["resources0:PCPU", "resources01:PCPU", "resources:VCPU", "resources_a:PCPU", "PCPU"] {
            assert!(!is_pcpu_resource(key), "{key}");
        }
    }
}
