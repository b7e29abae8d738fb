//! NumInstancesFilter: at most `max_instances_per_host` instances per host.

use super::counters::{Counter, Counts};
use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::request::{Cx, Prepared};

/// Nova's `NumInstancesFilter`: a host passes when `num_instances < max_instances_per_host` (strict; default 50). The
/// counter grows by one for every earlier instance of the request placed on the host. Runs for
/// every instance, not on rebuilds. Reason: `too many instances`.
///
/// ```
/// use placewise::nova::filters::NumInstancesFilter;
///
/// let filter = NumInstancesFilter::new().max_instances_per_host(10);
/// assert_eq!(filter.max(), 10);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NumInstancesFilter {
    max: i64,
}

impl Default for NumInstancesFilter {
    fn default() -> Self {
        NumInstancesFilter::new()
    }
}

impl NumInstancesFilter {
    /// The filter with Nova's default `max_instances_per_host` (50).
    pub fn new() -> Self {
        NumInstancesFilter { max: 50 }
    }

    /// Sets `max_instances_per_host`.
    pub fn max_instances_per_host(mut self, max: i64) -> Self {
        self.max = max;
        self
    }

    /// The maximum.
    pub fn max(&self) -> i64 {
        self.max
    }
}

impl Filter for NumInstancesFilter {
    fn name(&self) -> &str {
        "NumInstancesFilter"
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(Some(Box::new(Counts::new(cx, Counter::Instances, false, self.max))))
    }

    #[inline]
    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        (Counter::Instances.value(cx, host) < self.max as f64).into()
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
    use crate::nova::filters::common::testkit::{names, picks, reason, run};
    use crate::request::Request;
    use crate::snapshot::Cluster;
    use crate::snapshot::{HostSpec, InstanceSpec};
    use serde_json::json;

    #[test]
    fn counts_the_stat_or_the_listed_instances() {
        let c = Cluster::builder()
            .host(HostSpec::new("stat49").attribute("num_instances", json!(49)))
            .host(HostSpec::new("stat50").attribute("num_instances", json!(50)))
            .host(HostSpec::new("listed").instance(InstanceSpec::new("i1")).instance(InstanceSpec::new("i2")))
            .build()
            .unwrap();
        assert_eq!(run(&NumInstancesFilter::new(), &c, &Request::new(1)).unwrap(), names(&["stat49", "listed"]));
        let two = NumInstancesFilter::new().max_instances_per_host(2);
        assert_eq!(run(&two, &c, &Request::new(1)).unwrap(), Vec::<String>::new());
        assert_eq!(reason(&two, &c, &Request::new(1), "listed"), "too many instances");
        let three = NumInstancesFilter::new().max_instances_per_host(3);
        assert_eq!(picks(three, &c, &Request::new(2)).unwrap(), names(&["listed"]));
    }
}
