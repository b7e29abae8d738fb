//! SwarmKit's filter pipeline as foundation [`Filter`]s: Ready, Resource, Constraint,
//! Platform, HostPort and MaxReplicas, in that order, each with SwarmKit's wording.
//!
//! They read the foundation [`Request`](crate::request::Request) the engine builds for a batch
//! (resources and the service as its group) and the batch's [`Overlay`](crate::snapshot::Overlay), so
//! they also work in a plain foundation [`Scheduler`](crate::schedule::Scheduler). Ready and Resource
//! judge a chunk of 64 nodes at a time from the snapshot's dense columns
//! ([`Filter::check_chunk`]): the engine runs its leading stages through the core's filter
//! chain ([`judge_chunk`](crate::filter::chain::judge_chunk)) with them.

use super::constraint::Constraint;
use super::node;
use super::request::{HostPort, Platform};
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::request::Cx;
use crate::snapshot::{CHUNK, HOT_RESOURCES};

/// Which of SwarmKit's filters a pipeline entry is; decides the failure wording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    Ready,
    Resource,
    Constraint,
    Platform,
    HostPort,
    MaxReplicas,
    /// A hard spread constraint (placewise's own).
    HardSpread,
    /// A user's foundation filter.
    User,
}

impl Stage {
    /// SwarmKit's explanation for `count` nodes rejected at this stage; `user` is a user
    /// filter's own description.
    pub(crate) fn wording(self, count: u32, user: &str) -> String {
        let nodes = if count == 1 { "1 node".to_owned() } else { format!("{count} nodes") };
        match self {
            Stage::Ready => {
                if count == 1 {
                    "1 node not available for new tasks".to_owned()
                } else {
                    format!("{count} nodes not available for new tasks")
                }
            }
            Stage::Resource => format!("insufficient resources on {nodes}"),
            Stage::Constraint => format!("scheduling constraints not satisfied on {nodes}"),
            Stage::Platform => format!("unsupported platform on {nodes}"),
            Stage::HostPort => format!("host-mode port already in use on {nodes}"),
            Stage::MaxReplicas => "max replicas per node limit exceed".to_owned(),
            Stage::HardSpread => format!("hard spread constraint not satisfied on {nodes}"),
            Stage::User => format!("{user} on {nodes}"),
        }
    }
}

/// SwarmKit's `ReadyFilter`: the node is ready and its availability is active (up, enabled,
/// not cordoned, not evicting).
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadyFilter;

impl Filter for ReadyFilter {
    fn name(&self) -> &str {
        "ready"
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        cx.cluster().is_schedulable(host).into()
    }

    /// The chunk's schedulable mask: no host record read.
    #[inline]
    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        let pass = mask & cx.cluster().hot_chunk(chunk).schedulable;
        rejected.reject_lanes(chunk, mask & !pass, Reason(0));
        pass
    }

    fn describe(&self, _: &Cx<'_>, _: Reason) -> String {
        "not available for new tasks".into()
    }

    fn host_local(&self) -> bool {
        true
    }
}

/// SwarmKit's `ResourceFilter`: every reserved kind fits in what is left on the node after
/// its tasks (terminating ones included) and the batch's earlier tasks. Active only when the
/// task reserves something; a kind no node has fails every node.
#[derive(Debug, Clone, Copy, Default)]
pub struct SwarmResourceFilter;

impl Filter for SwarmResourceFilter {
    fn name(&self) -> &str {
        "resource"
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        let c = cx.compiled();
        if !c.unknown.is_empty() {
            return Verdict::reject(0);
        }
        c.resources.iter().all(|&(r, amount)| cx.free(host, r) >= amount).into()
    }

