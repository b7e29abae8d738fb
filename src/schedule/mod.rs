//! The scheduler: filter, rank in tiers, pick, consume virtually, repeat.
//!
//! # Design
//!
//! A [`Scheduler`] is a list of filters and tiers of weighers; [`Scheduler::schedule`] places a
//! request's instances one after another on an immutable [`Cluster`]. Filters judge chunks of
//! 64 hosts to bit masks; weighers' raw values are normalised over the candidates, multiplied
//! and summed per tier; hosts compare tier by tier, ties going to the lower [`HostId`] (or the
//! previous round's order, [`Ties::PreviousOrder`]). A pick is consumed in an [`Overlay`], never
//! in the snapshot. Every fast path below gives the general path's answer bit for bit: same
//! hosts, scores and explanation.
//!
//! # Paths
//!
//! | path | when it runs | pinned by |
//! |---|---|---|
//! | general: the ranking path (candidate list, a ranking built from every candidate's raw values, pick) | a round whose ranking is kept or read: the first round of an incremental burst, a score breakdown ([`ExplainOptions::top`](crate::request::ExplainOptions::top)), [`Ties::PreviousOrder`] | `scheduler_agrees_with_the_naive_model` (`tests/properties/scheduler.rs`), against a model that filters, scores and sorts every host every round |
//! | one pass: filters chunk-major, folded extremes, ceiling-pruned scoring, best-`k` heap | [`Ties::HostId`] without [shuffled ties](SchedulerBuilder::shuffle_ties), no score breakdown, and a request for one instance or one that is not incremental (every round then: a subset size above 1, a filter or weigher that is not host-local, shared service hosts, restricted hosts that [skip the filters](HostLists::skip_filters)) | `the_one_pass_pick_equals_the_ranking_path` (`tests/properties/scheduler.rs`) |
//! | incremental bursts: the picked host alone re-checked and re-weighed, a tournament tree of the candidates | instances after the first, when every per-instance filter and every weigher is host-local, the subset size is 1, no service host is shared and no restricted host skips the filters | `host_id_incremental_burst_matches_the_rebuilt_one` (`src/schedule/tests.rs`) and `scheduler_agrees_with_the_naive_model` (`tests/properties/scheduler.rs`); with [`Ties::PreviousOrder`], `previous_order_kept_ranking_matches_the_rebuilt_one` (`src/schedule/tests.rs`) |
//! | kept previous order: a changed host moved by binary search, positions rewritten when read, re-sorted by integer keys (insertion sort first) | [`Ties::PreviousOrder`] with a kept ranking | `previous_order_kept_ranking_matches_the_rebuilt_one`, `previous_order_ties_match_the_plain_loop` (`src/schedule/tests.rs`) |
//! | implicit order: no order kept while the scores are pairwise distinct | [`Ties::PreviousOrder`], one tier, no NaN score | `implicit_order_matches_the_kept_order`, `implicit_order_written_out_when_a_score_becomes_nan` (`src/schedule/tests.rs`) |
//! | the crate's own merge sort instead of the standard stable sort | an order sorted while a score is NaN | `merge_sort_is_the_stable_sort` (`src/schedule/rank.rs`), `many_nan_scores_sort_without_a_panic` (`src/schedule/tests.rs`) |
//! | best `k` by partial selection instead of a full sort | the top-`k` pick of the ranking path | `best_k_matches_a_full_sort` (`src/schedule/tests.rs`) |
//! | shuffled ties: the tied hosts counted and drawn by a seeded key of their host id, over the kept ranking (one pass off) | [`shuffle_ties`](SchedulerBuilder::shuffle_ties), in the ranking path and incremental bursts | `shuffled_ties_pick_alike_on_every_path` (`tests/properties/scheduler.rs`): with and without a score breakdown, incremental and rebuilt rounds, against the model's best `k` and ties; `shuffled_ties_incremental_burst_matches_the_rebuilt_one` (`src/schedule/tests.rs`) |
//! | per-host multipliers asked once per aggregate class | a weigher whose multiplier follows the aggregate set, in both scoring paths | `multipliers_per_aggregate_class_match_each_hosts_own` (`src/nova/weighers/tests.rs`) |
//!
//! # The loop
//!
//! [`Scheduler::schedule`] places `request.count` instances one after another:
//!
//! 1. **Filter.** Filters run in the order they were added; a host stops at the first filter that
//!    rejects it, and once a filter leaves no host the later ones do not run. For the first
//!    instance every live host is a candidate; each later instance starts from the hosts that
//!    passed for the previous one (filters are monotone within a request), and filters that say
//!    [`once_per_request`](crate::filter::Filter::once_per_request) are not run again. Filters work on
//!    chunks of 64 hosts at a time ([`Filter::check_chunk`]).
//! 2. **Rank.** With two or more candidates, every weigher of a tier gives raw values, which are
//!    [normalised](crate::weigh::normalize) over the candidates, multiplied by the weigher's multiplier and
//!    summed into the tier's score. Hosts compare by tier 0's score (higher wins), then tier 1's,
//!    and so on; remaining ties go to the lower [`HostId`].
//! 3. **Pick.** The best host, or with [`host_subset_size`](SchedulerBuilder::host_subset_size)
//!    `k > 1` a uniformly random one of the best `k`, drawn from a generator seeded by the
//!    request's seed or the scheduler's. Same snapshot, request and seed: same answer. Hosts
//!    tied at the `k`-th score enter the best `k` by host id, or drawn at random with
//!    [`shuffle_ties`](SchedulerBuilder::shuffle_ties).
//! 4. **Consume.** The pick's resources are recorded in an [`Overlay`]; the next instance sees
//!    them as used. The [`Cluster`] is never mutated.
//!
//! If an instance finds no host, scheduling stops there: the [`Outcome`] holds the instances
//! placed so far and an [`Explanation`] of the failure. That is an outcome, not an error.
//!
//! # Cost
//!
//! - **One pass.** A round whose ranking is not kept afterwards (a request for one instance,
//!   or every round when the ranking is rebuilt each time anyway, as with a subset size above
//!   one) builds no candidate list and no score vectors, unless it must report a score breakdown
//!   or keep [`Ties::PreviousOrder`].
//! - One pass over the chunks runs the filters and folds each weigher's extremes
//!   ([`Weigher::weigh_chunk`]); a second scores only the chunks whose upper bound can still
//!   beat the best kept host, highest bound first.
//! - The one pass's answers, scores and explanations are those of the ranking path, bit for
//!   bit (a property test compares the two).
//! - **Bursts.** When every filter that runs per instance and every weigher is
//!   [host-local](crate::filter::Filter::host_local) (all built-ins are) and the subset size is 1, a
//!   pick can only change the picked host. The next instance then re-checks and re-weighs that
//!   one host and updates a tournament tree of the candidates, instead of filtering and
//!   weighing them all again.
//! - Only when a weigher's normalisation range moves are all scores recomputed (from the kept
//!   raw values). The answers are the same as recomputing everything, bit for bit.

