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
use std::time::Duration;

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
        .filter(|r| !whole_session_rule(r, revision) || calls_tools(&scenario.steps))
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
        // At 2026-07-28 the client's capabilities and protocol version travel in each
        // request's `_meta`: other ones change only the scenario's own requests. It may
        // take a shared session; one declaring capabilities retires it (see
        // `declares_own_capabilities`), while asking another version leaves nothing
        // behind (a stateless server answers each request on its own, and the session
        // keeps the profile its default `server/discover` gave).
        StepKind::Initialize(Initialize::Handshake(o))
            if !revision.has_handshake()
                && *o
                    == (InitializeOverrides {
                        expect: o.expect.clone(),
                        capabilities: o.capabilities.clone(),
                        protocol_version: o.protocol_version.clone(),
                        ..Default::default()
                    }) => {}
        // At 2026-07-28 "no handshake" only means that no `server/discover` comes first;
        // a stateless server serves a request the same whatever came before it. A scenario
        // about being the first request says `fresh: true`.
        StepKind::Initialize(Initialize::None) if !revision.has_handshake() => {}
        _ => return Some(format!("line {}: a handshake of its own", first.line)),
    }
    // Ids it chooses itself next to ids the session allocates are fine: the session
    // reserves the scenario's own for the scenario (`Session::reserve_ids`).
    steps_need_fresh(
        rest,
        &Allowed {
            ends: last_user(scenario, revision, policy, tool_args),
            ..Allowed::new(revision, policy, tool_args)
        },
    )
}

/// Whether `tools/call` can change nothing (see [`needs_fresh`]).
fn calls_ok(policy: ToolPolicy, tool_args: bool) -> bool {
    match policy {
        ToolPolicy::None => true,
        ToolPolicy::Readonly => !tool_args,
        ToolPolicy::All => false,
    }
}

/// Whether a scenario that runs on a server of its own leaves it as the shared sessions
/// would want it, so that it can serve them afterwards (`Lease::Donor`): it runs fresh
/// only to be first on the connection (no handshake yet, the handshake without its
/// `notifications/initialized`, or `fresh: true` at 2026-07-28), and then does only
/// what a shared scenario may; or it negotiates versions at a revision with a handshake
/// (the probe's session that asked the leg's own revision). Whether it did leave the
/// session so is decided when it ends (`Session::donatable`): with the default handshake
/// done, or with none begun.
///
/// Its verdict is the same either way: it judges no rule its session's shutdown could
/// break, and the session is handed on after its window closes.
pub fn donates(
    scenario: &Scenario,
    revision: Revision,
    policy: ToolPolicy,
    tool_args: bool,
) -> bool {
    if scenario
        .rule
        .as_deref()
        .is_some_and(|r| !own_requests_only(r, revision))
        || ends_session(scenario, revision, policy, tool_args)
    {
        return false;
    }
    // Its probe asks the leg's own revision in one of its fresh sessions, as the default
    // handshake would, and hands that session over (`exec::negotiate`).
    if scenario.negotiation().is_some() {
        return revision.has_handshake();
    }
    let Some((first, rest)) = scenario.steps.split_first() else {
        return false;
    };
    let opens = match &first.kind {
        StepKind::Initialize(Initialize::None) => true,
        StepKind::Initialize(Initialize::Handshake(o)) => {
            *o == InitializeOverrides {
                expect: o.expect.clone(),
                skip_initialized: o.skip_initialized,
                ..Default::default()
            }
        }
        _ => false,
    };
    let allowed = Allowed {
        donor: true,
        ..Allowed::new(revision, policy, tool_args)
    };
    opens && steps_need_fresh(rest, &allowed).is_none() && !sends_raw_initialize(rest)
}

/// Whether raw bytes of the steps may hold an `initialize` (which would open the
/// session behind the harness's back).
fn sends_raw_initialize(steps: &[Step]) -> bool {
    steps.iter().any(|step| match &step.kind {
        StepKind::SendRaw(t) => t.0.as_str().is_none_or(|raw| raw.contains("initialize")),
        StepKind::ForEach { steps, .. } => sends_raw_initialize(steps),
        _ => false,
    })
}

/// Whether the scenario's session serves no one after it: it is the session's last user
/// ([`last_user`]), or it declares client capabilities of its own at 2026-07-28
/// ([`declares_own_capabilities`]) and retires the session it took.
pub fn ends_session(
    scenario: &Scenario,
    revision: Revision,
    policy: ToolPolicy,
    tool_args: bool,
) -> bool {
    last_user(scenario, revision, policy, tool_args)
        || (!revision.has_handshake() && declares_own_capabilities(scenario))
}

/// Whether the scenario takes a session only when no other scenario wants one any more,
/// and shuts it down in its own window: it ends the session itself ([`closes_session`]),
/// or it may change what a later scenario would see (`logging/setLevel`, a
/// subscription, a notification the server may act on): no later scenario does. Not one
/// that calls tools: a tool may take seconds, and started last it would hold the run up
/// for them.
pub fn last_user(
    scenario: &Scenario,
    revision: Revision,
    policy: ToolPolicy,
    tool_args: bool,
) -> bool {
    let ends = closes_session(scenario)
        || changes_state(&scenario.steps, &Allowed::new(revision, policy, tool_args));
    ends && !calls_tools(&scenario.steps)
}

/// Whether the scenario judges a MUST rule of the whole session (`whole_session_rule`)
/// and, on a shared session, hands it back: its verdict then waits for that session's
/// shutdown, whose findings of its rule are its own (`Session::watch_shutdown`). What it
/// did not see of the earlier windows broke no MUST, or the session would not have been
/// handed on; what later scenarios provoke is theirs, as it would be on another server.
pub fn judges_shutdown(scenario: &Scenario, revision: Revision) -> bool {
    !closes_session(scenario)
        && scenario
            .rule
            .as_deref()
            .is_some_and(|r| whole_session_rule(r, revision))
}

