//! Which scenarios may run on a server session shared with other scenarios.
//!
//! Starting a server per scenario dominates a run against a slow-starting server (a
//! Python or Node one), so the runner keeps a session per worker for the scenarios that
//! cannot tell the difference: those that use the default handshake and then only send
//! requests that change nothing another scenario could see, notifications a server acts
//! on by changing nothing, raw input it must survive, and silence after their own action.
//! Anything else (a handshake of its own, other notifications, waits for what the server
//! does on its own, an exit, stderr, HTTP exchanges, sleeps, methods that set state) gets a
//! fresh server, as does every scenario that says `fresh: true`.
//!
//! A scenario with its own `rule` also runs fresh, unless only its own later requests can
//! break that rule: the session's checks of that rule count for it, and on a shared
//! session the handshake and the shutdown happen in other scenarios' windows.
//!
//! At 2026-07-28 there is no handshake: the default `server/discover` plays its part (in
//! the window of the scenario that opened the session), and every request carries its
//! own `_meta`, so a session serves the next scenario just as well.

use super::builtin_vars::PROBE;
use super::model::{Expectation, Step, StepKind, Template};
use super::model::{Initialize, InitializeOverrides, RequestStep, ResponseExpectation, Scenario};
use crate::outcome::ToolPolicy;
use crate::protocol::{RequestId, Revision};
use serde_json::Value;

/// Requests that read and never write: answering them changes nothing a later request
/// sees (`server/discover`, 2026-07-28, is the stateless revision's handshake in a
/// request). Methods under `mcpcheck/` do not exist; a server answers them with an error.
const READ_ONLY: &[&str] = &[
    "ping",
    "server/discover",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
];

/// Why a scenario needs a server of its own, or `None` when it may share one.
///
/// `tools/call` may share only when no tool can be called that might change state:
/// under `--call-tools none` (nothing is called) or `readonly` without `--tool-args`
/// (only tools annotated `readOnlyHint: true`, which "does not modify its environment").
pub fn needs_fresh(
    scenario: &Scenario,
    revision: Revision,
    policy: ToolPolicy,
    tool_args: bool,
) -> Option<String> {
    if scenario.fresh {
        return Some("it says `fresh: true`".into());
    }
    if let Some(rule) = scenario
        .rule
        .as_deref()
        .filter(|r| !own_requests_only(r, revision))
        .filter(|r| !(closes_session(scenario) && *r == crate::check::rules::STDIO_SHUTDOWN.id))
    {
        return Some(format!(
            "it judges `{rule}`, which the handshake or the shutdown may break"
        ));
    }
    let (first, rest) = scenario.steps.split_first()?;
    // Expectations of the default handshake are checked on the answer the shared session
    // kept; a handshake with other parameters is the scenario's own.
    match &first.kind {
        StepKind::Initialize(Initialize::Handshake(o))
            if *o
                == (InitializeOverrides {
                    expect: o.expect.clone(),
                    protocol_version: asks_spoken(o, revision).then(|| {
                        o.protocol_version
                            .clone()
                            .expect("asks_spoken saw a version")
                    }),
                    ..Default::default()
                }) => {}
        // At 2026-07-28 the client's capabilities travel in each request's `_meta`: other
        // ones change only the scenario's own requests. It may take a shared session, and
        // retires it (see `exec::declares_own_capabilities`).
        StepKind::Initialize(Initialize::Handshake(o))
            if !revision.has_handshake()
                && *o
                    == (InitializeOverrides {
                        expect: o.expect.clone(),
                        capabilities: o.capabilities.clone(),
                        ..Default::default()
                    }) => {}
        // At 2026-07-28 "no handshake" only means that no `server/discover` comes first;
        // a stateless server serves a request the same whatever came before it. A scenario
        // about being the first request says `fresh: true`.
        StepKind::Initialize(Initialize::None) if !revision.has_handshake() => {}
        _ => return Some(format!("line {}: a handshake of its own", first.line)),
    }
    let calls_ok = match policy {
        ToolPolicy::None => true,
        ToolPolicy::Readonly => !tool_args,
        ToolPolicy::All => false,
    };
    // Ids it chooses itself next to ids the session allocates are fine: the session
    // reserves the scenario's own for the scenario (`Session::reserve_ids`).
    steps_need_fresh(
        rest,
        &Allowed {
            top: true,
            calls_ok,
            revision,
        },
    )
}

