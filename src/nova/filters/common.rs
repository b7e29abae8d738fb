//! Pieces the filter scheduler's filters share: the flavor's sizes, scheduler hints, aggregate
//! metadata read the two ways (reference §2), Python's `int()`, the current instance's UUID and
//! the request's server-group state.

use super::classes::{ClassKey, ClassMemo, KeyPart};
use crate::id::{HostId, InputSet};
use crate::nova::pyvalue::{parse_py_float, parse_py_int};
use crate::nova::request::{Flavor, GroupMembers, ServerGroup, VmSpec};
use crate::request::Cx;
use crate::snapshot::{
    check_attributes, check_metadata, AttributeKey, AttributeType, AttributeWarning, Cluster, Host, MetadataKey,
};
use serde_json::Value;

/// The attribute names of Nova's `HostState` (`getattr(host_state, name)` finds them, possibly
/// as `None`). ComputeCapabilitiesFilter checks an unscoped extra spec only when its key is one
/// of these or a `stats` key, and JsonFilter's `$name` resolves only these.
pub(super) const HOST_STATE_ATTRIBUTES: &[&str] = &[
    "aggregates",
    "cell_uuid",
    "cpu_allocation_ratio",
    "cpu_info",
    "disk_allocation_ratio",
    "disk_mb_used",
    "failed_builds",
    "free_disk_mb",
    "free_ram_mb",
    "host",
    "host_ip",
    "hypervisor_hostname",
    "hypervisor_type",
    "hypervisor_version",
    "instances",
    "limits",
    "metrics",
    "nodename",
    "num_instances",
    "num_io_ops",
    "numa_topology",
    "pci_stats",
    "ram_allocation_ratio",
    "service",
    "stats",
    "supported_instances",
    "total_usable_disk_gb",
    "total_usable_ram_mb",
    "updated",
    "uuid",
    "vcpus_total",
    "vcpus_used",
];

/// The host attributes the filter scheduler's filters read from a host's attribute table (as
/// [`Scenario`](crate::nova::scenario::Scenario) writes them), with their types. `cpu_info` is
/// JSON text or an object.
pub const NOVA_HOST_ATTRIBUTES: &[AttributeKey] = &[
    ("cpu_info", AttributeType::Any),
    ("failed_builds", AttributeType::Number),
    ("forced_down", AttributeType::Bool),
    ("free_pci_devices", AttributeType::Number),
    ("host_ip", AttributeType::String),
    ("hypervisor_hostname", AttributeType::String),
    ("hypervisor_type", AttributeType::String),
    ("hypervisor_version", AttributeType::Number),
    ("metrics_without_value", AttributeType::Array),
    ("nodename", AttributeType::String),
    ("num_instances", AttributeType::Number),
    ("num_io_ops", AttributeType::Number),
    ("stats", AttributeType::Object),
    ("supported_instances", AttributeType::Array),
    ("trust_level", AttributeType::String),
    ("uuid", AttributeType::String),
];

/// Whether Python's `float()` reads `value`.
fn reads_as_float(value: &str) -> bool {
    parse_py_float(value).is_some()
}

/// Whether Python's `int()` reads `value`.
fn reads_as_int(value: &str) -> bool {
    parse_py_int(value).is_some()
}

/// The aggregate metadata keys the filter scheduler's filters read by name, with the parser of
/// the numeric ones (a value it refuses discards the key on every host of the aggregate).
/// Other keys are read too, by the image-property and extra-spec filters, under names the
/// request chooses; those cannot be checked.
pub const NOVA_AGGREGATE_METADATA: &[MetadataKey] = &[
    MetadataKey { name: "availability_zone", prefix: false, parses: None },
    MetadataKey { name: "cpu_allocation_ratio", prefix: false, parses: Some(reads_as_float) },
    MetadataKey { name: "disk_allocation_ratio", prefix: false, parses: Some(reads_as_float) },
    MetadataKey { name: "filter_tenant_id", prefix: true, parses: None },
    MetadataKey { name: "instance_type", prefix: false, parses: None },
    MetadataKey { name: "max_instances_per_host", prefix: false, parses: Some(reads_as_int) },
    MetadataKey { name: "max_io_ops_per_host", prefix: false, parses: Some(reads_as_int) },
    MetadataKey { name: "ram_allocation_ratio", prefix: false, parses: Some(reads_as_float) },
];

