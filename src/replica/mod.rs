//! The replica scheduler: Longhorn / SUSE Storage replica placement on a [`Cluster`] snapshot.
//!
//! # Contents
//!
//! - [Quick example](#quick-example)
//! - [Mapping Longhorn onto the snapshot](#mapping-longhorn-onto-the-snapshot)
//! - [Step order](#step-order)
//! - [Versions](#versions)
//! - [Determinism](#determinism)
//!
//! # Quick example
//!
//! ```
//! use placewise::replica::{ReplicaScheduler, ReplicaSettings, Volume};
//! use placewise::{Cluster, DiskSpec, HostSpec};
//!
//! const G: i64 = 1 << 30;
//! let cluster = Cluster::builder()
//!     .host(HostSpec::new("n1").zone("z1").disk(DiskSpec::new("d1", 100 * G, 80 * G)))
//!     .host(HostSpec::new("n2").zone("z2").disk(DiskSpec::new("d1", 100 * G, 90 * G)))
//!     .build()?;
//! let scheduler = ReplicaScheduler::new(ReplicaSettings::default())?;
//! let result = scheduler.schedule_volume(&cluster, &Volume::new("vol", G, 3), &[], 0);
//! assert_eq!(result.placed().count(), 2); // node anti-affinity is hard by default
//! assert_eq!(result.condition_message().as_deref(), Some("replica scheduling failed"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Mapping Longhorn onto the snapshot
//!
//! | Longhorn | placewise |
//! |---|---|
//! | node `Ready` condition | [`HostState::up`](crate::HostState) |
//! | node `spec.allowScheduling` | `HostState::enabled` |
//! | node `spec.evictionRequested` | `HostState::evicting` (an evicting node is unschedulable, as Longhorn's webhook enforces) |
//! | node `Schedulable` (cordoned) | `HostState::cordoned`, excluded when `disable-scheduling-on-cordoned-node` |
//! | node tags | host **label keys**: a label `fast=<anything>` is the tag `fast`; values are ignored |
//! | `status.zone` / `status.region` | the host's topology levels `zone` / `region`; missing → `""`, so hosts without a zone form one zone |
//! | default instance manager running | host attribute `im_running` (bool, default true) |
//! | engine image deployed (v1) | host attribute `engine_image_ready` (bool, default true) |
//! | v2 data engine disabled on the node | host attribute `v2_disabled` (bool, default false) |
//! | disk `storageMaximum` / `storageAvailable` / `storageReserved` / `storageScheduled` | [`Disk`](crate::Disk) `maximum` / `available` / `reserved` / `scheduled` |
//! | disk `allowScheduling`, `evictionRequested`, `tags`, `type`, `fsType`, `Ready` | `Disk` `allow_scheduling`, `eviction_requested`, `tags`, `disk_type`, `fs_type`, `ready` |
//! | disk `Schedulable` condition | derived: `ready` and the space check with size 0 and actual 0 (as the node controller sets it) |
//! | disk UUID | the disk's name on its host: a replica's `disk_id` is that name |
//! | disk `scheduledReplica` | [`Replica::counted`]: whether `Disk::scheduled` already includes the replica |
//!
//! # Step order
//!
//! [`ReplicaScheduler::schedule_replica`] follows the reference's §3 exactly: preconditions;
//! schedulable nodes; hard node affinity; topology requirement; engine image; disk pre-filter;
//! anti-affinity flags and the replenishment window; used nodes and zones (from candidate nodes
//! only); node classes (node selector, except for the used-node tier); the tier cascade
//! (new node in a new zone → new node in a used zone → used node, as the settings allow); per-disk
//! eligibility (type, filesystem size limit, tags) and the space check with in-cycle accounting;
//! disk anti-affinity; best-effort data locality; the disk choice. Not modelled: linked clones
//! (step 3) and the v2 "disable v2" kube label beyond the `v2_disabled` attribute.
//!
//! # Versions
//!
//! [`LonghornVersion::Head`] (v1.11+, the default) and [`LonghornVersion::V1_10`] differ in the
//! default disk choice ([`DiskChoice`]), the in-cycle accounting scope (per disk vs per node,
//! bug #12653) and whether wrong-type disks record `disks are unavailable` or are skipped silently.
//!
//! # Determinism
//!
//! Longhorn breaks ties by Go map order. Here every tie (equal balance scores, the "arbitrary
//! disk" fallback, equal most-usable storage) takes the lowest (host id, disk id); pending
//! replicas are scheduled in name order; data directory suffixes come from a generator seeded
//! with [`ReplicaScheduler::seed`] and the replica name. Each result is one Longhorn could produce.

