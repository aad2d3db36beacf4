//! `mcpcheck snapshot`: its arguments, and their resolution into a capture configuration.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{ArgGroup, Args};

use super::flags::{Format, ProtocolFlags, TargetFlags, duration};
use super::{EXIT_FINDINGS, UsageError, resolve};
use crate::outcome::{SnapshotStatus, ToolPolicy};
use crate::session::SessionConfig;
use crate::snapshot::{Capture, PointerPattern, SnapshotOptions};
use crate::transport::stdio::{ServerCommand, StdioOptions};

/// The flags of `mcpcheck snapshot`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("http_target").args(["url"])))]
pub struct SnapshotArgs {
    /// The server to snapshot: a command (stdio) or an endpoint (`--url`).
    #[command(flatten)]
    pub target: TargetFlags,
    /// The protocol revision and timeouts.
    #[command(flatten)]
    pub protocol: ProtocolFlags,
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
    /// How long to wait for each response (e.g. 500ms, 10s, 1m).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = duration)]
    pub timeout: Duration,
    /// Output on stdout: human (diffs) or json (the "snapshot" report area).
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

/// What to snapshot: a command to start, or an HTTP endpoint.
#[derive(Debug)]
pub enum Source {
    /// A server command started over stdio.
    Command(ServerCommand),
    /// A Streamable HTTP endpoint.
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
    if let Some(url) = &args.target.http.url {
        let mut options = resolve::http_options(
            url,
            &args.target.http.headers,
            args.target.http.bearer_env.as_deref(),
        )?;
        options.timeout = capture.session.timeout;
        if let Some(file) = &args.target.http.cacert {
            options.ca_pem = Some(resolve::read_cacert(file)?);
        }
        return Ok((Source::Http(options), capture));
    }
    let server = resolve::server_command(
        args.target.stdio.server.as_deref(),
        &args.target.command,
        &args.target.stdio.env,
        args.target.stdio.cwd.as_deref(),
        "no server to snapshot: give --server \"CMD ARGS\", --url URL, or put the command after --, e.g. `mcpcheck snapshot -- python3 server.py`",
    )?;
    Ok((Source::Command(server), capture))
}

/// How to capture: policy, redactions, calls and session settings.
fn capture(args: &SnapshotArgs) -> Result<Capture, UsageError> {
    let timeout = args.timeout;
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
    // The tools given arguments (`--call`) are the user's opt-in, for the session's gate too.
    let grant = crate::outcome::CallGrant {
        opted_in: std::sync::Arc::new(calls.keys().cloned().collect()),
        ..crate::outcome::CallGrant::of(args.call_tools)
    };
    let capture = Capture {
        options: SnapshotOptions {
            call_tools: args.call_tools,
            array_lengths: args.array_lengths,
            volatile,
            calls,
        },
        session: SessionConfig {
            revision: args.protocol.single("snapshot")?,
            timeout,
            startup_timeout: args.protocol.startup_timeout,
            calls: grant,
            ..SessionConfig::default()
        },
        stdio: StdioOptions {
            write_timeout: timeout,
            ..StdioOptions::default()
        },
        schema_dir: args.protocol.schema_dir.clone(),
    };
    Ok(capture)
}

/// `mcpcheck snapshot`: capture, compare with the accepted files, report; exit 1 on change.
pub async fn execute(args: SnapshotArgs) -> anyhow::Result<ExitCode> {
    if args.target.http.transport == super::flags::HttpTransportArg::Sse {
        return Err(UsageError(
            "--transport sse: snapshots speak Streamable HTTP; leave --transport out".into(),
        )
        .into());
    }
    let (server, capture) = resolve(&args)?;
    let started = std::time::Instant::now();
    let snap = match &server {
        Source::Command(command) => capture.command(command).await,
        Source::Http(options) => {
            let transport = crate::transport::http::HttpTransport::new(options.clone())
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            capture.transport(Box::new(transport)).await
        }
    }
    .with_context(|| format!("snapshotting `{}`", server.display()))?;
    let mut result = crate::snapshot::compare::compare(&snap, &args.dir, args.accept)?;
    if args.review {
        for area in result
            .areas
            .iter_mut()
            .filter(|a| a.status == SnapshotStatus::Changed)
        {
            super::out(area.diff.as_deref().unwrap_or_default());
            if ask(&format!("accept the change to {}? [y/N] ", area.area))? {
                crate::snapshot::compare::accept_pending(&args.dir, &area.area)?;
                area.status = SnapshotStatus::Accepted;
            }
        }
    }
    let took_ms = started.elapsed().as_millis() as u64;
    match args.format {
        Format::Json => {
            let report = serde_json::json!({
                "format_version": crate::outcome::REPORT_FORMAT_VERSION,
                "mcpcheck_version": env!("CARGO_PKG_VERSION"),
                "server": server.display(),
                "duration_ms": took_ms,
                "snapshot": result,
            });
            super::out(&format!("{}\n", serde_json::to_string_pretty(&report)?));
        }
        Format::Human => {
            // --review already showed each diff as it asked.
            super::out(&crate::report::human::snapshot(&result, !args.review, ""));
            if result.has_changes() {
                super::out(
                    "snapshot changed: accept with `mcpcheck snapshot --accept` (or --review, or `cargo insta review`)\n",
                );
            }
        }
    }
    Ok(if result.has_changes() {
        ExitCode::from(EXIT_FINDINGS)
    } else {
        ExitCode::SUCCESS
    })
}

/// Asks a yes/no question on the terminal; anything but y/yes (or end of input) is no.
fn ask(question: &str) -> anyhow::Result<bool> {
    super::out(question);
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    Ok(matches!(
        line.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}
