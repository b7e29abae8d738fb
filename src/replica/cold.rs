//! A new volume on a snapshot without a kept preparation, when each of its replicas lands in
//! the first tier (unused nodes in unused zones): one pass that keeps per host only what the
//! first tier's choice searches (its usable total and its zone) and per zone the summary the
//! choice reads ([`HostSet`]); the candidates of the few hosts the choice looks at are worked
//! out again when it asks.
//!
//! [`Prep::fill`](super::prep::Prep::fill) keeps every host's state, disks and candidates
//! because the later tiers, the counted replicas and the explanations read them; a new volume
//! whose replicas all go to unused zones reads none of them. The hosts are prepared one by one
//! as that fill prepares them ([`Lone`]), and the choice is the zone lists' ([`HostSet::choose`]
//! over the unused zones), so the answer is the general path's. When a replica would not land
//! in the first tier, [`ReplicaScheduler::schedule`] takes the general path from the
//! start.

use super::choice::{Agg, Candidate, HostSet, NO_HOST};
use super::node_stage::HostPrep;
use super::prep::Lone;
use super::reasons::Tier;
use super::volume::{DataLocality, Replica, Volume};
use super::zones::{self, ABSENT};
use super::{Ctx, ReplicaOutcome, ReplicaScheduler, ReplicaSelection, MAX_VOLUME_REPLICAS};
use crate::id::{DomainId, HostId};
use crate::rng::SplitMix64;
use crate::snapshot::{Cluster, CHUNK};

/// The first tier of a new volume: each host's total and zone, each zone's hosts summarised.
#[derive(Debug)]
struct ColdTier {
    /// Per host id: the usable total of its static candidates when the first tier lists it
    /// with at least one, else [`ABSENT`].
    totals: Vec<i128>,
    /// Per host id: its zone (read where `totals` is not [`ABSENT`]).
    zone_of: Vec<DomainId>,
    /// The zones of the hosts with a total, in the order of their lowest one, each with those
    /// hosts summarised.
    zones: Vec<(DomainId, HostSet)>,
}

impl ColdTier {
    /// One pass over the hosts of `cx`'s snapshot, each prepared by `lone`. O(hosts + disks).
    ///
    /// The commonest host, plain with every disk a candidate, is added to its zone's set
    /// straight from its disks
    /// ([`DiskRules::add_all_candidates`](super::disk_stage::DiskRules::add_all_candidates));
    /// a plain host the node selectors drop is not listed whatever its disks, so they are not
    /// read.
    fn new(cx: &Ctx<'_>, lone: &mut Lone) -> Self {
        let cluster = cx.cluster;
        let bound = cluster.id_bound();
        let mut tier =
            ColdTier { totals: Vec::with_capacity(bound), zone_of: Vec::with_capacity(bound), zones: Vec::new() };
        // Each zone's position in `zones` by `zones::zone_key`.
        let mut slot: Vec<u32> = Vec::new();
        // A copy: nothing the pass writes can change it, so it need not be read again per host.
        let rules = lone.disk_rules();
        for c in 0..cluster.chunk_count() {
            let hot = cluster.hot_chunk(c);
            let selected = lone.selected(cx, hot);
            let plain = lone.plain_lanes(hot);
            for lane in 0..bound.saturating_sub(c * CHUNK).min(CHUNK) {
                let id = HostId::from_index(c * CHUNK + lane);
                if plain >> lane & 1 == 1 {
                    let zone = hot.zone[lane];
                    let total = if selected >> lane & 1 == 1 {
                        let (slot, zones) = (&mut slot, &mut tier.zones);
                        rules.add_all_candidates(id, hot.lane_disks(lane), move || zone_set(slot, zones, zone))
                    } else {
                        Some(ABSENT)
                    };
                    if let Some(total) = total {
                        tier.zone_of.push(zone);
                        tier.totals.push(total);
                        continue;
                    }
                }
                let (hp, agg) = lone.host(cx, hot, c, lane, selected);
                tier.zone_of.push(hp.zone);
                if agg.n == 0 || !lone.listed(&hp) {
                    tier.totals.push(ABSENT);
                    continue;
                }
                tier.totals.push(zones::total(&agg));
                zone_set(&mut slot, &mut tier.zones, hp.zone).push(id, &agg);
            }
        }
        tier
    }

