//! The spread engine: SwarmKit's placement preferences (spread over labels, level by level)
//! on a [`Cluster`](crate::snapshot::Cluster) snapshot, plus pack-into, weighted spread, node-level spread
//! and hard skew limits.
//!
//! # Design
//!
//! Each effective preference is a level of a decision tree with one branch per label value;
//! every node sits in one leaf. A batch of tasks is split down the tree (SwarmKit's top-up rule
//! in the compatible modes, a water-fill in [`SpreadMode::Balanced`]) and placed inside each leaf by
//! SwarmKit's node order (failure penalty, tasks of the service, total tasks, name), after
//! SwarmKit's filter pipeline and the user's [`Filter`](crate::filter::Filter)s say which nodes are
//! eligible. The snapshot is never changed: the batch's tasks are consumed in an
//! [`Overlay`](crate::snapshot::Overlay). A [`SpreadScratch`] keeps the tree's shape and per-node state
//! with the snapshot. Every fast path gives a fresh, plain call's outcome exactly.
//!
//! # Paths
//!
//! | path | when it runs | pinned by |
//! |---|---|---|
//! | general: every host's label path read off its record, the pipeline run node by node, each leaf sorted by comparing full node keys, nothing kept | the reference the paths below are tested against | `balanced_skew_is_optimal`, `compatible_mode_is_deterministic`, `no_node_exceeds_max_replicas`, `weighted_spread_lands_within_one_task` (`tests/properties/spread_properties.rs`), against plain models |
//! | the tree read off the chunks' label indexes, 64 lanes at a time | every tree build | `leaves_are_the_hosts_of_each_label_path_in_name_order` (`src/spread/tree.rs`) |
//! | the leading Ready and Resource stages judged a chunk at a time from the dense columns (their `check_chunk`, through the core's `judge_chunk`) | before the first placement of every call | `chunked_leading_stages_match_the_pipeline_node_by_node` (`src/spread/run.rs`) |
//! | the final state judged a chunk at a time through the core's filter chain (`judge_chunk`, each filter's `check_chunk`) | the explanation of a call with tasks left or verdicts asked for (the balanced mode's failure counts) | `final_pass_matches_the_pipeline_node_by_node` (`src/spread/run.rs`), against the pipeline node by node |
//! | verdict reuse: a revisited candidate that took no task since it last passed is not checked again | every filter host-local (SwarmKit's pipeline is) | `reused_verdicts_change_nothing` (`tests/properties/spread_properties.rs`) |
//! | a leaf's first sort by counting (stable, of the name order) | a leaf without scores whose candidates hold at most 8 distinct keys | `few_keys_sort_as_a_stable_sort_by_key` (`src/spread/compat.rs`) |
//! | a leaf's first sort on packed integers (key and name rank, one u64 when the counts allow) | any other leaf without scores | `packed_sort_orders_as_the_node_order` (`src/spread/compat.rs`), against a sort by the node order (`Run::full_order`); `narrow_keys_order_as_wide_ones` (`src/spread/compat.rs`), for the u64 key against the wide one |
//! | a revisited leaf's heap sort on u64 copies of the node keys (key and position) | the compatible modes, no score or penalty, counts below 2^16 | `narrow_heap_sort_permutes_as_the_wide_one`, `written_out_narrow_drain_permutes_as_the_generic_one` (`src/spread/compat.rs`) |
//! | u64 leaf heaps (key and name rank) | [`SpreadMode::Balanced`], when no node can outgrow the narrow key in the call | `narrow_heap_keys_order_and_name_as_node_keys` (`src/spread/balanced.rs`) |
//! | the kept tree: counts refilled (kept, in the compatible mode, for the same service) | [`SpreadScheduler::schedule_with`] on the same snapshot with the same level sources | `a_kept_tree_answers_as_a_fresh_one` (`tests/properties/spread_properties.rs`), `a_changed_or_other_snapshot_rebuilds_the_kept_tree` (`src/spread/scheduler.rs`) |
//! | kept node state: the service's task counts (the previous call's nodes restored) and the leading verdicts | a scratch on the same snapshot (verdicts: the same resources) | `kept_node_state_answers_as_a_fresh_one` (`tests/properties/spread_properties.rs`) |
//! | the tree, task counts and leading verdicts updated for the changed chunks | a scratch on a later snapshot of the lineage, at most about half the chunks changed (the tree: label levels only) | `an_updated_tree_answers_as_a_fresh_one` (`tests/properties/spread_properties.rs`), `an_updated_shape_is_the_built_one` (`src/spread/tree.rs`) |
//! | the split rules on counts alone (`shadow.rs`) | [`capacity::tasks`](crate::capacity::tasks) | `task_capacity_arithmetic_matches_the_bisection` (`tests/properties/capacity.rs`), `a_batch_splits_as_the_engine_does` (`src/spread/shadow.rs`) |
//!
//! # Contents
//!
//! - [Quick example](#quick-example)
//! - [Mapping SwarmKit onto the snapshot](#mapping-swarmkit-onto-the-snapshot)
//! - [Preferences and descriptors](#preferences-and-descriptors)
//! - [The two modes](#the-two-modes)
//! - [Extensions SwarmKit lacks](#extensions-swarmkit-lacks)
//! - [Filters, constraints and weighers](#filters-constraints-and-weighers)
//! - [Failure and explanation](#failure-and-explanation)
//! - [Cost](#cost)
//! - [Not modelled](#not-modelled)
//!
//! # Quick example
//!
//! ```
//! use placewise::spread::{SpreadMode, Preference, SpreadRequest, SpreadScheduler};
//! use placewise::{Cluster, HostSpec};
//! use placewise::snapshot::InstanceSpec;
//!
//! let cluster = Cluster::builder()
//!     .host(HostSpec::new("a1").label("az", "a").instance(InstanceSpec::new("t1").group("web")))
//!     .host(HostSpec::new("b1").label("az", "b"))
//!     .host(HostSpec::new("c1").label("az", "c"))
//!     .build()?;
//! let request = SpreadRequest::new("web", 4).preference(Preference::spread("node.labels.az"));
//! let scheduler = SpreadScheduler::new();
//!
//! // SwarmKit: 5 tasks over 3 zones is a target of 1 with 2 extra; a (already at 1) and b,
//! // visited first, take the extras.
//! let swarm = scheduler.schedule(&cluster, &request)?;
//! assert_eq!(swarm.per_host().into_iter().collect::<Vec<_>>(), [("a1", 1), ("b1", 2), ("c1", 1)]);
//!
//! // Too many for the nodes allowed: SwarmKit's message, and the tree says why.
//! let full = scheduler.schedule(&cluster, &request.clone().max_replicas(1))?;
//! assert_eq!(full.unplaced, 2);
//! assert_eq!(full.message(), Some("no suitable node (max replicas per node limit exceed)"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Mapping SwarmKit onto the snapshot
//!
//! [`SwarmNode`] builds a host from these facts as typed fields (role, hostname, node and engine
//! labels, availability, platform, address, resources, existing tasks per service); the
//! attributes below are what it writes.
//!
//! | SwarmKit | placewise |
//! |---|---|
//! | node id | the host name ([`Host::name`](crate::snapshot::Host)) |
//! | node labels (`node.labels.<k>`) | host labels with plain keys |
//! | engine labels (`engine.labels.<k>`) | host labels whose key is literally `engine.labels.<k>` ([`ENGINE_LABEL_PREFIX`]) |
//! | no engine description | host attribute `engine` = `false`: engine labels read as `""` |
//! | `node.hostname` | host attribute `hostname` (string; missing → `""`) |
//! | `node.role` | host attribute `role` (default `worker`) |
//! | `node.platform.os` / `.arch` | host attributes `os` / `arch`; a node with neither has no platform |
//! | `node.ip` | host attribute `ip` (optional) |
//! | status READY | [`HostState::up`](crate::snapshot::HostState) |
//! | availability ACTIVE (not PAUSE / DRAIN) | `enabled`, not `cordoned` (pause), not `evicting` (drain) |
//! | a task of service S on the node | a host [`Instance`](crate::snapshot::Instance) whose group is S, or a count under S in host attribute [`SERVICE_TASKS_ATTRIBUTE`] (its reservation added to the host's used amounts: [`SwarmNode::tasks`]) |
//! | desired state SHUTDOWN, still running | `Instance::terminating`: not an active task, but its resources stay reserved and its ports stay used |
//! | active tasks in total | the host's instances that are not terminating |
//! | available resources | what the snapshot leaves free, minus the batch's earlier tasks (an [`Overlay`](crate::snapshot::Overlay); the snapshot is never changed) |
//! | host-mode published ports of a task | instance label [`HOST_PORTS_LABEL`] = `tcp/8080,udp/53` |
//! | recent failures of the service per node | [`SpreadRequest::recent_failures`] (by host name) |
//! | a batch (service, spec version) | one [`SpreadRequest`]; batches are placed one call at a time |
//!
//! # Preferences and descriptors
//!
//! [`SpreadRequest::preferences`] are in decreasing precedence; each effective one adds a
//! level to the decision tree, with one branch per value ([`Preference`], [`Descriptor`]).
//! Descriptors read `node.labels.<k>` and `engine.labels.<k>` with the prefix matched
//! case-insensitively and the key exactly, as SwarmKit does; a text that starts with neither
//! `node.` nor `engine.` is a plain node label key (`rack` = `node.labels.rack`).
//!
//! **Nodes missing the label** read the value `""`, as do nodes with an explicitly empty value:
//! together they form one branch that is treated like any other value, at any depth
//! (SwarmKit's "null value"). Combine a preference with a constraint to use only labelled nodes.
//!
//! Branches are visited in ascending byte order of their values (`""` first), nodes inside a
//! leaf by name.
//!
//! # The two modes
//!
//! [`SpreadMode::SwarmCompatible`] (the default) is SwarmKit's algorithm, exactly, so that every
//! result is one SwarmKit produces; [`SpreadMode::SwarmCompatibleStable`] is the same with the
//! reference's canonical (stable) order on revisited leaves. The mode is the one place that
//! says which:
//!
//! - the tree is built from **every** node, eligible or not; every branch's count of the
//!   service's tasks is the sum over all nodes beneath and stays **frozen** for the batch;
//! - each leaf keeps at most `tasks` candidates, filled by SwarmKit's bounded heap (the filters
//!   run for a node while the heap has room, afterwards only for a node better than its worst);
//! - a branch asked for `n` splits with SwarmKit's top-up rule: `target = (pool + left) div
//!   open`, `extra = … mod open`; children below the target (or at it while `extra` lasts) are
//!   asked `target − existing`, plus one while `extra > 0`; a child that places fewer than asked
//!   is full and leaves the pool; passes repeat while some child was asked in the previous one
//!   (the 2025 fix). So uneven existing counts overshoot, a subtree can place more than asked,
//!   and a constraint-excluded branch is discovered, then redistributed;
//! - inside a leaf nodes are ordered by failure penalty (recent failures when ≥ 5), then tasks
//!   of this service, then total tasks, then name; the first pass moves on only when the next
//!   node is strictly better, later passes go round-robin, and a node failing a filter is
//!   skipped for the rest of the visit. On a later visit the candidates are re-filtered and
//!   re-sorted. [`SpreadMode::SwarmCompatible`] does it as SwarmKit does: a failing candidate is
//!   replaced by the last one, then the array is heap-sorted (Go's `container/heap` Init, then
//!   Pop), so two tied nodes swap. [`SpreadMode::SwarmCompatibleStable`] drops failing candidates in
//!   place and sorts stably, ties keeping their previous positions: the reference's canonical
//!   outcomes (vector V08), one of which SwarmKit's heap never produces in rare cases;
//! - `spread` preferences over `node.id`, `node.hostname` or any other descriptor SwarmKit does
//!   not read (`node.ip`, `node.role`, `node.platform.os`, a bare `node.labels.` …) add no level
//!   and are listed in [`SpreadOutcome::skipped`] (SwarmKit's silent skip), in **both**
//!   modes, so one request builds the same tree in both; a
//!   [strict](SpreadRequest::strict_descriptors) request gets
//!   [`SpreadError::UnsupportedDescriptor`] instead;
//! - a preference over a label no node carries (a misspelt `node.labels.rackk`) keeps its level,
//!   one branch holding every node, as SwarmKit does, in **both** modes, and the outcome says so
//!   in [`SpreadOutcome::warnings`] ([`SpreadWarning::LabelNotCarried`]); a
//!   [strict](SpreadRequest::strict_descriptors) request gets
//!   [`SpreadError::LabelNotCarried`] instead. The check reads the chunks' label indexes,
//!   stopping at the first chunk that holds the key.
//!
//! [`SpreadMode::Balanced`] is what users ask for:
//!
//! - a branch asked for `n` water-fills its children: task by task to the least-loaded child
//!   (its service tasks, existing plus placed); **remainders** go to the child with **more
//!   eligible nodes**, then to the smaller value (moby/swarmkit#2162); a child that comes back
//!   short is skipped and the rest re-split, so the max–min skew among siblings is the least
//!   achievable at every level;
//! - inside a leaf, always the best node by the same order as above (a true water-fill);
//! - [`SpreadRequest::ignore_ineligible_tasks`] leaves the tasks of nodes that fail the filters
//!   out of the branch loads (like Kubernetes' `nodeAffinityPolicy: Honor`); by default they
//!   count, as in SwarmKit;
//! - `spread` over `node.id` and `node.hostname` makes per-node levels only when the request
//!   opts in ([`SpreadRequest::node_level_spread`]), an extension, not a silent change of what
//!   the same request means in SwarmKit.
//!
//! # Extensions SwarmKit lacks
//!
//! Defined here, in both modes (a result is SwarmKit-reproducible only when every preference
//! is a plain label `spread`):
//!
//! - **Pack into** ([`Preference::Pack`]): the child with the most tasks of the service (then
//!   more eligible nodes, then the smaller value) takes every task until it is full, then the
//!   next.
//! - **Weighted spread** ([`Preference::Weighted`], [`Targets`]): each branch has a share of its
//!   parent's tasks; tasks go one by one to the branch with the largest deficit
//!   `share × (count + 1) − own count` (ties: larger share, more eligible nodes, smaller
//!   value), counting existing tasks, so a branch lands within one task of its target when
//!   capacity allows. With [`Targets::Weights`] unlisted values (and `""` unless listed) weigh
//!   `unlisted` (default 0: they get tasks only when every weighted branch is full); all-zero
//!   weights spread evenly. With [`Targets::Percent`] (at most 100 in total) the rest is shared
//!   equally by the unlisted values present, and when every present value is listed, the
//!   listed shares are scaled to 100. Shares are computed over the values present under each
//!   parent.
//! - **Node-level spread**: `Descriptor::NodeId` (one branch per node) and
//!   `Descriptor::Hostname` (one per reported hostname, `""` when missing).
//! - **Hard spread** ([`HardSpread`], also usable alone as the foundation filter
//!   [`SkewFilter`]): a node may take a task when `count(its domain) + 1 − min ≤ max_skew`,
//!   `min` being the least count over the domains, or 0 while fewer than `min_domains` exist.
//!   Domains are the key's values on the nodes that satisfy the request's constraints (the
//!   Kubernetes default, `nodeAffinityPolicy: Honor`); **a node without the key is in no
//!   domain** and never takes a task under `DoNotSchedule`. In the balanced mode a blocked
//!   node is set aside, not dropped, since the limit opens as other domains catch up;
//!   `ScheduleAnyway` limits gate the same way until they alone stop the batch, then are
//!   lifted. In the compatible mode a `DoNotSchedule` limit is one more filter at the end of
//!   SwarmKit's pipeline, checked where the others are; `ScheduleAnyway` has no effect there.
//!
//! # Filters, constraints and weighers
//!
//! SwarmKit's pipeline runs first, in its order, each filter only when the request makes it
//! active: [`ReadyFilter`], [`SwarmResourceFilter`], [`ConstraintFilter`], [`PlatformFilter`],
//! [`HostPortFilter`], [`MaxReplicasFilter`] (foundation [`Filter`](crate::filter::Filter)s, usable in
//! any [`Scheduler`](crate::schedule::Scheduler)); then `DoNotSchedule` hard spread limits; then the
//! user's filters ([`SpreadSchedulerBuilder::filter`]). A node stops at its first failing
//! filter. Filters only decide eligibility: they never prune the tree, and (compatible mode)
//! excluded nodes' tasks still count. SwarmKit's Plugin and CSI volume filters are not
//! modelled.
//!
//! Constraints ([`Constraint`]) follow SwarmKit's grammar: split at the first `==`, else the
//! first `!=`; keys `node.id`, `node.hostname`, `node.ip` (address or CIDR), `node.role`,
//! `node.platform.os`, `node.platform.arch`, `node.labels.<k>`, `engine.labels.<k>`; values
//! compared whole with Unicode case folding; an unknown key matches no node under either
//! operator. A constraint that does not parse is a typed [`ConstraintError`] at the edge
//! ([`SpreadRequest::constraint`], JSON), not a silently disabled filter as in SwarmKit.
//!
//! User weighers ([`SpreadSchedulerBuilder::weigher`]) are evaluated **once per batch**, over
//! every candidate the tree kept, normalised over them (foundation
//! [`normalize`](crate::weigh::normalize)) and summed with their multipliers. The score orders a
//! leaf's nodes after the failure penalty and the two task counts and before the name, so it
//! breaks SwarmKit's ties. In the compatible mode a leaf holding more eligible nodes than the
//! batch has tasks keeps the best by SwarmKit's keys alone, as SwarmKit does.
//!
//! # Failure and explanation
//!
//! Every outcome carries the core's [`Explanation`](crate::explain::Explanation), as every engine's
//! does. With tasks left, its [`message`](SpreadOutcome::message) is SwarmKit's
//! `no suitable node (…)`: per-filter counts, highest first (ties in pipeline order), in
//! SwarmKit's wording, joined by `; ` (`max replicas per node limit exceed` carries no count; a
//! user filter reads `<its description> on N nodes`). The compatible mode keeps SwarmKit's
//! counters exactly, including their reset whenever a node passes (so the numbers mean "since
//! the last node that passed"); the balanced mode counts each node's first failing filter over
//! the final state. Without any rejection the message is `no suitable node`.
//!
//! The explanation's own counts are the same in both modes: with tasks left (or verdicts asked
//! for, [`SpreadRequest::explain`]), every node is judged once more over the final state, a
//! chunk at a time through the core's filter chain, and counted under its first failing filter
//! in that filter's own words (`insufficient resources`); the nodes that pass are
//! `available`, and with verdicts each node's is listed. When every task was placed and no
//! verdict is asked for, nothing is judged again: no rejection is listed and `available` is the
//! number of nodes that passed when the tree was built.
//!
//! [`SpreadOutcome::tree`] is the decision tree ([`BranchReport`], `Display` draws it), this
//! engine's own part of the outcome:
//! per branch its nodes, eligible nodes, existing tasks, tasks asked and placed, weighted share,
//! and for a branch that got none, why ([`BranchNote`]): no eligible node, at or above its
//! share, no capacity left, or the batch already placed. Each [`SpreadSelection`] names the branch
//! its task went to (the node's value at every level).
//!
//! # Cost
//!
//! - The first call on a snapshot reads every host record once (task counts of a host with
//!   instances or attributes; names when the tree is built), and label values from the
//!   snapshot's per-chunk label indexes a chunk's 64 lanes at a time (each leaf's node list
//!   sized before it is filled).
//! - It runs the pipeline once per node (more for revisited candidates), then costs
//!   O(levels × siblings) per task to split and O(log leaf) (balanced) or amortised O(1)
//!   (compatible) per task to pick a node, plus sorting each leaf once per visit.
//! - The pipeline's leading Ready and Resource stages are judged a chunk of 64 nodes at a time
//!   from the snapshot's dense columns before anything is placed, through the core's filter
//!   chain ([`Filter::check_chunk`](crate::filter::Filter::check_chunk) of [`ReadyFilter`] and
//!   [`SwarmResourceFilter`]).
//! - When every filter is host-local (SwarmKit's pipeline is, a user filter says so), a
//!   revisited candidate that took no task since it last passed is not checked again
//!   (SwarmKit's counters are updated as if it were).
//! - A revisited leaf's heap sort works on copies of the node keys (one u64 each, the key and
//!   the position, when there is no score or penalty and the counts allow).
//! - A leaf's first sort counts its candidates by key when they hold few distinct keys (a
//!   stable counting sort of the name order), and otherwise packs each node's key and name
//!   rank into one u64 likewise.
//! - The balanced mode's leaf heaps hold one such u64 per node (key and name rank) when no
//!   node can outgrow it in the call.
//! - [`SpreadScheduler::schedule_with`] keeps the per-node arrays between calls, and with the
//!   snapshot ([`SpreadScratch`]) each node's task counts of the service (restoring only the
//!   nodes the previous call placed on), the leading stages' verdicts (for the same resources)
//!   and the tree's shape (for the same level sources).
//! - On the very same snapshot with the same levels, a call refills the tree's counts in
//!   O(hosts) instead of building it (the compatible mode keeps them, for the same service,
//!   and reads no host record at all).
//! - On a later snapshot of the same lineage where few chunks changed
//!   (`Cluster::changed_chunks`), the three are updated for the hosts of those chunks instead
//!   (the tree when its levels read labels).
//! - The benchmark (`benches/spread.rs`) places 1,000 tasks over 2 × 5 × 10 racks on 10k
//!   nodes.
//!
//! # Not modelled
//!
//! The event loop, debounce and batching by spec version (one call is one batch); preassigned
//! (global service) tasks; SwarmKit's Plugin and CSI volume filters; what happens to tasks left
//! over (they are reported, not retried).

mod balanced;
mod compat;
mod constraint;
mod error;
mod filters;
pub mod import;
mod node;
mod outcome;
mod request;
mod run;
mod scheduler;
pub(crate) mod shadow;
mod skew;
mod tree;

pub use constraint::{Constraint, ConstraintOp};
pub use error::{ConstraintError, SpreadError};
pub use filters::{
    ConstraintFilter, HostPortFilter, MaxReplicasFilter, PlatformFilter, ReadyFilter, SwarmResourceFilter,
};
pub use node::{
    Availability, Role, SwarmNode, ATTRIBUTES, ENGINE_LABEL_PREFIX, HOST_PORTS_LABEL, SERVICE_TASKS_ATTRIBUTE,
};
pub use outcome::{BranchNote, BranchReport, SpreadOutcome, SpreadSelection, SpreadWarning};
pub use request::{
    Descriptor, HardSpread, HostPort, Platform, Preference, SpreadMode, SpreadRequest, Targets, WeightedSpread,
    WhenUnsatisfiable,
};
pub use scheduler::{SpreadScheduler, SpreadSchedulerBuilder, SpreadScratch};
pub use skew::SkewFilter;