    /// The comparisons [`check`](Filter::check) makes, on the chunk's dense free columns for
    /// the kinds they hold and the hosts the batch has not placed on; a kind beyond the columns,
    /// or a host with a task of the batch, is compared host by host as `check` does (a NaN free
    /// amount does not fit).
    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        let c = cx.compiled();
        if !c.unknown.is_empty() {
            rejected.reject_lanes(chunk, mask, Reason(0));
            return 0;
        }
        let hot = cx.cluster().hot_chunk(chunk);
        let touched = cx.overlay().touched_mask(chunk) & mask;
        let mut pass = mask;
        for &(r, amount) in &c.resources {
            // Hosts the batch placed on read the overlay: they take the per-host path below.
            let mut slow = touched & pass;
            if r.index() < HOT_RESOURCES {
                let column = &hot.free[r.index()];
                let mut fits = 0u64;
                for (lane, &free) in column.iter().enumerate() {
                    fits |= u64::from(free >= amount) << lane;
                }
                pass &= fits | slow;
            } else {
                slow = pass;
            }
            while slow != 0 {
                let lane = slow.trailing_zeros() as usize;
                slow &= slow - 1;
                let fits = cx.free(HostId((chunk * CHUNK + lane) as u32), r) >= amount;
                pass &= !(u64::from(!fits) << lane);
            }
        }
        rejected.reject_lanes(chunk, mask & !pass, Reason(0));
        pass
    }

    fn describe(&self, _: &Cx<'_>, _: Reason) -> String {
        "insufficient resources".into()
    }

    fn host_local(&self) -> bool {
        true
    }
}

/// SwarmKit's `ConstraintFilter`: every constraint holds. Active when there is a constraint.
#[derive(Debug, Clone, Default)]
pub struct ConstraintFilter {
    constraints: Vec<Constraint>,
}

impl ConstraintFilter {
    /// A filter for these constraints (all must hold).
    pub fn new(constraints: Vec<Constraint>) -> ConstraintFilter {
        ConstraintFilter { constraints }
    }
}

impl Filter for ConstraintFilter {
    fn name(&self) -> &str {
        "constraint"
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        self.constraints.iter().all(|c| c.matches(cx.cluster(), host)).into()
    }

    fn describe(&self, _: &Cx<'_>, _: Reason) -> String {
        "scheduling constraints not satisfied".into()
    }

    fn once_per_request(&self) -> bool {
        true
    }

    fn host_local(&self) -> bool {
        true
    }
}

fn normalise_arch(arch: &str) -> &str {
    match arch {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        a => a,
    }
}

/// SwarmKit's `PlatformFilter`: the node's platform (attributes `os`, `arch`) matches one of
/// the listed ones; `x86_64` is `amd64`, `aarch64` is `arm64`, an empty field is a wildcard,
/// and a node without platform information fails. Active when platforms are listed.
#[derive(Debug, Clone, Default)]
pub struct PlatformFilter {
    platforms: Vec<Platform>,
}

impl PlatformFilter {
    /// A filter for these platforms (any may match).
    pub fn new(platforms: Vec<Platform>) -> PlatformFilter {
        PlatformFilter { platforms }
    }
}

impl Filter for PlatformFilter {
    fn name(&self) -> &str {
        "platform"
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        if self.platforms.is_empty() {
            return Verdict::Pass;
        }
        let h = cx.host(host);
        if !node::has_platform(h) {
            return Verdict::reject(0);
        }
        let (os, arch) = (node::str_attribute(h, "os"), normalise_arch(node::str_attribute(h, "arch")));
        self.platforms
            .iter()
            .any(|p| (p.arch.is_empty() || normalise_arch(&p.arch) == arch) && (p.os.is_empty() || p.os == os))
            .into()
    }

    fn describe(&self, _: &Cx<'_>, _: Reason) -> String {
        "unsupported platform".into()
    }

    fn once_per_request(&self) -> bool {
        true
    }

    fn host_local(&self) -> bool {
        true
    }
}

/// SwarmKit's `HostPortFilter`: none of the task's host-mode published ports is in use on the
/// node, by a task there (instance label `host_ports`) or by an earlier task of the batch.
#[derive(Debug, Clone, Default)]
pub struct HostPortFilter {
    ports: Vec<HostPort>,
}

