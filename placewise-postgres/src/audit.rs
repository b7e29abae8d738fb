//! The audit: read the whole database and check what the store promises.

use crate::error::from_pg;
use crate::store::{consistent_read, inventory_of, newest_checkpoint, PgStore};
use placewise::shared::{LogEntry, SharedError, StoreError, StoreErrorKind};
use placewise::snapshot::{Cluster, HostSpec};
use postgres::{Client, NoTls};
use std::collections::{BTreeMap, HashMap, HashSet};

/// What [`PgStore::audit`] found. A clean audit has no problems.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Audit {
    /// The log's head.
    pub head: u64,
    /// Hosts in the replayed state.
    pub hosts: usize,
    /// Instances on them.
    pub instances: usize,
    /// Claim rows.
    pub claims: usize,
    /// Everything that does not hold, one sentence each.
    pub problems: Vec<String>,
}

impl Audit {
    /// Whether every check held.
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }
}

fn corrupt(message: String) -> SharedError {
    SharedError::Store(StoreError::new(StoreErrorKind::Corrupt, message))
}

impl PgStore {
    /// Audits the database at `url` in one consistent read: the newest checkpoint and the log
    /// after it replay without a gap; no host has any resource over its capacity; the host
    /// rows are the replayed hosts, each with the inventory and generation the log gives it;
    /// every claim row's instance is on its host and on no other; and every acknowledged
    /// placement (instance, host) is there exactly once: one claim row, on that host, nowhere
    /// else. Computes in O(hosts + instances + log).
    ///
    /// # Errors
    ///
    /// [`SharedError::Store`] when the database cannot be read; what does not hold is in the
    /// returned [`Audit`], not an error.
    pub fn audit(url: &str, acknowledged: &[(String, String)]) -> Result<Audit, SharedError> {
        let mut client = Client::connect(url, NoTls).map_err(from_pg)?;
        audit_with(&mut client, acknowledged)
    }
}

fn audit_with(client: &mut Client, acknowledged: &[(String, String)]) -> Result<Audit, SharedError> {
    let mut tx = consistent_read(client)?;
    let mut problems = Vec::new();
    let (base, spec) = newest_checkpoint(&mut tx)?;
    let mut cluster = Cluster::from_spec(&spec).map_err(|e| corrupt(format!("checkpoint: {e}")))?;
    // The generation each host must have: the last entry that stamped it, or at most the base.
    let mut stamped: HashMap<String, u64> = HashMap::new();
    let rows = tx
        .query("SELECT seq, entry::text FROM placewise_log WHERE seq > $1 ORDER BY seq", &[&(base as i64)])
        .map_err(from_pg)?;
    let mut seq = base;
    for r in &rows {
        let text: &str = r.get(1);
        let entry: LogEntry = serde_json::from_str(text).map_err(|e| corrupt(format!("log: {e}")))?;
        if entry.seq != seq + 1 {
            problems.push(format!("the log jumps from {seq} to {}", entry.seq));
        }
        for event in &entry.events {
            match cluster.apply(event) {
                Ok(next) => cluster = next,
                Err(e) => problems.push(format!("entry {} does not replay: {e}", entry.seq)),
            }
            if event.bumps_generation() {
                stamped.insert(event.host_name().to_owned(), entry.seq);
            }
        }
        seq = entry.seq;
    }
    let head = u64::try_from(
        tx.query_one("SELECT seq FROM placewise_head WHERE id = 1", &[]).map_err(from_pg)?.get::<_, i64>(0),
    )
    .unwrap_or(0);
    if head != seq {
        problems.push(format!("the head is {head} but the log ends at {seq}"));
    }
    // No over-commit.
    let mut instances = 0;
    let mut on_hosts: HashMap<&str, Vec<&str>> = HashMap::new();
    for (_, host) in cluster.hosts() {
        instances += host.instances.len();
        for i in &host.instances {
            on_hosts.entry(&*i.id).or_default().push(&*host.name);
        }
        for (r, name) in cluster.resource_kinds().iter() {
            let res = host.resource(r);
            if res.free() < -1e-9 * res.limit().abs().max(1.0) {
                problems.push(format!("host {} is over-committed on {name}: {} free", host.name, res.free()));
            }
        }
    }
    // Claims.
    let claim_rows = tx.query("SELECT instance, host FROM placewise_claims", &[]).map_err(from_pg)?;
    let claims: HashMap<String, String> = claim_rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    for (instance, host) in &claims {
        match on_hosts.get(instance.as_str()).map(Vec::as_slice) {
            Some([h]) if h == host => {}
            other => problems.push(format!("claim {instance} on {host}, but the log puts it on {other:?}")),
        }
    }
    for (instance, host) in acknowledged {
        let rows = claims.get(instance).filter(|h| *h == host).is_some();
        match on_hosts.get(instance.as_str()).map(Vec::as_slice) {
            Some([h]) if h == host && rows => {}
            other => problems.push(format!(
                "acknowledged placement {instance} on {host}: claim row {}, in the log on {other:?}",
                if rows { "present" } else { "missing" }
            )),
        }
    }
    // Host rows against the replayed hosts.
    let host_rows = tx.query("SELECT name, generation, inventory::text FROM placewise_hosts", &[]).map_err(from_pg)?;
    let mut seen = 0;
    let claimed: HashSet<String> = claims.keys().cloned().collect();
    let mut table: BTreeMap<String, (i64, String)> = BTreeMap::new();
    for r in &host_rows {
        table.insert(r.get(0), (r.get(1), r.get(2)));
    }
    for (id, host) in cluster.hosts() {
        let Some((generation, inventory)) = table.get(&*host.name) else {
            problems.push(format!("host {} has no row", host.name));
            continue;
        };
        seen += 1;
        let want = match stamped.get(&*host.name) {
            Some(&s) => u64::try_from(*generation).ok() == Some(s),
            None => u64::try_from(*generation).is_ok_and(|g| g <= base),
        };
        if !want {
            problems.push(format!(
                "host {} has generation {generation}, the log says {:?}",
                host.name,
                stamped.get(&*host.name)
            ));
        }
        let replayed = cluster.host_to_spec(id).map(|s| inventory_of(s, &claimed));
        let stored: Option<HostSpec> = serde_json::from_str(inventory).ok();
        if replayed.map(|s| serde_json::to_value(s).ok()) != stored.map(|s| serde_json::to_value(s).ok()) {
            problems.push(format!("host {}'s inventory row differs from the log", host.name));
        }
    }
    if seen != table.len() {
        problems.push(format!("{} host rows for {seen} hosts", table.len()));
    }
    tx.commit().map_err(from_pg)?;
    Ok(Audit { head, hosts: cluster.len(), instances, claims: claims.len(), problems })
}
