//! What a virtual-machine request carries beyond resources: the flavor, the image, scheduler
//! hints and the server group, in the shapes the filter scheduler's filters read.

use crate::error::BuildError;
use crate::id::{HostId, InputSet};
use crate::request::{Cx, Request};
use crate::snapshot::{Cluster, Overlay};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

// The types read from JSON take the object form only (see `crate::json`).
crate::json::object_form!(Flavor, Image, ServerGroup, VmSpec, NovaRequest);

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// An instance type: sizes and extra specs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", default, deny_unknown_fields)]
#[non_exhaustive]
pub struct Flavor {
    /// Name (`m1.medium`), used by the type-affinity filters.
    pub name: String,
    /// Id; the legacy type-affinity filter compares instances' flavor ids.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Memory in MiB.
    pub memory_mb: f64,
    /// Virtual CPUs.
    pub vcpus: f64,
    /// Root disk in GiB.
    pub root_gb: f64,
    /// Ephemeral disk in GiB.
    pub ephemeral_gb: f64,
    /// Swap in MiB (the disk filter counts it; consumption does not).
    pub swap: f64,
    /// Extra specs, `key → requirement` in the order given (see
    /// [`extra_specs`](crate::nova::extra_specs)).
    #[serde(skip_serializing_if = "ExtraSpecs::is_empty")]
    pub extra_specs: ExtraSpecs,
}

impl Flavor {
    /// A flavor with a name and sizes, no swap, no ephemeral disk, no extra specs.
    pub fn new(name: impl Into<String>, memory_mb: f64, vcpus: f64, root_gb: f64) -> Self {
        Flavor { name: name.into(), memory_mb, vcpus, root_gb, ..Flavor::default() }
    }

    /// Adds an extra spec.
    pub fn extra_spec(mut self, key: impl Into<String>, requirement: impl Into<String>) -> Self {
        self.extra_specs.insert(key, requirement);
        self
    }
}

/// A flavor's extra specs: `key → requirement` pairs, in the order they were given.
///
/// The filters that read them (ComputeCapabilitiesFilter, AggregateInstanceExtraSpecsFilter)
/// check them in this order and stop at the first that fails a host, as Nova does with the
/// flavor's dict. So the order decides whether a requirement that cannot be evaluated (a bare
/// `<or>`, a non-number under `>=`) fails the request or is never reached.
///
/// Keys are unique. [`insert`](Self::insert) on a key already there replaces its requirement
/// in place; read from JSON, a key written twice keeps its first place and its last value, as
/// Python's `json` builds a dict.
///
/// ```
/// use placewise::nova::request::ExtraSpecs;
///
/// let mut specs: ExtraSpecs = [("trust:trusted_host", "trusted"), ("capabilities:rack", "r1")].into_iter().collect();
/// specs.insert("trust:trusted_host", "untrusted");
/// let order: Vec<_> = specs.iter().collect();
/// assert_eq!(order, [("trust:trusted_host", "untrusted"), ("capabilities:rack", "r1")]);
/// let json = serde_json::to_string(&specs).unwrap();
/// assert_eq!(json, r#"{"trust:trusted_host":"untrusted","capabilities:rack":"r1"}"#);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtraSpecs {
    pairs: Vec<(String, String)>,
}

impl ExtraSpecs {
    /// No extra specs.
    pub fn new() -> Self {
        ExtraSpecs::default()
    }

    /// Sets the requirement of `key`: a new key goes last, a key already there keeps its place.
    /// Returns the requirement it replaced.
    pub fn insert(&mut self, key: impl Into<String>, requirement: impl Into<String>) -> Option<String> {
        let key = key.into();
        let requirement = requirement.into();
        match self.pairs.iter_mut().find(|(k, _)| *k == key) {
            Some((_, slot)) => Some(std::mem::replace(slot, requirement)),
            None => {
                self.pairs.push((key, requirement));
                None
            }
        }
    }

    /// The requirement of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs.iter().find(|(k, _)| k == key).map(|(_, r)| r.as_str())
    }

    /// Removes `key`, keeping the others in order; returns its requirement.
    pub fn remove(&mut self, key: &str) -> Option<String> {
        let at = self.pairs.iter().position(|(k, _)| k == key)?;
        Some(self.pairs.remove(at).1)
    }

    /// The `(key, requirement)` pairs, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &str)> + '_ {
        self.pairs.iter().map(|(k, r)| (k.as_str(), r.as_str()))
    }

    /// How many specs there are.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}

