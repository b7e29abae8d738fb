//! Configuration by name, as a deployer writes it.
//!
//! A [`SchedulerConfig`] names filters and weighers the way the filter scheduler's deployers do
//! (`enabled_filters = "RamFilter,ComputeFilter,AvailabilityZoneFilter"`, weigher class names with
//! `*_weight_multiplier` options) and carries the filters' own options. It reads the JSON layout
//! of the filter scheduler's configuration sections, either flat or grouped:
//!
//! ```json
//! {
//!   "enabled_filters": "RamFilter,ComputeFilter,AvailabilityZoneFilter",
//!   "weighers": ["RAMWeigher", "CPUWeigher"],
//!   "multipliers": {"ram_weight_multiplier": 1.0, "cpu_weight_multiplier": 0.5},
//!   "filter_scheduler": {"host_subset_size": 1, "max_io_ops_per_host": 8},
//!   "metrics": {"weight_setting": ["cpu.frequency=1.0"], "required": false},
//!   "default_availability_zone": "nova"
//! }
//! ```
//!
//! Every option may also stand at the top level, except that the `metrics` section's options go
//! by their short names there only (`weight_setting`) and by `metrics_weight_setting` anywhere
//! else. `image_properties_default_architecture` must be an architecture name exactly as Nova
//! spells it (`x86_64`, not `X86_64` or `amd64`). An unknown filter, weigher or option name is a
//! [`BuildError::Config`] that lists the known ones, and so is a value below the lower bound
//! Nova declares for its option: `host_subset_size` and `max_instances_per_host` at least 1,
//! `max_io_ops_per_host` at least 0, `soft_affinity_weight_multiplier`,
//! `soft_anti_affinity_weight_multiplier` and `pci_weight_multiplier` at least 0. A non-zero
//! `image_props_weight_multiplier` is a [`BuildError::NotModelled`]: ImagePropertiesWeigher then
//! reads the cell database. Names are the filter scheduler's class names: every filter and
//! weigher Nova 34 ships ([`ALL_FILTERS`], [`ALL_WEIGHERS`]) and the filters it removed; old
//! names are accepted as aliases (`RamWeigher` for `RAMWeigher`).

use crate::error::BuildError;
use crate::nova::filters::is_architecture;
use crate::nova::weighers::ImagePropertiesWeigher;
use crate::nova::{NovaScheduler, NovaSchedulerBuilder};
use crate::schedule::Ties;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;

// The types read from JSON take the object form only (see `crate::json`).
crate::json::object_form!(Options);

/// The `[filter_scheduler]` and `[metrics]` options, with the filter scheduler's defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self")]
#[non_exhaustive]
pub struct Options {
    /// Pick at random among this many best hosts (1: always the best).
    pub host_subset_size: usize,
    /// `max_io_ops_per_host` (IoOpsFilter).
    pub max_io_ops_per_host: i64,
    /// `max_instances_per_host` (NumInstancesFilter).
    pub max_instances_per_host: i64,
    /// `isolated_images` (IsolatedHostsFilter).
    pub isolated_images: Vec<String>,
    /// `isolated_hosts` (IsolatedHostsFilter).
    pub isolated_hosts: Vec<String>,
    /// `restrict_isolated_hosts_to_isolated_images` (IsolatedHostsFilter).
    pub restrict_isolated_hosts_to_isolated_images: bool,
    /// `image_properties_default_architecture` (ImagePropertiesFilter).
    pub image_properties_default_architecture: Option<String>,
    /// `aggregate_image_properties_isolation_namespace`.
    pub aggregate_image_properties_isolation_namespace: Option<String>,
    /// `aggregate_image_properties_isolation_separator`.
    pub aggregate_image_properties_isolation_separator: String,
    /// `default_availability_zone` (AvailabilityZoneFilter).
    pub default_availability_zone: String,
    /// `*_weight_multiplier` options by name.
    pub multipliers: BTreeMap<String, f64>,
    /// `[metrics] weight_setting`, as `name=ratio` entries.
    pub metrics_weight_setting: Vec<String>,
    /// `[metrics] weight_multiplier`.
    pub metrics_weight_multiplier: f64,
    /// `[metrics] required`.
    pub metrics_required: bool,
    /// `[metrics] weight_of_unavailable`.
    pub metrics_weight_of_unavailable: f64,
}

/// The 22 filter classes Nova 34 ships (`nova.scheduler.filters.all_filters`), by name; each
/// builds under its name. The registry knows more: the filters Nova removed.
pub const ALL_FILTERS: &[&str] = &[
    "AggregateImagePropertiesIsolation",
    "AggregateInstanceExtraSpecsFilter",
    "AggregateIoOpsFilter",
    "AggregateMultiTenancyIsolation",
    "AggregateNumInstancesFilter",
    "AggregateTypeAffinityFilter",
    "AllHostsFilter",
    "ComputeCapabilitiesFilter",
    "ComputeFilter",
    "DifferentHostFilter",
    "ImagePropertiesFilter",
    "IoOpsFilter",
    "IsolatedHostsFilter",
    "JsonFilter",
    "MetricsFilter",
    "NUMATopologyFilter",
    "NumInstancesFilter",
    "PciPassthroughFilter",
    "SameHostFilter",
    "ServerGroupAffinityFilter",
    "ServerGroupAntiAffinityFilter",
    "SimpleCIDRAffinityFilter",
];

/// The 13 weigher classes Nova 34 ships (`nova.scheduler.weights.all_weighers`, the default of
/// `weight_classes`), by name; each builds under its name. Nova orders that default by a
/// directory walk, and weights are float sums, so a configuration lists its weighers in order
/// rather than naming `all_weighers`.
pub const ALL_WEIGHERS: &[&str] = &[
    "BuildFailureWeigher",
    "CPUWeigher",
    "CrossCellWeigher",
    "DiskWeigher",
    "HypervisorVersionWeigher",
    "ImagePropertiesWeigher",
    "IoOpsWeigher",
    "MetricsWeigher",
    "NumInstancesWeigher",
    "PCIWeigher",
    "RAMWeigher",
    "ServerGroupSoftAffinityWeigher",
    "ServerGroupSoftAntiAffinityWeigher",
];

