//! placewise's fuzz entry points, shared by the cargo-fuzz targets under `fuzz/` and the
//! corpus replay test (`tests/corpus.rs`). A workspace crate of its own (`publish = false`):
//! none of this ships in the library.
//!
//! Every entry takes the raw bytes libFuzzer produces and returns `Err` with a description when
//! an invariant is broken; a panic inside the library is a finding as well. Wrong input is not
//! a finding: it must simply come back as a typed error.
//!
//! The JSON and text targets read the bytes as UTF-8 text. The event-sequence target decodes
//! the bytes as a small program ([`Bytes`]): one byte picks the operation, the next ones its
//! host, amounts and names from short tables, so nearly every input is a meaningful sequence.
//! The entries use the library's public API only.

use placewise::error::BuildError;
use placewise::expr::LabelExpr;
use placewise::id::{HostId, ResourceId};
use placewise::nova::config::SchedulerConfig;
use placewise::nova::extra_specs::Requirement;
use placewise::nova::filters::nova_attribute_warnings;
use placewise::nova::json_query::{vars_fn, Query};
use placewise::nova::pyvalue::PyValue;
use placewise::nova::scenario::Scenario;
use placewise::replica::{Replica, ReplicaScheduler, ReplicaSettings, Volume};
use placewise::request::Request;
use placewise::schedule::{Outcome, Scheduler};
use placewise::service::{MatchExpr, ServiceScheduler};
use placewise::snapshot::{
    check_attributes, Cluster, ClusterEvent, ClusterSpec, DiskSpec, HostSpec, InstanceSpec, ResourceSpec, StateChange,
    CHUNK,
};
use placewise::spread::{SpreadRequest, SpreadScheduler};
use serde::Deserialize;
use std::collections::BTreeMap;

pub mod json_mutate;
pub mod nova_draw;

/// What an entry reports: `Err` names the broken invariant.
pub type Checked = Result<(), String>;

fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// The small cluster the request, configuration, spread and replica targets schedule on: five
/// hosts over two zones, with labels, an instance, disks and attributes.
pub fn small_cluster() -> Result<Cluster, String> {
    let mut builder = Cluster::builder().topology_levels(["region", "zone", "rack"]);
    for i in 0..5u32 {
        let size = f64::from(4 << (i % 3));
        let mut host = HostSpec::new(format!("h{i}"))
            .region("r1")
            .zone(if i % 2 == 0 { "az1" } else { "az2" })
            .topology("rack", format!("rack{}", i / 2))
            .resource("vcpus", ResourceSpec::new(size).allocation_ratio(2.0))
            .resource("memory_mb", ResourceSpec::new(size * 1024.0).reserved(512.0))
            .resource("disk_gb", ResourceSpec::new(size * 10.0))
            .label("tier", ["gold", "silver"][i as usize % 2])
            .label("engine.labels.disk", "ssd")
            .disk(DiskSpec::new("d0", 100 << 30, 80 << 30).tag("ssd"))
            .disk(DiskSpec::new("d1", 50 << 30, 10 << 30))
            .attribute("role", serde_json::json!(if i == 0 { "manager" } else { "worker" }))
            .attribute("hostname", serde_json::json!(format!("h{i}")))
            .attribute("num_io_ops", serde_json::json!(i));
        if i == 3 {
            host = host.instance(InstanceSpec::new("vm-3").group("web").resource("vcpus", 1.0));
        }
        builder = builder.host(host);
    }
    builder.build().map_err(|e| format!("the fixed cluster does not build: {e}"))
}

/// Checks what must hold of every snapshot: finite derived totals, hot columns that agree with
/// the host records, a consistent name index ([`check_hosts`]), and a spec round trip.
pub fn check_cluster(cluster: &Cluster) -> Checked {
    check_hosts(cluster)?;
    let spec = cluster.to_spec();
    let again = Cluster::from_spec(&spec).map_err(|e| format!("a snapshot's own spec does not build: {e}"))?;
    if again.to_spec() != spec {
        return Err("spec round trip changed the snapshot".into());
    }
    Ok(())
}

