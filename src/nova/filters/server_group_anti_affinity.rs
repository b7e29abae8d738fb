//! ServerGroupAntiAffinityFilter: spread a server group's members.

use super::common::{group_with_policy, members_on_host, GroupSets};
use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::nova::request::VmSpec;
use crate::request::{Cx, Prepared};

/// Nova's `ServerGroupAntiAffinityFilter` (reference §7.1). It acts only when the request's server
/// group has the policy `anti-affinity` exactly; otherwise, and without a group, every host
/// passes.
///
/// - A host already running the instance being placed (`instance_uuids[i]`) passes.
/// - Otherwise it passes when the number of group members on it is below the group's
///   `max_server_per_host` (default 1). The members counted are the host's instances listed in
///   the group's `members`, plus the instances of this request already placed there whose ids
///   are in `members` ([`MemberPicks`](crate::nova::request::MemberPicks)).
///
/// So a multi-instance request whose instances are members (the usual case: the filter
/// scheduler's API adds them) spreads over distinct hosts; one whose instances are not members
/// is limited only by the existing members. Runs for every instance, not on
/// rebuilds. Reason: `host already runs <n> member(s) of the anti-affinity group`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerGroupAntiAffinityFilter;

const POLICY: &str = "anti-affinity";

fn max_per_host(cx: &Cx<'_>) -> u64 {
    group_with_policy(cx, POLICY).and_then(|g| g.max_server_per_host).map_or(1, u64::from)
}

