//! Virtual consumption on top of a snapshot.

use super::{Cluster, HOT_RESOURCES};
use crate::id::{HostId, ResourceId};
use smallvec::SmallVec;

#[derive(Debug, Clone)]
struct Entry {
    host: HostId,
    used: SmallVec<[f64; 4]>,
    placed: u32,
}

/// Resources consumed by placements that are planned but not yet in the snapshot.
///
/// A scheduler places the instances of a request one after another; each pick is recorded here so
/// the next instance sees it, while the [`Cluster`] itself is never mutated. Lookups for an
/// untouched host cost one bit test, so the overlay adds nothing per host on the hot path;
/// [`clear`](Overlay::clear) costs O(touched hosts), so one overlay can be reused for many requests.
#[derive(Debug, Clone, Default)]
pub struct Overlay {
    bits: Vec<u64>,
    slot: Vec<u32>,
    entries: Vec<Entry>,
    /// The host of every consumption, in order.
    picks: Vec<HostId>,
}

impl Overlay {
    /// An empty overlay.
    pub fn new() -> Self {
        Overlay::default()
    }

    /// Forgets every consumption. Computes in O(touched hosts).
    pub fn clear(&mut self) {
        self.picks.clear();
        for e in self.entries.drain(..) {
            let i = e.host.index();
            self.bits[i >> 6] &= !(1u64 << (i & 63));
        }
    }

    /// Whether nothing is consumed.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether anything was consumed on `host`: one bit test.
    #[inline]
    pub fn is_touched(&self, host: HostId) -> bool {
        let i = host.index();
        self.bits.get(i >> 6).is_some_and(|w| w & (1u64 << (i & 63)) != 0)
    }

    /// The lanes of chunk `chunk` (hosts `64·chunk …`) with consumption: one word.
    #[inline]
    pub fn touched_mask(&self, chunk: usize) -> u64 {
        self.bits.get(chunk).copied().unwrap_or(0)
    }

    #[inline]
    fn entry(&self, host: HostId) -> Option<&Entry> {
        if !self.is_touched(host) {
            return None;
        }
        Some(&self.entries[self.slot[host.index()] as usize])
    }

    /// Records one instance on `host` using `demand`.
    pub fn consume(&mut self, host: HostId, demand: &[(ResourceId, f64)]) {
        let i = host.index();
        if self.bits.len() <= i >> 6 {
            self.bits.resize((i >> 6) + 1, 0);
        }
        if self.slot.len() <= i {
            self.slot.resize(i + 1, 0);
        }
        if self.bits[i >> 6] & (1u64 << (i & 63)) == 0 {
            self.bits[i >> 6] |= 1u64 << (i & 63);
            self.slot[i] = self.entries.len() as u32;
            self.entries.push(Entry { host, used: SmallVec::new(), placed: 0 });
        }
        self.picks.push(host);
        let entry = &mut self.entries[self.slot[i] as usize];
        entry.placed += 1;
        for &(r, amount) in demand {
            if entry.used.len() <= r.index() {
                entry.used.resize(r.index() + 1, 0.0);
            }
            entry.used[r.index()] += amount;
        }
    }

    /// Amount of `r` consumed on `host`.
    #[inline]
    pub fn used(&self, host: HostId, r: ResourceId) -> f64 {
        self.entry(host).and_then(|e| e.used.get(r.index()).copied()).unwrap_or(0.0)
    }

    /// Number of instances placed on `host` through this overlay.
    #[inline]
    pub fn placed(&self, host: HostId) -> u32 {
        self.entry(host).map_or(0, |e| e.placed)
    }

    /// The host of every [`consume`](Overlay::consume) call, in call order: for a scheduler
    /// placing a request's instances one after another, entry `j` is instance `j`'s host.
    pub fn picks(&self) -> &[HostId] {
        &self.picks
    }

    /// Hosts with consumption, in the order they were first touched.
    pub fn touched(&self) -> impl Iterator<Item = HostId> + '_ {
        self.entries.iter().map(|e| e.host)
    }

    /// What is left of `r` on `host` in `cluster` after this overlay's consumption.
    #[inline]
    pub fn free(&self, cluster: &Cluster, host: HostId, r: ResourceId) -> f64 {
        let base = if r.index() < HOT_RESOURCES {
            cluster.hot_free(host, r.index())
        } else {
            cluster.host(host).map_or(0.0, |h| h.resource(r).free())
        };
        base - self.used(host, r)
    }

    /// The per-instance ceiling of `r` on `host`: `capacity − reserved`.
    #[inline]
    pub fn physical(&self, cluster: &Cluster, host: HostId, r: ResourceId) -> f64 {
        if r.index() < HOT_RESOURCES {
            cluster.hot_physical(host, r.index())
        } else {
            cluster.host(host).map_or(0.0, |h| h.resource(r).physical())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{HostSpec, ResourceSpec};

    #[test]
    fn consumption_is_virtual_and_clearable() {
        let c = Cluster::builder()
            .host(HostSpec::new("a").memory_mb(100.0))
            .host(HostSpec::new("b").memory_mb(100.0).resource("gpu", ResourceSpec::new(2.0)))
            .build()
            .unwrap();
        let (a, b) = (HostId(0), HostId(1));
        let gpu = c.resource_kinds().get("gpu").unwrap();
        let mut o = Overlay::new();
        o.consume(b, &[(ResourceId::MEMORY_MB, 30.0), (gpu, 1.0)]);
        o.consume(b, &[(ResourceId::MEMORY_MB, 30.0)]);
        assert_eq!(o.free(&c, b, ResourceId::MEMORY_MB), 40.0);
        assert_eq!(o.free(&c, b, gpu), 1.0);
        assert_eq!(o.free(&c, a, ResourceId::MEMORY_MB), 100.0);
        assert_eq!(o.placed(b), 2);
        assert_eq!(o.placed(a), 0);
        assert_eq!(o.touched().collect::<Vec<_>>(), vec![b]);
        o.consume(a, &[]);
        assert_eq!(o.picks(), [b, b, a], "one entry per consumption, in order");
        o.clear();
        assert!(o.is_empty() && o.picks().is_empty());
        assert_eq!(o.free(&c, b, ResourceId::MEMORY_MB), 100.0);
        assert_eq!(c.host(b).unwrap().resource(ResourceId::MEMORY_MB).used, 0.0);
    }
}
