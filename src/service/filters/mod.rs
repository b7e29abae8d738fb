//! The service scheduler's filters, each its own [`Filter`](crate::filter::Filter) type, so they also
//! compose with the foundation's filters in a [`Scheduler`](crate::schedule::Scheduler).
//!
//! Every filter reads consumption through [`Cx::free`](crate::request::Cx::free), so it sees both what the
//! snapshot records and what earlier instances of the same request took in an
//! [`Overlay`](crate::snapshot::Overlay).

mod affinity;
mod count;
mod devices;
mod ingress;
mod labels;
mod limits;
mod volumes;

pub use affinity::PreferredAffinity;
pub use count::InstanceCountFilter;
pub use devices::DeviceFilter;
pub use ingress::IngressFilter;
pub use labels::HostLabelsFilter;
pub use limits::ContainerLimitsFilter;
pub use volumes::{VolumeAssignment, VolumesFilter};

use crate::id::ResourceId;
use crate::request::Cx;

/// Whether `need` of resource `r` (by name) is free on `host`; a kind the snapshot does not know
/// has nothing free.
pub(crate) fn fits_named(cx: &Cx<'_>, host: crate::id::HostId, kind: &str, need: f64) -> bool {
    match cx.cluster().resource_kinds().get(kind) {
        Some(r) => fits(cx, host, r, need),
        None => need <= 0.0,
    }
}

/// Whether `need` of `r` is free on `host`.
#[inline]
pub(crate) fn fits(cx: &Cx<'_>, host: crate::id::HostId, r: ResourceId, need: f64) -> bool {
    need <= 0.0 || cx.free(host, r) >= need
}
