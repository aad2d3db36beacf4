//! Answers to the server's own requests (ping, roots, sampling, elicitation), after
//! checking that the server was allowed to ask.

use serde_json::json;

use super::Session;
use crate::check::{self, capabilities, lifecycle};
use crate::protocol::{ErrorObject, Outcome, Request, codes, response_json};
use crate::session::transcript::Direction;

impl Session {
    /// Answers a request the server sent (`ping`, `roots/list`; an error for anything
    /// else), after checking it was allowed to send it.
    pub(super) async fn answer_server_request(&mut self, request: &Request, index: Option<usize>) {
        let rev = self.revision;
        let method = request.method.as_str();
        self.push_all(
            lifecycle::request_before_initialized(method, self.initialized_sent, rev),
            index,
        );
        self.push_all(check::stateless::server_request(method, rev), index);
        let undeclared =
            capabilities::undeclared_client_feature(method, &self.config.client_capabilities, rev);
        let outcome = match (method, undeclared) {
            ("ping", _) => Outcome::Result(json!({})),
            (_, Some((cap, finding))) => {
                self.push_at(finding, index);
                Outcome::Error(ErrorObject {
                    code: codes::METHOD_NOT_FOUND,
                    message: format!("client does not support {cap}"),
                    data: None,
                })
            }
            ("roots/list", _) => Outcome::Result(json!({ "roots": [] })),
            _ => Outcome::Error(ErrorObject {
                code: codes::METHOD_NOT_FOUND,
                message: "method not supported by mcpcheck".into(),
                data: None,
            }),
        };
        let bytes = response_json(&request.id, &outcome);
        self.transcript
            .push(Direction::Sent, String::from_utf8_lossy(&bytes));
        // If the server is gone the next wait reports it; nothing to add here.
        let _ = self.transport.send(bytes).await;
    }
}
