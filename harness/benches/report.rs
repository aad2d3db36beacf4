//! Report generation for a large synthetic run: 100 scenarios with 100 frames each (10,000
//! frames of realistic MCP traffic, a failure with a frame and pointer in every tenth
//! scenario). Measures each reporter, and prints the size of each report once.
//! Targets (issue 5): all four reports in under 1 s, the HTML under 5 MB.
//!
//! Run: `cargo bench -p mcpcheck --bench report`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use mcpcheck::outcome::{
    Direction, Entry, FailOn, RunReport, ScenarioOutcome, SchemaStatus, ServerProfile, Verdict as V,
};
use mcpcheck::outcome::{Finding, Severity};
use mcpcheck::protocol::Revision;
use mcpcheck::report::{Input, ReportKind};
use serde_json::json;

const SCENARIOS: usize = 100;
const FRAMES_PER_SCENARIO: usize = 100;

fn frame(n: usize) -> (Direction, String) {
    let id = n / 2;
    if n.is_multiple_of(2) {
        let req = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": format!("message number {n}")}}});
        (Direction::Sent, req.to_string())
    } else if n % 10 == 1 {
        let tools: Vec<_> = (0..5)
            .map(|t| json!({"name": format!("tool_{t}"), "title": format!("Tool {t}"),
                "description": "Does a thing with the given arguments and returns text content.",
                "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "string"}}, "required": ["a"]},
                "annotations": {"readOnlyHint": true}}))
            .collect();
        let res = json!({"jsonrpc": "2.0", "id": id, "result": {"tools": tools}});
        (Direction::Received, res.to_string())
    } else {
        let res = json!({"jsonrpc": "2.0", "id": id,
            "result": {"content": [{"type": "text", "text": format!("message number {n} <echoed> & quoted \"back\"")}]}});
        (Direction::Received, res.to_string())
    }
}

fn synthetic() -> RunReport {
    let scenarios: Vec<ScenarioOutcome> = (0..SCENARIOS)
        .map(|s| {
            let transcript = (0..FRAMES_PER_SCENARIO)
                .map(|n| {
                    let (direction, text) = frame(n);
                    Entry {
                        at: Duration::from_micros((n * 350) as u64),
                        direction,
                        text,
                        http: None,
                    }
                })
                .collect();
            let failing = s.is_multiple_of(10);
            let findings = if failing {
                vec![
                    Finding::custom(
                        format!("area{}/scenario-{s}", s % 7),
                        Severity::Failure,
                        "https://modelcontextprotocol.io/specification/2025-11-25/server/tools",
                        "the result's content[0].text is not what was sent",
                    )
                    .at_frame(3)
                    .pointer("/result/content/0/text"),
                ]
            } else {
                vec![]
            };
            ScenarioOutcome {
                id: format!("area{}/scenario-{s}", s % 7),
                title: format!("synthetic scenario {s}"),
                spec: "https://modelcontextprotocol.io/specification/2025-11-25/server/tools"
                    .into(),
                official: vec![],
                verdict: if failing { V::Fail } else { V::Pass },
                findings,
                protocol: vec![],
                unchecked: vec![],
                skipped_steps: vec![],
                policy_skips: vec![],
                fixture_calls: 0,
                duration_ms: 40,
                transcript,
                stderr: mcpcheck::transport::StderrExcerpt::Captured {
                    bytes: 2048,
                    lines: (0..40)
                        .map(|i| format!("log line {i} of the server"))
                        .collect(),
                    truncated: true,
                },
            }
        })
        .collect();
    let mut report = RunReport::empty("synthetic-server", Revision::V2025_11_25);
    report.mcpcheck_version = "bench";
    report.profile = Some(ServerProfile {
        protocol_version: Some("2025-11-25".into()),
        capabilities: json!({"tools": {}}),
        server_info: json!({"name": "synthetic", "version": "1"}),
        instructions: None,
        supported_versions: vec![],
    });
    report.fail_on = FailOn::Failure;
    report.sweep.schema = SchemaStatus::Skipped {
        reason: "bench".into(),
    };
    report.add_scenarios(scenarios, 4000);
    report
}

fn bench(c: &mut Criterion) {
    let run = synthetic();
    let input = Input {
        run: &run,
        baseline: None,
        deterministic: false,
    };
    let frames: usize = run.scenarios.iter().map(|o| o.transcript.len()).sum();
    let started = Instant::now();
    for kind in ReportKind::ALL {
        let text = mcpcheck::report::render(kind, &input).expect("renders");
        println!(
            "{:>8}: {:>10} bytes ({:.2} MB) for {} scenarios, {frames} frames",
            kind.name(),
            text.len(),
            text.len() as f64 / 1e6,
            run.scenarios.len()
        );
    }
    println!("all four once: {:?}", started.elapsed());
    let mut group = c.benchmark_group("report");
    group.sample_size(10);
    for kind in ReportKind::ALL {
        group.bench_function(kind.name(), |b| {
            b.iter(|| mcpcheck::report::render(kind, black_box(&input)).expect("renders"))
        });
    }
    group.bench_function("all four", |b| {
        b.iter(|| {
            for kind in ReportKind::ALL {
                black_box(mcpcheck::report::render(kind, black_box(&input)).expect("renders"));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
