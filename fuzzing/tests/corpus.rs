//! The fuzz corpora on the stable toolchain: every committed input under `fuzz/seeds/<target>/`
//! and `fuzz/corpus/<target>/` goes through the same entry function as the fuzz target of that
//! name (`placewise_fuzzing`), so a regression that a fuzzer once covered is caught without
//! nightly. Each entry returns `Err` when an invariant breaks; a panic fails the test as well.

use placewise_fuzzing::TARGETS;
use std::path::Path;

fn inputs(target: &str) -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    let mut files = Vec::new();
    for dir in ["seeds", "corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else { continue };
        files.extend(entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_file()));
    }
    files.sort();
    files
}

#[test]
fn every_committed_corpus_input_keeps_every_invariant() {
    let mut failures = Vec::new();
    for &(target, entry) in TARGETS {
        let files = inputs(target);
        assert!(!files.is_empty(), "target `{target}` has no committed corpus");
        for path in files {
            let data = std::fs::read(&path).unwrap();
            if let Err(broken) = entry(&data) {
                failures.push(format!("{}: {broken}", path.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{} inputs broke an invariant:\n{}", failures.len(), failures.join("\n"));
}
