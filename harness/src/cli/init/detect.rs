//! Guessing how a server repository starts its server, from the manifest its stack keeps
//! (package.json, pyproject.toml, Cargo.toml). Pure: file contents in, a guess out, so
//! every case is a unit test and nothing here touches the disk but [`detect`].

use std::path::Path;

use serde_json::Value;

/// The stack a repository is built with: what the workflow installs and builds before
/// mcpcheck starts the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stack {
    /// package.json: Node, with the package manager its lock file names.
    Node {
        /// Which package manager installs its dependencies.
        manager: NodeManager,
        /// `scripts.build` exists: the workflow builds before it runs.
        build: bool,
    },
    /// pyproject.toml: Python; `uv` when the project keeps a uv.lock.
    Python {
        /// A uv.lock is present: `uv sync` and `uv run`.
        uv: bool,
    },
    /// Cargo.toml: Rust; the workflow builds this binary in release mode.
    Rust {
        /// The binary that serves.
        bin: String,
    },
}

/// Which Node package manager a lock file names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeManager {
    /// package-lock.json, or no lock file.
    Npm,
    /// pnpm-lock.yaml.
    Pnpm,
    /// yarn.lock.
    Yarn,
}

impl NodeManager {
    /// The command that installs exactly the locked dependencies.
    pub fn install(self) -> &'static str {
        match self {
            NodeManager::Npm => "npm ci",
            NodeManager::Pnpm => "pnpm install --frozen-lockfile",
            NodeManager::Yarn => "yarn install --frozen-lockfile",
        }
    }

    /// The command that runs the package's `build` script.
    pub fn build(self) -> &'static str {
        match self {
            NodeManager::Npm => "npm run build",
            NodeManager::Pnpm => "pnpm run build",
            NodeManager::Yarn => "yarn run build",
        }
    }
}

/// A guessed start command and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Guess {
    /// What the workflow sets up before the server can start.
    pub stack: Stack,
    /// The words of the stdio command that starts the server.
    pub command: Vec<String>,
    /// Where the guess came from, for the comment beside it (`package.json "bin"`).
    pub source: String,
}

/// The manifests of a directory, as text (absent ones `None`), and which lock files and
/// entry scripts sit beside them.
#[derive(Debug, Default)]
pub struct Manifests {
    /// package.json.
    pub package_json: Option<String>,
    /// pyproject.toml.
    pub pyproject: Option<String>,
    /// Cargo.toml.
    pub cargo: Option<String>,
    /// File names present in the directory that matter to a guess (lock files, scripts).
    pub present: Vec<String>,
}

/// Files whose presence changes a guess.
const MARKERS: &[&str] = &[
    "pnpm-lock.yaml",
    "yarn.lock",
    "uv.lock",
    "server.py",
    "main.py",
    "app.py",
];

impl Manifests {
    /// Reads the manifests of `dir`; a missing file is simply absent.
    pub fn read(dir: &Path) -> Self {
        let text = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
        Manifests {
            package_json: text("package.json"),
            pyproject: text("pyproject.toml"),
            cargo: text("Cargo.toml"),
            present: MARKERS
                .iter()
                .filter(|m| dir.join(m).is_file())
                .map(|m| (*m).to_owned())
                .collect(),
        }
    }

    fn has(&self, name: &str) -> bool {
        self.present.iter().any(|p| p == name)
    }
}

/// The first stack whose manifest names a way to start a server: Node, then Python, then
/// Rust (a repository with several is usually a Node or Python server with helpers).
pub fn detect(m: &Manifests) -> Option<Guess> {
    m.package_json
        .as_deref()
        .and_then(|t| node(t, m))
        .or_else(|| m.pyproject.as_deref().and_then(|t| python(t, m)))
        .or_else(|| m.cargo.as_deref().and_then(rust))
}

fn node(text: &str, m: &Manifests) -> Option<Guess> {
    let pkg: Value = serde_json::from_str(text).ok()?;
    let manager = if m.has("pnpm-lock.yaml") {
        NodeManager::Pnpm
    } else if m.has("yarn.lock") {
        NodeManager::Yarn
    } else {
        NodeManager::Npm
    };
    let scripts = pkg.get("scripts");
    let stack = Stack::Node {
        manager,
        build: scripts.and_then(|s| s.get("build")).is_some(),
    };
    let guess = |command: Vec<String>, source: &str| Guess {
        stack: stack.clone(),
        command,
        source: source.to_owned(),
    };
    // `bin` is what an MCP client config would run; `main` the next best; `npm start`
    // last, with --silent, because npm's banner on stdout would break stdio framing.
    if let Some(path) = node_bin(&pkg) {
        return Some(guess(vec!["node".into(), path], "package.json \"bin\""));
    }
    if let Some(main) = pkg.get("main").and_then(Value::as_str) {
        return Some(guess(
            vec!["node".into(), main.to_owned()],
            "package.json \"main\"",
        ));
    }
    scripts.and_then(|s| s.get("start")).map(|_| {
        guess(
            vec!["npm".into(), "start".into(), "--silent".into()],
            "package.json \"scripts.start\"",
        )
    })
}

/// The script of `bin`: the string itself, or the entry named like the package (without
/// its scope), else the first entry.
fn node_bin(pkg: &Value) -> Option<String> {
    match pkg.get("bin")? {
        Value::String(path) => Some(path.clone()),
        Value::Object(bins) => {
            let name = pkg.get("name").and_then(Value::as_str).unwrap_or("");
            let short = name.rsplit('/').next().unwrap_or(name);
            bins.get(short)
                .or_else(|| bins.values().next())
                .and_then(Value::as_str)
                .map(str::to_owned)
        }
        _ => None,
    }
}

