//! ComputeCapabilitiesFilter: flavor extra specs against the host's capabilities.

use super::classes::{ClassMemo, KeyPart};
use super::common::{flavor, is_host_state_attribute, SPEC_ERROR};
use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::nova::extra_specs::{ExtraSpecError, Requirement};
use crate::nova::host_state::DERIVED_ATTRIBUTES;
use crate::nova::pyvalue::{py_str, PyValue};
use crate::request::{Cx, Prepared};
use crate::snapshot::Cluster;
use serde_json::Value;
use std::borrow::Cow;

/// The flavor spec rewritten into a capability check.
const MAXPHYSADDR: &str = "hw:maxphysaddr_bits";
/// What it is rewritten to.
const MAXPHYSADDR_CAPABILITY: &str = "capabilities:cpu_info:maxphysaddr:bits";

/// Reason offset: the capability has no value on the host (`reason = 2·spec + MISSING`).
const MISSING: u32 = 0;
/// Reason offset: the value does not satisfy the requirement.
const MISMATCH: u32 = 1;
/// Reason: the host could not be judged (the request fails).
const ERROR: u32 = SPEC_ERROR;

/// Nova's `ComputeCapabilitiesFilter` (reference §5.2): every applicable flavor extra spec must
/// be satisfied by the host's capabilities, with Nova's operator grammar
/// ([`Requirement`]).
///
/// - A flavor without extra specs passes every host.
/// - `hw:maxphysaddr_bits: N` is first rewritten to
///   `capabilities:cpu_info:maxphysaddr:bits: '>= N'`, replacing any explicit spec of that key.
/// - A key with colons is checked only in the `capabilities` scope; the rest of the key is the
///   path. A key without a colon is checked only when it names a `HostState` attribute or a
///   `stats` key, and is then its own path.
/// - The path is resolved from the host: the first part is the attribute (when it exists and is
///   not null) or else the `stats` key; each later part first decodes a JSON string (so paths go
///   through `cpu_info`), then looks the part up in a map. A missing value, a JSON string that
///   does not decode, and a step through anything but a map fail the host (`service` is not a
///   map to this filter, as in Nova).
/// - The value is printed as Python's `str()` (`True`, `4.0`, `['avx', 'avx2']`) and matched.
///
/// Specs are checked in the flavor's order ([`ExtraSpecs`](crate::nova::request::ExtraSpecs)); the
/// first that fails rejects the host, and the specs after it are not evaluated. A requirement
/// that Nova cannot evaluate (a non-number under a numeric operator, a bare `<or>`) fails the
/// request.
/// Runs once per request, not on rebuilds. Reasons: `extra spec <key> has no host value`,
/// `extra spec <key> does not match`.
///
/// **Host classes.** When every spec reads a class attribute
/// ([`Cluster::class_attributes`](crate::snapshot::Cluster::class_attributes): the attribute its path
/// starts with, and `stats` for hosts without it), the filter keys each host on the classes of
/// the values the specs reach after one step (`cpu_info.arch`, `cpu_info.features`, the
/// attribute itself for one-part paths: [`Cluster::member_class`](crate::snapshot::Cluster::member_class)),
/// judges each spec once per request for each distinct class of the value that spec reads, and
/// reuses that spec's verdict for every host of the class (the host's verdict is the first spec
/// that fails), so hosts whose CPU models differ but whose architecture and features match share
/// one judgement, and the features spec is judged once per feature list whatever the hypervisor
/// version. `hypervisor_version` and `failed_builds` follow their stored attribute; a spec on
/// any other value derived from resources or state (`free_ram_mb`, `vcpus_used`, `service` …),
/// or on an attribute that is not a class attribute, makes the filter judge every host on its
/// own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ComputeCapabilitiesFilter;

/// One spec this filter checks.
#[derive(Debug, Clone)]
struct Check {
    /// The spec key as given.
    key: String,
    /// The path to resolve.
    path: Vec<String>,
    /// An unscoped key, checked only when the host has such an attribute or stats key.
    unscoped: bool,
    requirement: Requirement,
}

/// The specs of the request, in order, with the verdicts judged so far per spec and class.
#[derive(Debug, Clone, Default)]
struct Checks {
    checks: Vec<Check>,
    memo: ClassMemo,
}

/// Derived attributes that are a function of the stored attribute of the same name alone.
const STORED_DERIVED: &[&str] = &["failed_builds", "hypervisor_version"];

