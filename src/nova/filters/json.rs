//! JsonFilter: the `query` scheduler hint.

use super::common::is_host_state_attribute;
use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::nova::host_state::{derived_index, derived_is_number, HostStateView};
use crate::nova::json_query::{NumericQuery, Query, QueryError, Vars};
use crate::nova::pyvalue::{PyObject, PyValue};
use crate::nova::request::VmSpec;
use crate::request::{Cx, Prepared};
use serde_json::Value;

/// Reason: the query is false for the host.
const FALSE: u32 = 0;
/// Reason: the host could not be judged (the request fails).
const ERROR: u32 = 1;

/// Nova's `JsonFilter` (reference §6): the `query` hint, a JSON query such as
/// `["and", [">=", "$free_ram_mb", 1024], ["<", "$num_io_ops", 8]]` given as its JSON text (as
/// Nova receives it) or as the JSON value itself, must evaluate true for the host (see
/// [`json_query`](crate::nova::json_query) for the language and its quirks). A missing or empty
/// query lets every host pass.
///
/// Variables name `HostState` attributes (`$free_ram_mb`, `$stats.rack`, `$service.disabled`);
/// counters and free amounts include the earlier picks of the request. A query Nova cannot
/// evaluate (not JSON, an unknown operator, a number ordered against a string, a dotted lookup
/// through a non-map, such as `$metrics.cpu.percent`: Nova's `metrics`, `pci_stats` and
/// `updated` are objects without `get`) fails the request. Runs for every instance, not on rebuilds.
///
/// Named alone, those three are objects ([`PyObject`]): `$metrics` is true when the host reports
/// a metric, `$pci_stats` and `$updated` always; each equals only itself; ordering one raises,
/// except `$updated` against itself.
///
/// A query that reads only numeric attributes (`free_ram_mb`, `num_io_ops` …) and compares
/// them with number literals, under `and` and `or`, is judged on plain numbers
/// ([`NumericQuery`]), with the same answers; a host with a value that is not a JSON number
/// is judged by the general evaluation.
/// Reason: ``query `<query>` is false``.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JsonFilter;

/// The request's query, decoded once.
#[derive(Debug, Clone)]
struct QueryState {
    query: Result<Option<Query>, QueryError>,
    /// The query on numbers alone, when it reads only numeric `HostState` attributes
    /// ([`Query::numeric`]): hosts are judged on plain `f64`s.
    numeric: Option<NumericQuery>,
}

fn query(cx: &Cx<'_>) -> QueryState {
    let mut query = match VmSpec::of(cx).hints.get("query") {
        None | Some(Value::Null) => Ok(None),
        Some(q) => Query::parse(q),
    };
    if let Ok(Some(q)) = &mut query {
        q.bind(slot);
    }
    let numeric = match &query {
        Ok(Some(q)) => q.numeric(|s| derived_is_number(s as usize)).filter(|n| n.slots().len() <= NUMERIC_VARIABLES),
        _ => None,
    };
    QueryState { query, numeric }
}

/// The most distinct variables of a query judged on numbers (their values sit on the stack); a
/// query with more is judged by the general evaluation.
const NUMERIC_VARIABLES: usize = 8;

/// A variable's slot: not a `HostState` attribute (always `None`).
const NOT_HOST_STATE: u32 = u32::MAX;
/// A variable's slot: a stored attribute, looked up by name.
const STORED: u32 = u32::MAX - 1;

/// The slot of the variable `name`, resolved once per request: an index into
/// [`DERIVED_ATTRIBUTES`](crate::nova::host_state::DERIVED_ATTRIBUTES), [`STORED`] or
/// [`NOT_HOST_STATE`].
fn slot(name: &str) -> Option<u32> {
    Some(match derived_index(name) {
        _ if !is_host_state_attribute(name) => NOT_HOST_STATE,
        Some(i) => i as u32,
        None => STORED,
    })
}

/// A host's `HostState` attributes for the query.
struct HostVars<'a> {
    view: HostStateView<'a>,
}

