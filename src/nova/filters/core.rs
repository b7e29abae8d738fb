//! CoreFilter: vCPUs under the host's own allocation ratio (reference §12.3).

use super::capacity::Kind;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::request::Cx;

/// Nova's removed `CoreFilter` (last in 19.x Stein): a host with no vCPU count passes (a fail-safe); otherwise, with
/// `limit = vcpus_total × ratio`, it fails when `limit > 0` and `vcpus > vcpus_total`, and passes
/// when `limit − vcpus_used ≥ vcpus`.
/// The ratio is the host's `cpu_allocation_ratio`. Runs for every instance, not on rebuilds.
/// Reasons: `insufficient vCPUs`, `flavor vCPUs exceed the host's vCPUs`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CoreFilter;

impl Filter for CoreFilter {
    fn name(&self) -> &str {
        "CoreFilter"
    }

    #[inline]
    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        Kind::Core.check_host(cx, host, Kind::Core.want(cx), None)
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        Kind::Core.check_chunk(cx, chunk, mask, 0, rejected, |h| self.check(cx, h))
    }

    fn describe(&self, _cx: &Cx<'_>, reason: Reason) -> String {
        Kind::Core.describe(reason)
    }

    fn host_local(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nova::filters::common::testkit::{flavor_request, names, reason, run};
    use crate::snapshot::Cluster;
    use crate::snapshot::{HostSpec, ResourceSpec};

    fn host(name: &str, total: f64, used: f64, ratio: f64) -> HostSpec {
        HostSpec::new(name).resource("vcpus", ResourceSpec::new(total).used(used).allocation_ratio(ratio))
    }

    #[test]
    fn vcpu_rule() {
        let c = Cluster::builder()
            .host(host("fits", 4.0, 12.0, 4.0))
            .host(host("full", 4.0, 13.0, 4.0))
            .host(host("small", 2.0, 0.0, 16.0))
            .host(host("unknown", 0.0, 0.0, 1.0))
            .host(HostSpec::new("undeclared"))
            .host(host("half", 0.5, 0.0, 16.0))
            .build()
            .unwrap();
        let r = flavor_request(1, 0.0, 4.0, 0.0, 0.0, 0.0);
        assert_eq!(run(&CoreFilter, &c, &r).unwrap(), names(&["fits", "unknown", "undeclared"]));
        assert_eq!(reason(&CoreFilter, &c, &r, "full"), "insufficient vCPUs");
        assert_eq!(reason(&CoreFilter, &c, &r, "small"), "flavor vCPUs exceed the host's vCPUs");
        assert_eq!(reason(&CoreFilter, &c, &r, "half"), "flavor vCPUs exceed the host's vCPUs");
        let small = flavor_request(1, 0.0, 0.25, 0.0, 0.0, 0.0);
        assert!(run(&CoreFilter, &c, &small).unwrap().contains(&"half".to_string()));
    }

    #[test]
    fn flags() {
        assert!(
            !CoreFilter.once_per_request()
                && !crate::nova::runs_on_rebuild(CoreFilter.name())
                && CoreFilter.host_local()
        );
    }
}
