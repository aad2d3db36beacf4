//! `mcpcheck snapshot`: its arguments, and their resolution into a capture configuration.

use std::path::PathBuf;

use clap::Args;

use super::{Format, UsageError, resolve};
use crate::scenario::exec::ToolPolicy;
use crate::session::SessionConfig;
use crate::snapshot::{Capture, PointerPattern, SnapshotOptions};
use crate::transport::stdio::{ServerCommand, StdioOptions};

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    /// Server command line, split like a shell would (quotes group words).
    #[arg(long, value_name = "CMD", conflicts_with = "command")]
    pub server: Option<String>,
    /// A Streamable HTTP server's MCP endpoint (loopback only), instead of a command.
    #[arg(long, value_name = "URL", conflicts_with_all = ["server", "command"])]
    pub url: Option<String>,
    /// An HTTP header sent on every request to --url (repeatable), e.g. "X-Api-Key: abc".
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "url")]
    pub headers: Vec<String>,
    /// Environment variable holding a bearer token for --url (redacted from all output).
    #[arg(long, value_name = "VAR", requires = "url")]
    pub bearer_env: Option<String>,
    /// A PEM file of CA certificates to trust for an https:// --url.
    #[arg(long, value_name = "FILE", requires = "url")]
    pub cacert: Option<std::path::PathBuf>,
    /// Server command after `--`, passed without any splitting.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
    /// Directory of the snapshot files (one per area: server, tools, resources, prompts).
    #[arg(long, value_name = "DIR", default_value = "snapshots")]
    pub dir: PathBuf,
    /// Accept every change: the new snapshots replace the old ones.
    #[arg(long, conflicts_with = "review")]
    pub accept: bool,
    /// Show each change and ask on stdin whether to accept it.
    #[arg(long)]
    pub review: bool,
    /// Which tools may be called to snapshot their result shapes: none, readonly (annotated
    /// readOnlyHint) or all (except destructiveHint).
    #[arg(long, value_enum, default_value_t = ToolPolicy::Readonly)]
    pub call_tools: ToolPolicy,
    /// A JSON pointer into the snapshot whose value is volatile and gets a placeholder
    /// (repeatable; `*` matches any one segment), e.g. /tools/list/*/description.
    #[arg(long, value_name = "POINTER")]
    pub volatile: Vec<String>,
    /// Call TOOL with these arguments (a JSON object) instead of synthesized ones, even if
    /// --call-tools would skip it (repeatable), e.g. --call 'write_note={"name":"a","text":"b"}'.
    #[arg(long = "call", value_name = "TOOL=JSON")]
    pub calls: Vec<String>,
    /// Keep array lengths in result shapes (default: one entry per distinct element shape).
    #[arg(long)]
    pub array_lengths: bool,
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
    /// Output on stdout: human (diffs) or json (the "snapshot" report area).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// What to snapshot: a command to start, or an HTTP endpoint.
#[derive(Debug)]
pub enum Source {
    Command(ServerCommand),
    Http(crate::transport::http::HttpOptions),
}

impl Source {
    /// For messages and reports (a URL never carries the bearer token).
    pub fn display(&self) -> String {
        match self {
            Source::Command(c) => c.display(),
            Source::Http(o) => o.url.to_string(),
        }
    }
}

/// Resolves `mcpcheck snapshot` arguments into the server and how to capture.
pub fn resolve(args: &SnapshotArgs) -> Result<(Source, Capture), UsageError> {
    let capture = capture(args)?;
    if let Some(url) = &args.url {
        let mut options = resolve::http_options(url, &args.headers, args.bearer_env.as_deref())?;
        options.timeout = capture.session.timeout;
        if let Some(file) = &args.cacert {
            options.ca_pem = Some(resolve::read_cacert(file)?);
        }
        return Ok((Source::Http(options), capture));
    }
    let server = resolve::server_command(
        args.server.as_deref(),
        &args.command,
        &args.env,
        args.cwd.as_deref(),
        "no server to snapshot: give --server \"CMD ARGS\", --url URL, or put the command after --, e.g. `mcpcheck snapshot -- python3 server.py`",
    )?;
    Ok((Source::Command(server), capture))
}

/// How to capture: policy, redactions, calls and session settings.
fn capture(args: &SnapshotArgs) -> Result<Capture, UsageError> {
    let timeout = resolve::duration("timeout", &args.timeout)?;
    if timeout.is_zero() {
        return Err(UsageError("--timeout must be greater than zero".into()));
    }
    let volatile = args
        .volatile
        .iter()
        .map(|p| PointerPattern::parse(p).map_err(|e| UsageError(format!("--volatile {e}"))))
        .collect::<Result<_, _>>()?;
    let mut calls = std::collections::BTreeMap::new();
    for c in &args.calls {
        let (tool, json) = c
            .split_once('=')
            .filter(|(t, _)| !t.is_empty())
            .ok_or_else(|| UsageError(format!("--call {c:?}: expected TOOL=JSON")))?;
        let value: serde_json::Value = serde_json::from_str(json)
            .map_err(|e| UsageError(format!("--call {tool}: the arguments are not JSON: {e}")))?;
        if !value.is_object() {
            return Err(UsageError(format!(
                "--call {tool}: the arguments must be a JSON object"
            )));
        }
        calls.insert(tool.to_owned(), value);
    }
    let capture = Capture {
        options: SnapshotOptions {
            call_tools: args.call_tools,
            array_lengths: args.array_lengths,
            volatile,
            calls,
        },
        session: SessionConfig {
            revision: resolve::revision(&args.protocol_version)?,
            timeout,
            startup_timeout: resolve::duration("startup-timeout", &args.startup_timeout)?,
            ..SessionConfig::default()
        },
        stdio: StdioOptions {
            write_timeout: timeout,
            ..StdioOptions::default()
        },
        schema_dir: args.schema_dir.clone(),
    };
    Ok(capture)
}
