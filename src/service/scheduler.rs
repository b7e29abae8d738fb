//! The service scheduler: reconciles services with the snapshot, one instance at a time.

use super::error::ServiceError;
use super::failure::Scope;
use super::filters::{
    ContainerLimitsFilter, DeviceFilter, HostLabelsFilter, IngressFilter, InstanceCountFilter, PreferredAffinity,
    VolumesFilter,
};
use super::rank::{best_host, RankKey, RankLevel};
use super::request::ServiceRequest;
use super::site::{IngressAllocation, Site, CONTAINER_LAYER_MB, GPU, INGRESS_IP};
use super::spec::{parse_instance_index, ServiceMode, ServiceSpec};
use crate::explain::{Explanation, HostVerdict, RankedHost, RejectionCount, WeightTerm};
use crate::filter::{Filter, FilterChain, Rejections};
use crate::hooks::{hook_methods, Hooks};
use crate::id::HostId;
use crate::request::{Cx, Request};
use crate::snapshot::{check_attributes, AttributeWarning, Cluster, ClusterEvent, InstanceSpec, Overlay};
use crate::weigh::{normalize, WeighPass, Weigher};
use serde::Serialize;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// What happened to one instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "decision")]
#[non_exhaustive]
pub enum Decision {
    /// Already on `host`, which still passes the filters: it stays (sticky).
    Kept {
        /// Instance id.
        instance: String,
        /// Its host.
        host: String,
    },
    /// An unassigned instance placed on `host`, the best by `key`.
    Placed {
        /// Instance id.
        instance: String,
        /// The chosen host.
        host: String,
        /// The host's ranking key when chosen.
        key: RankKey,
    },
    /// Taken off `from` (its host failed, was removed, or no longer passes the filters) and
    /// placed on `to`.
    Moved {
        /// Instance id.
        instance: String,
        /// The old host.
        from: String,
        /// The new host.
        to: String,
        /// The new host's ranking key when chosen.
        key: RankKey,
    },
    /// Stopped: beyond the replica count, a duplicate, or a one-per-host instance whose host no
    /// longer matches.
    Removed {
        /// Instance id.
        instance: String,
        /// Its host.
        host: String,
    },
}

/// The filter name under which hosts that are down, disabled, cordoned, evicting or being
/// failed over are counted in an [`Explanation`].
const HOST_FILTER: &str = "host";
/// The reason text of [`HOST_FILTER`].
const HOST_REASON: &str = "host not schedulable";

/// An instance that cannot be scheduled: no host passes the filters. It stays unassigned; the
/// caller retries on the triggers listed in the [module docs](super#unschedulable-instances).
///
/// Displays as `shop/web/0 cannot be scheduled: 0/3 hosts are available: 2 insufficient
/// memory, 1 host not schedulable`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Unschedulable {
    /// Instance id.
    pub instance: String,
    /// The host it was taken off, if it had one.
    pub previous_host: Option<String>,
    /// Why no host could take it: [`hosts`](Explanation::hosts) in the site,
    /// [`available`](Explanation::available) 0, [`instance`](Explanation::instance) the
    /// instance's index, the [`rejections`](Explanation::rejections) (hosts that are not
    /// schedulable or being failed over first, under the filter `host`, then the filters'
    /// rejections, most hosts first, then in filter order and reason code), every host's verdict
    /// when the request [asked](ServiceRequest::explain), and as
    /// [`message`](Explanation::message) this instance's [`Display`](fmt::Display) text.
    pub explanation: Explanation,
}

impl fmt::Display for Unschedulable {
    /// `shop/web/0 cannot be scheduled: 0/3 hosts are available: 2 insufficient memory, 1 …`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} cannot be scheduled: {}", self.instance, self.explanation)
    }
}

/// The result of a scheduling call: decisions, failures, the events that carry them out, and
/// the snapshot after those events. Nothing is applied to the caller's snapshot.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServiceOutcome {
    /// Every instance's decision, in processing order (services by application then name,
    /// instances by index).
    pub decisions: Vec<Decision>,
    /// Instances that could not be placed.
    pub unschedulable: Vec<Unschedulable>,
    /// `InstanceRemoved` / `InstancePlaced` events that turn the input snapshot into
    /// [`cluster`](ServiceOutcome::cluster), in order.
    pub events: Vec<ClusterEvent>,
    /// The snapshot after the events.
    pub cluster: Cluster,
    /// The call's explanation, as the other engines give one: the first
    /// [unschedulable](ServiceOutcome::unschedulable) instance's, else that of the last instance
    /// placed by the general path (the last pending instance of the last replicated service that
    /// placed one), else, when nothing was placed that way, the site's hosts with those not
    /// schedulable as the only rejection.
    pub explanation: Explanation,
}

/// One move of a rebalance plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct RebalanceMove {
    /// Instance id.
    pub instance: String,
    /// Its current host.
    pub from: String,
    /// Where it would go.
    pub to: String,
}

/// The service scheduler. Stateless: every call is a pure function of the snapshot, the
/// request and (for [`reschedule`](ServiceScheduler::reschedule)) the failed host.
///
/// [`ServiceScheduler::new`] is the engine's own rules; [`ServiceScheduler::builder`] adds the
/// caller's [`Filter`]s and [`Weigher`]s (see the [module docs](super#caller-filters-and-weighers)).
/// See the [module docs](super) for the rules and the decisions behind them.
#[derive(Clone, Default)]
pub struct ServiceScheduler {
    filters: Vec<Arc<dyn Filter>>,
    weighers: Vec<(Arc<dyn Weigher>, f64)>,
}

