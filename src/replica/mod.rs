//! The replica scheduler: Longhorn / SUSE Storage replica placement on a [`Cluster`] snapshot.
//!
//! # Design
//!
//! A call prepares every host's node verdicts and every disk's pre-filter, eligibility and
//! space check once, then places each replica by Longhorn's step order: candidate nodes, the
//! tier cascade (new node in a new zone, new node in a used zone, used node), per-disk checks
//! with in-cycle accounting, disk anti-affinity, the disk choice. The engine computes
//! eligibility itself because the order of its checks decides which reason Longhorn reports;
//! the caller's node and disk hooks plug into its two stages. The snapshot-only part of the
//! preparation can be kept in a [`ReplicaScratch`]. Every fast path gives the general path's
//! answer, decision for decision.
//!
//! # Paths
//!
//! | path | when it runs | pinned by |
//! |---|---|---|
//! | general: a full preparation (`Prep::fill`), then the tier cascade over the listed hosts and their disks, per replica | [`ReplicaScheduler::schedule_replica`], and any volume none of the paths below takes | `placements_respect_space_anti_affinity_and_tiers` (`tests/properties/replica_properties.rs`), against a model of the first non-empty tier |
//! | candidate nodes of steps 2–4 listed once per call, zone by zone | every replica without a hard node affinity | `plain_candidates_are_the_stagewise_ones` (`src/replica/scratch.rs`) |
//! | the first tier without building it: a replica chosen from the unused zones' summaries and a block-skipping search (`zones.rs`) | no host of the first tier holds a replica of the volume; no hooks, explanation, hard node affinity or best-effort locality | `zone_lists_pick_what_the_cascade_picks`, `first_at_agrees_with_a_scan` (`src/replica/zones.rs`) |
//! | a new volume's first tier in one pass (`cold.rs`, `prep::Lone`, `DiskRules::add_all_candidates`) | [`ReplicaScheduler::schedule`] without a kept preparation, when every replica lands in that first tier | `the_one_pass_first_tier_schedules_as_the_general_path` (`src/replica/cold.rs`) |
//! | `QuickFit`: the commonest volume's fit decided from the hot disk form | a volume without a disk selector (nor a backing image's) below 16 TiB, for a disk it accepts | `the_quick_fit_agrees_with_volume_fit` (`src/replica/tests.rs`) |
//! | `Shortcut`: the commonest disk made a static candidate straight off its hot form, no note built | a disk that passes the pre-filter and `QuickFit`, with no caller disk filter | `the_short_disk_path_agrees_with_the_general_one` (`src/replica/disk_stage.rs`) |
//! | the whole-host shortcut (`DiskRules::all_candidates`): a plain host whose every disk the shortcut takes, in two tight loops | a call without a kept preparation and without disk detail | `the_whole_host_shortcut_agrees_with_the_general_path_at_the_boundaries`, `the_whole_host_shortcut_agrees_where_a_percentage_is_a_rounded_float` (`src/replica/disk_stage.rs`) |
//! | scratch reuse: the snapshot's part kept, and refreshed for the changed chunks on a later snapshot of the lineage | [`ReplicaScheduler::schedule_with`] with the same settings and hooks | `a_reused_scratch_answers_as_a_fresh_one`, `a_refreshed_scratch_answers_as_fresh_calls` (`tests/properties/replica_scratch.rs`); `a_refresh_leaves_what_a_build_makes` (`src/replica/scratch.rs`) |
//! | the volume's part kept for the next volume of the same shape | a scratch, the next volume of the same shape and size | `a_stream_of_different_volumes_answers_as_fresh_calls` (`tests/properties/replica_scratch.rs`) |
//! | a resize: only the disks whose room lies between the two sizes re-prepared | a scratch, the next volume of the same shape and another size, at most one disk in eight changing | `a_resize_leaves_what_a_fill_makes`, `a_resized_preparation_answers_as_a_fresh_call` (`src/replica/scratch.rs`) |
//! | the volume count (`count.rs`): one preparation, a segment tree of per-host summaries | [`capacity::volumes`](crate::capacity::volumes) | `the_count_equals_the_stepwise_loop` (`tests/properties/volume_capacity.rs`), `volume_capacity_matches_the_naive_loop` (`tests/properties/capacity.rs`), `the_tree_agrees_with_a_scan` (`src/replica/count.rs`) |
//!
//! # Contents
//!
//! - [Quick example](#quick-example)
//! - [Composing the two-stage selector](#composing-the-two-stage-selector)
//! - [Mapping Longhorn onto the snapshot](#mapping-longhorn-onto-the-snapshot)
//! - [Step order](#step-order)
//! - [Not modelled](#not-modelled)
//! - [Cost](#cost)
//!   - [Reusing the preparation across calls](#reusing-the-preparation-across-calls)
//! - [Versions](#versions)
//! - [Determinism](#determinism)
//!
//! # Quick example
//!
//! ```
//! use placewise::replica::{ReplicaScheduler, ReplicaSettings, Volume};
//! use placewise::{Cluster, HostSpec};
//! use placewise::snapshot::DiskSpec;
//!
//! const G: i64 = 1 << 30;
//! let cluster = Cluster::builder()
//!     .host(HostSpec::new("n1").zone("z1").disk(DiskSpec::new("d1", 100 * G, 80 * G)))
//!     .host(HostSpec::new("n2").zone("z2").disk(DiskSpec::new("d1", 100 * G, 90 * G)))
//!     .build()?;
//! let scheduler = ReplicaScheduler::new(ReplicaSettings::default())?;
//! let result = scheduler.schedule(&cluster, &Volume::new("vol", G, 3), &[], 0)?;
//! assert_eq!(result.placed().count(), 2); // node anti-affinity is hard by default
//! assert_eq!(result.condition_message().as_deref(), Some("replica scheduling failed"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Composing the two-stage selector
//!
//! Longhorn's selector is one configuration of a general two-stage engine: with no hooks
//! ([`ReplicaScheduler::new`], or [`ReplicaScheduler::builder`] with nothing added) it is
//! Longhorn exactly, and the hook code is never entered. [`ReplicaSchedulerBuilder`] adds:
//!
//! - **Node [`Filter`]s** (the crate's core trait, as in the spread engine's builder): after
//!   Longhorn's node checks and the node selector (step 8), a host that a filter rejects is left
//!   out of **every** tier, the used-node tier included; replicas already on it still count for
//!   anti-affinity. The filters see the snapshot through [`Cx`](crate::request::Cx) with an empty
//!   one-instance request: their verdict depends on the snapshot only, so a
//!   [`ReplicaScratch`] keeps it across volumes. They run through the core's
//!   [`FilterChain`](crate::filter::FilterChain), as in every engine: a filter whose `prepare`
//!   fails fails the call ([`ReplicaError::Hook`]).
//! - **Node [`Weigher`]s**: rank the nodes of the tier that will place the replica (after
//!   best-effort data locality), normalised over those nodes, times their multipliers, summed;
//!   only the best-scored nodes stay, and Longhorn's disk choice picks among them. They never
//!   move a replica to a later tier (anti-affinity first). Their context's overlay holds the
//!   replicas placed earlier in the call, one instance each ([`Cx::instances`](crate::request::Cx::instances)
//!   counts them), as a request's earlier instances in the core. They run through the core's
//!   [`WeighPass`](crate::weigh::WeighPass), as in every engine: a weigher whose `prepare` or
//!   `validate` fails, or whose per-host multiplier is not finite, fails the call
//!   ([`ReplicaError::Hook`]).
//! - **[`ReplicaDiskFilter`]s** (see [`disk_filter_fn`]): after Longhorn's disk eligibility (pre-filter,
//!   type, filesystem size, tags) and before the space check; they see the volume
//!   ([`DiskCx`]).
//! - **[`ReplicaDiskWeigher`]s** (see [`disk_weigher_fn`]): rank the candidate disks of the
//!   best-scored nodes; only the best-scored disks stay for the disk choice.
//! - **[`Level`]s**: anti-affinity tiers beyond zone and node from a topology level or a host
//!   label (rack, row …), hard or soft. Within each of Longhorn's tiers the hosts whose domains
//!   hold no replica at every level come first; soft levels are dropped one at a time, last added
//!   first; hard levels are never dropped. Longhorn's tiers stay the outer order (zone, then
//!   node), so for nested topologies the preference is zone, rack, node. A level whose key no
//!   host carries (neither a topology level nor any host's label key; a misspelt `rakc`)
//!   would put every host in one domain, so every entry refuses it
//!   ([`ReplicaError::UnknownLevel`]); a kept [`ReplicaScratch`] checks once per snapshot.
//!
//! A caller filter's rejections are named in the explanation (with
//! [`explain`](ReplicaSchedulerBuilder::explain): a verdict whose `filter` is its name) and, when
//! the replica is not placed and the filter bound it, in the reasons ([`Reasons::callers`]; the
//! message adds `rejected by <name>`). A node filter binds a replica when it rejected a node
//! the rules after it would have admitted: a node of a tier the cascade tries, in no domain of
//! a hard level that holds a replica; a filter that only dropped nodes a later hard rule
//! excludes anyway is left out, so Longhorn's message stays as Longhorn writes it. A level's
//! exclusions are named in the explanation only (`<key> anti-affinity`, with the reason `<key>
//! <domain> already used (<key> level, hard)`): like Longhorn's own anti-affinity they add no
//! reason key. Every failed replica also names its binding rule
//! ([`ReplicaSelection::binding`]): the rule that ruled out the last candidate node or disk in
//! step order, which [`capacity::volumes`](crate::capacity::volumes) reports as its stop.
//!
//! ```
//! use placewise::replica::{disk_weigher_fn, Level, ReplicaScheduler, ReplicaSettings, Volume};
//! use placewise::{filter_fn, Cluster, HostSpec};
//! use placewise::snapshot::DiskSpec;
//!
//! const G: i64 = 1 << 30;
//! let host = |name: &str, rack: &str| {
//!     HostSpec::new(name).zone("z1").label("rack", rack).disk(DiskSpec::new("d1", 100 * G, 90 * G))
//! };
//! let cluster = Cluster::builder()
//!     .host(host("n1", "r1").label("maintenance", "true"))
//!     .host(host("n2", "r1"))
//!     .host(host("n3", "r2"))
//!     .host(host("n4", "r2"))
//!     .build()?;
//! let scheduler = ReplicaScheduler::builder(ReplicaSettings::default())
//!     .filter(filter_fn("maintenance", |cx, h| cx.cluster().label(h, "maintenance").is_none()))
//!     .disk_weigher(disk_weigher_fn("fewer replicas", |cx| -(cx.disk().scheduled_replicas.len() as f64)), 1.0)
//!     .level(Level::hard("rack"))
//!     .explain(true)
//!     .build()?;
//! let result = scheduler.schedule(&cluster, &Volume::new("vol", G, 3), &[], 0)?;
//! // One replica per rack, none on the host under maintenance: the third has no rack left.
//! assert_eq!(result.placed().count(), 2);
//! let (_, failed) = result.selections.iter().find(|(_, o)| o.placement.is_none()).unwrap();
//! let names: Vec<&str> = failed.explanation.verdicts.iter().filter_map(|v| v.filter.as_deref()).collect();
//! assert!(names.contains(&"maintenance") && names.contains(&"rack anti-affinity"));
//! // The rack level binds it: the host under maintenance is in a used rack anyway.
//! assert_eq!(failed.binding.as_ref().unwrap().filter, "rack anti-affinity");
//! assert_eq!(result.condition_message().as_deref(), Some("replica scheduling failed"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Mapping Longhorn onto the snapshot
//!
//! [`LonghornNode`] builds a host from these facts as typed fields (node tags, zone, region,
//! conditions, instance manager, engine image, v2), and [`DiskSpec`](crate::snapshot::DiskSpec) carries
//! the disk's; the attributes below are what it writes, and
//! [`ReplicaScheduler::check_nodes`] refuses one of them holding anything but a boolean.
//! [`ReplicaScheduler::schedule_replicas`] places named replicas in a given order, each seeing
//! the ones before it.
//!
//! | Longhorn | placewise |
//! |---|---|
//! | node `Ready` condition | [`HostState::up`](crate::snapshot::HostState) |
//! | node `spec.allowScheduling` | `HostState::enabled` |
//! | node `spec.evictionRequested` | `HostState::evicting` (an evicting node is unschedulable, as Longhorn's webhook enforces) |
//! | node `Schedulable` (cordoned) | `HostState::cordoned`, excluded when `disable-scheduling-on-cordoned-node` |
//! | node tags | host **label keys**: a label `fast=<anything>` is the tag `fast`; values are ignored |
//! | `status.zone` / `status.region` | the host's topology levels `zone` / `region`; missing → `""`, so hosts without a zone form one zone |
//! | default instance manager running | host attribute `im_running` (bool, default true) |
//! | engine image deployed (v1) | host attribute `engine_image_ready` (bool, default true) |
//! | v2 data engine disabled on the node | host attribute `v2_disabled` (bool, default false) |
//! | disk `storageMaximum` / `storageAvailable` / `storageReserved` / `storageScheduled` | [`Disk`](crate::snapshot::Disk) `maximum` / `available` / `reserved` / `scheduled`; a disk whose `available` exceeds its `maximum`, which no filesystem reports, is refused ([`ReplicaError::DiskAboveMaximum`]) |
//! | disk `allowScheduling`, `evictionRequested`, `tags`, `type`, `fsType`, `Ready` | `Disk` `allow_scheduling`, `eviction_requested`, `tags`, `disk_type`, `fs_type`, `ready` |
//! | disk `Schedulable` condition | [`Disk::schedulable`](crate::snapshot::Disk::schedulable) when the caller gives it (the condition last reported, possibly stale: reported false, the disk is unavailable; reported true, it passes the pre-filter and the per-replica checks reject it with their own reasons); else derived: `ready` and the space check with size 0 and actual 0 (as the node controller sets it) |
//! | disk UUID | the disk's name on its host: a replica's `disk_id` is that name |
//! | disk `scheduledReplica` | [`Disk::scheduled_replicas`](crate::snapshot::Disk::scheduled_replicas) (the disk's own list), or [`Replica::counted`] for a replica on that very disk: whether `Disk::scheduled` already includes the replica |
//!
//! # Step order
//!
//! [`ReplicaScheduler::schedule_replica`] follows the reference's §3 exactly: preconditions;
//! schedulable nodes; hard node affinity; topology requirement; engine image; disk pre-filter;
//! anti-affinity flags and the replenishment window; used nodes and zones (from candidate nodes
//! only); node classes (node selector, except for the used-node tier); the tier cascade
//! (new node in a new zone → new node in a used zone → used node, as the settings allow); per-disk
//! eligibility (type, filesystem size limit, tags) and the space check with in-cycle accounting;
//! disk anti-affinity; best-effort data locality; the disk choice.
//!
//! # Not modelled
//!
//! - Linked clones (§3 step 3) and the v2 "disable v2" kube label beyond the `v2_disabled`
//!   attribute; listing failures (`longhorn client operation failed`).
//! - Around `CheckAndReuseFailedReplica` ([`ReplicaScheduler::reusable_failed_replica`]): the
//!   controller's per-replica backoff, and the reused replica's other fields (only `failedAt`
//!   and the retry count change). The reuse candidate check skips the disk `Schedulable` lookup
//!   and the space check (Longhorn's `requireSchedulingCheck = false`), keeping only the
//!   `DiskPressure` exception.
//! - The rebuild limits (`concurrent-replica-rebuild-per-node-limit`, one rebuilding replica at
//!   a time): [`ReplicaScheduler::schedule`] collapses the one-per-pass loop.
//! - Auto-balance plans ([`plan_auto_balance`], [`plan_cleanup`]) cover the whole adjustment at
//!   once, where Longhorn adds one replica per pass and recounts; the one-pass-at-a-time rebuild
//!   and its loops (#4296, #6671) are not simulated. The disk-pressure rule over *all* healthy
//!   volumes needs their replicas: [`plan_auto_balance_among`].
//!
//! # Cost
//!
//! - A call prepares every host's eligibility and every disk's pre-filter, eligibility and
//!   space check once (O(hosts + disks)), reading the snapshot's dense per-chunk disk columns
//!   ([`HotDisk`](crate::snapshot::HotDisk)) and visiting a host itself only when its state, attributes
//!   or the volume's selectors need it.
//! - The preparation serves the precheck, failed-replica reuse and every placement of the
//!   call; a passed precheck's outcome is the first placement's.
//! - Each replica then costs O(hosts) plus the disks of the hosts that hold a replica of the
//!   volume (re-checked for in-cycle accounting and disk anti-affinity). No per-disk
//!   allocation; buffers are reused across the call's replicas.
//! - The candidate nodes of steps 2–4 are the same for every replica without a hard node
//!   affinity and are listed once per call.
//! - **The first tier without building it.** Most replicas land in the first tier, the unused
//!   nodes of the zones no replica uses. The preparation also lists its hosts zone by zone
//!   with a summary per zone (what the disk choice reads: count, sum and extremes of the node
//!   totals, the merged disk summary).
//! - So when no host of that tier holds a replica of the volume, and there are no hooks, no
//!   explanation, no hard node affinity and no best-effort locality, a replica is chosen from
//!   the unused zones' summaries and a search for the first host past a total (blocks of 32
//!   hosts skipped by their extremes): O(zones + hosts / 32) instead of O(hosts). The choice is
//!   the cascade's, decision for decision; a property test compares the two on generated
//!   clusters.
//! - With no hooks nothing of the hook code runs. Node filters cost one call per host per
//!   preparation; levels O(hosts × levels) per preparation and O(hosts × levels) per replica;
//!   node and disk weighers run per replica over the chosen tier's nodes and their candidate
//!   disks; disk filters run per eligible disk per call.
//!
//! ## Reusing the preparation across calls
//!
//! - Part of the preparation depends only on the snapshot and the settings (and the caller's
//!   node filters): each host's state and node attributes, each disk's pre-filter (its
//!   `Schedulable` condition), its space limits and summary.
//!   [`ReplicaScheduler::schedule_with`] keeps it in a [`ReplicaScratch`], stamped with
//!   the snapshot it was made from (its generation and the identity of its shared parts: the
//!   scratch holds a clone), the settings and the hooks.
//! - A later snapshot of the same lineage (events applied since) is refreshed rather than
//!   rebuilt: only the hosts of the chunks of 64 hosts that are not the kept snapshot's (those
//!   the events copied, in-place writes included) are prepared anew, the volume's part with
//!   them, their candidate nodes, zone list summaries and room order spliced in. This holds
//!   when no event interned a new string or domain, at most half of the chunks changed and
//!   there are no caller node filters.
//! - Anything else rebuilds it: another cluster (even one with equal content), other
//!   settings, a scheduler with other hooks.
//! - The volume's part (eligibility, the space check for its size, the static candidates and
//!   their summaries) is also kept, and reused while the next volume has the same shape
//!   (Longhorn version, actual size, data engine, node and disk selectors, backing image,
//!   topology requirement, effective disk pressure, and the size itself only from 16 TiB for
//!   v1; not with caller disk filters, which see the whole volume).
//! - A volume of the same shape and another size changes only the space check's verdicts, and
//!   only on the disks whose room (the largest size the check admits) lies between the two
//!   sizes: the scratch keeps the disks in the order of their room (made on the first size
//!   change), re-prepares just those disks' hosts, and redoes the summaries of their blocks and
//!   zones; when more than one disk in eight may change it fills anew.
//! - A stream of volumes on one snapshot pays the snapshot's part once and, per volume, only
//!   what its shape and size change; the answer is always the one a fresh scratch gives
//!   (property tests replay random event sequences and random streams of volumes against
//!   fresh calls).
//! - [`ReplicaScheduler::schedule`] is the same call without a scratch to keep: it
//!   prepares in one pass, as before scratches existed.
//!
//! # Versions
//!
//! [`LonghornVersion::Head`] (v1.11+, the default) and [`LonghornVersion::V1_10`] differ in:
//!
//! - the default disk choice ([`DiskChoice`]);
//! - the in-cycle accounting scope: on HEAD a disk adds the volume size for each replica of the
//!   volume on that disk that it does not list among its scheduled replicas; on v1.10 for each
//!   replica of the volume on the **node** it does not list, existing replicas on the node's other
//!   disks included (bug #12653);
//! - the order of the last two per-disk checks: on v1.10 the space check runs before the tag check,
//!   so a disk failing both reports `insufficient storage` (known gap: a disk failing the tags
//!   whose space fails only through in-cycle accounting still reports `tags not fulfilled`);
//! - the volume's topology requirement, which v1.10 does not have (ignored);
//! - whether wrong-type disks record `disks are unavailable` or are skipped silently.
//!
//! # Determinism
//!
//! Longhorn breaks ties by Go map order. Here every tie (equal balance scores, the "arbitrary
//! disk" fallback, equal most-usable storage) takes the lowest (host id, disk id); pending
//! replicas are scheduled in name order; data directory suffixes come from a generator seeded
//! with [`ReplicaSchedulerBuilder::seed`] and the replica name. Each result is one Longhorn could produce.

