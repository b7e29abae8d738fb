//! Counting new volumes one after another without an engine call per volume, for
//! [`capacity::volumes`](crate::capacity::volumes).
//!
//! The stepwise count calls [`ReplicaScheduler::schedule`] once per volume on a snapshot
//! holding the earlier volumes' replicas: O(hosts + disks) per volume. Here the volume's
//! preparation ([`Prep`]) is made once, and a volume redoes only what its replicas change: the
//! disks they landed on (their `scheduled` bytes, pre-filter, space check, and the candidates
//! and summary of their hosts, through the engine's own [`disk_stage::prepare_host`]).
//!
//! Within a volume, the tiers of a new volume are simple: the first holds the eligible hosts of
//! the zones no replica of the volume uses, the second every eligible host but the used ones
//! (plus the used ones under best-effort disk pressure), the third the used ones. The hosts
//! that hold a replica are few and are judged as the engine judges them
//! ([`disk_stage::dynamic_host`], [`disk_stage::holds`]); the others are leaves of a segment
//! tree ordered by (zone, host id), whose nodes carry what the disk choice reads of a set of
//! hosts ([`HostSet`]). A tier is then the union of O(zones + replicas) leaf ranges, and the
//! choice among its hosts is a few descents of the tree ([`HostSet::balance_host`]). The
//! leaves are the first tier's zone lists ([`ZoneLists`](super::zones::ZoneLists)), in order.
//!
//! Anything this cannot reproduce makes [`ReplicaScheduler::count_volumes`] return `None` (the
//! caller counts stepwise), and a volume it predicts to fail is handed back, so the caller's
//! stepwise count schedules that very volume and reports its message.

use super::choice::{Agg, Candidate, HostSet, NO_HOST};
use super::disk_stage;
use super::prep::Prep;
use super::volume::{DataLocality, Replica, Volume};
use super::{name_hash, Ctx, ReplicaScheduler};
use crate::id::{DiskId, DomainId, HostId};
use crate::rng::SplitMix64;
use crate::snapshot::{Cluster, HotDisk};
use smallvec::SmallVec;

/// What [`ReplicaScheduler::count_volumes`] counted.
#[derive(Debug, Default)]
pub(crate) struct Count {
    /// Every counted volume's replicas, `(name, host, disk)`, in the order the stepwise count
    /// writes them (volume by volume, each volume's replicas in name order).
    pub(crate) placed: Vec<(String, HostId, DiskId)>,
    /// Volumes counted: the limit, or the index of the first volume predicted not to place
    /// in full (the stepwise count schedules it next).
    pub(crate) volumes: u32,
}

/// No leaf.
const NONE: u32 = u32::MAX;

/// A segment tree of [`HostSet`]s over the leaves `0..len` (a power-of-two layout).
#[derive(Debug)]
struct Tree {
    size: usize,
    nodes: Vec<HostSet>,
}

impl Tree {
    fn new(leaves: &[HostSet]) -> Tree {
        let size = leaves.len().next_power_of_two().max(1);
        let mut nodes = vec![HostSet::EMPTY; 2 * size];
        nodes[size..size + leaves.len()].copy_from_slice(leaves);
        for i in (1..size).rev() {
            let mut n = nodes[2 * i];
            n.add(&nodes[2 * i + 1]);
            nodes[i] = n;
        }
        Tree { size, nodes }
    }

    /// Replaces leaf `i`. O(log leaves).
    fn set(&mut self, i: usize, leaf: HostSet) {
        let mut k = self.size + i;
        self.nodes[k] = leaf;
        while k > 1 {
            k /= 2;
            let mut n = self.nodes[2 * k];
            n.add(&self.nodes[2 * k + 1]);
            self.nodes[k] = n;
        }
    }

    /// Adds leaves `a..b` into `acc`. O(log leaves).
    fn query(&self, a: usize, b: usize, acc: &mut HostSet) {
        let (mut l, mut r) = (a + self.size, b + self.size);
        while l < r {
            if l & 1 == 1 {
                acc.add(&self.nodes[l]);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                acc.add(&self.nodes[r]);
            }
            l /= 2;
            r /= 2;
        }
    }

    /// The leftmost leaf of `a..b` for which `hit` holds, where `hit` of a node holds whenever
    /// it holds for one of its leaves (and is only a bound otherwise). O(log leaves).
    fn leftmost(&self, a: usize, b: usize, hit: &impl Fn(&HostSet) -> bool) -> Option<usize> {
        self.descend(1, 0, self.size, a, b, hit)
    }