/// The part of the host each of `checks` reads, in order: the class of the value at the start
/// of its path (its first part and, when there is one, its second: the attribute, or its
/// member; for hosts without the attribute, the `stats` entry of that name). `None` when a
/// check reads a value outside the class attributes.
fn check_parts(cluster: &Cluster, checks: &[Check]) -> Option<Vec<KeyPart>> {
    let member = |name: &str| cluster.class_member_name(name).unwrap_or(u32::MAX);
    let stats = || cluster.class_attribute("stats");
    let mut parts = Vec::with_capacity(checks.len());
    for check in checks {
        let name = check.path.first()?;
        let name = name.as_str();
        let second = check.path.get(1).map(|m| member(m));
        let part = if !is_host_state_attribute(name) {
            // Only `stats` can hold it: its entry `name` is the root.
            KeyPart::Member { column: stats()?, member: member(name) }
        } else if DERIVED_ATTRIBUTES.contains(&name) {
            if !STORED_DERIVED.contains(&name) {
                return None;
            }
            // A number: no path goes further.
            KeyPart::Attribute(cluster.class_attribute(name)?)
        } else {
            KeyPart::Or { column: cluster.class_attribute(name)?, member: second, fallback: (stats()?, member(name)) }
        };
        parts.push(part);
    }
    Some(parts)
}

impl Checks {
    fn new(cx: &Cx<'_>) -> Checks {
        let Some(f) = flavor(cx) else { return Checks::default() };
        let mut specs: Vec<(&str, Cow<'_, str>)> = f.extra_specs.iter().map(|(k, v)| (k, Cow::Borrowed(v))).collect();
        if let Some(bits) = f.extra_specs.get(MAXPHYSADDR) {
            let rewritten = Cow::Owned(format!(">= {bits}"));
            match specs.iter_mut().find(|(k, _)| *k == MAXPHYSADDR_CAPABILITY) {
                Some(slot) => slot.1 = rewritten,
                None => specs.push((MAXPHYSADDR_CAPABILITY, rewritten)),
            }
        }
        let checks = specs
            .into_iter()
            .filter_map(|(key, req)| {
                let mut parts: Vec<String> = key.split(':').map(str::to_owned).collect();
                let unscoped = parts.len() == 1;
                if !unscoped {
                    if parts[0] != "capabilities" {
                        return None;
                    }
                    parts.remove(0);
                }
                Some(Check { key: key.to_owned(), path: parts, unscoped, requirement: Requirement::parse(&req) })
            })
            .collect::<Vec<_>>();
        let memo = ClassMemo::by_check(check_parts(cx.cluster(), &checks));
        Checks { checks, memo }
    }
}

/// How many checks of the request in `cx` are memoised by class, for tests.
#[cfg(test)]
pub(super) fn check_parts_of(cx: &Cx<'_>) -> Option<usize> {
    Checks::new(cx).memo.keys().map(<[_]>::len)
}

/// The host's attribute `name` as Nova's `getattr(host_state, name)` sees it: `None` for names
/// `HostState` does not have, and for unset ones.
fn attribute<'a>(cx: &Cx<'a>, host: HostId, name: &str) -> Option<Cow<'a, Value>> {
    if !is_host_state_attribute(name) {
        return None;
    }
    let value = if DERIVED_ATTRIBUTES.contains(&name) {
        Cow::Owned(cx.host_state(host).attribute(name))
    } else {
        Cow::Borrowed(cx.host(host).attribute(name)?)
    };
    (!value.is_null()).then_some(value)
}

/// The `stats` entry `name`.
fn stat<'a>(cx: &Cx<'a>, host: HostId, name: &str) -> Option<&'a Value> {
    cx.host(host).attribute("stats")?.get(name).filter(|v| !v.is_null())
}

/// JSON strings met at the first step, decoded once per host: `(first path part, decoded)`.
type Decoded = Vec<(String, Option<Value>)>;

/// Python's `str()` of a resolved value.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => py_str(&PyValue::from(other)),
    }
}

/// One step: `part` of a map; `None` for a missing or null entry and for a non-map.
fn step<'v>(cap: &'v Value, part: &str) -> Option<&'v Value> {
    cap.as_object()?.get(part).filter(|v| !v.is_null())
}