mod choice;
mod cold;
mod count;
mod disk_stage;
mod hooks;
pub mod import;
mod node;
mod node_stage;
mod plan;
mod prep;
mod reasons;
pub(crate) mod record;
mod reuse;
mod scratch;
mod settings;
mod space;
mod volume;
mod zones;

#[cfg(test)]
mod tests;

pub use choice::DiskChoice;
pub use hooks::{
    disk_filter_fn, disk_weigher_fn, DiskCx, DiskFilterFn, DiskWeigherFn, Level, ReplicaDiskFilter, ReplicaDiskWeigher,
    MAX_HOOKS,
};
pub use node::{
    LonghornNode, ATTR_ENGINE_IMAGE_DEPLOYED, ATTR_INSTANCE_MANAGER_RUNNING, ATTR_V2_DISABLED, NODE_ATTRIBUTES,
};
pub use plan::{plan_auto_balance, plan_auto_balance_among, plan_cleanup, plan_data_locality, MoveKind, ReplicaMove};
use reasons::{DiskNote, NodeNote, Words};
pub use reasons::{FailureReason, Reasons, Tier};
pub use scratch::ReplicaScratch;
pub use settings::{ReplicaSettings, SETTING_NAMES};
pub use space::{
    is_pressure_move_target, is_schedulable_to_disk, is_under_pressure, percent_of, unused_percentage, DiskSpace,
    SpaceFailure,
};
pub use volume::{
    AutoBalance, BackingImage, DataEngine, DataLocality, Replica, Robustness, SoftAntiAffinity, TopologyTerm, Volume,
    MAX_VOLUME_REPLICAS,
};

use crate::error::{BuildError, EventError, ScheduleError};
use crate::explain::{Explanation, HostVerdict, RankedHost, RejectionCount};
use crate::filter::Filter;
use crate::hooks::{hook_methods, Hooks};
use crate::id::{DiskId, HostId, Symbol};
use crate::rng::SplitMix64;
use crate::snapshot::{check_attributes, AttributeKey, AttributeType, AttributeWarning, Cluster, Host};
use crate::weigh::Weigher;
use choice::{Agg, Candidate, Entry, Pool, EXPLAIN_TOP};
use hooks::{weighed_choice, HookCx, ReplicaHooks};
use node_stage::{LevelPasses, Used};
use prep::Prep;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;
use std::sync::Arc;

