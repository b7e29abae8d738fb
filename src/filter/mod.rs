//! Filters: which hosts may take an instance.
//!
//! A [`Filter`] looks at one host and says [`Verdict::Pass`] or [`Verdict::Reject`] with a small
//! [`Reason`] code; text is built only when an explanation is rendered ([`Filter::describe`]).
//! Filters are object-safe (`Box<dyn Filter>` works), compose with [`FilterExt`] (`and`, `or`,
//! `not`, `named`), and a closure becomes one with [`filter_fn`].
//!
//! ```
//! use placewise::{filter_fn, Filter, ComputeFilter};
//! use placewise::filter::FilterExt;
//!
//! let no_canary = filter_fn("canary host", |cx, host| cx.cluster().label(host, "canary").is_none());
//! let filter = ComputeFilter.and(no_canary);
//! assert_eq!(filter.name(), "compute and canary host");
//! let boxed: Box<dyn Filter> = Box::new(filter);
//! # let _ = boxed;
//! ```

pub mod builtin;
pub(crate) mod chain;
mod combinator;
#[cfg(test)]
pub(crate) mod testkit;

pub use chain::FilterChain;
pub use combinator::{And, FilterExt, Named, Not, Or};

use crate::error::ScheduleError;
use crate::id::HostId;
use crate::request::{Cx, Prepared};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// Why a filter rejected a host: a code that means something to that filter only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Reason(pub u32);

/// A filter's answer for one host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The host may take the instance.
    Pass,
    /// The host may not, for this reason.
    Reject(Reason),
}

impl Verdict {
    /// A rejection with code `code`.
    #[inline]
    pub const fn reject(code: u32) -> Verdict {
        Verdict::Reject(Reason(code))
    }

    /// Whether this is [`Verdict::Pass`].
    #[inline]
    pub const fn is_pass(self) -> bool {
        matches!(self, Verdict::Pass)
    }
}

impl From<bool> for Verdict {
    /// `true` passes; `false` rejects with reason 0.
    #[inline]
    fn from(pass: bool) -> Verdict {
        if pass {
            Verdict::Pass
        } else {
            Verdict::Reject(Reason(0))
        }
    }
}

/// Collects the rejections of a filtering pass: a histogram by (filter, reason), and, when asked
/// for, every rejected host.
#[derive(Debug, Clone, Default)]
pub struct Rejections {
    filter: u32,
    instance: u32,
    counts: Vec<(u32, Reason, u32)>,
    /// Where in `counts` a (filter, reason) pair was last counted, by [`recent_slot`]: a hint,
    /// checked before use (a pair appears once in `counts`), so a count costs no search.
    recent: [u32; RECENT],
    hosts: Option<Vec<Rejected>>,
    error: Option<ScheduleError>,
}

/// How many (filter, reason) pairs [`Rejections`] remembers the place of.
const RECENT: usize = 32;

/// The slot of a (filter, reason) pair in [`Rejections::recent`].
#[inline]
fn recent_slot(filter: u32, reason: Reason) -> usize {
    (filter.wrapping_mul(4).wrapping_add(reason.0) as usize) % RECENT
}

/// One recorded rejection: which host, which filter (by position), why, and for which instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rejected {
    /// The host.
    pub host: HostId,
    /// The filter's position in the scheduler.
    pub filter: u32,
    /// The filter's reason.
    pub reason: Reason,
    /// The instance of the request being placed when the host was rejected.
    pub instance: u32,
}

impl Rejections {
    /// An empty collector; `per_host` also records each rejected host.
    pub fn new(per_host: bool) -> Self {
        Rejections {
            filter: 0,
            instance: 0,
            counts: Vec::new(),
            recent: [0; RECENT],
            hosts: per_host.then(Vec::new),
            error: None,
        }
    }

