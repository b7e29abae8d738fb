//! `and`, `or`, `not` and `named` on filters.

use super::{Filter, Reason, Verdict};
use crate::error::ScheduleError;
use crate::id::HostId;
use crate::request::{Cx, Prepared};

/// Combinators for every [`Filter`].
pub trait FilterExt: Filter + Sized {
    /// Passes hosts both filters pass; a rejection keeps the rejecting side's reason.
    fn and<B: Filter>(self, other: B) -> And<Self, B> {
        let name = format!("{} and {}", self.name(), other.name());
        And { a: self, b: other, name }
    }

    /// Passes hosts either filter passes; a rejection carries both reasons. (Combinators pack
    /// their children's reason codes: codes below 2^15 survive any nesting of two levels.)
    fn or<B: Filter>(self, other: B) -> Or<Self, B> {
        let name = format!("{} or {}", self.name(), other.name());
        Or { a: self, b: other, name }
    }

    /// Passes exactly the hosts this filter rejects.
    fn not(self) -> Not<Self> {
        let name = format!("not {}", self.name());
        Not { a: self, name }
    }

    /// The same filter under another name.
    fn named(self, name: impl Into<String>) -> Named<Self> {
        Named { a: self, name: name.into() }
    }
}

impl<F: Filter> FilterExt for F {}

struct Pair(Prepared, Prepared);

fn prepare_pair(a: &dyn Filter, b: &dyn Filter, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
    let (pa, pb) = (a.prepare(cx)?, b.prepare(cx)?);
    Ok(if pa.is_none() && pb.is_none() { None } else { Some(Box::new(Pair(pa, pb))) })
}

/// The two children's contexts, each with its own prepared state.
#[inline]
fn split<'a>(cx: &Cx<'a>) -> (Cx<'a>, Cx<'a>) {
    match cx.state::<Pair>() {
        Some(Pair(a, b)) => (cx.with_state(a.as_deref()), cx.with_state(b.as_deref())),
        None => (cx.with_state(None), cx.with_state(None)),
    }
}

/// See [`FilterExt::and`].
#[derive(Debug, Clone)]
pub struct And<A, B> {
    a: A,
    b: B,
    name: String,
}

impl<A: Filter, B: Filter> Filter for And<A, B> {
    fn name(&self) -> &str {
        &self.name
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        prepare_pair(&self.a, &self.b, cx)
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        let (ca, cb) = split(cx);
        match self.a.check(&ca, host) {
            Verdict::Reject(r) => Verdict::Reject(Reason(r.0 << 1)),
            Verdict::Pass => match self.b.check(&cb, host) {
                Verdict::Reject(r) => Verdict::Reject(Reason((r.0 << 1) | 1)),
                Verdict::Pass => Verdict::Pass,
            },
        }
    }

    fn describe(&self, cx: &Cx<'_>, reason: Reason) -> String {
        let (ca, cb) = split(cx);
        let inner = Reason(reason.0 >> 1);
        if reason.0 & 1 == 0 {
            self.a.describe(&ca, inner)
        } else {
            self.b.describe(&cb, inner)
        }
    }

    fn once_per_request(&self) -> bool {
        self.a.once_per_request() && self.b.once_per_request()
    }

    fn host_local(&self) -> bool {
        self.a.host_local() && self.b.host_local()
    }

    fn host_local_for(&self, cx: &Cx<'_>) -> bool {
        let (ca, cb) = split(cx);
        self.a.host_local_for(&ca) && self.b.host_local_for(&cb)
    }
}

/// See [`FilterExt::or`].
#[derive(Debug, Clone)]
pub struct Or<A, B> {
    a: A,
    b: B,
    name: String,
}

impl<A: Filter, B: Filter> Filter for Or<A, B> {
    fn name(&self) -> &str {
        &self.name
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        prepare_pair(&self.a, &self.b, cx)
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        let (ca, cb) = split(cx);
        match (self.a.check(&ca, host), self.b.check(&cb, host)) {
            (Verdict::Reject(ra), Verdict::Reject(rb)) => Verdict::Reject(Reason((ra.0 & 0xFFFF) | (rb.0 << 16))),
            _ => Verdict::Pass,
        }
    }

    fn describe(&self, cx: &Cx<'_>, reason: Reason) -> String {
        let (ca, cb) = split(cx);
        format!(
            "{} and {}",
            self.a.describe(&ca, Reason(reason.0 & 0xFFFF)),
            self.b.describe(&cb, Reason(reason.0 >> 16))
        )
    }

