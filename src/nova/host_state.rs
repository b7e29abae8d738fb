//! A host in the filter scheduler's vocabulary (`free_ram_mb`, `num_io_ops`, `stats` …), with the
//! earlier instances of the request already consumed.

use crate::id::{HostId, ResourceId};
use crate::request::Cx;
use crate::snapshot::Host;
use serde_json::Value;

/// The host attribute that lists, as an array of names, the metrics the host reports without a
/// scalar value (Nova's NUMA memory-bandwidth metrics may carry per-node values instead). Nova
/// counts such a metric as reported (MetricsFilter) and raises when a weigher reads its value
/// (MetricsWeigher).
pub const METRICS_WITHOUT_VALUE: &str = "metrics_without_value";

/// Whether `host` reports metric `name` without a value ([`METRICS_WITHOUT_VALUE`]). Computes in
/// O(metrics without value of the host).
pub fn reports_without_value(host: &Host, name: &str) -> bool {
    host.attribute(METRICS_WITHOUT_VALUE)
        .and_then(Value::as_array)
        .is_some_and(|names| names.iter().any(|n| n.as_str() == Some(name)))
}

/// Attribute names the view derives from resources, state and consumption (the rest come from
/// [`Host::attributes`]).
pub const DERIVED_ATTRIBUTES: &[&str] = &[
    "host",
    "nodename",
    "free_ram_mb",
    "total_usable_ram_mb",
    "ram_allocation_ratio",
    "free_disk_mb",
    "total_usable_disk_gb",
    "disk_allocation_ratio",
    "vcpus_total",
    "vcpus_used",
    "cpu_allocation_ratio",
    "num_instances",
    "num_io_ops",
    "failed_builds",
    "hypervisor_version",
    "service",
];

/// One host as the filter scheduler's HostState shows it: memory and disk as physical free
/// amounts (`free_ram_mb = capacity − reserved − used`), vCPUs as totals and use, counters
/// (`num_instances`, `num_io_ops`) that grow by one per earlier pick of the request, and the
/// stored [attributes](Host::attributes) (`hypervisor_type`, `cpu_info`, `stats`, `host_ip` …).
///
/// Disk is kept in GiB in the snapshot and shown in MiB (× 1024, exact in binary floating point).
#[derive(Debug, Clone, Copy)]
pub struct HostStateView<'a> {
    cx: Cx<'a>,
    id: HostId,
    host: &'a Host,
}

/// An integral value as a JSON integer (as the filter scheduler's int fields print), else a float.
fn number(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e15 {
        Value::from(v as i64)
    } else {
        Value::from(v)
    }
}

impl<'a> HostStateView<'a> {
    /// The view of `host` for `cx`.
    ///
    /// # Panics
    ///
    /// Panics if `host` is not a live host of the snapshot.
    pub fn new(cx: &Cx<'a>, host: HostId) -> Self {
        HostStateView { cx: *cx, id: host, host: cx.host(host) }
    }