    /// Empties the collector, keeping its allocations.
    pub fn clear(&mut self, per_host: bool) {
        self.filter = 0;
        self.instance = 0;
        self.error = None;
        self.counts.clear();
        match (&mut self.hosts, per_host) {
            (Some(h), true) => h.clear(),
            (slot, want) => *slot = want.then(Vec::new),
        }
    }

    /// Sets which instance of the request the next rejections happen for.
    pub fn set_instance(&mut self, instance: u32) {
        self.instance = instance;
    }

    /// Records that a filter cannot judge the request at all (input the filter scheduler would
    /// raise on, such as a non-numeric value under a numeric extra-spec operator): the request
    /// fails with this error. The first error wins; the host in hand should be rejected.
    pub fn fail(&mut self, error: ScheduleError) {
        self.error.get_or_insert(error);
    }

    /// Puts the counts added since the first `from` in filter order, keeping each filter's own
    /// order: what a filter-by-filter pass over all chunks would have added, for a pass that ran
    /// chunk by chunk.
    pub(crate) fn order_by_filter(&mut self, from: usize) {
        if let Some(tail) = self.counts.get_mut(from..) {
            tail.sort_by_key(|c| c.0);
        }
    }

    /// The error recorded by [`fail`](Rejections::fail), taken out.
    pub fn take_error(&mut self) -> Option<ScheduleError> {
        self.error.take()
    }

    /// Sets which filter (by position in the scheduler) the next rejections belong to.
    pub fn set_filter(&mut self, filter: u32) {
        self.filter = filter;
    }

    /// Records that `host` was rejected for `reason` by the current filter.
    #[inline]
    pub fn reject(&mut self, host: HostId, reason: Reason) {
        let filter = self.filter;
        self.count(filter, reason, 1);
        if let Some(hosts) = &mut self.hosts {
            hosts.push(Rejected { host, filter, reason, instance: self.instance });
        }
    }

    /// Records every set lane of `lanes` in chunk `chunk` as rejected with one `reason`: the
    /// same counts and per-host records as [`reject`](Rejections::reject) lane by lane, at the
    /// cost of one count update when per-host records are off.
    #[inline]
    pub fn reject_lanes(&mut self, chunk: usize, lanes: u64, reason: Reason) {
        if lanes == 0 {
            return;
        }
        let filter = self.filter;
        self.count(filter, reason, lanes.count_ones());
        if self.hosts.is_some() {
            self.record_lanes(chunk, lanes, reason);
        }
    }

    /// The per-host records of [`reject_lanes`](Rejections::reject_lanes), apart so the
    /// counting inlines into the chunk checks.
    #[cold]
    #[inline(never)]
    fn record_lanes(&mut self, chunk: usize, lanes: u64, reason: Reason) {
        let (filter, instance) = (self.filter, self.instance);
        if let Some(hosts) = &mut self.hosts {
            let mut rest = lanes;
            while rest != 0 {
                let host = HostId((chunk as u32) << 6 | rest.trailing_zeros());
                hosts.push(Rejected { host, filter, reason, instance });
                rest &= rest - 1;
            }
        }
    }

    /// Adds `n` to the count of (`filter`, `reason`), appended to the counts when new.
    #[inline]
    fn count(&mut self, filter: u32, reason: Reason, n: u32) {
        let slot = recent_slot(filter, reason);
        if let Some(c) = self.counts.get_mut(self.recent[slot] as usize) {
            if c.0 == filter && c.1 == reason {
                c.2 += n;
                return;
            }
        }
        let at = match self.counts.iter().rposition(|c| c.0 == filter && c.1 == reason) {
            Some(i) => {
                self.counts[i].2 += n;
                i
            }
            None => {
                self.counts.push((filter, reason, n));
                self.counts.len() - 1
            }
        };
        self.recent[slot] = at as u32;
    }

