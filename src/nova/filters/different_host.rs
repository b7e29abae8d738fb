//! DifferentHostFilter: away from the instances named in the `different_host` hint.

use super::common::{hint, Hint};
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::nova::request::VmSpec;
use crate::request::Cx;
use serde_json::Value;

/// The instance UUIDs a `same_host` or `different_host` hint names (a string or a list).
pub(super) fn hinted_uuids<'a>(cx: &Cx<'a>, name: &str) -> Option<impl Iterator<Item = &'a str> + Clone + 'a> {
    let (one, many): (Option<&'a str>, &'a [Value]) = match hint(VmSpec::of(cx), name) {
        Hint::Str(s) if !s.is_empty() => (Some(s), &[]),
        Hint::List(items) if !items.is_empty() => (None, items),
        _ => return None,
    };
    Some(one.into_iter().chain(many.iter().filter_map(Value::as_str)))
}

/// The lanes of `mask` in chunk `chunk` that pass a `name` hint, the hint read once for the
/// chunk: every lane without the hint; with it, the lanes where running one of the named
/// instances (on the service host, shared by its nodes) is `runs_one`.
pub(super) fn judge_hinted(
    cx: &Cx<'_>,
    name: &str,
    runs_one: bool,
    chunk: usize,
    mask: u64,
    rejected: &mut Rejections,
) -> u64 {
    match hinted_uuids(cx, name) {
        None => mask,
        Some(uuids) => rejected.check_lanes(chunk, mask, |host| {
            (uuids.clone().any(|u| cx.cluster().service_has_instance(host, u)) == runs_one).into()
        }),
    }
}

/// Nova's `DifferentHostFilter`: with a `different_host` hint (one instance UUID or a list), a
/// host passes when none of those instances runs on it; without the hint every host passes. Runs
/// once per request, not on rebuilds. Reason: `runs an instance named in different_host`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DifferentHostFilter;

impl Filter for DifferentHostFilter {
    fn name(&self) -> &str {
        "DifferentHostFilter"
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        match hinted_uuids(cx, "different_host") {
            None => Verdict::Pass,
            Some(mut uuids) => {
                // The service host's instance list, shared by its nodes.
                (!uuids.any(|u| cx.cluster().service_has_instance(host, u))).into()
            }
        }
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        judge_hinted(cx, "different_host", false, chunk, mask, rejected)
    }

    fn describe(&self, _cx: &Cx<'_>, _reason: Reason) -> String {
        "runs an instance named in different_host".into()
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
    use crate::snapshot::{HostSpec, InstanceSpec};
    use serde_json::json;

    fn request(hint: serde_json::Value) -> NovaRequest {
        let mut vm = VmSpec::default();
        vm.hints.insert("different_host".into(), hint);
        vm_request(1, vm)
    }

    #[test]
    fn avoids_hosts_of_the_named_instances() {
        let c = Cluster::builder()
            .host(HostSpec::new("a").instance(InstanceSpec::new("u1")))
            .host(HostSpec::new("b").instance(InstanceSpec::new("u2")).instance(InstanceSpec::new("u3")))
            .host(HostSpec::new("c"))
            .build()
            .unwrap();
        let f = DifferentHostFilter;
        assert_eq!(run(&f, &c, &request(json!("u1"))).unwrap(), names(&["b", "c"]));
        assert_eq!(run(&f, &c, &request(json!(["u1", "u3"]))).unwrap(), names(&["c"]));
        assert_eq!(run(&f, &c, &request(json!([]))).unwrap(), names(&["a", "b", "c"]));
        assert_eq!(run(&f, &c, &request(json!(""))).unwrap(), names(&["a", "b", "c"]));
        assert_eq!(run(&f, &c, &crate::request::Request::new(1)).unwrap(), names(&["a", "b", "c"]));
        assert_eq!(reason(&f, &c, &request(json!("u1")), "a"), "runs an instance named in different_host");
        assert!(f.once_per_request() && !crate::nova::runs_on_rebuild(f.name()) && f.host_local());
    }
}
