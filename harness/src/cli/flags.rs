//! Flag groups shared by `run`, `fuzz` and `snapshot` (`#[command(flatten)]`), and the
//! value parsers that turn text into typed values at the CLI edge.
//!
//! Each group is written once, so the three commands spell, document and validate the
//! same flag the same way.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::protocol::Revision;

/// The server to check: a command to start (stdio), given as `--server "CMD"` or as the
/// words after `--` (each command's last positional argument, after any others), or an
/// HTTP endpoint (`--url`).
#[derive(Debug, Default, Args)]
pub struct TargetFlags {
    /// How to start a stdio server.
    #[command(flatten)]
    pub stdio: StdioFlags,
    /// Server command after `--`, passed without any splitting.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
    /// Which HTTP endpoint, and how to reach it.
    #[command(flatten)]
    pub http: HttpFlags,
}

/// The server as a command to start (stdio), beside the command itself.
#[derive(Debug, Default, Args)]
pub struct StdioFlags {
    /// Server command line, split like a shell would (quotes group words).
    #[arg(long, value_name = "CMD", conflicts_with = "command")]
    pub server: Option<String>,
    /// Environment variable for the server (repeatable).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// Working directory for the server.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
}

/// The server as an HTTP endpoint.
#[derive(Debug, Default, Args)]
pub struct HttpFlags {
    /// A Streamable HTTP (or HTTP+SSE) server's MCP endpoint (loopback only), instead of a
    /// command, e.g. `http://127.0.0.1:8808/mcp`.
    #[arg(long, value_name = "URL", conflicts_with_all = ["server", "command"])]
    pub url: Option<String>,
    /// The HTTP transport of --url: auto (detect as the spec's backwards-compatibility
    /// section says), streamable-http (2025-03-26 on) or sse (the HTTP+SSE of 2024-11-05).
    #[arg(long, value_enum, default_value_t = HttpTransportArg::Auto, requires = "http_target")]
    pub transport: HttpTransportArg,
    /// An HTTP header sent on every request to --url (repeatable), e.g. "X-Api-Key: abc".
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "http_target")]
    pub headers: Vec<String>,
    /// Environment variable holding a bearer token for --url; it is sent as
    /// `Authorization: Bearer ...` and redacted from every output.
    #[arg(long, value_name = "VAR", requires = "http_target")]
    pub bearer_env: Option<String>,
    /// A PEM file of CA certificates to trust for an https:// --url (e.g. a local server's
    /// self-signed certificate), beside the system's roots.
    #[arg(long, value_name = "FILE", requires = "http_target")]
    pub cacert: Option<PathBuf>,
    /// Whether the endpoint answered in this run: one flag for every leg's sessions and
    /// the revision probe's.
    #[arg(skip)]
    pub reached: crate::transport::http::Reached,
}

/// The protocol session: which revision, how long the server may take to start, and
/// where the schemas are.
#[derive(Debug, Args)]
pub struct ProtocolFlags {
    /// Protocol revision to request (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25 or the
    /// stateless 2026-07-28; fuzz and snapshot default to 2025-11-25). `run` also takes a
    /// comma-separated list or `all` (one leg per revision), `auto` (probe with
    /// server/discover and initialize, run at the newest revision the server shares) and
    /// `eras`, its default: a leg for the newest handshake revision the server negotiates
    /// and one for 2026-07-28 when server/discover lists it.
    #[arg(long, value_name = "REVISION")]
    pub protocol_version: Option<RevisionArg>,
    /// How long to wait for the first response, which includes the server's start-up.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = duration)]
    pub startup_timeout: Duration,
    /// Directory with `<revision>/schema.json` (else $MCPCHECK_SCHEMA_DIR, else the cache).
    #[arg(long, value_name = "DIR", env = "MCPCHECK_SCHEMA_DIR")]
    pub schema_dir: Option<PathBuf>,
    /// How fast the server answers: one record for every leg's sessions, so a loss proven
    /// in one bounds the waits of all.
    #[arg(skip)]
    pub pace: crate::session::Pace,
}

