//! Hard spread: maxSkew / minDomains over a label's domains.

use super::constraint::Constraint;
use super::node;
use super::request::{Descriptor, HardSpread, WhenUnsatisfiable};
use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Verdict};
use crate::id::{HostId, Symbol};
use crate::request::{Cx, Prepared};
use crate::snapshot::{Cluster, Overlay};
use smallvec::SmallVec;

const NONE: u32 = u32::MAX;

/// The domains of one hard spread constraint and the service's task count in each.
#[derive(Debug, Clone)]
pub(crate) struct Domains {
    of_host: Vec<u32>,
    counts: Vec<u64>,
    min: u64,
    max_skew: u64,
    min_domains: usize,
    pub(crate) soft: bool,
}

impl Domains {
    /// Domains are the key's values on the hosts `include` admits (Kubernetes'
    /// `nodeAffinityPolicy: Honor`); the service's active tasks on those hosts count.
    /// Computes in O(hosts).
    pub(crate) fn build(
        cluster: &Cluster,
        hard: &HardSpread,
        service: Option<Symbol>,
        name: &str,
        mut include: impl FnMut(HostId) -> bool,
    ) -> Domains {
        let key = match &hard.key {
            Descriptor::NodeLabel(k) => cluster.symbols().get(k),
            Descriptor::EngineLabel(k) => cluster.symbols().get(&format!("{}{k}", node::ENGINE_LABEL_PREFIX)),
            _ => None,
        };
        let engine = matches!(hard.key, Descriptor::EngineLabel(_));
        let mut of_host = vec![NONE; cluster.id_bound()];
        let mut values: Vec<Symbol> = Vec::new();
        let mut counts = Vec::new();
        for (id, host) in cluster.hosts() {
            let Some(value) = key.and_then(|k| host.labels.get(k)) else { continue };
            if (engine && !node::has_engine(host)) || !include(id) {
                continue;
            }
            let d = match values.iter().position(|&v| v == value) {
                Some(d) => d,
                None => {
                    values.push(value);
                    counts.push(0);
                    values.len() - 1
                }
            };
            of_host[id.index()] = d as u32;
            counts[d] += u64::from(node::active_counts(host, service, name).0);
        }
        let mut domains = Domains {
            of_host,
            counts,
            min: 0,
            max_skew: u64::from(hard.max_skew),
            min_domains: hard.min_domains as usize,
            soft: hard.when_unsatisfiable == WhenUnsatisfiable::ScheduleAnyway,
        };
        domains.min = domains.global_min(&domains.counts);
        domains
    }

    fn global_min(&self, counts: &[u64]) -> u64 {
        if counts.len() < self.min_domains {
            0
        } else {
            counts.iter().copied().min().unwrap_or(0)
        }
    }

    fn domain(&self, host: HostId) -> Option<usize> {
        self.of_host.get(host.index()).copied().filter(|&d| d != NONE).map(|d| d as usize)
    }

    /// Whether one more task on `host` keeps the skew. O(1).
    pub(crate) fn allows(&self, host: HostId) -> bool {
        self.domain(host).is_some_and(|d| self.counts[d] + 1 - self.min <= self.max_skew)
    }

    /// Records a task placed on `host`. O(domains).
    pub(crate) fn record(&mut self, host: HostId) {
        if let Some(d) = self.domain(host) {
            self.counts[d] += 1;
            self.min = self.global_min(&self.counts);
        }
    }

    /// [`allows`](Domains::allows) with the overlay's placements added. O(touched + domains).
    fn allows_with(&self, host: HostId, overlay: &Overlay) -> bool {
        let Some(d) = self.domain(host) else { return false };
        let mut counts: SmallVec<[u64; 16]> = SmallVec::from_slice(&self.counts);
        for h in overlay.touched() {
            if let Some(x) = self.domain(h) {
                counts[x] += u64::from(overlay.placed(h));
            }
        }
        counts[d] + 1 - self.global_min(&counts) <= self.max_skew
    }
}

