//! What a 2026-07-28 client must do without a handshake: name its version and
//! capabilities in every request's `_meta`, mirror the request into HTTP headers, retry
//! with a supported version when the server refuses its own, and retry a request the
//! server answered with an InputRequiredResult as the MRTR pattern says. Pure: facts in,
//! findings out; the mock session gathers the facts.

use base64::Engine as _;
use serde_json::Value;

use super::{Finding, rules, x_mcp_header};
use crate::protocol::Revision;
use crate::protocol::meta_keys::{CLIENT_CAPABILITIES, CLIENT_INFO, PROTOCOL_VERSION};
use crate::transport::http::{METHOD_HEADER, NAME_HEADER, VERSION_HEADER};

/// The version a request's `_meta` names.
pub fn meta_version(params: Option<&Value>) -> Option<&str> {
    meta(params)?.get(PROTOCOL_VERSION)?.as_str()
}

/// The capabilities a request's `_meta` declares.
pub fn meta_capabilities(params: Option<&Value>) -> Option<&Value> {
    meta(params)?.get(CLIENT_CAPABILITIES)
}

fn meta(params: Option<&Value>) -> Option<&Value> {
    params?.get("_meta")
}

/// A request's `_meta`: the fields every request carries (basic#meta, "MUST be
/// included on every request") and `clientInfo` ("SHOULD include ... on every request").
pub fn request_meta(method: &str, params: Option<&Value>, revision: Revision) -> Vec<Finding> {
    let meta = meta(params);
    let has = |key: &str| meta.and_then(|m| m.get(key)).is_some();
    let missing: Vec<&str> = [PROTOCOL_VERSION, CLIENT_CAPABILITIES]
        .into_iter()
        .filter(|k| !has(k))
        .collect();
    let mut found = Vec::new();
    if !missing.is_empty() {
        let list = missing
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(" and ");
        found.push(
            Finding::new(
                &rules::CLIENT_REQUEST_META,
                revision,
                format!("the client's `{method}` request has no {list} in `params._meta`"),
            )
            .pointer("/params/_meta")
            .expected(format!(
                "`_meta` with `{PROTOCOL_VERSION}` and `{CLIENT_CAPABILITIES}`"
            )),
        );
    } else if !has(CLIENT_INFO) {
        found.push(
            Finding::new(
                &rules::CLIENT_REQUEST_META_CLIENT_INFO,
                revision,
                format!("the client's `{method}` request does not name the client in `_meta`"),
            )
            .pointer("/params/_meta")
            .expected(format!("`{CLIENT_INFO}`: {{name, version}}")),
        );
    }
    found
}

/// The headers of a POSTed request: `MCP-Protocol-Version` matching the `_meta` version,
/// `Mcp-Method`, and `Mcp-Name` where the method has a name (streamable-http "Request
/// Metadata"). `header` looks a header up by name, in any case.
pub fn standard_headers<'h>(
    method: &str,
    params: Option<&Value>,
    header: impl Fn(&str) -> Option<&'h str>,
    revision: Revision,
) -> Vec<Finding> {
    let mut found = Vec::new();
    match (header(VERSION_HEADER).map(str::trim), meta_version(params)) {
        (None, wanted) => found.push(
            Finding::new(
                &rules::CLIENT_HTTP_PROTOCOL_VERSION,
                revision,
                format!("the client POSTed `{method}` without an `MCP-Protocol-Version` header"),
            )
            .expected(format!(
                "`MCP-Protocol-Version: {}`",
                wanted.unwrap_or("<the _meta version>")
            )),
        ),
        (Some(got), Some(wanted)) if got != wanted => found.push(
            Finding::new(
                &rules::CLIENT_HTTP_PROTOCOL_VERSION,
                revision,
                format!(
                    "the client POSTed `{method}` with `MCP-Protocol-Version: {got}`; its `_meta` names `{wanted}`"
                ),
            )
            .expected(format!("`MCP-Protocol-Version: {wanted}`, as in `_meta`")),
        ),
        _ => {}
    }
    match header(METHOD_HEADER) {
        Some(got) if got.trim() == method => {}
        got => found.push(mirror_finding(
            &rules::CLIENT_HTTP_STANDARD_HEADERS,
            method,
            "Mcp-Method",
            got,
            method,
            revision,
        )),
    }
    let name = match method {
        "tools/call" | "prompts/get" => params.and_then(|p| p.get("name")),
        "resources/read" => params.and_then(|p| p.get("uri")),
        _ => None,
    };
    if let Some(name) = name.and_then(Value::as_str) {
        let got = header(NAME_HEADER);
        if !got.is_some_and(|g| header_carries(g, name)) {
            found.push(mirror_finding(
                &rules::CLIENT_HTTP_STANDARD_HEADERS,
                method,
                "Mcp-Name",
                got,
                name,
                revision,
            ));
        }
    }
    found
}

