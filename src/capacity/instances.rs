//! How many more instances of a core [`Request`] fit: [`instances`].

use super::{DomainCapacity, ResourceUse, Stop};
use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Rejections};
use crate::id::{DomainId, HostId, ResourceId};
use crate::request::{CompiledRequest, Cx, ExplainOptions, Prepared, Request};
use crate::schedule::{Scheduler, Scope, Scratch};
use crate::snapshot::{Cluster, Overlay, CHUNK};
use smallvec::SmallVec;

/// How [`instances`] counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Method {
    /// Host by host: every filter that runs after the first instance judges a host by that host
    /// alone, so the hosts' counts add up. O(hosts × filters × log(copies per host)) filter
    /// checks plus O(copies) overlay updates; no ranking.
    PerHost,
    /// One [`Scheduler::schedule`] of as many instances as the scheduler accepts, which stops at
    /// the first instance that finds no host: used when a filter couples hosts (a legacy affinity
    /// group, a filter that is not host-local, nodes sharing a service host), when the call's
    /// [`Scope`] says the instances are [not interchangeable](Scope::ordered_instances) (a
    /// server group other than the legacy one, whose membership of the request's own instances
    /// goes by instance index), or when its host lists skip the filters. Costs what that schedule costs: up to
    /// O(copies × hosts × filters).
    Replay,
}

/// One host's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostCapacity {
    /// The host.
    pub host: HostId,
    /// More instances of the request it takes. With [`Method::Replay`], the instances the
    /// scheduler's run put there.
    pub fits: u32,
    /// What stops the next one: an index into [`InstanceCapacity::stops`]; `None` when the count
    /// reached the scheduler's [`max_count`](crate::schedule::SchedulerBuilder::max_count).
    pub stop: Option<u32>,
}

/// The answer of [`instances`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct InstanceCapacity {
    /// How it was counted.
    pub method: Method,
    /// More instances of the request that fit on the cluster as it is: the largest count for
    /// which [`Scheduler::schedule`] places every instance, up to the scheduler's `max_count`.
    pub total: u64,
    /// Whether `total` reached the scheduler's `max_count` (more may fit than one request may
    /// ask for).
    pub capped: bool,
    /// Every live host, by id.
    pub hosts: Vec<HostCapacity>,
    /// The distinct reasons that stop hosts, in first-seen order.
    pub stops: Vec<Stop>,
    /// Per zone (the topology's `zone` level), in domain order; hosts without a zone last.
    pub zones: Vec<DomainCapacity>,
    /// Per rack (a topology level called `rack`), when the cluster has one.
    pub racks: Vec<DomainCapacity>,
}

/// How many more instances of `request` fit on `cluster` under `scheduler`: exact under the
/// scheduler's own filters and its virtual consumption between the instances of one request,
/// per host, zone and rack, with what stops each host. `request.count` is ignored.
///
/// When every filter that runs per instance is [host-local](Filter::host_local_for) (all
/// built-ins are, except the legacy affinity group) a host's verdict depends on the copies
/// placed on that host alone, so each host is counted on its own: its copies are consumed in a
/// private [`Overlay`] and the host re-checked with the scheduler's own filter pass. A
/// closed-form first guess (free amount over demand, per requested resource) is confirmed by
/// checking one copy below and at it, and corrected by galloping and bisection when a filter
/// other than the resource check binds first; filters are monotone within a request, so a
/// host that refuses copy `k + 1` refuses every later one. Everything else is counted by
/// replaying the scheduler ([`Method::Replay`]).
///
/// Computes, with [`Method::PerHost`], in O(hosts × filters × log(copies per host)) filter
/// checks (three per host when the guess is right) plus one overlay update per counted copy,
/// and allocates O(hosts) for the answer. The plain way, asking `schedule` for a count and
/// bisecting, costs O(log copies) bursts of up to all the copies; asking count by count costs
/// O(copies) of them. Weighers are not consulted: they decide where, not how many.
///
/// # Errors
///
/// As [`Scheduler::schedule`]: a malformed request, or a filter that cannot prepare for or judge
/// it.
pub fn instances(
    scheduler: &Scheduler,
    cluster: &Cluster,
    request: &Request,
) -> Result<InstanceCapacity, ScheduleError> {
    instances_scoped(scheduler, cluster, request, Scope::default())
}