impl fmt::Debug for ServiceScheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let filters: Vec<&str> = self.filters.iter().map(|x| x.name()).collect();
        let weighers: Vec<(&str, f64)> = self.weighers.iter().map(|(w, m)| (w.name(), *m)).collect();
        f.debug_struct("ServiceScheduler").field("filters", &filters).field("weighers", &weighers).finish()
    }
}

/// Builds a [`ServiceScheduler`] with the caller's filters and weighers.
///
/// ```
/// use placewise::service::{EdgeHost, IngressAllocation, ServiceRequest, ServiceScheduler, ServiceSpec, Site};
/// use placewise::{filter_fn, weigher_fn, Cluster, Cx, HostId};
///
/// let cluster = Cluster::builder()
///     .host(EdgeHost::new("e0").memory_mb(1024.0).build())
///     .host(EdgeHost::new("e1").memory_mb(1024.0).label("maintenance", "soon").build())
///     .host(EdgeHost::new("e2").memory_mb(1024.0).build())
///     .build()?;
/// let scheduler = ServiceScheduler::builder()
///     .filter(filter_fn("no maintenance", |cx: &Cx<'_>, h| cx.cluster().label(h, "maintenance").is_none()))
///     .weigher(weigher_fn("highest id", |_: &Cx<'_>, h: HostId| f64::from(h.0)), 1.0)
///     .build()?;
/// let site = Site::new(&cluster, IngressAllocation::Dhcp)?;
/// let out = scheduler.schedule(&cluster, &ServiceRequest::new(site, [ServiceSpec::replicated("shop", "web", 1)]))?;
/// // e0 and e2 rank equal (no instances): the caller's weigher breaks the tie.
/// assert!(out.cluster.hosts().any(|(id, h)| h.has_instance("shop/web/0") && out.cluster.host_name(id) == "e2"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct ServiceSchedulerBuilder {
    hooks: Hooks,
}

/// The caller's filters are hard filters, run after the engine's own filters and before the
/// even distribution's count rule; the caller's weighers break ties between the hosts of the
/// smallest [`RankKey`].
impl ServiceSchedulerBuilder {
    hook_methods!(hooks);

    /// Validates and builds.
    ///
    /// # Errors
    ///
    /// [`ServiceError::Build`] holding [`BuildError::NonFiniteMultiplier`](crate::error::BuildError::NonFiniteMultiplier) for a multiplier that is not
    /// finite.
    pub fn build(self) -> Result<ServiceScheduler, ServiceError> {
        let (filters, tiers) = self.hooks.into_parts().map_err(|error| ServiceError::Build { error })?;
        Ok(ServiceScheduler {
            filters: filters.into_iter().map(Arc::from).collect(),
            weighers: tiers.into_iter().flatten().map(|(w, m)| (Arc::from(w), m)).collect(),
        })
    }
}

/// The hard filters of one service, with the count rule last when present.
struct Filters {
    list: Vec<Box<dyn Filter>>,
    volumes: Option<VolumesFilter>,
    soft: PreferredAffinity,
}

impl Filters {
    /// The engine's filters for `spec`, then `caller`'s.
    fn new(spec: &ServiceSpec, site: &Arc<Site>, caller: &[Arc<dyn Filter>]) -> Filters {
        let mut list: Vec<Box<dyn Filter>> = Vec::new();
        if let Some(e) = &spec.placement.match_host_labels {
            list.push(Box::new(HostLabelsFilter::new(e.clone())));
        }
        if !spec.devices.is_empty() || spec.gpus > 0 {
            list.push(Box::new(DeviceFilter::new(site.clone(), spec.devices.clone(), spec.gpus)));
        }
        let l = spec.limits;
        if l.memory_mb > 0.0 || l.cpus > 0.0 || l.container_layer_mb > 0.0 {
            list.push(Box::new(ContainerLimitsFilter::new(l)));
        }
        let volumes = (!spec.volumes.is_empty()).then(|| VolumesFilter::new(site.clone(), spec.volumes.clone()));
        if let Some(v) = &volumes {
            list.push(Box::new(v.clone()));
        }
        if spec.ingress {
            list.push(Box::new(IngressFilter::new(site.clone())));
        }
        list.extend(caller.iter().map(|f| Box::new(Arc::clone(f)) as Box<dyn Filter>));
        let group = |s: &String| format!("{}/{s}", spec.application);
        let soft = PreferredAffinity::new(
            spec.placement.preferred_affinity.iter().map(group).collect(),
            spec.placement.preferred_anti_affinity.iter().map(group).collect(),
        );
        Filters { list, volumes, soft }
    }
}

/// Which hosts a filtering pass looks at.
#[derive(Clone, Copy)]
enum Scan {
    /// Every schedulable host except `avoid`.
    Schedulable(Option<HostId>),
    /// This one host, whatever its state (the sticky check).
    Only(HostId),
}

/// What explanation a filtering pass builds.
#[derive(Clone, Copy)]
struct Explain {
    /// Also when some host passes (else only when none does).
    always: bool,
    /// With every host's verdict.
    verdicts: bool,
    /// The instance's index, for [`Explanation::instance`].
    instance: u32,
}