/// The `Mcp-Param-*` headers of a `tools/call` of `tool` (as the mock lists it) with
/// `arguments`: one for every annotated argument with a value, none for a null or absent
/// one (streamable-http "Client Behavior"). A tool whose annotations break the rules is
/// not judged: clients are to drop it.
pub fn param_headers<'h>(
    tool: &Value,
    arguments: Option<&Value>,
    header: impl Fn(&str) -> Option<&'h str>,
    revision: Revision,
) -> Vec<Finding> {
    let Some(schema) = tool.get("inputSchema") else {
        return Vec::new();
    };
    if !x_mcp_header::problems(schema).is_empty() {
        return Vec::new();
    }
    let mut found = Vec::new();
    for a in x_mcp_header::annotations(schema) {
        let (Some(path), Some(name)) = (&a.path, a.header.as_str()) else {
            continue;
        };
        let name = format!("Mcp-Param-{name}");
        let value = arguments.and_then(|args| path.iter().try_fold(args, |v, k| v.get(k)));
        let got = header(&name);
        let what = format!("argument `{}`", path.join("."));
        match value.filter(|v| !v.is_null()) {
            None if got.is_some() => found.push(
                Finding::new(
                    &rules::CLIENT_HTTP_PARAM_HEADERS,
                    revision,
                    format!(
                        "the client sent `{name}` on a `tools/call` whose {what} is null or absent"
                    ),
                )
                .pointer("/params/arguments")
                .expected(format!("no `{name}` header")),
            ),
            None => {}
            Some(v) if got.is_some_and(|g| param_matches(g, v)) => {}
            Some(v) => found.push(
                mirror_finding(
                    &rules::CLIENT_HTTP_PARAM_HEADERS,
                    "tools/call",
                    &name,
                    got,
                    &text_of(v),
                    revision,
                )
                .pointer("/params/arguments"),
            ),
        }
    }
    found
}

/// A `tools/call` of `tool` (as the mock lists it) whose `x-mcp-header` annotations break
/// the constraints: "the client MUST exclude the invalid tool from the result of
/// `tools/list`" (server/tools#x-mcp-header, over Streamable HTTP).
pub fn invalid_tool_called(tool: &Value, revision: Revision) -> Option<Finding> {
    let problems = x_mcp_header::problems(tool.get("inputSchema")?);
    let (_, first) = problems.first()?;
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("?");
    Some(
        Finding::new(
            &rules::CLIENT_INVALID_TOOL_EXCLUDED,
            revision,
            format!("the client called `{name}`, an invalid tool: {first}"),
        )
        .pointer("/params/name")
        .expected("no call of a tool whose `x-mcp-header` annotations break the constraints"),
    )
}

