//! A compact Markdown summary, sized for `$GITHUB_STEP_SUMMARY`: verdict, totals, areas,
//! and the failures with their spec links. Server text is escaped (GitHub renders HTML).

use std::fmt::Write;

use super::Input;
use super::summary;
use crate::outcome::{RunReport, RunVerdict, Severity, Verdict};

/// At most this many failures are listed; the rest are counted.
const MAX_LISTED: usize = 50;

/// Escapes text for a Markdown paragraph or table cell: no HTML, no table breaks, one line.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' => out.push_str("\\|"),
            '`' | '*' | '_' | '[' | ']' | '\\' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' | '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

fn link(text: &str, url: &str) -> String {
    if url.starts_with("https://") || url.starts_with("http://") {
        format!(
            "[{}]({})",
            escape(text),
            url.replace('(', "%28")
                .replace(')', "%29")
                .replace(' ', "%20")
        )
    } else {
        escape(url)
    }
}

/// The "official checks" table (see [`super::official_checks`]), when there is one.
fn official_table(w: &mut String, scenarios: &[crate::outcome::ScenarioOutcome]) {
    let rows = super::official_checks::rows(scenarios);
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        w,
        "| official check | verdict | coverage | mcpcheck scenarios |"
    );
    let _ = writeln!(w, "|---|---|---|---|");
    for row in rows {
        let named: Vec<String> = row
            .scenarios
            .iter()
            .map(|(id, v)| format!("`{}` {v}", id.replace('`', "'")))
            .collect();
        let coverage = match row.partial {
            Some(left_out) => format!("partial: {}", escape(left_out)),
            None => "full".to_owned(),
        };
        let _ = writeln!(
            w,
            "| {} | {} | {coverage} | {} |",
            escape(&row.id),
            row.verdict,
            named.join(", ")
        );
    }
    let _ = writeln!(w);
}

/// The Markdown report of a run.
pub fn render(input: &Input<'_>) -> String {
    let r = input.run;
    let mut out = String::new();
    let w = &mut out;
    heading(w, input);
    facts(w, input);
    areas_table(w, r);
    official_table(w, &r.scenarios);
    snapshot_table(w, r);
    failures(w, failure_lines(r));
    let warned: Vec<_> = r
        .scenarios
        .iter()
        .filter(|o| o.verdict == Verdict::Warn)
        .map(|o| format!("`{}`", o.id.replace('`', "'")))
        .collect();
    if !warned.is_empty() {
        let _ = writeln!(w, "**SHOULD-level warnings:** {}\n", warned.join(", "));
    }
    if let Some(b) = input.baseline {
        baseline(w, b);
    }
    let _ = writeln!(
        w,
        "<sub>mcpcheck {} · report format {} · verdicts: {}</sub>",
        r.mcpcheck_version,
        r.format_version,
        ["pass", "fail", "warn", "skip", "error"].join("/")
    );
    out
}

/// The verdict, first of all, then what the tool policy left unchecked: a pass that
/// checked little must say so where it is read.
fn heading(w: &mut String, input: &Input<'_>) {
    let r = input.run;
    let passes = input.passes();
    let verdict = match (r.verdict, passes) {
        (RunVerdict::Pass, _) if !r.has_errors() => "✅ PASS",
        (_, true) if !r.has_errors() => "✅ PASS (with expected failures)",
        _ if r.has_errors() => "⚠️ ERROR",
        _ => "❌ FAIL",
    };
    let _ = writeln!(w, "## mcpcheck: {verdict}\n");
    let notes = summary::policy_notes(&r.scenarios);
    for note in &notes {
        let _ = writeln!(w, "> **Not checked:** {}", escape(note));
    }
    if !notes.is_empty() {
        let _ = writeln!(w);
    }
}

/// The run at a glance: which server, at which revision, with or without schemas, how
/// long, and the totals.
fn facts(w: &mut String, input: &Input<'_>) {
    let r = input.run;
    let _ = writeln!(w, "| | |\n|---|---|");
    let client = r.role == crate::outcome::Role::Client;
    let side = if client { "client" } else { "server" };
    let _ = writeln!(w, "| {side} | {} |", escape(&r.server));
    if let Some(id) = summary::server_identity(r) {
        let _ = writeln!(w, "| serverInfo | {} |", escape(&id));
    }
    let rev = if r.revision == r.requested_revision {
        r.revision.to_string()
    } else {
        format!("{} (requested {})", r.revision, r.requested_revision)
    };
    let _ = writeln!(w, "| revision | {rev} |");
    match &r.sweep.schema {
        crate::outcome::SchemaStatus::Disabled { reason } => {
            let _ = writeln!(w, "| schema | **⚠️ DISABLED**: {} |", escape(reason));
        }
        crate::outcome::SchemaStatus::Skipped { reason } => {
            let _ = writeln!(w, "| schema | **SKIPPED**: {} |", escape(reason));
        }
        crate::outcome::SchemaStatus::Checked { .. } => {}
    }
    let duration = if input.deterministic {
        "&lt;time&gt;".to_owned()
    } else {
        format!("{} ms", r.duration_ms)
    };
    let _ = writeln!(w, "| duration | {duration} |");
    let c = r.sweep.counts;
    if !client {
        let _ = writeln!(
            w,
            "| protocol sweep | {} failures, {} warnings, {} notes |",
            c.failures, c.warnings, c.infos
        );
    }
    let t = r.tally;
    let _ = writeln!(
        w,
        "| scenarios | {} pass, {} fail, {} warn, {} skip, {} error |\n",
        t.pass, t.fail, t.warn, t.skip, t.error
    );
}

