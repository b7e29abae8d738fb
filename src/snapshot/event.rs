//! Cluster events: the only way a snapshot "changes" (by producing a new one).

use super::{host, Cluster, DiskSpec, Host, HostSpec, InstanceSpec, Metrics};
use crate::error::{BuildError, EventError};
use crate::id::{HostId, Symbol};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

// The types read from JSON take the object form only (see `crate::json`).
crate::json::object_form!(StateChange);
crate::json::object_form!(ClusterEvent as "internally tagged enum ClusterEvent");

/// A partial state change: fields that are `None` keep their value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(remote = "Self", default, deny_unknown_fields)]
#[non_exhaustive]
pub struct StateChange {
    /// New `up` value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub up: Option<bool>,
    /// New `enabled` value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// New `cordoned` value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cordoned: Option<bool>,
    /// New `evicting` value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evicting: Option<bool>,
}

impl StateChange {
    /// Sets `up`.
    pub fn up(mut self, up: bool) -> Self {
        self.up = Some(up);
        self
    }

    /// Sets `enabled`.
    pub fn enabled(mut self, enabled: bool) -> Self {
        self.enabled = Some(enabled);
        self
    }

    /// Sets `cordoned`.
    pub fn cordoned(mut self, cordoned: bool) -> Self {
        self.cordoned = Some(cordoned);
        self
    }

    /// Sets `evicting`.
    pub fn evicting(mut self, evicting: bool) -> Self {
        self.evicting = Some(evicting);
        self
    }
}

/// Something that happened to the cluster. Hosts are named, not numbered, so events can travel
/// between processes whose snapshots were built separately.
///
/// In JSON: `{"type": "host_removed", "host": "h1"}` and so on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", tag = "type", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum ClusterEvent {
    /// A new host joins; it gets the next id.
    HostAdded {
        /// The host.
        host: HostSpec,
    },
    /// A host leaves; its id is never reused.
    HostRemoved {
        /// The host's name.
        host: String,
    },
    /// A host's whole record is replaced (same name, same id).
    HostUpdated {
        /// The new record.
        host: HostSpec,
    },
    /// Some of a host's state flags change.
    HostStateChanged {
        /// The host's name.
        host: String,
        /// The flags that change.
        change: StateChange,
    },
    /// A host's metrics are replaced.
    MetricsUpdated {
        /// The host's name.
        host: String,
        /// The new metrics.
        metrics: BTreeMap<String, f64>,
    },
    /// An instance starts on a host; its resources are added to the host's use.
    InstancePlaced {
        /// The host's name.
        host: String,
        /// The instance.
        instance: InstanceSpec,
    },
    /// An instance leaves a host; its resources are released.
    InstanceRemoved {
        /// The host's name.
        host: String,
        /// The instance id.
        instance: String,
    },
    /// A disk is added, or replaced if one of that name exists.
    DiskUpdated {
        /// The host's name.
        host: String,
        /// The disk.
        disk: DiskSpec,
    },
    /// A disk is removed.
    DiskRemoved {
        /// The host's name.
        host: String,
        /// The disk's name.
        disk: String,
    },
}

impl ClusterEvent {
    /// Whether the event sets its host's generation (the compare-and-swap token of shared
    /// state). Every event does except [`MetricsUpdated`](ClusterEvent::MetricsUpdated):
    /// metrics stream in all the time, and a claim planned on older metrics is still judged
    /// on the current ones at commit (the scheduler's own filters run again), so stamping
    /// them would only turn in-flight claims stale for no safety gain. The cluster's own
    /// generation still moves.
    pub fn bumps_generation(&self) -> bool {
        !matches!(self, ClusterEvent::MetricsUpdated { .. })
    }

