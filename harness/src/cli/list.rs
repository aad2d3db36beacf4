//! `mcpcheck list`: the scenarios a run would choose from, as a table for people or, with
//! `--format json`, as data for tests and tools that must not scrape the table.

use std::process::ExitCode;

use serde_json::{Value, json};

use super::flags::Format;
use super::resolve;
use crate::outcome::Severity;
use crate::runner::partition::Partition;
use crate::scenario::Scenario;
use crate::transport::target::TransportKind;

/// Prints every scenario of `paths` (or the built-in suite), or of one `--partition`.
pub fn list(
    paths: &[std::path::PathBuf],
    format: Format,
    partition: Option<Partition>,
) -> anyhow::Result<ExitCode> {
    let scenarios = resolve::scenarios(paths, false, &[], &[])?;
    let scenarios = match partition {
        Some(p) => p.select(scenarios, |s| &s.id),
        None => scenarios,
    };
    if format == Format::Json {
        super::out(&format!("{:#}\n", to_json(&scenarios)));
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = String::new();
    for s in &scenarios {
        let revs = s
            .revisions
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .join(",");
        table.push_str(&format!(
            "{:<44} {:<6} {:<44} {}  {}\n",
            s.id,
            severity(s),
            revs,
            s.spec,
            s.title
        ));
    }
    table.push_str(&format!("{} scenarios\n", scenarios.len()));
    super::out(&table);
    Ok(ExitCode::SUCCESS)
}

fn severity(s: &Scenario) -> &'static str {
    if s.severity == Severity::Warning {
        "should"
    } else {
        "must"
    }
}

/// The scenarios as a JSON array: id, title, severity (`must`/`should`), revisions,
/// transports, spec section, area (the id's first segment), required capabilities and the
/// official suite's scenario ids it stands for (`official`, maybe empty).
pub fn to_json(scenarios: &[Scenario]) -> Value {
    scenarios
        .iter()
        .map(|s| {
            json!({
                "id": s.id,
                "title": s.title,
                "severity": severity(s),
                "revisions": s.revisions.iter().map(|r| r.as_str()).collect::<Vec<_>>(),
                "transports": s.transports.iter().map(|t| match t {
                    TransportKind::Stdio => "stdio",
                    TransportKind::Http => "http",
                }).collect::<Vec<_>>(),
                "spec": s.spec,
                "area": s.id.split_once('/').map_or(s.id.as_str(), |(area, _)| area),
                "requires": s.requires.iter().map(ToString::to_string).collect::<Vec<_>>(),
                "official": s.official,
            })
        })
        .collect()
}
