//! The first tier of a replica without building it: each zone's static candidate hosts, listed
//! and summarised once per volume ([`ZoneLists`]).
//!
//! The engine's first tier holds the eligible hosts of the zones where no replica of the volume
//! counts. When none of those hosts is judged per replica (none holds a replica of the volume),
//! the tier is the union of the unused zones' lists, its summary the sum of their [`HostSet`]s,
//! and the choice ([`HostSet::choose`]) reads only that summary plus, for the balance score,
//! the first host of each unused zone past a total: O(zones) and a scan that stops at the first
//! host it looks for, where building the tier costs O(hosts) for every replica. The stepwise
//! volume count ([`count`](super::count)) orders its tree's leaves by the same lists.
//!
//! The lists hold every host that passes the node checks, with or without a candidate disk, so
//! they do not change with the volume's size: when a preparation is resized
//! ([`Prep::resize`](super::prep::Prep::resize)) only the changed hosts' totals, their blocks'
//! summaries and their zones' sums are redone ([`ZoneLists::update`], [`ZoneLists::refresh`]).

use super::choice::{Agg, Candidate, DiskChoice, HostSet, NO_HOST};
use super::node_stage::HostPrep;
use crate::id::{DomainId, HostId};

/// One zone's listed hosts: `start..end` in [`ZoneLists::hosts`], summarised in `set`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ZoneList {
    pub(crate) zone: DomainId,
    pub(crate) start: u32,
    pub(crate) end: u32,
    pub(crate) set: HostSet,
}

/// The hosts a new replica's first tier can hold, zone by zone: candidate nodes (steps 2 and 4
/// without a hard node affinity) that pass the node selector and the caller's node filters.
/// Those without a static candidate disk are listed as absent: they count in no summary and no
/// search finds them.
#[derive(Debug, Default)]
pub(crate) struct ZoneLists {
    /// The listed hosts, zone after zone, each zone's in host id order.
    pub(crate) hosts: Vec<HostId>,
    /// Each listed host's usable total ([`Agg::sum`] of its candidates), or [`ABSENT`] when it
    /// has none, aligned with `hosts`.
    totals: Vec<i128>,
    /// The zones, in the order of their lowest host id; their ranges follow one another.
    pub(crate) zones: Vec<ZoneList>,
    /// The smallest and largest total present in each [`BLOCK`] listed hosts (`totals` in
    /// blocks), so a search skips a block that cannot hold what it looks for.
    blocks: Vec<(i128, i128)>,
    /// Each zone's position in `zones` by [`zone_key`], [`NO_HOST`] when it has none.
    slot: Vec<u32>,
    /// Made by the first [`ZoneLists::update`] after a build: each host's position in `hosts`
    /// ([`NO_HOST`] when not listed, indexed by host id) and each block's hosts summarised.
    pos: Vec<u32>,
    block_sets: Vec<HostSet>,
    /// Blocks whose totals changed since the last refresh.
    dirty: Vec<u32>,
}

/// The total of a listed host without a static candidate (below any sum of usable bytes).
pub(crate) const ABSENT: i128 = i128::MIN;

/// The smallest and largest total present in `totals`.
fn extremes(totals: &[i128]) -> (i128, i128) {
    totals.iter().filter(|&&v| v != ABSENT).fold((i128::MAX, i128::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)))
}

/// Whether a listed host's total `v` is what a search for `≥ t` (`at_least`) or `≤ t` looks
/// for; [`ABSENT`] never is.
#[inline]
pub(crate) fn hits(v: i128, t: i128, at_least: bool) -> bool {
    if at_least {
        // Every total present is above ABSENT, so one comparison also skips the absent.
        v >= t.max(ABSENT + 1)
    } else {
        v <= t && v != ABSENT
    }
}

/// A listed host's total: its candidates' sum, or [`ABSENT`].
pub(crate) fn total(agg: &Agg) -> i128 {
    if agg.n == 0 {
        ABSENT
    } else {
        agg.sum
    }
}

/// Listed hosts per entry of [`ZoneLists::blocks`].
const BLOCK: usize = 32;

/// A dense key per zone: the level's domain ids are dense, and a host without a zone is key 0.
pub(crate) fn zone_key(zone: DomainId) -> usize {
    if zone.is_none() {
        0
    } else {
        zone.0 as usize + 1
    }
}

/// Whether the first tier lists host `hp` (given that it is a candidate node).
pub(crate) fn listed(hp: &HostPrep) -> bool {
    hp.selector_ok && hp.caller == 0
}

