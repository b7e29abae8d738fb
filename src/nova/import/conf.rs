//! A `nova.conf`-style INI file to a [`SchedulerConfig`]: the `[filter_scheduler]`,
//! `[metrics]` and `[scheduler]` sections and the allocation ratios of `[DEFAULT]`.

use crate::import::{ImportError, ImportWarning, ObjectRef};
use crate::nova::config::{SchedulerConfig, ALL_WEIGHERS, MULTIPLIER_DEFAULTS, OPTION_NAMES};
use crate::nova::scenario::DEFAULT_FILTERS;
use serde_json::{Map, Value};

/// One `key = value` of an INI file, with the section and the line it was on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Entry {
    pub(super) section: String,
    pub(super) key: String,
    pub(super) value: String,
    pub(super) line: usize,
}

/// The entries of an INI file in file order: `[section]` headers, `key = value` or
/// `key: value`, comments from `#` or `;` at a line's start, and continuation lines (indented)
/// appended to the value before them, as oslo.config reads them. A line that is none of these
/// is an error naming the file and line.
pub(super) fn parse_ini(origin: &str, text: &str) -> Result<Vec<Entry>, ImportError> {
    let mut section = String::from("DEFAULT");
    let mut entries: Vec<Entry> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if raw.starts_with([' ', '\t']) {
            if let Some(last) = entries.last_mut().filter(|e| e.section == section) {
                if !last.value.is_empty() {
                    last.value.push('\n');
                }
                last.value.push_str(trimmed);
                continue;
            }
        }
        if let Some(rest) = trimmed.strip_prefix('[') {
            let Some(name) = rest.strip_suffix(']').map(str::trim).filter(|n| !n.is_empty()) else {
                return Err(syntax(origin, line, trimmed, "a section header reads `[name]`"));
            };
            section = name.to_owned();
            continue;
        }
        let Some(at) = trimmed.find(['=', ':']) else {
            return Err(syntax(origin, line, trimmed, "expected `option = value`, a `[section]` or a comment"));
        };
        let key = trimmed[..at].trim();
        if key.is_empty() {
            return Err(syntax(origin, line, trimmed, "an option needs a name before `=`"));
        }
        let mut value = trimmed[at + 1..].trim();
        for q in ['"', '\''] {
            if value.len() >= 2 && value.starts_with(q) && value.ends_with(q) {
                value = &value[1..value.len() - 1];
            }
        }
        entries.push(Entry { section: section.clone(), key: key.to_owned(), value: value.to_owned(), line });
    }
    Ok(entries)
}

fn syntax(origin: &str, line: usize, text: &str, what: &str) -> ImportError {
    ImportError::Invalid {
        origin: origin.to_owned(),
        object: ObjectRef::new("line", line.to_string()).into(),
        field: text.chars().take(60).collect(),
        reason: what.to_owned(),
    }
}

/// Options of the sections read that Nova has and placewise reads but does not model.
const NOT_MODELLED: &[(&str, &str)] = &[
    ("filter_scheduler", "available_filters"),
    ("filter_scheduler", "track_instance_changes"),
    ("filter_scheduler", "pci_in_placement"),
    ("filter_scheduler", "image_props_weight_setting"),
    ("scheduler", "max_attempts"),
    ("scheduler", "max_placement_results"),
    ("scheduler", "limit_tenants_to_placement_aggregate"),
    ("scheduler", "placement_aggregate_required_for_tenants"),
    ("scheduler", "query_placement_for_image_type_support"),
    ("scheduler", "enable_isolated_aggregate_filtering"),
    ("scheduler", "image_metadata_prefilter"),
    ("scheduler", "query_placement_for_routed_network_aggregates"),
    ("scheduler", "query_placement_for_availability_zone"),
    ("scheduler", "workers"),
    ("scheduler", "discover_hosts_in_cells_interval"),
    ("DEFAULT", "reserved_host_memory_mb"),
    ("DEFAULT", "reserved_host_disk_mb"),
    ("DEFAULT", "reserved_host_cpus"),
];

