//! Raw arguments of `run` and `schemas`, exactly as clap parses them. Resolution into a
//! run configuration lives in `cli::resolve`; flags shared with other commands in
//! `cli::flags`.

use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgGroup, Args, Subcommand};

use super::flags::{Format, ProtocolFlags, TargetFlags, duration};
use crate::outcome::{FailOn, ToolPolicy};

/// The flags of `mcpcheck run`.
#[derive(Debug, Args)]
// The HTTP-only flags (`--bearer-env`, `--header`, ...) need an endpoint: `--url`, or the
// one `--serve` starts.
#[command(group(ArgGroup::new("http_target").args(["url", "serve"]).multiple(true)))]
pub struct RunArgs {
    /// Settings file (default: ./mcpcheck.toml when present); flags override its settings.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Scenario files or directories to run instead of the built-in suite.
    #[arg(value_name = "SCENARIOS")]
    pub scenarios: Vec<PathBuf>,
    /// The server: a command (stdio) or an endpoint (`--url`).
    #[command(flatten)]
    pub target: TargetFlags,
    /// Start this HTTP server for the run and stop its process group at the end: `{port}`
    /// becomes the port of --url, or a free loopback port (URL `http://127.0.0.1:PORT/mcp`).
    /// The run starts once the endpoint answers an HTTP request (--startup-timeout).
    #[arg(long, value_name = "CMD", conflicts_with_all = ["server", "command"])]
    pub serve: Option<String>,
    /// The protocol revision and timeouts.
    #[command(flatten)]
    pub protocol: ProtocolFlags,
    /// Which scenarios run: the built-in suite, files, globs, a profile.
    #[command(flatten)]
    pub select: SelectArgs,
    /// How the scenarios run: workers, shared servers, the tools they may call.
    #[command(flatten)]
    pub exec: ExecArgs,
    /// Also compare the server's snapshot with the one accepted in DIR (see `mcpcheck
    /// snapshot`); a change fails the run and is written beside it as `.snap.new`.
    #[arg(long, value_name = "DIR")]
    pub snapshot_dir: Option<PathBuf>,
    /// How long to wait for each response (e.g. 500ms, 10s, 1m).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = duration)]
    pub timeout: Duration,
    /// The authorization checks: extra tokens to try, and whether a token is required.
    #[command(flatten)]
    pub auth: AuthArgs,
    /// Limits on the server: the longest line, and the shutdown waits.
    #[command(flatten)]
    pub limits: LimitArgs,
    /// The output format, report files (`--report KIND=PATH`), the baseline.
    #[command(flatten)]
    pub reports: ReportArgs,
    /// Splitting the suite across a CI matrix, and opting out of schema checks.
    #[command(flatten)]
    pub ci: CiArgs,
    /// The whole run's budget (e.g. 90s, 10m): when it passes, running scenarios are cut
    /// off and the rest are blocked, and the run ends with what is known (exit 1).
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = duration)]
    pub deadline: Duration,
}

/// Which scenarios run.
#[derive(Debug, Default, Args)]
pub struct SelectArgs {
    /// Also run the built-in suite when scenario files are given.
    #[arg(long)]
    pub builtin: bool,
    /// Run only scenarios whose id matches this glob (repeatable), e.g. `tools/*`.
    #[arg(long, value_name = "GLOB")]
    pub include: Vec<String>,
    /// Skip scenarios whose id matches this glob (repeatable).
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Run a named selection of scenarios: `official-fixture` keeps those standing for the
    /// official suite's scenarios (their `official` ids), for an SDK's fixture server.
    #[arg(long, value_enum, value_name = "PROFILE")]
    pub profile: Option<crate::scenario::official::Profile>,
}

/// How the scenarios run: workers, shared servers, the tools they may call.
#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Scenarios run in parallel (default: three per core, at most 32: runs mostly wait).
    #[arg(long, short, value_name = "N")]
    pub jobs: Option<usize>,
    /// Start a fresh server (over HTTP, a fresh session) for every scenario. By default
    /// scenarios that only read (the default handshake, then list/get/read/ping requests)
    /// share a server or session per worker; a shared one that misbehaves is replaced. Implied by
    /// `--deterministic` (which scenario opens a shared session depends on timing).
    #[arg(long)]
    pub isolate: bool,
    /// Which tools scenarios may call: none, readonly (annotated readOnlyHint) or all
    /// (except destructiveHint).
    #[arg(long, value_enum, default_value_t = ToolPolicy::Readonly)]
    pub call_tools: ToolPolicy,
    /// Arguments to call tools with: a YAML or JSON file mapping tool names to argument
    /// objects. Listed tools may be called under `--call-tools readonly` too, and
    /// `${tool|sample_arguments}` in scenarios gives these instead of synthesized ones.
    #[arg(long, value_name = "FILE")]
    pub tool_args: Option<PathBuf>,
    /// Tool arguments from the config file (`[run] tool-args`); `--tool-args` wins per tool.
    #[arg(skip)]
    pub tool_args_inline: std::collections::BTreeMap<String, serde_json::Value>,
}

/// The authorization checks (HTTP): extra tokens to try, and whether a token is required.
#[derive(Debug, Default, Args)]
pub struct AuthArgs {
    /// Environment variable holding an expired token for --url: the `auth/` scenarios
    /// check it is answered with 401 (redacted from every output).
    #[arg(long, value_name = "VAR", requires = "http_target")]
    pub expired_token_env: Option<String>,
    /// Environment variable holding a token without a scope the server requires: checked
    /// to get 403 `insufficient_scope` (redacted from every output).
    #[arg(long, value_name = "VAR", requires = "http_target")]
    pub insufficient_scope_token_env: Option<String>,
    /// Environment variable holding a token issued for another resource (audience):
    /// checked to be rejected with 401 (redacted from every output).
    #[arg(long, value_name = "VAR", requires = "http_target")]
    pub foreign_token_env: Option<String>,
    /// The server must refuse requests without a token: one it answers makes
    /// `auth/token-required` a failure, not a warning (authorization is OPTIONAL in MCP,
    /// so only you can say this server needs it).
    #[arg(long, requires = "http_target")]
    pub require_auth: bool,
}

/// Limits on the server: the longest line, and the shutdown waits.
#[derive(Debug, Args)]
pub struct LimitArgs {
    /// Longest line accepted from the server, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = crate::transport::framing::DEFAULT_MAX_FRAME)]
    pub max_frame_size: usize,
    /// Shutdown: how long to wait for exit after closing the server's stdin.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = duration)]
    pub shutdown_wait: Duration,
    /// Shutdown: how long to wait after SIGTERM before SIGKILL.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = duration)]
    pub kill_wait: Duration,
}

/// What is written where: stdout's format, report files, the baseline, reproducible
/// output.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Output format on stdout (or in --output).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Write the report to this file instead of stdout (the human summary still prints).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Also write a report: KIND=PATH with KIND html, junit, json, markdown, sarif or events
    /// (repeatable; parent directories are created).
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
    /// What fails the run (exit 1): `failure` (MUST-level findings, the default) or
    /// `warning` (SHOULD-level ones too).
    #[arg(long, value_enum, value_name = "SEVERITY", default_value_t = FailOn::Failure)]
    pub fail_on: FailOn,
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

/// The subcommands of `mcpcheck schemas`.
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
        /// Directory to look in first (`--schema-dir` or `$MCPCHECK_SCHEMA_DIR`).
        #[arg(long, value_name = "DIR", env = "MCPCHECK_SCHEMA_DIR")]
        schema_dir: Option<PathBuf>,
    },
}
