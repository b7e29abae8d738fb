//! What one call of the service scheduler works on: the site, the services, and how much of
//! the explanation to keep.

use super::site::Site;
use super::spec::ServiceSpec;
use std::sync::Arc;

/// The input of one [`ServiceScheduler`](super::ServiceScheduler) call besides the snapshot:
/// the parsed [`Site`] of that snapshot, the services to reconcile (in any order: the engine
/// sorts them by application and name) and the explanation options.
///
/// The site is held in an [`Arc`]: one parsed site serves every call on the snapshots of its
/// lineage (placements change instances, not the attributes the site reads) without a copy.
///
/// ```
/// use placewise::service::{EdgeHost, IngressAllocation, ServiceRequest, ServiceSpec, Site};
/// use placewise::Cluster;
///
/// let cluster = Cluster::builder().host(EdgeHost::new("edge-1").memory_mb(1024.0).build()).build()?;
/// let site = Site::new(&cluster, IngressAllocation::Dhcp)?;
/// let request = ServiceRequest::new(site, [ServiceSpec::replicated("shop", "web", 1)]).verdicts(true);
/// assert_eq!(request.services().len(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct ServiceRequest {
    site: Arc<Site>,
    services: Vec<ServiceSpec>,
    verdicts: bool,
    top: usize,
}

impl ServiceRequest {
    /// A request for `services` on `site`, keeping no per-host verdicts.
    pub fn new(site: impl Into<Arc<Site>>, services: impl IntoIterator<Item = ServiceSpec>) -> Self {
        ServiceRequest { site: site.into(), services: services.into_iter().collect(), verdicts: false, top: 0 }
    }

    /// Whether each [`Explanation`](crate::explain::Explanation) the call builds lists every
    /// host's verdict ([`Explanation::verdicts`](crate::explain::Explanation::verdicts)). Off by
    /// default: it records every rejected host while filtering.
    pub fn verdicts(mut self, on: bool) -> Self {
        self.verdicts = on;
        self
    }

    /// How many of the best hosts an explained placement lists with their ranking terms
    /// ([`Explanation::top`](crate::explain::Explanation::top)): the four rank levels and,
    /// among the hosts of the smallest rank key, the caller's weighers. 0 (the default) lists
    /// none.
    pub fn top(mut self, n: usize) -> Self {
        self.top = n;
        self
    }

    /// The site.
    pub fn site(&self) -> &Site {
        &self.site
    }

    /// The services, as given.
    pub fn services(&self) -> &[ServiceSpec] {
        &self.services
    }

    /// Whether per-host verdicts are kept.
    pub fn keeps_verdicts(&self) -> bool {
        self.verdicts
    }

    /// How many of the best hosts an explained placement lists.
    pub fn top_hosts(&self) -> usize {
        self.top
    }

    /// The shared site, for the call's filters.
    pub(crate) fn shared_site(&self) -> &Arc<Site> {
        &self.site
    }
}