/// Runs `filters` over the hosts of `scan`; returns the passing hosts and, when `explain` is
/// given and no host passes (or it asks always), the explanation.
fn run_filters(
    cluster: &Cluster,
    filters: &[Box<dyn Filter>],
    scan: Scan,
    explain: Option<Explain>,
) -> Result<(Vec<HostId>, Option<Explanation>), ServiceError> {
    let request = Request::new(1);
    let prepare = |error| ServiceError::Prepare { error };
    let compiled = request.compile(cluster).map_err(prepare)?;
    let overlay = Overlay::new();
    let cx = Cx::new(cluster, &request, &compiled, &overlay, 0);
    let chain = FilterChain::prepare(filters, &cx).map_err(prepare)?;
    let mut rejections = Rejections::new(explain.is_some_and(|e| e.verdicts));
    let mut out = Vec::new();
    let mut down = 0u32;
    let chunks = match scan {
        Scan::Only(h) => (h.index() >> 6)..(h.index() >> 6) + 1,
        Scan::Schedulable(_) => 0..cluster.chunk_count(),
    };
    for chunk in chunks {
        if chunk >= cluster.chunk_count() {
            break;
        }
        let hot = cluster.hot_chunk(chunk);
        let mut mask = match scan {
            Scan::Only(h) => hot.live & (1u64 << (h.index() & 63)),
            Scan::Schedulable(avoid) => {
                let mut m = hot.live & hot.schedulable;
                if let Some(a) = avoid.filter(|a| a.index() >> 6 == chunk) {
                    m &= !(1u64 << (a.index() & 63));
                }
                down += (hot.live & !m).count_ones();
                m
            }
        };
        mask = chain.judge_chunk(&cx, chunk, mask, &mut rejections);
        while mask != 0 {
            out.push(HostId((chunk as u32) << 6 | mask.trailing_zeros()));
            mask &= mask - 1;
        }
    }
    if let Some(error) = rejections.take_error() {
        return Err(ServiceError::Prepare { error });
    }
    let explanation = match explain {
        Some(e) if e.always || out.is_empty() => Some(explanation(&cx, &chain, scan, &rejections, down, &out, e)),
        _ => None,
    };
    Ok((out, explanation))
}

/// The explanation of one filtering pass: hosts not schedulable first, then the filters'
/// rejections, most hosts first, then in filter order and reason code; every host's verdict,
/// in host order, when asked.
fn explanation(
    cx: &Cx<'_>,
    chain: &FilterChain<'_>,
    scan: Scan,
    rejections: &Rejections,
    down: u32,
    passed: &[HostId],
    explain: Explain,
) -> Explanation {
    let cluster = cx.cluster();
    let mut out = Explanation::new(cluster.len() as u32);
    out.available = passed.len() as u32;
    out.instance = explain.instance;
    if down > 0 {
        out.rejections.push(host_rejection(down));
    }
    let mut counts = rejections.counts().to_vec();
    counts.sort_by_key(|&(i, reason, hosts)| (std::cmp::Reverse(hosts), i, reason));
    for (i, reason, count) in counts {
        out.rejections.push(RejectionCount {
            filter: chain.name(i).to_owned(),
            reason: chain.describe(cx, i, reason),
            count,
        });
    }
    if let Some(rejected) = rejections.hosts() {
        let mut rejected = rejected.to_vec();
        rejected.sort_by_key(|r| r.host);
        let excluded = |h: HostId| match scan {
            Scan::Schedulable(avoid) => avoid == Some(h) || !cluster.is_schedulable(h),
            Scan::Only(only) => only != h,
        };
        for (id, host) in cluster.hosts() {
            let (filter, reason) = if excluded(id) {
                (Some(HOST_FILTER.to_owned()), Some(vec![HOST_REASON.to_owned()]))
            } else if let Ok(i) = rejected.binary_search_by_key(&id, |r| r.host) {
                let r = rejected[i];
                (Some(chain.name(r.filter).to_owned()), Some(chain.reasons(cx, r.filter, id, r.reason)))
            } else {
                (None, None)
            };
            let reasons = reason.unwrap_or_default();
            out.verdicts.push(HostVerdict {
                host: host.name.to_string(),
                passed: filter.is_none(),
                instance: filter.is_some().then_some(explain.instance),
                filter,
                reason: reasons.first().cloned(),
                reasons,
                disk: None,
            });
        }
    }
    out
}

/// The rejection of `count` hosts that are not schedulable.
fn host_rejection(count: u32) -> RejectionCount {
    RejectionCount { filter: HOST_FILTER.to_owned(), reason: HOST_REASON.to_owned(), count }
}

/// A scheduling call in progress: a working snapshot and what was decided.
struct Work<'s> {
    /// The caller's filters and weighers.
    scheduler: &'s ServiceScheduler,
    /// Whether explanations list every host's verdict.
    verdicts: bool,
    /// How many of the best hosts an explained placement lists with their terms.
    top: usize,
    /// The weighing pass of the caller's weighers.
    weigh: WeighPass,
    /// The explanation of the last placement by the general path.
    last: Option<Explanation>,
    site: Arc<Site>,
    cluster: Cluster,
    events: Vec<ClusterEvent>,
    decisions: Vec<Decision>,
    unschedulable: Vec<Unschedulable>,
    avoid: Option<HostId>,
    /// Instances taken off a host in this call, by id: that host's name.
    moved_from: BTreeMap<String, String>,
}

