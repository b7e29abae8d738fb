//! IoOpsFilter: at most `max_io_ops_per_host` I/O-heavy operations per host.

use super::counters::{Counter, Counts};
use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::request::{Cx, Prepared};

/// Nova's `IoOpsFilter`: a host passes when `num_io_ops < max_io_ops_per_host` (strict; default 8). The
/// counter grows by one for every earlier instance of the request placed on the host. Runs for
/// every instance, not on rebuilds. Reason: `too many I/O operations`.
///
/// ```
/// use placewise::nova::filters::IoOpsFilter;
///
/// let filter = IoOpsFilter::new().max_io_ops_per_host(16);
/// assert_eq!(filter.max(), 16);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoOpsFilter {
    max: i64,
}

impl Default for IoOpsFilter {
    fn default() -> Self {
        IoOpsFilter::new()
    }
}

impl IoOpsFilter {
    /// The filter with Nova's default `max_io_ops_per_host` (8).
    pub fn new() -> Self {
        IoOpsFilter { max: 8 }
    }

    /// Sets `max_io_ops_per_host`.
    pub fn max_io_ops_per_host(mut self, max: i64) -> Self {
        self.max = max;
        self
    }

    /// The maximum.
    pub fn max(&self) -> i64 {
        self.max
    }
}

impl Filter for IoOpsFilter {
    fn name(&self) -> &str {
        "IoOpsFilter"
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(Some(Box::new(Counts::new(cx, Counter::IoOps, false, self.max))))
    }

    #[inline]
    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        (Counter::IoOps.value(cx, host) < self.max as f64).into()
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        match cx.state::<Counts>() {
            Some(counts) => counts.check_chunk(cx, chunk, mask, self.max as f64, rejected),
            None => rejected.check_lanes(chunk, mask, |h| self.check(cx, h)),
        }
    }

    fn describe(&self, _cx: &Cx<'_>, _reason: Reason) -> String {
        Counter::IoOps.describe()
    }

    fn host_local(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::HostId;
    use crate::nova::filters::common::testkit::{names, picks, reason, run, run_at};
    use crate::request::Request;
    use crate::snapshot::Cluster;
    use crate::snapshot::{HostSpec, Overlay};
    use serde_json::json;

    fn cluster() -> Cluster {
        Cluster::builder()
            .host(HostSpec::new("idle"))
            .host(HostSpec::new("seven").attribute("num_io_ops", json!(7)))
            .host(HostSpec::new("eight").attribute("num_io_ops", json!(8)))
            .build()
            .unwrap()
    }

    #[test]
    fn strictly_below_the_maximum() {
        let c = cluster();
        let r = Request::new(1);
        assert_eq!(run(&IoOpsFilter::new(), &c, &r).unwrap(), names(&["idle", "seven"]));
        assert_eq!(run(&IoOpsFilter::new().max_io_ops_per_host(0), &c, &r).unwrap(), Vec::<String>::new());
        assert_eq!(reason(&IoOpsFilter::new(), &c, &r, "eight"), "too many I/O operations");
    }

    #[test]
    fn picks_add_one_io_op() {
        let c = cluster();
        let r = Request::new(3);
        let mut o = Overlay::new();
        o.consume(HostId(1), &[]);
        assert_eq!(run_at(&IoOpsFilter::new(), &c, &r, &o, 1).unwrap(), names(&["idle"]));
        let one = Cluster::builder().host(HostSpec::new("a").attribute("num_io_ops", json!(5))).build().unwrap();
        assert_eq!(picks(IoOpsFilter::new(), &one, &Request::new(5)).unwrap(), names(&["a", "a", "a"]));
    }
}