impl Filter for ServerGroupAntiAffinityFilter {
    fn name(&self) -> &str {
        "ServerGroupAntiAffinityFilter"
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

    fn describe(&self, cx: &Cx<'_>, _reason: Reason) -> String {
        format!("host already runs {} member(s) of the anti-affinity group", max_per_host(cx))
    }

    fn host_local(&self) -> bool {
        // The member count of a host changes only when the host is picked. (The own-host
        // exemption assumes the request's instance ids are not on hosts that it does not pick.)
        true
    }
}

impl ServerGroupAntiAffinityFilter {
    /// The verdict for `host` under the request's VM part `vm`.
    fn judge(&self, cx: &Cx<'_>, vm: &VmSpec, host: HostId) -> Verdict {
        let Some(group) = vm.group_with_policy(POLICY) else { return Verdict::Pass };
        // A move may land on the instance's own host.
        if cx.cluster().service_has_instance(host, &vm.instance_uuid(cx.instance())) {
            return Verdict::Pass;
        }
        let max = group.max_server_per_host.map_or(1, u64::from);
        (members_on_host(cx, group, cx.state::<GroupSets>(), host) < max).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nova::filters::common::testkit::{group_request, names, picks, reason, run};
    use crate::snapshot::Cluster;
    use crate::snapshot::{HostSpec, InstanceSpec};

    fn three() -> Cluster {
        Cluster::builder().host(HostSpec::new("a")).host(HostSpec::new("b")).host(HostSpec::new("c")).build().unwrap()
    }

    #[test]
    fn a_multi_create_spreads_then_fails() {
        let c = three();
        let f = ServerGroupAntiAffinityFilter;
        // The request's instances are members, as the filter scheduler's API makes them.
        let own = [0, 1, 2, 3, 4].map(|i| format!("00000000-0000-0000-0000-{i:012}"));
        let own: Vec<&str> = own.iter().map(String::as_str).collect();
        assert_eq!(picks(f, &c, &group_request(3, POLICY, &[], &own)).unwrap(), names(&["a", "b", "c"]));
        // A 4th instance finds no host: three are placed.
        assert_eq!(picks(f, &c, &group_request(4, POLICY, &[], &own)).unwrap(), names(&["a", "b", "c"]));
        let mut two = group_request(5, POLICY, &[], &own);
        two.vm.server_group.as_mut().unwrap().max_server_per_host = Some(2);
        assert_eq!(picks(f, &c, &two).unwrap(), names(&["a", "a", "b", "b", "c"]));
    }

    #[test]
    fn counts_members_not_group_hosts() {
        let c = Cluster::builder()
            .host(HostSpec::new("member").instance(InstanceSpec::new("m1")))
            .host(HostSpec::new("stranger").instance(InstanceSpec::new("x")))
            .host(HostSpec::new("listed"))
            .build()
            .unwrap();
        let f = ServerGroupAntiAffinityFilter;
        // `hosts` is not what this filter reads.
        let r = group_request(1, POLICY, &["listed"], &["m1", "00000000-0000-0000-0000-000000000000"]);
        assert_eq!(run(&f, &c, &r).unwrap(), names(&["stranger", "listed"]));
        assert_eq!(reason(&f, &c, &r, "member"), "host already runs 1 member(s) of the anti-affinity group");
        assert_eq!(run(&f, &c, &group_request(1, "soft-anti-affinity", &[], &["m1"])).unwrap().len(), 3);
        assert_eq!(run(&f, &c, &group_request(1, "affinity", &[], &["m1"])).unwrap().len(), 3);
        // The instance being placed is already on `member` (a move): that host passes.
        let mut moving = group_request(1, POLICY, &[], &["m1"]);
        moving.vm.instance_uuids = vec!["m1".into()];
        assert_eq!(run(&f, &c, &moving).unwrap(), names(&["member", "stranger", "listed"]));
        assert!(!f.once_per_request() && !crate::nova::runs_on_rebuild(f.name()) && f.host_local());
    }

    #[test]
    fn earlier_picks_count_only_when_they_are_members() {
        let uuid = |j: u32| format!("00000000-0000-0000-0000-{j:012}");
        // Every membership pattern of a three-instance request, with one earlier member on `c`.
        for pattern in 0u32..8 {
            let members: Vec<bool> = (0..3).map(|j| pattern >> j & 1 == 1).collect();
            let mut listed: Vec<String> = (0..3).filter(|&j| members[j as usize]).map(uuid).collect();
            listed.push("existing".into());
            let cluster = Cluster::builder()
                .host(HostSpec::new("a"))
                .host(HostSpec::new("b"))
                .host(HostSpec::new("c").instance(InstanceSpec::new("existing")))
                .build()
                .unwrap();
            let listed: Vec<&str> = listed.iter().map(String::as_str).collect();
            let r = group_request(3, POLICY, &[], &listed);
            // The rule, step by step: the first host (by id) holding no member so far; a pick
            // adds a member only when the instance is one.
            let mut held = [0u32, 0, 1];
            let mut expected = Vec::new();
            for &member in &members {
                let Some(h) = (0..3).find(|&h| held[h] < 1) else { break };
                held[h] += u32::from(member);
                expected.push(["a", "b", "c"][h].to_string());
            }
            assert_eq!(picks(ServerGroupAntiAffinityFilter, &cluster, &r).unwrap(), expected, "members {members:?}");
        }
    }

    #[test]
    fn members_on_any_node_of_a_service_host_count_for_all_its_nodes() {
        let own = ["00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000001"];
        let c = Cluster::builder()
            .host(HostSpec::new("bm:n0").service_host("bm"))
            .host(HostSpec::new("bm:n1").service_host("bm"))
            .host(HostSpec::new("kvm"))
            .host(HostSpec::new("bm2:n0").service_host("bm2").instance(InstanceSpec::new("m1")))
            .host(HostSpec::new("bm2:n1").service_host("bm2"))
            .build()
            .unwrap();
        let f = ServerGroupAntiAffinityFilter;
        let members = [own[0], own[1], "m1"];
        // `m1` on bm2's first node rules out both of bm2's nodes; the first pick (on bm:n0) rules
        // out bm:n1 for the second instance.
        assert_eq!(run(&f, &c, &group_request(1, POLICY, &[], &members)).unwrap(), names(&["bm:n0", "bm:n1", "kvm"]));
        assert_eq!(picks(f, &c, &group_request(2, POLICY, &[], &members)).unwrap(), names(&["bm:n0", "kvm"]));
    }
}
