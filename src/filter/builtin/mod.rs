//! The built-in filters, one concept per file.

mod compute;
mod labels;
mod resources;
mod zone;

pub use compute::ComputeFilter;
pub use labels::{LabelFilter, LabelSelectorFilter};
pub use resources::ResourceFilter;
pub use zone::AvailabilityZoneFilter;
