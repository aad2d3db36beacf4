//! What the mock server serves, and its default answer to each client request.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::check::client::needed_capability;
use crate::protocol::{Request, Revision};

/// The answer to one client request.
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// A `result`.
    Result(Value),
    /// An `error`.
    Error {
        /// The error code.
        code: i64,
        /// The message.
        message: String,
        /// The `data` member, if any.
        data: Option<Value>,
    },
}

impl Answer {
    fn error(code: i64, message: impl Into<String>) -> Self {
        Answer::Error {
            code,
            message: message.into(),
            data: None,
        }
    }
}

/// The mock server's content: its capabilities, its tools and what calling each returns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Serves {
    /// The `capabilities` of the `initialize` result.
    pub capabilities: Value,
    /// The tools, as `tools/list` lists them.
    pub tools: Vec<Value>,
    /// What `tools/call` of each tool returns, by name (a text block when none is given).
    pub results: BTreeMap<String, Value>,
    /// The `instructions` of the `initialize` result.
    pub instructions: Option<String>,
}

impl Serves {
    /// The default answer to `request` from a mock speaking `revision`.
    pub fn answer(&self, request: &Request, revision: Revision) -> Answer {
        let params = request.params.as_ref();
        let method = request.method.as_str();
        if method == "initialize" {
            return Answer::Result(self.initialize_result(revision));
        }
        if method == "ping" {
            return Answer::Result(json!({}));
        }
        if let Some(needed) = needed_capability(method) {
            let top = needed.split('.').next().unwrap_or(needed);
            if self.capabilities.get(top).is_none() {
                return Answer::error(
                    -32601,
                    format!("Method not found: the server does not declare `{needed}`"),
                );
            }
        }
        Answer::Result(match method {
            "tools/list" => json!({"tools": self.tools}),
            "tools/call" => {
                let name = params.and_then(|p| p.get("name")).and_then(Value::as_str);
                let Some(name) = name.filter(|n| self.has_tool(n)) else {
                    return Answer::error(
                        -32602,
                        format!("Unknown tool: {}", name.unwrap_or("(none)")),
                    );
                };
                self.results
                    .get(name)
                    .cloned()
                    .unwrap_or_else(|| json!({"content": [{"type": "text", "text": "ok"}]}))
            }
            "prompts/list" => json!({"prompts": []}),
            "resources/list" => json!({"resources": []}),
            "resources/templates/list" => json!({"resourceTemplates": []}),
            "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe" => json!({}),
            "completion/complete" => json!({"completion": {"values": []}}),
            _ => return Answer::error(-32601, format!("Method not found: {method}")),
        })
    }

    fn has_tool(&self, name: &str) -> bool {
        self.tools
            .iter()
            .any(|t| t.get("name").and_then(Value::as_str) == Some(name))
    }

    fn initialize_result(&self, revision: Revision) -> Value {
        let mut result = json!({
            "protocolVersion": revision.as_str(),
            "capabilities": self.capabilities,
            "serverInfo": {"name": "mcpcheck-mock", "version": env!("CARGO_PKG_VERSION")},
        });
        if let Some(i) = &self.instructions {
            result["instructions"] = json!(i);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::RequestId;

    fn request(method: &str, params: Value) -> Request {
        Request {
            id: RequestId::int(1),
            method: method.into(),
            params: Some(params),
        }
    }

    fn serves() -> Serves {
        Serves {
            capabilities: json!({"tools": {}}),
            tools: vec![json!({"name": "add", "inputSchema": {"type": "object"}})],
            results: [(
                "add".to_owned(),
                json!({"content": [{"type": "text", "text": "5"}]}),
            )]
            .into(),
            instructions: None,
        }
    }

    #[test]
    fn initialize_answers_the_mocks_own_revision() {
        let a = serves().answer(
            &request("initialize", json!({"protocolVersion": "2025-11-25"})),
            Revision::V2025_06_18,
        );
        let Answer::Result(r) = a else {
            panic!("{a:?}")
        };
        assert_eq!(r["protocolVersion"], "2025-06-18");
        assert_eq!(r["capabilities"], json!({"tools": {}}));
    }

    #[test]
    fn tools_are_listed_and_called_and_unknown_ones_refused() {
        let s = serves();
        let r4 = Revision::V2025_11_25;
        assert_eq!(
            s.answer(&request("tools/call", json!({"name": "add"})), r4),
            Answer::Result(json!({"content": [{"type": "text", "text": "5"}]}))
        );
        assert!(matches!(
            s.answer(&request("tools/call", json!({"name": "sub"})), r4),
            Answer::Error { code: -32602, .. }
        ));
        assert!(matches!(
            s.answer(&request("prompts/list", json!({})), r4),
            Answer::Error { code: -32601, .. }
        ));
        assert!(matches!(
            s.answer(&request("nope", json!({})), r4),
            Answer::Error { code: -32601, .. }
        ));
    }
}