/// Wrong input to the replica scheduler, or a caller's hook that failed. Scheduling failures
/// are outcomes, not errors.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
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
    /// A replica name that is not in the replica list.
    #[error("no replica named `{name}`")]
    UnknownReplica {
        /// The name given.
        name: String,
    },
    /// A disk weigher was given a multiplier that is not finite.
    #[error("weigher `{weigher}` has a non-finite multiplier ({value})")]
    NonFiniteMultiplier {
        /// The disk weigher's name.
        weigher: String,
        /// The multiplier given.
        value: f64,
    },
    /// More node filters, disk filters or levels than the builder accepts.
    #[error("{count} {what}: at most {max}")]
    TooManyHooks {
        /// `node filters`, `disk filters` or `levels`.
        what: &'static str,
        /// How many were given.
        count: usize,
        /// The limit, [`MAX_HOOKS`].
        max: usize,
    },
    /// A level whose key is empty.
    #[error("a level has an empty key")]
    EmptyLevelKey,
    /// The node filters and weighers refused by the one check every engine's builder runs
    /// ([`Hooks::validate`]): a non-finite multiplier.
    #[error(transparent)]
    Build {
        /// The core's error, naming the weigher.
        error: BuildError,
    },
    /// A node attribute the scheduler reads holds a value of the wrong kind (it would otherwise
    /// read as its default).
    #[error("host `{host}`: attribute `{name}` must be a boolean, not {value}")]
    NodeAttribute {
        /// The host.
        host: String,
        /// The attribute ([`NODE_ATTRIBUTES`]).
        name: String,
        /// The value found, as JSON.
        value: String,
    },
    /// A volume field outside what a Longhorn volume can hold ([`Volume::validate`]).
    #[error("volume `{volume}`: {field} is {problem} ({value})")]
    InvalidVolume {
        /// The volume's name.
        volume: String,
        /// The field, as [`Volume`] names it (`size`, `actual_size`, `number_of_replicas`).
        field: &'static str,
        /// What is wrong: `negative`, `zero`, `above the limit of 100` …
        problem: &'static str,
        /// The value found.
        value: i64,
    },
    /// A disk reporting more available space than its maximum, which no Longhorn disk reports
    /// (the filesystem's free space never exceeds its size).
    #[error("host `{host}`: disk `{disk}`: available is above maximum ({available} > {maximum})")]
    DiskAboveMaximum {
        /// The host.
        host: String,
        /// The disk.
        disk: String,
        /// Its `available` bytes.
        available: u64,
        /// Its `maximum` bytes.
        maximum: u64,
    },
    /// One of the caller's node filters or weighers failed, through the core's
    /// [`FilterChain`](crate::filter::FilterChain) and [`WeighPass`](crate::weigh::WeighPass):
    /// a filter's or weigher's `prepare`, a weigher's candidate check, or a per-host multiplier
    /// that is not finite.
    #[error("caller hook failed: {error}")]
    Hook {
        /// The core's error, naming the filter or weigher.
        #[source]
        error: ScheduleError,
    },
    /// A caller's level ([`Level`]) whose key no host of the snapshot carries: neither a
    /// topology level nor a label key of any host. It would put every host in one domain.
    #[error("level `{key}`: no host carries it as a topology level or a label")]
    UnknownLevel {
        /// The level's key.
        key: String,
    },
    /// An outcome's placements cannot be recorded on the snapshot given
    /// ([`ReplicaOutcome::events`]): it has no host or disk a placement names.
    #[error("cannot record the placement: {error}")]
    Record {
        /// The snapshot's error, naming the host or disk.
        #[source]
        error: EventError,
    },
}

// The limit is spelled out in `Volume::validate`'s problem text.
const _: () = assert!(MAX_VOLUME_REPLICAS == 100);

impl Volume {
    /// Checks the fields the replica scheduler reads against what a Longhorn volume can hold,
    /// as building a snapshot checks a host: `size` and `actual_size` at least 0,
    /// `number_of_replicas` from 1 to [`MAX_VOLUME_REPLICAS`], and exactly 1 with
    /// `strict-local` data locality. Every scheduling entry checks it: the calls that return a
    /// `Result`, so every one, returns the error, before anything is created or reused.
    ///
    /// Nothing Longhorn keeps is refused. Its admission webhook rounds a size up to the next
    /// 2 MiB (a size of 0 or less becomes 2 MiB), fills a replica count of 0 with the
    /// `default-replica-count` setting, and then refuses a count outside 1–20 and a
    /// `strict-local` volume with other than one replica; `actualSize` is measured. A stored
    /// volume, the one the scheduler reads, therefore has neither a negative size nor 0
    /// replicas. (A size of 0 is accepted here: an empty volume, taking no space.)
    ///
    /// # Errors
    ///
    /// [`ReplicaError::InvalidVolume`] naming the first field out of range.
    pub fn validate(&self) -> Result<(), ReplicaError> {
        let invalid = |field, problem, value: i64| {
            Err(ReplicaError::InvalidVolume { volume: self.name.clone(), field, problem, value })
        };
        let replicas = i64::from(self.number_of_replicas);
        if self.size < 0 {
            invalid("size", "negative", self.size)
        } else if self.actual_size < 0 {
            invalid("actual_size", "negative", self.actual_size)
        } else if self.number_of_replicas == 0 {
            invalid("number_of_replicas", "zero", replicas)
        } else if self.number_of_replicas > MAX_VOLUME_REPLICAS {
            invalid("number_of_replicas", "above the limit of 100", replicas)
        } else if self.data_locality == DataLocality::StrictLocal && self.number_of_replicas != 1 {
            invalid("number_of_replicas", "not 1 with strict-local data locality", replicas)
        } else {
            Ok(())
        }
    }
}

/// Which Longhorn release's behaviour to reproduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum LonghornVersion {
    /// v1.11+ and master: balance score, per-disk in-cycle accounting, wrong-type disks reported.
    #[default]
    Head,
    /// v1.10.x: most usable storage, per-node in-cycle accounting, space checked before tags, no
    /// topology requirement, wrong-type disks skipped.
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
pub struct ReplicaSelection {
    /// The placement, or `None` when the replica cannot be scheduled.
    pub placement: Option<ReplicaPlacement>,
    /// Longhorn's reason keys: empty on success (keys from tiers tried before the one that
    /// placed the replica are dropped, as Longhorn returns no error) and on anti-affinity-only
    /// failures.
    pub reasons: Reasons,
    /// The tier of the cascade that placed the replica: which anti-affinity rule bound it
    /// (the first tier, unused nodes in unused zones, when none did); `None` when it was not
    /// placed.
    pub tier: Option<Tier>,
    /// The explanation every engine gives: `hosts` in the snapshot, and on a failure
    /// `available` 0 and Longhorn's condition message ([`ReplicaSelection::message`]) as
    /// `message`. With [`ReplicaSchedulerBuilder::explain`] also `available`, the nodes left
    /// for the disk choice, and a verdict for each node and disk left out, in host order: the
    /// rule that excluded it as `filter` (`node selector`, `space`, `zone anti-affinity`, a
    /// caller's filter or level by its name …), the reason in its words (`zone z1 already
    /// used (zone anti-affinity, hard)`, `rack r2 already used (rack level, hard)`, the space
    /// check's numbers in Longhorn's text), the disk's name in `disk` for a disk; the nodes
    /// left for the choice as passed. `rejections` counts those verdicts per rule and reason.
    /// `top` ranks up to three candidate disks of a placed replica as the disk choice compared
    /// them, the placed one first: the balance score's `node balance` and `disk balance` (lower
    /// is better: multiplier −1) or v1.10's `usable storage`, after the caller's `node
    /// weighers` and `disk weighers` sums where there are any (it then lists the candidates
    /// those scores left tied for best). Without it `available` is 1 for a placed replica: the paths that decide a replica
    /// without visiting every host count no others.
    pub explanation: Explanation,
    /// For a replica not placed, with [`ReplicaSchedulerBuilder::explain`]: the binding rule,
    /// the entry of `explanation.rejections` under which the **last candidate to be ruled out**
    /// is counted. Candidates are the nodes and their disks; each is ruled out by the first
    /// rule that excludes it, and the rules run in Longhorn's step order: the node checks
    /// (steps 2–4: condition, scheduling, data engine, hard node affinity, topology, engine
    /// image), the node selector, the caller's node filters, the tier cascade (node and zone
    /// anti-affinity), the caller's levels within it, then the disks of the tiers tried: the
    /// disk pre-filter (scheduling, condition, pressure), type and filesystem size, the disk
    /// selector, the caller's disk filters, the space check, disk anti-affinity. The binding
    /// rule is the latest of these steps that ruled out a candidate (among several of that
    /// step, the last in host and disk order): `insufficient storage` under `space` when space
    /// is what ran out, `rack r2 already used (rack level, hard)` when a hard level excluded the
    /// nodes left, not a rule that only excluded nodes a later rule would have excluded too.
    /// `None` for a placed replica, a replica its preconditions stop (step 1), and without an
    /// explanation.
    pub binding: Option<RejectionCount>,
}

impl ReplicaSelection {
    /// An outcome that placed nothing yet, over a snapshot of `hosts` hosts.
    pub(crate) fn new(hosts: usize) -> Self {
        let mut explanation = Explanation::new(u32::try_from(hosts).unwrap_or(u32::MAX));
        explanation.available = 0;
        ReplicaSelection { placement: None, reasons: Reasons::default(), tier: None, explanation, binding: None }
    }

    /// Longhorn's message for a failure: the joined keys, or `replica scheduling failed`.
    pub fn message(&self) -> Option<String> {
        self.placement.is_none().then(|| self.reasons.condition_message())
    }
}

/// A ranked candidate as the explanation lists it: the host, the disk, and each term of the
/// disk choice as a tier of its own (a balance score's lower value is better: multiplier −1).
fn ranked_host(cluster: &Cluster, r: choice::Ranked) -> RankedHost {
    let host = cluster.host_name(r.cand.host).to_owned();
    let disk = cluster.disk(r.cand.host, r.cand.disk).map(|d| d.name.to_string());
    RankedHost::by_keys(host, disk, &r.terms)
}

/// What one scheduling call reads, resolved once.
pub(crate) struct Ctx<'a> {
    pub(crate) cluster: &'a Cluster,
    pub(crate) volume: &'a Volume,
    pub(crate) settings: &'a ReplicaSettings,
    pub(crate) version: LonghornVersion,
    zone_level: Option<usize>,
    region_level: Option<usize>,
    pub(crate) node_selector: Vec<Option<Symbol>>,
    pub(crate) image_node_selector: Vec<Option<Symbol>>,
    pub(crate) disk_selector: Vec<Option<Symbol>>,
    pub(crate) image_disk_selector: Vec<Option<Symbol>>,
    pub(crate) has_backing_image: bool,
    /// The disk stage reads more than a disk's hot form ([`crate::snapshot::HotDisk`]): a disk selector
    /// or a backing image (tags), or a v1 volume of 16 TiB or more (filesystem type).
    pub(crate) disk_detail: bool,
    /// The disk-pressure percentage when used nodes with a pressured disk count as unused
    /// (effective auto-balance `best-effort` and pressure% > 0).
    pub(crate) pressure_pct: Option<i64>,
    /// Effective auto-balance is `best-effort`.
    pub(crate) best_effort: bool,
    /// The attached node, when it exists.
    pub(crate) local_host: Option<HostId>,
    /// The caller's hooks; `None` for Longhorn's configuration.
    pub(crate) hooks: Option<&'a ReplicaHooks>,
    /// The core-trait context of the caller's node filters and weighers (with hooks only).
    pub(crate) hook_cx: Option<HookCx<'a>>,
}