mod choice;
mod disk_stage;
mod node_stage;
mod plan;
mod reasons;
mod settings;
mod space;
mod volume;

#[cfg(test)]
mod tests;

pub use choice::DiskChoice;
pub use plan::{plan_auto_balance, plan_data_locality, Move, MoveKind};
pub use reasons::{DiskNote, FailureReason, NodeNote, Reasons, ReplicaExplanation, Tier};
pub use settings::{ReplicaSettings, SETTING_NAMES};
pub use space::{
    is_pressure_move_target, is_schedulable_to_disk, is_under_pressure, percent_of, unused_percentage, DiskSpace,
    SpaceFailure,
};
pub use volume::{
    AutoBalance, BackingImage, DataEngine, DataLocality, Replica, Robustness, SoftAntiAffinity, TopologyTerm, Volume,
};

use crate::id::{DiskId, DomainId, HostId, Symbol};
use crate::rng::SplitMix64;
use crate::snapshot::{Cluster, Host};
use choice::Candidate;
use serde::{Deserialize, Serialize};

/// Wrong input to the replica scheduler. Scheduling failures are outcomes, not errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReplicaError {
    /// A setting name Longhorn does not have (or placewise does not read).
    #[error("unknown setting `{name}` (known: {known})")]
    UnknownSetting {
        /// The name given.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// A setting value of the wrong kind or out of range.
    #[error("invalid value `{value}` for setting `{name}`")]
    InvalidSetting {
        /// The setting.
        name: String,
        /// The value given.
        value: String,
    },
    /// A replica index outside the replica list.
    #[error("replica index {index} out of range ({len} replicas)")]
    ReplicaIndex {
        /// The index given.
        index: usize,
        /// The number of replicas.
        len: usize,
    },
}

/// Which Longhorn release's behaviour to reproduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum LonghornVersion {
    /// v1.11+ and master: balance score, per-disk in-cycle accounting, wrong-type disks reported.
    #[default]
    Head,
    /// v1.10.x: most usable storage, per-node in-cycle accounting, wrong-type disks skipped.
    V1_10,
}

/// Where a replica was placed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReplicaPlacement {
    /// The host.
    pub host: HostId,
    /// The disk on it.
    pub disk: DiskId,
    /// The host name (the replica's `nodeID`).
    pub node_id: String,
    /// The disk name (the replica's `diskID`).
    pub disk_id: String,
    /// `<volume>-<8 hex digits>`.
    pub data_directory_name: String,
}

/// The result of scheduling one replica.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ReplicaOutcome {
    /// The placement, or `None` when the replica cannot be scheduled.
    pub placement: Option<ReplicaPlacement>,
    /// Longhorn's reason keys (empty on success and on anti-affinity-only failures).
    pub reasons: Reasons,
    /// Per-node and per-disk notes (filled only with [`ReplicaScheduler::explain`]).
    pub explanation: ReplicaExplanation,
}

impl ReplicaOutcome {
    /// Longhorn's message for a failure: the joined keys, or `replica scheduling failed`.
    pub fn message(&self) -> Option<String> {
        self.placement.is_none().then(|| self.reasons.condition_message())
    }
}

/// What one scheduling call reads, resolved once.
pub(crate) struct Ctx<'a> {
    pub(crate) cluster: &'a Cluster,
    pub(crate) volume: &'a Volume,
    pub(crate) replicas: &'a [Replica],
    pub(crate) settings: &'a ReplicaSettings,
    pub(crate) version: LonghornVersion,
    zone_level: Option<usize>,
    region_level: Option<usize>,
    pub(crate) node_selector: Vec<Option<Symbol>>,
    pub(crate) image_node_selector: Vec<Option<Symbol>>,
    pub(crate) disk_selector: Vec<Option<Symbol>>,
    pub(crate) image_disk_selector: Vec<Option<Symbol>>,
    pub(crate) has_backing_image: bool,
}