impl HostVars<'_> {
    /// A `HostState` attribute that is not derived: one of the objects, or the stored value.
    fn stored(&self, name: &str) -> PyValue {
        // The attributes that hold objects, not values (Nova's host state sets all three).
        let (type_name, truthy, ordered) = match name {
            // A list: false when empty.
            "metrics" => ("MonitorMetricList", self.view.has_metrics(), false),
            "pci_stats" => ("PciDeviceStats", true, false),
            "updated" => ("datetime.datetime", true, true),
            _ => return PyValue::from(&self.view.attribute(name)),
        };
        PyValue::Object(PyObject { type_name, truthy, ordered })
    }
}

impl Vars for HostVars<'_> {
    fn attribute(&self, name: &str) -> PyValue {
        match slot(name) {
            Some(slot) => self.attribute_at(slot, name),
            None => PyValue::None,
        }
    }

    fn attribute_at(&self, slot: u32, name: &str) -> PyValue {
        match slot {
            NOT_HOST_STATE => PyValue::None,
            STORED => self.stored(name),
            derived => PyValue::from(&self.view.derived(derived as usize)),
        }
    }
}

impl JsonFilter {
    fn judge(&self, cx: &Cx<'_>, q: &QueryState, host: HostId) -> Result<Verdict, ScheduleError> {
        let error = |e: &QueryError| ScheduleError::filter(self.name(), e.clone());
        match &q.query {
            Ok(None) => Ok(Verdict::Pass),
            Err(e) => Err(error(e)),
            Ok(Some(query)) => match query.passes(&HostVars { view: cx.host_state(host) }) {
                Ok(pass) => Ok(if pass { Verdict::Pass } else { Verdict::reject(FALSE) }),
                Err(e) => Err(error(&e)),
            },
        }
    }
}

impl Filter for JsonFilter {
    fn name(&self) -> &str {
        "JsonFilter"
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(Some(Box::new(query(cx))))
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        let verdict = match cx.state::<QueryState>() {
            Some(q) => self.judge(cx, q, host),
            None => self.judge(cx, &query(cx), host),
        };
        verdict.unwrap_or(Verdict::reject(ERROR))
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        let mut owned = None;
        let q = cx.state_or::<QueryState>(&mut owned, || query(cx));
        if matches!(q.query, Ok(None)) {
            return mask;
        }
        match &q.numeric {
            Some(numeric) => {
                let mut values = [0.0; NUMERIC_VARIABLES];
                rejected.try_lanes(chunk, mask, Reason(ERROR), |h| {
                    let view = cx.host_state(h);
                    for (v, &s) in values.iter_mut().zip(numeric.slots()) {
                        *v = view.derived_number(s as usize).unwrap_or(f64::NAN);
                    }
                    match numeric.passes(&values) {
                        Some(pass) => Ok(if pass { Verdict::Pass } else { Verdict::reject(FALSE) }),
                        // A value that is not a JSON number.
                        None => self.judge(cx, q, h),
                    }
                })
            }
            None => rejected.try_lanes(chunk, mask, Reason(ERROR), |h| self.judge(cx, q, h)),
        }
    }

    fn describe(&self, cx: &Cx<'_>, reason: Reason) -> String {
        match (reason.0, query(cx).query) {
            (FALSE, Ok(Some(q))) => format!("query `{q}` is false"),
            _ => "query cannot be evaluated".into(),
        }
    }