impl<'a> Ctx<'a> {
    /// Resolves what a call reads, preparing the caller's node filters.
    ///
    /// # Errors
    ///
    /// [`ReplicaError::Hook`] when a caller node filter's `prepare` fails.
    fn new(s: &'a ReplicaScheduler, cluster: &'a Cluster, volume: &'a Volume) -> Result<Self, ReplicaError> {
        let syms = |tags: &[String]| tags.iter().map(|t| cluster.symbols().get(t)).collect::<Vec<_>>();
        let image = volume.backing_image.as_ref();
        let hook_cx = match s.hooks.as_deref() {
            Some(h) => Some(HookCx::new(cluster, h)?),
            None => None,
        };
        Ok(Ctx {
            cluster,
            volume,
            settings: &s.settings,
            version: s.version,
            zone_level: cluster.topology().zone_level(),
            region_level: cluster.topology().level("region"),
            node_selector: syms(&volume.node_selector),
            image_node_selector: image.map(|i| syms(&i.node_selector)).unwrap_or_default(),
            disk_selector: syms(&volume.disk_selector),
            image_disk_selector: image.map(|i| syms(&i.disk_selector)).unwrap_or_default(),
            has_backing_image: image.is_some(),
            disk_detail: !volume.disk_selector.is_empty()
                || image.is_some()
                || (volume.data_engine == DataEngine::V1 && volume.size >= disk_stage::HUGE_VOLUME),
            pressure_pct: (s.effective_auto_balance(volume) == AutoBalance::BestEffort
                && s.settings.replica_auto_balance_disk_pressure_percentage > 0)
                .then_some(s.settings.replica_auto_balance_disk_pressure_percentage),
            best_effort: s.effective_auto_balance(volume) == AutoBalance::BestEffort,
            local_host: if volume.node_id.is_empty() { None } else { cluster.host_id(&volume.node_id) },
            hooks: s.hooks.as_deref(),
            hook_cx,
        })
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

/// The host attributes the replica scheduler reads (see the table in the module docs).
pub const ATTRIBUTES: &[AttributeKey] = &[
    ("im_running", AttributeType::Bool),
    ("engine_image_ready", AttributeType::Bool),
    ("v2_disabled", AttributeType::Bool),
];

/// A boolean host attribute (`true`/`false` JSON values; anything else reads as `default`).
pub(crate) fn attr_bool(h: &Host, name: &str, default: bool) -> bool {
    h.attribute(name).and_then(|v| v.as_bool()).unwrap_or(default)
}

/// The replica scheduler: settings, the Longhorn version to follow, the disk choice, and the
/// caller's hooks ([`ReplicaScheduler::builder`]).
///
/// Cheap to clone (the hooks are shared); holds no per-call state.
#[derive(Debug, Clone)]
pub struct ReplicaScheduler {
    settings: ReplicaSettings,
    version: LonghornVersion,
    disk_choice: DiskChoice,
    explain: bool,
    seed: u64,
    /// `None` without hooks: Longhorn's configuration never looks at them.
    hooks: Option<Arc<ReplicaHooks>>,
    /// Choose in the first tier from the prepared zone lists where they give the cascade's
    /// answer ([`ReplicaScheduler::first_tier_pick`]); off only in tests, to compare the two.
    zone_lists: bool,
    /// Schedule a new volume without a kept preparation by one pass where every replica lands
    /// in the first tier ([`cold`]); off only in tests, to compare with the general path.
    cold_pass: bool,
}

/// Builds a [`ReplicaScheduler`] with the caller's hooks; see the
/// [module docs](self#composing-the-two-stage-selector).
///
/// Extra node [`Filter`]s run after Longhorn's node checks, in the order added; node
/// [`Weigher`]s rank the nodes of the chosen tier. [`ReplicaDiskFilter`]s run after Longhorn's disk
/// eligibility checks and before the space check; [`ReplicaDiskWeigher`]s rank the candidate disks of
/// the best-ranked nodes. [`Level`]s add anti-affinity tiers beyond zone and node.
#[derive(Debug)]
pub struct ReplicaSchedulerBuilder {
    settings: ReplicaSettings,
    /// The node filters and weighers.
    nodes: Hooks,
    /// Disk filters and weighers and levels (its node lists stay empty until `build`).
    hooks: ReplicaHooks,
    version: LonghornVersion,
    disk_choice: Option<DiskChoice>,
    explain: bool,
    seed: u64,
}

impl ReplicaSchedulerBuilder {
    /// Follows `version` (default [`LonghornVersion::Head`]), and takes that version's disk
    /// choice unless [`disk_choice`](ReplicaSchedulerBuilder::disk_choice) sets one.
    pub fn version(mut self, version: LonghornVersion) -> Self {
        self.version = version;
        self
    }

    /// Overrides the disk choice strategy (default: the version's, [`DiskChoice::BalanceScore`]
    /// on HEAD, [`DiskChoice::MostUsableStorage`] on v1.10), whatever the order of the calls.
    pub fn disk_choice(mut self, choice: DiskChoice) -> Self {
        self.disk_choice = Some(choice);
        self
    }

    /// Records every node's and disk's verdict, and the ranking of the best candidate disks, in
    /// each outcome's [`explanation`](ReplicaSelection::explanation) (costs an allocation per call, and turns
    /// off the paths that decide a replica without visiting every host). Default off.
    pub fn explain(mut self, on: bool) -> Self {
        self.explain = on;
        self
    }

    /// Seeds the data directory suffixes and new replica names (default 0).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    // Node filters: a host one rejects takes no replica (in any tier); replicas already on it
    // still count for anti-affinity. Node weighers order the candidate nodes.
    hook_methods!(nodes);

    /// Appends a disk filter.
    pub fn disk_filter<F: ReplicaDiskFilter + 'static>(self, filter: F) -> Self {
        self.disk_filter_boxed(Box::new(filter))
    }

    /// Appends a boxed disk filter.
    pub fn disk_filter_boxed(mut self, filter: Box<dyn ReplicaDiskFilter>) -> Self {
        self.hooks.disk_filters.push(filter);
        self
    }

    /// Adds a disk weigher with its multiplier.
    pub fn disk_weigher<W: ReplicaDiskWeigher + 'static>(self, weigher: W, multiplier: f64) -> Self {
        self.disk_weigher_boxed(Box::new(weigher), multiplier)
    }

    /// Adds a boxed disk weigher with its multiplier.
    pub fn disk_weigher_boxed(mut self, weigher: Box<dyn ReplicaDiskWeigher>, multiplier: f64) -> Self {
        self.hooks.disk_weighers.push((weigher, multiplier));
        self
    }

    /// Adds an anti-affinity level (soft levels are relaxed last added first).
    pub fn level(mut self, level: Level) -> Self {
        self.hooks.levels.push(level);
        self
    }

    /// Validates and builds.
    ///
    /// # Errors
    ///
    /// [`ReplicaError::InvalidSetting`] for a setting out of range;
    /// [`ReplicaError::NonFiniteMultiplier`] for a disk weigher's non-finite multiplier;
    /// [`ReplicaError::EmptyLevelKey`]; [`ReplicaError::TooManyHooks`] for more than
    /// [`MAX_HOOKS`] node filters, disk filters or levels.
    pub fn build(self) -> Result<ReplicaScheduler, ReplicaError> {
        self.settings.validate()?;
        let disk_choice = self.disk_choice.unwrap_or(match self.version {
            LonghornVersion::Head => DiskChoice::BalanceScore,
            LonghornVersion::V1_10 => DiskChoice::MostUsableStorage,
        });
        let mut scheduler = ReplicaScheduler {
            settings: self.settings,
            version: self.version,
            disk_choice,
            explain: self.explain,
            seed: self.seed,
            hooks: None,
            zone_lists: true,
            cold_pass: true,
        };
        let mut hooks = self.hooks;
        let (filters, tiers) = self.nodes.into_parts().map_err(|error| ReplicaError::Build { error })?;
        hooks.filters = filters;
        hooks.weighers = tiers.into_iter().flatten().collect();
        if let Some((w, m)) = hooks.disk_weighers.iter().find(|(_, m)| !m.is_finite()) {
            return Err(ReplicaError::NonFiniteMultiplier { weigher: w.name().to_owned(), value: *m });
        }
        for (what, n) in [
            ("node filters", hooks.filters.len()),
            ("disk filters", hooks.disk_filters.len()),
            ("levels", hooks.levels.len()),
        ] {
            if n > MAX_HOOKS {
                return Err(ReplicaError::TooManyHooks { what, count: n, max: MAX_HOOKS });
            }
        }
        if hooks.levels.iter().any(|l| l.key().is_empty()) {
            return Err(ReplicaError::EmptyLevelKey);
        }
        if hooks.is_empty() {
            return Ok(scheduler);
        }
        let names = hooks.filters.iter().map(|f| f.name().to_owned());
        let disk_names = hooks.disk_filters.iter().map(|f| f.name().to_owned());
        let level_names = hooks.levels.iter().map(|l| format!("{} anti-affinity", l.key()));
        let weigher_names = hooks.weighers.iter().map(|(w, _)| w.name().to_owned());
        let disk_weigher_names = hooks.disk_weighers.iter().map(|(w, _)| w.name().to_owned());
        hooks.names =
            names.chain(disk_names).chain(level_names).chain(weigher_names).chain(disk_weigher_names).collect();
        scheduler.hooks = Some(Arc::new(hooks));
        Ok(scheduler)
    }
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
    /// Longhorn's scheduler with `settings` and every other option at its default:
    /// `ReplicaScheduler::builder(settings).build()`.
    ///
    /// # Errors
    ///
    /// [`ReplicaError::InvalidSetting`] when a setting is out of range.
    pub fn new(settings: ReplicaSettings) -> Result<Self, ReplicaError> {
        ReplicaScheduler::builder(settings).build()
    }

    /// A builder: the Longhorn version, the disk choice, the explanation, the seed, and the
    /// caller's filters, weighers and levels; with no hook added it builds Longhorn's
    /// configuration, which never enters the hook code.
    pub fn builder(settings: ReplicaSettings) -> ReplicaSchedulerBuilder {
        let hooks = ReplicaHooks {
            filters: Vec::new(),
            weighers: Vec::new(),
            disk_filters: Vec::new(),
            disk_weighers: Vec::new(),
            levels: Vec::new(),
            names: Vec::new(),
        };
        ReplicaSchedulerBuilder {
            settings,
            nodes: Hooks::new(),
            hooks,
            version: LonghornVersion::Head,
            disk_choice: None,
            explain: false,
            seed: 0,
        }
    }