/// The `*_weight_multiplier` options and their defaults.
pub const MULTIPLIER_DEFAULTS: &[(&str, f64)] = &[
    ("ram_weight_multiplier", 1.0),
    ("cpu_weight_multiplier", 1.0),
    ("disk_weight_multiplier", 1.0),
    ("io_ops_weight_multiplier", -1.0),
    ("num_instances_weight_multiplier", 0.0),
    ("hypervisor_version_weight_multiplier", 1.0),
    ("build_failure_weight_multiplier", 1_000_000.0),
    ("soft_affinity_weight_multiplier", 1.0),
    ("soft_anti_affinity_weight_multiplier", 1.0),
    ("pci_weight_multiplier", 1.0),
    ("cross_cell_move_weight_multiplier", 1_000_000.0),
    ("image_props_weight_multiplier", 0.0),
    ("metrics_weight_multiplier", 1.0),
];

impl Default for Options {
    fn default() -> Self {
        Options {
            host_subset_size: 1,
            max_io_ops_per_host: 8,
            max_instances_per_host: 50,
            isolated_images: Vec::new(),
            isolated_hosts: Vec::new(),
            restrict_isolated_hosts_to_isolated_images: true,
            image_properties_default_architecture: None,
            aggregate_image_properties_isolation_namespace: None,
            aggregate_image_properties_isolation_separator: ".".into(),
            default_availability_zone: "nova".into(),
            multipliers: BTreeMap::new(),
            metrics_weight_setting: Vec::new(),
            metrics_weight_multiplier: 1.0,
            metrics_required: true,
            metrics_weight_of_unavailable: -10000.0,
        }
    }
}

impl Options {
    /// The multiplier option `name`: its configured value, else its default (0 if unknown).
    pub fn multiplier(&self, name: &str) -> f64 {
        if name == "metrics_weight_multiplier" {
            return self.metrics_weight_multiplier;
        }
        self.multipliers
            .get(name)
            .copied()
            .or_else(|| MULTIPLIER_DEFAULTS.iter().find(|d| d.0 == name).map(|d| d.1))
            .unwrap_or(0.0)
    }
}

/// Filters, weighers and options by name; [`build`](SchedulerConfig::build) turns it into a
/// [`NovaScheduler`] with the filter scheduler's selection loop ([`Ties::PreviousOrder`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Value", into = "Value")]
#[non_exhaustive]
pub struct SchedulerConfig {
    /// Filter names in run order.
    pub enabled_filters: Vec<String>,
    /// Weigher names in summation order.
    pub weighers: Vec<String>,
    /// The options.
    pub options: Options,
    /// Per-host default allocation ratios (`cpu`, `ram`, `disk`) for snapshots built from
    /// scenario files; not used by the scheduler itself.
    pub allocation_ratios: BTreeMap<String, f64>,
    /// Seed for random picks.
    pub seed: u64,
    /// How ties end (default: the previous round's order).
    pub ties: Ties,
    /// The largest instance count a request may ask for (`max_request_count`, default
    /// [`DEFAULT_MAX_COUNT`](crate::schedule::DEFAULT_MAX_COUNT)); see [`NovaSchedulerBuilder::max_count`].
    pub max_count: u32,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            enabled_filters: Vec::new(),
            weighers: Vec::new(),
            options: Options::default(),
            allocation_ratios: BTreeMap::new(),
            seed: 0,
            ties: Ties::PreviousOrder,
            max_count: crate::schedule::DEFAULT_MAX_COUNT,
        }
    }
}

/// The `[metrics]` options by the names the `metrics` section gives them.
const METRICS_OPTIONS: [&str; 4] = ["required", "weight_multiplier", "weight_of_unavailable", "weight_setting"];

fn config_error(message: impl Into<String>) -> BuildError {
    BuildError::Config { message: message.into() }
}

fn names(key: &str, value: &Value) -> Result<Vec<String>, BuildError> {
    match value {
        Value::String(s) => Ok(s.split(',').map(str::trim).filter(|n| !n.is_empty()).map(str::to_owned).collect()),
        Value::Array(items) => items
            .iter()
            .map(|v| v.as_str().map(str::to_owned).ok_or_else(|| config_error(format!("`{key}` must list names"))))
            .collect(),
        _ => Err(config_error(format!("`{key}` must be a list of names or a comma-separated string"))),
    }
}

fn number(key: &str, value: &Value) -> Result<f64, BuildError> {
    match value {
        Value::Number(n) => n.as_f64().ok_or_else(|| config_error(format!("`{key}` is not a number"))),
        Value::String(s) => s.trim().parse().map_err(|_| config_error(format!("`{key}` must be a number, not `{s}`"))),
        _ => Err(config_error(format!("`{key}` must be a number"))),
    }
}

fn integer(key: &str, value: &Value) -> Result<i64, BuildError> {
    let n = number(key, value)?;
    if n.fract() != 0.0 || !n.is_finite() {
        return Err(config_error(format!("`{key}` must be a whole number, not {n}")));
    }
    Ok(n as i64)
}

/// `n`, or the error Nova's option type raises for a value below the option's `min`.
fn at_least<T: PartialOrd + fmt::Display>(key: &str, n: T, min: T) -> Result<T, BuildError> {
    if n < min {
        return Err(config_error(format!("`{key}` must be at least {min}, not {n}")));
    }
    Ok(n)
}

/// The multiplier options Nova declares with `min=0.0`.
const NON_NEGATIVE_MULTIPLIERS: [&str; 3] =
    ["soft_affinity_weight_multiplier", "soft_anti_affinity_weight_multiplier", "pci_weight_multiplier"];

fn boolean(key: &str, value: &Value) -> Result<bool, BuildError> {
    match value {
        Value::Bool(b) => Ok(*b),
        Value::String(s) if s.eq_ignore_ascii_case("true") => Ok(true),
        Value::String(s) if s.eq_ignore_ascii_case("false") => Ok(false),
        _ => Err(config_error(format!("`{key}` must be true or false"))),
    }
}

fn string(key: &str, value: &Value) -> Result<String, BuildError> {
    value.as_str().map(str::to_owned).ok_or_else(|| config_error(format!("`{key}` must be a string")))
}

