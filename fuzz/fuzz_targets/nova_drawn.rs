//! Fuzz target `nova_drawn`: see `placewise_fuzzing::nova_draw`.
//!
//! With `NOVA_DRAWN_RENDER=DIR` in the environment, every input run also writes the scenario it
//! draws, as JSON, to `DIR` (named by a hash of the text): `-runs=0` over a corpus turns it into
//! inputs for the text-level `nova_scenario` target. With `NOVA_DRAWN_SCOPE=nova` as well, it
//! writes the draw of the same bytes within Nova's scope instead ([`Scope::Nova`]): scenarios
//! for the conformance tests (`tests/data/nova/drawn_scenarios.sh`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use placewise_fuzzing::nova_draw::{draw_scenario, nova_drawn, Scope};
use std::hash::{Hash, Hasher};

fuzz_target!(|data: &[u8]| {
    if let Some(dir) = std::env::var_os("NOVA_DRAWN_RENDER") {
        let nova = std::env::var_os("NOVA_DRAWN_SCOPE").is_some_and(|s| s == "nova");
        let text = draw_scenario(data, if nova { Scope::Nova } else { Scope::Wide });
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        text.hash(&mut hasher);
        let path = std::path::Path::new(&dir).join(format!("drawn-{:016x}.json", hasher.finish()));
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    }
    if let Err(broken) = nova_drawn(data) {
        panic!("invariant broken: {broken}");
    }
});
