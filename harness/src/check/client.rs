//! What a client under test must do (`mcpcheck client`): the lifecycle order of its
//! messages, its request ids, the server features it uses, and the HTTP headers on its
//! requests. Pure: facts in, findings out; the mock session gathers the facts.

use std::collections::HashSet;

use serde_json::Value;

use super::{Finding, rules};
use crate::protocol::Revision;

/// Where the client is in the lifecycle, as its messages show it.
#[derive(Clone, Debug, Default)]
pub struct Lifecycle {
    phase: Phase,
    /// Ids of the client's requests so far (as JSON text, so `1` and `"1"` differ).
    ids: HashSet<String>,
    /// The id of its `initialize`, as JSON text.
    initialize: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
enum Phase {
    /// Nothing yet.
    #[default]
    Start,
    /// `initialize` sent, not answered yet.
    Initializing,
    /// `initialize` answered with a result; `notifications/initialized` not seen.
    Answered,
    /// `notifications/initialized` seen.
    Operating,
    /// `initialize` answered with a version no client supports: the client is to
    /// disconnect.
    Unsupported {
        /// The version answered.
        version: String,
        /// A message after it was already judged.
        judged: bool,
    },
}

impl Lifecycle {
    /// A request from the client: whether it may come now, and whether its id is new.
    pub fn request(&mut self, method: &str, id: &Value, revision: Revision) -> Vec<Finding> {
        let mut found = Vec::new();
        if !self.ids.insert(id.to_string()) {
            found.push(
                Finding::new(
                    &rules::CLIENT_REQUEST_ID_UNIQUE,
                    revision,
                    format!("the client reused request id {id} for `{method}`"),
                )
                .pointer("/id")
                .expected("an id not used before by the client in this session"),
            );
        }
        if let Some(f) = self.after_unsupported(method, revision) {
            found.push(f);
            return found;
        }
        if method == "initialize" {
            self.initialize = Some(id.to_string());
        } else if self.initialize == Some(id.to_string()) {
            // The id names a later request now (a reuse, judged above).
            self.initialize = None;
        }
        match (&self.phase, method) {
            (Phase::Start, "initialize") => self.phase = Phase::Initializing,
            (Phase::Start, _) => found.push(
                Finding::new(
                    &rules::CLIENT_INITIALIZE_FIRST,
                    revision,
                    format!("the client's first request is `{method}`, not `initialize`"),
                )
                .pointer("/method")
                .expected("`initialize` before any other request"),
            ),
            (_, "ping") => {}
            // The mock answers `initialize` as it takes it: nothing can come in between.
            (Phase::Initializing, _) => {}
            (Phase::Answered, _) => found.push(
                Finding::new(
                    &rules::CLIENT_INITIALIZED_BEFORE_OPERATION,
                    revision,
                    format!("the client sent `{method}` before `notifications/initialized`"),
                )
                .pointer("/method")
                .expected("`notifications/initialized` first"),
            ),
            (Phase::Operating | Phase::Unsupported { .. }, _) => {}
        }
        found
    }

    /// A notification from the client.
    pub fn notification(&mut self, method: &str, revision: Revision) -> Option<Finding> {
        if let Some(f) = self.after_unsupported(method, revision) {
            return Some(f);
        }
        if method == "notifications/initialized"
            && matches!(self.phase, Phase::Initializing | Phase::Answered)
        {
            self.phase = Phase::Operating;
        }
        None
    }

    /// A `notifications/cancelled` from the client: "Cancellation notifications MUST only
    /// reference requests that: Were previously issued in the same direction" and "The
    /// `initialize` request MUST NOT be cancelled by clients" (cancellation#behavior-requirements).
    /// Whether the request is still in progress is left alone: the two ends may race.
    pub fn cancelled(&self, params: Option<&Value>, revision: Revision) -> Option<Finding> {
        let id = params.and_then(|p| p.get("requestId"));
        let text = id.map(Value::to_string);
        let message = match text {
            // Without `requestId` the schema judges the notification.
            None => return None,
            Some(t) if Some(&t) == self.initialize.as_ref() => {
                format!("the client cancelled its `initialize` (request {t})")
            }
            Some(t) if !self.ids.contains(&t) => {
                format!("the client cancelled request {t}, which it never sent")
            }
            Some(_) => return None,
        };
        Some(
            Finding::new(&rules::CLIENT_CANCEL_IN_FLIGHT, revision, message)
                .pointer("/params/requestId")
                .expected("the id of a request the client sent, other than `initialize`"),
        )
    }