/// Every option name [`SchedulerConfig`] accepts, for error messages.
pub const OPTION_NAMES: &[&str] = &[
    "host_subset_size",
    "shuffle_best_same_weighed_hosts",
    "max_io_ops_per_host",
    "max_instances_per_host",
    "isolated_images",
    "isolated_hosts",
    "restrict_isolated_hosts_to_isolated_images",
    "image_properties_default_architecture",
    "aggregate_image_properties_isolation_namespace",
    "aggregate_image_properties_isolation_separator",
    "default_availability_zone",
    "metrics_weight_setting",
    "metrics_required",
    "metrics_weight_of_unavailable",
    "service_down_time",
    "random_seed",
    "max_request_count",
];

impl SchedulerConfig {
    /// Parses the JSON layout of the module docs.
    ///
    /// # Errors
    ///
    /// [`BuildError::Json`] for malformed JSON; [`BuildError::Config`] for an unknown option (the
    /// message lists the known ones) or a value of the wrong type.
    pub fn from_json(json: &str) -> Result<SchedulerConfig, BuildError> {
        let value: Value = serde_json::from_str(json).map_err(BuildError::from_json)?;
        SchedulerConfig::try_from(value)
    }

    fn set_option(&mut self, key: &str, value: &Value) -> Result<(), BuildError> {
        let o = &mut self.options;
        match key {
            "host_subset_size" => {
                o.host_subset_size = at_least(key, integer(key, value)?, 1)? as usize;
            }
            "shuffle_best_same_weighed_hosts" => {
                if boolean(key, value)? {
                    return Err(config_error(
                        "shuffle_best_same_weighed_hosts is not supported: ties follow the previous round's order",
                    ));
                }
            }
            "max_io_ops_per_host" => o.max_io_ops_per_host = at_least(key, integer(key, value)?, 0)?,
            "max_instances_per_host" => o.max_instances_per_host = at_least(key, integer(key, value)?, 1)?,
            "isolated_images" => o.isolated_images = names(key, value)?,
            "isolated_hosts" => o.isolated_hosts = names(key, value)?,
            "restrict_isolated_hosts_to_isolated_images" => {
                o.restrict_isolated_hosts_to_isolated_images = boolean(key, value)?
            }
            "image_properties_default_architecture" => {
                let arch = (!value.is_null()).then(|| string(key, value)).transpose()?;
                // Nova's option takes its architecture names as choices, spelt exactly.
                if let Some(bad) = arch.as_deref().filter(|a| !is_architecture(a)) {
                    return Err(config_error(format!(
                        "`{key}` must be an architecture name as Nova spells it, not `{bad}`"
                    )));
                }
                o.image_properties_default_architecture = arch
            }
            "aggregate_image_properties_isolation_namespace" => {
                o.aggregate_image_properties_isolation_namespace =
                    (!value.is_null()).then(|| string(key, value)).transpose()?
            }
            "aggregate_image_properties_isolation_separator" => {
                o.aggregate_image_properties_isolation_separator = string(key, value)?
            }
            "default_availability_zone" => o.default_availability_zone = string(key, value)?,
            "metrics_weight_setting" | "weight_setting" => {
                o.metrics_weight_setting = match value {
                    Value::Object(map) => map.iter().map(|(k, v)| format!("{k}={}", plain(v))).collect(),
                    other => names(key, other)?,
                }
            }
            "metrics_required" | "required" => o.metrics_required = boolean(key, value)?,
            "metrics_weight_of_unavailable" | "weight_of_unavailable" => {
                o.metrics_weight_of_unavailable = number(key, value)?
            }
            "metrics_weight_multiplier" | "weight_multiplier" => o.metrics_weight_multiplier = number(key, value)?,
            "service_down_time" => {
                number(key, value)?;
            }
            "random_seed" | "seed" => self.seed = integer(key, value)? as u64,
            "max_request_count" => {
                let max = integer(key, value)?;
                self.max_count = u32::try_from(max).ok().filter(|&m| m >= 1).ok_or_else(|| {
                    config_error(format!("max_request_count must be from 1 to {}, not {max}", u32::MAX))
                })?;
            }
            k if MULTIPLIER_DEFAULTS.iter().any(|d| d.0 == k) => {
                let m = number(key, value)?;
                if NON_NEGATIVE_MULTIPLIERS.contains(&k) {
                    at_least(key, m, 0.0)?;
                }
                if k == ImagePropertiesWeigher::OPTION {
                    ImagePropertiesWeigher::check_multiplier(m)?;
                }
                o.multipliers.insert(k.to_owned(), m);
            }
            unknown => {
                let mut known: Vec<&str> = OPTION_NAMES.to_vec();
                known.extend(MULTIPLIER_DEFAULTS.iter().map(|d| d.0));
                known.sort_unstable();
                return Err(config_error(format!("unknown option `{unknown}`; known options: {}", known.join(", "))));
            }
        }
        Ok(())
    }

    /// Builds the scheduler: the named filters in order, the named weighers in one tier with
    /// their multiplier options, the subset size, seed and tie rule.
    ///
    /// # Errors
    ///
    /// [`BuildError::Config`] for an unknown filter or weigher name (the message lists the known
    /// ones) or an option a filter cannot use.
    pub fn build(&self) -> Result<NovaScheduler, BuildError> {
        self.builder()?.build()
    }

    /// A builder holding the named filters and weighers, to add custom ones (closures, your own
    /// types) before building: filters added later run after the named ones.
    ///
    /// # Errors
    ///
    /// As [`build`](SchedulerConfig::build), for the names.
    pub fn builder(&self) -> Result<NovaSchedulerBuilder, BuildError> {
        let mut builder = NovaScheduler::builder()
            .host_subset_size(self.options.host_subset_size)
            .seed(self.seed)
            .ties(self.ties)
            .max_count(self.max_count);
        for name in &self.enabled_filters {
            builder = builder.filter_boxed(registry::filter(name, &self.options)?);
        }
        for name in &self.weighers {
            let (weigher, multiplier) = registry::weigher(name, &self.options)?;
            builder = builder.weigher_boxed(weigher, multiplier);
        }
        Ok(builder)
    }
}

