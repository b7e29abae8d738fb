//! One contract for every engine that runs a caller's `Filter`s and `Weigher`s: the same filter
//! or weigher behaves the same under each (issue 41, item 3). Each case is a generic function,
//! instantiated once per engine below (core, Nova, spread, service, replica).

use placewise::nova::NovaScheduler;
use placewise::replica::{ReplicaScheduler, ReplicaSettings, Volume};
use placewise::request::Prepared;
use placewise::service::{Decision, IngressAllocation, ServiceRequest, ServiceScheduler, ServiceSpec, Site};
use placewise::snapshot::DiskSpec;
use placewise::spread::{SpreadMode, SpreadRequest, SpreadScheduler};
use placewise::weigh::Extension;
use placewise::{
    filter_fn, weigher_fn, Cluster, Cx, Filter, HostId, HostSpec, Outcome, Request, ScheduleError, Scheduler, Verdict,
    Weigher,
};

/// What a case needs of an engine: place `count` instances with these caller filters and
/// weighers, and say where they went or why not.
trait Engine {
    /// Host names in placement order, the explanation's text when some instance found no host,
    /// or the error.
    fn place(
        cluster: &Cluster,
        filters: Vec<Box<dyn Filter>>,
        weighers: Vec<(Box<dyn Weigher>, f64)>,
        count: u32,
    ) -> Result<(Vec<String>, Option<String>), String>;
}

/// `$builder` with the caller's `$filters` and `$weighers` added in order, by the engine's own
/// builder methods (`filter_boxed`, `weigher_boxed`).
macro_rules! hooked {
    ($builder:expr, $filters:expr, $weighers:expr) => {{
        let mut builder = $builder;
        for f in $filters {
            builder = builder.filter_boxed(f);
        }
        for (w, m) in $weighers {
            builder = builder.weigher_boxed(w, m);
        }
        builder
    }};
}

/// The core scheduler.
struct Core;

/// The hosts of a core placement, and its explanation when some instance found no host.
fn placed(placement: &Outcome) -> (Vec<String>, Option<String>) {
    let hosts = placement.selections.iter().map(|s| s.host_name.clone()).collect();
    (hosts, (!placement.is_complete()).then(|| placement.explanation.to_string()))
}

impl Engine for Core {
    fn place(
        cluster: &Cluster,
        filters: Vec<Box<dyn Filter>>,
        weighers: Vec<(Box<dyn Weigher>, f64)>,
        count: u32,
    ) -> Result<(Vec<String>, Option<String>), String> {
        let scheduler = hooked!(Scheduler::builder(), filters, weighers).build().map_err(|e| e.to_string())?;
        scheduler.schedule(cluster, &Request::new(count)).map(|p| placed(&p)).map_err(|e| e.to_string())
    }
}

/// The Nova engine, on a request with an empty VM part: the caller's hooks as the core runs them.
struct Nova;

impl Engine for Nova {
    fn place(
        cluster: &Cluster,
        filters: Vec<Box<dyn Filter>>,
        weighers: Vec<(Box<dyn Weigher>, f64)>,
        count: u32,
    ) -> Result<(Vec<String>, Option<String>), String> {
        let scheduler = hooked!(NovaScheduler::builder(), filters, weighers).build().map_err(|e| e.to_string())?;
        scheduler.schedule(cluster, &Request::new(count).into()).map(|p| placed(&p)).map_err(|e| e.to_string())
    }
}

/// The spread engine, with no preference: SwarmKit's pipeline, then the caller's hooks. The
/// balanced mode, where the caller's weighers order every candidate; the compatible mode keeps,
/// as SwarmKit does, only as many nodes of a leaf as the batch has tasks by SwarmKit's own keys
/// before they are weighed (the spread module's docs), so a batch smaller than the cluster
/// weighs fewer hosts there.
struct Spread;

impl Engine for Spread {
    fn place(
        cluster: &Cluster,
        filters: Vec<Box<dyn Filter>>,
        weighers: Vec<(Box<dyn Weigher>, f64)>,
        count: u32,
    ) -> Result<(Vec<String>, Option<String>), String> {
        let scheduler = hooked!(SpreadScheduler::builder(), filters, weighers).build().map_err(|e| e.to_string())?;
        let request = SpreadRequest::new("svc", count).mode(SpreadMode::Balanced);
        let outcome = scheduler.schedule(cluster, &request).map_err(|e| e.to_string())?;
        let hosts = outcome.selections.iter().map(|a| a.host_name.clone()).collect();
        Ok((hosts, outcome.message().map(str::to_owned)))
    }
}

