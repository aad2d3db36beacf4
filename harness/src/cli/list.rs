//! `mcpcheck list --format json`: the scenarios as data, one object each, for tests and
//! tools that must not scrape the table `mcpcheck list` prints.

use serde_json::{Value, json};

use crate::check::Severity;
use crate::scenario::{Scenario, TransportKind};

/// The scenarios as a JSON array: id, title, severity (`must`/`should`), revisions,
/// transports, spec section, area (the id's first segment) and required capabilities.
pub fn to_json(scenarios: &[Scenario]) -> Value {
    scenarios
        .iter()
        .map(|s| {
            json!({
                "id": s.id,
                "title": s.title,
                "severity": if s.severity == Severity::Warning { "should" } else { "must" },
                "revisions": s.revisions.iter().map(|r| r.as_str()).collect::<Vec<_>>(),
                "transports": s.transports.iter().map(|t| match t {
                    TransportKind::Stdio => "stdio",
                    TransportKind::Http => "http",
                }).collect::<Vec<_>>(),
                "spec": s.spec,
                "area": s.id.split_once('/').map_or(s.id.as_str(), |(area, _)| area),
                "requires": s.requires.iter().map(ToString::to_string).collect::<Vec<_>>(),
            })
        })
        .collect()
}
