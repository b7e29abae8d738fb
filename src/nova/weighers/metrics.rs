//! `MetricsWeigher`: a weighted sum of the metrics hosts report.

use super::aggregate_multiplier;
use crate::error::ScheduleError;
use crate::id::{HostId, Symbol};
use crate::nova::host_state::reports_without_value;
use crate::nova::weight_setting::{parse_weight_setting, SettingProblem};
use crate::request::{Cx, Prepared};
use crate::weigh::{Bounds, Extension, Weigher};

/// The filter scheduler's `MetricsWeigher`, configured like its `[metrics]` options.
///
/// A host's raw value starts at 0.0 and adds, for each `name=ratio` entry of `weight_setting` in
/// order, the host's metric `name` (an integer, see [`Host::metrics`](crate::snapshot::Host::metrics)) ×
/// `ratio`. Normalised min–max over the candidates. When a host lacks a metric:
///
/// - with [`required`](MetricsWeigher::required) (the default), the request fails: with at least
///   two candidates, [`validate`](Extension::validate) returns an error naming the metric and the
///   host (Nova raises `ComputeHostMetricNotFound`). A lone candidate is never weighed, so it
///   cannot fail; a `MetricsFilter` placed before the weigher avoids the error;
/// - otherwise, if `ratio × multiplier(host)` is not 0, the raw value is
///   [`weight_of_unavailable`](MetricsWeigher::weight_of_unavailable) (−10000.0 by default) at
///   once, ignoring the other entries; such a host scores 0 and squeezes the others toward 1;
/// - otherwise that entry is skipped and the sum goes on.
///
/// The multiplier is the option `[metrics] weight_multiplier` (default 1.0), overridden per host
/// by the smallest aggregate value of `metrics_weight_multiplier` ([`aggregate_multiplier`](super::aggregate_multiplier)).
/// Because a host's raw value depends on that multiplier, the weigher must know the configured
/// value too: give the scheduler the same number as
/// [`weight_multiplier`](MetricsWeigher::weight_multiplier). Host-local: metrics do not change
/// within a request.
///
/// ```
/// use placewise::nova::weighers::MetricsWeigher;
/// use placewise::{Scheduler, Weigher};
///
/// let m = 2.0;
/// let weigher = MetricsWeigher::new(&["cpu.frequency=1.0", "bad entry"]).required(false).weight_multiplier(m);
/// assert_eq!(weigher.name(), "MetricsWeigher");
/// assert_eq!(weigher.setting().len(), 1);
/// assert_eq!(weigher.problems().len(), 1);
/// let scheduler = Scheduler::builder().weigher(weigher, m).build()?;
/// # let _ = scheduler;
/// # Ok::<(), placewise::BuildError>(())
/// ```
#[derive(Debug, Clone)]
pub struct MetricsWeigher {
    setting: Vec<(Box<str>, f64)>,
    problems: Vec<SettingProblem>,
    required: bool,
    weight_of_unavailable: f64,
    weight_multiplier: f64,
}

/// The setting's metric names resolved once per request (`None`: no host reports it).
#[derive(Debug)]
struct Resolved(Vec<Option<Symbol>>);

impl MetricsWeigher {
    /// The Nova class name, which [`name`](Weigher::name) returns.
    pub const NAME: &'static str = "MetricsWeigher";
    /// The option group of [`OPTION`](Self::OPTION) and of the weigher's other options.
    pub const GROUP: &'static str = "metrics";
    /// The multiplier option (`[metrics] weight_multiplier`).
    pub const OPTION: &'static str = "weight_multiplier";
    /// The aggregate metadata key that overrides the multiplier per host.
    pub const AGGREGATE_KEY: &'static str = "metrics_weight_multiplier";
    /// The option's default.
    pub const DEFAULT_MULTIPLIER: f64 = 1.0;
    /// The smallest value the option accepts, if it has a minimum (not applied to aggregate
    /// overrides).
    pub const MIN_MULTIPLIER: Option<f64> = None;
    /// The default of `[metrics] required`.
    pub const DEFAULT_REQUIRED: bool = true;
    /// The default of `[metrics] weight_of_unavailable`.
    pub const DEFAULT_WEIGHT_OF_UNAVAILABLE: f64 = -10000.0;

    /// A weigher for the `[metrics] weight_setting` entries (`name=ratio`), with the other
    /// options at their defaults. Malformed entries are ignored, as Nova ignores them with a
    /// warning; [`problems`](Self::problems) lists them. Duplicates are kept and count twice.
    pub fn new<S: AsRef<str>>(weight_setting: &[S]) -> Self {
        let entries: Vec<&str> = weight_setting.iter().map(AsRef::as_ref).collect();
        let (setting, problems) = parse_weight_setting(&entries);
        MetricsWeigher {
            setting: setting.into_iter().map(|(name, ratio)| (name.into_boxed_str(), ratio)).collect(),
            problems,
            required: Self::DEFAULT_REQUIRED,
            weight_of_unavailable: Self::DEFAULT_WEIGHT_OF_UNAVAILABLE,
            weight_multiplier: Self::DEFAULT_MULTIPLIER,
        }
    }

