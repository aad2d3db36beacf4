//! `mcpcheck fuzz --url` against live loopback HTTP servers: a crash of the endpoint is
//! found, its reproducer is minimized over new sessions (while a supervisor restarts the
//! server) and `mcpcheck run --url` on it fails the same way; an endpoint that stays down
//! ends the run, never hangs it; the rmcp reference over HTTP yields nothing.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::*;
use serde_json::Value;

/// Runs `mcpcheck fuzz --url URL` with a JSON report; returns (exit code, report,
/// output, out dir, wall time).
fn fuzz_url(url: &str, extra: &[&str]) -> (i32, Value, String, PathBuf, Duration) {
    let out_dir = tempfile_path("http-repros");
    let fixed = ["--url", url, "--seed", "7", "--timeout", "1s", "--out"];
    let started = Instant::now();
    let (code, report, text) = json_report(
        "fuzz",
        &[&fixed[..], &[out_dir.to_str().unwrap()], extra].concat(),
        &[],
    );
    (code, report, text, out_dir, started.elapsed())
}

/// The misbehaving fixture over HTTP on a fixed port, restarted whenever it exits (a
/// supervisor, as a deployed server would have). Killed, and no longer restarted, on drop.
struct Supervised {
    url: String,
    stop: Arc<AtomicBool>,
    child: Arc<Mutex<Option<Child>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Supervised {
    fn start(defect: &str) -> Supervised {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let bind = format!("127.0.0.1:{port}");
        let stop = Arc::new(AtomicBool::new(false));
        let child: Arc<Mutex<Option<Child>>> = Arc::new(Mutex::new(None));
        let (stop2, child2, defect) = (stop.clone(), child.clone(), defect.to_owned());
        let thread = std::thread::spawn(move || {
            loop {
                {
                    let mut slot = child2.lock().unwrap();
                    if stop2.load(Ordering::SeqCst) {
                        return;
                    }
                    let spawned = Command::new(misbehaving())
                        .args(["--transport", "http", "--bind", &bind, "--defect", &defect])
                        .stdin(Stdio::null())
                        .stdout(Stdio::null())
                        .stderr(Stdio::null())
                        .spawn()
                        .expect("starting the fixture");
                    *slot = Some(spawned);
                }
                loop {
                    std::thread::sleep(Duration::from_millis(20));
                    let mut slot = child2.lock().unwrap();
                    match slot.as_mut().map(|c| c.try_wait()) {
                        Some(Ok(None)) => {}
                        _ => {
                            *slot = None;
                            break;
                        }
                    }
                }
            }
        });
        let url = format!("http://127.0.0.1:{port}/mcp");
        assert!(
            eventually(20, || std::net::TcpStream::connect(("127.0.0.1", port))
                .is_ok()),
            "the supervised fixture never listened on {url}"
        );
        Supervised {
            url,
            stop,
            child,
            thread: Some(thread),
        }
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(mut c) = self.child.lock().unwrap().take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The crash finding of a report (over HTTP: the endpoint dropped or refused the exchange).
fn crash(report: &Value, text: &str) -> Value {
    report["findings"]
        .as_array()
        .and_then(|fs| fs.iter().find(|f| f["signature"]["oracle"] == "crash"))
        .unwrap_or_else(|| panic!("no crash finding\n{text}"))
        .clone()
}

#[test]
fn an_http_crash_is_found_minimized_and_replayed_by_run_url() {
    let server = Supervised::start("huge-input");
    let (code, report, text, out_dir, _) = fuzz_url(&server.url, &["--duration", "20s"]);
    assert_eq!(code, 1, "findings mean exit 1\n{text}");
    assert_eq!(report["transport"], "streamable-http", "{text}");
    let f = crash(&report, &text);
    assert!(
        f["finding"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("the server stopped answering"),
        "{f:#}"
    );
    assert_eq!(f["reproduced"], true, "{f:#}\n{text}");
    assert_eq!(
        f["writes_after"], 1,
        "minimized to the one huge body: {f:#}"
    );
    let repro = PathBuf::from(f["reproducer"].as_str().expect("a reproducer path"));
    let yaml = std::fs::read_to_string(&repro).unwrap();
    assert!(yaml.contains("transports: [http]"), "{yaml:.600}");
    assert!(
        yaml.contains(&format!("--url {}", server.url)),
        "{yaml:.600}"
    );

    // `mcpcheck run --url` on the reproducer fails the same way.
    assert!(eventually(20, || std::net::TcpStream::connect(
        server
            .url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
    )
    .is_ok()));
    let (code, run, text) =
        run_url_json(&server.url, &["--timeout", "2s", repro.to_str().unwrap()]);
    assert_eq!(code, 1, "{text}");
    let scenario = scenario_starting(&run, "fuzz/")
        .unwrap_or_else(|| panic!("the reproducer did not run\n{text}"))
        .clone();
    assert_eq!(scenario["verdict"], "fail", "{scenario:#}");
    assert!(
        scenario["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["message"]
                .as_str()
                .unwrap_or_default()
                .contains("the server is gone")),
        "{scenario:#}"
    );
    let _ = std::fs::remove_dir_all(&out_dir);
}

#[test]
fn an_endpoint_that_stays_down_ends_the_run_with_its_finding() {
    let server = misbehaving_http(&["--defect", "huge-input"]);
    let (code, report, text, out_dir, took) = fuzz_url(&server.url, &["--duration", "60s"]);
    assert_eq!(code, 1, "{text}");
    assert!(took < Duration::from_secs(45), "took {took:?}: {text}");
    assert!(
        report["stopped"]
            .as_str()
            .is_some_and(|s| s.contains("stopped answering")),
        "{text}"
    );
    let f = crash(&report, &text);
    // Nothing to replay against: said so, never claimed either way.
    assert_eq!(f["reproduced"], Value::Null, "{f:#}");
    assert!(
        f["note"].as_str().is_some_and(|n| n.contains("restart it")),
        "{f:#}"
    );
    let repro = PathBuf::from(f["reproducer"].as_str().expect("still written"));
    assert!(repro.is_file());
    let _ = std::fs::remove_dir_all(&out_dir);
}

#[test]
fn the_reference_over_http_yields_no_findings() {
    let server = reference_http();
    let (code, report, text, out_dir, _) = fuzz_url(&server.url, &["--iterations", "240"]);
    assert_eq!(code, 0, "{text}");
    assert_eq!(report["findings"], serde_json::json!([]), "{text}");
    assert_eq!(report["transport"], "streamable-http");
    assert!(report["messages"].as_u64().unwrap() > 100, "{text}");
    let methods = report["methods"].as_object().unwrap();
    assert!(
        methods.len() >= 10 && methods.values().all(|n| n.as_u64() > Some(0)),
        "coverage {methods:?}"
    );
    assert!(!out_dir.exists(), "no reproducers without findings");

    // What makes no sense over HTTP is not generated, and the run says so.
    let output = mcpcheck()
        .args([
            "fuzz",
            "--dry-run",
            "--iterations",
            "400",
            "--seed",
            "7",
            "--url",
            &server.url,
        ])
        .output()
        .unwrap();
    let text = describe(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("not generated: split-frame"), "{text}");
    let cases: Vec<&str> = stderr.lines().filter(|l| l.starts_with("case ")).collect();
    assert!(cases.len() >= 400, "{}", cases.len());
    assert!(
        !cases.iter().any(|c| c.contains("mutated:split-frame")),
        "split frame over HTTP"
    );
    assert!(
        !cases
            .iter()
            .any(|c| c.contains("\"method\":\"initialize\"")),
        "second initialize over HTTP"
    );
}

#[test]
fn bad_or_unreachable_urls_are_usage_errors() {
    let run = |args: &[&str]| {
        let output = mcpcheck().arg("fuzz").args(args).output().unwrap();
        (output.status.code(), describe(&output))
    };
    let (code, text) = run(&["--url", "http://192.0.2.1/mcp", "--iterations", "1"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("loopback"), "{text}");
    let (code, text) = run(&["--header", "X-A: b", "--iterations", "1", "--", "true"]);
    assert_eq!(code, Some(2), "--header needs --url: {text}");
    // Nothing listens there: the first session cannot start, and that is exit 2.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (code, text) = run(&[
        "--url",
        &url,
        "--iterations",
        "1",
        "--transport",
        "streamable-http",
    ]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("handshake"), "{text}");
}
