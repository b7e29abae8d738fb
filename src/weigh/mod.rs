//! Weighers: how good each surviving host is.
//!
//! A [`Weigher`] gives each candidate a raw number. The scheduler normalises the raw numbers of
//! one weigher over the current candidates ([`normalize`], the filter-scheduler rule), multiplies
//! by the weigher's multiplier and sums within a tier. Higher wins: a positive multiplier on free
//! memory spreads instances out, a negative one stacks them.
//!
//! ```
//! use placewise::{weigher_fn, Weigher};
//! use placewise::weigh::Bounds;
//!
//! // `Cx::instances` counts the request's earlier picks too, so a burst spreads.
//! let load = weigher_fn("few instances", |cx, host| -(cx.instances(host) as f64)).with_bounds(Bounds::NONE);
//! let boxed: Box<dyn Weigher> = Box::new(load);
//! assert_eq!(boxed.name(), "few instances");
//! ```

pub mod builtin;
mod pass;

pub use pass::WeighPass;

use crate::error::ScheduleError;
use crate::id::HostId;
use crate::request::{Cx, Prepared};
use crate::snapshot::CHUNK;
use std::fmt;
use std::sync::Arc;

/// Optional fixed bounds for normalisation. A bound that is set also clamps raw values.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bounds {
    /// Fixed minimum (else the candidates' minimum).
    pub min: Option<f64>,
    /// Fixed maximum (else the candidates' maximum).
    pub max: Option<f64>,
}

impl Bounds {
    /// Plain min–max over the candidates.
    pub const NONE: Bounds = Bounds { min: None, max: None };
    /// Minimum fixed at 0: the score is `x / max`, negative values count as 0 (the RAM, CPU,
    /// disk and I/O weighers).
    pub const ZERO_MIN: Bounds = Bounds { min: Some(0.0), max: None };
}

/// Normalises `values` in place to `[0, 1]`, as the filter scheduler does.
///
/// Raw values are first clamped to the bounds that are set. The minimum and maximum are the
/// bounds where set, else the smallest and largest value. If they are equal every value becomes
/// 0; otherwise each becomes `(x − min) / (max − min)`. So with the minimum fixed at 0 and every
/// value equal and positive, every value becomes 1. A NaN raw value counts as the minimum.
pub fn normalize(values: &mut [f64], bounds: Bounds) {
    let mut lo = f64::INFINITY;
    let mut hi = f64::NEG_INFINITY;
    for &v in values.iter() {
        let v = bounds.clamp(v);
        if !v.is_nan() {
            lo = lo.min(v);
            hi = hi.max(v);
        }
    }
    let (min, max) = bounds.effective(lo, hi);
    for v in values.iter_mut() {
        *v = bounds.normalized(*v, min, max);
    }
}

impl Bounds {
    /// `v` clamped to the bounds that are set (NaN becomes the minimum bound when there is one).
    #[inline]
    pub fn clamp(self, v: f64) -> f64 {
        // Comparisons rather than `f64::max`/`min`: the same results (a NaN becomes the bound),
        // and cheaper in the per-candidate loops.
        let v = match self.min {
            Some(m) if v < m || v.is_nan() => m,
            _ => v,
        };
        match self.max {
            Some(m) if v > m || v.is_nan() => m,
            _ => v,
        }
    }

    /// The normalisation range given the clamped candidates' smallest and largest values.
    #[inline]
    pub fn effective(self, lo: f64, hi: f64) -> (f64, f64) {
        (self.min.unwrap_or(lo), self.max.unwrap_or(hi))
    }

    /// Whether `[min, max]` is a range to normalise over: finite and not empty. Over any other,
    /// every value normalises to 0.
    #[inline]
    pub fn usable(min: f64, max: f64) -> bool {
        min.is_finite() && max.is_finite() && max > min
    }

    /// One raw value normalised over the range `[min, max]` (see [`normalize`]).
    #[inline]
    pub fn normalized(self, raw: f64, min: f64, max: f64) -> f64 {
        let v = self.clamp(raw);
        if !Bounds::usable(min, max) || v.is_nan() {
            0.0
        } else {
            (v - min) / (max - min)
        }
    }
}