mod capacity_hook;
mod rank;
mod scope;
mod single;

pub use scope::{HostLists, Scope};

/// The largest request `count` a [`Scheduler`] accepts unless
/// [`SchedulerBuilder::max_count`] says otherwise.
pub const DEFAULT_MAX_COUNT: u32 = 100_000;

use crate::error::{BuildError, ScheduleError};
use crate::explain::{Explanation, HostVerdict, RankedHost, RejectionCount, WeightTerm};
use crate::filter::chain::{every_reason, judge_chunk};
use crate::filter::{Filter, Rejections};
use crate::hooks::{hook_methods, Hooks};
use crate::id::HostId;
use crate::request::{Cx, Prepared, Request};
use crate::rng::SplitMix64;
use crate::snapshot::{push_lanes, Cluster, Overlay, CHUNK};
use crate::weigh::Weigher;
use rank::Ranking;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use std::fmt;

/// One placed instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Selection {
    /// Index of the instance within the request.
    pub instance: u32,
    /// The chosen host.
    pub host: HostId,
    /// Its name.
    pub host_name: String,
    /// Its score in each ranking tier (all 0 when it was the only candidate).
    pub scores: Vec<f64>,
}

/// The outcome of scheduling one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Outcome {
    /// Instances requested.
    pub requested: u32,
    /// Instances placed, in order; fewer than requested when one found no host.
    pub selections: Vec<Selection>,
    /// Why.
    pub explanation: Explanation,
}

impl Outcome {
    /// Whether every requested instance found a host.
    pub fn is_complete(&self) -> bool {
        self.selections.len() == self.requested as usize
    }

    /// The chosen hosts, in instance order.
    pub fn hosts(&self) -> impl Iterator<Item = HostId> + '_ {
        self.selections.iter().map(|s| s.host)
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "placed {}/{}", self.selections.len(), self.requested)?;
        for (i, s) in self.selections.iter().enumerate() {
            f.write_str(if i == 0 { ": " } else { ", " })?;
            f.write_str(&s.host_name)?;
        }
        write!(f, " ({})", self.explanation)
    }
}

/// How the scheduler ends ties between hosts with equal scores in every tier.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Ties {
    /// The lower [`HostId`] wins, in every round. A NaN score ranks after every number (and
    /// equal to another NaN), so every path picks alike.
    #[default]
    HostId,
    /// The filter scheduler's rule: each round's candidates are sorted stably by score, so ties
    /// keep the order of the previous round (the input order, by host id, in the first round),
    /// and a random pick among the best `k` leads the next round's list.
    PreviousOrder,
}

struct Weighed {
    weigher: Box<dyn Weigher>,
    multiplier: f64,
}

/// Reusable buffers for [`Scheduler::schedule_with`]: candidates, scores and the overlay. After
/// the first call on a cluster of a given size, scheduling allocates only for its output.
#[derive(Debug, Default)]
pub struct Scratch {
    masks: Vec<u64>,
    candidates: Vec<HostId>,
    ranking: Ranking,
    order: Vec<u32>,
    overlay: Overlay,
    rejections: Rejections,
    one_pass: single::OnePass,
}

impl Scratch {
    /// Empty buffers.
    pub fn new() -> Self {
        Scratch::default()
    }
}