    /// Runs `verdict` for each set lane of `mask` in chunk `chunk`, records the rejections and
    /// returns the passing lanes: the loop every per-host chunk check comes down to.
    #[inline]
    pub fn check_lanes(&mut self, chunk: usize, mask: u64, mut verdict: impl FnMut(HostId) -> Verdict) -> u64 {
        let mut pass = 0;
        let mut rest = mask;
        while rest != 0 {
            let lane = rest.trailing_zeros();
            let host = HostId((chunk as u32) << 6 | lane);
            match verdict(host) {
                Verdict::Pass => pass |= 1u64 << lane,
                Verdict::Reject(r) => self.reject(host, r),
            }
            rest &= rest - 1;
        }
        pass
    }

    /// As [`check_lanes`](Rejections::check_lanes) for a judgement that can fail the request:
    /// the first error is recorded with [`fail`](Rejections::fail) and its host is rejected with
    /// `on_error`.
    pub fn try_lanes(
        &mut self,
        chunk: usize,
        mask: u64,
        on_error: Reason,
        mut verdict: impl FnMut(HostId) -> Result<Verdict, ScheduleError>,
    ) -> u64 {
        let mut error = None;
        let pass = self.check_lanes(chunk, mask, |h| {
            verdict(h).unwrap_or_else(|e| {
                error.get_or_insert(e);
                Verdict::Reject(on_error)
            })
        });
        if let Some(e) = error {
            self.fail(e);
        }
        pass
    }

    /// `(filter position, reason, count)` in the order first seen.
    pub fn counts(&self) -> &[(u32, Reason, u32)] {
        &self.counts
    }

    /// Every rejected host with its filter position, reason and instance, if recorded.
    pub fn hosts(&self) -> Option<&[Rejected]> {
        self.hosts.as_deref()
    }

    /// Total number of rejections.
    pub fn total(&self) -> u32 {
        self.counts.iter().map(|c| c.2).sum()
    }
}

/// Decides, host by host, whether a host may take an instance.
///
/// Only [`name`](Filter::name) and [`check`](Filter::check) are required. The scheduler calls
/// [`prepare`](Filter::prepare) once per request (to compile whatever the request carries for
/// this filter; the result comes back through [`Cx::state`]), then
/// [`check_chunk`](Filter::check_chunk) for every chunk of 64 hosts that still has candidates.
///
/// Filters are assumed **monotone within a request**: placing an instance never makes a rejected
/// host acceptable, so the scheduler re-checks only the hosts that passed for the previous
/// instance.
pub trait Filter: Send + Sync {
    /// A short name for explanations and configuration.
    fn name(&self) -> &str;

    /// Per-request preparation. The default prepares nothing.
    ///
    /// # Errors
    ///
    /// A [`ScheduleError`] when the request carries input this filter cannot use.
    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        let _ = cx;
        Ok(None)
    }

    /// The verdict for one host.
    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict;

    /// The candidates of chunk `chunk` that pass: bit `i` of `mask` is host `64·chunk + i`
    /// (see [`Cluster::hot_chunk`](crate::snapshot::Cluster::hot_chunk)); the result is a subset of
    /// `mask`, and every host dropped is recorded in `rejected` with its reason.
    ///
    /// The default calls [`check`](Filter::check) for each set bit; it is compiled per filter
    /// type, so the per-host call is static even when the filter is used as `dyn Filter`. The
    /// built-ins override it with whole-chunk arithmetic on the dense columns.
    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        rejected.check_lanes(chunk, mask, |h| self.check(cx, h))
    }

    /// Text for a rejection reason, such as `insufficient memory`. The default is
    /// `rejected by <name>`.
    fn describe(&self, cx: &Cx<'_>, reason: Reason) -> String {
        let _ = (cx, reason);
        format!("rejected by {}", self.name())
    }

    /// Every reason this filter has to reject `host`, for a per-host verdict
    /// ([`HostVerdict::reasons`](crate::explain::HostVerdict::reasons)): `first`, the reason
    /// it gave when it rejected the host, then any other it also holds (a resource filter lists
    /// every resource the host is short of). Asked only when verdicts are, for hosts this
    /// filter rejected, with the call's last context. The default pushes `first` alone.
    fn all_reasons(&self, cx: &Cx<'_>, host: HostId, first: Reason, out: &mut Vec<Reason>) {
        let _ = (cx, host);
        out.push(first);
    }

    /// Whether the verdict depends only on the request and the snapshot, not on earlier
    /// instances of the same request; such a filter runs for the first instance only.
    fn once_per_request(&self) -> bool {
        false
    }

    /// Whether the verdict for a host depends only on the snapshot, the request and the
    /// consumption recorded on that same host. When every filter and weigher of a scheduler is
    /// host-local, a pick can change only the picked host, and the scheduler re-examines just
    /// that host for the next instance. The default is `false`, which is always safe.
    fn host_local(&self) -> bool {
        false
    }

    /// [`host_local`](Filter::host_local) for one request: a filter that looks beyond the host
    /// only for some requests (an affinity group's hosts) may say it is host-local for the
    /// others. The default is `host_local()`.
    fn host_local_for(&self, cx: &Cx<'_>) -> bool {
        let _ = cx;
        self.host_local()
    }
}