/// What the filter scheduler's filters would silently read as a default in `cluster`: host
/// attributes that look like misspellings of [`NOVA_HOST_ATTRIBUTES`] or hold a value of
/// another type, aggregate metadata keys that look like misspellings of
/// [`NOVA_AGGREGATE_METADATA`], and numeric metadata that does not parse. Hosts first, then
/// aggregates. Call it once per snapshot (it visits every attribute and metadata key).
pub fn nova_attribute_warnings(cluster: &Cluster) -> Vec<AttributeWarning> {
    let mut warnings = check_attributes(cluster, NOVA_HOST_ATTRIBUTES);
    warnings.extend(check_metadata(cluster, NOVA_AGGREGATE_METADATA));
    warnings
}

/// Whether `name` is an attribute of Nova's `HostState`.
pub(super) fn is_host_state_attribute(name: &str) -> bool {
    HOST_STATE_ATTRIBUTES.binary_search(&name).is_ok()
}

/// The request's flavor.
pub(super) fn flavor<'a>(cx: &Cx<'a>) -> Option<&'a Flavor> {
    VmSpec::of(cx).flavor.as_ref()
}

/// The flavor's `field` (via `pick`), or, for a request without a flavor, its per-instance amount
/// of the resource kind `kind` (0 when absent).
pub(super) fn flavor_or_resource(cx: &Cx<'_>, pick: fn(&Flavor) -> f64, kind: &str) -> f64 {
    match flavor(cx) {
        Some(f) => pick(f),
        None => cx.request().resources.get(kind).copied().unwrap_or(0.0),
    }
}

/// A scheduler hint as Nova's `get_scheduler_hint` hands it to a filter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Hint<'a> {
    /// Absent or JSON `null`.
    Absent,
    /// A string, or a list holding exactly one string (Nova unwraps those).
    Str(&'a str),
    /// Any other list.
    List(&'a [Value]),
    /// Any other JSON value.
    Other(&'a Value),
}

impl Hint<'_> {
    /// Python's truth value of the hint.
    pub(super) fn is_truthy(&self) -> bool {
        match self {
            Hint::Absent => false,
            Hint::Str(s) => !s.is_empty(),
            Hint::List(items) => !items.is_empty(),
            Hint::Other(v) => match v {
                Value::Bool(b) => *b,
                Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
                Value::Object(m) => !m.is_empty(),
                _ => true,
            },
        }
    }
}

/// The hint `name` of `vm`.
pub(super) fn hint<'a>(vm: &'a VmSpec, name: &str) -> Hint<'a> {
    match vm.hints.get(name) {
        None | Some(Value::Null) => Hint::Absent,
        Some(Value::String(s)) => Hint::Str(s),
        Some(Value::Array(items)) => match items.as_slice() {
            [Value::String(s)] => Hint::Str(s),
            _ => Hint::List(items),
        },
        Some(other) => Hint::Other(other),
    }
}

/// The raw value of metadata `key` in each of `host`'s aggregates that sets it (a value may
/// repeat when two aggregates set the same one).
pub(super) fn raw_values<'a>(cluster: &'a Cluster, host: &'a Host, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    let aggregates = cluster.aggregates();
    host.aggregates
        .iter()
        .filter_map(move |a| aggregates.get(a.index()).and_then(|agg| agg.metadata.get(key)).map(String::as_str))
}

/// Whether one of `host`'s aggregates sets metadata `key`.
pub(super) fn sets_key(cluster: &Cluster, host: &Host, key: &str) -> bool {
    raw_values(cluster, host, key).next().is_some()
}

/// "Metadata by host" for one key: the comma-split, stripped values of `key` across `host`'s
/// aggregates (with repeats), or nothing when no aggregate sets it (see [`sets_key`]).
pub(crate) fn metadata_values<'a>(
    cluster: &'a Cluster,
    host: &'a Host,
    key: &'a str,
) -> impl Iterator<Item = &'a str> + 'a {
    cluster.metadata_values(host, key)
}

/// One aggregate's number for a metadata key.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Slot {
    Unset,
    Value(f64),
    Invalid,
}

/// A numeric metadata key parsed once per aggregate, for the "raw values of one key" rule: a
/// host's value is the minimum over its aggregates, and one unparsable value discards them all.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct AggregateNumbers {
    slots: Vec<Slot>,
    any: bool,
}

