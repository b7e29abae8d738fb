//! Fuzz target `spread`: see `placewise::fuzzing::spread`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(broken) = placewise::fuzzing::spread(data) {
        panic!("invariant broken: {broken}");
    }
});
