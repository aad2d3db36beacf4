//! The MCP wire protocol: revisions ([`revision`]), JSON-RPC ids ([`id`], and [`raw_id`]
//! for ids read straight from text), message classification ([`jsonrpc`]), and the one
//! helper that cuts server text down for reports ([`text`]), and the `tools/call` messages
//! inside outbound bytes ([`tool_call`]). The bottom layer: it imports
//! nothing else of the crate.

pub mod id;
pub mod jsonrpc;
pub mod raw_id;
pub mod revision;
pub mod text;
pub mod tool_call;

pub use id::RequestId;
pub use jsonrpc::{
    Classified, ErrorObject, Invalid, InvalidReason, Message, Notification, Outcome, Request,
    Response, classify,
};
pub use revision::{Revision, UnknownRevision};
pub use tool_call::{TOOLS_CALL, ToolCall, tool_calls};

/// Whether a message, read as plain JSON (perhaps invalid), is a response: it carries
/// `result` or `error`. Frames read past [`classify`] (salvaged, raw, in an SSE event) are
/// told apart this way, and only this way.
pub fn is_response(message: &serde_json::Value) -> bool {
    message.get("result").is_some() || message.get("error").is_some()
}

/// The id of a response read as plain JSON: `None` for a message that is no response or
/// carries no id.
pub fn response_id(message: &serde_json::Value) -> Option<&serde_json::Value> {
    message.get("id").filter(|_| is_response(message))
}

/// The id of a request read as plain JSON (no response, and an id of a type JSON-RPC
/// allows).
pub fn request_id(message: &serde_json::Value) -> Option<RequestId> {
    match is_response(message) {
        true => None,
        false => RequestId::from_value(message.get("id")?),
    }
}

/// Serializes an outbound request, the params written straight into the message (a
/// 1 MiB request is built once, not once as params and again as the message).
pub fn request_json(id: &RequestId, method: &str, params: Option<&serde_json::Value>) -> Vec<u8> {
    let mut text = format!(
        r#"{{"jsonrpc":"2.0","id":{},"method":{}"#,
        id.to_json().get(),
        json_str(method)
    )
    .into_bytes();
    if let Some(p) = params {
        text.extend_from_slice(br#","params":"#);
        serde_json::to_writer(&mut text, p).expect("values always serialize");
    }
    text.push(b'}');
    text
}

/// Serializes an outbound notification.
pub fn notification_json(method: &str, params: Option<&serde_json::Value>) -> Vec<u8> {
    let mut v = serde_json::json!({"jsonrpc": "2.0", "method": method});
    if let Some(p) = params {
        v["params"] = p.clone();
    }
    serde_json::to_vec(&v).expect("values always serialize")
}

/// Serializes a response to a server's request.
pub fn response_json(id: &RequestId, outcome: &Outcome) -> Vec<u8> {
    let body = match outcome {
        Outcome::Result(r) => format!(r#""result":{r}"#),
        Outcome::Error(e) => {
            let mut err = serde_json::json!({"code": e.code, "message": e.message});
            if let Some(d) = &e.data {
                err["data"] = d.clone();
            }
            format!(r#""error":{err}"#)
        }
    };
    format!(r#"{{"jsonrpc":"2.0","id":{},{body}}}"#, id.to_json().get()).into_bytes()
}

fn json_str(s: &str) -> String {
    serde_json::to_string(s).expect("strings always serialize")
}

/// JSON-RPC and MCP error codes mcpcheck uses or expects.
pub mod codes {
    /// JSON-RPC: the text is not valid JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// JSON-RPC: the JSON is not a valid request.
    pub const INVALID_REQUEST: i64 = -32600;
    /// JSON-RPC: no such method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// JSON-RPC: invalid method parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// JSON-RPC: internal error.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// MCP: the resource does not exist.
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// MCP 2026-07-28: `HeaderMismatch`, headers that do not mirror the body
    /// (basic/transports/streamable-http#server-validation).
    pub const HEADER_MISMATCH: i64 = -32020;
    /// MCP 2026-07-28: `MissingRequiredClientCapabilityError` (basic#error-codes).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// MCP 2026-07-28: `UnsupportedProtocolVersionError` (basic#error-codes).
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
}

/// The reserved `_meta` keys of 2026-07-28 requests and results (basic#meta,
/// "Per-request protocol fields").
pub mod meta_keys {
    /// The protocol version of a request (required).
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// The client's capabilities for a request (required).
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// The client's name and version (SHOULD be on every request).
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// The server's name and version, in a result.
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
}

/// The result member that holds the items of an MCP list method (`tools/list` ->
/// `tools`, ...), for the four lists the spec defines.
pub fn list_key(method: &str) -> Option<&'static str> {
    match method {
        "tools/list" => Some("tools"),
        "prompts/list" => Some("prompts"),
        "resources/list" => Some("resources"),
        "resources/templates/list" => Some("resourceTemplates"),
        _ => None,
    }
}

/// A key as one reference token of a JSON Pointer (RFC 6901: `~` as `~0`, `/` as `~1`).
pub fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}