/// As [`instances`], for a call with what an engine over the core adds to it ([`Scope`]): its
/// part of the request, host lists and filters that pass every host, as
/// [`Scheduler::schedule_scoped`] places with them.
///
/// # Errors
///
/// As [`instances`].
pub fn instances_scoped(
    scheduler: &Scheduler,
    cluster: &Cluster,
    request: &Request,
    scope: Scope<'_>,
) -> Result<InstanceCapacity, ScheduleError> {
    let compiled = request.compile(cluster)?;
    let empty = Overlay::new();
    let cx = Cx::new(cluster, request, &compiled, &empty, 0).with_part(scope.part);
    let states: SmallVec<[Prepared; 8]> = scheduler.filters().map(|f| f.prepare(&cx)).collect::<Result<_, _>>()?;
    let coupled = cluster.has_shared_service_hosts()
        || scope.bypasses_filters()
        // A rule that reads which instance is placed (by index) is not known to a host counted
        // alone.
        || scope.ordered
        || !scheduler
            .filters()
            .zip(&states)
            .all(|(f, s)| f.once_per_request() || f.host_local_for(&cx.with_state(s.as_deref())));
    let limit = scheduler.count_limit();
    let (hosts, stops, method) = if coupled {
        let (h, s) = replay(scheduler, cluster, request, scope)?;
        (h, s, Method::Replay)
    } else {
        let (h, s) = per_host(scheduler, cluster, request, scope, &compiled, &states, limit)?;
        (h, s, Method::PerHost)
    };
    let sum: u64 = hosts.iter().map(|h| u64::from(h.fits)).sum();
    let total = sum.min(u64::from(limit));
    let zones = cluster.topology().zone_level().map(|l| by_domain(cluster, &hosts, l)).unwrap_or_default();
    let racks = cluster.topology().level("rack").map(|l| by_domain(cluster, &hosts, l)).unwrap_or_default();
    Ok(InstanceCapacity { method, total, capped: sum >= u64::from(limit), hosts, stops, zones, racks })
}

/// Counts host by host; see [`instances`].
fn per_host(
    scheduler: &Scheduler,
    cluster: &Cluster,
    request: &Request,
    scope: Scope<'_>,
    compiled: &CompiledRequest,
    states: &[Prepared],
    limit: u32,
) -> Result<(Vec<HostCapacity>, Vec<Stop>), ScheduleError> {
    let mut masks: Vec<u64> = (0..cluster.chunk_count()).map(|c| cluster.hot_chunk(c).live).collect();
    scope.restrict(0, &mut masks);
    let filters: Vec<&dyn Filter> = scheduler.filters().collect();
    let mut keys: Vec<Option<(u32, Reason)>> = Vec::new();
    let mut stops = Vec::new();
    let mut hosts = Vec::with_capacity(cluster.len());
    let mut probe = Probe {
        scheduler,
        cluster,
        request,
        scope,
        compiled,
        states,
        overlay: Overlay::new(),
        rejections: Rejections::new(false),
        host: HostId(0),
        have: 0,
    };
    for host in cluster.host_ids() {
        let kept = masks[host.index() / CHUNK] & (1u64 << (host.index() % CHUNK)) != 0;
        let (fits, key) = if kept { probe.count(host, limit)? } else { (0, Some(None)) };
        let stop = key.map(|k| {
            let i = keys.iter().position(|x| *x == k).unwrap_or_else(|| {
                keys.push(k);
                stops.push(match k {
                    Some((f, reason)) => {
                        let cx = Cx::new(cluster, request, compiled, &probe.overlay, 0)
                            .with_part(scope.part)
                            .with_state(states[f as usize].as_deref());
                        let filter = filters[f as usize];
                        Stop { filter: Some(filter.name().to_owned()), reason: filter.describe(&cx, reason) }
                    }
                    None => Stop { filter: None, reason: "excluded by the request's host lists".to_owned() },
                });
                keys.len() - 1
            });
            i as u32
        });
        hosts.push(HostCapacity { host, fits, stop });
    }
    Ok((hosts, stops))
}

/// One host's copies in a private overlay, re-checked by the scheduler's filter pass.
struct Probe<'a> {
    scheduler: &'a Scheduler,
    cluster: &'a Cluster,
    request: &'a Request,
    scope: Scope<'a>,
    compiled: &'a CompiledRequest,
    states: &'a [Prepared],
    overlay: Overlay,
    rejections: Rejections,
    host: HostId,
    /// Copies of the request consumed on `host` in `overlay`.
    have: u32,
}

/// A host's count and what stops it: `Some(None)` for the request's host lists, `None` when
/// nothing stopped it below the limit.
type Counted = (u32, Option<Option<(u32, Reason)>>);

