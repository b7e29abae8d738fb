//! AggregateMultiTenancyIsolation: aggregates reserved for some projects.

use super::common::{judge_chunk, judge_host, ByAggregates};
use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::nova::pyvalue::py_strip;
use crate::nova::request::VmSpec;
use crate::request::{Cx, Prepared};
use std::ops::Bound;

/// The key prefix naming accepted projects.
const PREFIX: &str = "filter_tenant_id";

/// Nova's `AggregateMultiTenancyIsolation` (reference §7.3): the values of every metadata key of
/// the host's aggregates that *starts with* `filter_tenant_id` (`filter_tenant_id`,
/// `filter_tenant_id_2` …), comma-split and stripped, are the projects the host accepts. A host
/// with such values passes iff the request's project is among them; a host without accepts every
/// project. Runs once per request, not on rebuilds. Reason: `project <id> not allowed by
/// aggregate`.
///
/// The verdict reads the host's aggregates alone: it is judged once per distinct aggregate set
/// in a request, and not at all when no aggregate sets a `filter_tenant_id` key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AggregateMultiTenancyIsolation;

/// One host's verdict, judged in full.
fn judge(cx: &Cx<'_>, host: HostId) -> Result<Verdict, ScheduleError> {
    let project = VmSpec::of(cx).project.as_deref();
    let aggregates = cx.cluster().aggregates();
    let mut isolated = false;
    for a in &cx.host(host).aggregates {
        let Some(agg) = aggregates.get(a.index()) else { continue };
        for (key, value) in agg.metadata.range::<str, _>((Bound::Included(PREFIX), Bound::Unbounded)) {
            if !key.starts_with(PREFIX) {
                break;
            }
            isolated = true;
            if value.split(',').any(|t| Some(py_strip(t)) == project) {
                return Ok(Verdict::Pass);
            }
        }
    }
    Ok((!isolated).into())
}

impl Filter for AggregateMultiTenancyIsolation {
    fn name(&self) -> &str {
        "AggregateMultiTenancyIsolation"
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(Some(Box::new(ByAggregates::new(cx.cluster(), |key| key.starts_with(PREFIX)))))
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        judge_host(cx, host, |_: &ByAggregates, h| judge(cx, h))
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        judge_chunk(cx, chunk, mask, rejected, |_: &ByAggregates, h| judge(cx, h))
    }

    fn describe(&self, cx: &Cx<'_>, _reason: Reason) -> String {
        match VmSpec::of(cx).project.as_deref() {
            Some(p) => format!("project {p} not allowed by aggregate"),
            None => "no project, and the aggregate is reserved".into(),
        }
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
    use crate::nova::filters::common::testkit::{names, reason, run, vm_request};
    use crate::nova::request::NovaRequest;
    use crate::nova::request::VmSpec;
    use crate::snapshot::Cluster;
    use crate::snapshot::{AggregateSpec, HostSpec};

    fn request(project: Option<&str>) -> NovaRequest {
        vm_request(1, VmSpec { project: project.map(Into::into), ..Default::default() })
    }

    #[test]
    fn tenant_keys_by_prefix() {
        let c = Cluster::builder()
            .aggregate(AggregateSpec::new("a").metadata("filter_tenant_id", "tenant-a, tenant-b"))
            .aggregate(AggregateSpec::new("c").metadata("filter_tenant_id_2", "tenant-c").metadata("filter", "x"))
            .aggregate(AggregateSpec::new("other").metadata("filter_tenant", "tenant-z").metadata("ssd", "1"))
            .host(HostSpec::new("ab").aggregate("a"))
            .host(HostSpec::new("abc").aggregate("a").aggregate("c"))
            .host(HostSpec::new("c").aggregate("c"))
            .host(HostSpec::new("open").aggregate("other"))
            .host(HostSpec::new("bare"))
            .build()
            .unwrap();
        let f = AggregateMultiTenancyIsolation;
        assert_eq!(run(&f, &c, &request(Some("tenant-b"))).unwrap(), names(&["ab", "abc", "open", "bare"]));
        assert_eq!(run(&f, &c, &request(Some("tenant-c"))).unwrap(), names(&["abc", "c", "open", "bare"]));
        assert_eq!(run(&f, &c, &request(Some("tenant-z"))).unwrap(), names(&["open", "bare"]));
        assert_eq!(run(&f, &c, &request(None)).unwrap(), names(&["open", "bare"]));
        assert_eq!(reason(&f, &c, &request(Some("tenant-z")), "c"), "project tenant-z not allowed by aggregate");
        assert!(f.once_per_request() && !crate::nova::runs_on_rebuild(f.name()) && f.host_local());
    }

    #[test]
    fn nothing_to_check_without_a_tenant_key() {
        use crate::nova::filters::common::SpecChecks;
        let c = Cluster::builder()
            .aggregate(AggregateSpec::new("other").metadata("filter_tenant", "tenant-z"))
            .host(HostSpec::new("in").aggregate("other"))
            .host(HostSpec::new("bare"))
            .build()
            .unwrap();
        assert!(ByAggregates::new(&c, |k| k.starts_with(PREFIX)).is_empty());
        assert_eq!(run(&AggregateMultiTenancyIsolation, &c, &request(Some("t"))).unwrap(), names(&["in", "bare"]));
        let tenant = Cluster::builder().aggregate(AggregateSpec::new("a").metadata("filter_tenant_id_x", "t")).build();
        assert!(!ByAggregates::new(&tenant.unwrap(), |k| k.starts_with(PREFIX)).is_empty());
    }
}