/// Whether the scenario ends its session itself: its last step closes the server's input
/// and waits for the exit (`stdio/exit-on-stdin-close`). On a shared session the shutdown
/// is then in its window, as on a fresh one; the runner starts such scenarios after the
/// other shared ones, so the session it ends is one no one else wanted any more.
pub fn closes_session(scenario: &Scenario) -> bool {
    matches!(
        scenario.steps.last().map(|s| &s.kind),
        Some(StepKind::Expect(Expectation::Exit { .. }))
    )
}

/// Whether the handshake asks, in so many words, for the revision the run speaks: the
/// default handshake at a revision with one (`lifecycle/version-echo-2025-11-25` on the
/// 2025-11-25 leg).
fn asks_spoken(o: &InitializeOverrides, revision: Revision) -> bool {
    revision.has_handshake()
        && o.protocol_version
            .as_ref()
            .and_then(|t| t.0.as_str())
            .is_some_and(|v| v == revision.as_str())
}

/// Notifications a server acts on by changing nothing: one no server implements (under
/// `notifications/mcpcheck/`) and a cancellation (of nothing in flight: a shared session
/// has no request outstanding when a scenario starts).
fn inert_notification(method: &Template) -> bool {
    method.0.as_str().is_some_and(|m| {
        m == "notifications/cancelled"
            || (m.starts_with("notifications/mcpcheck/") && !m.contains("${"))
    })
}

/// What a shared scenario's requests may be, beyond the read-only methods.
#[derive(Clone, Copy)]
struct Allowed {
    /// Whether these are the scenario's own steps (not a loop's), where the last may end
    /// the session.
    top: bool,
    /// Whether `tools/call` can change nothing (see [`needs_fresh`]).
    calls_ok: bool,
    /// The revision spoken, which decides what `${probe}` is.
    revision: Revision,
}

/// Rules that only answers to requests a scenario sends itself can break (pages,
/// completions, unknown methods): never the handshake, never the shutdown.
fn own_requests_only(rule: &str, revision: Revision) -> bool {
    rule.starts_with("pagination.")
        || rule.starts_with("completion.")
        || rule == "jsonrpc.method-not-found-code"
        || rule == "jsonrpc.unknown-method-is-error"
        // Only a batch makes a batch answer: the scenario's own.
        || rule == crate::check::rules::JSONRPC_BATCH.id
        || handshake_cannot_hide(rule)
        || (!revision.has_handshake() && stateless_per_request(rule))
}

/// 2026-07-28 rules judged on what the server sends while answering a request (its
/// result, the logs, server requests and change notifications that travel with it):
/// with no handshake and nothing carried between requests, only the scenario's own
/// requests can break them.
fn stateless_per_request(rule: &str) -> bool {
    use crate::check::rules::*;
    [
        STATELESS_INPUT_REQUIRED,
        STATELESS_LOG_AT_OR_ABOVE_LEVEL,
        STATELESS_LOG_REQUESTED_ONLY,
        STATELESS_NO_SERVER_REQUESTS,
        STATELESS_CHANGE_NOTIFICATIONS_REQUESTED,
        STATELESS_MISSING_CAPABILITY_ERROR,
        TOOLS_X_MCP_HEADER,
    ]
    .iter()
    .any(|r| r.id == rule)
}

