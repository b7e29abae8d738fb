//! Service hosts: one named host with several nodes behind it.
//!
//! A bare-metal cloud runs one compute service for many machines: the filter scheduler's host
//! state is per node, but the service, the aggregate memberships, the instance list and the name
//! that host lists and server groups use belong to the service host. The snapshot keeps every
//! node as a [`Host`](super::Host) of its own (resources, attributes, metrics, disks and the
//! instances it runs) and records once per service host its name and its nodes. A host whose
//! spec names no service host is its own, with itself as the only node, and takes no entry here.
//!
//! This is the filter scheduler's bare-metal notion, not the edge-site service engine's
//! ([`crate::service`] never reads it). It stays in the snapshot: building and events check it
//! (a service host's nodes share its name and aggregates), and the core scheduler and
//! `capacity` read it (`Cluster::has_shared_service_hosts` decides their incremental path).

use crate::id::{HostId, InputMap, ServiceHostId};
use smallvec::SmallVec;

/// The service hosts of a snapshot: names and nodes, by [`ServiceHostId`].
#[derive(Debug, Clone, Default)]
pub(crate) struct ServiceHosts {
    names: Vec<Box<str>>,
    nodes: Vec<SmallVec<[HostId; 4]>>,
    index: InputMap<Box<str>, ServiceHostId>,
    /// Service hosts with two nodes or more.
    shared: usize,
}

impl ServiceHosts {
    /// Adds `host` as a node of the service host `name` (created when new).
    pub(crate) fn join(&mut self, name: &str, host: HostId) -> ServiceHostId {
        let id = match self.index.get(name) {
            Some(&id) => id,
            None => {
                let id = ServiceHostId::from_index(self.names.len());
                self.names.push(name.into());
                self.nodes.push(SmallVec::new());
                self.index.insert(name.into(), id);
                id
            }
        };
        let nodes = &mut self.nodes[id.index()];
        nodes.push(host);
        nodes.sort_unstable();
        if nodes.len() == 2 {
            self.shared += 1;
        }
        id
    }

    /// Removes `host` from the nodes of `id` (the service host keeps its id, possibly with no
    /// node left).
    pub(crate) fn leave(&mut self, id: ServiceHostId, host: HostId) {
        if let Some(nodes) = self.nodes.get_mut(id.index()) {
            let before = nodes.len();
            nodes.retain(|h| *h != host);
            if before >= 2 && nodes.len() < 2 {
                self.shared -= 1;
            }
        }
    }

    /// The id of the service host `name`.
    pub(crate) fn id(&self, name: &str) -> Option<ServiceHostId> {
        self.index.get(name).copied()
    }

    /// The name of `id`.
    pub(crate) fn name(&self, id: ServiceHostId) -> &str {
        self.names.get(id.index()).map_or("", |n| n)
    }

    /// The nodes of `id`, by host id.
    pub(crate) fn nodes(&self, id: ServiceHostId) -> &[HostId] {
        self.nodes.get(id.index()).map_or(&[], |n| n)
    }

    /// Whether some service host has two nodes or more.
    pub(crate) fn any_shared(&self) -> bool {
        self.shared > 0
    }
}
