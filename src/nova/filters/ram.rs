//! RamFilter: memory under the host's own allocation ratio (reference §12.2).

use super::capacity::Kind;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::request::Cx;

/// Nova's removed `RamFilter` (last in 19.x Stein): a host passes when `total_usable_ram_mb ≥ memory_mb` (no over-commit against itself) and
/// `total_usable_ram_mb × ratio − (total_usable_ram_mb − free_ram_mb) ≥ memory_mb`.
/// The ratio is the host's `ram_allocation_ratio`. Runs for every instance, not on rebuilds.
/// Reasons: `insufficient RAM`, `flavor RAM exceeds the host's RAM`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RamFilter;

impl Filter for RamFilter {
    fn name(&self) -> &str {
        "RamFilter"
    }

    #[inline]
    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        Kind::Ram.check_host(cx, host, Kind::Ram.want(cx), None)
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        Kind::Ram.check_chunk(cx, chunk, mask, 0, rejected, |h| self.check(cx, h))
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
    use crate::id::ResourceId;
    use crate::nova::filters::common::testkit::{flavor_request, names, picks, reason, run, run_at};
    use crate::snapshot::Cluster;
    use crate::snapshot::{HostSpec, Overlay, ResourceSpec};

    /// A host with Nova's `total_usable_ram_mb`, `free_ram_mb` and `ram_allocation_ratio`.
    fn host(name: &str, total: f64, free: f64, ratio: f64) -> HostSpec {
        HostSpec::new(name).resource("memory_mb", ResourceSpec::new(total).used(total - free).allocation_ratio(ratio))
    }

    #[test]
    fn fits_under_the_ratio_and_never_beyond_the_host() {
        let c = Cluster::builder()
            .host(host("fits", 2048.0, 1024.0, 1.0))
            .host(host("short", 2048.0, 1023.0, 1.0))
            .host(host("small", 512.0, 512.0, 10.0))
            .host(host("overcommitted", 1024.0, 0.0, 2.0))
            .host(host("negative", 1024.0, -100.0, 1.0))
            .build()
            .unwrap();
        let r = flavor_request(1, 1024.0, 1.0, 0.0, 0.0, 0.0);
        assert_eq!(run(&RamFilter, &c, &r).unwrap(), names(&["fits", "overcommitted"]));
        assert_eq!(reason(&RamFilter, &c, &r, "short"), "insufficient RAM");
        assert_eq!(reason(&RamFilter, &c, &r, "small"), "flavor RAM exceeds the host's RAM");
        assert_eq!(reason(&RamFilter, &c, &r, "negative"), "insufficient RAM");
    }

    #[test]
    fn earlier_picks_count() {
        let c = Cluster::builder().host(host("a", 4096.0, 1536.0, 1.0)).build().unwrap();
        let r = flavor_request(3, 1024.0, 1.0, 0.0, 0.0, 0.0);
        let mut o = Overlay::new();
        assert_eq!(run_at(&RamFilter, &c, &r, &o, 1).unwrap(), names(&["a"]));
        o.consume(crate::id::HostId(0), &[(ResourceId::MEMORY_MB, 1024.0)]);
        assert!(run_at(&RamFilter, &c, &r, &o, 1).unwrap().is_empty());
        assert_eq!(picks(RamFilter, &c, &r).unwrap(), names(&["a"]));
    }

    #[test]
    fn flags() {
        assert!(!RamFilter.once_per_request());
        assert!(!crate::nova::runs_on_rebuild(RamFilter.name()));
        assert!(RamFilter.host_local());
        assert_eq!(RamFilter.name(), "RamFilter");
    }
}
