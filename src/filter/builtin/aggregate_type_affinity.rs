//! AggregateTypeAffinityFilter: aggregates list the flavors their hosts take.

use super::nova::{flavor, raw_values};
use crate::expr::pyvalue::py_strip;
use crate::filter::{Filter, Reason, Verdict};
use crate::id::HostId;
use crate::request::Cx;

/// Nova's `AggregateTypeAffinityFilter` (reference §7.3): a host passes iff the flavor **name**
/// is one of the comma-split, stripped pieces of the raw `instance_type` values of its
/// aggregates, or no aggregate of the host sets `instance_type`. Runs once per request, not on
/// rebuilds. Reason: `flavor <name> not allowed by aggregate instance_type`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AggregateTypeAffinityFilter;

fn flavor_name<'a>(cx: &Cx<'a>) -> &'a str {
    flavor(cx).map_or("", |f| f.name.as_str())
}

impl Filter for AggregateTypeAffinityFilter {
    fn name(&self) -> &str {
        "AggregateTypeAffinityFilter"
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        let name = flavor_name(cx);
        let mut restricted = false;
        for value in raw_values(cx.cluster(), cx.host(host), "instance_type") {
            if value.split(',').any(|piece| py_strip(piece) == name) {
                return Verdict::Pass;
            }
            restricted = true;
        }
        (!restricted).into()
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
    use crate::filter::builtin::nova::testkit::{flavor_request, names, reason, run};
    use crate::snapshot::{AggregateSpec, HostSpec};
    use crate::Cluster;

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
        assert!(f.once_per_request() && !f.runs_on_rebuild() && f.host_local());
    }
}
