//! The core's built-in weigher, [`FreeResourceWeigher`]. The filter scheduler's weighers live in
//! their engine (`nova::weighers`).

mod free;

pub use free::FreeResourceWeigher;
