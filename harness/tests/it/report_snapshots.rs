//! Snapshots of the Markdown and JUnit reporters on a small hand-built run: one passing,
//! one failing (with a frame and pointer), one warning, one skipped and one errored
//! scenario, and a sweep with a SHOULD-level finding. A reporter change shows up as a
//! snapshot diff to review (`cargo insta review`).

use std::time::Duration;

use mcpcheck::outcome::{
    Counts, Direction, Entry, FailOn, REPORT_FORMAT_VERSION, RunReport, RunVerdict as Verdict,
    ScenarioOutcome, SchemaStatus, ServerProfile, StderrSummary, StepRecord, StepStatus,
    SweepRecord, Tally, Verdict as V,
};
use mcpcheck::outcome::{Finding, Severity};
use mcpcheck::protocol::Revision;
use mcpcheck::report::{Input, ReportKind, baseline, expected};
use serde_json::json;

fn entry(ms: u64, direction: Direction, text: &str) -> Entry {
    Entry {
        at: Duration::from_millis(ms),
        direction,
        text: text.to_owned(),
        http: None,
    }
}

fn outcome(id: &str, verdict: V, findings: Vec<Finding>) -> ScenarioOutcome {
    let verdict_is_failing = matches!(verdict, V::Fail | V::Error { .. });
    ScenarioOutcome {
        id: id.to_owned(),
        title: format!("title of {id}"),
        spec: "https://modelcontextprotocol.io/specification/2025-11-25/server/tools".into(),
        official: vec![],
        verdict,
        findings,
        protocol: vec![],
        unchecked: vec![],
        skipped_steps: vec![],
        policy_skips: vec![],
        fixture_calls: 0,
        duration_ms: 12,
        transcript: vec![
            entry(
                0,
                Direction::Sent,
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            ),
            entry(
                3,
                Direction::Received,
                r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a|b <c>"}]}}"#,
            ),
        ],
        stderr: match verdict_is_failing {
            true => mcpcheck::transport::StderrExcerpt::Captured {
                bytes: 43,
                lines: vec![
                    "starting <server>".into(),
                    "tool a|b failed & gave up".into(),
                ],
                truncated: false,
            },
            false => mcpcheck::transport::StderrExcerpt::NotCaptured {
                reason: "not captured: the server is not a process mcpcheck started".into(),
            },
        },
    }
}

fn sample() -> RunReport {
    let failing = Finding::custom(
        "tools/list-result",
        Severity::Failure,
        "https://modelcontextprotocol.io/specification/2025-11-25/server/tools#listing-tools",
        "tool name `a|b <c>` is not a valid name",
    )
    .at_frame(1)
    .pointer("/result/tools/0/name")
    .expected("a name matching ^[A-Za-z0-9_.-]+$");
    let should = Finding::custom(
        "tools/title",
        Severity::Warning,
        "https://modelcontextprotocol.io/specification/2025-11-25/server/tools",
        "tools SHOULD have a title",
    );
    let mut protocol_failure = Finding::custom(
        "jsonrpc.version",
        Severity::Failure,
        "https://modelcontextprotocol.io/specification/2025-11-25/basic#messages",
        "`jsonrpc` is \"1.0\"",
    );
    protocol_failure.frame = Some(1);
    let mut with_protocol = outcome("prompts/list-result", V::Pass, vec![]);
    with_protocol.protocol = vec![protocol_failure];
    let scenarios = vec![
        outcome("tools/list-result", V::Fail, vec![failing]),
        outcome("tools/title", V::Warn, vec![should]),
        with_protocol,
        outcome(
            "jsonrpc/batch-2025-03-26",
            V::Skip {
                reason: "applies to 2025-03-26".into(),
            },
            vec![],
        ),
        outcome(
            "lifecycle/broken",
            V::Error {
                reason: "the scenario file is invalid".into(),
            },
            vec![],
        ),
    ];
    let sweep_warning = Finding::custom(
        "lifecycle.instructions",
        Severity::Warning,
        "https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle",
        "instructions are empty",
    );
    let mut report = RunReport {
        format_version: REPORT_FORMAT_VERSION,
        mcpcheck_version: "0.0.0-test",
        role: mcpcheck::outcome::Role::Server,
        server: "my-server --stdio".into(),
        requested_revision: Revision::V2025_11_25,
        revision: Revision::V2025_11_25,
        profile: Some(ServerProfile {
            protocol_version: Some("2025-11-25".into()),
            capabilities: json!({"tools": {}}),
            server_info: json!({"name": "my-server", "version": "1.2.3"}),
            instructions: None,
            supported_versions: vec![],
        }),
        partition: None,
        differential_from: None,
        verdict: Verdict::Pass,
        fail_on: FailOn::Failure,
        sweep: SweepRecord {
            counts: Counts::of(std::slice::from_ref(&sweep_warning)),
            steps: vec![
                StepRecord {
                    name: "initialize".into(),
                    status: StepStatus::Passed,
                },
                StepRecord {
                    name: "resources/list".into(),
                    status: StepStatus::Skipped {
                        reason: "resources not declared".into(),
                    },
                },
            ],
            findings: vec![sweep_warning],
            schema: SchemaStatus::Checked {
                revision: Revision::V2025_11_25,
                source: "<schema-dir>/2025-11-25/schema.json".into(),
                pinned: true,
                messages: 4,
            },
            shutdown: None,
            stderr: StderrSummary::default(),
        },
        duration_ms: 1234,
        transcript: vec![],
        snapshot: None,
        scenarios: vec![],
        tally: Tally::default(),
    };
    report.add_scenarios(scenarios, 100);
    report
}

fn render(kind: ReportKind, baseline: Option<&expected::Comparison>) -> String {
    let run = sample();
    mcpcheck::report::render(
        kind,
        &Input {
            run: &run,
            baseline,
            deterministic: true,
        },
    )
    .unwrap()
}

#[test]
fn markdown_summary() {
    insta::assert_snapshot!(render(ReportKind::Markdown, None));
}

#[test]
fn markdown_summary_with_a_baseline() {
    let base = baseline::Baseline::parse(
        "expected-failures:\n  - id: tools/list-result\n    reason: upstream bug #12\n  - id: tools/gone\n    reason: fixed?\n",
    )
    .unwrap();
    let c = base.compare(&sample());
    insta::assert_snapshot!(render(ReportKind::Markdown, Some(&c)));
}

#[test]
fn junit_xml() {
    insta::assert_snapshot!(render(ReportKind::Junit, None));
}
