//! `PgStore`: the shared state in PostgreSQL, followed by a local snapshot in each process.

use crate::error::{from_pg, from_pg_at_commit};
use crate::schema::{GRANTS, ROLES, SCHEMA_VERSION, V1, VERSION_TABLE};
use placewise::shared::{
    judge_plan, new_lineage, Checkpoint, ClaimId, CommitOutcome, Committed, Conflict, ConflictReason, Counters,
    LogEntry, LogError, Plan, Prior, SharedError, SharedState, Snapshot, Stats, StoreError, StoreErrorKind, Validation,
};
use placewise::snapshot::{Cluster, ClusterEvent, ClusterSpec, HostSpec};
use placewise::Scheduler;
use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, IsolationLevel, NoTls, Statement, Transaction};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The channel commits notify on; the payload is the new sequence number.
const CHANNEL: &str = "placewise_log";

/// The database clock in milliseconds since the Unix epoch, as SQL.
const NOW_MS: &str = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint";

/// Statements prepared once per connection.
struct Statements {
    lock_head: Statement,
    tail: Statement,
    head: Statement,
    read_locked: Statement,
    write_entry: Statement,
    write_plain: Statement,
    confirm: Statement,
    claim_by_id: Statement,
    due: Statement,
    delete_claims: Statement,
}

impl Statements {
    fn prepare(c: &mut Client) -> Result<Statements, postgres::Error> {
        Ok(Statements {
            lock_head: c.prepare("SELECT seq, next_claim FROM placewise_head WHERE id = 1 FOR UPDATE")?,
            tail: c.prepare("SELECT seq, entry::text FROM placewise_log WHERE seq > $1 ORDER BY seq")?,
            head: c.prepare("SELECT seq FROM placewise_head WHERE id = 1")?,
            // Under the head lock, in one round trip: the log rows this process has not applied
            // (kind 0) and the claim rows of the instances a commit names (kind 1).
            read_locked: c.prepare(
                "SELECT 0, seq, entry::text, NULL::text, NULL::text, NULL::bigint
                   FROM placewise_log WHERE seq > $1
                 UNION ALL
                 SELECT 1, seq, instance, host, token, claim_id FROM placewise_claims WHERE instance = ANY($2)
                 ORDER BY 1, 2",
            )?,
            // Everything a write appends, in one round trip: the log row, the head, the new
            // claims, the compare-and-swap on the claimed hosts' generations (counted, so that
            // a host that moved outside the log fails the transaction) and the notification.
            write_entry: c.prepare(&format!(
                "WITH lg AS (INSERT INTO placewise_log (seq, entry) VALUES ($1, $2::text::jsonb)),
                      hd AS (UPDATE placewise_head SET seq = $1, next_claim = $3 WHERE id = 1),
                      cl AS (INSERT INTO placewise_claims (instance, claim_id, host, token, seq, expires_at_ms)
                             SELECT c.instance, c.claim_id, c.host, $4, $1, COALESCE(c.at, {NOW_MS} + c.ttl)
                             FROM unnest($5::text[], $6::bigint[], $7::text[], $8::bigint[], $9::bigint[])
                                  AS c(instance, claim_id, host, at, ttl)),
                      hs AS (UPDATE placewise_hosts AS h SET generation = $1
                             FROM unnest($10::text[], $11::bigint[]) AS b(name, read)
                             WHERE h.name = b.name AND h.generation <= b.read RETURNING 1)
                 SELECT (SELECT count(*) FROM hs), pg_notify('{CHANNEL}', $1::text)"
            ))?,
            write_plain: c.prepare(&format!(
                // The same without claims, for writers that may not add any (agents).
                "WITH lg AS (INSERT INTO placewise_log (seq, entry) VALUES ($1, $2::text::jsonb)),
                      hd AS (UPDATE placewise_head SET seq = $1, next_claim = $3 WHERE id = 1),
                      hs AS (UPDATE placewise_hosts AS h SET generation = $1
                             FROM unnest($4::text[], $5::bigint[]) AS b(name, read)
                             WHERE h.name = b.name AND h.generation <= b.read RETURNING 1)
                 SELECT (SELECT count(*) FROM hs), pg_notify('{CHANNEL}', $1::text)"
            ))?,
            confirm: c.prepare("UPDATE placewise_claims SET confirmed = true WHERE claim_id = $1 AND NOT confirmed")?,
            claim_by_id: c.prepare(
                "SELECT instance, host, claim_id FROM placewise_claims WHERE claim_id = $1 AND NOT confirmed",
            )?,
            due: c.prepare(&format!(
                "SELECT instance, host, claim_id FROM placewise_claims
                 WHERE NOT confirmed AND expires_at_ms <= {NOW_MS} ORDER BY claim_id"
            ))?,
            delete_claims: c.prepare("DELETE FROM placewise_claims WHERE claim_id = ANY($1)")?,
        })
    }
}

/// One open connection with its prepared statements.
struct Conn {
    client: Client,
    st: Statements,
}

/// The state this process follows: the cluster at `seq`, in `lineage`.
struct Local {
    cluster: Arc<Cluster>,
    seq: u64,
    lineage: u64,
}

struct Inner {
    conn: Option<Conn>,
    local: Local,
    last_poll: Instant,
}

/// Where a write transaction stands when a fault-injection hook is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stage {
    /// Everything is written; `COMMIT` is next.
    BeforeCommit,
    /// `COMMIT` returned; the caller has not been told yet.
    AfterCommit,
}