    /// Reads an event from JSON (`{"type": "host_removed", "host": "h1"}`).
    ///
    /// # Errors
    ///
    /// [`BuildError::Json`] with the position for malformed JSON, an unknown type or field;
    /// [`BuildError::NotAnObject`] for an array where an object is documented.
    pub fn from_json(json: &str) -> Result<ClusterEvent, BuildError> {
        crate::json::from_str(json)
    }

    /// The name of the host the event is about.
    pub fn host_name(&self) -> &str {
        match self {
            ClusterEvent::HostAdded { host } | ClusterEvent::HostUpdated { host } => &host.name,
            ClusterEvent::HostRemoved { host }
            | ClusterEvent::HostStateChanged { host, .. }
            | ClusterEvent::MetricsUpdated { host, .. }
            | ClusterEvent::InstancePlaced { host, .. }
            | ClusterEvent::InstanceRemoved { host, .. }
            | ClusterEvent::DiskUpdated { host, .. }
            | ClusterEvent::DiskRemoved { host, .. } => host,
        }
    }
}

impl Cluster {
    /// The snapshot after `event`. This snapshot is not changed, and the result shares every
    /// host the event did not touch. The result's generation is one higher; the touched host's
    /// generation becomes the result's generation when the event
    /// [bumps it](ClusterEvent::bumps_generation) (every event but a metrics update).
    ///
    /// Computes in O(hosts / 64) plus the size of the touched host; adding or removing a host
    /// also copies the name index (O(hosts)). Each instance the event brings is checked against
    /// every chunk's instance ids (unique across the cluster): O(hosts / 64) each.
    ///
    /// # Errors
    ///
    /// [`EventError`] for an unknown host, instance or disk, a host name that exists already, an
    /// instance id that runs elsewhere already, or invalid data (negative resources and the
    /// other [`BuildError`]s). On error nothing changes.
    pub fn apply(&self, event: &ClusterEvent) -> Result<Cluster, EventError> {
        let mut next = self.clone();
        next.generation += 1;
        next.apply_in_place(event)?;
        Ok(next)
    }

    /// [`apply`](Cluster::apply) changing this snapshot itself: the same result, without the
    /// clone (a chunk or host this snapshot alone holds is changed where it is, not copied).
    /// On error the snapshot may be left partly changed: drop it.
    pub(crate) fn apply_mut(&mut self, event: &ClusterEvent) -> Result<(), EventError> {
        self.generation += 1;
        self.apply_in_place(event)
    }

