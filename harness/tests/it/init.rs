//! `mcpcheck init` in a server's repository: the start command guessed from its manifest,
//! mcpcheck.toml and the GitHub workflow written, nothing overwritten without `--force`,
//! and the written settings good enough for `mcpcheck run` to check a real server.

use std::path::Path;
use std::process::Stdio;

use crate::support::*;

/// `mcpcheck init ARGS` in `dir`, with no terminal on stdin (so it asks nothing).
fn init(dir: &Path, args: &[&str]) -> std::process::Output {
    mcpcheck()
        .arg("init")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn repo(files: &[(&str, &str)]) -> std::path::PathBuf {
    let dir = tempfile_path("init-repo");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    dir
}

#[test]
fn a_typescript_repo_gets_its_bin_and_a_workflow_that_builds_first() {
    let dir = repo(&[(
        "package.json",
        r#"{"name":"@acme/weather","bin":{"weather":"build/index.js"},"scripts":{"build":"tsc"}}"#,
    )]);
    let o = init(&dir, &[]);
    assert!(o.status.success(), "{}", describe(&o));
    let config = std::fs::read_to_string(dir.join("mcpcheck.toml")).unwrap();
    assert!(
        config.contains("command = [\"node\", \"build/index.js\"]"),
        "{config}"
    );
    assert!(
        config.contains("guessed from package.json \"bin\""),
        "{config}"
    );
    let workflow = std::fs::read_to_string(dir.join(".github/workflows/mcpcheck.yml")).unwrap();
    for needed in [
        "actions/setup-node",
        "npm ci",
        "npm run build",
        "/.github/actions/mcpcheck@v",
        "server: \"node build/index.js\"",
        "args: \"--config mcpcheck.toml\"",
    ] {
        assert!(workflow.contains(needed), "{needed:?} missing:\n{workflow}");
    }

    // Run again: both files are named, nothing is written, exit 2.
    std::fs::write(dir.join("mcpcheck.toml"), "# mine\n").unwrap();
    let o = init(&dir, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", describe(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("mcpcheck.toml and ")
            && err.contains("mcpcheck.yml")
            && err.contains("--force"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("mcpcheck.toml")).unwrap(),
        "# mine\n"
    );
    // A settings file in a subdirectory: the repository is still where init runs, and the
    // workflow names the file by its path from there.
    let o = init(&dir, &["ci/checks.toml", "--force"]);
    assert!(o.status.success(), "{}", describe(&o));
    assert!(dir.join("ci/checks.toml").is_file());
    let workflow = std::fs::read_to_string(dir.join(".github/workflows/mcpcheck.yml")).unwrap();
    assert!(
        workflow.contains("args: \"--config ci/checks.toml\""),
        "{workflow}"
    );
    // --force overwrites; --command replaces the guess; --no-workflow leaves it alone.
    let o = init(
        &dir,
        &[
            "--force",
            "--no-workflow",
            "--command",
            "node dist/cli.js --stdio",
        ],
    );
    assert!(o.status.success(), "{}", describe(&o));
    let config = std::fs::read_to_string(dir.join("mcpcheck.toml")).unwrap();
    assert!(
        config.contains("command = [\"node\", \"dist/cli.js\", \"--stdio\"]"),
        "{config}"
    );
}

#[test]
fn a_repo_without_a_manifest_gets_a_placeholder_that_says_so() {
    let dir = repo(&[]);
    let o = init(&dir, &["--no-workflow"]);
    assert!(o.status.success(), "{}", describe(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("placeholder"), "{out}");
    assert!(!dir.join(".github").exists());
}

/// A Python repository: pyproject.toml without console scripts and a server.py (the
/// Python SDK server of thirdparty/). init guesses `python3 server.py`, and `mcpcheck run`
/// reading the written mcpcheck.toml checks the server with the venv's python first on
/// PATH, as a user's activated venv would have it.
#[test]
fn the_written_settings_check_a_real_python_server() {
    let Some(python) = python_venv() else { return };
    let server = std::fs::read_to_string(workspace().join("thirdparty/mcp_sdk_server.py")).unwrap();
    let dir = repo(&[
        (
            "pyproject.toml",
            "[project]\nname = \"weather\"\nversion = \"0.1.0\"\n",
        ),
        ("server.py", &server),
    ]);
    let o = init(&dir, &[]);
    assert!(o.status.success(), "{}", describe(&o));
    let config = std::fs::read_to_string(dir.join("mcpcheck.toml")).unwrap();
    assert!(
        config.contains("command = [\"python3\", \"server.py\"]"),
        "{config}"
    );
    let workflow = std::fs::read_to_string(dir.join(".github/workflows/mcpcheck.yml")).unwrap();
    assert!(workflow.contains("pip install ."), "{workflow}");

    let venv_bin = python.parent().unwrap();
    let path = std::env::join_paths(std::iter::once(venv_bin.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let o = mcpcheck()
        .args([
            "run",
            "--include",
            "lifecycle/initialize-result",
            "--include",
            "tools/list-result",
        ])
        .current_dir(&dir)
        .env("PATH", path)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("server.py"),
        "the run used the written command: {out}"
    );
}
