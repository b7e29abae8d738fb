//! Unit tests of the filters and the engine.

use super::*;
use crate::filter::{Filter, Verdict};
use crate::id::HostId;
use crate::request::{Cx, Request};
use crate::snapshot::{Cluster, ClusterEvent, HostSpec, HostState, InstanceSpec, Overlay};
use std::sync::Arc;

fn e(s: &str) -> MatchExpr {
    s.parse().unwrap()
}

/// Runs `f` on every host of `cluster` (one chunk), unprepared, prepared and by chunk, and
/// returns the verdicts; with `consume`, host 0 first gets that much memory in the overlay.
fn verdicts_with(cluster: &Cluster, f: &dyn Filter, consume: Option<f64>) -> Vec<Verdict> {
    let request = Request::new(1);
    let compiled = request.compile(cluster).unwrap();
    let mut overlay = Overlay::new();
    if let Some(mb) = consume {
        overlay.consume(HostId(0), &[(crate::id::ResourceId::MEMORY_MB, mb)]);
    }
    let cx = Cx::new(cluster, &request, &compiled, &overlay, 0);
    let prepared = f.prepare(&cx).unwrap();
    let pcx = cx.with_state(prepared.as_deref());
    let out: Vec<Verdict> = cluster
        .host_ids()
        .map(|h| {
            let v = f.check(&pcx, h);
            assert_eq!(v, f.check(&cx, h), "prepared and unprepared agree");
            v
        })
        .collect();
    let live = cluster.hot_chunk(0).live;
    let mut rejections = crate::filter::Rejections::new(true);
    let pass = f.check_chunk(&pcx, 0, live, &mut rejections);
    for (i, v) in out.iter().enumerate() {
        assert_eq!(pass & (1 << i) != 0, v.is_pass(), "chunk and host paths agree on host {i}");
    }
    let by_chunk: Vec<(u32, crate::filter::Reason)> =
        rejections.hosts().unwrap().iter().map(|r| (r.host.0, r.reason)).collect();
    let by_host: Vec<(u32, crate::filter::Reason)> = out
        .iter()
        .enumerate()
        .filter_map(|(i, v)| match v {
            Verdict::Reject(r) => Some((i as u32, *r)),
            Verdict::Pass => None,
        })
        .collect();
    assert_eq!(by_chunk, by_host, "same reasons");
    out
}

fn verdicts(cluster: &Cluster, f: &dyn Filter) -> Vec<Verdict> {
    verdicts_with(cluster, f, None)
}

fn site(cluster: &Cluster, ingress: IngressAllocation) -> Arc<Site> {
    Arc::new(Site::new(cluster, ingress).unwrap())
}

