//! Typed errors.
//!
//! `Err` is for input that is wrong: a malformed snapshot, a bad expression, an impossible
//! configuration, an event that does not fit the cluster. A request that simply finds no host is
//! not an error; it is a [`Outcome`](crate::schedule::Outcome) with an [`Explanation`](crate::explain::Explanation).

use thiserror::Error;

/// A syntax error in an expression (label selector, extra spec, query), with the position of the
/// offending text.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{expected} at position {position} in `{input}`")]
#[non_exhaustive]
pub struct ParseError {
    /// The whole text that failed to parse.
    pub input: String,
    /// Byte offset of the offending text in `input`.
    pub position: usize,
    /// What the parser expected there, such as `expected a value after '='`.
    pub expected: String,
}

impl ParseError {
    /// A parse error at `position` of `input`.
    pub fn new(input: &str, position: usize, expected: impl Into<String>) -> Self {
        Self { input: input.to_owned(), position, expected: expected.into() }
    }
}

/// A snapshot, request or configuration that cannot be built.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The JSON text is malformed or has a field of the wrong type.
    #[error("invalid JSON at line {line}, column {column}: {message}")]
    Json {
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// What serde reported.
        message: String,
    },
    /// A JSON array stands where the documented form is an object (serde's sequence form of a
    /// struct, which the crate's `from_json` functions do not accept).
    #[error("expected an object at {path}, found an array")]
    NotAnObject {
        /// Where, as `$` for the whole text, then `.field` and `[index]` steps.
        path: String,
    },
    /// Two hosts share a name.
    #[error("duplicate host name `{name}`")]
    DuplicateHost {
        /// The repeated name.
        name: String,
    },
    /// A name is empty where one is required.
    #[error("{what} has an empty name")]
    EmptyName {
        /// What was being named, such as `host` or `aggregate`.
        what: String,
    },
    /// Two instances share an id.
    #[error("duplicate instance id `{id}` on host `{host}`")]
    DuplicateInstance {
        /// The host on which the second copy was found.
        host: String,
        /// The repeated id.
        id: String,
    },
    /// Two disks of one host share a name.
    #[error("duplicate disk `{disk}` on host `{host}`")]
    DuplicateDisk {
        /// The host.
        host: String,
        /// The repeated disk name.
        disk: String,
    },
    /// Two aggregates share a name.
    #[error("duplicate aggregate `{name}`")]
    DuplicateAggregate {
        /// The repeated name.
        name: String,
    },
    /// A reference to a host, level or other item that does not exist.
    #[error("{context} refers to unknown {kind} `{name}`")]
    UnknownReference {
        /// What kind of item was referred to (`host`, `topology level`, …).
        kind: &'static str,
        /// The name that was not found.
        name: String,
        /// Where the reference was made, such as `aggregate \`gpu-nodes\``.
        context: String,
    },
    /// A number that must be finite and non-negative is not.
    #[error("{context}: {field} is {problem} ({value})")]
    InvalidNumber {
        /// Where the number was found, such as `host \`h1\``.
        context: String,
        /// The field, such as `memory_mb capacity`.
        field: String,
        /// `negative`, `not finite`, `zero` …
        problem: &'static str,
        /// The offending value.
        value: f64,
    },
    /// An expression did not parse.
    #[error("bad expression in {context}: {source}")]
    Expression {
        /// Where the expression was found.
        context: String,
        /// The parse error with its position.
        #[source]
        source: ParseError,
    },
    /// A configuration value is out of range or inconsistent.
    #[error("invalid configuration: {message}")]
    Config {
        /// What is wrong.
        message: String,
    },
    /// A configuration asks a filter or weigher for behaviour the model does not express, such
    /// as `ImagePropertiesWeigher` with a non-zero multiplier (it reads the cell database).
    #[error("{name}: {part} is not modelled")]
    NotModelled {
        /// The filter or weigher.
        name: String,
        /// What it would need, naming the option.
        part: String,
    },
}

impl BuildError {
    pub(crate) fn from_json(err: &serde_json::Error) -> Self {
        let message = err.to_string();
        // serde_json appends " at line L column C"; the fields carry it already.
        let message = match message.rfind(" at line ") {
            Some(cut) => message[..cut].to_owned(),
            None => message,
        };
        BuildError::Json { line: err.line(), column: err.column(), message }
    }

    pub(crate) fn number(
        context: impl Into<String>,
        field: impl Into<String>,
        problem: &'static str,
        value: f64,
    ) -> Self {
        BuildError::InvalidNumber { context: context.into(), field: field.into(), problem, value }
    }
}

/// An event that cannot be applied to a cluster. The cluster it was applied to is unchanged.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum EventError {
    /// The event names a host the cluster does not have.
    #[error("unknown host `{name}`")]
    UnknownHost {
        /// The host name.
        name: String,
    },
    /// A host with this name already exists.
    #[error("host `{name}` already exists")]
    HostExists {
        /// The host name.
        name: String,
    },
    /// The event names an instance the host does not run.
    #[error("host `{host}` has no instance `{id}`")]
    UnknownInstance {
        /// The host name.
        host: String,
        /// The instance id.
        id: String,
    },
    /// The event names a disk the host does not have.
    #[error("host `{host}` has no disk `{disk}`")]
    UnknownDisk {
        /// The host name.
        host: String,
        /// The disk name.
        disk: String,
    },
    /// The event carries invalid data (a negative resource, a duplicate id …).
    #[error("invalid event: {0}")]
    Invalid(#[from] BuildError),
}

/// A request that cannot be scheduled because it is malformed, or a filter or weigher that
/// failed. "No host fits" is not an error: it is a [`Outcome`](crate::schedule::Outcome) that placed
/// fewer instances than requested, with its [`Explanation`](crate::explain::Explanation).
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ScheduleError {
    /// The request is invalid.
    #[error("invalid request: {0}")]
    Request(BuildError),
    /// The request asks for more instances than the scheduler accepts
    /// ([`SchedulerBuilder::max_count`](crate::schedule::SchedulerBuilder::max_count)).
    #[error("request count {count} is above the limit of {max}")]
    CountTooLarge {
        /// The count asked for.
        count: u32,
        /// The scheduler's limit.
        max: u32,
    },
    /// A filter could not prepare for this request (for example its input did not parse).
    #[error("filter `{filter}` failed: {message}")]
    Filter {
        /// The filter's name.
        filter: String,
        /// What went wrong.
        message: String,
    },
    /// A weigher could not prepare for this request.
    #[error("weigher `{weigher}` failed: {message}")]
    Weigher {
        /// The weigher's name.
        weigher: String,
        /// What went wrong.
        message: String,
    },
    /// The request has a part the model does not express (a NUMA topology, a PCI request) and a
    /// filter or weigher that would judge it runs: it is refused rather than passed silently.
    #[error("`{by}` cannot judge the request: {part} is not modelled")]
    NotModelled {
        /// The filter or weigher that would judge the part.
        by: String,
        /// The part, naming what asks for it (such as ``a NUMA topology (flavor extra spec
        /// `hw:numa_nodes`)``).
        part: String,
    },
}