impl<'a> Ctx<'a> {
    fn new(s: &'a ReplicaScheduler, cluster: &'a Cluster, volume: &'a Volume, replicas: &'a [Replica]) -> Self {
        let syms = |tags: &[String]| tags.iter().map(|t| cluster.symbols().get(t)).collect::<Vec<_>>();
        let image = volume.backing_image.as_ref();
        Ctx {
            cluster,
            volume,
            replicas,
            settings: &s.settings,
            version: s.version,
            zone_level: cluster.topology().zone_level(),
            region_level: cluster.topology().level("region"),
            node_selector: syms(&volume.node_selector),
            image_node_selector: image.map(|i| syms(&i.node_selector)).unwrap_or_default(),
            disk_selector: syms(&volume.disk_selector),
            image_disk_selector: image.map(|i| syms(&i.disk_selector)).unwrap_or_default(),
            has_backing_image: image.is_some(),
        }
    }

    pub(crate) fn zone(&self, id: HostId) -> DomainId {
        match (self.zone_level, self.cluster.host(id)) {
            (Some(l), Some(h)) => h.domain(l),
            _ => DomainId::NONE,
        }
    }

    fn level_name(&self, level: Option<usize>, id: HostId) -> &str {
        let Some(l) = level else { return "" };
        let Some(h) = self.cluster.host(id) else { return "" };
        self.cluster.topology().value(l, h.domain(l)).map_or("", |v| self.cluster.resolve(v))
    }

    pub(crate) fn zone_name(&self, id: HostId) -> &str {
        self.level_name(self.zone_level, id)
    }

    pub(crate) fn region_name(&self, id: HostId) -> &str {
        self.level_name(self.region_level, id)
    }
}

/// A boolean host attribute (`true`/`false` JSON values; anything else reads as `default`).
pub(crate) fn attr_bool(h: &Host, name: &str, default: bool) -> bool {
    h.attribute(name).and_then(|v| v.as_bool()).unwrap_or(default)
}

/// The replica scheduler: settings, the Longhorn version to follow, and the disk choice.
///
/// Cheap to clone; holds no per-call state.
#[derive(Debug, Clone)]
pub struct ReplicaScheduler {
    settings: ReplicaSettings,
    version: LonghornVersion,
    disk_choice: DiskChoice,
    explain: bool,
    seed: u64,
}

