//! Fuzz target `events`: see `placewise_fuzzing::events`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(broken) = placewise_fuzzing::events(data) {
        panic!("invariant broken: {broken}");
    }
});
