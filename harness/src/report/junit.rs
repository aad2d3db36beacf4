//! JUnit XML for CI test tabs: one testsuite per area (the first segment of a scenario id),
//! one testcase per scenario. MUST-level failures are `<failure>`, harness problems
//! `<error>`, skips `<skipped>` with the reason; SHOULD-level findings go to `system-out` and
//! to `should` properties. The protocol sweep is the suite `protocol`: one testcase per step,
//! plus one for its findings and one for failures seen in scenario sessions outside their
//! scenario, so the XML fails exactly when the run does. A scenario's server stderr
//! (an excerpt) is its `system-err`.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};

use super::Input;
use super::matrix::{Leg, Matrix};
use super::summary::{self, area};
use crate::outcome::{Finding, ScenarioOutcome, SchemaStatus, Severity, StepStatus, Verdict};

/// Renders the JUnit XML document.
pub fn render(input: &Input<'_>) -> Result<String, quick_junit::SerializeError> {
    build(input).to_string()
}

/// The JUnit XML of a revision matrix: one testsuite per leg, named for its revision, whose
/// testcases are the leg's (classname `<revision>.<area>`); a leg the server does not speak
/// is a suite with one skipped testcase saying so. A single leg renders as [`render`].
pub fn render_matrix(m: &Matrix<'_>) -> Result<String, quick_junit::SerializeError> {
    if let Some(one) = m.single() {
        return render(one);
    }
    let mut report = Report::new("mcpcheck");
    for leg in &m.legs {
        let rev = leg.revision();
        let mut suite = TestSuite::new(format!("mcpcheck {rev}"));
        suite.add_property(Property::new("revision", rev.as_str()));
        match leg {
            Leg::Ran(input) => {
                let one = build(input);
                if let Some(time) = one.time {
                    suite.set_time(time);
                }
                for part in one.test_suites {
                    suite.add_properties(
                        part.properties
                            .into_iter()
                            .filter(|p| p.name.as_str() != "revision"),
                    );
                    for mut tc in part.test_cases {
                        let class = tc.classname.take().map(|c| c.to_string());
                        tc.set_classname(format!(
                            "{rev}.{}",
                            class.unwrap_or(part.name.to_string())
                        ));
                        suite.add_test_case(tc);
                    }
                }
            }
            Leg::NotSpoken { reason, .. } => {
                let mut status = TestCaseStatus::skipped();
                status.set_message(format!("the server does not speak {rev}: {reason}"));
                let mut tc = TestCase::new(format!("{rev}/revision"), status);
                tc.set_classname(format!("{rev}.revision"));
                suite.add_test_case(tc);
            }
        }
        report.add_test_suite(suite);
    }
    report.to_string()
}

/// The JUnit document of one leg.
fn build(input: &Input<'_>) -> Report {
    let r = input.run;
    let mut report = Report::new("mcpcheck");
    let time = |ms: u64| {
        if input.deterministic {
            Duration::ZERO
        } else {
            Duration::from_millis(ms)
        }
    };
    report.set_time(time(r.duration_ms));

    let mut protocol = TestSuite::new("protocol");
    protocol.add_property(Property::new("server", r.server.as_str()));
    protocol.add_property(Property::new("revision", r.revision.as_str()));
    if let Some(id) = summary::server_identity(r) {
        protocol.add_property(Property::new("serverInfo", id));
    }
    // A run without schema checks says so where CI dashboards show suite properties.
    match &r.sweep.schema {
        SchemaStatus::Checked { .. } => {}
        SchemaStatus::Skipped { reason } => {
            protocol.add_property(Property::new("schema", format!("SKIPPED: {reason}")));
        }
        SchemaStatus::Disabled { reason } => {
            protocol.add_property(Property::new(
                "schema",
                format!("DISABLED: {reason}; no message was schema-checked"),
            ));
        }
    }
    for step in &r.sweep.steps {
        let status = match &step.status {
            StepStatus::Passed => TestCaseStatus::success(),
            StepStatus::Failed => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message("the step broke rules: see the protocol findings");
                s
            }
            StepStatus::Skipped { reason } => {
                let mut s = TestCaseStatus::skipped();
                s.set_message(reason.as_str());
                s
            }
        };
        let mut tc = TestCase::new(format!("protocol/{}", step.name), status);
        tc.set_classname("protocol");
        protocol.add_test_case(tc);
    }
    protocol.add_test_case(findings_case(
        "protocol/findings",
        r.sweep.findings.iter().collect(),
    ));
    let loose: Vec<&Finding> = summary::scenario_protocol_failures(r)
        .into_iter()
        .map(|(_, f)| f)
        .collect();
    let mut seen_in = String::new();
    for (id, f) in summary::scenario_protocol_failures(r) {
        let _ = writeln!(seen_in, "{} seen in scenario {id}", f.rule);
    }
    let mut tc = findings_case("protocol/scenario-sessions", loose);
    if !seen_in.is_empty() {
        tc.set_system_err(seen_in);
    }
    protocol.add_test_case(tc);
    report.add_test_suite(protocol);

    let mut suites: BTreeMap<&str, TestSuite> = BTreeMap::new();
    for o in &r.scenarios {
        let a = area(&o.id);
        let suite = suites.entry(a).or_insert_with(|| TestSuite::new(a));
        let mut tc = scenario_case(o);
        tc.set_time(time(o.duration_ms));
        suite.add_test_case(tc);
    }
    report.add_test_suites(suites.into_values());
    if let Some(snapshot) = &r.snapshot {
        report.add_test_suite(snapshot_suite(snapshot));
    }
    report
}