    fn apply_in_place(&mut self, event: &ClusterEvent) -> Result<(), EventError> {
        match event {
            ClusterEvent::HostAdded { host } => {
                if self.host_id(&host.name).is_some() {
                    return Err(EventError::HostExists { name: host.name.clone() });
                }
                self.unique_instances(host, None)?;
                self.insert_host(host)?;
                self.check_service_host(host)?;
            }
            ClusterEvent::HostRemoved { host } => {
                let id = self.lookup(host)?;
                self.leave_service_host(id);
                Arc::make_mut(&mut self.names).remove(host, id);
                self.put(id, None);
                self.live -= 1;
            }
            ClusterEvent::HostUpdated { host } => {
                let id = self.lookup(&host.name)?;
                self.unique_instances(host, Some(id))?;
                let mut new = self.host_from_spec(host)?;
                self.leave_service_host(id);
                new.service = self.join_service_host(host, id)?;
                self.put(id, Some(Arc::new(new)));
                self.check_service_host(host)?;
            }
            ClusterEvent::HostStateChanged { host, change } => {
                self.modify(host, |_, h| {
                    let s = &mut h.state;
                    s.up = change.up.unwrap_or(s.up);
                    s.enabled = change.enabled.unwrap_or(s.enabled);
                    s.cordoned = change.cordoned.unwrap_or(s.cordoned);
                    s.evicting = change.evicting.unwrap_or(s.evicting);
                    Ok(())
                })?;
            }
            ClusterEvent::MetricsUpdated { host, metrics } => {
                self.modify_as(host, event.bumps_generation(), |c, h| {
                    let mut list: Vec<(Symbol, f64)> = Vec::with_capacity(metrics.len());
                    for (name, &v) in metrics {
                        if !v.is_finite() {
                            let ctx = format!("host `{}`", h.name);
                            return Err(BuildError::number(ctx, format!("metric {name}"), "not finite", v).into());
                        }
                        list.push((super::Interner::intern(&mut c.symbols, name), v));
                    }
                    list.sort_by_key(|m| m.0);
                    h.metrics = Metrics::new(list);
                    Ok(())
                })?;
            }
            ClusterEvent::InstancePlaced { host, instance } => {
                let other = self.instance_host(&instance.id).map(|other| self.host_name(other).to_owned());
                self.modify(host, |c, h| {
                    if let Some(other) = other {
                        // Instance ids are unique across the cluster, as `Cluster::from_spec` requires.
                        return Err(BuildError::DuplicateInstance { host: other, id: instance.id.clone() }.into());
                    }
                    if h.has_instance(&instance.id) {
                        return Err(
                            BuildError::DuplicateInstance { host: host.clone(), id: instance.id.clone() }.into()
                        );
                    }
                    let inst = c.instance_from_spec(host, instance)?;
                    h.add_usage(&inst.resources, 1.0);
                    h.push_instance(inst);
                    c.check_totals(h)?;
                    Ok(())
                })?;
            }
            ClusterEvent::InstanceRemoved { host, instance } => {
                self.modify(host, |_, h| {
                    let pos = h
                        .instances
                        .iter()
                        .position(|i| *i.id == **instance)
                        .ok_or_else(|| EventError::UnknownInstance { host: host.clone(), id: instance.clone() })?;
                    let inst = host::remove(&mut h.instances, pos);
                    h.add_usage(&inst.resources, -1.0);
                    Ok(())
                })?;
            }
            ClusterEvent::DiskUpdated { host, disk } => {
                self.modify(host, |c, h| {
                    let new = c.disk_from_spec(host, disk)?;
                    match h.disks.iter_mut().find(|d| *d.name == *disk.name) {
                        Some(slot) => *slot = new,
                        None => h.push_disk(new),
                    }
                    Ok(())
                })?;
            }
            ClusterEvent::DiskRemoved { host, disk } => {
                self.modify(host, |_, h| {
                    let pos = h
                        .disks
                        .iter()
                        .position(|d| *d.name == **disk)
                        .ok_or_else(|| EventError::UnknownDisk { host: host.clone(), disk: disk.clone() })?;
                    host::remove(&mut h.disks, pos);
                    Ok(())
                })?;
            }
        }
        Ok(())
    }

    /// Refuses `spec` if one of its instance ids runs on another host than `replacing`
    /// (instance ids are unique across the cluster). Computes in O(instances × hosts / 64).
    fn unique_instances(&self, spec: &HostSpec, replacing: Option<HostId>) -> Result<(), EventError> {
        for inst in &spec.instances {
            if let Some(other) = self.instance_host(&inst.id).filter(|&o| Some(o) != replacing) {
                let host = self.host_name(other).to_owned();
                return Err(BuildError::DuplicateInstance { host, id: inst.id.clone() }.into());
            }
        }
        Ok(())
    }

    fn lookup(&self, name: &str) -> Result<HostId, EventError> {
        self.host_id(name).ok_or_else(|| EventError::UnknownHost { name: name.to_owned() })
    }

    fn modify(
        &mut self,
        name: &str,
        f: impl FnOnce(&mut Cluster, &mut Host) -> Result<(), EventError>,
    ) -> Result<(), EventError> {
        self.modify_as(name, true, f)
    }

