//! Fuzz target `nova_scenario`: see `placewise::fuzzing::nova_scenario`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(broken) = placewise::fuzzing::nova_scenario(data) {
        panic!("invariant broken: {broken}");
    }
});
