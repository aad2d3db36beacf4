//! What `run_checks` says in prose beside the report: the verdict, the counts per leg and
//! every failure and warning with its message, for a reader (or a model) that does not
//! parse the structured content. Also the trimming of the report's transcripts, which are
//! most of its bytes and rarely wanted in a conversation.

use serde_json::Value;

/// The most findings listed; the report has them all.
const MAX_LISTED: usize = 40;

/// The summary of a JSON report (format_version 2). Reads it defensively: a field that is
/// missing or of another type is left out, never a panic.
pub fn summarize(report: &Value) -> String {
    let text = |v: &Value| v.as_str().unwrap_or("?").to_owned();
    let mut out = format!(
        "mcpcheck {}: {} (exit code {})\n",
        text(&report["server"]),
        text(&report["verdict"]),
        report["exit_code"]
    );
    for row in report["revisions"].as_array().into_iter().flatten() {
        let n = |k: &str| row[k].as_u64().unwrap_or(0);
        out.push_str(&format!(
            "  {} {}: {} pass, {} fail, {} warn, {} skip",
            text(&row["revision"]),
            text(&row["status"]),
            n("pass"),
            n("fail"),
            n("warn"),
            n("skip")
        ));
        if let Some(reason) = row["reason"].as_str() {
            out.push_str(&format!(" ({reason})"));
        }
        out.push('\n');
    }
    let mut listed = 0;
    let mut more = 0;
    for leg in report["legs"].as_array().into_iter().flatten() {
        let revision = text(&leg["revision"]);
        let mut note = |id: &str, verdict: &str, message: String| {
            if listed < MAX_LISTED {
                out.push_str(&format!("- [{revision}] {verdict} {id}: {message}\n"));
                listed += 1;
            } else {
                more += 1;
            }
        };
        for f in leg["findings"].as_array().into_iter().flatten() {
            if is_problem(&f["severity"]) {
                note(
                    &text(&f["rule"]),
                    &text(&f["severity"]),
                    text(&f["message"]),
                );
            }
        }
        for s in leg["scenarios"].as_array().into_iter().flatten() {
            let verdict = text(&s["verdict"]);
            if !matches!(verdict.as_str(), "fail" | "warn" | "error" | "blocked") {
                continue;
            }
            let messages: Vec<String> = s["findings"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|f| is_problem(&f["severity"]))
                .map(|f| text(&f["message"]))
                .collect();
            let message = match (messages.is_empty(), s["reason"].as_str()) {
                (false, _) => messages.join("; "),
                (true, Some(reason)) => reason.to_owned(),
                (true, None) => "(no message)".to_owned(),
            };
            note(&text(&s["id"]), &verdict, message);
        }
    }
    if more > 0 {
        out.push_str(&format!(
            "... and {more} more (see the structured report)\n"
        ));
    }
    out
}

fn is_problem(severity: &Value) -> bool {
    matches!(severity.as_str(), Some("failure" | "warning"))
}

/// Empties every `transcript` of the report (each leg's and each scenario's): the schema
/// allows an empty one, and the wire transcript is most of a report's size.
pub fn drop_transcripts(report: &mut Value) {
    let legs = report.get_mut("legs").and_then(Value::as_array_mut);
    for leg in legs.into_iter().flatten() {
        if let Some(t) = leg.get_mut("transcript") {
            *t = Value::Array(Vec::new());
        }
        let scenarios = leg.get_mut("scenarios").and_then(Value::as_array_mut);
        for s in scenarios.into_iter().flatten() {
            if let Some(t) = s.get_mut("transcript") {
                *t = Value::Array(Vec::new());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn failures_are_listed_with_their_messages() {
        let report = json!({
            "server": "srv", "verdict": "fail", "exit_code": 1,
            "revisions": [{"revision": "2025-11-25", "status": "fail", "pass": 3, "fail": 1, "warn": 0, "skip": 2, "reason": null}],
            "legs": [{"revision": "2025-11-25", "findings": [], "scenarios": [
                {"id": "a/b", "verdict": "pass", "findings": []},
                {"id": "stdio/x", "verdict": "fail", "findings": [{"severity": "failure", "message": "garbage on stdout"}]}
            ]}]
        });
        let s = summarize(&report);
        assert!(s.starts_with("mcpcheck srv: fail (exit code 1)"), "{s}");
        assert!(
            s.contains("2025-11-25 fail: 3 pass, 1 fail, 0 warn, 2 skip"),
            "{s}"
        );
        assert!(
            s.contains("- [2025-11-25] fail stdio/x: garbage on stdout"),
            "{s}"
        );
        assert!(!s.contains("a/b"));
    }

    #[test]
    fn any_json_is_summarized_without_panicking() {
        for v in [
            json!(null),
            json!([1]),
            json!({"legs": 3}),
            json!({"legs": [{"scenarios": [7]}]}),
        ] {
            summarize(&v);
            drop_transcripts(&mut v.clone());
        }
    }
}
