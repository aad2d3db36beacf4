//! The GitHub workflow `mcpcheck init` writes: check out, set up the stack, install and
//! build, then the mcpcheck Action on the server command (which reads mcpcheck.toml for
//! everything else).

use super::detect::Stack;

/// The Action release the workflow pins: the one this mcpcheck was released as.
const ACTION: &str = concat!(
    "mcpcheck/mcpcheck/.github/actions/mcpcheck@v",
    env!("CARGO_PKG_VERSION")
);

/// The workflow for a server started by `command` (words) on `stack` (unknown: no setup
/// steps, only a comment saying where they go).
pub fn render(stack: Option<&Stack>, command: &[String], config: &str) -> String {
    let mut out = String::from(
        "# mcpcheck: MCP conformance checks of this server on every push and pull request.\n\
         # Written by `mcpcheck init`. The server command is repeated from mcpcheck.toml,\n\
         # which holds every other setting (the Action passes --config).\n\
         name: mcpcheck\n\
         on:\n  push:\n  pull_request:\n\
         permissions:\n  contents: read\n\
         jobs:\n  mcpcheck:\n    runs-on: ubuntu-latest\n    steps:\n\
         \x20     - uses: actions/checkout@v4\n",
    );
    for step in setup(stack) {
        out.push_str(&step);
    }
    out.push_str(&format!(
        "      - uses: {ACTION}\n        with:\n          server: {}\n          args: {}\n",
        yaml_scalar(&shell_join(command)),
        yaml_scalar(&format!("--config {}", shell_join(&[config.to_owned()]))),
    ));
    out
}

/// The steps that make the server runnable: toolchain, dependencies, build.
fn setup(stack: Option<&Stack>) -> Vec<String> {
    let run = |cmd: &str| format!("      - run: {}\n", yaml_scalar(cmd));
    match stack {
        Some(Stack::Node { manager, build }) => {
            let mut steps = vec![
                "      - uses: actions/setup-node@v4\n        with:\n          node-version: 22\n"
                    .to_owned(),
            ];
            if *manager == super::detect::NodeManager::Pnpm {
                steps.insert(0, "      - uses: pnpm/action-setup@v4\n".to_owned());
            }
            steps.push(run(manager.install()));
            if *build {
                steps.push(run(manager.build()));
            }
            steps
        }
        Some(Stack::Python { uv: true }) => vec![
            "      - uses: astral-sh/setup-uv@v6\n".to_owned(),
            run("uv sync"),
        ],
        Some(Stack::Python { uv: false }) => vec![
            "      - uses: actions/setup-python@v5\n        with:\n          python-version: \"3.12\"\n"
                .to_owned(),
            run("pip install ."),
        ],
        Some(Stack::Rust { bin }) => vec![
            "      - uses: dtolnay/rust-toolchain@stable\n".to_owned(),
            run(&format!("cargo build --release --bin {bin}")),
        ],
        None => vec![
            "      # Install and build the server here, so the command below can start it.\n"
                .to_owned(),
        ],
    }
}

/// Words back into one command line, as mcpcheck (and so the Action's `server` input)
/// splits it.
pub fn shell_join(words: &[String]) -> String {
    crate::transport::stdio::join_words(words)
}

/// A YAML scalar that reads back as `s`, whatever it holds: always double-quoted (JSON's
/// escapes are YAML's), so `true`, `8080` or a leading `-` stay strings.
fn yaml_scalar(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

#[cfg(test)]
mod tests {
    use super::super::detect::NodeManager;
    use super::*;

    fn words(w: &[&str]) -> Vec<String> {
        w.iter().map(|s| (*s).to_owned()).collect()
    }

    /// The workflow parses as YAML; the Action step's `server` and `args`, read back.
    fn action_inputs(yaml: &str) -> (String, String) {
        use saphyr::{LoadableYamlNode, Yaml};
        let docs = Yaml::load_from_str(yaml).expect("the workflow is YAML");
        let steps = docs[0]
            .as_mapping_get("jobs")
            .and_then(|j| j.as_mapping_get("mcpcheck"))
            .and_then(|j| j.as_mapping_get("steps"))
            .and_then(|s| s.as_vec())
            .expect("jobs.mcpcheck.steps");
        let with = steps
            .iter()
            .find_map(|s| {
                s.as_mapping_get("with")
                    .filter(|w| w.as_mapping_get("server").is_some())
            })
            .expect("the Action step");
        let get = |k: &str| {
            with.as_mapping_get(k)
                .and_then(|v| v.as_str())
                .unwrap()
                .to_owned()
        };
        (get("server"), get("args"))
    }

    #[test]
    fn node_workflow_installs_builds_and_runs_the_action() {
        let stack = Stack::Node {
            manager: NodeManager::Npm,
            build: true,
        };
        let y = render(
            Some(&stack),
            &words(&["node", "build/index.js"]),
            "mcpcheck.toml",
        );
        assert_eq!(
            action_inputs(&y),
            (
                "node build/index.js".into(),
                "--config mcpcheck.toml".into()
            )
        );
        let (install, build, action) = (
            y.find("npm ci").unwrap(),
            y.find("npm run build").unwrap(),
            y.find(ACTION).unwrap(),
        );
        assert!(install < build && build < action, "{y}");
    }

    #[test]
    fn odd_words_are_quoted_for_the_shell_and_for_yaml() {
        let cmd = words(&["python3", "my server.py", "--name=it's"]);
        assert_eq!(
            shell_join(&cmd),
            r#"python3 'my server.py' '--name=it'\''s'"#
        );
        assert_eq!(
            crate::transport::stdio::ServerCommand::parse(&shell_join(&cmd))
                .map(|c| c.args)
                .unwrap(),
            cmd[1..]
        );
        let y = render(
            Some(&Stack::Python { uv: false }),
            &cmd,
            "ci/mcp check.toml",
        );
        assert_eq!(action_inputs(&y).0, shell_join(&cmd));
        assert!(y.contains("pip install ."));
    }

    #[test]
    fn an_unknown_stack_leaves_a_place_for_setup() {
        let y = render(None, &words(&["./server"]), "mcpcheck.toml");
        assert!(y.contains("# Install and build the server here"));
        assert_eq!(action_inputs(&y).0, "./server");
    }
}
