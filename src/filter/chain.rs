//! The filter chain every engine runs its filters through: filters prepared for one request,
//! judged a chunk of 64 hosts at a time.

use super::{Filter, Reason, Rejections};
use crate::error::ScheduleError;
use crate::id::HostId;
use crate::request::{Cx, Prepared};
use crate::snapshot::CHUNK;

/// Runs `filters` (each with its position and its context) in order over the lanes `mask` of
/// chunk `chunk`, counting each rejection under its filter's position; stops once no lane is
/// left. Returns the lanes that passed. The one filter loop: the core scheduler and
/// [`FilterChain`] both judge through it.
#[inline]
pub(crate) fn judge_chunk<'a, 'f: 'a>(
    filters: impl IntoIterator<Item = (u32, &'f dyn Filter, &'a Cx<'a>)>,
    chunk: usize,
    mut mask: u64,
    rejections: &mut Rejections,
) -> u64 {
    for (position, filter, cx) in filters {
        if mask == 0 {
            break;
        }
        rejections.set_filter(position);
        mask = filter.check_chunk(cx, chunk, mask, rejections);
    }
    mask
}

/// Filters with their states for one request, in order. Every engine that runs a caller's
/// filters judges hosts through one: the same preparation (a failing
/// [`prepare`](Filter::prepare) is an error, never a silent rejection), the same order (a host
/// stops at the first filter that rejects it), the same counts per filter and
/// [`Reason`] in a [`Rejections`].
///
/// ```
/// use placewise::filter::FilterChain;
/// use placewise::{filter_fn, Cluster, Cx, Filter, HostSpec, Request};
/// use placewise::filter::Rejections;
/// use placewise::snapshot::Overlay;
///
/// let cluster = Cluster::builder()
///     .host(HostSpec::new("a").memory_mb(4096.0))
///     .host(HostSpec::new("b").memory_mb(8192.0))
///     .build()?;
/// let request = Request::new(1);
/// let compiled = request.compile(&cluster)?;
/// let overlay = Overlay::new();
/// let cx = Cx::new(&cluster, &request, &compiled, &overlay, 0);
///
/// let filters: Vec<Box<dyn Filter>> = vec![Box::new(filter_fn("not a", |cx, h| &*cx.host(h).name != "a"))];
/// let chain = FilterChain::prepare(&filters, &cx)?;
/// let mut rejections = Rejections::new(false);
/// assert_eq!(chain.judge_chunk(&cx, 0, 0b11, &mut rejections), 0b10);
/// assert_eq!(chain.describe(&cx, 0, rejections.counts()[0].1), "rejected by not a");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FilterChain<'f> {
    filters: Vec<(&'f dyn Filter, Prepared)>,
}

impl std::fmt::Debug for FilterChain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.filters.iter().map(|(filter, _)| filter.name())).finish()
    }
}

impl<'f> FilterChain<'f> {
    /// Prepares each of `filters` for the request `cx` carries, in order. Computes in
    /// O(filters) plus what their preparations cost.
    ///
    /// # Errors
    ///
    /// The first filter's [`ScheduleError`] from [`Filter::prepare`].
    pub fn prepare<F: AsRef<dyn Filter + 'f>>(filters: &'f [F], cx: &Cx<'_>) -> Result<Self, ScheduleError> {
        let filters = filters
            .iter()
            .map(|f| {
                let f = f.as_ref();
                f.prepare(cx).map(|state| (f, state))
            })
            .collect::<Result<_, _>>()?;
        Ok(FilterChain { filters })
    }

    /// How many filters.
    pub fn len(&self) -> usize {
        self.filters.len()
    }

    /// Whether the chain has no filter (every host passes).
    pub fn is_empty(&self) -> bool {
        self.filters.is_empty()
    }

    /// Filter number `i`'s name.
    ///
    /// # Panics
    ///
    /// When `i` is out of range.
    pub fn name(&self, i: u32) -> &str {
        self.filters[i as usize].0.name()
    }

    /// Runs the filters over the lanes `mask` of chunk `chunk` (host `64·chunk + i` is lane `i`)
    /// and returns the lanes that pass; each rejection is counted under its filter's position
    /// and reason. Computes in O(filters) chunk checks at most.
    pub fn judge_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejections: &mut Rejections) -> u64 {
        let mut left = mask;
        for (i, (filter, state)) in self.filters.iter().enumerate() {
            if left == 0 {
                break;
            }
            let fcx = cx.with_state(state.as_deref());
            left = judge_chunk([(i as u32, *filter, &fcx)], chunk, left, rejections);
        }
        left
    }

    /// [`judge_chunk`](FilterChain::judge_chunk), also writing into `first[lane]` one more than
    /// the position of the filter that rejected each lane of `mask` (lanes that pass get 0;
    /// lanes outside `mask` are left as they are).
    pub fn judge_chunk_noting(
        &self,
        cx: &Cx<'_>,
        chunk: usize,
        mask: u64,
        rejections: &mut Rejections,
        first: &mut [u16; CHUNK],
    ) -> u64 {
        let mut left = mask;
        for (i, (filter, state)) in self.filters.iter().enumerate() {
            if left == 0 {
                break;
            }
            let fcx = cx.with_state(state.as_deref());
            let pass = judge_chunk([(i as u32, *filter, &fcx)], chunk, left, rejections) & left;
            let mut dropped = left & !pass;
            while dropped != 0 {
                first[dropped.trailing_zeros() as usize] = i as u16 + 1;
                dropped &= dropped - 1;
            }
            left = pass;
        }
        let mut passed = left;
        while passed != 0 {
            first[passed.trailing_zeros() as usize] = 0;
            passed &= passed - 1;
        }
        left
    }

    /// The text of filter number `i`'s `reason`, from [`Filter::describe`] with its state.
    ///
    /// # Panics
    ///
    /// When `i` is out of range.
    pub fn describe(&self, cx: &Cx<'_>, i: u32, reason: Reason) -> String {
        let (filter, state) = &self.filters[i as usize];
        filter.describe(&cx.with_state(state.as_deref()), reason)
    }

    /// The words of every reason filter `i` has against `host` ([`Filter::all_reasons`]),
    /// `reason`'s first: a per-host verdict's
    /// [`reasons`](crate::explain::HostVerdict::reasons).
    ///
    /// # Panics
    ///
    /// When `i` is out of range.
    pub fn reasons(&self, cx: &Cx<'_>, i: u32, host: HostId, reason: Reason) -> Vec<String> {
        let (filter, state) = &self.filters[i as usize];
        every_reason(*filter, &cx.with_state(state.as_deref()), host, reason, &mut Vec::new())
    }
}