/// The per-host part of [`check_cluster`], cheap enough to run after every event.
pub fn check_hosts(cluster: &Cluster) -> Checked {
    let mut live = 0;
    for (id, host) in cluster.hosts() {
        live += 1;
        if cluster.host_id(&host.name) != Some(id) {
            return Err(format!("name index does not find host `{}`", host.name));
        }
        for (i, r) in host.resources.iter().enumerate() {
            if !r.is_declared() {
                continue;
            }
            for (what, v) in [("used", r.used), ("limit", r.limit()), ("free", r.free()), ("physical", r.physical())] {
                if !v.is_finite() {
                    return Err(format!("host `{}` resource {i}: {what} is {v}", host.name));
                }
            }
        }
        for r in [ResourceId::VCPUS, ResourceId::MEMORY_MB, ResourceId::DISK_GB] {
            let hot = cluster.hot_chunk(id.index() / CHUNK).free[r.index()][id.index() % CHUNK];
            let cold = host.resource(r);
            if cold.is_declared() && hot.to_bits() != cold.free().to_bits() {
                return Err(format!("host `{}`: hot free {hot} but record free {}", host.name, cold.free()));
            }
        }
    }
    if live != cluster.len() {
        return Err(format!("len {} but {live} hosts iterate", cluster.len()));
    }
    check_chunk_summaries(cluster)
}

/// Every chunk's state masks and room summary agree with its hosts.
fn check_chunk_summaries(cluster: &Cluster) -> Checked {
    for c in 0..cluster.chunk_count() {
        let hot = cluster.hot_chunk(c);
        let mut room = [f64::INFINITY; 3];
        let mut range = [(f64::INFINITY, f64::NEG_INFINITY); 3];
        let (mut up, mut enabled, mut cordoned) = (0u64, 0u64, 0u64);
        for lane in 0..CHUNK {
            let Some(host) = cluster.host(HostId::from_index(c * CHUNK + lane)) else { continue };
            let bit = 1u64 << lane;
            up |= bit * u64::from(host.state.up);
            enabled |= bit * u64::from(host.state.enabled);
            cordoned |= bit * u64::from(host.state.cordoned);
            for (r, least) in room.iter_mut().enumerate() {
                *least = least.min(hot.free[r][lane].min(hot.physical[r][lane]));
                range[r] = (range[r].0.min(hot.free[r][lane]), range[r].1.max(hot.free[r][lane]));
            }
        }
        if (up, enabled, cordoned) != (hot.up, hot.enabled, hot.cordoned) {
            return Err(format!("chunk {c}: state masks disagree with its hosts"));
        }
        if range != hot.free_range {
            return Err(format!("chunk {c}: free range {:?} but its hosts give {range:?}", hot.free_range));
        }
        if room.map(f64::to_bits) != hot.room.map(f64::to_bits) {
            return Err(format!("chunk {c}: room {:?} but its hosts give {room:?}", hot.room));
        }
    }
    Ok(())
}

/// No host got more than it had free of any resource the request asks for.
pub fn check_placement(cluster: &Cluster, request: &Request, placement: &Outcome) -> Checked {
    if placement.selections.len() > request.count as usize {
        return Err(format!("{} selections for count {}", placement.selections.len(), request.count));
    }
    let mut per_host: BTreeMap<HostId, u32> = BTreeMap::new();
    for s in &placement.selections {
        *per_host.entry(s.host).or_default() += 1;
    }
    for (&id, &n) in &per_host {
        let host = cluster.host(id).ok_or_else(|| format!("placed on missing host {id:?}"))?;
        for (kind, &amount) in &request.resources {
            let Some(r) = cluster.resource_kinds().get(kind) else { continue };
            let free = host.resource(r).free();
            let taken = amount * f64::from(n);
            // Summing n copies may round up by a few ulps of the total.
            if amount > 0.0 && taken > free + free.abs() * 1e-12 + 1e-9 {
                return Err(format!("host `{}` over-committed on {kind}: {taken} > {free}", host.name));
            }
        }
    }
    Ok(())
}

