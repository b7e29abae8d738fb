//! What one call of the service scheduler works on: the site, the services, and how much of
//! the explanation to keep.

use super::site::Site;
use super::spec::ServiceSpec;
use crate::request::ExplainOptions;
use std::sync::Arc;

/// The input of one [`ServiceScheduler`](super::ServiceScheduler) call besides the snapshot:
/// the parsed [`Site`] of that snapshot, the services to reconcile (in any order: the engine
/// sorts them by application and name) and the explanation options.
///
/// The site is held in an [`Arc`]: one parsed site serves every call on the snapshots of its
/// lineage (placements change instances, not the attributes the site reads).
///
/// ```
/// use placewise::service::{EdgeHost, IngressAllocation, ServiceRequest, ServiceSpec, Site};
/// use placewise::Cluster;
/// use placewise::request::ExplainOptions;
///
/// let cluster = Cluster::builder().host(EdgeHost::new("edge-1").memory_mb(1024.0).build()).build()?;
/// let site = Site::new(&cluster, IngressAllocation::Dhcp)?;
/// let request = ServiceRequest::new(site, [ServiceSpec::replicated("shop", "web", 1)])
///     .explain(ExplainOptions::detailed(3));
/// assert_eq!((request.services.len(), request.explain.top), (1, 3));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServiceRequest {
    /// The site of the snapshots the request is scheduled on.
    pub site: Arc<Site>,
    /// The services, as given.
    pub services: Vec<ServiceSpec>,
    /// What the call's [`Explanation`](crate::explain::Explanation)s hold beyond the
    /// rejection counts: every host's verdict ([`ExplainOptions::verdicts`]; it records every
    /// rejected host while filtering), and the ranking terms of this many best hosts of each
    /// explained placement ([`ExplainOptions::top`]: the four rank levels and, among the hosts
    /// of the smallest rank key, the caller's weighers). Both off by default.
    pub explain: ExplainOptions,
}

impl ServiceRequest {
    /// A request for `services` on `site`, with the default [`ExplainOptions`].
    pub fn new(site: impl Into<Arc<Site>>, services: impl IntoIterator<Item = ServiceSpec>) -> Self {
        ServiceRequest {
            site: site.into(),
            services: services.into_iter().collect(),
            explain: ExplainOptions::default(),
        }
    }

    /// Sets the [explanation options](ServiceRequest::explain).
    pub fn explain(mut self, explain: ExplainOptions) -> Self {
        self.explain = explain;
        self
    }
}