impl Probe<'_> {
    /// Whether `host` takes one more instance with `copies` already on it; the rejecting
    /// filter and reason when not.
    fn check(&mut self, copies: u32) -> Result<Option<(u32, Reason)>, ScheduleError> {
        if copies < self.have {
            self.overlay.clear();
            self.have = 0;
        }
        while self.have < copies {
            self.overlay.consume(self.host, &self.compiled.resources);
            self.have += 1;
        }
        self.rejections.clear(false);
        self.rejections.set_instance(copies);
        let cx = Cx::new(self.cluster, self.request, self.compiled, &self.overlay, copies).with_part(self.scope.part);
        let pass =
            self.scheduler.passes_filters(&cx, self.states, self.scope.passed, copies, self.host, &mut self.rejections);
        if let Some(e) = self.rejections.take_error() {
            return Err(e);
        }
        Ok(if pass { None } else { self.rejections.counts().last().map(|&(f, r, _)| (f, r)).or(Some((0, Reason(0)))) })
    }

    /// The number of copies `host` takes (at most `limit`) and what refuses the next.
    fn count(&mut self, host: HostId, limit: u32) -> Result<Counted, ScheduleError> {
        self.overlay.clear();
        self.have = 0;
        self.host = host;
        if let Some(stop) = self.check(0)? {
            return Ok((0, Some(Some(stop))));
        }
        // `lo` copies are known to leave room for one more; `hi` copies to leave none.
        let mut lo = 0u32;
        let mut hi: Option<(u32, (u32, Reason))> = None;
        let guess = self.guess().clamp(1, limit.max(1));
        for probe in [guess - 1, guess] {
            if probe > lo && hi.is_none() && probe < limit {
                match self.check(probe)? {
                    None => lo = probe,
                    Some(stop) => hi = Some((probe, stop)),
                }
            }
        }
        while hi.is_none() {
            if lo + 1 >= limit {
                return Ok((limit, None));
            }
            let next = lo.saturating_mul(2).clamp(lo + 1, limit - 1);
            match self.check(next)? {
                None => lo = next,
                Some(stop) => hi = Some((next, stop)),
            }
        }
        let Some((mut hi, mut stop)) = hi else { return Ok((limit, None)) };
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            match self.check(mid)? {
                None => lo = mid,
                Some(s) => (hi, stop) = (mid, s),
            }
        }
        Ok((hi, Some(Some(stop))))
    }

    /// Copies the free amounts allow, the least over the requested resources (`u32::MAX`
    /// when nothing is requested).
    fn guess(&self) -> u32 {
        let mut least = u32::MAX;
        for &(kind, want) in &self.compiled.resources {
            let free = self.overlay.free(self.cluster, self.host, kind) + self.overlay.used(self.host, kind);
            let n =
                if want > self.overlay.physical(self.cluster, self.host, kind) { 0.0 } else { (free / want).floor() };
            least = least.min(if n >= 0.0 && n < f64::from(u32::MAX) { n as u32 } else { 0 });
        }
        least
    }
}

/// Counts by one schedule of `max_count` instances; see [`Method::Replay`].
fn replay(
    scheduler: &Scheduler,
    cluster: &Cluster,
    request: &Request,
    scope: Scope<'_>,
) -> Result<(Vec<HostCapacity>, Vec<Stop>), ScheduleError> {
    let mut all = request.clone();
    all.count = scheduler.count_limit();
    all.explain = ExplainOptions { verdicts: true, top: 0 };
    let placement = scheduler.schedule_scoped(&mut Scratch::new(), cluster, &all, scope)?;
    let mut fits = vec![0u32; cluster.id_bound()];
    for host in placement.hosts() {
        fits[host.index()] += 1;
    }
    let mut stops: Vec<Stop> = Vec::new();
    let mut hosts = Vec::with_capacity(cluster.len());
    for (host, verdict) in cluster.host_ids().zip(&placement.explanation.verdicts) {
        let stop = (!verdict.passed).then(|| {
            let s = Stop {
                filter: verdict.filter.clone(),
                reason: verdict.reason.clone().unwrap_or_else(|| "rejected".to_owned()),
            };
            let i = stops.iter().position(|x| *x == s).unwrap_or_else(|| {
                stops.push(s);
                stops.len() - 1
            });
            i as u32
        });
        hosts.push(HostCapacity { host, fits: fits[host.index()], stop });
    }
    Ok((hosts, stops))
}

