//! Host classes for the filter scheduler's expensive filters: a verdict memoised per distinct
//! key for one request.
//!
//! ComputeCapabilitiesFilter, ImagePropertiesFilter, AggregateInstanceExtraSpecsFilter and
//! AggregateImagePropertiesIsolation read host data that most hosts share with many others (the
//! CPU model, the hypervisor, the aggregates). The snapshot interns that data into dense class
//! ids ([`Cluster::attribute_class`], [`Cluster::aggregate_class`]); at `prepare`, each of
//! these filters works out which classes its checks read for this request (a [`ClassKey`]).
//! When a host's verdict is a function of those classes alone, the filter judges the first host
//! of each distinct key in full (extra-spec operators, regular expressions, JSON paths) and
//! reuses the verdict, reason included, for every later host with the same key. A check that
//! reads something else (a value derived from resources, an attribute that is not a class
//! attribute) leaves the key unset and every host is judged on its own.
//! AggregateMultiTenancyIsolation and AggregateTypeAffinityFilter, whose verdicts read the
//! aggregates alone, keep theirs per aggregate class the same way (`nova::ByAggregates`).
//!
//! ComputeCapabilitiesFilter goes one step further ([`ClassMemo::by_check`]): each of its
//! specs reads one part of the host (`cpu_info.arch`, `cpu_info.features`,
//! `hypervisor_version` …) and its verdict is the first spec that fails, so each spec's verdict
//! is kept per class of the part it reads. Nearly unique combinations (a CPU model's feature list with a hypervisor version)
//! then cost one judgement per distinct value of each part; a part of one class is looked up in
//! a dense table, without hashing.
//!
//! A lookup reads first what a key is a function of ([`ClassKey::source`]: the class of one
//! class attribute or of the aggregate set, or the classes of two class attributes), from the
//! chunk's class columns fetched once per chunk, and indexes a table by it; only a miss reads
//! the key's own classes (a member's class is a search) and the tables by key (a key of two is
//! hashed). A source class is judged at most once per distinct key it maps to.
//!
//! A failed judgement (one that fails the request) is not kept: every host of that key is
//! judged again and fails the same way. Nothing is allocated per host: the key is written into a
//! buffer kept with the memo, and a class costs one table entry.

use crate::error::ScheduleError;
use crate::filter::{Reason, Rejections, Verdict};
use crate::id::{ClassId, HostId, IdHashing};
use crate::request::Cx;
use crate::snapshot::{Cluster, HotChunk, CHUNK, CHUNK_BITS};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

/// The second half of an [`KeyPart::Or`] part for a host that has the attribute.
const PRESENT: u32 = u32::MAX - 1;

/// Where one part of a host's class key is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum KeyPart {
    /// The class of class attribute number `.0` ([`Cluster::attribute_class`]).
    Attribute(usize),
    /// The class of member `member` ([`Cluster::member_class`]; `u32::MAX` for a name no value
    /// has) of class attribute `column`'s value.
    Member {
        /// The class attribute.
        column: usize,
        /// The member name's id.
        member: u32,
    },
    /// When the host has class attribute `column`: the class of its value, or of its member
    /// `member` when set; else the class of member `fallback.1` of class attribute
    /// `fallback.0` (a fallback read only then).
    Or {
        /// The class attribute read first.
        column: usize,
        /// The member of it read, if any.
        member: Option<u32>,
        /// The class attribute and member read when the host lacks `column`.
        fallback: (usize, u32),
    },
    /// The class of the host's aggregate set ([`Cluster::aggregate_class`]).
    Aggregates,
}

/// What a filter's verdict reads for one request, as the parts of a class key: two hosts with
/// equal keys get the same verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ClassKey {
    parts: Vec<KeyPart>,
}

impl ClassKey {
    /// A key of `parts`.
    pub(super) fn new(parts: Vec<KeyPart>) -> Self {
        ClassKey { parts }
    }

    /// How many classes the snapshot's lineage has issued of the kind a key of one part reads.
    fn classes(&self, cluster: &Cluster) -> usize {
        match self.parts.as_slice() {
            [KeyPart::Aggregates] => cluster.aggregate_class_count(),
            _ => cluster.attribute_class_count(),
        }
    }