/// The service engine: one replicated service of `count` instances, the engine's own filters
/// (none apply to a service without limits), then the caller's; the caller's weighers break
/// ties between the hosts of the smallest rank key. The engine applies each placement to its
/// working snapshot before the next one, so a hook reads earlier picks in the host records
/// (`Cx::instances`); the overlay stays empty, and the rank key (fewest instances of the same
/// service first) spreads a burst before any weigher is asked.
struct Service;

impl Engine for Service {
    fn place(
        cluster: &Cluster,
        filters: Vec<Box<dyn Filter>>,
        weighers: Vec<(Box<dyn Weigher>, f64)>,
        count: u32,
    ) -> Result<(Vec<String>, Option<String>), String> {
        let scheduler = hooked!(ServiceScheduler::builder(), filters, weighers).build().map_err(|e| e.to_string())?;
        let site = Site::new(cluster, IngressAllocation::Dhcp).map_err(|e| e.to_string())?;
        let request = ServiceRequest::new(site, [ServiceSpec::replicated("app", "svc", count)]);
        let outcome = scheduler.schedule(cluster, &request).map_err(|e| e.to_string())?;
        let hosts = outcome
            .decisions
            .iter()
            .filter_map(|d| match d {
                Decision::Placed { host, .. } => Some(host.clone()),
                _ => None,
            })
            .collect();
        Ok((hosts, (!outcome.unschedulable.is_empty()).then(|| outcome.explanation.to_string())))
    }
}

/// The replica engine: `count` replicas of one new volume, Longhorn's default settings, the
/// caller's filters and weighers as its node hooks. The cases map onto it so: an instance is a
/// replica, a host a node (each with one disk, which the other engines do not read); a failure
/// is the volume's `Scheduled=False` message, which names a caller filter as `rejected by
/// <name>`. The hosts share one zone (none given), so node anti-affinity (hard by default), not
/// zone anti-affinity, keeps two replicas off one node: a burst spreads by that rule first, and
/// a weigher reading earlier picks (the call's earlier replicas, its context's overlay) only
/// agrees with it.
struct Replica;

impl Engine for Replica {
    fn place(
        cluster: &Cluster,
        filters: Vec<Box<dyn Filter>>,
        weighers: Vec<(Box<dyn Weigher>, f64)>,
        count: u32,
    ) -> Result<(Vec<String>, Option<String>), String> {
        let scheduler = hooked!(ReplicaScheduler::builder(ReplicaSettings::default()), filters, weighers)
            .build()
            .map_err(|e| e.to_string())?;
        let volume = Volume::new("vol", 1 << 30, count);
        let schedule = scheduler.schedule(cluster, &volume, &[], 0).map_err(|e| e.to_string())?;
        let hosts = schedule.placed().map(|(_, p)| p.node_id.clone()).collect();
        Ok((hosts, schedule.condition_message()))
    }
}

fn cluster() -> Cluster {
    let mut b = Cluster::builder();
    for i in 0..4 {
        let disk = DiskSpec::new("d1", 100 << 30, 80 << 30);
        b = b.host(HostSpec::new(format!("h{i}")).vcpus(8.0).memory_mb(8192.0).disk(disk));
    }
    b.build().unwrap()
}

/// A filter whose preparation fails.
struct FailingPrepare;

impl Filter for FailingPrepare {
    fn name(&self) -> &str {
        "failing"
    }

    fn prepare(&self, _: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Err(ScheduleError::filter("failing", "input did not parse"))
    }

    fn check(&self, _: &Cx<'_>, _: HostId) -> Verdict {
        Verdict::Pass
    }
}

/// A weigher whose multiplier for `h2` is not finite.
struct InfiniteOnH2;

impl Weigher for InfiniteOnH2 {
    fn name(&self) -> &str {
        "infinite"
    }

