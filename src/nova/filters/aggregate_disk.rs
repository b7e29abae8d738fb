//! AggregateDiskFilter: disk under the smallest aggregate `disk_allocation_ratio` (reference §12.4).

use super::capacity::{aggregate_ratio, AggregateRatios, Kind};
use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::request::{Cx, Prepared};

/// Nova's removed `AggregateDiskFilter` (last in 21.x Ussuri): the rule of [`DiskFilter`](super::DiskFilter) with the
/// ratio taken from the host's aggregates: the minimum of their raw `disk_allocation_ratio` values parsed
/// as Python floats. A host in no such aggregate, or with any unparsable value, uses its own
/// ratio. Runs for every instance, not on rebuilds. Reasons: `insufficient disk`, `flavor disk exceeds the host's disk`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AggregateDiskFilter;

impl Filter for AggregateDiskFilter {
    fn name(&self) -> &str {
        "AggregateDiskFilter"
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(Some(Box::new(AggregateRatios::new(cx, Kind::Disk))))
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        match cx.state::<AggregateRatios>() {
            Some(s) => Kind::Disk.check_host(cx, host, s.want(), s.ratio(host)),
            None => Kind::Disk.check_host(cx, host, Kind::Disk.want(cx), aggregate_ratio(cx, Kind::Disk, host)),
        }
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        // Hosts with an aggregate ratio take the per-host path; the rest are the base rule.
        let slow = cx.state::<AggregateRatios>().map_or(mask, |s| s.lanes(chunk));
        Kind::Disk.check_chunk(cx, chunk, mask, slow, rejected, |h| self.check(cx, h))
    }

    fn describe(&self, _cx: &Cx<'_>, reason: Reason) -> String {
        Kind::Disk.describe(reason)
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
    fn aggregate_disk_ratio() {
        let c = Cluster::builder()
            .aggregate(AggregateSpec::new("thin").metadata("disk_allocation_ratio", "3"))
            .aggregate(AggregateSpec::new("nan").metadata("disk_allocation_ratio", "nan"))
            .host(HostSpec::new("thin").resource("disk_gb", ResourceSpec::new(100.0).used(100.0)).aggregate("thin"))
            .host(HostSpec::new("plain").resource("disk_gb", ResourceSpec::new(100.0).used(100.0)))
            // NaN ratio: the limit is NaN and `limit − used ≥ want` is false.
            .host(
                HostSpec::new("nan")
                    .resource("disk_gb", ResourceSpec::new(100.0).allocation_ratio(5.0))
                    .aggregate("nan"),
            )
            .build()
            .unwrap();
        let r = flavor_request(1, 0.0, 0.0, 50.0, 0.0, 0.0);
        assert_eq!(run(&AggregateDiskFilter, &c, &r).unwrap(), names(&["thin"]));
    }
}
