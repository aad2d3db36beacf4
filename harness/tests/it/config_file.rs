//! `mcpcheck.toml` and `mcpcheck init`: the file fills what the command line leaves out,
//! flags override it, and paths are relative to the file. Also `--quiet`.

use std::path::Path;

use crate::support::*;

fn config(dir: &Path, extra: &str) -> std::path::PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("mcpcheck.toml");
    let text = format!(
        r#"[server]
command = [{server:?}, "--defect", "garbage-stdout"]

[run]
protocol-version = "2025-11-25"
include = ["stdio/stdout-only-messages"]
timeout = "2s"
shutdown-wait = "300ms"
kill-wait = "300ms"

[reports]
json = "out/results.json"
{extra}"#,
        server = misbehaving()
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// `mcpcheck run --config PATH`, waited for.
fn run_with_config(path: &Path) -> std::process::Output {
    mcpcheck()
        .args(["run", "--config"])
        .arg(path)
        .output()
        .unwrap()
}

#[test]
fn the_file_configures_the_run_and_its_reports() {
    let dir = tempfile_path("config");
    let path = config(&dir, "markdown = \"out/summary.md\"\n");
    let out = run_with_config(&path);
    let text = describe(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let json: serde_json::Value = single_leg(
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/results.json")).unwrap())
            .unwrap(),
    );
    let ids: Vec<&str> = json["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["stdio/stdout-only-messages"]);
    assert!(dir.join("out/summary.md").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn command_line_flags_override_the_file() {
    let dir = tempfile_path("config-override");
    let path = config(&dir, "");
    let other = dir.join("elsewhere.json");
    let out = mcpcheck()
        .args(["run", "--config"])
        .arg(&path)
        .args(["--exclude", "*", "--include", "tools/*"])
        .arg(format!("--report=json={}", other.display()))
        .output()
        .unwrap();
    let text = describe(&out);
    let json: serde_json::Value = single_leg(
        serde_json::from_str(&std::fs::read_to_string(&other).unwrap_or_default())
            .unwrap_or_else(|e| panic!("{e}\n{text}")),
    );
    assert!(json["scenarios"].as_array().unwrap().is_empty(), "{text}");
    assert!(
        !dir.join("out/results.json").exists(),
        "--report json= replaces the file's json report"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_misspelt_key_is_a_usage_error() {
    let dir = tempfile_path("config-typo");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mcpcheck.toml");
    std::fs::write(&path, "[run]\ntimout = \"1s\"\n").unwrap();
    let out = run_with_config(&path);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("timout"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `profile` in `[run]` selects like `--profile`; an unknown one is a usage error naming the key.
#[test]
fn the_file_selects_a_profile() {
    let dir = tempfile_path("config-profile");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mcpcheck.toml");
    let write = |profile: &str| {
        let text = format!(
            "[server]\ncommand = [{:?}]\n\n[run]\nprotocol-version = \"2025-11-25\"\n\
             include = [\"lifecycle/ping-result\", \"stdio/stdout-only-messages\"]\n\
             profile = {profile:?}\n\n[reports]\njson = \"out.json\"\n",
            reference()
        );
        std::fs::write(&path, text).unwrap();
    };
    write("official-fixture");
    let out = run_with_config(&path);
    let text = describe(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let json = single_leg(
        serde_json::from_str(&std::fs::read_to_string(dir.join("out.json")).unwrap()).unwrap(),
    );
    let ids: Vec<&str> = json["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["lifecycle/ping-result"], "{text}");

    write("offical-fixture");
    let out = run_with_config(&path);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("profile = \"offical-fixture\""),
        "{}",
        describe(&out)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn init_writes_a_starter_and_does_not_overwrite() {
    let dir = tempfile_path("init");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mcpcheck.toml");
    let run = |force: bool| {
        let mut cmd = mcpcheck();
        // In the temporary repository: init writes its workflow where it runs.
        cmd.arg("init")
            .arg(&path)
            .current_dir(&dir)
            .stdin(std::process::Stdio::null());
        if force {
            cmd.arg("--force");
        }
        cmd.output().unwrap()
    };
    assert!(run(false).status.success());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("[server]") && text.contains("# expected-failures"));
    assert_eq!(run(false).status.code(), Some(2), "refuses to overwrite");
    assert!(run(true).status.success());
    assert!(dir.join(".github/workflows/mcpcheck.yml").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn quiet_prints_only_the_verdict() {
    let out = mcpcheck()
        .args(["run", "--quiet", "--exclude", "*", "--", &reference()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", describe(&out));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    assert!(lines[0].starts_with("PASS:"), "{stdout}");
    assert!(
        !stdout.contains('\x1b'),
        "NO_COLOR and a pipe: no escape codes"
    );
}

/// `[server] url` (with headers) and `[run] tool-args` reach the run: the HTTP endpoint is
/// checked, and the listed non-read-only tool is called with the file's arguments.
#[test]
fn the_file_gives_a_url_and_tool_arguments() {
    let server = reference_http();
    let dir = tempfile_path("config-url");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mcpcheck.toml");
    std::fs::write(
        &path,
        format!(
            r#"[server]
url = "{url}"
headers = ["X-Mcpcheck-Test: 1"]

[run]
protocol-version = "2025-11-25"
include = ["notifications/progress-increasing"]
tool-args = {{ write_note = {{ name = "from-config", text = "hi" }} }}

[reports]
json = "results.json"
"#,
            url = server.url
        ),
    )
    .unwrap();
    let out = run_with_config(&path);
    let text = describe(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let json: serde_json::Value = single_leg(
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap(),
    );
    assert!(
        json["server"].as_str().unwrap().contains(&server.url),
        "{text}"
    );
    let sent: Vec<serde_json::Value> = json["scenarios"][0]["transcript"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["direction"] == "sent")
        .filter_map(|e| serde_json::from_str(e["text"].as_str()?).ok())
        .collect();
    let call = sent
        .iter()
        .find(|m| m["method"] == "tools/call" && m["params"]["name"] == "write_note")
        .unwrap_or_else(|| panic!("write_note was not called: {text}"));
    assert_eq!(
        call["params"]["arguments"],
        serde_json::json!({"name": "from-config", "text": "hi"})
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `[auth] required = true` is `--require-auth`: against a server that answers requests
/// without a token, `auth/token-required` fails; with a stdio command it is a usage error
/// naming the section.
#[test]
fn the_file_requires_authorization() {
    let dir = tempfile_path("config-auth");
    let path = config(&dir, "\n[auth]\nrequired = true\n");
    let out = run_with_config(&path);
    let text = describe(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("[auth] required"), "{text}");
    let server = misbehaving_http(&[]);
    std::fs::write(
        &path,
        format!(
            "[server]\nurl = {:?}\n\n[run]\nprotocol-version = \"2025-11-25\"\ninclude = [\"auth/token-required\"]\n\n[reports]\njson = \"out/results.json\"\n\n[auth]\nrequired = true\n",
            server.url
        ),
    )
    .unwrap();
    let out = run_with_config(&path);
    let text = describe(&out);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("accepts requests without a token"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
