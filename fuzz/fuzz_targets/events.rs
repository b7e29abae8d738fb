//! Fuzz target `events`: see `placewise::fuzzing::events`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(broken) = placewise::fuzzing::events(data) {
        panic!("invariant broken: {broken}");
    }
});
