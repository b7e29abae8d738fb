//! Free capacity of one resource kind: RAM, CPU, disk, or any extended kind.

use crate::id::{HostId, ResourceId};
use crate::request::Cx;
use crate::snapshot::{CHUNK, HOT_RESOURCES};
use crate::weigh::{Bounds, Column, Weigher};

/// Scores a host by what is left of one resource kind after earlier instances of the request:
/// `(capacity − reserved) × allocation_ratio − used`. Normalised with the minimum fixed at 0
/// (`x / max`, over-committed hosts count as 0), like the filter scheduler's RAM, CPU and disk
/// weighers. A positive multiplier spreads; a negative one stacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FreeResourceWeigher {
    kind: ResourceId,
}

impl FreeResourceWeigher {
    /// Weighs free memory (`ram`).
    pub const fn ram() -> Self {
        FreeResourceWeigher { kind: ResourceId::MEMORY_MB }
    }

    /// Weighs free vCPUs (`cpu`).
    pub const fn cpu() -> Self {
        FreeResourceWeigher { kind: ResourceId::VCPUS }
    }

    /// Weighs free disk (`disk`).
    pub const fn disk() -> Self {
        FreeResourceWeigher { kind: ResourceId::DISK_GB }
    }

    /// Weighs free amount of any kind.
    pub const fn of(kind: ResourceId) -> Self {
        FreeResourceWeigher { kind }
    }
}

impl Weigher for FreeResourceWeigher {
    fn name(&self) -> &str {
        match self.kind {
            ResourceId::MEMORY_MB => "ram",
            ResourceId::VCPUS => "cpu",
            ResourceId::DISK_GB => "disk",
            _ => "free_resource",
        }
    }

    #[inline]
    fn weigh(&self, cx: &Cx<'_>, host: HostId) -> f64 {
        cx.free(host, self.kind)
    }

    fn weigh_batch(&self, cx: &Cx<'_>, hosts: &[HostId], out: &mut [f64]) {
        let r = self.kind.index();
        if r >= HOT_RESOURCES {
            for (o, &h) in out.iter_mut().zip(hosts) {
                *o = cx.free(h, self.kind);
            }
            return;
        }
        let (cluster, overlay) = (cx.cluster(), cx.overlay());
        for (o, &h) in out.iter_mut().zip(hosts) {
            let mut left = cluster.hot_chunk(h.index() / CHUNK).free[r][h.index() % CHUNK];
            if overlay.is_touched(h) {
                left -= overlay.used(h, self.kind);
            }
            *o = left;
        }
    }

    fn column<'c>(&self, cx: &Cx<'c>, chunk: usize, mask: u64) -> Option<Column<'c>> {
        let r = self.kind.index();
        // The free column, unless an earlier pick of the request changed one of the lanes.
        if r >= HOT_RESOURCES || cx.overlay().touched_mask(chunk) & mask != 0 {
            return None;
        }
        let hot = cx.cluster().hot_chunk(chunk);
        let (min, max) = hot.free_range[r];
        Some(Column::new(&hot.free[r], min, max))
    }

    fn weigh_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, out: &mut [f64; CHUNK]) {
        let r = self.kind.index();
        if r >= HOT_RESOURCES {
            let mut rest = mask;
            while rest != 0 {
                let lane = rest.trailing_zeros() as usize;
                out[lane] = cx.free(HostId::from_index(chunk * CHUNK + lane), self.kind);
                rest &= rest - 1;
            }
            return;
        }
        // The whole column, then the lanes earlier picks changed: the same values as
        // `weigh_batch`.
        *out = cx.cluster().hot_chunk(chunk).free[r];
        let overlay = cx.overlay();
        let mut touched = overlay.touched_mask(chunk) & mask;
        while touched != 0 {
            let lane = touched.trailing_zeros() as usize;
            out[lane] -= overlay.used(HostId::from_index(chunk * CHUNK + lane), self.kind);
            touched &= touched - 1;
        }
    }

    fn bounds(&self) -> Bounds {
        Bounds::ZERO_MIN
    }

    fn host_local(&self) -> bool {
        true
    }
}
