//! The caller's filters and weighers as every engine's builder collects them: one piece, so
//! that adding, tiering and validating them reads and fails the same way under each engine.

use crate::error::BuildError;
use crate::filter::Filter;
use crate::weigh::Weigher;

/// A weigher with the multiplier its terms are scaled by.
pub type Weighted = (Box<dyn Weigher>, f64);

/// Validated hooks: the filters in run order and the non-empty tiers of weighers.
pub type Parts = (Vec<Box<dyn Filter>>, Vec<Vec<Weighted>>);

/// Filters in run order and weighers in tiers, as a builder collects them.
///
/// Every engine builder (`Scheduler::builder`, `NovaScheduler::builder`,
/// `ReplicaScheduler::builder`, `SpreadScheduler::builder`, `ServiceScheduler::builder`) keeps
/// one and offers the same `filter`, `filter_boxed`, `weigher`, `weigher_boxed` methods on it;
/// [`validate`](Hooks::validate) is the one check at `build()`.
///
/// ```
/// use placewise::hooks::Hooks;
/// use placewise::{filter_fn, weigher_fn};
///
/// let mut hooks = Hooks::new();
/// hooks.add_filter(Box::new(filter_fn("any", |_, _| true)));
/// hooks.add_weigher(Box::new(weigher_fn("zero", |_, _| 0.0)), 1.0);
/// hooks.add_tier();
/// hooks.add_weigher(Box::new(weigher_fn("one", |_, _| 1.0)), f64::NAN);
/// let error = hooks.validate().unwrap_err();
/// assert_eq!(error.to_string(), "invalid configuration: weigher `one` has a non-finite multiplier (NaN)");
/// ```
#[derive(Default)]
pub struct Hooks {
    filters: Vec<Box<dyn Filter>>,
    tiers: Vec<Vec<Weighted>>,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let filters: Vec<&str> = self.filters.iter().map(|x| x.name()).collect();
        let tiers: Vec<Vec<(&str, f64)>> =
            self.tiers.iter().map(|t| t.iter().map(|(w, m)| (w.name(), *m)).collect()).collect();
        f.debug_struct("Hooks").field("filters", &filters).field("tiers", &tiers).finish()
    }
}

impl Hooks {
    /// No filters and no weighers.
    pub fn new() -> Hooks {
        Hooks::default()
    }

    /// Adds a filter after those added before.
    pub fn add_filter(&mut self, filter: Box<dyn Filter>) {
        self.filters.push(filter);
    }

    /// Adds a weigher with its multiplier to the current tier (the first, until
    /// [`add_tier`](Hooks::add_tier)).
    pub fn add_weigher(&mut self, weigher: Box<dyn Weigher>, multiplier: f64) {
        if self.tiers.is_empty() {
            self.tiers.push(Vec::new());
        }
        if let Some(tier) = self.tiers.last_mut() {
            tier.push((weigher, multiplier));
        }
    }

    /// Starts a new tier: weighers added from now on break the ties of the tiers before.
    pub fn add_tier(&mut self) {
        if self.tiers.is_empty() {
            self.tiers.push(Vec::new());
        }
        self.tiers.push(Vec::new());
    }

    /// The filters, in run order.
    pub fn filters(&self) -> &[Box<dyn Filter>] {
        &self.filters
    }

    /// The weighers of every tier, in order (without the tiers).
    pub fn weighers(&self) -> impl Iterator<Item = &Weighted> + '_ {
        self.tiers.iter().flatten()
    }

    /// Whether no tier but the first holds a weigher: what an engine that ranks its caller's
    /// weighers in one tier accepts.
    pub fn is_one_tier(&self) -> bool {
        self.tiers.iter().skip(1).all(Vec::is_empty)
    }

    /// The one check at `build()`: every multiplier is finite.
    ///
    /// # Errors
    ///
    /// [`BuildError::NonFiniteMultiplier`] naming the first weigher whose multiplier is not
    /// finite.
    pub fn validate(&self) -> Result<(), BuildError> {
        match self.weighers().find(|(_, m)| !m.is_finite()) {
            Some((w, m)) => Err(BuildError::NonFiniteMultiplier { weigher: w.name().to_owned(), value: *m }),
            None => Ok(()),
        }
    }

    /// Validates, then gives the filters and the non-empty tiers.
    ///
    /// # Errors
    ///
    /// As [`validate`](Hooks::validate).
    pub fn into_parts(self) -> Result<Parts, BuildError> {
        self.validate()?;
        let Hooks { filters, mut tiers } = self;
        tiers.retain(|t| !t.is_empty());
        Ok((filters, tiers))
    }
}

/// The builder methods every engine offers for its caller's hooks, written once: `filter`,
/// `filter_boxed`, `weigher`, `weigher_boxed`, over the [`Hooks`] at `self.$field`.
macro_rules! hook_methods {
    ($($field:ident).+) => {
        /// Adds a filter after those added before.
        pub fn filter<F: $crate::filter::Filter + 'static>(self, filter: F) -> Self {
            self.filter_boxed(Box::new(filter))
        }

        /// Adds a boxed filter after those added before.
        pub fn filter_boxed(mut self, filter: Box<dyn $crate::filter::Filter>) -> Self {
            self.$($field).+.add_filter(filter);
            self
        }

        /// Adds a weigher with its multiplier (finite, checked by `build()`).
        pub fn weigher<W: $crate::weigh::Weigher + 'static>(self, weigher: W, multiplier: f64) -> Self {
            self.weigher_boxed(Box::new(weigher), multiplier)
        }

        /// Adds a boxed weigher with its multiplier (finite, checked by `build()`).
        pub fn weigher_boxed(mut self, weigher: Box<dyn $crate::weigh::Weigher>, multiplier: f64) -> Self {
            self.$($field).+.add_weigher(weigher, multiplier);
            self
        }
    };
}
pub(crate) use hook_methods;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::filter_fn;
    use crate::weigh::weigher_fn;

    #[test]
    fn tiers_keep_order_and_drop_empty_ones() {
        let mut hooks = Hooks::new();
        hooks.add_tier();
        hooks.add_weigher(Box::new(weigher_fn("a", |_, _| 0.0)), 1.0);
        hooks.add_tier();
        hooks.add_tier();
        hooks.add_weigher(Box::new(weigher_fn("b", |_, _| 0.0)), -2.0);
        hooks.add_filter(Box::new(filter_fn("f", |_, _| true)));
        assert!(!hooks.is_one_tier());
        let (filters, tiers) = hooks.into_parts().unwrap();
        assert_eq!(filters.len(), 1);
        let names: Vec<Vec<(&str, f64)>> =
            tiers.iter().map(|t| t.iter().map(|(w, m)| (w.name(), *m)).collect()).collect();
        assert_eq!(names, [vec![("a", 1.0)], vec![("b", -2.0)]]);
    }

    #[test]
    fn every_non_finite_multiplier_is_refused_by_name() {
        for m in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let mut hooks = Hooks::new();
            hooks.add_weigher(Box::new(weigher_fn("ok", |_, _| 0.0)), 1.0);
            hooks.add_weigher(Box::new(weigher_fn("bad", |_, _| 0.0)), m);
            let error = hooks.validate().unwrap_err();
            assert!(error.to_string().contains("weigher `bad`"), "{error}");
        }
        let mut one = Hooks::new();
        one.add_weigher(Box::new(weigher_fn("ok", |_, _| 0.0)), 0.0);
        assert!(one.is_one_tier() && one.validate().is_ok());
    }
}