type Hook = Box<dyn Fn(Stage, i32) + Send + Sync>;

/// The shared scheduling state in PostgreSQL; see the [crate docs](crate).
///
/// One `PgStore` is one process's connection to the shared state: it holds one database
/// connection and a local snapshot that it keeps current from the log. It implements
/// [`SharedState`], so [`SharedState::place`] and everything else written for
/// [`SharedCluster`](placewise::shared::SharedCluster) runs on it unchanged. Calls are
/// serialised on its connection; open one store per scheduler thread.
pub struct PgStore {
    url: String,
    token: String,
    poll: Duration,
    inner: Mutex<Inner>,
    counters: Counters,
    reloads: AtomicU64,
    hook: Option<Hook>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore").field("token", &self.token).field("poll", &self.poll).finish_non_exhaustive()
    }
}

/// A claim row read back for a plan's instance.
struct ClaimRow {
    host: String,
    token: String,
    claim_id: i64,
    seq: i64,
}

fn seq_of(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

fn as_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn corrupt(message: impl Into<String>) -> SharedError {
    let message: String = message.into();
    SharedError::Store(StoreError::new(StoreErrorKind::Corrupt, message))
}

/// A token no other process has: process id, time and address of a local, hashed.
fn process_token() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let local = 0u8;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in format!("{}:{nanos}:{:p}", std::process::id(), &local).bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{:x}-{h:016x}", std::process::id())
}

impl PgStore {
    /// Connects to the database at `url` (a libpq-style connection string or URL) and loads
    /// the newest checkpoint and the log after it. The schema must exist
    /// ([`migrate`](PgStore::migrate)). Computes in O(hosts + instances + log tail).
    ///
    /// # Errors
    ///
    /// [`SharedError::Store`] when the database cannot be reached, the schema is missing or
    /// newer than this library, or a row does not parse.
    pub fn connect(url: &str) -> Result<PgStore, SharedError> {
        let store = PgStore {
            url: url.to_owned(),
            token: process_token(),
            poll: Duration::from_millis(500),
            inner: Mutex::new(Inner {
                conn: None,
                local: Local { cluster: Arc::new(empty_cluster()?), seq: 0, lineage: new_lineage() },
                last_poll: Instant::now(),
            }),
            counters: Counters::default(),
            reloads: AtomicU64::new(0),
            hook: None,
        };
        {
            let mut inner = store.lock();
            let inner = &mut *inner;
            let conn = store.conn(&mut inner.conn)?;
            check_version(&mut conn.client)?;
            inner.local = load(&mut conn.client)?;
        }
        Ok(store)
    }

    /// Sets how often [`snapshot`](SharedState::snapshot) looks at the log's head even when
    /// no notification came (default 500 ms): the fallback for notifications lost with a
    /// connection, and the only way on a database without `LISTEN`.
    pub fn with_poll_interval(mut self, every: Duration) -> PgStore {
        self.poll = every;
        self
    }

    /// Installs a hook called inside every write transaction at each [`Stage`], with the
    /// backend's process id: fault-injection tests terminate the connection there.
    pub fn with_hook(mut self, hook: impl Fn(Stage, i32) + Send + Sync + 'static) -> PgStore {
        self.hook = Some(Box::new(hook));
        self
    }

    /// Creates or upgrades the schema and the two roles (see the [crate docs](crate#schema)),
    /// on a connection of its own. Idempotent: running it again, or from several processes at
    /// once, leaves one schema at [`SCHEMA_VERSION`].
    ///
    /// # Errors
    ///
    /// [`SharedError::Store`] when the database refuses (the caller must own the tables and
    /// may create roles), or holds a newer schema than this library knows.
    pub fn migrate(url: &str) -> Result<(), SharedError> {
        let mut client = Client::connect(url, NoTls).map_err(from_pg)?;
        client.batch_execute(VERSION_TABLE).map_err(from_pg)?;
        let current = schema_version(&mut client)?;
        if current > SCHEMA_VERSION {
            return Err(corrupt(format!(
                "the schema is at version {current}, newer than this library's {SCHEMA_VERSION}"
            )));
        }
        if current < 1 {
            let mut tx = client.transaction().map_err(from_pg)?;
            for statement in V1 {
                tx.batch_execute(statement).map_err(from_pg)?;
            }
            tx.execute("INSERT INTO placewise_schema (version) VALUES (1) ON CONFLICT (version) DO NOTHING", &[])
                .map_err(from_pg)?;
            tx.commit().map_err(from_pg)?;
        }
        client.batch_execute(ROLES).map_err(from_pg)?;
        for grant in GRANTS {
            client.batch_execute(grant).map_err(from_pg)?;
        }
        Ok(())
    }

