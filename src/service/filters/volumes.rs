//! Volumes: local volumes with labels and sizes; the ephemeral-volume pin.

use crate::filter::{Filter, Reason, Verdict};
use crate::id::{HostId, ResourceId};
use crate::request::Cx;
use crate::service::{Site, VolumeRequest};
use smallvec::SmallVec;
use std::sync::Arc;

/// Local volumes chosen for an instance's volumes: `(resource volume/<name>, size in MB)`, in
/// the order of the service's volumes.
pub type VolumeAssignment = SmallVec<[(ResourceId, f64); 2]>;

/// Passes hosts whose local volumes can hold every volume the service requests: each requested
/// volume, in order, takes the **first** local volume (in the host's order) whose labels match
/// its `match-volume-labels` and whose size minus what is allocated (resource
/// `volume/<name>`, including earlier volumes of this instance) still holds it. Several
/// volumes may share one local volume when the sizes fit.
///
/// With [`ephemeral_on`](VolumesFilter::ephemeral_on), an instance whose ephemeral volume
/// already lives on a host is pinned there: every other host is rejected as long as that host
/// still fits.
///
/// Reasons: `no local volumes`, `no local volume matches the volume labels`,
/// `insufficient volume space`, `ephemeral volume is on another host`.
#[derive(Debug, Clone)]
pub struct VolumesFilter {
    site: Arc<Site>,
    volumes: Vec<VolumeRequest>,
    ephemeral_on: Option<HostId>,
    /// Per host, per requested volume: the bit set of local volumes whose labels match
    /// (labels never change for a site), so checks compare no strings.
    matching: Vec<u64>,
}

impl VolumesFilter {
    /// Reason: the host has no local volumes.
    pub const NO_VOLUMES: Reason = Reason(0);
    /// Reason: no local volume matches a requested volume's labels.
    pub const NO_MATCH: Reason = Reason(1);
    /// Reason: matching local volumes are too full.
    pub const NO_SPACE: Reason = Reason(2);
    /// Reason: the instance's ephemeral volume is on another host that still fits.
    pub const PINNED: Reason = Reason(3);

    /// A filter for `volumes` on `site`'s local volumes.
    ///
    /// Computes in O(hosts × requested volumes × local volumes) to match labels once. Only the
    /// first 64 local volumes of a host are considered.
    pub fn new(site: Arc<Site>, volumes: Vec<VolumeRequest>) -> Self {
        let mut matching = Vec::with_capacity(site.host_bound() * volumes.len());
        for h in 0..site.host_bound() {
            let local = site.volumes(HostId(h as u32));
            for want in &volumes {
                let mut bits = 0u64;
                for (i, lv) in local.iter().take(64).enumerate() {
                    if want.match_volume_labels.as_ref().is_none_or(|e| e.matches_map(&lv.labels)) {
                        bits |= 1 << i;
                    }
                }
                matching.push(bits);
            }
        }
        VolumesFilter { site, volumes, ephemeral_on: None, matching }
    }

    /// Pins the instance to `host`, where its ephemeral volume lives.
    pub fn ephemeral_on(mut self, host: HostId) -> Self {
        self.ephemeral_on = Some(host);
        self
    }

    /// The local volumes the instance's volumes would take on `host` (first fit), or why none.
    /// Computes in O(requested volumes × local volumes) with no allocation for up to two
    /// volumes.
    pub fn assign(&self, cx: &Cx<'_>, host: HostId) -> Result<VolumeAssignment, Reason> {
        let mut out = VolumeAssignment::new();
        if self.volumes.is_empty() {
            return Ok(out);
        }
        let local = self.site.volumes(host);
        if local.is_empty() {
            return Err(Self::NO_VOLUMES);
        }
        let base = host.index() * self.volumes.len();
        for (v, want) in self.volumes.iter().enumerate() {
            let bits = self.matching.get(base + v).copied().unwrap_or(0);
            let matched = bits != 0;
            let mut chosen = None;
            for (i, lv) in local.iter().take(64).enumerate() {
                if bits & (1 << i) == 0 {
                    continue;
                }
                let taken: f64 = out.iter().filter(|(r, _)| *r == lv.resource).map(|(_, s)| s).sum();
                if cx.free(host, lv.resource) - taken >= want.size_mb {
                    chosen = Some(lv.resource);
                    break;
                }
            }
            match chosen {
                Some(r) => out.push((r, want.size_mb)),
                None if matched => return Err(Self::NO_SPACE),
                None => return Err(Self::NO_MATCH),
            }
        }
        Ok(out)
    }
}

impl Filter for VolumesFilter {
    fn name(&self) -> &str {
        "volumes"
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        if let Some(pin) = self.ephemeral_on {
            if pin != host && cx.cluster().host(pin).is_some() && self.assign(cx, pin).is_ok() {
                return Verdict::Reject(Self::PINNED);
            }
        }
        match self.assign(cx, host) {
            Ok(_) => Verdict::Pass,
            Err(r) => Verdict::Reject(r),
        }
    }

    fn describe(&self, _cx: &Cx<'_>, reason: Reason) -> String {
        match reason {
            Self::NO_VOLUMES => "no local volumes",
            Self::NO_MATCH => "no local volume matches the volume labels",
            Self::NO_SPACE => "insufficient volume space",
            _ => "ephemeral volume is on another host",
        }
        .into()
    }

    fn host_local(&self) -> bool {
        self.ephemeral_on.is_none()
    }
}