    /// The attributes of `cluster` that this engine would silently read as their defaults: keys
    /// that look like misspellings of [`ATTRIBUTES`], and those keys holding a value that is not
    /// a boolean. Call it once per snapshot (it visits every attribute of every host).
    pub fn attribute_warnings(&self, cluster: &Cluster) -> Vec<AttributeWarning> {
        check_attributes(cluster, ATTRIBUTES)
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

    /// This scheduler with the explanation on ([`ReplicaSchedulerBuilder::explain`]): the same
    /// decisions, with each failure's verdicts and binding rule. `None` when it is on already.
    pub(crate) fn explaining(&self) -> Option<ReplicaScheduler> {
        (!self.explain).then(|| ReplicaScheduler { explain: true, ..self.clone() })
    }

    /// Schedules `replicas[index]` of `volume`, seeing the other replicas as they are (placed
    /// ones occupy nodes, zones and disks). Does not change anything. `now` is in seconds.
    ///
    /// Computes in O(hosts + disks + replicas × disks of the hosts holding replicas).
    ///
    /// # Errors
    ///
    /// [`ReplicaError::ReplicaIndex`] when `index` is out of range;
    /// [`ReplicaError::InvalidVolume`] as [`Volume::validate`];
    /// [`ReplicaError::DiskAboveMaximum`] for a disk with more available space than its maximum.
    pub fn schedule_replica(
        &self,
        cluster: &Cluster,
        volume: &Volume,
        replicas: &[Replica],
        index: usize,
        now: i64,
    ) -> Result<ReplicaSelection, ReplicaError> {
        if index >= replicas.len() {
            return Err(ReplicaError::ReplicaIndex { index, len: replicas.len() });
        }
        volume.validate()?;
        check_disks(cluster)?;
        hooks::check_levels(cluster, self.hooks.as_deref())?;
        let cx = Ctx::new(self, cluster, volume)?;
        let mut prep = Prep::new(&cx, replicas);
        self.schedule_one(&cx, &mut prep, replicas, index, now)
    }

    /// Schedules the replicas named in `order`, one after another, writing each placement into
    /// `replicas` (node, disk, data directory; [`Replica::counted`] false, as the disk's
    /// `scheduled` does not include it yet) so that every later one sees the earlier ones. A
    /// replica that fails stays unscheduled and the next one is tried. Returns one outcome per
    /// name, in order.
    ///
    /// Computes in O(hosts + disks) once, plus for each replica O(hosts + replicas × disks of
    /// the hosts holding replicas).
    ///
    /// # Errors
    ///
    /// [`ReplicaError::UnknownReplica`] for a name not in `replicas` (nothing is changed);
    /// [`ReplicaError::InvalidVolume`] as [`Volume::validate`];
    /// [`ReplicaError::NodeAttribute`] and [`ReplicaError::DiskAboveMaximum`] as
    /// [`check_nodes`](ReplicaScheduler::check_nodes).
    pub fn schedule_replicas(
        &self,
        cluster: &Cluster,
        volume: &Volume,
        replicas: &mut [Replica],
        order: &[&str],
        now: i64,
    ) -> Result<Vec<(String, ReplicaSelection)>, ReplicaError> {
        volume.validate()?;
        self.check_nodes(cluster)?;
        hooks::check_levels(cluster, self.hooks.as_deref())?;
        let mut indices = Vec::with_capacity(order.len());
        for name in order {
            let i = replicas
                .iter()
                .position(|r| r.name == *name)
                .ok_or_else(|| ReplicaError::UnknownReplica { name: (*name).to_owned() })?;
            indices.push(i);
        }
        let cx = Ctx::new(self, cluster, volume)?;
        let mut prep = Prep::new(&cx, replicas);
        let mut results = Vec::with_capacity(indices.len());
        for i in indices {
            let outcome = self.schedule_one(&cx, &mut prep, replicas, i, now)?;
            if let Some(p) = &outcome.placement {
                write_placement(&mut prep, replicas, i, p);
            }
            results.push((replicas[i].name.clone(), outcome));
        }
        Ok(results)
    }

    /// Checks what the scheduler reads of the nodes: each node attribute it reads
    /// ([`NODE_ATTRIBUTES`]) present must be a boolean (prefer [`LonghornNode`], which cannot
    /// get them wrong), and no disk may report more available space than its maximum.
    ///
    /// Computes in O(hosts).
    ///
    /// # Errors
    ///
    /// [`ReplicaError::NodeAttribute`] for the first attribute that is not a boolean;
    /// [`ReplicaError::DiskAboveMaximum`] for the first such disk.
    pub fn check_nodes(&self, cluster: &Cluster) -> Result<(), ReplicaError> {
        for (_, host) in cluster.hosts() {
            for &(name, _) in NODE_ATTRIBUTES {
                if let Some(v) = host.attribute(name).filter(|v| !v.is_boolean()) {
                    return Err(ReplicaError::NodeAttribute {
                        host: host.name.to_string(),
                        name: name.to_owned(),
                        value: v.to_string(),
                    });
                }
            }
        }
        check_disks(cluster)
    }

    /// One replica against prepared state, in Longhorn's step order (see the reference's
    /// "scheduling one replica"): the preconditions (step 1); the first tier read off the zone
    /// lists when that decides it; the candidate nodes (steps 2 and 4); the used nodes and
    /// zones (step 7); the node classes (step 8); the tier cascade, each tier's nodes through
    /// the disk stage and disk anti-affinity (steps 9–11); the choice (step 12). `index` is in
    /// range.
    fn schedule_one(
        &self,
        cx: &Ctx<'_>,
        prep: &mut Prep,
        replicas: &[Replica],
        index: usize,
        now: i64,
    ) -> Result<ReplicaSelection, ReplicaError> {
        let mut out = ReplicaSelection::new(cx.cluster.len());
        self.schedule_into(cx, prep, replicas, index, now, &mut out)?;
        Ok(out)
    }

    /// [`schedule_one`](ReplicaScheduler::schedule_one) into `out`, a fresh
    /// [`ReplicaSelection::new`]: a selection is large, and one written where it is kept is
    /// not copied on its way there.
    fn schedule_into(
        &self,
        cx: &Ctx<'_>,
        prep: &mut Prep,
        replicas: &[Replica],
        index: usize,
        now: i64,
        out: &mut ReplicaSelection,
    ) -> Result<(), ReplicaError> {
        self.place_one(cx, prep, replicas, index, now, out)?;
        out.explanation.message = out.message();
        if !self.explain {
            out.explanation.available = u32::from(out.placement.is_some());
        }
        Ok(())
    }

    /// [`schedule_one`](ReplicaScheduler::schedule_one) but the explanation's summary.
    fn place_one(
        &self,
        cx: &Ctx<'_>,
        prep: &mut Prep,
        replicas: &[Replica],
        index: usize,
        now: i64,
        out: &mut ReplicaSelection,
    ) -> Result<(), ReplicaError> {
        let Some(replica) = replicas.get(index) else {
            return Ok(());
        };
        if let Err(r) = precondition(replica) {
            out.reasons.insert(r);
            return Ok(());
        }
        let volume = cx.volume;
        let mut notes = Notes::new(self.explain);
        let (node_soft, zone_soft, disk_soft) = self.effective_anti_affinity(volume);
        let replenishing = self.replenishing(volume, now);
        // Without a hard node affinity and without notes the candidate nodes are the prepared
        // ones: try the first tier from the zone lists before building anything.
        if let (true, None, Ok(plain)) = (replica.hard_node_affinity.is_empty(), &notes.nodes, &prep.plain_cands) {
            let used = node_stage::used(&prep.hosts, &prep.replica_at, plain, replicas, replenishing);
            if let Some(placement) = self.first_tier_pick(cx, prep, replica, &used) {
                out.tier = Some(Tier::UnusedNodesInUnusedZones);
                out.placement = Some(placement);
                return Ok(());
            }
        }
        let mut cands = std::mem::take(&mut prep.cand_hosts);
        if let Err(r) =
            node_stage::candidates(cx, &prep.hosts, &prep.plain_cands, replica, &mut cands, &mut notes.nodes)
        {
            out.reasons.insert(r);
            if let Some(nodes) = notes.nodes.take() {
                (out.explanation, out.binding) = self.explanation(cx, prep, nodes, Vec::new(), &[]);
            }
            prep.cand_hosts = cands;
            return Ok(());
        }
        let used = node_stage::used(&prep.hosts, &prep.replica_at, &cands, replicas, replenishing);
        let mut classes = std::mem::take(&mut prep.tiers);
        let caller_nodes = node_classes(cx, prep, &cands, &used, &mut classes, &mut notes.nodes);
        let used_nodes = used_class(cx, prep, &used);
        let tiers = tier_order(zone_soft, node_soft, &classes, &used_nodes);
        let cascade = tier_cascade(cx, prep, replicas, &tiers, &used, disk_soft, &mut notes);
        best_effort_locality(cx, prep, replicas);
        if let (Some(mut nodes), Some(disks)) = (notes.nodes.take(), notes.disks.take()) {
            left_out(cx, prep, &cands, &tiers, &used, &cascade, &mut nodes);
            (out.explanation, out.binding) = self.explanation(cx, prep, nodes, disks, &prep.entries);
        }
        // The tiers borrow the classes, which go back to the preparation's buffers.
        drop(tiers);
        prep.cand_hosts = cands;
        prep.tiers = classes;
        out.tier = cascade.tier;
        let Some(placement) = self.choose(cx, prep, replica, &mut out.explanation)? else {
            out.tier = None;
            let soft = (node_soft, zone_soft);
            let caller_nodes = binding_callers(cx, prep, &prep.cand_hosts, &used, caller_nodes, soft);
            failure_reasons(&mut out.reasons, cx.hooks, caller_nodes, &cascade);
            return Ok(());
        };
        out.placement = Some(placement);
        out.binding = None;
        Ok(())
    }

    /// Step 12, the choice among the entries the cascade left: by the caller's weighers when
    /// there are any, else by the disk choice; `None` when nothing is left (or the pick's host
    /// or disk is not in the snapshot).
    ///
    /// # Errors
    ///
    /// [`ReplicaError::Hook`] when a caller node weigher fails.
    fn choose(
        &self,
        cx: &Ctx<'_>,
        prep: &mut Prep,
        replica: &Replica,
        explanation: &mut Explanation,
    ) -> Result<Option<ReplicaPlacement>, ReplicaError> {
        let volume = cx.volume;
        let pool =
            Pool { stat: &prep.cands, dynamic: &prep.dyn_cands, stat_aggs: &prep.aggs, dyn_aggs: &prep.dyn_aggs };
        let mut ranked = Vec::new();
        let top = self.explain.then_some(&mut ranked);
        let pick = match cx.hooks.filter(|h| !h.weighers.is_empty() || !h.disk_weighers.is_empty()) {
            Some(h) => weighed_choice(cx, h, self.disk_choice, &mut prep.entries, pool, &prep.picks, top)?,
            None => {
                let pick = choice::choose_entries(self.disk_choice, &prep.entries, pool, volume.size);
                if let (Some(top), Some(pick)) = (top, pick) {
                    *top = choice::ranked(self.disk_choice, &prep.entries, pool, volume.size, pick, EXPLAIN_TOP);
                }
                pick
            }
        };
        if self.explain {
            explanation.top = ranked.into_iter().map(|r| ranked_host(cx.cluster, r)).collect();
        }
        Ok(pick.and_then(|p| self.placement(cx.cluster, volume, replica, p)))
    }

    /// The explanation of one replica from its notes: a verdict per node and disk noted, the
    /// nodes of `entries` (left for the choice) as passed, in host order; the rejections
    /// counted per rule and reason, most frequent first; and the binding rule
    /// ([`ReplicaSelection::binding`]): the count of the last node or disk ruled out in step
    /// order. Only with an explanation.
    fn explanation(
        &self,
        cx: &Ctx<'_>,
        prep: &Prep,
        nodes: Vec<(HostId, NodeNote)>,
        disks: Vec<(HostId, DiskId, DiskNote)>,
        entries: &[Entry],
    ) -> (Explanation, Option<RejectionCount>) {
        let cluster = cx.cluster;
        let words = Words { cx, soft: self.effective_anti_affinity(cx.volume), level_values: &prep.level_values };
        let mut out = Explanation::new(u32::try_from(cluster.len()).unwrap_or(u32::MAX));
        out.available = entries.len() as u32;
        let verdict = |id: HostId, disk: Option<DiskId>, said: Option<(String, String)>| HostVerdict {
            host: cluster.host_name(id).to_owned(),
            passed: said.is_none(),
            filter: said.as_ref().map(|s| s.0.clone()),
            reasons: said.iter().map(|s| s.1.clone()).collect(),
            reason: said.map(|s| s.1),
            instance: None,
            disk: disk.and_then(|d| cluster.disk(id, d)).map(|d| d.name.to_string()),
        };
        let mut counts: Vec<RejectionCount> = Vec::new();
        let mut count =
            |filter: &str, reason: &str| match counts.iter_mut().find(|c| c.filter == filter && c.reason == reason) {
                Some(c) => c.count += 1,
                None => counts.push(RejectionCount { filter: filter.to_owned(), reason: reason.to_owned(), count: 1 }),
            };
        let mut verdicts: Vec<(HostId, Option<DiskId>, HostVerdict)> = Vec::with_capacity(nodes.len() + disks.len());
        // The last candidate ruled out: (step, host, disk) and its rule and counted reason.
        type Step = (u8, HostId, Option<DiskId>);
        let mut last: Option<(Step, (String, String))> = None;
        let mut later = |at: (Option<u8>, HostId, Option<DiskId>), rule: &str, counted: &str| {
            let (Some(step), id, d) = at else { return };
            if last.as_ref().is_none_or(|(l, _)| (step, id, d) > *l) {
                last = Some(((step, id, d), (rule.to_owned(), counted.to_owned())));
            }
        };
        for (id, note) in nodes {
            let (rule, reason) = words.node(id, note);
            count(&rule, &reason);
            later((note.step(), id, None), &rule, &reason);
            verdicts.push((id, None, verdict(id, None, Some((rule, reason)))));
        }
        for (id, d, note) in disks {
            let (rule, counted, reason) = words.disk(note);
            count(&rule, &counted);
            later((Some(note.step()), id, Some(d)), &rule, &counted);
            verdicts.push((id, Some(d), verdict(id, Some(d), Some((rule, reason)))));
        }
        for e in entries {
            verdicts.push((e.host, None, verdict(e.host, None, None)));
        }
        verdicts.sort_by_key(|v| (v.0, v.1));
        out.verdicts = verdicts.into_iter().map(|v| v.2).collect();
        counts.sort_by(|a, b| {
            b.count.cmp(&a.count).then_with(|| a.filter.cmp(&b.filter)).then_with(|| a.reason.cmp(&b.reason))
        });
        let binding = last
            .and_then(|(_, (rule, reason))| counts.iter().find(|c| c.filter == rule && c.reason == reason).cloned());
        out.rejections = counts;
        (out, binding)
    }

    /// The placement of `replica` on candidate `pick`, or `None` when its host or disk is not
    /// in the snapshot.
    fn placement(
        &self,
        cluster: &Cluster,
        volume: &Volume,
        replica: &Replica,
        pick: Candidate,
    ) -> Option<ReplicaPlacement> {
        let host = cluster.host(pick.host)?;
        let disk = host.disks.get(pick.disk.index())?;
        Some(ReplicaPlacement {
            host: pick.host,
            disk: pick.disk,
            node_id: host.name.to_string(),
            disk_id: disk.name.to_string(),
            data_directory_name: self.data_directory_name(volume, replica),
        })
    }

    /// The placement in the first tier (unused nodes in unused zones) read from the prepared
    /// zone lists ([`zones`]), when the tier cascade would choose in that tier among exactly
    /// those hosts: no caller hooks, no explanation, no hard node affinity (the caller checks
    /// that the candidate nodes are the prepared ones), no best-effort locality with an
    /// attached node, a size of at least 0, and no host holding a replica of the volume (those
    /// are judged per replica) among the tier's. `None` sends the replica through the cascade.
    fn first_tier_pick(&self, cx: &Ctx<'_>, prep: &Prep, replica: &Replica, used: &Used) -> Option<ReplicaPlacement> {
        let volume = cx.volume;
        if !self.zone_lists
            || cx.hooks.is_some()
            || self.explain
            || !replica.hard_node_affinity.is_empty()
            || volume.size < 0
            || (volume.data_locality == DataLocality::BestEffort && cx.local_host.is_some())
        {
            return None;
        }
        let plain = prep.plain_cands.as_deref().ok()?;
        let judged = prep.replica_at.iter().filter_map(|&(h, _)| h.and_then(|id| Some((id, prep.host(id)?))));
        for (id, hp) in judged {
            if used.zone(hp.zone).is_none() && hp.selector_ok && hp.caller == 0 && plain.binary_search(&id).is_ok() {
                return None;
            }
        }
        let cands = |h: HostId| prep.static_cands(h);
        let agg = |h: HostId| prep.aggs.get(h.index()).copied().unwrap_or(Agg::EMPTY);
        let pick = prep.zones.choose(self.disk_choice, volume.size as i128, &used.zones, cands, agg)?;
        self.placement(cx.cluster, volume, replica, pick)
    }

    /// The data directory of a new replica: `<volume>-<8 hex digits>`, seeded by the names.
    fn data_directory_name(&self, volume: &Volume, replica: &Replica) -> String {
        let mut rng = SplitMix64::new(self.seed ^ name_hash(&[&volume.name, &replica.name]));
        format!("{}-{:08x}", volume.name, rng.next_u64() as u32)
    }

    /// Brings `volume` to `numberOfReplicas` the way Longhorn's volume controller replenishes
    /// (collapsing its one-per-pass loop), then schedules every pending replica in name order,
    /// writing each placement back so the next one sees it (node, zone, disk and in-cycle space;
    /// not the balance score, which reads disk status only). Nothing is applied to the cluster.
    ///
    /// For each of the `numberOfReplicas − usable` missing replicas: on an existing volume, first
    /// reuse a failed replica ([`ReplicaScheduler::reusable_failed_replica`]: its `failedAt` is
    /// cleared and its retry count incremented); otherwise, unless strict-local, stop while
    /// [`ReplicaScheduler::require_new_replica`] says to wait; then, unless strict-local, stop
    /// when the [`ReplicaScheduler::precheck`] fails; else create a replica (a new volume gets
    /// all N, each prechecked against the replicas created so far).
    ///
    /// Replicas of a volume with data locality wait (stay unscheduled, with no reason) until the
    /// volume is attached; strict-local replicas get a hard node affinity to the attached node.
    ///
    /// Computes in O(hosts + disks) per replica created or reused, plus O(hosts + replicas ×
    /// disks of the hosts holding replicas) per replica scheduled. Prepares in one pass and keeps
    /// nothing; a new volume whose replicas all land in unused zones is scheduled by one pass
    /// that keeps only each host's usable total and each zone's summary (the same answer, as a
    /// property test checks). A stream of volumes on one snapshot is cheaper through
    /// [`schedule_with`](ReplicaScheduler::schedule_with) and a [`ReplicaScratch`].
    ///
    /// # Errors
    ///
    /// Nothing is created or reused on an error: [`ReplicaError::InvalidVolume`] as
    /// [`Volume::validate`]; [`ReplicaError::DiskAboveMaximum`] for a disk with more available
    /// space than its maximum; [`ReplicaError::Hook`] when a caller's node filter or weigher
    /// fails.
    pub fn schedule(
        &self,
        cluster: &Cluster,
        volume: &Volume,
        replicas: &[Replica],
        now: i64,
    ) -> Result<ReplicaOutcome, ReplicaError> {
        volume.validate()?;
        check_disks(cluster)?;
        if let Some(schedule) = self.cold_volume(cluster, volume, replicas) {
            return Ok(schedule);
        }
        self.schedule_with(&mut ReplicaScratch::one_off(), cluster, volume, replicas, now)
    }

    /// As [`schedule`](ReplicaScheduler::schedule), keeping the
    /// volume-independent preparation and the buffers in `scratch`: the preparation is rebuilt
    /// only when `cluster` is not the snapshot it was made from (another cluster, or any event
    /// applied), or the settings or hooks differ; the result is always the one a fresh scratch
    /// gives. See [`ReplicaScratch`].
    ///
    /// ```
    /// use placewise::replica::{ReplicaScheduler, ReplicaScratch, ReplicaSettings, Volume};
    /// use placewise::{Cluster, HostSpec};
    /// use placewise::snapshot::DiskSpec;
    ///
    /// const G: i64 = 1 << 30;
    /// let cluster = Cluster::builder()
    ///     .host(HostSpec::new("n1").zone("z1").disk(DiskSpec::new("d1", 100 * G, 80 * G)))
    ///     .host(HostSpec::new("n2").zone("z2").disk(DiskSpec::new("d1", 100 * G, 90 * G)))
    ///     .build()?;
    /// let scheduler = ReplicaScheduler::new(ReplicaSettings::default())?;
    /// let mut scratch = ReplicaScratch::new();
    /// for name in ["a", "b", "c"] {
    ///     let volume = Volume::new(name, G, 2);
    ///     let warm = scheduler.schedule_with(&mut scratch, &cluster, &volume, &[], 0)?;
    ///     assert_eq!(warm, scheduler.schedule(&cluster, &volume, &[], 0)?);
    /// }
    /// assert_eq!(scratch.rebuilds(), 1); // prepared once for the three volumes
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`schedule`](ReplicaScheduler::schedule).
    pub fn schedule_with(
        &self,
        scratch: &mut ReplicaScratch,
        cluster: &Cluster,
        volume: &Volume,
        replicas: &[Replica],
        now: i64,
    ) -> Result<ReplicaOutcome, ReplicaError> {
        volume.validate()?;
        let cx = Ctx::new(self, cluster, volume)?;
        // One preparation serves every check and placement of the call (`bind` re-points it).
        // Preparing reads a disk above its maximum without harm; the kept preparation knows
        // whether its snapshot holds one, so a stream of volumes on one snapshot checks once.
        scratch.prepare(&cx, self.hooks.as_ref());
        disk_error(cluster, scratch.disk_above_maximum(cluster))?;
        if let Some(h) = self.hooks.as_deref() {
            hooks::level_error(&h.levels, scratch.unknown_level(cluster, &h.levels))?;
        }
        let prep = scratch.prepared();
        let mut list: Vec<Replica> = replicas.to_vec();
        let usable = list.iter().filter(|r| !r.is_failed() && !r.eviction_requested && r.active && !r.deleted).count();
        let missing = (volume.number_of_replicas as usize).saturating_sub(usable);
        let mut rng = SplitMix64::new(self.seed ^ name_hash(&[&volume.name]));
        let mut created = Vec::new();
        let mut reused = Vec::new();
        let mut wait_seconds = 0;
        let mut precheck_failure = None;
        let new_volume = list.is_empty();
        let hard =
            if volume.data_locality == DataLocality::StrictLocal { volume.node_id.clone() } else { String::new() };
        // Appending an unscheduled replica changes nothing the precheck reads (it occupies no
        // node, zone or disk), so a passed precheck stays valid until a replica is reused. Its
        // outcome is also the first scheduling's, when that replica is as plain as the probe.
        let mut precheck: Option<ReplicaSelection> = None;
        for _ in 0..missing {
            if !new_volume {
                if let Some(i) = self.reusable_in(&cx, prep, &list, &hard) {
                    let r = &mut list[i];
                    r.failed_at = None;
                    r.rebuild_retry_count += 1;
                    reused.push(r.name.clone());
                    precheck = None;
                    continue;
                }
                if hard.is_empty() {
                    wait_seconds = self.require_new_replica(volume, &list, &hard, now);
                    if wait_seconds > 0 {
                        break;
                    }
                }
            }
            if hard.is_empty() && precheck.is_none() {
                let out = precheck.insert(ReplicaSelection::new(cluster.len()));
                self.precheck_in(&cx, prep, &mut list, now, out)?;
                if out.placement.is_none() {
                    precheck_failure = Some(out.reasons.precheck_message());
                    precheck = None;
                    break;
                }
            }
            let name = new_replica_name(volume, &mut rng, &list);
            let mut r = Replica::new(name.clone());
            r.hard_node_affinity = hard.clone();
            list.push(r);
            created.push(name);
        }
        list.sort_by(|a, b| a.name.cmp(&b.name));
        let waiting = volume.data_locality != DataLocality::Disabled && volume.node_id.is_empty();
        // Sized exactly: a selection is large (it carries the explanation), and a vector grown
        // to four of them leaves the allocator's small-block cache for three replicas.
        let to_place = |r: &Replica| r.node_id.is_empty() && !r.is_failed() && !r.deleted;
        let mut results = Vec::with_capacity(if waiting { 0 } else { list.iter().filter(|r| to_place(r)).count() });
        if !waiting {
            prep.bind(&cx, &list);
            for i in 0..list.len() {
                if !to_place(&list[i]) {
                    continue;
                }
                let r = &list[i];
                let plain = r.hard_node_affinity.is_empty() && !r.is_failed();
                match precheck.take().filter(|_| plain) {
                    Some(mut out) => {
                        if let Some(p) = out.placement.as_mut() {
                            p.data_directory_name = self.data_directory_name(volume, r);
                        }
                        results.push((r.name.clone(), out));
                    }
                    None => {
                        results.push((r.name.clone(), ReplicaSelection::new(cluster.len())));
                        if let Some((_, out)) = results.last_mut() {
                            self.schedule_into(&cx, prep, &list, i, now, out)?;
                        }
                    }
                }
                if let Some(p) = results.last().and_then(|(_, out)| out.placement.as_ref()) {
                    write_placement(prep, &mut list, i, p);
                }
            }
        }
        Ok(ReplicaOutcome {
            replicas: list,
            created,
            reused,
            wait_seconds,
            precheck_failure,
            selections: results,
            waiting_for_attachment: waiting,
        })
    }
}

