//! Rules of the stateless revision (2026-07-28): `server/discover` answers for a supported
//! version, every result's `resultType` is a core one, the server sends no requests of its
//! own, and logs only for requests that ask. Pure: a message in, findings out.

use serde_json::Value;

use super::{Finding, rules};
use crate::protocol::{ErrorObject, Revision, pointer_token};

use crate::protocol::codes::{MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION};

/// The `resultType` values of the core protocol (2026-07-28 basic#resulttype); any other
/// value "MUST be considered invalid" by a client that advertises no extension adding it.
pub const RESULT_TYPES: [&str; 2] = ["complete", "input_required"];

/// `_meta` key naming the `subscriptions/listen` request a notification belongs to.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// A default `server/discover` for `requested` answered with `error`.
pub fn discover_failed(requested: &str, error: &ErrorObject, revision: Revision) -> Finding {
    let detail = if error.code == UNSUPPORTED_PROTOCOL_VERSION {
        let supported = error
            .data
            .as_ref()
            .and_then(|d| d.get("supported"))
            .map(Value::to_string)
            .unwrap_or_else(|| "(no `data.supported`)".into());
        format!(" (UnsupportedProtocolVersionError: the server supports {supported})")
    } else {
        // 2026-07-28 basic/transports/stdio#backward-compatibility: any other
        // error is what a handshake-only server answers.
        "; this is how a server that knows only the handshake revisions answers: `--protocol-version auto` asks it what it supports".into()
    };
    Finding::new(
        &rules::STATELESS_DISCOVER,
        revision,
        format!(
            "`server/discover` for {requested} failed with error {} \"{}\"{detail}",
            error.code, error.message
        ),
    )
    .expected("a DiscoverResult listing the requested version in `supportedVersions`")
}

/// `_meta` key of a request: the lowest log level the client wants for it.
pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// A request `method` the server sent: at a revision without a handshake there are none
/// (2026-07-28 basic/patterns/mrtr: server-to-client requests MUST use the MRTR pattern).
pub fn server_request(method: &str, revision: Revision) -> Option<Finding> {
    (!revision.has_handshake()).then(|| {
        Finding::new(
            &rules::STATELESS_NO_SERVER_REQUESTS,
            revision,
            format!("the server sent a `{method}` request; in {revision} servers send no requests, they return an `input_required` result whose `inputRequests` carry them"),
        )
        .expected("no server-to-client request: an InputRequiredResult instead")
    })
}

/// The log levels (RFC 5424 severities), lowest first (2026-07-28 server/utilities/logging).
pub const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// Where `level` stands in [`LOG_LEVELS`]; `None` for no level of the protocol.
pub fn log_rank(level: &str) -> Option<usize> {
    LOG_LEVELS.iter().position(|l| *l == level)
}

/// A `notifications/message` with `params`, when the lowest log level any request sent so
/// far asked for is `lowest` (`None`: no request set one). 2026-07-28
/// server/utilities/logging#per-request-log-level: the server "MUST NOT emit
/// `notifications/message` for a request that does not include this field" (with no such
/// request, the message can belong to none that asked), and "MAY send" messages "at or
/// above the requested level".
pub fn log_message(
    params: Option<&Value>,
    lowest: Option<usize>,
    revision: Revision,
) -> Option<Finding> {
    if revision.has_handshake() {
        return None;
    }
    let Some(lowest) = lowest else {
        return Some(
            Finding::new(
                &rules::STATELESS_LOG_REQUESTED_ONLY,
                revision,
                format!("the server sent `notifications/message`, but no request mcpcheck sent set `{LOG_LEVEL}` in its `_meta`"),
            )
            .expected("log messages only for requests that set a log level"),
        );
    };
    let level = params
        .and_then(|p| p.get("level"))
        .and_then(Value::as_str)?;
    let rank = log_rank(level)?;
    (rank < lowest).then(|| {
        Finding::new(
            &rules::STATELESS_LOG_AT_OR_ABOVE_LEVEL,
            revision,
            format!("the server sent a `{level}` log message, below `{}`, the lowest level any request asked for", LOG_LEVELS[lowest]),
        )
        .pointer("/params/level")
        .expected(format!("a level of `{}` or above", LOG_LEVELS[lowest]))
    })
}

