//! placewise's shared scheduling state on PostgreSQL: many scheduler processes, on many
//! machines, one database that outlives all of them.
//!
//! [`PgStore`] implements [`SharedState`](placewise::shared::SharedState), the contract that
//! the in-process [`SharedCluster`](placewise::shared::SharedCluster) also keeps: snapshots,
//! commits under the commit rules, claims that are confirmed, released or expire, inventory
//! events, and the sequenced update log. Code written against the trait moves from one process
//! to many by changing the line that makes the store.
//!
//! # Contents
//!
//! - [Quick start](#quick-start)
//! - [How it works](#how-it-works)
//! - [Schema](#schema)
//! - [Roles](#roles)
//! - [Guarantees](#guarantees)
//! - [Generations](#generations)
//! - [Faults](#faults)
//! - [Partitions](#partitions)
//! - [Measured](#measured)
//! - [Other PostgreSQL-compatible databases](#other-postgresql-compatible-databases)
//! - [Tests](#tests)
//!
//! # Quick start
//!
//! ```no_run
//! use placewise::shared::{RetryPolicy, SharedState};
//! use placewise::{Cluster, HostSpec, Request, Scheduler};
//! use placewise_postgres::PgStore;
//!
//! let url = "host=/var/run/postgresql user=scheduler dbname=placement";
//! PgStore::migrate(url)?; // once, as the tables' owner
//! let store = PgStore::connect(url)?; // was: SharedCluster::new(cluster)
//! store.bootstrap(&Cluster::builder().host(HostSpec::new("h1").memory_mb(8192.0)).build()?)?;
//!
//! let ids = vec!["vm-1".to_string()];
//! let placed = store.place(&Scheduler::standard(), &Request::new(1).memory_mb(1024.0), &ids, &RetryPolicy::default())?;
//! store.confirm(placed.committed[0].id)?; // the instance started
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`RetryPolicy::default()`](placewise::shared::RetryPolicy) is made for many processes on
//! one database: [fit validation](placewise::shared::Validation::Fit) (a claim on a host
//! another process changed lands if it still fits, rather than being refused for the change),
//! a seeded random pick among the best few hosts even for a scheduler configured for the best
//! one (so processes with the same snapshot do not all claim the same host), and enough
//! attempts for a re-plan after a host filled up. Its docs give the numbers and the reasons.
//!
//! `cargo run --release -p placewise-postgres --example fleet` starts a throwaway server (or
//! uses `PLACEWISE_PG_URL`), seeds 10,000 hosts and runs bursts of 10,000 single-instance
//! requests from 1, 2 and 4 scheduler processes, the first runs with those defaults.
//!
//! # How it works
//!
//! Each process keeps a local [`Cluster`](placewise::Cluster): the newest checkpoint plus the
//! log rows after it, loaded at [`connect`](PgStore::connect) in one consistent read. It plans
//! on that snapshot without touching the database. [`snapshot`](PgStore) applies the log rows
//! it has been told of by `LISTEN/NOTIFY` (every write notifies with its sequence number), and
//! looks at the head anyway every [poll interval](PgStore::with_poll_interval), the fallback
//! for a lost notification. Rows are applied strictly in sequence: a gap means rows were
//! compacted away, and the store reloads from the newest checkpoint instead.
//!
//! A write (commit, release, expiry, published events) is one transaction in five round trips:
//! `BEGIN`; lock the one head row (`SELECT … FOR UPDATE`); read, under that lock, the log rows
//! the process has not applied yet and the claim rows of the instances the plan names; judge
//! the plan locally with [`judge_plan`](placewise::shared::judge_plan), the same code
//! `SharedCluster::commit` runs; write the log row, the head, the claims, the generation
//! compare-and-swap and the notification in one statement; `COMMIT`. The head lock orders
//! writers, so log rows become visible in sequence order and a follower never sees a hole
//! that fills later; it is PostgreSQL's counterpart of `SharedCluster`'s single writer and of
//! Nomad's plan applier. Planning, the expensive part, runs in every process in parallel.
//! [`commit_all`](placewise::shared::SharedState::commit_all) commits several plans in one
//! transaction and one log entry, which is how a busy process amortises the synchronous
//! commit (see [Measured](#measured)).
//!
//! The client is the synchronous `postgres` crate: the library is synchronous, a scheduler is
//! CPU-bound between short transactions, one connection per process is all it needs, and a
//! caller is not made to run an async runtime. (`postgres` drives `tokio-postgres` inside, so
//! an async adapter over the same SQL is a small step if a caller needs one.)
//!
//! # Schema
//!
//! [`PgStore::migrate`] creates it (versioned, idempotent: every statement is `IF NOT
//! EXISTS` / `ON CONFLICT DO NOTHING`, and a schema newer than the library is refused).
//!
//! | table | one row per | columns |
//! |---|---|---|
//! | `placewise_schema` | applied migration | `version`, `applied_at` |
//! | `placewise_head` | (exactly one row) | `seq`: the last log sequence number; `next_claim`: the next claim id. Every writer locks it first |
//! | `placewise_hosts` | host | `name` (key), `generation`: the sequence number of the last entry that changed the host in a way claims depend on (see [Generations](#generations)); `inventory` (jsonb): the host's spec as its agent published it, without the instances that claims hold |
//! | `placewise_claims` | placed instance, open or confirmed | `instance` (key: an instance is placed once), `claim_id` (unique), `host`, `token` (the committing process, for idempotent retries), `seq` (the entry that landed it), `expires_at_ms` (database clock, null: never), `confirmed` |
//! | `placewise_log` | transaction | `seq` (key), `entry` (jsonb: a [`LogEntry`](placewise::shared::LogEntry)), `written_at` |
//! | `placewise_checkpoints` | compaction | `seq` (key), `cluster` (text: the JSON of a [`ClusterSpec`](placewise::snapshot::ClusterSpec), parsed only by this library), `written_at` |
//!
//! The log is the truth; `placewise_hosts` and `placewise_claims` are what it replays to, kept
//! in the same transactions, and [`PgStore::audit`] checks exactly that.
//!
//! # Roles
//!
//! The migration creates two `NOLOGIN` roles; grant them to login roles.
//!
//! - `placewise_scheduler` ([`schema::SCHEDULER_ROLE`]): reads every table; writes claims and
//!   log rows; moves the head; may update a host row's `generation` column and nothing else of
//!   it. It cannot add, change or remove inventory: a test shows `publish` of a new host and
//!   hand-written `UPDATE`/`INSERT`/`DELETE` on `placewise_hosts` are refused.
//! - `placewise_agent` ([`schema::AGENT_ROLE`]): writes hosts and log rows, and deletes the
//!   claims of instances and hosts that ended.
//!
//! Every statement is parameterised; host and instance names with quotes, semicolons and
//! dollar signs are data (tested).
//!
//! # Guarantees
//!
//! - **No over-commit.** A claim lands only if the commit rules pass on the state at the head,
//!   under the head lock: host present, generation unchanged with
//!   [`Validation::Generation`](placewise::shared::Validation::Generation) (or, with
//!   [`Validation::Fit`](placewise::shared::Validation::Fit), `place`'s default, a fit
//!   re-check on a changed host), the scheduler's own filters, and no resource below zero
//!   free.
//! - **Compare-and-swap in the database too.** The write also updates each claimed host's row
//!   only `WHERE generation <=` the sequence number the claim was judged at, and fails the
//!   transaction unless every row matched: a write that bypassed the log cannot be built on.
//! - **An instance is placed once.** `placewise_claims.instance` is the key. A plan committed
//!   again (after [`OutcomeUnknown`](placewise::shared::StoreErrorKind::OutcomeUnknown)) finds
//!   its own rows and reports them as committed, with the same claim ids; another process's
//!   plan for the same instance conflicts with
//!   [`ConflictReason::AlreadyPlaced`](placewise::shared::ConflictReason::AlreadyPlaced).
//! - **Acknowledged means durable.** A commit returns only after `COMMIT` returned with
//!   `synchronous_commit` on.
//! - **Followers never apply a gap or a duplicate**, and reload from the newest checkpoint
//!   when compaction removed rows they need.
//! - **Expiry on the database clock.** [`Plan::expires_after`](placewise::shared::Plan::expires_after)`(ms)`
//!   stores `now() + ms` as the database computes it; [`expire_due`](placewise::shared::SharedState::expire_due),
//!   which any process may call, releases what is due by the database's clock, as one log
//!   entry. A scheduler killed between commit and confirm leaks its claims until their expiry,
//!   no longer.
//!
//! # Generations
//!
//! A host's generation is the sequence number of the last entry that stamped it. Every event
//! stamps its host ([`ClusterEvent::bumps_generation`](placewise::snapshot::ClusterEvent::bumps_generation))
//! except a metrics update: metrics move all the time, and a claim planned on older metrics is
//! judged at commit by the scheduler's filters on the current ones anyway, so stamping them
//! would only turn in-flight claims stale. State changes (up, enabled, cordoned), inventory
//! updates, disks, and instances placed or removed do stamp it: each can change whether a claim
//! fits.
//!
//! # Faults
//!
//! Each is a test that ends with [`PgStore::audit`] (no host over capacity, every acknowledged
//! placement present exactly once, the log replays to the tables):
//!
//! | fault | what happens |
//! |---|---|
//! | a scheduler process is killed (`SIGKILL`) mid-burst | its open transaction rolls back; what it committed stays (and expires unless confirmed); the other processes finish |
//! | the server is killed (`SIGKILL`) mid-burst and restarted | every call fails with [`Unavailable`](placewise::shared::StoreErrorKind::Unavailable) or, at `COMMIT`, [`OutcomeUnknown`](placewise::shared::StoreErrorKind::OutcomeUnknown); the schedulers retry the same plans, reconnect once the server is back, and finish; nothing acknowledged is lost (the server recovers it from its write-ahead log) |
//! | a connection is terminated server-side (`pg_terminate_backend`) before `COMMIT` | the commit fails with `OutcomeUnknown`; [`place`](placewise::shared::SharedState::place) commits the same plan again on a new connection and it lands once |
//! | … right after `COMMIT` | the next call finds the connection closed and makes one more attempt on a fresh one, unseen by the caller |
//! | a follower was away while the log was compacted | its next catch-up finds a gap, reloads from the newest checkpoint and goes on ([`PgStore::reloads`]) |
//!
//! A write that fails before its body ran on a connection that died while idle is retried
//! once inside the store; any other failure is returned, and the transaction rolled back.
//!
//! # Partitions
//!
//! A process serves a partition by adding a
//! [`PartitionFilter`](placewise::shared::PartitionFilter) to its scheduler, with the same
//! [`HostKey`](placewise::shared::HostKey)s the in-process [`Router`](placewise::shared::Router)
//! uses. Disjoint partitions never conflict; overlapping ones (two processes serving one pool)
//! stay safe, because every claim is still judged by the commit rules under the head lock.
//!
//! # Measured
//!
//! `cargo run --release -p placewise-postgres --example fleet` on the 2-core development
//! machine, 10,000 hosts, 10,000 single-instance requests, `synchronous_commit` on (the full
//! table, with the batch-size and conflict trade-offs, is in the project README):
//!
//! - the defaults (`RetryPolicy::default()`: fit validation, a pick among the best 4), 8 plans
//!   per transaction: one process 5,176 durable placements/s, two 5,577/s, four 4,425/s, no
//!   conflicts;
//! - four processes each serving its own pool of hosts: 4,316/s, no conflicts;
//! - four processes with generation validation at top-64: 4,120/s with a quarter of the
//!   claims stale (they pick the same best hosts), 2 % at top-1,024;
//! - one transaction per plan: 969/s (a synchronous commit per placement).
//!
//! Loading 100,000 hosts (checkpoint and log) takes 762 ms, 1.11× building the same cluster
//! from JSON in memory (`cargo bench -p placewise-postgres --bench load`).
//!
//! # Other PostgreSQL-compatible databases
//!
//! The SQL keeps to what distributed PostgreSQL-compatible databases also run: plain tables,
//! `jsonb`, `SELECT … FOR UPDATE`, `ON CONFLICT`, multi-argument `unnest`, data-modifying
//! `WITH`, a partial index. Three things are PostgreSQL's own: `LISTEN/NOTIFY` (`pg_notify` in
//! the write statement; elsewhere drop it and rely on polling, the built-in fallback), the
//! role creation (a PL/pgSQL `DO` block, since PostgreSQL has no `CREATE ROLE IF NOT EXISTS`;
//! create the two roles by hand), and `pg_backend_pid()`, used only by the fault-injection
//! hook. One head row serialises writers on any database; on a distributed one that row's
//! range is the hot spot, which [`commit_all`](placewise::shared::SharedState::commit_all)
//! batching and partitions soften.
//!
//! # Tests
//!
//! The integration tests start their own server with [`server::TempServer`] (`initdb` and
//! `postgres` from the installed server, in a temporary directory, on a unix socket; as the
//! `postgres` system user when run as root) and stop it afterwards. Without server binaries
//! they print a loud `SKIPPED` line and pass; `PLACEWISE_REQUIRE_POSTGRES=1` (set by `.ci/run`)
//! makes that a failure.

mod audit;
mod error;
pub mod fleet;
pub mod schema;
pub mod server;
mod store;

pub use audit::Audit;
pub use store::{ClaimRecord, PgStore, Stage};
