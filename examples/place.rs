//! Places one request on one cluster, both read from JSON files, and prints the placement and
//! its explanation as JSON.
//!
//! ```text
//! cargo run --example place -- examples/data/sample_cluster.json examples/data/sample_request.json
//! ```
//!
//! Uses [`Scheduler::standard`]. Bad input prints a clear message and exits with status 2.

use placewise::{Cluster, Request, Scheduler};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [cluster_path, request_path] = args.as_slice() else {
        eprintln!("usage: place <cluster.json> <request.json>");
        return ExitCode::from(2);
    };
    match run(cluster_path, request_path) {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(cluster_path: &str, request_path: &str) -> Result<String, String> {
    let read = |path: &str| std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"));
    let cluster = Cluster::from_json(&read(cluster_path)?).map_err(|e| format!("{cluster_path}: {e}"))?;
    let request = Request::from_json(&read(request_path)?).map_err(|e| format!("{request_path}: {e}"))?;
    let placement = Scheduler::standard().schedule(&cluster, &request).map_err(|e| e.to_string())?;
    serde_json::to_string_pretty(&placement).map_err(|e| e.to_string())
}
