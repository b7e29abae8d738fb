//! ImagePropertiesFilter: the host must support the image's architecture, hypervisor type and
//! VM mode, and the hypervisor version it asks for.

use super::classes::{ClassKey, ClassMemo, KeyPart};
use super::common::{canon, image_property, LEGACY_IMAGE_PROPERTIES};
use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::nova::pyvalue::{py_str, py_truthy, PyValue};
use crate::request::{Cx, Prepared};
use regex::Regex;
use serde_json::Value;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// Reason: the host reports no supported instances.
const NO_SUPPORTED: u32 = 0;
/// Reason: no supported triple has every requested property.
const UNSUPPORTED: u32 = 1;
/// Reason: a triple matched, but the hypervisor version does not satisfy the image.
const VERSION: u32 = 2;
/// Reason: the host could not be judged (the request fails).
const ERROR: u32 = 3;

/// The property names, in the order of the checked triple.
const PROPERTIES: [&str; 3] = ["hw_architecture", "img_hv_type", "hw_vm_mode"];

/// The names Nova 34's architecture, hypervisor type and VM mode fields accept, after
/// canonicalisation ([`canon`]), in the order of the checked triple, separated by spaces.
const KNOWN_NAMES: [&str; 3] = [
    "alpha armv6 armv7l armv7b aarch64 cris i686 ia64 lm32 m68k microblaze microblazeel mips mipsel mips64 mips64el openrisc parisc parisc64 ppc ppcle ppc64 ppc64le ppcemb s390 s390x sh4 sh4eb sparc sparc64 unicore32 x86_64 xtensa xtensaeb",
    "baremetal bhyve docker fake hyperv ironic kqemu kvm lxc lxd openvz parallels phyp qemu test uml vbox vz vmware xen zvm prsm",
    "hvm xen uml exe",
];

/// Whether `name` is, exactly as spelt, an architecture Nova knows: the choices of the
/// `image_properties_default_architecture` option, which is not canonicalised.
pub(crate) fn is_architecture(name: &str) -> bool {
    KNOWN_NAMES[0].split(' ').any(|known| known == name)
}

/// Checks `name` as field `field` of the triple (0 architecture, 1 hypervisor type, 2 VM mode)
/// the way Nova's field does: canonicalised, it must be a name Nova knows.
fn known_name(field: usize, name: &str) -> Result<(), String> {
    let (canonical, what) = match field {
        0 => (canon::architecture(name), "architecture"),
        1 => (canon::hv_type(name), "hypervisor type"),
        _ => (canon::vm_mode(name), "VM mode"),
    };
    if KNOWN_NAMES[field].split(' ').any(|known| known == canonical) {
        Ok(())
    } else {
        Err(format!("`{name}` is no {what} Nova knows"))
    }
}

/// Nova's checks of the image properties this filter reads, which its image metadata loader
/// applies to every request before any filter runs (reference §7.2), under the current and the
/// legacy names alike: architecture, hypervisor type and VM mode must be strings naming what
/// Nova knows, and the version predicate a string that parses.
///
/// # Errors
///
/// A message naming the property and its value.
pub(crate) fn check_image_properties(properties: &BTreeMap<String, Value>) -> Result<(), String> {
    for &(legacy, current) in LEGACY_IMAGE_PROPERTIES {
        for name in [legacy, current] {
            let Some(value) = properties.get(name) else { continue };
            let Value::String(text) = value else {
                return Err(format!("image property `{name}` must be a string, not {value}"));
            };
            match PROPERTIES.iter().position(|&p| p == current) {
                Some(field) => known_name(field, text).map_err(|e| format!("image property `{name}`: {e}"))?,
                None => {
                    Predicate::parse(text)?;
                }
            }
        }
    }
    Ok(())
}

/// Nova's check of one `supported_instances` entry of a host (its `HVSpec`): an architecture,
/// a hypervisor type and a VM mode Nova knows; further items are not read.
///
/// # Errors
///
/// A message naming the entry.
pub(crate) fn check_supported_instance(entry: &[String]) -> Result<(), String> {
    if entry.len() < 3 {
        return Err(format!("supported_instances entry {entry:?} is not [architecture, hypervisor type, VM mode]"));
    }
    entry.iter().take(3).enumerate().try_for_each(|(field, name)| known_name(field, name))
}

