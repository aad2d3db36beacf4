//! The terminal summary: verdict per step, then every finding with its evidence.

use std::fmt::Write;

use crate::outcome::{
    Finding, RunReport, RunVerdict, ScenarioOutcome, SchemaStatus, Severity, SnapshotComparison,
    SnapshotStatus, StepStatus, Verdict,
};

/// How much the terminal summary says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Detail {
    /// Only the verdict line.
    Quiet,
    /// The default: everything but the wire transcripts.
    #[default]
    Normal,
    /// Also the wire transcript of every failing scenario.
    Verbose,
}

/// Colors a verdict label with ANSI codes; `anstream` strips them for NO_COLOR or a non-TTY.
fn paint(label: &str) -> String {
    use anstyle::{AnsiColor, Style};
    let style = match label.trim() {
        "pass" | "PASS" => Style::new().fg_color(Some(AnsiColor::Green.into())),
        "FAIL" | "FAILURE" | "ERROR" => Style::new().fg_color(Some(AnsiColor::Red.into())).bold(),
        "warn" | "warning" => Style::new().fg_color(Some(AnsiColor::Yellow.into())),
        "skip" | "info" => Style::new().fg_color(Some(AnsiColor::BrightBlack.into())),
        _ => Style::new(),
    };
    format!("{style}{label}{style:#}")
}

/// Colors the verdict word of every line in `text`.
pub fn paint_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.lines() {
        out.push_str(&paint_line(line));
        out.push('\n');
    }
    out
}

/// Colors the verdict word a summary line starts with.
fn paint_line(line: &str) -> String {
    let trimmed = line.trim_start();
    let indent = &line[..line.len() - trimmed.len()];
    let word_end = trimmed.find([' ', ':']).unwrap_or(trimmed.len());
    let word = &trimmed[..word_end];
    match word {
        "pass" | "FAIL" | "warn" | "skip" | "ERROR" | "FAILURE" | "warning" | "info" | "PASS" => {
            format!("{indent}{}{}", paint(word), &trimmed[word_end..])
        }
        _ => line.to_owned(),
    }
}

/// Renders the human summary as plain text: [`header`], the scenarios, [`footer`].
pub fn render(report: &RunReport) -> String {
    let mut out = header(report);
    if !report.scenarios.is_empty() {
        let t = report.tally;
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "scenarios: {} pass, {} fail, {} warn, {} skip, {} error",
            t.pass, t.fail, t.warn, t.skip, t.error
        );
        for o in &report.scenarios {
            out.push_str(&scenario(o));
        }
    }
    out.push_str(&footer(report));
    out
}

/// The protocol sweep: server, revision, schema, its steps and every finding with evidence.
pub fn header(report: &RunReport) -> String {
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(
        w,
        "mcpcheck {} — {}",
        report.mcpcheck_version, report.server
    );
    if let Some(p) = &report.profile {
        let name = p
            .server_info
            .get("name")
            .and_then(|v| v.as_str())
            .unwrap_or("(no name)");
        let version = p
            .server_info
            .get("version")
            .and_then(|v| v.as_str())
            .unwrap_or("?");
        let _ = writeln!(w, "server   {name} {version}");
    }
    if report.revision == report.requested_revision {
        let _ = writeln!(w, "revision {}", report.revision);
    } else {
        let _ = writeln!(
            w,
            "revision {} (requested {})",
            report.revision, report.requested_revision
        );
    }
    match &report.sweep.schema {
        SchemaStatus::Checked {
            revision,
            source,
            pinned,
            messages,
        } => {
            let pin = if *pinned {
                ""
            } else {
                " (differs from the pinned official schema)"
            };
            let _ = writeln!(
                w,
                "schema   {messages} messages validated against {revision} from {source}{pin}"
            );
        }
        SchemaStatus::Skipped { reason } => {
            let _ = writeln!(w, "schema   SKIPPED: {reason}");
        }
        SchemaStatus::Disabled { reason } => {
            let _ = writeln!(
                w,
                "schema   DISABLED: {reason}; no message was schema-checked"
            );
        }
    }
    let _ = writeln!(w);
    for step in &report.sweep.steps {
        match &step.status {
            StepStatus::Passed => {
                let _ = writeln!(w, "  pass  {}", step.name);
            }
            StepStatus::Failed => {
                let _ = writeln!(w, "  FAIL  {}", step.name);
            }
            StepStatus::Skipped { reason } => {
                let _ = writeln!(w, "  skip  {} — {reason}", step.name);
            }
        }
    }
    if !report.sweep.findings.is_empty() {
        let _ = writeln!(w);
    }
    for f in &report.sweep.findings {
        out.push_str(&finding(report, f));
    }
    out
}

/// Only the sweep's MUST-level findings (for `--quiet`).
pub fn header_failures(report: &RunReport) -> String {
    report
        .sweep
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Failure)
        .map(|f| finding(report, f))
        .collect()
}

