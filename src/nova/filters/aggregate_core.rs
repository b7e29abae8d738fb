//! AggregateCoreFilter: vCPUs under the smallest aggregate `cpu_allocation_ratio` (reference §12.3).

use super::capacity::{aggregate_ratio, AggregateRatios, Kind};
use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::request::{Cx, Prepared};

/// Nova's removed `AggregateCoreFilter` (last in 21.x Ussuri): the rule of [`CoreFilter`](super::CoreFilter) with the
/// ratio taken from the host's aggregates: the minimum of their raw `cpu_allocation_ratio` values parsed
/// as Python floats. A host in no such aggregate, or with any unparsable value, uses its own
/// ratio. Runs for every instance, not on rebuilds. Reasons: `insufficient vCPUs`, `flavor vCPUs exceed the host's vCPUs`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AggregateCoreFilter;

impl Filter for AggregateCoreFilter {
    fn name(&self) -> &str {
        "AggregateCoreFilter"
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(Some(Box::new(AggregateRatios::new(cx, Kind::Core))))
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        match cx.state::<AggregateRatios>() {
            Some(s) => Kind::Core.check_host(cx, host, s.want(), s.ratio(host)),
            None => Kind::Core.check_host(cx, host, Kind::Core.want(cx), aggregate_ratio(cx, Kind::Core, host)),
        }
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        // Hosts with an aggregate ratio take the per-host path; the rest are the base rule.
        let slow = cx.state::<AggregateRatios>().map_or(mask, |s| s.lanes(chunk));
        Kind::Core.check_chunk(cx, chunk, mask, slow, rejected, |h| self.check(cx, h))
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
    use crate::nova::filters::common::testkit::{flavor_request, names, run};
    use crate::snapshot::Cluster;
    use crate::snapshot::{AggregateSpec, HostSpec, ResourceSpec};

    #[test]
    fn aggregate_cpu_ratio() {
        let c = Cluster::builder()
            .aggregate(AggregateSpec::new("dense").metadata("cpu_allocation_ratio", "16"))
            .aggregate(AggregateSpec::new("sparse").metadata("cpu_allocation_ratio", "1.0"))
            .host(HostSpec::new("d").resource("vcpus", ResourceSpec::new(4.0).used(8.0)).aggregate("dense"))
            .host(
                HostSpec::new("s")
                    .resource("vcpus", ResourceSpec::new(4.0).used(2.0).allocation_ratio(16.0))
                    .aggregate("sparse"),
            )
            .host(HostSpec::new("h").resource("vcpus", ResourceSpec::new(4.0).used(8.0).allocation_ratio(4.0)))
            .build()
            .unwrap();
        let r = flavor_request(1, 0.0, 4.0, 0.0, 0.0, 0.0);
        assert_eq!(run(&AggregateCoreFilter, &c, &r).unwrap(), names(&["d", "h"]));
    }
}