    /// For a key whose classes are a function of one class of the host (a class attribute's,
    /// or its aggregate set's), or of two class attributes' classes (a [`KeyPart::Or`] of the
    /// first alone where the host has it): the columns of those
    /// classes in `hot`, which the memo indexes first tables by, before reading the key's own
    /// classes ([`Cluster::member_class`] is a search, a key of two is hashed).
    #[inline]
    fn source<'a>(&self, hot: &'a HotChunk) -> Option<Source<'a>> {
        match *self.parts.as_slice() {
            [KeyPart::Attribute(column) | KeyPart::Member { column, .. }] => hot.classes.get(column).map(Source::One),
            [KeyPart::Aggregates] => Some(Source::One(&hot.aggregate_class)),
            [KeyPart::Or { column, fallback: (other, _), .. }] => {
                Some(Source::Or(hot.classes.get(column)?, hot.classes.get(other)?))
            }
            [KeyPart::Attribute(a), KeyPart::Attribute(b)] => {
                Some(Source::Two(hot.classes.get(a)?, hot.classes.get(b)?))
            }
            _ => None,
        }
    }

    /// Writes `host`'s key into `out` (cleared first).
    fn write(&self, cluster: &Cluster, host: HostId, out: &mut Vec<u32>) {
        out.clear();
        for part in &self.parts {
            part.write(cluster, host, out);
        }
    }
}

impl KeyPart {
    /// Appends `host`'s classes for this part to `out`: one, or two for [`KeyPart::Or`].
    fn write(self, cluster: &Cluster, host: HostId, out: &mut Vec<u32>) {
        match self {
            KeyPart::Attribute(i) => out.push(cluster.attribute_class(host, i).0),
            KeyPart::Member { column, member } => {
                out.push(cluster.member_class(cluster.attribute_class(host, column), member).0);
            }
            KeyPart::Or { column, member, fallback: (other, other_member) } => {
                let class = cluster.attribute_class(host, column);
                if class == ClassId::NONE {
                    out.push(ClassId::NONE.0);
                    out.push(cluster.member_class(cluster.attribute_class(host, other), other_member).0);
                } else {
                    out.push(member.map_or(class, |m| cluster.member_class(class, m)).0);
                    // Tells "has it" from "has none, and the fallback reads nothing".
                    out.push(PRESENT);
                }
            }
            KeyPart::Aggregates => out.push(cluster.aggregate_class(host).0),
        }
    }
}

/// A filter's verdicts memoised per host class for one request (kept in its prepared state).
///
/// The memo knows the filter as a list of checks run in order, the first that rejects giving
/// the verdict, each with the [`ClassKey`] it reads: a whole filter judged at once is one check
/// ([`new`](ClassMemo::new)); a filter whose checks each read one [`KeyPart`] keeps each
/// check's verdict per class of its part ([`by_check`](ClassMemo::by_check)), so hosts that
/// share the class a check reads share that check's verdict, whatever the other checks read: a
/// request with checks on `cpu_info.arch`, `cpu_info.features` and `hypervisor_version` judges
/// each distinct value of each once, not each distinct combination.
#[derive(Debug, Default)]
pub(super) struct ClassMemo {
    /// Each check's key; `None` when a check reads something outside the classes.
    keys: Option<Vec<ClassKey>>,
    table: Mutex<Table>,
}

impl Clone for ClassMemo {
    /// The same keys with nothing judged yet (a memo is a cache).
    fn clone(&self) -> Self {
        ClassMemo { keys: self.keys.clone(), table: Mutex::new(Table::default()) }
    }
}