/// Step 1, the preconditions: a replica already on a node, or a failed replica never healthy,
/// is not scheduled.
fn precondition(replica: &Replica) -> Result<(), FailureReason> {
    if !replica.node_id.is_empty() {
        return Err(FailureReason::AlreadyScheduled);
    }
    if replica.is_failed() && replica.healthy_at.is_none() {
        return Err(FailureReason::UnusedFailedReplica);
    }
    Ok(())
}

/// The explanation's notes of one replica: `None` lists when no explanation is asked.
struct Notes {
    nodes: Option<Vec<(HostId, NodeNote)>>,
    disks: Option<Vec<(HostId, DiskId, DiskNote)>>,
    /// Per disk of the preparation, whether it is noted: a disk is noted once per call even
    /// when its node is in several tiers (made by the tier cascade).
    disk_noted: Vec<bool>,
    /// Per host, whether a hard level of the caller's is noted for it (likewise).
    level_noted: Vec<bool>,
}

impl Notes {
    fn new(explain: bool) -> Self {
        Notes {
            nodes: explain.then(Vec::new),
            disks: explain.then(Vec::new),
            disk_noted: Vec::new(),
            level_noted: Vec::new(),
        }
    }

    /// Whether an explanation is asked.
    fn explain(&self) -> bool {
        self.disks.is_some()
    }