/// The longest `steps` may wait on a timer: their sleeps, and the windows in which
/// nothing (or only an optional notification) may come. Such a wait ends early only when
/// the transport shows that nothing more can come (`Transport::quiet`); over HTTP, a
/// server that holds a GET stream open keeps it to its full length, so on a shared
/// session it would hold up every scenario queued behind it. A loop body counts once.
pub fn timer_windows(steps: &[Step]) -> Duration {
    let request = |r: &RequestStep| match r.expect {
        Some(ResponseExpectation::Nothing(within)) => within,
        _ => Duration::ZERO,
    };
    steps
        .iter()
        .map(|step| match &step.kind {
            StepKind::Sleep(d) => *d,
            StepKind::Expect(Expectation::Nothing { within, .. }) => *within,
            StepKind::Expect(Expectation::Notification {
                within,
                skip_if_absent: true,
                ..
            }) => *within,
            StepKind::Request(r) => request(r),
            StepKind::Concurrent(rs) => rs.iter().map(request).max().unwrap_or_default(),
            StepKind::ForEach { steps, .. } => timer_windows(steps),
            _ => Duration::ZERO,
        })
        .sum()
}

/// Whether `steps` call a tool.
fn calls_tools(steps: &[Step]) -> bool {
    let call = |r: &RequestStep| r.method.0.as_str() == Some("tools/call");
    steps.iter().any(|step| match &step.kind {
        StepKind::Request(r) => call(r),
        StepKind::Concurrent(rs) => rs.iter().any(call),
        StepKind::ForEach { steps, .. } => calls_tools(steps),
        _ => false,
    })
}

/// Whether a request or notification of `steps` may change what a later request sees.
fn changes_state(steps: &[Step], allowed: &Allowed) -> bool {
    let request = |r: &RequestStep| {
        r.method
            .0
            .as_str()
            .is_some_and(|m| method_needs_fresh(m, allowed).is_some())
    };
    steps.iter().any(|step| match &step.kind {
        StepKind::Request(r) => request(r),
        StepKind::Concurrent(rs) => rs.iter().any(request),
        StepKind::Paginate { method, .. } => method_needs_fresh(method, allowed).is_some(),
        // `notifications/initialized` does what the default handshake does.
        StepKind::Notify { method, .. } => {
            !inert_notification(method) && method.0.as_str() != Some("notifications/initialized")
        }
        StepKind::ForEach { steps, .. } => changes_state(steps, allowed),
        _ => false,
    })
}

/// Whether the scenario declares client capabilities of its own (at 2026-07-28, in its
/// requests' `_meta`, on a shared session). Its session serves no one after it: a server
/// that wrongly carries capabilities from one request to the next would show it in
/// whichever scenario came next, and that scenario's verdict would depend on the order.
pub fn declares_own_capabilities(scenario: &Scenario) -> bool {
    matches!(
        scenario.steps.first().map(|s| &s.kind),
        Some(StepKind::Initialize(Initialize::Handshake(o))) if o.capabilities.is_some()
    )
}

/// MUST-level rules of every frame of a session, from the handshake to the exit. A
/// scenario judging one may take a shared session ([`judges_shutdown`]): a session is
/// only handed on when no MUST-level rule was broken in an earlier window
/// (`Session::reusable`), so what it saw of the earlier windows is what a fresh session
/// of its own would have shown it, and the shutdown's findings reach it later. A SHOULD-level one
/// (`lifecycle.server-capability-respected` at 2024-11-05) would not have stopped the
/// session being handed on, so it still needs a server of its own.
fn whole_session_rule(rule: &str, revision: Revision) -> bool {
    use crate::check::rules::*;
    [
        STDIO_NEWLINE,
        STDIO_STDOUT_ONLY_MESSAGES,
        JSONRPC_NOTIFICATION_ID,
        LIFECYCLE_SERVER_CAPABILITY,
        PROGRESS_ACTIVE_TOKEN,
        PROGRESS_INCREASING,
    ]
    .iter()
    .any(|r| r.id == rule && r.severity_at(revision) == crate::outcome::Severity::Failure)
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
    /// Whether the scenario is its session's last user ([`last_user`]): what the
    /// server sends on its own can then only be what the scenario's own requests caused.
    ends: bool,
    /// Whether these are the steps of a scenario that opened its session itself
    /// ([`donates`]), where `notifications/initialized` completes the handshake.
    donor: bool,
}

impl Allowed {
    /// A scenario's own steps, of no session's last user, not a donor's.
    fn new(revision: Revision, policy: ToolPolicy, tool_args: bool) -> Self {
        Allowed {
            top: true,
            calls_ok: calls_ok(policy, tool_args),
            revision,
            ends: false,
            donor: false,
        }
    }
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
        // A cancellation the client sends is what a server gets wrong by sending one back.
        || rule == crate::check::rules::CANCELLATION_SERVER_OWN_REQUEST.id
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
            StepKind::Notify { method, .. }
                if allowed.donor && method.0.as_str() == Some("notifications/initialized") =>
            {
                None
            }
            StepKind::Notify { method, .. } if !inert_notification(method) && !allowed.ends => {
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
            // What its own requests caused (progress), on a session no one uses after it.
            StepKind::Expect(Expectation::Notification { .. } | Expectation::Request { .. })
                if allowed.ends =>
            {
                None
            }
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
    // What the session's last user changes, no one sees.
    (!read_only && !allowed.ends).then(|| format!("`{method}` may change what others see"))
}

#[cfg(test)]
mod tests;