    fn host_local(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nova::filters::common::testkit::{names, picks, reason, run};
    use crate::nova::request::NovaRequest;
    use crate::nova::request::VmSpec;
    use crate::request::Request;
    use crate::snapshot::Cluster;
    use crate::snapshot::{HostSpec, HostState, ResourceSpec};
    use serde_json::json;

    fn request(count: u32, query: Value) -> NovaRequest {
        let mut vm = VmSpec::default();
        vm.hints.insert("query".into(), query);
        NovaRequest::new(Request::new(count).memory_mb(1024.0), vm)
    }

    fn cluster() -> Cluster {
        Cluster::builder()
            .host(
                HostSpec::new("big")
                    .resource("memory_mb", ResourceSpec::new(4096.0))
                    .attribute("num_io_ops", json!(1))
                    .attribute("stats", json!({"rack": "r1", "n": "5"}))
                    .attribute("cpu_info", json!("{\"arch\": \"x86_64\"}")),
            )
            .host(
                HostSpec::new("small")
                    .resource("memory_mb", ResourceSpec::new(1024.0))
                    .attribute("num_io_ops", json!(9))
                    .attribute("stats", json!({"rack": "r2", "n": "5"}))
                    .state(HostState { enabled: false, ..HostState::default() }),
            )
            .build()
            .unwrap()
    }

    #[test]
    fn queries_as_text_or_value() {
        let c = cluster();
        let f = JsonFilter;
        let q = json!(["and", [">=", "$free_ram_mb", 2048], ["<", "$num_io_ops", 8]]);
        assert_eq!(run(&f, &c, &request(1, q.clone())).unwrap(), names(&["big"]));
        assert_eq!(run(&f, &c, &request(1, json!(q.to_string()))).unwrap(), names(&["big"]));
        // A list is the query itself, not a list of hint strings.
        let err = run(&f, &c, &request(1, json!([q.to_string()]))).unwrap_err();
        assert!(err.to_string().contains("unknown operator"), "{err}");
        assert_eq!(run(&f, &c, &request(1, json!(["=", "$stats.rack", "r2"]))).unwrap(), names(&["small"]));
        assert_eq!(run(&f, &c, &request(1, json!(["=", "$service.disabled", true]))).unwrap(), names(&["small"]));
        // Stats are strings.
        assert_eq!(run(&f, &c, &request(1, json!(["=", "$stats.n", 5]))).unwrap(), Vec::<String>::new());
        assert_eq!(run(&f, &c, &request(1, json!(["=", "$stats.n", "5"]))).unwrap().len(), 2);
        // Top-level `not` negates.
        assert_eq!(run(&f, &c, &request(1, json!(["not", ["=", "$stats.rack", "r2"]]))).unwrap(), names(&["big"]));
        // Unknown variables resolve to None and are dropped: `['>=', 1]` is false.
        assert_eq!(run(&f, &c, &request(1, json!([">=", "$nosuch", 1]))).unwrap(), Vec::<String>::new());
        assert_eq!(run(&f, &c, &request(1, json!([">=", "$trust_level", 1]))).unwrap(), Vec::<String>::new());
        assert_eq!(
            reason(&f, &c, &request(1, json!(["=", "$stats.rack", "r2"])), "big"),
            r#"query `["=","$stats.rack","r2"]` is false"#
        );
    }

    #[test]
    fn empty_queries_pass_everything() {
        let c = cluster();
        for q in [json!(""), json!("[]"), json!([]), json!(null), json!("null")] {
            assert_eq!(run(&JsonFilter, &c, &request(1, q.clone())).unwrap().len(), 2, "{q}");
        }
        assert_eq!(run(&JsonFilter, &c, &Request::new(1)).unwrap().len(), 2);
    }

    #[test]
    fn errors_fail_the_request() {
        let c = cluster();
        for q in [
            json!(["!=", 1, 2]),
            json!(["<", "$free_ram_mb", "abc"]),
            json!(["=", "$cpu_info.arch", "x86_64"]),
            json!("[not json"),
        ] {
            let err = run(&JsonFilter, &c, &request(1, q.clone())).unwrap_err();
            assert!(err.to_string().contains("JsonFilter"), "{q}: {err}");
        }
    }

    #[test]
    fn slots_answer_as_names() {
        use crate::nova::filters::common::HOST_STATE_ATTRIBUTES;
        use crate::snapshot::Overlay;
        let c = cluster();
        let req = request(2, json!(["=", 1, 1]));
        let compiled = req.request.compile(&c).unwrap();
        let mut overlay = Overlay::new();
        overlay.consume(HostId(0), &[(crate::id::ResourceId::MEMORY_MB, 512.0)]);
        let cx = Cx::new(&c, &req.request, &compiled, &overlay, 1).with_part(Some(&req.vm));
        let names = HOST_STATE_ATTRIBUTES.iter().chain(&["nosuch", "", "forced_down", "trust_level"]);
        for h in [HostId(0), HostId(1)] {
            let vars = HostVars { view: cx.host_state(h) };
            for &name in names.clone() {
                let bound = slot(name).map(|s| vars.attribute_at(s, name));
                assert_eq!(bound, Some(vars.attribute(name)), "{name}");
            }
        }
    }

    /// A host for [`numbers_judge_as_the_query`]: memory in 512 MiB steps, and `num_io_ops` as
    /// an integer, a float or unset.
    fn numeric_host(i: usize, (memory, used, io, float): (u32, u32, Option<i64>, bool)) -> HostSpec {
        let mut spec = HostSpec::new(format!("h{i}"))
            .resource("memory_mb", ResourceSpec::new(512.0 * f64::from(memory + 1)).used(512.0 * f64::from(used)))
            .resource("vcpus", ResourceSpec::new(f64::from(memory)).used(0.5 * f64::from(used)));
        if let Some(io) = io {
            spec = spec.attribute("num_io_ops", if float { json!(io as f64 + 0.5) } else { json!(io) });
        }
        spec
    }

    proptest::proptest! {
        #[test]
        fn numbers_judge_as_the_query(
            hosts in proptest::collection::vec((0u32..8, 0u32..10, proptest::option::of(0i64..10), proptest::bool::ANY), 1..140),
            picks in proptest::collection::vec(0usize..140, 0..6),
            q in proptest::sample::select(vec![
                json!(["and", [">=", "$free_ram_mb", 1024], ["<", "$num_io_ops", 8]]),
                json!(["or", ["<", "$num_io_ops", 2, 4.5], ["=", "$vcpus_used", 0], ["in", "$free_ram_mb", 0, 512, 1536]]),
                json!([">", "$free_ram_mb", "$vcpus_total", -1, true]),
                json!(["and", "$num_io_ops", [">=", "$ram_allocation_ratio", 1], ["<=", 2.5, "$vcpus_used"]]),
                json!(["or"]),
            ]),
        ) {
            use crate::snapshot::Overlay;
            let mut builder = Cluster::builder();
            for (i, &h) in hosts.iter().enumerate() {
                builder = builder.host(numeric_host(i, h));
            }
            let c = builder.build().unwrap();
            let req = request(1, q);
            let compiled = req.request.compile(&c).unwrap();
            let mut overlay = Overlay::new();
            for &p in &picks {
                overlay.consume(HostId::from_index(p % hosts.len()), &[(crate::id::ResourceId::MEMORY_MB, 512.0)]);
            }
            let cx = Cx::new(&c, &req.request, &compiled, &overlay, picks.len() as u32).with_part(Some(&req.vm));
            let fast = query(&cx);
            proptest::prop_assert!(fast.numeric.is_some());
            let plain = QueryState { numeric: None, ..fast.clone() };
            let mut judged = Vec::new();
            for state in [&fast, &plain] {
                let mut rejected = Rejections::new(true);
                let masks: Vec<u64> = (0..c.chunk_count())
                    .map(|k| JsonFilter.check_chunk(&cx.with_state(Some(state)), k, c.hot_chunk(k).live, &mut rejected))
                    .collect();
                judged.push((masks, rejected.counts().to_vec(), rejected.hosts().map(<[_]>::to_vec)));
            }
            proptest::prop_assert_eq!(&judged[0], &judged[1]);
        }
    }

    #[test]
    fn variables_see_earlier_picks() {
        // 4096 MiB: after two 1024 MiB picks, 2048 is left and `> 2048` fails.
        let c = cluster();
        let q = json!([">", "$free_ram_mb", 2048]);
        assert_eq!(picks(JsonFilter, &c, &request(4, q)).unwrap(), names(&["big", "big"]));
        assert!(
            !JsonFilter.once_per_request()
                && !crate::nova::runs_on_rebuild(JsonFilter.name())
                && JsonFilter.host_local()
        );
    }
}
