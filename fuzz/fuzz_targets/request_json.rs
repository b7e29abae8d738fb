//! Fuzz target `request_json`: see `placewise::fuzzing::request_json`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(broken) = placewise::fuzzing::request_json(data) {
        panic!("invariant broken: {broken}");
    }
});
