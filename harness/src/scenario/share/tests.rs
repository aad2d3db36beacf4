//! Which scenarios share, donate and end sessions.
use super::*;
use crate::scenario::builtin;

fn parse(yaml: &str) -> Scenario {
    crate::scenario::parse::parse_scenario("test.yaml", yaml).expect("a valid scenario")
}

/// Whether the scenario ends its session (default revision and policy).
fn ends(yaml: &str) -> bool {
    ends_session(&parse(yaml), Revision::DEFAULT, ToolPolicy::Readonly, false)
}

fn verdict(yaml: &str) -> Option<String> {
    needs_fresh(&parse(yaml), Revision::DEFAULT, ToolPolicy::Readonly, false)
}

const HEAD: &str = "id: a/b\ntitle: t\nspec: basic\n";

#[test]
fn reads_share_and_writes_end_their_session() {
    let read = format!(
        "{HEAD}steps:\n  - paginate: {{ method: tools/list, into: tools }}\n  - for_each:\n      in: tools\n      as: t\n      steps:\n        - check: {{ value: \"${{t}}\", match: {{ /name: {{ type: string }} }} }}\n  - request: \"${{probe}}\"\n"
    );
    assert_eq!(verdict(&read), None);
    let set_level = format!(
        "{HEAD}steps:\n  - request: {{ method: logging/setLevel, params: {{ level: debug }} }}\n"
    );
    // A write shares only as its session's last user.
    assert!(verdict(&set_level).is_none());
    assert!(ends(&set_level));
    assert!(!ends(&read));
    let subscribe = format!(
        "{HEAD}steps:\n  - paginate: {{ method: resources/list, into: x }}\n  - for_each:\n      in: x\n      as: y\n      steps:\n        - request: resources/subscribe\n"
    );
    assert!(verdict(&subscribe).is_none());
    assert!(ends(&subscribe));
    // So does a notification the server may act on.
    let roots = format!("{HEAD}steps:\n  - notify: notifications/roots/list_changed\n");
    assert!(verdict(&roots).is_none());
    assert!(ends(&roots));
}

