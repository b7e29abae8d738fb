//! Capacity: how many more fit, where, and what runs out first, for each engine.
//!
//! # Contents
//!
//! - [Quick example](#quick-example)
//! - [The three questions](#the-three-questions)
//! - [Cost](#cost)
//!
//! # Quick example
//!
//! ```
//! use placewise::capacity;
//! use placewise::filter::builtin::{ComputeFilter, ResourceFilter};
//! use placewise::request::Request;
//! use placewise::schedule::Scheduler;
//! use placewise::snapshot::{Cluster, HostSpec};
//!
//! let cluster = Cluster::builder()
//!     .host(HostSpec::new("a").vcpus(8.0).memory_mb(16384.0).zone("z1"))
//!     .host(HostSpec::new("b").vcpus(4.0).memory_mb(65536.0).zone("z2"))
//!     .build()?;
//! let scheduler = Scheduler::builder().filter(ComputeFilter).filter(ResourceFilter::new()).build()?;
//! let request = Request::new(1).vcpus(2.0).memory_mb(8192.0);
//!
//! let cap = capacity::instances(&scheduler, &cluster, &request)?;
//! assert_eq!(cap.total, 4); // a: 2 (memory), b: 2 (vcpus)
//! assert_eq!(cap.zones[0].fits, 2);
//! let stop = &cap.stops[cap.hosts[0].stop.unwrap() as usize];
//! assert_eq!(stop.reason, "insufficient memory");
//!
//! // The answer is what `schedule` itself does: 4 instances place, 5 do not.
//! assert!(scheduler.schedule(&cluster, &Request::new(4).vcpus(2.0).memory_mb(8192.0))?.is_complete());
//! assert!(!scheduler.schedule(&cluster, &Request::new(5).vcpus(2.0).memory_mb(8192.0))?.is_complete());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The three questions
//!
//! - **Core scheduler** ([`instances`]): the largest count of a [`Request`](crate::request::Request)
//!   that [`Scheduler::schedule`](crate::schedule::Scheduler::schedule) places in full, exact under
//!   the scheduler's own filters and its virtual consumption between instances; per host, zone
//!   and rack, with the filter and reason that stop each host ([`Stop`]: `insufficient memory`,
//!   `insufficient vcpus`, or any other filter by name).
//! - **Replica engine** ([`volumes`]): how many more volumes of a size and replica count the
//!   [`ReplicaScheduler`](crate::replica::ReplicaScheduler) places one after another, each seeing
//!   the disk space the earlier ones took, and why the next one fails (exactly the answer of
//!   `volumes_stepwise`, one engine call per volume, which the `reference` feature makes
//!   public for tests).
//! - **Spread engine** ([`tasks`]): how many more tasks a service's batch can take before a
//!   preference branch runs out, which branch that is, and what every branch can still take.
//!
//! # Cost
//!
//! Each function states its cost. The core count is per host, not per instance: on 10,000
//! hosts it costs about what a few single-instance schedules cost, where asking `schedule`
//! count by count costs the count times a burst (`benches/capacity.rs` measures both). The
//! volume count is not one engine call per volume: one preparation, then per volume only the
//! disks its replicas landed on ([`volumes`]); `volumes_stepwise` (the `reference` feature) is
//! the plain loop it is tested against.

mod instances;
mod tasks;
mod volumes;

pub use instances::{instances, instances_scoped, HostCapacity, InstanceCapacity, Method};
pub use tasks::{tasks, BranchCapacity, TaskCapacity, TaskMethod};
pub use volumes::{volumes, VolumeCapacity};
/// The plain reference counts the fast ones are tested against (the `reference` feature).
#[cfg(feature = "reference")]
pub use {tasks::tasks_by_bisection, volumes::volumes_stepwise};

/// What stops a host from taking one more instance: the rejecting filter and its reason.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Stop {
    /// The filter's name; `None` when the request's host lists exclude the host.
    pub filter: Option<String>,
    /// The filter's text for the reason (`insufficient memory`).
    pub reason: String,
}

/// Schedulable and used amounts of one resource kind, summed over a domain's hosts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[non_exhaustive]
pub struct ResourceUse {
    /// `(capacity − reserved) × allocation_ratio`, summed.
    pub limit: f64,
    /// Used, summed.
    pub used: f64,
}

impl ResourceUse {
    /// What is left: `limit − used`.
    pub fn free(&self) -> f64 {
        self.limit - self.used
    }
}

/// One topology domain (a zone, a rack) of an [`InstanceCapacity`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct DomainCapacity {
    /// The domain's value (`""` for the hosts without one).
    pub name: String,
    /// Live hosts in it.
    pub hosts: u32,
    /// More instances that fit on them.
    pub fits: u64,
    /// Per resource kind, by [`ResourceId`](crate::id::ResourceId) index.
    pub resources: Vec<ResourceUse>,
    /// `(index into InstanceCapacity::stops, hosts)`, most hosts first.
    pub stops: Vec<(u32, u32)>,
}

impl DomainCapacity {
    fn empty(name: &str, kinds: usize) -> Self {
        DomainCapacity {
            name: name.to_owned(),
            hosts: 0,
            fits: 0,
            resources: vec![ResourceUse::default(); kinds],
            stops: Vec::new(),
        }
    }
}
