//! `mcpcheck.toml`: the settings of `mcpcheck run` kept in the repository, so CI and people
//! run the same thing. Flags given on the command line win over the file; relative paths
//! in the file are relative to the file's directory.

use std::path::{Path, PathBuf};

use clap::ArgMatches;
use clap::parser::ValueSource;
use serde::Deserialize;

use super::{RunArgs, UsageError};
use crate::report::{ReportKind, ReportSpec};

/// The file looked for in the working directory when `--config` is not given.
pub const DEFAULT_FILE: &str = "mcpcheck.toml";

/// The whole file: one section per table, each optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `[server]`: what to check.
    #[serde(default)]
    pub server: ServerSection,
    /// `[run]`: how to run it.
    #[serde(default)]
    pub run: RunSection,
    /// `[baseline]`: failures expected and not counted.
    #[serde(default)]
    pub baseline: BaselineSection,
    /// `[reports]`: report files to write.
    #[serde(default)]
    pub reports: ReportsSection,
    /// `[auth]`: what the server's authorization must be.
    #[serde(default)]
    pub auth: AuthSection,
}

/// `[auth]`: the server's authorization, as the user expects it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthSection {
    /// `--require-auth`: a request without a token must be refused.
    pub required: Option<bool>,
}

/// `[server]`: the server command or URL and its environment.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSection {
    /// The command: a list of words (no splitting) or one string split like a shell would.
    pub command: Option<CommandLine>,
    /// Environment variables for the server (`--env`).
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
    /// Working directory for the server (`--cwd`).
    pub cwd: Option<PathBuf>,
    /// A Streamable HTTP (or HTTP+SSE) endpoint instead of a command.
    pub url: Option<String>,
    /// An HTTP server mcpcheck starts for the run (`--serve`), `{port}` replaced; with
    /// `url`, on that URL's port.
    pub serve: Option<CommandLine>,
    /// HTTP headers for `url`, as `"Name: value"`.
    #[serde(default)]
    pub headers: Vec<String>,
    /// Environment variable holding a bearer token for `url`.
    #[serde(rename = "bearer-env")]
    pub bearer_env: Option<String>,
    /// PEM file of CA certificates to trust for an https:// `url` (relative to this file).
    pub cacert: Option<PathBuf>,
    /// `--expired-token-env`: the variable holding an expired token (`auth/` scenarios).
    #[serde(rename = "expired-token-env")]
    pub expired_token_env: Option<String>,
    /// `--insufficient-scope-token-env`: a token without the scope the server needs.
    #[serde(rename = "insufficient-scope-token-env")]
    pub insufficient_scope_token_env: Option<String>,
    /// `--foreign-token-env`: a token issued for another resource (audience).
    #[serde(rename = "foreign-token-env")]
    pub foreign_token_env: Option<String>,
}

/// The server command, as TOML lets one write it.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub enum CommandLine {
    /// One string, split like a shell would (`--server`).
    Line(String),
    /// The words of the command, taken as they are.
    Words(Vec<String>),
}

/// `[run]`: the settings of `mcpcheck run`, each named like its flag.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RunSection {
    /// `--protocol-version`.
    pub protocol_version: Option<String>,
    /// `--timeout`, e.g. `10s`.
    pub timeout: Option<String>,
    /// `--startup-timeout`.
    pub startup_timeout: Option<String>,
    /// `--shutdown-wait`.
    pub shutdown_wait: Option<String>,
    /// `--kill-wait`.
    pub kill_wait: Option<String>,
    /// `--jobs`.
    pub jobs: Option<usize>,
    /// `--isolate`.
    pub isolate: Option<bool>,
    /// `--call-tools`.
    pub call_tools: Option<String>,
    /// `--profile`, e.g. `official-fixture`.
    pub profile: Option<String>,
    /// `--fail-on`.
    pub fail_on: Option<String>,
    /// `--include` patterns.
    #[serde(default)]
    pub include: Vec<String>,
    /// `--exclude` patterns.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// `--scenarios` files or directories (relative to this file).
    #[serde(default)]
    pub scenarios: Vec<PathBuf>,
    /// `--builtin`: also run the built-in suite beside `scenarios`.
    pub builtin: Option<bool>,
    /// `--schema-dir` (relative to this file).
    pub schema_dir: Option<PathBuf>,
    /// `--no-schema`: run without schema validation.
    pub no_schema: Option<bool>,
    /// `--partition K/N`.
    pub partition: Option<String>,
    /// `--max-frame-size`, in bytes.
    pub max_frame_size: Option<usize>,
    /// Arguments per tool name, as `--tool-args` gives them (a file there wins per tool).
    #[serde(default)]
    pub tool_args: std::collections::BTreeMap<String, toml::Value>,
    /// `--deadline`: the whole run's budget.
    pub deadline: Option<String>,
}