/// Nova's `ImagePropertiesFilter` (reference §7.2).
///
/// 1. The image's `hw_architecture` (or `image_properties_default_architecture` when it has
///    none), `img_hv_type` and `hw_vm_mode` are read, legacy names included (`architecture`,
///    `hypervisor_type`, `vm_mode`; the current name wins), and canonicalised: lower case,
///    `i386`…`x86_32p` → `i686`, `amd64` → `x86_64`, `xapi` → `xen`, `pv` → `xen`,
///    `hv`/`baremetal` → `hvm`.
/// 2. If none of the three is set, every host passes.
/// 3. A host without `supported_instances` fails.
/// 4. A host passes if one of its canonicalised `[arch, hv_type, vm_mode]` triples contains
///    every set property *anywhere in the triple* and passes the version check: when the image
///    sets `img_hv_requested_version` (legacy `hypervisor_version_requires`) and the host's
///    `hypervisor_version` is non-zero, the version in dotted form (base-1000 groups: 8002000 is
///    `8.2.0`) must satisfy every comma-separated clause `op version` (`<`, `<=`, `==`, `!=`,
///    `>=`, `>`), compared as PEP 440 versions.
///
/// The request fails (as Nova raises) when such a triple is found and the image sets
/// `hw_maxphysaddr_bits` (Nova 34 reads `cpu_info` as a map though it is a JSON string), and when
/// the version predicate does not parse. Runs once per request, and on rebuilds. Reasons: `host
/// reports no supported instances`, `image properties not supported (…)`, `hypervisor version
/// does not satisfy <predicate>`.
///
/// **Host classes.** The verdict reads the host's `supported_instances` and
/// `hypervisor_version` alone: when both are class attributes
/// ([`Cluster::class_attributes`](crate::snapshot::Cluster::class_attributes), as the filter scheduler's
/// reader declares them), the filter judges each distinct pair once per request and reuses the
/// verdict for every host that shares it; otherwise it judges every host.
///
/// ```
/// use placewise::nova::filters::ImagePropertiesFilter;
///
/// let filter = ImagePropertiesFilter::new().image_properties_default_architecture("x86_64");
/// assert_eq!(filter.default_architecture(), Some("x86_64"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImagePropertiesFilter {
    default_architecture: Option<String>,
}

impl ImagePropertiesFilter {
    /// The filter with no default architecture (Nova's default).
    pub fn new() -> Self {
        ImagePropertiesFilter { default_architecture: None }
    }

    /// Sets `image_properties_default_architecture`, used for images without one.
    pub fn image_properties_default_architecture(mut self, arch: impl Into<String>) -> Self {
        self.default_architecture = Some(arch.into());
        self
    }

    /// The default architecture.
    pub fn default_architecture(&self) -> Option<&str> {
        self.default_architecture.as_deref()
    }

    fn wanted(&self, cx: &Cx<'_>) -> Wanted {
        let text = |v: &Value| match v {
            Value::String(s) => s.clone(),
            other => py_str(&PyValue::from(other)),
        };
        let arch = match image_property(cx, PROPERTIES[0]) {
            Some(v) => Some(text(v)),
            None => self.default_architecture.clone(),
        };
        let hv = image_property(cx, PROPERTIES[1]).map(text);
        let mode = image_property(cx, PROPERTIES[2]).map(text);
        let nonempty = |s: Option<String>, f: fn(&str) -> String| s.filter(|s| !s.is_empty()).map(|s| f(&s));
        let props = [nonempty(arch, canon::architecture), nonempty(hv, canon::hv_type), nonempty(mode, canon::vm_mode)];
        let version = image_property(cx, "img_hv_requested_version").map(text).filter(|v| !v.is_empty());
        let predicate = version.as_deref().map(Predicate::parse);
        let maxphysaddr = image_property(cx, "hw_maxphysaddr_bits").is_some_and(|v| py_truthy(&PyValue::from(v)));
        // The verdict reads `supported_instances` and `hypervisor_version` alone.
        let cluster = cx.cluster();
        let key = cluster.class_attribute("supported_instances").zip(cluster.class_attribute("hypervisor_version"));
        let key = key.map(|(si, hv)| ClassKey::new(vec![KeyPart::Attribute(si), KeyPart::Attribute(hv)]));
        Wanted { props, version, predicate, maxphysaddr, memo: ClassMemo::new(key) }
    }