/// What holds of any placement, whichever filters ran: no more selections than asked, each on a
/// live host of the snapshot. (Over-commit is a configuration's choice when it leaves out the
/// resource filters, as the filter scheduler allows.)
pub fn check_selections(cluster: &Cluster, request: &Request, placement: &Outcome) -> Checked {
    if placement.selections.len() > request.count as usize {
        return Err(format!("{} selections for count {}", placement.selections.len(), request.count));
    }
    match placement.selections.iter().find(|s| cluster.host(s.host).is_none()) {
        Some(s) => Err(format!("placed on missing host {:?}", s.host)),
        None => Ok(()),
    }
}

/// `ClusterSpec` JSON → `Cluster`, then the snapshot invariants; serde's own reading of a
/// `ClusterSpec` refuses what `from_json` refuses as an array and reads what it reads; the
/// engines' attribute checks run on the snapshot.
pub fn cluster_json(data: &[u8]) -> Checked {
    let Some(json) = text(data) else { return Ok(()) };
    let direct = serde_json::from_str::<ClusterSpec>(json);
    match Cluster::from_json(json) {
        Ok(cluster) => {
            if let Err(e) = direct {
                return Err(format!("from_json reads what serde refuses: {e}"));
            }
            check_cluster(&cluster)?;
            let engines = [
                check_attributes(&cluster, placewise::replica::ATTRIBUTES),
                check_attributes(&cluster, placewise::spread::ATTRIBUTES),
                ServiceScheduler::new().attribute_warnings(&cluster),
                nova_attribute_warnings(&cluster),
            ];
            for warning in engines.iter().flatten() {
                let _ = warning.to_string();
            }
            let back =
                Cluster::from_json(&cluster.to_json()).map_err(|e| format!("to_json does not read back: {e}"))?;
            if back.to_spec() != cluster.to_spec() {
                return Err("JSON round trip changed the snapshot".into());
            }
            Ok(())
        }
        Err(BuildError::NotAnObject { path }) if direct.is_ok() => {
            Err(format!("serde reads the array at {path} that from_json refuses"))
        }
        Err(_) => Ok(()),
    }
}

/// `Request` JSON → compile → schedule twice on [`small_cluster`]: no over-commit, and the same
/// answer both times.
pub fn request_json(data: &[u8]) -> Checked {
    let Some(json) = text(data) else { return Ok(()) };
    let Ok(request) = Request::from_json(json) else { return Ok(()) };
    let cluster = small_cluster()?;
    let scheduler = Scheduler::standard();
    let first = scheduler.schedule(&cluster, &request);
    let second = scheduler.schedule(&cluster, &request);
    match (first, second) {
        (Ok(a), Ok(b)) => {
            if a.selections != b.selections {
                return Err("same request, same seed, different answers".into());
            }
            check_placement(&cluster, &request, &a)
        }
        (Err(a), Err(b)) if a == b => Ok(()),
        (a, b) => Err(format!("two runs disagree: {a:?} / {b:?}")),
    }
}

/// `SchedulerConfig` JSON → build → schedule one request on [`small_cluster`] ([`check_selections`]).
pub fn config_json(data: &[u8]) -> Checked {
    let Some(json) = text(data) else { return Ok(()) };
    let Ok(config) = SchedulerConfig::from_json(json) else { return Ok(()) };
    let Ok(scheduler) = config.build() else { return Ok(()) };
    let cluster = small_cluster()?;
    let request = Request::new(3).vcpus(1.0).memory_mb(512.0);
    if let Ok(placement) = scheduler.schedule(&cluster, &request.clone().into()) {
        check_selections(&cluster, &request, &placement)?;
    }
    Ok(())
}