/// `[baseline]`: the expected-failures file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct BaselineSection {
    /// `--expected-failures` (relative to this file).
    pub expected_failures: Option<PathBuf>,
}

/// `[reports]`: a path per report kind, like `--report KIND=PATH`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportsSection {
    /// HTML report path.
    pub html: Option<PathBuf>,
    /// JUnit XML report path.
    pub junit: Option<PathBuf>,
    /// JSON report path.
    pub json: Option<PathBuf>,
    /// Markdown report path.
    pub markdown: Option<PathBuf>,
    /// `--report sarif=PATH`.
    pub sarif: Option<PathBuf>,
    /// `--deterministic`: reports without times or other run-to-run noise.
    pub deterministic: Option<bool>,
}

impl Config {
    /// Parses the file's text; errors name `origin` (the file) and the TOML problem.
    pub fn parse(text: &str, origin: &str) -> Result<Self, UsageError> {
        toml::from_str(text).map_err(|e| UsageError(format!("{origin}: {e}")))
    }

    /// Reads and parses the file at `path`.
    pub fn load(path: &Path) -> Result<Self, UsageError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| UsageError(format!("reading {}: {e}", path.display())))?;
        Self::parse(&text, &path.display().to_string())
    }
}

/// The config file to use: `--config`, else `mcpcheck.toml` in the working directory if
/// there is one.
pub fn locate(flag: Option<&Path>) -> Option<PathBuf> {
    match flag {
        Some(p) => Some(p.to_path_buf()),
        None => {
            let p = PathBuf::from(DEFAULT_FILE);
            p.is_file().then_some(p)
        }
    }
}

/// Fills `args` from `config` wherever the command line (or the environment) gave nothing.
pub fn apply(
    config: &Config,
    base: &Path,
    args: &mut RunArgs,
    matches: &ArgMatches,
) -> Result<(), UsageError> {
    let fill = Filler { base, matches };
    fill.server(&config.server, args)?;
    fill.tool_args(&config.run, args)?;
    fill.environment(&config.server, args);
    fill.timing(&config.run, args)?;
    fill.policies(&config.run, args)?;
    fill.selection(&config.run, args)?;
    fill.reports(config, args);
    fill.auth(&config.auth, args)?;
    Ok(())
}

/// Fills one part of `RunArgs` after another from the file. It knows which flags the
/// command line (or the environment) gave, which win over the file, and the file's
/// directory, which the file's relative paths are relative to.
struct Filler<'a> {
    base: &'a Path,
    matches: &'a ArgMatches,
}