/// The requests an `InputRequiredResult` may answer (2026-07-28 basic/patterns/mrtr#supported-requests).
pub const INPUT_REQUIRED_METHODS: [&str; 3] = ["tools/call", "prompts/get", "resources/read"];

/// Checks an `input_required` result to a `method` request that declared the client
/// capabilities `declared` (2026-07-28 basic/patterns/mrtr, server requirements: "MUST NOT
/// send InputRequiredResult responses on any other client requests", "MUST include at least
/// one of inputRequests or requestState", "MUST NOT send an inputRequests that the client
/// has not declared support for"). Any other result: nothing.
pub fn input_required(
    method: &str,
    result: &Value,
    declared: &Value,
    revision: Revision,
    base: &str,
) -> Vec<Finding> {
    if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
        return Vec::new();
    }
    let finding = |message: String, pointer: &str| {
        Finding::new(&rules::STATELESS_INPUT_REQUIRED, revision, message)
            .pointer(format!("{base}/result{pointer}"))
    };
    let mut findings = Vec::new();
    if !INPUT_REQUIRED_METHODS.contains(&method) {
        findings.push(
            finding(
                format!("`{method}` was answered with an `input_required` result"),
                "/resultType",
            )
            .expected("input_required only for tools/call, prompts/get or resources/read"),
        );
    }
    let requests = result.get("inputRequests").and_then(Value::as_object);
    if requests.is_none() && result.get("requestState").is_none() {
        findings.push(
            finding(
                "the `input_required` result has neither `inputRequests` nor `requestState`".into(),
                "",
            )
            .expected("at least one of inputRequests and requestState"),
        );
    }
    for (key, request) in requests.into_iter().flatten() {
        let Some(needs) = capability_asked(request) else {
            continue;
        };
        let asked = request["method"].as_str().unwrap_or_default();
        let at = format!("{base}/result/inputRequests/{}", pointer_token(key));
        if declared.get(needs).is_none() {
            findings.push(
                finding(
                    format!("`inputRequests` asks for `{asked}`, but the request declared no `{needs}` capability"),
                    &format!("/inputRequests/{}", pointer_token(key)),
                )
                .expected(format!("no {asked} without the client's {needs} capability")),
            );
        } else if let Some(f) = super::capabilities::undeclared_sub_feature(
            asked,
            request.get("params"),
            declared,
            revision,
            &at,
        ) {
            findings.push(f);
        }
    }
    findings
}