impl<K: Into<String>, R: Into<String>> FromIterator<(K, R)> for ExtraSpecs {
    /// Collects pairs in order; a key given twice keeps its first place and its last requirement.
    fn from_iter<I: IntoIterator<Item = (K, R)>>(pairs: I) -> Self {
        let pairs = pairs.into_iter().map(|(k, r)| (k.into(), r.into())).collect();
        ExtraSpecs { pairs: crate::json::ordered::dedup(pairs) }
    }
}

impl Serialize for ExtraSpecs {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        crate::json::ordered::serialize(&self.pairs, serializer)
    }
}

impl<'de> Deserialize<'de> for ExtraSpecs {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::json::ordered::deserialize(deserializer).map(|pairs| ExtraSpecs { pairs })
    }
}

/// The image an instance boots from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", default, deny_unknown_fields)]
#[non_exhaustive]
pub struct Image {
    /// Id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Properties (`hw_architecture`, `img_hv_type`, `hw_vm_mode`, …).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub properties: BTreeMap<String, serde_json::Value>,
}

/// A server group the instances join, with its policy and current state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", default, deny_unknown_fields)]
#[non_exhaustive]
pub struct ServerGroup {
    /// Name or id.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// `affinity`, `anti-affinity`, `soft-affinity`, `soft-anti-affinity`, or `legacy` for the old
    /// `group` hint's groups.
    pub policy: String,
    /// Member instance ids (the request's own instances are members too).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
    /// Hosts of the existing members.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// The anti-affinity rule's `max_server_per_host` (default 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_server_per_host: Option<u32>,
}

/// The VM part of a [`NovaRequest`], which the Nova engine hands its filters and weighers
/// ([`VmSpec::of`]). Every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", default, deny_unknown_fields)]
#[non_exhaustive]
pub struct VmSpec {
    /// The flavor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flavor: Option<Flavor>,
    /// The image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<Image>,
    /// Scheduler hints by name (`different_host`, `same_host`, `build_near_host_ip`, `cidr`,
    /// `group`, `query`): a string or a list of strings, or for `query` a JSON query.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub hints: BTreeMap<String, serde_json::Value>,
    /// Hosts already tried for this instance, as `host` or `host:node`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub retry_hosts: Vec<String>,
    /// The project (tenant) the instances belong to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The server group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_group: Option<ServerGroup>,
    /// Instance ids, one per instance of the request (used by group and affinity rules).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub instance_uuids: Vec<String>,
    /// Only these hosts (case-insensitive names); they skip every filter unless the request
    /// carries the [`CHECK_TYPE_HINT`](VmSpec::CHECK_TYPE_HINT).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub force_hosts: Vec<String>,
    /// Only these nodes (exact `nodename` attribute, default the host name); they skip every
    /// filter unless the request carries the [`CHECK_TYPE_HINT`](VmSpec::CHECK_TYPE_HINT).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub force_nodes: Vec<String>,
    /// Never these hosts (case-insensitive names).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignore_hosts: Vec<String>,
    /// Rebuild: the filters not marked to run on rebuild pass every host. The check-type hint
    /// `rebuild` ([`is_rebuild`](VmSpec::is_rebuild)) has the same effect; this field is the
    /// typed way to say it.
    #[serde(skip_serializing_if = "is_default")]
    pub rebuild: bool,
}

/// The VM part of a call without one: every field empty.
static EMPTY: VmSpec = VmSpec {
    flavor: None,
    image: None,
    hints: BTreeMap::new(),
    retry_hosts: Vec::new(),
    project: None,
    server_group: None,
    instance_uuids: Vec::new(),
    force_hosts: Vec::new(),
    force_nodes: Vec::new(),
    ignore_hosts: Vec::new(),
    rebuild: false,
};

