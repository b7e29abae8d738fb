//! Other schedulers' data formats.
//!
//! - [`nova`]: the scenario and output format of the filter scheduler's reference tool, so that
//!   any decision can be replayed here and compared with the real scheduler's.

pub mod nova;