    /// The engine's pick in the first tier when it is the union of the zones not in `used`
    /// (what [`ZoneLists::choose`](super::zones::ZoneLists::choose) gives), or `None` when
    /// those zones list no host with a candidate.
    fn choose(&self, cx: &Ctx<'_>, s: &ReplicaScheduler, used: &[DomainId]) -> Option<Candidate> {
        let mut all = HostSet::EMPTY;
        for (zone, set) in &self.zones {
            if !used.contains(zone) {
                all.add(set);
            }
        }
        if all.n == 0 {
            return None;
        }
        let first_host = |t: i128, at_least: bool| {
            let unused = |&(&v, z): &(&i128, &DomainId)| zones::hits(v, t, at_least) && !used.contains(z);
            self.totals.iter().zip(&self.zone_of).position(|p| unused(&p)).map_or(NO_HOST, |i| i as u32)
        };
        let cands = |h: HostId| {
            let mut lone = Lone::new(cx);
            let hp = prepare(cx, &mut lone, h).0;
            lone.cands(&hp).to_vec()
        };
        let agg = |h: HostId| prepare(cx, &mut Lone::new(cx), h).1;
        all.choose(s.disk_choice, cx.volume.size as i128, cands, agg, first_host)
    }
}

/// The set of zone `zone` in `zones`, added (empty) when it is not there yet; `slot` holds each
/// zone's position in `zones` by [`zones::zone_key`] ([`NO_HOST`]: not there).
fn zone_set<'z>(slot: &mut Vec<u32>, zones: &'z mut Vec<(DomainId, HostSet)>, zone: DomainId) -> &'z mut HostSet {
    let key = zones::zone_key(zone);
    if key >= slot.len() {
        slot.resize(key + 1, NO_HOST);
    }
    if slot[key] == NO_HOST {
        slot[key] = zones.len() as u32;
        zones.push((zone, HostSet::EMPTY));
    }
    &mut zones[slot[key] as usize].1
}

/// Host `id` of `cx`'s snapshot prepared by `lone`.
fn prepare(cx: &Ctx<'_>, lone: &mut Lone, id: HostId) -> (HostPrep, Agg) {
    let (c, lane) = (id.index() / CHUNK, id.index() % CHUNK);
    let hot = cx.cluster.hot_chunk(c);
    let selected = lone.selected(cx, hot);
    lone.host(cx, hot, c, lane, selected)
}