impl HostPortFilter {
    /// A filter for these ports (port 0 publishes nothing).
    pub fn new(ports: Vec<HostPort>) -> HostPortFilter {
        HostPortFilter { ports: ports.into_iter().filter(|p| p.port != 0).collect() }
    }
}

impl Filter for HostPortFilter {
    fn name(&self) -> &str {
        "host port"
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        if self.ports.is_empty() {
            return Verdict::Pass;
        }
        if cx.overlay().placed(host) > 0 {
            return Verdict::reject(0);
        }
        let h = cx.host(host);
        (!self.ports.iter().any(|p| node::port_in_use(cx.cluster(), h, &p.protocol, p.port))).into()
    }

    fn describe(&self, _: &Cx<'_>, _: Reason) -> String {
        "host-mode port already in use".into()
    }

    fn host_local(&self) -> bool {
        true
    }
}

/// SwarmKit's `MaxReplicasFilter`: the node runs fewer than `max` active tasks of the service
/// (the request's group), counting the batch's earlier tasks. Active when `max > 0`.
#[derive(Debug, Clone, Copy, Default)]
pub struct MaxReplicasFilter {
    max: u32,
}

impl MaxReplicasFilter {
    /// A filter allowing `max` tasks per node (0 = no limit).
    pub fn new(max: u32) -> MaxReplicasFilter {
        MaxReplicasFilter { max }
    }
}

impl Filter for MaxReplicasFilter {
    fn name(&self) -> &str {
        "max replicas"
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        if self.max == 0 {
            return Verdict::Pass;
        }
        let (svc, _) =
            node::active_counts(cx.host(host), cx.compiled().group, cx.request().group.as_deref().unwrap_or(""));
        (svc + cx.overlay().placed(host) < self.max).into()
    }

    fn describe(&self, _: &Cx<'_>, _: Reason) -> String {
        "max replicas per node limit exceed".into()
    }

