//! `mcpcheck explain ID`: what a scenario or rule of a report checks, the spec sections and
//! level behind it, and the usual causes of a finding under it. The answer is
//! [`crate::scenario::explain`]'s, the same the `mcpcheck mcp` tool gives.

use std::fmt::Write as _;
use std::process::ExitCode;

use super::{Format, UsageError, out};
use crate::scenario::explain::{Explanation, Kind, Level, explain, suggest};

/// Runs `mcpcheck explain`.
pub fn execute(id: &str, format: Format) -> anyhow::Result<ExitCode> {
    let Some(e) = explain(id) else {
        let hint = suggest(id)
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_else(|| {
                "; `mcpcheck list` and `mcpcheck list --rules` name every id".to_owned()
            });
        return Err(UsageError(format!("no scenario or rule is called `{id}`{hint}")).into());
    };
    match format {
        Format::Json => out(&format!("{}\n", serde_json::to_string_pretty(&e)?)),
        Format::Human => out(&human(&e)),
    }
    Ok(ExitCode::SUCCESS)
}

/// The explanation as a reader wants it on a terminal.
fn human(e: &Explanation) -> String {
    let kind = match e.kind {
        Kind::Scenario => "scenario",
        Kind::ClientScenario => "client scenario",
        Kind::Rule => "rule",
    };
    let mut t = String::new();
    let _ = writeln!(t, "{} ({kind})\n  {}\n", e.id, e.title);
    let _ = writeln!(t, "level:      {}", level(e.level));
    for change in &e.level_changes {
        let _ = writeln!(
            t,
            "            {} from {}",
            level(change.level),
            change.since
        );
    }
    let _ = writeln!(t, "revisions:  {}", e.revisions.join(", "));
    for (n, s) in e.spec.iter().enumerate() {
        let label = if n == 0 { "spec:" } else { "" };
        let _ = writeln!(t, "{label:<12}{} (from {})", s.url, s.since);
    }
    if let Some(rule) = e.rule.as_deref().filter(|r| *r != e.id) {
        let _ = writeln!(t, "filed as:   {rule}");
    }
    if !e.official.is_empty() {
        let _ = writeln!(t, "official:   {}", e.official.join(", "));
    }
    if let Some(source) = &e.source {
        let _ = writeln!(t, "file:       {source}");
    }
    if !e.scenarios.is_empty() {
        let _ = writeln!(t, "scenarios:  {}", e.scenarios.join(", "));
    }
    let _ = writeln!(t, "\nWhat is checked:\n{}", indent(&e.checks));
    if !e.causes.is_empty() {
        let _ = writeln!(t, "\nUsual causes, and the fix:");
        for c in &e.causes {
            let _ = writeln!(t, "{}", indent(&format!("- {c}")));
        }
    }
    t
}

fn level(l: Level) -> &'static str {
    match l {
        Level::Must => "MUST (a failure)",
        Level::Should => "SHOULD (a warning)",
        Level::Info => "informational (never a failure)",
    }
}

/// Wraps `text` at 92 columns, indented by two spaces.
fn indent(text: &str) -> String {
    let mut lines = Vec::new();
    let mut line = String::from(" ");
    for word in text.split_whitespace() {
        if line.len() + word.len() + 1 > 92 && line.trim().len() > 1 {
            lines.push(std::mem::replace(&mut line, String::from(" ")));
        }
        line.push(' ');
        line.push_str(word);
    }
    lines.push(line);
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_reads_with_its_level_spec_and_causes() {
        let text = human(&explain("stdio.stdout-only-messages").unwrap());
        assert!(
            text.starts_with("stdio.stdout-only-messages (rule)"),
            "{text}"
        );
        assert!(text.contains("level:      MUST (a failure)"), "{text}");
        assert!(text.contains("basic/transports"), "{text}");
        assert!(text.contains("Usual causes, and the fix:\n  - "), "{text}");
    }

    #[test]
    fn long_prose_is_wrapped() {
        let long = "word ".repeat(60);
        assert!(indent(&long).lines().all(|l| l.len() <= 93));
        assert!(indent(&long).lines().count() > 2);
    }
}
