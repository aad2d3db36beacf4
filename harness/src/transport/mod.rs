//! Transports carry frames between mcpcheck and a server.
//!
//! Every transport turns what the server does into the same stream of [`Inbound`] items,
//! so the session above never needs to know whether it talks to a child process or an
//! HTTP endpoint.
//!
//! [`stdio`] spawns the server ([`framing`] cuts its stdout into frames, [`stderr`] keeps
//! its stderr, [`reaper`] makes sure it dies with mcpcheck); [`stream`] speaks the same
//! lines over an in-process stream pair; [`http`] is Streamable HTTP and
//! [`legacy_sse`] the HTTP+SSE transport of 2024-11-05, both reading SSE through [`sse_reader`]
//! (guarded by [`sse_body`]); [`target`] says which one to open. Transports judge nothing:
//! what may break a rule is reported as data for the session.

pub mod background;
pub mod child_path;
pub mod framing;
pub mod http;
pub mod huge_numbers;
pub mod legacy_sse;
mod lines;
pub mod listen;
pub mod reaper;
pub mod relay;
pub mod sse_body;
pub mod sse_reader;
pub mod stderr;
pub mod stdio;
pub mod stream;
pub mod target;

use std::future::Future;

/// A line that took a while from its first byte to its newline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlowLine {
    /// From its first byte to its newline.
    pub took: std::time::Duration,
    /// Its length in bytes.
    pub bytes: u64,
}
use std::pin::Pin;
use std::time::Duration;

pub use framing::{Decoded, FramingIssue, NdjsonDecoder, RawFrame};
pub use stderr::{StderrExcerpt, StderrLog};

/// Makes ring the process-wide TLS crypto provider (reqwest is built without a default,
/// to keep aws-lc's C build out). Idempotent.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A boxed future, so transports can be used as trait objects.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Something a transport received, in arrival order.
#[derive(Clone, Debug, PartialEq)]
pub enum Inbound {
    /// A complete JSON value from the server.
    Frame(RawFrame),
    /// A framing problem (stdio): an over-long, non-UTF-8 or non-JSON line, and so on.
    Framing(FramingIssue),
    /// The server will send nothing more (stdout closed, or the connection ended).
    Closed,
    /// The server process ended.
    Exited(ExitInfo),
    /// An HTTP exchange or SSE event, for the transcript (HTTP transports only).
    Http(http::HttpRecord),
    /// The exchange that carried a request ended without its response, which can then
    /// never come (HTTP: a server answers a request on its own POST).
    Unanswered {
        /// The request's id.
        id: serde_json::Value,
        /// What its POST got instead, completing "the POST ..."
        why: String,
    },
}

/// How a server process ended.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitInfo {
    /// Exited with this code.
    Code(i32),
    /// Killed by a signal.
    Signal {
        /// The signal number.
        signal: i32,
        /// The signal's name, e.g. `SIGKILL`.
        name: String,
    },
}

impl std::fmt::Display for ExitInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExitInfo::Code(c) => write!(f, "exit code {c}"),
            ExitInfo::Signal { name, .. } => write!(f, "killed by {name}"),
        }
    }
}

/// What a transport knows about whether the server can still send anything for the
/// messages so far: the evidence that ends a wait for "nothing more comes" early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quiet {
    /// Every exchange ended and no stream is open on which the server could send: nothing
    /// more can arrive until mcpcheck sends again.
    Closed,
    /// Every request's exchange ended, but a stream the server may send on at any time is
    /// open (the standalone GET stream, a listen): only a timer can tell.
    Listening,
    /// Exchanges are still running, or the transport cannot tell (stdio, whose messages a
    /// barrier request orders instead).
    Unknown,
}

/// How a transport was shut down, for the report.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ShutdownReport {
    /// The last step of the shutdown sequence that was needed.
    pub stage: ShutdownStage,
    /// How the process ended, if it did.
    pub exit: Option<ExitInfo>,
    /// How long the shutdown took.
    pub took: Duration,
}

/// The steps of the stdio shutdown sequence (spec: `basic/lifecycle#shutdown`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ShutdownStage {
    /// The server had already exited.
    AlreadyExited,
    /// It exited after its input was closed: the clean path.
    StdinClosed,
    /// It needed SIGTERM.
    Terminated,
    /// It needed SIGKILL.
    Killed,
    /// A remote connection was simply dropped.
    Disconnected,
}

