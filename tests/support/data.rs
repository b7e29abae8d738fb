//! The data files of the data-driven tests.
//!
//! Included with `#[path = "../support/data.rs"] mod data;` by the scenario runner
//! (`tests/scenarios/main.rs`), whose modules read `tests/data/<name>/`.

use std::path::{Path, PathBuf};

/// The files of `tests/data/<name>/` whose names end in `suffix`, sorted by path. Fails the test
/// when the directory cannot be read or holds fewer than `at_least` such files.
pub(crate) fn files(name: &str, suffix: &str, at_least: usize) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name);
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    let mut paths: Vec<PathBuf> = entries
        .map(|e| e.unwrap_or_else(|e| panic!("{}: {e}", dir.display())).path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    paths.sort();
    assert!(
        paths.len() >= at_least,
        "{} files ending in {suffix} in {}, expected at least {at_least}",
        paths.len(),
        dir.display()
    );
    paths
}
