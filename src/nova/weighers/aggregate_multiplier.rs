//! The filter scheduler's per-host weight multiplier: the smallest aggregate override.

use crate::id::HostId;
use crate::nova::pyvalue::parse_py_float;
use crate::request::Cx;

/// The multiplier of `host` for the weigher option `key`, as the filter scheduler's
/// `get_weight_multiplier` computes it.
///
/// The raw values of metadata `key` across the host's aggregates (unsplit) are parsed as Python
/// floats and the smallest wins, so a host in aggregates with `-1.0` and `5` gets −1.0. With no
/// value, or when any value does not parse, the whole set is discarded and `configured` is used.
/// The option's configured bounds (such as a minimum of 0) do not apply to an override.
///
/// One deliberate difference: a value that parses to NaN or an infinity also discards the set.
/// Nova would multiply by it and sort weights that may be NaN, an order it does not define; the
/// library keeps every multiplier finite, as [`SchedulerBuilder::build`](crate::schedule::SchedulerBuilder::build)
/// requires of configured ones.
///
/// Computes in O(aggregates of the host); allocates nothing.
pub fn aggregate_multiplier(cx: &Cx<'_>, host: HostId, key: &str, configured: f64) -> f64 {
    let cluster = cx.cluster();
    let Some(record) = cluster.host(host) else {
        return configured;
    };
    let aggregates = cluster.aggregates();
    let mut smallest: Option<f64> = None;
    // The same value in two aggregates counts once in Nova's set; for a minimum that is the
    // same as counting it twice, so no de-duplication is needed.
    for raw in record.aggregates.iter().filter_map(|a| aggregates.get(a.index())?.metadata.get(key)) {
        match parse_py_float(raw) {
            Some(v) if v.is_finite() => smallest = Some(smallest.map_or(v, |m| m.min(v))),
            _ => return configured,
        }
    }
    smallest.unwrap_or(configured)
}
