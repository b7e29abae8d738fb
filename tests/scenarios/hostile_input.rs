//! Hostile input (issue 14): the holes found by hand and the documented limits. Each test names
//! the input it refuses and checks the typed error that names the offending host, field or
//! position.

use placewise::error::{BuildError, EventError, ParseError, ScheduleError};
use placewise::expr::{LabelExpr, MAX_EXPR_DEPTH, MAX_EXPR_LEN, MAX_REGEX_NEST};
use placewise::nova::config::{Options, SchedulerConfig};
use placewise::nova::json_query::{Query, QueryError, MAX_QUERY_DEPTH};
use placewise::nova::scenario::Scenario;
use placewise::nova::NovaRequest;
use placewise::replica::{Replica, ReplicaScheduler, ReplicaSettings, Volume, MAX_VOLUME_REPLICAS};
use placewise::request::Request;
use placewise::schedule::{Scheduler, DEFAULT_MAX_COUNT};
use placewise::service::{MatchExpr, ServiceSpec};
use placewise::snapshot::{AttributeWarning, Cluster, ClusterEvent, ClusterSpec, HostSpec, InstanceSpec, ResourceSpec};
use placewise::spread::{SpreadError, SpreadRequest, SpreadScheduler};
use std::collections::BTreeMap;

fn one_host() -> Cluster {
    Cluster::builder().host(HostSpec::new("h1").vcpus(8.0).memory_mb(1024.0)).build().unwrap()
}

#[test]
fn instances_whose_use_sums_to_infinity_are_refused_with_host_and_field() {
    let json = r#"{"hosts": [{"name": "h1", "resources": {"vcpus": 4},
        "instances": [{"id": "a", "resources": {"vcpus": 1e308}}, {"id": "b", "resources": {"vcpus": 1e308}}]}]}"#;
    match Cluster::from_json(json).unwrap_err() {
        BuildError::InvalidNumber { context, field, problem, .. } => {
            assert_eq!(context, "host `h1`");
            assert_eq!(field, "vcpus used (sum of instances)");
            assert_eq!(problem, "not finite");
        }
        other => panic!("unexpected error {other:?}"),
    }
}

#[test]
fn an_instance_event_that_makes_use_infinite_is_refused_and_changes_nothing() {
    let c0 = Cluster::builder()
        .host(HostSpec::new("h1").vcpus(4.0).instance(InstanceSpec::new("a").resource("vcpus", 1e308)))
        .build()
        .unwrap();
    let event =
        ClusterEvent::InstancePlaced { host: "h1".into(), instance: InstanceSpec::new("b").resource("vcpus", 1e308) };
    let err = c0.apply(&event).unwrap_err();
    assert!(
        matches!(&err, EventError::Invalid(BuildError::InvalidNumber { context, field, .. })
            if context == "host `h1`" && field == "vcpus used (sum of instances)"),
        "{err:?}"
    );
    assert_eq!(c0.generation(), 0);
    assert_eq!(c0.host(c0.host_id("h1").unwrap()).unwrap().instances.len(), 1);
}

#[test]
fn a_capacity_whose_limit_overflows_is_refused() {
    let host = HostSpec::new("big").resource("memory_mb", ResourceSpec::new(1e308).allocation_ratio(16.0));
    let err = Cluster::builder().host(host).build().unwrap_err();
    assert!(
        matches!(&err, BuildError::InvalidNumber { context, field, .. }
            if context == "host `big`" && field.starts_with("memory_mb (capacity − reserved) × allocation_ratio")),
        "{err:?}"
    );
}

#[test]
fn a_request_whose_total_over_count_overflows_is_refused() {
    let request = Request::new(3).vcpus(1e308);
    let err = Scheduler::standard().schedule(&one_host(), &request).unwrap_err();
    assert!(
        matches!(&err, ScheduleError::Request(BuildError::InvalidNumber { field, .. }) if field == "vcpus × count"),
        "{err:?}"
    );
}