    fn descend(
        &self,
        k: usize,
        lo: usize,
        hi: usize,
        a: usize,
        b: usize,
        hit: &impl Fn(&HostSet) -> bool,
    ) -> Option<usize> {
        if hi <= a || b <= lo || !hit(&self.nodes[k]) {
            return None;
        }
        if hi - lo == 1 {
            return Some(lo);
        }
        let mid = (lo + hi) / 2;
        self.descend(2 * k, lo, mid, a, b, hit).or_else(|| self.descend(2 * k + 1, mid, hi, a, b, hit))
    }
}

/// Which of a new volume's tiers (the engine's tier cascade with no replica evicting).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tier {
    /// Eligible hosts in zones without a replica of the volume.
    NewZone,
    /// Eligible hosts without one, plus the used ones whose disks are under pressure.
    Unused,
    /// The hosts holding one.
    Used,
}

/// One host of a tier judged per replica (it holds a replica of the volume): its candidates in
/// [`Sim::dyn_cands`] and their summary.
#[derive(Debug, Clone, Copy)]
struct DynEntry {
    host: HostId,
    start: u32,
    len: u32,
    agg: Agg,
}

/// The simulation of the stepwise count.
struct Sim<'a> {
    s: &'a ReplicaScheduler,
    cx: Ctx<'a>,
    prep: Prep,
    /// Bytes the counted volumes added to each disk's `scheduled` (indexed like `prep.disks`).
    extra: Vec<u64>,
    tree: Tree,
    /// Each host's leaf, or [`NONE`] for a host in no tier.
    leaf_of: Vec<u32>,
    /// Each leaf's host.
    host_of: Vec<HostId>,
    /// `(zone, first leaf, end leaf)`, in leaf order.
    zones: Vec<(DomainId, u32, u32)>,
    flags: (bool, bool, bool),
    // Buffers.
    disk_buf: Vec<HotDisk>,
    dyn_cands: Vec<Candidate>,
    dyn_entries: Vec<DynEntry>,
    ranges: Vec<(u32, u32)>,
}

impl ReplicaScheduler {
    /// Counts new volumes like `volume` (named `<name>`, `<name>-1` …) placed one after another,
    /// each seeing the earlier ones' replicas, up to `limit`, exactly as calling
    /// [`schedule`](ReplicaScheduler::schedule) volume after volume does; stops
    /// before the first volume predicted not to place in full. `None` when the configuration is
    /// not one this reproduces: the caller's hooks, data locality, a volume or a disk the
    /// engine refuses ([`Volume::validate`](super::Volume::validate), a disk above its maximum).
    ///
    /// Computes in O(hosts + disks) once, then per volume O(replicas × ((zones + replicas) ×
    /// log hosts + replicas × the disks of the hosts holding them)).
    pub(crate) fn count_volumes(&self, cluster: &Cluster, volume: &Volume, limit: u32) -> Option<Count> {
        let r = volume.number_of_replicas as usize;
        // A volume or disk the engine refuses goes the stepwise way, which gives its message.
        if volume.validate().is_err()
            || cluster.disk_above_maximum().is_some()
            || self.hooks.is_some()
            || volume.data_locality != DataLocality::Disabled
        {
            return None;
        }
        let mut sim = Sim::new(self, cluster, volume)?;
        let mut count = Count::default();
        let mut names: Vec<String> = Vec::with_capacity(r);
        let mut replicas: Vec<Replica> = Vec::with_capacity(r);
        let mut at: Vec<(Option<HostId>, Option<DiskId>)> = Vec::with_capacity(r);
        let mut placed: SmallVec<[(HostId, DiskId); 8]> = SmallVec::new();
        while count.volumes < limit {
            let k = count.volumes;
            let name = if k == 0 { volume.name.clone() } else { format!("{}-{k}", volume.name) };
            // The engine's names: drawn in creation order, scheduled in name order.
            let mut rng = SplitMix64::new(self.seed ^ name_hash(&[&name]));
            names.clear();
            for _ in 0..r {
                let n = loop {
                    let n = format!("{}-r-{:08x}", name, rng.next_u64() as u32);
                    if !names.contains(&n) {
                        break n;
                    }
                };
                names.push(n);
            }
            names.sort();
            replicas.clear();
            at.clear();
            replicas.extend(names.iter().map(|n| Replica::new(n.clone())));
            at.resize(r, (None, None));
            placed.clear();
            for i in 0..r {
                let Some(c) = sim.place(&replicas, &at, &placed) else { return Some(count) };
                at[i] = (Some(c.host), Some(c.disk));
                // As the engine writes a placement: not counted by the disk's `scheduled` yet
                // (`holds` reads only that the replica names a disk).
                replicas[i].disk_id = "-".to_owned();
                replicas[i].counted = false;
                placed.push((c.host, c.disk));
            }
            if !sim.commit(&placed) {
                return Some(count);
            }
            for (n, &(h, d)) in names.drain(..).zip(&placed) {
                count.placed.push((n, h, d));
            }
            count.volumes += 1;
        }
        Some(count)
    }
}

