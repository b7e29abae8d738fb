//! Property tests for the replica scheduler against a plain model of the reference's rules.
//!
//! Generated: 3–12 hosts in 1–4 zones, 1–4 disks each (varied maximum / available / reserved /
//! scheduled bytes, tags, `allow_scheduling`, eviction, `ready`), some hosts down, disabled,
//! evicting or cordoned; settings with every anti-affinity combination, minimal-available and
//! over-provisioning percentages, the allow-empty flags; then 1–3 volumes (size, 1–5 replicas,
//! node and disk selectors, anti-affinity overrides), each scheduled with `schedule` and
//! its placements applied to the cluster (disk `scheduled` += size) before the next one.
//!
//! - **(a) Over-provisioning.** After every call, each disk that received a replica has
//!   `scheduled + size × new replicas ≤ trunc((max − reserved) × over% / 100)`, computed here in
//!   integer bytes (§4).
//! - **(b) Hard anti-affinity.** Under hard disk anti-affinity no new replica shares a disk with
//!   another replica of the volume; under hard node (zone) anti-affinity none shares a node (a
//!   zone) with a replica on a candidate node.
//! - **(c) Tier order, against a model.** Replica by replica, a plain model (candidate nodes,
//!   used nodes and zones, node classes, the tier cascade of §3 step 9, per-disk eligibility and
//!   space check with in-cycle accounting, disk anti-affinity) computes the first non-empty tier's
//!   candidate disks; the library must fail exactly when that set is empty for every tier, and
//!   otherwise pick a disk of the first non-empty tier. So a replica lands on a used zone (node)
//!   only when no eligible new-zone (new-node) disk existed. Under v1.10 the pick must also have
//!   the largest `available − reserved` of that set.
//! - **(d) Determinism.** The same input and seed give the same result twice, on the cluster
//!   rebuilt from its JSON, and `schedule_replica` on the first pending replica agrees with the
//!   first outcome of `schedule`.
//!
//! Byte values stay below 2^46 × 100 / 200 so that Longhorn's `float(a) × float(pct) / 100`
//! truncation equals the integer `a × pct / 100` used here.

use placewise::replica::{LonghornVersion, Replica, ReplicaScheduler, ReplicaSettings, Volume};
use placewise::snapshot::ClusterSpec;
use placewise::snapshot::DiskSpec;
use placewise::{Cluster, HostSpec};
use proptest::prelude::*;

use crate::replica_gen;
use std::collections::BTreeSet;

const G: i64 = 1 << 30;
const ZONES: [&str; 4] = ["z1", "z2", "z3", "z4"];

fn disk_strategy(index: usize) -> impl Strategy<Value = DiskSpec> {
    (1i64..=40, 0u32..=100, 0u32..=50, 0u32..=150, 0u8..4, 0u8..20, 0u8..20, 0u8..20).prop_map(
        move |(max_q, avail_pct, res_pct, sched_pct, tags, allow, evict, ready)| {
            // Quarter-GiB units: sizes land on the limits now and then.
            let max = max_q * G / 4 * 4;
            let mut d = replica_gen::disk(index, max, avail_pct, res_pct, sched_pct)
                .allow_scheduling(allow != 0)
                .eviction_requested(evict == 0)
                .ready(ready != 0);
            d.tags = replica_gen::subset(&replica_gen::DISK_TAGS, tags);
            d
        },
    )
}

fn host_strategy() -> impl Strategy<Value = (usize, u8, [u8; 4], Vec<DiskSpec>)> {
    (
        0usize..4,
        0u8..4,
        [0u8..12, 0u8..12, 0u8..8, 0u8..20],
        (1usize..=4).prop_flat_map(|n| (0..n).map(disk_strategy).collect::<Vec<_>>()),
    )
}

fn cluster_strategy() -> impl Strategy<Value = ClusterSpec> {
    (1usize..=4, prop::collection::vec(host_strategy(), 3..=12)).prop_map(|(zones, hosts)| {
        let hosts = hosts
            .into_iter()
            .enumerate()
            .map(|(i, (z, tags, draws, disks))| {
                let state = replica_gen::host_state(draws);
                let mut h = HostSpec::new(format!("n{i:02}")).zone(ZONES[z % zones]).state(state);
                for t in replica_gen::subset(&replica_gen::NODE_TAGS, tags) {
                    h = h.label(t, "");
                }
                h.disks = disks;
                h
            })
            .collect();
        let mut spec = ClusterSpec::default();
        spec.hosts = hosts;
        spec
    })
}

