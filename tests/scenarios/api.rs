//! The public API's promises: object-safe traits behind every kind of pointer, thread safety,
//! snapshots that events never change, and closures and combinators that explain themselves.

use placewise::filter::builtin::LabelSelectorFilter;
use placewise::filter::FilterExt;
use placewise::id::ResourceId;
use placewise::snapshot::HostState;
use placewise::snapshot::InstanceSpec;
use placewise::snapshot::ResourceSpec;
use placewise::snapshot::StateChange;
use placewise::weigh::Bounds;
use placewise::{
    filter_fn, weigher_fn, AvailabilityZoneFilter, Cluster, ClusterEvent, ComputeFilter, Explanation, Filter,
    FreeResourceWeigher, HostSpec, LabelExpr, Outcome, Request, ResourceFilter, Scheduler, Scratch, Weigher,
};
use std::sync::Arc;

fn names(p: &Outcome) -> Vec<&str> {
    p.selections.iter().map(|s| s.host_name.as_str()).collect()
}

fn zoned() -> Cluster {
    Cluster::builder()
        .host(HostSpec::new("a").vcpus(8.0).memory_mb(8192.0).zone("az1").label("tier", "gold"))
        .host(HostSpec::new("b").vcpus(16.0).memory_mb(16384.0).zone("az1"))
        .host(HostSpec::new("c").vcpus(4.0).memory_mb(32768.0).zone("az2").label("tier", "gold"))
        .host(
            HostSpec::new("d")
                .vcpus(32.0)
                .memory_mb(65536.0)
                .zone("az1")
                .state(HostState { up: false, ..HostState::default() }),
        )
        .build()
        .unwrap()
}

static COMPUTE: ComputeFilter = ComputeFilter;
static RAM: FreeResourceWeigher = FreeResourceWeigher::ram();

/// Object safety is a compile-time property: this only has to build.
#[allow(dead_code)]
fn takes_trait_objects(_: &dyn Filter, _: &dyn Weigher, _: Box<dyn Filter>, _: Arc<dyn Weigher>) {}

#[test]
fn trait_objects_of_every_kind_build_a_scheduler() {
    let by_ref: &'static dyn Filter = &COMPUTE;
    let boxed: Box<dyn Filter> = Box::new(ResourceFilter::new());
    let shared: Arc<dyn Filter> = Arc::new(AvailabilityZoneFilter);
    let w_ref: &'static dyn Weigher = &RAM;
    let w_boxed: Box<dyn Weigher> = Box::new(FreeResourceWeigher::cpu());
    let w_shared: Arc<dyn Weigher> = Arc::new(FreeResourceWeigher::disk());
    let dynamic = Scheduler::builder()
        .filter(by_ref)
        .filter(boxed)
        .filter(shared.clone())
        .filter_boxed(Box::new(LabelSelectorFilter))
        .weigher(w_ref, 1.0)
        .weigher(w_boxed, 0.5)
        .weigher_boxed(Box::new(w_shared.clone()), 0.25)
        .build()
        .unwrap();
    let filters: Vec<&str> = dynamic.filters().map(|f| f.name()).collect();
    assert_eq!(filters, ["compute", "resources", "availability_zone", "labels"]);

    let concrete = Scheduler::builder()
        .filter(ComputeFilter)
        .filter(ResourceFilter::new())
        .filter(AvailabilityZoneFilter)
        .filter(LabelSelectorFilter)
        .weigher(FreeResourceWeigher::ram(), 1.0)
        .weigher(FreeResourceWeigher::cpu(), 0.5)
        .weigher(FreeResourceWeigher::disk(), 0.25)
        .build()
        .unwrap();
    let c = zoned();
    let req = Request::new(3).memory_mb(4096.0).zone("az1");
    let p = dynamic.schedule(&c, &req).unwrap();
    assert_eq!(p, concrete.schedule(&c, &req).unwrap());
    // az1 has a (8192), b (16384) and the down d: b, b (12288 > 8192), then a and b tie at 8192
    // on memory, but b's 16 free vCPUs beat a's 8 -> b.
    assert_eq!(names(&p), ["b", "b", "b"]);

    // One Arc'd filter can serve two schedulers.
    let other = Scheduler::builder().filter(shared).weigher(w_shared, 1.0).build().unwrap();
    assert_eq!(names(&other.schedule(&c, &Request::new(1).zone("az2")).unwrap()), ["c"]);

    // A list of trait objects, used directly.
    let list: Vec<Box<dyn Filter>> = vec![Box::new(ComputeFilter), Box::new(ResourceFilter::only(ResourceId::VCPUS))];
    let list_names: Vec<&str> = list.iter().map(|f| f.name()).collect();
    assert_eq!(list_names, ["compute", "vcpus"]);
}

fn assert_send_sync<T: Send + Sync>() {}