impl<'s> Work<'s> {
    fn new(scheduler: &'s ServiceScheduler, cluster: &Cluster, request: &ServiceRequest) -> Work<'s> {
        Work {
            scheduler,
            verdicts: request.explain.verdicts,
            top: request.explain.top as usize,
            weigh: WeighPass::new(),
            last: None,
            site: Arc::clone(&request.site),
            cluster: cluster.clone(),
            events: Vec::new(),
            decisions: Vec::new(),
            unschedulable: Vec::new(),
            avoid: None,
            moved_from: BTreeMap::new(),
        }
    }

    fn apply(&mut self, event: ClusterEvent) -> Result<(), ServiceError> {
        self.cluster = self.cluster.apply(&event).map_err(|e| ServiceError::Snapshot { error: e })?;
        self.events.push(event);
        Ok(())
    }

    fn remove(&mut self, host: HostId, id: &str) -> Result<(), ServiceError> {
        let host = self.cluster.host_name(host).to_owned();
        self.apply(ClusterEvent::InstanceRemoved { host, instance: id.to_owned() })
    }

    /// Live (not delayed-shutdown) instances of `group`: `(id, host)`, by host id then position.
    fn instances_of(&self, group: &str) -> Vec<(String, HostId)> {
        let Some(g) = self.cluster.symbols().get(group) else { return Vec::new() };
        let mut out = Vec::new();
        for (id, host) in self.cluster.hosts() {
            for i in &host.instances {
                if i.group == Some(g) && !i.terminating {
                    out.push((i.id.to_string(), id));
                }
            }
        }
        out
    }

    /// Whether the instance `id` on `host` still passes `filters` there, judged with its own
    /// use released.
    fn still_fits(&self, filters: &Filters, host: HostId, id: &str) -> Result<bool, ServiceError> {
        let released = self
            .cluster
            .apply(&ClusterEvent::InstanceRemoved {
                host: self.cluster.host_name(host).to_owned(),
                instance: id.to_owned(),
            })
            .map_err(|e| ServiceError::Snapshot { error: e })?;
        Ok(!run_filters(&released, &filters.list, Scan::Only(host), None)?.0.is_empty())
    }

    /// The instance record for `spec` on `host`, with its volumes assigned there.
    fn instance_spec(&self, spec: &ServiceSpec, filters: &Filters, id: &str, host: HostId) -> InstanceSpec {
        let mut use_: BTreeMap<String, f64> = BTreeMap::new();
        let mut add = |k: &str, v: f64| {
            if v > 0.0 {
                *use_.entry(k.to_owned()).or_insert(0.0) += v;
            }
        };
        add("memory_mb", spec.limits.memory_mb);
        add("vcpus", spec.limits.cpus);
        add(CONTAINER_LAYER_MB, spec.limits.container_layer_mb);
        add(GPU, f64::from(spec.gpus));
        if spec.ingress
            && matches!(self.site.ingress(), IngressAllocation::HostPools | IngressAllocation::SitePool { .. })
        {
            add(INGRESS_IP, 1.0);
        }
        if let Some(v) = &filters.volumes {
            let request = Request::new(1);
            let overlay = Overlay::new();
            if let Ok(compiled) = request.compile(&self.cluster) {
                let cx = Cx::new(&self.cluster, &request, &compiled, &overlay, 0);
                // The host passed this same filter a moment ago, so the assignment exists.
                for (r, size) in v.assign(&cx, host).unwrap_or_default() {
                    add(self.cluster.resource_kinds().name(r), size);
                }
            }
        }
        let mut s = InstanceSpec::new(id).group(spec.group());
        s.resources = use_;
        s
    }

    fn place(
        &mut self,
        spec: &ServiceSpec,
        filters: &Filters,
        id: String,
        host: HostId,
        key: RankKey,
    ) -> Result<(), ServiceError> {
        let instance = self.instance_spec(spec, filters, &id, host);
        let name = self.cluster.host_name(host).to_owned();
        self.apply(ClusterEvent::InstancePlaced { host: name.clone(), instance })?;
        self.decisions.push(match self.moved_from.remove(&id) {
            Some(from) => Decision::Moved { instance: id, from, to: name, key },
            None => Decision::Placed { instance: id, host: name, key },
        });
        Ok(())
    }

    fn service(&mut self, spec: &ServiceSpec) -> Result<(), ServiceError> {
        let group = spec.group();
        let mut filters = Filters::new(spec, &self.site, &self.scheduler.filters);
        let existing = self.instances_of(&group);
        let replicas = match spec.mode {
            ServiceMode::Replicated(n) => n,
            ServiceMode::OnePerMatchingHost => return self.per_host(spec, &filters, existing),
        };
        // Sticky: every assigned instance stays while its host passes the hard filters.
        let mut present = vec![false; replicas as usize];
        for (id, host) in existing {
            let slot = parse_instance_index(&group, &id).filter(|&i| i < replicas && !present[i as usize]);
            let Some(i) = slot else {
                let name = self.cluster.host_name(host).to_owned();
                self.remove(host, &id)?;
                self.decisions.push(Decision::Removed { instance: id, host: name });
                continue;
            };
            if self.still_fits(&filters, host, &id)? {
                present[i as usize] = true;
                let name = self.cluster.host_name(host).to_owned();
                self.decisions.push(Decision::Kept { instance: id, host: name });
            } else {
                self.moved_from.insert(id.clone(), self.cluster.host_name(host).to_owned());
                self.remove(host, &id)?;
            }
        }
        let pending: Vec<u32> = (0..replicas).filter(|&i| !present[i as usize]).collect();
        if pending.is_empty() {
            return Ok(());
        }
        // Even distribution: at most ceil(replicas / eligible hosts) per host, for new placements.
        let eligible = run_filters(&self.cluster, &filters.list, Scan::Schedulable(self.avoid), None)?.0.len() as u32;
        let cap = replicas.div_ceil(eligible.max(1));
        filters.list.push(Box::new(InstanceCountFilter::new(group.clone(), cap)));
        let last = pending.last().copied();
        for i in pending {
            let id = spec.instance_id(i);
            let explain = Explain { always: Some(i) == last, verdicts: self.verdicts, instance: i };
            let (mut candidates, explanation) =
                run_filters(&self.cluster, &filters.list, Scan::Schedulable(self.avoid), Some(explain))?;
            filters.soft.narrow(&self.cluster, &mut candidates);
            match self.best(&group, &candidates)? {
                Some((host, key)) => {
                    if let Some(mut e) = explanation {
                        if self.top > 0 {
                            e.top = self.top(&group, &candidates)?;
                        }
                        self.last = Some(e);
                    }
                    self.place(spec, &filters, id, host, key)?;
                }
                None => {
                    let previous_host = self.moved_from.remove(&id);
                    let mut u = Unschedulable {
                        instance: id,
                        previous_host,
                        explanation: explanation.unwrap_or_else(|| Explanation::new(self.cluster.len() as u32)),
                    };
                    u.explanation.message = Some(u.to_string());
                    self.unschedulable.push(u);
                }
            }
        }
        Ok(())
    }

    /// The best of `candidates` for the service `group`: the smallest [`RankKey`]; among the
    /// hosts of that key, the caller's weighers' highest score when there are weighers; then
    /// the lowest host id.
    fn best(&mut self, group: &str, candidates: &[HostId]) -> Result<Option<(HostId, RankKey)>, ServiceError> {
        let best = best_host(&self.cluster, group, candidates);
        let Some((_, key)) = best.filter(|_| !self.scheduler.weighers.is_empty()) else { return Ok(best) };
        let g = self.cluster.symbols().get(group);
        let cluster = &self.cluster;
        let tied: Vec<HostId> =
            candidates.iter().copied().filter(|&h| cluster.host(h).is_some_and(|r| RankKey::of(r, g) == key)).collect();
        if tied.len() < 2 {
            return Ok(best);
        }
        let request = Request::new(1);
        let prepare = |error| ServiceError::Prepare { error };
        let compiled = request.compile(cluster).map_err(prepare)?;
        let overlay = Overlay::new();
        let cx = Cx::new(cluster, &request, &compiled, &overlay, 0);
        let mut scores = vec![0.0; tied.len()];
        self.weigh.score(&self.scheduler.weighers, &cx, &tied, &mut scores).map_err(prepare)?;
        let pick = (0..tied.len()).min_by(|&a, &b| by_score(scores[a], scores[b])).unwrap_or(0);
        Ok(Some((tied[pick], key)))
    }

    /// The best [`top`](Work::top) of `candidates` in the order [`best`](Work::best) picks
    /// from, each with its four rank levels (tiers 0 to 3: the negated counts, not normalised)
    /// and, for the hosts of the smallest key when the caller has weighers, every caller
    /// weigher's term (tier 4; other hosts score 0 there).
    fn top(&mut self, group: &str, candidates: &[HostId]) -> Result<Vec<RankedHost>, ServiceError> {
        let cluster = &self.cluster;
        let g = cluster.symbols().get(group);
        let mut keyed: Vec<(RankKey, HostId)> =
            candidates.iter().filter_map(|&h| cluster.host(h).map(|r| (RankKey::of(r, g), h))).collect();
        keyed.sort_unstable();
        let tied = keyed.iter().take_while(|k| Some(k.0) == keyed.first().map(|f| f.0)).count();
        let weighers = &self.scheduler.weighers;
        let mut caller: Vec<(f64, Vec<WeightTerm>)> = vec![(0.0, Vec::new()); tied];
        if !weighers.is_empty() && tied >= 2 {
            let hosts: Vec<HostId> = keyed[..tied].iter().map(|k| k.1).collect();
            let request = Request::new(1);
            let prepare = |error| ServiceError::Prepare { error };
            let compiled = request.compile(cluster).map_err(prepare)?;
            let overlay = Overlay::new();
            let cx = Cx::new(cluster, &request, &compiled, &overlay, 0);
            let mut raw = vec![0.0; tied];
            let mut weighted = vec![0.0; tied];
            for (weigher, multiplier) in weighers {
                let state = weigher.prepare(&cx).map_err(prepare)?;
                weigher.weigh_batch(&cx.with_state(state.as_deref()), &hosts, &mut raw);
                let mut normalized = raw.clone();
                normalize(&mut normalized, weigher.bounds());
                weighted.fill(0.0);
                let one = [(Arc::clone(weigher), *multiplier)];
                self.weigh.score(&one, &cx, &hosts, &mut weighted).map_err(prepare)?;
                for (i, (sum, terms)) in caller.iter_mut().enumerate() {
                    *sum += weighted[i];
                    terms.push(WeightTerm {
                        tier: 4,
                        weigher: weigher.name().to_owned(),
                        raw: raw[i],
                        normalized: normalized[i],
                        multiplier: *multiplier,
                        weighted: weighted[i],
                    });
                }
            }
            let mut order: Vec<usize> = (0..tied).collect();
            order.sort_by(|&a, &b| by_score(caller[a].0, caller[b].0));
            let sorted: Vec<(RankKey, HostId)> = order.iter().map(|&i| keyed[i]).collect();
            keyed[..tied].copy_from_slice(&sorted);
            caller = order.into_iter().map(|i| std::mem::take(&mut caller[i])).collect();
        }
        let out = keyed
            .iter()
            .take(self.top)
            .enumerate()
            .map(|(i, &(key, h))| {
                let counts = [key.same_live, key.same_delayed, key.other_live, key.other_delayed];
                let mut scores: Vec<f64> = counts.iter().map(|&c| -f64::from(c)).collect();
                let mut terms: Vec<WeightTerm> = RankLevel::ALL
                    .iter()
                    .zip(counts)
                    .enumerate()
                    .map(|(tier, (level, count))| WeightTerm {
                        tier: tier as u32,
                        weigher: level.name().to_owned(),
                        raw: f64::from(count),
                        normalized: f64::from(count),
                        multiplier: -1.0,
                        weighted: -f64::from(count),
                    })
                    .collect();
                if !weighers.is_empty() {
                    let (sum, caller_terms) = caller.get_mut(i).map(std::mem::take).unwrap_or_default();
                    scores.push(sum);
                    terms.extend(caller_terms);
                }
                RankedHost { host: cluster.host_name(h).to_owned(), disk: None, scores, terms }
            })
            .collect();
        Ok(out)
    }

    /// One instance on every schedulable host passing the filters; instances are bound to their
    /// host: kept while it passes, removed (never moved) when it does not.
    fn per_host(
        &mut self,
        spec: &ServiceSpec,
        filters: &Filters,
        existing: Vec<(String, HostId)>,
    ) -> Result<(), ServiceError> {
        let group = spec.group();
        let mut covered = vec![false; self.cluster.id_bound()];
        let mut next = 0u32;
        for (id, _) in &existing {
            if let Some(i) = parse_instance_index(&group, id) {
                next = next.max(i.saturating_add(1));
            }
        }
        for (id, host) in existing {
            let name = self.cluster.host_name(host).to_owned();
            if !covered[host.index()] && self.still_fits(filters, host, &id)? {
                covered[host.index()] = true;
                self.decisions.push(Decision::Kept { instance: id, host: name });
            } else {
                self.remove(host, &id)?;
                self.decisions.push(Decision::Removed { instance: id, host: name });
            }
        }
        let hosts: Vec<HostId> = self.cluster.host_ids().collect();
        for host in hosts {
            if covered[host.index()] || self.avoid == Some(host) || !self.cluster.is_schedulable(host) {
                continue;
            }
            let Some(record) = self.cluster.host(host) else { continue };
            if !run_filters(&self.cluster, &filters.list, Scan::Only(host), None)?.0.is_empty() {
                let key = RankKey::of(record, self.cluster.symbols().get(&group));
                self.place(spec, filters, spec.instance_id(next), host, key)?;
                next = next.saturating_add(1);
            }
        }
        Ok(())
    }

    fn finish(mut self) -> ServiceOutcome {
        // Taken off a failed host but not wanted any more (beyond the replica count, or a
        // duplicate of a kept instance): stopped.
        for (instance, host) in std::mem::take(&mut self.moved_from) {
            self.decisions.push(Decision::Removed { instance, host });
        }
        let explanation = match (self.unschedulable.first(), self.last) {
            (Some(u), _) => u.explanation.clone(),
            (None, Some(last)) => last,
            (None, None) => {
                let mut e = Explanation::new(self.cluster.len() as u32);
                let down = (0..self.cluster.chunk_count())
                    .map(|c| {
                        let hot = self.cluster.hot_chunk(c);
                        (hot.live & !hot.schedulable).count_ones()
                    })
                    .sum::<u32>();
                if down > 0 {
                    e.available -= down;
                    e.rejections.push(host_rejection(down));
                }
                e
            }
        };
        ServiceOutcome {
            decisions: self.decisions,
            unschedulable: self.unschedulable,
            events: self.events,
            cluster: self.cluster,
            explanation,
        }
    }
}

/// The order of the caller's weighers' scores: highest first, a score that is not a number
/// last, equal scores as they come (the lowest host id first).
fn by_score(a: f64, b: f64) -> Ordering {
    a.is_nan().cmp(&b.is_nan()).then(b.partial_cmp(&a).unwrap_or(Ordering::Equal))
}

/// Validates the services and returns them in batch order: application, then service name.
fn ordered(services: &[ServiceSpec]) -> Result<Vec<&ServiceSpec>, ServiceError> {
    let mut out: Vec<&ServiceSpec> = services.iter().collect();
    for s in &out {
        s.validate()?;
    }
    out.sort_by(|a, b| (&a.application, &a.name).cmp(&(&b.application, &b.name)));
    for w in out.windows(2) {
        if (&w[0].application, &w[0].name) == (&w[1].application, &w[1].name) {
            return Err(ServiceError::DuplicateService { service: w[0].group() });
        }
    }
    Ok(out)
}

impl ServiceScheduler {
    /// A scheduler with the engine's own rules only.
    pub fn new() -> Self {
        ServiceScheduler::default()
    }