/// How a write to a server that does not read its input was given up: the bytes it took
/// of the write, and how long it was waited for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteStall {
    /// Whether the server stopped taking bytes, or took them too slowly to finish.
    pub how: Stalled,
    /// Bytes the server took before the write was given up.
    pub taken: usize,
    /// Bytes the write had to deliver.
    pub total: usize,
    /// How long it waited: for one more byte ([`Stalled::Idle`]), or for the whole write.
    pub waited: Duration,
}

/// How a write stalled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stalled {
    /// The server took no byte at all for the wait.
    Idle,
    /// The server kept taking bytes, but too few to finish the write in time.
    Slow,
}

impl std::fmt::Display for WriteStall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let waited = humantime::format_duration(self.waited);
        let (taken, total) = (self.taken, self.total);
        match self.how {
            Stalled::Idle => write!(
                f,
                "the server took no input for {waited} (after {taken} of {total} bytes)"
            ),
            Stalled::Slow => write!(
                f,
                "the server took only {taken} of {total} bytes in {waited}"
            ),
        }
    }
}

/// Errors a transport can hit. Each is a harness or setup problem unless the session
/// decides it is the server's fault (a closed pipe after a crash, say).
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The server command could not be started.
    #[error("could not start `{command}`: {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// The I/O error from spawning it.
        #[source]
        source: std::io::Error,
    },
    /// The server command is empty.
    #[error("empty server command")]
    EmptyCommand,
    /// Writing failed: the server closed its stdin.
    #[error("the server closed its input: {0}")]
    InputClosed(std::io::Error),
    /// A write made no progress, or too little: the server does not read its input.
    #[error("{0}: it is not reading its input")]
    WriteTimeout(WriteStall),
    /// An HTTP problem, in words (secrets redacted).
    #[error("HTTP: {0}")]
    Http(String),
    /// An HTTP request got no response headers in time: the server took the connection but
    /// is not answering (wedged, not gone).
    #[error("HTTP: no response headers within {0:?}")]
    NoResponseHeaders(Duration),
    /// The server refused a request with an HTTP error status and sent no JSON-RPC
    /// response: the spec's answer to input it cannot accept (basic/transports).
    #[error("the POST was answered with HTTP {status} and no JSON-RPC response")]
    Rejected {
        /// The HTTP status.
        status: u16,
    },
}

impl TransportError {
    /// Whether the server took the request but did not answer in time (match on this, never
    /// on the message).
    pub fn is_response_timeout(&self) -> bool {
        matches!(self, TransportError::NoResponseHeaders(_))
    }
}

/// A connection to one server.
pub trait Transport: Send {
    /// Sends one serialized message (without framing; the transport adds it).
    fn send(&mut self, message: Vec<u8>) -> BoxFuture<'_, Result<(), TransportError>>;
    /// Sends bytes exactly as given, with no framing added (framing tests).
    fn send_raw(&mut self, bytes: Vec<u8>) -> BoxFuture<'_, Result<(), TransportError>>;
    /// The next inbound item; `None` once everything has been delivered.
    fn recv(&mut self) -> BoxFuture<'_, Option<Inbound>>;
    /// Closes the server's input (stdin) without waiting, where that means something.
    fn close_input(&mut self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
    /// Ends the connection the way the transport's spec says.
    fn shutdown(&mut self) -> BoxFuture<'_, ShutdownReport>;
    /// What the server wrote to stderr, if it is a process.
    fn stderr(&self) -> Option<&StderrLog>;
    /// A short description for reports: the command line or URL.
    fn describe(&self) -> String;
    /// Output the server has started but not finished: an unterminated line's length and
    /// first bytes. Evidence when a response never arrives.
    fn partial_line(&self) -> Option<(u64, Vec<u8>)> {
        None
    }
    /// The slowest line so far, if one took long to arrive: how long from its first byte
    /// to its newline, and its length. A server that trickles its output (a byte at a
    /// time) makes every exchange that slow.
    fn slowest_line(&self) -> Option<SlowLine> {
        None
    }
    /// Whether the server can still send anything for the messages so far, as far as the
    /// transport's streams tell.
    fn quiet(&mut self) -> Quiet {
        Quiet::Unknown
    }
    /// The HTTP connection, for raw exchanges, if this is an HTTP transport.
    fn http(&self) -> Option<http::HttpHandle> {
        None
    }
    /// The server's process id, if mcpcheck started it (for sampling its memory).
    fn pid(&self) -> Option<u32> {
        None
    }
}

/// Resident memory of a process in KiB, from `/proc/PID/status` (Linux only; `None`
/// elsewhere or once the process is gone).
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