impl Filler<'_> {
    /// Whether the command line or the environment gave the argument `id`.
    fn cli_gave(&self, id: &str) -> bool {
        matches!(
            self.matches.value_source(id),
            Some(ValueSource::CommandLine | ValueSource::EnvVariable)
        )
    }

    /// A path from the file, relative to the file's directory unless absolute.
    fn path(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.base.join(p)
        }
    }

    /// `[server]`'s command, URL or `serve`, only when the command line names no server:
    /// the server comes from the command line or from the file, never half of each.
    fn server(&self, server: &ServerSection, args: &mut RunArgs) -> Result<(), UsageError> {
        if args.target.stdio.server.is_some()
            || !args.target.command.is_empty()
            || args.target.http.url.is_some()
            || args.serve.is_some()
        {
            return Ok(());
        }
        if let Some(serve) = &server.serve {
            if server.command.is_some() {
                return Err(UsageError(
                    "[server] gives both `command` and `serve`: keep one".into(),
                ));
            }
            args.serve = Some(match serve {
                CommandLine::Line(l) => l.clone(),
                CommandLine::Words(w) => {
                    crate::transport::stdio::ServerCommand::from_argv(w.clone())
                        .map_err(|_| UsageError("[server] serve is empty".into()))?
                        .display()
                }
            });
        }
        match (&server.command, &server.url) {
            (Some(_), Some(_)) => {
                return Err(UsageError(
                    "[server] gives both `command` and `url`: keep one".into(),
                ));
            }
            (Some(CommandLine::Line(l)), None) => args.target.stdio.server = Some(l.clone()),
            (Some(CommandLine::Words(w)), None) => args.target.command = w.clone(),
            (None, Some(url)) => {
                args.target.http.url = Some(url.clone());
                self.http(server, args);
            }
            (None, None) => {}
        }
        Ok(())
    }

    /// The settings that go with `[server] url`: headers, TLS trust and tokens.
    fn http(&self, server: &ServerSection, args: &mut RunArgs) {
        if !self.cli_gave("headers") {
            args.target.http.headers = server.headers.clone();
        }
        if !self.cli_gave("bearer_env") {
            args.target.http.bearer_env = server.bearer_env.clone();
        }
        if !self.cli_gave("cacert") {
            args.target.http.cacert = server.cacert.as_deref().map(|p| self.path(p));
        }
        if !self.cli_gave("expired_token_env") {
            args.auth.expired_token_env = server.expired_token_env.clone();
        }
        if !self.cli_gave("insufficient_scope_token_env") {
            args.auth.insufficient_scope_token_env = server.insufficient_scope_token_env.clone();
        }
        if !self.cli_gave("foreign_token_env") {
            args.auth.foreign_token_env = server.foreign_token_env.clone();
        }
    }

    /// `[auth] required`, which needs an HTTP server.
    fn auth(&self, a: &AuthSection, args: &mut RunArgs) -> Result<(), UsageError> {
        let Some(required) = a.required.filter(|_| !self.cli_gave("require_auth")) else {
            return Ok(());
        };
        if required && args.target.http.url.is_none() && args.serve.is_none() {
            return Err(UsageError(
                "[auth] required = true: authorization applies to an HTTP server; set [server] url or serve".into(),
            ));
        }
        args.auth.require_auth = required;
        Ok(())
    }

    /// `[run] tool-args`: each tool's arguments, which must be a table.
    fn tool_args(&self, r: &RunSection, args: &mut RunArgs) -> Result<(), UsageError> {
        for (tool, value) in &r.tool_args {
            let json = serde_json::to_value(value)
                .map_err(|e| UsageError(format!("[run] tool-args.{tool}: {e}")))?;
            if !json.is_object() {
                return Err(UsageError(format!(
                    "[run] tool-args.{tool}: the arguments must be a table, e.g. {{ message = \"hi\" }}"
                )));
            }
            args.exec.tool_args_inline.insert(tool.clone(), json);
        }
        Ok(())
    }

    /// The server's environment and working directory.
    fn environment(&self, server: &ServerSection, args: &mut RunArgs) {
        // Environment entries from the file come first; --env for the same key wins later.
        let mut env: Vec<String> = server.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
        env.append(&mut args.target.stdio.env);
        args.target.stdio.env = env;
        if !self.cli_gave("cwd")
            && let Some(c) = &server.cwd
        {
            args.target.stdio.cwd = Some(self.path(c));
        }
    }

    /// The revision asked for and every wait: they parse from text like their flags.
    fn timing(&self, r: &RunSection, args: &mut RunArgs) -> Result<(), UsageError> {
        if let Some(v) = r
            .protocol_version
            .as_ref()
            .filter(|_| !self.cli_gave("protocol_version"))
        {
            args.protocol.protocol_version = v
                .parse()
                .map(Some)
                .map_err(|e| UsageError(format!("[run] protocol-version = {v:?}: {e}")))?;
        }
        self.duration("timeout", "timeout", &r.timeout, &mut args.timeout)?;
        self.duration(
            "startup_timeout",
            "startup-timeout",
            &r.startup_timeout,
            &mut args.protocol.startup_timeout,
        )?;
        self.duration(
            "shutdown_wait",
            "shutdown-wait",
            &r.shutdown_wait,
            &mut args.limits.shutdown_wait,
        )?;
        self.duration(
            "kill_wait",
            "kill-wait",
            &r.kill_wait,
            &mut args.limits.kill_wait,
        )?;
        self.duration("deadline", "deadline", &r.deadline, &mut args.deadline)
    }

    /// One duration setting (`key` in the file, `id` its flag), e.g. `10s`.
    fn duration(
        &self,
        id: &str,
        key: &str,
        value: &Option<String>,
        slot: &mut std::time::Duration,
    ) -> Result<(), UsageError> {
        if let Some(v) = value.as_ref().filter(|_| !self.cli_gave(id)) {
            *slot = super::flags::duration(v)
                .map_err(|e| UsageError(format!("[run] {key} = {v:?}: {e}")))?;
        }
        Ok(())
    }

    /// How the run goes: parallelism, isolation, which tools it may call, the named
    /// profile and what fails it.
    fn policies(&self, r: &RunSection, args: &mut RunArgs) -> Result<(), UsageError> {
        if !self.cli_gave("jobs") && r.jobs.is_some() {
            args.exec.jobs = r.jobs;
        }
        if !self.cli_gave("isolate")
            && let Some(isolate) = r.isolate
        {
            args.exec.isolate = isolate;
        }
        if let Some(policy) = r
            .call_tools
            .as_ref()
            .filter(|_| !self.cli_gave("call_tools"))
        {
            args.exec.call_tools = <crate::outcome::ToolPolicy as clap::ValueEnum>::from_str(
                policy, true,
            )
            .map_err(|_| {
                UsageError(format!(
                    "[run] call-tools = {policy:?}: expected none, readonly or all"
                ))
            })?;
        }
        if let Some(name) = r.profile.as_ref().filter(|_| !self.cli_gave("profile")) {
            args.select.profile = Some(
                <crate::scenario::official::Profile as clap::ValueEnum>::from_str(name, true)
                    .map_err(|_| {
                        UsageError(format!(
                            "[run] profile = {name:?}: expected official-fixture"
                        ))
                    })?,
            );
        }
        if let Some(level) = r.fail_on.as_ref().filter(|_| !self.cli_gave("fail_on")) {
            args.reports.fail_on = <crate::outcome::FailOn as clap::ValueEnum>::from_str(
                level, true,
            )
            .map_err(|_| {
                UsageError(format!(
                    "[run] fail-on = {level:?}: expected failure or warning"
                ))
            })?;
        }
        Ok(())
    }

    /// Which scenarios run, against which schemas, on which share of the suite, and the
    /// largest frame read.
    fn selection(&self, r: &RunSection, args: &mut RunArgs) -> Result<(), UsageError> {
        if !self.cli_gave("include") && !r.include.is_empty() {
            args.select.include = r.include.clone();
        }
        if !self.cli_gave("exclude") && !r.exclude.is_empty() {
            args.select.exclude = r.exclude.clone();
        }
        if !self.cli_gave("scenarios") && !r.scenarios.is_empty() {
            args.scenarios = r.scenarios.iter().map(|p| self.path(p)).collect();
        }
        if !self.cli_gave("builtin") {
            args.select.builtin |= r.builtin.unwrap_or(false);
        }
        if !self.cli_gave("schema_dir")
            && let Some(d) = &r.schema_dir
        {
            args.protocol.schema_dir = Some(self.path(d));
        }
        if !self.cli_gave("no_schema") {
            args.ci.no_schema |= r.no_schema.unwrap_or(false);
        }
        if !self.cli_gave("partition")
            && let Some(p) = &r.partition
        {
            args.ci.partition = Some(
                p.parse()
                    .map_err(|e| UsageError(format!("[run] partition: {e}")))?,
            );
        }
        if !self.cli_gave("max_frame_size")
            && let Some(n) = r.max_frame_size
        {
            args.limits.max_frame_size = n;
        }
        Ok(())
    }

    /// `[baseline]` and `[reports]`: what the run's results are read against and written to.
    fn reports(&self, config: &Config, args: &mut RunArgs) {
        if !self.cli_gave("expected_failures")
            && let Some(b) = &config.baseline.expected_failures
        {
            args.reports.expected_failures = Some(self.path(b));
        }
        let rep = &config.reports;
        if !self.cli_gave("deterministic") {
            args.reports.deterministic |= rep.deterministic.unwrap_or(false);
        }
        // A report kind given with --report replaces the file's path for that kind.
        for (kind, file) in [
            (ReportKind::Html, &rep.html),
            (ReportKind::Junit, &rep.junit),
            (ReportKind::Json, &rep.json),
            (ReportKind::Markdown, &rep.markdown),
            (ReportKind::Sarif, &rep.sarif),
        ] {
            if let Some(f) = file
                && !args.reports.reports.iter().any(|s| s.kind == kind)
            {
                args.reports.reports.push(ReportSpec {
                    kind,
                    path: self.path(f),
                });
            }
        }
    }
}