    /// The host record.
    pub fn host(&self) -> &'a Host {
        self.host
    }

    /// The name of the host's service host ([`Cluster::service_host_name`](crate::snapshot::Cluster::service_host_name)):
    /// the filter scheduler's `host`.
    pub fn service_host(&self) -> &'a str {
        self.cx.cluster().service_host_name(self.id)
    }

    /// The hypervisor node name: attribute `nodename`, else the host name.
    pub fn nodename(&self) -> &'a str {
        self.host.attribute("nodename").and_then(Value::as_str).unwrap_or(&self.host.name)
    }

    fn consumed(&self, r: ResourceId) -> f64 {
        self.cx.overlay().used(self.id, r)
    }

    /// `capacity − reserved − used − earlier picks` of memory, in MiB.
    pub fn free_ram_mb(&self) -> f64 {
        let r = self.host.resource(ResourceId::MEMORY_MB);
        r.physical() - r.used - self.consumed(ResourceId::MEMORY_MB)
    }

    /// Memory capacity in MiB.
    pub fn total_usable_ram_mb(&self) -> f64 {
        self.host.resource(ResourceId::MEMORY_MB).capacity
    }

    /// `capacity − reserved − used − earlier picks` of disk, in MiB.
    pub fn free_disk_mb(&self) -> f64 {
        let r = self.host.resource(ResourceId::DISK_GB);
        (r.physical() - r.used - self.consumed(ResourceId::DISK_GB)) * 1024.0
    }

    /// Disk capacity in GiB.
    pub fn total_usable_disk_gb(&self) -> f64 {
        self.host.resource(ResourceId::DISK_GB).capacity
    }

    /// vCPU capacity.
    pub fn vcpus_total(&self) -> f64 {
        self.host.resource(ResourceId::VCPUS).capacity
    }

    /// vCPUs in use, earlier picks included.
    pub fn vcpus_used(&self) -> f64 {
        self.host.resource(ResourceId::VCPUS).used + self.consumed(ResourceId::VCPUS)
    }

    /// The allocation ratio of a standard kind.
    pub fn allocation_ratio(&self, r: ResourceId) -> f64 {
        self.host.resource(r).allocation_ratio
    }

    /// A numeric attribute, from the dense columns when the cluster keeps it hot.
    #[inline]
    fn number(&self, name: &str) -> Option<f64> {
        self.number_at(self.cx.cluster().hot_attribute(name), name)
    }

    /// [`number`](Self::number) with `hot`, the attribute's hot column
    /// ([`Cluster::hot_attribute`](crate::snapshot::Cluster::hot_attribute)), found once by the caller.
    #[inline]
    fn number_at(&self, hot: Option<usize>, name: &str) -> Option<f64> {
        match hot {
            Some(i) => Some(self.cx.cluster().hot_attribute_value(self.id, i)).filter(|v| !v.is_nan()),
            None => self.host.attribute(name).and_then(Value::as_f64),
        }
    }

    fn counter(&self, name: &str) -> f64 {
        self.number(name).unwrap_or(0.0)
    }

    /// Instances on the host: attribute `num_instances` (else the listed instances), plus earlier
    /// picks.
    pub fn num_instances(&self) -> f64 {
        self.instances_before(self.cx.cluster().hot_attribute("num_instances")) + self.placed()
    }

    /// Instances on the host before the request's picks: attribute `num_instances` (else the
    /// listed instances), with `hot` its hot column
    /// ([`Cluster::hot_attribute`](crate::snapshot::Cluster::hot_attribute)`("num_instances")`), found once
    /// by a caller that reads many hosts.
    pub fn instances_before(&self, hot: Option<usize>) -> f64 {
        match self.number_at(hot, "num_instances") {
            Some(n) => n,
            None => self.host.instances.len() as f64,
        }
    }

    /// Attribute `num_io_ops` plus earlier picks.
    pub fn num_io_ops(&self) -> f64 {
        self.io_ops_before(self.cx.cluster().hot_attribute("num_io_ops")) + self.placed()
    }

    /// Attribute `num_io_ops` before the request's picks, with `hot` its hot column
    /// ([`Cluster::hot_attribute`](crate::snapshot::Cluster::hot_attribute)`("num_io_ops")`), found once by
    /// a caller that reads many hosts.
    pub fn io_ops_before(&self, hot: Option<usize>) -> f64 {
        self.number_at(hot, "num_io_ops").unwrap_or(0.0)
    }

    /// The request's earlier picks on the host.
    fn placed(&self) -> f64 {
        f64::from(self.cx.overlay().placed(self.id))
    }

    /// Attribute `failed_builds`.
    pub fn failed_builds(&self) -> f64 {
        self.counter("failed_builds")
    }

    /// Attribute `hypervisor_version`, 0 when unset.
    pub fn hypervisor_version(&self) -> f64 {
        self.counter("hypervisor_version")
    }

    /// Attribute `free_pci_devices`, the free devices of the host's PCI device pools; 0 when
    /// unset (the model has no PCI devices otherwise).
    pub fn free_pci_devices(&self) -> f64 {
        self.counter("free_pci_devices")
    }

    /// Whether the host reports any metric, with a value or without ([`METRICS_WITHOUT_VALUE`]).
    pub fn has_metrics(&self) -> bool {
        !self.host.metrics.is_empty()
            || self.host.attribute(METRICS_WITHOUT_VALUE).and_then(Value::as_array).is_some_and(|m| !m.is_empty())
    }

    /// The metric `name`.
    pub fn metric(&self, name: &str) -> Option<f64> {
        let sym = self.cx.cluster().symbols().get(name)?;
        self.host.metric(sym)
    }

    /// Whether one of the running instances of the host's service host (on any of its nodes)
    /// is `id`.
    pub fn has_instance(&self, id: &str) -> bool {
        self.cx.cluster().service_has_instance(self.id, id)
    }

    /// The attribute `name` as a JSON value, [`Value::Null`] when the host has none: a derived
    /// one (see [`DERIVED_ATTRIBUTES`]) or a stored one.
    pub fn attribute(&self, name: &str) -> Value {
        match derived_index(name) {
            Some(i) => self.derived(i),
            None => self.host.attribute(name).cloned().unwrap_or(Value::Null),
        }
    }

    /// The derived attribute `DERIVED_ATTRIBUTES[index]` (found once with [`derived_index`]),
    /// [`Value::Null`] for an index past the list. Computes in O(1) for every attribute but
    /// `service`, which builds a small map.
    pub fn derived(&self, index: usize) -> Value {
        // The arms follow DERIVED_ATTRIBUTES' order (a unit test holds them together).
        match index {
            0 => Value::from(self.service_host()),
            1 => Value::from(self.nodename()),
            // The allocation ratios are floats, whatever their value.
            4 | 7 | 10 => self.derived_number(index).map_or(Value::Null, Value::from),
            15 => {
                let forced_down = self.host.attribute("forced_down").and_then(Value::as_bool).unwrap_or(false);
                serde_json::json!({ "disabled": !self.host.state.enabled, "forced_down": forced_down })
            }
            _ => self.derived_number(index).map_or(Value::Null, number),
        }
    }

    /// The number [`derived`](Self::derived) shows for index `index`, for the derived
    /// attributes that are numbers ([`derived_is_number`]: `free_ram_mb` …
    /// `hypervisor_version`); `None` for the others. A finite value is shown as that number exactly (an integer where
    /// it is integral, else a float), a non-finite one as [`Value::Null`]. Computes in O(1).
    pub fn derived_number(&self, index: usize) -> Option<f64> {
        use ResourceId as R;
        Some(match index {
            2 => self.free_ram_mb(),
            3 => self.total_usable_ram_mb(),
            4 => self.allocation_ratio(R::MEMORY_MB),
            5 => self.free_disk_mb(),
            6 => self.total_usable_disk_gb(),
            7 => self.allocation_ratio(R::DISK_GB),
            8 => self.vcpus_total(),
            9 => self.vcpus_used(),
            10 => self.allocation_ratio(R::VCPUS),
            11 => self.num_instances(),
            12 => self.num_io_ops(),
            13 => self.failed_builds(),
            14 => self.hypervisor_version(),
            _ => return None,
        })
    }
}

