//! How database failures become [`StoreError`]s: what the caller may do next decides the kind.

use placewise::shared::{SharedError, StoreError, StoreErrorKind};
use postgres::error::SqlState;

/// The kind of a failure before or during a statement: nothing was committed.
fn kind(e: &postgres::Error) -> StoreErrorKind {
    match e.code() {
        None => StoreErrorKind::Unavailable,
        Some(c) if *c == SqlState::INSUFFICIENT_PRIVILEGE => StoreErrorKind::Denied,
        Some(c)
            if *c == SqlState::ADMIN_SHUTDOWN
                || *c == SqlState::CRASH_SHUTDOWN
                || *c == SqlState::CANNOT_CONNECT_NOW
                || *c == SqlState::T_R_SERIALIZATION_FAILURE
                || *c == SqlState::T_R_DEADLOCK_DETECTED
                || *c == SqlState::TOO_MANY_CONNECTIONS
                || c.code().starts_with("08") =>
        {
            StoreErrorKind::Unavailable
        }
        Some(c) if *c == SqlState::UNDEFINED_TABLE => StoreErrorKind::Corrupt,
        Some(_) => StoreErrorKind::Other,
    }
}

/// A failure before `COMMIT`: the transaction rolled back (or never began).
pub(crate) fn from_pg(e: postgres::Error) -> SharedError {
    SharedError::Store(StoreError::new(kind(&e), Database(e)))
}

/// A database failure as a [`StoreError`]'s source: in the server's own words when it sent
/// any, else the client's; its own source is the driver's [`postgres::Error`].
#[derive(Debug)]
struct Database(postgres::Error);

impl std::fmt::Display for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0.as_db_error() {
            Some(db) => write!(f, "{} ({})", db.message(), db.code().code()),
            None => self.0.fmt(f),
        }
    }
}

impl std::error::Error for Database {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// A failure of `COMMIT` itself. When the server answered with an error the transaction
/// rolled back; when the connection broke the outcome is unknown.
pub(crate) fn from_pg_at_commit(e: postgres::Error) -> SharedError {
    let kind = match kind(&e) {
        StoreErrorKind::Unavailable if e.code().is_none_or(|c| *c != SqlState::T_R_SERIALIZATION_FAILURE) => {
            StoreErrorKind::OutcomeUnknown
        }
        other => other,
    };
    SharedError::Store(StoreError::new(kind, Database(e)))
}