/// `--snapshot-dir`: one testcase per snapshot area; a change is a failure carrying its diff.
fn snapshot_suite(c: &crate::outcome::SnapshotComparison) -> TestSuite {
    use crate::outcome::SnapshotStatus as Status;
    let mut suite = TestSuite::new("snapshot");
    suite.add_property(Property::new("dir", c.dir.as_str()));
    for a in &c.areas {
        let status = if a.status == Status::Changed {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_message(format!(
                "the {} snapshot changed (pending: {}.new)",
                a.area, a.path
            ));
            if let Some(diff) = &a.diff {
                s.set_description(diff.as_str());
            }
            s
        } else {
            TestCaseStatus::success()
        };
        let mut tc = TestCase::new(format!("snapshot/{}", a.area), status);
        tc.set_classname("snapshot");
        suite.add_test_case(tc);
    }
    suite
}

fn describe(f: &Finding) -> String {
    let mut s = format!(
        "[{}] {}: {}\n  spec: {}",
        f.severity.as_str(),
        f.rule,
        f.message,
        f.spec
    );
    if let Some(p) = &f.pointer {
        let _ = write!(s, "\n  at: {}", if p.is_empty() { "/" } else { p });
    }
    if let Some(e) = &f.expected {
        let _ = write!(s, "\n  expected: {e}");
    }
    if let Some(e) = &f.evidence {
        let _ = write!(s, "\n  evidence: {e}");
    }
    s
}

/// A testcase that fails when any of `findings` is failure-level.
fn findings_case(name: &str, findings: Vec<&Finding>) -> TestCase {
    let failures: Vec<&Finding> = findings
        .iter()
        .copied()
        .filter(|f| f.severity == Severity::Failure)
        .collect();
    let status = if let Some(first) = failures.first() {
        let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
        s.set_message(format!(
            "{} failures; first: {}",
            failures.len(),
            first.message
        ));
        s.set_type(first.rule.as_str());
        s.set_description(
            failures
                .iter()
                .map(|f| describe(f))
                .collect::<Vec<_>>()
                .join("\n"),
        );
        s
    } else {
        TestCaseStatus::success()
    };
    let mut tc = TestCase::new(name, status);
    tc.set_classname("protocol");
    add_should(&mut tc, findings.into_iter());
    tc
}

/// SHOULD-level and informational findings: properties and system-out.
fn add_should<'a>(tc: &mut TestCase, findings: impl Iterator<Item = &'a Finding>) {
    let mut out = String::new();
    for f in findings.filter(|f| f.severity != Severity::Failure) {
        let kind = if f.severity == Severity::Warning {
            "should"
        } else {
            "info"
        };
        tc.add_property(Property::new(kind, format!("{}: {}", f.rule, f.message)));
        let _ = writeln!(out, "{}", describe(f));
    }
    if !out.is_empty() {
        tc.set_system_out(out);
    }
}

fn scenario_case(o: &ScenarioOutcome) -> TestCase {
    let failures = || {
        o.findings
            .iter()
            .filter(|f| f.severity == Severity::Failure)
    };
    let status = match &o.verdict {
        Verdict::Pass | Verdict::Warn => TestCaseStatus::success(),
        Verdict::Fail => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            let first = failures().next().or(o.findings.first());
            s.set_message(
                first
                    .map(|f| f.message.clone())
                    .unwrap_or_else(|| o.title.clone()),
            );
            if let Some(f) = first {
                s.set_type(f.rule.as_str());
            }
            s.set_description(failures().map(describe).collect::<Vec<_>>().join("\n"));
            s
        }
        Verdict::Skip { reason } => {
            let mut s = TestCaseStatus::skipped();
            s.set_message(reason.as_str());
            s
        }
        Verdict::Blocked { reason } => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
            s.set_message(format!("not run: {reason}"));
            s.set_type("blocked");
            s
        }
        Verdict::Error { reason } => {
            let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
            s.set_message(reason.as_str());
            s.set_type("harness-error");
            s
        }
    };
    let mut tc = TestCase::new(o.id.as_str(), status);
    tc.set_classname(area(&o.id));
    tc.add_property(Property::new("title", o.title.as_str()));
    tc.add_property(Property::new("spec", o.spec.as_str()));
    for u in &o.unchecked {
        tc.add_property(Property::new("not-checked", u.as_str()));
    }
    for s in &o.skipped_steps {
        tc.add_property(Property::new("skipped-step", s.as_str()));
    }
    add_should(&mut tc, o.findings.iter().chain(&o.protocol));
    if let Some(text) = stderr_text(
        &o.stderr,
        matches!(o.verdict, Verdict::Fail | Verdict::Error { .. }),
    ) {
        tc.set_system_err(text);
    }
    tc
}

/// The server's stderr for `<system-err>`: whenever it wrote any, and for a failing
/// scenario also when it was not captured (so an empty element never looks like
/// silence).
fn stderr_text(e: &crate::transport::StderrExcerpt, explain: bool) -> Option<String> {
    use crate::transport::StderrExcerpt as E;
    match e {
        E::Captured { lines, .. } if lines.is_empty() => None,
        E::Captured { bytes, lines, .. } => Some(format!(
            "server stderr ({bytes} bytes):\n{}\n",
            lines.join("\n")
        )),
        E::NotCaptured { reason } if explain => Some(format!("server stderr: {reason}\n")),
        E::NotCaptured { .. } => None,
    }
}
