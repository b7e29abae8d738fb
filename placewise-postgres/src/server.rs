//! A throwaway PostgreSQL server in a temporary directory, for tests, examples and benches.
//!
//! [`TempServer::start`] finds the installed server binaries, runs `initdb` into a fresh
//! directory and starts `postgres` listening only on a unix socket in that directory. When the
//! process runs as root (as CI does), the server runs as the `postgres` system user, which is
//! how PostgreSQL insists on being run. Dropping the server stops it and removes the directory.
//! [`TempServer::kill`] and [`TempServer::restart`] crash and revive it, for fault tests.

use std::fs;
use std::io;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};
use thiserror::Error;

/// The environment variable that names the directory of the server binaries (`initdb`,
/// `postgres`); when unset they are looked for under `/usr/lib/postgresql/<version>/bin`
/// (newest first) and then through `pg_config --bindir`.
pub const BIN_DIR_VAR: &str = "PLACEWISE_PG_BIN";

/// The environment variable that, set to `1`, turns a missing server into a test failure
/// instead of a skip ([`require_server`]). `.ci/run` sets it.
pub const REQUIRE_VAR: &str = "PLACEWISE_REQUIRE_POSTGRES";

/// Why a throwaway server could not be had.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ServerError {
    /// No PostgreSQL server binaries were found.
    #[error("no PostgreSQL server binaries found (set {BIN_DIR_VAR}, or install the server package)")]
    NotFound,
    /// A step failed to run.
    #[error("{step}: {source}")]
    Io {
        /// What was being done.
        step: String,
        /// The failure.
        #[source]
        source: io::Error,
    },
    /// A step ran and failed.
    #[error("{step} failed: {output}")]
    Failed {
        /// What was being done.
        step: String,
        /// What it printed.
        output: String,
    },
    /// The server did not accept connections in time.
    #[error("the server did not start within {0:?}; its log: {1}")]
    Timeout(Duration, String),
}

/// A running throwaway server; see the [module docs](self).
#[derive(Debug)]
pub struct TempServer {
    dir: PathBuf,
    bin: PathBuf,
    owner: Option<(u32, u32)>,
    child: Option<Child>,
}

/// The port number in the socket's name. Only the unix socket listens, in a directory of the
/// server's own, so every server can use the same number.
const PORT: u16 = 5432;

static SERVERS: AtomicU32 = AtomicU32::new(0);

/// The directory of the server binaries, if any is installed; see [`BIN_DIR_VAR`].
pub fn find_binaries() -> Option<PathBuf> {
    let has_server = |d: &Path| d.join("initdb").is_file() && d.join("postgres").is_file();
    if let Some(dir) = std::env::var_os(BIN_DIR_VAR) {
        let dir = PathBuf::from(dir);
        return has_server(&dir).then_some(dir);
    }
    let mut versions: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse::<u32>().ok()?, e.path().join("bin"))))
        .filter(|(_, d)| has_server(d))
        .collect();
    versions.sort();
    if let Some((_, dir)) = versions.pop() {
        return Some(dir);
    }
    let out = Command::new("pg_config").arg("--bindir").output().ok()?;
    let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    has_server(&dir).then_some(dir)
}

/// For tests: a started server, or `None` after saying loudly on standard error that the
/// test is skipped because no server is installed.
///
/// # Panics
///
/// When [`REQUIRE_VAR`] is `1` and no server can be started (CI must not skip), or when an
/// installed server fails to start.
pub fn require_server(test: &str) -> Option<TempServer> {
    match TempServer::start() {
        Ok(server) => Some(server),
        Err(ServerError::NotFound) if std::env::var(REQUIRE_VAR).as_deref() != Ok("1") => {
            // Straight to the process's standard error: the test harness captures `eprintln!`
            // and shows it only for a failed test, and a skip must be seen.
            let _ = writeln!(
                std::io::stderr(),
                "\n!!! SKIPPED {test}: no PostgreSQL server binaries found; set {REQUIRE_VAR}=1 to make this a failure\n"
            );
            None
        }
        Err(e) => panic!("{test}: cannot start a PostgreSQL server: {e}"),
    }
}

fn io_step(step: &str) -> impl FnOnce(io::Error) -> ServerError + '_ {
    move |source| ServerError::Io { step: step.to_string(), source }
}

/// The uid and gid of the `postgres` system user, read from `/etc/passwd`.
fn postgres_user() -> Option<(u32, u32)> {
    let passwd = fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let f: Vec<&str> = line.split(':').collect();
        (f.len() > 3 && f[0] == "postgres").then(|| Some((f[2].parse().ok()?, f[3].parse().ok()?)))?
    })
}

