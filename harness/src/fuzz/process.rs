//! The server under fuzz: one process (over HTTP, one MCP session), its handshake, the
//! `ping` that tells a wedged server from a gone one, and what the oracles track per process.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::FuzzError;
use super::wire::Framing;
use crate::protocol::RequestId;
use crate::schema::SchemaStore;
use crate::session::{Session, SessionConfig, SessionError};
use crate::transport::{StderrLog, Transport};

/// One server process (over HTTP: one MCP session) and what the fuzzer knows about it.
pub(super) struct Proc {
    pub session: Session,
    /// The process to sample memory of: only one mcpcheck started.
    pub pid: Option<u32>,
    pub stderr: StderrLog,
    /// How the server cuts the written stream into messages.
    pub lines: Framing,
    /// Every id sent to this process: a reused one would make an answer ambiguous.
    pub sent_ids: HashSet<RequestId>,
    /// Every write since the handshake: the input a finding is minimized from.
    pub history: Vec<Vec<u8>>,
    pub history_bytes: usize,
    pub cases: u64,
    /// Session findings already turned into observations.
    pub findings_seen: usize,
    /// Stderr bytes already searched for crash text.
    pub stderr_checked: u64,
    pub rss_base: Option<u64>,
    pub rss_sampled: Instant,
    pub rss_reported: bool,
}

/// What a liveness probe found.
pub(super) enum Ping {
    Alive,
    Silent,
    /// The server is gone; over HTTP, why the exchange failed.
    Gone(Option<String>),
}

impl Proc {
    /// Runs the handshake over a freshly opened transport. Returns the process and the
    /// capabilities the server declared.
    pub async fn start(
        transport: Box<dyn Transport>,
        schemas: Arc<SchemaStore>,
        config: SessionConfig,
        started: Instant,
        lines: Framing,
    ) -> Result<(Proc, Value), FuzzError> {
        let pid = transport.pid();
        let stderr = transport.stderr().cloned().unwrap_or_default();
        let mut session = Session::new(transport, schemas, config, started);
        let profile = match session.initialize().await {
            Ok(p) => p,
            Err(e) => {
                let tail = session.stderr_tail(5).join("\n");
                drop(session.finish().await);
                return Err(FuzzError::Handshake(format!("{e}; stderr: {tail}")));
            }
        };
        let mut sent_ids = HashSet::new();
        sent_ids.insert(RequestId::int(1));
        let proc = Proc {
            session,
            pid,
            stderr,
            lines,
            sent_ids,
            history: Vec::new(),
            history_bytes: 0,
            cases: 0,
            findings_seen: 0,
            stderr_checked: 0,
            rss_base: None,
            rss_sampled: Instant::now(),
            rss_reported: false,
        };
        Ok((proc, profile.capabilities))
    }

    /// Liveness probe: `ping` with a fresh id.
    pub async fn ping(&mut self) -> Ping {
        let id = self.session.allocate_id();
        self.sent_ids.insert(id.clone());
        match self.session.request_with_id(id, "ping", None).await {
            Ok(_) => Ping::Alive,
            Err(SessionError::Timeout { .. }) => Ping::Silent,
            // It answered, badly: alive (the session reported the frame).
            Err(SessionError::Unusable { .. }) => Ping::Alive,
            // Over HTTP, no response headers in time is a wedged server, not a crash.
            Err(SessionError::Send { source, .. }) if source.is_response_timeout() => Ping::Silent,
            Err(SessionError::Send { source, .. }) => Ping::Gone(Some(source.to_string())),
            Err(_) => Ping::Gone(None),
        }
    }

    /// Ends the session the way its transport's spec says (the outcome is the oracles'
    /// business, already done).
    pub async fn finish(self) {
        drop(self.session.finish().await);
    }
}

/// Whether the endpoint accepts TCP connections, trying for up to `wait` (a supervisor
/// may be restarting it). Connect attempts are bounded, so this never hangs.
pub(super) async fn endpoint_up(url: &reqwest::Url, wait: Duration) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let port = url.port_or_known_default().unwrap_or(80);
    let deadline = Instant::now() + wait;
    loop {
        let attempt = tokio::time::timeout(
            Duration::from_millis(500),
            tokio::net::TcpStream::connect((host.as_str(), port)),
        )
        .await;
        if matches!(attempt, Ok(Ok(_))) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
