//! Fuzz target `extra_specs`: see `placewise_fuzzing::extra_specs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(broken) = placewise_fuzzing::extra_specs(data) {
        panic!("invariant broken: {broken}");
    }
});
