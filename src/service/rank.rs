//! The four-level ranking: fewest instances, in the document's priority order.

use crate::id::{HostId, Symbol};
use crate::request::Cx;
use crate::schedule::SchedulerBuilder;
use crate::snapshot::{Cluster, Host};
use crate::weigh::Weigher;
use serde::{Deserialize, Serialize};

/// A host's ranking key for one service: four counts compared **lexicographically** in this
/// field order (the derived `Ord`), fewest first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RankKey {
    /// 1. Instances of the same service not in delayed shutdown.
    pub same_live: u32,
    /// 2. Instances of the same service in delayed shutdown.
    pub same_delayed: u32,
    /// 3. Instances of any other service (or of no service) not in delayed shutdown.
    pub other_live: u32,
    /// 4. Instances of any other service in delayed shutdown.
    pub other_delayed: u32,
}

impl RankKey {
    /// A key from its four counts, in priority order.
    pub const fn new(same_live: u32, same_delayed: u32, other_live: u32, other_delayed: u32) -> Self {
        RankKey { same_live, same_delayed, other_live, other_delayed }
    }

    /// The key of `host` for the service whose group symbol is `group` (`None`: the service has
    /// no instance anywhere yet, so every instance is "other"). Every instance record on the
    /// host counts; delayed shutdown is the instance's `terminating` flag. Computes in
    /// O(instances on the host).
    pub fn of(host: &Host, group: Option<Symbol>) -> RankKey {
        let mut k = RankKey::default();
        for i in &host.instances {
            let same = group.is_some() && i.group == group;
            match (same, i.terminating) {
                (true, false) => k.same_live += 1,
                (true, true) => k.same_delayed += 1,
                (false, false) => k.other_live += 1,
                (false, true) => k.other_delayed += 1,
            }
        }
        k
    }
}

/// The best of `candidates` for the service `group`: the smallest [`RankKey`], ties to the
/// lowest [`HostId`]. `None` when there is no candidate. Computes in O(candidates × instances
/// per host).
pub(crate) fn best_host(cluster: &Cluster, group: &str, candidates: &[HostId]) -> Option<(HostId, RankKey)> {
    let g = cluster.symbols().get(group);
    candidates.iter().filter_map(|&h| cluster.host(h).map(|host| (RankKey::of(host, g), h))).min().map(|(k, h)| (h, k))
}

/// One of the four ranking levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RankLevel {
    /// Same service, not in delayed shutdown.
    SameLive,
    /// Same service, in delayed shutdown.
    SameDelayed,
    /// Other services, not in delayed shutdown.
    OtherLive,
    /// Other services, in delayed shutdown.
    OtherDelayed,
}

impl RankLevel {
    /// The four levels in priority order.
    pub const ALL: [RankLevel; 4] =
        [RankLevel::SameLive, RankLevel::SameDelayed, RankLevel::OtherLive, RankLevel::OtherDelayed];

    /// The level's name: its [`RankLevelWeigher`]'s, and its terms' in an
    /// [`Explanation`](crate::explain::Explanation) (`same service live` …).
    pub const fn name(self) -> &'static str {
        match self {
            RankLevel::SameLive => "same service live",
            RankLevel::SameDelayed => "same service delayed shutdown",
            RankLevel::OtherLive => "other services live",
            RankLevel::OtherDelayed => "other services delayed shutdown",
        }
    }
}

/// One ranking level as a foundation [`Weigher`]: the negated count (fewest scores highest),
/// with instances placed earlier in the same request ([`Overlay::placed`](crate::snapshot::Overlay::placed))
/// counted as live instances of the service. Four of them in four tiers of a
/// [`Scheduler`](crate::schedule::Scheduler) rank exactly like [`RankKey`], ties going to the lowest host
/// id: see [`ranking_tiers`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankLevelWeigher {
    group: String,
    level: RankLevel,
}

impl RankLevelWeigher {
    /// The weigher for `level` of the service `group` (`application/service`).
    pub fn new(group: impl Into<String>, level: RankLevel) -> Self {
        RankLevelWeigher { group: group.into(), level }
    }
}

