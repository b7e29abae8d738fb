//! The service scheduler's input errors.

use thiserror::Error;

/// A service specification or site description that cannot be used. Nothing is changed when
/// one is returned.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ServiceError {
    /// An application or service name is empty or contains `/`.
    #[error("invalid {what} name `{name}`: expected a non-empty name without `/`")]
    InvalidName {
        /// `application` or `service`.
        what: &'static str,
        /// The name given.
        name: String,
    },
    /// A limit or size is negative or not finite.
    #[error("service `{service}`: {field} is {value}, expected a finite number ≥ 0")]
    InvalidNumber {
        /// The service type (`application/service`).
        service: String,
        /// The field.
        field: String,
        /// The value given.
        value: f64,
    },
    /// Two volumes of one service share a name.
    #[error("service `{service}` has two volumes named `{volume}`")]
    DuplicateVolume {
        /// The service type.
        service: String,
        /// The volume name.
        volume: String,
    },
    /// A replica count above [`MAX_REPLICAS`](crate::service::MAX_REPLICAS).
    #[error("service `{service}` asks for {replicas} replicas, at most 100000 are allowed")]
    TooManyReplicas {
        /// The service type.
        service: String,
        /// The count given.
        replicas: u32,
    },
    /// Two services of one call share an application and name.
    #[error("service `{service}` is listed twice")]
    DuplicateService {
        /// The service type.
        service: String,
    },
    /// A host attribute the service scheduler reads has the wrong shape.
    #[error("host `{host}`: attribute `{attribute}`: {message}")]
    Attribute {
        /// The host.
        host: String,
        /// The attribute (`local_volumes` or `devices`).
        attribute: &'static str,
        /// What is wrong.
        message: String,
    },
    /// A local volume has no `volume/<name>` resource giving its size.
    #[error("host `{host}`: local volume `{volume}` has no resource `volume/{volume}` giving its size")]
    MissingVolumeCapacity {
        /// The host.
        host: String,
        /// The local volume.
        volume: String,
    },
    /// A filter or weigher could not prepare for the call or judge it (its input did not
    /// parse, a filter recorded an error with [`Rejections::fail`](crate::filter::Rejections::fail),
    /// a multiplier is not finite); its error, kept whole.
    #[error(transparent)]
    Prepare {
        /// The filter's or weigher's error.
        error: crate::error::ScheduleError,
    },
    /// The scheduler's builder was given an invalid setting (a multiplier that is not finite).
    #[error(transparent)]
    Build {
        /// The builder's error.
        error: crate::error::BuildError,
    },
    /// The snapshot rejected an event the scheduler produced (a corrupt snapshot).
    #[error("snapshot rejected an event")]
    Snapshot {
        /// The snapshot's error.
        #[source]
        error: crate::error::EventError,
    },
}
