//! Answers to the server's own requests (ping, roots, sampling, elicitation), after
//! checking that the server was allowed to ask.
//!
//! Sampling and elicitation get fixed answers, only when the session declared those
//! capabilities (a scenario's `initialize: { capabilities: ... }`): a server tool that
//! asks can then finish, and the scenario can see the answer come back in its result.

use serde_json::{Map, Value, json};

use super::Session;
use crate::check::{self, capabilities, lifecycle};
use crate::outcome::Direction;
use crate::protocol::{ErrorObject, Outcome, Request, codes, response_json};

impl Session {
    /// Answers a request the server sent (`ping`, `roots/list`, `sampling/createMessage`,
    /// `elicitation/create`; an error for anything else), after checking it was allowed
    /// to send it.
    pub(super) async fn answer_server_request(&mut self, request: &Request, index: Option<usize>) {
        let rev = self.revision;
        let method = request.method.as_str();
        self.push_all(
            lifecycle::request_before_initialized(method, self.sent.initialized, rev),
            index,
        );
        self.push_all(check::stateless::server_request(method, rev), index);
        let undeclared =
            capabilities::undeclared_client_feature(method, &self.config.client_capabilities, rev);
        if undeclared.is_none() {
            let sub = capabilities::undeclared_sub_feature(
                method,
                request.params.as_ref(),
                &self.config.client_capabilities,
                rev,
                "",
            );
            self.push_all(sub, index);
        }
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
            _ => match input_response(method, request.params.as_ref()) {
                Some(answer) => Outcome::Result(answer),
                None => Outcome::Error(ErrorObject {
                    code: codes::METHOD_NOT_FOUND,
                    message: "method not supported by mcpcheck".into(),
                    data: None,
                }),
            },
        };
        let bytes = response_json(&request.id, &outcome);
        self.transcript
            .push(Direction::Sent, String::from_utf8_lossy(&bytes));
        // If the server is gone the next wait reports it; nothing to add here.
        let _ = self.transport.send(bytes).await;
    }
}

/// mcpcheck's fixed answer to a request a server asks of the client: `roots/list` (no
/// roots), `sampling/createMessage` and `elicitation/create` (below); `None` for any other
/// method. The same answers serve a server request (up to 2025-11-25) and an input request
/// of an `input_required` result (2026-07-28 basic/patterns/mrtr).
pub fn input_response(method: &str, params: Option<&Value>) -> Option<Value> {
    match method {
        "roots/list" => Some(json!({ "roots": [] })),
        "sampling/createMessage" => Some(sampling_answer()),
        "elicitation/create" => Some(elicitation_answer(params)),
        _ => None,
    }
}

/// The text of mcpcheck's answer to `sampling/createMessage`: a tool that echoes its
/// model's reply (as the official fixture's `test_sampling` does) shows it was asked.
pub const SAMPLING_REPLY: &str = "mcpcheck sampling reply";

/// A `CreateMessageResult` with [`SAMPLING_REPLY`].
fn sampling_answer() -> Value {
    json!({
        "role": "assistant",
        "content": { "type": "text", "text": SAMPLING_REPLY },
        "model": "mcpcheck",
        "stopReason": "endTurn",
    })
}

/// An `ElicitResult`: a form is accepted with a value for each property of the requested
/// schema (its `default`, else its first `enum` value, else a plain value of its type);
/// anything else (URL mode) is declined, since nobody can visit the URL.
fn elicitation_answer(params: Option<&Value>) -> Value {
    let Some(schema) = params.and_then(|p| p.get("requestedSchema")) else {
        return json!({ "action": "decline" });
    };
    let properties = schema.get("properties").and_then(Value::as_object);
    let content: Map<String, Value> = properties
        .into_iter()
        .flatten()
        .map(|(name, property)| (name.clone(), form_value(name, property)))
        .collect();
    json!({ "action": "accept", "content": content })
}

/// A value for one property of an elicitation form (primitive types and enum arrays, by
/// the spec): a single choice is the first option, a multi-select the first option alone.
fn form_value(name: &str, property: &Value) -> Value {
    if let Some(default) = property.get("default") {
        return default.clone();
    }
    if let Some(first) = first_option(property) {
        return first;
    }
    match property.get("type").and_then(Value::as_str) {
        Some("boolean") => json!(false),
        Some("number" | "integer") => property.get("minimum").cloned().unwrap_or(json!(0)),
        Some("array") => {
            let item = property.get("items").and_then(first_option);
            Value::Array(item.into_iter().collect())
        }
        _ => match property.get("format").and_then(Value::as_str) {
            Some("email") => json!("mcpcheck@example.com"),
            Some("uri") => json!("https://example.com/mcpcheck"),
            Some("date") => json!("2026-01-01"),
            Some("date-time") => json!("2026-01-01T00:00:00Z"),
            _ => json!(format!("mcpcheck-{name}")),
        },
    }
}

/// The first option of an enum schema: `enum`, titled `oneOf`/`anyOf` (`const`s).
fn first_option(schema: &Value) -> Option<Value> {
    let first_of = |key: &str| schema.get(key).and_then(Value::as_array)?.first().cloned();
    first_of("enum")
        .or_else(|| first_of("oneOf")?.get("const").cloned())
        .or_else(|| first_of("anyOf")?.get("const").cloned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_is_accepted_with_a_value_of_each_property() {
        let params = Some(
            json!({"message": "who?", "requestedSchema": {"type": "object",
            "properties": {
                "username": {"type": "string"},
                "email": {"type": "string", "format": "email"},
                "age": {"type": "integer", "minimum": 18},
                "color": {"type": "string", "enum": ["red", "green"]},
                "tier": {"type": "string", "oneOf": [{"const": "gold", "title": "Gold"}]},
                "ok": {"type": "boolean", "default": true},
                "many": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
                "picks": {"type": "array", "items": {"anyOf": [{"const": "x", "title": "X"}]}},
                "none": {"type": "array"}}}}),
        );
        assert_eq!(
            elicitation_answer(params.as_ref()),
            json!({"action": "accept", "content": {"username": "mcpcheck-username",
                "email": "mcpcheck@example.com", "age": 18, "color": "red", "tier": "gold",
                "ok": true, "many": ["a"], "picks": ["x"], "none": []}})
        );
    }

    #[test]
    fn a_url_elicitation_is_declined() {
        let params = Some(
            json!({"mode": "url", "url": "https://example.com", "message": "m",
            "elicitationId": "e1"}),
        );
        assert_eq!(
            elicitation_answer(params.as_ref()),
            json!({"action": "decline"})
        );
        assert_eq!(sampling_answer()["content"]["text"], SAMPLING_REPLY);
    }
}