/// The verdicts judged so far in one request, by check.
#[derive(Debug, Default)]
struct Table {
    /// By check, by the class of its key's source + 1 (0 for [`ClassId::NONE`]; for a
    /// [`Source::Or`], the fallback's classes after the first's, where the host lacks it): for keys
    /// with a source ([`ClassKey::source`]), read first; a miss falls through to the tables
    /// below, so a source class costs one judgement per distinct key at most.
    by_source: Vec<Vec<Option<Verdict>>>,
    /// By check, by the first source class + 1: the verdicts by the second source class, a
    /// few at most ([`SECONDS`]).
    by_two: Vec<Vec<Vec<(ClassId, Verdict)>>>,
    /// By check, by class + 1 (0 for [`ClassId::NONE`]): for keys of one class.
    dense: Vec<Vec<Option<Verdict>>>,
    /// By check, by the two classes: for keys of two (one [`KeyPart::Or`]), without a key to
    /// allocate or compare as a slice.
    pairs: Vec<HashMap<(u32, u32), Verdict, IdHashing>>,
    /// By check, by key: for keys of more classes.
    by_key: Vec<HashMap<Box<[u32]>, Verdict, IdHashing>>,
    /// The key being looked up.
    buffer: Vec<u32>,
}

impl ClassMemo {
    /// A memo for a filter judged whole, reading `key`, with nothing judged yet; with `None`,
    /// every host is judged.
    pub(super) fn new(key: Option<ClassKey>) -> Self {
        ClassMemo { keys: key.map(|k| vec![k]), table: Mutex::new(Table::default()) }
    }

    /// A memo for a filter of checks reading `parts` (one a check, in check order) with nothing
    /// judged yet; with `None`, every host is judged whole.
    pub(super) fn by_check(parts: Option<Vec<KeyPart>>) -> Self {
        let keys = parts.map(|parts| parts.into_iter().map(|p| ClassKey::new(vec![p])).collect());
        ClassMemo { keys, table: Mutex::new(Table::default()) }
    }

    /// The checks' keys, if the request's verdicts follow the classes.
    #[cfg(test)]
    pub(super) fn keys(&self) -> Option<&[ClassKey]> {
        self.keys.as_deref()
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        // A poisoned lock still holds only verdicts already judged in full.
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `host`'s verdict: the first check's, in order, that rejects it, each check's verdict
    /// taken from the memo or judged by `judge(Some(i), host)` and kept for the class its key
    /// reads; without keys, `judge(None, host)`, the whole filter at once. (A filter judged
    /// whole has one check, and may ignore the index.)
    pub(super) fn verdict(
        &self,
        cx: &Cx<'_>,
        host: HostId,
        judge: impl Fn(Option<usize>, HostId) -> Result<Verdict, ScheduleError>,
    ) -> Result<Verdict, ScheduleError> {
        match &self.keys {
            None => judge(None, host),
            Some(keys) => {
                let cluster = cx.cluster();
                let sources = Sources::of(keys, cluster, host.index() >> CHUNK_BITS);
                self.lock().verdict(keys, &sources, cluster, host, &judge)
            }
        }
    }

    /// [`Rejections::try_lanes`] through the memo ([`verdict`](ClassMemo::verdict)): the lanes
    /// of `mask` that pass.
    pub(super) fn lanes(
        &self,
        cx: &Cx<'_>,
        chunk: usize,
        mask: u64,
        rejected: &mut Rejections,
        on_error: Reason,
        judge: impl Fn(Option<usize>, HostId) -> Result<Verdict, ScheduleError>,
    ) -> u64 {
        let Some(keys) = &self.keys else { return rejected.try_lanes(chunk, mask, on_error, |h| judge(None, h)) };
        let cluster = cx.cluster();
        let sources = Sources::of(keys, cluster, chunk);
        let mut table = self.lock();
        rejected.try_lanes(chunk, mask, on_error, |h| table.verdict(keys, &sources, cluster, h, &judge))
    }
}

/// The most checks whose source columns ([`ClassKey::source`]) are read once per chunk; the
/// checks after them go through the tables by key.
const SOURCES: usize = 8;

/// The columns of one chunk a check's key is a function of ([`ClassKey::source`]).
#[derive(Clone, Copy)]
enum Source<'a> {
    /// One class column.
    One(&'a [ClassId; CHUNK]),
    /// Two class columns.
    Two(&'a [ClassId; CHUNK], &'a [ClassId; CHUNK]),
    /// A [`KeyPart::Or`]'s column, and its fallback's, read only where a lane lacks the first.
    Or(&'a [ClassId; CHUNK], &'a [ClassId; CHUNK]),
}

/// The most second classes kept by first class for a [`Source::Two`]; more are looked up in the
/// tables by key.
const SECONDS: usize = 8;

/// The source columns of each check in one chunk, read once for all its lanes.
struct Sources<'a>([Option<Source<'a>>; SOURCES]);