fn volume_strategy(index: usize) -> impl Strategy<Value = Volume> {
    (
        1i64..=24,
        1u32..=5,
        0u8..4,
        0u8..4,
        0u8..3,
        replica_gen::soft_override(),
        replica_gen::soft_override(),
        replica_gen::soft_override(),
    )
        .prop_map(move |(size_q, replicas, node_sel, disk_sel, shape, node, zone, disk)| {
            let mut v = Volume::new(format!("vol{index}"), size_q * G / 2, replicas);
            // Selectors on a third of the volumes each, so most volumes place something.
            if shape == 0 {
                v.node_selector = replica_gen::subset(&replica_gen::NODE_TAGS, node_sel);
            }
            if shape == 1 {
                v.disk_selector = replica_gen::subset(&replica_gen::DISK_TAGS, disk_sel);
            }
            v.replica_soft_anti_affinity = node;
            v.replica_zone_soft_anti_affinity = zone;
            v.replica_disk_soft_anti_affinity = disk;
            v
        })
}

fn volumes_strategy() -> impl Strategy<Value = Vec<Volume>> {
    (1usize..=3).prop_flat_map(|n| (0..n).map(volume_strategy).collect::<Vec<_>>())
}

fn version_strategy() -> impl Strategy<Value = LonghornVersion> {
    prop::sample::select(vec![LonghornVersion::Head, LonghornVersion::V1_10])
}

/// `trunc(a × pct / 100)` in integers (exact for the generated sizes, see the crate docs).
fn pct(a: i64, pct: i64) -> i64 {
    (a as i128 * pct as i128 / 100) as i64
}

/// §4, written out independently.
fn space_ok(size: i64, actual: i64, max: i64, avail: i64, reserved: i64, scheduled: i64, s: &ReplicaSettings) -> bool {
    max > 0
        && avail > 0
        && avail - actual > pct(max, s.storage_minimal_available_percentage)
        && size + scheduled <= pct(max - reserved, s.storage_over_provisioning_percentage)
}

fn over_limit(d: &DiskSpec, s: &ReplicaSettings) -> i64 {
    pct(d.maximum - d.reserved, s.storage_over_provisioning_percentage)
}

/// §6: every selector tag present; an empty selector matches when allowed or the object is untagged.
fn tags_ok(tags: &BTreeSet<&str>, selector: &[String], allow_empty: bool) -> bool {
    if selector.is_empty() {
        return allow_empty || tags.is_empty();
    }
    selector.iter().all(|t| tags.contains(t.as_str()))
}

/// A placed replica as the model sees it: (host index, disk index, placed in this call).
type Placed = (usize, usize, bool);

/// The candidate set of the first non-empty tier, as (host, disk) indices, for the generated
/// shape (healthy replicas only, v1 filesystem disks, no locality, affinity, topology or
/// auto-balance). `None` when every tier is empty.
fn model_candidates(
    spec: &ClusterSpec,
    s: &ReplicaSettings,
    version: LonghornVersion,
    v: &Volume,
    placed: &[Placed],
) -> Option<Vec<(usize, usize)>> {
    let node_soft = ReplicaSettings::effective(s.replica_soft_anti_affinity, v.replica_soft_anti_affinity);
    let zone_soft = ReplicaSettings::effective(s.replica_zone_soft_anti_affinity, v.replica_zone_soft_anti_affinity);
    let disk_soft = ReplicaSettings::effective(s.replica_disk_soft_anti_affinity, v.replica_disk_soft_anti_affinity);
    let zone = |h: usize| spec.hosts[h].topology.get("zone").cloned().unwrap_or_default();
    let cand = |h: usize| {
        let st = spec.hosts[h].state;
        st.up && st.enabled && !st.evicting && !(st.cordoned && s.disable_scheduling_on_cordoned_node)
    };
    let used_nodes: BTreeSet<usize> = placed.iter().map(|p| p.0).filter(|&h| cand(h)).collect();
    let used_zones: BTreeSet<String> = used_nodes.iter().map(|&h| zone(h)).collect();
    let selected = |h: usize| {
        let tags: BTreeSet<&str> = spec.hosts[h].labels.keys().map(String::as_str).collect();
        tags_ok(&tags, &v.node_selector, s.allow_empty_node_selector_volume)
    };
    let all: Vec<usize> = (0..spec.hosts.len()).filter(|&h| cand(h)).collect();
    let new_zone: Vec<usize> = all.iter().copied().filter(|&h| selected(h) && !used_zones.contains(&zone(h))).collect();
    let new_node: Vec<usize> = all.iter().copied().filter(|&h| selected(h) && !used_nodes.contains(&h)).collect();
    // The used-node tier is not filtered by the node selector (TV15).
    let used: Vec<usize> = used_nodes.iter().copied().collect();
    let mut tiers = vec![new_zone];
    if zone_soft {
        tiers.push(new_node);
        if node_soft {
            tiers.push(used);
        }
    }
    let disk_eligible = |h: usize, i: usize| {
        let d = &spec.hosts[h].disks[i];
        let tags: BTreeSet<&str> = d.tags.iter().map(String::as_str).collect();
        // A replica of the volume on this host adds the volume size unless disk i lists it (an
        // existing replica is listed by its own disk only): HEAD counts only replicas on disk
        // i, v1.10 every replica on the node (bug #12653).
        let listed = |p: &Placed| !p.2 && p.1 == i;
        let on_disk = |p: &Placed| version == LonghornVersion::V1_10 || p.1 == i;
        let in_cycle = placed.iter().filter(|p| p.0 == h && on_disk(p) && !listed(p)).count() as i64;
        d.allow_scheduling
            && !d.eviction_requested
            && d.ready
            && space_ok(0, 0, d.maximum, d.available, d.reserved, d.scheduled, s)
            && tags_ok(&tags, &v.disk_selector, s.allow_empty_disk_selector_volume)
            && space_ok(v.size, v.actual_size, d.maximum, d.available, d.reserved, d.scheduled + in_cycle * v.size, s)
    };
    for nodes in tiers {
        let disks: Vec<(usize, usize)> = nodes
            .iter()
            .flat_map(|&h| (0..spec.hosts[h].disks.len()).map(move |i| (h, i)))
            .filter(|&(h, i)| disk_eligible(h, i))
            .collect();
        let holds = |c: &(usize, usize)| placed.iter().any(|p| (p.0, p.1) == *c);
        let free: Vec<(usize, usize)> = disks.iter().copied().filter(|c| !holds(c)).collect();
        let kept = if !free.is_empty() {
            free
        } else if disk_soft {
            disks
        } else {
            Vec::new()
        };
        if !kept.is_empty() {
            return Some(kept);
        }
    }
    None
}

