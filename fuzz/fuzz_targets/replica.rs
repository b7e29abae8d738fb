//! Fuzz target `replica`: see `placewise::fuzzing::replica`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(broken) = placewise::fuzzing::replica(data) {
        panic!("invariant broken: {broken}");
    }
});