    /// The mock answered `initialize` with a result naming `version`: a known revision, or
    /// one no client supports.
    pub fn initialize_answered(&mut self, version: &str) {
        if self.phase != Phase::Initializing {
            return;
        }
        self.phase = match version.parse::<Revision>() {
            Ok(_) => Phase::Answered,
            Err(_) => Phase::Unsupported {
                version: version.to_owned(),
                judged: false,
            },
        };
    }

    /// The first message after an `initialize` result with a version the client cannot
    /// support: "If the client does not support the version in the server's response, it
    /// SHOULD disconnect" (lifecycle#version-negotiation).
    fn after_unsupported(&mut self, method: &str, revision: Revision) -> Option<Finding> {
        let Phase::Unsupported { version, judged } = &mut self.phase else {
            return None;
        };
        if std::mem::replace(judged, true) {
            return None;
        }
        Some(
            Finding::new(
                &rules::CLIENT_UNSUPPORTED_VERSION_DISCONNECT,
                revision,
                format!(
                    "the server answered `initialize` with version `{version}`, which the client cannot support; the client went on with `{method}`"
                ),
            )
            .pointer("/method")
            .expected("nothing more in this session: the client disconnects"),
        )
    }

    /// At the end of the session: `notifications/initialized` never came after a
    /// successful `initialize`.
    pub fn at_end(&self, revision: Revision) -> Option<Finding> {
        (self.phase == Phase::Answered).then(|| {
            Finding::new(
                &rules::CLIENT_INITIALIZED_SENT,
                revision,
                "`initialize` succeeded, but the client never sent `notifications/initialized`",
            )
            .expected("a `notifications/initialized` notification after the `initialize` result")
        })
    }
}

/// The progress tokens of the client's active requests: "Progress tokens ... MUST be
/// unique across all active requests" (progress#progress-flow). A request stops being
/// active when it is answered or the client cancels it.
#[derive(Clone, Debug, Default)]
pub struct ProgressTokens {
    /// Token (as JSON text, so `1` and `"1"` differ) -> the id of its request.
    active: std::collections::HashMap<String, String>,
}

impl ProgressTokens {
    /// A request `id` from the client with `params`: a token already in use is a finding.
    pub fn request(
        &mut self,
        method: &str,
        params: Option<&Value>,
        id: &Value,
        revision: Revision,
    ) -> Option<Finding> {
        let token = params?.pointer("/_meta/progressToken")?.to_string();
        let Some(other) = self.active.get(&token) else {
            self.active.insert(token, id.to_string());
            return None;
        };
        Some(
            Finding::new(
                &rules::CLIENT_PROGRESS_TOKEN_UNIQUE,
                revision,
                format!(
                    "the client's `{method}` (request {id}) uses progress token {token}, which its request {other} still holds"
                ),
            )
            .pointer("/params/_meta/progressToken")
            .expected("a progress token no active request of the client uses"),
        )
    }

    /// Request `id` was answered or cancelled: its token is free again.
    pub fn done(&mut self, id: &Value) {
        let id = id.to_string();
        self.active.retain(|_, holder| *holder != id);
    }
}

/// The server capability (a top-level key, or `resources.subscribe`) a client request
/// needs, for methods that need one.
pub fn needed_capability(method: &str) -> Option<&'static str> {
    Some(match method {
        "resources/subscribe" | "resources/unsubscribe" => "resources.subscribe",
        "logging/setLevel" => "logging",
        "completion/complete" => "completions",
        m if m.starts_with("tools/") => "tools",
        m if m.starts_with("prompts/") => "prompts",
        m if m.starts_with("resources/") => "resources",
        _ => return None,
    })
}