impl AggregateNumbers {
    /// Parses `key` of every aggregate of `cluster` with `parse`. Computes in O(aggregates).
    pub(super) fn new(cluster: &Cluster, key: &str, parse: fn(&str) -> Option<f64>) -> Self {
        let slots: Vec<Slot> = cluster
            .aggregates()
            .iter()
            .map(|a| match a.metadata.get(key) {
                None => Slot::Unset,
                Some(raw) => parse(raw).map_or(Slot::Invalid, Slot::Value),
            })
            .collect();
        let any = slots.iter().any(|s| *s != Slot::Unset);
        AggregateNumbers { slots, any }
    }

    /// Whether some aggregate of the cluster sets the key.
    pub(super) fn any(&self) -> bool {
        self.any
    }

    /// The smallest value over `host`'s aggregates; `None` when none sets the key or one value
    /// does not parse (the caller then uses its default). NaN loses to any number (Python's
    /// `min` over a set would depend on the set's order).
    pub(super) fn host_min(&self, host: &Host) -> Option<f64> {
        if !self.any {
            return None;
        }
        let mut min: Option<f64> = None;
        for a in &host.aggregates {
            match self.slots.get(a.index()).copied().unwrap_or(Slot::Unset) {
                Slot::Unset => {}
                Slot::Invalid => return None,
                Slot::Value(v) => min = Some(min.map_or(v, |m| m.min(v))),
            }
        }
        min
    }
}

/// `parse_py_float` as a `fn` pointer.
pub(super) fn py_float(s: &str) -> Option<f64> {
    parse_py_float(s)
}

/// `parse_py_int` as a float, for [`AggregateNumbers`].
pub(super) fn py_int_as_f64(s: &str) -> Option<f64> {
    parse_py_int(s).map(|i| i as f64)
}

/// The request's server group if its policy is `policy`.
pub(super) fn group_with_policy<'a>(cx: &Cx<'a>, policy: &str) -> Option<&'a ServerGroup> {
    VmSpec::of(cx).group_with_policy(policy)
}

/// A server group's host names and members, hashed once per request.
#[derive(Debug, Clone, Default)]
pub(super) struct GroupSets {
    /// `hosts` of the group.
    pub(super) hosts: InputSet<String>,
    /// `members` of the group, and which of the request's instances are members.
    pub(super) members: GroupMembers,
}

impl GroupSets {
    /// The sets of `group` for the request of `cx`. Computes in O(hosts + members + instances).
    pub(super) fn new(cx: &Cx<'_>, group: &ServerGroup) -> Self {
        let members = GroupMembers::new(VmSpec::of(cx), cx.request().count, group);
        GroupSets { hosts: group.hosts.iter().cloned().collect(), members }
    }
}

/// Whether `host` is among the group's hosts during the request: listed in `hosts`, or picked for
/// an earlier instance of the request (Nova appends each pick to the group's hosts).
pub(super) fn in_group_hosts(cx: &Cx<'_>, group: &ServerGroup, sets: Option<&GroupSets>, host: HostId) -> bool {
    let cluster = cx.cluster();
    // A pick on any node of the service host adds the service host's name.
    if cluster.service_nodes(host).any(|n| cx.overlay().placed(n) > 0) {
        return true;
    }
    let name = cluster.service_host_name(host);
    match sets {
        Some(s) => s.hosts.contains(name),
        None => group.hosts.iter().any(|h| h == name),
    }
}

/// Whether the group's hosts are non-empty during the request.
pub(super) fn group_has_hosts(cx: &Cx<'_>, group: &ServerGroup) -> bool {
    !group.hosts.is_empty() || cx.overlay().touched().next().is_some()
}

/// The number of group members on `host` during the request: its instances listed in `members`,
/// plus the instances of this request placed there that are members ([`GroupMembers::on_host`]).
pub(super) fn members_on_host(cx: &Cx<'_>, group: &ServerGroup, sets: Option<&GroupSets>, host: HostId) -> u64 {
    let (cluster, overlay) = (cx.cluster(), cx.overlay());
    match sets {
        Some(s) => s.members.on_host(cluster, overlay, host),
        // Judged without `prepare` (a direct call): hash the members for this one host.
        None => GroupMembers::new(VmSpec::of(cx), cx.request().count, group).on_host(cluster, overlay, host),
    }
}

