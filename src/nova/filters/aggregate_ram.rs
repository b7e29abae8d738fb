//! AggregateRamFilter: memory under the smallest aggregate `ram_allocation_ratio` (reference §12.2).

use super::capacity::{aggregate_ratio, AggregateRatios, Kind};
use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::request::{Cx, Prepared};

/// Nova's removed `AggregateRamFilter` (last in 21.x Ussuri): the rule of [`RamFilter`](super::RamFilter) with the
/// ratio taken from the host's aggregates: the minimum of their raw `ram_allocation_ratio` values parsed
/// as Python floats. A host in no such aggregate, or with any unparsable value, uses its own
/// ratio. Runs for every instance, not on rebuilds. Reasons: `insufficient RAM`, `flavor RAM exceeds the host's RAM`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AggregateRamFilter;

impl Filter for AggregateRamFilter {
    fn name(&self) -> &str {
        "AggregateRamFilter"
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(Some(Box::new(AggregateRatios::new(cx, Kind::Ram))))
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        match cx.state::<AggregateRatios>() {
            Some(s) => Kind::Ram.check_host(cx, host, s.want(), s.ratio(host)),
            None => Kind::Ram.check_host(cx, host, Kind::Ram.want(cx), aggregate_ratio(cx, Kind::Ram, host)),
        }
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        // Hosts with an aggregate ratio take the per-host path; the rest are the base rule.
        let slow = cx.state::<AggregateRatios>().map_or(mask, |s| s.lanes(chunk));
        Kind::Ram.check_chunk(cx, chunk, mask, slow, rejected, |h| self.check(cx, h))
    }

    fn describe(&self, _cx: &Cx<'_>, reason: Reason) -> String {
        Kind::Ram.describe(reason)
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

    fn host(name: &str, total: f64, free: f64, ratio: f64) -> HostSpec {
        HostSpec::new(name).resource("memory_mb", ResourceSpec::new(total).used(total - free).allocation_ratio(ratio))
    }

    #[test]
    fn smallest_aggregate_ratio_wins_and_bad_values_fall_back() {
        let c = Cluster::builder()
            .aggregate(AggregateSpec::new("x2").metadata("ram_allocation_ratio", "2.0"))
            .aggregate(AggregateSpec::new("x1_5").metadata("ram_allocation_ratio", " 1_5e-1 "))
            .aggregate(AggregateSpec::new("bad").metadata("ram_allocation_ratio", "lots"))
            .aggregate(AggregateSpec::new("other").metadata("cpu_allocation_ratio", "9"))
            // 1024 total, nothing free: needs a ratio ≥ 2 for 1024 more.
            .host(host("two", 1024.0, 0.0, 1.0).aggregate("x2"))
            .host(host("min", 1024.0, 0.0, 3.0).aggregate("x2").aggregate("x1_5"))
            .host(host("bad", 1024.0, 0.0, 2.0).aggregate("x2").aggregate("bad"))
            .host(host("own", 1024.0, 0.0, 2.0).aggregate("other"))
            .host(host("own_low", 1024.0, 0.0, 1.0))
            .build()
            .unwrap();
        let r = flavor_request(1, 1024.0, 0.0, 0.0, 0.0, 0.0);
        assert_eq!(run(&AggregateRamFilter, &c, &r).unwrap(), names(&["two", "bad", "own"]));
        // Without aggregates setting the key, it is RamFilter.
        let plain = Cluster::builder().host(host("a", 1024.0, 0.0, 2.0)).build().unwrap();
        assert_eq!(run(&AggregateRamFilter, &plain, &r).unwrap(), names(&["a"]));
        assert!(!AggregateRamFilter.once_per_request() && AggregateRamFilter.host_local());
    }
}