/// Checks a MissingRequiredClientCapabilityError answering a request that declared the
/// client capabilities `declared` (2026-07-28 basic#meta: the server "MUST return a
/// MissingRequiredClientCapabilityError (-32021) whose `data.requiredCapabilities` lists the
/// missing capabilities"): an object of capability objects, not empty, naming none the
/// request declared. Any other error: nothing.
pub fn missing_capability(
    error: &ErrorObject,
    declared: &Value,
    revision: Revision,
    base: &str,
) -> Vec<Finding> {
    if error.code != MISSING_REQUIRED_CLIENT_CAPABILITY || revision.has_handshake() {
        return Vec::new();
    }
    let finding = |message: String, pointer: &str| {
        Finding::new(
            &rules::STATELESS_MISSING_CAPABILITY_ERROR,
            revision,
            message,
        )
        .pointer(format!("{base}/error/data{pointer}"))
    };
    let required = error
        .data
        .as_ref()
        .and_then(|d| d.get("requiredCapabilities"));
    let Some(required) = required.and_then(Value::as_object) else {
        let got = required.map_or("nothing".into(), |v| {
            crate::protocol::text::quote(&v.to_string(), 80)
        });
        return vec![
            finding(
                format!("MissingRequiredClientCapabilityError (-32021) without an object in `data.requiredCapabilities` (it holds {got}): the client cannot tell what to declare"),
                "",
            )
            .expected("`data.requiredCapabilities`: a ClientCapabilities object naming the missing capabilities, e.g. {\"sampling\": {}}"),
        ];
    };
    if required.is_empty() {
        return vec![
            finding(
                "MissingRequiredClientCapabilityError (-32021) whose `data.requiredCapabilities` names no capability".into(),
                "/requiredCapabilities",
            )
            .expected("the missing capabilities listed"),
        ];
    }
    let mut findings = Vec::new();
    for (name, value) in required {
        let at = format!("/requiredCapabilities/{}", pointer_token(name));
        if !value.is_object() {
            findings.push(
                finding(
                    format!("`requiredCapabilities.{name}` is {value}, not a capability object"),
                    &at,
                )
                .expected("a ClientCapabilities object: each capability an object"),
            );
        } else if declared.get(name).is_some() && value.as_object().is_some_and(|v| v.is_empty()) {
            findings.push(
                finding(
                    format!("`requiredCapabilities` names `{name}`, which the request declared"),
                    &at,
                )
                .expected("only capabilities the request did not declare"),
            );
        }
    }
    findings
}

/// The client feature an input request asks for, by its method.
fn capability_asked(request: &Value) -> Option<&'static str> {
    match request.get("method").and_then(Value::as_str)? {
        "elicitation/create" => Some("elicitation"),
        "sampling/createMessage" => Some("sampling"),
        "roots/list" => Some("roots"),
        _ => None,
    }
}

/// An `input_required` result that asks for a client feature this request did not declare
/// but an earlier request on the connection did (`earlier`: capabilities declared before,
/// merged): the server carried the earlier request's capabilities over (2026-07-28
/// basic#statelessness: "Servers MUST NOT rely on prior requests over the same connection
/// to establish context (e.g., capabilities ...)").
pub fn carried_capabilities(
    result: &Value,
    declared: &Value,
    earlier: &Value,
    revision: Revision,
    base: &str,
) -> Vec<Finding> {
    if result.get("resultType").and_then(Value::as_str) != Some("input_required") {
        return Vec::new();
    }
    let requests = result.get("inputRequests").and_then(Value::as_object);
    requests
        .into_iter()
        .flatten()
        .filter_map(|(key, request)| {
            let needs = capability_asked(request)?;
            (declared.get(needs).is_none() && earlier.get(needs).is_some()).then(|| {
                Finding::new(
                    &rules::STATELESS_NO_CARRIED_CONTEXT,
                    revision,
                    format!("`inputRequests` asks for the `{needs}` capability, which this request did not declare but an earlier request on the connection did"),
                )
                .pointer(format!(
                    "{base}/result/inputRequests/{}",
                    pointer_token(key)
                ))
                .expected("each request judged by the capabilities in its own `_meta`")
            })
        })
        .collect()
}

/// Notifications that report a change: at 2026-07-28 only a `subscriptions/listen` stream
/// that asked for them carries them.
pub const CHANGE_NOTIFICATIONS: [&str; 4] = [
    "notifications/tools/list_changed",
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
];