    /// A builder for the caller's filters and weighers.
    pub fn builder() -> ServiceSchedulerBuilder {
        ServiceSchedulerBuilder::default()
    }

    /// The attributes of `cluster` that this engine would silently read as absent: keys that
    /// look like misspellings of [`ATTRIBUTES`](super::ATTRIBUTES) (`local-volumes`), and those
    /// keys holding a value that is not an array (which [`Site::new`] also refuses). Call it once
    /// per snapshot (it visits every attribute of every host).
    pub fn attribute_warnings(&self, cluster: &Cluster) -> Vec<AttributeWarning> {
        check_attributes(cluster, super::site::ATTRIBUTES)
    }

    /// Reconciles the request's services with `cluster`: keeps every assigned instance whose host still
    /// passes its service's hard filters, removes surplus instances, and places every
    /// unassigned instance (new ones, and those whose host stopped passing) on the best host,
    /// updating the counts after each placement. Instances no host can take are reported in
    /// [`ServiceOutcome::unschedulable`]. Calling it again is the retry.
    ///
    /// Computes in O(instances to place × hosts × filters) plus O(assigned instances × host
    /// chunk) for the sticky checks.
    ///
    /// # Errors
    ///
    /// [`ServiceError`] for an invalid or duplicate service, or a caller filter or weigher
    /// that cannot prepare or judge ([`ServiceError::Prepare`]); nothing is changed then.
    pub fn schedule(&self, cluster: &Cluster, request: &ServiceRequest) -> Result<ServiceOutcome, ServiceError> {
        let order = ordered(&request.services)?;
        let mut work = Work::new(self, cluster, request);
        for spec in order {
            work.service(spec)?;
        }
        Ok(work.finish())
    }