impl Weigher for RankLevelWeigher {
    fn name(&self) -> &str {
        self.level.name()
    }

    fn weigh(&self, cx: &Cx<'_>, host: HostId) -> f64 {
        let k = RankKey::of(cx.host(host), cx.cluster().symbols().get(&self.group));
        let count = match self.level {
            RankLevel::SameLive => k.same_live + cx.overlay().placed(host),
            RankLevel::SameDelayed => k.same_delayed,
            RankLevel::OtherLive => k.other_live,
            RankLevel::OtherDelayed => k.other_delayed,
        };
        -f64::from(count)
    }

    fn host_local(&self) -> bool {
        true
    }
}

/// Adds the four ranking levels of the service `group` to `builder` as four tiers, in priority
/// order (the first in the builder's current tier, so start from a builder whose current tier
/// is empty).
///
/// ```
/// use placewise::service::ranking_tiers;
/// use placewise::{Cluster, ComputeFilter, HostSpec, Request, Scheduler};
/// use placewise::snapshot::InstanceSpec;
///
/// let cluster = Cluster::builder()
///     .host(HostSpec::new("busy").instance(InstanceSpec::new("x").group("shop/db")))
///     .host(HostSpec::new("idle"))
///     .build()?;
/// let scheduler = ranking_tiers(Scheduler::builder().filter(ComputeFilter), "shop/web").build()?;
/// let placement = scheduler.schedule(&cluster, &Request::new(1).group("shop/web"))?;
/// assert_eq!(placement.selections[0].host_name, "idle");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn ranking_tiers(builder: SchedulerBuilder, group: &str) -> SchedulerBuilder {
    let mut b = builder;
    for (i, level) in RankLevel::ALL.into_iter().enumerate() {
        if i > 0 {
            b = b.tier();
        }
        b = b.weigher(RankLevelWeigher::new(group, level), 1.0);
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{HostSpec, InstanceSpec};

    fn inst(id: &str, group: &str, terminating: bool) -> InstanceSpec {
        InstanceSpec::new(id).group(group).terminating(terminating)
    }

    #[test]
    fn counts_fall_into_the_four_levels() {
        let c = Cluster::builder()
            .host(
                HostSpec::new("h")
                    .instance(inst("a/s/0", "a/s", false))
                    .instance(inst("a/s/1", "a/s", true))
                    .instance(inst("a/t/0", "a/t", false))
                    .instance(inst("a/t/1", "a/t", true))
                    .instance(inst("a/t/2", "a/t", true))
                    .instance(InstanceSpec::new("loose")),
            )
            .build()
            .unwrap();
        let host = c.host(HostId(0)).unwrap();
        assert_eq!(RankKey::of(host, c.symbols().get("a/s")), RankKey::new(1, 1, 2, 2));
        assert_eq!(RankKey::of(host, None), RankKey::new(0, 0, 3, 3));
    }

    #[test]
    fn priority_order_then_lowest_id() {
        // h0: one other live; h1: one same delayed; h2: two others delayed; h3: like h2.
        let c = Cluster::builder()
            .host(HostSpec::new("h0").instance(inst("x", "a/o", false)).instance(inst("y", "a/o", false)))
            .host(HostSpec::new("h1").instance(inst("z", "a/s", true)))
            .host(HostSpec::new("h2").instance(inst("u", "a/o", true)).instance(inst("v", "a/o", true)))
            .host(HostSpec::new("h3").instance(inst("w", "a/o", true)).instance(inst("q", "a/o", true)))
            .build()
            .unwrap();
        let all: Vec<HostId> = c.host_ids().collect();
        // Same-service delayed (level 2) outweighs any number of other-service instances.
        assert_eq!(best_host(&c, "a/s", &all[..2]).unwrap().0, HostId(0));
        // Other live (level 3) outweighs other delayed (level 4).
        assert_eq!(best_host(&c, "a/s", &[HostId(0), HostId(2)]).unwrap().0, HostId(2));
        // Equal keys: the lowest id.
        assert_eq!(best_host(&c, "a/s", &[HostId(3), HostId(2)]).unwrap().0, HostId(2));
        assert_eq!(best_host(&c, "a/s", &[]), None);
    }
}