fn python(text: &str, m: &Manifests) -> Option<Guess> {
    let doc: toml::Table = text.parse().ok()?;
    let uv = m.has("uv.lock");
    let stack = Stack::Python { uv };
    // A console script is what `uvx` or an MCP client config would run.
    let scripts = doc
        .get("project")
        .and_then(|p| p.get("scripts"))
        .or_else(|| {
            doc.get("tool")
                .and_then(|t| t.get("poetry"))
                .and_then(|p| p.get("scripts"))
        })
        .and_then(toml::Value::as_table);
    if let Some(name) = scripts.and_then(|s| s.keys().next()) {
        let command = if uv {
            vec!["uv".into(), "run".into(), name.clone()]
        } else {
            vec![name.clone()]
        };
        return Some(Guess {
            stack,
            command,
            source: "pyproject.toml [project.scripts]".into(),
        });
    }
    let file = ["server.py", "main.py", "app.py"]
        .into_iter()
        .find(|f| m.has(f))?;
    let command = if uv {
        vec!["uv".into(), "run".into(), "python".into(), file.into()]
    } else {
        vec!["python3".into(), file.into()]
    };
    Some(Guess {
        stack,
        command,
        source: format!("{file} beside pyproject.toml"),
    })
}

fn rust(text: &str) -> Option<Guess> {
    let doc: toml::Table = text.parse().ok()?;
    let bin = doc
        .get("bin")
        .and_then(toml::Value::as_array)
        .and_then(|bins| bins.first())
        .and_then(|b| b.get("name"))
        .or_else(|| doc.get("package").and_then(|p| p.get("name")))
        .and_then(toml::Value::as_str)?
        .to_owned();
    Some(Guess {
        command: vec![format!("target/release/{bin}")],
        source: "Cargo.toml (built with `cargo build --release`)".into(),
        stack: Stack::Rust { bin },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(package_json: Option<&str>, pyproject: Option<&str>, cargo: Option<&str>) -> Manifests {
        Manifests {
            package_json: package_json.map(str::to_owned),
            pyproject: pyproject.map(str::to_owned),
            cargo: cargo.map(str::to_owned),
            present: Vec::new(),
        }
    }

    #[test]
    fn node_prefers_the_bin_named_like_the_package() {
        let m = with(
            Some(
                r#"{"name":"@acme/weather","bin":{"helper":"h.js","weather":"build/index.js"},"scripts":{"build":"tsc"}}"#,
            ),
            None,
            None,
        );
        let g = detect(&m).unwrap();
        assert_eq!(g.command, ["node", "build/index.js"]);
        assert_eq!(
            g.stack,
            Stack::Node {
                manager: NodeManager::Npm,
                build: true
            }
        );
    }

    #[test]
    fn node_falls_back_to_main_then_a_silent_npm_start() {
        let m = with(Some(r#"{"main":"dist/server.js"}"#), None, None);
        assert_eq!(detect(&m).unwrap().command, ["node", "dist/server.js"]);
        let mut m = with(
            Some(r#"{"scripts":{"start":"tsx src/index.ts"}}"#),
            None,
            None,
        );
        m.present.push("pnpm-lock.yaml".into());
        let g = detect(&m).unwrap();
        assert_eq!(g.command, ["npm", "start", "--silent"]);
        assert!(matches!(
            g.stack,
            Stack::Node {
                manager: NodeManager::Pnpm,
                build: false
            }
        ));
        // Nothing to start: the next stack is asked.
        assert_eq!(detect(&with(Some("{}"), None, None)), None);
    }

    #[test]
    fn python_takes_the_first_console_script_and_uv_when_locked() {
        let text =
            "[project]\nname = \"weather\"\n[project.scripts]\nweather-mcp = \"weather:main\"\n";
        assert_eq!(
            detect(&with(None, Some(text), None)).unwrap().command,
            ["weather-mcp"]
        );
        let mut m = with(None, Some(text), None);
        m.present.push("uv.lock".into());
        assert_eq!(detect(&m).unwrap().command, ["uv", "run", "weather-mcp"]);
    }

    #[test]
    fn python_without_scripts_runs_the_server_file() {
        let mut m = with(None, Some("[project]\nname = \"x\"\n"), None);
        assert_eq!(detect(&m), None);
        m.present.push("server.py".into());
        assert_eq!(detect(&m).unwrap().command, ["python3", "server.py"]);
    }

    #[test]
    fn rust_runs_the_release_binary() {
        let g = detect(&with(None, None, Some("[package]\nname = \"my-server\"\n"))).unwrap();
        assert_eq!(g.command, ["target/release/my-server"]);
        let g = detect(&with(
            None,
            None,
            Some("[package]\nname = \"x\"\n[[bin]]\nname = \"mcp\"\npath = \"src/main.rs\"\n"),
        ))
        .unwrap();
        assert_eq!(g.stack, Stack::Rust { bin: "mcp".into() });
    }

    #[test]
    fn a_broken_manifest_lets_the_next_stack_answer() {
        let m = with(
            Some("{not json"),
            Some("[project.scripts]\nsrv = \"a:b\"\n"),
            None,
        );
        assert_eq!(detect(&m).unwrap().command, ["srv"]);
        assert_eq!(detect(&with(None, None, None)), None);
    }
}