    /// Carries out a failure action: takes the instances `scope` selects off `host` and
    /// reconciles with `host` excluded from new placements, so they move elsewhere (or are
    /// reported unschedulable). [`Scope::SingleReplica`] selects the instances of services with
    /// exactly one replica; [`Scope::All`] every instance of a listed service. Instances of
    /// one-per-host services are bound to their host: `All` removes them, `SingleReplica`
    /// leaves them. A `host` the snapshot no longer has (already removed) excludes nothing:
    /// its instances are already unassigned and are placed like any other.
    ///
    /// # Errors
    ///
    /// As [`schedule`](ServiceScheduler::schedule).
    pub fn reschedule(
        &self,
        cluster: &Cluster,
        request: &ServiceRequest,
        host: &str,
        scope: Scope,
    ) -> Result<ServiceOutcome, ServiceError> {
        let order = ordered(&request.services)?;
        let mut work = Work::new(self, cluster, request);
        if let Some(hid) = cluster.host_id(host) {
            work.avoid = Some(hid);
            let groups: BTreeMap<String, &ServiceSpec> = order.iter().map(|s| (s.group(), *s)).collect();
            let on_host: Vec<(String, Option<String>, bool)> = cluster
                .host(hid)
                .map(|h| {
                    h.instances
                        .iter()
                        .map(|i| (i.id.to_string(), i.group.map(|g| cluster.resolve(g).to_owned()), i.terminating))
                        .collect()
                })
                .unwrap_or_default();
            for (id, group, terminating) in on_host {
                let Some(spec) = group.as_deref().and_then(|g| groups.get(g)) else { continue };
                if terminating {
                    continue;
                }
                let selected = match scope {
                    Scope::All => true,
                    Scope::SingleReplica => spec.is_single_replica(),
                };
                if !selected {
                    continue;
                }
                work.remove(hid, &id)?;
                if spec.mode == ServiceMode::OnePerMatchingHost {
                    work.decisions.push(Decision::Removed { instance: id, host: host.to_owned() });
                } else {
                    work.moved_from.insert(id, host.to_owned());
                }
            }
        }
        for spec in order {
            work.service(spec)?;
        }
        Ok(work.finish())
    }

