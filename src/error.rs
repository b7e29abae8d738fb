//! Typed errors.
//!
//! `Err` is for input that is wrong: a malformed snapshot, a bad expression, an impossible
//! configuration, an event that does not fit the cluster. A request that simply finds no host is
//! not an error; it is a [`Outcome`](crate::schedule::Outcome) with an [`Explanation`](crate::explain::Explanation).
//!
//! A variant made from another error keeps it: [`BuildError::Json`] keeps serde's error,
//! [`ScheduleError::Filter`] the filter's own error (a caller's filter hands in its own type with
//! [`ScheduleError::filter`]), and [`std::error::Error::source`] returns it, typed. Words the
//! crate puts together itself are variants with the values as fields
//! ([`BuildError::NonFiniteMultiplier`]).

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;
use thiserror::Error;

/// The underlying error a variant keeps as its source: a [`serde_json::Error`], a query's
/// error, or the error type of a caller's own filter or weigher.
///
/// It is shared, so the crate's errors stay `Clone`, and two are equal when their texts are
/// equal, so they stay `PartialEq`. It is not itself an error in the
/// [`source`](std::error::Error::source) chain: the variant that holds it reports the error
/// inside as its source, so `err.source()` downcasts to the concrete type.
///
/// ```
/// use placewise::ScheduleError;
/// use std::error::Error;
///
/// let err = ScheduleError::filter("mine", "input did not parse");
/// assert_eq!(err.to_string(), "filter `mine` failed: input did not parse");
/// assert_eq!(err.source().unwrap().to_string(), "input did not parse");
/// ```
#[derive(Clone)]
pub struct ErrorSource(Arc<dyn StdError + Send + Sync + 'static>);

impl ErrorSource {
    /// Keeps `error` (a typed error, or a `String` or `&str` for an error in words).
    pub fn new(error: impl Into<Box<dyn StdError + Send + Sync + 'static>>) -> Self {
        ErrorSource(Arc::from(error.into()))
    }

    /// The error inside.
    pub fn get_ref(&self) -> &(dyn StdError + Send + Sync + 'static) {
        &*self.0
    }

    /// The error inside as a `T`, when it is one.
    pub fn downcast_ref<T: StdError + 'static>(&self) -> Option<&T> {
        self.0.downcast_ref::<T>()
    }
}

impl std::ops::Deref for ErrorSource {
    type Target = dyn StdError + Send + Sync + 'static;

    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

impl fmt::Debug for ErrorSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for ErrorSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

/// Equal when the texts are: the error types inside need not be comparable. Only an error
/// being compared formats its text.
impl PartialEq for ErrorSource {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.0.to_string() == other.0.to_string()
    }
}

impl Eq for ErrorSource {}

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
    #[error("invalid JSON at line {line}, column {column}: {}", without_position(.source))]
    Json {
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// What serde reported: a [`serde_json::Error`].
        #[source]
        source: ErrorSource,
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
    /// A weigher was given a multiplier that is not finite.
    #[error("invalid configuration: weigher `{weigher}` has a non-finite multiplier ({value})")]
    NonFiniteMultiplier {
        /// The weigher's name.
        weigher: String,
        /// The multiplier given.
        value: f64,
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
    pub(crate) fn from_json(err: serde_json::Error) -> Self {
        BuildError::Json { line: err.line(), column: err.column(), source: ErrorSource::new(err) }
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

/// serde's text without the " at line L column C" it appends: [`BuildError::Json`]'s fields
/// carry the position already.
fn without_position(source: &ErrorSource) -> String {
    let message = source.to_string();
    match message.rfind(" at line ") {
        Some(cut) => message[..cut].to_owned(),
        None => message,
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
    /// Made with [`ScheduleError::filter`].
    #[error("filter `{filter}` failed: {source}")]
    Filter {
        /// The filter's name.
        filter: String,
        /// What went wrong: the filter's own error.
        #[source]
        source: ErrorSource,
    },
    /// A weigher could not prepare for this request. Made with [`ScheduleError::weigher`].
    #[error("weigher `{weigher}` failed: {source}")]
    Weigher {
        /// The weigher's name.
        weigher: String,
        /// What went wrong: the weigher's own error.
        #[source]
        source: ErrorSource,
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

impl ScheduleError {
    /// The filter `filter` failed with `error`: the filter's own error type, which
    /// [`source`](std::error::Error::source) then returns, or a `String` or `&str` in words.
    ///
    /// ```
    /// use placewise::ScheduleError;
    /// use std::error::Error;
    ///
    /// let bad = "x".parse::<u32>().unwrap_err();
    /// let err = ScheduleError::filter("mine", bad.clone());
    /// assert_eq!(err.source().unwrap().downcast_ref(), Some(&bad));
    /// ```
    pub fn filter(filter: impl Into<String>, error: impl Into<Box<dyn StdError + Send + Sync + 'static>>) -> Self {
        ScheduleError::Filter { filter: filter.into(), source: ErrorSource::new(error) }
    }

    /// The weigher `weigher` failed with `error`, as [`filter`](Self::filter) for a filter.
    pub fn weigher(weigher: impl Into<String>, error: impl Into<Box<dyn StdError + Send + Sync + 'static>>) -> Self {
        ScheduleError::Weigher { weigher: weigher.into(), source: ErrorSource::new(error) }
    }
}