fn host_index(spec: &ClusterSpec, name: &str) -> usize {
    spec.hosts.iter().position(|h| h.name == name).expect("placed on a known host")
}

fn disk_index(spec: &ClusterSpec, h: usize, name: &str) -> usize {
    spec.hosts[h].disks.iter().position(|d| d.name == name).expect("placed on a known disk")
}

/// A healthy replica of `volume` on one of the first disks, to start from a used node now and then.
fn existing_replica(spec: &ClusterSpec, volume: &str, pick: usize) -> Replica {
    let h = pick % spec.hosts.len();
    let host = &spec.hosts[h];
    Replica::on(format!("{volume}-a-existing"), host.name.clone(), host.disks[pick % host.disks.len()].name.clone())
}

fn check(
    mut spec: ClusterSpec,
    settings: ReplicaSettings,
    version: LonghornVersion,
    volumes: Vec<Volume>,
    existing: Option<usize>,
    seed: u64,
) -> Result<(), TestCaseError> {
    let scheduler = ReplicaScheduler::builder(settings.clone()).version(version).seed(seed).build().unwrap();
    for v in &volumes {
        let cluster = Cluster::from_spec(&spec).unwrap();
        let replicas: Vec<Replica> = existing.map(|p| existing_replica(&spec, &v.name, p)).into_iter().collect();
        let result = scheduler.schedule(&cluster, v, &replicas, 0).unwrap();

        // (d) Determinism: twice, from JSON, and one replica at a time.
        prop_assert_eq!(&scheduler.schedule(&cluster, v, &replicas, 0).unwrap(), &result);
        let again = Cluster::from_json(&cluster.to_json()).unwrap();
        prop_assert_eq!(&scheduler.schedule(&again, v, &replicas, 0).unwrap(), &result);
        if let Some((first, outcome)) = result.selections.first() {
            let mut list = replicas.clone();
            list.extend(result.created.iter().map(|n| Replica::new(n.clone())));
            list.sort_by(|a, b| a.name.cmp(&b.name));
            let i = list.iter().position(|r| &r.name == first).unwrap();
            prop_assert_eq!(&scheduler.schedule_replica(&cluster, v, &list, i, 0).unwrap(), outcome);
        }

        // (c) Replica by replica against the model.
        let mut placed: Vec<Placed> = replicas
            .iter()
            .map(|r| {
                let h = host_index(&spec, &r.node_id);
                (h, disk_index(&spec, h, &r.disk_id), false)
            })
            .collect();
        for (name, outcome) in &result.selections {
            let model = model_candidates(&spec, &settings, version, v, &placed);
            match (&outcome.placement, model) {
                (None, None) => {}
                (None, Some(m)) => prop_assert!(false, "{name} failed but the model has {m:?}"),
                (Some(p), None) => {
                    prop_assert!(false, "{name} placed on {}/{} but the model has nothing", p.node_id, p.disk_id)
                }
                (Some(p), Some(m)) => {
                    let h = host_index(&spec, &p.node_id);
                    let d = disk_index(&spec, h, &p.disk_id);
                    prop_assert!(m.contains(&(h, d)), "{name} on {h}/{d}, model tier holds {m:?}");
                    if version == LonghornVersion::V1_10 {
                        let usable = |(h, d): (usize, usize)| {
                            let disk = &spec.hosts[h].disks[d];
                            disk.available - disk.reserved
                        };
                        let best = m.iter().map(|&c| usable(c)).max().unwrap();
                        prop_assert_eq!(usable((h, d)), best, "v1.10 must pick the most usable storage");
                    }
                    placed.push((h, d, true));
                }
            }
        }

        // (b) Hard anti-affinity, checked on the final placements.
        let (node_soft, zone_soft, disk_soft) = scheduler.effective_anti_affinity(v);
        let st = |h: usize| spec.hosts[h].state;
        let cand = |h: usize| {
            st(h).up
                && st(h).enabled
                && !st(h).evicting
                && !(st(h).cordoned && settings.disable_scheduling_on_cordoned_node)
        };
        let zone = |h: usize| spec.hosts[h].topology.get("zone").cloned();
        for (i, a) in placed.iter().enumerate().filter(|(_, p)| p.2) {
            for (j, b) in placed.iter().enumerate() {
                if i == j {
                    continue;
                }
                if !disk_soft {
                    prop_assert!((a.0, a.1) != (b.0, b.1), "hard disk anti-affinity broken: {a:?} {b:?}");
                }
                if !node_soft && cand(b.0) {
                    prop_assert!(a.0 != b.0, "hard node anti-affinity broken: {a:?} {b:?}");
                }
                if !zone_soft && cand(b.0) {
                    prop_assert!(zone(a.0) != zone(b.0), "hard zone anti-affinity broken: {a:?} {b:?}");
                }
            }
        }

        // (a) Over-provisioning, then apply the placements for the next volume.
        for h in 0..spec.hosts.len() {
            for d in 0..spec.hosts[h].disks.len() {
                let new = placed.iter().filter(|p| p.2 && (p.0, p.1) == (h, d)).count() as i64;
                if new == 0 {
                    continue;
                }
                let disk = &mut spec.hosts[h].disks[d];
                disk.scheduled += new * v.size;
                let limit = over_limit(disk, &settings);
                prop_assert!(
                    disk.scheduled <= limit,
                    "{}/{} scheduled {} > limit {}",
                    spec.hosts[h].name,
                    spec.hosts[h].disks[d].name,
                    spec.hosts[h].disks[d].scheduled,
                    limit
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn placements_respect_space_anti_affinity_and_tiers(
        spec in cluster_strategy(),
        settings in replica_gen::settings(false),
        version in version_strategy(),
        volumes in volumes_strategy(),
        existing in prop::option::of(0usize..64),
        seed in any::<u64>(),
    ) {
        check(spec, settings, version, volumes, existing, seed)?;
    }
}

/// (c), weaker but model-free: with both soft flags false, every new replica gets its own node
/// and zone, or the volume reports a failure.
#[test]
fn hard_node_and_zone_spread_or_report() {
    let mut spec = ClusterSpec::default();
    for (i, z) in ["z1", "z1", "z2", "z3"].iter().enumerate() {
        spec.hosts.push(HostSpec::new(format!("n{i}")).zone(*z).disk(DiskSpec::new("d", 100 * G, 80 * G)));
    }
    let cluster = Cluster::from_spec(&spec).unwrap();
    let s = ReplicaSettings::from_pairs([
        ("replica-soft-anti-affinity", "false"),
        ("replica-zone-soft-anti-affinity", "false"),
    ])
    .unwrap();
    let scheduler = ReplicaScheduler::new(s).unwrap();
    for n in 1..=5 {
        let r = scheduler.schedule(&cluster, &Volume::new("v", G, n), &[], 0).unwrap();
        let zones: BTreeSet<String> =
            r.placed().map(|(_, p)| spec.hosts[host_index(&spec, &p.node_id)].topology["zone"].clone()).collect();
        let nodes: BTreeSet<&str> = r.placed().map(|(_, p)| p.node_id.as_str()).collect();
        assert_eq!(zones.len(), r.placed().count());
        assert_eq!(nodes.len(), r.placed().count());
        assert_eq!(r.placed().count(), (n as usize).min(3));
        assert_eq!(r.condition_message().is_some(), n > 3);
    }
}