/// A [`HardSpread`] as a foundation [`Filter`], for use in any
/// [`Scheduler`](crate::schedule::Scheduler): the request's group is the service whose tasks count, and
/// the request's earlier instances (the overlay) count too.
///
/// The foundation scheduler assumes filters are monotone within a request, which a skew limit
/// is not (a task elsewhere can make a rejected host acceptable again), so there the filter
/// is exact for one instance per request; the spread engine re-checks every candidate and
/// applies the constraint for whole batches. `ScheduleAnyway` constraints pass every host here
/// (a filter cannot prefer); the spread engine applies them as a preference.
///
/// ```
/// use placewise::spread::{HardSpread, SkewFilter};
/// use placewise::{Cluster, HostSpec, Request, Scheduler};
/// use placewise::snapshot::InstanceSpec;
///
/// let cluster = Cluster::builder()
///     .host(HostSpec::new("a").label("zone", "z1").instance(InstanceSpec::new("t").group("web")))
///     .host(HostSpec::new("b").label("zone", "z2").instance(InstanceSpec::new("u").group("web")))
///     .host(HostSpec::new("c").label("zone", "z3"))
///     .build()?;
/// let scheduler = Scheduler::builder().filter(SkewFilter::new(HardSpread::new("zone", 1))).build()?;
/// let placement = scheduler.schedule(&cluster, &Request::new(1).group("web"))?;
/// assert_eq!(placement.selections[0].host_name, "c");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct SkewFilter {
    hard: HardSpread,
    honor: Vec<Constraint>,
    name: String,
}

impl SkewFilter {
    /// A filter for `hard`; every host with the key forms or joins a domain.
    pub fn new(hard: HardSpread) -> SkewFilter {
        let name = format!("hard spread over {}", hard.key);
        SkewFilter { hard, honor: Vec::new(), name }
    }

    /// Only hosts satisfying these constraints form domains and count tasks (Kubernetes'
    /// `nodeAffinityPolicy: Honor`).
    pub fn honoring(mut self, constraints: Vec<Constraint>) -> SkewFilter {
        self.honor = constraints;
        self
    }

    fn domains(&self, cx: &Cx<'_>) -> Domains {
        let cluster = cx.cluster();
        Domains::build(cluster, &self.hard, cx.compiled().group, cx.request().group.as_deref().unwrap_or(""), |h| {
            self.honor.iter().all(|c| c.matches(cluster, h))
        })
    }
}

impl Filter for SkewFilter {
    fn name(&self) -> &str {
        &self.name
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(Some(Box::new(self.domains(cx))))
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        if self.hard.when_unsatisfiable == WhenUnsatisfiable::ScheduleAnyway {
            return Verdict::Pass;
        }
        let mut slot = None;
        let domains = cx.state_or(&mut slot, || self.domains(cx));
        domains.allows_with(host, cx.overlay()).into()
    }

    fn describe(&self, _: &Cx<'_>, _: Reason) -> String {
        format!("{} would exceed max skew {}", self.name, self.hard.max_skew)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{HostSpec, InstanceSpec};

    fn cluster() -> Cluster {
        Cluster::builder()
            .host(HostSpec::new("a").label("zone", "z1").instance(InstanceSpec::new("t1").group("s")))
            .host(HostSpec::new("b").label("zone", "z2"))
            .host(HostSpec::new("c"))
            .build()
            .unwrap()
    }

    #[test]
    fn skew_counts_tasks_per_domain_and_excludes_unlabelled_nodes() {
        let c = cluster();
        let s = c.symbols().get("s");
        let mut d = Domains::build(&c, &HardSpread::new("zone", 1), s, "s", |_| true);
        let (a, b, x) = (HostId(0), HostId(1), HostId(2));
        assert!(!d.allows(a), "z1 would be 2 against 0");
        assert!(d.allows(b));
        assert!(!d.allows(x), "no zone label: no domain");
        d.record(b);
        assert!(d.allows(a) && d.allows(b));
    }

    #[test]
    fn min_domains_forces_new_domains() {
        let c = cluster();
        let s = c.symbols().get("s");
        let d = Domains::build(&c, &HardSpread::new("zone", 1).min_domains(3), s, "s", |_| true);
        assert!(d.allows(HostId(1)) && !d.allows(HostId(0)));
        let d = Domains::build(&c, &HardSpread::new("zone", 2).min_domains(3), s, "s", |_| true);
        assert!(d.allows(HostId(0)), "1 + 1 - 0 = 2 ≤ 2");
    }

    #[test]
    fn honoring_constraints_drops_domains() {
        let c = cluster();
        let s = c.symbols().get("s");
        let not_z2: Constraint = "node.labels.zone!=z2".parse().unwrap();
        let d = Domains::build(&c, &HardSpread::new("zone", 1), s, "s", |h| not_z2.matches(&c, h));
        assert!(d.allows(HostId(0)), "z2 is not a domain, so z1 is the minimum");
    }
}
