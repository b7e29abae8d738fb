//! GroupAffinityFilter: the old `group` hint's affinity.

use super::common::{group_has_hosts, group_with_policy, in_group_hosts, GroupSets};
use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::nova::request::VmSpec;
use crate::request::{Cx, Prepared};

/// Nova's removed `GroupAffinityFilter` (last in 2014.2 Juno, reference §12.9). It acts only on
/// a server group with the internal policy `legacy`: when the group has hosts (its
/// [`hosts`](crate::nova::request::ServerGroup::hosts) plus the hosts picked for earlier instances of the
/// request), a host passes iff it is one of them; a group without hosts lets every host pass.
/// Enabled together with [`GroupAntiAffinityFilter`](super::GroupAntiAffinityFilter), only the
/// first instance of a new group can be placed. Runs for every instance, not on rebuilds.
/// Reason: `not a host of the group`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GroupAffinityFilter;

impl Filter for GroupAffinityFilter {
    fn name(&self) -> &str {
        "GroupAffinityFilter"
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

    /// Host-local unless the request has a group with this policy: then every pick joins the
    /// group's hosts and changes every other host's verdict.
    fn host_local_for(&self, cx: &Cx<'_>) -> bool {
        group_with_policy(cx, "legacy").is_none()
    }

    fn describe(&self, _cx: &Cx<'_>, _reason: Reason) -> String {
        "not a host of the group".into()
    }
}

impl GroupAffinityFilter {
    /// The verdict for `host` under the request's VM part `vm`.
    fn judge(&self, cx: &Cx<'_>, vm: &VmSpec, host: HostId) -> Verdict {
        match vm.group_with_policy("legacy") {
            Some(g) if group_has_hosts(cx, g) => in_group_hosts(cx, g, cx.state::<GroupSets>(), host).into(),
            _ => Verdict::Pass,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::FilterExt;
    use crate::nova::filters::common::testkit::{group_request, names, picks, reason, run};
    use crate::nova::filters::GroupAntiAffinityFilter;
    use crate::nova::request::NovaRequest;
    use crate::snapshot::Cluster;
    use crate::snapshot::HostSpec;

    fn request(count: u32, policy: &str, hosts: &[&str]) -> NovaRequest {
        group_request(count, policy, hosts, &[])
    }

    #[test]
    fn follows_group_hosts_and_the_first_pick() {
        let c = Cluster::builder()
            .host(HostSpec::new("a"))
            .host(HostSpec::new("b"))
            .host(HostSpec::new("c"))
            .build()
            .unwrap();
        let f = GroupAffinityFilter;
        assert_eq!(run(&f, &c, &request(1, "legacy", &["b", "zz"])).unwrap(), names(&["b"]));
        assert_eq!(run(&f, &c, &request(1, "legacy", &[])).unwrap(), names(&["a", "b", "c"]));
        assert_eq!(run(&f, &c, &request(1, "affinity", &["b"])).unwrap(), names(&["a", "b", "c"]));
        assert_eq!(reason(&f, &c, &request(1, "legacy", &["b"]), "a"), "not a host of the group");
        // A new group: the first pick (a, lowest id) draws the others.
        assert_eq!(picks(f, &c, &request(3, "legacy", &[])).unwrap(), names(&["a", "a", "a"]));
        // Both filters at once: only the first instance of a new group is placed.
        assert_eq!(picks(f.and(GroupAntiAffinityFilter), &c, &request(3, "legacy", &[])).unwrap(), names(&["a"]));
        assert!(!f.once_per_request() && !f.host_local());
    }
}