    /// [`modify`](Cluster::modify), stamping the host's generation only when `bump`.
    fn modify_as(
        &mut self,
        name: &str,
        bump: bool,
        f: impl FnOnce(&mut Cluster, &mut Host) -> Result<(), EventError>,
    ) -> Result<(), EventError> {
        let id = self.lookup(name)?;
        let mut host = self.host(id).cloned().ok_or_else(|| EventError::UnknownHost { name: name.to_owned() })?;
        f(self, &mut host)?;
        if bump {
            host.generation = self.generation;
        }
        self.put(id, Some(Arc::new(host)));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::ResourceId;
    use crate::snapshot::{HotDisk, ResourceSpec};

    fn cluster() -> Cluster {
        let mut b = Cluster::builder();
        for i in 0..130 {
            b = b.host(HostSpec::new(format!("h{i}")).vcpus(8.0).memory_mb(1000.0));
        }
        b.build().unwrap()
    }

    #[test]
    fn events_produce_new_snapshots_and_share_the_rest() {
        let c0 = cluster();
        let c1 = c0
            .apply(&ClusterEvent::InstancePlaced {
                host: "h5".into(),
                instance: InstanceSpec::new("vm").resource("memory_mb", 300.0),
            })
            .unwrap();
        let h5 = c0.host_id("h5").unwrap();
        assert_eq!(c0.host(h5).unwrap().resource(ResourceId::MEMORY_MB).used, 0.0);
        assert_eq!(c1.host(h5).unwrap().resource(ResourceId::MEMORY_MB).used, 300.0);
        assert_eq!(c1.hot_free(h5, 1), 700.0);
        assert_eq!(c1.generation(), 1);
        assert_eq!(c1.host(h5).unwrap().generation, 1);
        // Untouched hosts are the very same allocation.
        let h100 = HostId(100);
        assert!(std::ptr::eq(c0.host(h100).unwrap(), c1.host(h100).unwrap()));
        assert_eq!(c1.host(h100).unwrap().generation, 0);

        let c2 = c1.apply(&ClusterEvent::InstanceRemoved { host: "h5".into(), instance: "vm".into() }).unwrap();
        assert_eq!(c2.hot_free(h5, 1), 1000.0);
    }

    #[test]
    fn invalid_events_change_nothing() {
        let c0 = cluster();
        let err = c0.apply(&ClusterEvent::HostRemoved { host: "nope".into() }).unwrap_err();
        assert_eq!(err, EventError::UnknownHost { name: "nope".into() });
        let neg = ClusterEvent::InstancePlaced {
            host: "h1".into(),
            instance: InstanceSpec::new("x").resource("memory_mb", -4.0),
        };
        assert!(matches!(c0.apply(&neg), Err(EventError::Invalid(BuildError::InvalidNumber { .. }))));
        let bad_host =
            ClusterEvent::HostUpdated { host: HostSpec::new("h1").resource("vcpus", ResourceSpec::new(-1.0)) };
        assert!(c0.apply(&bad_host).is_err());
        assert_eq!(c0.generation(), 0);
        assert_eq!(c0.host(HostId(1)).unwrap().resource(ResourceId::VCPUS).capacity, 8.0);
        let dup = ClusterEvent::HostAdded { host: HostSpec::new("h3") };
        assert_eq!(c0.apply(&dup).unwrap_err(), EventError::HostExists { name: "h3".into() });
        let missing = ClusterEvent::InstanceRemoved { host: "h1".into(), instance: "ghost".into() };
        assert!(matches!(c0.apply(&missing), Err(EventError::UnknownInstance { .. })));
    }

    #[test]
    fn add_remove_and_state() {
        let c0 = cluster();
        let c1 = c0.apply(&ClusterEvent::HostAdded { host: HostSpec::new("new").vcpus(2.0) }).unwrap();
        let id = c1.host_id("new").unwrap();
        assert_eq!(id, HostId(130));
        let c2 = c1.apply(&ClusterEvent::HostRemoved { host: "h0".into() }).unwrap();
        assert_eq!(c2.len(), 130);
        assert!(c2.host(HostId(0)).is_none());
        assert!(!c2.is_schedulable(HostId(0)));
        let c3 = c2
            .apply(&ClusterEvent::HostStateChanged {
                host: "new".into(),
                change: StateChange::default().cordoned(true),
            })
            .unwrap();
        assert!(c2.is_schedulable(id));
        assert!(!c3.is_schedulable(id));
        assert!(c3.host(id).unwrap().state.up);
    }

    #[test]
    fn disks_and_metrics() {
        let c0 = cluster();
        let c1 =
            c0.apply(&ClusterEvent::DiskUpdated { host: "h2".into(), disk: DiskSpec::new("d1", 100, 50) }).unwrap();
        let c2 = c1
            .apply(&ClusterEvent::DiskUpdated { host: "h2".into(), disk: DiskSpec::new("d1", 100, 20).tag("ssd") })
            .unwrap();
        let h2 = c2.host(HostId(2)).unwrap();
        assert_eq!(h2.disks.len(), 1);
        assert_eq!(h2.disks[0].available, 20);
        let c3 = c2.apply(&ClusterEvent::DiskRemoved { host: "h2".into(), disk: "d1".into() }).unwrap();
        assert!(c3.host(HostId(2)).unwrap().disks.is_empty());
        let metrics = BTreeMap::from([("cpu.percent".to_string(), 12.5)]);
        let c4 = c3.apply(&ClusterEvent::MetricsUpdated { host: "h2".into(), metrics }).unwrap();
        let sym = c4.symbols().get("cpu.percent").unwrap();
        assert_eq!(c4.host(HostId(2)).unwrap().metric(sym), Some(12.5));
    }

    #[test]
    fn hot_disks_follow_every_host_change() {
        // Disks on neighbouring lanes of one chunk and on the next chunk, changed in the middle.
        let hot_matches = |c: &Cluster| {
            for (id, h) in c.hosts() {
                let expected: Vec<HotDisk> = h.disks.iter().map(HotDisk::of).collect();
                assert_eq!(c.hot_disks(id), &expected[..], "host {}", h.name);
            }
        };
        let mut c = cluster();
        for (host, disk) in [("h1", "a"), ("h2", "a"), ("h2", "b"), ("h3", "a"), ("h70", "a")] {
            c = c.apply(&ClusterEvent::DiskUpdated { host: host.into(), disk: DiskSpec::new(disk, 100, 60) }).unwrap();
            hot_matches(&c);
        }
        let tagged = DiskSpec::new("a", 100, 10).tag("ssd").scheduled(5);
        c = c.apply(&ClusterEvent::DiskUpdated { host: "h2".into(), disk: tagged }).unwrap();
        hot_matches(&c);
        assert!(c.hot_disks(HostId(2))[0].tagged);
        assert_eq!(c.hot_disks(HostId(2))[0].scheduled, 5);
        c = c.apply(&ClusterEvent::DiskRemoved { host: "h2".into(), disk: "a".into() }).unwrap();
        hot_matches(&c);
        c = c.apply(&ClusterEvent::HostRemoved { host: "h1".into() }).unwrap();
        hot_matches(&c);
        assert!(c.hot_disks(HostId(1)).is_empty());
        let h3 = HostSpec::new("h3").disk(DiskSpec::new("x", 10, 1)).disk(DiskSpec::new("y", 10, 2));
        c = c.apply(&ClusterEvent::HostUpdated { host: h3 }).unwrap();
        hot_matches(&c);
        assert_eq!(c.hot_disks(HostId(3)).len(), 2);
        assert!(c.hot_disks(HostId(9999)).is_empty());
    }

    #[test]
    fn events_round_trip_through_json() {
        let e = ClusterEvent::HostStateChanged { host: "h1".into(), change: StateChange::default().up(false) };
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(json, r#"{"type":"host_state_changed","host":"h1","change":{"up":false}}"#);
        assert_eq!(serde_json::from_str::<ClusterEvent>(&json).unwrap(), e);
    }
}
