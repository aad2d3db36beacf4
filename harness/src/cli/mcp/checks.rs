//! `run_checks`: its arguments, checked, and the `mcpcheck run` command line they become.
//!
//! Everything a caller sends is peer input: it is read into a closed struct (unknown
//! fields are refused), every value is checked here, and a bad one is an [`InputError`]
//! with a sentence the caller can act on, which the server returns as a tool error
//! (`isError`), never a protocol error or a panic.

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::cli::flags::RevisionArg;
use crate::outcome::ToolPolicy;

/// The run's budget when the caller gives none.
pub const DEFAULT_TIMEOUT_SECS: u64 = 300;
/// The longest budget a caller may ask for.
pub const MAX_TIMEOUT_SECS: u64 = 1800;
/// Set in the environment of every run `run_checks` starts. A `mcpcheck mcp` that finds it
/// was started (as the server under test) by another one's `run_checks`: it serves its
/// tools, but its own `run_checks` refuses, so checks cannot nest without end.
pub const NESTED_ENV: &str = "MCPCHECK_MCP_NESTED";

/// A caller's mistake, in words for the caller.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

/// The arguments as the caller sent them.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    command: Option<Vec<String>>,
    url: Option<String>,
    protocol_version: Option<String>,
    #[serde(default)]
    include: Vec<String>,
    call_tools: Option<String>,
    timeout_seconds: Option<u64>,
    #[serde(default)]
    transcripts: bool,
}

/// The server to check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A command spoken to over stdio.
    Command(Vec<String>),
    /// A loopback Streamable HTTP endpoint.
    Url(String),
}

/// A checked `run_checks` request.
#[derive(Clone, Debug)]
pub struct CheckRequest {
    /// The server.
    pub target: Target,
    /// `--protocol-version`, as given (checked to parse).
    pub protocol_version: Option<String>,
    /// `--include` globs.
    pub include: Vec<String>,
    /// `--call-tools`.
    pub call_tools: ToolPolicy,
    /// The run's budget (`--deadline`).
    pub timeout: Duration,
    /// Keep the wire transcripts in the returned report.
    pub transcripts: bool,
}

impl CheckRequest {
    /// Reads and checks the tool's arguments (`None`: none were sent).
    pub fn parse(arguments: Option<&Value>) -> Result<Self, InputError> {
        let empty = Value::Object(Default::default());
        let raw: Raw = serde_json::from_value(arguments.unwrap_or(&empty).clone())
            .map_err(|e| InputError(format!("invalid arguments: {e}")))?;
        let target = match (raw.command, raw.url) {
            (Some(_), Some(_)) => {
                return Err(InputError(
                    "give either `command` or `url`, not both".into(),
                ));
            }
            (None, None) => {
                return Err(InputError(
                    "give the server to check: `command` (its argv, for stdio) or `url` (a \
                     loopback Streamable HTTP endpoint)"
                        .into(),
                ));
            }
            (Some(argv), None) => Target::Command(command(argv)?),
            (None, Some(url)) => Target::Url(loopback_url(&url)?),
        };
        if let Some(v) = &raw.protocol_version {
            v.parse::<RevisionArg>()
                .map_err(|e| InputError(format!("protocol_version {v:?}: {e}")))?;
        }
        for glob in &raw.include {
            globset::Glob::new(glob)
                .map_err(|e| InputError(format!("include {glob:?} is not a glob: {e}")))?;
        }
        let call_tools = match raw.call_tools.as_deref() {
            None | Some("readonly") => ToolPolicy::Readonly,
            Some("none") => ToolPolicy::None,
            Some("all") => ToolPolicy::All,
            Some(other) => {
                return Err(InputError(format!(
                    "call_tools {other:?}: use readonly (tools annotated readOnlyHint), none, or \
                     all (every tool except destructiveHint ones)"
                )));
            }
        };
        let secs = raw.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECS);
        if !(1..=MAX_TIMEOUT_SECS).contains(&secs) {
            return Err(InputError(format!(
                "timeout_seconds {secs}: give 1 to {MAX_TIMEOUT_SECS}"
            )));
        }
        Ok(CheckRequest {
            target,
            protocol_version: raw.protocol_version,
            include: raw.include,
            call_tools,
            timeout: Duration::from_secs(secs),
            transcripts: raw.transcripts,
        })
    }

    /// The arguments of the `mcpcheck run` that carries out this request, writing its JSON
    /// report to `report`. The run's own `--deadline` is the budget, so it ends with a
    /// report of what it saw; the caller kills it only if it overruns that.
    pub fn run_args(&self, report: &Path, schema_dir: Option<&Path>) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["run".into()];
        let mut flag = |name: &str, value: &str| args.push(format!("--{name}={value}").into());
        flag("deadline", &format!("{}s", self.timeout.as_secs()));
        flag("call-tools", policy_name(self.call_tools));
        if let Some(v) = &self.protocol_version {
            flag("protocol-version", v);
        }
        for glob in &self.include {
            flag("include", glob);
        }
        if let Some(url) = match &self.target {
            Target::Url(url) => Some(url),
            Target::Command(_) => None,
        } {
            flag("url", url);
        }
        let mut report_arg = OsString::from("--report=json=");
        report_arg.push(report);
        args.push(report_arg);
        if let Some(dir) = schema_dir {
            let mut a = OsString::from("--schema-dir=");
            a.push(dir);
            args.push(a);
        }
        if let Target::Command(argv) = &self.target {
            args.push("--".into());
            args.extend(argv.iter().map(OsString::from));
        }
        args
    }
}

