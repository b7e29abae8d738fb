//! The service scheduler: reconciles services with the snapshot, one instance at a time.

use super::error::ServiceError;
use super::failure::Scope;
use super::filters::{
    ContainerLimitsFilter, DeviceFilter, HostLabelsFilter, IngressFilter, InstanceCountFilter, PreferredAffinity,
    VolumesFilter,
};
use super::rank::{best_host, RankKey};
use super::site::{IngressAllocation, Site, CONTAINER_LAYER_MB, GPU, INGRESS_IP};
use super::spec::{parse_instance_index, Mode, ServiceSpec};
use crate::filter::{Filter, FilterChain, Rejections};
use crate::id::HostId;
use crate::request::{Cx, Request};
use crate::snapshot::{check_attributes, AttributeWarning, Cluster, ClusterEvent, InstanceSpec, Overlay};
use serde::Serialize;
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

/// Hosts one filter rejected for one reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Rejection {
    /// The filter's name (`host` for hosts that are down, disabled or being failed over).
    pub filter: String,
    /// The reason text.
    pub reason: String,
    /// How many hosts.
    pub hosts: u32,
}

/// An instance that cannot be scheduled: no host passes the filters. It stays unassigned; the
/// caller retries on the triggers listed in the [module docs](super#unschedulable-instances).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Unschedulable {
    /// Instance id.
    pub instance: String,
    /// The host it was taken off, if it had one.
    pub previous_host: Option<String>,
    /// Hosts in the site.
    pub hosts: u32,
    /// Rejections: hosts that are not schedulable (or being failed over) first, then the
    /// filters' rejections, most hosts first, then in filter order and reason code.
    pub reasons: Vec<Rejection>,
}

impl fmt::Display for Unschedulable {
    /// `shop/web/0 cannot be scheduled: 0/3 hosts are available: 2 insufficient memory, 1 …`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} cannot be scheduled: 0/{} hosts are available", self.instance, self.hosts)?;
        for (i, r) in self.reasons.iter().enumerate() {
            write!(f, "{}{} {}", if i == 0 { ": " } else { ", " }, r.hosts, r.reason)?;
        }
        Ok(())
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
}

/// One move of a rebalance plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Move {
    /// Instance id.
    pub instance: String,
    /// Its current host.
    pub from: String,
    /// Where it would go.
    pub to: String,
}

/// The service scheduler. Stateless: every call is a pure function of the snapshot, the site,
/// the services and (for [`reschedule`](ServiceScheduler::reschedule)) the failed host.
///
/// See the [module docs](super) for the rules and the decisions behind them.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServiceScheduler {
    _private: (),
}

/// The hard filters of one service, with the count rule last when present.
struct Filters {
    list: Vec<Box<dyn Filter>>,
    volumes: Option<VolumesFilter>,
    soft: PreferredAffinity,
}

