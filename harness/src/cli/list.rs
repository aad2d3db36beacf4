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

/// `mcpcheck list --client`: the client scenarios of `paths` (or the built-in ones); a file
/// that does not parse is a usage error with its place, as for server scenarios.
pub fn list_client(paths: &[std::path::PathBuf], format: Format) -> anyhow::Result<ExitCode> {
    use crate::scenario::parse::{parse_client_dir, parse_client_scenario};
    let mut all = Vec::new();
    let mut errors = Vec::new();
    if paths.is_empty() {
        match crate::scenario::builtin::client_scenarios() {
            Ok(s) => all.extend(s),
            Err(es) => errors.extend(es.into_iter().map(|e| e.to_string())),
        }
    }
    for p in paths {
        if p.is_dir() {
            let (ok, errs) = parse_client_dir(p);
            all.extend(ok);
            errors.extend(errs.into_iter().map(|e| e.to_string()));
            continue;
        }
        let name = p.display().to_string();
        match std::fs::read_to_string(p) {
            Ok(text) => match parse_client_scenario(&name, &text) {
                Ok(s) => all.push(s),
                Err(e) => errors.push(e.to_string()),
            },
            Err(e) => errors.push(format!("error: {name}: {e}")),
        }
    }
    if !errors.is_empty() {
        return Err(super::UsageError(errors.join("\n")).into());
    }
    let over = |s: &crate::scenario::model::client::ClientScenario| {
        s.transports
            .iter()
            .map(|t| match t {
                TransportKind::Stdio => "stdio",
                TransportKind::Http => "http",
            })
            .collect::<Vec<_>>()
    };
    if format == Format::Json {
        let rows: Vec<Value> = all
            .iter()
            .map(|s| {
                json!({
                    "id": s.id,
                    "title": s.title,
                    "severity": if s.severity == Severity::Warning { "should" } else { "must" },
                    "revisions": s.revisions.iter().map(|r| r.as_str()).collect::<Vec<_>>(),
                    "transports": over(s),
                    "spec": s.spec,
                    "tell": s.tell,
                    "official": s.official,
                })
            })
            .collect();
        super::out(&format!("{:#}\n", Value::Array(rows)));
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = String::new();
    for s in &all {
        let revs: Vec<&str> = s.revisions.iter().map(|r| r.as_str()).collect();
        table.push_str(&format!(
            "{:<44} {:<10} {:<44} {}  {}\n",
            s.id,
            over(s).join(","),
            revs.join(","),
            s.spec,
            s.title
        ));
    }
    table.push_str(&format!("{} client scenarios\n", all.len()));
    super::out(&table);
    Ok(ExitCode::SUCCESS)
}

/// `mcpcheck list --rules`: every rule a finding can carry, with its severity in the
/// newest revision and the spec section behind it (JSON: the section per revision).
pub fn list_rules(format: Format) -> ExitCode {
    use crate::check::rules::ALL;
    let word = |s: Severity| {
        if s == Severity::Warning {
            "should"
        } else {
            "must"
        }
    };
    if format == Format::Json {
        let rows: Vec<Value> = ALL
            .iter()
            .map(|r| {
                let sections: serde_json::Map<String, Value> = r
                    .sections
                    .iter()
                    .map(|(since, section)| (since.as_str().to_owned(), json!(section)))
                    .collect();
                json!({
                    "id": r.id,
                    "severity": word(r.severity),
                    "sections": sections,
                    "summary": r.summary,
                })
            })
            .collect();
        super::out(&format!("{:#}\n", Value::Array(rows)));
        return ExitCode::SUCCESS;
    }
    let mut table = String::new();
    for r in ALL {
        let section = r.sections.last().map_or("", |(_, s)| s);
        table.push_str(&format!(
            "{:<48} {:<6} {}  {}\n",
            r.id,
            word(r.severity),
            section,
            r.summary
        ));
    }
    table.push_str(&format!("{} rules\n", ALL.len()));
    super::out(&table);
    ExitCode::SUCCESS
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