/// The words of every reason `filter` has against `host` ([`Filter::all_reasons`]), `first`'s
/// first and each once; `codes` is a reused buffer.
pub(crate) fn every_reason(
    filter: &dyn Filter,
    cx: &Cx<'_>,
    host: HostId,
    first: Reason,
    codes: &mut Vec<Reason>,
) -> Vec<String> {
    codes.clear();
    filter.all_reasons(cx, host, first, codes);
    let mut words = vec![filter.describe(cx, first)];
    for (i, &code) in codes.iter().enumerate() {
        if code != first && !codes[..i].contains(&code) {
            words.push(filter.describe(cx, code));
        }
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::{filter_fn, Verdict};
    use crate::id::HostId;
    use crate::request::Request;
    use crate::snapshot::{Cluster, HostSpec, Overlay};

    struct Failing;

    impl Filter for Failing {
        fn name(&self) -> &str {
            "failing"
        }

        fn prepare(&self, _: &Cx<'_>) -> Result<Prepared, ScheduleError> {
            Err(ScheduleError::filter("failing", "bad input"))
        }

        fn check(&self, _: &Cx<'_>, _: HostId) -> Verdict {
            Verdict::Pass
        }
    }

    fn cluster(n: usize) -> Cluster {
        let mut b = Cluster::builder();
        for i in 0..n {
            b = b.host(HostSpec::new(format!("h{i}")));
        }
        b.build().unwrap()
    }

    #[test]
    fn hosts_stop_at_the_first_rejecting_filter_and_are_counted_there() {
        let cluster = cluster(4);
        let request = Request::new(1);
        let compiled = request.compile(&cluster).unwrap();
        let overlay = Overlay::new();
        let cx = Cx::new(&cluster, &request, &compiled, &overlay, 0);
        let filters: Vec<Box<dyn Filter>> = vec![
            Box::new(filter_fn("odd", |_: &Cx<'_>, h: HostId| h.0 % 2 == 0)),
            Box::new(filter_fn("three", |_: &Cx<'_>, h: HostId| h.0 < 2)),
        ];
        let chain = FilterChain::prepare(&filters, &cx).unwrap();
        let mut rejections = Rejections::new(false);
        let mut first = [9u16; CHUNK];
        let left = chain.judge_chunk_noting(&cx, 0, 0b1111, &mut rejections, &mut first);
        assert_eq!(left, 0b0001);
        assert_eq!(&first[..5], &[0, 1, 2, 1, 9]);
        let mut counts = rejections.counts().to_vec();
        counts.sort_unstable();
        assert_eq!(counts, [(0, Reason(0), 2), (1, Reason(0), 1)]);
        let mut again = Rejections::new(false);
        assert_eq!(chain.judge_chunk(&cx, 0, 0b1111, &mut again), left);
        assert_eq!(chain.len(), 2);
        assert_eq!(chain.name(1), "three");
    }

    #[test]
    fn a_failing_prepare_is_an_error() {
        let cluster = cluster(1);
        let request = Request::new(1);
        let compiled = request.compile(&cluster).unwrap();
        let overlay = Overlay::new();
        let cx = Cx::new(&cluster, &request, &compiled, &overlay, 0);
        let filters: Vec<Box<dyn Filter>> = vec![Box::new(Failing)];
        let err = FilterChain::prepare(&filters, &cx).unwrap_err();
        assert!(matches!(err, ScheduleError::Filter { ref filter, .. } if filter == "failing"));
    }
}
