//! SameHostFilter: next to the instances named in the `same_host` hint.

use super::different_host::{hinted_uuids, judge_hinted};
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::request::Cx;

/// Nova's `SameHostFilter`: with a `same_host` hint (one instance UUID or a list), a host passes
/// when one of those instances runs on it; without the hint every host passes. Runs once per
/// request, not on rebuilds. Reason: `runs no instance named in same_host`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SameHostFilter;

impl Filter for SameHostFilter {
    fn name(&self) -> &str {
        "SameHostFilter"
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        match hinted_uuids(cx, "same_host") {
            None => Verdict::Pass,
            Some(mut uuids) => {
                // The service host's instance list, shared by its nodes.
                uuids.any(|u| cx.cluster().service_has_instance(host, u)).into()
            }
        }
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        judge_hinted(cx, "same_host", true, chunk, mask, rejected)
    }

    fn describe(&self, _cx: &Cx<'_>, _reason: Reason) -> String {
        "runs no instance named in same_host".into()
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
        vm.hints.insert("same_host".into(), hint);
        vm_request(1, vm)
    }

    #[test]
    fn joins_hosts_of_the_named_instances() {
        let c = Cluster::builder()
            .host(HostSpec::new("a").instance(InstanceSpec::new("u1")))
            .host(HostSpec::new("b").instance(InstanceSpec::new("u2")))
            .host(HostSpec::new("c"))
            .build()
            .unwrap();
        let f = SameHostFilter;
        assert_eq!(run(&f, &c, &request(json!("u1"))).unwrap(), names(&["a"]));
        assert_eq!(run(&f, &c, &request(json!(["u1", "u2", "nowhere"]))).unwrap(), names(&["a", "b"]));
        assert_eq!(run(&f, &c, &request(json!(["nowhere"]))).unwrap(), Vec::<String>::new());
        assert_eq!(run(&f, &c, &crate::request::Request::new(1)).unwrap(), names(&["a", "b", "c"]));
        assert_eq!(reason(&f, &c, &request(json!("u1")), "c"), "runs no instance named in same_host");
        assert!(f.once_per_request() && !crate::nova::runs_on_rebuild(f.name()) && f.host_local());
    }
}
