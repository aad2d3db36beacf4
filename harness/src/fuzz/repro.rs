//! Reproducers: a finding written as a scenario file (`send_raw` steps, then an
//! expectation that fails the way the fuzzer saw the server fail), and the replay that
//! checks it does, by running the file through the scenario executor.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::oracle::Oracle;
use crate::check::rules;
use crate::outcome::Cause;
use crate::outcome::Severity;
use crate::outcome::{ScenarioOutcome, Verdict};
use crate::protocol::Revision;
use crate::scenario::exec::ExecConfig;
use crate::schema::SchemaStore;
use crate::transport::target::TransportKind;

/// What a reproducer replays and how it must fail.
#[derive(Clone, Debug)]
pub struct Repro {
    /// The writes after the handshake, in order.
    pub writes: Vec<Vec<u8>>,
    /// The oracle whose failure it reproduces.
    pub oracle: Oracle,
    /// The rule of the expected failure (the scenario's `rule:`).
    pub rule: String,
    /// Requests whose responses the expectation waits for (raw JSON ids).
    pub await_ids: Vec<Value>,
    /// How long each wait lasts.
    pub within: Duration,
    /// The revision negotiated when it was found.
    pub revision: Revision,
    /// The transport the writes went over: stdio joins them into lines; over HTTP each is
    /// one POST body, so one `send_raw` step.
    pub transport: TransportKind,
}

/// Writes the scenario file. `header` lines become comments at the top.
pub fn to_yaml(r: &Repro, id: &str, title: &str, header: &[String]) -> String {
    let mut y = String::new();
    for h in header {
        for line in h.lines() {
            let _ = writeln!(y, "# {line}");
        }
    }
    let spec = rules::by_id(&r.rule)
        .map(|rule| rule.section(r.revision).to_owned())
        .unwrap_or_else(|| "basic/lifecycle#error-handling".into());
    let _ = writeln!(y, "id: {id}");
    let _ = writeln!(y, "title: {}", quote(title.as_bytes()));
    let _ = writeln!(y, "spec: {}", quote(spec.as_bytes()));
    let _ = writeln!(y, "revisions: [{}]", r.revision.as_str());
    let _ = writeln!(
        y,
        "transports: [{}]",
        match r.transport {
            TransportKind::Stdio => "stdio",
            TransportKind::Http => "http",
        }
    );
    let _ = writeln!(y, "rule: {}", r.rule);
    let _ = writeln!(y, "steps:");
    let _ = writeln!(y, "  - initialize:");
    // The tool-call gate lets a `tools/call` out only for a tool whose listing it has read.
    if r.writes
        .iter()
        .any(|w| !crate::protocol::tool_calls(w).is_empty())
    {
        let _ = writeln!(y, "  - paginate: {{ method: tools/list, into: tools }}");
    }
    // Writes that leave a line open are joined with what completes it, so the executor
    // sees whole requests (it correlates ids per step).
    let mut pending: Vec<u8> = Vec::new();
    for w in &r.writes {
        pending.extend_from_slice(w);
        if pending.ends_with(b"\n") || r.transport == TransportKind::Http {
            let _ = writeln!(y, "  - send_raw: {}", quote(&pending));
            pending.clear();
        }
    }
    if !pending.is_empty() {
        let _ = writeln!(y, "  - send_raw: {}", quote(&pending));
    }
    let within = humantime::format_duration(r.within);
    let await_responses = |y: &mut String| {
        for id in &r.await_ids {
            let _ = writeln!(
                y,
                "  - expect: {{ response: {{ id: {}, within: {within}, any: {{}} }} }}",
                match id {
                    Value::String(s) => quote(s.as_bytes()),
                    other => other.to_string(),
                }
            );
        }
    };
    match r.oracle {
        Oracle::Crash => {
            let _ = writeln!(y, "  # liveness probe: fails when the server has ended");
            let _ = writeln!(y, "  - request: ping\n    expect: {{ result: {{}} }}");
        }
        Oracle::Hang => {
            await_responses(&mut y);
            let _ = writeln!(y, "  # liveness probe: fails when the server is wedged");
            let _ = writeln!(y, "  - request: ping\n    expect: {{ result: {{}} }}");
        }
        Oracle::NoResponse => await_responses(&mut y),
        Oracle::Violation => {
            await_responses(&mut y);
            let _ = writeln!(y, "  - sleep: 200ms");
        }
        Oracle::StderrCrashText => {
            let _ = writeln!(
                y,
                "  # fails when the server's stderr shows a crash report (it may keep serving)"
            );
            let _ = writeln!(
                y,
                "  - expect: {{ stderr: {{ not_matches: {}, within: {within} }} }}",
                quote(crash_text_regex().as_bytes())
            );
        }
        Oracle::MemoryGrowth => {
            let _ = writeln!(
                y,
                "  # scenario files cannot check memory: watch the server's RSS while this runs"
            );
            let _ = writeln!(y, "  - request: ping\n    expect: {{ result: {{}} }}");
        }
    }
    y
}