/// MUST-level rules of answers (and of the version the handshake negotiated, checked on the
/// answer a shared session kept): a session with a failure in its window is never shared
/// (`Session::reusable`), so a shared session's handshake broke none of them, and nothing
/// is pending when a shared scenario ends, so no answer of its own comes at a shutdown.
/// A wrong id can depend on the ids the session used before (the misbehaving fixture's
/// `stale-ping-id` answers with the previous ping's): each `jsonrpc.id-echoed` scenario
/// sends a request of its own before the id it tests, so it sees such an answer on a
/// fresh server as on a shared one.
fn handshake_cannot_hide(rule: &str) -> bool {
    use crate::check::rules::{
        JSONRPC_ERROR_SHAPE, JSONRPC_ID_ECHOED, LIFECYCLE_VERSION, SCHEMA_VALID,
    };
    [
        JSONRPC_ERROR_SHAPE.id,
        JSONRPC_ID_ECHOED.id,
        LIFECYCLE_VERSION.id,
        SCHEMA_VALID.id,
    ]
    .contains(&rule)
}

/// The ids a scenario's requests choose themselves, as they go on the wire: a shared
/// session that already used one of them (a request may not reuse an id within a session,
/// basic#requests) cannot serve the scenario.
pub fn explicit_ids(scenario: &Scenario) -> Vec<RequestId> {
    fn walk(steps: &[Step], out: &mut Vec<RequestId>) {
        for step in steps {
            match &step.kind {
                StepKind::Request(r) => out.extend(r.id.as_ref().and_then(request_id)),
                StepKind::Concurrent(rs) => {
                    out.extend(rs.iter().filter_map(|r| r.id.as_ref().and_then(request_id)))
                }
                StepKind::ForEach { steps, .. } => walk(steps, out),
                // The answer to a request of its own raw bytes.
                StepKind::Expect(Expectation::Response { id, .. }) => out.extend(request_id(id)),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(&scenario.steps, &mut out);
    out
}

/// An explicit id as the executor sends it; `None` for one that is neither a string nor
/// a number (the executor reports it as an error).
fn request_id(id: &Value) -> Option<RequestId> {
    match id {
        Value::String(s) => Some(RequestId::String(s.clone())),
        Value::Number(n) => Some(RequestId::Number(n.to_string())),
        _ => None,
    }
}

fn steps_need_fresh(steps: &[Step], allowed: &Allowed) -> Option<String> {
    let last = steps.len().saturating_sub(1);
    steps.iter().enumerate().find_map(|(at, step)| {
        let why = match &step.kind {
            StepKind::Request(r) => request_needs_fresh(r, allowed),
            StepKind::Concurrent(rs) => rs.iter().find_map(|r| request_needs_fresh(r, allowed)),
            StepKind::Paginate { method, .. } => method_needs_fresh(method, allowed),
            StepKind::ForEach { steps, .. } => {
                let inner = Allowed {
                    top: false,
                    ..*allowed
                };
                return steps_need_fresh(steps, &inner);
            }
            StepKind::Check { .. } => None,
            StepKind::Initialize(_) => Some("a second handshake".into()),
            StepKind::Notify { method, .. } if !inert_notification(method) => {
                Some("a notification".into())
            }
            StepKind::Notify { .. } => None,
            // Silence after the scenario's own action, or no answer to its own notification
            // (only a null id could answer one): nothing another scenario left is pending.
            StepKind::Expect(Expectation::Nothing { .. }) => None,
            StepKind::Expect(Expectation::Response {
                id: Value::Null, ..
            }) => None,
            // The answer to a request of its own raw bytes, by an id no one else used (see
            // [`explicit_ids`]); another id is an error the executor reports.
            StepKind::Expect(Expectation::Response { id, .. }) if request_id(id).is_some() => None,
            // Malformed or odd input a server must survive: the scenario checks that it
            // answers and goes on serving, and a session that is left with a request
            // unanswered, a partial line or a MUST broken is retired (`Session::reusable`).
            StepKind::SendRaw(_) => None,
            // The end of the session, as its last step (see [`closes_session`]).
            StepKind::Expect(Expectation::Exit { .. }) if at == last && allowed.top => None,
            StepKind::Expect(_) => Some("a wait for what the server does on its own".into()),
            // Memory growth per request of its own burst: the requests before it on the
            // session are not in the measured half, and no other scenario runs on the
            // session meanwhile.
            StepKind::Burst { .. } => None,
            // A pause for what its own requests cause (the later answers of a batch, the
            // logs of a tool call): like silence after its own action.
            StepKind::Sleep(_) => None,
            StepKind::Http(_) | StepKind::Auth(_) => Some("an HTTP exchange".into()),
            StepKind::Negotiate(_) => Some("sessions of its own (version negotiation)".into()),
        };
        why.map(|why| format!("line {}: {why}", step.line))
    })
}

fn request_needs_fresh(r: &RequestStep, allowed: &Allowed) -> Option<String> {
    // An explicit id is fine: the runner hands the scenario only a session that has not
    // used it (see [`explicit_ids`]), and the session's own ids skip it afterwards.
    if r.id.as_ref().is_some_and(|id| request_id(id).is_none()) {
        return Some("a request id that is neither a string nor a number".into());
    }
    if matches!(r.expect, Some(ResponseExpectation::Nothing(_))) {
        return Some("a request that must go unanswered".into());
    }
    match r.method.0.as_str() {
        Some(m) => method_needs_fresh(m, allowed),
        None => Some("a method that is not a string".into()),
    }
}

fn method_needs_fresh(method: &str, allowed: &Allowed) -> Option<String> {
    // `${probe}` is `ping` on every revision with a handshake, `server/discover` on one
    // without (see `builtin_vars`).
    let method = match method == format!("${{{PROBE}}}") {
        true if allowed.revision.has_handshake() => "ping",
        true => "server/discover",
        false => method,
    };
    let read_only = READ_ONLY.contains(&method)
        || (method.starts_with("mcpcheck/") && !method.contains("${"))
        || (method == "tools/call" && allowed.calls_ok);
    (!read_only).then(|| format!("`{method}` may change what others see"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::builtin;

    fn parse(yaml: &str) -> Scenario {
        crate::scenario::parse::parse_scenario("test.yaml", yaml).expect("a valid scenario")
    }

    fn verdict(yaml: &str) -> Option<String> {
        needs_fresh(&parse(yaml), Revision::DEFAULT, ToolPolicy::Readonly, false)
    }

    const HEAD: &str = "id: a/b\ntitle: t\nspec: basic\n";

    #[test]
    fn reads_share_and_writes_do_not() {
        let read = format!(
            "{HEAD}steps:\n  - paginate: {{ method: tools/list, into: tools }}\n  - for_each:\n      in: tools\n      as: t\n      steps:\n        - check: {{ value: \"${{t}}\", match: {{ /name: {{ type: string }} }} }}\n  - request: \"${{probe}}\"\n"
        );
        assert_eq!(verdict(&read), None);
        let set_level = format!(
            "{HEAD}steps:\n  - request: {{ method: logging/setLevel, params: {{ level: debug }} }}\n"
        );
        assert!(verdict(&set_level).unwrap().contains("logging/setLevel"));
        let subscribe = format!(
            "{HEAD}steps:\n  - paginate: {{ method: resources/list, into: x }}\n  - for_each:\n      in: x\n      as: y\n      steps:\n        - request: resources/subscribe\n"
        );
        assert!(verdict(&subscribe).unwrap().contains("resources/subscribe"));
    }

    #[test]
    fn handshakes_waits_raw_bytes_and_ids_need_a_fresh_server() {
        let cases = [
            "  - initialize: none\n",
            "  - initialize: { protocol_version: 1999-01-01 }\n",
            "  - notify: notifications/roots/list_changed\n",
            "  - request: ping\n    expect: { nothing: 1s }\n",
            "  - expect: { notification: { method: notifications/message, within: 1s } }\n",
        ];
        for steps in cases {
            let yaml = format!("{HEAD}steps:\n{steps}");
            assert!(verdict(&yaml).is_some(), "shared: {steps}");
        }
        // Notifications a server changes nothing for, and silence after the scenario's
        // own action, share.
        let inert = [
            "  - notify: notifications/mcpcheck/x\n  - expect: { response: { id: null, within: 1s, nothing: 1s } }\n",
            "  - notify: { method: notifications/cancelled, params: { requestId: x } }\n  - expect: { nothing: 500ms }\n",
            "  - request: ping\n  - expect: { nothing: 1s }\n",
            "  - request: tools/list\n  - sleep: 10ms\n",
            // The answer to its own raw request, and a burst of its own.
            "  - send_raw: \"{}\"\n  - expect: { response: { id: raw-1, within: 1s, result: {} } }\n",
            "  - burst: { method: ping, count: 10 }\n",
        ];
        for steps in inert {
            let yaml = format!("{HEAD}steps:\n{steps}");
            assert_eq!(verdict(&yaml), None, "fresh: {steps}");
        }
        let fresh = format!("{HEAD}fresh: true\nsteps:\n  - request: ping\n");
        assert_eq!(verdict(&fresh).as_deref(), Some("it says `fresh: true`"));
        let ruled = format!("{HEAD}rule: stdio.stdout-only-messages\nsteps:\n  - request: ping\n");
        assert!(verdict(&ruled).is_some());
        let paged = format!("{HEAD}rule: pagination.terminates\nsteps:\n  - request: ping\n");
        assert_eq!(verdict(&paged), None);
        let batch = format!("{HEAD}rule: jsonrpc.batch-allowed\nsteps:\n  - request: ping\n");
        assert_eq!(
            verdict(&batch),
            None,
            "only its own batch gets a batch answer"
        );
        let errors = format!("{HEAD}rule: jsonrpc.error-object\nsteps:\n  - request: ping\n");
        assert_eq!(
            verdict(&errors),
            None,
            "a MUST of answers: the handshake hides none"
        );
        let echoed = format!("{HEAD}rule: jsonrpc.id-echoed\nsteps:\n  - request: ping\n");
        assert_eq!(verdict(&echoed), None, "the handshake hides no wrong id");
        // At 2026-07-28 the rules of what travels with an answer are the scenario's own.
        let logs =
            format!("{HEAD}rule: stateless.log-requested-only\nsteps:\n  - request: tools/list\n");
        let at = |rev| needs_fresh(&parse(&logs), rev, ToolPolicy::Readonly, false);
        assert_eq!(at(Revision::V2026_07_28), None);
        assert!(at(Revision::DEFAULT).is_some());
    }

    /// At 2026-07-28 a scenario's own client capabilities go in its requests' `_meta`, so
    /// it shares; with a handshake they are the session's, so it does not.
    #[test]
    fn own_client_capabilities_share_only_without_a_handshake() {
        let yaml = format!(
            "{HEAD}steps:\n  - initialize: {{ capabilities: {{ elicitation: {{}} }} }}\n  - request: tools/list\n"
        );
        let at = |rev| needs_fresh(&parse(&yaml), rev, ToolPolicy::Readonly, false);
        assert_eq!(at(Revision::V2026_07_28), None);
        assert!(
            at(Revision::DEFAULT)
                .unwrap()
                .contains("a handshake of its own")
        );
        let version = yaml.replace(
            "capabilities: { elicitation: {} }",
            "capabilities: { elicitation: {} }, protocol_version: \"2025-06-18\"",
        );
        let own = needs_fresh(
            &parse(&version),
            Revision::V2026_07_28,
            ToolPolicy::Readonly,
            false,
        );
        assert!(own.is_some(), "its own version is its own handshake");
    }

    /// The default handshake's expectations are checked on the answer the session kept;
    /// a handshake with other parameters is the scenario's own.
    #[test]
    fn expectations_of_the_default_handshake_share() {
        let expect = format!(
            "{HEAD}steps:\n  - initialize:\n    expect: {{ result: {{ /serverInfo: {{ type: object }} }} }}\n  - request: ping\n"
        );
        assert_eq!(verdict(&expect), None);
        let asked = format!(
            "{HEAD}steps:\n  - initialize: {{ protocol_version: 2025-06-18 }}\n    expect: {{ result: {{}} }}\n"
        );
        assert!(verdict(&asked).unwrap().contains("a handshake of its own"));
        // Asking, in so many words, for the revision spoken is the default handshake.
        let spoken = asked.replace("2025-06-18", Revision::DEFAULT.as_str());
        assert_eq!(verdict(&spoken), None);
        let later = needs_fresh(
            &parse(&spoken),
            Revision::V2025_06_18,
            ToolPolicy::Readonly,
            false,
        );
        assert!(later.is_some(), "another revision's leg: its own handshake");
    }

    /// Without a handshake, no `server/discover` first changes nothing a stateless
    /// server serves; with one, a scenario without it is about the handshake.
    #[test]
    fn no_handshake_shares_only_at_the_stateless_revision() {
        let yaml = format!("{HEAD}steps:\n  - initialize: none\n  - request: tools/list\n");
        let at = |rev| needs_fresh(&parse(&yaml), rev, ToolPolicy::Readonly, false);
        assert_eq!(at(Revision::V2026_07_28), None);
        assert!(at(Revision::DEFAULT).is_some());
    }

    /// Explicit ids share: the runner matches them against the ids a session used.
    #[test]
    fn explicit_ids_share_and_are_listed_as_sent() {
        let s = parse(&format!(
            "{HEAD}steps:\n  - request: {{ method: ping, id: 7 }}\n  - concurrent:\n      - request: {{ method: ping, id: \"\" }}\n      - request: {{ method: ping, id: -1 }}\n"
        ));
        assert_eq!(
            needs_fresh(&s, Revision::DEFAULT, ToolPolicy::Readonly, false),
            None
        );
        let mixed =
            format!("{HEAD}steps:\n  - request: ping\n  - request: {{ method: ping, id: 7 }}\n");
        assert_eq!(
            verdict(&mixed),
            None,
            "the session reserves the scenario's ids"
        );
        assert_eq!(
            explicit_ids(&s),
            [
                RequestId::int(7),
                RequestId::String(String::new()),
                RequestId::int(-1)
            ]
        );
    }

    #[test]
    fn tool_calls_share_only_when_no_call_can_write() {
        let s = parse(&format!(
            "{HEAD}steps:\n  - request: {{ method: tools/call, params: {{ name: x }} }}\n"
        ));
        let rev = Revision::DEFAULT;
        assert_eq!(needs_fresh(&s, rev, ToolPolicy::None, true), None);
        assert_eq!(needs_fresh(&s, rev, ToolPolicy::Readonly, false), None);
        assert!(needs_fresh(&s, rev, ToolPolicy::Readonly, true).is_some());
        assert!(needs_fresh(&s, rev, ToolPolicy::All, false).is_some());
        assert_eq!(
            needs_fresh(&s, Revision::V2026_07_28, ToolPolicy::None, false),
            None
        );
    }

    /// The built-in suite shares most of its stdio scenarios (a floor, so a change that
    /// quietly makes everything fresh shows), and never one that waits or writes raw.
    #[test]
    fn most_of_the_builtin_suite_shares() {
        let all = builtin::scenarios().expect("the built-in suite parses");
        for revision in [Revision::DEFAULT, Revision::V2026_07_28] {
            let applicable: Vec<_> = all
                .iter()
                .filter(|s| s.revisions.contains(&revision))
                .collect();
            let shared = applicable
                .iter()
                .filter(|s| needs_fresh(s, revision, ToolPolicy::Readonly, false).is_none())
                .count();
            assert!(
                shared * 3 >= applicable.len(),
                "{revision}: {shared} of {} share",
                applicable.len()
            );
        }
    }
}