macro_rules! forward_filter {
    ($($ty:ty),*) => {$(
        impl<F: Filter + ?Sized> Filter for $ty {
            fn name(&self) -> &str { (**self).name() }
            fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> { (**self).prepare(cx) }
            fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict { (**self).check(cx, host) }
            fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
                (**self).check_chunk(cx, chunk, mask, rejected)
            }
            fn describe(&self, cx: &Cx<'_>, reason: Reason) -> String { (**self).describe(cx, reason) }
            fn all_reasons(&self, cx: &Cx<'_>, host: HostId, first: Reason, out: &mut Vec<Reason>) {
                (**self).all_reasons(cx, host, first, out)
            }
            fn once_per_request(&self) -> bool { (**self).once_per_request() }
            fn host_local(&self) -> bool { (**self).host_local() }
            fn host_local_for(&self, cx: &Cx<'_>) -> bool { (**self).host_local_for(cx) }
        }
    )*};
}

forward_filter!(&F, Box<F>, Arc<F>);

/// A filter made from a closure; see [`filter_fn`].
#[derive(Clone)]
pub struct FilterFn<F> {
    name: String,
    local: bool,
    f: F,
}

impl<F> fmt::Debug for FilterFn<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FilterFn").field("name", &self.name).field("local", &self.local).finish_non_exhaustive()
    }
}

