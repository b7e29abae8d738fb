//! AggregateTypeAffinityFilter: aggregates list the flavors their hosts take.

use super::common::{flavor, judge_chunk, judge_host, raw_values, ByAggregates};
use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::nova::pyvalue::py_strip;
use crate::request::{Cx, Prepared};

/// The metadata key listing the flavors an aggregate's hosts take.
const KEY: &str = "instance_type";

/// Nova's `AggregateTypeAffinityFilter` (reference §7.3): a host passes iff the flavor **name**
/// is one of the comma-split, stripped pieces of the raw `instance_type` values of its
/// aggregates, or no aggregate of the host sets `instance_type`. Runs once per request, not on
/// rebuilds. Reason: `flavor <name> not allowed by aggregate instance_type`.
///
/// The verdict reads the host's aggregates alone: it is judged once per distinct aggregate set
/// in a request, and not at all when no aggregate sets `instance_type`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AggregateTypeAffinityFilter;

fn flavor_name<'a>(cx: &Cx<'a>) -> &'a str {
    flavor(cx).map_or("", |f| f.name.as_str())
}

/// One host's verdict, judged in full.
fn judge(cx: &Cx<'_>, host: HostId) -> Result<Verdict, ScheduleError> {
    let name = flavor_name(cx);
    let mut restricted = false;
    for value in raw_values(cx.cluster(), cx.host(host), KEY) {
        if value.split(',').any(|piece| py_strip(piece) == name) {
            return Ok(Verdict::Pass);
        }
        restricted = true;
    }
    Ok((!restricted).into())
}

impl Filter for AggregateTypeAffinityFilter {
    fn name(&self) -> &str {
        "AggregateTypeAffinityFilter"
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(Some(Box::new(ByAggregates::new(cx.cluster(), |key| key == KEY))))
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        judge_host(cx, host, |_: &ByAggregates, h| judge(cx, h))
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        judge_chunk(cx, chunk, mask, rejected, |_: &ByAggregates, h| judge(cx, h))
    }

    fn describe(&self, cx: &Cx<'_>, _reason: Reason) -> String {
        format!("flavor {} not allowed by aggregate instance_type", flavor_name(cx))
    }

    fn once_per_request(&self) -> bool {
        true
    }

    fn host_local(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nova::filters::common::testkit::{flavor_request, names, reason, run};
    use crate::snapshot::Cluster;
    use crate::snapshot::{AggregateSpec, HostSpec};

    #[test]
    fn flavor_name_among_the_aggregate_values() {
        let c = Cluster::builder()
            .aggregate(AggregateSpec::new("small").metadata("instance_type", "m1.tiny, m1.test"))
            .aggregate(AggregateSpec::new("big").metadata("instance_type", "m1.xlarge"))
            .aggregate(AggregateSpec::new("other").metadata("ssd", "true"))
            .host(HostSpec::new("small").aggregate("small"))
            .host(HostSpec::new("big").aggregate("big"))
            .host(HostSpec::new("both").aggregate("big").aggregate("small"))
            .host(HostSpec::new("free").aggregate("other"))
            .build()
            .unwrap();
        let r = flavor_request(1, 0.0, 0.0, 0.0, 0.0, 0.0); // flavor name m1.test
        let f = AggregateTypeAffinityFilter;
        assert_eq!(run(&f, &c, &r).unwrap(), names(&["small", "both", "free"]));
        assert_eq!(reason(&f, &c, &r, "big"), "flavor m1.test not allowed by aggregate instance_type");
        assert!(f.once_per_request() && !crate::nova::runs_on_rebuild(f.name()) && f.host_local());
    }

    #[test]
    fn nothing_to_check_without_an_instance_type() {
        use crate::nova::filters::common::SpecChecks;
        let c = Cluster::builder()
            .aggregate(AggregateSpec::new("other").metadata("instance_types", "m1.big"))
            .host(HostSpec::new("in").aggregate("other"))
            .host(HostSpec::new("bare"))
            .build()
            .unwrap();
        assert!(ByAggregates::new(&c, |k| k == KEY).is_empty());
        let r = flavor_request(1, 0.0, 0.0, 0.0, 0.0, 0.0);
        assert_eq!(run(&AggregateTypeAffinityFilter, &c, &r).unwrap(), names(&["in", "bare"]));
        let typed = Cluster::builder().aggregate(AggregateSpec::new("a").metadata(KEY, "m1.big")).build();
        assert!(!ByAggregates::new(&typed.unwrap(), |k| k == KEY).is_empty());
    }
}
