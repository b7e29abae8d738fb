//! placewise's shared scheduling state on PostgreSQL (docs to come).

mod audit;
mod error;
pub mod fleet;
pub mod schema;
pub mod server;
mod store;

pub use audit::Audit;
pub use store::{ClaimRecord, PgStore, Stage};