    fn weigh(&self, _: &Cx<'_>, host: HostId) -> f64 {
        f64::from(host.0)
    }

    fn extension(&self) -> Option<&dyn Extension> {
        Some(self)
    }
}

impl Extension for InfiniteOnH2 {
    fn multiplier(&self, cx: &Cx<'_>, host: HostId, configured: f64) -> f64 {
        if cx.cluster().host_name(host) == "h2" {
            f64::INFINITY
        } else {
            configured
        }
    }

    fn per_host_multiplier(&self) -> bool {
        true
    }
}

fn a_failing_prepare_is_an_error<E: Engine>() {
    let err = E::place(&cluster(), vec![Box::new(FailingPrepare)], vec![], 1).unwrap_err();
    assert!(err.contains("input did not parse"), "{err}");
}

fn a_non_finite_multiplier_is_an_error<E: Engine>() {
    let err = E::place(&cluster(), vec![], vec![(Box::new(InfiniteOnH2), 1.0)], 1).unwrap_err();
    assert!(err.contains("not finite"), "{err}");
}

fn a_filter_that_rejects_everything_places_nothing_and_is_named<E: Engine>() {
    let none = filter_fn("nothing fits", |_: &Cx<'_>, _| false);
    let (hosts, why) = E::place(&cluster(), vec![Box::new(none)], vec![], 2).unwrap();
    assert!(hosts.is_empty());
    let why = why.expect("an explanation");
    assert!(why.contains("nothing fits"), "{why}");
}

fn a_closure_filter_keeps_hosts_out<E: Engine>() {
    let not_h0 = filter_fn("not h0", |cx: &Cx<'_>, h| &*cx.host(h).name != "h0");
    let (hosts, why) = E::place(&cluster(), vec![Box::new(not_h0)], vec![], 3).unwrap();
    assert_eq!(why, None);
    assert_eq!(hosts.len(), 3);
    assert!(hosts.iter().all(|h| h != "h0"), "{hosts:?}");
}

fn a_weigher_decides_among_equal_hosts<E: Engine>() {
    // The highest id wins under a positive multiplier, the lowest under a negative one.
    for (multiplier, best) in [(1.0, "h3"), (-1.0, "h0")] {
        let by_id = weigher_fn("by id", |_: &Cx<'_>, h: HostId| f64::from(h.0));
        let (hosts, _) = E::place(&cluster(), vec![], vec![(Box::new(by_id), multiplier)], 1).unwrap();
        assert_eq!(hosts, [best]);
    }
}

fn a_weigher_reading_earlier_picks_spreads_a_burst<E: Engine>() {
    let fewest = weigher_fn("fewest placed", |cx: &Cx<'_>, h: HostId| -f64::from(cx.overlay().placed(h)));
    let (mut hosts, why) = E::place(&cluster(), vec![], vec![(Box::new(fewest), 1.0)], 4).unwrap();
    assert_eq!(why, None);
    hosts.sort();
    assert_eq!(hosts, ["h0", "h1", "h2", "h3"]);
}

macro_rules! contract {
    ($($engine:ident: $module:ident),* $(,)?) => {$(
        mod $module {
            use super::*;

            #[test]
            fn a_failing_prepare_is_an_error() {
                super::a_failing_prepare_is_an_error::<$engine>();
            }

            #[test]
            fn a_non_finite_multiplier_is_an_error() {
                super::a_non_finite_multiplier_is_an_error::<$engine>();
            }

            #[test]
            fn a_filter_that_rejects_everything_places_nothing_and_is_named() {
                super::a_filter_that_rejects_everything_places_nothing_and_is_named::<$engine>();
            }

            #[test]
            fn a_closure_filter_keeps_hosts_out() {
                super::a_closure_filter_keeps_hosts_out::<$engine>();
            }

            #[test]
            fn a_weigher_decides_among_equal_hosts() {
                super::a_weigher_decides_among_equal_hosts::<$engine>();
            }

            #[test]
            fn a_weigher_reading_earlier_picks_spreads_a_burst() {
                super::a_weigher_reading_earlier_picks_spreads_a_burst::<$engine>();
            }
        }
    )*};
}

contract!(Core: core, Nova: nova, Spread: spread, Service: service, Replica: replica);
