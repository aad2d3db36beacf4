//! What the integration tests share: where the fixtures, the schemas and the workspace are
//! ([`fixture`], [`schema_dir`]), running `mcpcheck` and reading its JSON report
//! ([`json_report`], [`report`]), the defect map and the scenario list ([`suite`]),
//! prerequisites from outside Cargo ([`require`]), servers on loopback HTTP
//! ([`http_server`], and of the schemas, [`schema_server`]), the short waits of a run
//! ([`FAST`]) and processes found by environment ([`processes_with_env`]).

pub mod browser;
pub mod http_server;
pub mod props;
pub mod report;
pub mod require;
pub mod schema_server;
pub mod suite;
pub mod thirdparty;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub use http_server::HttpServer;
pub use report::*;
pub use require::*;
pub use schema_server::{Serving, serve_schemas};
pub use thirdparty::*;

/// Short waits for runs against the bundled fixtures, which answer at once: a hang costs
/// seconds, not the defaults' minutes. A module that needs more flags adds them to this.
pub const FAST: [&str; 8] = [
    "--timeout",
    "2s",
    "--startup-timeout",
    "5s",
    "--shutdown-wait",
    "300ms",
    "--kill-wait",
    "300ms",
];

/// The waits of runs with more jobs than cores (the servers mostly wait): a 3 s exchange
/// timeout instead of [`FAST`]'s 2 s, as an answer may wait for a core, and the default
/// shutdown waits. A module adds its `--jobs`.
pub const FAST_MANY_JOBS: [&str; 4] = ["--timeout", "3s", "--startup-timeout", "5s"];

/// [`FAST_MANY_JOBS`] with short shutdown waits and `jobs` workers, for whole-suite runs:
/// scenario expectations carry their own windows, and the servers mostly wait, so more
/// jobs than cores is faster.
pub fn whole_suite_args(jobs: &'static str) -> Vec<&'static str> {
    let waits = [
        "--shutdown-wait",
        "500ms",
        "--kill-wait",
        "300ms",
        "--jobs",
        jobs,
    ];
    [&FAST_MANY_JOBS[..], &waits].concat()
}

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("harness is inside the workspace")
        .to_path_buf()
}

/// The official schemas: `$MCPCHECK_SCHEMA_DIR`, else `../shared/mcp-schema` beside the
/// clone (the rule the library's unit tests follow too: one file, included here).
pub fn schema_dir() -> PathBuf {
    test_dir::schema_dir()
}

#[path = "../../../src/schema/test_dir.rs"]
mod test_dir;

/// The directory this build's binaries are in, as Cargo says: the directory of
/// `CARGO_BIN_EXE_mcpcheck`, `<target>/<profile>/` (`<target>/<triple>/<profile>/` with
/// `--target`). The workspace's fixture binaries land beside it in the same build, so this
/// honours `CARGO_TARGET_DIR`, `--release`/`--profile` and `--target` where a path joined
/// from `target/debug` would run stale binaries of another build, or none. (The test
/// binary's own path, `<same>/deps/it-HASH`, gives the same directory; Cargo's variable
/// needs no parsing.)
fn build_dir() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_mcpcheck"))
        .parent()
        .expect("a binary path has a directory")
}

/// The path of a fixture server binary of this build. `cargo test --workspace` builds them
/// before any test runs (each fixture crate has an integration test, which makes cargo
/// build its binary). Tests must not run cargo themselves: cargo holds the build lock
/// while tests run.
pub fn fixture(name: &str) -> PathBuf {
    let path = build_dir().join(name);
    assert!(
        path.exists(),
        "fixture binary missing: {}; run the tests with `cargo test --workspace` (or build \
         the fixtures first with `cargo build --workspace` and the same profile flags)",
        path.display()
    );
    path
}

pub fn reference() -> String {
    fixture("mcp-reference-server").display().to_string()
}

pub fn misbehaving() -> String {
    fixture("mcp-misbehaving-server").display().to_string()
}

/// The reference fixture in Streamable HTTP mode on a free loopback port.
pub fn reference_http() -> HttpServer {
    HttpServer::start(
        &reference(),
        &["--transport", "http", "--bind", "127.0.0.1:0"],
    )
}

/// The misbehaving fixture in Streamable HTTP mode on a free loopback port, with `args`
/// (`--defect NAME`, ...).
pub fn misbehaving_http(args: &[&str]) -> HttpServer {
    let all = [&["--transport", "http", "--bind", "127.0.0.1:0"][..], args].concat();
    HttpServer::start(&misbehaving(), &all)
}

/// A `mcpcheck` command with the test schemas.
pub fn mcpcheck() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcpcheck"));
    cmd.env("MCPCHECK_SCHEMA_DIR", schema_dir())
        .env("NO_COLOR", "1");
    cmd
}

