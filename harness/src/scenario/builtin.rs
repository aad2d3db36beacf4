//! The built-in suite, embedded at build time from `scenarios/`.

use super::model::Scenario;
use super::parse::{ScenarioError, parse_scenario};

include!(concat!(env!("OUT_DIR"), "/builtin_scenarios.rs"));

/// Parses every built-in scenario. An error here is a bug in the suite, caught by tests.
pub fn scenarios() -> Result<Vec<Scenario>, Vec<ScenarioError>> {
    let mut ok = Vec::new();
    let mut errors = Vec::new();
    for (path, text) in BUILTIN {
        match parse_scenario(&format!("builtin:{path}"), text) {
            Ok(s) => ok.push(s),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(ok)
    } else {
        Err(errors)
    }
}
