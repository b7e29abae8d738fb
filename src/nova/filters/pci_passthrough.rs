//! PciPassthroughFilter: passes every host for a request without PCI requests; a request with
//! one is refused as not modelled.

use super::common::flavor;
use crate::request::Cx;

/// Nova's `PciPassthroughFilter` (reference §4), for what the model expresses.
///
/// Nova's filter checks that the host's PCI device pools can serve the request's PCI requests
/// (`RequestSpec.pci_requests`); without any it passes every host. The model has no PCI
/// devices, so:
///
/// - a request without PCI requests passes every host, as in Nova;
/// - a request with one fails with [`ScheduleError::NotModelled`](crate::error::ScheduleError::NotModelled) naming the key that asks for
///   it, never a silent pass.
///
/// **When a request has PCI requests.** Nova builds them from the flavor extra spec
/// `pci_passthrough:alias` whenever the key is present (`nova.pci.request.
/// get_pci_requests_from_flavor`, Nova 34), and from Neutron ports with a direct VNIC type,
/// which the model's request does not carry. So the filter reads that one key. Runs for every
/// instance, not on rebuilds; host-local.
///
/// ```
/// use placewise::nova::filters::PciPassthroughFilter;
/// use placewise::Filter;
///
/// assert_eq!(PciPassthroughFilter.name(), "PciPassthroughFilter");
/// assert!(!placewise::nova::runs_on_rebuild(PciPassthroughFilter.name()));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct PciPassthroughFilter;

impl PciPassthroughFilter {
    /// The Nova class name, which [`name`](crate::filter::Filter::name) returns.
    pub const NAME: &'static str = "PciPassthroughFilter";
    /// The flavor extra spec that asks for PCI devices.
    pub const ALIAS_SPEC: &'static str = "pci_passthrough:alias";

    /// What asks the request of `cx` for PCI devices, if anything. Computes in O(extra specs).
    pub(crate) fn requested(cx: &Cx<'_>) -> Option<String> {
        flavor(cx)
            .and_then(|f| f.extra_specs.get(Self::ALIAS_SPEC))
            .map(|_| format!("a PCI request (flavor extra spec `{}`)", Self::ALIAS_SPEC))
    }
}

pass_unless_not_modelled!(PciPassthroughFilter);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ScheduleError;
    use crate::filter::Filter;
    use crate::nova::filters::common::testkit::{names, run, vm_request};
    use crate::nova::request::{Flavor, NovaRequest, VmSpec};
    use crate::request::Request;
    use crate::snapshot::Cluster;
    use crate::snapshot::HostSpec;

    fn flavored(specs: &[(&str, &str)]) -> NovaRequest {
        let mut flavor = Flavor::new("m1", 1024.0, 1.0, 10.0);
        for (k, v) in specs {
            flavor = flavor.extra_spec(*k, *v);
        }
        vm_request(2, VmSpec { flavor: Some(flavor), ..VmSpec::default() })
    }

    #[test]
    fn a_request_without_pci_requests_passes_every_host() {
        let c = Cluster::builder().host(HostSpec::new("a")).host(HostSpec::new("b")).build().unwrap();
        let f = PciPassthroughFilter;
        assert_eq!(run(&f, &c, &Request::new(1)).unwrap(), names(&["a", "b"]));
        let plain = flavored(&[("hw:pci_numa_affinity_policy", "preferred"), ("capabilities:pci", "x")]);
        assert_eq!(run(&f, &c, &plain).unwrap(), names(&["a", "b"]));
        assert!(!f.once_per_request() && !crate::nova::runs_on_rebuild(f.name()) && f.host_local());
    }

    #[test]
    fn a_request_with_a_pci_alias_is_refused_naming_the_key() {
        let c = Cluster::builder().host(HostSpec::new("a")).build().unwrap();
        for alias in ["a1:2", ""] {
            let err = run(&PciPassthroughFilter, &c, &flavored(&[("pci_passthrough:alias", alias)])).unwrap_err();
            assert_eq!(
                err,
                ScheduleError::NotModelled {
                    by: "PciPassthroughFilter".into(),
                    part: "a PCI request (flavor extra spec `pci_passthrough:alias`)".into()
                }
            );
        }
    }
}
