//! Running the binary, and finding the fixtures and the peer objects.

use std::path::PathBuf;
use std::process::Command;

/// What one run of the binary gave.
#[derive(Debug)]
pub(crate) struct Run {
    /// The exit status (`None`: killed by a signal).
    pub(crate) status: Option<i32>,
    /// Standard output.
    pub(crate) stdout: String,
    /// Standard error.
    pub(crate) stderr: String,
}

impl Run {
    /// Standard output parsed as JSON (the run had `--json`).
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}\nstderr: {}", self.stdout, self.stderr))
    }
}

/// Runs `placewise` with `args`.
pub(crate) fn run(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_placewise")).args(args).output().expect("the placewise binary runs");
    Run {
        status: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The fixtures of one system: `tests/data/import/<system>/` at the repository root.
pub(crate) fn fixtures(system: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/data/import").join(system)
}

/// A fixture's path as a string argument.
pub(crate) fn fixture(system: &str, name: &str) -> String {
    fixtures(system).join(name).display().to_string()
}

/// The real systems' objects for `system` (`longhorn`, `swarm`, `openstack`) under
/// `../shared/reference/peer_objects/`, or `None` after saying loudly that they are absent.
/// With `PLACEWISE_REQUIRE_PEER_OBJECTS` set, absence fails the test instead.
pub(crate) fn peer_objects(system: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/reference/peer_objects").join(system);
    if dir.is_dir() {
        return Some(dir);
    }
    let message = format!(
        "SKIPPED: the peer objects folder {} is absent; the real {system} objects were not read",
        dir.display()
    );
    if std::env::var_os("PLACEWISE_REQUIRE_PEER_OBJECTS").is_some() {
        panic!("{message}");
    }
    // Straight to the process's standard error: the test harness captures `eprintln!` and
    // shows it only for a failed test, and a skip must be seen.
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "\n*** {message} ***\n");
    None
}