/// Runs `mcpcheck run` with JSON output and returns (exit code, report, stdout+stderr).
pub fn run_json(extra: &[&str], server: &[&str]) -> (i32, serde_json::Value, String) {
    json_report("run", &[extra, &["--"], server].concat(), &[])
}

/// [`run_json`] against a URL: `mcpcheck run --url URL EXTRA...`.
pub fn run_url_json(url: &str, extra: &[&str]) -> (i32, serde_json::Value, String) {
    json_report("run", &[&["--url", url][..], extra].concat(), &[])
}

/// `mcpcheck SUBCOMMAND --format json --output FILE ARGS...` (a server command goes in ARGS
/// after `--`) with `env` set; returns (exit code, report or null, stdout+stderr).
///
/// A `run` checks one revision, 2025-11-25, unless ARGS name one (`--protocol-version`):
/// most tests are about one leg, and the default (a leg per era the server speaks) is the
/// matrix tests' subject. A report of one leg is returned as that leg (the run object);
/// one of several legs as the whole matrix (`legs`).
pub fn json_report(
    subcommand: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> (i32, serde_json::Value, String) {
    let out_file = tempfile_path("report.json");
    let mut cmd = mcpcheck();
    cmd.arg(subcommand);
    if subcommand == "run" && !args.iter().any(|a| a.starts_with("--protocol-version")) {
        cmd.args(["--protocol-version", "2025-11-25"]);
    }
    cmd.args(["--format", "json", "--output"])
        .arg(&out_file)
        .args(args)
        .envs(env.iter().copied());
    let output = cmd.output().expect("running mcpcheck");
    let report = std::fs::read_to_string(&out_file)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .map(single_leg)
        .unwrap_or(serde_json::Value::Null);
    let _ = std::fs::remove_file(&out_file);
    (
        output.status.code().unwrap_or(-1),
        report,
        describe(&output),
    )
}

/// reports/results.schema.json narrowed to one leg (`$defs/leg`), for a report that
/// [`single_leg`] unwrapped.
pub fn leg_schema() -> serde_json::Value {
    let mut schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(workspace().join("reports/results.schema.json")).unwrap(),
    )
    .unwrap();
    let root = schema.as_object_mut().unwrap();
    for key in ["type", "required", "additionalProperties", "properties"] {
        root.remove(key);
    }
    root.insert("$ref".into(), "#/$defs/leg".into());
    schema
}

/// A `run` report of exactly one leg as that leg; anything else as it is.
pub fn single_leg(report: serde_json::Value) -> serde_json::Value {
    match report["legs"].as_array() {
        Some(legs) if legs.len() == 1 => legs[0].clone(),
        _ => report,
    }
}

pub fn describe(output: &Output) -> String {
    format!(
        "--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A unique path in the system temp directory.
pub fn tempfile_path(name: &str) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("mcpcheck-test-{}-{n}-{name}", std::process::id()))
}

/// A free loopback port (bound and released: a server started right after gets it).
pub fn free_port() -> String {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
        .to_string()
}

/// A loopback port no other test of this process is handed, below the kernel's ephemeral
/// range (32768 on): mcpcheck's own `--serve` picks its port by binding port 0, so several
/// at once can be handed one port, and the loser's run then talks to the winner's server.
/// Tests that start servers side by side pass this port in `--url` instead.
pub fn unshared_port() -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let base = 20_000 + (std::process::id() as usize % 100) * 100;
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = base + n % 10_000;
        // Skip a port something else on the machine holds.
        if std::net::TcpListener::bind(("127.0.0.1", port as u16)).is_ok() {
            return port.to_string();
        }
    }
}

/// Pids of live (non-zombie) processes whose environment contains `KEY=VALUE` exactly.
pub fn processes_with_env(key_value: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return pids;
    };
    for entry in dir.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        let zombie = std::fs::read_to_string(entry.path().join("stat"))
            .map(|s| {
                s.rsplit(')')
                    .next()
                    .is_some_and(|rest| rest.trim_start().starts_with('Z'))
            })
            .unwrap_or(true);
        if !zombie
            && environ
                .split(|&b| b == 0)
                .any(|kv| kv == key_value.as_bytes())
        {
            pids.push(pid);
        }
    }
    pids
}

/// Polls `cond` every 50 ms until it holds or `secs` pass; returns whether it held.
pub fn eventually(secs: u64, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while std::time::Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    cond()
}

/// A unique `MCPCHECK_TEST_MARKER=...` to find a test's server processes by environment.
pub fn marker(name: &str) -> String {
    format!(
        "MCPCHECK_TEST_MARKER={name}-{}-{}",
        std::process::id(),
        tempfile_path("").display().to_string().len()
    )
}