    /// Notes disk `i` of host `id`, whose disks start at `disk_start` in the preparation,
    /// unless it is noted already.
    fn disk(&mut self, disk_start: u32, id: HostId, i: usize, n: DiskNote) {
        if let Some(v) = self.disks.as_mut() {
            if let Some(seen) = self.disk_noted.get_mut(disk_start as usize + i) {
                if !*seen {
                    *seen = true;
                    v.push((id, DiskId::from_index(i), n));
                }
            }
        }
    }
}

/// What the tier cascade found: the tier chosen, and what its stages rejected, for the
/// failure reasons.
struct Cascade {
    tier: Option<Tier>,
    /// How many tiers were tried (the one that placed the replica included).
    tried: usize,
    /// The pass of the caller's levels that left entries (0 when none did).
    pass: usize,
    /// The disk failure reasons met, as [`Reasons::insert_bits`] takes them.
    bits: u16,
    /// The caller disk filters that rejected a disk (by position).
    caller_disks: u64,
}

/// Step 8, the node classes: the candidate nodes `cands` that pass the node selector and the
/// caller's node filters, sorted into `classes` (cleared first): unused nodes in unused zones,
/// unused nodes (with the pressured ones), only-evicting nodes, and only-evicting nodes in
/// only-evicting zones (or any zone under best-effort auto-balance). Returns the caller node
/// filters that rejected a node (by position).
fn node_classes(
    cx: &Ctx<'_>,
    prep: &Prep,
    cands: &[HostId],
    used: &Used,
    classes: &mut [Vec<HostId>; 4],
    node_notes: &mut Option<Vec<(HostId, NodeNote)>>,
) -> u64 {
    let [t_new_zone, t_unused, t_evict, t_evict_zone] = classes;
    for t in [&mut *t_new_zone, &mut *t_unused, &mut *t_evict, &mut *t_evict_zone] {
        t.clear();
    }
    let mut caller_nodes = 0u64;
    for &id in cands {
        let Some(hp) = prep.host(id) else { continue };
        if !hp.selector_ok {
            if let Some(v) = node_notes.as_mut() {
                v.push((id, NodeNote::NodeSelector));
            }
            continue;
        }
        if hp.caller != 0 {
            caller_nodes |= 1u64 << (hp.caller - 1);
            if let Some(v) = node_notes.as_mut() {
                v.push((id, NodeNote::Caller(hp.caller - 1)));
            }
            continue;
        }
        let node_used = used.node(id);
        if node_used.is_none() || hp.pressured {
            t_unused.push(id);
        }
        let zone_used = used.zone(hp.zone);
        if node_used == Some(true) {
            t_evict.push(id);
            if zone_used == Some(true) || cx.best_effort {
                t_evict_zone.push(id);
            }
        }
        if zone_used.is_none() {
            t_new_zone.push(id);
        }
    }
    caller_nodes
}

/// Step 8's used nodes: those of step 7, not filtered by the node selector (Longhorn's quirk),
/// but without those a caller node filter rejects.
fn used_class(cx: &Ctx<'_>, prep: &Prep, used: &Used) -> Vec<HostId> {
    let mut t_used: Vec<HostId> = used.nodes.iter().map(|n| n.0).collect();
    if cx.hooks.is_some() {
        t_used.retain(|&id| prep.host(id).is_some_and(|h| h.caller == 0));
    }
    t_used
}

/// Step 9's tiers in order, by the zone and node anti-affinity rules: the unused nodes in
/// unused zones first; with zone anti-affinity hard, the only-evicting nodes in only-evicting
/// zones; with it soft, the unused nodes, then the only-evicting ones (node anti-affinity
/// hard) or the used ones (soft). `classes` are step 8's, `used` its used nodes.
fn tier_order<'t>(
    zone_soft: bool,
    node_soft: bool,
    classes: &'t [Vec<HostId>; 4],
    used: &'t [HostId],
) -> SmallVec<[(Tier, &'t [HostId]); 3]> {
    let [t_new_zone, t_unused, t_evict, t_evict_zone] = classes;
    let mut tiers: SmallVec<[(Tier, &[HostId]); 3]> = SmallVec::new();
    tiers.push((Tier::UnusedNodesInUnusedZones, t_new_zone));
    match (zone_soft, node_soft) {
        (false, _) => tiers.push((Tier::UnusedNodesInUnusedZonesAfterEviction, t_evict_zone)),
        (true, false) => {
            tiers.push((Tier::UnusedNodes, t_unused));
            tiers.push((Tier::UnusedNodesAfterEviction, t_evict));
        }
        (true, true) => {
            tiers.push((Tier::UnusedNodes, t_unused));
            tiers.push((Tier::UsedNodes, used));
        }
    }
    tiers
}

/// Steps 9–11, the tier cascade: the tiers in order, each in passes that drop the caller's
/// soft levels one by one (one pass without levels); each pass puts the tier's nodes
/// through the disk stage ([`tier_disks`]) and disk anti-affinity
/// ([`disk_anti_affinity`]), and the first that leaves entries in `prep.entries` ends it.
fn tier_cascade(
    cx: &Ctx<'_>,
    prep: &mut Prep,
    replicas: &[Replica],
    tiers: &[(Tier, &[HostId])],
    used: &Used,
    disk_soft: bool,
    notes: &mut Notes,
) -> Cascade {
    // The caller's levels: which domains hold a replica, and which levels each pass keeps.
    let levels = cx.hooks.filter(|h| !h.levels.is_empty()).map(|h| LevelPasses::new(h, &prep.level_values, used));
    let passes = levels.as_ref().map_or(1, |l| l.passes.len());
    // A disk is noted once per call even when its node is in several tiers.
    if notes.explain() {
        notes.disk_noted = vec![false; prep.disks.len()];
        if levels.is_some() {
            notes.level_noted = vec![false; prep.hosts.len()];
        }
    }
    let mut cascade = Cascade { tier: None, tried: 0, pass: 0, bits: 0, caller_disks: 0 };
    'tiers: for &(tier, nodes) in tiers {
        cascade.tried += 1;
        for pass in 0..passes {
            let level_pass = levels.as_ref().map(|l| (l, pass));
            if tier_disks(cx, prep, replicas, nodes, level_pass, notes, &mut cascade) {
                disk_anti_affinity(prep, replicas, disk_soft, notes);
            }
            if !prep.entries.is_empty() {
                cascade.tier = Some(tier);
                cascade.pass = pass;
                break 'tiers;
            }
        }
    }
    cascade
}