    /// Seeds an empty store with `cluster` as its first checkpoint and host rows (an agent's
    /// job, done once). Returns `false`, changing nothing, when the store already has hosts or
    /// log entries. Computes in O(hosts + instances), in one transaction.
    ///
    /// # Errors
    ///
    /// [`SharedError::Store`].
    pub fn bootstrap(&self, cluster: &Cluster) -> Result<bool, SharedError> {
        let mut inner = self.lock();
        let inner = &mut *inner;
        let conn = self.conn(&mut inner.conn)?;
        let mut tx = conn.client.transaction().map_err(from_pg)?;
        let head = tx.query_one(&conn.st.lock_head, &[]).map_err(from_pg)?;
        let hosts: i64 = tx.query_one("SELECT count(*) FROM placewise_hosts", &[]).map_err(from_pg)?.get(0);
        if head.get::<_, i64>(0) != 0 || hosts != 0 {
            return Ok(false);
        }
        let spec = cluster.to_spec();
        let json = serde_json::to_string(&spec).map_err(|e| corrupt(e.to_string()))?;
        tx.execute(
            "INSERT INTO placewise_checkpoints (seq, cluster) VALUES (0, $1)
             ON CONFLICT (seq) DO UPDATE SET cluster = EXCLUDED.cluster",
            &[&json],
        )
        .map_err(from_pg)?;
        for chunk in spec.hosts.chunks(5_000) {
            let names: Vec<&str> = chunk.iter().map(|h| h.name.as_str()).collect();
            let inventories = chunk.iter().map(serde_json::to_string).collect::<Result<Vec<String>, _>>();
            let inventories = inventories.map_err(|e| corrupt(e.to_string()))?;
            tx.execute(
                "INSERT INTO placewise_hosts (name, generation, inventory)
                 SELECT n, 0, i::jsonb FROM unnest($1::text[], $2::text[]) AS c(n, i)",
                &[&names, &inventories],
            )
            .map_err(from_pg)?;
        }
        tx.commit().map_err(from_pg)?;
        inner.local = Local {
            cluster: Arc::new(Cluster::from_spec(&spec).map_err(|e| corrupt(e.to_string()))?),
            seq: 0,
            lineage: new_lineage(),
        };
        Ok(true)
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Every call leaves the local state whole before it can panic, so a poisoned lock
        // still guards a consistent state.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The open connection, made (with `LISTEN` and the prepared statements) if there is
    /// none or the last one broke.
    fn conn<'a>(&self, slot: &'a mut Option<Conn>) -> Result<&'a mut Conn, SharedError> {
        if slot.as_ref().is_some_and(|c| c.client.is_closed()) {
            *slot = None;
        }
        if slot.is_none() {
            let mut client = Client::connect(&self.url, NoTls).map_err(from_pg)?;
            client.batch_execute(&format!("LISTEN {CHANNEL}")).map_err(from_pg)?;
            let st = Statements::prepare(&mut client).map_err(from_pg)?;
            *slot = Some(Conn { client, st });
        }
        // Just filled.
        slot.as_mut().ok_or_else(|| SharedError::Store(StoreError::new(StoreErrorKind::Unavailable, "no connection")))
    }

    /// The counters since this store was made (`retries` counts re-plans of
    /// [`SharedState::place`]).
    pub fn stats(&self) -> Stats {
        self.counters.stats()
    }

    /// How often this store reloaded from a checkpoint because the log rows it needed were
    /// compacted away.
    pub fn reloads(&self) -> u64 {
        self.reloads.load(Ordering::Relaxed)
    }

    /// The sequence number of the last log entry this process has applied.
    pub fn seq(&self) -> u64 {
        self.lock().local.seq
    }

    /// Reads the log's tail now, without waiting for a notification or the poll interval,
    /// and returns the sequence number reached: after it, this process sees every entry
    /// committed before the call.
    ///
    /// # Errors
    ///
    /// As [`snapshot`](SharedState::snapshot).
    pub fn refresh(&self) -> Result<u64, SharedError> {
        let mut inner = self.lock();
        self.catch_up(&mut inner)?;
        Ok(inner.local.seq)
    }

    /// Waits up to `timeout` for a notification of a new log entry, then brings the local
    /// state up to date; returns the sequence number reached. A follower that only watches
    /// calls this in a loop.
    ///
    /// # Errors
    ///
    /// As [`snapshot`](SharedState::snapshot).
    pub fn wait_for_change(&self, timeout: Duration) -> Result<u64, SharedError> {
        let mut inner = self.lock();
        let inner = &mut *inner;
        let seq = inner.local.seq;
        let newer = {
            let conn = self.conn(&mut inner.conn)?;
            let mut notifications = conn.client.notifications();
            let mut waiting = notifications.timeout_iter(timeout);
            waiting.any(|n| Ok(n.payload().parse::<u64>().map_or(true, |s| s > seq))).map_err(from_pg)?
        };
        if newer || inner.last_poll.elapsed() >= self.poll {
            self.catch_up(inner)?;
        }
        Ok(inner.local.seq)
    }

    /// Applies the log rows after the local sequence number, reloading from the newest
    /// checkpoint when rows it needs were compacted away. Never applies a gap or a duplicate.
    fn catch_up(&self, inner: &mut Inner) -> Result<(), SharedError> {
        let conn = self.conn(&mut inner.conn)?;
        inner.last_poll = Instant::now();
        let rows = conn.client.query(&conn.st.tail, &[&as_i64(inner.local.seq)]).map_err(from_pg)?;
        let head = if rows.is_empty() {
            seq_of(conn.client.query_one(&conn.st.head, &[]).map_err(from_pg)?.get(0))
        } else {
            0
        };
        match apply_rows(&mut inner.local, &rows, 0) {
            Ok(()) if head <= inner.local.seq => Ok(()),
            Ok(()) | Err(SharedError::Log(LogError::Gap { .. })) => {
                // The rows after our sequence number are gone: compacted into a checkpoint.
                inner.local = load(&mut conn.client)?;
                self.reloads.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Drains pending notifications; catches up when one names a newer entry or the poll
    /// interval passed.
    fn follow(&self, inner: &mut Inner) -> Result<(), SharedError> {
        let seq = inner.local.seq;
        let mut newer = false;
        {
            let conn = self.conn(&mut inner.conn)?;
            let mut pending = conn.client.notifications();
            let mut it = pending.iter();
            while let Some(n) = it.next().map_err(from_pg)? {
                newer |= n.payload().parse::<u64>().map_or(true, |s| s > seq);
            }
        }
        if newer || inner.last_poll.elapsed() >= self.poll {
            self.catch_up(inner)?;
        }
        Ok(())
    }

    /// Runs one write transaction: locks the head, catches up to it and reads the claim rows
    /// of `lookup` (one round trip), lets `body` judge and write its own rows, then appends
    /// the log entry `body` returns (if any) with its claims and generation bumps in one
    /// statement, and commits. The local state becomes `body`'s next state only after the
    /// commit succeeded.
    fn write<R>(
        &self,
        lookup: &[&str],
        body: impl FnOnce(&mut Transaction<'_>, &Ctx<'_>) -> Result<Written<R>, SharedError>,
    ) -> Result<R, SharedError> {
        let mut guard = self.lock();
        let inner = &mut *guard;
        let mut body = Some(body);
        let mut result = Err(corrupt("no attempt"));
        // A connection that died while idle (a restarted server, a terminated backend) costs
        // one more attempt on a fresh one: `Unavailable` before the body ran means nothing was
        // written.
        for _ in 0..2 {
            let Some(b) = body.take() else { break };
            let mut once = Some(b);
            result = self.write_locked(inner, lookup, |tx, ctx| match once.take() {
                Some(b) => b(tx, ctx),
                None => Err(corrupt("body ran twice")),
            });
            match &result {
                Err(SharedError::Store(e)) if e.kind == StoreErrorKind::Unavailable && once.is_some() => {
                    inner.conn = None;
                    body = once;
                }
                Err(SharedError::Store(_)) => {
                    inner.conn = None;
                    break;
                }
                _ => break,
            }
        }
        result
    }

    fn write_locked<R>(
        &self,
        inner: &mut Inner,
        lookup: &[&str],
        body: impl FnOnce(&mut Transaction<'_>, &Ctx<'_>) -> Result<Written<R>, SharedError>,
    ) -> Result<R, SharedError> {
        self.conn(&mut inner.conn)?;
        let Some(conn) = inner.conn.as_mut() else { return Err(corrupt("no connection")) };
        let mut tx = conn.client.transaction().map_err(from_pg)?;
        let row = tx.query_one(&conn.st.lock_head, &[]).map_err(from_pg)?;
        let head = Head { seq: seq_of(row.get(0)), next_claim: seq_of(row.get(1)) };
        // Under the head lock every committed entry is visible and none can appear.
        let rows = tx.query(&conn.st.read_locked, &[&as_i64(inner.local.seq), &lookup]).map_err(from_pg)?;
        let split = rows.iter().position(|r| r.get::<_, i32>(0) == 1).unwrap_or(rows.len());
        let (tail, claims) = rows.split_at(split);
        if head.seq != inner.local.seq {
            let caught = apply_rows(&mut inner.local, tail, 1);
            if caught.is_err() || inner.local.seq != head.seq {
                drop(tx);
                inner.local = load(&mut conn.client)?;
                self.reloads.fetch_add(1, Ordering::Relaxed);
                return Err(SharedError::ForeignPlan);
            }
        }
        inner.last_poll = Instant::now();
        let known: HashMap<String, ClaimRow> = claims
            .iter()
            .map(|r| {
                let row = ClaimRow { seq: r.get(1), host: r.get(3), token: r.get(4), claim_id: r.get(5) };
                (r.get::<_, String>(2), row)
            })
            .collect();
        let ctx = Ctx { st: &conn.st, local: &inner.local, head, known: &known };
        let written = body(&mut tx, &ctx)?;
        let Some(entry) = written.entry else {
            tx.commit().map_err(from_pg)?;
            return Ok(written.result);
        };
        let json = serde_json::to_string(&entry.entry).map_err(|e| corrupt(e.to_string()))?;
        let seq = as_i64(entry.entry.seq);
        let c = &entry.claims;
        let (bump_names, bump_reads) = distinct_bumps(&entry.bumps);
        let params: [&(dyn postgres::types::ToSql + Sync); 11] = [
            &seq,
            &json,
            &as_i64(entry.next_claim),
            &self.token,
            &c.instance,
            &c.id,
            &c.host,
            &c.at,
            &c.ttl,
            &bump_names,
            &bump_reads,
        ];
        let row = if c.instance.is_empty() {
            let plain: [&(dyn postgres::types::ToSql + Sync); 5] =
                [&seq, &json, &as_i64(entry.next_claim), &bump_names, &bump_reads];
            tx.query_one(&conn.st.write_plain, &plain)
        } else {
            tx.query_one(&conn.st.write_entry, &params)
        };
        let row = row.map_err(from_pg)?;
        let bumped: i64 = row.get(0);
        if bumped != bump_names.len() as i64 {
            return Err(corrupt(format!(
                "{} of {} host rows failed the generation check: a write bypassed the log",
                bump_names.len() as i64 - bumped,
                bump_names.len()
            )));
        }
        let mut pid = 0;
        if let Some(hook) = &self.hook {
            pid = tx.query_one("SELECT pg_backend_pid()", &[]).map_err(from_pg)?.get::<_, i32>(0);
            hook(Stage::BeforeCommit, pid);
        }
        tx.commit().map_err(from_pg_at_commit)?;
        if let Some(hook) = &self.hook {
            hook(Stage::AfterCommit, pid);
        }
        self.counters.count_entry();
        inner.local.cluster = Arc::new(entry.next);
        inner.local.seq = entry.entry.seq;
        Ok(written.result)
    }

    /// Removes the instances of `claims` (rows of instance, host, claim id) that are still
    /// there, as one entry, and deletes the claim rows.
    fn remove_claims(
        &self,
        tx: &mut Transaction<'_>,
        st: &Statements,
        ctx: &Ctx<'_>,
        claims: &[(String, String, i64)],
    ) -> Result<Option<NewEntry>, SharedError> {
        let ids: Vec<i64> = claims.iter().map(|c| c.2).collect();
        tx.execute(&st.delete_claims, &[&ids]).map_err(from_pg)?;
        self.counters.count_released(claims.len() as u64);
        let mut working = (*ctx.local.cluster).clone();
        let mut events = Vec::new();
        for (instance, host, _) in claims {
            let event = ClusterEvent::InstanceRemoved { host: host.clone(), instance: instance.clone() };
            // A claim whose host or instance an event removed already has nothing to release.
            if let Ok(next) = working.apply(&event) {
                working = next;
                events.push(event);
            }
        }
        if events.is_empty() {
            return Ok(None);
        }
        let bumps = events.iter().map(|e| (e.host_name().to_owned(), ctx.head.seq)).collect();
        let entry = LogEntry::new(ctx.head.seq + 1, events);
        Ok(Some(NewEntry {
            entry,
            next: working,
            next_claim: ctx.head.next_claim,
            bumps,
            claims: NewClaims::default(),
        }))
    }

    /// Writes a checkpoint of the current state and deletes the log rows more than `keep`
    /// entries before it, and the older checkpoints. Followers that still needed the deleted
    /// rows reload from the checkpoint on their next call. Returns the checkpoint's sequence
    /// number. Computes in O(hosts + instances).
    ///
    /// # Errors
    ///
    /// [`SharedError::Store`].
    pub fn compact(&self, keep: u64) -> Result<u64, SharedError> {
        let mut inner = self.lock();
        let inner = &mut *inner;
        self.catch_up(inner)?;
        let seq = inner.local.seq;
        let json = serde_json::to_string(&inner.local.cluster.to_spec()).map_err(|e| corrupt(e.to_string()))?;
        let conn = self.conn(&mut inner.conn)?;
        let mut tx = conn.client.transaction().map_err(from_pg)?;
        tx.execute(
            "INSERT INTO placewise_checkpoints (seq, cluster) VALUES ($1, $2) ON CONFLICT (seq) DO NOTHING",
            &[&as_i64(seq), &json],
        )
        .map_err(from_pg)?;
        tx.execute("DELETE FROM placewise_log WHERE seq <= $1", &[&as_i64(seq.saturating_sub(keep))])
            .map_err(from_pg)?;
        tx.execute("DELETE FROM placewise_checkpoints WHERE seq < $1", &[&as_i64(seq)]).map_err(from_pg)?;
        tx.commit().map_err(from_pg)?;
        Ok(seq)
    }

    /// The claims in the store, open and confirmed, by claim id.
    ///
    /// # Errors
    ///
    /// [`SharedError::Store`].
    pub fn claims(&self) -> Result<Vec<ClaimRecord>, SharedError> {
        let mut inner = self.lock();
        let conn = self.conn(&mut inner.conn)?;
        let rows = conn
            .client
            .query(
                "SELECT claim_id, instance, host, seq, expires_at_ms, confirmed FROM placewise_claims ORDER BY claim_id",
                &[],
            )
            .map_err(from_pg)?;
        Ok(rows
            .iter()
            .map(|r| ClaimRecord {
                id: ClaimId(seq_of(r.get(0))),
                instance: r.get(1),
                host: r.get(2),
                seq: seq_of(r.get(3)),
                expires_at_ms: r.get::<_, Option<i64>>(4).map(seq_of),
                confirmed: r.get(5),
            })
            .collect())
    }
}

/// A claim as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClaimRecord {
    /// Its id.
    pub id: ClaimId,
    /// The instance.
    pub instance: String,
    /// The host's name.
    pub host: String,
    /// The log entry that landed it.
    pub seq: u64,
    /// When it expires, in milliseconds since the Unix epoch on the database's clock.
    pub expires_at_ms: Option<u64>,
    /// Whether it was confirmed.
    pub confirmed: bool,
}

/// The head row as a writer locked it.
#[derive(Debug, Clone, Copy)]
struct Head {
    seq: u64,
    next_claim: u64,
}

/// What a write transaction's body sees: the caught-up local state, the locked head and the
/// claim rows of the instances it asked for.
struct Ctx<'a> {
    st: &'a Statements,
    local: &'a Local,
    head: Head,
    known: &'a HashMap<String, ClaimRow>,
}

