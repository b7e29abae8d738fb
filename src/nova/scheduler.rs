//! The Nova engine's entry: [`NovaScheduler`] runs a [`NovaRequest`] on the core
//! [`Scheduler`], handing the VM part to its filters and weighers and applying the filter
//! scheduler's request rules the core does not know: forced and ignored hosts, forced hosts
//! that skip the filters, and the rebuild rule (filters that do not run on rebuild pass every
//! host).

use super::request::{NovaRequest, VmSpec};
use crate::capacity::{self, InstanceCapacity};
use crate::error::{BuildError, ScheduleError};
use crate::explain::HostVerdict;
use crate::filter::Filter;
use crate::id::HostId;
use crate::schedule::{HostLists, Outcome, Scheduler, SchedulerBuilder, Scope, Scratch, Ties};
use crate::snapshot::Cluster;
use crate::weigh::Weigher;

/// The filter classes whose `RUN_ON_REBUILD` is true in Nova: the only ones that still check
/// hosts on a rebuild.
pub const RUN_ON_REBUILD: &[&str] =
    &["AggregateImagePropertiesIsolation", "ImagePropertiesFilter", "IsolatedHostsFilter"];

/// Whether the filter called `name` still checks hosts when the request is a rebuild
/// ([`VmSpec::is_rebuild`]): the classes in [`RUN_ON_REBUILD`] do, every other filter known to
/// [`SchedulerConfig`](super::config::SchedulerConfig) by name does not, and a filter of any
/// other name (a caller's own, a closure) does, as Nova's base filter class says.
///
/// ```
/// use placewise::nova::runs_on_rebuild;
///
/// assert!(runs_on_rebuild("ImagePropertiesFilter") && !runs_on_rebuild("RamFilter"));
/// assert!(runs_on_rebuild("my_own_filter"));
/// ```
pub fn runs_on_rebuild(name: &str) -> bool {
    RUN_ON_REBUILD.contains(&name) || !super::config::is_filter_name(name)
}

/// OpenStack Nova's filter scheduler: the core [`Scheduler`]'s filters, ranking tiers and
/// selection, run on a [`NovaRequest`]. Its filters and weighers read the request's
/// [`VmSpec`] through [`Cx::part`](crate::request::Cx::part) ([`VmSpec::of`]); the engine applies
/// the VM part's host lists and rebuild rule:
///
/// - `ignore_hosts` removes hosts; `force_hosts` and `force_nodes` keep only the hosts they
///   name ([`VmSpec::keeps`]), which skip every filter unless the request carries a
///   [check type](VmSpec::has_check_type);
/// - on a [rebuild](VmSpec::is_rebuild) the filters that do not
///   [run on rebuild](runs_on_rebuild) pass every host.
///
/// Build one by name with [`SchedulerConfig`](super::config::SchedulerConfig), or with
/// [`NovaScheduler::builder`].
///
/// ```
/// use placewise::nova::{NovaRequest, NovaScheduler};
/// use placewise::nova::filters::RamFilter;
/// use placewise::nova::weighers::RamWeigher;
/// use placewise::{Cluster, HostSpec};
/// use placewise::nova::request::Flavor;
///
/// let cluster = Cluster::builder()
///     .host(HostSpec::new("small").vcpus(4.0).memory_mb(8192.0))
///     .host(HostSpec::new("big").vcpus(32.0).memory_mb(131072.0))
///     .build()?;
/// let nova = NovaScheduler::builder().filter(RamFilter).weigher(RamWeigher, 1.0).build()?;
/// let request = NovaRequest::for_flavor(1, Flavor::new("m1.large", 16384.0, 4.0, 0.0));
/// assert_eq!(nova.schedule(&cluster, &request)?.selections[0].host_name, "big");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct NovaScheduler {
    core: Scheduler,
    /// Per filter position: whether it passes every host on a rebuild.
    passed_on_rebuild: Vec<bool>,
}

