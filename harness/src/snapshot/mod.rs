//! Snapshots of a server's surface and response shapes: conformance says "valid",
//! snapshots say "unchanged".
//!
//! A capture runs the handshake, lists tools, resources, templates and prompts (following
//! pagination), makes the calls the tool policy allows (`tools/call` with synthesized
//! arguments, `resources/read` of each listed resource, `prompts/get` with the required
//! arguments), reduces each result to its shape (`shape`), and redacts volatile values
//! (`canon`). The document has four areas, `server`, `tools`, `resources` and `prompts`,
//! each written to its own snapshot file in insta's format (`file`) and compared as text
//! (`compare`).
//!
//! For a Rust server's own tests (see `harness/tests/it/snapshot_reference.rs`):
//!
//! ```no_run
//! use mcpcheck::snapshot::Capture;
//!
//! let snap = Capture::default()
//!     .command_blocking(&["./target/debug/my-server"])
//!     .expect("snapshot");
//! // insta::assert_yaml_snapshot!("tools", snap.area("tools"));
//! # let _ = snap;
//! ```

pub mod args;
pub mod canon;
pub mod capture;
pub mod compare;
pub mod file;
pub mod shape;
pub mod yaml;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use crate::outcome::ToolPolicy;
use crate::schema::{SchemaStore, SearchPath};
use crate::session::{Session, SessionConfig};
use crate::transport::Transport;
use crate::transport::stdio::{ServerCommand, StdioOptions, StdioTransport};
pub use canon::{PointerPattern, Redacted, Redactions};
pub use compare::compare;

/// Why a snapshot could not be taken or stored.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The server could not be started (the transport's error says why).
    #[error(transparent)]
    Start(#[from] crate::transport::TransportError),
    /// The session failed (a transport error or no answer).
    #[error("{0}")]
    Session(String),
    /// `initialize` was answered with an error.
    #[error("`initialize` was answered with an error: {0}")]
    Initialize(String),
    /// Reading or writing a snapshot file failed.
    #[error("{path}: {source}", path = .0.display(), source = .1)]
    Io(PathBuf, #[source] std::io::Error),
    /// No async runtime could be started.
    #[error("cannot start an async runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

/// What a capture calls and how it reduces and redacts the results.
#[derive(Clone, Debug, Default)]
pub struct SnapshotOptions {
    /// Which tools may be called (default: readonly, as for `mcpcheck run`).
    pub call_tools: ToolPolicy,
    /// Keep array lengths in result shapes (off: one entry per distinct element shape).
    pub array_lengths: bool,
    /// Pointers into the document (`/tools/list/*/description`) whose values are volatile.
    pub volatile: Vec<PointerPattern>,
    /// Tools to call with these arguments instead of synthesized ones, even if the policy
    /// would skip them: the user named them.
    pub calls: std::collections::BTreeMap<String, Value>,
}

/// One capture: the redacted document, and the unredacted one with the list of
/// redactions, for use as insta redactions.
#[derive(Clone, Debug)]
pub struct Snapshot {
    raw: Value,
    doc: Value,
    redacted: Vec<Redacted>,
}

impl Snapshot {
    /// The areas, one snapshot file each.
    pub const AREAS: [&'static str; 4] = ["server", "tools", "resources", "prompts"];

    /// Canonicalizes and redacts a captured document.
    pub fn from_document(raw: Value, options: &SnapshotOptions) -> Self {
        let raw = canon::canonicalize(&raw);
        let mut doc = raw.clone();
        let redacted = Redactions {
            volatile: options.volatile.clone(),
        }
        .apply(&mut doc);
        Snapshot { raw, doc, redacted }
    }

    /// The whole redacted document: `{server, tools, resources, prompts}`.
    pub fn document(&self) -> &Value {
        &self.doc
    }

    /// One redacted area (`Value::Null` for a name that is not an area).
    pub fn area(&self, name: &str) -> &Value {
        self.doc.get(name).unwrap_or(&Value::Null)
    }

    /// One area before redaction: pass it to insta with [`insta_redactions`](Self::insta_redactions).
    pub fn raw_area(&self, name: &str) -> &Value {
        self.raw.get(name).unwrap_or(&Value::Null)
    }

    /// Every redaction made in `area`, as insta selectors (relative to the area) and the
    /// placeholder that replaced the value: the same redactions as insta settings.
    pub fn insta_redactions(&self, area: &str) -> Vec<(String, String)> {
        let root = self.raw_area(area);
        self.redacted
            .iter()
            .filter(|r| r.path.first().map(String::as_str) == Some(area))
            .map(|r| {
                let rest = &r.path[1..];
                let selector = canon::insta_selector(rest, &canon::array_steps(root, rest));
                let placeholder = match &r.placeholder {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (selector, placeholder)
            })
            .collect()
    }

    /// Redactions made anywhere, as pointers into the document.
    pub fn redactions(&self) -> &[Redacted] {
        &self.redacted
    }

    /// An area as the YAML body of its snapshot file.
    pub fn to_yaml(&self, area: &str) -> String {
        yaml::to_yaml(self.area(area))
    }
}

/// Captures a snapshot over a session that has not been initialized yet.
pub async fn capture(
    session: &mut Session,
    options: &SnapshotOptions,
) -> Result<Snapshot, SnapshotError> {
    let raw = capture::document(session, options).await?;
    Ok(Snapshot::from_document(raw, options))
}

/// How to connect for a capture: session and process settings, and where the schemas are
/// (the session validates every message as always; without schemas it only skips that).
#[derive(Clone, Debug, Default)]
pub struct Capture {
    /// What to capture and how to redact it.
    pub options: SnapshotOptions,
    /// Revision and timeouts of the session.
    pub session: SessionConfig,
    /// How to run a stdio server.
    pub stdio: StdioOptions,
    /// Where to look for schemas first.
    pub schema_dir: Option<PathBuf>,
}

impl Capture {
    fn schemas(&self) -> Arc<SchemaStore> {
        Arc::new(SchemaStore::new(SearchPath::standard(
            self.schema_dir.as_deref(),
        )))
    }

    /// Starts `command`, captures, and shuts the server down.
    pub async fn command(&self, command: &ServerCommand) -> Result<Snapshot, SnapshotError> {
        let started = Instant::now();
        let transport = StdioTransport::spawn(command, self.stdio.clone(), started)?;
        self.transport(Box::new(transport)).await
    }

    /// Captures over any transport (an in-process stream pair: [`StreamTransport`](crate::transport::stream::StreamTransport)).
    pub async fn transport(
        &self,
        transport: Box<dyn Transport>,
    ) -> Result<Snapshot, SnapshotError> {
        let mut session = Session::new(
            transport,
            self.schemas(),
            self.session.clone(),
            Instant::now(),
        );
        let result = capture(&mut session, &self.options).await;
        // The server is shut down whatever happened; its record is not needed here.
        let _ = session.finish().await;
        result
    }

    /// [`command`](Self::command) for synchronous tests: `argv` is program and arguments.
    pub fn command_blocking<S: AsRef<str>>(&self, argv: &[S]) -> Result<Snapshot, SnapshotError> {
        let command =
            ServerCommand::from_argv(argv.iter().map(|s| s.as_ref().to_owned()).collect())?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(SnapshotError::Runtime)?;
        runtime.block_on(self.command(&command))
    }
}