impl ProtocolFlags {
    /// The one revision of a command that runs at one (`fuzz`, `snapshot`): the flag's
    /// revision, or [`Revision::DEFAULT`] when none is given.
    pub fn single(&self, command: &str) -> Result<Revision, super::UsageError> {
        match &self.protocol_version {
            None => Ok(Revision::DEFAULT),
            Some(RevisionArg::Exact(r)) => Ok(*r),
            Some(other) => Err(super::UsageError(format!(
                "--protocol-version {other} is for `mcpcheck run`; {command} needs one revision"
            ))),
        }
    }
}

/// `--protocol-version`: which revisions `run` checks, each one a leg of the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RevisionArg {
    /// Probe the server; one leg at the newest revision it shares.
    Auto,
    /// Probe the server; a leg per era it speaks (handshake, stateless). `run`'s default.
    Eras,
    /// This revision.
    Exact(Revision),
    /// These revisions (two or more, oldest first, each once); `all` is every one.
    List(Vec<Revision>),
}

impl std::str::FromStr for RevisionArg {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("auto") {
            return Ok(RevisionArg::Auto);
        }
        if text.eq_ignore_ascii_case("eras") {
            return Ok(RevisionArg::Eras);
        }
        if text.eq_ignore_ascii_case("all") {
            return Ok(RevisionArg::List(Revision::ALL.to_vec()));
        }
        let mut list = text
            .split(',')
            .map(|part| part.trim().parse::<Revision>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("{e}; or a comma-separated list of them, all, auto or eras"))?;
        list.sort();
        list.dedup();
        match list.as_slice() {
            [one] => Ok(RevisionArg::Exact(*one)),
            _ => Ok(RevisionArg::List(list)),
        }
    }
}

impl std::fmt::Display for RevisionArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RevisionArg::Auto => f.write_str("auto"),
            RevisionArg::Eras => f.write_str("eras"),
            RevisionArg::Exact(r) => write!(f, "{r}"),
            RevisionArg::List(list) if list.as_slice() == Revision::ALL => f.write_str("all"),
            RevisionArg::List(list) => {
                let names: Vec<&str> = list.iter().map(|r| r.as_str()).collect();
                f.write_str(&names.join(","))
            }
        }
    }
}

/// Which HTTP transport `--url` speaks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum HttpTransportArg {
    /// Detect it, as the spec's backwards-compatibility section says.
    #[default]
    Auto,
    /// Streamable HTTP (2025-03-26 on).
    StreamableHttp,
    /// HTTP+SSE (2024-11-05).
    Sse,
}

/// What stdout (or `--output`) carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A summary for people.
    Human,
    /// The JSON report.
    Json,
}

/// Parses a duration like `500ms`, `10s` or `1m` (clap's value parser).
pub fn duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text.trim()).map_err(|e| format!("{e} (try 500ms, 10s, 1m)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_parse_with_auto_and_name_the_known_ones_on_error() {
        assert_eq!("AUTO".parse::<RevisionArg>(), Ok(RevisionArg::Auto));
        assert_eq!(
            "2025-06-18".parse::<RevisionArg>(),
            Ok(RevisionArg::Exact(Revision::V2025_06_18))
        );
        let e = "2025-13-01".parse::<RevisionArg>().unwrap_err();
        assert!(e.contains("2025-11-25"), "{e}");
        assert_eq!(
            "2026-07-28, 2025-11-25,2026-07-28".parse::<RevisionArg>(),
            Ok(RevisionArg::List(vec![
                Revision::V2025_11_25,
                Revision::V2026_07_28
            ]))
        );
        assert_eq!(
            "2025-06-18,2025-06-18".parse::<RevisionArg>(),
            Ok(RevisionArg::Exact(Revision::V2025_06_18))
        );
        let all = "all".parse::<RevisionArg>().unwrap();
        assert_eq!(all, RevisionArg::List(Revision::ALL.to_vec()));
        assert_eq!(all.to_string(), "all");
        assert_eq!("Eras".parse::<RevisionArg>(), Ok(RevisionArg::Eras));
        assert!("2025-11-25,nope".parse::<RevisionArg>().is_err());
    }

    #[test]
    fn durations_parse_and_bad_ones_say_how() {
        assert_eq!(duration(" 500ms"), Ok(Duration::from_millis(500)));
        assert!(duration("ten").unwrap_err().contains("try 500ms"));
    }
}
