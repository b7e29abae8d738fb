//! Fuzz target `nova_scenario`: see `placewise::fuzzing::nova_scenario`.
#![no_main]

use libfuzzer_sys::{fuzz_mutator, fuzz_target, fuzzer_mutate};
use placewise::fuzzing::json_mutate;

fuzz_target!(|data: &[u8]| {
    if let Err(broken) = placewise::fuzzing::nova_scenario(data) {
        panic!("invariant broken: {broken}");
    }
});

// Half the mutations change one JSON value, key or member and keep the rest of the scenario
// (`json_mutate`); the other half are libFuzzer's byte mutations, which also reach the reader's
// malformed-text paths and use the dictionary.
fuzz_mutator!(|data: &mut [u8], size: usize, max_size: usize, seed: u32| {
    if seed % 2 == 0 {
        if let Some(mutant) = json_mutate::mutate(&data[..size], u64::from(seed)) {
            if mutant.len() <= max_size {
                data[..mutant.len()].copy_from_slice(&mutant);
                return mutant.len();
            }
        }
    }
    fuzzer_mutate(data, size, max_size)
});