impl VmSpec {
    /// The VM part of the call `cx` belongs to: the one a [`NovaScheduler`](super::NovaScheduler)
    /// hands its filters and weighers, or an empty one ([`VmSpec::default`]) for a plain core
    /// call. One type check per call.
    #[inline]
    pub fn of<'a>(cx: &Cx<'a>) -> &'a VmSpec {
        cx.part::<VmSpec>().unwrap_or(&EMPTY)
    }

    /// A VM part with this flavor and nothing else.
    pub fn with_flavor(flavor: Flavor) -> Self {
        VmSpec { flavor: Some(flavor), ..VmSpec::default() }
    }

    /// The hint `name` as a list of strings (a bare string is a one-item list).
    pub fn hint_list(&self, name: &str) -> Vec<&str> {
        match self.hints.get(name) {
            Some(serde_json::Value::String(s)) => vec![s.as_str()],
            Some(serde_json::Value::Array(items)) => items.iter().filter_map(|v| v.as_str()).collect(),
            _ => Vec::new(),
        }
    }

    /// The id of instance `index`: `instance_uuids[index]`, else the filter scheduler's default
    /// `00000000-0000-0000-0000-<12-digit index>`.
    pub fn instance_uuid(&self, index: u32) -> std::borrow::Cow<'_, str> {
        match self.instance_uuids.get(index as usize) {
            Some(id) => std::borrow::Cow::Borrowed(id.as_str()),
            None => std::borrow::Cow::Owned(format!("00000000-0000-0000-0000-{index:012}")),
        }
    }

    /// Whether the request forces hosts or nodes.
    pub fn forces(&self) -> bool {
        !self.force_hosts.is_empty() || !self.force_nodes.is_empty()
    }

    /// The hint the filter scheduler sets when it checks a move (rebuild, resize, migration)
    /// against a chosen host: `_nova_check_type`.
    pub const CHECK_TYPE_HINT: &'static str = "_nova_check_type";

    /// Whether the request carries a [check type](VmSpec::CHECK_TYPE_HINT): the hint is present
    /// and, read as a list of strings, not empty (any string, even an empty one, is a one-item
    /// list; JSON `null` and `[]` are not).
    pub fn has_check_type(&self) -> bool {
        match self.hints.get(Self::CHECK_TYPE_HINT) {
            None | Some(serde_json::Value::Null) => false,
            Some(serde_json::Value::Array(items)) => !items.is_empty(),
            Some(_) => true,
        }
    }

    /// Whether this is a rebuild: [`rebuild`](VmSpec::rebuild) is set, or the check type is
    /// exactly `rebuild` (the string or the one-item list).
    pub fn is_rebuild(&self) -> bool {
        self.rebuild || self.hint_list(Self::CHECK_TYPE_HINT) == ["rebuild"]
    }

    /// Whether the filters are skipped: the request forces hosts or nodes and carries no
    /// [check type](VmSpec::has_check_type). With a check type, the forced hosts go through
    /// the filters like any other candidates.
    pub fn bypasses_filters(&self) -> bool {
        self.forces() && !self.has_check_type()
    }

    /// Whether `ignore_hosts` removes the host whose service host is `host`
    /// (case-insensitive).
    pub fn ignores(&self, host: &str) -> bool {
        self.ignore_hosts.iter().any(|n| n.eq_ignore_ascii_case(host))
    }

    /// Whether the request's host lists keep the node `node` of service host `host`: not
    /// [ignored](VmSpec::ignores), named by `force_hosts` (case-insensitive) when that is given,
    /// and named by `force_nodes` (exact) when that is given.
    pub fn keeps(&self, host: &str, node: &str) -> bool {
        !self.ignores(host)
            && (self.force_hosts.is_empty() || self.force_hosts.iter().any(|n| n.eq_ignore_ascii_case(host)))
            && (self.force_nodes.is_empty() || self.force_nodes.iter().any(|n| n == node))
    }

    /// The request's server group if its policy is exactly `policy`.
    pub(crate) fn group_with_policy(&self, policy: &str) -> Option<&ServerGroup> {
        self.server_group.as_ref().filter(|g| g.policy == policy)
    }
}

/// A request of the Nova engine: the core [`Request`] (count, resources, zone, selector,
/// group, seed, explanation detail) and the VM part (flavor, image, hints, server group,
/// forced and ignored hosts, rebuild).
///
/// ```
/// use placewise::nova::NovaRequest;
/// use placewise::nova::request::Flavor;
///
/// let request = NovaRequest::for_flavor(2, Flavor::new("m1.small", 2048.0, 1.0, 20.0));
/// assert_eq!(request.request.resources["memory_mb"], 2048.0);
/// assert_eq!(request.vm.flavor.as_ref().unwrap().name, "m1.small");
/// ```
///
/// In JSON: `{"request": {"count": 2, "resources": {"memory_mb": 2048}}, "vm": {"flavor":
/// {"name": "m1.small", "memory_mb": 2048, "vcpus": 1}}}`; both parts are optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", default, deny_unknown_fields)]
#[non_exhaustive]
pub struct NovaRequest {
    /// The core request.
    pub request: Request,
    /// The VM part.
    #[serde(skip_serializing_if = "is_default")]
    pub vm: VmSpec,
}

