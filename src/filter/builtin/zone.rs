//! Availability zone.

use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::request::Cx;

/// Passes every host when the request names no zone; otherwise only hosts whose `zone` topology
/// level equals it. Reason: `not in zone <zone>`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AvailabilityZoneFilter;

impl Filter for AvailabilityZoneFilter {
    fn name(&self) -> &str {
        "availability_zone"
    }

    #[inline]
    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        match cx.compiled().zone {
            None => Verdict::Pass,
            Some(zone) => {
                let here = zone.level.map(|l| cx.host(host).domain(l));
                (!zone.domain.is_none() && here == Some(zone.domain)).into()
            }
        }
    }

    fn check_batch(&self, cx: &Cx<'_>, hosts: &mut Vec<HostId>, rejected: &mut Rejections) {
        if cx.compiled().zone.is_none() {
            return;
        }
        rejected.retain(hosts, |h| self.check(cx, h));
    }

    fn describe(&self, cx: &Cx<'_>, _reason: Reason) -> String {
        format!("not in zone {}", cx.request().zone.as_deref().unwrap_or(""))
    }

    fn once_per_request(&self) -> bool {
        true
    }
}