/// Lower-cased canonical names (reference §7.2, step 1).
pub(super) mod canon {
    /// `hw_architecture`: `i386`…`x86_32p` → `i686`, `amd64` → `x86_64`.
    pub(in super::super) fn architecture(name: &str) -> String {
        let lower = name.to_lowercase();
        match lower.as_str() {
            "i386" | "i486" | "i586" | "x86_32" | "x86_32p" => "i686".into(),
            "amd64" => "x86_64".into(),
            _ => lower,
        }
    }

    /// `img_hv_type`: `xapi` → `xen`.
    pub(in super::super) fn hv_type(name: &str) -> String {
        let lower = name.to_lowercase();
        if lower == "xapi" {
            "xen".into()
        } else {
            lower
        }
    }

    /// `hw_vm_mode`: `pv` → `xen`; `hv` and `baremetal` → `hvm`.
    pub(in super::super) fn vm_mode(name: &str) -> String {
        let lower = name.to_lowercase();
        match lower.as_str() {
            "pv" => "xen".into(),
            "hv" | "baremetal" => "hvm".into(),
            _ => lower,
        }
    }
}

/// Image property names the image metadata loader maps to their current names (the current name
/// wins when both are given).
pub(super) const LEGACY_IMAGE_PROPERTIES: &[(&str, &str)] = &[
    ("architecture", "hw_architecture"),
    ("hypervisor_type", "img_hv_type"),
    ("vm_mode", "hw_vm_mode"),
    ("hypervisor_version_requires", "img_hv_requested_version"),
];

/// The image property `name` of the request, looked up under its legacy name too.
pub(super) fn image_property<'a>(cx: &Cx<'a>, name: &str) -> Option<&'a Value> {
    let props = &VmSpec::of(cx).image.as_ref()?.properties;
    if let Some(v) = props.get(name).filter(|v| !v.is_null()) {
        return Some(v);
    }
    let legacy = LEGACY_IMAGE_PROPERTIES.iter().find(|(_, current)| *current == name)?.0;
    props.get(legacy).filter(|v| !v.is_null())
}

#[cfg(test)]
pub(crate) mod testkit {
    //! Runs one filter over a cluster the way the scheduler does, checking that the chunk path
    //! and the per-host path agree.

    use crate::error::ScheduleError;
    pub(crate) use crate::filter::testkit::{names, reason, run, run_at, Parts};
    use crate::filter::Filter;
    use crate::nova::request::NovaRequest;
    use crate::request::{Part, Request};
    use crate::snapshot::Cluster;

    impl Parts for NovaRequest {
        fn parts(&self) -> (&Request, Option<Part<'_>>) {
            (&self.request, Some(&self.vm))
        }
    }

    /// A one-instance request with this flavor (memory MiB, vCPUs, root GiB, ephemeral GiB,
    /// swap MiB); the request's resources are set to what the flavor consumes.
    pub(crate) fn flavor_request(
        count: u32,
        memory_mb: f64,
        vcpus: f64,
        root_gb: f64,
        ephemeral_gb: f64,
        swap: f64,
    ) -> NovaRequest {
        let flavor = crate::nova::request::Flavor {
            name: "m1.test".into(),
            memory_mb,
            vcpus,
            root_gb,
            ephemeral_gb,
            swap,
            ..Default::default()
        };
        let vm = crate::nova::request::VmSpec { flavor: Some(flavor), ..Default::default() };
        NovaRequest::new(Request::new(count).memory_mb(memory_mb).vcpus(vcpus).disk_gb(root_gb + ephemeral_gb), vm)
    }

    /// A request for `count` instances with this VM part.
    pub(crate) fn vm_request(count: u32, vm: crate::nova::request::VmSpec) -> NovaRequest {
        NovaRequest::new(Request::new(count), vm)
    }

    /// A request for `count` instances in a server group with `policy`, `hosts` and `members`.
    pub(crate) fn group_request(count: u32, policy: &str, hosts: &[&str], members: &[&str]) -> NovaRequest {
        let group = crate::nova::request::ServerGroup {
            name: "g".into(),
            policy: policy.into(),
            hosts: hosts.iter().map(|h| h.to_string()).collect(),
            members: members.iter().map(|m| m.to_string()).collect(),
            ..Default::default()
        };
        vm_request(count, crate::nova::request::VmSpec { server_group: Some(group), ..Default::default() })
    }

