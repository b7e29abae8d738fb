//! Fuzz target `cluster_json`: see `placewise::fuzzing::cluster_json`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(broken) = placewise::fuzzing::cluster_json(data) {
        panic!("invariant broken: {broken}");
    }
});
