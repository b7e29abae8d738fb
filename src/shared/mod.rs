//! Concurrent scheduling on one shared cluster state: claims, generations, the update log,
//! partitions.
//!
//! Several schedulers plan in parallel, each on its own [`Snapshot`] of one [`SharedCluster`],
//! and turn their placements into [`Plan`]s of [`Claim`]s. A single writer
//! ([`SharedCluster::commit`]) re-checks every claim against the current state and lands it or
//! reports a [`Conflict`]: optimistic concurrency as in Omega's shared-state schedulers and
//! Nomad's plan applier. Every change is one [`LogEntry`] with a sequence number, so other
//! processes can follow the state from a [`Checkpoint`] and the tail of the log.
//!
//! # Contents
//!
//! - [Quick start](#quick-start)
//! - [The parts](#the-parts)
//! - [Commit rules](#commit-rules)
//! - [Retries and counters](#retries-and-counters)
//! - [The update stream](#the-update-stream)
//! - [Partitions](#partitions)
//! - [What to expect](#what-to-expect)
//! - [Decisions](#decisions)
//! - [Running it on your own store and bus](#running-it-on-your-own-store-and-bus)
//!
//! # Quick start
//!
//! ```
//! use placewise::shared::{ConflictReason, Plan, RetryPolicy, SharedCluster};
//! use placewise::{Cluster, HostSpec, Request, Scheduler};
//!
//! let cluster = Cluster::builder()
//!     .host(HostSpec::new("h1").vcpus(8.0).memory_mb(8192.0))
//!     .host(HostSpec::new("h2").vcpus(8.0).memory_mb(4096.0))
//!     .build()?;
//! let shared = SharedCluster::new(cluster);
//! let scheduler = Scheduler::standard();
//! let request = Request::new(1).memory_mb(6144.0);
//!
//! // Two schedulers plan on the same snapshot and both pick h1, the only host with room.
//! let (a, b) = (shared.snapshot(), shared.snapshot());
//! let plan_a = Plan::from_placement(&a, &request, &scheduler.schedule(&a, &request)?, &["vm-a".into()])?;
//! let plan_b = Plan::from_placement(&b, &request, &scheduler.schedule(&b, &request)?, &["vm-b".into()])?;
//! let first = shared.commit(&scheduler, &plan_a)?;
//! let second = shared.commit(&scheduler, &plan_b)?;
//! assert!(first.is_complete());
//! assert!(matches!(second.conflicts[0].reason, ConflictReason::Stale { .. }));
//!
//! // The retry helper re-plans on fresh state: h1 is full now, so nothing fits.
//! let placed = shared.place(&scheduler, &request, &["vm-b".into()], &RetryPolicy::default())?;
//! assert_eq!(placed.unplaced, 1);
//! assert_eq!(shared.seq(), 1); // one log entry: vm-a's claim
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The parts
//!
//! | file | holds |
//! |---|---|
//! | `store.rs` | [`SharedState`], the contract of every store (this module's [`SharedCluster`], the `placewise-postgres` crate's `PgStore`), with [`SharedState::place`] |
//! | `view.rs` | [`Snapshot`], [`new_lineage`] |
//! | `rules.rs` | [`judge_plan`]: the commit rules, written once for every store; [`Prior`], [`Verdicts`] |
//! | `state.rs` | [`SharedCluster`] (current state behind an `RwLock<Arc<Cluster>>`, one writer mutex, open claims, a clock, counters), [`OpenClaim`], [`Stats`] |
//! | `claim.rs` | [`Plan`], [`Claim`], [`CommitMode`], [`Validation`] |
//! | `outcome.rs` | [`CommitOutcome`], [`Committed`], [`Conflict`], [`ConflictReason`], [`ClaimId`] |
//! | `retry.rs` | the loop behind [`SharedState::place`]: plan, commit, re-plan the failed part; [`RetryPolicy`], [`Placed`] |
//! | `log.rs` | [`LogEntry`], [`Checkpoint`], [`EventLog`] (retained log, compaction), [`Follower`] (gap and duplicate detection) |
//! | `partition.rs` | [`Router`], [`Partition`], [`HostKey`], [`RequestKey`], [`PartitionFilter`] |
//! | `error.rs` | [`LogError`], [`SharedError`], [`StoreError`], [`RetryError`], [`RouteError`] |
//!
//! A snapshot is an `Arc` of the foundation's immutable [`Cluster`](crate::snapshot::Cluster): taking one copies no host,
//! and a commit that changes three hosts copies three hosts and the outer chunk list (hosts /
//! 64 pointers), sharing everything else with every snapshot still in use.
//!
//! # Commit rules
//!
//! [`SharedCluster::commit`] takes the writer lock and walks the plan's claims in order. For
//! each claim, against the current state with the plan's earlier landed claims applied:
//!
//! 1. the host must still exist under the claim's name ([`ConflictReason::HostGone`]);
//! 2. with [`Validation::Generation`] (a [`Plan`]'s default), the host's generation must equal the one
//!    the claim was planned on: compare-and-swap, so a stale claim never lands
//!    ([`ConflictReason::Stale`]). With [`Validation::Fit`] a changed host is counted as a
//!    stale read and judged by the next two rules only;
//! 3. the scheduler's own filters must pass the host ([`Scheduler::check_host`](crate::schedule::Scheduler::check_host): the same
//!    chunk code that planned it), so a claim that no longer
//!    fits never lands ([`ConflictReason::NoFit`]);
//! 4. no resource the instance uses may end below zero free, whatever filters the scheduler
//!    has ([`ConflictReason::OverCommit`]).
//!
//! A claim that passes becomes an `InstancePlaced` event. With [`CommitMode::Partial`] the
//! passing claims land and the outcome lists the others; with [`CommitMode::Gang`] one
//! conflict aborts them all ([`ConflictReason::GangAborted`]) and nothing changes. The landed
//! events form one [`LogEntry`]; the new state is swapped in after the entry is written, so a
//! reader sees a commit whole or not at all.
//!
//! A landed claim is an [`OpenClaim`] until [confirmed](SharedCluster::confirm) (the instance
//! became real), [released](SharedCluster::release) or [expired](SharedCluster::expire): the
//! last two remove its instance, as a log entry. Expiry uses the caller's clock: a claim made
//! with [`Plan::expires_at`]`(t)` is released by the first `expire(now)` with `now ≥ t`; a
//! claim made with [`Plan::expires_after`]`(ttl)` expires `ttl` after its commit on the store's
//! clock ([`SharedCluster::with_clock`]; milliseconds since the Unix epoch by default), and
//! [`SharedState::expire_due`] releases what that clock says is due.
//!
//! These rules are written once, in [`judge_plan`]; every store (this module's
//! [`SharedCluster`], a database store) runs it on its current state and only records the
//! verdicts. A store that knows more than the state shows (an earlier attempt of the same
//! commit landed, an instance id already claimed elsewhere) says so through [`Prior`].
//!
//! # Retries and counters
//!
//! [`SharedCluster::place`] plans on a fresh snapshot, commits, and re-plans only the instances
//! whose claims conflicted (with the earlier ones landed, so group rules see them), at most
//! [`RetryPolicy::max_attempts`] plans; then it fails with [`RetryError::Exhausted`], which
//! lists what did land. [`RetryPolicy::default()`] is made for many schedulers on one state:
//! [`Validation::Fit`], a seeded random pick among the best [`DEFAULT_TOP_K`] hosts even for a
//! scheduler configured for the best one, and [`DEFAULT_MAX_ATTEMPTS`] attempts (the
//! [`RetryPolicy`] docs say why). Instances the scheduler finds no host for are an outcome
//! ([`Placed::unplaced`] with the [`Explanation`](crate::explain::Explanation)), not an error.
//! [`SharedCluster::stats`] counts commits, landed claims, conflicts, stale reads, retries and
//! releases since the shared cluster was made; [`Placed`] carries the same numbers per call.
//!
//! # The update stream
//!
//! Every change ([`publish`](SharedCluster::publish)ed events, commits, releases, expiries) is
//! one [`LogEntry`] with the next sequence number; [`Snapshot::seq`] says which entry a
//! snapshot includes. A new scheduler starts from [`SharedCluster::checkpoint`] (a
//! [`Checkpoint`]: sequence `S` and the cluster as a [`ClusterSpec`](crate::snapshot::ClusterSpec)) and
//! replays [`log_since`](SharedCluster::log_since)`(S)` into a [`Follower`].
//! [`SharedCluster::compact`] makes the current state the log's base and drops the entries.
//! A [`Follower`] or [`EventLog`] refuses an entry whose number is not the next one:
//! [`LogError::Duplicate`] at or below its sequence (skip it: an at-least-once bus redelivers)
//! and [`LogError::Gap`] beyond the next (fetch the missing tail); an entry that does not apply
//! is [`LogError::Event`]. Nothing is ever applied out of order or twice, and a refused entry
//! leaves the state as it was. Entries and checkpoints serialise with serde.
//!
//! # Partitions
//!
//! A [`Router`] splits a cluster into partitions by a [`HostKey`] (aggregate, label or a
//! function), gives each its own [`SharedCluster`] and [`Scheduler`](crate::schedule::Scheduler), and routes each request
//! by a [`RequestKey`] (the request's group through a table, or a function).
//! A partition sees only its hosts, so partitions never conflict with each other. Group rules
//! are cluster-wide, so the router checks them: a group lives in the partition its first
//! member was routed to, and a request of that group routed elsewhere is refused
//! ([`RouteError::GroupElsewhere`]); inside its partition the scheduler's affinity filters see
//! every member. Events go to the partition owning their host ([`Router::publish`]).
//!
//! # What to expect
//!
//! `cargo run --release --example concurrent` runs the parallel scheduler spec's use case
//! (10,000 hosts, a burst of 1,000 builds over 1, 2 and 4 scheduler threads) and prints time,
//! conflicts per commit, retries, stale reads and placement quality for fill-first and
//! spreading, best pick and random top-k, and both validation rules; `cargo bench --bench
//! shared` times it. A snapshot costs tens of nanoseconds and a one-claim commit at 10,000
//! hosts about ten microseconds (the serial part), against a hundred or more for planning.
//! The pattern the spec predicts shows clearly: with the best pick (k = 1) concurrent
//! schedulers choose the same host and a third or more of the claims conflict under the strict
//! compare-and-swap, and fill-first requests even run out of attempts; a random pick among the
//! best 64–256 brings conflicts to about 1% at the price of packing (fill-first uses more
//! hosts); [`Validation::Fit`] removes nearly all conflicts for spreading, at the price of
//! letting two schedulers stack on one host that both saw empty.
//!
//! # Decisions
//!
//! - **Generations are per lineage.** The compare-and-swap token is the host's generation in
//!   the foundation's [`Cluster`](crate::snapshot::Cluster) (the cluster generation of the host's last change). A
//!   snapshot carries its shared cluster's lineage; a plan from another lineage (including a
//!   shared cluster [restored](SharedCluster::restore) from a log, whose generations restart)
//!   is refused with [`SharedError::ForeignPlan`] rather than compared.
//! - **Two default validations.** A hand-made [`Plan`] uses the strict compare-and-swap,
//!   because it is what the design asks for ("a stale claim never lands") and a caller who
//!   builds plans decides; [`RetryPolicy::default()`], what [`SharedState::place`] runs with,
//!   uses [`Validation::Fit`], the Nomad rule, because with several schedulers the strict rule
//!   refuses claims on hosts with room to spare and the callers exhaust their attempts (the
//!   `fleet` example: a quarter of four processes' claims stale at top-64). A fit claim is
//!   judged on state its planner never saw, safely: the fit re-check and the over-commit rule
//!   still hold, under the one writer.
//! - **One writer.** Commits are serialised, like Nomad's single plan applier; readers never
//!   block on them. Planning, the expensive part, runs in parallel.
//! - **One entry per transaction.** A commit's claims share one sequence number, so a follower
//!   never sees half a gang.
//! - **Claims re-checked as instance 0.** Earlier claims of the same plan are applied as real
//!   instances before a claim is checked, so resource, instance-count and group filters see
//!   them exactly as later instances of a request see earlier ones.
//! - **Open claims are the writer's, not the stream's.** The log carries the instances; the
//!   table of open claims and their expiries lives in the shared cluster. After a
//!   [restore](SharedCluster::restore) the instances of open claims are ordinary instances; a
//!   service that needs expiries across restarts keeps them in its store (see below).
//! - **A re-plan reseeds the request** from its seed, its first pending instance id and the
//!   attempt number, so a randomised top-k pick does not walk into the same conflict again and
//!   two callers retrying at once do not draw alike; the first plan keeps the caller's seed.
//! - **Groups pin to one partition**, the first a member is routed to (pinned before its
//!   partition places it, so two racing requests of a new group cannot split it); the pin stays
//!   when the members leave or the placement fails. A host's partition is decided when it joins; `HostUpdated` keeps it there.
//!
//! # Running it on your own store and bus
//!
//! `SharedCluster` is the in-process reference of a contract any transactional store can
//! implement ([`SharedState`]). Hosts are rows (or keys), a claim is a conditional write, the
//! log is a topic. The `placewise-postgres` workspace crate is the finished PostgreSQL store;
//! the sketches below are for other stores.
//!
//! **Claims and generations in SQL.** Keep a `hosts` table with a `version` column, bumped by
//! every change to the host, and a `claims` table. A scheduler reads hosts with their versions
//! (its snapshot), plans, and commits each claim in one transaction:
//!
//! ```sql
//! BEGIN;
//! -- compare-and-swap: 0 rows updated means the host changed since it was read (a conflict)
//! UPDATE hosts SET version = version + 1, memory_used = memory_used + :mem, vcpus_used = vcpus_used + :cpu
//!   WHERE name = :host AND version = :planned_version
//!     AND memory_used + :mem <= memory_limit AND vcpus_used + :cpu <= vcpus_limit;
//! INSERT INTO claims (id, host, instance, expires_at) VALUES (:id, :host, :instance, :expires_at);
//! INSERT INTO log (seq, entry) VALUES (nextval('log_seq'), :entry_json);
//! COMMIT;
//! ```
//!
//! `version` is [`Claim::generation`]; the capacity conditions are the over-commit rule; the
//! fit re-check is [`Scheduler::check_host`](crate::schedule::Scheduler::check_host) run on the rows just read inside the transaction
//! (`SELECT … FOR UPDATE`) for filters a `WHERE` clause cannot say. Partial commits are one
//! transaction per host; gang commits put every host in one transaction and roll back on the
//! first zero-row update. Expiry is `DELETE FROM claims WHERE expires_at <= now()` plus the
//! matching release of resources, in one transaction.
//!
//! **In etcd** a host is a key and its `mod_revision` is the generation: commit with a
//! transaction `If(ModRevision("/hosts/h1") == planned).Then(Put("/hosts/h1", updated),
//! Put("/claims/<id>", claim, lease))`, several hosts in one `Txn` for a gang; a lease with a
//! TTL gives claim expiry for free, and a watch on `/hosts/` from revision `S` is the update
//! stream, with the revision as the sequence number.
//!
//! **The stream on a message bus.** Publish each [`LogEntry`] as one message (JSON through
//! serde), keyed so that one partition of the topic keeps them in order; store a
//! [`Checkpoint`] now and then (in the bus's compacted topic, an object store, a table) and
//! drop older messages. A consumer starts from the newest checkpoint and applies the messages
//! after its `seq`:
//!
//! ```
//! use placewise::shared::{Follower, LogEntry, LogError, SharedCluster};
//! use placewise::{Cluster, ClusterEvent, HostSpec};
//! use placewise::snapshot::StateChange;
//!
//! let shared = SharedCluster::new(Cluster::builder().host(HostSpec::new("h1")).host(HostSpec::new("h2")).build()?);
//! shared.publish(ClusterEvent::HostStateChanged { host: "h2".into(), change: StateChange::default().cordoned(true) })?;
//! let checkpoint = serde_json::to_string(&shared.checkpoint())?; // stored somewhere; at seq 0
//! let messages: Vec<String> = shared.log_since(0)?.iter().map(|e| serde_json::to_string(e).unwrap()).collect();
//!
//! // Another process: start from the checkpoint, consume the topic (with a redelivery).
//! let mut follower = Follower::from_checkpoint(&serde_json::from_str(&checkpoint)?)?;
//! for message in messages.iter().chain(&messages) {
//!     let entry: LogEntry = serde_json::from_str(message)?;
//!     match follower.apply(&entry) {
//!         Ok(()) | Err(LogError::Duplicate { .. }) => {}
//!         Err(other) => return Err(other.into()), // a gap: re-read the topic from follower.seq()
//!     }
//! }
//! assert_eq!(follower.seq(), shared.seq());
//! assert!(!follower.cluster().is_schedulable(follower.cluster().host_id("h2").unwrap()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! With Kafka the topic offset can serve as the sequence number; the rule that matters is the
//! one [`Follower::apply`] enforces: exactly the next number, or stop.

mod claim;
mod error;
mod log;
mod outcome;
mod partition;
mod retry;
mod rules;
mod state;
mod store;
#[cfg(test)]
mod tests;
mod view;

pub use claim::{Claim, CommitMode, Plan, Validation};
pub use error::{LogError, RetryError, RouteError, SharedError, StoreError, StoreErrorKind};
pub use log::{Checkpoint, EventLog, Follower, LogEntry};
pub use outcome::{ClaimId, CommitOutcome, Committed, Conflict, ConflictReason};
pub use partition::{HostKey, HostKeyFn, Partition, PartitionFilter, RequestKey, RequestKeyFn, Router, RouterBuilder};
pub use retry::{Placed, RetryPolicy, DEFAULT_MAX_ATTEMPTS, DEFAULT_TOP_K};
pub use rules::{judge_plan, Prior, Verdicts};
pub use state::{Counters, OpenClaim, SharedCluster, Stats};
pub use store::SharedState;
pub use view::{new_lineage, Snapshot};
