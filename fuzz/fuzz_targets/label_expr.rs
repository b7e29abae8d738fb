//! Fuzz target `label_expr`: see `placewise_fuzzing::label_expr`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(broken) = placewise_fuzzing::label_expr(data) {
        panic!("invariant broken: {broken}");
    }
});