fn name_hash(parts: &[&str]) -> u64 {
    // FNV-1a: stable across runs and platforms, unlike `DefaultHasher`.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

impl ReplicaScheduler {
    /// A scheduler following [`LonghornVersion::Head`] with the balance-score disk choice.
    ///
    /// # Errors
    ///
    /// [`ReplicaError::InvalidSetting`] when a setting is out of range.
    pub fn new(settings: ReplicaSettings) -> Result<Self, ReplicaError> {
        settings.validate()?;
        Ok(ReplicaScheduler {
            settings,
            version: LonghornVersion::Head,
            disk_choice: DiskChoice::BalanceScore,
            explain: false,
            seed: 0,
        })
    }

    /// Follows `version`, and takes that version's disk choice.
    pub fn version(mut self, version: LonghornVersion) -> Self {
        self.version = version;
        self.disk_choice = match version {
            LonghornVersion::Head => DiskChoice::BalanceScore,
            LonghornVersion::V1_10 => DiskChoice::MostUsableStorage,
        };
        self
    }

    /// Overrides the disk choice strategy (call after [`ReplicaScheduler::version`]).
    pub fn disk_choice(mut self, choice: DiskChoice) -> Self {
        self.disk_choice = choice;
        self
    }

    /// Records per-node and per-disk notes in every outcome (costs an allocation per call).
    pub fn explain(mut self, on: bool) -> Self {
        self.explain = on;
        self
    }

    /// Seeds the data directory suffixes and new replica names.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The settings.
    pub fn settings(&self) -> &ReplicaSettings {
        &self.settings
    }

    /// Effective auto-balance for `volume`: the volume value unless `ignored`, else the global
    /// one, where a global `ignored` reads as `disabled`.
    pub fn effective_auto_balance(&self, volume: &Volume) -> AutoBalance {
        match volume.replica_auto_balance {
            AutoBalance::Ignored => match self.settings.replica_auto_balance {
                AutoBalance::Ignored => AutoBalance::Disabled,
                v => v,
            },
            v => v,
        }
    }

    /// The effective (node, zone, disk) soft anti-affinity flags for `volume`.
    pub fn effective_anti_affinity(&self, volume: &Volume) -> (bool, bool, bool) {
        let s = &self.settings;
        (
            ReplicaSettings::effective(s.replica_soft_anti_affinity, volume.replica_soft_anti_affinity),
            ReplicaSettings::effective(s.replica_zone_soft_anti_affinity, volume.replica_zone_soft_anti_affinity),
            ReplicaSettings::effective(s.replica_disk_soft_anti_affinity, volume.replica_disk_soft_anti_affinity),
        )
    }

    /// Whether failed replicas stop occupying their node and zone: the volume is degraded and
    /// `now ≥ lastDegradedAt + replica-replenishment-wait-interval`.
    pub fn replenishing(&self, volume: &Volume, now: i64) -> bool {
        volume.robustness == Robustness::Degraded
            && volume
                .last_degraded_at
                .is_some_and(|t| now >= t.saturating_add(self.settings.replica_replenishment_wait_interval))
    }

    /// Schedules `replicas[index]` of `volume`, seeing the other replicas as they are (placed
    /// ones occupy nodes, zones and disks). Does not change anything. `now` is in seconds.
    ///
    /// Computes in O(hosts + disks × replicas).
    ///
    /// # Errors
    ///
    /// [`ReplicaError::ReplicaIndex`] when `index` is out of range.
    pub fn schedule_replica(
        &self,
        cluster: &Cluster,
        volume: &Volume,
        replicas: &[Replica],
        index: usize,
        now: i64,
    ) -> Result<ReplicaOutcome, ReplicaError> {
        if index >= replicas.len() {
            return Err(ReplicaError::ReplicaIndex { index, len: replicas.len() });
        }
        Ok(self.schedule_one(cluster, volume, replicas, index, now))
    }

    pub(crate) fn schedule_one(
        &self,
        cluster: &Cluster,
        volume: &Volume,
        replicas: &[Replica],
        index: usize,
        now: i64,
    ) -> ReplicaOutcome {
        let mut out = ReplicaOutcome { placement: None, reasons: Reasons::default(), explanation: Default::default() };
        let replica = &replicas[index];
        if !replica.node_id.is_empty() {
            out.reasons.insert(FailureReason::AlreadyScheduled);
            return out;
        }
        if replica.is_failed() && replica.healthy_at.is_none() {
            out.reasons.insert(FailureReason::UnusedFailedReplica);
            return out;
        }
        let cx = Ctx::new(self, cluster, volume, replicas);
        let mut node_notes = self.explain.then(Vec::new);
        let mut disk_notes = self.explain.then(Vec::new);
        let mut cands = Vec::new();
        if let Err(r) = node_stage::candidates(&cx, replica, &mut cands, &mut node_notes) {
            out.reasons.insert(r);
            out.explanation.nodes = node_notes.unwrap_or_default();
            return out;
        }
        let replica_hosts: Vec<Option<HostId>> =
            replicas.iter().map(|r| if r.node_id.is_empty() { None } else { cluster.host_id(&r.node_id) }).collect();
        let (node_soft, zone_soft, disk_soft) = self.effective_anti_affinity(volume);
        let replenishing = self.replenishing(volume, now);
        let used = node_stage::used(&cx, &cands, &replica_hosts, replenishing);

        // Step 8: node classes.
        let best_effort = self.effective_auto_balance(volume) == AutoBalance::BestEffort;
        let pressure = self.settings.replica_auto_balance_disk_pressure_percentage;
        let allow_empty = self.settings.allow_empty_node_selector_volume;
        let (mut t_new_zone, mut t_unused, mut t_evict, mut t_evict_zone) = (vec![], vec![], vec![], vec![]);
        for &id in &cands {
            let h = cluster.host(id).expect("candidate exists");
            if !node_stage::node_tags_match(h, &cx.node_selector, allow_empty)
                || (cx.has_backing_image && !node_stage::node_tags_match(h, &cx.image_node_selector, allow_empty))
            {
                if let Some(v) = node_notes.as_mut() {
                    v.push((id, NodeNote::NodeSelector));
                }
                continue;
            }
            let node_used = used.node(id);
            let pressured = best_effort
                && pressure > 0
                && h.disks.iter().any(|d| space::is_under_pressure(DiskSpace::of(d), pressure));
            if node_used.is_none() || pressured {
                t_unused.push(id);
            }
            let zone_used = used.zone(cx.zone(id));
            if node_used == Some(true) {
                t_evict.push(id);
                if zone_used == Some(true) || best_effort {
                    t_evict_zone.push(id);
                }
            }
            if zone_used.is_none() {
                t_new_zone.push(id);
            }
        }
        let t_used: Vec<HostId> = used.nodes.iter().map(|n| n.0).collect();
        let mut tiers: Vec<(Tier, &[HostId])> = vec![(Tier::UnusedNodesInUnusedZones, &t_new_zone)];
        match (zone_soft, node_soft) {
            (false, _) => tiers.push((Tier::UnusedNodesInUnusedZonesAfterEviction, &t_evict_zone)),
            (true, false) => {
                tiers.push((Tier::UnusedNodes, &t_unused));
                tiers.push((Tier::UnusedNodesAfterEviction, &t_evict));
            }
            (true, true) => {
                tiers.push((Tier::UnusedNodes, &t_unused));
                tiers.push((Tier::UsedNodes, &t_used));
            }
        }

        // Steps 9–11.
        let mut disks: Vec<Candidate> = Vec::new();
        let mut chosen_tier = None;
        for (tier, nodes) in tiers {
            disks.clear();
            for &id in nodes {
                disk_stage::node_disks(&cx, id, &replica_hosts, &mut disks, &mut out.reasons, &mut disk_notes);
            }
            disk_stage::anti_affinity(&cx, &mut disks, &replica_hosts, disk_soft, &mut disk_notes);
            if !disks.is_empty() {
                chosen_tier = Some(tier);
                break;
            }
        }
        out.explanation.tier = chosen_tier;
        if disks.is_empty() {
            out.explanation.nodes = node_notes.unwrap_or_default();
            out.explanation.disks = disk_notes.unwrap_or_default();
            return out;
        }
        disks.sort_by_key(|c| (c.host, c.disk));

        // Step 12: best-effort locality, then the choice.
        if volume.data_locality == DataLocality::BestEffort && !volume.node_id.is_empty() {
            if let Some(local) = cluster.host_id(&volume.node_id) {
                let has_local = replicas.iter().zip(&replica_hosts).any(|(r, h)| *h == Some(local) && !r.is_failed());
                if !has_local && disks.iter().any(|c| c.host == local) {
                    disks.retain(|c| c.host == local);
                }
            }
        }
        let mut buf = Vec::new();
        let pick = disks[choice::choose(self.disk_choice, &disks, volume.size, &mut buf)];
        let host = cluster.host(pick.host).expect("candidate exists");
        let mut rng = SplitMix64::new(self.seed ^ name_hash(&[&volume.name, &replica.name]));
        out.placement = Some(ReplicaPlacement {
            host: pick.host,
            disk: pick.disk,
            node_id: host.name.to_string(),
            disk_id: host.disks[pick.disk.index()].name.to_string(),
            data_directory_name: format!("{}-{:08x}", volume.name, rng.next_u64() as u32),
        });
        out.explanation.nodes = node_notes.unwrap_or_default();
        out.explanation.disks = disk_notes.unwrap_or_default();
        out
    }

    /// Brings `volume` to `numberOfReplicas`: creates the missing replicas (all N for a new
    /// volume; `numberOfReplicas − usable` otherwise, collapsing Longhorn's one-per-pass loop),
    /// then schedules every pending replica in name order, writing each placement back so the
    /// next one sees it (node, zone, disk and in-cycle space; not the balance score, which reads
    /// disk status only). Nothing is applied to the cluster.
    ///
    /// Replicas of a volume with data locality wait (stay unscheduled, with no reason) until the
    /// volume is attached; strict-local replicas get a hard node affinity to the attached node.
    ///
    /// Computes in O(replicas × (hosts + disks × replicas)).
    pub fn schedule_volume(
        &self,
        cluster: &Cluster,
        volume: &Volume,
        replicas: &[Replica],
        now: i64,
    ) -> VolumeSchedule {
        let mut list: Vec<Replica> = replicas.to_vec();
        let usable = list.iter().filter(|r| !r.is_failed() && !r.eviction_requested && r.active && !r.deleted).count();
        let missing = (volume.number_of_replicas as usize).saturating_sub(usable);
        let mut rng = SplitMix64::new(self.seed ^ name_hash(&[&volume.name]));
        let mut created = Vec::new();
        for _ in 0..missing {
            let name = loop {
                let n = format!("{}-r-{:08x}", volume.name, rng.next_u64() as u32);
                if !list.iter().any(|r| r.name == n) {
                    break n;
                }
            };
            let mut r = Replica::new(name.clone());
            if volume.data_locality == DataLocality::StrictLocal {
                r.hard_node_affinity = volume.node_id.clone();
            }
            list.push(r);
            created.push(name);
        }
        list.sort_by(|a, b| a.name.cmp(&b.name));
        let waiting = volume.data_locality != DataLocality::Disabled && volume.node_id.is_empty();
        let mut results = Vec::new();
        if !waiting {
            for i in 0..list.len() {
                if !list[i].node_id.is_empty() || list[i].is_failed() || list[i].deleted {
                    continue;
                }
                let outcome = self.schedule_one(cluster, volume, &list, i, now);
                if let Some(p) = &outcome.placement {
                    let r = &mut list[i];
                    r.node_id = p.node_id.clone();
                    r.disk_id = p.disk_id.clone();
                    r.data_directory_name = p.data_directory_name.clone();
                    r.counted = false;
                }
                results.push((list[i].name.clone(), outcome));
            }
        }
        VolumeSchedule { replicas: list, created, results, waiting_for_attachment: waiting }
    }
}

/// The result of [`ReplicaScheduler::schedule_volume`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct VolumeSchedule {
    /// Every replica after the call, in name order, new placements written in (with
    /// [`Replica::counted`] false).
    pub replicas: Vec<Replica>,
    /// Names of the replicas created by the call.
    pub created: Vec<String>,
    /// One outcome per replica the call tried to schedule, in the order tried.
    pub results: Vec<(String, ReplicaOutcome)>,
    /// Data locality is on and the volume is detached: nothing was scheduled.
    pub waiting_for_attachment: bool,
}

impl VolumeSchedule {
    /// The successful placements, in the order made.
    pub fn placed(&self) -> impl Iterator<Item = (&str, &ReplicaPlacement)> + '_ {
        self.results.iter().filter_map(|(n, o)| o.placement.as_ref().map(|p| (n.as_str(), p)))
    }

    /// The union of every failure's reasons.
    pub fn reasons(&self) -> Reasons {
        let mut all = Reasons::default();
        for (_, o) in &self.results {
            if o.placement.is_none() {
                for &r in o.reasons.as_slice() {
                    all.insert(r);
                }
            }
        }
        all
    }

    /// The volume `Scheduled=False` message when some replica failed: the joined reasons of every
    /// failure, or `replica scheduling failed`; `None` when every tried replica was placed.
    pub fn condition_message(&self) -> Option<String> {
        self.results.iter().any(|(_, o)| o.placement.is_none()).then(|| self.reasons().condition_message())
    }
}