impl NovaRequest {
    /// A request of `request` with the VM part `vm`.
    pub fn new(request: Request, vm: VmSpec) -> Self {
        NovaRequest { request, vm }
    }

    /// A request for `count` instances of `flavor`: its memory, vCPUs and root plus ephemeral
    /// disk become the per-instance resources (swap is not consumed, as in the filter
    /// scheduler).
    pub fn for_flavor(count: u32, flavor: Flavor) -> Self {
        let (memory, vcpus, disk) = (flavor.memory_mb, flavor.vcpus, flavor.root_gb + flavor.ephemeral_gb);
        let request = Request::new(count).memory_mb(memory).vcpus(vcpus).disk_gb(disk);
        NovaRequest { request, vm: VmSpec::with_flavor(flavor) }
    }

    /// Sets the VM part.
    pub fn vm(mut self, vm: VmSpec) -> Self {
        self.vm = vm;
        self
    }

    /// The same request with its core part changed by `f`, such as
    /// `.with_request(|r| r.zone("az2"))`.
    pub fn with_request(mut self, f: impl FnOnce(Request) -> Request) -> Self {
        self.request = f(self.request);
        self
    }

    /// Sets the explanation detail of the core request ([`Request::explain`]).
    pub fn explain(mut self, explain: crate::request::ExplainOptions) -> Self {
        self.request = self.request.explain(explain);
        self
    }

    /// Parses a request from JSON.
    ///
    /// # Errors
    ///
    /// As [`Request::from_json`].
    pub fn from_json(json: &str) -> Result<NovaRequest, BuildError> {
        crate::json::from_str(json)
    }
}

impl From<Request> for NovaRequest {
    /// The core request with an empty VM part.
    fn from(request: Request) -> Self {
        NovaRequest { request, vm: VmSpec::default() }
    }
}

/// Which instances of a request are members of its server group, so that the request's own
/// earlier picks on a host count as group members only when they are members.
///
/// The filter scheduler adds every placed instance to its host's instance list, and the group
/// rules count the instances on a host that are listed in the group's `members`. A request's
/// instances are usually members (the API adds them), but need not be: a request built without
/// them counts no earlier pick, and one with some of them counts exactly those.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemberPicks {
    /// The instances whose ids are members, in order, when they are the fewer; else the ones
    /// that are not members (`counted` says which).
    exceptions: Vec<u32>,
    /// Whether `exceptions` lists the members (else the non-members).
    counted: bool,
}

impl MemberPicks {
    /// The membership of the `count` instances of `vm` (ids from
    /// [`instance_uuid`](VmSpec::instance_uuid)) under `is_member`. Computes in O(count).
    pub fn new(vm: &VmSpec, count: u32, is_member: impl Fn(&str) -> bool) -> Self {
        let member: Vec<bool> = (0..count).map(|j| is_member(&vm.instance_uuid(j))).collect();
        let members = member.iter().filter(|&&m| m).count();
        // Keep the smaller side: a request with a few members (or a few non-members) then
        // costs O(those) per host, not O(picks so far).
        let counted = members <= member.len() - members;
        let exceptions = (0..count).filter(|&j| member[j as usize] == counted).collect();
        MemberPicks { exceptions, counted }
    }

    /// The earlier picks recorded in `overlay` (instance `j` = the `j`-th pick) that landed on
    /// `host`'s service host (on any of its nodes, [`Cluster::service_nodes`]) and are members.
    /// Computes in O(nodes of the service host) when all or none of the instances are members,
    /// else O((the members or the non-members, whichever are fewer, picked so far) × nodes).
    pub fn on_host(&self, cluster: &Cluster, overlay: &Overlay, host: HostId) -> u32 {
        // When all or none of the instances are members, `exceptions` is empty.
        let picks = overlay.picks();
        let picked = self.exceptions.iter().map(|&j| j as usize).take_while(|&j| j < picks.len());
        let exceptions = picked.filter(|&j| cluster.service_nodes(host).any(|n| n == picks[j])).count() as u32;
        if self.counted {
            exceptions
        } else {
            let placed = cluster.service_nodes(host).map(|n| overlay.placed(n)).sum::<u32>();
            placed.saturating_sub(exceptions)
        }
    }
}

