//! A host's resources, stored in two parts: the fixed part of every kind (capacity, reserved,
//! allocation ratio), which a host shares with every other host of the same hardware and
//! configuration, and the use, which is its own.
//!
//! Real clusters have a handful of host shapes and thousands of hosts: a snapshot interns each
//! distinct shape once ([`SharedParts`]) and a host holds a pointer to it, so its own record keeps
//! 16 bytes per kind instead of 40. Label sets and topology paths are interned the same way.

use crate::id::{DomainId, InputMap, ResourceId, Symbol};
use smallvec::SmallVec;
use std::hash::Hash;
use std::sync::{Arc, Weak};

/// One resource dimension of a host: how much there is, how much is set aside, how much is used,
/// and how far it may be over-committed.
///
/// The schedulable limit is `(capacity − reserved) × allocation_ratio` (the formula of OpenStack
/// Placement and of Kubernetes' allocatable); what is left is that limit minus `used`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Resource {
    /// Physical amount.
    pub capacity: f64,
    /// Amount set aside for the host itself; never schedulable.
    pub reserved: f64,
    /// Amount in use, including every running instance's share.
    pub used: f64,
    /// The part of `used` that no listed instance accounts for (system daemons, other tenants),
    /// kept as given so that a snapshot's spec round-trips exactly.
    pub unlisted: f64,
    /// Over-commit factor (`1.0` = none). A kind the host does not declare reads as
    /// [`Resource::UNDECLARED`] (all zero, ratio 0).
    pub allocation_ratio: f64,
}

impl Resource {
    /// A resource with `capacity`, nothing reserved or used, and ratio 1.
    pub const fn new(capacity: f64) -> Self {
        Self { capacity, reserved: 0.0, used: 0.0, unlisted: 0.0, allocation_ratio: 1.0 }
    }

    /// Whether the host declares this kind (possibly with capacity 0).
    #[inline]
    pub fn is_declared(&self) -> bool {
        self.allocation_ratio > 0.0
    }

    /// What one instance may use at most: `capacity − reserved` (an instance never over-commits
    /// against itself).
    #[inline]
    pub fn physical(&self) -> f64 {
        self.capacity - self.reserved
    }

    /// The schedulable limit: `(capacity − reserved) × allocation_ratio`.
    #[inline]
    pub fn limit(&self) -> f64 {
        self.physical() * self.allocation_ratio
    }

    /// What is left to schedule: `limit − used` (negative when over-committed by outside use).
    #[inline]
    pub fn free(&self) -> f64 {
        self.limit() - self.used
    }

    /// A kind the host does not declare: nothing of it, and nothing schedulable.
    pub const UNDECLARED: Resource =
        Resource { capacity: 0.0, reserved: 0.0, used: 0.0, unlisted: 0.0, allocation_ratio: 0.0 };
}

/// The sorted `(key, value)` pairs of a label set.
pub(crate) type LabelPairs = SmallVec<[(Symbol, Symbol); 2]>;

/// The fixed part of one resource kind of a host.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ResourceShape {
    capacity: f64,
    reserved: f64,
    allocation_ratio: f64,
}

impl ResourceShape {
    const UNDECLARED: ResourceShape = ResourceShape { capacity: 0.0, reserved: 0.0, allocation_ratio: 0.0 };

    /// The bit patterns of the three numbers: equal shapes have equal keys, and `-0.0` and
    /// `0.0` stay apart so that a snapshot's spec round-trips bit for bit.
    fn bits(&self) -> [u64; 3] {
        [self.capacity.to_bits(), self.reserved.to_bits(), self.allocation_ratio.to_bits()]
    }
}

/// The fixed parts of every kind of a host, by [`ResourceId`].
pub(crate) type Shape = SmallVec<[ResourceShape; 3]>;

/// How much of one kind a host uses: in all, and the part no listed instance accounts for.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Usage {
    used: f64,
    unlisted: f64,
}

/// A host's resources by [`ResourceId`] ([`Host::resources`](super::Host::resources)). Read a
/// kind with [`get`](HostResources::get) (or [`Host::resource`](super::Host::resource)); kinds
/// beyond the end read as [`Resource::UNDECLARED`].
#[derive(Debug, Clone, PartialEq)]
pub struct HostResources {
    /// The fixed parts, interned per snapshot lineage: hosts of one shape share them.
    shape: Arc<Shape>,
    /// The use of each kind, index for index with `shape`.
    usage: SmallVec<[Usage; 3]>,
}

impl HostResources {
    /// Number of kinds stored (the three standard ones at least); later kinds are undeclared.
    pub fn len(&self) -> usize {
        self.usage.len()
    }

    /// Always false: the three standard kinds are always stored.
    pub fn is_empty(&self) -> bool {
        self.usage.is_empty()
    }