/// A request for `target` on the mock's origin that only a `$ref` in a served schema
/// names: "Implementations MUST NOT automatically dereference `$ref` values that resolve
/// to a network URI" (basic#ref-resolution).
pub fn network_ref_fetched(method: &str, target: &str, revision: Revision) -> Finding {
    Finding::new(
        &rules::CLIENT_NO_NETWORK_REF,
        revision,
        format!("the client fetched {method} {target}, a network `$ref` of a tool's inputSchema"),
    )
    .expected("no request for a `$ref` URI (kept as written, not dereferenced)")
}

fn mirror_finding(
    rule: &'static crate::outcome::Rule,
    method: &str,
    name: &str,
    got: Option<&str>,
    wanted: &str,
    revision: Revision,
) -> Finding {
    let got = got.map_or_else(
        || format!("without `{name}`"),
        |g| format!("with `{name}: {g}`"),
    );
    Finding::new(
        rule,
        revision,
        format!("the client POSTed `{method}` {got}"),
    )
    .expected(format!(
        "`{name}` carrying `{wanted}` (plain, or `=?base64?...?=`)"
    ))
}

/// Whether a header value carries `text`: as is, or in the Base64 sentinel form.
fn header_carries(got: &str, text: &str) -> bool {
    got.trim() == text || decode_sentinel(got).as_deref() == Some(text)
}

