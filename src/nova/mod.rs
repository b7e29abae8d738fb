//! OpenStack Nova's filter scheduler, an engine over the core.
//!
//! Every filter and weigher Nova ships, under its class name and with Nova 34's semantics
//! ([`filters`], [`weighers`]); the languages they read: Python values and Python's `float()`
//! and `int()` ([`pyvalue`]), extra-spec operators ([`extra_specs`]), the JSON query
//! ([`json_query`]) and metric weight settings ([`weight_setting`]); the VM part of a request:
//! flavor, image, hints, server group, forced and ignored hosts ([`request`]); a host in the
//! filter scheduler's vocabulary ([`host_state`]); configuration by name ([`config`]); and the
//! reference tool's scenario format, replayed decision for decision ([`scenario`]).

pub mod config;
pub mod extra_specs;
pub mod filters;
pub mod host_state;
pub mod json_query;
pub mod pyvalue;
pub mod request;
pub mod scenario;
pub mod weighers;
pub mod weight_setting;
