//! The hostile-server gallery (fixtures/hostile): against every mode, mcpcheck reaches a
//! verdict (exit 0 or 1) in bounded time, stays under 256 MiB, and leaves no process
//! behind. A handful of scenarios each (stdio ones, tools/list) keeps the cost small; the
//! whole suite per mode is `benches/hostile.sh`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::*;

/// Scenarios run per mode: ones that start servers, send requests and test EOF.
const SUBSET: [&str; 6] = [
    "--include",
    "stdio/*",
    "--include",
    "tools/list-result",
    "--include",
    "lifecycle/declared-tools-served",
];

/// What one run against a mode gave.
struct Run {
    code: i32,
    report: Value,
    took: Duration,
    peak_rss_kib: u64,
    text: String,
}

/// Runs mcpcheck against `mode` with a wall-clock bound of `limit`, sampling its peak
/// RSS, and checks that no process of the server's is left afterwards.
fn run_mode(mode: &str, limit: Duration) -> Run {
    let marker = marker(&format!("hostile-{mode}"));
    let out = tempfile_path("hostile.json");
    let hostile = fixture("mcp-hostile-server");
    let started = Instant::now();
    let mut child = mcpcheck()
        .args(["run", "--protocol-version", "2025-11-25"])
        .args(["--format", "json", "--output"])
        .arg(&out)
        .args(SUBSET)
        .args(["--jobs", "2", "--startup-timeout", startup_timeout(mode)])
        .args(["--timeout", "3s"])
        .args(["--deadline", "100s", "--env", &marker, "--"])
        .arg(&hostile)
        .args(["--mode", mode])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running mcpcheck");
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_rss_kib = 0;
    let status = loop {
        if let Ok(status) = std::fs::read_to_string(&status_file)
            && let Some(kib) = vm_hwm_kib(&status)
        {
            peak_rss_kib = peak_rss_kib.max(kib);
        }
        if let Some(status) = child.try_wait().expect("waiting for mcpcheck") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{mode}: no verdict within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let took = started.elapsed();
    let output = child.wait_with_output().expect("mcpcheck's output");
    let report = std::fs::read_to_string(&out)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .map(single_leg)
        .unwrap_or(Value::Null);
    let _ = std::fs::remove_file(&out);
    assert!(
        eventually(5, || processes_with_env(&marker).is_empty()),
        "{mode}: server processes left behind: {:?}",
        processes_with_env(&marker)
    );
    let run = Run {
        code: status.code().unwrap_or(-1),
        report,
        took,
        peak_rss_kib,
        text: describe(&output),
    };
    eprintln!(
        "hostile {mode:28} exit {} in {:5.1} s, peak RSS {} MiB",
        run.code,
        run.took.as_secs_f64(),
        run.peak_rss_kib / 1024
    );
    assert!(
        run.code == 0 || run.code == 1,
        "{mode}: exit {} (a verdict is 0 or 1): {}",
        run.code,
        run.text
    );
    assert!(
        run.peak_rss_kib < 256 * 1024,
        "{mode}: peak RSS {} MiB",
        run.peak_rss_kib / 1024
    );
    run
}

/// The start-up allowance for `mode`: 5 s, but for the 64 MiB `initialize` answer, which
/// mcpcheck judges once the whole line has gone by, and which a debug build of the fixture
/// takes 4 to 6 s to write on 2 busy cores (the verdict, not the speed, is under test here).
fn startup_timeout(mode: &str) -> &'static str {
    match mode {
        "init-64mb-line" => "20s",
        _ => "5s",
    }
}