/// An argument's header: strings as `header_carries` says, integers compared as numbers,
/// booleans as `true` / `false`.
fn param_matches(got: &str, value: &Value) -> bool {
    match value {
        Value::String(s) => header_carries(got, s),
        Value::Number(n) => {
            let text = decode_sentinel(got).unwrap_or_else(|| got.trim().to_owned());
            text.parse::<f64>().ok() == n.as_f64()
        }
        Value::Bool(b) => header_carries(got, if *b { "true" } else { "false" }),
        _ => false,
    }
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The text inside `=?base64?...?=`, if the value is that and decodes to UTF-8.
fn decode_sentinel(value: &str) -> Option<String> {
    let inner = value.trim().strip_prefix("=?base64?")?.strip_suffix("?=")?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(inner)
        .ok()?;
    String::from_utf8(bytes).ok()
}

/// What the server's UnsupportedProtocolVersionError asked of the client: a retry with a
/// version from `supported` ("The client SHOULD select a mutually supported version from
/// the `supported` list and retry the request").
#[derive(Clone, Debug, Default)]
pub struct VersionRetry {
    refused: Option<Vec<String>>,
}

impl VersionRetry {
    /// The server refused a request's version and listed `supported`.
    pub fn refused(&mut self, supported: Vec<String>) {
        self.refused = Some(supported);
    }

    /// The client's next request, naming `version` in `_meta`.
    pub fn request(&mut self, version: Option<&str>, revision: Revision) -> Option<Finding> {
        let supported = self.refused.take()?;
        let got = version.unwrap_or("no version");
        (!version.is_some_and(|v| supported.iter().any(|s| s == v))).then(|| {
            Finding::new(
                &rules::CLIENT_VERSION_RETRY,
                revision,
                format!(
                    "after the server refused its version, the client's next request names {got}"
                ),
            )
            .pointer("/params/_meta")
            .expected(format!(
                "a version from `supported`: {}",
                supported.join(", ")
            ))
        })
    }

    /// At the end: the refusal was never followed by a request.
    pub fn at_end(&self, revision: Revision) -> Option<Finding> {
        let supported = self.refused.as_ref()?;
        Some(
            Finding::new(
                &rules::CLIENT_VERSION_RETRY,
                revision,
                "the server refused the client's version with UnsupportedProtocolVersionError; the client never retried",
            )
            .expected(format!(
                "a retry with a version from `supported`: {}",
                supported.join(", ")
            )),
        )
    }
}

/// One InputRequiredResult the mock sent, awaiting the retry of its request.
#[derive(Clone, Debug)]
struct Asked {
    method: String,
    /// `params.name` or `params.uri` of the request.
    target: Option<String>,
    /// The request's id (`1` and `"1"` differ).
    id: Value,
    state: Option<String>,
    inputs: Vec<String>,
}

/// The MRTR rounds of a session (basic/patterns/mrtr "Client Requirements"): what each
/// InputRequiredResult asked, and how the client's retry and other requests answer it. A
/// retry is the next request with the same method and name.
#[derive(Clone, Debug, Default)]
pub struct Rounds {
    open: Vec<Asked>,
}

fn target(params: Option<&Value>) -> Option<String> {
    let p = params?;
    p.get("name")
        .or_else(|| p.get("uri"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

impl Rounds {
    /// The mock answered request `id` (`method`, `params`) with `result`: an
    /// InputRequiredResult opens a round.
    pub fn answered(&mut self, method: &str, params: Option<&Value>, id: &Value, result: &Value) {
        if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
            return;
        }
        let target = target(params);
        self.open
            .retain(|a| !(a.method == method && a.target == target));
        self.open.push(Asked {
            method: method.to_owned(),
            target,
            id: id.clone(),
            state: result
                .get("requestState")
                .and_then(Value::as_str)
                .map(str::to_owned),
            inputs: result
                .get("inputRequests")
                .and_then(Value::as_object)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default(),
        });
    }

    /// A request from the client: a retry is judged against what was asked; any other
    /// request must carry neither `inputResponses` nor `requestState`.
    pub fn request(
        &mut self,
        method: &str,
        params: Option<&Value>,
        id: &Value,
        revision: Revision,
    ) -> Vec<Finding> {
        let target = target(params);
        let state = params.and_then(|p| p.get("requestState"));
        let responses = params.and_then(|p| p.get("inputResponses"));
        let at = self
            .open
            .iter()
            .position(|a| a.method == method && a.target == target);
        let Some(at) = at else {
            let carried: Vec<&str> = [("requestState", state), ("inputResponses", responses)]
                .into_iter()
                .filter_map(|(k, v)| v.map(|_| k))
                .collect();
            if carried.is_empty() {
                return Vec::new();
            }
            let of = self
                .open
                .iter()
                .map(|a| format!("`{}`", a.target.as_deref().unwrap_or(&a.method)))
                .collect::<Vec<_>>();
            let why = match of.is_empty() {
                true => "no request of it awaits a retry".to_owned(),
                false => format!("only {} awaits a retry", of.join(", ")),
            };
            let what = target.as_deref().unwrap_or(method);
            return vec![
                Finding::new(
                    &rules::CLIENT_MRTR_ISOLATED,
                    revision,
                    format!(
                        "the client's `{method}` of `{what}` carries {}, but {why}",
                        carried.join(" and ")
                    ),
                )
                .pointer("/params")
                .expected("`inputResponses` and `requestState` only on the retry they belong to"),
            ];
        };
        let asked = self.open.remove(at);
        let what = asked.target.as_deref().unwrap_or(&asked.method).to_owned();
        let mut found = Vec::new();
        let mut broke = |message: String, pointer: &str, expected: String| {
            found.push(
                Finding::new(&rules::CLIENT_MRTR_RETRY, revision, message)
                    .pointer(pointer)
                    .expected(expected),
            );
        };
        if *id == asked.id {
            broke(
                format!("the client retried `{what}` with the id of the request it retries ({id})"),
                "/id",
                "a new JSON-RPC id for the retry".into(),
            );
        }
        match (&asked.state, state) {
            (Some(s), Some(got)) if got.as_str() == Some(s) => {}
            (Some(s), got) => broke(
                format!(
                    "the client retried `{what}` with requestState {}; the server sent {}",
                    got.map_or_else(|| "absent".to_owned(), Value::to_string),
                    Value::from(s.as_str())
                ),
                "/params/requestState",
                "the exact `requestState` of the InputRequiredResult".into(),
            ),
            (None, Some(got)) => broke(
                format!(
                    "the client retried `{what}` with requestState {got}; the InputRequiredResult had none"
                ),
                "/params/requestState",
                "no `requestState` in the retry".into(),
            ),
            (None, None) => {}
        }
        let missing: Vec<&String> = asked
            .inputs
            .iter()
            .filter(|k| responses.and_then(|r| r.get(k.as_str())).is_none())
            .collect();
        if !missing.is_empty() {
            let list = missing
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ");
            broke(
                format!("the client retried `{what}` without inputResponses for {list}"),
                "/params/inputResponses",
                format!("`inputResponses` with {list}"),
            );
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const R5: Revision = Revision::V2026_07_28;

    fn rules_of(found: &[Finding]) -> Vec<&str> {
        found.iter().map(|f| f.rule.as_str()).collect()
    }

    fn meta() -> Value {
        json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
        }})
    }

    #[test]
    fn meta_needs_version_and_capabilities_and_should_name_the_client() {
        assert!(request_meta("tools/list", Some(&meta()), R5).is_empty());
        let mut no_caps = meta();
        no_caps["_meta"]
            .as_object_mut()
            .unwrap()
            .remove(CLIENT_CAPABILITIES);
        let f = request_meta("tools/list", Some(&no_caps), R5);
        assert_eq!(rules_of(&f), ["client.request-meta"]);
        assert!(
            f[0].message.contains(CLIENT_CAPABILITIES),
            "{}",
            f[0].message
        );
        assert_eq!(
            rules_of(&request_meta("tools/list", None, R5)),
            ["client.request-meta"]
        );
        let mut anonymous = meta();
        anonymous["_meta"]
            .as_object_mut()
            .unwrap()
            .remove(CLIENT_INFO);
        let f = request_meta("tools/list", Some(&anonymous), R5);
        assert_eq!(rules_of(&f), ["client.request-meta-client-info"]);
        assert_eq!(f[0].severity, crate::outcome::Severity::Warning);
    }

    fn lookup<'a>(headers: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<&'a str> {
        move |name| {
            headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| *v)
        }
    }

    #[test]
    fn standard_headers_mirror_the_body_plainly_or_in_base64() {
        let mut params = meta();
        params["name"] = json!("Hello, 世界");
        let good = [
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        ];
        assert!(standard_headers("tools/call", Some(&params), lookup(&good), R5).is_empty());
        let wrong_version = [
            ("MCP-Protocol-Version", "2025-11-25"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        ];
        assert_eq!(
            rules_of(&standard_headers(
                "tools/call",
                Some(&params),
                lookup(&wrong_version),
                R5
            )),
            ["client.http-protocol-version"]
        );
        let bare = [("MCP-Protocol-Version", "2026-07-28")];
        assert_eq!(
            rules_of(&standard_headers(
                "tools/call",
                Some(&params),
                lookup(&bare),
                R5
            )),
            [
                "client.http-standard-headers",
                "client.http-standard-headers"
            ]
        );
        // Only tools/call, prompts/get and resources/read carry Mcp-Name.
        let listed = [
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/list"),
        ];
        assert!(standard_headers("tools/list", Some(&meta()), lookup(&listed), R5).is_empty());
    }

    #[test]
    fn param_headers_follow_the_annotations_and_leave_out_nulls() {
        let tool = json!({"name": "t", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "query": {"type": "string"}}}});
        let args = json!({"region": " padded", "priority": 42, "verbose": null, "query": "q"});
        let good = [
            ("mcp-param-region", "=?base64?IHBhZGRlZA==?="),
            ("mcp-param-priority", "42.0"),
        ];
        assert!(param_headers(&tool, Some(&args), lookup(&good), R5).is_empty());
        let extra = [
            ("mcp-param-region", "=?base64?IHBhZGRlZA==?="),
            ("mcp-param-priority", "42"),
            ("mcp-param-verbose", "null"),
        ];
        assert_eq!(
            rules_of(&param_headers(&tool, Some(&args), lookup(&extra), R5)),
            ["client.http-param-headers"]
        );
        let missing = [("mcp-param-priority", "41")];
        assert_eq!(
            rules_of(&param_headers(&tool, Some(&args), lookup(&missing), R5)),
            ["client.http-param-headers", "client.http-param-headers"]
        );
        // A tool with a broken annotation is not judged.
        let broken = json!({"name": "b", "inputSchema": {"type": "object", "properties": {
            "o": {"type": "object", "x-mcp-header": "O"}}}});
        assert!(param_headers(&broken, Some(&json!({"o": {}})), lookup(&[]), R5).is_empty());
    }

    #[test]
    fn calling_a_tool_with_a_broken_annotation_is_judged() {
        let valid = json!({"name": "v", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}}});
        assert!(invalid_tool_called(&valid, R5).is_none());
        let spaced = json!({"name": "s", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "My Region"}}}});
        let f = invalid_tool_called(&spaced, R5).unwrap();
        assert_eq!(f.rule, "client.invalid-tool-excluded");
        assert!(f.message.contains("`s`"), "{}", f.message);
    }

    #[test]
    fn a_refused_version_is_retried_from_the_supported_list() {
        let mut v = VersionRetry::default();
        assert!(v.request(Some("2026-07-28"), R5).is_none());
        v.refused(vec!["2026-07-28".into()]);
        assert!(v.at_end(R5).is_some());
        assert!(v.request(Some("2026-07-28"), R5).is_none());
        assert!(v.at_end(R5).is_none());
        v.refused(vec!["2026-07-28".into()]);
        let f = v.request(Some("1999-01-01"), R5).unwrap();
        assert_eq!(f.rule, "client.version-retry");
        assert_eq!(f.severity, crate::outcome::Severity::Warning);
    }

    fn call(name: &str, extra: Value) -> Value {
        let mut p = json!({"name": name});
        p.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        p
    }

    #[test]
    fn a_retry_echoes_the_state_sends_the_inputs_and_takes_a_new_id() {
        let asked = json!({"resultType": "input_required", "requestState": "s1",
            "inputRequests": {"confirm": {"method": "elicitation/create", "params": {}}}});
        let mut r = Rounds::default();
        r.answered(
            "tools/call",
            Some(&call("echo", json!({}))),
            &json!(1),
            &asked,
        );
        let good = call(
            "echo",
            json!({"requestState": "s1", "inputResponses": {"confirm": {"action": "accept"}}}),
        );
        assert!(
            r.request("tools/call", Some(&good), &json!(2), R5)
                .is_empty()
        );
        // The round is closed: the same state again is used outside its retry.
        assert_eq!(
            rules_of(&r.request("tools/call", Some(&good), &json!(3), R5)),
            ["client.mrtr-isolated"]
        );
        r.answered(
            "tools/call",
            Some(&call("echo", json!({}))),
            &json!(4),
            &asked,
        );
        let bad = call("echo", json!({"requestState": "s2"}));
        assert_eq!(
            rules_of(&r.request("tools/call", Some(&bad), &json!(4), R5)),
            [
                "client.mrtr-retry",
                "client.mrtr-retry",
                "client.mrtr-retry"
            ]
        );
        // No state was sent: the retry must not invent one.
        let stateless = json!({"resultType": "input_required",
            "inputRequests": {"confirm": {"method": "elicitation/create", "params": {}}}});
        r.answered(
            "tools/call",
            Some(&call("plain", json!({}))),
            &json!(5),
            &stateless,
        );
        let invented = call(
            "plain",
            json!({"requestState": "x", "inputResponses": {"confirm": {}}}),
        );
        assert_eq!(
            rules_of(&r.request("tools/call", Some(&invented), &json!(6), R5)),
            ["client.mrtr-retry"]
        );
        // A complete result opens no round.
        r.answered(
            "tools/call",
            Some(&call("done", json!({}))),
            &json!(7),
            &json!({"resultType": "complete", "content": []}),
        );
        assert!(
            r.request("tools/call", Some(&call("done", json!({}))), &json!(8), R5)
                .is_empty()
        );
    }
}
