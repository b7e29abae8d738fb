//! RetryFilter: not where this instance was already tried.

use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::nova::request::VmSpec;
use crate::request::Cx;

/// Nova's removed `RetryFilter` (last in 21.x Ussuri, reference §12.6): the request's
/// [`retry_hosts`](crate::nova::request::VmSpec::retry_hosts) are the hosts already tried for this instance,
/// each `host:node` (an exact host name and node name pair) or `host` (the host, whatever its
/// node). A tried host fails; without retry hosts every host passes. The node of a host is its
/// `nodename` attribute, else its name. Runs for every instance, not on rebuilds.
/// Reason: `already tried`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RetryFilter;

impl Filter for RetryFilter {
    fn name(&self) -> &str {
        "RetryFilter"
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        judge(cx, &VmSpec::of(cx).retry_hosts, host)
    }

    /// Reads the VM part once per chunk, not per host.
    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        let tried = &VmSpec::of(cx).retry_hosts;
        rejected.check_lanes(chunk, mask, |h| judge(cx, tried, h))
    }

    fn describe(&self, _cx: &Cx<'_>, _reason: Reason) -> String {
        "already tried".into()
    }

    fn host_local(&self) -> bool {
        true
    }
}

/// Whether `host` is not among the `tried` hosts.
fn judge(cx: &Cx<'_>, tried: &[String], host: HostId) -> Verdict {
    if tried.is_empty() {
        return Verdict::Pass;
    }
    let view = cx.host_state(host);
    let name = view.service_host();
    let node = view.nodename();
    let hit = tried.iter().any(|t| match t.split_once(':') {
        Some((h, n)) => h == name && n == node,
        None => t == name,
    });
    (!hit).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nova::filters::common::testkit::{names, reason, run, vm_request};
    use crate::nova::request::VmSpec;
    use crate::request::Request;
    use crate::snapshot::Cluster;
    use crate::snapshot::HostSpec;
    use serde_json::json;

    #[test]
    fn tried_host_node_pairs_fail() {
        let c = Cluster::builder()
            .host(HostSpec::new("a"))
            .host(HostSpec::new("b").attribute("nodename", json!("b-node")))
            .host(HostSpec::new("c").attribute("nodename", json!("c-node")))
            .host(HostSpec::new("d"))
            .build()
            .unwrap();
        let vm = VmSpec {
            retry_hosts: vec!["a:a".into(), "b:b".into(), "c:c-node".into(), "d".into()],
            ..Default::default()
        };
        let r = vm_request(1, vm);
        // b was tried on another node: its own pair is not in the list.
        assert_eq!(run(&RetryFilter, &c, &r).unwrap(), names(&["b"]));
        assert_eq!(reason(&RetryFilter, &c, &r, "a"), "already tried");
        assert_eq!(run(&RetryFilter, &c, &Request::new(1)).unwrap().len(), 4);
        assert!(
            !RetryFilter.once_per_request()
                && !crate::nova::runs_on_rebuild(RetryFilter.name())
                && RetryFilter.host_local()
        );
    }
}
