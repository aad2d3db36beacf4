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
        mcpcheck run --format json --output results.json -- ./target/debug/my-server")]
    Run(Box<RunArgs>),
    /// Fuzz a server: generated and mutated messages, oracles for crashes, hangs and
    /// protocol violations, and a minimized reproducer scenario for each finding.
    #[command(after_help = "Examples:\n  \
        mcpcheck fuzz --duration 60s -- python3 server.py\n  \
        mcpcheck fuzz --iterations 5000 --seed 7 --out repros --server ./target/debug/my-server\n  \
        mcpcheck run --server ./target/debug/my-server repros/crash-1a2b3c4d.yaml")]
    Fuzz(Box<crate::cli::fuzz::FuzzArgs>),
    /// List the scenarios: ids, titles, revisions and spec references.
    List {
        /// Scenario files or directories (default: the built-in suite).
        #[arg(value_name = "SCENARIOS")]
        scenarios: Vec<PathBuf>,
    },
    /// Manage the official MCP JSON Schemas mcpcheck validates against.
    #[command(subcommand)]
    Schemas(SchemasCommand),
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Server command line, split like a shell would (quotes group words).
    #[arg(long, value_name = "CMD", conflicts_with = "command")]
    pub server: Option<String>,
    /// Scenario files or directories to run instead of the built-in suite.
    #[arg(value_name = "SCENARIOS")]
    pub scenarios: Vec<PathBuf>,
    /// Server command after `--`, passed without any splitting.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
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
    /// Environment variable for the server (repeatable).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// Working directory for the server.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Protocol revision to request.
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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum SchemasCommand {
    /// Download the pinned official schemas into the user cache, verifying checksums.
    Fetch {
        /// Directory to write into (default: the user cache).
        #[arg(long, value_name = "DIR")]
        dest: Option<PathBuf>,
        /// Base URL to download from (default: GitHub's raw content host).
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
    },
    /// Show where each revision's schema is found, and whether it matches the pin.
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
}