/// Filters, ranking tiers and selection settings; see the [module docs](self).
///
/// ```
/// use placewise::{Cluster, HostSpec, Request, Scheduler, ComputeFilter, ResourceFilter, FreeResourceWeigher};
///
/// let cluster = Cluster::builder()
///     .host(HostSpec::new("small").vcpus(4.0).memory_mb(8192.0))
///     .host(HostSpec::new("big").vcpus(32.0).memory_mb(131072.0))
///     .build()?;
/// let scheduler = Scheduler::builder()
///     .filter(ComputeFilter)
///     .filter(ResourceFilter::new())
///     .weigher(FreeResourceWeigher::ram(), 1.0)
///     .build()?;
/// let placement = scheduler.schedule(&cluster, &Request::new(1).memory_mb(16384.0))?;
/// assert_eq!(placement.selections[0].host_name, "big");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Scheduler {
    filters: Vec<Box<dyn Filter>>,
    tiers: Vec<Vec<Weighed>>,
    host_subset_size: usize,
    seed: u64,
    ties: Ties,
    shuffle_ties: bool,
    max_count: u32,
}

impl fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let filters: Vec<&str> = self.filters.iter().map(|x| x.name()).collect();
        let tiers: Vec<Vec<(&str, f64)>> =
            self.tiers.iter().map(|t| t.iter().map(|w| (w.weigher.name(), w.multiplier)).collect()).collect();
        f.debug_struct("Scheduler")
            .field("filters", &filters)
            .field("tiers", &tiers)
            .field("host_subset_size", &self.host_subset_size)
            .field("seed", &self.seed)
            .field("ties", &self.ties)
            .field("shuffle_ties", &self.shuffle_ties)
            .field("max_count", &self.max_count)
            .finish()
    }
}

/// Builds a [`Scheduler`]. Filters run in the order added; weighers go into the current tier,
/// and [`tier`](SchedulerBuilder::tier) starts the next one.
#[derive(Debug)]
pub struct SchedulerBuilder {
    /// The scheduler being assembled, but for its filters and weighers;
    /// [`build`](SchedulerBuilder::build) validates it.
    draft: Scheduler,
    /// The filters and tiers of weighers, as every engine's builder keeps them.
    hooks: Hooks,
}

/// Filters run in the order added; weighers go to the current tier.
impl SchedulerBuilder {
    hook_methods!(hooks);

    /// Starts a new ranking tier: hosts tied on every earlier tier are compared by this one.
    pub fn tier(mut self) -> Self {
        self.hooks.add_tier();
        self
    }

    /// Picks at random among the best `k` hosts (default 1: always the best), drawn from the
    /// request's seed or the scheduler's.
    ///
    /// Ties: the best `k` are the hosts that rank first, and hosts with equal scores in every
    /// tier rank by [`Ties`]. With the default [`Ties::HostId`], when more hosts share the
    /// `k`-th best score than there are places left among the best `k`, the lower host ids
    /// take them, in every round: with many equally good hosts the same `k` always win.
    /// [`shuffle_ties`](SchedulerBuilder::shuffle_ties) draws the tied hosts at random instead.
    pub fn host_subset_size(mut self, k: usize) -> Self {
        self.draft.host_subset_size = k;
        self
    }

    /// How ties end (default [`Ties::HostId`]).
    pub fn ties(mut self, ties: Ties) -> Self {
        self.draft.ties = ties;
        self
    }

    /// Whether hosts tied at the `k`-th best score ([`host_subset_size`](SchedulerBuilder::host_subset_size)
    /// `k`, 1 by default) are drawn at random instead of by host id (default `false`), the
    /// generic form of Nova's `shuffle_best_same_weighed_hosts`. Each pick is then uniform over
    /// the best `k` as if the `k` places left to tied hosts were given to a seeded random
    /// choice of them: a host ranking strictly above the `k`-th best score is one of the `k`
    /// as before, a host strictly below never is, and each tied host is equally likely. When
    /// no host outside the best `k` shares the `k`-th score, the pick is the one without the
    /// option. Seeded like the subset pick: same snapshot, request and seed, same answer.
    ///
    /// Needs [`Ties::HostId`] (with [`Ties::PreviousOrder`] ties follow the previous round's
    /// order, the filter scheduler's rule); [`build`](SchedulerBuilder::build) refuses the two
    /// together. Costs O(candidates) a round more, and rounds take the ranking path (the
    /// module's Paths table).
    pub fn shuffle_ties(mut self, shuffle: bool) -> Self {
        self.draft.shuffle_ties = shuffle;
        self
    }

    /// Seed for the random pick when the request has none (default 0).
    pub fn seed(mut self, seed: u64) -> Self {
        self.draft.seed = seed;
        self
    }

    /// The largest `count` a request may ask for (default [`DEFAULT_MAX_COUNT`]); a larger one
    /// is refused with [`ScheduleError::CountTooLarge`] before any work. Everything a call
    /// allocates in proportion to the count (the selections) is bounded by it.
    pub fn max_count(mut self, max: u32) -> Self {
        self.draft.max_count = max;
        self
    }