/// Reads fuzz bytes as a small program; past the end every read is 0.
#[derive(Debug)]
pub struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Bytes<'a> {
    /// A reader over `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Bytes { data, at: 0 }
    }

    /// Whether every byte was read.
    pub fn is_done(&self) -> bool {
        self.at >= self.data.len()
    }

    /// The next byte.
    pub fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    /// One of `items`, chosen by the next byte (`items` must not be empty).
    pub fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        let b = usize::from(self.byte());
        items[b % items.len()].clone()
    }

    /// An amount, mostly ordinary, sometimes hostile.
    pub fn amount(&mut self) -> f64 {
        self.pick(&[0.0, 0.5, 1.0, 2.0, 3.0, 8.0, 64.0, 1024.0, 1e6, 1e308, f64::MAX, -1.0, f64::NAN, f64::INFINITY])
    }
}

const NAMES: [&str; 8] = ["h0", "h1", "h2", "h3", "h4", "h5", "new", ""];
const KINDS: [&str; 4] = ["vcpus", "memory_mb", "disk_gb", "gpu"];

fn host_from(b: &mut Bytes<'_>) -> HostSpec {
    let mut host = HostSpec::new(b.pick(&NAMES)).zone(b.pick(&["az1", "az2"]));
    for _ in 0..b.byte() % 3 {
        host = host.resource(b.pick(&KINDS), ResourceSpec::new(b.amount()).allocation_ratio(b.pick(&[1.0, 2.0, 16.0])));
    }
    for i in 0..b.byte() % 3 {
        host = host.instance(InstanceSpec::new(format!("i{i}")).resource(b.pick(&KINDS), b.amount()));
    }
    if b.byte() % 2 == 1 {
        host = host.label("tier", b.pick(&["gold", "silver"]));
    }
    host
}

fn event_from(b: &mut Bytes<'_>) -> ClusterEvent {
    let host = b.pick(&NAMES).to_owned();
    match b.byte() % 9 {
        0 => ClusterEvent::HostAdded { host: host_from(b) },
        1 => ClusterEvent::HostRemoved { host },
        2 => ClusterEvent::HostUpdated { host: host_from(b) },
        3 => ClusterEvent::HostStateChanged {
            host,
            change: StateChange::default().up(b.byte() % 2 == 0).cordoned(b.byte() % 2 == 0),
        },
        4 => ClusterEvent::MetricsUpdated { host, metrics: BTreeMap::from([("m".to_owned(), b.amount())]) },
        5 => ClusterEvent::InstancePlaced {
            host,
            instance: InstanceSpec::new(b.pick(&["a", "b", "c", ""])).resource(b.pick(&KINDS), b.amount()),
        },
        6 => ClusterEvent::InstanceRemoved { host, instance: b.pick(&["a", "b", "c", "i0"]).to_owned() },
        7 => {
            let (max, free) = (i64::from(b.byte()) << 30, i64::from(b.byte()) << 30);
            ClusterEvent::DiskUpdated {
                host,
                disk: DiskSpec::new(b.pick(&["d0", "d1", "x"]), max, free).scheduled(b.pick(&[
                    0,
                    1 << 30,
                    i64::MAX,
                    -1,
                ])),
            }
        }
        _ => ClusterEvent::DiskRemoved { host, disk: b.pick(&["d0", "d1", "x"]).to_owned() },
    }
}

/// A sequence of `ClusterEvent`s applied to [`small_cluster`], with a schedule after some of
/// them: an error leaves the snapshot unchanged, every snapshot keeps the invariants of
/// [`check_cluster`], and no placement over-commits.
pub fn events(data: &[u8]) -> Checked {
    let mut b = Bytes::new(data);
    let mut cluster = small_cluster()?;
    let scheduler = Scheduler::standard();
    let mut steps = 0;
    while !b.is_done() && steps < 64 {
        steps += 1;
        if b.byte() % 4 == 0 {
            let request = Request::new(u32::from(b.byte() % 8)).vcpus(b.amount()).memory_mb(b.pick(&[0.0, 256.0]));
            if let Ok(placement) = scheduler.schedule(&cluster, &request) {
                check_placement(&cluster, &request, &placement)?;
            }
            continue;
        }
        let event = event_from(&mut b);
        let generation = cluster.generation();
        match cluster.apply(&event) {
            Ok(next) => {
                if next.generation() != generation + 1 {
                    return Err("an applied event did not advance the generation".into());
                }
                check_hosts(&next)?;
                cluster = next;
            }
            Err(_) => {
                // `apply` takes `&self`; the generation is the cheap witness that nothing moved.
                if cluster.generation() != generation {
                    return Err(format!("a refused event changed the snapshot: {event:?}"));
                }
            }
        }
    }
    check_cluster(&cluster)
}

