//! `mcpcheck list`: the scenarios a run would choose from, one line each.

use std::process::ExitCode;

use super::resolve;
use crate::outcome::Severity;

/// Prints every scenario of `paths` (or the built-in suite): id, severity, revisions,
/// spec section and title.
pub fn list(paths: &[std::path::PathBuf]) -> anyhow::Result<ExitCode> {
    let scenarios = resolve::scenarios(paths, false, &[], &[])?;
    for s in &scenarios {
        let revs = s
            .revisions
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .join(",");
        let severity = if s.severity == Severity::Warning {
            "should"
        } else {
            "must"
        };
        println!(
            "{:<44} {:<6} {:<44} {}  {}",
            s.id, severity, revs, s.spec, s.title
        );
    }
    println!("{} scenarios", scenarios.len());
    Ok(ExitCode::SUCCESS)
}