/// A server group's members, hashed once per request, and which of the request's instances are
/// members: what the group rules need to count the members on a host.
#[derive(Debug, Clone, Default)]
pub(crate) struct GroupMembers {
    /// `members` of the group.
    members: InputSet<Box<str>>,
    /// Which of the request's instances are members.
    picks: MemberPicks,
}

impl GroupMembers {
    /// The members of `group` for a request of `count` instances of `vm`. Computes in
    /// O(members + count).
    pub(crate) fn new(vm: &VmSpec, count: u32, group: &ServerGroup) -> Self {
        let members: InputSet<Box<str>> = group.members.iter().map(|m| m.as_str().into()).collect();
        let picks = MemberPicks::new(vm, count, |id| members.contains(id));
        GroupMembers { members, picks }
    }

    /// The number of group members on `host` during the request: its running instances (of
    /// every node of its service host) listed in `members`, plus the request's earlier picks
    /// there that are members ([`MemberPicks::on_host`]).
    ///
    /// The filter scheduler adds each placed instance to its host's instance list and counts the
    /// listed instances that are members; its API makes every instance of the request a member,
    /// but a request may carry only some of them, and then exactly those picks count.
    pub(crate) fn on_host(&self, cluster: &Cluster, overlay: &Overlay, host: HostId) -> u64 {
        let running = cluster.service_instances(host).filter(|i| self.members.contains(&*i.id)).count();
        running as u64 + u64::from(self.picks.on_host(cluster, overlay, host))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{HostSpec, Overlay};

    fn pairs(specs: &ExtraSpecs) -> Vec<(&str, &str)> {
        specs.iter().collect()
    }

    #[test]
    fn extra_specs_keep_the_order_given_and_unique_keys() {
        let mut specs = ExtraSpecs::new();
        assert_eq!(specs.insert("z", "1"), None);
        assert_eq!(specs.insert("a", "2"), None);
        assert_eq!(specs.insert("m", "3"), None);
        // Replacing keeps the place.
        assert_eq!(specs.insert("z", "4"), Some("1".to_owned()));
        assert_eq!(pairs(&specs), [("z", "4"), ("a", "2"), ("m", "3")]);
        assert_eq!((specs.get("a"), specs.get("b"), specs.len()), (Some("2"), None, 3));
        assert_eq!(specs.remove("a"), Some("2".to_owned()));
        assert_eq!(specs.remove("a"), None);
        assert_eq!(pairs(&specs), [("z", "4"), ("m", "3")]);
        // Collected: a repeated key keeps its first place and its last requirement.
        let collected: ExtraSpecs = [("b", "1"), ("a", "2"), ("b", "3"), ("c", "4"), ("a", "5")].into_iter().collect();
        assert_eq!(pairs(&collected), [("b", "3"), ("a", "5"), ("c", "4")]);
        assert!(ExtraSpecs::new().is_empty() && !collected.is_empty());
    }

    #[test]
    fn extra_specs_read_and_write_json_in_the_order_written() {
        let json = r#"{"z": "1", "a": "2", "z": "3", "m": "4"}"#;
        let specs: ExtraSpecs = serde_json::from_str(json).unwrap();
        assert_eq!(pairs(&specs), [("z", "3"), ("a", "2"), ("m", "4")]);
        assert_eq!(serde_json::to_string(&specs).unwrap(), r#"{"z":"3","a":"2","m":"4"}"#);
        // Through a flavor, and back.
        let flavor: Flavor = serde_json::from_str(r#"{"name": "f", "extra_specs": {"y": "1", "b": "2"}}"#).unwrap();
        assert_eq!(pairs(&flavor.extra_specs), [("y", "1"), ("b", "2")]);
        let again: Flavor = serde_json::from_str(&serde_json::to_string(&flavor).unwrap()).unwrap();
        assert_eq!(again, flavor);
        // Only an object of strings.
        for bad in [r#"["a", "b"]"#, r#"{"a": 1}"#, r#"{"a": null}"#, r#""a""#] {
            let err = serde_json::from_str::<ExtraSpecs>(bad).unwrap_err().to_string();
            assert!(err.starts_with("invalid type"), "{bad}: {err}");
        }
        // Equality sees the order.
        let ab: ExtraSpecs = [("a", "1"), ("b", "2")].into_iter().collect();
        let ba: ExtraSpecs = [("b", "2"), ("a", "1")].into_iter().collect();
        assert_ne!(ab, ba);
    }

    #[test]
    fn member_picks_count_the_member_instances_on_the_host() {
        let cluster = Cluster::builder().host(HostSpec::new("a")).host(HostSpec::new("b")).build().unwrap();
        let hosts = [HostId(0), HostId(1), HostId(0), HostId(0), HostId(1)];
        let uuid = |j: u32| format!("00000000-0000-0000-0000-{j:012}");
        for pattern in 0u32..32 {
            let member = |j: u32| pattern >> j & 1 == 1;
            let vm = VmSpec::default();
            let picks = MemberPicks::new(&vm, 5, |id| (0..5).any(|j| member(j) && id == uuid(j)));
            let mut overlay = Overlay::new();
            for (i, &h) in hosts.iter().enumerate() {
                // Before instance i: the members among instances 0..i on each host.
                for host in [HostId(0), HostId(1)] {
                    let expected = (0..i as u32).filter(|&j| member(j) && hosts[j as usize] == host).count();
                    assert_eq!(
                        picks.on_host(&cluster, &overlay, host) as usize,
                        expected,
                        "pattern {pattern:05b}, instance {i}"
                    );
                }
                overlay.consume(h, &[]);
            }
        }
    }

    #[test]
    fn group_members_count_running_members_of_every_node_and_member_picks() {
        use crate::snapshot::InstanceSpec;
        // Nodes n0 and n1 behind the service host "bm"; host "c" on its own.
        let node = |name: &str, instances: &[&str]| {
            instances.iter().fold(HostSpec::new(name).service_host("bm"), |h, i| h.instance(InstanceSpec::new(*i)))
        };
        let cluster = Cluster::builder()
            .host(node("n0", &["m1", "other"]))
            .host(node("n1", &["m2"]))
            .host(HostSpec::new("c").instance(InstanceSpec::new("m3")))
            .build()
            .unwrap();
        let (n0, n1, c) = (HostId(0), HostId(1), HostId(2));
        let vm = VmSpec::default();
        // Of the request's three instances, 0 and 2 are members, 1 is not.
        let group = ServerGroup {
            members: vec![
                "m1".into(),
                "m2".into(),
                "m3".into(),
                vm.instance_uuid(0).into(),
                vm.instance_uuid(2).into(),
            ],
            ..ServerGroup::default()
        };
        let members = GroupMembers::new(&vm, 3, &group);
        let mut overlay = Overlay::new();
        let counts = |o: &Overlay| [n0, n1, c].map(|h| members.on_host(&cluster, o, h));
        // m1 and m2 run on the nodes of bm, each node counts both.
        assert_eq!(counts(&overlay), [2, 2, 1]);
        overlay.consume(n1, &[]);
        assert_eq!(counts(&overlay), [3, 3, 1], "instance 0 is a member");
        overlay.consume(c, &[]);
        assert_eq!(counts(&overlay), [3, 3, 1], "instance 1 is not");
        overlay.consume(c, &[]);
        assert_eq!(counts(&overlay), [3, 3, 2], "instance 2 is");
    }

    #[test]
    fn check_type_is_a_non_empty_hint_and_rebuild_is_exactly_rebuild() {
        let with = |v: serde_json::Value| VmSpec {
            hints: [(VmSpec::CHECK_TYPE_HINT.to_string(), v)].into_iter().collect(),
            force_hosts: vec!["h".into()],
            ..VmSpec::default()
        };
        use serde_json::json;
        for (v, check, rebuild) in [
            (json!(null), false, false),
            (json!([]), false, false),
            (json!(""), true, false),
            (json!("resize"), true, false),
            (json!("rebuild"), true, true),
            (json!(["rebuild"]), true, true),
            (json!(["rebuild", "rebuild"]), true, false),
        ] {
            let vm = with(v.clone());
            assert_eq!((vm.has_check_type(), vm.is_rebuild(), vm.bypasses_filters()), (check, rebuild, !check), "{v}");
        }
        assert!(VmSpec { rebuild: true, ..VmSpec::default() }.is_rebuild(), "the typed field alone");
    }
}
