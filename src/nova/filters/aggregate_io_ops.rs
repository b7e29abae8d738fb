//! AggregateIoOpsFilter: at most the smallest aggregate `max_io_ops_per_host` I/O-heavy operations per host.

use super::counters::{aggregate_max, Counter, Counts};
use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::request::{Cx, Prepared};

/// Nova's `AggregateIoOpsFilter`: the rule of [`IoOpsFilter`](super::IoOpsFilter) with the maximum taken from the
/// host's aggregates: the smallest of their raw `max_io_ops_per_host` values parsed with Python's
/// `int()` (which rejects `"4.0"`). With no such value, or any unparsable one, the configured
/// `max_io_ops_per_host` (default 8) applies. Runs for every instance, not on rebuilds.
/// Reason: `too many I/O operations`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AggregateIoOpsFilter {
    max: i64,
}

impl Default for AggregateIoOpsFilter {
    fn default() -> Self {
        AggregateIoOpsFilter::new()
    }
}

impl AggregateIoOpsFilter {
    /// The filter with Nova's default fallback `max_io_ops_per_host` (8).
    pub fn new() -> Self {
        AggregateIoOpsFilter { max: 8 }
    }

    /// Sets the fallback `max_io_ops_per_host`.
    pub fn max_io_ops_per_host(mut self, max: i64) -> Self {
        self.max = max;
        self
    }

    /// The fallback maximum.
    pub fn max(&self) -> i64 {
        self.max
    }
}

impl Filter for AggregateIoOpsFilter {
    fn name(&self) -> &str {
        "AggregateIoOpsFilter"
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(Some(Box::new(Counts::new(cx, Counter::IoOps, true, self.max))))
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        let max = match cx.state::<Counts>().and_then(|c| c.max(host)) {
            Some(m) => m,
            None => aggregate_max(cx, Counter::IoOps, host, self.max),
        };
        (Counter::IoOps.value(cx, host) < max).into()
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
    use crate::nova::filters::common::testkit::{names, run};
    use crate::request::Request;
    use crate::snapshot::Cluster;
    use crate::snapshot::{AggregateSpec, HostSpec};
    use serde_json::json;

    #[test]
    fn smallest_integer_value_or_the_default() {
        let c = Cluster::builder()
            .aggregate(AggregateSpec::new("three").metadata("max_io_ops_per_host", "3"))
            .aggregate(AggregateSpec::new("five").metadata("max_io_ops_per_host", " 5 "))
            .aggregate(AggregateSpec::new("float").metadata("max_io_ops_per_host", "4.0"))
            .host(HostSpec::new("min3").attribute("num_io_ops", json!(3)).aggregate("three").aggregate("five"))
            .host(HostSpec::new("five").attribute("num_io_ops", json!(4)).aggregate("five"))
            // "4.0" is not an int: the whole set is discarded and the default 8 applies.
            .host(HostSpec::new("float").attribute("num_io_ops", json!(7)).aggregate("float").aggregate("three"))
            .host(HostSpec::new("none").attribute("num_io_ops", json!(8)))
            .build()
            .unwrap();
        assert_eq!(run(&AggregateIoOpsFilter::new(), &c, &Request::new(1)).unwrap(), names(&["five", "float"]));
        assert_eq!(
            run(&AggregateIoOpsFilter::new().max_io_ops_per_host(9), &c, &Request::new(1)).unwrap(),
            names(&["five", "float", "none"])
        );
    }
}
