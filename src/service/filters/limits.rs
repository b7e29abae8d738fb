//! Container layer, memory and CPU limits against what is left on the host.

use super::{fits, fits_named};
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::{HostId, ResourceId};
use crate::request::Cx;
use crate::service::site::CONTAINER_LAYER_MB;
use crate::service::Limits;

/// Passes hosts with the instance's memory, CPUs and container layer space still unallocated:
/// `(capacity − reserved) × allocation_ratio − used` of `memory_mb`, `vcpus` and
/// `container_layer_mb` (over-commit only where the snapshot gives a ratio above 1).
///
/// A layer limit needs a host whose container storage enforces quotas: a host that does not
/// declare `container_layer_mb` is rejected when the service sets one.
///
/// Reasons: `insufficient memory`, `insufficient CPU`, `insufficient container layer space`,
/// `no container layer quota`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContainerLimitsFilter {
    limits: Limits,
}

impl ContainerLimitsFilter {
    /// Reason: not enough memory left.
    pub const MEMORY: Reason = Reason(0);
    /// Reason: not enough CPU left.
    pub const CPU: Reason = Reason(1);
    /// Reason: not enough layer space left.
    pub const LAYER: Reason = Reason(2);
    /// Reason: the host cannot enforce a layer limit.
    pub const NO_LAYER_QUOTA: Reason = Reason(3);

    /// A filter for `limits`.
    pub fn new(limits: Limits) -> Self {
        ContainerLimitsFilter { limits }
    }
}

impl Filter for ContainerLimitsFilter {
    fn name(&self) -> &str {
        "container limits"
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        let l = &self.limits;
        if !fits(cx, host, ResourceId::MEMORY_MB, l.memory_mb) {
            return Verdict::Reject(Self::MEMORY);
        }
        if !fits(cx, host, ResourceId::VCPUS, l.cpus) {
            return Verdict::Reject(Self::CPU);
        }
        if l.container_layer_mb > 0.0 {
            let declared = cx
                .cluster()
                .resource_kinds()
                .get(CONTAINER_LAYER_MB)
                .is_some_and(|r| cx.host(host).resource(r).is_declared());
            if !declared {
                return Verdict::Reject(Self::NO_LAYER_QUOTA);
            }
            if !fits_named(cx, host, CONTAINER_LAYER_MB, l.container_layer_mb) {
                return Verdict::Reject(Self::LAYER);
            }
        }
        Verdict::Pass
    }

    /// Reads memory and CPU from the chunk's hot columns for hosts without consumption in the
    /// overlay; the layer limit and touched hosts take the per-host path.
    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        if self.limits.container_layer_mb > 0.0 {
            return rejected.check_lanes(chunk, mask, |h| self.check(cx, h));
        }
        let hot = cx.cluster().hot_chunk(chunk);
        let touched = cx.overlay().touched_mask(chunk);
        let (mem, cpu) = (&hot.free[ResourceId::MEMORY_MB.index()], &hot.free[ResourceId::VCPUS.index()]);
        let l = &self.limits;
        rejected.check_lanes(chunk, mask, |h| {
            let lane = h.index() & 63;
            if touched & (1u64 << lane) != 0 {
                self.check(cx, h)
            } else if l.memory_mb > 0.0 && mem[lane] < l.memory_mb {
                Verdict::Reject(Self::MEMORY)
            } else if l.cpus > 0.0 && cpu[lane] < l.cpus {
                Verdict::Reject(Self::CPU)
            } else {
                Verdict::Pass
            }
        })
    }

    fn describe(&self, _cx: &Cx<'_>, reason: Reason) -> String {
        match reason {
            Self::MEMORY => "insufficient memory",
            Self::CPU => "insufficient CPU",
            Self::LAYER => "insufficient container layer space",
            _ => "no container layer quota",
        }
        .into()
    }

    fn host_local(&self) -> bool {
        true
    }
}
