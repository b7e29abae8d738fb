//! Fuzz target `config_json`: see `placewise::fuzzing::config_json`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(broken) = placewise::fuzzing::config_json(data) {
        panic!("invariant broken: {broken}");
    }
});
