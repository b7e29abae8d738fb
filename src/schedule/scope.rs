//! What an engine over the core adds to one call of a core [`Request`](crate::request::Request): its own
//! part of the request for its filters and weighers, the hosts the request is restricted to,
//! and the filters that pass every host in this call.

use crate::id::HostId;
use crate::request::Part;
use crate::snapshot::CHUNK;
use std::fmt;

/// Hosts one call is restricted to, by id: only some hosts, never some hosts, and whether the
/// hosts it names skip the filters.
///
/// ```
/// use placewise::HostId;
/// use placewise::schedule::HostLists;
///
/// let lists = HostLists::only([HostId(3), HostId(1)]).never([HostId(1)]);
/// assert!(lists.keeps(HostId(3)) && !lists.keeps(HostId(1)) && !lists.keeps(HostId(0)));
/// assert!(HostLists::default().keeps(HostId(0)));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostLists {
    /// The only hosts allowed, sorted and without repeats; `None` allows every host.
    only: Option<Vec<HostId>>,
    /// Hosts never allowed, sorted and without repeats.
    never: Vec<HostId>,
    /// Whether the allowed hosts skip the filters (only with `only`).
    skip_filters: bool,
}

fn sorted(ids: impl IntoIterator<Item = HostId>) -> Vec<HostId> {
    let mut ids: Vec<HostId> = ids.into_iter().collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

impl HostLists {
    /// Only these hosts (an empty list allows none).
    pub fn only(hosts: impl IntoIterator<Item = HostId>) -> Self {
        HostLists { only: Some(sorted(hosts)), ..HostLists::default() }
    }

    /// Never these hosts, on top of any `only` list.
    pub fn never(mut self, hosts: impl IntoIterator<Item = HostId>) -> Self {
        self.never = sorted(self.never.drain(..).chain(hosts));
        self
    }

    /// Whether the hosts an [`only`](HostLists::only) list allows skip every filter (they are
    /// picked by the weighers alone, every instance). Without an `only` list this does nothing.
    pub fn skip_filters(mut self, skip: bool) -> Self {
        self.skip_filters = skip;
        self
    }

    /// Whether the lists restrict nothing.
    pub fn is_empty(&self) -> bool {
        self.only.is_none() && self.never.is_empty()
    }

    /// Whether `host` is allowed. Computes in O(log listed hosts).
    pub fn keeps(&self, host: HostId) -> bool {
        self.only.as_ref().is_none_or(|only| only.binary_search(&host).is_ok())
            && self.never.binary_search(&host).is_err()
    }

    /// Whether the allowed hosts skip the filters.
    pub fn skips_filters(&self) -> bool {
        self.skip_filters && self.only.is_some()
    }

    /// Clears the lanes of hosts not allowed from `masks`, `masks[k]` covering chunk
    /// `first + k`. Computes in O(chunks + listed hosts); allocates nothing.
    pub(crate) fn restrict(&self, first: usize, masks: &mut [u64]) {
        if let Some(only) = &self.only {
            let mut i = only.partition_point(|h| h.index() / CHUNK < first);
            for (k, mask) in masks.iter_mut().enumerate() {
                let mut keep = 0u64;
                while let Some(h) = only.get(i).filter(|h| h.index() / CHUNK == first + k) {
                    keep |= 1u64 << (h.index() % CHUNK);
                    i += 1;
                }
                *mask &= keep;
            }
        }
        for h in &self.never {
            if let Some(mask) = (h.index() / CHUNK).checked_sub(first).and_then(|k| masks.get_mut(k)) {
                *mask &= !(1u64 << (h.index() % CHUNK));
            }
        }
    }
}

/// What an engine over the core adds to one scheduling call of a core
/// [`Request`](crate::request::Request): its own part of the request, handed to its filters and weighers
/// through [`Cx::part`](crate::request::Cx::part); the [`HostLists`] the call is restricted to; and the
/// filters, by position, that pass every host in this call. The default adds nothing: a plain
/// core call.
///
/// ```
/// use placewise::{Cluster, HostSpec, Request, Scheduler, Scratch};
/// use placewise::schedule::HostLists;
/// use placewise::schedule::Scope;
///
/// let cluster = Cluster::builder().host(HostSpec::new("a")).host(HostSpec::new("b")).build()?;
/// let only_b = HostLists::only([cluster.host_id("b").unwrap()]);
/// let scope = Scope::new().hosts(&only_b).part(&"an engine's own part");
/// let placement = Scheduler::standard().schedule_scoped(&mut Scratch::new(), &cluster, &Request::new(1), scope)?;
/// assert_eq!(placement.selections[0].host_name, "b");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Default)]
pub struct Scope<'a> {
    pub(crate) part: Option<Part<'a>>,
    pub(crate) hosts: Option<&'a HostLists>,
    pub(crate) passed: &'a [bool],
    pub(crate) ordered: bool,
}