/// The starter file `mcpcheck init` writes: every setting, commented.
pub const STARTER: &str = r#"# mcpcheck configuration: `mcpcheck run` reads ./mcpcheck.toml (or --config FILE).
# Flags given on the command line override these settings. Relative paths are relative
# to this file.

[server]
# The server to check, over stdio: a list of words (passed as is) or one string (split
# like a shell would).
command = ["python3", "server.py"]
# Environment variables for the server.
# env = { LOG_LEVEL = "debug" }
# Working directory for the server.
# cwd = "."
# Or, instead of `command`: a Streamable HTTP (or HTTP+SSE) endpoint, loopback only, with
# headers and a bearer token read from an environment variable (redacted from all output).
# url = "http://127.0.0.1:8808/mcp"
# Or an HTTP server mcpcheck starts for the run and stops after it (`--serve`): {port} is
# replaced by the port of `url`, or by a free loopback port (the URL is then
# http://127.0.0.1:PORT/mcp).
# serve = "node dist/server.js --port {port}"
# headers = ["X-Api-Key: abc"]
# bearer-env = "MCP_TOKEN"
# For https:// with a certificate the system does not trust: the CA (PEM) to trust.
# cacert = "certs/ca.pem"
# Tokens for the auth/ scenarios (each an environment variable; redacted): an expired one,
# one without a required scope, one issued for another resource.
# expired-token-env = "MCP_EXPIRED_TOKEN"
# insufficient-scope-token-env = "MCP_READONLY_TOKEN"
# foreign-token-env = "MCP_FOREIGN_TOKEN"

