//! The host-name index: 8 bytes a host.

use crate::id::HostId;

/// FNV-1a, folded to 32 bits: deterministic on every machine, and fast on short names.
pub(crate) fn hash(name: &str) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (h ^ (h >> 32)) as u32
}

/// `(name hash, host)` pairs sorted by hash. A lookup binary-searches the hash and confirms
/// the name against the host record, so the index stores no strings; collisions only cost an
/// extra comparison.
#[derive(Debug, Clone, Default)]
pub(crate) struct NameIndex {
    entries: Vec<(u32, HostId)>,
}

impl NameIndex {
    /// Builds from every `(name, id)` at once. Computes in O(n log n).
    pub(crate) fn build<'a>(names: impl Iterator<Item = (&'a str, HostId)>) -> Self {
        let mut entries: Vec<(u32, HostId)> = names.map(|(n, id)| (hash(n), id)).collect();
        entries.sort_unstable();
        NameIndex { entries }
    }

    /// The first host, in id order, whose name an earlier host already has; `name_of` reads a
    /// host's name. Computes in O(n) plus a name comparison per pair of hosts whose names share
    /// a hash.
    pub(crate) fn first_repeat<'a>(&self, name_of: impl Fn(HostId) -> &'a str) -> Option<HostId> {
        let mut first: Option<HostId> = None;
        for run in self.entries.chunk_by(|a, b| a.0 == b.0) {
            // A run is sorted by id: an entry repeats a name if an earlier one in the run has it.
            for (i, later) in run.iter().enumerate().skip(1) {
                if first.is_some_and(|f| f <= later.1) {
                    break;
                }
                if run[..i].iter().any(|earlier| name_of(earlier.1) == name_of(later.1)) {
                    first = Some(later.1);
                    break;
                }
            }
        }
        first
    }

    /// The host called `name`; `name_of` reads a host's name. Computes in O(log n).
    pub(crate) fn get<'a>(&self, name: &str, name_of: impl Fn(HostId) -> &'a str) -> Option<HostId> {
        let h = hash(name);
        let start = self.entries.partition_point(|e| e.0 < h);
        self.entries[start..].iter().take_while(|e| e.0 == h).map(|e| e.1).find(|&id| name_of(id) == name)
    }

    /// Adds `id` under `name`. Computes in O(n) (one shift of the sorted list).
    pub(crate) fn insert(&mut self, name: &str, id: HostId) {
        let entry = (hash(name), id);
        let at = self.entries.partition_point(|e| *e < entry);
        self.entries.insert(at, entry);
    }

    /// Removes `id`, known under `name`.
    pub(crate) fn remove(&mut self, name: &str, id: HostId) {
        let entry = (hash(name), id);
        if let Ok(at) = self.entries.binary_search(&entry) {
            self.entries.remove(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_repeated_name_is_found_in_id_order() {
        let names = ["a", "b", "c", "b", "a", "c"];
        let name_of = |id: HostId| names[id.index()];
        let index = NameIndex::build(names.iter().enumerate().map(|(i, &n)| (n, HostId::from_index(i))));
        assert_eq!(index.first_repeat(name_of), Some(HostId::from_index(3)));
        let unique = ["a", "b", "c"];
        let index = NameIndex::build(unique.iter().enumerate().map(|(i, &n)| (n, HostId::from_index(i))));
        assert_eq!(index.first_repeat(|id| unique[id.index()]), None);
    }

    #[test]
    fn lookups_confirm_names() {
        let names = ["a", "b", "host-1"];
        let index = NameIndex::build(names.iter().enumerate().map(|(i, n)| (*n, HostId(i as u32))));
        let name_of = |id: HostId| names[id.index()];
        assert_eq!(index.get("host-1", name_of), Some(HostId(2)));
        assert_eq!(index.get("c", name_of), None);
        let mut index = index;
        index.remove("a", HostId(0));
        assert_eq!(index.get("a", name_of), None);
        index.insert("a", HostId(0));
        assert_eq!(index.get("a", name_of), Some(HostId(0)));
    }
}