    /// Validates and builds.
    ///
    /// # Errors
    ///
    /// [`BuildError::NonFiniteMultiplier`] for a non-finite multiplier; [`BuildError::Config`] for
    /// a subset size of 0, or [`shuffle_ties`](SchedulerBuilder::shuffle_ties) with
    /// [`Ties::PreviousOrder`].
    pub fn build(self) -> Result<Scheduler, BuildError> {
        let SchedulerBuilder { draft: mut scheduler, hooks } = self;
        if scheduler.host_subset_size == 0 {
            return Err(BuildError::Config { message: "host_subset_size must be at least 1".into() });
        }
        if scheduler.shuffle_ties && scheduler.ties != Ties::HostId {
            return Err(BuildError::Config {
                message: "shuffle_ties needs ties by host id: with the previous order, ties follow the previous round"
                    .into(),
            });
        }
        let (filters, tiers) = hooks.into_parts()?;
        scheduler.filters = filters;
        scheduler.tiers = tiers
            .into_iter()
            .map(|tier| tier.into_iter().map(|(weigher, multiplier)| Weighed { weigher, multiplier }).collect())
            .collect();
        Ok(scheduler)
    }
}

impl Scheduler {
    /// A builder with no filters, no weighers, subset size 1 and seed 0.
    pub fn builder() -> SchedulerBuilder {
        SchedulerBuilder {
            draft: Scheduler {
                filters: Vec::new(),
                tiers: Vec::new(),
                host_subset_size: 1,
                seed: 0,
                ties: Ties::HostId,
                shuffle_ties: false,
                max_count: DEFAULT_MAX_COUNT,
            },
            hooks: Hooks::new(),
        }
    }

    /// The foundation's built-ins: filters [`ComputeFilter`](crate::filter::builtin::ComputeFilter),
    /// [`ResourceFilter`](crate::filter::builtin::ResourceFilter), [`AvailabilityZoneFilter`](struct@crate::filter::builtin::AvailabilityZoneFilter)
    /// and [`LabelSelectorFilter`](crate::filter::builtin::LabelSelectorFilter), in that order; weighers free RAM
    /// (multiplier 1) and free vCPUs (multiplier 0.5), so instances spread.
    pub fn standard() -> Scheduler {
        use crate::filter::builtin::{AvailabilityZoneFilter, ComputeFilter, LabelSelectorFilter, ResourceFilter};
        use crate::weigh::builtin::FreeResourceWeigher;
        let mut scheduler = Scheduler::builder().draft;
        scheduler.filters = vec![
            Box::new(ComputeFilter),
            Box::new(ResourceFilter::new()),
            Box::new(AvailabilityZoneFilter),
            Box::new(LabelSelectorFilter),
        ];
        scheduler.tiers = vec![vec![
            Weighed { weigher: Box::new(FreeResourceWeigher::ram()), multiplier: 1.0 },
            Weighed { weigher: Box::new(FreeResourceWeigher::cpu()), multiplier: 0.5 },
        ]];
        scheduler
    }