/// Sums hosts by their domain at topology level `level`; hosts without one form a last entry
/// named `""`.
fn by_domain(cluster: &Cluster, hosts: &[HostCapacity], level: usize) -> Vec<DomainCapacity> {
    let topology = cluster.topology();
    let domains = topology.domains(level);
    let kinds = cluster.resource_kinds().len();
    let mut out: Vec<DomainCapacity> = domains
        .iter()
        .map(|&v| DomainCapacity::empty(cluster.resolve(v), kinds))
        .chain(std::iter::once(DomainCapacity::empty("", kinds)))
        .collect();
    for h in hosts {
        let Some(record) = cluster.host(h.host) else { continue };
        let d = record.domain(level);
        let slot = if d == DomainId::NONE { domains.len() } else { d.index() };
        let entry = &mut out[slot];
        entry.hosts += 1;
        entry.fits += u64::from(h.fits);
        for (k, use_) in entry.resources.iter_mut().enumerate() {
            let r = record.resource(ResourceId(k as u32));
            use_.add(r.limit(), r.used);
        }
        if let Some(s) = h.stop {
            match entry.stops.iter_mut().find(|(i, _)| *i == s) {
                Some((_, n)) => *n += 1,
                None => entry.stops.push((s, 1)),
            }
        }
    }
    for d in &mut out {
        d.stops.sort_by_key(|&(i, n)| (std::cmp::Reverse(n), i));
    }
    out.retain(|d| d.hosts > 0);
    out
}

impl ResourceUse {
    fn add(&mut self, limit: f64, used: f64) {
        self.limit += limit;
        self.used += used;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::builtin::{AvailabilityZoneFilter, ComputeFilter, ResourceFilter};
    use crate::snapshot::HostSpec;

    fn cluster() -> Cluster {
        Cluster::builder()
            .host(HostSpec::new("a").vcpus(8.0).memory_mb(8192.0).zone("z1"))
            .host(HostSpec::new("b").vcpus(2.0).memory_mb(65536.0).zone("z1"))
            .host(HostSpec::new("c").vcpus(64.0).memory_mb(4096.0).zone("z2"))
            .build()
            .unwrap()
    }

    fn scheduler() -> Scheduler {
        Scheduler::builder()
            .filter(ComputeFilter)
            .filter(ResourceFilter::new())
            .filter(AvailabilityZoneFilter)
            .build()
            .unwrap()
    }

    #[test]
    fn counts_each_host_and_names_the_binding_resource() {
        let c = cluster();
        let cap = instances(&scheduler(), &c, &Request::new(1).vcpus(1.0).memory_mb(2048.0)).unwrap();
        assert_eq!(cap.method, Method::PerHost);
        let fits: Vec<u32> = cap.hosts.iter().map(|h| h.fits).collect();
        assert_eq!(fits, [4, 2, 2]);
        assert_eq!(cap.total, 8);
        let reason = |h: usize| cap.stops[cap.hosts[h].stop.unwrap() as usize].reason.as_str();
        assert_eq!(reason(0), "insufficient memory");
        assert_eq!(reason(1), "insufficient vcpus");
        assert_eq!(reason(2), "insufficient memory");
        let zones: Vec<(&str, u64)> = cap.zones.iter().map(|z| (z.name.as_str(), z.fits)).collect();
        assert_eq!(zones, [("z1", 6), ("z2", 2)]);
    }

    #[test]
    fn a_zone_filter_stops_the_other_zone_by_name() {
        let c = cluster();
        let cap = instances(&scheduler(), &c, &Request::new(1).vcpus(1.0).zone("z2")).unwrap();
        assert_eq!(cap.total, 64);
        let stop = &cap.stops[cap.hosts[0].stop.unwrap() as usize];
        assert_eq!(stop.filter.as_deref(), Some("availability_zone"), "{stop:?}");
    }

    #[test]
    fn a_closure_filter_counts_host_by_host_once_declared_host_local() {
        use crate::filter::filter_fn;
        let c = cluster();
        let request = Request::new(1).vcpus(1.0).memory_mb(2048.0);
        let with =
            |f| Scheduler::builder().filter(ComputeFilter).filter(ResourceFilter::new()).filter(f).build().unwrap();
        let not_c = || filter_fn("not c", |cx: &crate::request::Cx<'_>, h| &*cx.host(h).name != "c");
        let replayed = instances(&with(not_c()), &c, &request).unwrap();
        assert_eq!(replayed.method, Method::Replay);
        let per_host = instances(&with(not_c().local_to_host()), &c, &request).unwrap();
        assert_eq!(per_host.method, Method::PerHost);
        assert_eq!((replayed.total, per_host.total), (6, 6));
        let fits: Vec<u32> = per_host.hosts.iter().map(|h| h.fits).collect();
        assert_eq!(fits, [4, 2, 0]);
    }

    #[test]
    fn a_request_without_demand_is_capped_by_max_count() {
        let s = Scheduler::builder().filter(ComputeFilter).max_count(50).build().unwrap();
        let cap = instances(&s, &cluster(), &Request::new(1)).unwrap();
        assert!(cap.capped);
        assert_eq!(cap.total, 50);
        assert!(cap.hosts.iter().all(|h| h.fits == 50 && h.stop.is_none()));
    }
}