/// A request for a server feature the server did not declare in `capabilities`.
pub fn undeclared_server_feature(
    method: &str,
    capabilities: &Value,
    revision: Revision,
) -> Option<Finding> {
    let needed = needed_capability(method)?;
    let declared = needed
        .split('.')
        .try_fold(capabilities, |cap, key| cap.get(key))
        .is_some_and(|v| !matches!(v, Value::Null | Value::Bool(false)));
    (!declared).then(|| {
        Finding::new(
            &rules::CLIENT_SERVER_CAPABILITY,
            revision,
            format!("the client sent `{method}`, but the server did not declare `{needed}`"),
        )
        .pointer("/method")
        .expected(format!(
            "no `{method}` unless the server declares `{needed}`"
        ))
    })
}

/// A notification from the client that needs a capability it did not declare in
/// `initialize` ("Only use capabilities that were successfully negotiated",
/// lifecycle#operation; roots: `listChanged` "indicates whether the client will emit
/// notifications when the list of roots changes").
pub fn undeclared_own_feature(
    method: &str,
    declared: &Value,
    revision: Revision,
) -> Option<Finding> {
    let needed = match method {
        "notifications/roots/list_changed" => "roots.listChanged",
        _ => return None,
    };
    let on = needed
        .split('.')
        .try_fold(declared, |cap, key| cap.get(key))
        .is_some_and(|v| v == &Value::Bool(true));
    (!on).then(|| {
        Finding::new(
            &rules::CLIENT_OWN_CAPABILITY,
            revision,
            format!("the client sent `{method}` without declaring `{needed}` in `initialize`"),
        )
        .pointer("/method")
        .expected(format!(
            "`{needed}: true` in the client's capabilities first"
        ))
    })
}

/// A POST whose `Accept` header does not list both JSON and SSE.
pub fn accept(accept: Option<&str>, revision: Revision) -> Option<Finding> {
    let lists = |wanted: &str| {
        accept.is_some_and(|a| {
            a.split(',').any(|part| {
                let media = part.split(';').next().unwrap_or_default().trim();
                media.eq_ignore_ascii_case(wanted)
            })
        })
    };
    (!(lists("application/json") && lists("text/event-stream"))).then(|| {
        let got = accept.map_or_else(
            || "no `Accept` header".to_owned(),
            |a| format!("`Accept: {a}`"),
        );
        Finding::new(
            &rules::CLIENT_HTTP_ACCEPT,
            revision,
            format!("the client POSTed with {got}"),
        )
        .expected("`Accept` listing both `application/json` and `text/event-stream`")
    })
}

/// A request after the server assigned `assigned` that does not carry it.
pub fn session_id(assigned: &str, got: Option<&str>, revision: Revision) -> Option<Finding> {
    (got != Some(assigned)).then(|| {
        let got = got.map_or_else(
            || "no `Mcp-Session-Id`".to_owned(),
            |g| format!("`Mcp-Session-Id: {g}`"),
        );
        Finding::new(
            &rules::CLIENT_HTTP_SESSION_ID,
            revision,
            format!("the client sent {got} after the server assigned `{assigned}`"),
        )
        .expected(format!("`Mcp-Session-Id: {assigned}`"))
    })
}

/// A request after `initialize` without the negotiated `MCP-Protocol-Version` header
/// (2025-06-18 on).
pub fn protocol_version_header(
    negotiated: &str,
    got: Option<&str>,
    revision: Revision,
) -> Option<Finding> {
    if revision < Revision::V2025_06_18 {
        return None;
    }
    match got {
        None => Some(
            Finding::new(
                &rules::CLIENT_HTTP_PROTOCOL_VERSION,
                revision,
                "the client sent no `MCP-Protocol-Version` header after `initialize`",
            )
            .expected(format!("`MCP-Protocol-Version: {negotiated}`")),
        ),
        Some(v) if v.trim() != negotiated => Some(
            Finding::new(
                &rules::CLIENT_HTTP_PROTOCOL_VERSION_NEGOTIATED,
                revision,
                format!(
                    "the client sent `MCP-Protocol-Version: {v}`; `{negotiated}` was negotiated"
                ),
            )
            .expected(format!("`MCP-Protocol-Version: {negotiated}`")),
        ),
        Some(_) => None,
    }
}