impl ZoneLists {
    /// Rebuilds the lists from a volume's preparation (`hosts` and `aggs` indexed by host id,
    /// `cands` the candidate nodes in host id order), keeping the allocations. O(candidate
    /// nodes): a counting sort by zone.
    pub(crate) fn build(&mut self, hosts: &[HostPrep], aggs: &[Agg], cands: &[HostId]) {
        for z in &self.zones {
            self.slot[zone_key(z.zone)] = NO_HOST;
        }
        self.hosts.clear();
        self.totals.clear();
        self.zones.clear();
        self.pos.clear();
        self.block_sets.clear();
        self.dirty.clear();
        let listed_host = |id: HostId| hosts.get(id.index()).filter(|hp| listed(hp));
        for hp in cands.iter().filter_map(|&id| listed_host(id)) {
            let key = zone_key(hp.zone);
            if key >= self.slot.len() {
                self.slot.resize(key + 1, NO_HOST);
            }
            if self.slot[key] == NO_HOST {
                self.slot[key] = self.zones.len() as u32;
                self.zones.push(ZoneList { zone: hp.zone, start: 0, end: 0, set: HostSet::EMPTY });
            }
            self.zones[self.slot[key] as usize].end += 1;
        }
        let mut at = 0;
        for z in &mut self.zones {
            z.start = at;
            at += z.end;
            z.end = z.start;
        }
        self.hosts.resize(at as usize, HostId(0));
        self.totals.resize(at as usize, 0);
        for &id in cands {
            let Some(hp) = listed_host(id) else { continue };
            let agg = aggs.get(id.index()).unwrap_or(&Agg::EMPTY);
            let z = &mut self.zones[self.slot[zone_key(hp.zone)] as usize];
            self.hosts[z.end as usize] = id;
            self.totals[z.end as usize] = total(agg);
            z.set.push(id, agg);
            z.end += 1;
        }
        self.summarise_blocks();
    }

    /// Rebuilds [`ZoneLists::blocks`] from `totals`.
    fn summarise_blocks(&mut self) {
        self.blocks.clear();
        self.blocks.extend(self.totals.chunks(BLOCK).map(extremes));
    }

    /// Sets host `id`'s candidates' summary to `agg` (its total and its block's summary are
    /// redone at the next [`ZoneLists::refresh`]). Nothing when `id` is not listed.
    pub(crate) fn update(&mut self, id: HostId, agg: &Agg) {
        if self.pos.is_empty() && !self.hosts.is_empty() {
            self.index();
        }
        let Some(&p) = self.pos.get(id.index()).filter(|&&p| p != NO_HOST) else { return };
        if let Some(t) = self.totals.get_mut(p as usize) {
            *t = total(agg);
            self.dirty.push(p / BLOCK as u32);
        }
    }

    /// Each host's position in `hosts`, made once per build when the first update needs it.
    fn index(&mut self) {
        // Hosts not listed have no entry; a listed host's id is below any other's bound.
        let bound = self.hosts.iter().map(|h| h.index() + 1).max().unwrap_or(0);
        self.pos.clear();
        self.pos.resize(bound, NO_HOST);
        for (p, h) in self.hosts.iter().enumerate() {
            self.pos[h.index()] = p as u32;
        }
    }

    /// Redoes the summaries of the blocks and zones that [`ZoneLists::update`] changed
    /// (`aggs` indexed by host id, as updated). O(changed blocks × [`BLOCK`] + the changed
    /// zones' blocks).
    pub(crate) fn refresh(&mut self, aggs: &[Agg]) {
        if self.dirty.is_empty() {
            return;
        }
        let agg = |h: HostId| aggs.get(h.index()).copied().unwrap_or(Agg::EMPTY);
        let block_set = |hosts: &[HostId]| {
            let mut set = HostSet::EMPTY;
            for &h in hosts {
                set.push(h, &agg(h));
            }
            set
        };
        if self.block_sets.is_empty() {
            self.block_sets.extend(self.hosts.chunks(BLOCK).map(block_set));
        }
        self.dirty.sort_unstable();
        self.dirty.dedup();
        for &b in &self.dirty {
            let range = b as usize * BLOCK..((b as usize + 1) * BLOCK).min(self.hosts.len());
            if let (Some(e), Some(t)) = (self.blocks.get_mut(b as usize), self.totals.get(range.clone())) {
                *e = extremes(t);
            }
            if let (Some(set), Some(hosts)) = (self.block_sets.get_mut(b as usize), self.hosts.get(range)) {
                *set = block_set(hosts);
            }
        }
        // Each zone that a changed block overlaps: the blocks inside it, and its ends host by host.
        let mut next = 0;
        for z in &mut self.zones {
            let (start, end) = (z.start as usize, z.end as usize);
            while next < self.dirty.len() && (self.dirty[next] as usize + 1) * BLOCK <= start {
                next += 1;
            }
            if self.dirty.get(next).is_none_or(|&b| b as usize * BLOCK >= end) {
                continue;
            }
            let (first_full, end_full) = (start.div_ceil(BLOCK), end / BLOCK);
            let mut set = HostSet::EMPTY;
            if first_full < end_full {
                for b in self.block_sets.get(first_full..end_full).unwrap_or(&[]) {
                    set.add(b);
                }
                for p in (start..first_full * BLOCK).chain(end_full * BLOCK..end) {
                    let h = self.hosts[p];
                    set.push(h, &agg(h));
                }
            } else {
                for &h in self.hosts.get(start..end).unwrap_or(&[]) {
                    set.push(h, &agg(h));
                }
            }
            z.set = set;
        }
        self.dirty.clear();
    }