/// The verdicts per area of the suite, when scenarios ran.
fn areas_table(w: &mut String, r: &RunReport) {
    let areas = summary::by_area(&r.scenarios);
    if areas.is_empty() {
        return;
    }
    let _ = writeln!(w, "| area | pass | fail | warn | skip | error |");
    let _ = writeln!(w, "|---|---:|---:|---:|---:|---:|");
    for a in &areas {
        let _ = writeln!(
            w,
            "| {} | {} | {} | {} | {} | {} |",
            escape(&a.area),
            a.tally.pass,
            a.tally.fail + a.tally.blocked,
            a.tally.warn,
            a.tally.skip,
            a.tally.error
        );
    }
    let _ = writeln!(w);
}

/// Each snapshot area's status, when the run compared against a snapshot.
fn snapshot_table(w: &mut String, r: &RunReport) {
    let Some(snapshot) = &r.snapshot else {
        return;
    };
    let _ = writeln!(w, "| snapshot area | status |");
    let _ = writeln!(w, "|---|---|");
    for a in &snapshot.areas {
        let status = serde_json::to_value(&a.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let _ = writeln!(w, "| {} | {} |", escape(&a.area), escape(&status));
    }
    let _ = writeln!(w);
}

/// One line per failure: the sweep's, then each failing, blocked or erring scenario, then
/// the protocol failures seen inside scenarios, by rule.
fn failure_lines(r: &RunReport) -> Vec<String> {
    let mut lines = Vec::new();
    for f in r
        .sweep
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Failure)
    {
        lines.push(format!(
            "- ❌ protocol `{}`: {} ({})",
            f.rule.replace('`', "'"),
            escape(&f.message),
            link("spec", &f.spec)
        ));
    }
    lines.extend(r.scenarios.iter().filter_map(scenario_line));
    lines.extend(protocol_lines(r));
    lines
}

/// A scenario's line when it did not pass or warn: its first failure, or why it could
/// not run.
fn scenario_line(o: &crate::outcome::ScenarioOutcome) -> Option<String> {
    let first = o
        .findings
        .iter()
        .find(|f| f.severity == Severity::Failure)
        .or(o.findings.first());
    match &o.verdict {
        Verdict::Fail => Some(format!(
            "- ❌ `{}`: {}{} ({})",
            o.id.replace('`', "'"),
            escape(&o.title),
            first
                .map(|f| format!(": {}", escape(&f.message)))
                .unwrap_or_default(),
            link("spec", &o.spec)
        )),
        Verdict::Blocked { reason } => Some(format!(
            "- ❌ `{}` blocked: {}",
            o.id.replace('`', "'"),
            escape(reason)
        )),
        Verdict::Error { reason } => Some(format!(
            "- ⚠️ `{}` error: {}",
            o.id.replace('`', "'"),
            escape(reason)
        )),
        _ => None,
    }
}

/// Failures outside any scenario's own rule, grouped by rule: one defect shows up in
/// every session, and the summary must stay short.
fn protocol_lines(r: &RunReport) -> Vec<String> {
    let mut by_rule: std::collections::BTreeMap<
        &str,
        (usize, Vec<&str>, &crate::outcome::Finding),
    > = std::collections::BTreeMap::new();
    for (id, f) in summary::scenario_protocol_failures(r) {
        let e = by_rule.entry(f.rule.as_str()).or_insert((0, Vec::new(), f));
        e.0 += 1;
        if e.1.last() != Some(&id) {
            e.1.push(id);
        }
    }
    by_rule
        .into_iter()
        .map(|(rule, (n, ids, f))| {
            format!(
                "- ❌ `{}` {n}× in {} scenario sessions (first in `{}`): {} ({})",
                rule.replace('`', "'"),
                ids.len(),
                ids[0].replace('`', "'"),
                escape(&f.message),
                link("spec", &f.spec)
            )
        })
        .collect()
}

/// The failures section: the first [`MAX_LISTED`] lines, the rest counted.
fn failures(w: &mut String, lines: Vec<String>) {
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(w, "### Failures\n");
    let n = lines.len();
    for l in lines.into_iter().take(MAX_LISTED) {
        let _ = writeln!(w, "{l}");
    }
    if n > MAX_LISTED {
        let _ = writeln!(w, "- … and {} more (see the HTML report)", n - MAX_LISTED);
    }
    let _ = writeln!(w);
}

/// The baseline section: its counts, then what is unexpected and what went stale.
fn baseline(w: &mut String, b: &super::expected::Comparison) {
    let _ = writeln!(w, "### Baseline\n");
    let _ = writeln!(
        w,
        "{} expected, {} unexpected, {} stale, {} unverified\n",
        b.expected.len(),
        b.unexpected.len(),
        b.stale.len(),
        b.unverified.len()
    );
    for f in &b.unexpected {
        let _ = writeln!(
            w,
            "- unexpected `{}`: {}",
            f.id.replace('`', "'"),
            escape(&f.what)
        );
    }
    for e in &b.stale {
        let _ = writeln!(
            w,
            "- stale `{}` (no longer fails; remove it): {}",
            e.id.replace('`', "'"),
            escape(&e.reason)
        );
    }
    let _ = writeln!(w);
}