    fn judge(&self, cx: &Cx<'_>, w: &Wanted, host: HostId) -> Result<Verdict, ScheduleError> {
        if w.props.iter().all(Option::is_none) {
            return Ok(Verdict::Pass);
        }
        let view = cx.host_state(host);
        // Borrowed, not cloned: this runs for every host.
        let triples = match cx.host(host).attribute("supported_instances").and_then(|v| v.as_array()) {
            Some(t) if !t.is_empty() => t,
            _ => return Ok(Verdict::reject(NO_SUPPORTED)),
        };
        let mut matched = false;
        for triple in triples {
            if !contains_all(triple, &w.props) {
                continue;
            }
            matched = true;
            if !self.version_ok(w, view.hypervisor_version())? {
                continue;
            }
            if w.maxphysaddr {
                return Err(self.error(
                    "image property hw_maxphysaddr_bits cannot be checked: the host's cpu_info is a JSON string, \
                     not a map (Nova 34 raises AttributeError)",
                ));
            }
            return Ok(Verdict::Pass);
        }
        Ok(Verdict::reject(if matched { VERSION } else { UNSUPPORTED }))
    }

    fn version_ok(&self, w: &Wanted, hypervisor_version: f64) -> Result<bool, ScheduleError> {
        let Some(predicate) = &w.predicate else { return Ok(true) };
        if hypervisor_version == 0.0 || hypervisor_version.is_nan() {
            return Ok(true);
        }
        let predicate = predicate.as_ref().map_err(|e| self.error(e))?;
        Ok(dotted(hypervisor_version).is_some_and(|v| predicate.satisfied_by(&v)))
    }

    fn error(&self, message: &str) -> ScheduleError {
        ScheduleError::filter(self.name(), message)
    }
}

/// What the request's image asks for.
#[derive(Debug, Clone)]
struct Wanted {
    /// Canonical architecture, hypervisor type and VM mode, when set and non-empty.
    props: [Option<String>; 3],
    /// The version predicate as given.
    version: Option<String>,
    /// The version predicate, parsed.
    predicate: Option<Result<Predicate, String>>,
    /// Whether the image sets `hw_maxphysaddr_bits`.
    maxphysaddr: bool,
    /// The verdicts judged so far per host class.
    memo: ClassMemo,
}

/// Whether the canonicalised `triple` holds every wanted property, in any position.
fn contains_all(triple: &Value, props: &[Option<String>; 3]) -> bool {
    let Some(items) = triple.as_array() else { return false };
    let canonical: Vec<Option<String>> = items
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let s = v.as_str()?;
            Some(match i {
                0 => canon::architecture(s),
                1 => canon::hv_type(s),
                2 => canon::vm_mode(s),
                _ => s.to_owned(),
            })
        })
        .collect();
    props.iter().flatten().all(|p| canonical.iter().any(|c| c.as_deref() == Some(p.as_str())))
}

/// oslo's `convert_version_to_str`: base-1000 groups joined by dots (8002000 → `8.2.0`).
fn dotted(version: f64) -> Option<Version> {
    if version.is_nan() || version <= 0.0 || version > 9.0e18 {
        // Nova would loop forever on a negative version; nothing satisfies it here.
        return None;
    }
    let mut v = version as u64;
    let mut groups = Vec::new();
    while v != 0 {
        groups.push(u128::from(v % 1000));
        v /= 1000;
    }
    groups.reverse();
    while groups.last() == Some(&0) {
        groups.pop();
    }
    Some(Version { epoch: 0, release: groups, pre: Pre::Inf, post: None, dev: Dev::Inf, local: None })
}

