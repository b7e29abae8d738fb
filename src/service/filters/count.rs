//! The number-of-service-instances rule for even distribution.

use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::{HostId, Symbol};
use crate::request::{Cx, Prepared};

/// Passes hosts holding fewer than `max_per_host` live (not delayed-shutdown) instances of the
/// service, counting the snapshot's instances of the group plus every instance placed earlier
/// in the same request ([`Overlay::placed`](crate::snapshot::Overlay::placed); a request is one
/// service). Reason: `already N instances of the service`.
///
/// The service scheduler sets `max_per_host` to `ceil(replicas / eligible hosts)` and applies
/// the rule to new placements only (see the [module docs](crate::service#decisions)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceCountFilter {
    group: String,
    max_per_host: u32,
}

impl InstanceCountFilter {
    /// At most `max_per_host` instances of `group` per host.
    pub fn new(group: impl Into<String>, max_per_host: u32) -> Self {
        InstanceCountFilter { group: group.into(), max_per_host }
    }

    /// The cap.
    pub fn max_per_host(&self) -> u32 {
        self.max_per_host
    }

    fn symbol(&self, cx: &Cx<'_>) -> Option<Symbol> {
        match cx.state::<Option<Symbol>>() {
            Some(g) => *g,
            None => cx.cluster().symbols().get(&self.group),
        }
    }

    fn count(&self, cx: &Cx<'_>, host: HostId, group: Option<Symbol>) -> u32 {
        let here = group.map_or(0, |g| {
            cx.host(host).instances.iter().filter(|i| i.group == Some(g) && !i.terminating).count() as u32
        });
        here + cx.overlay().placed(host)
    }
}

impl Filter for InstanceCountFilter {
    fn name(&self) -> &str {
        "instance count"
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(Some(Box::new(cx.cluster().symbols().get(&self.group))))
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        (self.count(cx, host, self.symbol(cx)) < self.max_per_host).into()
    }

    /// Resolves the group once per chunk.
    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        let group = self.symbol(cx);
        rejected.check_lanes(chunk, mask, |h| (self.count(cx, h, group) < self.max_per_host).into())
    }

    fn describe(&self, _cx: &Cx<'_>, _reason: Reason) -> String {
        format!("already {} instances of the service", self.max_per_host)
    }

    fn host_local(&self) -> bool {
        true
    }
}
