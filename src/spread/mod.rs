//! The spread engine: SwarmKit-style placement preferences (spread over labels, hierarchically).

mod balanced;
mod compat;
mod constraint;
mod error;
mod filters;
mod node;
mod outcome;
mod request;
mod run;
mod scheduler;
mod skew;
mod tree;

pub use constraint::{Constraint, ConstraintOp};
pub use error::{ConstraintError, SpreadError};
pub use filters::{
    ConstraintFilter, HostPortFilter, MaxReplicasFilter, PlatformFilter, ReadyFilter, SwarmResourceFilter,
};
pub use node::{ENGINE_LABEL_PREFIX, HOST_PORTS_LABEL};
pub use outcome::{Assignment, BranchNote, BranchReport, FilterCount, SpreadExplanation, SpreadOutcome};
pub use request::{
    Descriptor, HardSpread, HostPort, Mode, Platform, Preference, SpreadRequest, Targets, WeightedSpread,
    WhenUnsatisfiable,
};
pub use scheduler::{SpreadScheduler, SpreadSchedulerBuilder, SpreadScratch};
pub use skew::SkewFilter;