/// Step 10 for one pass over a tier's `nodes`: each node's candidate disks as an entry of
/// `prep.entries`, a host holding a replica of the volume judged again into `prep.dyn_cands`,
/// any other read from the preparation; with the caller's levels, the nodes a kept level of
/// the pass excludes are skipped. The disk reasons met and the caller disk filters that
/// rejected a disk are added to `cascade`. Returns whether an entry is dynamic.
fn tier_disks(
    cx: &Ctx<'_>,
    prep: &mut Prep,
    replicas: &[Replica],
    nodes: &[HostId],
    level_pass: Option<(&LevelPasses<'_>, usize)>,
    notes: &mut Notes,
    cascade: &mut Cascade,
) -> bool {
    let cluster = cx.cluster;
    let explain = notes.explain();
    let (mut bits, mut caller_disks) = (0u16, 0u64);
    prep.entries.clear();
    prep.dyn_cands.clear();
    prep.dyn_aggs.clear();
    let mut dirty = false;
    for &id in nodes {
        let Some(hp) = prep.hosts.get(id.index()).filter(|h| h.exists) else { continue };
        if let Some((lv, pass)) = level_pass {
            if let Some(l) = lv.excludes(&prep.level_values, id, pass) {
                if let (Some(v), Some(seen)) = (notes.nodes.as_mut(), notes.level_noted.get_mut(id.index())) {
                    if lv.hard(l) && !*seen {
                        *seen = true;
                        v.push((id, NodeNote::Level(l as u16)));
                    }
                }
                continue;
            }
        }
        caller_disks |= hp.disks.caller;
        let disk_prep = prep.disks.get(hp.disk_start as usize..).unwrap_or(&[]);
        if hp.dirty {
            let start = prep.dyn_cands.len();
            bits |= disk_stage::dynamic_host(
                cx,
                id,
                cluster.hot_disks(id),
                cluster.host(id),
                disk_prep,
                hp.disks,
                replicas,
                &prep.replica_at,
                &mut prep.dyn_cands,
                |i, n| notes.disk(hp.disk_start, id, i, n),
            );
            let len = prep.dyn_cands.len() - start;
            if len > 0 {
                let e = Entry { host: id, dynamic: true, start: start as u32, len: len as u32, agg: 0 };
                prep.entries.push(e);
                dirty = true;
            }
        } else {
            bits |= hp.disks.static_bits;
            if explain {
                for (i, (dp, disk)) in disk_prep.iter().zip(cluster.hot_disks(id)).enumerate() {
                    if let Some(n) = dp.note_for(cx, disk) {
                        notes.disk(hp.disk_start, id, i, n);
                    }
                }
            }
            if hp.cand_len > 0 {
                let e = Entry { host: id, dynamic: false, start: hp.disk_start, len: hp.cand_len, agg: id.0 };
                prep.entries.push(e);
            }
        }
    }
    cascade.bits |= bits;
    cascade.caller_disks |= caller_disks;
    dirty
}

/// Step 11, disk anti-affinity over a tier's entries: when some candidate disk holds no
/// replica of the volume, or disk anti-affinity is hard, the disks that hold one are dropped.
/// Hosts without a replica of the volume hold no disk of it, so only dynamic entries are
/// filtered (and summarised anew); entries left empty are dropped.
fn disk_anti_affinity(prep: &mut Prep, replicas: &[Replica], disk_soft: bool, notes: &mut Notes) {
    let dyn_cands = &mut prep.dyn_cands;
    let any_free = prep.entries.iter().any(|e| {
        !e.dynamic
            || dyn_cands[e.start as usize..(e.start + e.len) as usize]
                .iter()
                .any(|c| !disk_stage::holds(c, replicas, &prep.replica_at))
    });
    let filter = any_free || !disk_soft;
    let mut w = 0usize;
    for e in prep.entries.iter_mut().filter(|e| e.dynamic) {
        let start = w;
        let mut agg = Agg::EMPTY;
        for k in e.start as usize..(e.start + e.len) as usize {
            let c = dyn_cands[k];
            if filter && disk_stage::holds(&c, replicas, &prep.replica_at) {
                if let Some(hp) = prep.hosts.get(c.host.index()) {
                    notes.disk(hp.disk_start, c.host, c.disk.index(), DiskNote::AntiAffinity);
                }
                continue;
            }
            agg.push(&c);
            dyn_cands[w] = c;
            w += 1;
        }
        e.start = start as u32;
        e.len = (w - start) as u32;
        e.agg = prep.dyn_aggs.len() as u32;
        prep.dyn_aggs.push(agg);
    }
    dyn_cands.truncate(w);
    prep.entries.retain(|e| e.len > 0);
}

/// Step 12, best-effort data locality: with the volume attached to a node that holds no
/// working replica of it yet and has a candidate disk, the choice is among that node's disks.
fn best_effort_locality(cx: &Ctx<'_>, prep: &mut Prep, replicas: &[Replica]) {
    if cx.volume.data_locality == DataLocality::BestEffort {
        if let Some(local) = cx.local_host {
            let has_local =
                replicas.iter().zip(&prep.replica_at).any(|(r, &(h, _))| h == Some(local) && !r.is_failed());
            if !has_local && prep.entries.iter().any(|e| e.host == local) {
                prep.entries.retain(|e| e.host == local);
            }
        }
    }
}

/// The caller's node filters (of `caller_nodes`, by position) that bind a replica no tier
/// placed: those that rejected a candidate node (of `cands`) which the rules after them would
/// have admitted: a node of a tier the cascade tries under the node and zone anti-affinity
/// rules (`soft`: node, zone), whose domain at no hard level of the caller's holds a replica.
/// A filter whose every rejected node a later hard rule excludes anyway did not bind it, and is
/// not named. Runs on a failure only.
fn binding_callers(
    cx: &Ctx<'_>,
    prep: &Prep,
    cands: &[HostId],
    used: &Used,
    caller_nodes: u64,
    (node_soft, zone_soft): (bool, bool),
) -> u64 {
    let Some(hooks) = cx.hooks.filter(|_| caller_nodes != 0) else { return caller_nodes };
    let levels = (!hooks.levels.is_empty()).then(|| LevelPasses::new(hooks, &prep.level_values, used));
    let mut binding = 0u64;
    for &id in cands {
        let Some(hp) = prep.host(id).filter(|hp| hp.selector_ok && hp.caller != 0) else { continue };
        let (node_used, zone_used) = (used.node(id), used.zone(hp.zone));
        // The tiers of `tier_order`, by `node_classes`' class rules.
        let in_a_tier = zone_used.is_none()
            || match (zone_soft, node_soft) {
                (false, _) => node_used == Some(true) && (zone_used == Some(true) || cx.best_effort),
                (true, false) => node_used.is_none() || hp.pressured || node_used == Some(true),
                (true, true) => true,
            };
        let hard_level = levels.as_ref().and_then(|lv| lv.excludes(&prep.level_values, id, lv.passes.len() - 1));
        if in_a_tier && hard_level.is_none() {
            binding |= 1u64 << (hp.caller - 1);
        }
    }
    binding
}

/// The reasons of a replica no tier placed: the disk reasons the cascade met, and the caller's
/// node filters (`caller_nodes`, by position) and disk filters that rejected a node or a disk.
fn failure_reasons(reasons: &mut Reasons, hooks: Option<&ReplicaHooks>, caller_nodes: u64, cascade: &Cascade) {
    reasons.insert_bits(cascade.bits);
    if let Some(h) = hooks {
        for (i, f) in h.filters.iter().enumerate() {
            if caller_nodes & (1u64 << i) != 0 {
                reasons.insert_caller(f.name());
            }
        }
        for (i, f) in h.disk_filters.iter().enumerate() {
            if cascade.caller_disks & (1u64 << i) != 0 {
                reasons.insert_caller(f.name());
            }
        }
    }
}

/// The candidate nodes `cands` the cascade left out without a note: a node of a tier tried
/// that a soft level of the caller's excluded in the pass that placed the replica, or with no
/// disk left ([`NodeNote::NoDisk`]); a node of no tier tried, which holds a replica of the
/// volume ([`NodeNote::NodeUsed`]) or whose zone does ([`NodeNote::ZoneUsed`]). Noted in
/// `nodes`. Only with an explanation: allocates per host.
fn left_out(
    cx: &Ctx<'_>,
    prep: &Prep,
    cands: &[HostId],
    tiers: &[(Tier, &[HostId])],
    used: &Used,
    cascade: &Cascade,
    nodes: &mut Vec<(HostId, NodeNote)>,
) {
    const NOTED: u8 = u8::MAX;
    // Per host: NOTED, or 1 + the index of the first tier tried that holds it, or 0.
    let mut seen = vec![0u8; prep.hosts.len()];
    for &(id, _) in nodes.iter() {
        if let Some(s) = seen.get_mut(id.index()) {
            *s = NOTED;
        }
    }
    for e in &prep.entries {
        if let Some(s) = seen.get_mut(e.host.index()) {
            *s = NOTED;
        }
    }
    for (t, &(_, hosts)) in tiers.iter().enumerate().take(cascade.tried) {
        for id in hosts {
            if let Some(s @ 0) = seen.get_mut(id.index()) {
                *s = t as u8 + 1;
            }
        }
    }
    let levels = cx.hooks.filter(|h| !h.levels.is_empty()).map(|h| LevelPasses::new(h, &prep.level_values, used));
    let deciding = cascade.tier.map(|_| cascade.tried as u8);
    for &id in cands {
        let note = match seen.get(id.index()).copied().unwrap_or(NOTED) {
            NOTED => continue,
            0 if used.node(id).is_some() => NodeNote::NodeUsed,
            0 => NodeNote::ZoneUsed,
            t => {
                let soft_level = (Some(t) == deciding)
                    .then(|| levels.as_ref()?.excludes(&prep.level_values, id, cascade.pass))
                    .flatten();
                soft_level.map_or(NodeNote::NoDisk, |l| NodeNote::Level(l as u16))
            }
        };
        nodes.push((id, note));
    }
}

/// The first disk of `cluster` with more available space than its maximum, as an error.
/// Computes in O(hosts / 64).
fn check_disks(cluster: &Cluster) -> Result<(), ReplicaError> {
    disk_error(cluster, cluster.disk_above_maximum())
}

/// The error for `found`, the first disk above its maximum if there is one
/// ([`Cluster::disk_above_maximum`]).
fn disk_error(cluster: &Cluster, found: Option<(HostId, DiskId)>) -> Result<(), ReplicaError> {
    let Some((host, disk)) = found else { return Ok(()) };
    let (Some(h), Some(d)) = (cluster.host(host), cluster.disk(host, disk)) else { return Ok(()) };
    Err(ReplicaError::DiskAboveMaximum {
        host: h.name.to_string(),
        disk: d.name.to_string(),
        available: d.available,
        maximum: d.maximum,
    })
}

/// The name of a new replica of `volume`: `<volume>-r-<8 hex digits>` from `rng`, drawn again
/// while one of `list` has it.
fn new_replica_name(volume: &Volume, rng: &mut SplitMix64, list: &[Replica]) -> String {
    loop {
        let n = format!("{}-r-{:08x}", volume.name, rng.next_u64() as u32);
        if !list.iter().any(|r| r.name == n) {
            return n;
        }
    }
}

/// Writes placement `p` into `replicas[i]` (not yet counted by its disk's `scheduled`) and the
/// call's prepared state, so that the replicas scheduled after it see it.
fn write_placement(prep: &mut Prep, replicas: &mut [Replica], i: usize, p: &ReplicaPlacement) {
    prep.place(i, p.host, p.disk);
    if let Some(r) = replicas.get_mut(i) {
        place_replica(r, p);
    }
}

/// Writes placement `p` into replica `r` (not yet counted by its disk's `scheduled`).
fn place_replica(r: &mut Replica, p: &ReplicaPlacement) {
    r.node_id.clone_from(&p.node_id);
    r.disk_id.clone_from(&p.disk_id);
    r.data_directory_name.clone_from(&p.data_directory_name);
    r.counted = false;
}

/// The result of [`ReplicaScheduler::schedule`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ReplicaOutcome {
    /// Every replica after the call, in name order, new placements written in (with
    /// [`Replica::counted`] false).
    pub replicas: Vec<Replica>,
    /// Names of the replicas created by the call.
    pub created: Vec<String>,
    /// Names of the failed replicas reused (failure cleared, retry count incremented), in order.
    pub reused: Vec<String>,
    /// Seconds until a new replica may be created (`RequireNewReplica`); 0 when none is delayed.
    pub wait_seconds: i64,
    /// The precheck message that stopped replica creation, if any.
    pub precheck_failure: Option<String>,
    /// One outcome per replica the call tried to schedule, in the order tried.
    pub selections: Vec<(String, ReplicaSelection)>,
    /// Data locality is on and the volume is detached: nothing was scheduled.
    pub waiting_for_attachment: bool,
}

impl ReplicaOutcome {
    /// The successful placements, in the order made.
    pub fn placed(&self) -> impl Iterator<Item = (&str, &ReplicaPlacement)> + '_ {
        self.selections.iter().filter_map(|(n, o)| o.placement.as_ref().map(|p| (n.as_str(), p)))
    }

    /// The union of every failure's reasons.
    pub fn reasons(&self) -> Reasons {
        let mut all = Reasons::default();
        for (_, o) in &self.selections {
            if o.placement.is_none() {
                for &r in o.reasons.as_slice() {
                    all.insert(r);
                }
                for name in o.reasons.callers() {
                    all.insert_caller(name);
                }
            }
        }
        all
    }

    /// The volume `Scheduled=False` message when some replica failed: the joined reasons of every
    /// failure, or `replica scheduling failed`; `None` when every tried replica was placed and
    /// the precheck did not stop creation.
    /// A scheduling failure takes precedence over a precheck failure (it comes later in the
    /// controller's pass); otherwise the precheck message.
    pub fn condition_message(&self) -> Option<String> {
        if self.selections.iter().any(|(_, o)| o.placement.is_none()) {
            return Some(self.reasons().condition_message());
        }
        self.precheck_failure.clone()
    }
}