/// Whether `name` is a filter class [`SchedulerConfig`] knows by name.
pub(super) fn is_filter_name(name: &str) -> bool {
    registry::filters().iter().any(|e| e.0 == name || e.1 == Some(name))
}

/// A JSON value as plain text (strings without quotes).
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl TryFrom<Value> for SchedulerConfig {
    type Error = BuildError;

    fn try_from(value: Value) -> Result<Self, BuildError> {
        let Value::Object(map) = value else {
            return Err(config_error("a scheduler configuration must be a JSON object"));
        };
        let mut config = SchedulerConfig::default();
        let mut top_level = Vec::new();
        for (key, value) in &map {
            match key.as_str() {
                "enabled_filters" => config.enabled_filters = names(key, value)?,
                "weighers" | "weight_classes" => config.weighers = names(key, value)?,
                "available_filters" => {}
                "ties" => {
                    config.ties = serde_json::from_value(value.clone())
                        .map_err(|_| config_error("`ties` must be `host_id` or `previous_order`"))?
                }
                "allocation_ratios" => {
                    let Value::Object(ratios) = value else {
                        return Err(config_error("`allocation_ratios` must map cpu/ram/disk to numbers"));
                    };
                    for (kind, v) in ratios {
                        if !matches!(kind.as_str(), "cpu" | "ram" | "disk") {
                            return Err(config_error(format!(
                                "unknown allocation ratio `{kind}`; known: cpu, disk, ram"
                            )));
                        }
                        config.allocation_ratios.insert(kind.clone(), number(kind, v)?);
                    }
                }
                "multipliers" | "filter_scheduler" | "metrics" => {
                    if !value.is_object() {
                        return Err(config_error(format!("`{key}` must be an object")));
                    }
                }
                _ => top_level.push((key, value)),
            }
        }
        // An option set twice keeps the value set last, in the reference tool's order: the
        // `multipliers` and `filter_scheduler` sections, the top level, the `metrics` section.
        let section = |name: &str| map.get(name).and_then(Value::as_object).into_iter().flatten();
        // The `metrics` section holds Nova's `[metrics]` options, by their own names; elsewhere
        // they carry the `metrics_` prefix, as the reference tool reads them.
        for (key, _) in section("metrics") {
            if !METRICS_OPTIONS.contains(&key.as_str()) {
                return Err(config_error(format!(
                    "unknown `metrics` option `{key}`; known: {}",
                    METRICS_OPTIONS.join(", ")
                )));
            }
        }
        let elsewhere = section("multipliers").chain(section("filter_scheduler")).map(|(k, _)| k);
        if let Some(key) =
            elsewhere.chain(top_level.iter().map(|(k, _)| *k)).find(|k| METRICS_OPTIONS.contains(&k.as_str()))
        {
            return Err(config_error(format!(
                "`{key}` is a `metrics` option: give it in the `metrics` section or as `metrics_{key}`"
            )));
        }
        let ordered =
            section("multipliers").chain(section("filter_scheduler")).chain(top_level).chain(section("metrics"));
        for (key, value) in ordered {
            config.set_option(key, value)?;
        }
        Ok(config)
    }
}

impl From<SchedulerConfig> for Value {
    fn from(c: SchedulerConfig) -> Value {
        let o = &c.options;
        let mut fs = Map::new();
        fs.insert("host_subset_size".into(), o.host_subset_size.into());
        fs.insert("max_io_ops_per_host".into(), o.max_io_ops_per_host.into());
        fs.insert("max_instances_per_host".into(), o.max_instances_per_host.into());
        fs.insert("isolated_images".into(), o.isolated_images.clone().into());
        fs.insert("isolated_hosts".into(), o.isolated_hosts.clone().into());
        fs.insert(
            "restrict_isolated_hosts_to_isolated_images".into(),
            o.restrict_isolated_hosts_to_isolated_images.into(),
        );
        fs.insert(
            "image_properties_default_architecture".into(),
            o.image_properties_default_architecture.clone().into(),
        );
        fs.insert(
            "aggregate_image_properties_isolation_namespace".into(),
            o.aggregate_image_properties_isolation_namespace.clone().into(),
        );
        fs.insert(
            "aggregate_image_properties_isolation_separator".into(),
            o.aggregate_image_properties_isolation_separator.clone().into(),
        );
        let multipliers: Map<String, Value> = o.multipliers.iter().map(|(k, v)| (k.clone(), (*v).into())).collect();
        let metrics = serde_json::json!({
            "weight_setting": o.metrics_weight_setting,
            "weight_multiplier": o.metrics_weight_multiplier,
            "required": o.metrics_required,
            "weight_of_unavailable": o.metrics_weight_of_unavailable,
        });
        let mut out = Map::new();
        out.insert("enabled_filters".into(), c.enabled_filters.clone().into());
        out.insert("weighers".into(), c.weighers.clone().into());
        out.insert("multipliers".into(), Value::Object(multipliers));
        out.insert("filter_scheduler".into(), Value::Object(fs));
        out.insert("metrics".into(), metrics);
        out.insert("default_availability_zone".into(), o.default_availability_zone.clone().into());
        if !c.allocation_ratios.is_empty() {
            out.insert(
                "allocation_ratios".into(),
                Value::Object(c.allocation_ratios.iter().map(|(k, v)| (k.clone(), (*v).into())).collect()),
            );
        }
        out.insert("random_seed".into(), c.seed.into());
        out.insert("max_request_count".into(), c.max_count.into());
        out.insert("ties".into(), serde_json::to_value(c.ties).unwrap_or(Value::Null));
        Value::Object(out)
    }
}

mod registry {
    //! Names to built-ins.