    /// The filters, in run order.
    pub fn filters(&self) -> impl Iterator<Item = &dyn Filter> + '_ {
        self.filters.iter().map(|f| &**f)
    }

    /// Places `request.count` instances on `cluster`; see the [module docs](self).
    ///
    /// The first instance costs O(hosts × (filters + weighers)). Each later one costs
    /// O(candidates × (filters + weighers)) in general, and O(filters + weighers + log candidates)
    /// when everything is host-local and no normalisation range moves. Allocates only for the
    /// result once the buffers are warm; use [`schedule_with`](Scheduler::schedule_with) to keep
    /// them across calls.
    ///
    /// # Errors
    ///
    /// [`ScheduleError`] when the request is malformed or a filter or weigher cannot prepare for
    /// it. A request that does not fit is an `Ok` [`Outcome`] with fewer selections.
    pub fn schedule(&self, cluster: &Cluster, request: &Request) -> Result<Outcome, ScheduleError> {
        self.schedule_with(&mut Scratch::new(), cluster, request)
    }

    /// As [`schedule`](Scheduler::schedule), with caller-owned buffers.
    ///
    /// # Errors
    ///
    /// As [`schedule`](Scheduler::schedule).
    pub fn schedule_with(
        &self,
        scratch: &mut Scratch,
        cluster: &Cluster,
        request: &Request,
    ) -> Result<Outcome, ScheduleError> {
        self.run(scratch, cluster, request, Scope::default(), 1)
    }

    /// As [`schedule_with`](Scheduler::schedule_with), with what an engine over the core adds
    /// to the call ([`Scope`]): its own part of the request for its filters and weighers, the
    /// hosts the call is restricted to, and the filters that pass every host. Restricted hosts
    /// that [skip the filters](HostLists::skip_filters) are re-selected by the weighers alone
    /// every instance.
    ///
    /// # Errors
    ///
    /// As [`schedule`](Scheduler::schedule).
    pub fn schedule_scoped(
        &self,
        scratch: &mut Scratch,
        cluster: &Cluster,
        request: &Request,
        scope: Scope<'_>,
    ) -> Result<Outcome, ScheduleError> {
        self.run(scratch, cluster, request, scope, 1)
    }

    /// As [`schedule_with`](Scheduler::schedule_with), picking among the best
    /// `max(host_subset_size, at_least)` hosts: the shared placement loop's spread
    /// ([`RetryPolicy::top_k`](crate::shared::RetryPolicy::top_k)), so that concurrent
    /// schedulers configured for the best host do not all claim the same one.
    pub(crate) fn schedule_spread_with(
        &self,
        scratch: &mut Scratch,
        cluster: &Cluster,
        request: &Request,
        at_least: usize,
    ) -> Result<Outcome, ScheduleError> {
        self.run(scratch, cluster, request, Scope::default(), at_least)
    }

    /// The placement loop of every `schedule` call; see the [module docs](self).
    fn run(
        &self,
        scratch: &mut Scratch,
        cluster: &Cluster,
        request: &Request,
        scope: Scope<'_>,
        at_least: usize,
    ) -> Result<Outcome, ScheduleError> {
        let subset = self.host_subset_size.max(at_least);
        if request.count > self.max_count {
            return Err(ScheduleError::CountTooLarge { count: request.count, max: self.max_count });
        }
        let compiled = request.compile(cluster)?;
        let Scratch { masks, candidates, ranking, order, overlay, rejections, one_pass } = scratch;
        overlay.clear();
        rejections.clear(request.explain.verdicts);
        masks.clear();
        masks.extend((0..cluster.chunk_count()).map(|c| cluster.hot_chunk(c).live));
        candidates.clear();
        ranking.start(self.ties);
        let bypass = scope.bypasses_filters();
        let hosts = cluster.len() as u32;

        let (filter_states, weigher_states) = {
            let cx = Cx::new(cluster, request, &compiled, overlay, 0).with_part(scope.part);
            let f: SmallVec<[Prepared; 8]> = self.filters.iter().map(|f| f.prepare(&cx)).collect::<Result<_, _>>()?;
            let w: SmallVec<[Prepared; 8]> =
                self.tiers.iter().flatten().map(|w| w.weigher.prepare(&cx)).collect::<Result<_, _>>()?;
            (f, w)
        };
        // Restricted hosts that skip the filters are re-selected every round (an
        // engine's forced hosts), so they take the full path.
        let incremental = subset == 1
            && self.host_local(&Cx::new(cluster, request, &compiled, overlay, 0).with_part(scope.part), &filter_states)
            && !bypass;

        // A round whose ranking is not kept needs no candidate list: one pass filters and folds
        // the weighers' extremes, a second scores the survivors (see `single`).
        let single = self.ties == Ties::HostId
            && !self.shuffle_ties
            && request.explain.top == 0
            && (request.count <= 1 || !incremental);
        let mut available = 0;

        let mut rng = SplitMix64::new(request.seed.unwrap_or(self.seed));
        let mut selections = Vec::with_capacity(request.count as usize);
        let mut top = Vec::new();
        let mut instance = 0;
        // The previous pick's index in `candidates`, while the ranking still describes them.
        let mut last: Option<usize> = None;
        // A request for no instance still filters once, so its explanation is truthful.
        for i in 0..request.count.max(1) {
            instance = i;
            rejections.set_instance(i);
            let cx = Cx::new(cluster, request, &compiled, overlay, i).with_part(scope.part);
            if single {
                scope.restrict(0, masks);
                one_pass.filter_and_fold(
                    self,
                    &cx,
                    &filter_states,
                    &weigher_states,
                    masks,
                    rejections,
                    (!bypass).then_some(scope.passed),
                    candidates,
                )?;
                available = one_pass.survivors();
                if available == 0 || i == request.count {
                    break;
                }
                let Some((host, scores)) = one_pass.pick(self, &cx, &weigher_states, masks, subset, &mut rng)? else {
                    break;
                };
                selections.push(Selection { instance: i, host, host_name: cluster.host_name(host).to_owned(), scores });
                overlay.consume(host, &compiled.resources);
                continue;
            }
            match last.filter(|_| incremental) {
                // Only the previous pick changed: re-check and re-weigh that one host.
                Some(c) => {
                    let host = candidates[c];
                    let (chunk, bit) = (host.index() / CHUNK, 1u64 << (host.index() % CHUNK));
                    let mut one = [bit];
                    self.run_filters(&cx, &filter_states, scope.passed, i, chunk, &mut one, rejections);
                    if one[0] != 0 {
                        ranking.update(&self.tiers, &cx, &weigher_states, candidates, c)?;
                    } else {
                        masks[chunk] &= !bit;
                        if candidates.len() > 3 {
                            ranking.remove(&self.tiers, candidates, c);
                        } else {
                            ranking.settle(candidates);
                            candidates.remove(c);
                            ranking.full(&self.tiers, &cx, &weigher_states, candidates, false)?;
                        }
                    }
                }
                None => {
                    scope.restrict(0, masks);
                    if !bypass {
                        self.run_filters(&cx, &filter_states, scope.passed, i, 0, masks, rejections);
                    }
                    ranking.settle(candidates);
                    candidates.clear();
                    for (c, &m) in masks.iter().enumerate() {
                        push_lanes(candidates, c, m);
                    }
                    ranking.full(&self.tiers, &cx, &weigher_states, candidates, i == 0)?;
                }
            }
            if let Some(error) = rejections.take_error() {
                return Err(error);
            }
            available = candidates.len() as u32;
            if candidates.is_empty() || i == request.count {
                break;
            }
            let best = self.pick(ranking, candidates, order, subset, &mut rng);
            if i == 0 && request.explain.top > 0 {
                top = self.breakdown(cluster, ranking, candidates, order, request.explain.top as usize);
            }
            let host = candidates[best];
            selections.push(Selection {
                instance: i,
                host,
                host_name: cluster.host_name(host).to_owned(),
                scores: (0..self.tiers.len()).map(|t| ranking.score(t, best)).collect(),
            });
            last = Some(best);
            overlay.consume(host, &compiled.resources);
        }

        let cx = Cx::new(cluster, request, &compiled, overlay, instance).with_part(scope.part);
        let explanation = self.explain(&cx, &filter_states, hosts, available, rejections, top);
        Ok(Outcome { requested: request.count, selections, explanation })
    }

    /// Whether `host` may take one instance of `request` on `cluster`: this scheduler's own
    /// filter pass (the filters in order on the chunk path) run for that one host, as for a
    /// request's first instance. Commit
    /// validators use it to re-check a planned host against newer state with exactly the code
    /// that planned it. A host that is not live fails with no filter named.
    ///
    /// Computes in O(filters) plus the filters' per-request preparation; allocates only for a
    /// rejection's text.
    ///
    /// # Errors
    ///
    /// As [`schedule`](Scheduler::schedule): a malformed request, or a filter that cannot
    /// prepare for or judge it.
    pub fn check_host(&self, cluster: &Cluster, request: &Request, host: HostId) -> Result<HostVerdict, ScheduleError> {
        self.check_host_scoped(cluster, request, Scope::default(), host)
    }

    /// As [`check_host`](Scheduler::check_host), with what an engine adds to the call
    /// ([`Scope`]): a host its host lists refuse fails with no filter named, and the filters
    /// it marks as passed are skipped.
    ///
    /// # Errors
    ///
    /// As [`check_host`](Scheduler::check_host).
    pub fn check_host_scoped(
        &self,
        cluster: &Cluster,
        request: &Request,
        scope: Scope<'_>,
        host: HostId,
    ) -> Result<HostVerdict, ScheduleError> {
        let name = cluster.host_name(host).to_owned();
        if cluster.host(host).is_none() {
            return Ok(refused_unnamed(name, "no such host"));
        }
        let compiled = request.compile(cluster)?;
        let overlay = Overlay::new();
        let cx = Cx::new(cluster, request, &compiled, &overlay, 0).with_part(scope.part);
        let states: SmallVec<[Prepared; 8]> = self.filters.iter().map(|f| f.prepare(&cx)).collect::<Result<_, _>>()?;
        let (chunk, bit) = (host.index() / CHUNK, 1u64 << (host.index() % CHUNK));
        if scope.hosts.is_some_and(|h| !h.keeps(host)) {
            return Ok(refused_unnamed(name, "excluded by the request's host lists"));
        }
        let mut rejections = Rejections::new(false);
        let mut one = [bit];
        if !scope.bypasses_filters() {
            self.run_filters(&cx, &states, scope.passed, 0, chunk, &mut one, &mut rejections);
        }
        if let Some(error) = rejections.take_error() {
            return Err(error);
        }
        let rejected = rejections.counts().first().map(|&(filter, reason, _)| {
            let f = &self.filters[filter as usize];
            let fcx = cx.with_state(states[filter as usize].as_deref());
            (f.name().to_owned(), every_reason(f.as_ref(), &fcx, host, reason, &mut Vec::new()))
        });
        Ok(match rejected {
            Some((filter, reasons)) if one[0] == 0 => HostVerdict {
                host: name,
                passed: false,
                filter: Some(filter),
                reason: reasons.first().cloned(),
                reasons,
                instance: Some(0),
                disk: None,
            },
            _ => HostVerdict {
                host: name,
                passed: one[0] != 0,
                filter: None,
                reason: None,
                reasons: Vec::new(),
                instance: None,
                disk: None,
            },
        })
    }

    /// Whether every filter that runs after the first instance, and every weigher, judges a
    /// host by that host alone, so that a pick can only change the picked host's verdict and
    /// raw values.
    fn host_local(&self, cx: &Cx<'_>, states: &[Prepared]) -> bool {
        // A pick on one node of a shared service host changes what the group rules see on its
        // siblings, so such clusters take the full path.
        !cx.cluster().has_shared_service_hosts()
            && self
                .filters
                .iter()
                .zip(states)
                .all(|(f, s)| f.once_per_request() || f.host_local_for(&cx.with_state(s.as_deref())))
            && self.tiers.iter().flatten().all(|w| w.weigher.host_local())
    }

    /// Runs the filters over candidate masks, `masks[k]` covering chunk `first + k`. Filters
    /// marked once-per-request run only for instance 0; the filters the call's [`Scope`] marks
    /// as `passed` pass every host, so they are skipped; once a filter leaves no candidate, the
    /// later ones do not run.
    #[allow(clippy::too_many_arguments)]
    fn run_filters(
        &self,
        cx: &Cx<'_>,
        states: &[Prepared],
        passed: &[bool],
        instance: u32,
        first: usize,
        masks: &mut [u64],
        rejections: &mut Rejections,
    ) {
        run_active(self.active_filters(cx, states, passed, instance), first, masks, rejections);
    }

    /// The filters [`run_filters`](Scheduler::run_filters) runs for `instance`, in order, each
    /// with its position and its context, found as they are asked for (a pass that stops at
    /// the first filter looks no further); a pass over many chunks collects them once.
    fn active_filters<'s, 'a>(
        &'s self,
        cx: &Cx<'a>,
        states: &'a [Prepared],
        passed: &'a [bool],
        instance: u32,
    ) -> impl Iterator<Item = ActiveFilter<'s, 'a>> + 's
    where
        'a: 's,
    {
        let cx = *cx;
        self.filters
            .iter()
            .enumerate()
            .filter(move |(fi, f)| {
                !((instance > 0 && f.once_per_request()) || passed.get(*fi).copied().unwrap_or(false))
            })
            .map(move |(fi, f)| (fi as u32, &**f, cx.with_state(states[fi].as_deref())))
    }

    /// Index of the chosen candidate: the best, or with `subset > 1` a seeded pick among the
    /// best `subset` (left sorted in `order`).
    fn pick(
        &self,
        ranking: &mut Ranking,
        candidates: &[HostId],
        order: &mut Vec<u32>,
        subset: usize,
        rng: &mut SplitMix64,
    ) -> usize {
        let k = subset.min(candidates.len());
        if self.shuffle_ties && k >= 1 {
            return self.pick_shuffled(ranking, candidates, order, k, rng);
        }
        if k <= 1 {
            return ranking.best(self.tiers.len(), candidates).unwrap_or(0);
        }
        self.best_k(ranking, k, candidates, order);
        let chosen = order[rng.below(k)] as usize;
        ranking.promote(candidates, chosen);
        chosen
    }

    /// [`pick`](Scheduler::pick) with [`shuffle_ties`](SchedulerBuilder::shuffle_ties): a slot
    /// of the best `k` drawn as before (none for `k` = 1); a slot held by a host tied at the
    /// `k`-th score goes, when more hosts share that score than the best `k` hold, to the tied
    /// candidate with the least seeded key, so that each is equally likely. The key hashes
    /// the host id, not the candidate's index, so a path that reorders its candidates (an
    /// incremental burst's swap-remove) draws alike.
    fn pick_shuffled(
        &self,
        ranking: &mut Ranking,
        candidates: &[HostId],
        order: &mut Vec<u32>,
        k: usize,
        rng: &mut SplitMix64,
    ) -> usize {
        let tiers = self.tiers.len();
        if k == 1 {
            order.clear();
            order.extend(ranking.best(tiers, candidates).map(|b| b as u32));
        } else {
            self.best_k(ranking, k, candidates, order);
        }
        let kth = order[k - 1] as usize;
        let above = order[..k].iter().position(|&c| ranking.same_scores(tiers, c as usize, kth)).unwrap_or(k - 1);
        let tied = (0..candidates.len()).filter(|&c| ranking.same_scores(tiers, c, kth)).count();
        let slot = if k > 1 { rng.below(k) } else { 0 };
        if slot < above || tied == k - above {
            return order[slot] as usize;
        }
        let draw = rng.next_u64();
        let key = |c: usize| SplitMix64::new(draw ^ u64::from(candidates[c].0)).next_u64();
        (0..candidates.len())
            .filter(|&c| ranking.same_scores(tiers, c, kth))
            .min_by_key(|&c| (key(c), candidates[c]))
            .unwrap_or(kth)
    }

    fn best_k(&self, ranking: &Ranking, k: usize, candidates: &[HostId], order: &mut Vec<u32>) {
        let n = candidates.len();
        order.clear();
        if let Some(sorted) = ranking.ordered() {
            order.extend_from_slice(&sorted[..k]);
            return;
        }
        let tiers = self.tiers.len();
        let cmp = |a: &u32, b: &u32| ranking.rank(tiers, candidates, *a as usize, *b as usize);
        best_k_of(n, k, &cmp, order);
    }

    fn breakdown(
        &self,
        cluster: &Cluster,
        ranking: &Ranking,
        candidates: &[HostId],
        order: &mut Vec<u32>,
        top: usize,
    ) -> Vec<RankedHost> {
        let k = top.min(candidates.len());
        self.best_k(ranking, k, candidates, order);
        let two_or_more = candidates.len() >= 2;
        order
            .iter()
            .map(|&c| {
                let c = c as usize;
                let mut terms = Vec::new();
                let mut w = 0;
                for (t, tier) in self.tiers.iter().enumerate() {
                    for x in tier {
                        // With one candidate nothing was weighed: report zeros.
                        let (raw, normalized, multiplier) =
                            if two_or_more { ranking.term(w, c, x.multiplier) } else { (0.0, 0.0, x.multiplier) };
                        w += 1;
                        terms.push(WeightTerm {
                            tier: t as u32,
                            weigher: x.weigher.name().to_owned(),
                            raw,
                            normalized,
                            multiplier,
                            weighted: normalized * multiplier,
                        });
                    }
                }
                RankedHost {
                    host: cluster.host_name(candidates[c]).to_owned(),
                    disk: None,
                    scores: (0..self.tiers.len()).map(|t| ranking.score(t, c)).collect(),
                    terms,
                }
            })
            .collect()
    }

    fn explain(
        &self,
        cx: &Cx<'_>,
        states: &[Prepared],
        hosts: u32,
        available: u32,
        rejections: &Rejections,
        top: Vec<RankedHost>,
    ) -> Explanation {
        let describe = |filter: u32, reason| {
            let f = &self.filters[filter as usize];
            (f.name().to_owned(), f.describe(&cx.with_state(states[filter as usize].as_deref()), reason))
        };
        let mut counts: Vec<RejectionCount> = rejections
            .counts()
            .iter()
            .map(|&(filter, reason, count)| {
                let (filter, reason) = describe(filter, reason);
                RejectionCount { filter, reason, count }
            })
            .collect();
        counts.sort_by_key(|c| std::cmp::Reverse(c.count));
        let mut verdicts = Vec::new();
        if let Some(rejected) = rejections.hosts() {
            let cluster = cx.cluster();
            let mut rejected = rejected.to_vec();
            rejected.sort_by_key(|r| r.host);
            let mut codes = Vec::new();
            for (id, host) in cluster.hosts() {
                let verdict = match rejected.binary_search_by_key(&id, |r| r.host) {
                    Ok(i) => {
                        let r = rejected[i];
                        let f = &self.filters[r.filter as usize];
                        let fcx = cx.with_state(states[r.filter as usize].as_deref());
                        let reasons = every_reason(f.as_ref(), &fcx, id, r.reason, &mut codes);
                        HostVerdict {
                            host: host.name.to_string(),
                            passed: false,
                            filter: Some(f.name().to_owned()),
                            reason: reasons.first().cloned(),
                            reasons,
                            instance: Some(r.instance),
                            disk: None,
                        }
                    }
                    Err(_) => HostVerdict {
                        host: host.name.to_string(),
                        passed: true,
                        filter: None,
                        reason: None,
                        reasons: Vec::new(),
                        instance: None,
                        disk: None,
                    },
                };
                verdicts.push(verdict);
            }
        }
        Explanation { hosts, available, instance: cx.instance(), rejections: counts, verdicts, top, message: None }
    }
}

