//! Host state: up, enabled, not cordoned, not evicting.

use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::request::Cx;

/// Passes hosts that are up, enabled, not cordoned and not being evicted. Reasons: `host down`,
/// `host disabled`, `host cordoned`, `host evicting` (the first that applies, in that order).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ComputeFilter;

impl Filter for ComputeFilter {
    fn name(&self) -> &str {
        "compute"
    }

    #[inline]
    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        // The dense flag column answers the common case without touching the host record.
        if cx.cluster().is_schedulable(host) {
            return Verdict::Pass;
        }
        let s = cx.host(host).state;
        Verdict::reject(if !s.up {
            0
        } else if !s.enabled {
            1
        } else if s.cordoned {
            2
        } else {
            3
        })
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        let hot = cx.cluster().hot_chunk(chunk);
        let pass = mask & hot.schedulable;
        // The reasons come from the state masks, in `check`'s order, without a host record.
        let failed = mask & !pass;
        if failed == 0 {
            return pass;
        }
        let down = failed & !hot.up;
        let disabled = failed & hot.up & !hot.enabled;
        let cordoned = failed & hot.up & hot.enabled & hot.cordoned;
        let evicting = failed & !(down | disabled | cordoned);
        let mut groups = [(down, 0), (disabled, 1), (cordoned, 2), (evicting, 3)];
        // Reasons enter the counts in lane order, as a lane-by-lane pass would add them (one
        // reason alone, the common case, needs no sort).
        if groups.iter().filter(|g| g.0 != 0).count() > 1 {
            groups.sort_unstable_by_key(|&(lanes, _)| lanes.trailing_zeros());
        }
        for (lanes, code) in groups {
            rejected.reject_lanes(chunk, lanes, Reason(code));
        }
        pass
    }

    fn describe(&self, _cx: &Cx<'_>, reason: Reason) -> String {
        match reason.0 {
            0 => "host down",
            1 => "host disabled",
            2 => "host cordoned",
            _ => "host evicting",
        }
        .into()
    }

    fn once_per_request(&self) -> bool {
        true
    }

    fn host_local(&self) -> bool {
        true
    }
}