#[test]
fn handshakes_waits_raw_bytes_and_ids_need_a_fresh_server() {
    let cases = [
        "  - initialize: none\n",
        "  - initialize: { protocol_version: 1999-01-01 }\n",
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
    // A rule of the whole session: shared, handing the session back, and judging its
    // shutdown wherever that comes (not the session's last user).
    let ruled = format!("{HEAD}rule: stdio.stdout-only-messages\nsteps:\n  - request: ping\n");
    assert_eq!(verdict(&ruled), None);
    assert!(!ends_session(
        &parse(&ruled),
        Revision::DEFAULT,
        ToolPolicy::Readonly,
        false
    ));
    assert!(judges_shutdown(&parse(&ruled), Revision::DEFAULT));
    // Not at a revision where the rule is a SHOULD, nor when the scenario ends the
    // session itself (its shutdown is in its own window).
    let declared_should =
        format!("{HEAD}rule: lifecycle.server-capability-respected\nsteps:\n  - sleep: 10ms\n");
    assert!(!judges_shutdown(
        &parse(&declared_should),
        Revision::V2024_11_05
    ));
    let closes = format!(
        "{HEAD}rule: stdio.stdout-only-messages\nsteps:\n  - request: ping\n  - expect: {{ exit: {{ within: 2s }} }}\n"
    );
    assert!(!judges_shutdown(&parse(&closes), Revision::DEFAULT));
    // A rule the handshake may break, judged SHOULD-level at 2024-11-05: an earlier
    // window's warning would not have stopped the session being handed on.
    let declared =
        format!("{HEAD}rule: lifecycle.server-capability-respected\nsteps:\n  - sleep: 10ms\n");
    let at = |rev| needs_fresh(&parse(&declared), rev, ToolPolicy::Readonly, false);
    assert_eq!(at(Revision::DEFAULT), None);
    assert!(at(Revision::V2024_11_05).is_some());
    let progress = format!(
        "{HEAD}rule: progress.increasing\nsteps:\n  - request: {{ method: tools/call, params: {{ name: x }} }}\n"
    );
    assert!(
        verdict(&progress).is_some(),
        "a tool started last would hold the run up"
    );
    let other = format!("{HEAD}rule: jsonrpc.version\nsteps:\n  - request: ping\n");
    assert!(verdict(&other).is_some());
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
    // At 2026-07-28 a version of its own travels in that one request's `_meta`.
    assert_eq!(own, None, "a version of its own is one request's");
    assert!(declares_own_capabilities(&parse(&version)));
    let only_version = format!(
        "{HEAD}steps:\n  - initialize: {{ protocol_version: \"1900-01-01\" }}\n    expect: {{ error: {{}} }}\n"
    );
    assert_eq!(
        needs_fresh(
            &parse(&only_version),
            Revision::V2026_07_28,
            ToolPolicy::Readonly,
            false
        ),
        None
    );
    assert!(!ends_session(
        &parse(&only_version),
        Revision::V2026_07_28,
        ToolPolicy::Readonly,
        false
    ));
    assert!(!declares_own_capabilities(&parse(&only_version)));
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
    // A call that may write gets a server of its own: it would be its session's last
    // user, but a tool may take seconds, and one started last holds the run up.
    assert!(needs_fresh(&s, rev, ToolPolicy::Readonly, true).is_some());
    assert!(needs_fresh(&s, rev, ToolPolicy::All, false).is_some());
    assert!(!last_user(&s, rev, ToolPolicy::All, false));
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

/// A scenario fresh only to be first on its server hands it over; one that sets
/// state, judges a rule of its own, or may open the session behind the harness's
/// back (raw bytes with an `initialize`) does not.
#[test]
fn only_scenarios_fresh_to_be_first_donate() {
    let donates_at = |yaml: &str, rev| {
        let s = parse(&format!("{HEAD}{yaml}"));
        assert!(needs_fresh(&s, rev, ToolPolicy::Readonly, false).is_some());
        donates(&s, rev, ToolPolicy::Readonly, false)
    };
    let rev = Revision::DEFAULT;
    assert!(donates_at(
        "steps:\n  - initialize: none\n  - request: ping\n",
        rev
    ));
    let own_initialized = "steps:\n  - initialize: { skip_initialized: true }\n  - notify: notifications/initialized\n  - request: ping\n";
    assert!(donates_at(own_initialized, rev));
    let raw = "steps:\n  - initialize: none\n  - send_raw: '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}'\n";
    assert!(!donates_at(raw, rev));
    let set_level = "steps:\n  - initialize: none\n  - request: { method: logging/setLevel, params: { level: debug } }\n";
    assert!(!donates_at(set_level, rev));
    let asked = "steps:\n  - initialize: { protocol_version: 1999-01-01 }\n";
    assert!(!donates_at(asked, rev));
    let ruled =
        "rule: stdio.stdout-only-messages\nsteps:\n  - initialize: none\n  - request: ping\n";
    assert!(!donates_at(ruled, rev));
    let first = "fresh: true\nsteps:\n  - request: tools/list\n";
    assert!(donates_at(first, Revision::V2026_07_28));
    // Version negotiation hands over the session that asked the leg's own revision.
    let negotiate = "steps:\n  - negotiate: accepted-version-echoed\n";
    assert!(donates_at(negotiate, rev));
    assert!(!donates_at(negotiate, Revision::V2026_07_28));
}

#[test]
fn timer_windows_add_sleeps_silences_and_optional_notifications() {
    let windows = |steps: &str| timer_windows(&parse(&format!("{HEAD}steps:\n{steps}")).steps);
    assert_eq!(windows("  - request: ping\n"), Duration::ZERO);
    // A notification that must come ends when it comes: no timer.
    let required = "  - expect: { notification: { method: notifications/message, within: 1s } }\n";
    assert_eq!(windows(required), Duration::ZERO);
    let steps = "  - sleep: 300ms\n  - request: ping\n    expect: { nothing: 1s }\n  - expect: { nothing: { within: 500ms } }\n  - expect: { notification: { method: notifications/progress, within: 200ms, otherwise: skip } }\n";
    assert_eq!(windows(steps), Duration::from_millis(2000));
    // A loop body counts once.
    let each = "  - paginate: { method: tools/list, into: tools }\n  - for_each:\n      in: tools\n      as: t\n      steps:\n        - sleep: 100ms\n";
    assert_eq!(windows(each), Duration::from_millis(100));
}
