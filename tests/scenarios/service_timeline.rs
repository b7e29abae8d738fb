//! Host-failure timelines: the failure monitor driven by a test clock, its actions carried out
//! by the service scheduler on a small site. No sleeping: the tests move time.

use placewise::service::{
    Action, ActionKind, Decision, EdgeHost, FailureMonitor, FailureTimers, HostEvent, IngressAllocation, Scope,
    ServiceOutcome, ServiceRequest, ServiceScheduler, ServiceSpec, Site,
};
use placewise::snapshot::StateChange;
use placewise::{Cluster, ClusterEvent};
use std::time::Duration;

/// A request for `services` on `site`.
fn req(site: &Site, services: &[ServiceSpec]) -> ServiceRequest {
    ServiceRequest::new(site.clone(), services.iter().cloned())
}

fn s(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// Four hosts; `solo` (1 replica) on e0 … and `pair` (2 replicas) spread, placed by the engine.
fn site() -> (Cluster, Site, Vec<ServiceSpec>) {
    let mut b = Cluster::builder();
    for i in 0..4 {
        b = b.host(EdgeHost::new(format!("e{i}")).memory_mb(4096.0).build());
    }
    let empty = b.build().unwrap();
    let site = Site::new(&empty, IngressAllocation::Dhcp).unwrap();
    let services = vec![
        ServiceSpec::replicated("app", "pair", 2).memory_mb(256.0),
        ServiceSpec::replicated("app", "solo", 1).memory_mb(256.0),
    ];
    let placed = ServiceScheduler::new().schedule(&empty, &req(&site, &services)).unwrap();
    (placed.cluster, site, services)
}

fn host_of(c: &Cluster, instance: &str) -> String {
    c.hosts().find(|(_, h)| h.has_instance(instance)).map(|(id, _)| c.host_name(id).to_owned()).unwrap_or_default()
}

/// Carries out the monitor's actions; returns the scheduler outcomes of reschedules.
fn carry_out(cluster: &mut Cluster, site: &Site, services: &[ServiceSpec], actions: &[Action]) -> Vec<ServiceOutcome> {
    let mut outcomes = Vec::new();
    for a in actions {
        if let ActionKind::Reschedule { scope } = a.kind {
            let out = ServiceScheduler::new().reschedule(cluster, &req(site, services), &a.host, scope).unwrap();
            *cluster = out.cluster.clone();
            outcomes.push(out);
        }
    }
    outcomes
}

fn down(c: &Cluster, host: &str) -> Cluster {
    c.apply(&ClusterEvent::HostStateChanged { host: host.into(), change: StateChange::default().up(false) }).unwrap()
}

#[test]
fn initial_placement_is_pair_on_e0_e1_and_solo_on_e2() {
    let (c, _, _) = site();
    assert_eq!([host_of(&c, "app/pair/0"), host_of(&c, "app/pair/1"), host_of(&c, "app/solo/0")], ["e0", "e1", "e2"]);
}

#[test]
fn host_down_for_20_s_then_back_moves_nothing() {
    let (c, site, services) = site();
    let mut cluster = down(&c, "e2");
    let mut m = FailureMonitor::default();
    let mut actions = m.handle(s(0), "e2", HostEvent::HostDown);
    actions.extend(m.advance(s(19)));
    actions.extend(m.handle(s(20), "e2", HostEvent::HostUp));
    actions.extend(m.advance(s(600)));
    let kinds: Vec<(u64, ActionKind)> = actions.iter().map(|a| (a.at.as_secs(), a.kind)).collect();
    assert_eq!(kinds, [(0, ActionKind::Wait { until: s(30) }), (20, ActionKind::Recovered)]);
    assert!(carry_out(&mut cluster, &site, &services, &actions).is_empty());
    assert_eq!(host_of(&cluster, "app/solo/0"), "e2");
}

#[test]
fn host_down_for_40_s_moves_single_replica_instances_only() {
    let (c, site, services) = site();
    let mut m = FailureMonitor::default();
    let mut cluster = down(&c, "e2");
    let mut actions = m.handle(s(0), "e2", HostEvent::HostDown);
    actions.extend(m.advance(s(40)));
    let kinds: Vec<(u64, ActionKind)> = actions.iter().map(|a| (a.at.as_secs(), a.kind)).collect();
    assert_eq!(
        kinds,
        [
            (0, ActionKind::Wait { until: s(30) }),
            (30, ActionKind::Probe { deadline: s(35) }),
            (35, ActionKind::Reschedule { scope: Scope::SingleReplica })
        ]
    );
    let outs = carry_out(&mut cluster, &site, &services, &actions);
    assert!(outs[0].decisions.contains(&Decision::Moved {
        instance: "app/solo/0".into(),
        from: "e2".into(),
        to: "e3".into(),
        key: placewise::service::RankKey::new(0, 0, 0, 0),
    }));
    assert_eq!(host_of(&cluster, "app/solo/0"), "e3");

    // The pair's host fails too: its instance stays assigned there (degraded).
    let mut cluster = down(&cluster, "e0");
    let mut actions = m.handle(s(100), "e0", HostEvent::HostDown);
    actions.extend(m.advance(s(200)));
    let outs = carry_out(&mut cluster, &site, &services, &actions);
    assert_eq!(outs.len(), 1);
    assert!(outs[0].events.is_empty(), "multi-replica instances are not moved");
    assert_eq!(host_of(&cluster, "app/pair/0"), "e0");
}

#[test]
fn supervisor_down_reschedules_after_60_s() {
    let (c, site, services) = site();
    let mut cluster = c;
    let mut m = FailureMonitor::default();
    let mut actions = m.handle(s(0), "e2", HostEvent::SupdDown);
    actions.extend(m.advance(s(30)));
    // The probe answers at once: the host is up, its supervisor is not.
    actions.extend(m.handle(s(30), "e2", HostEvent::ProbeResult { host_up: true, supd_running: false }));
    actions.extend(m.advance(s(59)));
    assert!(carry_out(&mut cluster, &site, &services, &actions).is_empty(), "nothing before 60 s");
    let late = m.advance(s(60));
    let kinds: Vec<(u64, ActionKind)> = late.iter().map(|a| (a.at.as_secs(), a.kind)).collect();
    assert_eq!(kinds, [(60, ActionKind::Reschedule { scope: Scope::SingleReplica })]);
    carry_out(&mut cluster, &site, &services, &late);
    assert_eq!(host_of(&cluster, "app/solo/0"), "e3");
    assert_eq!(host_of(&cluster, "app/pair/1"), "e1");
}

#[test]
fn supervisor_back_within_the_extra_wait_moves_nothing() {
    let mut m = FailureMonitor::default();
    m.handle(s(0), "e2", HostEvent::SupdDown);
    m.advance(s(30));
    m.handle(s(30), "e2", HostEvent::ProbeResult { host_up: true, supd_running: false });
    let a = m.handle(s(50), "e2", HostEvent::SupdUp);
    assert_eq!(a[0].kind, ActionKind::Recovered);
    assert!(m.advance(s(1000)).is_empty());
}

#[test]
fn removed_host_reschedules_everything_on_it() {
    let (c, site, services) = site();
    let mut m = FailureMonitor::default();
    let actions = m.handle(s(5), "e0", HostEvent::HostRemoved);
    assert_eq!(actions[0].kind, ActionKind::Reschedule { scope: Scope::All });
    let mut cluster = c;
    let outs = carry_out(&mut cluster, &site, &services, &actions);
    // pair/0 leaves e0 for e3 (e1 holds pair/1, e2 holds solo).
    assert_eq!(host_of(&cluster, "app/pair/0"), "e3");
    assert!(cluster.host(cluster.host_id("e0").unwrap()).unwrap().instances.is_empty());
    assert!(outs[0].unschedulable.is_empty());
    // Applying the removal afterwards loses nothing.
    let gone = cluster.apply(&ClusterEvent::HostRemoved { host: "e0".into() }).unwrap();
    let again = ServiceScheduler::new().schedule(&gone, &req(&site, &services)).unwrap();
    assert!(again.events.is_empty());
}

#[test]
fn removal_that_leaves_no_room_reports_unschedulable_with_reasons() {
    let c = Cluster::builder()
        .host(EdgeHost::new("a").memory_mb(1000.0).build())
        .host(EdgeHost::new("b").memory_mb(300.0).build())
        .build()
        .unwrap();
    let site = Site::new(&c, IngressAllocation::Dhcp).unwrap();
    let services = [ServiceSpec::replicated("app", "big", 1).memory_mb(800.0)];
    let placed = ServiceScheduler::new().schedule(&c, &req(&site, &services)).unwrap();
    let out = ServiceScheduler::new().reschedule(&placed.cluster, &req(&site, &services), "a", Scope::All).unwrap();
    assert_eq!(out.unschedulable[0].previous_host.as_deref(), Some("a"));
    assert_eq!(
        out.unschedulable[0].to_string(),
        "app/big/0 cannot be scheduled: 0/2 hosts are available: 1 host not schedulable, 1 insufficient memory"
    );
}

#[test]
fn added_host_moves_nothing_and_triggers_a_retry() {
    let (c, site, services) = site();
    let mut m = FailureMonitor::default();
    let actions = m.handle(s(0), "e4", HostEvent::HostAdded);
    assert_eq!(actions[0].kind, ActionKind::RetryUnschedulable);
    let bigger = c.apply(&ClusterEvent::HostAdded { host: EdgeHost::new("e4").memory_mb(4096.0).build() }).unwrap();
    let site4 = Site::new(&bigger, IngressAllocation::Dhcp).unwrap();
    let retry = ServiceScheduler::new().schedule(&bigger, &req(&site4, &services)).unwrap();
    assert!(retry.events.is_empty(), "existing instances are not moved");
    let _ = site;
}

#[test]
fn timers_are_configurable() {
    let mut m = FailureMonitor::new(FailureTimers::new(s(3), s(1), s(4)));
    m.handle(s(0), "e0", HostEvent::SupdDown);
    m.advance(s(3));
    m.handle(s(3), "e0", HostEvent::ProbeResult { host_up: true, supd_running: false });
    let a = m.advance(s(7));
    assert_eq!(a[0].kind, ActionKind::Reschedule { scope: Scope::SingleReplica });
    assert_eq!(a[0].at, s(7));
}

#[test]
fn unschedulable_instances_are_placed_when_retried_after_a_trigger() {
    let c = Cluster::builder().host(EdgeHost::new("a").memory_mb(500.0).label("tier", "low").build()).build().unwrap();
    let site = Site::new(&c, IngressAllocation::Dhcp).unwrap();
    let services = [
        ServiceSpec::replicated("app", "big", 1).memory_mb(800.0),
        ServiceSpec::replicated("app", "picky", 1).match_host_labels("tier = high".parse().unwrap()),
    ];
    let first = ServiceScheduler::new().schedule(&c, &req(&site, &services)).unwrap();
    let pending: Vec<String> = first.unschedulable.iter().map(|u| u.to_string()).collect();
    assert_eq!(
        pending,
        [
            "app/big/0 cannot be scheduled: 0/1 hosts are available: 1 insufficient memory",
            "app/picky/0 cannot be scheduled: 0/1 hosts are available: 1 host labels do not match `tier = high`"
        ]
    );

    // Trigger: a host is added.
    let mut m = FailureMonitor::default();
    assert_eq!(m.handle(s(0), "b", HostEvent::HostAdded)[0].kind, ActionKind::RetryUnschedulable);
    let added =
        first.cluster.apply(&ClusterEvent::HostAdded { host: EdgeHost::new("b").memory_mb(1000.0).build() }).unwrap();
    let site = Site::new(&added, IngressAllocation::Dhcp).unwrap();
    let retry = ServiceScheduler::new().schedule(&added, &req(&site, &services)).unwrap();
    assert_eq!(host_of(&retry.cluster, "app/big/0"), "b");
    assert_eq!(retry.unschedulable.len(), 1);

    // Trigger: host labels change.
    let mut spec = retry.cluster.to_spec().hosts[0].clone();
    spec.labels.insert("tier".into(), "high".into());
    let relabelled = retry.cluster.apply(&ClusterEvent::HostUpdated { host: spec }).unwrap();
    let site = Site::new(&relabelled, IngressAllocation::Dhcp).unwrap();
    let retry = ServiceScheduler::new().schedule(&relabelled, &req(&site, &services)).unwrap();
    assert_eq!(host_of(&retry.cluster, "app/picky/0"), "a");
    assert!(retry.unschedulable.is_empty());
}