    /// The resource of kind `id` ([`Resource::UNDECLARED`] beyond the end).
    #[inline]
    pub fn get(&self, id: ResourceId) -> Resource {
        match (self.shape.get(id.index()), self.usage.get(id.index())) {
            (Some(s), Some(u)) => Resource {
                capacity: s.capacity,
                reserved: s.reserved,
                used: u.used,
                unlisted: u.unlisted,
                allocation_ratio: s.allocation_ratio,
            },
            _ => Resource::UNDECLARED,
        }
    }

    /// Every stored kind in id order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Resource> + '_ {
        (0..self.len()).map(|i| self.get(ResourceId::from_index(i)))
    }

    /// Builds from one resource per kind, the shape interned in `table`.
    pub(crate) fn new(resources: &[Resource], parts: &mut Arc<SharedParts>) -> HostResources {
        let shape: Shape = resources
            .iter()
            .map(|r| ResourceShape { capacity: r.capacity, reserved: r.reserved, allocation_ratio: r.allocation_ratio })
            .collect();
        let key = shape.iter().map(ResourceShape::bits).collect();
        HostResources {
            shape: intern(parts, |p| &p.shapes, |p| &mut p.shapes, key, |_| Arc::new(shape)),
            usage: resources.iter().map(|r| Usage { used: r.used, unlisted: r.unlisted }).collect(),
        }
    }

    /// Adds `sign × amount` to the use of each kind (an instance starting or leaving). A kind
    /// the host does not store is added as undeclared, with a shape of its own (instances only
    /// use undeclared kinds in hand-made snapshots).
    pub(crate) fn add_usage(&mut self, usage: &[(ResourceId, f64)], sign: f64) {
        for &(r, amount) in usage {
            if self.usage.len() <= r.index() {
                let mut shape = Shape::clone(&self.shape);
                shape.resize(r.index() + 1, ResourceShape::UNDECLARED);
                self.shape = Arc::new(shape);
                self.usage.resize(r.index() + 1, Usage { used: 0.0, unlisted: 0.0 });
            }
            let u = &mut self.usage[r.index()];
            u.used += sign * amount;
            if u.used < u.unlisted {
                // Removing an instance never leaves less than the unlisted use (float drift).
                u.used = u.unlisted;
            }
        }
    }
}

/// Parts of a host that many hosts share (resource shapes, label sets, topology paths),
/// interned per snapshot lineage. Entries are weak: a part no host holds any more is dropped at
/// the next sweep, so a lineage whose hosts keep changing does not grow.
#[derive(Debug)]
pub(crate) struct WeakSet<K, T: ?Sized> {
    parts: InputMap<K, Weak<T>>,
    /// Sweep dead entries once the set holds this many.
    sweep_at: usize,
}

impl<K, T: ?Sized> Default for WeakSet<K, T> {
    fn default() -> Self {
        WeakSet { parts: InputMap::default(), sweep_at: 0 }
    }
}

impl<K: Clone, T: ?Sized> Clone for WeakSet<K, T> {
    fn clone(&self) -> Self {
        WeakSet { parts: self.parts.clone(), sweep_at: self.sweep_at }
    }
}

impl<K: Hash + Eq, T: ?Sized> WeakSet<K, T> {
    /// The live part under `key`, if any.
    fn get(&self, key: &K) -> Option<Arc<T>> {
        self.parts.get(key).and_then(Weak::upgrade)
    }

    /// The live part under `key`, or a new one made by `make` and remembered.
    pub(crate) fn intern(&mut self, key: K, make: impl FnOnce(&K) -> Arc<T>) -> Arc<T> {
        if let Some(live) = self.parts.get(&key).and_then(Weak::upgrade) {
            return live;
        }
        let new = make(&key);
        if self.parts.len() >= self.sweep_at {
            self.parts.retain(|_, w| w.strong_count() > 0);
            self.sweep_at = (self.parts.len() * 2).max(64);
        }
        self.parts.insert(key, Arc::downgrade(&new));
        new
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.parts.len()
    }
}

/// The part under `key` in the set that `set` (and `set_mut`) pick out of `parts`, made by
/// `make` if there is none. The table is shared by a snapshot's later versions: it is copied
/// only when the part is new and another version still holds the table.
pub(crate) fn intern<K: Hash + Eq, T: ?Sized>(
    parts: &mut Arc<SharedParts>,
    set: fn(&SharedParts) -> &WeakSet<K, T>,
    set_mut: fn(&mut SharedParts) -> &mut WeakSet<K, T>,
    key: K,
    make: impl FnOnce(&K) -> Arc<T>,
) -> Arc<T> {
    match set(parts).get(&key) {
        Some(live) => live,
        None => set_mut(Arc::make_mut(parts)).intern(key, make),
    }
}