    /// The first position in `range` whose total is `≥ t` (`at_least`) or `≤ t`, skipping each
    /// block that starts in the range and holds none (nor, then, does its part in the range).
    /// Absent hosts never match.
    fn first_at(&self, range: std::ops::Range<usize>, t: i128, at_least: bool) -> Option<usize> {
        if at_least {
            self.first_hit(range, |v| hits(v, t, true), |(_, hi)| hi >= t)
        } else {
            self.first_hit(range, |v| hits(v, t, false), |(lo, _)| lo <= t)
        }
    }

    /// [`ZoneLists::first_at`] with the test of a total (`hit`) and of a block's extremes
    /// (`block_hit`, true when one of its totals may hit).
    #[inline]
    fn first_hit(
        &self,
        range: std::ops::Range<usize>,
        hit: impl Fn(i128) -> bool,
        block_hit: impl Fn((i128, i128)) -> bool,
    ) -> Option<usize> {
        let mut i = range.start;
        while i < range.end {
            if i % BLOCK == 0 {
                let extremes = self.blocks.get(i / BLOCK).copied().unwrap_or((i128::MIN, i128::MAX));
                if !block_hit(extremes) {
                    i += BLOCK;
                    continue;
                }
            }
            if self.totals.get(i).is_some_and(|&v| hit(v)) {
                return Some(i);
            }
            i += 1;
        }
        None
    }

    /// Everything a pick reads, as text (for tests comparing two lists).
    #[cfg(test)]
    pub(crate) fn digest(&self) -> String {
        let zones: Vec<String> = self.zones.iter().map(|z| format!("{:?}", z)).collect();
        format!("{:?}\n{:?}\n{:?}\n{}", self.hosts, self.totals, self.blocks, zones.join("\n"))
    }

    /// The engine's pick in the first tier when it is the union of the zones not in `used`
    /// (the zones holding a counted replica), or `None` when those zones list no host.
    /// `cands(h)` and `agg(h)` are host `h`'s static candidates and their summary.
    pub(crate) fn choose<'c>(
        &self,
        strategy: DiskChoice,
        s: i128,
        used: &[(DomainId, bool)],
        cands: impl Fn(HostId) -> &'c [Candidate],
        agg: impl Fn(HostId) -> Agg,
    ) -> Option<Candidate> {
        let unused = || self.zones.iter().filter(|z| !used.iter().any(|u| u.0 == z.zone));
        let mut all = HostSet::EMPTY;
        for z in unused() {
            all.add(&z.set);
        }
        if all.n == 0 {
            return None;
        }
        // Within a zone the hosts are in id order, so its first match is its lowest.
        let first_host = |t: i128, at_least: bool| {
            let mut win = NO_HOST;
            for z in unused() {
                if let Some(h) =
                    self.first_at(z.start as usize..z.end as usize, t, at_least).and_then(|i| self.hosts.get(i))
                {
                    win = win.min(h.0);
                }
            }
            win
        };
        all.choose(strategy, s, cands, agg, first_host)
    }
}

#[cfg(test)]
mod tests {
    use super::{ZoneLists, ABSENT};
    use crate::replica::{DiskChoice, LonghornVersion, Replica, ReplicaScheduler, ReplicaSettings, Volume};
    use crate::rng::SplitMix64;
    use crate::snapshot::{Cluster, DiskSpec, HostSpec, HostState};
    use proptest::prelude::*;

    const G: i64 = 1 << 30;

    /// A host: zone (or none), up, tagged, and disks as (maximum in 100 GiB, then available,
    /// reserved and scheduled in percent of it).
    type HostDraw = (Option<u8>, bool, bool, Vec<(i64, i64, i64, i64)>);

    fn host() -> impl Strategy<Value = HostDraw> {
        (
            prop::option::weighted(0.85, 0u8..4),
            prop::bool::weighted(0.9),
            prop::bool::weighted(0.3),
            prop::collection::vec((1i64..16, 0i64..=100, 0i64..=20, 0i64..=150), 0..4),
        )
    }