/// Walks `parts` from `cap`, decoding a JSON string before a step, as Nova does at each step.
fn walk(mut cap: &Value, parts: &[String]) -> Option<String> {
    for (i, part) in parts.iter().enumerate() {
        if let Value::String(s) = cap {
            let decoded: Value = serde_json::from_str(s).ok()?;
            return walk(step(&decoded, part)?, &parts[i + 1..]);
        }
        cap = step(cap, part)?;
    }
    Some(text_of(cap))
}

/// Resolves `path` on `host` to the value's string form; `None` when Nova's lookup gives
/// `None` or fails.
fn resolve(cx: &Cx<'_>, host: HostId, path: &[String], decoded: &mut Decoded) -> Option<String> {
    let (first, rest) = path.split_first()?;
    let root = match attribute(cx, host, first) {
        Some(v) => v,
        None => Cow::Borrowed(stat(cx, host, first)?),
    };
    let Some((part, rest)) = rest.split_first() else { return Some(text_of(&root)) };
    match &*root {
        // Decoded once when the snapshot was built.
        Value::String(_) if cx.host(host).decoded_attribute(first).is_some() => {
            walk(step(cx.host(host).decoded_attribute(first)?, part)?, rest)
        }
        Value::String(s) => {
            let i = match decoded.iter().position(|(k, _)| k == first) {
                Some(i) => i,
                None => {
                    decoded.push((first.clone(), serde_json::from_str(s).ok()));
                    decoded.len() - 1
                }
            };
            walk(step(decoded[i].1.as_ref()?, part)?, rest)
        }
        // `service` is a read-only mapping, not a dict: a step into it finds nothing.
        map @ Value::Object(_) if first != "service" => walk(step(map, part)?, rest),
        _ => None,
    }
}

impl ComputeCapabilitiesFilter {
    /// The verdict of spec `i` alone, or with `None` of every spec (the memo's judge).
    fn judge_one(
        &self,
        cx: &Cx<'_>,
        checks: &Checks,
        i: Option<usize>,
        host: HostId,
    ) -> Result<Verdict, ScheduleError> {
        match i {
            Some(i) => self.judge_check(cx, checks, i, host, &mut Decoded::new()),
            None => self.judge(cx, checks, host),
        }
    }

    /// The verdict of every spec in order: the first that fails rejects the host.
    fn judge(&self, cx: &Cx<'_>, checks: &Checks, host: HostId) -> Result<Verdict, ScheduleError> {
        let mut decoded = Decoded::new();
        for i in 0..checks.checks.len() {
            let v = self.judge_check(cx, checks, i, host, &mut decoded)?;
            if !v.is_pass() {
                return Ok(v);
            }
        }
        Ok(Verdict::Pass)
    }

    /// The verdict of spec `i` alone (JSON strings decoded on the way are kept in `decoded`).
    fn judge_check(
        &self,
        cx: &Cx<'_>,
        checks: &Checks,
        i: usize,
        host: HostId,
        decoded: &mut Decoded,
    ) -> Result<Verdict, ScheduleError> {
        let check = &checks.checks[i];
        let name = &check.path[0];
        if check.unscoped && !is_host_state_attribute(name) && stat(cx, host, name).is_none() {
            // Also skips a stats key whose value is null, which Python would check and fail;
            // stats values are strings in Nova.
            return Ok(Verdict::Pass);
        }
        let code = 2 * i as u32;
        let Some(text) = resolve(cx, host, &check.path, decoded) else {
            return Ok(Verdict::reject(code + MISSING));
        };
        match check.requirement.matches(Some(&text)) {
            Ok(true) => Ok(Verdict::Pass),
            Ok(false) => Ok(Verdict::reject(code + MISMATCH)),
            Err(e) => Err(ScheduleError::filter(self.name(), ExtraSpecError::new(&check.key, e))),
        }
    }
}

impl Filter for ComputeCapabilitiesFilter {
    fn name(&self) -> &str {
        "ComputeCapabilitiesFilter"
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(Some(Box::new(Checks::new(cx))))
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        let mut owned = None;
        let checks = cx.state_or::<Checks>(&mut owned, || Checks::new(cx));
        checks.memo.verdict(cx, host, |i, h| self.judge_one(cx, checks, i, h)).unwrap_or(Verdict::reject(ERROR))
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        let mut owned = None;
        let checks = cx.state_or::<Checks>(&mut owned, || Checks::new(cx));
        if checks.checks.is_empty() {
            return mask;
        }
        checks.memo.lanes(cx, chunk, mask, rejected, Reason(ERROR), |i, h| self.judge_one(cx, checks, i, h))
    }