/// The shared parts of a snapshot lineage's hosts.
#[derive(Debug, Clone, Default)]
pub(crate) struct SharedParts {
    /// Resource shapes ([`HostResources`]), by the bit patterns of their numbers.
    pub(crate) shapes: WeakSet<SmallVec<[[u64; 3]; 3]>, Shape>,
    /// Label sets ([`Labels`](super::Labels)), sorted.
    pub(crate) labels: WeakSet<LabelPairs, LabelPairs>,
    /// Topology paths ([`Domains`](super::Domains)).
    pub(crate) domains: WeakSet<SmallVec<[DomainId; 3]>, SmallVec<[DomainId; 3]>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_formulas() {
        let r = Resource { capacity: 64.0, reserved: 8.0, used: 100.0, unlisted: 0.0, allocation_ratio: 2.0 };
        assert_eq!(r.physical(), 56.0);
        assert_eq!(r.limit(), 112.0);
        assert_eq!(r.free(), 12.0);
    }

    fn resource(capacity: f64, used: f64) -> Resource {
        Resource { capacity, reserved: 1.0, used, unlisted: used, allocation_ratio: 2.0 }
    }

    #[test]
    fn hosts_of_one_shape_share_it_and_keep_their_own_use() {
        let mut table = Arc::new(SharedParts::default());
        let a = HostResources::new(&[resource(8.0, 1.0), resource(16.0, 2.0)], &mut table);
        let b = HostResources::new(&[resource(8.0, 5.0), resource(16.0, 0.0)], &mut table);
        let c = HostResources::new(&[resource(8.0, 1.0), resource(32.0, 2.0)], &mut table);
        assert!(Arc::ptr_eq(&a.shape, &b.shape));
        assert!(!Arc::ptr_eq(&a.shape, &c.shape));
        assert_eq!(a.get(ResourceId::from_index(0)), resource(8.0, 1.0));
        assert_eq!(b.get(ResourceId::from_index(0)), resource(8.0, 5.0));
        assert_eq!(c.get(ResourceId::from_index(1)), resource(32.0, 2.0));
        assert_eq!(a.get(ResourceId::from_index(7)), Resource::UNDECLARED);
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![resource(8.0, 1.0), resource(16.0, 2.0)]);
    }

    #[test]
    fn negative_zero_is_a_shape_of_its_own() {
        let mut table = Arc::new(SharedParts::default());
        let mut r = resource(0.0, 0.0);
        let a = HostResources::new(&[r], &mut table);
        r.capacity = -0.0;
        let b = HostResources::new(&[r], &mut table);
        assert!(!Arc::ptr_eq(&a.shape, &b.shape));
        assert!(b.get(ResourceId::from_index(0)).capacity.is_sign_negative());
    }

    #[test]
    fn use_of_an_unstored_kind_extends_the_host_only() {
        let mut table = Arc::new(SharedParts::default());
        let mut a = HostResources::new(&[resource(8.0, 0.0)], &mut table);
        let b = HostResources::new(&[resource(8.0, 0.0)], &mut table);
        a.add_usage(&[(ResourceId::from_index(2), 3.0)], 1.0);
        assert_eq!(a.len(), 3);
        assert_eq!(a.get(ResourceId::from_index(2)).used, 3.0);
        assert!(!a.get(ResourceId::from_index(2)).is_declared());
        assert_eq!(b.len(), 1);
        a.add_usage(&[(ResourceId::from_index(0), 2.0)], 1.0);
        a.add_usage(&[(ResourceId::from_index(0), 5.0)], -1.0);
        assert_eq!(a.get(ResourceId::from_index(0)).used, 0.0, "never below the unlisted use");
    }

    #[test]
    fn a_shared_table_is_copied_only_for_a_new_part() {
        let mut table = Arc::new(SharedParts::default());
        let a = HostResources::new(&[resource(8.0, 1.0)], &mut table);
        let earlier = Arc::clone(&table);
        let b = HostResources::new(&[resource(8.0, 3.0)], &mut table);
        assert!(Arc::ptr_eq(&table, &earlier), "a known shape leaves the shared table alone");
        assert!(Arc::ptr_eq(&a.shape, &b.shape));
        let c = HostResources::new(&[resource(9.0, 1.0)], &mut table);
        assert!(!Arc::ptr_eq(&table, &earlier), "a new shape goes into a copy");
        assert_eq!(earlier.shapes.len(), 1);
        assert_eq!(table.shapes.len(), 2);
        drop(c);
    }

    #[test]
    fn dead_shapes_are_swept() {
        let mut table = Arc::new(SharedParts::default());
        for i in 0..1000 {
            drop(HostResources::new(&[resource(f64::from(i), 0.0)], &mut table));
        }
        assert!(table.shapes.len() <= 128, "{} entries kept", table.shapes.len());
        let kept = intern(&mut table, |p| &p.shapes, |p| &mut p.shapes, SmallVec::new(), |_| Arc::new(Shape::new()));
        assert_eq!(kept.len(), 0);
    }
}