/// Builds a [`NovaScheduler`]: as [`SchedulerBuilder`], filters run in the order added and
/// weighers go into the current tier. Each filter's rebuild rule comes from its name
/// ([`runs_on_rebuild`]) unless given with [`filter_on_rebuild`](NovaSchedulerBuilder::filter_on_rebuild).
#[derive(Debug)]
pub struct NovaSchedulerBuilder {
    core: SchedulerBuilder,
    passed_on_rebuild: Vec<bool>,
}

impl NovaSchedulerBuilder {
    /// Appends a filter, whose rebuild rule its name says ([`runs_on_rebuild`]).
    pub fn filter<F: Filter + 'static>(self, filter: F) -> Self {
        self.filter_boxed(Box::new(filter))
    }

    /// Appends a boxed filter, whose rebuild rule its name says ([`runs_on_rebuild`]).
    pub fn filter_boxed(self, filter: Box<dyn Filter>) -> Self {
        let runs = runs_on_rebuild(filter.name());
        self.filter_boxed_on_rebuild(filter, runs)
    }

    /// Appends a filter that checks hosts on a rebuild exactly when `runs` (else it passes
    /// every host then).
    pub fn filter_on_rebuild<F: Filter + 'static>(self, filter: F, runs: bool) -> Self {
        self.filter_boxed_on_rebuild(Box::new(filter), runs)
    }

    /// As [`filter_on_rebuild`](NovaSchedulerBuilder::filter_on_rebuild), boxed.
    pub fn filter_boxed_on_rebuild(mut self, filter: Box<dyn Filter>, runs: bool) -> Self {
        self.core = self.core.filter_boxed(filter);
        self.passed_on_rebuild.push(!runs);
        self
    }

    /// Adds a weigher with its multiplier to the current tier.
    pub fn weigher<W: Weigher + 'static>(self, weigher: W, multiplier: f64) -> Self {
        self.weigher_boxed(Box::new(weigher), multiplier)
    }

    /// Adds a boxed weigher with its multiplier to the current tier.
    pub fn weigher_boxed(mut self, weigher: Box<dyn Weigher>, multiplier: f64) -> Self {
        self.core = self.core.weigher_boxed(weigher, multiplier);
        self
    }

    /// Starts a new ranking tier ([`SchedulerBuilder::tier`]).
    pub fn tier(mut self) -> Self {
        self.core = self.core.tier();
        self
    }

    /// Picks at random among the best `k` hosts (Nova's `host_subset_size`, default 1).
    pub fn host_subset_size(mut self, k: usize) -> Self {
        self.core = self.core.host_subset_size(k);
        self
    }

    /// How ties end (default [`Ties::HostId`]; Nova's own rule is [`Ties::PreviousOrder`]).
    pub fn ties(mut self, ties: Ties) -> Self {
        self.core = self.core.ties(ties);
        self
    }

    /// Seed for the random pick when the request has none (default 0).
    pub fn seed(mut self, seed: u64) -> Self {
        self.core = self.core.seed(seed);
        self
    }

    /// The largest `count` a request may ask for ([`SchedulerBuilder::max_count`]).
    pub fn max_count(mut self, max: u32) -> Self {
        self.core = self.core.max_count(max);
        self
    }

    /// Validates and builds.
    ///
    /// # Errors
    ///
    /// As [`SchedulerBuilder::build`].
    pub fn build(self) -> Result<NovaScheduler, BuildError> {
        Ok(NovaScheduler { core: self.core.build()?, passed_on_rebuild: self.passed_on_rebuild })
    }
}

impl NovaScheduler {
    /// A builder with no filters, no weighers, subset size 1 and seed 0.
    pub fn builder() -> NovaSchedulerBuilder {
        NovaSchedulerBuilder { core: Scheduler::builder(), passed_on_rebuild: Vec::new() }
    }

    /// The core scheduler it runs, for a plain core [`Request`](crate::request::Request) (no VM part,
    /// no host lists, no rebuild).
    pub fn core(&self) -> &Scheduler {
        &self.core
    }

