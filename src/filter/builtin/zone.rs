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

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        let Some(zone) = cx.compiled().zone else { return mask };
        let mut pass = 0u64;
        if zone.level.is_some() && !zone.domain.is_none() {
            for (lane, &d) in cx.cluster().hot_chunk(chunk).zone.iter().enumerate() {
                pass |= u64::from(d == zone.domain) << lane;
            }
        }
        pass &= mask;
        rejected.check_lanes(chunk, mask & !pass, |_| Verdict::reject(0));
        pass
    }

    fn describe(&self, cx: &Cx<'_>, _reason: Reason) -> String {
        format!("not in zone {}", cx.request().zone.as_deref().unwrap_or(""))
    }

    fn once_per_request(&self) -> bool {
        true
    }

    fn host_local(&self) -> bool {
        true
    }
}
