//! Dense `u32` identifiers.
//!
//! Every entity the scheduler touches on its hot path is named by a small integer that indexes a
//! dense `Vec`: hosts, disks, topology domains, aggregates, resource kinds and interned strings.
//! Names are mapped to ids once, at the edges (building a cluster, compiling a request).

use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

macro_rules! id_type {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub u32);

        impl $name {
            /// The id as a `usize`, for indexing a dense `Vec`.
            #[inline]
            pub const fn index(self) -> usize {
                self.0 as usize
            }

            /// The id for the given dense index.
            ///
            /// # Panics
            ///
            /// Panics if `index` does not fit in a `u32`; the snapshot never holds that many items.
            #[inline]
            pub fn from_index(index: usize) -> Self {
                // Ids index dense `Vec`s; no snapshot holds 2^32 hosts, disks or symbols.
                Self(u32::try_from(index).expect("id space is u32"))
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!(stringify!($name), "({})"), self.0)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }
    };
}

id_type!(
    /// A host in a [`Cluster`](crate::snapshot::Cluster): an index into its dense host table.
    ///
    /// Ids are stable across [`ClusterEvent`](crate::snapshot::ClusterEvent)s: a removed host leaves a
    /// hole, an added host gets the next id.
    HostId
);
id_type!(
    /// A disk of one host: its position in [`Host::disks`](crate::snapshot::Host::disks). A disk is fully
    /// addressed by `(HostId, DiskId)`.
    DiskId
);
id_type!(
    /// A domain (one value) of one topology level, such as zone `az1`: an index into that level's
    /// domain list in [`Topology`](crate::snapshot::Topology).
    DomainId
);
id_type!(
    /// An interned string (label key or value, metric name, group name), compared as an integer.
    Symbol
);
id_type!(
    /// A named host set with metadata, an index into [`Cluster::aggregates`](crate::snapshot::Cluster::aggregates).
    AggregateId
);
id_type!(
    /// A resource kind (vCPUs, memory, disk, or a named extended resource such as `gpu`): an
    /// index into [`ResourceKinds`](crate::snapshot::ResourceKinds).
    ResourceId
);

impl ResourceId {
    /// Virtual CPUs.
    pub const VCPUS: ResourceId = ResourceId(0);
    /// Memory in MiB.
    pub const MEMORY_MB: ResourceId = ResourceId(1);
    /// Local disk in GiB.
    pub const DISK_GB: ResourceId = ResourceId(2);
}

impl DomainId {
    /// The host has no value for this topology level.
    pub const NONE: DomainId = DomainId(u32::MAX);

    /// Whether this is [`DomainId::NONE`].
    #[inline]
    pub const fn is_none(self) -> bool {
        self.0 == u32::MAX
    }
}
id_type!(
    /// A host class for one piece of host data: an interned value of a class attribute
    /// ([`Cluster::attribute_class`](crate::snapshot::Cluster::attribute_class)) or an interned aggregate
    /// set ([`Cluster::aggregate_class`](crate::snapshot::Cluster::aggregate_class)). Two hosts with the
    /// same class hold the same data, so a verdict that reads only that data holds for both.
    ClassId
);

impl ClassId {
    /// The host has no value (the attribute is absent or JSON `null`).
    pub const NONE: ClassId = ClassId(u32::MAX);
}
id_type!(
    /// A service host that several hosts (nodes) share: an index into the cluster's service
    /// host table ([`Cluster::service_host_name`](crate::snapshot::Cluster::service_host_name)).
    ServiceHostId
);

/// The hasher of maps keyed by what the input names (hosts, resources, attribute values, group
/// members, topology domains). Outside fuzzing it is the standard library's `RandomState`: SipHash
/// with random keys, so names chosen by whoever writes the input cannot crowd one bucket.
///
/// Under `cfg(fuzzing)` (cargo-fuzz builds) the keys are fixed instead. With random keys the same
/// input takes a different path through the map's probing on every run, so libFuzzer kept finding
/// "new" edges that were the luck of the keys, not anything the input reached, and a target's edge
/// count never stopped growing (see `fuzz/CAMPAIGN.md`, campaign 12). A map's contents and every
/// answer built from them do not depend on the hasher; nothing iterates these maps in an order
/// that reaches a result.
#[cfg(not(fuzzing))]
pub(crate) type InputHashing = std::collections::hash_map::RandomState;
/// The hasher of maps keyed by what the input names: fixed keys under `cfg(fuzzing)`, see the
/// other definition.
#[cfg(fuzzing)]
pub(crate) type InputHashing = BuildHasherDefault<std::collections::hash_map::DefaultHasher>;

/// A map keyed by what the input names, hashed with [`InputHashing`]; build it with
/// `InputMap::default()`.
pub(crate) type InputMap<K, V> = HashMap<K, V, InputHashing>;

/// A set of what the input names, hashed with [`InputHashing`]; build it with
/// `InputSet::default()` or `collect()`.
pub(crate) type InputSet<K> = HashSet<K, InputHashing>;

/// A multiplicative hasher for keys made of ids (small dense integers, tuples and slices of
/// them), where SipHash's resistance to chosen keys buys nothing and costs most of a lookup.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

/// Builds [`IdHasher`]s, for `HashMap<K, V, IdHashing>`.
pub(crate) type IdHashing = BuildHasherDefault<IdHasher>;

const ID_HASH_FACTOR: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    /// Eight bytes at a time (a slice of `u32` ids arrives here in one call), the rest one by one.
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut word = [0u8; 8];
            word.copy_from_slice(w);
            self.write_u64(u64::from_le_bytes(word));
        }
        for &b in words.remainder() {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }

    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(ID_HASH_FACTOR);
    }
}
