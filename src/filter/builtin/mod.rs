//! The core's built-in filters: host state ([`ComputeFilter`]), resources ([`ResourceFilter`]),
//! zones ([`AvailabilityZoneFilter`](struct@AvailabilityZoneFilter)) and labels ([`LabelFilter`], [`LabelSelectorFilter`]).
//!
//! The filter scheduler's catalogue lives in its engine, [`crate::nova::filters`]; its names are
//! re-exported here until the public surface settles (see `CHANGELOG.md`).

mod compute;
mod labels;
mod resources;
mod zone;
pub use compute::ComputeFilter;
pub use labels::{LabelFilter, LabelSelectorFilter};
pub use resources::ResourceFilter;
pub use zone::AvailabilityZoneFilter;

#[doc(no_inline)]
pub use crate::nova::filters::{
    nova_attribute_warnings, AggregateCoreFilter, AggregateDiskFilter, AggregateImagePropertiesIsolation,
    AggregateInstanceExtraSpecsFilter, AggregateIoOpsFilter, AggregateMultiTenancyIsolation,
    AggregateNumInstancesFilter, AggregateRamFilter, AggregateTypeAffinityFilter, AllHostsFilter,
    ComputeCapabilitiesFilter, CoreFilter, DifferentHostFilter, DiskFilter, GroupAffinityFilter,
    GroupAntiAffinityFilter, ImagePropertiesFilter, IoOpsFilter, IsolatedHostsFilter, JsonFilter, MetricsFilter,
    NumInstancesFilter, RamFilter, RetryFilter, SameHostFilter, ServerGroupAffinityFilter,
    ServerGroupAntiAffinityFilter, SimpleCIDRAffinityFilter, TrustedFilter, TypeAffinityFilter,
    NOVA_AGGREGATE_METADATA, NOVA_HOST_ATTRIBUTES,
};