    /// Sets `[metrics] required`: whether a missing metric fails the request (default true).
    pub fn required(mut self, required: bool) -> Self {
        self.required = required;
        self
    }

    /// Sets `[metrics] weight_of_unavailable`, the raw value of a host that lacks a metric when
    /// metrics are not required (default −10000.0).
    pub fn weight_of_unavailable(mut self, value: f64) -> Self {
        self.weight_of_unavailable = value;
        self
    }

    /// Sets the configured `[metrics] weight_multiplier` (default 1.0), which decides whether a
    /// missing metric counts (`ratio × multiplier(host) ≠ 0`). Give the scheduler the same value.
    pub fn weight_multiplier(mut self, multiplier: f64) -> Self {
        self.weight_multiplier = multiplier;
        self
    }

    /// The well-formed `name=ratio` entries, in order.
    pub fn setting(&self) -> &[(Box<str>, f64)] {
        &self.setting
    }

    /// The entries that were ignored, and why.
    pub fn problems(&self) -> &[SettingProblem] {
        &self.problems
    }

    /// Whether a missing metric fails the request.
    pub fn is_required(&self) -> bool {
        self.required
    }

    /// The metric `i` of the setting on `host`.
    #[inline]
    fn metric(&self, cx: &Cx<'_>, host: HostId, i: usize) -> Option<f64> {
        match cx.state::<Resolved>() {
            Some(Resolved(symbols)) => {
                let sym = symbols.get(i).copied().flatten()?;
                cx.host(host).metric(sym)
            }
            // Weighed without `prepare` (a direct call): look the name up.
            None => cx.host_state(host).metric(self.setting.get(i)?.0.as_ref()),
        }
    }
}

impl Weigher for MetricsWeigher {
    fn name(&self) -> &str {
        Self::NAME
    }

    /// Resolves the metric names once per request. Computes in O(entries).
    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        let symbols = cx.cluster().symbols();
        Ok(Some(Box::new(Resolved(self.setting.iter().map(|(name, _)| symbols.get(name)).collect()))))
    }

    /// Computes in O(entries × log metrics of the host).
    fn weigh(&self, cx: &Cx<'_>, host: HostId) -> f64 {
        let mut value = 0.0;
        // Computed only when a metric is missing.
        let mut multiplier = None;
        for (i, &(_, ratio)) in self.setting.iter().enumerate() {
            match self.metric(cx, host, i) {
                Some(v) => value += v * ratio,
                // `validate` refused the request before any weighing.
                None if self.required => {}
                None => {
                    let m = *multiplier.get_or_insert_with(|| {
                        aggregate_multiplier(cx, host, Self::AGGREGATE_KEY, self.weight_multiplier)
                    });
                    if ratio * m != 0.0 {
                        return self.weight_of_unavailable;
                    }
                }
            }
        }
        value
    }

    fn bounds(&self) -> Bounds {
        Bounds::NONE
    }

    fn host_local(&self) -> bool {
        true
    }

    fn extension(&self) -> Option<&dyn Extension> {
        Some(self)
    }
}

impl Extension for MetricsWeigher {
    /// Fails on the first candidate (in candidate order) whose value Nova cannot compute, naming
    /// the metric and the host: with `required`, one that lacks a metric of the setting (Nova
    /// raises `ComputeHostMetricNotFound`); in either mode, one that reports a metric of the
    /// setting without a value ([`METRICS_WITHOUT_VALUE`](crate::nova::host_state::METRICS_WITHOUT_VALUE);
    /// Nova raises `NotImplementedError` reading it) before a missing metric ends its sum.
    /// Computes in O(candidates × entries).
    fn validate(&self, cx: &Cx<'_>, hosts: &[HostId]) -> Result<(), ScheduleError> {
        let fail = |host: HostId, message: String| {
            Err(ScheduleError::weigher(Self::NAME, format!("{message} on host `{}`", cx.host(host).name)))
        };
        for &host in hosts {
            // Computed only when a metric is missing.
            let mut multiplier = None;
            for (i, (name, ratio)) in self.setting.iter().enumerate() {
                if self.metric(cx, host, i).is_some() {
                    continue;
                }
                if reports_without_value(cx.host(host), name) {
                    return fail(host, format!("metric `{name}` has no value (Nova raises NotImplementedError)"));
                }
                if self.required {
                    return fail(host, format!("metric `{name}` not found"));
                }
                let m = *multiplier
                    .get_or_insert_with(|| aggregate_multiplier(cx, host, Self::AGGREGATE_KEY, self.weight_multiplier));
                if ratio * m != 0.0 {
                    // The host's raw value is `weight_of_unavailable`: Nova reads no further.
                    break;
                }
            }
        }
        Ok(())
    }

    fn multiplier(&self, cx: &Cx<'_>, host: HostId, configured: f64) -> f64 {
        aggregate_multiplier(cx, host, Self::AGGREGATE_KEY, configured)
    }

    fn per_host_multiplier(&self) -> bool {
        true
    }

    fn multiplier_by_aggregates(&self) -> bool {
        true
    }
}
