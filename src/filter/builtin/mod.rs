//! The core's built-in filters: host state ([`ComputeFilter`]), resources ([`ResourceFilter`]),
//! zones ([`AvailabilityZoneFilter`](struct@AvailabilityZoneFilter)) and labels ([`LabelFilter`], [`LabelSelectorFilter`]).
//! The filter scheduler's catalogue lives in its engine (`nova::filters`).

mod compute;
mod labels;
mod resources;
mod zone;
pub use compute::ComputeFilter;
pub use labels::{LabelFilter, LabelSelectorFilter};
pub use resources::ResourceFilter;
pub use zone::AvailabilityZoneFilter;
