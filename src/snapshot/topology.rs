//! Topology levels (region, zone, rack …) and their domains.

use crate::id::{DomainId, InputMap, Symbol};

/// The ordered topology levels of a cluster, outermost first, and the domains seen at each.
///
/// Levels default to `region`, `zone`; a cluster may declare others (`rack`, `row`, `datacenter`).
/// Each distinct value at a level is a [`DomainId`] dense within that level, so counting "hosts
/// per zone" is an array index, not a hash.
#[derive(Debug, Clone)]
pub struct Topology {
    levels: Vec<Box<str>>,
    domains: Vec<Vec<Symbol>>,
    index: InputMap<(u32, Symbol), DomainId>,
}

impl Default for Topology {
    fn default() -> Self {
        Topology::new(["region", "zone"])
    }
}

impl Topology {
    pub(crate) fn new<S: AsRef<str>>(levels: impl IntoIterator<Item = S>) -> Self {
        let levels: Vec<Box<str>> = levels.into_iter().map(|l| l.as_ref().into()).collect();
        let domains = vec![Vec::new(); levels.len()];
        Topology { levels, domains, index: InputMap::default() }
    }

    /// Level names, outermost first.
    pub fn levels(&self) -> &[Box<str>] {
        &self.levels
    }

    /// The position of the level called `name`.
    pub fn level(&self, name: &str) -> Option<usize> {
        self.levels.iter().position(|l| &**l == name)
    }

    /// The position of the `zone` level, used for availability zones.
    pub fn zone_level(&self) -> Option<usize> {
        self.level("zone")
    }

    /// The domains of `level` in first-seen order; the index of each is its [`DomainId`].
    pub fn domains(&self, level: usize) -> &[Symbol] {
        self.domains.get(level).map_or(&[], Vec::as_slice)
    }

    /// The domain whose value at `level` is `value`.
    pub fn domain(&self, level: usize, value: Symbol) -> Option<DomainId> {
        self.index.get(&(level as u32, value)).copied()
    }

    /// The interned value of a domain, or `None` for [`DomainId::NONE`].
    pub fn value(&self, level: usize, domain: DomainId) -> Option<Symbol> {
        if domain.is_none() {
            return None;
        }
        self.domains.get(level).and_then(|d| d.get(domain.index())).copied()
    }

    pub(crate) fn insert(&mut self, level: usize, value: Symbol) -> DomainId {
        if let Some(d) = self.domain(level, value) {
            return d;
        }
        let list = &mut self.domains[level];
        let id = DomainId::from_index(list.len());
        list.push(value);
        self.index.insert((level as u32, value), id);
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_are_dense_per_level() {
        let mut t = Topology::new(["region", "zone", "rack"]);
        assert_eq!(t.zone_level(), Some(1));
        let a = t.insert(1, Symbol(7));
        let b = t.insert(1, Symbol(8));
        let again = t.insert(1, Symbol(7));
        let rack = t.insert(2, Symbol(7));
        assert_eq!((a, b, again, rack), (DomainId(0), DomainId(1), DomainId(0), DomainId(0)));
        assert_eq!(t.value(1, b), Some(Symbol(8)));
        assert_eq!(t.value(1, DomainId::NONE), None);
        assert_eq!(t.domains(2).len(), 1);
    }
}
