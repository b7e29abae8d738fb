//! The built-in filters, one concept per file.
//!
//! Besides the general filters (`compute`, `resources`, `availability_zone`, `labels`), the
//! catalogue holds the filter scheduler's filters under their class names, with the semantics of
//! Nova 34, and of their last upstream version for the ones Nova removed.

mod aggregate_core;
mod aggregate_disk;
mod aggregate_image_properties_isolation;
mod aggregate_instance_extra_specs;
mod aggregate_io_ops;
mod aggregate_multitenancy_isolation;
mod aggregate_num_instances;
mod aggregate_ram;
mod aggregate_type_affinity;
mod all_hosts;
mod capacity;
mod compute;
mod compute_capabilities;
mod core;
mod counters;
mod different_host;
mod disk;
mod group_affinity;
mod group_anti_affinity;
mod image_properties;
mod io_ops;
mod isolated_hosts;
mod json;
mod labels;
mod metrics;
mod nova;
mod num_instances;
mod ram;
mod resources;
mod retry;
mod same_host;
mod server_group_affinity;
mod server_group_anti_affinity;
mod simple_cidr_affinity;
mod trusted;
mod type_affinity;
mod zone;

pub use aggregate_core::AggregateCoreFilter;
pub use aggregate_disk::AggregateDiskFilter;
pub use aggregate_image_properties_isolation::AggregateImagePropertiesIsolation;
pub use aggregate_instance_extra_specs::AggregateInstanceExtraSpecsFilter;
pub use aggregate_io_ops::AggregateIoOpsFilter;
pub use aggregate_multitenancy_isolation::AggregateMultiTenancyIsolation;
pub use aggregate_num_instances::AggregateNumInstancesFilter;
pub use aggregate_ram::AggregateRamFilter;
pub use aggregate_type_affinity::AggregateTypeAffinityFilter;
pub use all_hosts::AllHostsFilter;
pub use compute::ComputeFilter;
pub use compute_capabilities::ComputeCapabilitiesFilter;
pub use core::CoreFilter;
pub use different_host::DifferentHostFilter;
pub use disk::DiskFilter;
pub use group_affinity::GroupAffinityFilter;
pub use group_anti_affinity::GroupAntiAffinityFilter;
pub use image_properties::ImagePropertiesFilter;
pub use io_ops::IoOpsFilter;
pub use isolated_hosts::IsolatedHostsFilter;
pub use json::JsonFilter;
pub use labels::{LabelFilter, LabelSelectorFilter};
pub use metrics::MetricsFilter;
pub use nova::{nova_attribute_warnings, NOVA_AGGREGATE_METADATA, NOVA_HOST_ATTRIBUTES};
pub use num_instances::NumInstancesFilter;
pub use ram::RamFilter;
pub use resources::ResourceFilter;
pub use retry::RetryFilter;
pub use same_host::SameHostFilter;
pub use server_group_affinity::ServerGroupAffinityFilter;
pub use server_group_anti_affinity::ServerGroupAntiAffinityFilter;
pub use simple_cidr_affinity::SimpleCIDRAffinityFilter;
pub use trusted::TrustedFilter;
pub use type_affinity::TypeAffinityFilter;
pub use zone::AvailabilityZoneFilter;
