//! What mcpcheck connects to: a server command to spawn (stdio) or a URL (Streamable
//! HTTP). Runners open one fresh connection per session from this.

use std::time::Instant;

use super::http::{HttpOptions, HttpTransport};
use super::stdio::{ServerCommand, StdioOptions, StdioTransport};
use super::{Transport, TransportError};

/// The server under test.
#[derive(Clone, Debug)]
pub enum Target {
    /// A process spawned per session, spoken to over stdin/stdout.
    Stdio {
        /// The command.
        server: ServerCommand,
        /// How to run it.
        options: StdioOptions,
    },
    /// A Streamable HTTP endpoint; each session is a new MCP session on it.
    Http(HttpOptions),
    /// A 2024-11-05 HTTP+SSE endpoint (the URL of its SSE stream); each session opens a
    /// new stream.
    Sse(HttpOptions),
}

/// The two transports, as scenarios name them (`transports: [stdio, http]`); the legacy
/// HTTP+SSE transport counts as `http`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TransportKind {
    /// Over stdin/stdout.
    Stdio,
    /// Over HTTP: Streamable HTTP or the older HTTP+SSE.
    Http,
}

impl Target {
    /// Which transport the target speaks.
    pub fn kind(&self) -> TransportKind {
        match self {
            Target::Stdio { .. } => TransportKind::Stdio,
            Target::Http(_) | Target::Sse(_) => TransportKind::Http,
        }
    }

    /// Opens a fresh connection: a new process, or a new HTTP client (whose first
    /// `initialize` starts a new MCP session).
    pub fn open(&self, started: Instant) -> Result<Box<dyn Transport>, TransportError> {
        match self {
            Target::Stdio { server, options } => Ok(Box::new(StdioTransport::spawn(
                server,
                options.clone(),
                started,
            )?)),
            Target::Http(options) => Ok(Box::new(
                HttpTransport::new(options.clone())
                    .map_err(|e| TransportError::Http(e.to_string()))?,
            )),
            Target::Sse(options) => Ok(Box::new(super::legacy_sse::SseTransport::connect(
                options.clone(),
            )?)),
        }
    }

    /// The command line or URL, for reports.
    pub fn describe(&self) -> String {
        match self {
            Target::Stdio { server, .. } => server.display(),
            Target::Http(o) => o.url.to_string(),
            Target::Sse(o) => format!("{} (HTTP+SSE)", o.url),
        }
    }

    /// Values that must never appear in output (bearer tokens).
    pub fn secrets(&self) -> &[String] {
        match self {
            Target::Stdio { .. } => &[],
            Target::Http(o) | Target::Sse(o) => &o.secrets,
        }
    }
}
