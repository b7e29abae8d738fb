//! The few pieces of the scheduler's filter pass that [`crate::capacity`] shares, so that it
//! counts with exactly the code that places.

use super::Scheduler;
use crate::filter::Rejections;
use crate::id::HostId;
use crate::request::{Cx, Prepared};
use crate::snapshot::CHUNK;

impl Scheduler {
    /// The largest request count this scheduler accepts.
    pub(crate) fn count_limit(&self) -> u32 {
        self.max_count
    }

    /// Whether `host` passes this scheduler's filters for instance `instance` of the request in
    /// `cx` (prepared `states`), rejections recorded in `rejections`: the per-instance pass of
    /// [`Scheduler::schedule`] for one host, the filters marked in `passed` skipped.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn passes_filters(
        &self,
        cx: &Cx<'_>,
        states: &[Prepared],
        passed: &[bool],
        instance: u32,
        host: HostId,
        rejections: &mut Rejections,
    ) -> bool {
        let mut one = [1u64 << (host.index() % CHUNK)];
        self.run_filters(cx, states, passed, instance, host.index() / CHUNK, &mut one, rejections);
        one[0] != 0
    }
}