/// `[DEFAULT]` allocation ratio options and the kind each sets. The `initial_*` variants
/// apply where the plain one is not given, as in Nova.
const RATIOS: &[(&str, &str, bool)] = &[
    ("cpu_allocation_ratio", "cpu", false),
    ("ram_allocation_ratio", "ram", false),
    ("disk_allocation_ratio", "disk", false),
    ("initial_cpu_allocation_ratio", "cpu", true),
    ("initial_ram_allocation_ratio", "ram", true),
    ("initial_disk_allocation_ratio", "disk", true),
];

/// Nova's `initial_*_allocation_ratio` defaults: what a compute node reports when nothing is
/// configured (`cpu` 4.0, `ram` 1.0, `disk` 1.0).
pub const INITIAL_ALLOCATION_RATIOS: [(&str, f64); 3] = [("cpu", 4.0), ("ram", 1.0), ("disk", 1.0)];

/// The configuration Nova runs with when `nova.conf` sets nothing: its default filters
/// ([`DEFAULT_FILTERS`]), every weigher it ships ([`ALL_WEIGHERS`], in name order, since Nova's
/// own order of `all_weighers` is a directory walk) and the initial allocation ratios.
pub fn default_config() -> SchedulerConfig {
    SchedulerConfig {
        enabled_filters: DEFAULT_FILTERS.iter().map(|&f| f.to_owned()).collect(),
        weighers: ALL_WEIGHERS.iter().map(|&w| w.to_owned()).collect(),
        allocation_ratios: INITIAL_ALLOCATION_RATIOS.iter().map(|&(k, v)| (k.to_owned(), v)).collect(),
        ..SchedulerConfig::default()
    }
}

/// A weigher class as `weight_classes` names it (`nova.scheduler.weights.ram.RAMWeigher`) to
/// the class name; `None` for `all_weighers`.
fn weigher_class(path: &str) -> Option<&str> {
    let name = path.rsplit('.').next().unwrap_or(path);
    (name != "all_weighers").then_some(name)
}

