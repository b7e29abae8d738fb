//! The few pieces of the scheduler's filter pass that [`crate::capacity`] shares, so that it
//! counts with exactly the code that places.

use super::{restrict_hosts, Scheduler};
use crate::filter::Rejections;
use crate::id::HostId;
use crate::nova::request::VmSpec;
use crate::request::{Cx, Prepared};
use crate::snapshot::{Cluster, CHUNK};

impl Scheduler {
    /// The largest request count this scheduler accepts.
    pub(crate) fn count_limit(&self) -> u32 {
        self.max_count
    }

    /// Whether `host` passes this scheduler's filters for instance `instance` of the request in
    /// `cx` (prepared `states`), rejections recorded in `rejections`: the per-instance pass of
    /// [`Scheduler::schedule`] for one host.
    pub(crate) fn passes_filters(
        &self,
        cx: &Cx<'_>,
        states: &[Prepared],
        instance: u32,
        host: HostId,
        rejections: &mut Rejections,
    ) -> bool {
        let mut one = [1u64 << (host.index() % CHUNK)];
        self.run_filters(cx, states, instance, host.index() / CHUNK, &mut one, rejections);
        one[0] != 0
    }

    /// Applies the request's host lists to whole-cluster candidate masks.
    pub(crate) fn restrict_to_host_lists(cluster: &Cluster, vm: &VmSpec, masks: &mut [u64]) {
        restrict_hosts(cluster, vm, masks);
    }
}