    use super::{config_error, Options};
    use crate::error::BuildError;
    use crate::filter::builtin::{AvailabilityZoneFilter, ComputeFilter, LabelSelectorFilter, ResourceFilter};
    use crate::filter::{Filter, FilterExt};
    use crate::nova::filters::{
        AggregateCoreFilter, AggregateDiskFilter, AggregateImagePropertiesIsolation, AggregateInstanceExtraSpecsFilter,
        AggregateIoOpsFilter, AggregateMultiTenancyIsolation, AggregateNumInstancesFilter, AggregateRamFilter,
        AggregateTypeAffinityFilter, AllHostsFilter, ComputeCapabilitiesFilter, CoreFilter, DifferentHostFilter,
        DiskFilter, GroupAffinityFilter, GroupAntiAffinityFilter, ImagePropertiesFilter, IoOpsFilter,
        IsolatedHostsFilter, JsonFilter, MetricsFilter, NUMATopologyFilter, NumInstancesFilter, PciPassthroughFilter,
        RamFilter, RetryFilter, SameHostFilter, ServerGroupAffinityFilter, ServerGroupAntiAffinityFilter,
        SimpleCIDRAffinityFilter, TrustedFilter, TypeAffinityFilter,
    };
    use crate::nova::weighers::{
        BuildFailureWeigher, CpuWeigher, CrossCellWeigher, DiskWeigher, HypervisorVersionWeigher,
        ImagePropertiesWeigher, IoOpsWeigher, MetricsWeigher, NumInstancesWeigher, PCIWeigher, RamWeigher,
        ServerGroupSoftAffinityWeigher, ServerGroupSoftAntiAffinityWeigher,
    };
    use crate::weigh::builtin::FreeResourceWeigher;
    use crate::weigh::Weigher;

    type FilterMaker = fn(&Options) -> Box<dyn Filter>;
    type WeigherMaker = fn(&Options) -> (Box<dyn Weigher>, f64);

    /// `(name, alias, constructor)` for every filter known by name.
    pub(super) fn filters() -> Vec<(&'static str, Option<&'static str>, FilterMaker)> {
        vec![
            ("AllHostsFilter", None, |_| Box::new(AllHostsFilter)),
            ("ComputeFilter", None, |_| Box::new(ComputeFilter.named("ComputeFilter"))),
            ("AvailabilityZoneFilter", None, |o| {
                Box::new(AvailabilityZoneFilter::from_aggregates(o.default_availability_zone.clone()))
            }),
            ("ComputeCapabilitiesFilter", None, |_| Box::new(ComputeCapabilitiesFilter)),
            ("ImagePropertiesFilter", None, |o| {
                let f = ImagePropertiesFilter::new();
                Box::new(match &o.image_properties_default_architecture {
                    Some(arch) => f.image_properties_default_architecture(arch.clone()),
                    None => f,
                })
            }),
            ("AggregateInstanceExtraSpecsFilter", None, |_| Box::new(AggregateInstanceExtraSpecsFilter)),
            ("AggregateImagePropertiesIsolation", None, |o| {
                let mut f = AggregateImagePropertiesIsolation::new().aggregate_image_properties_isolation_separator(
                    o.aggregate_image_properties_isolation_separator.clone(),
                );
                if let Some(ns) = &o.aggregate_image_properties_isolation_namespace {
                    f = f.aggregate_image_properties_isolation_namespace(ns.clone());
                }
                Box::new(f)
            }),
            ("AggregateMultiTenancyIsolation", None, |_| Box::new(AggregateMultiTenancyIsolation)),
            ("AggregateTypeAffinityFilter", None, |_| Box::new(AggregateTypeAffinityFilter)),
            ("IsolatedHostsFilter", None, |o| {
                Box::new(
                    IsolatedHostsFilter::new()
                        .isolated_images(o.isolated_images.clone())
                        .isolated_hosts(o.isolated_hosts.clone())
                        .restrict_isolated_hosts_to_isolated_images(o.restrict_isolated_hosts_to_isolated_images),
                )
            }),
            ("JsonFilter", None, |_| Box::new(JsonFilter)),
            ("RamFilter", None, |_| Box::new(RamFilter)),
            ("AggregateRamFilter", None, |_| Box::new(AggregateRamFilter)),
            ("CoreFilter", None, |_| Box::new(CoreFilter)),
            ("AggregateCoreFilter", None, |_| Box::new(AggregateCoreFilter)),
            ("DiskFilter", None, |_| Box::new(DiskFilter)),
            ("AggregateDiskFilter", None, |_| Box::new(AggregateDiskFilter)),
            ("SimpleCIDRAffinityFilter", None, |_| Box::new(SimpleCIDRAffinityFilter)),
            ("DifferentHostFilter", None, |_| Box::new(DifferentHostFilter)),
            ("SameHostFilter", None, |_| Box::new(SameHostFilter)),
            ("RetryFilter", None, |_| Box::new(RetryFilter)),
            ("TrustedFilter", None, |_| Box::new(TrustedFilter)),
            ("TypeAffinityFilter", None, |_| Box::new(TypeAffinityFilter)),
            ("GroupAntiAffinityFilter", None, |_| Box::new(GroupAntiAffinityFilter)),
            ("GroupAffinityFilter", None, |_| Box::new(GroupAffinityFilter)),
            ("ServerGroupAntiAffinityFilter", None, |_| Box::new(ServerGroupAntiAffinityFilter)),
            ("ServerGroupAffinityFilter", None, |_| Box::new(ServerGroupAffinityFilter)),
            ("IoOpsFilter", None, |o| Box::new(IoOpsFilter::new().max_io_ops_per_host(o.max_io_ops_per_host))),
            ("AggregateIoOpsFilter", None, |o| {
                Box::new(AggregateIoOpsFilter::new().max_io_ops_per_host(o.max_io_ops_per_host))
            }),
            ("NumInstancesFilter", None, |o| {
                Box::new(NumInstancesFilter::new().max_instances_per_host(o.max_instances_per_host))
            }),
            ("AggregateNumInstancesFilter", None, |o| {
                Box::new(AggregateNumInstancesFilter::new().max_instances_per_host(o.max_instances_per_host))
            }),
            ("MetricsFilter", None, |o| Box::new(MetricsFilter::new().weight_setting(&o.metrics_weight_setting))),
            ("NUMATopologyFilter", None, |_| Box::new(NUMATopologyFilter)),
            ("PciPassthroughFilter", None, |_| Box::new(PciPassthroughFilter)),
            ("ResourceFilter", None, |_| Box::new(ResourceFilter::new().named("ResourceFilter"))),
            ("LabelSelectorFilter", None, |_| Box::new(LabelSelectorFilter.named("LabelSelectorFilter"))),
        ]
    }