fn vm_hwm_kib(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Each scenario's verdict and reason.
fn verdicts(report: &Value) -> Vec<(String, String, String)> {
    report["scenarios"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|s| {
                    let text = |k: &str| s[k].as_str().unwrap_or_default().to_owned();
                    (text("id"), text("verdict"), text("reason"))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Every scenario that applies is blocked, with a reason starting `blocked by {why}`.
fn all_blocked_by(run: &Run, why: &str) {
    let v = verdicts(&run.report);
    assert!(!v.is_empty(), "{}", run.text);
    for (id, verdict, reason) in &v {
        if verdict == "skip" {
            continue;
        }
        assert_eq!(verdict, "blocked", "{id}: {reason}\n{}", run.text);
        assert!(
            reason.starts_with(&format!("blocked by {why}")),
            "{id}: {reason}"
        );
    }
    assert_eq!(run.code, 1);
}

const MINUTE: Duration = Duration::from_secs(60);
const FLOOD: Duration = Duration::from_secs(120);

#[test]
fn stderr_flood() {
    let run = run_mode("stderr-flood", FLOOD);
    assert_eq!(run.code, 0, "{}", run.text);
}

#[test]
fn exit_after_init_with_a_grandchild_holding_the_pipes() {
    let run = run_mode("exit-after-init-grandchild", MINUTE);
    assert_eq!(run.code, 1, "{}", run.text);
    // Depending on when the exit lands, the handshake fails (`notifications/initialized`
    // cannot be sent: everything is blocked) or each scenario fails on its first request.
    assert!(
        verdicts(&run.report).iter().any(|(_, v, r)| v == "fail"
            || (v == "blocked" && r.starts_with("blocked by session.server-exited"))),
        "{}",
        run.text
    );
}

#[test]
fn exit_3_before_reading() {
    let run = run_mode("exit-3", MINUTE);
    all_blocked_by(&run, "session.server-exited");
}

#[test]
fn stdout_noise_then_answer() {
    let run = run_mode("stdout-noise-then-answer", FLOOD);
    all_blocked_by(&run, "flood");
    let text = run.report.to_string();
    assert!(
        text.contains("more like it in this session"),
        "{text:.2000}"
    );
}

#[test]
fn initialize_answered_with_one_64_mib_line() {
    // The oversize line names the request's id at its start: unusable, not awaited.
    let run = run_mode("init-64mb-line", FLOOD);
    all_blocked_by(&run, "session.response-unusable");
}

#[test]
fn byte_at_a_time() {
    let run = run_mode("byte-at-a-time", MINUTE);
    all_blocked_by(&run, "trickle");
}

/// What the run said of shutdowns (`stdio.exit-on-stdin-close` findings): the sweep's,
/// when it shut its session down, and every scenario's (the sweep's session is kept for
/// the shared scenarios when it found no wall, and shut down in one of their windows).
fn shutdown_findings(report: &Value) -> Vec<String> {
    findings_where(report, |f| f["rule"] == "stdio.exit-on-stdin-close")
}

#[test]
fn ignores_signals_and_eof() {
    let run = run_mode("ignore-signals-and-eof", MINUTE);
    let said = shutdown_findings(&run.report);
    assert!(
        said.iter().any(|m| m.contains("SIGKILL")),
        "{said:?}\n{}",
        run.text
    );
}

#[test]
fn never_writes() {
    let run = run_mode("never-write", MINUTE);
    all_blocked_by(&run, "session.request-timeout");
}

#[test]
fn nesting_200000_deep() {
    // The answer names the request's id before its nesting: unusable, not awaited.
    let run = run_mode("deep-nesting", MINUTE);
    assert_eq!(run.code, 1, "{}", run.text);
    all_blocked_by(&run, "session.response-unusable");
}

#[test]
fn invalid_utf8_in_strings() {
    let run = run_mode("invalid-utf8-in-strings", MINUTE);
    assert_eq!(run.code, 1, "{}", run.text);
    all_blocked_by(&run, "session.response-unusable");
}

#[test]
fn numbers_beyond_64_bits_are_judged_as_json() {
    let run = run_mode("huge-numbers", MINUTE);
    assert_eq!(run.code, 1, "{}", run.text);
    let findings = run.report["findings"].to_string();
    assert!(
        findings.contains("1e400") && findings.contains("is not of type"),
        "the capability's wrong type, with the number quoted: {findings:.3000}"
    );
    assert!(
        findings.contains("123456789012345678901234567890"),
        "the unmatched id, exactly: {findings:.3000}"
    );
    assert!(
        !findings.contains("not a JSON-RPC message"),
        "{findings:.3000}"
    );
}

#[test]
fn notification_flood_before_initialize() {
    let run = run_mode("notification-flood", FLOOD);
    all_blocked_by(&run, "flood");
}

#[test]
fn closes_stdout_and_keeps_running() {
    let run = run_mode("close-stdout-keep-running", MINUTE);
    assert_eq!(run.code, 1, "{}", run.text);
}

#[test]
fn wrong_ids() {
    // The handshake answered under another id: no answer will come under its own, so the
    // wait ends at once (no 30 s start-up allowance waited out).
    let run = run_mode("wrong-ids", MINUTE);
    all_blocked_by(&run, "session.response-unusable");
}

#[test]
fn never_answers_tools_list() {
    let run = run_mode("never-answers-one-method", MINUTE);
    let v = verdicts(&run.report);
    let blocked: Vec<_> = v.iter().filter(|(_, v, _)| v == "blocked").collect();
    assert!(!blocked.is_empty(), "{}", run.text);
    assert!(
        blocked.iter().all(|(_, _, r)| r.contains("`tools/list`")),
        "{blocked:?}"
    );
    assert!(
        v.iter().any(|(_, v, _)| v == "pass" || v == "warn"),
        "scenarios without tools/list still run: {v:?}"
    );
}

#[test]
fn never_flushes() {
    let run = run_mode("never-flushes", MINUTE);
    assert_eq!(run.code, 1, "{}", run.text);
}

#[test]
fn ignores_eof() {
    let run = run_mode("ignores-eof", MINUTE);
    let said = shutdown_findings(&run.report);
    assert!(
        said.iter().any(|m| m.contains("needed SIGTERM")),
        "{said:?}\n{}",
        run.text
    );
    assert!(!said.iter().any(|m| m.contains("SIGKILL")), "{said:?}");
}

#[test]
fn the_deadline_ends_a_run_with_what_is_known() {
    let marker = marker("hostile-deadline");
    let hostile = fixture("mcp-hostile-server");
    let started = Instant::now();
    let (code, report, text) = run_json(
        &["--deadline", "3s", "--jobs", "1", "--env", &marker],
        &[hostile.to_str().unwrap(), "--mode", "ignores-eof"],
    );
    assert!(started.elapsed() < Duration::from_secs(30), "{text}");
    assert_eq!(code, 1, "{text}");
    let v = verdicts(&report);
    assert!(
        v.iter()
            .any(|(_, v, r)| v == "blocked" && r.contains("the run's --deadline of 3s passed")),
        "{v:?}"
    );
    assert!(eventually(5, || processes_with_env(&marker).is_empty()));
}

#[test]
fn the_deadline_is_read_from_the_config_file() {
    let dir = tempfile_path("deadline-config");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("mcpcheck.toml"), "[run]\ndeadline = \"2s\"\n").unwrap();
    let hostile = fixture("mcp-hostile-server");
    let output = Command::new(env!("CARGO_BIN_EXE_mcpcheck"))
        .current_dir(&dir)
        .env("MCPCHECK_SCHEMA_DIR", schema_dir())
        .args(["run", "--jobs", "1", "--"])
        .arg(&hostile)
        .args(["--mode", "ignores-eof"])
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text = describe(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("--deadline of 2s passed"), "{text}");
}

/// A server that never answers `initialize` costs the default run (`eras`, which probes
/// first) its start-up allowance once: the planning probe's failed handshake is handed to
/// the leg's sweep, which reports it instead of starting another server to wait again.
/// Counted in server starts: the two planning probes (`server/discover`, `initialize`),
/// and nothing after them.
#[test]
fn a_handshake_the_probe_waited_for_is_not_waited_for_again() {
    let dir = tempfile_path("hostile-starts");
    std::fs::create_dir_all(&dir).unwrap();
    let starts = dir.join("starts");
    let hostile = fixture("mcp-hostile-server");
    let server = format!(
        "sh -c 'echo start >> {}; exec {} --mode never-write'",
        starts.display(),
        hostile.display()
    );
    let marker = marker("hostile-starts");
    let out = mcpcheck()
        .args(["run", "--protocol-version", "eras", "--server", &server])
        .args(SUBSET)
        .args(["--jobs", "2", "--startup-timeout", "2s", "--timeout", "1s"])
        .args(["--env", &marker])
        .output()
        .unwrap();
    let text = describe(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("`initialize` got no response"), "{text}");
    let count = std::fs::read_to_string(&starts)
        .unwrap_or_default()
        .lines()
        .count();
    assert_eq!(count, 2, "server starts (the two probes only): {text}");
    assert!(eventually(5, || processes_with_env(&marker).is_empty()));
}

/// A server that answers `initialize` and then holds every answer in an unflushed stdout
/// until its input ends: the sweep stops asking after two requests in a row go unanswered,
/// its shutdown shows the buffered answers (stdio.stdout-flushed), and every scenario that
/// awaits an answer is blocked by that finding instead of waiting out its own timeouts.
#[test]
fn answers_held_in_an_unflushed_stdout_block_the_scenarios_awaiting_them() {
    let marker = marker("hostile-unflushed");
    let (code, report, text) = run_json(
        &[
            "--include",
            "tools/*",
            "--include",
            "lifecycle/server-info",
            "--startup-timeout",
            "5s",
            "--timeout",
            "2s",
            "--env",
            &marker,
        ],
        &[&misbehaving(), "--defect", "unflushed-stdout"],
    );
    assert_eq!(code, 1, "{text}");
    let steps = report["steps"].as_array().expect("sweep steps");
    let tools = steps
        .iter()
        .find(|s| s["name"] == "tools/list")
        .expect("tools/list step");
    assert!(
        tools.to_string().contains("got no answer in a row"),
        "the sweep stops asking: {tools}"
    );
    let v = verdicts(&report);
    let tools_scenarios: Vec<_> = v
        .iter()
        .filter(|(id, _, _)| id.starts_with("tools/"))
        .collect();
    assert!(!tools_scenarios.is_empty(), "{text}");
    for (id, verdict, reason) in &tools_scenarios {
        assert!(
            verdict == "skip" || (verdict == "blocked" && reason.contains("stdio.stdout-flushed")),
            "{id}: {verdict} {reason}"
        );
    }
    assert!(
        v.iter().any(|(_, verdict, _)| verdict == "blocked"),
        "{v:?}"
    );
    let (_, info, _) = v
        .iter()
        .find(|(id, _, _)| id == "lifecycle/server-info")
        .expect("lifecycle/server-info ran");
    assert_eq!(info, "pass", "it awaits no answer after the handshake");
    assert!(eventually(5, || processes_with_env(&marker).is_empty()));
}

/// The messages of every finding `keep` keeps, the sweep's and the scenarios'.
fn findings_where(report: &Value, keep: impl Fn(&Value) -> bool) -> Vec<String> {
    let scenarios = report["scenarios"].as_array().into_iter().flatten();
    std::iter::once(&report["findings"])
        .chain(scenarios.flat_map(|s| [&s["findings"], &s["protocol"]]))
        .flat_map(|l| l.as_array().into_iter().flatten())
        .filter(|f| keep(f))
        .filter_map(|f| f["message"].as_str().map(str::to_owned))
        .collect()
}

#[test]
fn stops_reading_its_input() {
    // The handshake and the small scenarios fit in what it reads; the 1,000-request burst
    // fills its 4 KiB pipe and is given up once nothing more is taken for the timeout.
    let run = run_mode("stops-reading", MINUTE);
    assert_eq!(run.code, 1, "{}", run.text);
    let said = findings_where(&run.report, |f| {
        f["message"]
            .as_str()
            .is_some_and(|m| m.contains("is not reading its input"))
    });
    assert_eq!(said.len(), 1, "{said:?}\n{}", run.text);
    assert!(
        said[0].contains("writing `(raw bytes)`: the server took no input for 3s (after "),
        "{said:?}"
    );
    let burst = verdicts(&run.report)
        .into_iter()
        .find(|(id, ..)| id == "stdio/burst-1000-requests");
    assert!(
        matches!(&burst, Some((_, v, _)) if v == "fail"),
        "{burst:?}\n{}",
        run.text
    );
}