    /// The fewest moves that even out each replicated service's per-host counts, as a plan:
    /// nothing is applied. For each service in batch order, hosts are those passing its hard
    /// filters plus those holding its instances; while the fullest host holds at least two more
    /// instances than the emptiest eligible one, its highest-numbered instance moves there
    /// (ties: the fullest host with the lowest id gives, the emptiest with the lowest id takes). A
    /// move the destination cannot take (resources) ends that service's plan early. Later
    /// services see earlier moves.
    ///
    /// Computes in O(moves × hosts × filters).
    ///
    /// # Errors
    ///
    /// As [`schedule`](ServiceScheduler::schedule).
    pub fn rebalance_plan(
        &self,
        cluster: &Cluster,
        request: &ServiceRequest,
    ) -> Result<Vec<RebalanceMove>, ServiceError> {
        let order = ordered(&request.services)?;
        let mut work = Work::new(self, cluster, request);
        let mut moves = Vec::new();
        for spec in order {
            if !matches!(spec.mode, ServiceMode::Replicated(_)) {
                continue;
            }
            let group = spec.group();
            let filters = Filters::new(spec, &work.site, &self.filters);
            let eligible = run_filters(&work.cluster, &filters.list, Scan::Schedulable(None), None)?.0;
            let mut counts: BTreeMap<HostId, Vec<String>> = eligible.iter().map(|&h| (h, Vec::new())).collect();
            for (id, host) in work.instances_of(&group) {
                counts.entry(host).or_default().push(id);
            }
            for ids in counts.values_mut() {
                ids.sort_by_key(|id| parse_instance_index(&group, id).unwrap_or(u32::MAX));
            }
            while let Some((&src, _)) = counts.iter().rev().max_by_key(|(_, ids)| ids.len()) {
                let count = |h: &HostId| counts.get(h).map_or(0, Vec::len);
                let Some(&dst) = eligible.iter().min_by_key(|h| count(h)) else { break };
                if count(&src) < count(&dst) + 2 {
                    break;
                }
                let Some(id) = counts.get(&src).and_then(|ids| ids.last()).cloned() else { break };
                let released = work
                    .cluster
                    .apply(&ClusterEvent::InstanceRemoved {
                        host: work.cluster.host_name(src).to_owned(),
                        instance: id.clone(),
                    })
                    .map_err(|e| ServiceError::Snapshot { error: e })?;
                if run_filters(&released, &filters.list, Scan::Only(dst), None)?.0.is_empty() {
                    break;
                }
                let from = work.cluster.host_name(src).to_owned();
                let to = work.cluster.host_name(dst).to_owned();
                work.remove(src, &id)?;
                let instance = work.instance_spec(spec, &filters, &id, dst);
                work.apply(ClusterEvent::InstancePlaced { host: to.clone(), instance })?;
                counts.entry(src).or_default().pop();
                counts.entry(dst).or_default().push(id.clone());
                moves.push(RebalanceMove { instance: id, from, to });
            }
        }
        Ok(moves)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;
    use crate::service::site::EdgeHost;
    use crate::snapshot::HostState;

    /// A seeded cluster of `n` edge hosts: memory, a zone label, GPUs and ingress addresses
    /// drawn from a few levels, and with `states` a quarter of the hosts not schedulable.
    fn cluster(seed: u64, n: usize, states: bool) -> Cluster {
        let mut rng = SplitMix64::new(seed);
        let mut b = Cluster::builder();
        for i in 0..n {
            let mut host = EdgeHost::new(format!("h{i}")).memory_mb(500.0 * rng.below(4) as f64);
            match rng.below(3) {
                0 => host = host.label("zone", "a"),
                1 => host = host.label("zone", "b"),
                _ => {}
            }
            host = host.gpus(rng.below(3) as u32).ingress_addresses(rng.below(2) as u32);
            let draw = rng.below(16);
            if states && draw < 4 {
                let state = HostState { up: draw != 0, enabled: draw != 1, cordoned: draw == 2, evicting: draw == 3 };
                host = host.with(|spec| spec.state(state));
            }
            b = b.host(host.build());
        }
        b.build().unwrap()
    }

    fn spec(seed: u64) -> ServiceSpec {
        let mut rng = SplitMix64::new(seed);
        let mut spec = ServiceSpec::replicated("app", "web", 1).memory_mb([0.0, 100.0, 700.0, 1200.0][rng.below(4)]);
        match rng.below(3) {
            0 => spec = spec.match_host_labels("zone = a".parse().unwrap()),
            1 => spec = spec.match_host_labels("not zone = b".parse().unwrap()),
            _ => {}
        }
        spec = spec.gpus(rng.below(3) as u32);
        if rng.below(2) == 0 {
            spec = spec.ingress();
        }
        spec
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// The one-host scan (the sticky check, a move's destination) against the full scan
        /// restricted to that host: the same verdict for every live host, whatever its state
        /// (the full scan's verdict read on the same hosts with every state schedulable).
        #[test]
        fn one_host_scan_matches_the_full_scan_on_that_host(
            seed in proptest::prelude::any::<u64>(),
            n in 1usize..150,
        ) {
            let stated = cluster(seed, n, true);
            let all_schedulable = cluster(seed, n, false);
            let site = Arc::new(Site::new(&stated, IngressAllocation::Dhcp).unwrap());
            let filters = Filters::new(&spec(seed ^ 0x5eed), &site, &[]);
            let full = run_filters(&stated, &filters.list, Scan::Schedulable(None), None).unwrap().0;
            let reference = run_filters(&all_schedulable, &filters.list, Scan::Schedulable(None), None).unwrap().0;
            for (h, host) in stated.hosts() {
                let only = run_filters(&stated, &filters.list, Scan::Only(h), None).unwrap().0;
                let expected: Vec<HostId> = reference.iter().copied().filter(|&r| r == h).collect();
                proptest::prop_assert_eq!(&only, &expected, "host {}", h.0);
                if host.state.schedulable() {
                    proptest::prop_assert_eq!(!only.is_empty(), full.contains(&h), "host {}", h.0);
                }
            }
        }
    }
}
