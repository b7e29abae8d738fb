//! `placewise`: read a cluster as Longhorn, Docker Swarm or OpenStack wrote it (or as
//! placewise's own JSON), and answer from it: what was read (`inspect`), where the next
//! placement goes (`place`), why it goes there or nowhere (`explain`), and how many more fit
//! (`capacity`).
//!
//! Every subcommand takes files or directories (read recursively), JSON or YAML, and detects
//! which system wrote them. `--json` prints machine output. The exit status is 0 when there is
//! an answer (also "it does not fit"), 2 when the input or the command line is bad.

mod answer;
mod detect;
mod load;
mod longhorn;
mod openstack;
mod own;
mod svg;
mod swarm;

use answer::{Answer, CliError};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// The command line.
#[derive(Debug, Parser)]
#[command(name = "placewise", version, about = "Place, explain and count what fits, on a real cluster's own objects")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// What was read: the format, hosts, disks, totals, the workloads found, warnings.
    Inspect(InspectArgs),
    /// Where the next placement goes.
    Place(Ask),
    /// Why a placement goes where it goes, or nowhere: every rule's verdict on every host.
    Explain(Ask),
    /// How many more fit.
    Capacity(CapacityArgs),
}

/// The input every subcommand reads.
#[derive(Debug, Args)]
pub(crate) struct Input {
    /// Files or directories (read recursively) of JSON or YAML.
    #[arg(required = true)]
    pub(crate) paths: Vec<PathBuf>,
    /// Print machine-readable JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Args)]
struct InspectArgs {
    #[command(flatten)]
    input: Input,
    /// Also write the cluster as placewise's own snapshot JSON to this file.
    #[arg(long, value_name = "FILE")]
    write_snapshot: Option<PathBuf>,
}

/// What to place: the flags a system does not use are refused by it.
#[derive(Debug, Args)]
pub(crate) struct Ask {
    #[command(flatten)]
    pub(crate) input: Input,
    /// Longhorn: the volume (by name) whose missing replicas to place.
    #[arg(long)]
    pub(crate) volume: Option<String>,
    /// Longhorn: the size of a new volume (bytes, or a quantity such as `10Gi`).
    #[arg(long)]
    pub(crate) size: Option<String>,
    /// Longhorn: the replica count of a new volume.
    #[arg(long)]
    pub(crate) replicas: Option<u32>,
    /// Swarm: the service (by name or id) whose next tasks to place.
    #[arg(long)]
    pub(crate) service: Option<String>,
    /// Swarm: how many more tasks.
    #[arg(long)]
    pub(crate) tasks: Option<u32>,
    /// OpenStack: the flavor (by name or id).
    #[arg(long)]
    pub(crate) flavor: Option<String>,
    /// OpenStack: how many instances.
    #[arg(long)]
    pub(crate) count: Option<u32>,
    /// OpenStack: a `nova.conf`-style file with the `[filter_scheduler]` section.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// OpenStack: the server group (by id or name) the instances join.
    #[arg(long, value_name = "GROUP")]
    pub(crate) server_group: Option<String>,
}

impl Ask {
    /// Refuses the first flag given that is not among `own` (a system's flags), saying which
    /// flags `system` takes instead.
    pub(crate) fn only(&self, own: &[&str], system: &str) -> Result<(), CliError> {
        let given = [
            ("--volume", self.volume.is_some()),
            ("--size", self.size.is_some()),
            ("--replicas", self.replicas.is_some()),
            ("--service", self.service.is_some()),
            ("--tasks", self.tasks.is_some()),
            ("--flavor", self.flavor.is_some()),
            ("--count", self.count.is_some()),
            ("--config", self.config.is_some()),
            ("--server-group", self.server_group.is_some()),
        ];
        match given.iter().find(|(flag, on)| *on && !own.contains(flag)) {
            Some((flag, _)) => {
                Err(CliError::Usage(format!("{flag} is not for {system} objects ({system} takes {})", own.join(", "))))
            }
            None => Ok(()),
        }
    }
}

#[derive(Debug, Args)]
struct CapacityArgs {
    #[command(flatten)]
    ask: Ask,
    /// Also draw the answer as an SVG chart into this file.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let json = match &cli.command {
        Command::Inspect(a) => a.input.json,
        Command::Place(a) | Command::Explain(a) => a.input.json,
        Command::Capacity(a) => a.ask.input.json,
    };
    match run(cli.command) {
        Ok(answer) => {
            answer.print(json);
            ExitCode::SUCCESS
        }
        Err(e) => {
            if json {
                println!("{}", serde_json::json!({ "error": e.to_string() }));
            }
            eprintln!("placewise: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(command: Command) -> Result<Answer, CliError> {
    match command {
        Command::Inspect(a) => {
            let input = detect::read(&a.input.paths)?;
            let answer = input.inspect()?;
            if let Some(path) = a.write_snapshot {
                let snapshot = answer.snapshot.as_deref().unwrap_or_default();
                std::fs::write(&path, snapshot).map_err(|source| CliError::Write { path: path.clone(), source })?;
            }
            Ok(answer)
        }
        Command::Place(a) => detect::read(&a.input.paths)?.place(&a),
        Command::Explain(a) => detect::read(&a.input.paths)?.explain(&a),
        Command::Capacity(a) => {
            let answer = detect::read(&a.ask.input.paths)?.capacity(&a.ask)?;
            if let Some(path) = a.svg {
                let Some(svg) = answer.svg.as_deref() else {
                    return Err(CliError::Usage("this answer has no chart".into()));
                };
                std::fs::write(&path, svg).map_err(|source| CliError::Write { path: path.clone(), source })?;
            }
            Ok(answer)
        }
    }
}