    fn describe(&self, cx: &Cx<'_>, reason: Reason) -> String {
        let mut owned = None;
        let checks = cx.state_or::<Checks>(&mut owned, || Checks::new(cx));
        match checks.checks.get((reason.0 / 2) as usize) {
            Some(c) if reason.0 != ERROR && reason.0 % 2 == MISSING => {
                format!("extra spec {} has no host value", c.key)
            }
            Some(c) if reason.0 != ERROR => format!("extra spec {} does not match", c.key),
            _ => "extra specs cannot be checked".into(),
        }
    }

    fn once_per_request(&self) -> bool {
        true
    }

    fn host_local(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nova::filters::common::testkit::{flavor_request, names, reason, run};
    use crate::request::Request;
    use crate::snapshot::Cluster;
    use crate::snapshot::{HostSpec, ResourceSpec};
    use serde_json::json;

    fn request(specs: &[(&str, &str)]) -> crate::nova::NovaRequest {
        let mut r = flavor_request(1, 0.0, 0.0, 0.0, 0.0, 0.0);
        let f = r.vm.flavor.as_mut().unwrap();
        for (k, v) in specs {
            f.extra_specs.insert(*k, *v);
        }
        r
    }

    fn cluster() -> Cluster {
        let cpu = json!({"arch": "x86_64", "topology": {"cores": 8, "threads": 2}, "features": ["avx", "avx2"],
                          "maxphysaddr": {"bits": 46}, "ratio": 4.0, "big": 1e16, "flag": true});
        Cluster::builder()
            .host(
                HostSpec::new("x86")
                    .resource("memory_mb", ResourceSpec::new(8192.0))
                    .attribute("cpu_info", json!(cpu.to_string()))
                    .attribute("hypervisor_type", json!("QEMU"))
                    .attribute("stats", json!({"rack": "r1", "free_ram_mb": "1"})),
            )
            .host(
                HostSpec::new("arm")
                    .resource("memory_mb", ResourceSpec::new(2048.0))
                    .attribute("cpu_info", json!(json!({"arch": "aarch64", "topology": {"cores": 4}}).to_string()))
                    .attribute("stats", json!({"rack": "r2"})),
            )
            .host(HostSpec::new("bad-json").attribute("cpu_info", json!("{not json")))
            .build()
            .unwrap()
    }

    #[test]
    fn capabilities_paths_through_cpu_info_and_stats() {
        let c = cluster();
        let f = ComputeCapabilitiesFilter;
        assert_eq!(run(&f, &c, &request(&[("capabilities:cpu_info:arch", "x86_64")])).unwrap(), names(&["x86"]));
        assert_eq!(
            run(&f, &c, &request(&[("capabilities:cpu_info:topology:cores", ">= 4")])).unwrap(),
            names(&["x86", "arm"])
        );
        assert_eq!(run(&f, &c, &request(&[("capabilities:rack", "r2")])).unwrap(), names(&["arm"]));
        assert_eq!(run(&f, &c, &request(&[("capabilities:stats:rack", "r1")])).unwrap(), names(&["x86"]));
        assert_eq!(run(&f, &c, &request(&[("capabilities:hypervisor_type", "s== QEMU")])).unwrap(), names(&["x86"]));
        // Lists print in repr form: `<in> avx` also matches avx2, and `'avx2'` with its quotes.
        assert_eq!(
            run(&f, &c, &request(&[("capabilities:cpu_info:features", "<in> 'avx2'")])).unwrap(),
            names(&["x86"])
        );
        assert_eq!(run(&f, &c, &request(&[("capabilities:cpu_info:ratio", "4.0")])).unwrap(), names(&["x86"]));
        assert_eq!(run(&f, &c, &request(&[("capabilities:cpu_info:big", "1e+16")])).unwrap(), names(&["x86"]));
        assert_eq!(run(&f, &c, &request(&[("capabilities:cpu_info:flag", "True")])).unwrap(), names(&["x86"]));
        assert_eq!(
            reason(&f, &c, &request(&[("capabilities:cpu_info:arch", "x86_64")]), "arm"),
            "extra spec capabilities:cpu_info:arch does not match"
        );
        assert_eq!(
            reason(&f, &c, &request(&[("capabilities:cpu_info:arch", "x86_64")]), "bad-json"),
            "extra spec capabilities:cpu_info:arch has no host value"
        );
    }

    #[test]
    fn dead_ends_fail_the_host() {
        let c = cluster();
        let f = ComputeCapabilitiesFilter;
        for key in [
            "capabilities:cpu_info:topology:cores:x",
            "capabilities:",
            "capabilities:cpu_info:nosuch",
            "capabilities:service:disabled",
            "capabilities:stats:rack:x",
        ] {
            assert_eq!(run(&f, &c, &request(&[(key, "")])).unwrap(), Vec::<String>::new(), "{key}");
        }
    }

    #[test]
    fn unscoped_keys_need_an_attribute_or_a_stat() {
        let c = cluster();
        let f = ComputeCapabilitiesFilter;
        // An attribute wins over a stats key of the same name.
        assert_eq!(run(&f, &c, &request(&[("free_ram_mb", ">= 4096")])).unwrap(), names(&["x86"]));
        // Checked per host: the host without a `rack` stat ignores the spec.
        assert_eq!(run(&f, &c, &request(&[("rack", "r1")])).unwrap(), names(&["x86", "bad-json"]));
        // Neither an attribute nor a stat anywhere: ignored.
        assert_eq!(run(&f, &c, &request(&[("ssd", "true")])).unwrap().len(), 3);
        // A HostState attribute that is unset falls back to stats, and fails without it.
        assert_eq!(run(&f, &c, &request(&[("host_ip", "10.0.0.1")])).unwrap(), Vec::<String>::new());
        // Other scopes are not this filter's.
        assert_eq!(
            run(&f, &c, &request(&[("hw:cpu_policy", "dedicated"), ("trust:trusted_host", "x")])).unwrap().len(),
            3
        );
        assert_eq!(run(&f, &c, &Request::new(1)).unwrap().len(), 3);
    }

    #[test]
    fn maxphysaddr_bits_is_rewritten() {
        let c = cluster();
        let f = ComputeCapabilitiesFilter;
        assert_eq!(run(&f, &c, &request(&[("hw:maxphysaddr_bits", "40")])).unwrap(), names(&["x86"]));
        assert_eq!(run(&f, &c, &request(&[("hw:maxphysaddr_bits", "48")])).unwrap(), Vec::<String>::new());
        // It replaces an explicit spec of the same key.
        let both = request(&[("hw:maxphysaddr_bits", "40"), (MAXPHYSADDR_CAPABILITY, "99")]);
        assert_eq!(run(&f, &c, &both).unwrap(), names(&["x86"]));
    }

    #[test]
    fn unevaluable_requirements_fail_the_request() {
        let c = cluster();
        let f = ComputeCapabilitiesFilter;
        let err = run(&f, &c, &request(&[("capabilities:cpu_info:arch", "= 1")])).unwrap_err();
        assert!(err.to_string().contains("ComputeCapabilitiesFilter"), "{err}");
        assert!(run(&f, &c, &request(&[("capabilities:rack", "<or>")])).is_err());
        // A host without the value never reaches the operator.
        assert_eq!(run(&f, &c, &request(&[("capabilities:nosuch", "= x")])).unwrap(), Vec::<String>::new());
        assert!(f.once_per_request() && !crate::nova::runs_on_rebuild(f.name()) && f.host_local());
    }

    #[test]
    fn specs_are_checked_in_the_flavor_order_not_key_order() {
        let c = cluster();
        let f = ComputeCapabilitiesFilter;
        // Every host fails on the rack before the numeric operator meets "x86_64", although
        // `capabilities:cpu_info:arch` sorts first.
        let rack_first = request(&[("capabilities:rack", "r9"), ("capabilities:cpu_info:arch", "= 1")]);
        assert_eq!(run(&f, &c, &rack_first).unwrap(), Vec::<String>::new());
        assert_eq!(reason(&f, &c, &rack_first, "x86"), "extra spec capabilities:rack does not match");
        let arch_first = request(&[("capabilities:cpu_info:arch", "= 1"), ("capabilities:rack", "r9")]);
        let err = run(&f, &c, &arch_first).unwrap_err();
        assert!(err.to_string().contains("capabilities:cpu_info:arch"), "{err}");
    }
}
