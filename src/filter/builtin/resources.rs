//! Capacity: the instance must fit what is left of every resource it asks for.

use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::{HostId, ResourceId};
use crate::request::Cx;
use crate::snapshot::{CHUNK, HOT_RESOURCES};

/// Passes a host when, for every resource kind the request asks for (or only the one given to
/// [`ResourceFilter::only`]), the per-instance amount fits both
///
/// - what is left: `(capacity − reserved) × allocation_ratio − used − earlier picks ≥ amount`, and
/// - the physical size: `capacity − reserved ≥ amount` (an instance never over-commits against
///   itself).
///
/// A kind no host has rejects every host. Reasons read `insufficient memory`,
/// `insufficient vcpus`, `insufficient disk`, `insufficient gpu` ….
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ResourceFilter {
    only: Option<ResourceId>,
}

impl ResourceFilter {
    /// Checks every kind the request asks for.
    pub fn new() -> Self {
        ResourceFilter { only: None }
    }

    /// Checks one kind only (a RAM-only or CPU-only filter).
    pub fn only(kind: ResourceId) -> Self {
        ResourceFilter { only: Some(kind) }
    }
}

impl Filter for ResourceFilter {
    fn name(&self) -> &str {
        match self.only {
            None => "resources",
            Some(ResourceId::VCPUS) => "vcpus",
            Some(ResourceId::MEMORY_MB) => "memory",
            Some(ResourceId::DISK_GB) => "disk",
            Some(_) => "resource",
        }
    }

    #[inline]
    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        let compiled = cx.compiled();
        let overlay = cx.overlay();
        let cluster = cx.cluster();
        for &(kind, want) in &compiled.resources {
            if self.only.is_some_and(|o| o != kind) {
                continue;
            }
            if want > overlay.physical(cluster, host, kind) || want > overlay.free(cluster, host, kind) {
                return Verdict::reject(kind.0);
            }
        }
        if self.only.is_none() && !compiled.unknown.is_empty() {
            // Codes past the cluster's kinds stand for the kinds it does not know.
            return Verdict::reject(cluster.resource_kinds().len() as u32);
        }
        Verdict::Pass
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        let compiled = cx.compiled();
        let wanted = compiled.resources.iter().filter(|(kind, _)| self.only.is_none_or(|o| o == *kind));
        let cold = wanted.clone().any(|(k, _)| k.index() >= HOT_RESOURCES)
            || (self.only.is_none() && !compiled.unknown.is_empty());
        let touched = cx.overlay().touched_mask(chunk) & mask;
        // Extended kinds live in the host records, and earlier picks in the overlay: those
        // hosts take the per-host path.
        let slow = if cold { mask } else { touched };
        let mut pass = mask & !slow;
        if pass != 0 {
            let hot = cx.cluster().hot_chunk(chunk);
            for &(kind, want) in wanted {
                if want <= hot.room[kind.index()] {
                    // Every live host of the chunk has room.
                    continue;
                }
                let (free, physical) = (&hot.free[kind.index()], &hot.physical[kind.index()]);
                let mut fits = 0u64;
                for lane in 0..CHUNK {
                    fits |= u64::from(want <= free[lane] && want <= physical[lane]) << lane;
                }
                let failed = pass & !fits;
                if failed != 0 {
                    rejected.reject_lanes(chunk, failed, Reason(kind.0));
                    pass &= fits;
                }
            }
        }
        pass | rejected.check_lanes(chunk, slow, |h| self.check(cx, h))
    }

    fn host_local(&self) -> bool {
        true
    }

    /// `first`, then every other kind the host is short of, in the request's order, then the
    /// kinds the cluster does not know.
    fn all_reasons(&self, cx: &Cx<'_>, host: HostId, first: Reason, out: &mut Vec<Reason>) {
        out.push(first);
        let (compiled, overlay, cluster) = (cx.compiled(), cx.overlay(), cx.cluster());
        for &(kind, want) in &compiled.resources {
            let short = want > overlay.physical(cluster, host, kind) || want > overlay.free(cluster, host, kind);
            if short && self.only.is_none_or(|o| o == kind) && Reason(kind.0) != first {
                out.push(Reason(kind.0));
            }
        }
        let unknown = Reason(cluster.resource_kinds().len() as u32);
        if self.only.is_none() && !compiled.unknown.is_empty() && unknown != first {
            out.push(unknown);
        }
    }

    fn describe(&self, cx: &Cx<'_>, reason: Reason) -> String {
        let kinds = cx.cluster().resource_kinds();
        let kind = ResourceId(reason.0);
        if kind.index() < kinds.len() {
            format!("insufficient {}", kinds.display_name(kind))
        } else {
            let names: Vec<&str> = cx.compiled().unknown.iter().map(|u| &*u.0).collect();
            format!("insufficient {}", names.join(", "))
        }
    }
}