    /// The filters, in run order.
    pub fn filters(&self) -> impl Iterator<Item = &dyn Filter> + '_ {
        self.core.filters()
    }

    /// Whether the filter at position `index` checks hosts on a rebuild (`None` past the end).
    pub fn filter_runs_on_rebuild(&self, index: usize) -> Option<bool> {
        self.passed_on_rebuild.get(index).map(|passed| !passed)
    }

    /// Places `request.request.count` instances; see [`Scheduler::schedule`] for the loop and
    /// its cost. The host lists cost O(hosts) name comparisons once per call when the request
    /// has any.
    ///
    /// # Errors
    ///
    /// As [`Scheduler::schedule`].
    pub fn schedule(&self, cluster: &Cluster, request: &NovaRequest) -> Result<Outcome, ScheduleError> {
        self.schedule_with(&mut Scratch::new(), cluster, request)
    }

    /// As [`schedule`](NovaScheduler::schedule), with caller-owned buffers.
    ///
    /// # Errors
    ///
    /// As [`Scheduler::schedule`].
    pub fn schedule_with(
        &self,
        scratch: &mut Scratch,
        cluster: &Cluster,
        request: &NovaRequest,
    ) -> Result<Outcome, ScheduleError> {
        let lists = host_lists(cluster, &request.vm);
        self.core.schedule_scoped(scratch, cluster, &request.request, self.scope(&request.vm, lists.as_ref()))
    }

    /// Whether `host` may take one instance of `request`: the request's host lists, then this
    /// scheduler's filters with the rebuild rule, for that one host
    /// ([`Scheduler::check_host_scoped`]).
    ///
    /// # Errors
    ///
    /// As [`Scheduler::check_host`].
    pub fn check_host(
        &self,
        cluster: &Cluster,
        request: &NovaRequest,
        host: HostId,
    ) -> Result<HostVerdict, ScheduleError> {
        let lists = host_lists(cluster, &request.vm);
        self.core.check_host_scoped(cluster, &request.request, self.scope(&request.vm, lists.as_ref()), host)
    }

    /// How many more instances of `request` fit ([`capacity::instances_scoped`]): a request
    /// whose server group is not the legacy one is counted by replaying the scheduler, since
    /// membership of its own instances goes by instance index.
    ///
    /// # Errors
    ///
    /// As [`capacity::instances`].
    pub fn instances(&self, cluster: &Cluster, request: &NovaRequest) -> Result<InstanceCapacity, ScheduleError> {
        let lists = host_lists(cluster, &request.vm);
        capacity::instances_scoped(&self.core, cluster, &request.request, self.scope(&request.vm, lists.as_ref()))
    }

    /// The core call's scope for `vm`.
    fn scope<'a>(&'a self, vm: &'a VmSpec, lists: Option<&'a HostLists>) -> Scope<'a> {
        let mut scope =
            Scope::new().part(vm).ordered_instances(vm.server_group.as_ref().is_some_and(|g| g.policy != "legacy"));
        if let Some(lists) = lists {
            scope = scope.hosts(lists);
        }
        if vm.is_rebuild() {
            scope = scope.passed_filters(&self.passed_on_rebuild);
        }
        scope
    }
}

/// The host lists of `vm` resolved against `cluster`: the hosts the lists keep
/// ([`VmSpec::keeps`]: the service host's name, and the `nodename` attribute, default the host
/// name) when the request forces hosts or nodes, skipping the filters unless it carries a
/// check type; else the hosts `ignore_hosts` removes. `None` without lists. Computes in
/// O(hosts) name comparisons.
fn host_lists(cluster: &Cluster, vm: &VmSpec) -> Option<HostLists> {
    if vm.ignore_hosts.is_empty() && !vm.forces() {
        return None;
    }
    let keeps = |(id, host): &(HostId, &crate::snapshot::Host)| {
        let node = host.attribute("nodename").and_then(|v| v.as_str()).unwrap_or(&host.name);
        vm.keeps(cluster.service_host_name(*id), node)
    };
    Some(if vm.forces() {
        HostLists::only(cluster.hosts().filter(keeps).map(|(id, _)| id)).skip_filters(vm.bypasses_filters())
    } else {
        HostLists::default().never(cluster.hosts().filter(|h| !keeps(h)).map(|(id, _)| id))
    })
}

#[cfg(test)]
mod tests;
