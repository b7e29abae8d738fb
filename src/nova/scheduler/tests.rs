//! The Nova engine's request rules: forced and ignored hosts, forced hosts that skip the
//! filters, the rebuild rule; moved here from the core scheduler's tests with the VM part.

use super::*;
use crate::filter::builtin::ResourceFilter;
use crate::request::{Cx, Request};
use crate::schedule::tests::{cluster, names, standard_filters};
use crate::snapshot::HostSpec;
use crate::weigh::builtin::FreeResourceWeigher;

/// The core tests' standard scheduler, as a Nova engine.
fn standard(multiplier: f64) -> NovaScheduler {
    let builder = standard_filters().into_iter().fold(NovaScheduler::builder(), |b, f| b.filter_boxed(f));
    builder.weigher(FreeResourceWeigher::ram(), multiplier).build().unwrap()
}

#[test]
fn forced_and_ignored_hosts() {
    let c = cluster();
    let s = standard(1.0);
    let vm = VmSpec { force_hosts: vec!["D".into()], ..Default::default() };
    // d is down, but forced hosts skip every filter.
    let p = s.schedule(&c, &NovaRequest::new(Request::new(2).memory_mb(1024.0), vm)).unwrap();
    assert_eq!(names(&p), ["d", "d"]);
    let vm = VmSpec { ignore_hosts: vec!["B".into()], ..Default::default() };
    let p = s.schedule(&c, &NovaRequest::new(Request::new(1).memory_mb(1024.0), vm)).unwrap();
    assert_eq!(names(&p), ["a"]);
}

#[test]
fn check_host_applies_the_host_lists() {
    let c = cluster();
    let s = standard(1.0);
    let req = NovaRequest::from(Request::new(1).memory_mb(4096.0).zone("az1"));
    let mut ignoring = req.clone();
    ignoring.vm.ignore_hosts = vec!["B".into()];
    let b = c.host_id("b").unwrap();
    assert!(s.check_host(&c, &req, b).unwrap().passed);
    assert!(!s.check_host(&c, &ignoring, b).unwrap().passed);
}

/// Two hosts, `small` with 1 GiB free and `big` with 8 GiB free, a RAM filter, and a request for
/// 2 GiB that forces `small` (case-insensitively), with the hints given.
fn forced_small(hints: serde_json::Value) -> (Cluster, NovaScheduler, NovaRequest) {
    let cluster = Cluster::builder()
        .host(HostSpec::new("small").memory_mb(1024.0))
        .host(HostSpec::new("big").memory_mb(8192.0))
        .build()
        .unwrap();
    let scheduler = NovaScheduler::builder().filter(ResourceFilter::new()).build().unwrap();
    let hints = serde_json::from_value(hints).unwrap();
    let vm = VmSpec { force_hosts: vec!["SMALL".into()], hints, ..Default::default() };
    (cluster, scheduler, NovaRequest::new(Request::new(1).memory_mb(2048.0), vm))
}

#[test]
fn forced_hosts_skip_the_filters_only_without_a_check_type() {
    let check_types = [
        (serde_json::json!({}), false),
        (serde_json::json!({"_nova_check_type": []}), false),
        (serde_json::json!({"_nova_check_type": null}), false),
        (serde_json::json!({"_nova_check_type": "resize"}), true),
        (serde_json::json!({"_nova_check_type": ""}), true),
        (serde_json::json!({"_nova_check_type": ["live_migrate"]}), true),
    ];
    for (hints, filtered) in check_types {
        let (cluster, scheduler, request) = forced_small(hints.clone());
        let p = scheduler.schedule(&cluster, &request).unwrap();
        // Filtered: the forced host lacks memory and nothing else is a candidate.
        let expected: &[&str] = if filtered { &[] } else { &["small"] };
        assert_eq!(names(&p), expected, "hints {hints}");
        let verdict = scheduler.check_host(&cluster, &request, HostId(0)).unwrap();
        assert_eq!(verdict.passed, !filtered, "check_host with hints {hints}");
    }
}