/// One finding of the sweep with its spec reference, frame, expectation and evidence.
fn finding(report: &RunReport, f: &Finding) -> String {
    let mut out = String::new();
    let w = &mut out;
    let label = match f.severity {
        Severity::Failure => "FAILURE",
        Severity::Warning => "warning",
        Severity::Info => "info",
    };
    let _ = writeln!(w, "{label} [{}] {}", f.rule, f.message);
    let _ = writeln!(w, "    spec:     {}", f.spec);
    if let Some(i) = f.frame {
        let frame = report
            .transcript
            .get(i)
            .map(|e| e.text.as_str())
            .unwrap_or("");
        let pointer = f
            .pointer
            .as_deref()
            .map(|p| format!(" at {}", if p.is_empty() { "/" } else { p }))
            .unwrap_or_default();
        let _ = writeln!(
            w,
            "    frame:    #{i}{pointer}: {}",
            crate::protocol::text::quote(frame, 300)
        );
    } else if let Some(p) = &f.pointer {
        let _ = writeln!(w, "    pointer:  {p}");
    }
    if let Some(e) = &f.expected {
        let _ = writeln!(w, "    expected: {e}");
    }
    if let Some(e) = &f.evidence {
        for (n, line) in e.lines().enumerate() {
            let _ = writeln!(
                w,
                "    {}{line}",
                if n == 0 { "evidence: " } else { "          " }
            );
        }
    }
    out
}

/// One scenario's verdict line, then each of its findings with the offending frame and the
/// spec reference.
pub fn scenario(o: &ScenarioOutcome) -> String {
    use Verdict as V;
    let mut out = String::new();
    let w = &mut out;
    let (label, extra) = match &o.verdict {
        V::Pass => ("pass", String::new()),
        V::Fail => ("FAIL", String::new()),
        V::Warn => ("warn", String::new()),
        V::Skip { reason } => ("skip", format!(" — {reason}")),
        V::Error { reason } => ("ERROR", format!(" — {reason}")),
        V::Blocked { reason } => ("BLOCK", format!(" — not run: {reason}")),
    };
    let _ = writeln!(w, "  {label:<5} {}{extra}", o.id);
    for f in o.findings.iter().chain(&o.protocol) {
        let _ = writeln!(w, "        [{}] {}", f.rule, f.message);
        if let Some(i) = f.frame {
            let frame = o.transcript.get(i).map(|e| e.text.as_str()).unwrap_or("");
            let _ = writeln!(
                w,
                "          frame #{i}: {}",
                crate::protocol::text::quote(frame, 200)
            );
        }
        let _ = writeln!(w, "          spec: {}", f.spec);
    }
    for u in &o.unchecked {
        let _ = writeln!(w, "        not checked: {u}");
    }
    out
}

/// The verdict line: counts, the scenario tally and the time.
pub fn footer(report: &RunReport) -> String {
    let mut out = String::new();
    let w = &mut out;
    let c = report.sweep.counts;
    let verdict = match (report.verdict, report.fail_on) {
        (RunVerdict::Pass, _) => "PASS",
        (RunVerdict::Fail, crate::outcome::FailOn::Failure) => "FAIL",
        (RunVerdict::Fail, crate::outcome::FailOn::Warning) => "FAIL (--fail-on warning)",
    };
    let _ = writeln!(w);
    let t = report.tally;
    let scenarios = if report.scenarios.is_empty() {
        String::new()
    } else {
        let blocked = if t.blocked > 0 {
            format!(", {} blocked", t.blocked)
        } else {
            String::new()
        };
        format!(
            "; scenarios: {} pass, {} fail, {} warn, {} skip, {} error{blocked}",
            t.pass, t.fail, t.warn, t.skip, t.error
        )
    };
    let protocol = report
        .scenarios
        .iter()
        .flat_map(|o| &o.protocol)
        .filter(|f| f.severity == Severity::Failure)
        .count();
    let protocol = if protocol > 0 {
        format!(" (+{protocol} in scenario sessions)")
    } else {
        String::new()
    };
    if report.role == crate::outcome::Role::Client {
        // No sweep: every finding is a scenario session's.
        let _ = writeln!(
            w,
            "{verdict}: client {} failures{scenarios}; {} ms",
            report
                .scenarios
                .iter()
                .flat_map(|o| o.findings.iter().chain(&o.protocol))
                .filter(|f| f.severity == Severity::Failure)
                .count(),
            report.duration_ms
        );
    } else {
        let _ = writeln!(
            w,
            "{verdict}: sweep {} failures{protocol}, {} warnings, {} notes{scenarios}; {} ms",
            c.failures, c.warnings, c.infos, report.duration_ms
        );
    }
    for note in super::summary::policy_notes(&report.scenarios) {
        let _ = writeln!(w, "note: {note}");
    }
    // Beside the verdict too, not only in the header: a PASS without schema checks is a
    // weaker claim.
    if let crate::outcome::SchemaStatus::Disabled { reason } = &report.sweep.schema {
        let _ = writeln!(w, "note: schema checks DISABLED ({reason})");
    }
    out
}

/// The snapshot part of the human report: diffs, then one line per area.
pub fn snapshot(c: &SnapshotComparison, diffs: bool, prefix: &str) -> String {
    let mut out = String::new();
    for a in c.areas.iter().filter(|_| diffs) {
        if let Some(diff) = &a.diff {
            out.push_str(diff);
        }
    }
    for a in &c.areas {
        let what = match a.status {
            SnapshotStatus::Unchanged => "unchanged",
            SnapshotStatus::Written => "written (first run)",
            SnapshotStatus::Changed => "CHANGED (pending as .snap.new)",
            SnapshotStatus::Accepted => "changed, accepted",
        };
        out.push_str(&format!("{prefix}{:<10} {what}  {}\n", a.area, a.path));
    }
    out
}