    fn once_per_request(&self) -> bool {
        self.a.once_per_request() && self.b.once_per_request()
    }

    fn host_local(&self) -> bool {
        self.a.host_local() && self.b.host_local()
    }

    fn host_local_for(&self, cx: &Cx<'_>) -> bool {
        let (ca, cb) = split(cx);
        self.a.host_local_for(&ca) && self.b.host_local_for(&cb)
    }
}

/// See [`FilterExt::not`].
#[derive(Debug, Clone)]
pub struct Not<A> {
    a: A,
    name: String,
}

impl<A: Filter> Filter for Not<A> {
    fn name(&self) -> &str {
        &self.name
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        self.a.prepare(cx)
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        match self.a.check(cx, host) {
            Verdict::Pass => Verdict::reject(0),
            Verdict::Reject(_) => Verdict::Pass,
        }
    }

    fn describe(&self, _cx: &Cx<'_>, _reason: Reason) -> String {
        format!("passed {}", self.a.name())
    }

    fn once_per_request(&self) -> bool {
        self.a.once_per_request()
    }

    fn host_local(&self) -> bool {
        self.a.host_local()
    }

    fn host_local_for(&self, cx: &Cx<'_>) -> bool {
        self.a.host_local_for(cx)
    }
}

/// See [`FilterExt::named`].
#[derive(Debug, Clone)]
pub struct Named<A> {
    a: A,
    name: String,
}

impl<A: Filter> Filter for Named<A> {
    fn name(&self) -> &str {
        &self.name
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        self.a.prepare(cx)
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        self.a.check(cx, host)
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut super::Rejections) -> u64 {
        self.a.check_chunk(cx, chunk, mask, rejected)
    }

    fn describe(&self, cx: &Cx<'_>, reason: Reason) -> String {
        self.a.describe(cx, reason)
    }

    fn all_reasons(&self, cx: &Cx<'_>, host: HostId, first: Reason, out: &mut Vec<Reason>) {
        self.a.all_reasons(cx, host, first, out)
    }

    fn once_per_request(&self) -> bool {
        self.a.once_per_request()
    }

    fn host_local(&self) -> bool {
        self.a.host_local()
    }

    fn host_local_for(&self, cx: &Cx<'_>) -> bool {
        self.a.host_local_for(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::filter_fn;
    use crate::request::Request;
    use crate::snapshot::Cluster;
    use crate::snapshot::{HostSpec, Overlay};

    #[test]
    fn boolean_algebra_and_reasons() {
        let cluster = {
            let mut b = Cluster::builder();
            for i in 0..4 {
                b = b.host(HostSpec::new(format!("h{i}")));
            }
            b.build().unwrap()
        };
        let req = Request::new(1);
        let compiled = req.compile(&cluster).unwrap();
        let overlay = Overlay::new();
        let cx = Cx::new(&cluster, &req, &compiled, &overlay, 0);
        let even = filter_fn("even", |_, h| h.0 % 2 == 0);
        let small = filter_fn("small", |_, h| h.0 < 2);
        let pass = |f: &dyn Filter| (0..4).filter(|&i| f.check(&cx, HostId(i)).is_pass()).collect::<Vec<_>>();
        assert_eq!(pass(&even.clone().and(small.clone())), vec![0]);
        assert_eq!(pass(&even.clone().or(small.clone())), vec![0, 1, 2]);
        assert_eq!(pass(&even.clone().not()), vec![1, 3]);
        assert_eq!(pass(&even.clone().named("x")), vec![0, 2]);

        let and = even.clone().and(small.clone());
        let Verdict::Reject(r) = and.check(&cx, HostId(2)) else { panic!("h2 is not small") };
        assert_eq!(and.describe(&cx, r), "rejected by small");
        let Verdict::Reject(r) = and.check(&cx, HostId(1)) else { panic!("h1 is odd") };
        assert_eq!(and.describe(&cx, r), "rejected by even");
        let or = even.clone().or(small);
        let Verdict::Reject(r) = or.check(&cx, HostId(3)) else { panic!("h3 is neither") };
        assert_eq!(or.describe(&cx, r), "rejected by even and rejected by small");
        assert_eq!(even.not().name(), "not even");
    }
}
