//! The rule shared by IoOpsFilter, NumInstancesFilter and their Aggregate variants: a host
//! counter (which grows by one per earlier pick of the request) must stay strictly below a
//! maximum, fixed or taken from the host's aggregates.

use super::common::{py_int_as_f64, AggregateNumbers};
use crate::filter::{Reason, Rejections};
use crate::id::HostId;
use crate::request::Cx;
use crate::snapshot::CHUNK;

/// Which counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Counter {
    /// `num_io_ops`, capped by `max_io_ops_per_host`.
    IoOps,
    /// `num_instances`, capped by `max_instances_per_host`.
    Instances,
}

impl Counter {
    /// The aggregate metadata key of the maximum.
    pub(super) fn max_key(self) -> &'static str {
        match self {
            Counter::IoOps => "max_io_ops_per_host",
            Counter::Instances => "max_instances_per_host",
        }
    }

    /// The host attribute that holds the counter.
    fn attribute(self) -> &'static str {
        match self {
            Counter::IoOps => "num_io_ops",
            Counter::Instances => "num_instances",
        }
    }

    /// The counter on `host` before the request's picks, with `hot` the attribute's hot column.
    fn before(self, cx: &Cx<'_>, host: HostId, hot: Option<usize>) -> f64 {
        let view = cx.host_state(host);
        match self {
            Counter::IoOps => view.io_ops_before(hot),
            Counter::Instances => view.instances_before(hot),
        }
    }

    /// The counter on `host`, earlier picks included.
    pub(super) fn value(self, cx: &Cx<'_>, host: HostId) -> f64 {
        let view = cx.host_state(host);
        match self {
            Counter::IoOps => view.num_io_ops(),
            Counter::Instances => view.num_instances(),
        }
    }

    /// Text for the rejection.
    pub(super) fn describe(self) -> String {
        match self {
            Counter::IoOps => "too many I/O operations",
            Counter::Instances => "too many instances",
        }
        .into()
    }
}

/// Per-request state: every host's counter before the request, and its maximum when that comes
/// from aggregates, as dense columns so that each later instance reads two numbers per host.
#[derive(Debug, Clone)]
pub(super) struct Counts {
    base: Vec<f64>,
    max: Vec<f64>,
}

impl Counts {
    /// Reads every host. With `aggregates`, each host's maximum is the smallest of its
    /// aggregates' `max_key` values parsed with Python's `int()`, or `default` when none sets
    /// it or one does not parse. Computes in O(hosts + aggregates).
    pub(super) fn new(cx: &Cx<'_>, counter: Counter, aggregates: bool, default: i64) -> Self {
        let cluster = cx.cluster();
        let mut base = vec![0.0; cluster.id_bound()];
        // The attribute's column is found once, not per host.
        let hot = cluster.hot_attribute(counter.attribute());
        for id in cluster.host_ids() {
            base[id.index()] = counter.before(cx, id, hot);
        }
        let mut max = Vec::new();
        if aggregates {
            let numbers = AggregateNumbers::new(cluster, counter.max_key(), py_int_as_f64);
            max = vec![default as f64; cluster.id_bound()];
            if numbers.any() {
                for (id, host) in cluster.hosts() {
                    if let Some(m) = numbers.host_min(host) {
                        max[id.index()] = m;
                    }
                }
            }
        }
        Counts { base, max }
    }

    /// The maximum of `host` (aggregate variants only).
    pub(super) fn max(&self, host: HostId) -> Option<f64> {
        self.max.get(host.index()).copied()
    }

    /// The chunk check against `max` (or the per-host maxima).
    pub(super) fn check_chunk(
        &self,
        cx: &Cx<'_>,
        chunk: usize,
        mask: u64,
        fixed_max: f64,
        rejected: &mut Rejections,
    ) -> u64 {
        let overlay = cx.overlay();
        let start = chunk * CHUNK;
        let touched = overlay.touched_mask(chunk);
        let mut pass = 0u64;
        let mut rest = mask;
        while rest != 0 {
            let lane = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            let i = start + lane;
            let Some(&b) = self.base.get(i) else { continue };
            let placed = if touched >> lane & 1 == 1 { f64::from(overlay.placed(HostId::from_index(i))) } else { 0.0 };
            let max = self.max.get(i).copied().unwrap_or(fixed_max);
            pass |= u64::from(b + placed < max) << lane;
        }
        rejected.reject_lanes(chunk, mask & !pass, Reason(0));
        pass
    }
}

/// The maximum of one host for an Aggregate variant, without prepared state.
pub(super) fn aggregate_max(cx: &Cx<'_>, counter: Counter, host: HostId, default: i64) -> f64 {
    AggregateNumbers::new(cx.cluster(), counter.max_key(), py_int_as_f64)
        .host_min(cx.host(host))
        .unwrap_or(default as f64)
}
