//! Fuzz target `json_query`: see `placewise_fuzzing::json_query`.
#![no_main]

use libfuzzer_sys::{fuzz_mutator, fuzz_target, fuzzer_mutate};
use placewise_fuzzing::json_mutate;

fuzz_target!(|data: &[u8]| {
    if let Err(broken) = placewise_fuzzing::json_query(data) {
        panic!("invariant broken: {broken}");
    }
});

// Half JSON-aware mutations, half libFuzzer's own (see `json_mutate::mutate_half`).
fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    json_mutate::mutate_half(data, size, max_size, seed, fuzzer_mutate)
});
