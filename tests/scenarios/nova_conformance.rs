//! Decision-for-decision conformance with OpenStack Nova's filter scheduler.
//!
//! Every `tests/data/nova/<name>.scenario.json` is a scenario in the reference tool's format;
//! `<name>.expected.json` is what Nova 34's own scheduler code answered for it (produced by
//! `tests/data/nova/regenerate.sh`, which runs `../shared/nova-reference/oracle.py`). placewise
//! must make the same decisions: the same host (and node) for every instance, the same
//! no-valid-host outcome, the same hosts removed by each filter for the first instance (and the
//! same `in`/`out` counts and statuses: `ran`, `not_reached`, `bypassed`), and the
//! same weighed list with bit-identical weights. A scenario on which Nova raised must make
//! placewise return an error.
//!
//! The scenarios come from three generators in `tests/data/nova/`: `make_scenarios.py` (small
//! scenarios, one rule each), `random_scenarios.py` (`random_<seed>.scenario.json`: seeded
//! scenarios drawn from everything the tool's format allows, so that rules interact; with
//! `--nova34`, `random34_<seed>.scenario.json`: the same draws with NUMATopologyFilter,
//! PciPassthroughFilter, PCIWeigher, CrossCellWeigher, ImagePropertiesWeigher and metrics
//! without a value added) and
//! `drawn_scenarios.sh` (`drawn_<hash>.scenario.json`: the `nova_drawn` fuzz target's draws
//! within Nova's scope, from its coverage-chosen corpus and from pseudo-random bytes; every
//! filter and weigher Nova 34 knows, hosts with several nodes, aggregates with overrides,
//! hints, groups, forced and ignored hosts). `oracle_batch.py` runs Nova on many of them in one
//! process.

use crate::data;

use placewise::nova::scenario::Scenario;
use placewise::request::ExplainOptions;
use serde_json::Value;
use std::path::Path;

fn run(scenario_path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(scenario_path).map_err(|e| e.to_string())?;
    let expected_path = scenario_path.to_string_lossy().replace(".scenario.json", ".expected.json");
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(&expected_path).map_err(|e| format!("{expected_path}: {e}"))?)
            .map_err(|e| format!("{expected_path}: {e}"))?;
    let outcome = Scenario::from_json(&text).map_err(|e| e.to_string()).and_then(|scenario| {
        let scheduler = scenario.config.build().map_err(|e| e.to_string())?;
        let request = scenario.request.clone().explain(ExplainOptions::detailed(scenario.cluster.len() as u32));
        let placement = scheduler.schedule(&scenario.cluster, &request).map_err(|e| e.to_string())?;
        Ok(scenario.output(&placement))
    });
    if let Some(nova_error) = expected.get("error") {
        return match outcome {
            Err(_) => Ok(()),
            Ok(_) => Err(format!("Nova raised ({nova_error}) but placewise placed the request")),
        };
    }
    let got = outcome?;
    for key in ["no_valid_host", "selections", "selected_nodes"] {
        if got[key] != expected[key] {
            return Err(format!("{key}: placewise {} but Nova {}", got[key], expected[key]));
        }
    }
    let (Some(ours), Some(theirs)) = (got.get("first_instance"), expected.get("first_instance")) else {
        return Ok(());
    };
    let nova_filters = theirs["filters"].as_array().cloned().unwrap_or_default();
    for (i, nova) in nova_filters.iter().enumerate() {
        let mine = &ours["filters"][i];
        if mine["filter"] != nova["filter"] || mine["status"] != nova["status"] {
            return Err(format!("filter {i}: placewise {mine} but Nova {nova}"));
        }
        if nova["status"] == "ran" && mine["removed"] != nova["removed"] {
            return Err(format!("{} removed {} but Nova removed {}", nova["filter"], mine["removed"], nova["removed"]));
        }
        if nova["status"] == "ran" && (mine["in"] != nova["in"] || mine["out"] != nova["out"]) {
            return Err(format!("{} counts: placewise {mine} but Nova {nova}", nova["filter"]));
        }
    }
    let nova_weighed = theirs["weighed"].as_array().cloned().unwrap_or_default();
    let my_weighed = ours["weighed"].as_array().cloned().unwrap_or_default();
    if nova_weighed.len() != my_weighed.len() {
        return Err(format!("weighed {} hosts, Nova {}", my_weighed.len(), nova_weighed.len()));
    }
    for (rank, (mine, nova)) in my_weighed.iter().zip(&nova_weighed).enumerate() {
        let (mw, nw) = (mine["weight"].as_f64(), nova["weight"].as_f64());
        let same_weight =
            matches!((mw, nw), (Some(a), Some(b)) if a.to_bits() == b.to_bits() || (a == 0.0 && b == 0.0));
        if mine["host"] != nova["host"] || !same_weight {
            return Err(format!("weighed list differs at rank {rank}: placewise {mine} but Nova {nova}"));
        }
    }
    Ok(())
}

#[test]
fn every_scenario_matches_nova() {
    let paths = data::files("nova", ".scenario.json", 1);
    let failures: Vec<String> = paths
        .iter()
        .filter_map(|p| run(p).err().map(|e| format!("{}: {e}", p.file_name().unwrap_or_default().to_string_lossy())))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} scenarios differ from Nova:\n{}",
        failures.len(),
        paths.len(),
        failures.join("\n")
    );
}
