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