/// Claim rows to insert, column by column.
#[derive(Default)]
struct NewClaims {
    instance: Vec<String>,
    id: Vec<i64>,
    host: Vec<String>,
    at: Vec<Option<i64>>,
    ttl: Vec<Option<i64>>,
}

/// A log entry a write transaction appends, with the state after it, the claims it adds and
/// the hosts whose generation it moves (each with the sequence number its writer read it at).
struct NewEntry {
    entry: LogEntry,
    next: Cluster,
    next_claim: u64,
    bumps: Vec<(String, u64)>,
    claims: NewClaims,
}

/// The distinct hosts of `bumps`, each with the lowest sequence number it was read at.
fn distinct_bumps(bumps: &[(String, u64)]) -> (Vec<&str>, Vec<i64>) {
    let mut reads: BTreeMap<&str, u64> = BTreeMap::new();
    for (name, read) in bumps {
        let r = reads.entry(name).or_insert(*read);
        *r = (*r).min(*read);
    }
    (reads.keys().copied().collect(), reads.values().map(|&r| as_i64(r)).collect())
}

/// What a write transaction's body did.
struct Written<R> {
    result: R,
    entry: Option<NewEntry>,
}

fn empty_cluster() -> Result<Cluster, SharedError> {
    Cluster::from_spec(&ClusterSpec::default()).map_err(|e| corrupt(e.to_string()))
}