/// `LabelExpr` and the product dialect (`MatchExpr`): parse, and `Display` parses back to the
/// same expression.
pub fn label_expr(data: &[u8]) -> Checked {
    let Some(input) = text(data) else { return Ok(()) };
    if let Ok(expr) = LabelExpr::parse(input) {
        let shown = expr.to_string();
        let back = LabelExpr::parse(&shown).map_err(|e| format!("`{shown}` (from `{input}`) does not parse: {e}"))?;
        if back != expr {
            return Err(format!("`{input}` displays as `{shown}`, which parses differently"));
        }
        let labels = BTreeMap::from([("tier".to_owned(), "gold".to_owned()), ("a".to_owned(), String::new())]);
        let _ = expr.matches_map(&labels);
    }
    if let Ok(expr) = MatchExpr::parse(input) {
        let shown = expr.to_string();
        let back = MatchExpr::parse(&shown).map_err(|e| format!("`{shown}` (from `{input}`) does not parse: {e}"))?;
        if back != expr {
            return Err(format!("`{input}` displays as `{shown}` in the dialect, which parses differently"));
        }
    }
    Ok(())
}

/// Extra-spec operators: parse the requirement (first line) and match it against the value
/// (second line); `Display` gives back the text.
pub fn extra_specs(data: &[u8]) -> Checked {
    let Some(input) = text(data) else { return Ok(()) };
    let (requirement, value) = input.split_once('\n').unwrap_or((input, "1"));
    let parsed = Requirement::parse(requirement);
    if parsed.to_string() != requirement {
        return Err(format!("`{requirement}` displays as `{parsed}`"));
    }
    let _ = parsed.validate();
    let _ = parsed.matches(Some(value));
    let _ = parsed.matches(None);
    Ok(())
}

/// The JSON query: parse the text and evaluate it against a fixed host's variables.
pub fn json_query(data: &[u8]) -> Checked {
    let Some(input) = text(data) else { return Ok(()) };
    let Ok(Some(query)) = Query::parse_str(input) else { return Ok(()) };
    let _ = query.validate();
    let vars = vars_fn(|name| match name {
        "$free_ram_mb" => PyValue::Int(1024),
        "$vcpus_total" => PyValue::Float(8.0),
        "$hypervisor_hostname" => PyValue::Str("h0".into()),
        _ => PyValue::None,
    });
    let _ = query.passes(&vars);
    let _ = query.to_string();
    Ok(())
}

