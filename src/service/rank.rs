//! The four-level ranking: fewest instances, in the document's priority order.

use crate::id::{HostId, Symbol};
use crate::snapshot::{Cluster, Host};
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
pub fn best_host(cluster: &Cluster, group: &str, candidates: &[HostId]) -> Option<(HostId, RankKey)> {
    let g = cluster.symbols().get(group);
    candidates.iter().filter_map(|&h| cluster.host(h).map(|host| (RankKey::of(host, g), h))).min().map(|(k, h)| (h, k))
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