impl Filters {
    fn new(spec: &ServiceSpec, site: &Arc<Site>) -> Filters {
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

/// Runs `filters` over the hosts of `scan`; returns the passing hosts and, when `explain` is
/// set and no host passes, the rejections.
fn run_filters(
    cluster: &Cluster,
    filters: &[Box<dyn Filter>],
    scan: Scan,
    explain: bool,
) -> Result<(Vec<HostId>, Vec<Rejection>), ServiceError> {
    let request = Request::new(1);
    let prepare = |error| ServiceError::Prepare { error };
    let compiled = request.compile(cluster).map_err(prepare)?;
    let overlay = Overlay::new();
    let cx = Cx::new(cluster, &request, &compiled, &overlay, 0);
    let chain = FilterChain::prepare(filters, &cx).map_err(prepare)?;
    let mut rejections = Rejections::new(false);
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
    let mut reasons = Vec::new();
    if explain && out.is_empty() {
        if down > 0 {
            reasons.push(Rejection { filter: "host".into(), reason: "host not schedulable".into(), hosts: down });
        }
        let mut counts = rejections.counts().to_vec();
        counts.sort_by_key(|&(i, reason, hosts)| (std::cmp::Reverse(hosts), i, reason));
        for (i, reason, hosts) in counts {
            reasons.push(Rejection { filter: chain.name(i).to_owned(), reason: chain.describe(&cx, i, reason), hosts });
        }
    }
    Ok((out, reasons))
}

/// A scheduling call in progress: a working snapshot and what was decided.
struct Work {
    site: Arc<Site>,
    cluster: Cluster,
    events: Vec<ClusterEvent>,
    decisions: Vec<Decision>,
    unschedulable: Vec<Unschedulable>,
    avoid: Option<HostId>,
    /// Instances taken off a host in this call, by id: that host's name.
    moved_from: BTreeMap<String, String>,
}

impl Work {
    fn new(cluster: &Cluster, site: &Site) -> Work {
        Work {
            site: Arc::new(site.clone()),
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
        Ok(!run_filters(&released, &filters.list, Scan::Only(host), false)?.0.is_empty())
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
        let mut filters = Filters::new(spec, &self.site);
        let existing = self.instances_of(&group);
        let replicas = match spec.mode {
            Mode::Replicated(n) => n,
            Mode::OnePerMatchingHost => return self.per_host(spec, &filters, existing),
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
        let eligible = run_filters(&self.cluster, &filters.list, Scan::Schedulable(self.avoid), false)?.0.len() as u32;
        let cap = replicas.div_ceil(eligible.max(1));
        filters.list.push(Box::new(InstanceCountFilter::new(group.clone(), cap)));
        for i in pending {
            let id = spec.instance_id(i);
            let (mut candidates, reasons) =
                run_filters(&self.cluster, &filters.list, Scan::Schedulable(self.avoid), true)?;
            filters.soft.narrow(&self.cluster, &mut candidates);
            match best_host(&self.cluster, &group, &candidates) {
                Some((host, key)) => self.place(spec, &filters, id, host, key)?,
                None => {
                    let previous_host = self.moved_from.remove(&id);
                    self.unschedulable.push(Unschedulable {
                        instance: id,
                        previous_host,
                        hosts: self.cluster.len() as u32,
                        reasons,
                    });
                }
            }
        }
        Ok(())
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
            if !run_filters(&self.cluster, &filters.list, Scan::Only(host), false)?.0.is_empty() {
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
        ServiceOutcome {
            decisions: self.decisions,
            unschedulable: self.unschedulable,
            events: self.events,
            cluster: self.cluster,
        }
    }
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
    /// A scheduler.
    pub fn new() -> Self {
        ServiceScheduler::default()
    }

    /// The attributes of `cluster` that this engine would silently read as absent: keys that
    /// look like misspellings of [`ATTRIBUTES`](super::ATTRIBUTES) (`local-volumes`), and those
    /// keys holding a value that is not an array (which [`Site::new`] also refuses). Call it once
    /// per snapshot (it visits every attribute of every host).
    pub fn attribute_warnings(&self, cluster: &Cluster) -> Vec<AttributeWarning> {
        check_attributes(cluster, super::site::ATTRIBUTES)
    }

    /// Reconciles `services` with `cluster`: keeps every assigned instance whose host still
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
    /// [`ServiceError`] for an invalid or duplicate service; nothing is changed then.
    pub fn schedule(
        &self,
        cluster: &Cluster,
        site: &Site,
        services: &[ServiceSpec],
    ) -> Result<ServiceOutcome, ServiceError> {
        let order = ordered(services)?;
        let mut work = Work::new(cluster, site);
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
        site: &Site,
        services: &[ServiceSpec],
        host: &str,
        scope: Scope,
    ) -> Result<ServiceOutcome, ServiceError> {
        let order = ordered(services)?;
        let mut work = Work::new(cluster, site);
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
                if spec.mode == Mode::OnePerMatchingHost {
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
        site: &Site,
        services: &[ServiceSpec],
    ) -> Result<Vec<Move>, ServiceError> {
        let order = ordered(services)?;
        let mut work = Work::new(cluster, site);
        let mut moves = Vec::new();
        for spec in order {
            if !matches!(spec.mode, Mode::Replicated(_)) {
                continue;
            }
            let group = spec.group();
            let filters = Filters::new(spec, &work.site);
            let eligible = run_filters(&work.cluster, &filters.list, Scan::Schedulable(None), false)?.0;
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
                if run_filters(&released, &filters.list, Scan::Only(dst), false)?.0.is_empty() {
                    break;
                }
                let from = work.cluster.host_name(src).to_owned();
                let to = work.cluster.host_name(dst).to_owned();
                work.remove(src, &id)?;
                let instance = work.instance_spec(spec, &filters, &id, dst);
                work.apply(ClusterEvent::InstancePlaced { host: to.clone(), instance })?;
                counts.entry(src).or_default().pop();
                counts.entry(dst).or_default().push(id.clone());
                moves.push(Move { instance: id, from, to });
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
            let filters = Filters::new(&spec(seed ^ 0x5eed), &site);
            let full = run_filters(&stated, &filters.list, Scan::Schedulable(None), false).unwrap().0;
            let reference = run_filters(&all_schedulable, &filters.list, Scan::Schedulable(None), false).unwrap().0;
            for (h, host) in stated.hosts() {
                let only = run_filters(&stated, &filters.list, Scan::Only(h), false).unwrap().0;
                let expected: Vec<HostId> = reference.iter().copied().filter(|&r| r == h).collect();
                proptest::prop_assert_eq!(&only, &expected, "host {}", h.0);
                if host.state.schedulable() {
                    proptest::prop_assert_eq!(!only.is_empty(), full.contains(&h), "host {}", h.0);
                }
            }
        }
    }
}