    /// The hosts picked by a scheduler made of `filter` alone (ties go to the lowest id).
    pub(crate) fn picks(
        filter: impl Filter + 'static,
        cluster: &Cluster,
        request: &impl Parts,
    ) -> Result<Vec<String>, ScheduleError> {
        let s = crate::nova::NovaScheduler::builder().filter(filter).build().expect("scheduler builds");
        let (core, vm) = request.parts();
        let p = s.schedule(
            cluster,
            &NovaRequest::new(
                core.clone(),
                vm.and_then(|p| p.downcast_ref::<crate::nova::request::VmSpec>()).cloned().unwrap_or_default(),
            ),
        )?;
        Ok(p.selections.iter().map(|s| s.host_name.clone()).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{assert_every_key_is_checked, AggregateSpec, HostSpec};

    #[test]
    fn every_host_attribute_the_filters_read_is_checked_for_misspelling_and_type() {
        assert_every_key_is_checked(NOVA_HOST_ATTRIBUTES, nova_attribute_warnings);
        let cluster = Cluster::builder()
            .host(HostSpec::new("h").attribute("hypervisor-type", serde_json::json!("QEMU")))
            .build()
            .unwrap();
        assert_eq!(
            nova_attribute_warnings(&cluster)[0].to_string(),
            "host `h`: attribute `hypervisor-type` is not read; did you mean `hypervisor_type`?"
        );
    }

    #[test]
    fn every_metadata_key_the_filters_read_is_checked_for_misspelling_and_value() {
        for key in NOVA_AGGREGATE_METADATA {
            let shouted = key.name.to_uppercase();
            let dropped = &key.name[..key.name.len() - 1];
            for (i, wrong) in [shouted.as_str(), dropped].into_iter().enumerate() {
                if key.prefix && wrong.starts_with(key.name) {
                    continue;
                }
                let name = format!("a{i}");
                let cluster =
                    Cluster::builder().aggregate(AggregateSpec::new(&name).metadata(wrong, "1")).build().unwrap();
                let expected =
                    AttributeWarning::MisspeltMetadata { aggregate: name, key: wrong.into(), known: key.name };
                assert_eq!(nova_attribute_warnings(&cluster), [expected], "`{wrong}` for `{}`", key.name);
            }
            let cluster =
                Cluster::builder().aggregate(AggregateSpec::new("v").metadata(key.name, "lots")).build().unwrap();
            let found = nova_attribute_warnings(&cluster);
            let unreadable = AttributeWarning::UnreadableMetadata {
                aggregate: "v".into(),
                key: key.name.into(),
                value: "lots".into(),
            };
            assert_eq!(found.contains(&unreadable), key.parses.is_some(), "`{}`: {found:?}", key.name);
        }
        // Values the filters read, and keys under a known prefix or of the request's choosing.
        let fine = Cluster::builder()
            .aggregate(
                AggregateSpec::new("ok")
                    .metadata("cpu_allocation_ratio", " 1_5e-1 ")
                    .metadata("max_io_ops_per_host", " 5 ")
                    .metadata("filter_tenant_id_2", "t")
                    .metadata("hw_architecture", "x86_64")
                    .metadata("ssd", "true"),
            )
            .build()
            .unwrap();
        assert_eq!(nova_attribute_warnings(&fine), []);
    }

    #[test]
    fn host_state_attributes_are_sorted() {
        assert!(HOST_STATE_ATTRIBUTES.windows(2).all(|w| w[0] < w[1]));
        assert!(is_host_state_attribute("free_ram_mb"));
        assert!(!is_host_state_attribute("trust_level"));
    }

    #[test]
    fn hints_unwrap_one_item_lists() {
        let mut vm = VmSpec::default();
        vm.hints.insert("a".into(), serde_json::json!(["x"]));
        vm.hints.insert("b".into(), serde_json::json!(["x", "y"]));
        vm.hints.insert("c".into(), serde_json::json!([]));
        vm.hints.insert("d".into(), serde_json::json!(null));
        assert_eq!(hint(&vm, "a"), Hint::Str("x"));
        assert!(matches!(hint(&vm, "b"), Hint::List(l) if l.len() == 2));
        assert!(!hint(&vm, "c").is_truthy());
        assert_eq!(hint(&vm, "d"), Hint::Absent);
        assert_eq!(hint(&vm, "e"), Hint::Absent);
    }

    #[test]
    fn canonical_names() {
        assert_eq!(canon::architecture("AMD64"), "x86_64");
        assert_eq!(canon::architecture("i486"), "i686");
        assert_eq!(canon::architecture("x86_32p"), "i686");
        assert_eq!(canon::hv_type("XAPI"), "xen");
        assert_eq!(canon::vm_mode("pv"), "xen");
        assert_eq!(canon::vm_mode("baremetal"), "hvm");
        assert_eq!(canon::vm_mode("HV"), "hvm");
    }
}

/// Reason code for a request whose extra specs cannot be checked (it fails the whole request).
pub(super) const SPEC_ERROR: u32 = u32::MAX;

/// The shape of an extra-spec filter whose verdicts are memoised per whole class key
/// ([`ClassMemo`]; AggregateInstanceExtraSpecsFilter): a list of checks built once per request
/// from the flavor (`prepare`), judged host by host by a judge that may fail the request.
pub(super) trait SpecChecks: Send + Sync + Sized + 'static {
    /// The checks of the request in `cx`.
    fn build(cx: &Cx<'_>) -> Self;
    /// Whether there is nothing to check (every host passes).
    fn is_empty(&self) -> bool;
    /// The verdicts judged so far per host class.
    fn memo(&self) -> &ClassMemo;
}

/// [`Filter::check`](crate::filter::Filter::check) for a [`SpecChecks`] filter: the prepared checks, or
/// checks built on the spot without preparation; an error rejects with [`SPEC_ERROR`].
pub(super) fn judge_host<C: SpecChecks>(
    cx: &Cx<'_>,
    host: HostId,
    judge: impl Fn(&C, HostId) -> Result<crate::filter::Verdict, crate::error::ScheduleError>,
) -> crate::filter::Verdict {
    let mut owned = None;
    let checks = cx.state_or::<C>(&mut owned, || C::build(cx));
    checks.memo().verdict(cx, host, |_, h| judge(checks, h)).unwrap_or(crate::filter::Verdict::reject(SPEC_ERROR))
}

/// [`Filter::check_chunk`](crate::filter::Filter::check_chunk) for a [`SpecChecks`] filter: every lane
/// passes when there is nothing to check; a judge error fails the request.
pub(super) fn judge_chunk<C: SpecChecks>(
    cx: &Cx<'_>,
    chunk: usize,
    mask: u64,
    rejected: &mut crate::filter::Rejections,
    judge: impl Fn(&C, HostId) -> Result<crate::filter::Verdict, crate::error::ScheduleError>,
) -> u64 {
    let mut owned = None;
    let checks = cx.state_or::<C>(&mut owned, || C::build(cx));
    if checks.is_empty() {
        return mask;
    }
    checks.memo().lanes(cx, chunk, mask, rejected, crate::filter::Reason(SPEC_ERROR), |_, h| judge(checks, h))
}

/// The prepared state of a filter whose verdict reads the host's aggregates alone and cannot
/// fail (AggregateMultiTenancyIsolation, AggregateTypeAffinityFilter): the verdicts memoised
/// per aggregate class ([`ClassMemo`] on [`KeyPart::Aggregates`]), so each distinct aggregate
/// set is judged once per request, and nothing to check at all when no aggregate of the
/// snapshot sets a metadata key the filter reads (every host passes then).
#[derive(Debug, Clone)]
pub(super) struct ByAggregates {
    memo: ClassMemo,
    empty: bool,
}

impl ByAggregates {
    /// The state for `cluster`, for a filter that reads the metadata keys `reads` accepts.
    pub(super) fn new(cluster: &Cluster, reads: impl Fn(&str) -> bool) -> Self {
        let empty = !cluster.aggregates().iter().any(|a| a.metadata.keys().any(|k| reads(k)));
        ByAggregates { empty, ..Self::build_unchecked() }
    }

    /// A memo by aggregate class that judges every host it is asked about.
    fn build_unchecked() -> Self {
        ByAggregates { memo: ClassMemo::new(Some(ClassKey::new(vec![KeyPart::Aggregates]))), empty: false }
    }
}

impl SpecChecks for ByAggregates {
    /// Without preparation nothing is known about the snapshot's metadata: every host is judged.
    fn build(_cx: &Cx<'_>) -> Self {
        Self::build_unchecked()
    }

    fn is_empty(&self) -> bool {
        self.empty
    }

    fn memo(&self) -> &ClassMemo {
        &self.memo
    }
}
