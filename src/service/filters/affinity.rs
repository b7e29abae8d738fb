//! Preferred affinity and anti-affinity: a soft rule.

use crate::id::{HostId, Symbol};
use crate::request::Cx;
use crate::snapshot::{Cluster, Host};
use crate::weigh::Weigher;

/// `placement.preferred-affinity` / `preferred-anti-affinity`: services of the same
/// application the instance prefers to run beside, or away from.
///
/// A host **satisfies** an affinity service when it runs a live (not delayed-shutdown) instance
/// of it, and an anti-affinity service when it runs none. The rule is directional (checked only
/// for the instance being placed) and counts only instances already placed, earlier ones of the
/// same batch included.
///
/// It is soft: [`narrow`](PreferredAffinity::narrow) keeps the candidates that satisfy the
/// **most** listed services, which is never empty when the candidates are not; so it never
/// removes the last hosts. As a [`Weigher`] it scores the number satisfied, for use in a
/// foundation [`Scheduler`](crate::schedule::Scheduler).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreferredAffinity {
    affinity: Vec<String>,
    anti_affinity: Vec<String>,
}

impl PreferredAffinity {
    /// Preferences for services (full `application/service` groups).
    pub fn new(affinity: Vec<String>, anti_affinity: Vec<String>) -> Self {
        PreferredAffinity { affinity, anti_affinity }
    }

    /// Whether there is any preference.
    pub fn is_empty(&self) -> bool {
        self.affinity.is_empty() && self.anti_affinity.is_empty()
    }

    fn symbols(&self, cluster: &Cluster) -> (Vec<Option<Symbol>>, Vec<Option<Symbol>>) {
        let s = cluster.symbols();
        (self.affinity.iter().map(|g| s.get(g)).collect(), self.anti_affinity.iter().map(|g| s.get(g)).collect())
    }

    fn score(host: &Host, aff: &[Option<Symbol>], anti: &[Option<Symbol>]) -> u32 {
        let runs =
            |g: Option<Symbol>| g.is_some_and(|g| host.instances.iter().any(|i| i.group == Some(g) && !i.terminating));
        let a = aff.iter().filter(|&&g| runs(g)).count();
        let b = anti.iter().filter(|&&g| !runs(g)).count();
        (a + b) as u32
    }

    /// How many of the listed services `host` satisfies.
    pub fn satisfied(&self, cluster: &Cluster, host: HostId) -> u32 {
        let (aff, anti) = self.symbols(cluster);
        cluster.host(host).map_or(0, |h| Self::score(h, &aff, &anti))
    }

    /// Keeps the hosts of `candidates` that satisfy the most listed services, in their order.
    /// Computes in O(candidates × (listed services + instances per host)).
    pub fn narrow(&self, cluster: &Cluster, candidates: &mut Vec<HostId>) {
        if self.is_empty() || candidates.is_empty() {
            return;
        }
        let (aff, anti) = self.symbols(cluster);
        let score = |h: HostId| cluster.host(h).map_or(0, |h| Self::score(h, &aff, &anti));
        let scores: Vec<u32> = candidates.iter().map(|&h| score(h)).collect();
        let best = scores.iter().copied().max().unwrap_or(0);
        let mut at = 0;
        candidates.retain(|_| {
            at += 1;
            scores[at - 1] == best
        });
    }
}

impl Weigher for PreferredAffinity {
    fn name(&self) -> &str {
        "preferred affinity"
    }

    fn weigh(&self, cx: &Cx<'_>, host: HostId) -> f64 {
        f64::from(self.satisfied(cx.cluster(), host))
    }
}