    /// `(name, alias, constructor)` for every weigher known by name.
    pub(super) fn weighers() -> Vec<(&'static str, Option<&'static str>, WeigherMaker)> {
        vec![
            ("RAMWeigher", Some("RamWeigher"), |o| (Box::new(RamWeigher), o.multiplier(RamWeigher::OPTION))),
            ("CPUWeigher", None, |o| (Box::new(CpuWeigher), o.multiplier(CpuWeigher::OPTION))),
            ("DiskWeigher", None, |o| (Box::new(DiskWeigher), o.multiplier(DiskWeigher::OPTION))),
            ("IoOpsWeigher", None, |o| (Box::new(IoOpsWeigher), o.multiplier(IoOpsWeigher::OPTION))),
            ("NumInstancesWeigher", None, |o| {
                (Box::new(NumInstancesWeigher), o.multiplier(NumInstancesWeigher::OPTION))
            }),
            ("HypervisorVersionWeigher", None, |o| {
                (Box::new(HypervisorVersionWeigher), o.multiplier(HypervisorVersionWeigher::OPTION))
            }),
            ("BuildFailureWeigher", None, |o| {
                (Box::new(BuildFailureWeigher), o.multiplier(BuildFailureWeigher::OPTION))
            }),
            ("MetricsWeigher", None, |o| {
                // The weigher needs the multiplier too: a setting whose ratio × multiplier is 0
                // is skipped for a host that lacks the metric.
                let weigher = MetricsWeigher::new(&o.metrics_weight_setting)
                    .required(o.metrics_required)
                    .weight_of_unavailable(o.metrics_weight_of_unavailable)
                    .weight_multiplier(o.metrics_weight_multiplier);
                (Box::new(weigher), o.metrics_weight_multiplier)
            }),
            ("ServerGroupSoftAffinityWeigher", None, |o| {
                (Box::new(ServerGroupSoftAffinityWeigher), o.multiplier(ServerGroupSoftAffinityWeigher::OPTION))
            }),
            ("ServerGroupSoftAntiAffinityWeigher", None, |o| {
                (Box::new(ServerGroupSoftAntiAffinityWeigher), o.multiplier(ServerGroupSoftAntiAffinityWeigher::OPTION))
            }),
            ("PCIWeigher", None, |o| (Box::new(PCIWeigher), o.multiplier(PCIWeigher::OPTION))),
            ("CrossCellWeigher", None, |o| (Box::new(CrossCellWeigher), o.multiplier(CrossCellWeigher::OPTION))),
            ("ImagePropertiesWeigher", None, |o| {
                (Box::new(ImagePropertiesWeigher), o.multiplier(ImagePropertiesWeigher::OPTION))
            }),
            ("FreeRamWeigher", None, |o| (Box::new(FreeResourceWeigher::ram()), o.multiplier("ram_weight_multiplier"))),
            ("FreeCpuWeigher", None, |o| (Box::new(FreeResourceWeigher::cpu()), o.multiplier("cpu_weight_multiplier"))),
            ("FreeDiskWeigher", None, |o| {
                (Box::new(FreeResourceWeigher::disk()), o.multiplier("disk_weight_multiplier"))
            }),
        ]
    }

    fn known<T>(list: &[(&'static str, Option<&'static str>, T)]) -> String {
        let mut names: Vec<&str> = list.iter().flat_map(|e| std::iter::once(e.0).chain(e.1)).collect();
        names.sort_unstable();
        names.join(", ")
    }

    /// The filter called `name` (or an alias; a dotted path's last part counts).
    pub(super) fn filter(name: &str, options: &Options) -> Result<Box<dyn Filter>, BuildError> {
        let short = name.rsplit('.').next().unwrap_or(name);
        let list = filters();
        list.iter()
            .find(|e| e.0 == short || e.1 == Some(short))
            .map(|e| (e.2)(options))
            .ok_or_else(|| config_error(format!("unknown filter `{name}`; known filters: {}", known(&list))))
    }