impl ReplicaScheduler {
    /// [`ReplicaScheduler::schedule`] for a new volume (no replica yet) whose replicas
    /// all land in the first tier, by [`ColdTier`]; `None` when the volume or the scheduler asks
    /// for more than the first tier's choice (caller hooks, an explanation, data locality, a
    /// replica count of 0 or above the limit, a negative size, an existing replica), when the
    /// snapshot has fewer zones than the volume has replicas (counting hosts without a zone as
    /// one), or when a replica would not land there: the general path then answers.
    pub(super) fn cold_volume(
        &self,
        cluster: &Cluster,
        volume: &Volume,
        replicas: &[Replica],
    ) -> Option<ReplicaOutcome> {
        let n = volume.number_of_replicas;
        if !self.cold_pass
            || !self.zone_lists
            || self.hooks.is_some()
            || self.explain
            || !replicas.is_empty()
            || n == 0
            || n > MAX_VOLUME_REPLICAS
            || volume.data_locality != DataLocality::Disabled
            || volume.size < 0
        {
            return None;
        }
        // Each replica needs a zone of its own: with fewer zones than replicas (commonly one,
        // hosts without a zone) the pass would find out only at the end.
        let topology = cluster.topology();
        let zones = topology.zone_level().map_or(0, |level| topology.domains(level).len()) + 1;
        if n as usize > zones {
            return None;
        }
        // No hooks here (checked above): preparing cannot fail.
        let cx = Ctx::new(self, cluster, volume).ok()?;
        let tier = ColdTier::new(&cx, &mut Lone::new(&cx));
        // The names the general path creates, in its order; then scheduled in name order, each
        // replica's zone used for the next.
        let mut rng = SplitMix64::new(self.seed ^ super::name_hash(&[&volume.name]));
        let mut list: Vec<Replica> = Vec::with_capacity(n as usize);
        let mut created = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let name = super::new_replica_name(volume, &mut rng, &list);
            list.push(Replica::new(name.clone()));
            created.push(name);
        }
        list.sort_by(|a, b| a.name.cmp(&b.name));
        let mut used: Vec<DomainId> = Vec::with_capacity(n as usize);
        let mut results = Vec::with_capacity(n as usize);
        for r in &mut list {
            let pick = tier.choose(&cx, self, &used)?;
            let placement = self.placement(cluster, volume, r, pick)?;
            used.push(tier.zone_of.get(pick.host.index()).copied().unwrap_or(DomainId::NONE));
            super::place_replica(r, &placement);
            let mut outcome = ReplicaSelection::new(cluster.len());
            outcome.placement = Some(placement);
            outcome.tier = Some(Tier::UnusedNodesInUnusedZones);
            outcome.explanation.available = 1;
            results.push((r.name.clone(), outcome));
        }
        Some(ReplicaOutcome {
            replicas: list,
            created,
            reused: Vec::new(),
            wait_seconds: 0,
            precheck_failure: None,
            selections: results,
            waiting_for_attachment: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::replica::{DataEngine, DiskChoice, LonghornVersion, Replica, ReplicaScheduler, ReplicaSettings, Volume};
    use crate::rng::SplitMix64;
    use crate::snapshot::{Cluster, DiskSpec, DiskType, HostSpec, HostState};
    use proptest::prelude::*;

    const G: i64 = 1 << 30;

    /// A cluster of up to 40 hosts over `zones` zones (0: none) drawn from `seed`: some hosts
    /// without a zone, down, cordoned, without a running instance manager or labelled; disks of
    /// every size and fill, some tagged, of block type, closed to scheduling, evicting or not
    /// ready.
    fn cluster(seed: u64, zones: usize) -> Cluster {
        let mut rng = SplitMix64::new(seed);
        let mut b = Cluster::builder();
        for i in 0..1 + rng.below(40) {
            let mut h = HostSpec::new(format!("n{i:02}"));
            if zones > 0 && rng.below(10) != 0 {
                h = h.zone(format!("z{}", rng.below(zones)));
            }
            match rng.below(14) {
                0 => h = h.state(HostState { up: false, ..HostState::default() }),
                1 => h = h.state(HostState { cordoned: true, ..HostState::default() }),
                2 => h = h.attribute("im_running", serde_json::Value::Bool(false)),
                _ => {}
            }
            if rng.below(5) == 0 {
                h = h.label("ssd", "");
            }
            for d in 0..rng.below(5) {
                let max = (1 + rng.below(16)) as i64 * 100 * G;
                let part = |rng: &mut SplitMix64, most: usize| max / 100 * rng.below(most + 1) as i64;
                let mut disk = DiskSpec::new(format!("d{d}"), max, part(&mut rng, 100))
                    .reserved(part(&mut rng, 20))
                    .scheduled(part(&mut rng, 150));
                disk = match rng.below(16) {
                    0 => disk.tag("fast"),
                    1 => disk.disk_type(DiskType::Block),
                    2 => disk.allow_scheduling(false),
                    3 => disk.eviction_requested(true),
                    4 => disk.ready(false),
                    _ => disk,
                };
                h = h.disk(disk);
            }
            b = b.host(h);
        }
        b.build().unwrap()
    }

    /// The scheduler both ways: with the one-pass first tier and without it.
    fn both(
        settings: ReplicaSettings,
        choice: DiskChoice,
        version: LonghornVersion,
    ) -> (ReplicaScheduler, ReplicaScheduler) {
        let cold = ReplicaScheduler::builder(settings).disk_choice(choice).version(version).build().unwrap();
        let mut general = cold.clone();
        general.cold_pass = false;
        (cold, general)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// A new volume scheduled by one pass is scheduled as the general path schedules it,
        /// for both disk choices, both versions and both engines, with node selectors, replica
        /// counts above the number of zones, and soft or hard anti-affinity; where the pass
        /// does not answer, `schedule` still gives the general path's answer.
        #[test]
        fn the_one_pass_first_tier_schedules_as_the_general_path(
            seed in any::<u64>(),
            zones in 0usize..5,
            size in prop_oneof![0i64..400, Just(0)],
            replicas in 1u32..6,
            soft in any::<(bool, bool)>(),
            most_usable in any::<bool>(),
            v1_10 in any::<bool>(),
            v2 in prop::bool::weighted(0.2),
            selector in prop::bool::weighted(0.3),
            percents in (0i64..60, 50i64..400),
        ) {
            let cluster = cluster(seed, zones);
            let settings = ReplicaSettings {
                replica_soft_anti_affinity: soft.0,
                replica_zone_soft_anti_affinity: soft.1,
                storage_minimal_available_percentage: percents.0,
                storage_over_provisioning_percentage: percents.1,
                ..ReplicaSettings::default()
            };
            let choice = if most_usable { DiskChoice::MostUsableStorage } else { DiskChoice::BalanceScore };
            let version = if v1_10 { LonghornVersion::V1_10 } else { LonghornVersion::Head };
            let (cold, general) = both(settings, choice, version);
            let mut volume = Volume::new("vol", size * G, replicas);
            if v2 {
                volume.data_engine = DataEngine::V2;
            }
            if selector {
                volume.node_selector = vec!["ssd".to_owned()];
            }
            let want = general.schedule(&cluster, &volume, &[], 1000).unwrap();
            if let Some(got) = cold.cold_volume(&cluster, &volume, &[]) {
                prop_assert_eq!(&got, &want);
            }
            prop_assert_eq!(cold.schedule(&cluster, &volume, &[], 1000).unwrap(), want);
        }
    }

    /// The pass answers for most volumes of a cluster with more zones than replicas, and not
    /// for one that needs a used zone; both answers are the general path's.
    #[test]
    fn the_one_pass_first_tier_answers_where_it_should() {
        let (cold, general) = both(ReplicaSettings::default(), DiskChoice::BalanceScore, LonghornVersion::Head);
        let volume = Volume::new("vol", 10 * G, 2);
        let mut answered = 0;
        for seed in 0..200 {
            let cluster = cluster(seed, 4);
            if let Some(got) = cold.cold_volume(&cluster, &volume, &[]) {
                answered += 1;
                assert_eq!(got, general.schedule(&cluster, &volume, &[], 0).unwrap(), "seed {seed}");
                assert_eq!(got.placed().count(), 2);
            }
        }
        assert!(answered >= 100, "the pass answered {answered} of 200 volumes");

        // One zone, two replicas: the second needs the unused nodes of a used zone (the pass is
        // not even tried).
        let one_zone = Cluster::builder()
            .host(HostSpec::new("a").zone("z").disk(DiskSpec::new("d", 100 * G, 90 * G)))
            .host(HostSpec::new("b").zone("z").disk(DiskSpec::new("d", 100 * G, 90 * G)))
            .build()
            .unwrap();
        assert!(cold.cold_volume(&one_zone, &volume, &[]).is_none());
        let placed = cold.schedule(&one_zone, &volume, &[], 0).unwrap();
        assert_eq!(placed.placed().count(), 2);
        assert_eq!(placed, general.schedule(&one_zone, &volume, &[], 0).unwrap());

        // Two zones, but the second one's disk is full: the pass runs and does not answer.
        let full_zone = Cluster::builder()
            .host(HostSpec::new("a").zone("z1").disk(DiskSpec::new("d", 100 * G, 90 * G)))
            .host(HostSpec::new("b").zone("z1").disk(DiskSpec::new("d", 100 * G, 90 * G)))
            .host(HostSpec::new("c").zone("z2").disk(DiskSpec::new("d", 100 * G, 0)))
            .build()
            .unwrap();
        assert!(cold.cold_volume(&full_zone, &volume, &[]).is_none());
        let placed = cold.schedule(&full_zone, &volume, &[], 0).unwrap();
        assert_eq!(placed.placed().count(), 2);
        assert_eq!(placed, general.schedule(&full_zone, &volume, &[], 0).unwrap());

        // Asked of an existing volume, of an explaining scheduler, or of a volume with data
        // locality, the pass does not answer.
        let replica = Replica::new("vol-r-00000000");
        assert!(cold.cold_volume(&one_zone, &volume, std::slice::from_ref(&replica)).is_none());
        assert!(ReplicaScheduler::builder(cold.settings().clone())
            .explain(true)
            .build()
            .unwrap()
            .cold_volume(&one_zone, &volume, &[])
            .is_none());
        let mut local = volume.clone();
        local.data_locality = crate::replica::DataLocality::BestEffort;
        assert!(cold.cold_volume(&one_zone, &local, &[]).is_none());
    }
}
