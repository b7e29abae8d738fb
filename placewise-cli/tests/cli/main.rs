//! The `placewise` binary run as a user runs it: on our own fixtures per system
//! (`tests/data/import/<system>/` at the repository root) and on the real systems' objects in
//! `../shared/reference/peer_objects/`.

#[allow(dead_code)] // each system uses its own part
mod common;
mod detect;
mod longhorn;
mod openstack;
mod swarm;