/// Spread constraints, descriptors and the rest of a `SpreadRequest` (JSON) scheduled on
/// [`small_cluster`]: every placed task is on a host of the cluster, no more tasks than asked
/// are placed, SwarmKit's message is there exactly when tasks are left, and the explanation
/// covers the cluster (a verdict per host when asked for).
pub fn spread(data: &[u8]) -> Checked {
    let Some(json) = text(data) else { return Ok(()) };
    let Ok(request) = SpreadRequest::from_json(json) else { return Ok(()) };
    let cluster = small_cluster()?;
    if let Ok(outcome) = SpreadScheduler::new().schedule(&cluster, &request) {
        let placed = outcome.selections.len();
        if placed > request.tasks as usize {
            return Err(format!("{placed} tasks placed for {}", request.tasks));
        }
        if let Some(a) = outcome.selections.iter().find(|a| cluster.host(a.host).is_none()) {
            return Err(format!("task {} placed on missing host {:?}", a.task, a.host));
        }
        let e = &outcome.explanation;
        if outcome.message().is_some() != (outcome.unplaced > 0) {
            return Err(format!("message {:?} with {} tasks left", outcome.message(), outcome.unplaced));
        }
        if e.hosts as usize != cluster.len() || e.available > e.hosts {
            return Err(format!("{}/{} hosts available on a cluster of {}", e.available, e.hosts, cluster.len()));
        }
        let verdicts = if request.explain.verdicts { cluster.len() } else { 0 };
        if e.verdicts.len() != verdicts {
            return Err(format!("{} verdicts, {verdicts} expected", e.verdicts.len()));
        }
    }
    Ok(())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplicaInput {
    #[serde(default)]
    settings: ReplicaSettings,
    volume: Volume,
    #[serde(default)]
    replicas: Vec<Replica>,
    #[serde(default)]
    now: i64,
}

/// A replica volume, its replicas and the settings (JSON `{"settings", "volume", "replicas",
/// "now"}`) scheduled on [`small_cluster`].
pub fn replica(data: &[u8]) -> Checked {
    let Some(json) = text(data) else { return Ok(()) };
    let Ok(input) = serde_json::from_str::<ReplicaInput>(json) else { return Ok(()) };
    let Ok(scheduler) = ReplicaScheduler::new(input.settings) else { return Ok(()) };
    let cluster = small_cluster()?;
    let _ = scheduler.schedule(&cluster, &input.volume, &input.replicas, input.now);
    if !input.replicas.is_empty() {
        let _ = scheduler.schedule_replica(&cluster, &input.volume, &input.replicas, 0, input.now);
    }
    Ok(())
}

/// The Nova scenario reader: read, check the attributes the filters read, build the configured
/// scheduler, schedule ([`check_selections`]), render the output.
pub fn nova_scenario(data: &[u8]) -> Checked {
    let Some(json) = text(data) else { return Ok(()) };
    let Ok(scenario) = Scenario::from_json(json) else { return Ok(()) };
    check_cluster(&scenario.cluster)?;
    for warning in scenario.attribute_warnings() {
        let _ = warning.to_string();
    }
    let Ok(scheduler) = scenario.config.build() else { return Ok(()) };
    if let Ok(placement) = scheduler.schedule(&scenario.cluster, &scenario.request) {
        check_selections(&scenario.cluster, &scenario.request.request, &placement)?;
        let _ = scenario.output(&placement);
    }
    Ok(())
}

/// A fuzz entry point.
pub type Entry = fn(&[u8]) -> Checked;

/// Every entry by target name, for the corpus test.
pub const TARGETS: &[(&str, Entry)] = &[
    ("cluster_json", cluster_json),
    ("request_json", request_json),
    ("config_json", config_json),
    ("events", events),
    ("label_expr", label_expr),
    ("extra_specs", extra_specs),
    ("json_query", json_query),
    ("spread", spread),
    ("replica", replica),
    ("nova_scenario", nova_scenario),
    ("nova_drawn", nova_draw::nova_drawn),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fixed_cluster_builds_and_keeps_the_invariants() {
        let cluster = small_cluster().unwrap();
        assert_eq!(cluster.len(), 5);
        assert_eq!(check_cluster(&cluster), Ok(()));
    }

    #[test]
    fn an_over_committing_placement_is_reported() {
        let cluster = small_cluster().unwrap();
        let request = Request::new(1).vcpus(1.0);
        let mut placement = Scheduler::standard().schedule(&cluster, &request).unwrap();
        assert_eq!(check_placement(&cluster, &request, &placement), Ok(()));
        let one = placement.selections[0].clone();
        placement.selections = vec![one; 100];
        let greedy = Request::new(100).vcpus(1.0);
        assert!(check_placement(&cluster, &greedy, &placement).unwrap_err().contains("over-committed"));
    }

    #[test]
    fn byte_programs_read_zero_past_the_end() {
        let mut b = Bytes::new(&[3]);
        assert_eq!(b.byte(), 3);
        assert!(b.is_done());
        assert_eq!(b.byte(), 0);
        assert_eq!(b.pick(&[7, 8]), 7);
    }
}
