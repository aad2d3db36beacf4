//! What the mock server serves, and its default answer to each client request.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::check::client::needed_capability;
use crate::protocol::{Request, Revision};
use crate::session::stateless::SERVER_INFO;

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
    /// The resources, as `resources/list` lists them; `resources/read` returns each one's
    /// `text` (a line naming it when none is given).
    pub resources: Vec<Value>,
    /// The prompts, as `prompts/list` lists them; `prompts/get` returns one user message.
    pub prompts: Vec<Value>,
}

/// In a served value, the mock's origin (`http://127.0.0.1:PORT`), filled in when the
/// mock listens over HTTP.
pub const ORIGIN_PLACEHOLDER: &str = "{endpoint}";

/// The path under the mock's origin that only a served `$ref` names: any request for it
/// is a client dereferencing that `$ref`.
pub const CANARY_PATH: &str = "/mcpcheck-canary/";

impl Serves {
    /// The same content with [`ORIGIN_PLACEHOLDER`] replaced by `origin` in every string.
    pub fn at_origin(&self, origin: &str) -> Serves {
        fn fill(value: &mut Value, origin: &str) {
            match value {
                Value::String(s) if s.contains(ORIGIN_PLACEHOLDER) => {
                    *s = s.replace(ORIGIN_PLACEHOLDER, origin);
                }
                Value::Array(items) => items.iter_mut().for_each(|v| fill(v, origin)),
                Value::Object(map) => map.values_mut().for_each(|v| fill(v, origin)),
                _ => {}
            }
        }
        let mut out = self.clone();
        for v in out
            .tools
            .iter_mut()
            .chain(out.resources.iter_mut())
            .chain(out.prompts.iter_mut())
            .chain(out.results.values_mut())
        {
            fill(v, origin);
        }
        out
    }

    /// The default answer to `request` from a mock speaking `revision`. At 2026-07-28
    /// there is no handshake: `server/discover` answers what `initialize` did, and every
    /// result carries `resultType` and the server's name in `_meta` (basic#meta).
    pub fn answer(&self, request: &Request, revision: Revision) -> Answer {
        let answer = self.answer_any(request, revision);
        match answer {
            Answer::Result(result) if !revision.has_handshake() => {
                Answer::Result(stateless_result(&request.method, result))
            }
            other => other,
        }
    }

    fn answer_any(&self, request: &Request, revision: Revision) -> Answer {
        let params = request.params.as_ref();
        let method = request.method.as_str();
        match (method, revision.has_handshake()) {
            ("initialize", true) => return Answer::Result(self.initialize_result(revision)),
            ("server/discover", false) => return Answer::Result(self.discover_result(revision)),
            ("initialize" | "notifications/initialized", false) => {
                return Answer::error(
                    -32601,
                    format!("Method not found: {method} (2026-07-28 has no handshake)"),
                );
            }
            _ => {}
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
            "prompts/list" => json!({"prompts": self.prompts}),
            "resources/list" => {
                let listed: Vec<Value> = self
                    .resources
                    .iter()
                    .map(|r| {
                        let mut r = r.clone();
                        r.as_object_mut().map(|m| m.remove("text"));
                        r
                    })
                    .collect();
                json!({"resources": listed})
            }
            "resources/read" => {
                let uri = params.and_then(|p| p.get("uri")).and_then(Value::as_str);
                let found = self
                    .resources
                    .iter()
                    .find(|r| uri.is_some() && r.get("uri").and_then(Value::as_str) == uri);
                let (Some(uri), Some(resource)) = (uri, found) else {
                    return Answer::error(
                        -32602,
                        format!("Resource not found: {}", uri.unwrap_or("(none)")),
                    );
                };
                let text = resource
                    .get("text")
                    .and_then(Value::as_str)
                    .map_or_else(|| format!("the resource {uri}"), str::to_owned);
                json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": text}]})
            }
            "prompts/get" => {
                let name = params.and_then(|p| p.get("name")).and_then(Value::as_str);
                let Some(name) = name.filter(|n| {
                    self.prompts
                        .iter()
                        .any(|p| p.get("name").and_then(Value::as_str) == Some(n))
                }) else {
                    return Answer::error(
                        -32602,
                        format!("Unknown prompt: {}", name.unwrap_or("(none)")),
                    );
                };
                json!({"messages": [{"role": "user",
                    "content": {"type": "text", "text": format!("the prompt {name}")}}]})
            }
            "resources/templates/list" => json!({"resourceTemplates": []}),
            "logging/setLevel" | "resources/subscribe" | "resources/unsubscribe" => json!({}),
            "completion/complete" => json!({"completion": {"values": []}}),
            _ => return Answer::error(-32601, format!("Method not found: {method}")),
        })
    }

    fn has_tool(&self, name: &str) -> bool {
        self.tool(name).is_some()
    }

    /// The tool named `name`, as listed.
    pub fn tool(&self, name: &str) -> Option<&Value> {
        self.tools
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
    }

    fn discover_result(&self, revision: Revision) -> Value {
        let mut result = json!({
            "supportedVersions": [revision.as_str()],
            "capabilities": self.capabilities,
        });
        if let Some(i) = &self.instructions {
            result["instructions"] = json!(i);
        }
        result
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

/// A 2026-07-28 result: `resultType` (`complete` unless the answer says otherwise), the
/// server's name in `_meta`, and the cache fields of the results that have them.
fn stateless_result(method: &str, mut result: Value) -> Value {
    let Some(fields) = result.as_object_mut() else {
        return result;
    };
    fields
        .entry("resultType")
        .or_insert_with(|| json!("complete"));
    let meta = fields.entry("_meta").or_insert_with(|| json!({}));
    if let Some(meta) = meta.as_object_mut() {
        meta.entry(SERVER_INFO).or_insert_with(
            || json!({"name": "mcpcheck-mock", "version": env!("CARGO_PKG_VERSION")}),
        );
    }
    let cached = method == "server/discover"
        || method == "resources/read"
        || (method.ends_with("/list") && method != "roots/list");
    if cached && fields.get("resultType") == Some(&json!("complete")) {
        fields.entry("ttlMs").or_insert_with(|| json!(0));
        fields
            .entry("cacheScope")
            .or_insert_with(|| json!("private"));
    }
    result
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
            ..Serves::default()
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
