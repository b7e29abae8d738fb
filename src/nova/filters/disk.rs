//! DiskFilter: disk under the host's own allocation ratio (reference §12.4).

use super::capacity::Kind;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::request::Cx;

/// Nova's removed `DiskFilter` (last in 19.x Stein): with `want = (root_gb + ephemeral_gb) · 1024 + swap` MiB (swap counts here,
/// though consumption leaves it out) and `total = total_usable_disk_gb · 1024`, a host passes when
/// `total ≥ want` and `total × ratio − (total − free_disk_mb) ≥ want`.
/// The ratio is the host's `disk_allocation_ratio`. Runs for every instance, not on rebuilds.
/// Reasons: `insufficient disk`, `flavor disk exceeds the host's disk`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskFilter;

impl Filter for DiskFilter {
    fn name(&self) -> &str {
        "DiskFilter"
    }

    #[inline]
    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        Kind::Disk.check_host(cx, host, Kind::Disk.want(cx), None)
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        Kind::Disk.check_chunk(cx, chunk, mask, 0, rejected, |h| self.check(cx, h))
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
    use crate::nova::filters::common::testkit::{flavor_request, names, picks, reason, run};
    use crate::snapshot::Cluster;
    use crate::snapshot::{HostSpec, ResourceSpec};

    /// A host with `total_usable_disk_gb`, `free_disk_mb` and `disk_allocation_ratio`.
    fn host(name: &str, total_gb: f64, free_mb: f64, ratio: f64) -> HostSpec {
        HostSpec::new(name)
            .resource("disk_gb", ResourceSpec::new(total_gb).used(total_gb - free_mb / 1024.0).allocation_ratio(ratio))
    }

    #[test]
    fn swap_counts_in_the_filter() {
        let c = Cluster::builder()
            .host(host("exact", 20.0, 11.0 * 1024.0, 1.0))
            .host(host("short", 20.0, 10.0 * 1024.0, 1.0))
            .host(host("small", 10.0, 10.0 * 1024.0, 4.0))
            .build()
            .unwrap();
        // 10 GiB root + 0 ephemeral + 1024 MiB swap = 11264 MiB.
        let r = flavor_request(1, 0.0, 0.0, 10.0, 0.0, 1024.0);
        assert_eq!(run(&DiskFilter, &c, &r).unwrap(), names(&["exact"]));
        assert_eq!(reason(&DiskFilter, &c, &r, "short"), "insufficient disk");
        assert_eq!(reason(&DiskFilter, &c, &r, "small"), "flavor disk exceeds the host's disk");
    }

    #[test]
    fn consumption_leaves_swap_out() {
        // 25 GiB free: two 10 GiB instances fit (consumption is root + ephemeral), and the filter
        // still asks for 10 GiB + 1 MiB of swap each time.
        let c = Cluster::builder().host(host("a", 25.0, 25.0 * 1024.0, 1.0)).build().unwrap();
        let r = flavor_request(3, 0.0, 0.0, 8.0, 2.0, 1.0);
        assert_eq!(picks(DiskFilter, &c, &r).unwrap(), names(&["a", "a"]));
    }
}
