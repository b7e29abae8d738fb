//! MetricsFilter: the host must report every metric the metrics weigher uses.

use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Verdict};
use crate::id::{HostId, Symbol};
use crate::nova::host_state::reports_without_value;
use crate::nova::weight_setting::{parse_weight_setting, parse_weight_setting_str, SettingProblem};
use crate::request::{Cx, Prepared};

/// Nova's `MetricsFilter`: a host passes when it reports every metric named in
/// `[metrics] weight_setting`. Only well-formed `name=ratio` entries count (see
/// [`weight_setting`](crate::nova::weight_setting)); with none, every host passes. A metric the
/// host reports without a value
/// ([`METRICS_WITHOUT_VALUE`](crate::nova::host_state::METRICS_WITHOUT_VALUE)) counts as
/// reported, as in Nova. Runs for every instance, not on rebuilds. Reason: `metric <name> not
/// reported`.
///
/// ```
/// use placewise::nova::filters::MetricsFilter;
///
/// let filter = MetricsFilter::new().weight_setting(["cpu.frequency=1.0", "bogus", "cpu.percent=-1"]);
/// assert_eq!(filter.metric_names(), ["cpu.frequency", "cpu.percent"]);
/// assert_eq!(filter.problems().len(), 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricsFilter {
    names: Vec<String>,
    problems: Vec<SettingProblem>,
}

impl MetricsFilter {
    /// No metric required (Nova's default `weight_setting` is empty).
    pub fn new() -> Self {
        MetricsFilter::default()
    }

    /// Sets `[metrics] weight_setting` from its entries (`name=ratio`).
    pub fn weight_setting<S: AsRef<str>>(self, entries: impl IntoIterator<Item = S>) -> Self {
        let entries: Vec<S> = entries.into_iter().collect();
        let refs: Vec<&str> = entries.iter().map(AsRef::as_ref).collect();
        self.with_parsed(parse_weight_setting(&refs))
    }

    /// Sets `[metrics] weight_setting` from the option's comma-separated text.
    pub fn weight_setting_str(self, value: &str) -> Self {
        self.with_parsed(parse_weight_setting_str(value))
    }

    fn with_parsed(mut self, (setting, problems): (Vec<(String, f64)>, Vec<SettingProblem>)) -> Self {
        self.names.clear();
        for (name, _) in setting {
            if !self.names.contains(&name) {
                self.names.push(name);
            }
        }
        self.problems = problems;
        self
    }

    /// The metric names a host must report, without repeats, in setting order.
    pub fn metric_names(&self) -> &[String] {
        &self.names
    }

    /// The entries Nova ignores (no `=`, no name, or a ratio that is not a number).
    pub fn problems(&self) -> &[SettingProblem] {
        &self.problems
    }
}

/// The metric names resolved against the snapshot (`None`: no host has that metric).
#[derive(Debug, Clone)]
struct Symbols(Vec<Option<Symbol>>);

impl MetricsFilter {
    fn symbols(&self, cx: &Cx<'_>) -> Symbols {
        Symbols(self.names.iter().map(|n| cx.cluster().symbols().get(n)).collect())
    }

    fn judge(&self, cx: &Cx<'_>, symbols: &Symbols, host: HostId) -> Verdict {
        let h = cx.host(host);
        // A metric without a value counts as reported, as in Nova (looked up only on a miss).
        let missing = |(s, name): (&Option<Symbol>, &String)| {
            s.and_then(|s| h.metric(s)).is_none() && !reports_without_value(h, name)
        };
        match symbols.0.iter().zip(&self.names).position(missing) {
            Some(i) => Verdict::reject(i as u32),
            None => Verdict::Pass,
        }
    }
}

impl Filter for MetricsFilter {
    fn name(&self) -> &str {
        "MetricsFilter"
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(Some(Box::new(self.symbols(cx))))
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        if self.names.is_empty() {
            return Verdict::Pass;
        }
        match cx.state::<Symbols>() {
            Some(s) => self.judge(cx, s, host),
            None => self.judge(cx, &self.symbols(cx), host),
        }
    }

    fn describe(&self, _cx: &Cx<'_>, reason: Reason) -> String {
        format!("metric {} not reported", self.names.get(reason.0 as usize).map_or("", String::as_str))
    }

    fn host_local(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nova::filters::common::testkit::{names, reason, run};
    use crate::request::Request;
    use crate::snapshot::Cluster;
    use crate::snapshot::HostSpec;

    #[test]
    fn every_named_metric_must_be_reported() {
        let c = Cluster::builder()
            .host(HostSpec::new("both").metric("cpu.frequency", 2400.0).metric("cpu.percent", 12.0))
            .host(HostSpec::new("one").metric("cpu.frequency", 2400.0))
            .host(HostSpec::new("none"))
            .build()
            .unwrap();
        let r = Request::new(1);
        let f = MetricsFilter::new().weight_setting(["cpu.frequency=1.0", "cpu.percent=-1.0"]);
        assert_eq!(run(&f, &c, &r).unwrap(), names(&["both"]));
        assert_eq!(reason(&f, &c, &r, "one"), "metric cpu.percent not reported");
        // Malformed entries do not count.
        let f = MetricsFilter::new().weight_setting(["cpu.frequency=1.0", "cpu.percent", "=1", "cpu.percent=x"]);
        assert_eq!(run(&f, &c, &r).unwrap(), names(&["both", "one"]));
        assert_eq!(f.problems().len(), 3);
        let f = MetricsFilter::new().weight_setting_str("cpu.frequency=1.0, nosuch.metric=2");
        assert_eq!(run(&f, &c, &r).unwrap(), Vec::<String>::new());
        assert_eq!(run(&MetricsFilter::new(), &c, &r).unwrap().len(), 3);
        assert!(!f.once_per_request() && !crate::nova::runs_on_rebuild(f.name()) && f.host_local());
    }

    #[test]
    fn a_metric_reported_without_a_value_counts_as_reported() {
        let without = |names: serde_json::Value| {
            HostSpec::new("nv").attribute(crate::nova::host_state::METRICS_WITHOUT_VALUE, names)
        };
        let c = Cluster::builder()
            .host(HostSpec::new("valued").metric("numa.membw.current", 3.0))
            .host(without(serde_json::json!(["numa.membw.current"])))
            .host(HostSpec::new("none"))
            .build()
            .unwrap();
        let f = MetricsFilter::new().weight_setting(["numa.membw.current=1.0"]);
        assert_eq!(run(&f, &c, &Request::new(1)).unwrap(), names(&["valued", "nv"]));
        // Also when no host reports it with a value.
        let c = Cluster::builder().host(without(serde_json::json!(["numa.membw.max"]))).build().unwrap();
        let f = MetricsFilter::new().weight_setting(["numa.membw.max=1.0"]);
        assert_eq!(run(&f, &c, &Request::new(1)).unwrap(), names(&["nv"]));
    }
}
