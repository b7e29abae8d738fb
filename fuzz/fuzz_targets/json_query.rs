//! Fuzz target `json_query`: see `placewise::fuzzing::json_query`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(broken) = placewise::fuzzing::json_query(data) {
        panic!("invariant broken: {broken}");
    }
});