impl fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("part", &self.part.is_some())
            .field("hosts", &self.hosts)
            .field("passed", &self.passed)
            .field("ordered", &self.ordered)
            .finish()
    }
}

impl<'a> Scope<'a> {
    /// A scope that adds nothing.
    pub fn new() -> Self {
        Scope::default()
    }

    /// The engine's own part of the request, which its filters and weighers read with
    /// [`Cx::part`](crate::request::Cx::part).
    pub fn part(mut self, part: Part<'a>) -> Self {
        self.part = Some(part);
        self
    }

    /// Restricts the call to `hosts` (none when they are empty).
    pub fn hosts(mut self, hosts: &'a HostLists) -> Self {
        self.hosts = Some(hosts).filter(|h| !h.is_empty());
        self
    }

    /// The filters that pass every host in this call: `passed[i]` for the scheduler's filter at
    /// position `i` (a filter past the end of `passed` runs).
    pub fn passed_filters(mut self, passed: &'a [bool]) -> Self {
        self.passed = passed;
        self
    }

    /// Whether the request's instances are not interchangeable (a rule reads which instance is
    /// placed, not only how many were placed before it), so that counting how many more fit
    /// ([`capacity::instances_scoped`](crate::capacity::instances_scoped)) replays the
    /// scheduler instead of counting each host on its own.
    pub fn ordered_instances(mut self, ordered: bool) -> Self {
        self.ordered = ordered;
        self
    }

    /// Whether the filters are skipped: the call is restricted to named hosts that skip them.
    pub(crate) fn bypasses_filters(&self) -> bool {
        self.hosts.is_some_and(HostLists::skips_filters)
    }

    /// Applies the host lists to `masks`, `masks[k]` covering chunk `first + k`.
    pub(crate) fn restrict(&self, first: usize, masks: &mut [u64]) {
        if let Some(hosts) = self.hosts {
            hosts.restrict(first, masks);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restrict_clears_exactly_the_lanes_keeps_refuses() {
        let lists = HostLists::only([HostId(130), HostId(1), HostId(64), HostId(1)]).never([HostId(64), HostId(200)]);
        let mut masks = vec![u64::MAX; 4];
        lists.restrict(0, &mut masks);
        for h in 0..256u32 {
            let set = masks[h as usize / CHUNK] & (1u64 << (h as usize % CHUNK)) != 0;
            assert_eq!(set, lists.keeps(HostId(h)), "host {h}");
        }
        let mut tail = vec![u64::MAX; 2];
        lists.restrict(2, &mut tail);
        assert_eq!(tail, [1u64 << 2, 0]);
        let never = HostLists::default().never([HostId(3)]);
        let mut one = [u64::MAX];
        never.restrict(0, &mut one);
        assert_eq!(one[0], !(1u64 << 3));
        assert!(!never.skip_filters(true).skips_filters());
    }
}
