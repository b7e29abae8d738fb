//! ServerGroupAffinityFilter: keep a server group's members together.

use super::common::{group_has_hosts, group_with_policy, in_group_hosts, GroupSets};
use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::nova::request::VmSpec;
use crate::request::{Cx, Prepared};

/// Nova's `ServerGroupAffinityFilter` (reference §7.1). It acts only when the request's server
/// group has the policy `affinity`: when the group has hosts (its
/// [`hosts`](crate::nova::request::ServerGroup::hosts), by host name, plus the hosts picked for earlier
/// instances of the request), a host passes iff it is one of them; otherwise every host passes.
/// So the first pick of a new group draws the later instances. Runs for every instance, not on
/// rebuilds. Reason: `not a host of the affinity group`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerGroupAffinityFilter;

const POLICY: &str = "affinity";

impl Filter for ServerGroupAffinityFilter {
    fn name(&self) -> &str {
        "ServerGroupAffinityFilter"
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(group_with_policy(cx, POLICY).map(|g| Box::new(GroupSets::new(cx, g)) as _))
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
        group_with_policy(cx, POLICY).is_none()
    }

    fn describe(&self, _cx: &Cx<'_>, _reason: Reason) -> String {
        "not a host of the affinity group".into()
    }
}

impl ServerGroupAffinityFilter {
    /// The verdict for `host` under the request's VM part `vm`.
    fn judge(&self, cx: &Cx<'_>, vm: &VmSpec, host: HostId) -> Verdict {
        match vm.group_with_policy(POLICY) {
            Some(g) if group_has_hosts(cx, g) => in_group_hosts(cx, g, cx.state::<GroupSets>(), host).into(),
            _ => Verdict::Pass,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nova::filters::common::testkit::{group_request, names, picks, reason, run};
    use crate::snapshot::Cluster;
    use crate::snapshot::HostSpec;

    fn three() -> Cluster {
        Cluster::builder().host(HostSpec::new("a")).host(HostSpec::new("b")).host(HostSpec::new("c")).build().unwrap()
    }

    #[test]
    fn follows_an_existing_group_host() {
        let c = three();
        let f = ServerGroupAffinityFilter;
        assert_eq!(picks(f, &c, &group_request(2, POLICY, &["c"], &[])).unwrap(), names(&["c", "c"]));
        assert_eq!(run(&f, &c, &group_request(1, POLICY, &["c"], &[])).unwrap(), names(&["c"]));
        assert_eq!(reason(&f, &c, &group_request(1, POLICY, &["c"], &[]), "a"), "not a host of the affinity group");
        assert_eq!(run(&f, &c, &group_request(1, "soft-affinity", &["c"], &[])).unwrap().len(), 3);
        assert_eq!(run(&f, &c, &group_request(1, "anti-affinity", &["c"], &[])).unwrap().len(), 3);
    }

    #[test]
    fn follows_the_first_pick_of_a_new_group() {
        let c = three();
        let f = ServerGroupAffinityFilter;
        assert_eq!(run(&f, &c, &group_request(1, POLICY, &[], &[])).unwrap().len(), 3);
        assert_eq!(picks(f, &c, &group_request(3, POLICY, &[], &[])).unwrap(), names(&["a", "a", "a"]));
        assert!(!f.once_per_request() && !crate::nova::runs_on_rebuild(f.name()) && !f.host_local());
    }
}