impl<'a> Sim<'a> {
    fn new(s: &'a ReplicaScheduler, cluster: &'a Cluster, volume: &'a Volume) -> Option<Sim<'a>> {
        let cx = Ctx::new(s, cluster, volume).ok()?;
        let mut prep = Prep::default();
        prep.fill(&cx, None);
        // The leaves: the first tier's hosts zone by zone (without candidate nodes there are
        // none, and every volume fails at its first replica: it is handed back).
        let disks = prep.disks.len();
        let sel = prep.zones.hosts.clone();
        let zones: Vec<(DomainId, u32, u32)> = prep.zones.zones.iter().map(|z| (z.zone, z.start, z.end)).collect();
        let mut leaf_of = vec![NONE; prep.hosts.len()];
        let mut leaves = Vec::with_capacity(sel.len());
        for (i, &id) in sel.iter().enumerate() {
            leaf_of[id.index()] = i as u32;
            leaves.push(HostSet::leaf(id, prep.aggs.get(id.index())?));
        }
        Some(Sim {
            s,
            flags: s.effective_anti_affinity(volume),
            cx,
            extra: vec![0; disks],
            tree: Tree::new(&leaves),
            leaf_of,
            host_of: sel,
            zones,
            prep,
            disk_buf: Vec::new(),
            dyn_cands: Vec::new(),
            dyn_entries: Vec::new(),
            ranges: Vec::new(),
        })
    }

    /// Host `id`'s disks in hot form as the current count sees them, into `disk_buf`.
    fn load_disks(&mut self, id: HostId) {
        let start = self.prep.hosts.get(id.index()).map_or(0, |h| h.disk_start as usize);
        self.disk_buf.clear();
        for (i, d) in self.cx.cluster.hot_disks(id).iter().enumerate() {
            let mut d = *d;
            d.scheduled += self.extra.get(start + i).copied().unwrap_or(0);
            self.disk_buf.push(d);
        }
    }

    /// Writes a placed volume's replicas into the disks and re-prepares their hosts. `false`
    /// (nothing written) when a disk's `scheduled` would leave the range the stepwise count
    /// writes without overflow.
    fn commit(&mut self, placed: &[(HostId, DiskId)]) -> bool {
        let size = self.cx.volume.size as u64;
        let mut add: SmallVec<[(usize, u64); 8]> = SmallVec::new();
        for &(h, d) in placed {
            let Some(hp) = self.prep.host(h) else { return false };
            let slot = hp.disk_start as usize + d.index();
            let Some(base) = self.cx.cluster.hot_disks(h).get(d.index()) else { return false };
            let before = base.scheduled
                + self.extra.get(slot).copied().unwrap_or(0)
                + add.iter().filter(|a| a.0 == slot).map(|a| a.1).sum::<u64>();
            if before.checked_add(size).is_none_or(|v| v > i64::MAX as u64) {
                return false;
            }
            add.push((slot, size));
        }
        for &(slot, bytes) in &add {
            if let Some(e) = self.extra.get_mut(slot) {
                *e += bytes;
            }
        }
        let mut hosts: SmallVec<[HostId; 8]> = placed.iter().map(|p| p.0).collect();
        hosts.sort_unstable();
        hosts.dedup();
        for h in hosts {
            self.reprepare(h);
        }
        true
    }

    /// Re-prepares host `id`'s disks for the volume after its disks changed, as the engine's
    /// preparation on the changed snapshot does.
    fn reprepare(&mut self, id: HostId) {
        self.load_disks(id);
        self.prep.reprepare_host(&self.cx, id, &self.disk_buf, None);
        let agg = self.prep.aggs.get(id.index()).copied().unwrap_or(Agg::EMPTY);
        if let Some(&leaf) = self.leaf_of.get(id.index()).filter(|&&l| l != NONE) {
            self.tree.set(leaf as usize, HostSet::leaf(id, &agg));
        }
    }

    /// The engine's placement of the next replica of a volume whose replicas so far are
    /// `placed` (`replicas` / `at` as the engine's list and resolved places), or `None` when
    /// the engine would not place it.
    fn place(
        &mut self,
        replicas: &[Replica],
        at: &[(Option<HostId>, Option<DiskId>)],
        placed: &[(HostId, DiskId)],
    ) -> Option<Candidate> {
        let mut used: SmallVec<[HostId; 8]> = placed.iter().map(|p| p.0).collect();
        used.sort_unstable();
        used.dedup();
        let mut zones: SmallVec<[DomainId; 8]> =
            used.iter().map(|&h| self.prep.host(h).map_or(DomainId::NONE, |hp| hp.zone)).collect();
        zones.sort_unstable();
        zones.dedup();
        let (node_soft, zone_soft, _) = self.flags;
        let mut tiers: SmallVec<[Tier; 3]> = SmallVec::new();
        tiers.push(Tier::NewZone);
        if zone_soft {
            tiers.push(Tier::Unused);
            if node_soft {
                tiers.push(Tier::Used);
            }
        }
        for tier in tiers {
            if let Some(c) = self.tier(tier, &used, &zones, replicas, at) {
                return Some(c);
            }
        }
        None
    }

    /// The pick within `tier`, or `None` when it has no candidate.
    fn tier(
        &mut self,
        tier: Tier,
        used: &[HostId],
        zones: &[DomainId],
        replicas: &[Replica],
        at: &[(Option<HostId>, Option<DiskId>)],
    ) -> Option<Candidate> {
        // The static hosts: leaf ranges, each within one zone (leaves in host id order).
        self.ranges.clear();
        match tier {
            Tier::NewZone => {
                for &(z, a, b) in &self.zones {
                    if zones.binary_search(&z).is_err() {
                        self.ranges.push((a, b));
                    }
                }
            }
            Tier::Unused => {
                let mut cut: SmallVec<[u32; 8]> =
                    used.iter().filter_map(|h| self.leaf_of.get(h.index()).copied()).filter(|&l| l != NONE).collect();
                cut.sort_unstable();
                let mut next = 0;
                for &(_, a, b) in &self.zones {
                    let mut from = a;
                    while next < cut.len() && cut[next] < b {
                        if cut[next] > from {
                            self.ranges.push((from, cut[next]));
                        }
                        from = cut[next] + 1;
                        next += 1;
                    }
                    if from < b {
                        self.ranges.push((from, b));
                    }
                }
            }
            Tier::Used => {}
        }
        let mut all = HostSet::EMPTY;
        for &(a, b) in &self.ranges {
            self.tree.query(a as usize, b as usize, &mut all);
        }
        // The hosts judged per replica, in id order.
        self.dyn_cands.clear();
        self.dyn_entries.clear();
        for &h in used {
            let pressured = self.prep.host(h).is_some_and(|hp| hp.pressured);
            if tier == Tier::NewZone || (tier == Tier::Unused && !pressured) {
                continue;
            }
            self.load_disks(h);
            let Some(hp) = self.prep.host(h).copied() else { continue };
            let start = self.dyn_cands.len();
            let disk_prep = self.prep.disks.get(hp.disk_start as usize..).unwrap_or(&[]);
            disk_stage::dynamic_host(
                &self.cx,
                h,
                &self.disk_buf,
                self.cx.cluster.host(h),
                disk_prep,
                hp.disks,
                replicas,
                at,
                &mut self.dyn_cands,
                |_, _| {},
            );
            let len = self.dyn_cands.len() - start;
            if len > 0 {
                self.dyn_entries.push(DynEntry { host: h, start: start as u32, len: len as u32, agg: Agg::EMPTY });
            }
        }
        if !self.dyn_entries.is_empty() {
            // Step 11: disk anti-affinity over the held disks, as the engine filters.
            let any_free = all.n > 0 || self.dyn_cands.iter().any(|c| !disk_stage::holds(c, replicas, at));
            let filter = any_free || !self.flags.2;
            let mut w = 0usize;
            for e in self.dyn_entries.iter_mut() {
                let start = w;
                let mut agg = Agg::EMPTY;
                for k in e.start as usize..(e.start + e.len) as usize {
                    let c = self.dyn_cands[k];
                    if filter && disk_stage::holds(&c, replicas, at) {
                        continue;
                    }
                    agg.push(&c);
                    self.dyn_cands[w] = c;
                    w += 1;
                }
                e.start = start as u32;
                e.len = (w - start) as u32;
                e.agg = agg;
            }
            self.dyn_cands.truncate(w);
            self.dyn_entries.retain(|e| e.len > 0);
            for e in &self.dyn_entries {
                all.push(e.host, &e.agg);
            }
        }
        if all.n == 0 {
            return None;
        }
        let s = self.cx.volume.size as i128;
        all.choose(
            self.s.disk_choice,
            s,
            |h| self.cands_of(h),
            |h| self.agg_of(h),
            |t, at_least| self.first_host(t, at_least),
        )
    }

    /// Host `id`'s candidates in the current tier: its judged-per-replica list when it holds a
    /// replica, else its static one.
    fn cands_of(&self, id: HostId) -> &[Candidate] {
        if let Some(e) = self.dyn_entries.iter().find(|e| e.host == id) {
            return self.dyn_cands.get(e.start as usize..(e.start + e.len) as usize).unwrap_or(&[]);
        }
        self.prep.static_cands(id)
    }

    fn agg_of(&self, id: HostId) -> Agg {
        match self.dyn_entries.iter().find(|e| e.host == id) {
            Some(e) => e.agg,
            None => self.prep.aggs.get(id.index()).copied().unwrap_or(Agg::EMPTY),
        }
    }

    /// The lowest host id of the current tier whose total is `≥ t` (`at_least`) or `≤ t`.
    fn first_host(&self, t: i128, at_least: bool) -> u32 {
        let hit = |n: &HostSet| n.n > 0 && if at_least { n.max[0] >= t } else { n.min[0] <= t };
        let mut win = NO_HOST;
        for &(a, b) in &self.ranges {
            if let Some(leaf) = self.tree.leftmost(a as usize, b as usize, &hit) {
                if let Some(h) = self.host_of.get(leaf) {
                    win = win.min(h.0);
                }
            }
        }
        for e in &self.dyn_entries {
            let v = e.agg.sum;
            if (at_least && v >= t) || (!at_least && v <= t) {
                win = win.min(e.host.0);
            }
        }
        win
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replica::space::DiskSpace;

    fn leaf(host: u32, totals: &[i64]) -> HostSet {
        let mut agg = Agg::EMPTY;
        for (d, &t) in totals.iter().enumerate() {
            let space = DiskSpace::new(t.max(1), t, 0, 0);
            agg.push(&Candidate::new(HostId(host), DiskId(d as u32), space));
        }
        HostSet::leaf(HostId(host), &agg)
    }

    /// Range summaries and leftmost searches against a scan of the leaves.
    #[test]
    fn the_tree_agrees_with_a_scan() {
        let mut rng = SplitMix64::new(5);
        for len in [1usize, 2, 3, 7, 64, 100] {
            let mut leaves: Vec<HostSet> = (0..len)
                .map(|i| {
                    let n = rng.below(3);
                    let totals: Vec<i64> = (0..n).map(|_| rng.below(6) as i64 * 10).collect();
                    leaf(i as u32, &totals)
                })
                .collect();
            let mut tree = Tree::new(&leaves);
            for _ in 0..200 {
                if rng.below(4) == 0 {
                    let i = rng.below(len);
                    leaves[i] = leaf(i as u32, &[rng.below(6) as i64 * 10]);
                    tree.set(i, leaves[i]);
                }
                let a = rng.below(len + 1);
                let b = a + rng.below(len + 1 - a);
                let mut got = HostSet::EMPTY;
                tree.query(a, b, &mut got);
                let mut want = HostSet::EMPTY;
                for l in &leaves[a..b] {
                    want.add(l);
                }
                assert_eq!(
                    (got.n, got.sum, got.max, got.min, got.first),
                    (want.n, want.sum, want.max, want.min, want.first)
                );
                assert_eq!(
                    (got.mus, got.mus_host, got.disks.n, got.disks.sum),
                    (want.mus, want.mus_host, want.disks.n, want.disks.sum)
                );
                let t = rng.below(7) as i128 * 10;
                let ge = tree.leftmost(a, b, &|n: &HostSet| n.n > 0 && n.max[0] >= t);
                assert_eq!(ge, (a..b).find(|&i| leaves[i].n > 0 && leaves[i].sum >= t));
                let le = tree.leftmost(a, b, &|n: &HostSet| n.n > 0 && n.min[0] <= t);
                assert_eq!(le, (a..b).find(|&i| leaves[i].n > 0 && leaves[i].sum <= t));
            }
        }
    }
}
