//! Raw command-line arguments, exactly as clap parses them. Resolution into a run
//! configuration lives in `cli::resolve`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Conformance test harness for MCP (Model Context Protocol) servers.
#[derive(Debug, Parser)]
#[command(name = "mcpcheck", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the conformance checks against a server.
    #[command(after_help = "Examples:\n  \
        mcpcheck run -- python3 server.py --flag\n  \
        mcpcheck run --server 'npx -y @modelcontextprotocol/server-everything' --protocol-version 2025-06-18\n  \
        mcpcheck run --format json --output results.json -- ./target/debug/my-server\n  \
        mcpcheck run --url http://127.0.0.1:8808/mcp --bearer-env MCP_TOKEN\n  \
        mcpcheck run --report html=out/report.html --report junit=out/junit.xml -- ./my-server\n  \
        mcpcheck run --expected-failures baseline.yaml --report markdown=summary.md -- ./my-server\n  \
        mcpcheck run --include 'tools/*' --exclude 'tools/call-*' -- ./my-server")]
    Run(Box<RunArgs>),
    /// Fuzz a server: generated and mutated messages, oracles for crashes, hangs and
    /// protocol violations, and a minimized reproducer scenario for each finding.
    #[command(after_help = "Examples:\n  \
        mcpcheck fuzz --duration 60s -- python3 server.py\n  \
        mcpcheck fuzz --iterations 5000 --seed 7 --out repros --server ./target/debug/my-server\n  \
        mcpcheck fuzz --url http://127.0.0.1:8808/mcp --duration 2m --bearer-env MCP_TOKEN\n  \
        mcpcheck run --server ./target/debug/my-server repros/crash-1a2b3c4d.yaml")]
    Fuzz(Box<crate::cli::fuzz::FuzzArgs>),
    /// List the scenarios: ids, titles, revisions and spec references.
    #[command(after_help = "Examples:\n  \
        mcpcheck list\n  \
        mcpcheck list my-scenarios/\n  \
        mcpcheck list scenarios/tools/list-result.yaml")]
    List {
        /// Scenario files or directories (default: the built-in suite).
        #[arg(value_name = "SCENARIOS")]
        scenarios: Vec<PathBuf>,
        /// List only the scenarios partition K of N runs (see `run --partition`).
        #[arg(long, value_name = "K/N")]
        partition: Option<crate::runner::partition::Partition>,
    },
    /// Manage the official MCP JSON Schemas mcpcheck validates against.
    #[command(
        subcommand,
        after_help = "Examples:\n  \
        mcpcheck schemas fetch\n  \
        mcpcheck schemas fetch --dest ./mcp-schema\n  \
        mcpcheck schemas list --schema-dir ./mcp-schema"
    )]
    Schemas(SchemasCommand),
    /// Snapshot the server's surface and response shapes; fail when they change.
    #[command(after_help = "Examples:\n  \
        mcpcheck snapshot -- ./target/debug/my-server            # first run writes snapshots/\n  \
        mcpcheck snapshot --dir tests/snapshots -- ./my-server    # later runs diff, exit 1 on change\n  \
        mcpcheck snapshot --accept -- ./my-server                 # accept the changes\n\n\
        Pending changes are written as NAME.snap.new (insta's format); `cargo insta review` can\n\
        review them too.")]
    Snapshot(Box<crate::cli::snapshot::SnapshotArgs>),
    /// Print a shell completion script for mcpcheck.
    #[command(after_help = "Examples:\n  \
        mcpcheck completions bash > ~/.local/share/bash-completion/completions/mcpcheck\n  \
        mcpcheck completions zsh > ~/.zfunc/_mcpcheck\n  \
        mcpcheck completions fish > ~/.config/fish/completions/mcpcheck.fish")]
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write a commented starter mcpcheck.toml.
    #[command(after_help = "Examples:\n  \
        mcpcheck init\n  \
        mcpcheck init ci/mcpcheck.toml && mcpcheck run --config ci/mcpcheck.toml")]
    Init {
        /// Where to write it.
        #[arg(value_name = "FILE", default_value = "mcpcheck.toml")]
        path: PathBuf,
        /// Overwrite an existing file.
        #[arg(long)]
        force: bool,
    },
    /// Print the mcpcheck(1) man page (roff), generated from these definitions.
    #[command(after_help = "Examples:\n  \
        mcpcheck man > mcpcheck.1 && man ./mcpcheck.1\n  \
        mcpcheck man | gzip > /usr/local/share/man/man1/mcpcheck.1.gz")]
    Man,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Settings file (default: ./mcpcheck.toml when present); flags override its settings.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Server command line, split like a shell would (quotes group words).
    #[arg(long, value_name = "CMD", conflicts_with = "command")]
    pub server: Option<String>,
    /// Scenario files or directories to run instead of the built-in suite.
    #[arg(value_name = "SCENARIOS")]
    pub scenarios: Vec<PathBuf>,
    /// Server command after `--`, passed without any splitting.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
    /// A Streamable HTTP server's MCP endpoint (loopback only), instead of a command,
    /// e.g. `http://127.0.0.1:8808/mcp`.
    #[arg(long, value_name = "URL", conflicts_with_all = ["server", "command"])]
    pub url: Option<String>,
    /// The HTTP transport of --url: auto (detect as the spec's backwards-compatibility
    /// section says), streamable-http (2025-03-26 on) or sse (the HTTP+SSE of 2024-11-05).
    #[arg(long, value_enum, default_value_t = HttpTransportArg::Auto, requires = "url")]
    pub transport: HttpTransportArg,
    /// An HTTP header sent on every request to --url (repeatable), e.g. "X-Api-Key: abc".
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url")]
    pub headers: Vec<String>,
    /// Environment variable holding a bearer token for --url; it is sent as
    /// `Authorization: Bearer ...` and redacted from every output.
    #[arg(long, value_name = "VAR", requires = "url")]
    pub bearer_env: Option<String>,
    /// A PEM file of CA certificates to trust for an https:// --url (e.g. a local server's
    /// self-signed certificate), beside the system's roots.
    #[arg(long, value_name = "FILE", requires = "url")]
    pub cacert: Option<PathBuf>,
    /// Also run the built-in suite when scenario files are given.
    #[arg(long)]
    pub builtin: bool,
    /// Run only scenarios whose id matches this glob (repeatable), e.g. `tools/*`.
    #[arg(long, value_name = "GLOB")]
    pub include: Vec<String>,
    /// Skip scenarios whose id matches this glob (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Scenarios run in parallel, each with its own server (default: number of cores).
    #[arg(long, short, value_name = "N")]
    pub jobs: Option<usize>,
    /// Which tools scenarios may call: none, readonly (annotated readOnlyHint) or all
    /// (except destructiveHint).
    #[arg(long, value_enum, default_value_t = crate::scenario::exec::ToolPolicy::Readonly)]
    pub call_tools: crate::scenario::exec::ToolPolicy,
    /// Arguments to call tools with: a YAML or JSON file mapping tool names to argument
    /// objects. Listed tools may be called under `--call-tools readonly` too, and
    /// `${tool|sample_arguments}` in scenarios gives these instead of synthesized ones.
    #[arg(long, value_name = "FILE")]
    pub tool_args: Option<PathBuf>,
    /// Tool arguments from the config file (`[run] tool-args`); `--tool-args` wins per tool.
    #[arg(skip)]
    pub tool_args_inline: std::collections::BTreeMap<String, serde_json::Value>,
    /// Also compare the server's snapshot with the one accepted in DIR (see `mcpcheck
    /// snapshot`); a change fails the run and is written beside it as `.snap.new`.
    #[arg(long, value_name = "DIR")]
    pub snapshot_dir: Option<PathBuf>,
    /// Environment variable for the server (repeatable).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// Working directory for the server.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Protocol revision to request, or `auto`: probe with server/discover and initialize,
    /// print what the server supports, and run at the newest revision it shares.
    #[arg(long, value_name = "REVISION", default_value = "2025-11-25")]
    pub protocol_version: String,
    /// How long to wait for each response (e.g. 500ms, 10s, 1m).
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub timeout: String,
    /// How long to wait for the `initialize` response, which includes the server's start-up.
    #[arg(long, value_name = "DURATION", default_value = "30s")]
    pub startup_timeout: String,
    /// Directory with `<revision>/schema.json` (else $MCPCHECK_SCHEMA_DIR, else the cache).
    #[arg(long, value_name = "DIR", env = "MCPCHECK_SCHEMA_DIR")]
    pub schema_dir: Option<PathBuf>,
    /// Longest line accepted from the server, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = crate::transport::framing::DEFAULT_MAX_FRAME)]
    pub max_frame_size: usize,
    /// Shutdown: how long to wait for exit after closing the server's stdin.
    #[arg(long, value_name = "DURATION", default_value = "5s")]
    pub shutdown_wait: String,
    /// Shutdown: how long to wait after SIGTERM before SIGKILL.
    #[arg(long, value_name = "DURATION", default_value = "2s")]
    pub kill_wait: String,
    /// Output format on stdout (or in --output).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Write the report to this file instead of stdout (the human summary still prints).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub reports: ReportArgs,
    #[command(flatten)]
    pub ci: CiArgs,
}