/// Wraps a closure `|cx, host| -> bool` as a [`Filter`] called `name`. A rejected host is
/// explained as `rejected by <name>`.
///
/// The closure is not taken to be [host-local](Filter::host_local), the safe default: after
/// each pick of a request the scheduler runs it again over every candidate (a burst loses its
/// incremental path), and [`capacity::instances`](crate::capacity::instances) counts by
/// replaying the scheduler ([`Method::Replay`](crate::capacity::Method::Replay)) instead of
/// host by host. When the verdict for a host reads only that host (its record, its labels and
/// what earlier instances of the request consumed there), say so with
/// [`local_to_host`](FilterFn::local_to_host).
///
/// ```
/// use placewise::{filter_fn, Filter};
///
/// let plain = filter_fn("not canary", |cx, h| cx.cluster().label(h, "canary").is_none());
/// assert!(!plain.host_local());
/// let local = plain.local_to_host();
/// assert!(local.host_local());
/// ```
pub fn filter_fn<F>(name: impl Into<String>, f: F) -> FilterFn<F>
where
    F: Fn(&Cx<'_>, HostId) -> bool + Send + Sync,
{
    FilterFn { name: name.into(), local: false, f }
}

impl<F> FilterFn<F> {
    /// Declares the closure host-local ([`Filter::host_local`]): its verdict for a host depends
    /// only on the snapshot, the request and what earlier instances of the request consumed on
    /// that same host. A wrong declaration gives wrong answers, so declare only what holds.
    pub fn local_to_host(mut self) -> Self {
        self.local = true;
        self
    }
}

impl<F> Filter for FilterFn<F>
where
    F: Fn(&Cx<'_>, HostId) -> bool + Send + Sync,
{
    fn name(&self) -> &str {
        &self.name
    }

    #[inline]
    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        (self.f)(cx, host).into()
    }

    fn host_local(&self) -> bool {
        self.local
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::Strategy;

    #[test]
    fn filter_is_object_safe_and_forwards() {
        let f = filter_fn("even", |_, h| h.0 % 2 == 0);
        let boxed: Box<dyn Filter> = Box::new(f.clone());
        let arc: Arc<dyn Filter> = Arc::new(f.clone());
        let by_ref: &dyn Filter = &f;
        for f in [&*boxed, &*arc, by_ref, &&f as &dyn Filter] {
            assert_eq!(f.name(), "even");
        }
    }

    #[test]
    fn rejections_count_by_filter_and_reason() {
        let mut r = Rejections::new(true);
        r.set_filter(0);
        r.reject(HostId(1), Reason(2));
        r.reject(HostId(2), Reason(2));
        r.set_filter(1);
        r.reject(HostId(3), Reason(2));
        assert_eq!(r.counts(), &[(0, Reason(2), 2), (1, Reason(2), 1)]);
        assert_eq!(r.total(), 3);
        assert_eq!(r.hosts().unwrap().len(), 3);
        assert_eq!(r.hosts().unwrap()[2].filter, 1);
        r.clear(false);
        assert!(r.hosts().is_none());
        assert_eq!(r.total(), 0);
    }

    /// One step on a [`Rejections`]: switch filter, reject a host or a chunk's lanes, put the
    /// counts since some point in filter order, or clear.
    #[derive(Debug, Clone)]
    enum Step {
        Filter(u32),
        Reject(u32),
        Lanes(u64, u32),
        Order(usize),
        Clear,
    }

    proptest::proptest! {
        #[test]
        fn counts_are_those_of_a_search_from_the_end(steps in proptest::collection::vec(
            proptest::prop_oneof![
                2 => (0u32..12).prop_map(Step::Filter),
                6 => (0u32..9).prop_map(Step::Reject),
                3 => (proptest::prelude::any::<u64>(), 0u32..9).prop_map(|(l, r)| Step::Lanes(l, r)),
                1 => (0usize..20).prop_map(Step::Order),
                1 => proptest::strategy::Just(Step::Clear),
            ],
            0..200,
        )) {
            let mut r = Rejections::new(false);
            // The model: every count found by a search from the end.
            let (mut model, mut filter) = (Vec::<(u32, Reason, u32)>::new(), 0);
            for step in steps {
                let mut add = |reason: u32, n: u32| {
                    match model.iter_mut().rev().find(|c| c.0 == filter && c.1 == Reason(reason)) {
                        Some(c) => c.2 += n,
                        None => model.push((filter, Reason(reason), n)),
                    }
                };
                match step {
                    Step::Filter(f) => {
                        filter = f;
                        r.set_filter(f);
                    }
                    Step::Reject(reason) => {
                        add(reason, 1);
                        r.reject(HostId(0), Reason(reason));
                    }
                    Step::Lanes(lanes, reason) => {
                        if lanes != 0 {
                            add(reason, lanes.count_ones());
                        }
                        r.reject_lanes(1, lanes, Reason(reason));
                    }
                    Step::Order(from) => {
                        if let Some(tail) = model.get_mut(from..) {
                            tail.sort_by_key(|c| c.0);
                        }
                        r.order_by_filter(from);
                    }
                    Step::Clear => {
                        model.clear();
                        filter = 0;
                        r.clear(false);
                    }
                }
                proptest::prop_assert_eq!(r.counts(), &model[..]);
            }
        }
    }
}
