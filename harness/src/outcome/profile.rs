//! What a server said about itself, and whether its messages could be schema-checked.

use serde_json::Value;

use crate::protocol::Revision;

/// What the server said about itself in `initialize`.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ServerProfile {
    /// The version string the server answered with, verbatim.
    pub protocol_version: Option<String>,
    /// Its `capabilities` (null when missing).
    pub capabilities: Value,
    /// Its name and version (`serverInfo`; null when missing).
    pub server_info: Value,
    /// Its `instructions` for the client, if any.
    pub instructions: Option<String>,
    /// 2026-07-28: the `supportedVersions` of `server/discover` (empty for handshake revisions).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub supported_versions: Vec<String>,
}

impl ServerProfile {
    /// Whether the server declared a capability (`tools`, `resources`, ...).
    pub fn declares(&self, capability: &str) -> bool {
        self.capabilities
            .get(capability)
            .is_some_and(|c| !c.is_null())
    }
}

/// Whether schema checks ran.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum SchemaStatus {
    /// Every inbound message was validated; `messages` were checked.
    Checked {
        /// The revision whose schema was used.
        revision: Revision,
        /// Where the schema file was found.
        source: String,
        /// Whether it matched the SHA-256 pin compiled into mcpcheck.
        pinned: bool,
        /// How many messages were validated.
        messages: usize,
    },
    /// No schema was at hand: schema checks were skipped, not passed.
    Skipped {
        /// Why no schema was at hand.
        reason: String,
    },
    /// The user turned schema checks off (`--no-schema`): reports show it prominently.
    Disabled {
        /// What the reports say about it.
        reason: String,
    },
}
