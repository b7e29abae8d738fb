//! Replays a scenario file in the filter scheduler reference tool's format
//! (`../shared/nova-reference/`) and prints placewise's answer in the tool's output shape, so the
//! two can be compared by diffing two JSON files:
//!
//! ```text
//! cargo run --release --example nova_scenario -- scenario.json > placewise.json
//! .venv/bin/python oracle.py scenario.json > nova.json
//! ```
//!
//! The output has `selections`, `selected_nodes`, `no_valid_host`, the first instance's
//! per-filter removals and weighed list, and `timing.select_loop_s`: placewise's time for the
//! whole request, measured around the scheduling call alone (the tool's field of that name).
//! `--no-trace` leaves out the first instance's trace (its per-host verdicts cost time).
//! Unsupported scenario features and bad input print a message and exit with status 2.

use placewise::nova::scenario::Scenario;
use placewise::request::ExplainOptions;
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let trace = !args.iter().any(|a| a == "--no-trace");
    let Some(path) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("usage: nova_scenario <scenario.json> [--no-trace]");
        return ExitCode::from(2);
    };
    match run(path, trace) {
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

fn run(path: &str, trace: bool) -> Result<String, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let scenario = Scenario::from_json(&text).map_err(|e| format!("{path}: {e}"))?;
    let scheduler = scenario.config.build().map_err(|e| format!("{path}: {e}"))?;
    let mut request = scenario.request.clone();
    if trace {
        request = request.explain(ExplainOptions::detailed(scenario.cluster.len() as u32));
    }
    let start = Instant::now();
    let placement = scheduler.schedule(&scenario.cluster, &request).map_err(|e| format!("{path}: {e}"))?;
    let elapsed = start.elapsed().as_secs_f64();
    let mut out = scenario.output(&placement);
    out["timing"] = serde_json::json!({
        "select_loop_s": elapsed,
        "per_instance_ms": 1000.0 * elapsed / f64::from(scenario.request.request.count.max(1)),
        "trace_mode": if trace { "first" } else { "none" },
    });
    serde_json::to_string_pretty(&out).map_err(|e| e.to_string())
}
