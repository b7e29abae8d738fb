//! GroupAntiAffinityFilter: the old `group` hint's anti-affinity.

use super::common::{group_with_policy, in_group_hosts, GroupSets};
use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::nova::request::VmSpec;
use crate::request::{Cx, Prepared};

/// Nova's removed `GroupAntiAffinityFilter` (last in 2014.2 Juno, reference §12.9). It acts only
/// on a server group with the internal policy `legacy` (made for the old `group` hint): a host
/// passes iff it is not one of the group's hosts, which are the group's
/// [`hosts`](crate::nova::request::ServerGroup::hosts) plus the hosts picked for earlier instances of the
/// request. Unlike ServerGroupAntiAffinityFilter there is no `max_server_per_host` and no
/// exemption for the instance's own host. Runs for every instance, not on rebuilds.
/// Reason: `host of a group member`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GroupAntiAffinityFilter;

impl Filter for GroupAntiAffinityFilter {
    fn name(&self) -> &str {
        "GroupAntiAffinityFilter"
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(group_with_policy(cx, "legacy").map(|g| Box::new(GroupSets::new(cx, g)) as _))
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        self.judge(cx, VmSpec::of(cx), host)
    }

    /// Reads the VM part once per chunk, not per host.
    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        let vm = VmSpec::of(cx);
        rejected.check_lanes(chunk, mask, |h| self.judge(cx, vm, h))
    }

    fn describe(&self, _cx: &Cx<'_>, _reason: Reason) -> String {
        "host of a group member".into()
    }

    fn host_local(&self) -> bool {
        // Membership of the group's hosts changes only for the host that was picked.
        true
    }
}

impl GroupAntiAffinityFilter {
    /// The verdict for `host` under the request's VM part `vm`.
    fn judge(&self, cx: &Cx<'_>, vm: &VmSpec, host: HostId) -> Verdict {
        match vm.group_with_policy("legacy") {
            None => Verdict::Pass,
            // An empty host set contains no host: the same rule covers it.
            Some(g) => (!in_group_hosts(cx, g, cx.state::<GroupSets>(), host)).into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nova::filters::common::testkit::{group_request, names, picks, reason, run};
    use crate::nova::request::NovaRequest;
    use crate::snapshot::Cluster;
    use crate::snapshot::HostSpec;

    fn request(count: u32, policy: &str, hosts: &[&str]) -> NovaRequest {
        group_request(count, policy, hosts, &[])
    }

    #[test]
    fn avoids_group_hosts_and_earlier_picks() {
        let c = Cluster::builder()
            .host(HostSpec::new("a"))
            .host(HostSpec::new("b"))
            .host(HostSpec::new("c"))
            .build()
            .unwrap();
        let f = GroupAntiAffinityFilter;
        assert_eq!(run(&f, &c, &request(1, "legacy", &["a"])).unwrap(), names(&["b", "c"]));
        assert_eq!(run(&f, &c, &request(1, "legacy", &[])).unwrap(), names(&["a", "b", "c"]));
        assert_eq!(reason(&f, &c, &request(1, "legacy", &["a"]), "a"), "host of a group member");
        // Other policies are not this filter's business.
        assert_eq!(run(&f, &c, &request(1, "anti-affinity", &["a"])).unwrap(), names(&["a", "b", "c"]));
        // Each pick joins the group's hosts.
        assert_eq!(picks(f, &c, &request(4, "legacy", &["b"])).unwrap(), names(&["a", "c"]));
        assert!(!f.once_per_request() && !crate::nova::runs_on_rebuild(f.name()));
    }
}
