//! AggregateNumInstancesFilter: at most the smallest aggregate `max_instances_per_host` instances per host.

use super::counters::{aggregate_max, Counter, Counts};
use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::request::{Cx, Prepared};

/// Nova's `AggregateNumInstancesFilter`: the rule of [`NumInstancesFilter`](super::NumInstancesFilter) with the maximum taken from the
/// host's aggregates: the smallest of their raw `max_instances_per_host` values parsed with Python's
/// `int()` (which rejects `"4.0"`). With no such value, or any unparsable one, the configured
/// `max_instances_per_host` (default 50) applies. Runs for every instance, not on rebuilds.
/// Reason: `too many instances`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AggregateNumInstancesFilter {
    max: i64,
}

impl Default for AggregateNumInstancesFilter {
    fn default() -> Self {
        AggregateNumInstancesFilter::new()
    }
}

impl AggregateNumInstancesFilter {
    /// The filter with Nova's default fallback `max_instances_per_host` (50).
    pub fn new() -> Self {
        AggregateNumInstancesFilter { max: 50 }
    }

    /// Sets the fallback `max_instances_per_host`.
    pub fn max_instances_per_host(mut self, max: i64) -> Self {
        self.max = max;
        self
    }

    /// The fallback maximum.
    pub fn max(&self) -> i64 {
        self.max
    }
}

impl Filter for AggregateNumInstancesFilter {
    fn name(&self) -> &str {
        "AggregateNumInstancesFilter"
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(Some(Box::new(Counts::new(cx, Counter::Instances, true, self.max))))
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        let max = match cx.state::<Counts>().and_then(|c| c.max(host)) {
            Some(m) => m,
            None => aggregate_max(cx, Counter::Instances, host, self.max),
        };
        (Counter::Instances.value(cx, host) < max).into()
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        match cx.state::<Counts>() {
            Some(counts) => counts.check_chunk(cx, chunk, mask, self.max as f64, rejected),
            None => rejected.check_lanes(chunk, mask, |h| self.check(cx, h)),
        }
    }

    fn describe(&self, _cx: &Cx<'_>, _reason: Reason) -> String {
        Counter::Instances.describe()
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
    fn aggregate_maximum() {
        let c = Cluster::builder()
            .aggregate(AggregateSpec::new("small").metadata("max_instances_per_host", "2"))
            .aggregate(AggregateSpec::new("bad").metadata("max_instances_per_host", "two"))
            .host(HostSpec::new("small").attribute("num_instances", json!(2)).aggregate("small"))
            .host(HostSpec::new("bad").attribute("num_instances", json!(2)).aggregate("small").aggregate("bad"))
            .host(HostSpec::new("plain").attribute("num_instances", json!(49)))
            .build()
            .unwrap();
        assert_eq!(run(&AggregateNumInstancesFilter::new(), &c, &Request::new(1)).unwrap(), names(&["bad", "plain"]));
    }
}
