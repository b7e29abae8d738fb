//! Capacity: the instance must fit what is left of every resource it asks for.

use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::{HostId, ResourceId};
use crate::request::Cx;
use crate::snapshot::HOT_RESOURCES;
use smallvec::SmallVec;

const UNKNOWN_KIND: u32 = 1 << 31;

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
            return Verdict::reject(UNKNOWN_KIND);
        }
        Verdict::Pass
    }

    fn check_batch(&self, cx: &Cx<'_>, hosts: &mut Vec<HostId>, rejected: &mut Rejections) {
        let compiled = cx.compiled();
        let wanted = compiled.resources.iter().filter(|(kind, _)| self.only.is_none_or(|o| o == *kind));
        let hot: SmallVec<[(usize, f64); HOT_RESOURCES]> =
            wanted.clone().filter(|(k, _)| k.index() < HOT_RESOURCES).map(|&(k, w)| (k.index(), w)).collect();
        let cold = wanted.count() > hot.len() || (self.only.is_none() && !compiled.unknown.is_empty());
        if cold {
            // Extended kinds live in the host records: take the general path.
            rejected.retain(hosts, |h| self.check(cx, h));
            return;
        }
        let (cluster, overlay) = (cx.cluster(), cx.overlay());
        rejected.retain(hosts, |h| {
            let (free, physical) = cluster.hot_columns(h);
            let i = h.index() & 63;
            let touched = overlay.is_touched(h);
            for &(r, want) in &hot {
                let mut left = free[r][i];
                if touched {
                    left -= overlay.used(h, ResourceId(r as u32));
                }
                if want > physical[r][i] || want > left {
                    return Verdict::reject(r as u32);
                }
            }
            Verdict::Pass
        });
    }

    fn describe(&self, cx: &Cx<'_>, reason: Reason) -> String {
        if reason.0 & UNKNOWN_KIND != 0 {
            let names: Vec<&str> = cx.compiled().unknown.iter().map(|u| &*u.0).collect();
            return format!("insufficient {}", names.join(", "));
        }
        let kinds = cx.cluster().resource_kinds();
        let kind = ResourceId(reason.0);
        if kind.index() < kinds.len() {
            format!("insufficient {}", kinds.display_name(kind))
        } else {
            "insufficient resources".into()
        }
    }
}