    fn host_local(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Request;
    use crate::schedule::Scheduler;
    use crate::snapshot::{Cluster, HostSpec, HostState, InstanceSpec, Overlay};
    use serde_json::json;

    fn cx_parts(cluster: &Cluster, req: &Request) -> crate::request::CompiledRequest {
        req.compile(cluster).unwrap()
    }

    #[test]
    fn wording_is_swarms() {
        assert_eq!(Stage::Ready.wording(1, ""), "1 node not available for new tasks");
        assert_eq!(Stage::Resource.wording(3, ""), "insufficient resources on 3 nodes");
        assert_eq!(Stage::MaxReplicas.wording(7, ""), "max replicas per node limit exceed");
        assert_eq!(Stage::User.wording(2, "rejected by x"), "rejected by x on 2 nodes");
    }

    #[test]
    fn each_filter_rejects_what_swarm_rejects() {
        let cluster = Cluster::builder()
            .host(
                HostSpec::new("ok")
                    .memory_mb(1024.0)
                    .attribute("os", json!("linux"))
                    .attribute("arch", json!("x86_64")),
            )
            .host(
                HostSpec::new("busy")
                    .memory_mb(1024.0)
                    .state(HostState { cordoned: true, ..HostState::default() })
                    .instance(InstanceSpec::new("t1").group("svc").label(node::HOST_PORTS_LABEL, "tcp/80"))
                    .instance(InstanceSpec::new("t2").group("svc").terminating(true)),
            )
            .build()
            .unwrap();
        let (ok, busy) = (HostId(0), HostId(1));
        let req = Request::new(1).group("svc").memory_mb(512.0);
        let compiled = cx_parts(&cluster, &req);
        let mut overlay = Overlay::new();
        let cx = Cx::new(&cluster, &req, &compiled, &overlay, 0);
        assert!(ReadyFilter.check(&cx, ok).is_pass() && !ReadyFilter.check(&cx, busy).is_pass());
        let ports = HostPortFilter::new(vec![HostPort { protocol: "tcp".into(), port: 80 }]);
        assert!(ports.check(&cx, ok).is_pass() && !ports.check(&cx, busy).is_pass());
        let plat = PlatformFilter::new(vec![Platform { os: "linux".into(), arch: "amd64".into() }]);
        assert!(plat.check(&cx, ok).is_pass() && !plat.check(&cx, busy).is_pass());
        let max = MaxReplicasFilter::new(1);
        assert!(!max.check(&cx, busy).is_pass(), "one active task, the terminating one not counted");
        assert!(MaxReplicasFilter::new(2).check(&cx, busy).is_pass());
        assert!(max.check(&cx, ok).is_pass());
        overlay.consume(ok, &compiled.resources);
        overlay.consume(ok, &compiled.resources);
        let cx = Cx::new(&cluster, &req, &compiled, &overlay, 2);
        assert!(!max.check(&cx, ok).is_pass() && !ports.check(&cx, ok).is_pass());
        assert!(!SwarmResourceFilter.check(&cx, ok).is_pass(), "two tasks of 512 used the 1024");
    }

    #[test]
    fn the_filters_compose_with_the_foundation_scheduler() {
        let cluster = Cluster::builder()
            .host(HostSpec::new("a").label("zone", "z1"))
            .host(HostSpec::new("b").label("zone", "z2"))
            .build()
            .unwrap();
        let scheduler = Scheduler::builder()
            .filter(ReadyFilter)
            .filter(ConstraintFilter::new(vec!["node.labels.zone==z2".parse().unwrap()]))
            .filter(MaxReplicasFilter::new(1))
            .build()
            .unwrap();
        let placement = scheduler.schedule(&cluster, &Request::new(2).group("svc")).unwrap();
        assert_eq!(placement.selections.len(), 1);
        assert_eq!(placement.selections[0].host_name, "b");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// Ready's and Resource's chunk checks against their checks host by host, with some
        /// hosts already holding tasks of the batch (the overlay): the same lanes pass, and each
        /// lane dropped is counted once.
        #[test]
        fn chunk_checks_agree_with_the_checks_host_by_host(
            seed in proptest::prelude::any::<u64>(),
            n in 1usize..200,
            memory in 0usize..4,
            gpu in 0usize..3,
            unknown in proptest::bool::weighted(0.1),
            placed in proptest::collection::vec(0usize..200, 0..8),
        ) {
            let cluster = crate::spread::run::tests::cluster(seed, n);
            let mut req = Request::new(1).vcpus(1.0);
            if memory > 0 {
                req = req.memory_mb(1024.0 * (memory - 1) as f64);
            }
            if gpu > 0 {
                req = req.resource("gpu", (gpu - 1) as f64);
            }
            if unknown {
                req = req.resource("fpga", 1.0);
            }
            let compiled = cx_parts(&cluster, &req);
            let mut overlay = Overlay::new();
            for &p in placed.iter().filter(|&&p| p < n) {
                overlay.consume(HostId(p as u32), &compiled.resources);
            }
            let cx = Cx::new(&cluster, &req, &compiled, &overlay, placed.len() as u32);
            for filter in [&ReadyFilter as &dyn Filter, &SwarmResourceFilter] {
                for c in 0..cluster.chunk_count() {
                    let mask = cluster.hot_chunk(c).live;
                    let mut rejections = crate::filter::Rejections::new(false);
                    let pass = filter.check_chunk(&cx, c, mask, &mut rejections);
                    let want = passing_lanes(&cx, filter, c, mask);
                    proptest::prop_assert_eq!(pass, want, "{} chunk {}", filter.name(), c);
                    proptest::prop_assert_eq!(rejections.total(), (mask & !want).count_ones());
                }
            }
        }
    }

    /// The lanes of `mask` in chunk `c` that `filter` passes, asked host by host.
    fn passing_lanes(cx: &Cx<'_>, filter: &dyn Filter, c: usize, mask: u64) -> u64 {
        (0..64)
            .filter(|&lane| mask >> lane & 1 == 1 && filter.check(cx, HostId((c * 64 + lane) as u32)).is_pass())
            .fold(0, |m, lane| m | 1 << lane)
    }
}