#[test]
fn rebuild_check_type_makes_non_rebuild_filters_pass_every_host() {
    /// Keeps host 1 only; a name Nova does not know, so it runs on rebuilds.
    #[derive(Debug)]
    struct OnlyB;
    impl Filter for OnlyB {
        fn name(&self) -> &str {
            "only_b"
        }
        fn check(&self, _: &Cx<'_>, host: HostId) -> crate::filter::Verdict {
            (host == HostId(1)).into()
        }
    }
    let scheduler =
        NovaScheduler::builder().filter_on_rebuild(ResourceFilter::new(), false).filter(OnlyB).build().unwrap();
    assert_eq!((scheduler.filter_runs_on_rebuild(0), scheduler.filter_runs_on_rebuild(1)), (Some(false), Some(true)));
    let cluster =
        Cluster::builder().host(HostSpec::new("a").memory_mb(512.0)).host(HostSpec::new("b").memory_mb(512.0)).build();
    let cluster = cluster.unwrap();
    for (hint, rebuild) in [
        (serde_json::json!("rebuild"), true),
        (serde_json::json!(["rebuild"]), true),
        (serde_json::json!(["rebuild", "resize"]), false),
        (serde_json::json!("Rebuild"), false),
    ] {
        let hints = [("_nova_check_type".to_string(), hint.clone())].into_iter().collect();
        let vm = VmSpec { hints, ..Default::default() };
        assert_eq!(vm.is_rebuild(), rebuild, "{hint}");
        let p = scheduler.schedule(&cluster, &NovaRequest::new(Request::new(1).memory_mb(2048.0), vm)).unwrap();
        // On a rebuild the memory check passes both hosts and the rebuild filter keeps `b`.
        let expected: &[&str] = if rebuild { &["b"] } else { &[] };
        assert_eq!(names(&p), expected, "{hint}");
    }
}

#[test]
fn the_rebuild_table_follows_nova_classes() {
    // Nova's RUN_ON_REBUILD: only the image filters; every other class known by name does not,
    // the core's built-ins under their registry names included; an unknown name does (Nova's
    // base filter class).
    for name in RUN_ON_REBUILD {
        assert!(runs_on_rebuild(name), "{name}");
    }
    for name in ["RamFilter", "ComputeFilter", "AvailabilityZoneFilter", "ResourceFilter", "LabelSelectorFilter"] {
        assert!(!runs_on_rebuild(name), "{name}");
    }
    assert!(runs_on_rebuild("resources") && runs_on_rebuild("a_closure"));
}

#[test]
fn a_nova_request_reads_its_json_form() {
    let json = r#"{"request": {"count": 2, "resources": {"memory_mb": 2048}}, "vm": {"flavor": {"name": "m1", "memory_mb": 2048}}}"#;
    let r = NovaRequest::from_json(json).unwrap();
    assert_eq!(r.request.count, 2);
    assert_eq!(r.vm.flavor.as_ref().unwrap().name, "m1");
    assert_eq!(NovaRequest::from_json(&serde_json::to_string(&r).unwrap()).unwrap(), r);
    assert!(NovaRequest::from_json(r#"{"vm": {"flavor": ["small"]}}"#).is_err());
}

#[test]
fn a_nova_filter_on_a_plain_core_request_reads_an_empty_vm_part() {
    use crate::nova::filters::{RamFilter, RetryFilter, ServerGroupAntiAffinityFilter, TypeAffinityFilter};
    use crate::snapshot::Overlay;
    let c = cluster();
    let request = Request::new(3).memory_mb(2048.0);
    let compiled = request.compile(&c).unwrap();
    let overlay = Overlay::new();
    assert_eq!(*VmSpec::of(&Cx::new(&c, &request, &compiled, &overlay, 0)), VmSpec::default());
    // The core scheduler with Nova filters places as the Nova engine does with an empty VM part.
    let filters = || -> Vec<Box<dyn Filter>> {
        vec![
            Box::new(RamFilter),
            Box::new(RetryFilter),
            Box::new(TypeAffinityFilter),
            Box::new(ServerGroupAntiAffinityFilter),
        ]
    };
    let core =
        filters().into_iter().fold(crate::schedule::Scheduler::builder(), |b, f| b.filter_boxed(f)).build().unwrap();
    let nova = filters().into_iter().fold(NovaScheduler::builder(), |b, f| b.filter_boxed(f)).build().unwrap();
    assert_eq!(core.schedule(&c, &request).unwrap(), nova.schedule(&c, &request.clone().into()).unwrap());
}
