//! Unit tests of the engine.
