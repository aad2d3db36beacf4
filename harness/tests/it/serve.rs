//! `mcpcheck run --serve CMD`: mcpcheck starts the HTTP server itself, runs against it once
//! it answers, and stops its whole process group; nothing is left behind, whatever happens.

use crate::support::{
    describe, eventually, free_port, json_report, marker, mcpcheck, processes_with_env, reference,
};

/// The reference fixture's HTTP mode, with `{port}` for mcpcheck to fill.
fn reference_serve() -> String {
    format!("{} --transport http --bind 127.0.0.1:{{port}}", reference())
}

#[test]
fn serve_runs_the_suite_against_the_started_server_and_stops_it() {
    let mark = marker("serve-ok");
    let serve = reference_serve();
    let (code, report, out) = json_report(
        "run",
        &["--serve", &serve, "--env", &mark, "--include", "tools/*"],
        &[],
    );
    assert_eq!(code, 0, "{out}");
    let server = report["server"].as_str().unwrap_or_default();
    assert!(
        server.starts_with("http://127.0.0.1:") && server.ends_with("/mcp"),
        "the run targets the served URL: {server}"
    );
    let ran = report["scenarios"].as_array().map(Vec::len).unwrap_or(0);
    assert!(ran > 0, "scenarios ran against the served server: {out}");
    assert!(
        eventually(5, || processes_with_env(&mark).is_empty()),
        "left behind: {:?}",
        processes_with_env(&mark)
    );
}

#[test]
fn serve_uses_the_port_of_a_given_url() {
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let serve = reference_serve();
    let (code, report, out) = json_report(
        "run",
        &["--serve", &serve, "--url", &url, "--include", "lifecycle/*"],
        &[],
    );
    assert_eq!(code, 0, "{out}");
    assert_eq!(report["server"].as_str(), Some(url.as_str()), "{out}");
}

#[test]
fn a_taken_port_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let mark = marker("serve-taken");
    let output = mcpcheck()
        .args(["run", "--serve", &reference_serve(), "--env", &mark])
        .arg("--url")
        .arg(format!("http://127.0.0.1:{port}/mcp"))
        .output()
        .unwrap();
    let text = describe(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(
        text.contains(&format!("port {port}")) && text.contains("already taken"),
        "{text}"
    );
    // Nothing was started at all.
    assert!(processes_with_env(&mark).is_empty());
}

#[test]
fn a_server_that_never_answers_fails_in_time_with_its_output_and_is_killed() {
    let mark = marker("serve-silent");
    let started = std::time::Instant::now();
    // Listens nowhere: prints a line, then sleeps (in a child of the shell, to show the
    // whole group goes).
    let output = mcpcheck()
        .args([
            "run",
            "--startup-timeout",
            "1500ms",
            "--env",
            &mark,
            "--serve",
            "sh -c 'echo starting on {port} as $MCPCHECK_TEST_MARKER >&2; sleep 60 & wait'",
        ])
        .output()
        .unwrap();
    let text = describe(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(
        text.contains("did not answer")
            && text.contains("| starting on ")
            && text.contains(mark.split_once('=').unwrap().1),
        "the failure quotes the server's output: {text}"
    );
    assert!(
        started.elapsed().as_secs() < 15,
        "bounded by --startup-timeout"
    );
    assert!(
        eventually(5, || processes_with_env(&mark).is_empty()),
        "left behind: {:?}",
        processes_with_env(&mark)
    );
}

#[test]
fn a_server_that_exits_is_reported_with_its_exit_and_output() {
    let output = mcpcheck()
        .args([
            "run",
            "--serve",
            "sh -c 'echo cannot bind {port} >&2; exit 3'",
        ])
        .output()
        .unwrap();
    let text = describe(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(
        text.contains("exit code 3") && text.contains("cannot bind"),
        "{text}"
    );
}

#[test]
fn serve_is_read_from_the_config_file() {
    let mark = marker("serve-config");
    let config = crate::support::tempfile_path("mcpcheck.toml");
    let words = [
        reference(),
        "--transport".into(),
        "http".into(),
        "--bind".into(),
        "127.0.0.1:{port}".into(),
    ];
    let list = words
        .iter()
        .map(|w| format!("{w:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    std::fs::write(
        &config,
        format!(
            "[server]\nserve = [{list}]\nenv = {{ MCPCHECK_TEST_MARKER = {:?} }}\n",
            mark.split_once('=').unwrap().1
        ),
    )
    .unwrap();
    let config_arg = config.display().to_string();
    let (code, report, out) = json_report(
        "run",
        &["--config", &config_arg, "--include", "lifecycle/*"],
        &[],
    );
    let _ = std::fs::remove_file(&config);
    assert_eq!(code, 0, "{out}");
    assert!(
        report["server"]
            .as_str()
            .unwrap_or_default()
            .starts_with("http://127.0.0.1:"),
        "{out}"
    );
    assert!(eventually(5, || processes_with_env(&mark).is_empty()));
}