/// Whether this process runs as root (the owner of `/proc/self` is uid 0).
fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false)
}

impl TempServer {
    /// Creates a data directory and starts a server on it; see the [module docs](self).
    ///
    /// # Errors
    ///
    /// [`ServerError::NotFound`] when no binaries are installed; the others when a step fails.
    pub fn start() -> Result<TempServer, ServerError> {
        let bin = find_binaries().ok_or(ServerError::NotFound)?;
        let owner = if running_as_root() {
            Some(postgres_user().ok_or_else(|| ServerError::Failed {
                step: "running as root".into(),
                output: "no `postgres` system user to run the server as".into(),
            })?)
        } else {
            None
        };
        let n = SERVERS.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!("placewise-pg-{}-{n}-{nanos}", std::process::id()));
        fs::create_dir_all(&dir).map_err(io_step("creating the server directory"))?;
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).map_err(io_step("securing the directory"))?;
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(&dir, Some(uid), Some(gid)).map_err(io_step("handing the directory over"))?;
        }
        let mut server = TempServer { dir, bin, owner, child: None };
        let mut initdb = server.command("initdb");
        initdb.args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "-D"]).arg(server.data());
        let out = initdb.output().map_err(io_step("running initdb"))?;
        if !out.status.success() {
            let output = String::from_utf8_lossy(&out.stderr).into_owned();
            return Err(ServerError::Failed { step: "initdb".into(), output });
        }
        server.launch()?;
        Ok(server)
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(self.bin.join(program));
        if let Some((uid, gid)) = self.owner {
            c.uid(uid).gid(gid);
        }
        c.env("LC_ALL", "C");
        c
    }

    /// Starts the server process on the existing data directory and waits until it answers.
    fn launch(&mut self) -> Result<(), ServerError> {
        let log = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("server.log"))
            .map_err(io_step("opening the server log"))?;
        if let Some((uid, gid)) = self.owner {
            std::os::unix::fs::chown(self.dir.join("server.log"), Some(uid), Some(gid))
                .map_err(io_step("handing the log over"))?;
        }
        let err = log.try_clone().map_err(io_step("opening the server log"))?;
        let mut postgres = self.command("postgres");
        postgres
            .arg("-D")
            .arg(self.data())
            .arg("-k")
            .arg(&self.dir)
            .args(["-p", &PORT.to_string()])
            .args(["-c", "listen_addresses="])
            .args(["-c", "fsync=on", "-c", "synchronous_commit=on"])
            .args(["-c", "max_connections=60", "-c", "shared_buffers=128MB"])
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            // Its own process group, so that a crash test can kill the server and every backend.
            .process_group(0);
        self.child = Some(postgres.spawn().map_err(io_step("starting postgres"))?);
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if postgres::Client::connect(&self.url(), postgres::NoTls).is_ok() {
                return Ok(());
            }
            if let Some(Ok(Some(_))) = self.child.as_mut().map(Child::try_wait) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(ServerError::Timeout(Duration::from_secs(60), self.log_tail()))
    }

    /// The last lines of the server's log.
    pub fn log_tail(&self) -> String {
        let log = fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// The connection string of the superuser `postgres` on database `postgres`.
    pub fn url(&self) -> String {
        self.url_as("postgres")
    }

    /// The connection string of `user` on database `postgres` (the socket trusts every user).
    pub fn url_as(&self, user: &str) -> String {
        format!("host={} port={PORT} user={user} dbname=postgres connect_timeout=5", self.dir.display())
    }

    /// Kills the server and all its backends with `SIGKILL`, as a crash would.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let group = format!("-{}", child.id());
            // The server runs in its own process group; `kill` reaches every backend in it.
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same data directory (after [`kill`](TempServer::kill)
    /// it recovers from its write-ahead log, as after a crash).
    ///
    /// # Errors
    ///
    /// As [`start`](TempServer::start).
    pub fn restart(&mut self) -> Result<(), ServerError> {
        self.kill();
        // Killed backends may take a moment to leave the shared memory the new postmaster
        // checks for; it refuses to start until they have.
        let mut tries = 0;
        loop {
            match self.launch() {
                Err(ServerError::Timeout(..)) if tries < 20 => {
                    tries += 1;
                    self.kill();
                    std::thread::sleep(Duration::from_millis(250));
                }
                other => return other,
            }
        }
    }

    /// Stops the server with a fast shutdown, waiting for it (killing it after 30 s).
    pub fn stop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
            let deadline = Instant::now() + Duration::from_secs(30);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    self.child = None;
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        self.kill();
    }
}

impl Drop for TempServer {
    fn drop(&mut self) {
        self.stop();
        let _ = fs::remove_dir_all(&self.dir);
    }
}