fn placed(outcome: &ServiceOutcome) -> Vec<(String, String)> {
    outcome
        .decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Placed { instance, host, .. } | Decision::Moved { instance, to: host, .. } => {
                Some((instance.clone(), host.clone()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn volumes_first_fit_sharing_labels_and_space() {
    let c = Cluster::builder()
        .host(EdgeHost::new("none").build())
        .host(EdgeHost::new("hdd").volume("slow", 1000.0, &[("type", "hdd")]).build())
        .host(EdgeHost::new("ssd-small").volume("fast", 100.0, &[("type", "ssd")]).build())
        .host(
            EdgeHost::new("ssd-big")
                .volume("fast", 300.0, &[("type", "ssd")])
                .with(|h| h.instance(InstanceSpec::new("x").resource("volume/fast", 50.0)))
                .build(),
        )
        .build()
        .unwrap();
    let s = site(&c, IngressAllocation::Dhcp);
    let two = VolumesFilter::new(
        s.clone(),
        vec![
            VolumeRequest::ephemeral("a", 120.0).labels(e("type = ssd")),
            VolumeRequest::persistent("b", 120.0).labels(e("type = ssd")),
        ],
    );
    // ssd-big has 250 left: both volumes share it (240); ssd-small is too small.
    assert_eq!(
        verdicts(&c, &two),
        [
            Verdict::Reject(VolumesFilter::NO_VOLUMES),
            Verdict::Reject(VolumesFilter::NO_MATCH),
            Verdict::Reject(VolumesFilter::NO_SPACE),
            Verdict::Pass
        ]
    );
    let three = VolumesFilter::new(s.clone(), vec![VolumeRequest::ephemeral("a", 130.0); 2]);
    assert_eq!(verdicts(&c, &three)[3], Verdict::Reject(VolumesFilter::NO_SPACE), "260 > 250 left");
    assert_eq!(verdicts(&c, &three)[1], Verdict::Pass, "no label expression: any local volume");
    // Pinned to ssd-big while it fits: every other host is rejected.
    let pinned = VolumesFilter::new(s.clone(), vec![VolumeRequest::ephemeral("a", 10.0)]).ephemeral_on(HostId(3));
    let v = verdicts(&c, &pinned);
    assert_eq!(v[1], Verdict::Reject(VolumesFilter::PINNED));
    assert_eq!(v[3], Verdict::Pass);
    // …and released when it no longer fits there.
    let too_big = VolumesFilter::new(s, vec![VolumeRequest::ephemeral("a", 500.0)]).ephemeral_on(HostId(3));
    assert_eq!(verdicts(&c, &too_big)[1], Verdict::Pass);
}

#[test]
fn ingress_by_allocation_method() {
    let c = Cluster::builder()
        .host(EdgeHost::new("pool").ingress_addresses(1).build())
        .host(
            EdgeHost::new("full")
                .ingress_addresses(1)
                .with(|h| h.instance(InstanceSpec::new("x").resource(INGRESS_IP, 1.0)))
                .build(),
        )
        .host(EdgeHost::new("no-pool").build())
        .build()
        .unwrap();
    let f = IngressFilter::new(site(&c, IngressAllocation::HostPools));
    let r = Verdict::Reject(IngressFilter::HOST_POOL);
    assert_eq!(verdicts(&c, &f), [Verdict::Pass, r, r]);
    let f = IngressFilter::new(site(&c, IngressAllocation::SitePool { addresses: 1 }));
    assert!(verdicts(&c, &f).iter().all(|v| *v == Verdict::Reject(IngressFilter::SITE_POOL)), "1 of 1 used");
    let f = IngressFilter::new(site(&c, IngressAllocation::SitePool { addresses: 2 }));
    assert!(verdicts(&c, &f).iter().all(|v| v.is_pass()));
    for m in [IngressAllocation::Dhcp, IngressAllocation::PortForward] {
        assert!(verdicts(&c, &IngressFilter::new(site(&c, m))).iter().all(|v| v.is_pass()));
    }
}

#[test]
fn limits_devices_gpus_and_count() {
    let c = Cluster::builder()
        .host(EdgeHost::new("big").memory_mb(1000.0).cpus(4.0).container_layer_mb(100.0).gpus(2).build())
        .host(EdgeHost::new("no-quota").memory_mb(1000.0).cpus(4.0).device("cam0", &[("camera", "usb")]).build())
        .host(
            EdgeHost::new("busy")
                .memory_mb(1000.0)
                .cpus(4.0)
                .gpus(1)
                .with(|h| h.instance(InstanceSpec::new("a/s/0").group("a/s").resource("memory_mb", 900.0)))
                .build(),
        )
        .build()
        .unwrap();
    let limits = ServiceSpec::replicated("a", "s", 1).memory_mb(200.0).cpus(2.0).container_layer_mb(50.0).limits;
    assert_eq!(
        verdicts(&c, &ContainerLimitsFilter::new(limits)),
        [
            Verdict::Pass,
            Verdict::Reject(ContainerLimitsFilter::NO_LAYER_QUOTA),
            Verdict::Reject(ContainerLimitsFilter::MEMORY)
        ]
    );
    // What earlier instances of the same request took counts (the overlay), on both paths.
    let small = ServiceSpec::replicated("a", "s", 1).memory_mb(200.0).limits;
    assert!(verdicts(&c, &ContainerLimitsFilter::new(small))[0].is_pass());
    assert_eq!(
        verdicts_with(&c, &ContainerLimitsFilter::new(small), Some(900.0))[0],
        Verdict::Reject(ContainerLimitsFilter::MEMORY)
    );
    let s = site(&c, IngressAllocation::Dhcp);
    let gpus = DeviceFilter::new(s.clone(), vec![], 2);
    assert_eq!(
        verdicts(&c, &gpus),
        [Verdict::Pass, Verdict::Reject(DeviceFilter::GPUS), Verdict::Reject(DeviceFilter::GPUS)]
    );
    let cam = DeviceFilter::new(s, vec![e("camera"), e("camera ~ '^us'")], 0);
    assert_eq!(verdicts(&c, &cam), [Verdict::reject(1), Verdict::Pass, Verdict::reject(1)]);
    let count = InstanceCountFilter::new("a/s", 1);
    assert_eq!(verdicts(&c, &count), [Verdict::Pass, Verdict::Pass, Verdict::reject(0)]);
}

#[test]
fn affinity_is_soft_and_maximised() {
    let c = Cluster::builder()
        .host(HostSpec::new("db").instance(InstanceSpec::new("a/db/0").group("a/db")))
        .host(
            HostSpec::new("db-and-cache")
                .instance(InstanceSpec::new("a/db/1").group("a/db"))
                .instance(InstanceSpec::new("a/cache/0").group("a/cache")),
        )
        .host(HostSpec::new("empty"))
        .build()
        .unwrap();
    let p = PreferredAffinity::new(vec!["a/db".into()], vec!["a/cache".into()]);
    let mut all: Vec<HostId> = c.host_ids().collect();
    p.narrow(&c, &mut all);
    assert_eq!(all, [HostId(0)], "db without cache satisfies both");
    let mut rest = vec![HostId(1), HostId(2)];
    p.narrow(&c, &mut rest);
    assert_eq!(rest, [HostId(1), HostId(2)], "one preference each: both stay");
    let mut only = vec![HostId(1)];
    PreferredAffinity::new(vec![], vec!["a/cache".into()]).narrow(&c, &mut only);
    assert_eq!(only, [HostId(1)], "never removes the last host");
}

#[test]
fn service_filters_compose_with_the_foundation_scheduler() {
    let c = Cluster::builder()
        .host(EdgeHost::new("a").memory_mb(1000.0).label("gpu", "yes").build())
        .host(EdgeHost::new("b").memory_mb(1000.0).label("gpu", "yes").build())
        .host(EdgeHost::new("c").memory_mb(1000.0).build())
        .build()
        .unwrap();
    let scheduler = crate::schedule::Scheduler::builder()
        .filter(crate::filter::builtin::ComputeFilter)
        .filter(HostLabelsFilter::new(e("gpu = yes")))
        .filter(InstanceCountFilter::new("a/s", 1))
        .build()
        .unwrap();
    let placement = scheduler.schedule(&c, &Request::new(3).group("a/s")).unwrap();
    let hosts: Vec<&str> = placement.selections.iter().map(|s| s.host_name.as_str()).collect();
    assert_eq!(hosts, ["a", "b"], "one per host among the labelled ones, via the overlay's count");
    assert!(placement.explanation.to_string().contains("host labels do not match `gpu = yes`"));
}

/// A request for `services` on `site`.
fn req(site: &Site, services: &[ServiceSpec]) -> ServiceRequest {
    ServiceRequest::new(site.clone(), services.iter().cloned())
}

fn three_hosts() -> Cluster {
    Cluster::builder()
        .host(EdgeHost::new("h0").memory_mb(1000.0).label("zone", "a").build())
        .host(EdgeHost::new("h1").memory_mb(1000.0).label("zone", "a").build())
        .host(EdgeHost::new("h2").memory_mb(1000.0).label("zone", "b").build())
        .build()
        .unwrap()
}

#[test]
fn engine_spreads_then_keeps_then_moves_on_spec_change() {
    let c = three_hosts();
    let s = Site::new(&c, IngressAllocation::Dhcp).unwrap();
    let web = ServiceSpec::replicated("app", "web", 4).memory_mb(100.0);
    let out = ServiceScheduler::new().schedule(&c, &req(&s, std::slice::from_ref(&web))).unwrap();
    let hosts: Vec<String> = placed(&out).into_iter().map(|p| p.1).collect();
    assert_eq!(hosts, ["h0", "h1", "h2", "h0"], "fewest same-service first, then lowest id");
    assert_eq!(out.events.len(), 4);
    assert_eq!(out.cluster.host(HostId(0)).unwrap().resource(crate::id::ResourceId::MEMORY_MB).used, 200.0);

    // A spec change: only zone a; h2's instance moves, the others stay.
    let web_a = web.clone().match_host_labels(e("zone = a"));
    let again = ServiceScheduler::new().schedule(&out.cluster, &req(&s, &[web_a])).unwrap();
    let kept = again.decisions.iter().filter(|d| matches!(d, Decision::Kept { .. })).count();
    assert_eq!(kept, 3);
    assert!(again.decisions.contains(&Decision::Moved {
        instance: "app/web/2".into(),
        from: "h2".into(),
        to: "h1".into(),
        key: RankKey::new(1, 0, 0, 0),
    }));

    // Scale down: the highest indices go.
    let fewer = ServiceSpec::replicated("app", "web", 2).memory_mb(100.0);
    let down = ServiceScheduler::new().schedule(&out.cluster, &req(&s, &[fewer])).unwrap();
    let removed: Vec<&Decision> = down.decisions.iter().filter(|d| matches!(d, Decision::Removed { .. })).collect();
    assert_eq!(removed.len(), 2);
    assert!(down
        .cluster
        .hosts()
        .all(|(_, h)| h.instances.iter().all(|i| !i.id.ends_with("/2") && !i.id.ends_with("/3"))));
}

#[test]
fn unschedulable_is_an_outcome_with_reasons_most_hosts_first_and_leaves_the_instance_unassigned() {
    let c = three_hosts();
    let s = Site::new(&c, IngressAllocation::Dhcp).unwrap();
    let big = ServiceSpec::replicated("app", "big", 1).memory_mb(5000.0).match_host_labels(e("zone = a"));
    let out = ServiceScheduler::new().schedule(&c, &req(&s, &[big])).unwrap();
    assert!(out.decisions.is_empty());
    assert_eq!(
        out.unschedulable[0].to_string(),
        "app/big/0 cannot be scheduled: 0/3 hosts are available: 2 insufficient memory, 1 host labels do not match `zone = a`"
    );
    assert!(out.events.is_empty());
}

#[test]
fn count_cap_spreads_new_placements_and_sticky_instances_ignore_it() {
    let c = three_hosts();
    let s = Site::new(&c, IngressAllocation::Dhcp).unwrap();
    // Three instances already stacked on h0: they stay although the cap would be 1.
    let mut stacked = c.clone();
    for i in 0..3 {
        stacked = stacked
            .apply(&ClusterEvent::InstancePlaced {
                host: "h0".into(),
                instance: InstanceSpec::new(format!("app/web/{i}")).group("app/web"),
            })
            .unwrap();
    }
    let web = ServiceSpec::replicated("app", "web", 3);
    let out = ServiceScheduler::new().schedule(&stacked, &req(&s, std::slice::from_ref(&web))).unwrap();
    assert!(out.decisions.iter().all(|d| matches!(d, Decision::Kept { .. })));
    // The rebalance plan evens them out: two moves, not applied.
    let plan = ServiceScheduler::new().rebalance_plan(&stacked, &req(&s, &[web])).unwrap();
    let moves: Vec<(&str, &str, &str)> =
        plan.iter().map(|m| (m.instance.as_str(), m.from.as_str(), m.to.as_str())).collect();
    assert_eq!(moves, [("app/web/2", "h0", "h1"), ("app/web/1", "h0", "h2")]);
    // The cap binds where the soft rule would stack: affinity to `db` (on h0 only) narrows to
    // h0, but four replicas on three eligible hosts allow ceil(4/3) = 2 there.
    let with_db = c
        .apply(&ClusterEvent::InstancePlaced {
            host: "h0".into(),
            instance: InstanceSpec::new("app/db/0").group("app/db"),
        })
        .unwrap();
    let near_db = ServiceSpec::replicated("app", "near", 4).preferred_affinity("db");
    let out = ServiceScheduler::new().schedule(&with_db, &req(&s, &[near_db])).unwrap();
    let hosts: Vec<String> = placed(&out).into_iter().map(|p| p.1).collect();
    assert_eq!(hosts, ["h0", "h0", "h1", "h2"]);
}

#[test]
fn one_per_matching_host_mode() {
    let c = three_hosts();
    let s = Site::new(&c, IngressAllocation::Dhcp).unwrap();
    let agent = ServiceSpec::one_per_matching_host("ops", "agent").match_host_labels(e("zone = a"));
    let out = ServiceScheduler::new().schedule(&c, &req(&s, std::slice::from_ref(&agent))).unwrap();
    assert_eq!(placed(&out), [("ops/agent/0".into(), "h0".into()), ("ops/agent/1".into(), "h1".into())]);
    // h2 joins zone a: it gets an instance; the others stay.
    let mut spec = out.cluster.to_spec().hosts[2].clone();
    spec.labels.insert("zone".into(), "a".into());
    let relabelled = out.cluster.apply(&ClusterEvent::HostUpdated { host: spec }).unwrap();
    let s2 = Site::new(&relabelled, IngressAllocation::Dhcp).unwrap();
    let again = ServiceScheduler::new().schedule(&relabelled, &req(&s2, std::slice::from_ref(&agent))).unwrap();
    assert_eq!(placed(&again), [("ops/agent/2".into(), "h2".into())]);
    // A narrower expression removes (does not move) the instances on hosts that stop matching.
    let narrowed = ServiceSpec::one_per_matching_host("ops", "agent").match_host_labels(e("zone = b"));
    let out3 = ServiceScheduler::new().schedule(&out.cluster, &req(&s, &[narrowed])).unwrap();
    let removed = out3.decisions.iter().filter(|d| matches!(d, Decision::Removed { .. })).count();
    assert_eq!((removed, placed(&out3)), (2, vec![("ops/agent/2".into(), "h2".into())]));
}

#[test]
fn reschedule_single_replica_keeps_multi_replica_and_avoids_the_host() {
    let c = three_hosts();
    let s = Site::new(&c, IngressAllocation::Dhcp).unwrap();
    let services = [ServiceSpec::replicated("a", "solo", 1), ServiceSpec::replicated("a", "pair", 2)];
    let out = ServiceScheduler::new().schedule(&c, &req(&s, &services)).unwrap();
    // pair → h0, h1; solo → h2 (fewest other instances).
    assert_eq!(placed(&out).last().unwrap(), &("a/solo/0".to_string(), "h2".to_string()));
    let down = out
        .cluster
        .apply(&ClusterEvent::HostStateChanged {
            host: "h2".into(),
            change: crate::snapshot::StateChange::default().up(false),
        })
        .unwrap();
    // A reconcile alone does not move anything off a down host.
    let same = ServiceScheduler::new().schedule(&down, &req(&s, &services)).unwrap();
    assert!(same.events.is_empty());
    let moved =
        ServiceScheduler::new().reschedule(&out.cluster, &req(&s, &services), "h1", Scope::SingleReplica).unwrap();
    assert!(moved.events.is_empty(), "h1 holds only a multi-replica instance");
    let moved = ServiceScheduler::new().reschedule(&down, &req(&s, &services), "h2", Scope::SingleReplica).unwrap();
    assert_eq!(
        moved.decisions.last().unwrap(),
        &Decision::Moved {
            instance: "a/solo/0".into(),
            from: "h2".into(),
            to: "h0".into(),
            key: RankKey::new(0, 0, 1, 0)
        }
    );
    let all = ServiceScheduler::new().reschedule(&out.cluster, &req(&s, &services), "h0", Scope::All).unwrap();
    let m: Vec<(String, String)> = placed(&all);
    // h0 is excluded and h1 already holds pair/1 (cap ceil(2/2) = 1): h2.
    assert_eq!(m, [("a/pair/0".into(), "h2".into())]);
}

#[test]
fn state_is_never_half_changed_on_error() {
    let c = three_hosts();
    let s = Site::new(&c, IngressAllocation::Dhcp).unwrap();
    let dup = [ServiceSpec::replicated("a", "x", 1), ServiceSpec::replicated("a", "x", 2)];
    assert!(matches!(ServiceScheduler::new().schedule(&c, &req(&s, &dup)), Err(ServiceError::DuplicateService { .. })));
    let bad = [ServiceSpec::replicated("a", "x", 1), ServiceSpec::replicated("a", "y", 1).cpus(f64::NAN)];
    assert!(ServiceScheduler::new().schedule(&c, &req(&s, &bad)).is_err());
    assert_eq!(c.generation(), three_hosts().generation());
    let _ = HostState::default();
}

#[test]
fn a_removed_hosts_instances_get_fresh_volumes_elsewhere() {
    let c = Cluster::builder()
        .host(
            EdgeHost::new("h0")
                .volume("fast", 500.0, &[])
                .with(|h| h.instance(InstanceSpec::new("a/db/0").group("a/db").resource("volume/fast", 400.0)))
                .build(),
        )
        .host(EdgeHost::new("h1").volume("fast", 500.0, &[]).build())
        .build()
        .unwrap();
    let s = Site::new(&c, IngressAllocation::Dhcp).unwrap();
    let db = [ServiceSpec::replicated("a", "db", 1).volume(VolumeRequest::persistent("data", 400.0))];
    let out = ServiceScheduler::new().reschedule(&c, &req(&s, &db), "h0", Scope::All).unwrap();
    assert_eq!(placed(&out), [("a/db/0".to_string(), "h1".to_string())]);
    let fast = out.cluster.resource_kinds().get("volume/fast").unwrap();
    assert_eq!(out.cluster.host(HostId(0)).unwrap().resource(fast).used, 0.0, "the old volume is released");
    assert_eq!(out.cluster.host(HostId(1)).unwrap().resource(fast).used, 400.0, "a new one is allocated");
}

#[test]
fn caller_filters_are_hard_filters_for_new_and_sticky_instances() {
    let c = three_hosts()
        .apply(&ClusterEvent::InstancePlaced { host: "h0".into(), instance: InstanceSpec::new("a/s/0").group("a/s") })
        .unwrap();
    let s = Site::new(&c, IngressAllocation::Dhcp).unwrap();
    let not_h0 = crate::filter::filter_fn("not h0", |cx: &Cx<'_>, h| &*cx.host(h).name != "h0");
    let scheduler = ServiceScheduler::builder().filter(not_h0).build().unwrap();
    let out = scheduler.schedule(&c, &req(&s, &[ServiceSpec::replicated("a", "s", 2)])).unwrap();
    // The instance on h0 fails the caller's filter: it moves like one whose host stopped
    // passing the engine's own filters; the new one avoids h0 too.
    assert_eq!(placed(&out), [("a/s/0".to_string(), "h1".to_string()), ("a/s/1".to_string(), "h2".to_string())]);
    assert!(matches!(&out.decisions[0], Decision::Moved { from, .. } if from == "h0"));
    // Without it, the instance stays.
    let plain = ServiceScheduler::new().schedule(&c, &req(&s, &[ServiceSpec::replicated("a", "s", 2)])).unwrap();
    assert!(matches!(&plain.decisions[0], Decision::Kept { host, .. } if host == "h0"));
}

#[test]
fn caller_weighers_decide_only_between_hosts_of_the_smallest_rank_key() {
    // h2 runs another service: its key is larger whatever the weigher says.
    let c = three_hosts()
        .apply(&ClusterEvent::InstancePlaced { host: "h2".into(), instance: InstanceSpec::new("x/y/0").group("x/y") })
        .unwrap();
    let s = Site::new(&c, IngressAllocation::Dhcp).unwrap();
    let by_id = crate::weigh::weigher_fn("by id", |_: &Cx<'_>, h: HostId| f64::from(h.0));
    let scheduler = ServiceScheduler::builder().weigher(by_id, 1.0).build().unwrap();
    let web = [ServiceSpec::replicated("a", "web", 1)];
    let out = scheduler.schedule(&c, &req(&s, &web)).unwrap();
    assert_eq!(placed(&out), [("a/web/0".to_string(), "h1".to_string())]);
    let plain = ServiceScheduler::new().schedule(&c, &req(&s, &web)).unwrap();
    assert_eq!(placed(&plain), [("a/web/0".to_string(), "h0".to_string())], "ties to the lowest id without weighers");
}

#[test]
fn a_multiplier_that_is_not_finite_is_refused_when_building() {
    let by_id = crate::weigh::weigher_fn("by id", |_: &Cx<'_>, h: HostId| f64::from(h.0));
    let err = ServiceScheduler::builder().weigher(by_id, f64::NAN).build().unwrap_err();
    assert!(
        matches!(err, ServiceError::Build { error: crate::error::BuildError::NonFiniteMultiplier { .. } }),
        "{err}"
    );
    assert!(err.to_string().contains("`by id` has a non-finite multiplier"), "{err}");
}

/// A filter that cannot judge its input: it records an error, as a filter scheduler's filter
/// does for a value it would raise on.
struct Raises;

impl Filter for Raises {
    fn name(&self) -> &str {
        "raises"
    }

    fn check(&self, _: &Cx<'_>, _: HostId) -> Verdict {
        Verdict::Pass
    }

    fn check_chunk(&self, _: &Cx<'_>, _: usize, mask: u64, rejected: &mut crate::filter::Rejections) -> u64 {
        rejected.fail(crate::error::ScheduleError::filter("raises", "not a number"));
        mask
    }
}

#[test]
fn a_filter_that_records_an_error_fails_the_call() {
    let c = three_hosts();
    let s = Site::new(&c, IngressAllocation::Dhcp).unwrap();
    let scheduler = ServiceScheduler::builder().filter(Raises).build().unwrap();
    let err = scheduler.schedule(&c, &req(&s, &[ServiceSpec::replicated("a", "s", 1)])).unwrap_err();
    assert!(matches!(&err, ServiceError::Prepare { .. }) && err.to_string().contains("not a number"), "{err}");
}

#[test]
fn explanations_give_rejections_verdicts_top_hosts_and_the_engines_words() {
    let c = three_hosts()
        .apply(&ClusterEvent::HostStateChanged {
            host: "h1".into(),
            change: crate::snapshot::StateChange::default().up(false),
        })
        .unwrap();
    let s = Site::new(&c, IngressAllocation::Dhcp).unwrap();
    let big = ServiceSpec::replicated("app", "big", 1).memory_mb(5000.0);
    let out = ServiceScheduler::new()
        .schedule(&c, &req(&s, &[big]).explain(crate::request::ExplainOptions { verdicts: true, top: 0 }))
        .unwrap();
    let u = &out.unschedulable[0];
    let e = &u.explanation;
    assert_eq!((e.hosts, e.available, e.instance), (3, 0, 0));
    let rejections: Vec<(&str, &str, u32)> =
        e.rejections.iter().map(|r| (r.filter.as_str(), r.reason.as_str(), r.count)).collect();
    assert_eq!(rejections, [("host", "host not schedulable", 1), ("container limits", "insufficient memory", 2)]);
    let verdicts: Vec<(&str, bool, Option<&str>)> =
        e.verdicts.iter().map(|v| (v.host.as_str(), v.passed, v.filter.as_deref())).collect();
    assert_eq!(
        verdicts,
        [("h0", false, Some("container limits")), ("h1", false, Some("host")), ("h2", false, Some("container limits"))]
    );
    assert_eq!(e.message.as_deref(), Some(u.to_string().as_str()));
    assert_eq!(out.explanation, *e, "the call's explanation is its first unschedulable instance's");

    // A placement: the last one of the service is explained, with its best hosts.
    let by_id = crate::weigh::weigher_fn("by id", |_: &Cx<'_>, h: HostId| f64::from(h.0));
    let scheduler = ServiceScheduler::builder().weigher(by_id, 2.0).build().unwrap();
    let web = [ServiceSpec::replicated("app", "web", 2)];
    let out = scheduler
        .schedule(&c, &req(&s, &web).explain(crate::request::ExplainOptions { verdicts: false, top: 3 }))
        .unwrap();
    assert_eq!(
        placed(&out),
        [("app/web/0".to_string(), "h2".to_string()), ("app/web/1".to_string(), "h0".to_string())]
    );
    let e = &out.explanation;
    // For instance 1, h2 holds instance 0 and the even distribution allows one a host.
    assert_eq!((e.available, e.instance, e.message.as_deref()), (1, 1, None));
    let filters: Vec<(&str, u32)> = e.rejections.iter().map(|r| (r.filter.as_str(), r.count)).collect();
    assert_eq!(filters, [("host", 1), ("instance count", 1)]);
    let top: Vec<(&str, &[f64])> = e.top.iter().map(|t| (t.host.as_str(), t.scores.as_slice())).collect();
    assert_eq!(top, [("h0", &[0.0, 0.0, 0.0, 0.0, 0.0][..])]);
    let names: Vec<&str> = e.top[0].terms.iter().map(|t| t.weigher.as_str()).collect();
    assert_eq!(names, RankLevel::ALL.map(RankLevel::name), "no caller term for a lone best host");
    assert!(e.verdicts.is_empty(), "verdicts only on request");
}

#[test]
fn top_hosts_list_caller_terms_for_the_tied_hosts_in_the_order_picked() {
    let c = three_hosts();
    let s = Site::new(&c, IngressAllocation::Dhcp).unwrap();
    let by_id = crate::weigh::weigher_fn("by id", |_: &Cx<'_>, h: HostId| f64::from(h.0));
    let scheduler = ServiceScheduler::builder().weigher(by_id, 2.0).build().unwrap();
    let out = scheduler
        .schedule(
            &c,
            &req(&s, &[ServiceSpec::replicated("a", "s", 1)])
                .explain(crate::request::ExplainOptions { verdicts: false, top: 2 }),
        )
        .unwrap();
    assert_eq!(placed(&out), [("a/s/0".to_string(), "h2".to_string())]);
    let top = &out.explanation.top;
    assert_eq!(top.iter().map(|t| t.host.as_str()).collect::<Vec<_>>(), ["h2", "h1"]);
    let term = &top[0].terms[4];
    assert_eq!(
        (term.tier, term.weigher.as_str(), term.raw, term.normalized, term.weighted),
        (4, "by id", 2.0, 1.0, 2.0)
    );
    assert_eq!(top[1].scores[4], 1.0);
}
