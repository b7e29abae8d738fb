//! The schema, its versions and the two database roles.

/// The schema version this library writes and reads.
pub const SCHEMA_VERSION: i32 = 1;

/// The role a scheduler process connects as (through a login role that is a member of it):
/// it reads everything, writes claims and log rows, and may only move a host's generation.
pub const SCHEDULER_ROLE: &str = "placewise_scheduler";

/// The role an inventory writer (a host agent) connects as: it writes hosts and log rows and
/// removes the claims of instances that ended.
pub const AGENT_ROLE: &str = "placewise_agent";

/// The version table, created first so that every migration can record itself.
pub(crate) const VERSION_TABLE: &str = "CREATE TABLE IF NOT EXISTS placewise_schema (
    version integer PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
)";

/// Migration 1: the tables. Every statement is idempotent, so a migration that was cut off
/// half-way runs again cleanly.
pub(crate) const V1: &[&str] = &[
    // One row: the last sequence number and the next claim id. Every writer locks it first,
    // so log rows commit in sequence order and a follower never sees a hole that later fills.
    "CREATE TABLE IF NOT EXISTS placewise_head (
        id smallint PRIMARY KEY CHECK (id = 1),
        seq bigint NOT NULL,
        next_claim bigint NOT NULL
    )",
    "INSERT INTO placewise_head (id, seq, next_claim) VALUES (1, 0, 1) ON CONFLICT (id) DO NOTHING",
    // A host's inventory as its agent last published it (its spec without the instances that
    // claims hold) and its generation: the sequence number of the last log entry that changed
    // it in a way a claim depends on. Commits compare-and-swap on it.
    "CREATE TABLE IF NOT EXISTS placewise_hosts (
        name text PRIMARY KEY,
        generation bigint NOT NULL,
        inventory jsonb NOT NULL
    )",
    // Open and confirmed claims. One row per instance: an instance is placed once.
    "CREATE TABLE IF NOT EXISTS placewise_claims (
        instance text PRIMARY KEY,
        claim_id bigint NOT NULL UNIQUE,
        host text NOT NULL,
        token text NOT NULL,
        seq bigint NOT NULL,
        expires_at_ms bigint,
        confirmed boolean NOT NULL DEFAULT false
    )",
    "CREATE INDEX IF NOT EXISTS placewise_claims_host ON placewise_claims (host)",
    "CREATE INDEX IF NOT EXISTS placewise_claims_due ON placewise_claims (expires_at_ms) WHERE NOT confirmed",
    // The update log: one row per transaction, the events as JSON.
    "CREATE TABLE IF NOT EXISTS placewise_log (
        seq bigint PRIMARY KEY,
        entry jsonb NOT NULL,
        written_at timestamptz NOT NULL DEFAULT now()
    )",
    // Whole states at a sequence number, as the JSON of a cluster spec. Text, not jsonb: the
    // document is large, only this library reads it, and text skips a conversion both ways.
    "CREATE TABLE IF NOT EXISTS placewise_checkpoints (
        seq bigint PRIMARY KEY,
        cluster text NOT NULL,
        written_at timestamptz NOT NULL DEFAULT now()
    )",
];

/// The roles, created when missing. PostgreSQL has no `CREATE ROLE IF NOT EXISTS`, so this is
/// the one statement that needs PL/pgSQL; on a database without it, create the two roles by
/// hand and the grants below still apply.
pub(crate) const ROLES: &str = "DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'placewise_scheduler') THEN
        CREATE ROLE placewise_scheduler NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'placewise_agent') THEN
        CREATE ROLE placewise_agent NOLOGIN;
    END IF;
END
$$";

/// What each role may do. `SELECT … FOR UPDATE` on the head needs an update privilege on it.
pub(crate) const GRANTS: &[&str] = &[
    "GRANT SELECT ON placewise_schema, placewise_head, placewise_hosts, placewise_claims, placewise_log, placewise_checkpoints TO placewise_scheduler, placewise_agent",
    "GRANT UPDATE (seq, next_claim) ON placewise_head TO placewise_scheduler, placewise_agent",
    "GRANT INSERT, DELETE ON placewise_log, placewise_checkpoints TO placewise_scheduler, placewise_agent",
    // The scheduler moves a host's generation and nothing else of it.
    "GRANT UPDATE (generation) ON placewise_hosts TO placewise_scheduler",
    "GRANT INSERT, UPDATE, DELETE ON placewise_claims TO placewise_scheduler",
    // The agent owns the inventory and removes the claims of instances and hosts that ended.
    "GRANT INSERT, UPDATE, DELETE ON placewise_hosts TO placewise_agent",
    "GRANT DELETE ON placewise_claims TO placewise_agent",
];