impl<'a> Sources<'a> {
    fn of(keys: &[ClassKey], cluster: &'a Cluster, chunk: usize) -> Self {
        let mut out = [None; SOURCES];
        if chunk < cluster.chunk_count() {
            let hot = cluster.hot_chunk(chunk);
            for (slot, key) in out.iter_mut().zip(keys) {
                *slot = key.source(hot);
            }
        }
        Sources(out)
    }
}

impl Table {
    // Inlined into `ClassMemo::lanes`' per-lane closure: out of line, the call per lane cost
    // the Nova scenario 1.5 M instructions a request.
    #[inline(always)]
    fn verdict(
        &mut self,
        keys: &[ClassKey],
        sources: &Sources<'_>,
        cluster: &Cluster,
        host: HostId,
        judge: &impl Fn(Option<usize>, HostId) -> Result<Verdict, ScheduleError>,
    ) -> Result<Verdict, ScheduleError> {
        if self.dense.len() < keys.len() {
            let size = |k: &ClassKey, s: &Option<Source<'_>>, two: bool| match s {
                Some(Source::Two(..)) if two => k.classes(cluster) + 1,
                Some(Source::One(_)) if !two => k.classes(cluster) + 1,
                // The present classes, then the fallback's.
                Some(Source::Or(..)) if !two => 2 * (k.classes(cluster) + 1),
                _ => 0,
            };
            self.by_source = keys.iter().zip(&sources.0).map(|(k, s)| vec![None; size(k, s, false)]).collect();
            self.by_source.resize_with(keys.len(), Vec::new);
            self.by_two = keys.iter().zip(&sources.0).map(|(k, s)| vec![Vec::new(); size(k, s, true)]).collect();
            self.by_two.resize_with(keys.len(), Vec::new);
            self.dense.resize_with(keys.len(), Vec::new);
            self.pairs.resize_with(keys.len(), HashMap::default);
            self.by_key.resize_with(keys.len(), HashMap::default);
        }
        for (i, key) in keys.iter().enumerate() {
            let lane = host.index() & (CHUNK - 1);
            let v = match sources.0.get(i).copied().flatten() {
                Some(Source::Two(a, b)) => {
                    let (first, second) = (a[lane].0.wrapping_add(1) as usize, b[lane]);
                    let known = self.by_two[i].get(first).and_then(|l| l.iter().find(|e| e.0 == second));
                    match known {
                        Some(&(_, v)) => v,
                        None => {
                            let v = self.judged(i, key, cluster, host, judge)?;
                            if let Some(list) = self.by_two[i].get_mut(first) {
                                if list.len() < SECONDS {
                                    list.push((second, v));
                                }
                            }
                            v
                        }
                    }
                }
                Some(source @ (Source::One(_) | Source::Or(..))) => {
                    // Sized at the first host to the count of the source's kind: a class beyond
                    // it (none should be) is looked up below every time.
                    let slot = match source {
                        Source::Or(column, fallback) if column[lane] == ClassId::NONE => {
                            self.by_source[i].len() / 2 + fallback[lane].0.wrapping_add(1) as usize
                        }
                        Source::One(column) | Source::Or(column, _) => column[lane].0.wrapping_add(1) as usize,
                        Source::Two(..) => usize::MAX,
                    };
                    match self.by_source[i].get(slot) {
                        Some(Some(v)) => *v,
                        Some(None) => {
                            let v = self.judged(i, key, cluster, host, judge)?;
                            self.by_source[i][slot] = Some(v);
                            v
                        }
                        None => self.judged(i, key, cluster, host, judge)?,
                    }
                }
                None => self.judged(i, key, cluster, host, judge)?,
            };
            if !v.is_pass() {
                return Ok(v);
            }
        }
        Ok(Verdict::Pass)
    }

    /// Check `i`'s verdict for `host` from the tables by key, or judged and kept there.
    fn judged(
        &mut self,
        i: usize,
        key: &ClassKey,
        cluster: &Cluster,
        host: HostId,
        judge: &impl Fn(Option<usize>, HostId) -> Result<Verdict, ScheduleError>,
    ) -> Result<Verdict, ScheduleError> {
        key.write(cluster, host, &mut self.buffer);
        let v = match *self.buffer.as_slice() {
            [class] => {
                let slot = class.wrapping_add(1) as usize;
                let table = &mut self.dense[i];
                match table.get(slot) {
                    Some(Some(v)) => *v,
                    _ => {
                        let v = judge(Some(i), host)?;
                        // Classes are below the count of their kind; anything else is judged
                        // every time.
                        let bound = key.classes(cluster) + 1;
                        if slot < bound {
                            if table.len() <= slot {
                                table.resize(bound, None);
                            }
                            table[slot] = Some(v);
                        }
                        v
                    }
                }
            }
            [a, b] => match self.pairs[i].get(&(a, b)) {
                Some(v) => *v,
                None => {
                    let v = judge(Some(i), host)?;
                    self.pairs[i].insert((a, b), v);
                    v
                }
            },
            _ => match self.by_key[i].get(self.buffer.as_slice()) {
                Some(v) => *v,
                None => {
                    let v = judge(Some(i), host)?;
                    self.by_key[i].insert(self.buffer.as_slice().into(), v);
                    v
                }
            },
        };
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::Filter;
    use crate::nova::filters::common::testkit::flavor_request;
    use crate::nova::filters::{
        AggregateImagePropertiesIsolation, AggregateInstanceExtraSpecsFilter, AggregateMultiTenancyIsolation,
        AggregateTypeAffinityFilter, ComputeCapabilitiesFilter, ImagePropertiesFilter,
    };
    use crate::nova::request::NovaRequest;
    use crate::nova::request::{Image, VmSpec};
    use crate::snapshot::{AggregateSpec, ClusterEvent, ClusterSpec, HostSpec, Overlay, ResourceSpec};
    use proptest::prelude::*;
    use serde_json::{json, Value};

    /// The filter scheduler's class attributes, as its reader declares them.
    fn class_attributes() -> Vec<String> {
        crate::nova::scenario::CLASS_ATTRIBUTES.iter().map(|a| a.to_string()).collect()
    }

    const AGGREGATES: [(&str, &[(&str, &str)]); 4] = [
        ("a", &[("ssd", "true"), ("hw_architecture", "x86_64"), ("filter_tenant_id", "p1, p2")]),
        (
            "b",
            &[("ssd", "no"), ("gpu", "yes, true"), ("img_hv_type", "qemu,kvm"), ("instance_type", "m1.small, m1.test")],
        ),
        (
            "c",
            &[
                ("hw_architecture", "aarch64"),
                ("speed", "fast"),
                ("filter_tenant_id_2", "p3"),
                ("instance_type", "m1.big"),
            ],
        ),
        ("d", &[]),
    ];

    /// The request's project: none, one that aggregate `a` accepts, one `c` accepts, and one
    /// no aggregate names.
    const PROJECTS: [Option<&str>; 4] = [None, Some("p2"), Some("p3"), Some("p9")];

    fn cpu_info(i: u8) -> Option<Value> {
        match i % 7 {
            0 => Some(json!({"arch": "x86_64", "features": ["avx", "avx2"], "topology": {"cores": 8}})),
            // Equal under `==`, printed differently.
            5 => Some(json!({"arch": "x86_64", "ratio": 0.0})),
            6 => Some(json!({"arch": "x86_64", "ratio": -0.0})),
            1 => Some(json!({"arch": "aarch64", "features": ["neon"], "topology": {"cores": 4}})),
            // JSON text, as some deployments store it.
            2 => Some(json!(json!({"arch": "x86_64", "features": ["sse4.2"]}).to_string())),
            3 => Some(Value::Null),
            _ => None,
        }
    }

    fn supported(i: u8) -> Option<Value> {
        match i % 4 {
            0 => Some(json!([["x86_64", "qemu", "hvm"], ["i686", "qemu", "hvm"]])),
            1 => Some(json!([["aarch64", "kvm", "hvm"]])),
            2 => Some(json!([])),
            _ => None,
        }
    }

    /// One generated host: indices into the pools above, and a unique address.
    #[derive(Debug, Clone)]
    struct GenHost {
        aggregates: u8,
        cpu: u8,
        supported: u8,
        version: u8,
        hv_type: u8,
        stats: u8,
        memory: u8,
    }

    fn gen_host() -> impl Strategy<Value = GenHost> {
        (any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>(), any::<u8>()).prop_map(
            |(aggregates, cpu, supported, version, hv_type, stats, memory)| GenHost {
                aggregates,
                cpu,
                supported,
                version,
                hv_type,
                stats,
                memory,
            },
        )
    }

    fn host_spec(i: usize, g: &GenHost) -> HostSpec {
        let mut h = HostSpec::new(format!("h{i}"))
            .resource("memory_mb", ResourceSpec::new(f64::from(g.memory % 4) * 2048.0))
            // Unique on every host: never a class attribute.
            .attribute("host_ip", json!(format!("10.0.0.{i}")));
        for (bit, (name, _)) in AGGREGATES.iter().enumerate() {
            if g.aggregates >> bit & 1 == 1 {
                h = h.aggregate(*name);
            }
        }
        if let Some(v) = cpu_info(g.cpu) {
            h = h.attribute("cpu_info", v);
        }
        if let Some(v) = supported(g.supported) {
            h = h.attribute("supported_instances", v);
        }
        match g.version % 4 {
            0 => h = h.attribute("hypervisor_version", json!(7_000_000)),
            1 => h = h.attribute("hypervisor_version", json!(9_001_000)),
            2 => h = h.attribute("hypervisor_version", json!(9_001_000.0)),
            _ => {}
        }
        match g.hv_type % 3 {
            0 => h = h.attribute("hypervisor_type", json!("QEMU")),
            1 => h = h.attribute("hypervisor_type", json!("kvm")),
            _ => {}
        }
        match g.stats % 4 {
            0 => h = h.attribute("stats", json!({"rack": "r1"})),
            // Read for hosts without `cpu_info`.
            1 => h = h.attribute("stats", json!({"rack": "r2", "cpu_info": "{\"arch\": \"x86_64\"}"})),
            2 => h = h.attribute("stats", json!({"host_ip": "10.0.0.1", "rack": format!("unique-{i}")})),
            _ => {}
        }
        h
    }

    fn spec_of(hosts: &[HostSpec]) -> ClusterSpec {
        let mut spec =
            ClusterSpec { hosts: hosts.to_vec(), class_attributes: class_attributes(), ..Default::default() };
        for (name, metadata) in AGGREGATES {
            let mut a = AggregateSpec::new(name);
            for (k, v) in metadata {
                a = a.metadata(*k, *v);
            }
            spec.aggregates.push(a);
        }
        spec
    }

    const SPECS: &[(&str, &str)] = &[
        ("capabilities:cpu_info:arch", "x86_64"),
        ("capabilities:cpu_info:features", "<in> avx"),
        ("capabilities:cpu_info:topology:cores", ">= 6"),
        ("capabilities:hypervisor_version", ">= 8000000"),
        ("capabilities:hypervisor_type", "s== QEMU"),
        ("capabilities:rack", "r1"),
        ("rack", "r2"),
        ("hw:maxphysaddr_bits", "40"),
        ("capabilities:cpu_info:ratio", "s== -0.0"),
        // Per host: derived from resources, and an attribute outside the classes.
        ("free_ram_mb", ">= 4096"),
        ("capabilities:host_ip", "10.0.0.1"),
        ("aggregate_instance_extra_specs:ssd", "<or> true <or> yes"),
        ("gpu", "true"),
        ("speed", "fast"),
        // Cannot be evaluated: fails the request where a host reaches it.
        ("capabilities:cpu_info:arch", "= 1"),
        ("aggregate_instance_extra_specs:gpu", ">= 2"),
    ];

    const PROPERTIES: &[(&str, &str)] = &[
        ("hw_architecture", "x86_64"),
        ("architecture", "AARCH64"),
        ("img_hv_type", "qemu"),
        ("hw_vm_mode", "hvm"),
        ("img_hv_requested_version", ">= 8.0"),
        ("img_hv_requested_version", "bad predicate"),
        ("ssd", "true"),
        ("speed", "fast"),
    ];

    fn request(specs: u16, properties: u8, project: usize) -> NovaRequest {
        let mut r = flavor_request(1, 2048.0, 1.0, 0.0, 0.0, 0.0);
        let flavor = r.vm.flavor.as_mut().unwrap();
        for (i, (k, v)) in SPECS.iter().enumerate() {
            // Rarely the unevaluable ones, so most cases judge every class.
            let wanted = if i + 2 >= SPECS.len() { specs & 0x7000 == 0x7000 } else { specs >> i & 1 == 1 };
            if wanted {
                flavor.extra_specs.insert(*k, *v);
            }
        }
        let mut image = Image { id: None, properties: Default::default() };
        for (i, (k, v)) in PROPERTIES.iter().enumerate() {
            if properties >> i & 1 == 1 {
                image.properties.insert(k.to_string(), json!(v));
            }
        }
        let project = PROJECTS[project % PROJECTS.len()].map(Into::into);
        r.vm = VmSpec { image: Some(image), project, ..r.vm.clone() };
        r
    }

    fn filters() -> Vec<Box<dyn Filter>> {
        vec![
            Box::new(ComputeCapabilitiesFilter),
            Box::new(ImagePropertiesFilter::new()),
            Box::new(AggregateInstanceExtraSpecsFilter),
            Box::new(AggregateImagePropertiesIsolation::new()),
            Box::new(AggregateMultiTenancyIsolation),
            Box::new(AggregateTypeAffinityFilter),
        ]
    }

    /// Every live host's verdict under `filter` (its reason's text for a rejection), or the
    /// request's error; `check` must agree with `check_chunk`.
    fn verdicts(filter: &dyn Filter, cluster: &Cluster, request: &NovaRequest) -> Result<Vec<Option<String>>, String> {
        let compiled = request.request.compile(cluster).map_err(|e| e.to_string())?;
        let overlay = Overlay::new();
        let cx0 = Cx::new(cluster, &request.request, &compiled, &overlay, 0).with_part(Some(&request.vm));
        let state = filter.prepare(&cx0).map_err(|e| e.to_string())?;
        let cx = cx0.with_state(state.as_deref());
        let mut rejections = Rejections::new(true);
        let mut out = Vec::new();
        for chunk in 0..cluster.chunk_count() {
            let mask = cluster.hot_chunk(chunk).live;
            let pass = filter.check_chunk(&cx, chunk, mask, &mut rejections);
            for lane in (0..64).filter(|l| mask >> l & 1 == 1) {
                let host = HostId((chunk as u32) << 6 | lane);
                let single = filter.check(&cx, host);
                assert_eq!(single.is_pass(), pass >> lane & 1 == 1, "check and check_chunk disagree");
                out.push(match single {
                    Verdict::Pass => None,
                    Verdict::Reject(r) => Some(filter.describe(&cx, r)),
                });
            }
        }
        match rejections.take_error() {
            Some(e) => Err(e.to_string()),
            None => Ok(out),
        }
    }

    /// The plain per-host evaluation: each host judged alone in a snapshot of its own (same
    /// aggregates and class attributes), where no verdict can be reused.
    fn alone(filter: &dyn Filter, hosts: &[HostSpec], request: &NovaRequest) -> Result<Vec<Option<String>>, String> {
        let mut out = Vec::new();
        for h in hosts {
            let cluster = Cluster::from_spec(&spec_of(std::slice::from_ref(h))).unwrap();
            out.push(verdicts(filter, &cluster, request)?.remove(0));
        }
        Ok(out)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// The class-memoised verdicts equal each host judged alone, before and after events
        /// that change some hosts' attributes and aggregates.
        #[test]
        fn memoised_verdicts_equal_per_host_verdicts(
            gen in proptest::collection::vec(gen_host(), 1..90),
            updates in proptest::collection::vec((any::<usize>(), gen_host()), 0..6),
            specs in any::<u16>(),
            properties in any::<u8>(),
            project in any::<usize>(),
        ) {
            let mut hosts: Vec<HostSpec> = gen.iter().enumerate().map(|(i, g)| host_spec(i, g)).collect();
            let mut cluster = Cluster::from_spec(&spec_of(&hosts)).unwrap();
            let request = request(specs, properties, project);
            for round in 0..2 {
                for filter in filters() {
                    let memoised = verdicts(&*filter, &cluster, &request);
                    let plain = alone(&*filter, &hosts, &request);
                    prop_assert_eq!(memoised, plain, "{} in round {}", filter.name(), round);
                }
                for (at, g) in &updates {
                    let i = at % hosts.len();
                    hosts[i] = host_spec(i, g);
                    cluster = cluster.apply(&ClusterEvent::HostUpdated { host: hosts[i].clone() }).unwrap();
                }
            }
        }
    }

    #[test]
    fn an_event_changes_a_hosts_classes_and_nothing_else_does() {
        let g =
            |cpu, aggregates| GenHost { aggregates, cpu, supported: 0, version: 0, hv_type: 0, stats: 0, memory: 1 };
        let hosts = [host_spec(0, &g(0, 1)), host_spec(1, &g(1, 2)), host_spec(2, &g(0, 1))];
        let cluster = Cluster::from_spec(&spec_of(&hosts)).unwrap();
        let cpu = cluster.class_attribute("cpu_info").unwrap();
        let class = |c: &Cluster, h: u32| (c.attribute_class(HostId(h), cpu), c.aggregate_class(HostId(h)));
        assert_eq!(
            class(&cluster, 0),
            class(&cluster, 2),
            "equal values share classes; unique addresses do not matter"
        );
        assert_ne!(class(&cluster, 0).0, class(&cluster, 1).0);
        assert_ne!(class(&cluster, 0).1, class(&cluster, 1).1);
        assert_eq!(cluster.aggregate_set(class(&cluster, 1).1), [crate::id::AggregateId(1)]);
        // Host 2 takes host 1's CPU and aggregates through an event: it takes its classes.
        let next = cluster.apply(&ClusterEvent::HostUpdated { host: host_spec(2, &g(1, 2)) }).unwrap();
        assert_eq!(class(&next, 2), class(&cluster, 1));
        assert_eq!(class(&next, 0), class(&cluster, 0));
        // The older snapshot is unchanged, and a state change keeps the classes.
        assert_eq!(class(&cluster, 2), class(&cluster, 0));
        let change = crate::snapshot::StateChange { enabled: Some(false), ..Default::default() };
        let disabled = next.apply(&ClusterEvent::HostStateChanged { host: "h2".into(), change }).unwrap();
        assert_eq!(class(&disabled, 2), class(&next, 2));
        // Values equal under `==` but printed differently (`0.0`, `-0.0`) are different classes,
        // through an event too.
        let zero = next.apply(&ClusterEvent::HostUpdated { host: host_spec(1, &g(5, 2)) }).unwrap();
        let minus_zero = zero.apply(&ClusterEvent::HostUpdated { host: host_spec(1, &g(6, 2)) }).unwrap();
        assert_ne!(class(&zero, 1).0, class(&minus_zero, 1).0);
        // A removed host has none.
        let removed = next.apply(&ClusterEvent::HostRemoved { host: "h0".into() }).unwrap();
        assert_eq!(removed.aggregate_class(HostId(0)), ClassId::NONE);
    }

    #[test]
    fn keys_follow_what_the_request_reads() {
        let cluster = Cluster::from_spec(&spec_of(&[host_spec(
            0,
            &GenHost { aggregates: 1, cpu: 0, supported: 0, version: 0, hv_type: 0, stats: 0, memory: 1 },
        )]))
        .unwrap();
        let key = |specs: u16| {
            let r = request(specs, 0, 0);
            let compiled = r.request.compile(&cluster).unwrap();
            let overlay = Overlay::new();
            let cx = Cx::new(&cluster, &r.request, &compiled, &overlay, 0).with_part(Some(&r.vm));
            super::super::compute_capabilities::check_parts_of(&cx)
        };
        assert!(key(0b11).is_some(), "cpu_info specs are judged per class");
        assert!(key(1 << 9).is_none(), "free_ram_mb is judged per host");
        assert!(key(1 << 10).is_none(), "host_ip is not a class attribute");
    }
}