fn policy_name(p: ToolPolicy) -> &'static str {
    match p {
        ToolPolicy::None => "none",
        ToolPolicy::Readonly => "readonly",
        ToolPolicy::All => "all",
    }
}

/// A command line: a program, no empty or NUL-carrying words (no process can take them).
fn command(argv: Vec<String>) -> Result<Vec<String>, InputError> {
    match argv.first() {
        None => Err(InputError(
            "`command` is empty: give the program and its arguments".into(),
        )),
        Some(p) if p.trim().is_empty() => Err(InputError(
            "`command` starts with an empty program name".into(),
        )),
        _ if argv.iter().any(|a| a.contains('\0')) => Err(InputError(
            "`command` has an argument with a NUL byte, which no process can be given".into(),
        )),
        _ => Ok(argv),
    }
}

/// An `http(s)` URL whose host is loopback (`127.0.0.1`, `::1`, `localhost`): a tool an
/// agent can call must not become a way to send requests to other hosts.
fn loopback_url(url: &str) -> Result<String, InputError> {
    let parsed = reqwest::Url::parse(url.trim())
        .map_err(|e| InputError(format!("url {url:?} is not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(InputError(format!(
            "url {url:?}: only http and https endpoints can be checked"
        )));
    }
    // The parser has normalized the host: domains lower-cased, IPv4 in dotted form,
    // IPv6 compressed and in brackets.
    let loopback = matches!(parsed.host_str(), Some("localhost" | "127.0.0.1" | "[::1]"));
    if !loopback {
        return Err(InputError(format!(
            "url {url:?}: only loopback hosts (127.0.0.1, ::1, localhost) are checked from \
             here; run `mcpcheck run --url` yourself for any other"
        )));
    }
    Ok(parsed.to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(v: Value) -> Result<CheckRequest, String> {
        CheckRequest::parse(Some(&v)).map_err(|e| e.0)
    }

    #[test]
    fn a_command_becomes_a_run_with_the_defaults() {
        let r = parse(json!({"command": ["srv", "--flag"]})).unwrap();
        assert_eq!(r.call_tools, ToolPolicy::Readonly);
        let args: Vec<String> = r
            .run_args(Path::new("/tmp/r.json"), None)
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        assert_eq!(
            args,
            [
                "run",
                "--deadline=300s",
                "--call-tools=readonly",
                "--report=json=/tmp/r.json",
                "--",
                "srv",
                "--flag"
            ]
        );
    }

    #[test]
    fn options_become_flags_that_cannot_be_taken_for_others() {
        let r = parse(json!({
            "url": "http://127.0.0.1:9/mcp", "protocol_version": "2025-06-18",
            "include": ["--tools/*"], "call_tools": "none", "timeout_seconds": 5
        }))
        .unwrap();
        let args = r.run_args(Path::new("r.json"), Some(Path::new("/s")));
        assert!(args.contains(&"--include=--tools/*".into()));
        assert!(args.contains(&"--url=http://127.0.0.1:9/mcp".into()));
        assert!(args.contains(&"--schema-dir=/s".into()));
        assert!(args.contains(&"--deadline=5s".into()));
        assert!(!args.contains(&"--".into()));
    }

    #[test]
    fn bad_inputs_are_errors_that_say_what_to_do() {
        for (input, says) in [
            (json!({}), "give the server"),
            (json!({"command": []}), "empty"),
            (json!({"command": [""]}), "empty program"),
            (json!({"command": "srv"}), "invalid arguments"),
            (
                json!({"command": ["a"], "url": "http://localhost/"}),
                "not both",
            ),
            (json!({"url": "http://example.com/mcp"}), "loopback"),
            (json!({"url": "http://127.0.0.2/mcp"}), "loopback"),
            (json!({"url": "file:///etc/passwd"}), "http"),
            (json!({"url": "not a url"}), "not a URL"),
            (json!({"command": ["a"], "timeout_seconds": 0}), "1 to"),
            (
                json!({"command": ["a"], "timeout_seconds": -3}),
                "invalid arguments",
            ),
            (json!({"command": ["a"], "call_tools": "some"}), "readonly"),
            (
                json!({"command": ["a"], "protocol_version": "1999"}),
                "protocol_version",
            ),
            (json!({"command": ["a"], "include": ["[x"]}), "glob"),
            (json!({"command": ["a"], "surprise": 1}), "unknown field"),
            (json!([1, 2]), "invalid arguments"),
        ] {
            let err = parse(input.clone()).expect_err(&input.to_string());
            assert!(err.contains(says), "{input}: {err}");
        }
    }

    #[test]
    fn every_loopback_spelling_is_accepted() {
        for url in [
            "http://127.0.0.1:8808/mcp",
            "http://[::1]:8808/mcp",
            "https://LOCALHOST/mcp",
        ] {
            parse(json!({ "url": url })).expect(url);
        }
    }
}