/// A weigher's raw values for one chunk as the snapshot holds them ([`Weigher::column`]).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Column<'c> {
    /// The values by lane.
    pub values: &'c [f64; CHUNK],
    /// The smallest value over the chunk's hosts (a NaN means unknown).
    pub min: f64,
    /// The largest value over the chunk's hosts (a NaN means unknown).
    pub max: f64,
}

impl<'c> Column<'c> {
    /// A column with the extremes of its hosts' values.
    pub fn new(values: &'c [f64; CHUNK], min: f64, max: f64) -> Self {
        Column { values, min, max }
    }
}

/// Gives each candidate host a raw score; see the [module docs](self).
pub trait Weigher: Send + Sync {
    /// A short name for explanations and configuration.
    fn name(&self) -> &str;

    /// Per-request preparation; the result comes back through [`Cx::state`].
    ///
    /// # Errors
    ///
    /// A [`ScheduleError`] when the request carries input this weigher cannot use.
    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        let _ = cx;
        Ok(None)
    }

    /// The raw value for one host.
    fn weigh(&self, cx: &Cx<'_>, host: HostId) -> f64;

    /// Raw values for many hosts into `out` (same length). The default loops over
    /// [`weigh`](Weigher::weigh), statically dispatched per weigher type.
    fn weigh_batch(&self, cx: &Cx<'_>, hosts: &[HostId], out: &mut [f64]) {
        for (o, &h) in out.iter_mut().zip(hosts) {
            *o = self.weigh(cx, h);
        }
    }

    /// Raw values of the hosts on the set lanes of `mask` in chunk `chunk` (host `64·chunk + i`
    /// is lane `i`), written to `out[i]`; other lanes of `out` are left as they are. The
    /// scheduler's one-pass path (a pick that keeps no ranking) calls this instead of
    /// [`weigh_batch`](Weigher::weigh_batch). It must give the same values as `weigh_batch`
    /// would for those hosts. The default gathers the lanes' ids and calls `weigh_batch`;
    /// override it to read the snapshot's hot columns ([`Cluster::hot_chunk`](crate::snapshot::Cluster::hot_chunk)) directly.
    fn weigh_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, out: &mut [f64; CHUNK]) {
        let mut hosts = [HostId(0); CHUNK];
        let mut values = [0.0; CHUNK];
        let n = lanes_of(chunk, mask, &mut hosts);
        self.weigh_batch(cx, &hosts[..n], &mut values[..n]);
        for (&h, &v) in hosts[..n].iter().zip(&values[..n]) {
            out[h.index() % CHUNK] = v;
        }
    }

    /// The raw values of chunk `chunk` as a column the snapshot already holds, when every lane
    /// of `mask` reads its value there unchanged (so [`weigh_chunk`](Weigher::weigh_chunk)
    /// would only copy it), with the column's extremes over the chunk's hosts; `None`
    /// otherwise, the default. The one-pass path then reads the column in place, and skips a
    /// chunk whose extremes cannot move the survivors' range.
    fn column<'c>(&self, cx: &Cx<'c>, chunk: usize, mask: u64) -> Option<Column<'c>> {
        let _ = (cx, chunk, mask);
        None
    }

    /// Normalisation bounds; default plain min–max.
    fn bounds(&self) -> Bounds {
        Bounds::NONE
    }

    /// Whether a host's raw value depends only on the snapshot, the request and the consumption
    /// recorded on that same host (see [`Filter::host_local`](crate::filter::Filter::host_local)).
    /// The default is `false`, which is always safe.
    fn host_local(&self) -> bool {
        false
    }

    /// This weigher's opt-in [`Extension`]: a multiplier that differs by host, a check of the
    /// candidates. The default, `None`, is a plain weigher: the configured multiplier for every
    /// host, every candidate accepted.
    fn extension(&self) -> Option<&dyn Extension> {
        None
    }
}

/// Opt-in capabilities of a [`Weigher`] beyond its raw values, found through
/// [`Weigher::extension`]. The filter scheduler's weighers use them (a multiplier overridden
/// per host by aggregate metadata, a metric every candidate must report); a plain weigher has
/// none, and the scheduler then never asks.
pub trait Extension: Send + Sync {
    /// The multiplier for `host`, given the configured one. The default returns it unchanged; an
    /// extension with per-host overrides says so with
    /// [`per_host_multiplier`](Extension::per_host_multiplier) and returns another here. A
    /// multiplier that is not finite fails the request with [`ScheduleError::Weigher`].
    fn multiplier(&self, cx: &Cx<'_>, host: HostId, configured: f64) -> f64 {
        let _ = (cx, host);
        configured
    }

