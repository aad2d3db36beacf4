//! The opening of a session: the `initialize` handshake and its version negotiation
//! (the stateless revision's `server/discover` is in `stateless.rs`).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::{Handshake, Reply, ServerProfile, Session, SessionError};
use crate::check::lifecycle;
use crate::outcome::Severity;
use crate::protocol::Revision;

/// The session's default handshake, as the scenarios that share the session see it.
#[derive(Debug)]
pub(super) struct OpeningReply {
    /// Its answer, without its frame: a scenario that shares the session checks its
    /// expectations of the handshake on it (the frame is in an earlier window).
    pub reply: Reply,
    /// The MUST rules the server broke in that answer itself. A server breaking one of
    /// them again later does what it does on every frame (`"jsonrpc": "1.0"` throughout),
    /// not something a scenario confused it into: the session may still be handed on
    /// (`Session::reusable`), so such a server is not restarted for every scenario.
    pub broke: BTreeSet<String>,
}

impl Session {
    /// Whether the server broke MUST rule `rule` answering the session's default
    /// handshake (`OpeningReply::broke`): a later finding of it is what the server does on
    /// every frame, and says nothing new about the exchange it came in.
    pub fn broke_on_opening(&self, rule: &str) -> bool {
        (self.opening.as_ref()).is_some_and(|o| o.broke.contains(rule))
    }

    /// Runs the `initialize` handshake: request, result, `notifications/initialized`.
    pub async fn initialize(&mut self) -> Result<ServerProfile, SessionError> {
        self.initialize_with(&Handshake::default())
            .await
            .map(|(profile, _)| profile)
    }

    /// Keeps the answer to the default handshake for the scenarios that share the session.
    fn remember_handshake(&mut self, handshake: &Handshake, reply: &Reply) {
        // Without its `notifications/initialized` it is still the default handshake: the
        // scenario sends that itself (and the session is not reusable until it does).
        let plain = Handshake {
            skip_initialized: false,
            ..handshake.clone()
        };
        if plain == Handshake::default() {
            let broke = (self.findings.iter())
                .filter(|f| f.severity == Severity::Failure && f.frame.is_some())
                .filter(|f| f.frame == reply.frame)
                .map(|f| f.rule.clone())
                .collect();
            self.opening = Some(OpeningReply {
                reply: Reply {
                    frame: None,
                    ..reply.clone()
                },
                broke,
            });
        }
    }

    /// The handshake with overrides (scenarios test negotiation with them). Returns the
    /// server's profile and the raw reply, for checks on the result.
    pub async fn initialize_with(
        &mut self,
        handshake: &Handshake,
    ) -> Result<(ServerProfile, Reply), SessionError> {
        if !self.config.revision.has_handshake() {
            let discovered = self.discover_with(handshake).await;
            if let Ok((_, reply)) = &discovered {
                self.remember_handshake(handshake, reply);
            }
            return discovered;
        }
        let requested = handshake
            .protocol_version
            .clone()
            .unwrap_or_else(|| self.config.revision.as_str().to_owned());
        let capabilities = handshake
            .capabilities
            .clone()
            .unwrap_or_else(|| self.config.client_capabilities.clone());
        // What was declared is what the server may use: its requests are judged and
        // answered against this (a scenario declaring `sampling` gets sampling answered).
        self.config.client_capabilities = capabilities.clone();
        let params = json!({
            "protocolVersion": requested,
            "capabilities": capabilities,
            "clientInfo": { "name": "mcpcheck", "version": env!("CARGO_PKG_VERSION") },
        });
        let reply = self.request("initialize", Some(params)).await?;
        let result = reply.result().cloned().unwrap_or(Value::Null);
        let profile = ServerProfile {
            protocol_version: result
                .get("protocolVersion")
                .and_then(Value::as_str)
                .map(str::to_owned),
            capabilities: result.get("capabilities").cloned().unwrap_or(Value::Null),
            server_info: result.get("serverInfo").cloned().unwrap_or(Value::Null),
            instructions: result
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_owned),
            supported_versions: Vec::new(),
        };
        if let Some(error) = reply.error() {
            // A negotiation test may expect exactly this; only the default handshake judges it.
            if handshake.protocol_version.is_none() {
                let finding = lifecycle::initialize_failed(error, self.revision);
                self.push_at(finding, reply.frame);
            }
        } else if handshake.protocol_version.is_none() {
            let negotiated =
                lifecycle::negotiate(self.config.revision, profile.protocol_version.as_deref());
            self.push_all(negotiated.findings, reply.frame);
            if let Some(rev) = negotiated.switch_to {
                self.revision = rev;
            }
        } else if let Some(rev) = profile
            .protocol_version
            .as_deref()
            .and_then(|v| v.parse::<Revision>().ok())
        {
            // Speak whatever was agreed, so later results are validated against it.
            self.revision = rev;
        }
        self.profile = Some(profile.clone());
        self.remember_handshake(handshake, &reply);
        if !handshake.skip_initialized {
            self.notify("notifications/initialized", None).await?;
            self.sent.initialized = true;
        }
        Ok((profile, reply))
    }
}