impl Filter for ImagePropertiesFilter {
    fn name(&self) -> &str {
        "ImagePropertiesFilter"
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(Some(Box::new(self.wanted(cx))))
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        let mut owned = None;
        let w = cx.state_or::<Wanted>(&mut owned, || self.wanted(cx));
        w.memo.verdict(cx, host, |_, h| self.judge(cx, w, h)).unwrap_or(Verdict::reject(ERROR))
    }

    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        let mut owned = None;
        let w = cx.state_or::<Wanted>(&mut owned, || self.wanted(cx));
        if w.props.iter().all(Option::is_none) {
            return mask;
        }
        w.memo.lanes(cx, chunk, mask, rejected, Reason(ERROR), |_, h| self.judge(cx, w, h))
    }

    fn describe(&self, cx: &Cx<'_>, reason: Reason) -> String {
        let mut owned = None;
        let w = cx.state_or::<Wanted>(&mut owned, || self.wanted(cx));
        match reason.0 {
            NO_SUPPORTED => "host reports no supported instances".into(),
            UNSUPPORTED => {
                let set: Vec<String> = PROPERTIES
                    .iter()
                    .zip(&w.props)
                    .filter_map(|(name, v)| v.as_ref().map(|v| format!("{name}={v}")))
                    .collect();
                format!("image properties not supported ({})", set.join(", "))
            }
            VERSION => format!("hypervisor version does not satisfy {}", w.version.as_deref().unwrap_or("")),
            _ => "image properties cannot be checked".into(),
        }
    }

    fn once_per_request(&self) -> bool {
        true
    }

    fn host_local(&self) -> bool {
        true
    }
}

// ---- PEP 440 versions and the version predicate ----

/// The pre-release part of a version's sort key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Pre {
    /// A dev release with no pre- or post-release sorts before every pre-release.
    NegInf,
    /// `a` (0), `b` (1) or `rc` (2), with its number.
    Some(u8, u128),
    /// No pre-release.
    Inf,
}

/// The development part of a version's sort key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Dev {
    Some(u128),
    /// No dev release.
    Inf,
}

/// A segment of a local version label: strings sort before numbers.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum LocalSegment {
    Str(String),
    Int(u128),
}

/// A PEP 440 version, as its sort key (`packaging.version.Version._key`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Version {
    epoch: u128,
    /// Release numbers with trailing zeros removed (`1.0` equals `1`).
    release: Vec<u128>,
    pre: Pre,
    /// `None` sorts first.
    post: Option<u128>,
    dev: Dev,
    /// `None` sorts first.
    local: Option<Vec<LocalSegment>>,
}

fn version_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?ix)^\s*v?
            (?:(?P<epoch>[0-9]+)!)?
            (?P<release>[0-9]+(?:\.[0-9]+)*)
            (?:[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
            (?:-(?P<post_n1>[0-9]+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?)?
            (?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?
            (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
            \s*$",
        )
        // A constant pattern, compiled in every test run: it cannot fail at run time.
        .expect("the version pattern is valid")
    })
}

impl Version {
    /// Parses a PEP 440 version; `None` when it is not one.
    fn parse(s: &str) -> Option<Version> {
        let caps = version_regex().captures(s)?;
        let num = |name: &str| -> Option<Option<u128>> {
            match caps.name(name) {
                None => Some(None),
                Some(m) => m.as_str().parse().ok().map(Some),
            }
        };
        let epoch = num("epoch")?.unwrap_or(0);
        let mut release: Vec<u128> = caps["release"].split('.').map(str::parse).collect::<Result<_, _>>().ok()?;
        while release.last() == Some(&0) {
            release.pop();
        }
        let pre = match caps.name("pre_l") {
            Some(l) => {
                let kind = match l.as_str().to_ascii_lowercase().as_str() {
                    "a" | "alpha" => 0,
                    "b" | "beta" => 1,
                    _ => 2,
                };
                Some((kind, num("pre_n")?.unwrap_or(0)))
            }
            None => None,
        };
        let post = match (num("post_n1")?, caps.name("post_l")) {
            (Some(n), _) => Some(n),
            (None, Some(_)) => Some(num("post_n2")?.unwrap_or(0)),
            (None, None) => None,
        };
        let dev = match caps.name("dev_l") {
            Some(_) => Some(num("dev_n")?.unwrap_or(0)),
            None => None,
        };
        let local = caps.name("local").map(|l| {
            l.as_str()
                .split(['-', '_', '.'])
                .map(|seg| match seg.parse() {
                    Ok(n) => LocalSegment::Int(n),
                    Err(_) => LocalSegment::Str(seg.to_ascii_lowercase()),
                })
                .collect()
        });
        let pre_key = match (pre, post, dev) {
            (None, None, Some(_)) => Pre::NegInf,
            (None, _, _) => Pre::Inf,
            (Some((k, n)), _, _) => Pre::Some(k, n),
        };
        Some(Version { epoch, release, pre: pre_key, post, dev: dev.map_or(Dev::Inf, Dev::Some), local })
    }
}

/// A comparison operator of the predicate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Lt,
    Le,
    Eq,
    Ne,
    Ge,
    Gt,
}