/// The verdict on a host refused before any filter ran (no such host, or outside the call's
/// host lists): no filter named, and so no list of the filter's reasons.
fn refused_unnamed(host: String, reason: &str) -> HostVerdict {
    HostVerdict {
        host,
        passed: false,
        filter: None,
        reason: Some(reason.to_owned()),
        reasons: Vec::new(),
        instance: Some(0),
        disk: None,
    }
}

/// A filter that runs in a pass: its position, the filter and its context
/// ([`Scheduler::active_filters`]).
type ActiveFilter<'s, 'a> = (u32, &'s dyn Filter, Cx<'a>);

/// Runs `active` over candidate masks, `masks[k]` covering chunk `first + k`; once a filter
/// leaves no candidate, the later ones do not run (nor are they asked for).
fn run_active<'s, 'a: 's>(
    active: impl IntoIterator<Item = ActiveFilter<'s, 'a>>,
    first: usize,
    masks: &mut [u64],
    rejections: &mut Rejections,
) {
    for (fi, f, fcx) in active {
        rejections.set_filter(fi);
        let mut any = 0;
        for (k, m) in masks.iter_mut().enumerate() {
            if *m != 0 {
                *m = f.check_chunk(&fcx, first + k, *m, rejections);
                any |= *m;
            }
        }
        if any == 0 {
            break;
        }
    }
}

