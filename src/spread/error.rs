//! The spread engine's errors: a constraint that does not parse, a request the engine cannot
//! interpret. A batch that cannot be placed is not an error but a
//! [`SpreadOutcome`](super::SpreadOutcome) with unplaced tasks.

use crate::error::ScheduleError;

/// Why a placement constraint did not parse; the messages are SwarmKit's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConstraintError {
    /// Neither `==` nor `!=` appears in the text.
    #[error("constraint expected one operator from ==, !=")]
    Operator,
    /// The key is not a letter or `_` followed by at least one letter, digit, `-`, `_` or `.`.
    #[error("key '{key}' is invalid")]
    Key {
        /// The trimmed key.
        key: String,
    },
    /// The value is empty or holds a character outside SwarmKit's value alphabet.
    #[error("value '{value}' is invalid")]
    Value {
        /// The trimmed value.
        value: String,
    },
}

/// A spread request the engine cannot interpret.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SpreadError {
    /// A constraint of the request does not parse.
    #[error("invalid constraint `{constraint}`: {error}")]
    Constraint {
        /// The constraint as written.
        constraint: String,
        /// Why it does not parse.
        error: ConstraintError,
    },
    /// A descriptor that names nothing the engine can read, in a preference or hard spread
    /// constraint that needs one (the compatible mode skips such `spread` preferences instead).
    #[error("unsupported descriptor `{descriptor}` (use node.labels.<key>, engine.labels.<key>, a plain label key, node.id or node.hostname)")]
    UnsupportedDescriptor {
        /// The descriptor as written.
        descriptor: String,
    },
    /// A preference over a label key no node of the snapshot carries, in a
    /// [strict](super::SpreadRequest::strict_descriptors) request: such a level puts every
    /// node in one branch, so it is most likely a misspelt key. SwarmKit ignores it; without
    /// the strict flag both modes place as SwarmKit does and say so in
    /// [`SpreadOutcome::warnings`](super::SpreadOutcome::warnings).
    #[error("preference `{descriptor}` names a label no node carries")]
    LabelNotCarried {
        /// The preference's descriptor, as the outcome's levels spell it.
        descriptor: String,
    },
    /// A weight or target percentage is negative or not finite.
    #[error("invalid weight {weight} for value `{value}` of `{descriptor}`")]
    Weight {
        /// The preference's descriptor.
        descriptor: String,
        /// The value the weight is for (`*` for the weight of unlisted values).
        value: String,
        /// The weight.
        weight: f64,
    },
    /// Target percentages add up to more than 100.
    #[error("target percentages of `{descriptor}` add up to {total}, more than 100")]
    Percent {
        /// The preference's descriptor.
        descriptor: String,
        /// Their sum.
        total: f64,
    },
    /// A hard spread constraint with `max_skew` 0.
    #[error("max_skew of the hard spread over `{key}` must be at least 1")]
    MaxSkew {
        /// The constraint's key.
        key: String,
    },
    /// The per-task resources are invalid (negative or not finite).
    #[error("invalid request: {error}")]
    Request {
        /// The foundation's error.
        error: ScheduleError,
    },
    /// A filter or weigher could not prepare for the batch.
    #[error("{error}")]
    Prepare {
        /// The foundation's error.
        error: ScheduleError,
    },
}