[auth]
# The server must refuse requests without a token (--require-auth): one it answers fails
# auth/token-required. Without this, a server that answers them while you send a token
# gets a warning (authorization is OPTIONAL in MCP).
# required = true

[run]
# Protocol revisions to check, each a leg of the run: one of 2024-11-05, 2025-03-26,
# 2025-06-18, 2025-11-25, the stateless 2026-07-28, a comma-separated list of them, "all",
# "auto" (ask the server with server/discover and initialize, run at the newest), or "eras"
# (the default: the newest handshake revision the server negotiates, plus 2026-07-28 when
# server/discover lists it).
# protocol-version = "2025-11-25,2026-07-28"
# How long to wait for each response, and for `initialize` (which includes start-up).
# timeout = "10s"
# startup-timeout = "30s"
# Shutdown: wait after closing stdin, then after SIGTERM.
# shutdown-wait = "5s"
# kill-wait = "2s"
# The whole run's budget: when it passes, running scenarios are cut off, the rest blocked.
# deadline = "10m"
# Scenarios run in parallel (default: three per core, at most 32: runs mostly wait).
# jobs = 4
# A fresh server for every scenario (by default scenarios that only read share one).
# isolate = true
# Which tools scenarios may call: none, readonly (annotated readOnlyHint) or all. The
# default calls only tools that say they are read-only: safe against any server. For your
# own server in CI (a test instance whose tools may run), "all" exercises every check that
# needs a tool call (progress, logging, content, errors); tools annotated destructiveHint
# are still never called.
# call-tools = "all"
# A named selection: "official-fixture" keeps the scenarios standing for the official
# conformance suite's (for an SDK's fixture server; `official:` ids in the reports).
# profile = "official-fixture"
# What fails the run: "failure" (MUST-level findings, the default) or "warning" (SHOULD too).
# fail-on = "warning"
# Arguments to call tools with; tools listed here may be called under readonly too.
# tool-args = { echo = { message = "hello" }, add = { a = 1, b = 2 } }
# Scenario selection by id glob.
# include = ["tools/*", "resources/*"]
# exclude = ["tools/call-*"]
# Your own scenario files or directories (run instead of the built-in suite unless builtin is true).
# scenarios = ["mcp-scenarios/"]
# builtin = true
# Directory with <revision>/schema.json (default: $MCPCHECK_SCHEMA_DIR, then the cache
# that `mcpcheck schemas fetch` fills).
# schema-dir = "mcp-schema"
# A missing schema is fetched (pinned, checksum-verified); offline the run stops (exit 2).
# Opt out of schema validation altogether (every report then says so):
# no-schema = false
# Run only partition K of N of the scenarios (a CI matrix leg; stable by scenario id).
# partition = "1/1"