    /// Whether [`multiplier`](Extension::multiplier) may differ from the configured value.
    fn per_host_multiplier(&self) -> bool {
        false
    }

    /// Whether [`multiplier`](Extension::multiplier) depends on the host only through its
    /// aggregate set ([`Cluster::aggregate_class`](crate::snapshot::Cluster::aggregate_class)), as the
    /// filter scheduler's aggregate overrides do. The scheduler then asks once per aggregate
    /// class and request instead of once per host. The default is `false`, which is always safe.
    fn multiplier_by_aggregates(&self) -> bool {
        false
    }

    /// Checks that these candidates can be weighed at all; called before weighing, only when
    /// there are at least two candidates (a lone candidate is never weighed). The default
    /// accepts every host; the metrics weigher refuses a host missing a required metric.
    ///
    /// # Errors
    ///
    /// A [`ScheduleError`] that fails the request.
    fn validate(&self, cx: &Cx<'_>, hosts: &[HostId]) -> Result<(), ScheduleError> {
        let _ = (cx, hosts);
        Ok(())
    }

    /// Whether [`validate`](Extension::validate) can refuse anything. The default says yes, so
    /// an extension that overrides `validate` is always asked; one whose `validate` is the
    /// default may say no, and the scheduler's one-pass path then never calls it.
    fn validates(&self) -> bool {
        true
    }
}

/// The scheduler's questions to a weigher's [`Extension`], answered as for a plain weigher
/// when it has none.
impl<'w> dyn Weigher + 'w {
    /// [`Extension::multiplier`], or `configured`.
    #[inline]
    pub(crate) fn multiplier(&self, cx: &Cx<'_>, host: HostId, configured: f64) -> f64 {
        match self.extension() {
            Some(e) => e.multiplier(cx, host, configured),
            None => configured,
        }
    }

    /// [`Extension::per_host_multiplier`], or `false`.
    pub(crate) fn per_host_multiplier(&self) -> bool {
        self.extension().is_some_and(Extension::per_host_multiplier)
    }

    /// [`Extension::multiplier_by_aggregates`], or `false`.
    #[inline]
    pub(crate) fn multiplier_by_aggregates(&self) -> bool {
        self.extension().is_some_and(Extension::multiplier_by_aggregates)
    }

    /// [`Extension::validate`], or `Ok`.
    pub(crate) fn validate(&self, cx: &Cx<'_>, hosts: &[HostId]) -> Result<(), ScheduleError> {
        match self.extension() {
            Some(e) => e.validate(cx, hosts),
            None => Ok(()),
        }
    }

    /// [`Extension::validates`], or `false`.
    pub(crate) fn validates(&self) -> bool {
        self.extension().is_some_and(Extension::validates)
    }
}

macro_rules! forward_weigher {
    ($($ty:ty),*) => {$(
        impl<W: Weigher + ?Sized> Weigher for $ty {
            fn name(&self) -> &str { (**self).name() }
            fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> { (**self).prepare(cx) }
            fn weigh(&self, cx: &Cx<'_>, host: HostId) -> f64 { (**self).weigh(cx, host) }
            fn weigh_batch(&self, cx: &Cx<'_>, hosts: &[HostId], out: &mut [f64]) {
                (**self).weigh_batch(cx, hosts, out)
            }
            fn weigh_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, out: &mut [f64; CHUNK]) {
                (**self).weigh_chunk(cx, chunk, mask, out)
            }
            fn column<'c>(&self, cx: &Cx<'c>, chunk: usize, mask: u64) -> Option<Column<'c>> {
                (**self).column(cx, chunk, mask)
            }
            fn bounds(&self) -> Bounds { (**self).bounds() }
            fn host_local(&self) -> bool { (**self).host_local() }
            fn extension(&self) -> Option<&dyn Extension> { (**self).extension() }
        }
    )*};
}

forward_weigher!(&W, Box<W>, Arc<W>);