fn check_version(client: &mut Client) -> Result<(), SharedError> {
    let version = schema_version(client)?;
    if version != SCHEMA_VERSION {
        return Err(corrupt(format!(
            "the schema is at version {version}, this library needs {SCHEMA_VERSION}: run PgStore::migrate"
        )));
    }
    Ok(())
}

fn schema_version(client: &mut Client) -> Result<i32, SharedError> {
    let exists: bool =
        client.query_one("SELECT to_regclass('placewise_schema') IS NOT NULL", &[]).map_err(from_pg)?.get(0);
    if !exists {
        return Ok(0);
    }
    let row = client.query_one("SELECT COALESCE(max(version), 0) FROM placewise_schema", &[]).map_err(from_pg)?;
    Ok(row.get(0))
}

/// Applies log rows (`seq`, entry JSON, from column `col` on) after `local.seq`, in order,
/// each whole.
fn apply_rows(local: &mut Local, rows: &[postgres::Row], col: usize) -> Result<(), SharedError> {
    for row in rows {
        let seq = seq_of(row.get(col));
        let text: &str = row.get(col + 1);
        let entry: LogEntry =
            serde_json::from_str(text).map_err(|e| corrupt(format!("log entry {seq} does not parse: {e}")))?;
        if entry.seq != seq {
            return Err(corrupt(format!("log row {seq} holds entry {}", entry.seq)));
        }
        if seq != local.seq + 1 {
            let e = if seq <= local.seq {
                LogError::Duplicate { seq, applied: local.seq }
            } else {
                LogError::Gap { expected: local.seq + 1, got: seq }
            };
            return Err(SharedError::Log(e));
        }
        let mut next = (*local.cluster).clone();
        for event in &entry.events {
            next = next.apply(event).map_err(|source| SharedError::Log(LogError::Event { seq, source }))?;
        }
        local.cluster = Arc::new(next);
        local.seq = seq;
    }
    Ok(())
}