/// `img_hv_requested_version`: comma-separated clauses, all of which must hold.
#[derive(Debug, Clone, PartialEq)]
struct Predicate {
    clauses: Vec<(Op, Version)>,
}

impl Predicate {
    /// Parses `op version[, op version …]`.
    fn parse(s: &str) -> Result<Predicate, String> {
        let bad = |why: &str| format!("invalid img_hv_requested_version `{s}`: {why}");
        let mut clauses = Vec::new();
        for clause in s.split(',') {
            let clause = clause.trim();
            let (op, rest) =
                [("<=", Op::Le), (">=", Op::Ge), ("==", Op::Eq), ("!=", Op::Ne), ("<", Op::Lt), (">", Op::Gt)]
                    .iter()
                    .find_map(|(text, op)| clause.strip_prefix(text).map(|rest| (*op, rest.trim_start())))
                    .ok_or_else(|| bad(&format!("`{clause}` is not `op version`")))?;
            if rest.is_empty() || rest.contains(char::is_whitespace) {
                return Err(bad(&format!("`{clause}` is not `op version`")));
            }
            let version = Version::parse(rest).ok_or_else(|| bad(&format!("`{rest}` is not a version")))?;
            clauses.push((op, version));
        }
        Ok(Predicate { clauses })
    }