/// Whether the derived attribute `DERIVED_ATTRIBUTES[index]` is a number
/// ([`HostStateView::derived_number`] gives it).
pub fn derived_is_number(index: usize) -> bool {
    (2..=14).contains(&index)
}

/// The position of `name` in [`DERIVED_ATTRIBUTES`], for [`HostStateView::derived`]; `None` for
/// a stored attribute.
pub fn derived_index(name: &str) -> Option<usize> {
    DERIVED_ATTRIBUTES.iter().position(|&d| d == name)
}

impl<'a> Cx<'a> {
    /// `host` in the filter scheduler's vocabulary.
    pub fn host_state(&self, host: HostId) -> HostStateView<'a> {
        HostStateView::new(self, host)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Request;
    use crate::snapshot::Cluster;
    use crate::snapshot::{HostSpec, Overlay, ResourceSpec};

    #[test]
    fn derived_values_include_earlier_picks() {
        let c = Cluster::builder()
            .host(
                HostSpec::new("h")
                    .resource("memory_mb", ResourceSpec::new(8192.0).used(1024.0))
                    .resource("vcpus", ResourceSpec::new(8.0).allocation_ratio(4.0))
                    .resource("disk_gb", ResourceSpec::new(100.0).used(10.5))
                    .attribute("num_io_ops", serde_json::json!(2))
                    .attribute("stats", serde_json::json!({"rack": "r1"})),
            )
            .build()
            .unwrap();
        let req = Request::new(1);
        let compiled = req.compile(&c).unwrap();
        let mut overlay = Overlay::new();
        overlay.consume(HostId(0), &[(ResourceId::MEMORY_MB, 512.0), (ResourceId::VCPUS, 2.0)]);
        let cx = Cx::new(&c, &req, &compiled, &overlay, 1);
        let v = cx.host_state(HostId(0));
        assert_eq!(v.attribute("free_ram_mb"), serde_json::json!(6656));
        assert_eq!(v.attribute("vcpus_used"), serde_json::json!(2));
        assert_eq!(v.attribute("cpu_allocation_ratio"), serde_json::json!(4.0));
        assert_eq!(v.attribute("free_disk_mb"), serde_json::json!(91648));
        assert_eq!(v.attribute("num_io_ops"), serde_json::json!(3));
        assert_eq!(v.attribute("num_instances"), serde_json::json!(1));
        assert_eq!(v.attribute("nodename"), serde_json::json!("h"));
        assert_eq!(v.attribute("stats")["rack"], "r1");
        // Every derived attribute, by name and by index (the index's arm is the name's).
        let expected = serde_json::json!({
            "host": "h", "nodename": "h", "free_ram_mb": 6656, "total_usable_ram_mb": 8192,
            "ram_allocation_ratio": 1.0, "free_disk_mb": 91648, "total_usable_disk_gb": 100,
            "disk_allocation_ratio": 1.0, "vcpus_total": 8, "vcpus_used": 2, "cpu_allocation_ratio": 4.0,
            "num_instances": 1, "num_io_ops": 3, "failed_builds": 0, "hypervisor_version": 0,
            "service": {"disabled": false, "forced_down": false}
        });
        assert_eq!(expected.as_object().map(|o| o.len()), Some(DERIVED_ATTRIBUTES.len()));
        for (i, &name) in DERIVED_ATTRIBUTES.iter().enumerate() {
            assert_eq!(derived_index(name), Some(i));
            assert_eq!(v.derived(i), expected[name], "{name}");
            assert_eq!(v.attribute(name), expected[name], "{name}");
        }
        assert_eq!((derived_index("stats"), v.derived(DERIVED_ATTRIBUTES.len())), (None, Value::Null));
        for i in 0..=DERIVED_ATTRIBUTES.len() {
            let shown = v.derived_number(i).map(Value::from).map(|n| n.as_f64());
            assert_eq!(shown, derived_is_number(i).then(|| v.derived(i).as_f64()), "{i}");
        }
        // Before the request's picks, with the column found once (or not hot).
        let (io, inst) = (c.hot_attribute("num_io_ops"), c.hot_attribute("num_instances"));
        assert_eq!((v.io_ops_before(io), v.instances_before(inst)), (2.0, 0.0));
        assert_eq!((v.io_ops_before(None), v.instances_before(None)), (2.0, 0.0));
        assert_eq!(v.attribute("service")["disabled"], false);
        assert_eq!(v.attribute("nosuch"), Value::Null);
    }
}