/// A filter class as `enabled_filters` may name it (a bare class name, or a dotted path).
fn filter_class(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

fn comma_list(value: &str) -> Vec<String> {
    value.split([',', '\n']).map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

/// Reads `text`, a `nova.conf`-style file called `origin`, into a [`SchedulerConfig`] over
/// [`default_config`], with a warning for each option read but not modelled and each option of
/// a section read that Nova does not have.
///
/// # Errors
///
/// [`ImportError::Invalid`] naming the file, the section (as the object) and the option (as
/// the field) for a value that does not parse or that Nova refuses, and naming the line for a
/// line that is not INI.
pub fn read_conf(origin: &str, text: &str) -> Result<(SchedulerConfig, Vec<ImportWarning>), ImportError> {
    let entries = parse_ini(origin, text)?;
    let mut warnings = Vec::new();
    let mut config = default_config();
    let mut options: Map<String, Value> = Map::new();
    let mut metrics: Map<String, Value> = Map::new();
    let mut initial = Vec::new();
    let invalid = |e: &Entry, reason: String| ImportError::Invalid {
        origin: origin.to_owned(),
        object: ObjectRef::new("section", e.section.clone()).into(),
        field: e.key.clone(),
        reason,
    };
    let warn = |e: &Entry, message: &str| ImportWarning {
        origin: origin.to_owned(),
        object: Some(ObjectRef::new("section", e.section.clone())),
        field: e.key.clone(),
        message: message.to_owned(),
    };
    for e in &entries {
        let (section, key, value) = (e.section.as_str(), e.key.as_str(), e.value.as_str());
        if NOT_MODELLED.contains(&(section, key)) {
            warnings.push(warn(e, "read but not modelled: placewise schedules without it"));
            continue;
        }
        match section {
            "filter_scheduler" => match key {
                "enabled_filters" => {
                    config.enabled_filters = comma_list(value).iter().map(|f| filter_class(f).to_owned()).collect()
                }
                "weight_classes" => {
                    let mut weighers = Vec::new();
                    for path in comma_list(value) {
                        match weigher_class(&path) {
                            Some(name) => weighers.push(name.to_owned()),
                            None => {
                                warnings.push(warn(
                                    e,
                                    "`all_weighers` has no stable order in Nova; placewise sums every weigher in name order",
                                ));
                                weighers.extend(ALL_WEIGHERS.iter().map(|&w| w.to_owned()));
                            }
                        }
                    }
                    config.weighers = weighers;
                }
                "shuffle_best_same_weighed_hosts" if value.eq_ignore_ascii_case("false") => {}
                k if OPTION_NAMES.contains(&k) || MULTIPLIER_DEFAULTS.iter().any(|d| d.0 == k) => {
                    options.insert(k.to_owned(), Value::from(value));
                }
                _ => warnings.push(warn(e, "not an option of Nova's [filter_scheduler]; ignored")),
            },
            "metrics" => match key {
                "weight_multiplier" | "weight_setting" | "required" | "weight_of_unavailable" => {
                    metrics.insert(key.to_owned(), Value::from(value));
                }
                _ => warnings.push(warn(e, "not an option of Nova's [metrics]; ignored")),
            },
            "scheduler" => warnings.push(warn(e, "not read by placewise; ignored")),
            "DEFAULT" => {
                if let Some(&(_, kind, is_initial)) = RATIOS.iter().find(|r| r.0 == key) {
                    let ratio: f64 = value
                        .parse()
                        .ok()
                        .filter(|r: &f64| r.is_finite() && *r > 0.0)
                        .ok_or_else(|| invalid(e, format!("expected a positive number, found `{value}`")))?;
                    if is_initial {
                        initial.push((kind, ratio));
                    } else {
                        config.allocation_ratios.insert(kind.to_owned(), ratio);
                    }
                } else if key == "default_availability_zone" {
                    options.insert(key.to_owned(), Value::from(value));
                }
            }
            // Every other section (database, keystone_authtoken …) is not about placement.
            _ => {}
        }
    }
    // An initial ratio applies where the plain option is not given.
    for (kind, ratio) in initial {
        let plain = RATIOS
            .iter()
            .any(|r| !r.2 && r.1 == kind && entries.iter().any(|e| e.section == "DEFAULT" && e.key == r.0));
        if !plain {
            config.allocation_ratios.insert(kind.to_owned(), ratio);
        }
    }
    // Each option on its own first, so that an error names its section and option.
    for e in &entries {
        let (key, in_metrics) = match e.section.as_str() {
            "filter_scheduler" | "DEFAULT" if options.contains_key(&e.key) => (e.key.as_str(), false),
            "metrics" if metrics.contains_key(&e.key) => (e.key.as_str(), true),
            _ => continue,
        };
        let value = Value::from(e.value.as_str());
        let one = if in_metrics {
            serde_json::json!({ "metrics": { key: value } })
        } else {
            serde_json::json!({ key: value })
        };
        if let Err(err) = SchedulerConfig::try_from(one) {
            return Err(invalid(e, err.to_string()));
        }
    }
    let mut all = options;
    if !metrics.is_empty() {
        all.insert("metrics".into(), Value::Object(metrics));
    }
    let read = SchedulerConfig::try_from(Value::Object(all)).map_err(|err| ImportError::Invalid {
        origin: origin.to_owned(),
        object: ObjectRef::new("section", "filter_scheduler").into(),
        field: String::new(),
        reason: err.to_string(),
    })?;
    config.options = read.options;
    config.seed = read.seed;
    config.max_count = read.max_count;
    // The names must build: an unknown filter or weigher names its option.
    for (key, section) in [("enabled_filters", "filter_scheduler"), ("weight_classes", "filter_scheduler")] {
        if let Err(err) = check_names(&config, key) {
            let at = entries.iter().rev().find(|e| e.section == section && e.key == key);
            let entry = at.cloned().unwrap_or(Entry {
                section: section.to_owned(),
                key: key.to_owned(),
                value: String::new(),
                line: 0,
            });
            return Err(invalid(&entry, err));
        }
    }
    Ok((config, warnings))
}

/// Whether every filter (`enabled_filters`) or weigher (`weight_classes`) name builds.
fn check_names(config: &SchedulerConfig, key: &str) -> Result<(), String> {
    let mut one = config.clone();
    if key == "enabled_filters" {
        one.weighers.clear();
    } else {
        one.enabled_filters.clear();
    }
    one.builder().map(|_| ()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_options_comments_and_continuations_are_read() {
        let text = "# a comment\n[DEFAULT]\ncpu_allocation_ratio = 8.0\ninitial_ram_allocation_ratio = 1.5\n\n\
                    [filter_scheduler]\nenabled_filters = ComputeFilter,\n  AggregateInstanceExtraSpecsFilter\n\
                    weight_classes = nova.scheduler.weights.ram.RAMWeigher\nram_weight_multiplier = 2.0\n\
                    host_subset_size: 2\n[metrics]\nrequired = False\n[database]\nconnection = mysql://x\n";
        let (config, warnings) = read_conf("nova.conf", text).unwrap();
        assert_eq!(config.enabled_filters, ["ComputeFilter", "AggregateInstanceExtraSpecsFilter"]);
        assert_eq!(config.weighers, ["RAMWeigher"]);
        assert_eq!(config.options.multiplier("ram_weight_multiplier"), 2.0);
        assert_eq!(config.options.host_subset_size, 2);
        assert!(!config.options.metrics_required);
        assert_eq!(config.allocation_ratios["cpu"], 8.0);
        assert_eq!(config.allocation_ratios["ram"], 1.5);
        assert_eq!(config.allocation_ratios["disk"], 1.0);
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[test]
    fn nothing_set_is_novas_defaults() {
        let (config, _) = read_conf("nova.conf", "").unwrap();
        assert_eq!(config, default_config());
        assert_eq!(config.enabled_filters.len(), DEFAULT_FILTERS.len());
        assert!(config.build().is_ok());
    }

    #[test]
    fn unknown_and_not_modelled_options_are_warnings() {
        let text = "[filter_scheduler]\nno_such_option = 1\ntrack_instance_changes = true\n\
                    weight_classes = nova.scheduler.weights.all_weighers\n";
        let (config, warnings) = read_conf("n.conf", text).unwrap();
        let shown: Vec<String> = warnings.iter().map(ToString::to_string).collect();
        assert_eq!(shown.len(), 3, "{shown:?}");
        assert!(shown[0].starts_with("n.conf: section filter_scheduler: field `no_such_option`: "), "{shown:?}");
        assert!(shown[1].contains("track_instance_changes") && shown[1].contains("not modelled"), "{shown:?}");
        assert_eq!(config.weighers.len(), ALL_WEIGHERS.len());
    }

    #[test]
    fn a_value_that_does_not_parse_names_file_section_and_option() {
        let err = read_conf("nova.conf", "[filter_scheduler]\nhost_subset_size = many\n").unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("nova.conf: section filter_scheduler: field `host_subset_size`: "), "{text}");
        let err = read_conf("nova.conf", "[DEFAULT]\nram_allocation_ratio = -1\n").unwrap_err().to_string();
        assert!(err.starts_with("nova.conf: section DEFAULT: field `ram_allocation_ratio`: "), "{err}");
        let err = read_conf("nova.conf", "[metrics]\nrequired = perhaps\n").unwrap_err().to_string();
        assert!(err.starts_with("nova.conf: section metrics: field `required`: "), "{err}");
        let err = read_conf("nova.conf", "[filter_scheduler]\nenabled_filters = NoSuchFilter\n").unwrap_err();
        assert!(err.to_string().starts_with("nova.conf: section filter_scheduler: field `enabled_filters`: "), "{err}");
        let err = read_conf("nova.conf", "[filter_scheduler\n").unwrap_err().to_string();
        assert_eq!(err, "nova.conf: line 1: field `[filter_scheduler`: a section header reads `[name]`");
    }
}