    /// Whether `v` satisfies every clause.
    fn satisfied_by(&self, v: &Version) -> bool {
        self.clauses.iter().all(|(op, want)| {
            let ord = v.cmp(want);
            match op {
                Op::Lt => ord == Ordering::Less,
                Op::Le => ord != Ordering::Greater,
                Op::Eq => ord == Ordering::Equal,
                Op::Ne => ord != Ordering::Equal,
                Op::Ge => ord != Ordering::Less,
                Op::Gt => ord == Ordering::Greater,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nova::filters::common::testkit::{names, reason, run, vm_request};
    use crate::nova::request::NovaRequest;
    use crate::nova::request::{Image, VmSpec};
    use crate::request::Request;
    use crate::snapshot::Cluster;
    use crate::snapshot::HostSpec;
    use serde_json::json;

    /// Regression (campaign 16's mutants against Nova): names Nova's fields refuse were read as
    /// given; Nova raises for them before any filter runs.
    #[test]
    fn image_properties_and_supported_instances_are_checked_as_novas_fields_check_them() {
        let props = |v: serde_json::Value| v.as_object().unwrap().clone().into_iter().collect::<BTreeMap<_, _>>();
        let good = props(json!({"hw_architecture": "AMD64", "img_hv_type": "XAPI", "vm_mode": "pv",
            "img_hv_requested_version": ">=1, < 2.5", "os_distro": "anything"}));
        assert_eq!(check_image_properties(&good), Ok(()));
        for (bad, says) in [
            (json!({"hw_architecture": "x86"}), "`hw_architecture`: `x86` is no architecture"),
            (json!({"architecture": ""}), "`architecture`: `` is no architecture"),
            (json!({"hw_architecture": "x86_64", "architecture": "foo"}), "`architecture`: `foo`"),
            (json!({"img_hv_type": "qemuu"}), "`qemuu` is no hypervisor type"),
            (json!({"hw_vm_mode": "h"}), "`h` is no VM mode"),
            (json!({"hw_vm_mode": null}), "`hw_vm_mode` must be a string, not null"),
            (json!({"img_hv_requested_version": 5}), "must be a string, not 5"),
            (json!({"hypervisor_version_requires": "= 5"}), "invalid img_hv_requested_version `= 5`"),
        ] {
            let err = check_image_properties(&props(bad.clone())).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }

        let entry = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        assert_eq!(check_supported_instance(&entry(&["I386", "QEMU", "HV", "extra"])), Ok(()));
        assert!(check_supported_instance(&entry(&["x86_64", "qemu"])).unwrap_err().contains("is not [architecture"));
        assert!(check_supported_instance(&entry(&["x86_64", "kvm", "pvm"]))
            .unwrap_err()
            .contains("`pvm` is no VM mode"));
    }

    fn request(props: serde_json::Value) -> NovaRequest {
        let properties = props.as_object().unwrap().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        vm_request(1, VmSpec { image: Some(Image { id: Some("img".into()), properties }), ..Default::default() })
    }

    fn cluster() -> Cluster {
        Cluster::builder()
            .host(
                HostSpec::new("x86-qemu")
                    .attribute("supported_instances", json!([["x86_64", "qemu", "hvm"], ["i686", "qemu", "hvm"]]))
                    .attribute("hypervisor_version", json!(8002000)),
            )
            .host(
                HostSpec::new("arm-kvm")
                    .attribute("supported_instances", json!([["aarch64", "kvm", "hvm"]]))
                    .attribute("hypervisor_version", json!(6000000)),
            )
            .host(HostSpec::new("xen").attribute("supported_instances", json!([["AMD64", "XAPI", "pv"]])))
            .host(HostSpec::new("none").attribute("supported_instances", json!([])))
            .build()
            .unwrap()
    }

    #[test]
    fn architecture_hypervisor_and_mode() {
        let c = cluster();
        let f = ImagePropertiesFilter::new();
        assert_eq!(run(&f, &c, &request(json!({"hw_architecture": "x86_64"}))).unwrap(), names(&["x86-qemu", "xen"]));
        assert_eq!(
            run(&f, &c, &request(json!({"hw_architecture": "amd64", "img_hv_type": "xapi"}))).unwrap(),
            names(&["xen"])
        );
        assert_eq!(run(&f, &c, &request(json!({"hw_architecture": "i386"}))).unwrap(), names(&["x86-qemu"]));
        assert_eq!(run(&f, &c, &request(json!({"hw_vm_mode": "HV"}))).unwrap(), names(&["x86-qemu", "arm-kvm"]));
        // Membership anywhere in the triple: `xen` as a VM mode matches the xen hypervisor slot too.
        assert_eq!(run(&f, &c, &request(json!({"hw_vm_mode": "xen"}))).unwrap(), names(&["xen"]));
        assert_eq!(run(&f, &c, &request(json!({"img_hv_type": "hvm"}))).unwrap(), names(&["x86-qemu", "arm-kvm"]));
        assert_eq!(
            reason(&f, &c, &request(json!({"hw_architecture": "x86_64"})), "none"),
            "host reports no supported instances"
        );
        assert_eq!(
            reason(&f, &c, &request(json!({"hw_architecture": "x86_64", "img_hv_type": "kvm"})), "arm-kvm"),
            "image properties not supported (hw_architecture=x86_64, img_hv_type=kvm)"
        );
    }

    #[test]
    fn nothing_set_passes_everything() {
        let c = cluster();
        let f = ImagePropertiesFilter::new();
        assert_eq!(run(&f, &c, &request(json!({"hw_architecture": "", "os_type": "linux"}))).unwrap().len(), 4);
        assert_eq!(run(&f, &c, &Request::new(1)).unwrap().len(), 4);
        // Not even the version check runs.
        assert_eq!(run(&f, &c, &request(json!({"img_hv_requested_version": ">= 99"}))).unwrap().len(), 4);
        let defaulted = ImagePropertiesFilter::new().image_properties_default_architecture("aarch64");
        assert_eq!(run(&defaulted, &c, &Request::new(1)).unwrap(), names(&["arm-kvm"]));
        assert_eq!(
            run(&defaulted, &c, &request(json!({"hw_architecture": "x86_64"}))).unwrap(),
            names(&["x86-qemu", "xen"])
        );
    }

    #[test]
    fn legacy_names_and_current_names_win() {
        let c = cluster();
        let f = ImagePropertiesFilter::new();
        assert_eq!(run(&f, &c, &request(json!({"architecture": "aarch64"}))).unwrap(), names(&["arm-kvm"]));
        assert_eq!(
            run(&f, &c, &request(json!({"architecture": "aarch64", "hw_architecture": "x86_64"}))).unwrap(),
            names(&["x86-qemu", "xen"])
        );
        assert_eq!(run(&f, &c, &request(json!({"hypervisor_type": "kvm"}))).unwrap(), names(&["arm-kvm"]));
        assert_eq!(run(&f, &c, &request(json!({"vm_mode": "pv"}))).unwrap(), names(&["xen"]));
        assert_eq!(
            run(&f, &c, &request(json!({"hw_architecture": "x86_64", "hypervisor_version_requires": ">= 9"}))).unwrap(),
            names(&["xen"])
        );
    }

    #[test]
    fn hypervisor_version_predicate() {
        let c = cluster();
        let f = ImagePropertiesFilter::new();
        let with = |pred: &str| request(json!({"hw_vm_mode": "hvm", "img_hv_requested_version": pred}));
        assert_eq!(run(&f, &c, &with(">= 8.0")).unwrap(), names(&["x86-qemu"]));
        assert_eq!(run(&f, &c, &with("== 8.2")).unwrap(), names(&["x86-qemu"]));
        assert_eq!(run(&f, &c, &with(">=6, <8.2")).unwrap(), names(&["arm-kvm"]));
        assert_eq!(run(&f, &c, &with("!= 6.0.0")).unwrap(), names(&["x86-qemu"]));
        assert_eq!(run(&f, &c, &with("> 8.2.0a1")).unwrap(), names(&["x86-qemu"]));
        assert_eq!(reason(&f, &c, &with(">= 9"), "x86-qemu"), "hypervisor version does not satisfy >= 9");
        // A host without a version skips the check.
        let c2 = Cluster::builder()
            .host(HostSpec::new("h").attribute("supported_instances", json!([["x86_64", "kvm", "hvm"]])))
            .build()
            .unwrap();
        assert_eq!(run(&f, &c2, &with(">= 99")).unwrap(), names(&["h"]));
        let bad = run(&f, &c, &with("~= 8")).unwrap_err();
        assert!(bad.to_string().contains("invalid img_hv_requested_version `~= 8`"), "{bad}");
        assert!(run(&f, &c, &with(">= 8,")).is_err());
        assert!(run(&f, &c, &with(">= eight")).is_err());
    }

    #[test]
    fn maxphysaddr_bits_fails_the_request_once_a_triple_matches() {
        let c = cluster();
        let f = ImagePropertiesFilter::new();
        let err = run(&f, &c, &request(json!({"hw_architecture": "aarch64", "hw_maxphysaddr_bits": 42}))).unwrap_err();
        assert!(err.to_string().contains("hw_maxphysaddr_bits"), "{err}");
        // No matching triple, or no checked property: no error.
        assert_eq!(
            run(&f, &c, &request(json!({"hw_architecture": "sparc", "hw_maxphysaddr_bits": 42}))).unwrap().len(),
            0
        );
        assert_eq!(run(&f, &c, &request(json!({"hw_maxphysaddr_bits": 42}))).unwrap().len(), 4);
        assert!(f.once_per_request() && crate::nova::runs_on_rebuild(f.name()) && f.host_local());
    }

    #[test]
    fn pep440_ordering() {
        let v = |s: &str| Version::parse(s).unwrap_or_else(|| panic!("{s}"));
        assert_eq!(v("8.2"), v("8.2.0"));
        assert_eq!(v("v1.0"), v("1"));
        assert!(v("1.0a1") < v("1.0b1") && v("1.0b1") < v("1.0rc1") && v("1.0rc1") < v("1.0"));
        assert!(v("1.0.dev1") < v("1.0a1") && v("1.0") < v("1.0.post1") && v("1.0.post1") < v("1.1"));
        assert!(v("1.0") < v("1.0+local") && v("1.0+abc") < v("1.0+1"));
        assert!(v("1!0.1") > v("9.9"));
        assert_eq!(v("1.0-1"), v("1.0.post1"));
        assert_eq!(v("1.0alpha2"), v("1.0a2"));
        assert!(Version::parse("1..0").is_none() && Version::parse("x").is_none() && Version::parse("").is_none());
        assert_eq!(dotted(8002000.0), Some(v("8.2.0")));
        assert_eq!(dotted(5.0), Some(v("5")));
        assert_eq!(dotted(-5.0), None);
    }
}