#[test]
fn main_types_are_send_and_sync() {
    assert_send_sync::<Cluster>();
    assert_send_sync::<Scheduler>();
    assert_send_sync::<Outcome>();
    assert_send_sync::<Request>();
    assert_send_sync::<Explanation>();
    assert_send_sync::<ClusterEvent>();
    assert_send_sync::<LabelExpr>();
    assert_send_sync::<Scratch>();
    assert_send_sync::<Box<dyn Filter>>();
    assert_send_sync::<Box<dyn Weigher>>();
}

#[test]
fn one_scheduler_and_snapshot_serve_many_threads() {
    let c = zoned();
    let s = Scheduler::builder()
        .filter(ComputeFilter)
        .filter(ResourceFilter::new())
        .weigher(FreeResourceWeigher::ram(), 1.0)
        .host_subset_size(2)
        .build()
        .unwrap();
    let serial: Vec<Outcome> =
        (0..8).map(|seed| s.schedule(&c, &Request::new(2).memory_mb(1024.0).seed(seed)).unwrap()).collect();
    let parallel: Vec<Outcome> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|seed| {
                let (s, c) = (&s, &c);
                scope.spawn(move || s.schedule(c, &Request::new(2).memory_mb(1024.0).seed(seed)).unwrap())
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(parallel, serial);
}

#[test]
fn events_leave_the_old_snapshot_as_it_was() {
    let c0 = zoned();
    let spec0 = c0.to_spec();
    let s = Scheduler::builder()
        .filter(ComputeFilter)
        .filter(ResourceFilter::new())
        .weigher(FreeResourceWeigher::ram(), 1.0)
        .build()
        .unwrap();
    let req = Request::new(1).memory_mb(8192.0);
    assert_eq!(names(&s.schedule(&c0, &req).unwrap()), ["c"]);

    let fill_c = ClusterEvent::InstancePlaced {
        host: "c".into(),
        instance: InstanceSpec::new("vm-1").resource("memory_mb", 30720.0),
    };
    let c1 = c0.apply(&fill_c).unwrap();
    let c2 = c1
        .apply(&ClusterEvent::HostStateChanged { host: "b".into(), change: StateChange::default().cordoned(true) })
        .unwrap();
    let c3 = c2.apply(&ClusterEvent::HostRemoved { host: "a".into() }).unwrap();

    // Each snapshot answers for itself: c has 2048 left in c1, b is cordoned in c2, a is gone in c3.
    assert_eq!(names(&s.schedule(&c1, &req).unwrap()), ["b"]);
    assert_eq!(names(&s.schedule(&c2, &req).unwrap()), ["a"]);
    let none = s.schedule(&c3, &req).unwrap();
    assert!(none.selections.is_empty());
    assert_eq!(
        none.explanation.to_string(),
        "0/3 hosts are available: 1 host cordoned, 1 host down, 1 insufficient memory"
    );
    // ... and the older ones still answer as before.
    assert_eq!(names(&s.schedule(&c0, &req).unwrap()), ["c"]);
    assert_eq!(names(&s.schedule(&c2, &req).unwrap()), ["a"]);

    assert_eq!(c0.to_spec(), spec0);
    assert_eq!((c0.generation(), c1.generation(), c3.generation()), (0, 1, 3));
    let c_id = c0.host_id("c").unwrap();
    assert_eq!(c0.host(c_id).unwrap().resource(ResourceId::MEMORY_MB).used, 0.0);
    assert_eq!(c1.host(c_id).unwrap().resource(ResourceId::MEMORY_MB).used, 30720.0);
    assert!(c0.host(c_id).unwrap().instances.is_empty());
    assert_eq!((c0.len(), c3.len()), (4, 3));
    assert!(c3.host_id("a").is_none() && c0.host_id("a").is_some());
    // Hosts the event did not touch are shared, not copied.
    let a = c0.host_id("a").unwrap();
    assert!(std::ptr::eq(c0.host(a).unwrap(), c1.host(a).unwrap()));
    assert!(!std::ptr::eq(c0.host(c_id).unwrap(), c1.host(c_id).unwrap()));
}

/// Hosts for the closure and combinator test. Ids in order: 0 canary, 1 down, 2 small, 3 ml-odd,
/// 4 ml, 5 big-odd, 6 big, 7 odd-small, 8 ml-tiny.
fn combinator_cluster() -> Cluster {
    let h = |name: &str, mem: f64| HostSpec::new(name).vcpus(8.0).memory_mb(mem);
    Cluster::builder()
        .host(h("canary", 16384.0).label("canary", "true"))
        .host(h("down", 16384.0).state(HostState { up: false, ..HostState::default() }))
        .host(h("small", 2048.0))
        .host(h("ml-odd", 4096.0).label("team", "ml"))
        .host(h("ml", 4096.0).label("team", "ml"))
        .host(h("big-odd", 32768.0))
        .host(h("big", 12288.0))
        .host(h("odd-small", 1024.0))
        .host(h("ml-tiny", 2048.0).label("team", "ml"))
        .build()
        .unwrap()
}

#[test]
fn closures_and_combinators_schedule_and_explain() {
    let no_canary = filter_fn("no canary", |cx, h| cx.cluster().label(h, "canary").is_none());
    // Re-checked for every instance: it reads what earlier instances consumed.
    let big = filter_fn("big", |cx, h| cx.free(h, ResourceId::MEMORY_MB) >= 8192.0);
    let ml = filter_fn("ml", |cx, h| cx.cluster().label(h, "team") == Some("ml"));
    let odd = filter_fn("odd id", |_, h| h.0 % 2 == 1);
    let free_memory =
        weigher_fn("free memory", |cx, h| cx.free(h, ResourceId::MEMORY_MB)).with_bounds(Bounds::ZERO_MIN);

    let s = Scheduler::builder()
        .filter(ComputeFilter.and(no_canary))
        .filter(big.or(ml))
        .filter(odd.not())
        .filter(ResourceFilter::new().named("fits"))
        .weigher(free_memory, 1.0)
        .build()
        .unwrap();
    let filters: Vec<&str> = s.filters().map(|f| f.name()).collect();
    assert_eq!(filters, ["compute and no canary", "big or ml", "not odd id", "fits"]);

    let p = s.schedule(&combinator_cluster(), &Request::new(3).memory_mb(3072.0)).unwrap();
    // Instance 0: canary and down fail the first filter; small and odd-small are neither big nor
    // ml; ml-odd and big-odd have odd ids; ml-tiny lacks memory. big (12288) beats ml (4096).
    // Instance 1: big (9216 left) is still big and beats ml again.
    // Instance 2: big has 6144 left, so it is no longer big and not ml: only ml remains.
    assert_eq!(names(&p), ["big", "big", "ml"]);
    assert_eq!(p.selections[0].scores, vec![1.0]);
    assert_eq!(p.selections[2].scores, vec![0.0], "a lone candidate is not weighed");
    assert_eq!(
        p.explanation.to_string(),
        "1/9 hosts are available: 3 rejected by big and rejected by ml, 2 passed odd id, \
         1 rejected by no canary, 1 host down, 1 insufficient memory"
    );
    let by_filter: Vec<(&str, &str, u32)> =
        p.explanation.rejections.iter().map(|r| (r.filter.as_str(), r.reason.as_str(), r.count)).collect();
    assert_eq!(
        by_filter,
        [
            ("big or ml", "rejected by big and rejected by ml", 3),
            ("not odd id", "passed odd id", 2),
            ("compute and no canary", "rejected by no canary", 1),
            ("compute and no canary", "host down", 1),
            ("fits", "insufficient memory", 1),
        ]
    );
}

#[test]
fn combinators_nest_and_keep_each_reason() {
    // (compute and zone) and labels, with the gpu check named: every host fails a different part.
    let gpu = ResourceFilter::only(ResourceId::from_index(3)).named("gpu check");
    let nested = ComputeFilter.and(AvailabilityZoneFilter).and(LabelSelectorFilter).and(gpu);
    assert_eq!(nested.name(), "compute and availability_zone and labels and gpu check");
    let c = Cluster::builder()
        .host(HostSpec::new("down").zone("az1").state(HostState { up: false, ..HostState::default() }))
        .host(HostSpec::new("elsewhere").zone("az2"))
        .host(HostSpec::new("unlabelled").zone("az1"))
        .host(HostSpec::new("no-gpu").zone("az1").label("tier", "gold"))
        .host(HostSpec::new("ok").zone("az1").label("tier", "gold").resource("gpu", ResourceSpec::new(1.0)))
        .build()
        .unwrap();
    assert_eq!(c.resource_kinds().get("gpu"), Some(ResourceId::from_index(3)));
    let s = Scheduler::builder().filter(nested).build().unwrap();
    let req = Request::new(1).zone("az1").selector("tier = gold".parse().unwrap()).resource("gpu", 1.0);
    let p = s.schedule(&c, &req).unwrap();
    assert_eq!(names(&p), ["ok"]);
    assert_eq!(
        p.explanation.to_string(),
        "1/5 hosts are available: 1 host down, 1 not in zone az1, 1 labels do not match `tier = gold`, \
         1 insufficient gpu"
    );
}

/// A request for a kind no host has is rejected as `insufficient <kind>` by `ResourceFilter`
/// (see scenario 13). Wrapped in `and`/`or`, the reason code (bit 31) is shifted out and the
/// explanation names the wrong kind.
#[test]
fn combinators_keep_the_unknown_kind_reason() {
    let c = Cluster::builder().host(HostSpec::new("a").vcpus(8.0).memory_mb(8192.0)).build().unwrap();
    let req = Request::new(1).resource("fpga", 1.0);

    let plain = Scheduler::builder().filter(ResourceFilter::new()).build().unwrap();
    assert_eq!(
        plain.schedule(&c, &req).unwrap().explanation.to_string(),
        "0/1 hosts are available: 1 insufficient fpga"
    );

    let and = Scheduler::builder().filter(ResourceFilter::new().and(ComputeFilter)).build().unwrap();
    assert_eq!(and.schedule(&c, &req).unwrap().explanation.to_string(), "0/1 hosts are available: 1 insufficient fpga");

    let never = filter_fn("never", |_, _| false);
    let or = Scheduler::builder().filter(ResourceFilter::new().or(never)).build().unwrap();
    assert_eq!(
        or.schedule(&c, &req).unwrap().explanation.to_string(),
        "0/1 hosts are available: 1 insufficient fpga and rejected by never"
    );
}

/// Issue 41, item 5: an error keeps the error it comes from as its `source()`, typed: serde's
/// error behind every `from_json`, the query's error behind `JsonFilter`'s, and a caller
/// filter's own error type behind the `ScheduleError` it fails a request with.
#[test]
fn errors_keep_their_source() {
    use placewise::error::BuildError;
    use placewise::nova::filters::JsonFilter;
    use placewise::nova::json_query::QueryError;
    use placewise::nova::request::VmSpec;
    use placewise::nova::{NovaRequest, NovaScheduler};
    use placewise::request::{Cx, Prepared};
    use placewise::spread::SpreadRequest;
    use placewise::{HostId, ScheduleError, Verdict};
    use std::error::Error;

    fn serde_source(err: &BuildError) -> &serde_json::Error {
        assert!(matches!(err, BuildError::Json { .. }), "{err:?}");
        err.source().and_then(|s| s.downcast_ref::<serde_json::Error>()).expect("serde_json's error")
    }
    // The text keeps serde's words without the position the variant carries.
    let err = Request::from_json("{\n  \"count\": }").unwrap_err();
    let serde = serde_source(&err);
    assert_eq!((serde.line(), serde.column()), (2, 12));
    assert!(err.to_string().starts_with("invalid JSON at line 2, column 12: expected value"), "{err}");
    assert!(!err.to_string().contains(" at line 2 column"), "{err}");
    let err = SpreadRequest::from_json(r#"{"service": "s", "tasks": "x"}"#).unwrap_err();
    assert!(serde_source(&err).is_data(), "{err}");
    let err = Cluster::from_json("{").unwrap_err();
    assert!(serde_source(&err).is_eof(), "{err}");

    // A hint that is not JSON: the filter's error is the query's, whose error is serde's.
    let cluster = Cluster::builder().host(HostSpec::new("a").vcpus(8.0).memory_mb(8192.0)).build().unwrap();
    let nova = NovaScheduler::builder().filter(JsonFilter).build().unwrap();
    let mut vm = VmSpec::default();
    vm.hints.insert("query".into(), serde_json::json!("[1,"));
    let err = nova.schedule(&cluster, &NovaRequest::new(Request::new(1), vm)).unwrap_err();
    assert!(matches!(&err, ScheduleError::Filter { filter, .. } if filter == "JsonFilter"), "{err:?}");
    let query = err.source().and_then(|s| s.downcast_ref::<QueryError>()).expect("the query's error");
    assert!(matches!(query, QueryError::InvalidJson { .. }), "{query:?}");
    assert!(query.source().is_some_and(|s| s.is::<serde_json::Error>()), "{query:?}");

    // A caller's filter fails with its own error type, and gets it back.
    #[derive(Debug, PartialEq)]
    struct Unreadable {
        field: &'static str,
    }
    impl std::fmt::Display for Unreadable {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "field `{}` is unreadable", self.field)
        }
    }
    impl Error for Unreadable {}
    struct Strict;
    impl Filter for Strict {
        fn name(&self) -> &str {
            "strict"
        }
        fn prepare(&self, _: &Cx<'_>) -> Result<Prepared, ScheduleError> {
            Err(ScheduleError::filter(self.name(), Unreadable { field: "owner" }))
        }
        fn check(&self, _: &Cx<'_>, _: HostId) -> Verdict {
            Verdict::Pass
        }
    }
    let core = Scheduler::builder().filter(Strict).build().unwrap();
    let err = core.schedule(&cluster, &Request::new(1)).unwrap_err();
    assert_eq!(err.to_string(), "filter `strict` failed: field `owner` is unreadable");
    assert_eq!(err.source().and_then(|s| s.downcast_ref()), Some(&Unreadable { field: "owner" }));
    // Errors stay comparable: by their text.
    assert_eq!(err, ScheduleError::filter("strict", "field `owner` is unreadable"));
}