/// Report files, the baseline and reproducible output.
#[derive(Debug, Default, Args)]
pub struct ReportArgs {
    /// Also write a report: KIND=PATH with KIND html, junit, json, markdown or sarif (repeatable;
    /// parent directories are created).
    #[arg(long = "report", value_name = "KIND=PATH")]
    pub reports: Vec<crate::report::ReportSpec>,
    /// Replace times, durations, session ids and machine paths with placeholders, so the
    /// same run gives the same report bytes.
    #[arg(long)]
    pub deterministic: bool,
    /// YAML file of accepted failures (scenario or rule ids, each with a reason): listed
    /// failures do not fail the run, unlisted ones do, listed ones that pass are stale.
    #[arg(long, value_name = "FILE")]
    pub expected_failures: Option<PathBuf>,
    /// Rewrite --expected-failures to this run's failures (keeping known reasons).
    #[arg(long, requires = "expected_failures")]
    pub update_baseline: bool,
    /// Print only the verdict line (and baseline notes); no progress bar.
    #[arg(long, short, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Also print the wire transcript of every failing scenario.
    #[arg(long, short)]
    pub verbose: bool,
}

/// Settings for CI: splitting a suite across a matrix, and running without schemas.
#[derive(Debug, Default, Args)]
pub struct CiArgs {
    /// Run only partition K of N of the scenarios (by a stable hash of each scenario id),
    /// e.g. `--partition 2/3` on the second leg of a three-way CI matrix. The protocol
    /// sweep runs in every partition.
    #[arg(long, value_name = "K/N")]
    pub partition: Option<crate::runner::partition::Partition>,
    /// Run without schema validation. Otherwise a missing schema is fetched (pinned,
    /// checksum-verified), and a run that cannot get it stops with exit 2.
    #[arg(long)]
    pub no_schema: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum HttpTransportArg {
    Auto,
    StreamableHttp,
    Sse,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum SchemasCommand {
    /// Download the pinned official schemas into the user cache, verifying checksums.
    #[command(after_help = "Examples:\n  \
        mcpcheck schemas fetch\n  \
        mcpcheck schemas fetch --dest ./mcp-schema && export MCPCHECK_SCHEMA_DIR=$PWD/mcp-schema")]
    Fetch {
        /// Directory to write into (default: the user cache).
        #[arg(long, value_name = "DIR")]
        dest: Option<PathBuf>,
        /// Base URL to download from (default: GitHub's raw content host).
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
    },
    /// Show where each revision's schema is found, and whether it matches the pin.
    #[command(after_help = "Examples:\n  \
        mcpcheck schemas list\n  \
        MCPCHECK_SCHEMA_DIR=./mcp-schema mcpcheck schemas list")]
    List {
        #[arg(long, value_name = "DIR", env = "MCPCHECK_SCHEMA_DIR")]
        schema_dir: Option<PathBuf>,
    },
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_cli_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }

    /// Every subcommand, nested ones too, shows examples in its --help.
    #[test]
    fn every_subcommand_has_examples() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for sub in cmd.get_subcommands() {
                let name = format!("{path} {}", sub.get_name());
                let help = sub
                    .get_after_help()
                    .map(|h| h.to_string())
                    .unwrap_or_default();
                if !help.contains("Examples:") {
                    missing.push(name.clone());
                }
                walk(sub, &name, missing);
            }
        }
        let mut missing = Vec::new();
        walk(&super::Cli::command(), "mcpcheck", &mut missing);
        assert!(missing.is_empty(), "no examples in --help of {missing:?}");
    }
}
