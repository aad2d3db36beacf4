//! The built-in suite, embedded at build time from `scenarios/`: server scenarios, and the
//! client scenarios of `mcpcheck client` (`role: client`, under `scenarios/client/`).

use super::model::Scenario;
use super::model::client::ClientScenario;
use super::parse::{ScenarioError, is_client_document, parse_client_scenario, parse_scenario};

include!(concat!(env!("OUT_DIR"), "/builtin_scenarios.rs"));

/// Parses every built-in server scenario. An error here is a bug in the suite, caught by tests.
pub fn scenarios() -> Result<Vec<Scenario>, Vec<ScenarioError>> {
    parse_all(|text| !is_client_document(text), parse_scenario)
}

/// Parses every built-in client scenario.
pub fn client_scenarios() -> Result<Vec<ClientScenario>, Vec<ScenarioError>> {
    parse_all(is_client_document, parse_client_scenario)
}

fn parse_all<T>(
    wanted: impl Fn(&str) -> bool,
    parse: impl Fn(&str, &str) -> Result<T, ScenarioError>,
) -> Result<Vec<T>, Vec<ScenarioError>> {
    let mut ok = Vec::new();
    let mut errors = Vec::new();
    for (path, text) in BUILTIN.iter().filter(|(_, text)| wanted(text)) {
        match parse(&format!("builtin:{path}"), text) {
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