/// The client's next request after the server answered its session `expired` with HTTP
/// 404: it "MUST start a new session by sending a new InitializeRequest without a session
/// ID attached" (transports#session-management). `None` for the request: the client
/// never sent one.
pub fn after_expiry(
    expired: &str,
    request: Option<(&str, Option<&str>)>,
    revision: Revision,
) -> Option<Finding> {
    let finding = |message: String| {
        Finding::new(&rules::CLIENT_HTTP_SESSION_EXPIRED, revision, message)
            .expected("a new `initialize` without `Mcp-Session-Id`")
    };
    match request {
        None => Some(finding(format!(
            "the server answered session `{expired}` with HTTP 404; the client never started a new session"
        ))),
        Some(("initialize", None)) => None,
        Some(("initialize", Some(id))) => Some(finding(format!(
            "after HTTP 404 for session `{expired}` the client sent `initialize` with `Mcp-Session-Id: {id}`"
        ))),
        Some((method, _)) => Some(
            finding(format!(
                "after HTTP 404 for session `{expired}` the client sent `{method}`, not a new `initialize`"
            ))
            .pointer("/method"),
        ),
    }
}

/// A GET whose `Accept` header does not list SSE.
pub fn get_accept(accept: Option<&str>, revision: Revision) -> Option<Finding> {
    let lists = accept.is_some_and(|a| {
        a.split(',').any(|part| {
            let media = part.split(';').next().unwrap_or_default().trim();
            media.eq_ignore_ascii_case("text/event-stream")
        })
    });
    (!lists).then(|| {
        let got = accept.map_or_else(
            || "no `Accept` header".to_owned(),
            |a| format!("`Accept: {a}`"),
        );
        Finding::new(
            &rules::CLIENT_HTTP_GET_ACCEPT,
            revision,
            format!("the client sent a GET with {got}"),
        )
        .expected("`Accept` listing `text/event-stream`")
    })
}

/// A resumption of a stream the server closed after `retry`, `waited` after the close:
/// too soon, or without the last event id (`sent`) in `Last-Event-ID`.
pub fn resumption(
    waited: std::time::Duration,
    retry: std::time::Duration,
    last_event_id: Option<&str>,
    sent: &str,
    revision: Revision,
) -> Vec<Finding> {
    let mut found = Vec::new();
    // Timers and the two ends' clocks differ by a few milliseconds: 5 % of slack.
    if waited < retry.mul_f64(0.95) {
        found.push(
            Finding::new(
                &rules::CLIENT_SSE_RETRY,
                revision,
                format!(
                    "the client reconnected {} ms after the stream closed; its `retry` was {} ms",
                    waited.as_millis(),
                    retry.as_millis()
                ),
            )
            .expected(format!(
                "a reconnection no sooner than {} ms",
                retry.as_millis()
            )),
        );
    }
    if last_event_id.map(str::trim) != Some(sent) {
        let got = last_event_id.map_or_else(
            || "no `Last-Event-ID`".to_owned(),
            |v| format!("`Last-Event-ID: {v}`"),
        );
        found.push(
            Finding::new(
                &rules::CLIENT_SSE_LAST_EVENT_ID,
                revision,
                format!("the client resumed the stream with {got}"),
            )
            .expected(format!(
                "`Last-Event-ID: {sent}`, the last event id it received"
            )),
        );
    }
    found
}

/// No reconnection after the server closed a stream before its response; `how` says
/// how the wait ended ("within 10000 ms", "before it exited (exit code 1)").
pub fn no_reconnect(how: &str, revision: Revision) -> Finding {
    Finding::new(
        &rules::CLIENT_SSE_RECONNECT,
        revision,
        format!(
            "the server closed the SSE connection before its response; the client did not reconnect {how}"
        ),
    )
    .expected("a GET with `Last-Event-ID` once `retry` has passed")
}

