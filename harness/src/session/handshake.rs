//! The opening of a session: the `initialize` handshake and its version negotiation
//! (the stateless revision's `server/discover` is in `stateless.rs`).

use serde_json::{Value, json};

use super::{Handshake, Reply, ServerProfile, Session, SessionError};
use crate::check::lifecycle;
use crate::protocol::Revision;

impl Session {
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
            self.handshake_reply = Some(Reply {
                frame: None,
                ..reply.clone()
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
            self.initialized_sent = true;
        }
        Ok((profile, reply))
    }
}