[baseline]
# Accepted failures (scenario or rule ids, each with a reason); see `--expected-failures`.
# expected-failures = "mcpcheck-baseline.yaml"

[reports]
# Report files written by every run.
# html = "mcpcheck-report/report.html"
# junit = "mcpcheck-report/junit.xml"
# json = "mcpcheck-report/results.json"
# markdown = "mcpcheck-report/summary.md"
# SARIF 2.1.0 for GitHub code scanning (github/codeql-action/upload-sarif).
# sarif = "mcpcheck-report/results.sarif"
# Placeholders for times, durations, session ids and machine paths.
# deterministic = false
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_starter_parses_and_names_a_server() {
        let c = Config::parse(STARTER, "starter").unwrap();
        assert!(matches!(c.server.command, Some(CommandLine::Words(ref w)) if w[0] == "python3"));
    }

    #[test]
    fn uncommented_starter_settings_all_parse() {
        // Every commented setting is a real key: uncomment them all and parse.
        let text: String = STARTER
            .lines()
            .map(|l| match l.strip_prefix("# ") {
                Some(rest) if rest.contains(" = ") => rest,
                _ => l,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let c = Config::parse(&text, "uncommented").unwrap();
        assert_eq!(c.run.jobs, Some(4));
        assert_eq!(c.run.profile.as_deref(), Some("official-fixture"));
        assert_eq!(
            c.reports.junit,
            Some(PathBuf::from("mcpcheck-report/junit.xml"))
        );
        assert!(c.baseline.expected_failures.is_some());
        assert_eq!(c.server.bearer_env.as_deref(), Some("MCP_TOKEN"));
        assert_eq!(c.auth.required, Some(true));
        assert_eq!(
            c.server.expired_token_env.as_deref(),
            Some("MCP_EXPIRED_TOKEN")
        );
        assert_eq!(
            c.server.insufficient_scope_token_env.as_deref(),
            Some("MCP_READONLY_TOKEN")
        );
        assert_eq!(
            c.server.foreign_token_env.as_deref(),
            Some("MCP_FOREIGN_TOKEN")
        );
        assert_eq!(
            serde_json::to_value(&c.run.tool_args["add"]).unwrap(),
            serde_json::json!({"a": 1, "b": 2})
        );
    }

    #[test]
    fn unknown_keys_are_errors() {
        let e = Config::parse("[run]\ntimeot = \"1s\"\n", "x.toml").unwrap_err();
        assert!(e.0.contains("timeot"), "{e}");
    }
}