/// A read-only transaction that sees one consistent state of every table.
pub(crate) fn consistent_read(client: &mut Client) -> Result<Transaction<'_>, SharedError> {
    client.build_transaction().isolation_level(IsolationLevel::RepeatableRead).read_only(true).start().map_err(from_pg)
}

/// The newest checkpoint's sequence number and spec (sequence 0 and an empty cluster when
/// there is none).
pub(crate) fn newest_checkpoint(tx: &mut Transaction<'_>) -> Result<(u64, ClusterSpec), SharedError> {
    let row = tx
        .query_opt("SELECT seq, cluster FROM placewise_checkpoints ORDER BY seq DESC LIMIT 1", &[])
        .map_err(from_pg)?;
    let Some(row) = row else { return Ok((0, ClusterSpec::default())) };
    let seq = seq_of(row.get(0));
    let text: &str = row.get(1);
    let spec = serde_json::from_str(text).map_err(|e| corrupt(format!("checkpoint {seq} does not parse: {e}")))?;
    Ok((seq, spec))
}

/// Loads the newest checkpoint and the log after it, in one consistent read.
fn load(client: &mut Client) -> Result<Local, SharedError> {
    let mut tx = consistent_read(client)?;
    let (seq, spec) = newest_checkpoint(&mut tx)?;
    let cluster = Cluster::from_spec(&spec).map_err(|source| SharedError::Log(LogError::Snapshot { seq, source }))?;
    let mut local = Local { cluster: Arc::new(cluster), seq, lineage: new_lineage() };
    let rows = tx.query("SELECT seq, entry::text FROM placewise_log WHERE seq > $1 ORDER BY seq", &[&as_i64(seq)]);
    apply_rows(&mut local, &rows.map_err(from_pg)?, 0)?;
    let head: i64 = tx.query_one("SELECT seq FROM placewise_head WHERE id = 1", &[]).map_err(from_pg)?.get(0);
    if seq_of(head) != local.seq {
        return Err(corrupt(format!("the log ends at {} but the head is at {head}", local.seq)));
    }
    tx.commit().map_err(from_pg)?;
    Ok(local)
}

impl SharedState for PgStore {
    fn snapshot(&self) -> Result<Snapshot, SharedError> {
        let mut inner = self.lock();
        if let Err(SharedError::Store(e)) = self.follow(&mut inner) {
            if e.kind != StoreErrorKind::Unavailable {
                return Err(SharedError::Store(e));
            }
            // Reads are idempotent: once more on a fresh connection.
            inner.conn = None;
            self.follow(&mut inner)?;
        }
        let l = &inner.local;
        Ok(Snapshot::new(l.cluster.clone(), l.seq, l.lineage))
    }

