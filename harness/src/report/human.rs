//! The terminal summary: verdict per step, then every finding with its evidence.

use std::fmt::Write;

use crate::check::Severity;
use crate::runner::{RunReport, StepStatus, Verdict};
use crate::session::SchemaStatus;

/// Renders the human summary as plain text.
pub fn render(report: &RunReport) -> String {
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
    match &report.schema {
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
    }
    let _ = writeln!(w);
    for step in &report.steps {
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
    if !report.findings.is_empty() {
        let _ = writeln!(w);
    }
    for f in &report.findings {
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
                crate::session::quote(frame, 300)
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
    }
    if !report.scenarios.is_empty() {
        use crate::scenario::exec::Verdict as V;
        let t = report.tally;
        let _ = writeln!(w);
        let _ = writeln!(
            w,
            "scenarios: {} pass, {} fail, {} warn, {} skip, {} error",
            t.pass, t.fail, t.warn, t.skip, t.error
        );
        for o in &report.scenarios {
            let (label, extra) = match &o.verdict {
                V::Pass => ("pass", String::new()),
                V::Fail => ("FAIL", String::new()),
                V::Warn => ("warn", String::new()),
                V::Skip { reason } => ("skip", format!(" — {reason}")),
                V::Error { reason } => ("ERROR", format!(" — {reason}")),
            };
            let _ = writeln!(w, "  {label:<5} {}{extra}", o.id);
            for f in o.findings.iter().chain(&o.protocol) {
                let _ = writeln!(w, "        [{}] {}", f.rule, f.message);
                if let Some(i) = f.frame {
                    let frame = o.transcript.get(i).map(|e| e.text.as_str()).unwrap_or("");
                    let _ = writeln!(
                        w,
                        "          frame #{i}: {}",
                        crate::session::quote(frame, 200)
                    );
                }
                let _ = writeln!(w, "          spec: {}", f.spec);
            }
            for u in &o.unchecked {
                let _ = writeln!(w, "        not checked: {u}");
            }
        }
    }
    let c = report.counts;
    let verdict = match report.verdict {
        Verdict::Pass => "PASS",
        Verdict::Fail => "FAIL",
    };
    let _ = writeln!(w);
    let t = report.tally;
    let scenarios = if report.scenarios.is_empty() {
        String::new()
    } else {
        format!(
            "; scenarios: {} pass, {} fail, {} warn, {} skip, {} error",
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
    let _ = writeln!(
        w,
        "{verdict}: {} failures{protocol}, {} warnings, {} notes{scenarios}; {} ms",
        c.failures, c.warnings, c.infos, report.duration_ms
    );
    out
}