/// The stderr oracle's crash-report markers as one regular expression.
pub fn crash_text_regex() -> String {
    super::oracle::CRASH_TEXT
        .iter()
        .map(|m| regex::escape(m))
        .collect::<Vec<_>>()
        .join("|")
}

/// A YAML double-quoted scalar holding `bytes` (lossily decoded: YAML text is Unicode).
/// Everything outside printable ASCII is escaped, so no byte needs YAML's printable check.
pub fn quote(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ' '..='~' => out.push(c),
            c if (c as u32) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('"');
    out
}

/// Whether a reproducer written from `writes` carries them byte for byte.
pub fn faithful(writes: &[Vec<u8>]) -> bool {
    writes.iter().all(|w| std::str::from_utf8(w).is_ok())
}

/// Runs a reproducer's text through the scenario parser and executor.
pub async fn replay(
    yaml: &str,
    config: &ExecConfig,
    schemas: Arc<SchemaStore>,
) -> Result<ScenarioOutcome, String> {
    let scenario = crate::scenario::parse::parse_scenario("fuzz-reproducer.yaml", yaml)
        .map_err(|e| e.to_string())?;
    Ok(crate::scenario::exec::run(&scenario, config, schemas).await)
}

/// Whether a replay failed the way the oracle saw the server fail.
pub fn fails_same_way(outcome: &ScenarioOutcome, oracle: &Oracle, rule: &str) -> bool {
    if outcome.verdict != Verdict::Fail {
        return false;
    }
    let causes = || outcome.findings.iter().map(|f| f.cause);
    let has = |cause: Cause| causes().any(|c| c == Some(cause));
    let failing = || {
        outcome
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Failure || f.severity == Severity::Warning)
            .filter(|f| f.rule == rule)
    };
    match oracle {
        // A server already gone at the handshake (an HTTP endpoint still down from the
        // last crash, say) proves nothing about these writes.
        Oracle::Crash => {
            has(Cause::ServerGone {
                at_handshake: false,
            }) && !has(Cause::ServerGone { at_handshake: true })
        }
        Oracle::Hang => has(Cause::Timeout),
        Oracle::NoResponse => has(Cause::Unanswered),
        // The rule broken in the same way, not through the server going away or silent.
        Oracle::Violation => failing().any(|f| f.cause.is_none()),
        Oracle::StderrCrashText => failing().any(|f| f.cause == Some(Cause::StderrMatch)),
        Oracle::MemoryGrowth => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::model::StepKind;
    use serde_json::json;

    fn repro(writes: Vec<Vec<u8>>, oracle: Oracle) -> Repro {
        Repro {
            writes,
            oracle,
            rule: "session.server-exited".into(),
            await_ids: vec![json!(1042), json!("fz-\"7\"")],
            within: Duration::from_secs(2),
            revision: Revision::V2025_11_25,
            transport: TransportKind::Stdio,
        }
    }

    #[test]
    fn the_written_file_parses_back_to_the_same_bytes() {
        let nasty = "{\"s\":\"\u{0}\u{1b}\u{202e}\u{1f600}\u{ffff}\u{2028}\\\\ \\\"q\\\" ${\"}\n";
        let r = repro(
            vec![
                b"{\"jsonrpc\":\"2.0\",".to_vec(),
                b"\"id\":1042,\"method\":\"ping\"}\n".to_vec(),
                nasty.as_bytes().to_vec(),
            ],
            Oracle::NoResponse,
        );
        let text = to_yaml(&r, "fuzz/no-response-abc", "t \"x\"", &["seed 1".into()]);
        // `${` cannot appear in a reproducer: the fuzzer never sends it (see wire.rs); this
        // file has one only to show the parser would reject it.
        assert!(crate::scenario::parse::parse_scenario("x.yaml", &text).is_err());
        let text = text.replace("${", "$_{");
        let s = crate::scenario::parse::parse_scenario("x.yaml", &text)
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        let raws: Vec<String> = s
            .steps
            .iter()
            .filter_map(|st| match &st.kind {
                StepKind::SendRaw(t) => t.0.as_str().map(str::to_owned),
                _ => None,
            })
            .collect();
        assert_eq!(
            raws,
            vec![
                "{\"jsonrpc\":\"2.0\",\"id\":1042,\"method\":\"ping\"}\n".to_owned(),
                nasty.replace("${", "$_{"),
            ]
        );
        assert_eq!(s.rule.as_deref(), Some("session.server-exited"));
        assert_eq!(
            s.steps
                .iter()
                .filter(|st| matches!(st.kind, StepKind::Expect(_)))
                .count(),
            2
        );
    }

    #[test]
    fn invalid_utf8_is_reported_as_unfaithful() {
        assert!(faithful(&[b"{}\n".to_vec()]));
        assert!(!faithful(&[b"{\"a\":\"\xff\"}\n".to_vec()]));
    }
}