/// A POST body holding a batch of `len` messages.
pub fn batch(len: usize, revision: Revision) -> Option<Finding> {
    (revision >= Revision::V2025_06_18).then(|| {
        Finding::new(
            &rules::CLIENT_HTTP_SINGLE_MESSAGE,
            revision,
            format!("the client POSTed a batch of {len} messages"),
        )
        .expected("one JSON-RPC message per POST (batches exist only in 2025-03-26)")
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const R4: Revision = Revision::V2025_11_25;

    fn rules_of(found: &[Finding]) -> Vec<&str> {
        found.iter().map(|f| f.rule.as_str()).collect()
    }

    #[test]
    fn the_lifecycle_in_order_breaks_nothing() {
        let mut l = Lifecycle::default();
        assert!(l.request("initialize", &json!(0), R4).is_empty());
        l.initialize_answered("2025-11-25");
        l.notification("notifications/initialized", R4);
        assert!(l.request("tools/list", &json!(1), R4).is_empty());
        assert!(l.at_end(R4).is_none());
    }

    #[test]
    fn each_step_out_of_order_breaks_its_rule() {
        let mut l = Lifecycle::default();
        assert_eq!(
            rules_of(&l.request("tools/list", &json!(0), R4)),
            ["client.initialize-first"]
        );
        let mut l = Lifecycle::default();
        l.request("initialize", &json!(0), R4);
        assert!(l.request("ping", &json!(2), R4).is_empty());
        l.initialize_answered("2025-11-25");
        assert_eq!(
            rules_of(&l.request("tools/call", &json!(3), R4)),
            ["client.initialized-before-operation"]
        );
        assert_eq!(l.at_end(R4).unwrap().rule, "client.initialized-sent");
        assert_eq!(
            rules_of(&l.request("tools/call", &json!(3), R4)),
            [
                "client.request-id-unique",
                "client.initialized-before-operation"
            ]
        );
    }

    #[test]
    fn after_a_version_no_client_supports_the_client_sends_nothing_more() {
        let mut l = Lifecycle::default();
        l.request("initialize", &json!(0), R4);
        l.initialize_answered("1999-01-01");
        let f = l
            .notification("notifications/initialized", R4)
            .expect("judged");
        assert_eq!(f.rule, "client.unsupported-version-disconnect");
        assert_eq!(f.severity, crate::outcome::Severity::Warning);
        // Judged once; and never sending `initialized` is right here.
        assert!(l.request("tools/list", &json!(1), R4).is_empty());
        assert!(l.at_end(R4).is_none());
        // A client that disconnects breaks nothing.
        let mut quiet = Lifecycle::default();
        quiet.request("initialize", &json!(0), R4);
        quiet.initialize_answered("1999-01-01");
        assert!(quiet.at_end(R4).is_none());
    }

    #[test]
    fn after_a_404_the_next_request_is_a_fresh_initialize() {
        assert!(after_expiry("s", Some(("initialize", None)), R4).is_none());
        for next in [
            Some(("initialize", Some("s"))),
            Some(("tools/list", Some("s"))),
            None,
        ] {
            let f = after_expiry("s", next, R4).unwrap();
            assert_eq!(f.rule, "client.http-session-expired", "{next:?}");
        }
    }

    #[test]
    fn a_cancellation_names_a_request_the_client_sent_other_than_initialize() {
        let mut l = Lifecycle::default();
        l.request("initialize", &json!(1), R4);
        l.initialize_answered("2025-11-25");
        l.notification("notifications/initialized", R4);
        l.request("tools/call", &json!(2), R4);
        assert!(l.cancelled(Some(&json!({"requestId": 2})), R4).is_none());
        for bad in [
            json!({"requestId": 1}),
            json!({"requestId": 7}),
            json!({"requestId": "2"}),
        ] {
            let f = l.cancelled(Some(&bad), R4).expect("judged");
            assert_eq!(f.rule, "client.cancel-in-flight");
        }
        assert!(l.cancelled(Some(&json!({})), R4).is_none());
    }

    #[test]
    fn roots_list_changed_needs_roots_list_changed_declared() {
        let method = "notifications/roots/list_changed";
        let on = json!({"roots": {"listChanged": true}});
        assert!(undeclared_own_feature(method, &on, R4).is_none());
        for off in [
            json!({"roots": {}}),
            json!({}),
            json!({"roots": {"listChanged": false}}),
        ] {
            let f = undeclared_own_feature(method, &off, R4).unwrap();
            assert_eq!(f.rule, "client.own-capability-declared");
        }
        assert!(undeclared_own_feature("notifications/initialized", &json!({}), R4).is_none());
    }

    #[test]
    fn a_progress_token_is_free_again_once_its_request_is_done() {
        let mut t = ProgressTokens::default();
        let with = |token: Value| json!({"_meta": {"progressToken": token}});
        assert!(
            t.request("tools/call", Some(&with(json!("p"))), &json!(1), R4)
                .is_none()
        );
        assert!(
            t.request("tools/call", Some(&with(json!(1))), &json!(2), R4)
                .is_none()
        );
        assert!(
            t.request("tools/list", Some(&json!({})), &json!(3), R4)
                .is_none()
        );
        let f = t
            .request("tools/call", Some(&with(json!("p"))), &json!(4), R4)
            .unwrap();
        assert_eq!(f.rule, "client.progress-token-unique");
        t.done(&json!(1));
        assert!(
            t.request("tools/call", Some(&with(json!("p"))), &json!(5), R4)
                .is_none()
        );
    }

    #[test]
    fn ids_of_different_types_are_different_ids() {
        let mut l = Lifecycle::default();
        l.request("initialize", &json!(1), R4);
        assert!(l.request("ping", &json!("1"), R4).is_empty());
    }

    #[test]
    fn server_features_need_their_capability() {
        let caps = json!({"tools": {}, "resources": {"subscribe": false}});
        assert!(undeclared_server_feature("tools/call", &caps, R4).is_none());
        assert!(undeclared_server_feature("ping", &caps, R4).is_none());
        assert!(undeclared_server_feature("resources/read", &caps, R4).is_none());
        let f = undeclared_server_feature("resources/subscribe", &caps, R4).unwrap();
        assert!(f.message.contains("resources.subscribe"), "{}", f.message);
        assert!(undeclared_server_feature("prompts/list", &caps, R4).is_some());
        // A SHOULD before 2025-06-18.
        let old = undeclared_server_feature("prompts/list", &caps, Revision::V2025_03_26).unwrap();
        assert_eq!(old.severity, crate::outcome::Severity::Warning);
    }

    #[test]
    fn accept_must_list_both_types_with_or_without_parameters() {
        assert!(accept(Some("application/json, text/event-stream"), R4).is_none());
        assert!(accept(Some("text/event-stream;q=0.9,APPLICATION/JSON"), R4).is_none());
        assert!(accept(Some("application/json"), R4).is_some());
        assert!(accept(Some("*/*"), R4).is_some());
        assert!(accept(None, R4).is_some());
    }

    #[test]
    fn a_resumption_waits_for_retry_and_names_the_last_event() {
        use std::time::Duration;
        let ms = Duration::from_millis;
        assert!(resumption(ms(510), ms(500), Some("3"), "3", R4).is_empty());
        assert!(
            resumption(ms(480), ms(500), Some("3"), "3", R4).is_empty(),
            "5 % slack"
        );
        let early = resumption(ms(100), ms(500), Some("3"), "3", R4);
        assert_eq!(rules_of(&early), ["client.sse-retry-respected"]);
        let blind = resumption(ms(600), ms(500), None, "3", R4);
        assert_eq!(rules_of(&blind), ["client.sse-last-event-id"]);
        assert_eq!(blind[0].severity, crate::outcome::Severity::Warning);
        assert!(get_accept(Some("text/event-stream"), R4).is_none());
        assert!(get_accept(Some("application/json"), R4).is_some());
    }

    #[test]
    fn session_and_version_headers() {
        assert!(session_id("abc", Some("abc"), R4).is_none());
        assert!(session_id("abc", None, R4).is_some());
        assert!(session_id("abc", Some("abd"), R4).is_some());
        assert!(protocol_version_header("2025-11-25", Some("2025-11-25"), R4).is_none());
        assert_eq!(
            protocol_version_header("2025-11-25", None, R4)
                .unwrap()
                .rule,
            "client.http-protocol-version"
        );
        assert_eq!(
            protocol_version_header("2025-11-25", Some("2025-06-18"), R4)
                .unwrap()
                .severity,
            crate::outcome::Severity::Warning
        );
        // The header exists from 2025-06-18 on.
        assert!(protocol_version_header("2025-03-26", None, Revision::V2025_03_26).is_none());
    }
}
