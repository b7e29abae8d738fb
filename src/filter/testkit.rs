//! Runs one filter over a cluster the way the scheduler does, checking that the chunk path and
//! the per-host path agree (tests only).

use crate::error::ScheduleError;
use crate::filter::{Filter, Rejections, Verdict};
use crate::id::HostId;
use crate::request::{Cx, Part, Request};
use crate::snapshot::{Cluster, Overlay};

/// A core request, or an engine's request whose own part the filters see through
/// `Cx::part`.
pub(crate) trait Parts {
    /// The core request and the engine's part.
    fn parts(&self) -> (&Request, Option<Part<'_>>);
}

impl Parts for Request {
    fn parts(&self) -> (&Request, Option<Part<'_>>) {
        (self, None)
    }
}

/// The context of instance `instance` of `request` with consumption `overlay`.
pub(crate) fn cx<'a>(
    cluster: &'a Cluster,
    request: &'a (impl Parts + ?Sized),
    compiled: &'a crate::request::CompiledRequest,
    overlay: &'a Overlay,
    instance: u32,
) -> Cx<'a> {
    let (core, part) = request.parts();
    Cx::new(cluster, core, compiled, overlay, instance).with_part(part)
}

/// The names of the hosts `filter` passes for instance `instance` with consumption `overlay`,
/// or the error it records. Panics if `check` and `check_chunk` disagree.
pub(crate) fn run_at(
    filter: &dyn Filter,
    cluster: &Cluster,
    request: &impl Parts,
    overlay: &Overlay,
    instance: u32,
) -> Result<Vec<String>, ScheduleError> {
    let compiled = request.parts().0.compile(cluster)?;
    let cx0 = cx(cluster, request, &compiled, overlay, instance);
    let state = filter.prepare(&cx0)?;
    let cx = cx0.with_state(state.as_deref());
    let mut rejections = Rejections::new(true);
    let mut passed = Vec::new();
    for chunk in 0..cluster.chunk_count() {
        let mask = cluster.hot_chunk(chunk).live;
        let pass = filter.check_chunk(&cx, chunk, mask, &mut rejections);
        for lane in 0..64 {
            if mask >> lane & 1 == 1 {
                let host = HostId((chunk as u32) << 6 | lane);
                let single = filter.check(&cx, host);
                assert_eq!(single.is_pass(), pass >> lane & 1 == 1, "check and check_chunk disagree on {host:?}");
                if let Verdict::Reject(r) = single {
                    // Rendering every reason must not panic.
                    let _ = filter.describe(&cx, r);
                }
                if pass >> lane & 1 == 1 {
                    passed.push(cluster.host_name(host).to_owned());
                }
            }
        }
    }
    match rejections.take_error() {
        Some(e) => Err(e),
        None => Ok(passed),
    }
}

/// [`run_at`] for instance 0 with no consumption.
pub(crate) fn run(filter: &dyn Filter, cluster: &Cluster, request: &impl Parts) -> Result<Vec<String>, ScheduleError> {
    run_at(filter, cluster, request, &Overlay::new(), 0)
}

/// The rejection text of `host` (which must be rejected).
pub(crate) fn reason(filter: &dyn Filter, cluster: &Cluster, request: &impl Parts, host: &str) -> String {
    let compiled = request.parts().0.compile(cluster).unwrap();
    let overlay = Overlay::new();
    let cx0 = cx(cluster, request, &compiled, &overlay, 0);
    let state = filter.prepare(&cx0).unwrap();
    let cx = cx0.with_state(state.as_deref());
    match filter.check(&cx, cluster.host_id(host).unwrap()) {
        Verdict::Reject(r) => filter.describe(&cx, r),
        Verdict::Pass => panic!("{host} passed"),
    }
}

/// Sorted names for comparisons.
pub(crate) fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}