#[test]
fn json_arrays_are_not_accepted_where_objects_are_documented() {
    assert_eq!(Cluster::from_json("[]").unwrap_err(), BuildError::NotAnObject { path: "$".into() });
    let host_as_array = r#"{"hosts": [["h1"]]}"#;
    assert_eq!(Cluster::from_json(host_as_array).unwrap_err(), BuildError::NotAnObject { path: "$.hosts[0]".into() });
    let instance_as_array = r#"{"hosts": [{"name": "h1", "instances": [["i1"]]}]}"#;
    assert_eq!(
        Cluster::from_json(instance_as_array).unwrap_err(),
        BuildError::NotAnObject { path: "$.hosts[0].instances[0]".into() }
    );
    assert_eq!(Request::from_json("[2]").unwrap_err(), BuildError::NotAnObject { path: "$".into() });
    let event = r#"{"type": "host_added", "host": ["h9"]}"#;
    assert_eq!(ClusterEvent::from_json(event).unwrap_err(), BuildError::NotAnObject { path: "$.host".into() });
    assert!(SpreadRequest::from_json(r#"["web", 2]"#).unwrap_err().to_string().contains("expected an object at $"));
    // The documented forms still read.
    assert_eq!(Cluster::from_json(r#"{"hosts": [{"name": "h1"}]}"#).unwrap().len(), 1);
    assert!(ClusterEvent::from_json(r#"{"type": "host_removed", "host": "h1"}"#).is_ok());
}

/// What serde itself says when `T` is read from `json` (the generic path, no `from_json`).
fn serde_error<T: serde::de::DeserializeOwned + std::fmt::Debug>(json: &str) -> String {
    serde_json::from_str::<T>(json).unwrap_err().to_string()
}

#[test]
fn serde_itself_refuses_arrays_for_every_documented_top_level_type() {
    let seq = |message: String, what: &str| {
        assert!(message.starts_with(&format!("invalid type: sequence, expected {what}")), "{what}: {message}")
    };
    seq(serde_error::<ClusterSpec>("[]"), "struct ClusterSpec");
    seq(serde_error::<ClusterSpec>(r#"[[], [], [["h1"]], []]"#), "struct ClusterSpec");
    seq(serde_error::<HostSpec>(r#"["h1"]"#), "struct HostSpec");
    seq(serde_error::<Cluster>("[]"), "struct ClusterSpec");
    seq(serde_error::<Request>("[2]"), "struct Request");
    seq(serde_error::<ClusterEvent>(r#"["host_removed", "h1"]"#), "internally tagged enum ClusterEvent");
    seq(serde_error::<SpreadRequest>(r#"["web", 2]"#), "struct SpreadRequest");
    seq(serde_error::<Volume>(r#"["v1", 3]"#), "struct Volume");
    seq(serde_error::<Replica>(r#"["r1"]"#), "struct Replica");
    seq(serde_error::<ReplicaSettings>("[]"), "struct ReplicaSettings");
    seq(serde_error::<ServiceSpec>(r#"["web"]"#), "struct ServiceSpec");
    seq(serde_error::<Options>("[1]"), "struct Options");
    // The scheduler configuration reads through a JSON value and says so in its own words.
    assert!(serde_error::<SchedulerConfig>("[]").contains("must be a JSON object"));
    // The Nova scenario's types are private: its reader is the only path.
    for json in ["[]", r#"{"hosts": [["h1"]]}"#] {
        match Scenario::from_json(json).unwrap_err() {
            BuildError::Json { source, .. } => {
                let message = source.to_string();
                assert!(message.starts_with("invalid type: sequence"), "{message}");
            }
            other => panic!("unexpected error {other:?}"),
        }
    }
}

#[test]
fn serde_itself_refuses_arrays_nested_in_documented_objects() {
    let nested = [
        serde_error::<ClusterSpec>(r#"{"hosts": [["h1"]]}"#),
        serde_error::<ClusterSpec>(r#"{"hosts": [{"name": "h1", "instances": [["i1"]]}]}"#),
        serde_error::<ClusterSpec>(r#"{"hosts": [{"name": "h1", "disks": [["d", 1, 1]]}]}"#),
        serde_error::<ClusterSpec>(r#"{"hosts": [{"name": "h1", "state": [true]}]}"#),
        serde_error::<ClusterSpec>(r#"{"aggregates": [["a"]]}"#),
        serde_error::<ClusterEvent>(r#"{"type": "host_added", "host": ["h9"]}"#),
        serde_error::<NovaRequest>(r#"{"vm": {"flavor": ["small"]}}"#),
        serde_error::<Request>(r#"{"explain": [true]}"#),
        serde_error::<Volume>(r#"{"name": "v", "backing_image": ["b"]}"#),
    ];
    for message in nested {
        assert!(message.starts_with("invalid type: sequence, expected struct"), "{message}");
    }
    // An enum's struct variant: a weighted spread's weights.
    let weighted = |targets: &str| {
        format!(
            r#"{{"service": "web", "tasks": 2, "preferences": [{{"weighted": {{"descriptor": "node.labels.rack", "targets": {targets}}}}}]}}"#
        )
    };
    serde_json::from_str::<SpreadRequest>(&weighted(r#"{"weights": {"weights": {"a": 1}}}"#)).unwrap();
    let variant = serde_error::<SpreadRequest>(&weighted(r#"{"weights": [{"a": 1}, 0]}"#));
    assert!(variant.starts_with("invalid type: sequence, expected struct variant Targets::Weights"), "{variant}");
    let named = SpreadRequest::from_json(&weighted(r#"{"weights": [{"a": 1}, 0]}"#)).unwrap_err().to_string();
    assert!(named.contains("expected an object at $.preferences[0].weighted.targets.weights"), "{named}");
    // A resource is a number or an object, never an array.
    let resource = serde_error::<HostSpec>(r#"{"name": "h1", "resources": {"vcpus": [8, 0, 0, 2]}}"#);
    assert!(resource.contains("did not match any variant"), "{resource}");
    // The object forms still read, and the messages for them are serde's.
    assert_eq!(serde_json::from_str::<ClusterSpec>(r#"{"hosts": [{"name": "h1"}]}"#).unwrap().hosts.len(), 1);
    assert!(serde_error::<HostSpec>(r#"{"name": "h1", "colour": 1}"#).starts_with("unknown field `colour`"));
    assert!(serde_error::<HostSpec>("{}").starts_with("missing field `name`"));
}

/// A scenario kept under `fuzz/regressions/nova_scenario/`.
fn nova_regression(name: &str) -> String {
    let path = format!("{}/fuzz/regressions/nova_scenario/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Found by `nova_scenario` in campaign 2: a scenario asking for 20,152,155 instances made the
/// reader write a default UUID per instance (1.7 GB) before the scheduler's count limit ran.
#[test]
fn a_nova_scenario_with_a_huge_instance_count_is_refused_by_the_reader_without_allocating() {
    let json = nova_regression("huge_num_instances.json");
    let err = Scenario::from_json(&json).unwrap_err();
    assert_eq!(
        err,
        BuildError::Config {
            message: format!("request.num_instances 20152155 is above the largest request count {DEFAULT_MAX_COUNT}")
        }
    );
    // At the limit, the reader keeps no per-instance list; the ids come on demand.
    let at_limit = json.replace("20152155", &DEFAULT_MAX_COUNT.to_string());
    let scenario = Scenario::from_json(&at_limit).unwrap();
    assert!(scenario.request.vm.instance_uuids.is_empty());
    assert_eq!(scenario.request.vm.instance_uuid(99_999), "00000000-0000-0000-0000-000000099999");
}

/// Found by `nova_drawn` on its first run: a host's `free_disk_gb` of `i64::MAX` overflowed the
/// reader's conversion to MiB (a panic with overflow checks on, a wrapped amount without).
#[test]
fn a_nova_host_whose_free_disk_gb_overflows_in_mib_is_refused_with_host_and_field_named() {
    let json = nova_regression("free_disk_gb_overflow.json");
    let err = Scenario::from_json(&json).unwrap_err();
    assert_eq!(
        err,
        BuildError::Config {
            message: "host `s0`: free_disk_gb 9223372036854775807 is too large to count in MiB".into()
        }
    );
    // `disk_available_least_gb` caps the free amount before the conversion, as the filter
    // scheduler does; the total stays `free_disk_gb` as given (the reference tool's rule).
    let least = json.replace("9223372036854775807}", "9223372036854775807, \"disk_available_least_gb\": 7}");
    let scenario = Scenario::from_json(&least).unwrap();
    let host = scenario.cluster.host(scenario.cluster.host_id("s0").unwrap()).unwrap();
    let disk = host.resource(placewise::id::ResourceId::DISK_GB);
    assert_eq!((disk.capacity, disk.used), (i64::MAX as f64, i64::MAX as f64 - 7.0));
}

#[test]
fn a_request_count_above_the_limit_is_refused_before_any_work() {
    let cluster = one_host();
    let huge = Request::from_json(r#"{"count": 100000000}"#).unwrap();
    let err = Scheduler::standard().schedule(&cluster, &huge).unwrap_err();
    assert_eq!(err, ScheduleError::CountTooLarge { count: 100_000_000, max: DEFAULT_MAX_COUNT });
    let strict = Scheduler::builder().max_count(10).build().unwrap();
    assert_eq!(
        strict.schedule(&cluster, &Request::new(11)).unwrap_err(),
        ScheduleError::CountTooLarge { count: 11, max: 10 }
    );
    assert_eq!(strict.schedule(&cluster, &Request::new(10)).unwrap().selections.len(), 10);
}

#[test]
fn a_spread_batch_above_the_limit_is_refused() {
    let request = SpreadRequest::new("web", DEFAULT_MAX_COUNT + 1);
    let err = SpreadScheduler::new().schedule(&one_host(), &request).unwrap_err();
    assert!(
        matches!(err, SpreadError::Request { error: ScheduleError::CountTooLarge { count, .. } } if count == DEFAULT_MAX_COUNT + 1)
    );
}

/// Task counts a node reports (`service_tasks`) that sum past `u32::MAX` saturate: the spread
/// engine neither panics on the overflow nor wraps the count to a small number that would make
/// the busiest node look empty.
#[test]
fn spread_task_counts_that_sum_past_u32_saturate_instead_of_wrapping() {
    let huge = serde_json::json!({ "web": u64::from(u32::MAX), "other": u64::from(u32::MAX), "x": 3 });
    let cluster = Cluster::builder()
        .host(HostSpec::new("busy").attribute(placewise::spread::SERVICE_TASKS_ATTRIBUTE, huge))
        .host(HostSpec::new("idle"))
        .build()
        .unwrap();
    let outcome = SpreadScheduler::new().schedule(&cluster, &SpreadRequest::new("web", 2)).unwrap();
    assert!(outcome.is_complete());
    assert_eq!(outcome.per_host().get("idle"), Some(&2), "{:?}", outcome.per_host());
}

/// Found by the `spread` fuzz target with `json_mutate` (campaign 17): in the balanced mode, a
/// batch of 65,536 tasks made the check for narrow heap keys subtract past zero, a panic with
/// overflow checks on. Batches on both sides of the 2^16 - 1 boundary are placed in full.
#[test]
fn a_balanced_batch_of_2_pow_16_tasks_is_placed_without_an_overflow() {
    let cluster = Cluster::builder().host(HostSpec::new("a")).host(HostSpec::new("b")).build().unwrap();
    for tasks in [65_534u32, 65_535, 65_536, 70_000] {
        let json = format!(r#"{{"service": "web", "tasks": {tasks}, "mode": "balanced"}}"#);
        let outcome = SpreadScheduler::new().schedule(&cluster, &SpreadRequest::from_json(&json).unwrap()).unwrap();
        assert!(outcome.is_complete(), "{tasks}");
        let mut counts: Vec<u32> = outcome.per_host().into_values().collect();
        counts.sort_unstable();
        assert_eq!(counts, [tasks / 2, tasks.div_ceil(2)], "{tasks}");
    }
    // The fuzz input itself: its constraint's key (`engine.labelh2s.disk`) is none SwarmKit knows,
    // so no node matches; spelt `engine.labels.disk`, one task per node (`max_replicas`).
    let found = std::fs::read_to_string("fuzz/regressions/spread/balanced_batch_of_65536.json").unwrap();
    for (json, placed) in [(found.clone(), 0), (found.replace("labelh2s", "labels"), 2)] {
        let outcome = SpreadScheduler::new().schedule(&cluster, &SpreadRequest::from_json(&json).unwrap()).unwrap();
        assert_eq!(outcome.selections.len(), placed, "{json}: {:?}", outcome.per_host());
    }
}

#[test]
fn an_expression_longer_than_the_limit_is_a_parse_error_at_the_limit() {
    let long = format!("a = {}", "x".repeat(MAX_EXPR_LEN));
    let err = LabelExpr::parse(&long).unwrap_err();
    assert_eq!(err.position, MAX_EXPR_LEN);
    assert!(err.expected.contains("at most 4096 bytes"), "{err}");
    assert_eq!(MatchExpr::parse(&long).unwrap_err().position, MAX_EXPR_LEN);
}

/// Text within the length limit can print longer (`,` prints as ` and `, `~` with spaces around
/// it): the fuzzer's `label_expr` found one whose `Display` the parser then refused. Such text is
/// refused itself, in both dialects, so what `Display` prints always parses back.
#[test]
fn an_expression_whose_canonical_form_exceeds_the_length_limit_is_refused() {
    let term = format!("kk~{}", "x".repeat(30));
    let chain = |terms: usize, and: &str| vec![term.as_str(); terms].join(and);
    let refused = |err: ParseError| {
        assert!(err.expected.contains("canonical form is at most 4096 bytes"), "{err}");
    };
    // 100 terms print in 3,995 bytes: accepted, and the print parses back.
    let expr = LabelExpr::parse(&chain(100, ",")).unwrap();
    let shown = expr.to_string();
    assert_eq!(shown.len(), 3_995);
    assert_eq!(LabelExpr::parse(&shown).unwrap(), expr);
    // 110 terms are 3,739 bytes as written and 4,395 printed.
    let long = chain(110, ",");
    assert_eq!(long.len(), 3_739);
    refused(LabelExpr::parse(&long).unwrap_err());
    // The product dialect has no `,`: 105 terms are 3,985 bytes as written, 4,195 printed.
    let long = chain(105, " and ");
    assert_eq!(long.len(), 3_985);
    refused(MatchExpr::parse(&long).unwrap_err());
    assert!(MatchExpr::parse(&chain(100, " and ")).is_ok());
    // The fuzz input: 2,747 bytes.
    let found = std::fs::read_to_string("fuzz/regressions/label_expr/canonical_form_longer_than_the_limit").unwrap();
    refused(LabelExpr::parse(&found).unwrap_err());
}

/// The limit is "at most 4,096 bytes": the parser used to refuse text of exactly 4,096 bytes (its
/// end counted as past the limit), so an expression whose canonical form was exactly that long
/// printed as text it refused. The fuzzer found that the run after the canonical-form limit.
#[test]
fn an_expression_of_exactly_the_length_limit_parses_and_prints_back() {
    let longest = format!("a = {}", "x".repeat(MAX_EXPR_LEN - 4));
    assert_eq!(LabelExpr::parse(&longest).unwrap().to_string(), longest);
    assert_eq!(MatchExpr::parse(&longest).unwrap().to_string(), longest);
    let found = std::fs::read_to_string("fuzz/regressions/label_expr/canonical_form_of_exactly_the_limit").unwrap();
    let expr = LabelExpr::parse(&found).unwrap();
    let shown = expr.to_string();
    assert_eq!((found.len(), shown.len()), (2_286, MAX_EXPR_LEN));
    assert_eq!(LabelExpr::parse(&shown).unwrap(), expr);
}

/// An `and` chain is a tree as tall as it is long: the longest one the height limit allows
/// parses, displays, matches and drops on a test thread's stack, and one term more is refused.
#[test]
fn and_chains_are_bounded_by_the_height_limit() {
    let chain = |terms: usize| vec!["a"; terms].join(",");
    let expr = LabelExpr::parse(&chain(MAX_EXPR_DEPTH)).unwrap();
    let shown = expr.to_string();
    assert_eq!(LabelExpr::parse(&shown).unwrap(), expr);
    let labels = BTreeMap::from([("a".to_owned(), String::new())]);
    assert!(expr.matches_map(&labels));
    drop(expr);
    let err = LabelExpr::parse(&chain(MAX_EXPR_DEPTH + 2)).unwrap_err();
    assert!(err.expected.contains("nested too deeply"), "{err}");
    // The longest text of short terms is far beyond the height limit: refused, not overflowed.
    let longest = chain(MAX_EXPR_LEN / 2);
    assert!(LabelExpr::parse(&longest).is_err());
    assert!(MatchExpr::parse(&longest.replace(',', " and ")).is_err());
}

#[test]
fn nesting_deeper_than_the_limit_is_a_parse_error() {
    let ok = format!("{}a{}", "(".repeat(MAX_EXPR_DEPTH - 1), ")".repeat(MAX_EXPR_DEPTH - 1));
    assert!(LabelExpr::parse(&ok).is_ok());
    let deep = format!("{}a{}", "(".repeat(MAX_EXPR_DEPTH + 1), ")".repeat(MAX_EXPR_DEPTH + 1));
    let err = LabelExpr::parse(&deep).unwrap_err();
    assert!(err.expected.contains("nested too deeply"), "{err}");
    let nots = format!("{}a", "not ".repeat(MAX_EXPR_DEPTH + 1));
    assert!(LabelExpr::parse(&nots).unwrap_err().expected.contains("nested too deeply"));
}

#[test]
fn a_regex_above_the_size_limit_is_a_parse_error_naming_its_position() {
    let err = LabelExpr::parse(r#"k ~ "(\w{100}){100}""#).unwrap_err();
    assert_eq!(err.position, 4);
    assert!(err.expected.starts_with("expected a valid regular expression"), "{err}");
}

#[test]
fn a_json_query_deeper_than_the_limit_is_refused_without_recursing() {
    let mut value = serde_json::json!(["=", 1, 1]);
    for _ in 0..1_000 {
        value = serde_json::json!(["not", value]);
    }
    assert_eq!(Query::parse(&value).unwrap_err(), QueryError::TooDeep { max: MAX_QUERY_DEPTH });
    let mut fits = serde_json::json!(["=", 1, 1]);
    for _ in 1..MAX_QUERY_DEPTH {
        fits = serde_json::json!(["not", fits]);
    }
    assert!(Query::parse(&fits).unwrap().is_some());
}

#[test]
fn a_misspelt_engine_attribute_is_reported_instead_of_read_as_its_default() {
    let cluster = Cluster::builder()
        .host(HostSpec::new("n1").attribute("engine_image_redy", serde_json::json!(false)))
        .host(HostSpec::new("n2").attribute("im_running", serde_json::json!("false")))
        .host(HostSpec::new("n3").attribute("engine_image_ready", serde_json::json!(false)))
        .build()
        .unwrap();
    let replica = ReplicaScheduler::new(ReplicaSettings::default()).unwrap();
    let warnings: Vec<String> = replica.attribute_warnings(&cluster).iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [
            "host `n1`: attribute `engine_image_redy` is not read; did you mean `engine_image_ready`?",
            "host `n2`: attribute `im_running` is not of type Bool and reads as its default",
        ]
    );
    let swarm = Cluster::builder()
        .host(HostSpec::new("m1").attribute("hostnme", serde_json::json!("m1")))
        .host(HostSpec::new("m2").attribute("Role", serde_json::json!("manager")))
        .build()
        .unwrap();
    let found = SpreadScheduler::new().attribute_warnings(&swarm);
    assert_eq!(
        found,
        [
            AttributeWarning::Misspelt { host: "m1".into(), key: "hostnme".into(), known: "hostname" },
            AttributeWarning::Misspelt { host: "m2".into(), key: "Role".into(), known: "role" },
        ]
    );
}

/// Found by hand while writing the replica fuzz target: 200,000 replicas with soft
/// anti-affinity and a zero size kept `schedule` creating replicas for minutes.
#[test]
fn a_volume_with_more_replicas_than_the_limit_is_refused_not_scheduled_for_ever() {
    let json = r#"{"name": "v", "size": 0, "number_of_replicas": 200000}"#;
    let err = serde_json::from_str::<Volume>(json).unwrap_err();
    assert!(err.to_string().contains("number_of_replicas 200000 is above the limit of 100"), "{err}");
    let mut settings = ReplicaSettings::default();
    settings.replica_soft_anti_affinity = true;
    let scheduler = ReplicaScheduler::new(settings).unwrap();
    let cluster = Cluster::builder()
        .host(HostSpec::new("n1").disk(placewise::snapshot::DiskSpec::new("d", 100 << 30, 80 << 30)))
        .build()
        .unwrap();
    let mut volume = Volume::new("v", 0, MAX_VOLUME_REPLICAS + 1);
    // Refused before anything is created.
    let err = scheduler.schedule(&cluster, &volume, &[], 0).unwrap_err();
    assert_eq!(err.to_string(), "volume `v`: number_of_replicas is above the limit of 100 (101)");
    volume.number_of_replicas = MAX_VOLUME_REPLICAS;
    assert_eq!(scheduler.schedule(&cluster, &volume, &[], 0).unwrap().created.len(), 100);
}

/// Found by the `events` fuzz target: placing an instance whose id already ran on another host
/// was accepted, and the snapshot's own spec then failed to build (`duplicate instance id`).
#[test]
fn an_instance_id_that_runs_on_another_host_is_refused_by_every_event() {
    let c0 = Cluster::builder()
        .host(HostSpec::new("h1").instance(InstanceSpec::new("i0")))
        .host(HostSpec::new("h2"))
        .build()
        .unwrap();
    let duplicate = |e: EventError| matches!(e, EventError::Invalid(BuildError::DuplicateInstance { ref host, ref id }) if host == "h1" && id == "i0");
    let placed = ClusterEvent::InstancePlaced { host: "h2".into(), instance: InstanceSpec::new("i0") };
    assert!(duplicate(c0.apply(&placed).unwrap_err()));
    let added = ClusterEvent::HostAdded { host: HostSpec::new("h3").instance(InstanceSpec::new("i0")) };
    assert!(duplicate(c0.apply(&added).unwrap_err()));
    let updated = ClusterEvent::HostUpdated { host: HostSpec::new("h2").instance(InstanceSpec::new("i0")) };
    assert!(duplicate(c0.apply(&updated).unwrap_err()));
    // The host that runs it may be updated with it, and once it is removed the id is free.
    let same = ClusterEvent::HostUpdated { host: HostSpec::new("h1").instance(InstanceSpec::new("i0")) };
    let c1 = c0.apply(&same).unwrap();
    let c2 = c1.apply(&ClusterEvent::InstanceRemoved { host: "h1".into(), instance: "i0".into() }).unwrap();
    let c3 = c2.apply(&placed).unwrap();
    assert_eq!(c3.instance_host("i0"), c3.host_id("h2"));
    assert!(Cluster::from_spec(&c3.to_spec()).is_ok());
}

/// Found by the `request_json` fuzz target (in the stable corpus run, on a test thread's 2 MiB
/// stack): a selector pattern of 250 stacked repetitions (`e*l***…`) overflowed the stack inside
/// the `regex` crate, whose default nesting limit is 250.
#[test]
fn a_regex_nested_deeper_than_the_limit_is_a_parse_error_not_a_stack_overflow() {
    let deep = format!("k ~ \"e*l{}ab\"", "*".repeat(250));
    let err = LabelExpr::parse(&deep).unwrap_err();
    assert_eq!(err.position, 4);
    assert!(err.expected.starts_with("expected a valid regular expression"), "{err}");
    let fits = format!("k ~ \"a{}\"", "*".repeat(MAX_REGEX_NEST as usize - 2));
    assert!(LabelExpr::parse(&fits).is_ok());
}

/// A custom weigher whose per-host multiplier for host `host` is `bad` (the built-in weighers
/// refuse non-finite multipliers when they are configured).
struct BadMultiplier {
    name: &'static str,
    host: &'static str,
    bad: f64,
}

impl placewise::weigh::Weigher for BadMultiplier {
    fn name(&self) -> &str {
        self.name
    }

    fn weigh(&self, cx: &placewise::request::Cx<'_>, host: placewise::id::HostId) -> f64 {
        f64::from(cx.overlay().placed(host)) + host.index() as f64
    }

    fn extension(&self) -> Option<&dyn placewise::weigh::Extension> {
        Some(self)
    }
}

impl placewise::weigh::Extension for BadMultiplier {
    fn multiplier(&self, cx: &placewise::request::Cx<'_>, host: placewise::id::HostId, configured: f64) -> f64 {
        if cx.cluster().host_name(host) == self.host {
            self.bad
        } else {
            configured
        }
    }

    fn per_host_multiplier(&self) -> bool {
        true
    }
}

#[test]
fn a_custom_weighers_non_finite_multiplier_is_refused_in_both_selection_loops() {
    // 70 hosts: two chunks of 64. Weigher `a` refuses h65 (the second chunk), weigher `b` h1
    // (the first): the ranking asks `a` over every host before `b`, so `a`'s is the error, and
    // the one-pass pick, which meets `b`'s first, gives the same one.
    let mut builder = Cluster::builder();
    for i in 0..70 {
        builder = builder.host(HostSpec::new(format!("h{i}")).vcpus(8.0));
    }
    let cluster = builder.build().unwrap();
    for bad in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN] {
        for ties in [placewise::schedule::Ties::HostId, placewise::schedule::Ties::PreviousOrder] {
            let scheduler = Scheduler::builder()
                .weigher(BadMultiplier { name: "a", host: "h65", bad }, 1.0)
                .weigher(BadMultiplier { name: "b", host: "h1", bad }, 1.0)
                .ties(ties)
                .build()
                .unwrap();
            for count in [1, 4] {
                // Before this was refused, an infinite multiplier made NaN scores, and sorting
                // them could panic ("does not correctly implement a total order").
                let err = scheduler.schedule(&cluster, &Request::new(count).vcpus(1.0)).unwrap_err();
                match err {
                    ScheduleError::Weigher { weigher, source } => {
                        let message = source.to_string();
                        assert_eq!(weigher, "a", "{ties:?} × {count}");
                        assert!(message.contains("`h65`") && message.contains("not finite"), "{message}");
                    }
                    other => panic!("{ties:?} × {count}: expected a weigher error, got {other:?}"),
                }
            }
        }
    }
}

/// Issue 42, item 4: every volume field the replica scheduler reads is checked against what a
/// Longhorn volume can hold, at every entry: a typed error naming the field where the call
/// returns a `Result`, the volume refused whole (nothing created, the error and its message)
/// where it returns a schedule, and the volume count stops there with the message.
#[test]
fn every_volume_field_out_of_range_is_refused_by_name_at_every_replica_entry() {
    use placewise::replica::{DataLocality, ReplicaError, ReplicaScratch};
    const G: i64 = 1 << 30;
    let disk = |name: &str| placewise::snapshot::DiskSpec::new(name, 100 * G, 90 * G);
    let cluster = Cluster::builder()
        .host(HostSpec::new("n1").zone("z1").disk(disk("d")))
        .host(HostSpec::new("n2").zone("z2").disk(disk("d")))
        .host(HostSpec::new("n3").zone("z3").disk(disk("d")))
        .build()
        .unwrap();
    let scheduler = ReplicaScheduler::new(ReplicaSettings::default()).unwrap();
    let strict = |n: u32| {
        let mut v = Volume::new("v", G, n);
        v.data_locality = DataLocality::StrictLocal;
        v.node_id = "n1".into();
        v
    };
    let with = |f: &dyn Fn(&mut Volume)| {
        let mut v = Volume::new("v", G, 2);
        f(&mut v);
        v
    };
    let bad: Vec<(Volume, &str, &str, i64)> = vec![
        (Volume::new("v", -5, 2), "size", "negative", -5),
        (Volume::new("v", i64::MIN, 1), "size", "negative", i64::MIN),
        (with(&|v| v.actual_size = -1), "actual_size", "negative", -1),
        (Volume::new("v", G, 0), "number_of_replicas", "zero", 0),
        (Volume::new("v", G, MAX_VOLUME_REPLICAS + 1), "number_of_replicas", "above the limit of 100", 101),
        (Volume::new("v", G, u32::MAX), "number_of_replicas", "above the limit of 100", i64::from(u32::MAX)),
        (strict(2), "number_of_replicas", "not 1 with strict-local data locality", 2),
    ];
    for (volume, field, problem, value) in bad {
        let want = ReplicaError::InvalidVolume { volume: "v".into(), field, problem, value };
        assert_eq!(volume.validate(), Err(want.clone()), "{field} {value}");
        assert!(want.to_string().starts_with(&format!("volume `v`: {field} is {problem}")), "{want}");

        // Refused whole, before anything is created or reused.
        assert_eq!(scheduler.schedule(&cluster, &volume, &[], 0), Err(want.clone()), "{field} {value}");
        let warm = scheduler.schedule_with(&mut ReplicaScratch::new(), &cluster, &volume, &[], 0);
        assert_eq!(warm, Err(want.clone()));

        let pending = [Replica::new("r")];
        assert_eq!(scheduler.schedule_replica(&cluster, &volume, &pending, 0, 0), Err(want.clone()));
        assert_eq!(scheduler.schedule_replicas(&cluster, &volume, &mut pending.clone(), &["r"], 0), Err(want.clone()));
        assert_eq!(scheduler.precheck(&cluster, &volume, &[], 0), Err(want.clone()), "{field}");

        let count = placewise::capacity::volumes(&scheduler, &cluster, &volume, 10).unwrap();
        assert_eq!((count.total, count.stop), (0, Some(want.to_string())), "{field} {value}");
    }
    // The edges of every rule are accepted, and place.
    let good = [
        Volume::new("v", 0, 1),
        with(&|v| v.actual_size = 0),
        Volume::new("v", G, 1),
        Volume::new("v", G, 3),
        strict(1),
    ];
    for volume in good {
        assert_eq!(volume.validate(), Ok(()), "{volume:?}");
        let out = scheduler.schedule(&cluster, &volume, &[], 0).unwrap();
        assert_eq!(out.placed().count() as u32, volume.number_of_replicas, "{volume:?}");
    }
    assert_eq!(Volume::new("v", G, MAX_VOLUME_REPLICAS).validate(), Ok(()));
}

/// Issue 42, item 4: a disk reporting more available space than its maximum (which no
/// filesystem reports) is refused by the replica engine with the host, the disk and both
/// numbers, whether it came with the snapshot or with a later event; the foundation's snapshot
/// still holds it (it reads no disk space) and says where it is.
#[test]
fn a_disk_with_more_available_than_its_maximum_is_refused_by_the_replica_engine() {
    use placewise::replica::ReplicaError;
    use placewise::snapshot::DiskSpec;
    const G: i64 = 1 << 30;
    let good = Cluster::builder()
        .host(HostSpec::new("n1").zone("z1").disk(DiskSpec::new("d", 100 * G, 100 * G)))
        .host(HostSpec::new("n2").zone("z2").disk(DiskSpec::new("d", 100 * G, 90 * G)))
        .build()
        .unwrap();
    let scheduler = ReplicaScheduler::new(ReplicaSettings::default()).unwrap();
    let volume = Volume::new("v", G, 2);
    // Available equal to the maximum is a disk with nothing on it.
    assert_eq!(good.disk_above_maximum(), None);
    assert_eq!(scheduler.check_nodes(&good), Ok(()));
    assert_eq!(scheduler.schedule(&good, &volume, &[], 0).unwrap().placed().count(), 2);

    let over = DiskSpec::new("e", 100 * G, 100 * G + 1);
    let bad = good.apply(&ClusterEvent::DiskUpdated { host: "n2".into(), disk: over.clone() }).unwrap();
    let built = Cluster::builder()
        .host(HostSpec::new("n1").zone("z1").disk(DiskSpec::new("d", 100 * G, 100 * G)))
        .host(HostSpec::new("n2").zone("z2").disk(DiskSpec::new("d", 100 * G, 90 * G)).disk(over))
        .build()
        .unwrap();
    let want = ReplicaError::DiskAboveMaximum {
        host: "n2".into(),
        disk: "e".into(),
        available: (100 * G + 1) as u64,
        maximum: (100 * G) as u64,
    };
    assert_eq!(
        want.to_string(),
        format!("host `n2`: disk `e`: available is above maximum ({} > {})", 100 * G + 1, 100 * G)
    );
    for cluster in [&bad, &built] {
        let n2 = cluster.host_id("n2").unwrap();
        assert_eq!(cluster.disk_above_maximum(), Some((n2, placewise::id::DiskId::from_index(1))));
        assert_eq!(scheduler.check_nodes(cluster), Err(want.clone()));
        // Refused whole, before anything is created or reused.
        assert_eq!(scheduler.schedule(cluster, &volume, &[], 0), Err(want.clone()));
        assert_eq!(
            scheduler.schedule_with(&mut placewise::replica::ReplicaScratch::new(), cluster, &volume, &[], 0),
            Err(want.clone())
        );
        let pending = [Replica::new("r")];
        assert_eq!(scheduler.schedule_replica(cluster, &volume, &pending, 0, 0), Err(want.clone()));
        assert_eq!(scheduler.schedule_replicas(cluster, &volume, &mut pending.clone(), &["r"], 0), Err(want.clone()));
        assert_eq!(scheduler.precheck(cluster, &volume, &[], 0), Err(want.clone()));
        let count = placewise::capacity::volumes(&scheduler, cluster, &volume, 10).unwrap();
        assert_eq!((count.total, count.stop), (0, Some(want.to_string())));
    }
    // An event that brings the disk back within its maximum lifts the refusal.
    let fixed =
        bad.apply(&ClusterEvent::DiskUpdated { host: "n2".into(), disk: DiskSpec::new("e", 100 * G, G) }).unwrap();
    assert_eq!(fixed.disk_above_maximum(), None);
    assert_eq!(scheduler.schedule(&fixed, &volume, &[], 0).unwrap().placed().count(), 2);
}