/// A weigher made from a closure; see [`weigher_fn`].
#[derive(Clone)]
pub struct WeigherFn<F> {
    name: String,
    bounds: Bounds,
    local: bool,
    f: F,
}

impl<F> fmt::Debug for WeigherFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WeigherFn")
            .field("name", &self.name)
            .field("bounds", &self.bounds)
            .field("local", &self.local)
            .finish_non_exhaustive()
    }
}

/// Wraps a closure `|cx, host| -> f64` as a [`Weigher`] called `name`, normalised min–max.
///
/// The closure is not taken to be [host-local](Weigher::host_local), the safe default: after
/// each pick of a request the scheduler weighs every candidate again instead of the picked host
/// alone. When a host's value reads only that host (and what earlier instances of the request
/// consumed there, as [`Cx::instances`] counts), say so with
/// [`local_to_host`](WeigherFn::local_to_host).
pub fn weigher_fn<F>(name: impl Into<String>, f: F) -> WeigherFn<F>
where
    F: Fn(&Cx<'_>, HostId) -> f64 + Send + Sync,
{
    WeigherFn { name: name.into(), bounds: Bounds::NONE, local: false, f }
}

impl<F> WeigherFn<F> {
    /// Sets the normalisation bounds.
    pub fn with_bounds(mut self, bounds: Bounds) -> Self {
        self.bounds = bounds;
        self
    }

    /// Declares the closure host-local ([`Weigher::host_local`]): a host's value depends only
    /// on the snapshot, the request and what earlier instances of the request consumed on that
    /// same host. A wrong declaration gives wrong answers, so declare only what holds.
    pub fn local_to_host(mut self) -> Self {
        self.local = true;
        self
    }
}

impl<F> Weigher for WeigherFn<F>
where
    F: Fn(&Cx<'_>, HostId) -> f64 + Send + Sync,
{
    fn name(&self) -> &str {
        &self.name
    }

    #[inline]
    fn weigh(&self, cx: &Cx<'_>, host: HostId) -> f64 {
        (self.f)(cx, host)
    }

    fn bounds(&self) -> Bounds {
        self.bounds
    }

    fn host_local(&self) -> bool {
        self.local
    }
}

/// Writes the ids of the set lanes of `mask` in chunk `chunk` to `out`, in lane order, and
/// returns how many there are.
pub(crate) fn lanes_of(chunk: usize, mask: u64, out: &mut [HostId; CHUNK]) -> usize {
    let mut n = 0;
    let mut rest = mask;
    while rest != 0 {
        out[n] = HostId((chunk as u32) << 6 | rest.trailing_zeros());
        n += 1;
        rest &= rest - 1;
    }
    n
}

/// The per-host multipliers of one request's weighers, kept per aggregate class for weighers
/// whose multiplier follows the aggregate set ([`Extension::multiplier_by_aggregates`]): the
/// one way every scoring path asks for a multiplier.
#[derive(Debug, Default)]
pub(crate) struct Multipliers {
    /// By weigher, by aggregate class: the multiplier, or NaN when not asked yet.
    by_class: Vec<Vec<f64>>,
    /// The first multiplier answered that is not finite, with its host (see
    /// [`Multipliers::refused`]).
    bad: Option<(HostId, f64)>,
}

impl Multipliers {
    /// Forgets everything: a new request (or snapshot) with `weighers` weighers.
    pub(crate) fn start(&mut self, weighers: usize) {
        self.by_class.resize_with(weighers, Vec::new);
        self.by_class.iter_mut().for_each(Vec::clear);
        self.bad = None;
    }

    /// Weigher number `w`'s multiplier for `host`: [`Extension::multiplier`], asked once per
    /// aggregate class when the weigher allows it. Computes in O(1) after the class's first host.
    /// A multiplier that is not finite is remembered for [`Multipliers::refused`], which the
    /// caller asks once after a weigher's hosts.
    #[inline]
    pub(crate) fn get(&mut self, w: usize, weigher: &dyn Weigher, cx: &Cx<'_>, host: HostId, configured: f64) -> f64 {
        if !weigher.multiplier_by_aggregates() {
            return self.checked(host, weigher.multiplier(cx, host, configured));
        }
        let cluster = cx.cluster();
        let class = cluster.aggregate_class(host).index();
        let Some(table) = self.by_class.get_mut(w) else {
            return self.checked(host, weigher.multiplier(cx, host, configured));
        };
        if table.len() <= class {
            if class >= cluster.aggregate_class_count() {
                return self.checked(host, weigher.multiplier(cx, host, configured));
            }
            table.resize(cluster.aggregate_class_count(), f64::NAN);
        }
        if table[class].is_nan() {
            // Only finite answers are kept, so NaN stays "not asked yet".
            let m = weigher.multiplier(cx, host, configured);
            if !m.is_finite() {
                return self.checked(host, m);
            }
            table[class] = m;
        }
        table[class]
    }

    /// `m`, remembered when it is the first multiplier that is not finite.
    #[inline]
    fn checked(&mut self, host: HostId, m: f64) -> f64 {
        if !m.is_finite() && self.bad.is_none() {
            self.bad = Some((host, m));
        }
        m
    }

    /// The error for the first multiplier [`get`](Multipliers::get) answered that is not
    /// finite since [`start`](Multipliers::start) (of `weigher`, the one whose hosts were just
    /// asked): an infinite multiplier times a normalised 0 is NaN, and a NaN score orders
    /// nothing.
    pub(crate) fn refused(&self, weigher: &dyn Weigher, cx: &Cx<'_>) -> Result<(), ScheduleError> {
        match self.bad {
            None => Ok(()),
            Some((host, m)) => Err(non_finite_multiplier(weigher, cx, host, m)),
        }
    }
}

/// The error that refuses `weigher`'s multiplier `m` for `host`, which is not finite.
#[cold]
#[inline(never)]
fn non_finite_multiplier(weigher: &dyn Weigher, cx: &Cx<'_>, host: HostId, m: f64) -> ScheduleError {
    let host = cx.cluster().host_name(host).to_owned();
    ScheduleError::weigher(weigher.name(), NonFiniteMultiplier { host, value: m })
}

/// A weigher's per-host multiplier that is not finite: the source of the
/// [`ScheduleError::Weigher`] that refuses it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("multiplier for host `{host}` is not finite ({value})")]
#[non_exhaustive]
pub struct NonFiniteMultiplier {
    /// The host the multiplier was given for.
    pub host: String,
    /// The multiplier.
    pub value: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(v: &[f64], b: Bounds) -> Vec<f64> {
        let mut v = v.to_vec();
        normalize(&mut v, b);
        v
    }

    #[test]
    fn normalisation_follows_the_filter_scheduler() {
        assert_eq!(norm(&[2.0, 4.0, 6.0], Bounds::NONE), vec![0.0, 0.5, 1.0]);
        assert_eq!(norm(&[3.0, 3.0], Bounds::NONE), vec![0.0, 0.0]);
        // Minimum fixed at 0: x / max, equal positive values all score 1, negatives clamp to 0.
        assert_eq!(norm(&[2.0, 4.0], Bounds::ZERO_MIN), vec![0.5, 1.0]);
        assert_eq!(norm(&[5.0, 5.0], Bounds::ZERO_MIN), vec![1.0, 1.0]);
        assert_eq!(norm(&[-5.0, 10.0], Bounds::ZERO_MIN), vec![0.0, 1.0]);
        assert_eq!(norm(&[0.0, 0.0], Bounds::ZERO_MIN), vec![0.0, 0.0]);
        assert_eq!(norm(&[1.0, 20.0], Bounds { min: None, max: Some(10.0) }), vec![0.0, 1.0]);
        assert_eq!(norm(&[f64::NAN, 1.0, 3.0], Bounds::NONE), vec![0.0, 0.0, 1.0]);
        assert!(norm(&[], Bounds::NONE).is_empty());
    }

    #[test]
    fn weigher_is_object_safe() {
        let w = weigher_fn("id", |_, h| h.0 as f64).with_bounds(Bounds::ZERO_MIN);
        let boxed: Box<dyn Weigher> = Box::new(w.clone());
        let arc: Arc<dyn Weigher> = Arc::new(w);
        assert_eq!(boxed.bounds(), Bounds::ZERO_MIN);
        assert_eq!(arc.name(), "id");
    }
}
