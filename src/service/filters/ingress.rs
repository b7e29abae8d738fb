//! Ingress IP: a free address in the host's or the site's pool.

use super::{fits, fits_named};
use crate::error::ScheduleError;
use crate::filter::{Filter, Reason, Rejections, Verdict};
use crate::id::HostId;
use crate::request::{Cx, Prepared};
use crate::service::site::INGRESS_IP;
use crate::service::{IngressAllocation, Site};
use std::sync::Arc;

/// For an instance that requests an ingress IP: passes hosts that can give it an address, by
/// the site's [`IngressAllocation`]. Per-host pools: the host's `ingress_ip` resource has one
/// free. Site pool: the whole site has fewer `ingress_ip` in use than its size (every host
/// passes or none does). DHCP and port forwarding: every host passes.
///
/// The address counts as taken when the instance is placed (the instance's `ingress_ip` use),
/// not when it starts. Reasons: `no free address in the host's pool`, `site address pool
/// exhausted`.
#[derive(Debug, Clone)]
pub struct IngressFilter {
    site: Arc<Site>,
}

/// Free addresses of a site-wide pool, computed once per request.
#[derive(Debug, Clone, Copy)]
struct SiteFree(f64);

impl IngressFilter {
    /// Reason: the host's pool has no free address.
    pub const HOST_POOL: Reason = Reason(0);
    /// Reason: the site's pool has no free address.
    pub const SITE_POOL: Reason = Reason(1);

    /// A filter over `site`'s ingress pools.
    pub fn new(site: Arc<Site>) -> Self {
        IngressFilter { site }
    }

    /// Free addresses of the site-wide pool of `addresses`, after the snapshot's and the
    /// request's use. Computes in O(hosts).
    fn site_free(cx: &Cx<'_>, addresses: u32) -> f64 {
        let cluster = cx.cluster();
        let used = match cluster.resource_kinds().get(INGRESS_IP) {
            Some(r) => cluster.hosts().map(|(id, h)| h.resource(r).used + cx.overlay().used(id, r)).sum(),
            None => 0.0,
        };
        f64::from(addresses) - used
    }
}

impl Filter for IngressFilter {
    fn name(&self) -> &str {
        "ingress ip"
    }

    fn prepare(&self, cx: &Cx<'_>) -> Result<Prepared, ScheduleError> {
        Ok(match self.site.ingress() {
            IngressAllocation::SitePool { addresses } => Some(Box::new(SiteFree(Self::site_free(cx, addresses)))),
            _ => None,
        })
    }

    fn check(&self, cx: &Cx<'_>, host: HostId) -> Verdict {
        match self.site.ingress() {
            IngressAllocation::HostPools => {
                if fits_named(cx, host, INGRESS_IP, 1.0) {
                    Verdict::Pass
                } else {
                    Verdict::Reject(Self::HOST_POOL)
                }
            }
            IngressAllocation::SitePool { addresses } => {
                let free = cx.state::<SiteFree>().map_or_else(|| Self::site_free(cx, addresses), |f| f.0);
                if free >= 1.0 {
                    Verdict::Pass
                } else {
                    Verdict::Reject(Self::SITE_POOL)
                }
            }
            _ => Verdict::Pass,
        }
    }

    /// Resolves the `ingress_ip` kind once per chunk for per-host pools.
    fn check_chunk(&self, cx: &Cx<'_>, chunk: usize, mask: u64, rejected: &mut Rejections) -> u64 {
        match (self.site.ingress(), cx.cluster().resource_kinds().get(INGRESS_IP)) {
            (IngressAllocation::HostPools, Some(r)) => rejected.check_lanes(chunk, mask, |h| {
                if fits(cx, h, r, 1.0) {
                    Verdict::Pass
                } else {
                    Verdict::Reject(Self::HOST_POOL)
                }
            }),
            _ => rejected.check_lanes(chunk, mask, |h| self.check(cx, h)),
        }
    }

    fn describe(&self, _cx: &Cx<'_>, reason: Reason) -> String {
        match reason {
            Self::HOST_POOL => "no free address in the host's pool",
            _ => "site address pool exhausted",
        }
        .into()
    }
}