/// A notification of a subscription stream (its acknowledgment, a change notification) after
/// the `subscriptions/listen` requests `listens` (their ids): it must name one of them in
/// `_meta` (2026-07-28 basic/patterns/subscriptions#receiving-notifications: "All
/// notifications delivered on the stream carry `io.modelcontextprotocol/subscriptionId` in
/// `_meta`, identifying the `subscriptions/listen` request that opened the stream. The value
/// is the JSON-RPC ID of the `subscriptions/listen` request"; on stdio clients "MUST use this
/// field to correlate"). No listen sent: [`change_notification`] judges instead.
pub fn subscription_id(
    method: &str,
    params: Option<&Value>,
    listens: &[Value],
    revision: Revision,
    base: &str,
) -> Option<Finding> {
    let on_stream = method == "notifications/subscriptions/acknowledged"
        || CHANGE_NOTIFICATIONS.contains(&method);
    if revision.has_handshake() || !on_stream || listens.is_empty() {
        return None;
    }
    let named = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(SUBSCRIPTION_ID));
    let sent = || {
        listens
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let message = match named {
        None => format!(
            "`{method}` carries no `{SUBSCRIPTION_ID}` in its `_meta`: the client cannot tell which subscription it belongs to"
        ),
        Some(id) if listens.contains(id) => return None,
        Some(id) => format!(
            "`{method}` names subscription {id}, but no `subscriptions/listen` had that id (sent: {})",
            sent()
        ),
    };
    Some(
        Finding::new(&rules::STATELESS_SUBSCRIPTION_ID, revision, message)
            .pointer(format!("{base}/params/_meta"))
            .expected(format!(
                "`{SUBSCRIPTION_ID}`: the id of the `subscriptions/listen` request ({})",
                sent()
            )),
    )
}

/// A change notification `method` while no `subscriptions/listen` was sent
/// (2026-07-28 basic/patterns/subscriptions#opening-a-stream: "The server MUST NOT send
/// notification types the client has not explicitly requested").
pub fn change_notification(method: &str, listening: bool, revision: Revision) -> Option<Finding> {
    (!revision.has_handshake() && !listening && CHANGE_NOTIFICATIONS.contains(&method)).then(|| {
        Finding::new(
            &rules::STATELESS_CHANGE_NOTIFICATIONS_REQUESTED,
            revision,
            format!("the server sent `{method}`, but mcpcheck opened no `subscriptions/listen` stream asking for it"),
        )
        .expected("change notifications only on a subscriptions/listen stream that requested them")
    })
}

/// A successful `server/discover` whose `supportedVersions` (an array) leaves out `requested`.
pub fn discover_unlisted(requested: &str, revision: Revision) -> Finding {
    Finding::new(
        &rules::LIFECYCLE_VERSION,
        revision,
        format!(
            "`server/discover` for {requested} succeeded, yet `supportedVersions` does not list {requested}; a server that does not implement the requested version must answer with UnsupportedProtocolVersionError (-32022)"
        ),
    )
    .pointer("/result/supportedVersions")
}

/// What the `resultType` of a result says.
#[derive(Debug, Default, PartialEq)]
pub struct ResultType {
    /// The definition to validate the result against instead of the method's own result
    /// (`InputRequiredResult`).
    pub definition: Option<String>,
    /// A `resultType` no core value and no advertised extension allows.
    pub finding: Option<Finding>,
}

/// Checks `resultType` of a result found at `base` (2026-07-28 basic#resulttype). A missing
/// one is a schema violation, reported there.
pub fn result_type(result: &Value, revision: Revision, base: &str) -> ResultType {
    match result.get("resultType") {
        Some(Value::String(t)) if t == "input_required" => ResultType {
            definition: Some("InputRequiredResult".into()),
            finding: None,
        },
        Some(Value::String(t)) if RESULT_TYPES.contains(&t.as_str()) => ResultType::default(),
        Some(Value::String(t)) => ResultType {
            definition: None,
            finding: Some(
                Finding::new(
                    &rules::STATELESS_RESULT_TYPE,
                    revision,
                    format!("`resultType` is \"{t}\", which is not a core result type and mcpcheck advertises no extension"),
                )
                .pointer(format!("{base}/result/resultType"))
                .expected("\"complete\" or \"input_required\""),
            ),
        },
        _ => ResultType::default(),
    }
}

#[cfg(test)]
mod tests;