    fn commit(&self, scheduler: &Scheduler, plan: &Plan) -> Result<CommitOutcome, SharedError> {
        let mut out = self.commit_all(scheduler, std::slice::from_ref(plan))?;
        out.pop().ok_or_else(|| corrupt("no outcome"))
    }

    fn commit_all(&self, scheduler: &Scheduler, plans: &[Plan]) -> Result<Vec<CommitOutcome>, SharedError> {
        let token = &self.token;
        let counters = &self.counters;
        let instances: Vec<&str> = plans.iter().flat_map(Plan::instance_ids).collect();
        self.write(&instances, |_, ctx| {
            let (local, head, known) = (ctx.local, ctx.head, ctx.known);
            if plans.iter().any(|p| p.lineage() != local.lineage) {
                return Err(SharedError::ForeignPlan);
            }
            let seq = head.seq + 1;
            let mut next_claim = head.next_claim;
            let mut current = (*local.cluster).clone();
            let mut events = Vec::new();
            let mut outcomes = Vec::with_capacity(plans.len());
            let mut taken: HashSet<String> = HashSet::new();
            let mut bumps: Vec<(String, u64)> = Vec::new();
            let mut claims = NewClaims::default();
            for plan in plans {
                let prior = |_: usize, claim: &placewise::shared::Claim| {
                    let id = &claim.instance.id;
                    if let Some(row) = known.get(id) {
                        return Some(if row.token == *token && row.host == claim.host_name {
                            Prior::Landed
                        } else {
                            Prior::Conflict(ConflictReason::AlreadyPlaced { host: row.host.clone() })
                        });
                    }
                    taken.contains(id).then(|| {
                        Prior::Conflict(ConflictReason::AlreadyPlaced { host: "another plan of this commit".into() })
                    })
                };
                let v = judge_plan(&current, scheduler, plan, &prior)?;
                let mut committed = Vec::with_capacity(v.landed.len() + v.already.len());
                let mut entry_seq = None;
                for &i in &v.already {
                    let claim = &plan.claims()[i];
                    let Some(row) = known.get(&claim.instance.id) else { continue };
                    entry_seq = Some(seq_of(row.seq));
                    committed.push(Committed::new(
                        ClaimId(seq_of(row.claim_id)),
                        i,
                        claim.host,
                        claim.host_name.clone(),
                        claim.instance.id.clone(),
                    ));
                }
                let read = match plan.validation_rule() {
                    Validation::Generation => plan.seq(),
                    _ => head.seq,
                };
                for (i, event) in v.landed {
                    let claim = &plan.claims()[i];
                    let id = ClaimId(next_claim);
                    next_claim += 1;
                    entry_seq = Some(seq);
                    taken.insert(claim.instance.id.clone());
                    bumps.push((claim.host_name.clone(), read));
                    claims.instance.push(claim.instance.id.clone());
                    claims.id.push(as_i64(id.0));
                    claims.host.push(claim.host_name.clone());
                    claims.at.push(plan.expiry().map(as_i64));
                    claims.ttl.push(plan.ttl().map(as_i64));
                    committed.push(Committed::new(
                        id,
                        i,
                        claim.host,
                        claim.host_name.clone(),
                        claim.instance.id.clone(),
                    ));
                    events.push(event);
                }
                committed.sort_by_key(|c| c.claim);
                counters.count_commit(committed.len() as u64, v.conflicts.len() as u64, v.stale_reads.into());
                current = v.next;
                outcomes.push(outcome(entry_seq, committed, v.conflicts, v.stale_reads));
            }
            if events.is_empty() {
                return Ok(Written { result: outcomes, entry: None });
            }
            let entry = NewEntry { entry: LogEntry::new(seq, events), next: current, next_claim, bumps, claims };
            Ok(Written { result: outcomes, entry: Some(entry) })
        })
    }

    fn confirm(&self, id: ClaimId) -> Result<(), SharedError> {
        let mut inner = self.lock();
        let conn = self.conn(&mut inner.conn)?;
        let n = conn.client.execute(&conn.st.confirm, &[&as_i64(id.0)]).map_err(from_pg)?;
        if n == 0 {
            return Err(SharedError::UnknownClaim(id));
        }
        Ok(())
    }

    fn release(&self, id: ClaimId) -> Result<Option<u64>, SharedError> {
        self.write(&[], |tx, ctx| {
            let st = ctx.st;
            let row = tx.query_opt(&st.claim_by_id, &[&as_i64(id.0)]).map_err(from_pg)?;
            let row = row.ok_or(SharedError::UnknownClaim(id))?;
            let claims = [(row.get::<_, String>(0), row.get::<_, String>(1), row.get::<_, i64>(2))];
            let entry = self.remove_claims(tx, st, ctx, &claims)?;
            Ok(Written { result: entry.as_ref().map(|e| e.entry.seq), entry })
        })
    }

    fn expire_due(&self) -> Result<Vec<ClaimId>, SharedError> {
        self.write(&[], |tx, ctx| {
            let st = ctx.st;
            let rows = tx.query(&st.due, &[]).map_err(from_pg)?;
            let claims: Vec<(String, String, i64)> = rows.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect();
            let ids = claims.iter().map(|c| ClaimId(seq_of(c.2))).collect();
            if claims.is_empty() {
                return Ok(Written { result: ids, entry: None });
            }
            let entry = self.remove_claims(tx, st, ctx, &claims)?;
            Ok(Written { result: ids, entry })
        })
    }

