//! The headers of the Streamable HTTP transport: the session and version headers every
//! request carries, 2026-07-28's request metadata headers, and headers as recorded (redacted).

use reqwest::header::HeaderMap;
use serde_json::Value;

use super::HttpOptions;

/// The session id header (Streamable HTTP).
pub const SESSION_HEADER: &str = "mcp-session-id";
/// The protocol version header (from 2025-06-18).
pub const VERSION_HEADER: &str = "mcp-protocol-version";
/// 2026-07-28: the request's `method`, mirrored into a header.
pub const METHOD_HEADER: &str = "mcp-method";
/// 2026-07-28: `params.name` / `params.uri` of `tools/call`, `prompts/get`, `resources/read`.
pub const NAME_HEADER: &str = "mcp-name";
/// The `Accept` header every POST carries (spec: "listing both").
pub const POST_ACCEPT: &str = "application/json, text/event-stream";

pub(super) fn header_of<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

pub(crate) fn record_headers(headers: &HeaderMap, options: &HttpOptions) -> Vec<(String, String)> {
    headers
        .iter()
        .map(|(k, v)| {
            let value = String::from_utf8_lossy(v.as_bytes()).into_owned();
            let value = if matches!(
                k.as_str(),
                "authorization" | "proxy-authorization" | "cookie"
            ) {
                "[REDACTED]".to_owned()
            } else {
                options.redact(&value)
            };
            (k.as_str().to_owned(), value)
        })
        .collect()
}

/// for a request whose `_meta` carries `io.modelcontextprotocol/protocolVersion`:
/// `MCP-Protocol-Version` (the same value), `Mcp-Method`, and `Mcp-Name` where required.
/// Without that `_meta` field, `fallback` (the stateless session's version) is used;
/// handshake-era sessions have neither and get `None`.
pub fn stateless_headers(
    message: &Value,
    fallback: Option<&str>,
) -> Option<Vec<(&'static str, String)>> {
    message.get("id")?;
    let version = message
        .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
        .and_then(Value::as_str)
        .or(fallback)?;
    let method = message.get("method")?.as_str()?;
    let mut headers = vec![
        (VERSION_HEADER, header_value(version)),
        (METHOD_HEADER, header_value(method)),
    ];
    let name = match method {
        "tools/call" | "prompts/get" => message.pointer("/params/name"),
        "resources/read" => message.pointer("/params/uri"),
        _ => None,
    };
    if let Some(name) = name.and_then(Value::as_str) {
        headers.push((NAME_HEADER, header_value(name)));
    }
    Some(headers)
}

/// A header value as 2026-07-28 "Value Encoding" says: as-is when it is visible ASCII,
/// space or tab without surrounding whitespace, else `=?base64?...?=` (also for a plain
/// value that looks like that sentinel).
pub fn header_value(value: &str) -> String {
    use base64::Engine as _;
    let plain = value
        .bytes()
        .all(|b| b == b'\t' || (0x20..=0x7e).contains(&b))
        && value.trim() == value
        && !(value.starts_with("=?base64?") && value.ends_with("?="));
    if plain {
        value.to_owned()
    } else {
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stateless_request_headers_mirror_the_body() {
        let meta = serde_json::json!({ "io.modelcontextprotocol/protocolVersion": "2026-07-28" });
        let call = serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": { "name": "get_weather", "_meta": meta } });
        assert_eq!(
            stateless_headers(&call, None).unwrap(),
            vec![
                (VERSION_HEADER, "2026-07-28".to_owned()),
                (METHOD_HEADER, "tools/call".to_owned()),
                (NAME_HEADER, "get_weather".to_owned()),
            ]
        );
        let read = serde_json::json!({ "jsonrpc": "2.0", "id": 2, "method": "resources/read",
            "params": { "uri": "file:///a b", "_meta": meta } });
        assert_eq!(stateless_headers(&read, None).unwrap()[2].1, "file:///a b");
        let list = serde_json::json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/list",
            "params": { "_meta": meta } });
        assert_eq!(stateless_headers(&list, None).unwrap().len(), 2);
        // Handshake-era requests and notifications get none.
        let old = serde_json::json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/list" });
        assert_eq!(stateless_headers(&old, None), None);
        // A stateless session sends the headers even when a scenario drops the _meta field.
        assert_eq!(
            stateless_headers(&old, Some("2026-07-28")).unwrap()[0],
            (VERSION_HEADER, "2026-07-28".to_owned())
        );
        let note =
            serde_json::json!({ "jsonrpc": "2.0", "method": "x", "params": { "_meta": meta } });
        assert_eq!(stateless_headers(&note, None), None);
    }

    #[test]
    fn header_values_are_encoded_like_the_spec_examples() {
        assert_eq!(header_value("us-west1"), "us-west1");
        assert_eq!(
            header_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(header_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            header_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }
}
