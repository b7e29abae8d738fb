//! String interning: label keys and values, metric names and group names become [`Symbol`]s.

use crate::id::{InputMap, Symbol};
use std::fmt;
use std::sync::Arc;

/// An append-only table of interned strings.
///
/// A symbol, once issued, names the same string in every later snapshot: events only ever append.
/// Lookups by string cost one hash; [`resolve`](Interner::resolve) costs one index.
#[derive(Clone, Default)]
pub struct Interner {
    strings: Vec<Arc<str>>,
    map: InputMap<Arc<str>, Symbol>,
}

impl Interner {
    /// The symbol of `s`, if it was ever interned. Computes in O(1).
    pub fn get(&self, s: &str) -> Option<Symbol> {
        self.map.get(s).copied()
    }

    /// The string of `sym`.
    ///
    /// # Panics
    ///
    /// Panics if `sym` was not issued by this table (or an ancestor snapshot's).
    pub fn resolve(&self, sym: Symbol) -> &str {
        &self.strings[sym.index()]
    }

    /// Number of interned strings.
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// Whether nothing is interned.
    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }

    pub(crate) fn intern_mut(&mut self, s: &str) -> Symbol {
        if let Some(sym) = self.get(s) {
            return sym;
        }
        let sym = Symbol::from_index(self.strings.len());
        let shared: Arc<str> = Arc::from(s);
        self.strings.push(shared.clone());
        self.map.insert(shared, sym);
        sym
    }

    /// Interns into a shared table, copying it only when `s` is new and the table is shared.
    pub(crate) fn intern(table: &mut Arc<Interner>, s: &str) -> Symbol {
        match table.get(s) {
            Some(sym) => sym,
            None => Arc::make_mut(table).intern_mut(s),
        }
    }
}

impl fmt::Debug for Interner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Interner").field("len", &self.strings.len()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_is_stable_and_copy_on_write() {
        let mut a = Arc::new(Interner::default());
        let x = Interner::intern(&mut a, "zone");
        let snapshot = a.clone();
        let y = Interner::intern(&mut a, "rack");
        assert_eq!(Interner::intern(&mut a, "zone"), x);
        assert_ne!(x, y);
        assert_eq!(a.resolve(y), "rack");
        // The older snapshot never sees the new string, but keeps its own.
        assert_eq!(snapshot.get("rack"), None);
        assert_eq!(snapshot.resolve(x), "zone");
    }
}