    fn publish_all(&self, events: Vec<ClusterEvent>) -> Result<u64, SharedError> {
        self.write(&[], |tx, ctx| {
            let (local, head) = (ctx.local, ctx.head);
            let mut next = (*local.cluster).clone();
            for e in &events {
                next = next.apply(e).map_err(SharedError::Event)?;
            }
            let seq = head.seq + 1;
            let touched: BTreeSet<&str> = events.iter().map(ClusterEvent::host_name).collect();
            let bumped: BTreeSet<&str> =
                events.iter().filter(|e| e.bumps_generation()).map(ClusterEvent::host_name).collect();
            let gone: Vec<&str> = touched.iter().copied().filter(|h| next.host_id(h).is_none()).collect();
            let ended: Vec<&str> = events
                .iter()
                .filter_map(|e| match e {
                    ClusterEvent::InstanceRemoved { instance, .. } => Some(instance.as_str()),
                    _ => None,
                })
                .collect();
            tx.execute("DELETE FROM placewise_claims WHERE host = ANY($1) OR instance = ANY($2)", &[&gone, &ended])
                .map_err(from_pg)?;
            tx.execute("DELETE FROM placewise_hosts WHERE name = ANY($1)", &[&gone]).map_err(from_pg)?;
            let present: Vec<&str> = touched.iter().copied().filter(|h| next.host_id(h).is_some()).collect();
            let claimed =
                tx.query("SELECT instance FROM placewise_claims WHERE host = ANY($1)", &[&present]).map_err(from_pg)?;
            let claimed: HashSet<String> = claimed.iter().map(|r| r.get(0)).collect();
            let mut names = Vec::new();
            let mut generations: Vec<Option<i64>> = Vec::new();
            let mut inventories = Vec::new();
            for h in &present {
                let Some(spec) = next.host_id(h).and_then(|id| next.host_to_spec(id)) else { continue };
                let inventory =
                    serde_json::to_string(&inventory_of(spec, &claimed)).map_err(|e| corrupt(e.to_string()))?;
                names.push(*h);
                generations.push(bumped.contains(h).then_some(as_i64(seq)));
                inventories.push(inventory);
            }
            tx.execute(
                "INSERT INTO placewise_hosts (name, generation, inventory)
                 SELECT n, COALESCE(g, 0), i::jsonb FROM unnest($1::text[], $2::bigint[], $3::text[]) AS c(n, g, i)
                 ON CONFLICT (name) DO UPDATE SET inventory = EXCLUDED.inventory,
                     generation = CASE WHEN EXCLUDED.generation > 0 THEN EXCLUDED.generation
                                       ELSE placewise_hosts.generation END",
                &[&names, &generations, &inventories],
            )
            .map_err(from_pg)?;
            let entry = NewEntry {
                entry: LogEntry::new(seq, events.clone()),
                next,
                next_claim: head.next_claim,
                bumps: Vec::new(),
                claims: NewClaims::default(),
            };
            Ok(Written { result: seq, entry: Some(entry) })
        })
    }

    fn log_since(&self, seq: u64) -> Result<Vec<LogEntry>, SharedError> {
        let mut inner = self.lock();
        let conn = self.conn(&mut inner.conn)?;
        let mut tx = consistent_read(&mut conn.client)?;
        let head = seq_of(tx.query_one("SELECT seq FROM placewise_head WHERE id = 1", &[]).map_err(from_pg)?.get(0));
        if seq > head {
            return Err(SharedError::Log(LogError::Ahead { seq, head }));
        }
        let rows = tx
            .query("SELECT seq, entry::text FROM placewise_log WHERE seq > $1 ORDER BY seq", &[&as_i64(seq)])
            .map_err(from_pg)?;
        tx.commit().map_err(from_pg)?;
        let first = rows.first().map_or(head + 1, |r| seq_of(r.get(0)));
        if first != seq + 1 && seq < head {
            return Err(SharedError::Log(LogError::Compacted { seq, base: first.saturating_sub(1) }));
        }
        rows.iter()
            .map(|r| {
                let text: &str = r.get(1);
                serde_json::from_str(text).map_err(|e| corrupt(format!("log entry does not parse: {e}")))
            })
            .collect()
    }

    fn checkpoint(&self) -> Result<Checkpoint, SharedError> {
        let mut inner = self.lock();
        let conn = self.conn(&mut inner.conn)?;
        let mut tx = consistent_read(&mut conn.client)?;
        let (seq, spec) = newest_checkpoint(&mut tx)?;
        Ok(Checkpoint::new(seq, spec))
    }

    fn note_retries(&self, n: u64) {
        self.counters.count_retries(n);
    }
}

/// A host's spec without the instances that claims hold: what its agent owns.
pub(crate) fn inventory_of(mut spec: HostSpec, claimed: &HashSet<String>) -> HostSpec {
    spec.instances.retain(|i| !claimed.contains(&i.id));
    spec
}

fn outcome(seq: Option<u64>, committed: Vec<Committed>, conflicts: Vec<Conflict>, stale_reads: u32) -> CommitOutcome {
    CommitOutcome::new(seq, committed, conflicts, stale_reads)
}
