//! The built-in weighers, one concept per file.

mod free;

pub use free::FreeResourceWeigher;
