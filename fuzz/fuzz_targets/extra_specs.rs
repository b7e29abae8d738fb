//! Fuzz target `extra_specs`: see `placewise::fuzzing::extra_specs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(broken) = placewise::fuzzing::extra_specs(data) {
        panic!("invariant broken: {broken}");
    }
});
