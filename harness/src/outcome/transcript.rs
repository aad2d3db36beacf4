//! The wire transcript's entries: what was sent and received, when, as on the wire.

use std::time::Duration;

use serde::Serialize;

use crate::transport::http::HttpRecord;

/// Which way an entry went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// From mcpcheck to the server.
    Sent,
    /// From the server to mcpcheck.
    Received,
    /// Something observed about the connection (exit, framing).
    Event,
}

/// One transcript entry.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Entry {
    /// Time since the session started.
    #[serde(serialize_with = "ser_duration_ms")]
    pub at: Duration,
    /// Which way it went.
    pub direction: Direction,
    /// The message text as on the wire (lossy UTF-8 for raw bytes), or an event description.
    pub text: String,
    /// The HTTP exchange or SSE event behind an entry (HTTP transports only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpRecord>,
}

fn ser_duration_ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((d.as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0)
}