    /// The weigher called `name` with its multiplier.
    pub(super) fn weigher(name: &str, options: &Options) -> Result<(Box<dyn Weigher>, f64), BuildError> {
        let short = name.rsplit('.').next().unwrap_or(name);
        let list = weighers();
        list.iter()
            .find(|e| e.0 == short || e.1 == Some(short))
            .map(|e| (e.2)(options))
            .ok_or_else(|| config_error(format!("unknown weigher `{name}`; known weighers: {}", known(&list))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_grouped_and_flat_layouts() {
        let c = SchedulerConfig::from_json(
            r#"{"enabled_filters": "ComputeFilter, RamFilter", "weighers": ["FreeRamWeigher"],
                "multipliers": {"ram_weight_multiplier": -1.0}, "filter_scheduler": {"host_subset_size": 2},
                "metrics": {"weight_setting": {"cpu.frequency": 1.0}, "required": false},
                "max_io_ops_per_host": 4, "default_availability_zone": "az0", "random_seed": 9}"#,
        )
        .unwrap();
        assert_eq!(c.enabled_filters, ["ComputeFilter", "RamFilter"]);
        assert_eq!(c.options.multiplier("ram_weight_multiplier"), -1.0);
        assert_eq!(c.options.multiplier("io_ops_weight_multiplier"), -1.0, "the default");
        assert_eq!(c.options.host_subset_size, 2);
        assert_eq!(c.options.max_io_ops_per_host, 4);
        assert_eq!(c.options.metrics_weight_setting, ["cpu.frequency=1.0"]);
        assert!(!c.options.metrics_required);
        assert_eq!(c.seed, 9);
        let s = c.build().unwrap();
        assert_eq!(s.filters().map(|f| f.name()).collect::<Vec<_>>(), ["ComputeFilter", "RamFilter"]);
        let back: SchedulerConfig = serde_json::from_value(Value::from(c.clone())).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn every_registered_name_builds_under_its_name() {
        let options = Options::default();
        for (name, alias, make) in registry::filters() {
            assert_eq!(make(&options).name(), name, "filter {name}");
            assert!(registry::filter(name, &options).is_ok());
            if let Some(alias) = alias {
                assert_eq!(registry::filter(alias, &options).unwrap().name(), name);
            }
        }
        for (name, alias, make) in registry::weighers() {
            let (weigher, _) = make(&options);
            if !name.starts_with("Free") {
                assert_eq!(weigher.name(), name, "weigher {name}");
            }
            if let Some(alias) = alias {
                assert_eq!(registry::weigher(alias, &options).unwrap().0.name(), weigher.name());
            }
        }
        assert_eq!(registry::weigher("RamWeigher", &options).unwrap().1, 1.0);
        assert_eq!(registry::weigher("IoOpsWeigher", &options).unwrap().1, -1.0, "Nova's default");
        assert!(registry::filter("nova.scheduler.filters.ram_filter.RamFilter", &options).is_ok(), "dotted paths");
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let err = SchedulerConfig::from_json(r#"{"enabled_filters": ["NoSuchFilter"]}"#).unwrap().build().unwrap_err();
        assert!(err.to_string().contains("unknown filter `NoSuchFilter`; known filters: "), "{err}");
        assert!(err.to_string().contains("ComputeFilter"), "{err}");
        let err = SchedulerConfig::from_json(r#"{"weighers": "Nope"}"#).unwrap().build().unwrap_err();
        assert!(err.to_string().contains("known weighers"), "{err}");
        let err = SchedulerConfig::from_json(r#"{"max_io_ops": 3}"#).unwrap_err();
        assert!(err.to_string().contains("unknown option `max_io_ops`; known options: "), "{err}");
        assert!(SchedulerConfig::from_json(r#"{"host_subset_size": 0}"#).is_err());
        assert!(SchedulerConfig::from_json(r#"{"max_io_ops_per_host": "x"}"#).is_err());
        assert!(SchedulerConfig::from_json(r#"{"image_props_weight_multiplier": 1.0}"#).is_err());
    }
}

#[cfg(test)]
mod max_count_tests {
    use super::SchedulerConfig;
    use crate::error::ScheduleError;
    use crate::request::Request;
    use crate::snapshot::{Cluster, HostSpec};

    #[test]
    fn an_option_set_twice_keeps_the_value_the_reference_tool_sets_last() {
        let c = SchedulerConfig::from_json(
            r#"{"enabled_filters": "ComputeFilter", "ram_weight_multiplier": 2.0,
                "metrics": {"weight_multiplier": 1.0, "weight_of_unavailable": -5.0},
                "multipliers": {"metrics_weight_multiplier": 0.5, "ram_weight_multiplier": 3.0},
                "filter_scheduler": {"metrics_weight_of_unavailable": -7.0}}"#,
        )
        .unwrap();
        // The metrics section comes after the others, the top level after the sections.
        assert_eq!(c.options.metrics_weight_multiplier, 1.0);
        assert_eq!(c.options.metrics_weight_of_unavailable, -5.0);
        assert_eq!(c.options.multipliers["ram_weight_multiplier"], 2.0);
    }

    #[test]
    fn options_below_novas_lower_bounds_are_refused_and_the_bounds_accepted() {
        let set = |option: &str, value: f64| {
            SchedulerConfig::from_json(&format!(r#"{{"enabled_filters": "ComputeFilter", "{option}": {value}}}"#))
        };
        for (option, bound) in [
            ("host_subset_size", 1.0),
            ("max_io_ops_per_host", 0.0),
            ("max_instances_per_host", 1.0),
            ("soft_affinity_weight_multiplier", 0.0),
            ("soft_anti_affinity_weight_multiplier", 0.0),
            ("pci_weight_multiplier", 0.0),
        ] {
            assert!(set(option, bound).is_ok(), "{option} = {bound}");
            let below = bound - 0.5;
            let err = set(option, below).unwrap_err().to_string();
            let whole = option.ends_with("per_host") || option == "host_subset_size";
            let expected = if whole { "must be a whole number" } else { "must be at least 0, not -0.5" };
            assert!(err.contains(option) && err.contains(expected), "{err}");
            let err = set(option, bound - 1.0).unwrap_err().to_string();
            assert!(err.contains(&format!("`{option}` must be at least {bound}, not {}", bound - 1.0)), "{err}");
        }
        // Other multipliers may be negative.
        assert!(set("ram_weight_multiplier", -1.0).is_ok());
    }

    #[test]
    fn max_request_count_bounds_requests_and_round_trips() {
        let c = SchedulerConfig::from_json(r#"{"enabled_filters": "ComputeFilter", "max_request_count": 5}"#).unwrap();
        assert_eq!(c.max_count, 5);
        let again: SchedulerConfig = serde_json::from_value(serde_json::to_value(&c).unwrap()).unwrap();
        assert_eq!(again.max_count, 5);
        let cluster = Cluster::builder().host(HostSpec::new("h1")).build().unwrap();
        let s = c.build().unwrap();
        assert!(s.schedule(&cluster, &Request::new(5).into()).is_ok());
        assert_eq!(
            s.schedule(&cluster, &Request::new(6).into()).unwrap_err(),
            ScheduleError::CountTooLarge { count: 6, max: 5 }
        );
        for bad in ["0", "-1", "4294967296", "\"many\""] {
            let json = format!(r#"{{"max_request_count": {bad}}}"#);
            assert!(SchedulerConfig::from_json(&json).is_err(), "{bad}");
        }
        assert_eq!(SchedulerConfig::default().max_count, crate::schedule::DEFAULT_MAX_COUNT);
    }

    /// Regression (campaign 16's mutants against Nova): the `metrics` section took any option,
    /// and a `[metrics]` option's short name counted anywhere; the reference tool refuses the
    /// first and refuses or ignores the second.
    #[test]
    fn metrics_options_go_by_their_short_names_in_the_metrics_section_only() {
        let c = SchedulerConfig::from_json(
            r#"{"metrics": {"weight_multiplier": 2.0, "required": false},
            "metrics_weight_of_unavailable": -5.0}"#,
        )
        .unwrap();
        assert_eq!(c.options.metrics_weight_multiplier, 2.0);
        assert!(!c.options.metrics_required);
        assert_eq!(c.options.metrics_weight_of_unavailable, -5.0);
        let err = SchedulerConfig::from_json(r#"{"metrics": {"build_failure_weight_multiplier": 2.0}}"#).unwrap_err();
        assert!(err.to_string().contains("unknown `metrics` option `build_failure_weight_multiplier`"), "{err}");
        for json in [
            r#"{"weight_setting": "cpu.frequency=1"}"#,
            r#"{"filter_scheduler": {"required": true}}"#,
            r#"{"multipliers": {"weight_multiplier": 1.0}}"#,
        ] {
            let err = SchedulerConfig::from_json(json).unwrap_err().to_string();
            assert!(err.contains("is a `metrics` option"), "{json}: {err}");
        }
        // What a configuration writes reads back.
        let again: SchedulerConfig = serde_json::from_value(serde_json::to_value(&c).unwrap()).unwrap();
        assert_eq!(again, c);
    }

    /// Regression (campaign 16's mutants against Nova): any default architecture was taken.
    #[test]
    fn the_default_architecture_is_one_of_novas_names_as_spelt() {
        let arch =
            |v: &str| SchedulerConfig::from_json(&format!(r#"{{"image_properties_default_architecture": {v}}}"#));
        assert_eq!(
            arch(r#""aarch64""#).unwrap().options.image_properties_default_architecture.as_deref(),
            Some("aarch64")
        );
        assert_eq!(arch("null").unwrap().options.image_properties_default_architecture, None);
        for bad in [r#""AARCH64""#, r#""amd64""#, r#""""#, r#""aarch6c""#] {
            let err = arch(bad).unwrap_err().to_string();
            assert!(err.contains("must be an architecture name as Nova spells it"), "{bad}: {err}");
        }
    }
}

#[cfg(test)]
mod nova_34_tests {
    use super::*;
    use crate::error::ScheduleError;
    use crate::nova::request::{Flavor, NovaRequest, VmSpec};
    use crate::request::Request;
    use crate::snapshot::{Cluster, HostSpec};

    #[test]
    fn every_filter_and_weigher_nova_34_ships_builds_under_its_class_name() {
        let filters = ALL_FILTERS.join(",");
        let c = SchedulerConfig::from_json(&format!(r#"{{"enabled_filters": "{filters}", "weighers": []}}"#)).unwrap();
        let s = c.build().unwrap();
        assert_eq!(s.filters().map(|f| f.name().to_owned()).collect::<Vec<_>>(), ALL_FILTERS);
        let options = Options::default();
        for name in ALL_WEIGHERS {
            assert_eq!(registry::weigher(name, &options).unwrap().0.name(), *name);
            let dotted = format!("nova.scheduler.weights.x.{name}");
            assert_eq!(registry::weigher(&dotted, &options).unwrap().0.name(), *name);
        }
        assert_eq!((ALL_FILTERS.len(), ALL_WEIGHERS.len()), (22, 13));
        // The three weighers take their options' defaults, and the options are set by name.
        for (name, option, default) in [
            ("PCIWeigher", "pci_weight_multiplier", 1.0),
            ("CrossCellWeigher", "cross_cell_move_weight_multiplier", 1e6),
            ("ImagePropertiesWeigher", "image_props_weight_multiplier", 0.0),
        ] {
            assert_eq!(registry::weigher(name, &options).unwrap().1, default, "{name}");
            let json = format!(r#"{{"multipliers": {{"{option}": 0.0}}}}"#);
            let set = SchedulerConfig::from_json(&json).unwrap();
            assert_eq!(registry::weigher(name, &set.options).unwrap().1, 0.0, "{name}");
        }
        let c = SchedulerConfig::from_json(r#"{"cross_cell_move_weight_multiplier": -2.5}"#).unwrap();
        assert_eq!(registry::weigher("CrossCellWeigher", &c.options).unwrap().1, -2.5);
    }

    #[test]
    fn a_non_zero_image_properties_multiplier_is_not_modelled() {
        for json in [
            r#"{"image_props_weight_multiplier": 1.0}"#,
            r#"{"filter_scheduler": {"image_props_weight_multiplier": -1}}"#,
            r#"{"multipliers": {"image_props_weight_multiplier": "0.5"}}"#,
        ] {
            let err = SchedulerConfig::from_json(json).unwrap_err();
            assert!(
                matches!(&err, BuildError::NotModelled { name, part }
                    if name == "ImagePropertiesWeigher" && part.contains("image_props_weight_multiplier")),
                "{json}: {err}"
            );
        }
        assert!(SchedulerConfig::from_json(r#"{"image_props_weight_multiplier": 0}"#).is_ok());
        // `pci_weight_multiplier` has Nova's minimum of 0.
        assert!(SchedulerConfig::from_json(r#"{"pci_weight_multiplier": -1}"#).is_err());
    }

    #[test]
    fn numa_and_pci_filters_pass_plain_requests_and_refuse_what_is_not_modelled() {
        let cluster = Cluster::builder().host(HostSpec::new("a")).host(HostSpec::new("b")).build().unwrap();
        let c = SchedulerConfig::from_json(
            r#"{"enabled_filters": "NUMATopologyFilter,PciPassthroughFilter",
                "weighers": ["PCIWeigher", "CrossCellWeigher", "ImagePropertiesWeigher"]}"#,
        )
        .unwrap();
        let s = c.build().unwrap();
        let p = s.schedule(&cluster, &NovaRequest::new(Request::new(2), VmSpec::default())).unwrap();
        assert_eq!(p.selections.len(), 2);
        let vm = |key: &str, value: &str| {
            let flavor = Flavor::new("m1", 1024.0, 1.0, 10.0).extra_spec(key, value);
            NovaRequest::new(Request::new(1), VmSpec { flavor: Some(flavor), ..VmSpec::default() })
        };
        let err = s.schedule(&cluster, &vm("hw:cpu_policy", "dedicated")).unwrap_err();
        assert!(matches!(&err, ScheduleError::NotModelled { by, .. } if by == "NUMATopologyFilter"), "{err}");
        let err = s.schedule(&cluster, &vm("pci_passthrough:alias", "gpu:1")).unwrap_err();
        assert!(matches!(&err, ScheduleError::NotModelled { by, .. } if by == "PciPassthroughFilter"), "{err}");
        assert_eq!(
            err.to_string(),
            "`PciPassthroughFilter` cannot judge the request: a PCI request (flavor extra spec \
             `pci_passthrough:alias`) is not modelled"
        );
    }
}