    fn cluster(hosts: &[HostDraw]) -> Cluster {
        let mut b = Cluster::builder();
        for (i, (zone, up, tagged, disks)) in hosts.iter().enumerate() {
            let mut h = HostSpec::new(format!("n{i:02}"));
            if let Some(z) = zone {
                h = h.zone(format!("z{z}"));
            }
            if !up {
                h = h.state(HostState { up: false, ..HostState::default() });
            }
            if *tagged {
                h = h.label("ssd", "");
            }
            for (d, &(max, avail, reserved, scheduled)) in disks.iter().enumerate() {
                let max = max * 100 * G;
                let disk = DiskSpec::new(format!("d{d}"), max, max / 100 * avail)
                    .reserved(max / 100 * reserved)
                    .scheduled(max / 100 * scheduled);
                h = h.disk(disk);
            }
            b = b.host(h);
        }
        b.build().unwrap()
    }

    /// The block-skipping search against a plain scan, over ranges that start and end inside
    /// and on block boundaries.
    #[test]
    fn first_at_agrees_with_a_scan() {
        let mut rng = SplitMix64::new(11);
        for len in [0usize, 1, 31, 32, 33, 64, 100, 257] {
            let totals = (0..len).map(|_| rng.below(50) as i128 * 10).collect();
            let mut lists = ZoneLists { totals, ..ZoneLists::default() };
            lists.summarise_blocks();
            for _ in 0..300 {
                let a = rng.below(len + 1);
                let b = a + rng.below(len + 1 - a);
                let t = rng.below(52) as i128 * 10 - 5 * rng.below(2) as i128;
                for at_least in [true, false] {
                    let want = (a..b).find(|&i| if at_least { lists.totals[i] >= t } else { lists.totals[i] <= t });
                    assert_eq!(lists.first_at(a..b, t, at_least), want, "{a}..{b} t={t} at_least={at_least}");
                }
            }
        }
    }

    /// The search never finds an absent host, whatever the bound.
    #[test]
    fn first_at_skips_absent_hosts() {
        let mut rng = SplitMix64::new(12);
        for len in [1usize, 32, 33, 100] {
            let draw = |rng: &mut SplitMix64| if rng.below(3) == 0 { ABSENT } else { rng.below(50) as i128 * 10 };
            let totals: Vec<i128> = (0..len).map(|_| draw(&mut rng)).collect();
            let mut lists = ZoneLists { totals, ..ZoneLists::default() };
            lists.summarise_blocks();
            for t in [ABSENT, ABSENT + 1, -1, 0, 250, 490, 500, i128::MAX] {
                for at_least in [true, false] {
                    let hit = |&v: &i128| v != ABSENT && if at_least { v >= t } else { v <= t };
                    let want = lists.totals.iter().position(hit);
                    assert_eq!(lists.first_at(0..len, t, at_least), want, "len={len} t={t} at_least={at_least}");
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// The first tier chosen from the zone lists gives the cascade's answer, replica by
        /// replica, for both disk choices and both versions, with and without replicas of the
        /// volume already placed (some failed or deleted, which do not count, so hosts holding
        /// replicas can lie in unused zones).
        #[test]
        fn zone_lists_pick_what_the_cascade_picks(
            hosts in prop::collection::vec(host(), 1..24),
            size in 0i64..400,
            replicas in 1u32..5,
            soft in any::<(bool, bool, bool)>(),
            most_usable in any::<bool>(),
            v1_10 in any::<bool>(),
            selector in any::<bool>(),
            existing in prop::collection::vec((0usize..12, 0usize..2, 0u8..3), 0..4),
        ) {
            let cluster = cluster(&hosts);
            let settings = ReplicaSettings {
                replica_soft_anti_affinity: soft.0,
                replica_zone_soft_anti_affinity: soft.1,
                replica_disk_soft_anti_affinity: soft.2,
                ..ReplicaSettings::default()
            };
            let choice = if most_usable { DiskChoice::MostUsableStorage } else { DiskChoice::BalanceScore };
            let version = if v1_10 { LonghornVersion::V1_10 } else { LonghornVersion::Head };
            let fast = ReplicaScheduler::builder(settings).disk_choice(choice).version(version).build().unwrap();
            let mut cascade = fast.clone();
            cascade.zone_lists = false;
            let mut volume = Volume::new("vol", size * G, replicas);
            if selector {
                volume.node_selector = vec!["ssd".to_owned()];
            }
            let existing: Vec<Replica> = existing
                .iter()
                .enumerate()
                .filter(|(_, e)| e.0 < hosts.len())
                .map(|(i, &(h, d, state))| {
                    let mut r = Replica::new(format!("vol-r-old{i}"));
                    r.node_id = format!("n{h:02}");
                    r.disk_id = format!("d{d}");
                    r.failed_at = (state == 1).then_some(1);
                    r.deleted = state == 2;
                    r
                })
                .collect();
            let want = cascade.schedule(&cluster, &volume, &existing, 1000).unwrap();
            prop_assert_eq!(fast.schedule(&cluster, &volume, &existing, 1000).unwrap(), want);
        }
    }
}