/// [`run_active`] over the one chunk `chunk` with candidates `mask`: the lanes left.
#[inline]
fn filter_chunk(active: &[ActiveFilter<'_, '_>], chunk: usize, mask: u64, rejections: &mut Rejections) -> u64 {
    judge_chunk(active.iter().map(|(fi, f, fcx)| (*fi, *f, fcx)), chunk, mask, rejections)
}

/// The `k` first of `0..n` under `cmp` (`Less` ranks first; a total order), sorted, into the
/// cleared `order`. One pass keeps the best `k` in a heap whose root is the worst kept, so most
/// of the `n` cost one comparison with the root (a full selection costs several each).
fn best_k_of(n: usize, k: usize, cmp: &impl Fn(&u32, &u32) -> std::cmp::Ordering, order: &mut Vec<u32>) {
    order.clear();
    if k >= n {
        order.extend(0..n as u32);
    } else {
        for c in 0..n as u32 {
            if order.len() < k {
                order.push(c);
                let last = order.len() - 1;
                sift_up(order, last, cmp);
            } else if cmp(&c, &order[0]) == std::cmp::Ordering::Less {
                order[0] = c;
                sift_down(order, 0, cmp);
            }
        }
    }
    order.sort_unstable_by(cmp);
}

/// Moves `order[i]` up while it ranks after its parent (`cmp` = `Less` ranks first), keeping the
/// heap's worst element at the root.
fn sift_up(order: &mut [u32], mut i: usize, cmp: &impl Fn(&u32, &u32) -> std::cmp::Ordering) {
    while i > 0 {
        let parent = (i - 1) / 2;
        if cmp(&order[i], &order[parent]) != std::cmp::Ordering::Greater {
            break;
        }
        order.swap(i, parent);
        i = parent;
    }
}

/// Moves `order[i]` down below any child that ranks after it.
fn sift_down(order: &mut [u32], mut i: usize, cmp: &impl Fn(&u32, &u32) -> std::cmp::Ordering) {
    loop {
        let (l, r) = (2 * i + 1, 2 * i + 2);
        let mut worst = i;
        if l < order.len() && cmp(&order[l], &order[worst]) == std::cmp::Ordering::Greater {
            worst = l;
        }
        if r < order.len() && cmp(&order[r], &order[worst]) == std::cmp::Ordering::Greater {
            worst = r;
        }
        if worst == i {
            return;
        }
        order.swap(i, worst);
        i = worst;
    }
}

#[cfg(test)]
pub(crate) mod tests;
