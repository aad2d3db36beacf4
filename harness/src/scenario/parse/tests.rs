//! Tests of the scenario parser: what it accepts, and the errors (with their positions)
//! for what it rejects.

use super::*;
use crate::scenario::model::{AnswerInput, AnswerKeys, Expectation};

fn err(text: &str) -> ScenarioError {
    parse_scenario("t.yaml", text).expect_err("should fail")
}

const HEAD: &str = "id: a/b\ntitle: t\nspec: basic/lifecycle\n";

#[test]
fn minimal_scenario_gets_a_default_handshake() {
    let s = parse_scenario("t.yaml", &format!("{HEAD}steps:\n  - request: ping\n")).unwrap();
    assert_eq!(s.steps.len(), 2);
    assert_eq!(s.steps[0].line, 4);
    assert!(matches!(
        s.steps[0].kind,
        StepKind::Initialize(Initialize::Handshake(_))
    ));
    assert_eq!(s.steps[1].line, 5);
    assert_eq!(s.revisions, Revision::HANDSHAKE.to_vec());
}

#[test]
fn unknown_key_points_at_the_key() {
    let e = err(&format!(
        "{HEAD}steps:\n  - request: ping\n    expct: {{ result: {{}} }}\n"
    ));
    assert_eq!((e.line, e.column, e.width), (6, 5, 5), "{e}");
    assert_eq!(e.hint.as_deref(), Some("did you mean `expect`?"));
}

#[test]
fn renders_like_rustc() {
    let text = format!("{HEAD}steps:\n  - request: ping\n\n\n\n\n\n    expct: 1\n");
    let e = err(&text);
    assert_eq!(
        e.to_string(),
        "error: unknown key `expct` in a `request` step\n  --> t.yaml:11:5\n   |\n11 |     expct: 1\n   |     ^^^^^\n   = hint: did you mean `expect`?"
    );
    assert_eq!(e.location(), "t.yaml:11:5");
}

#[test]
fn for_each_variables_are_scoped_to_the_loop() {
    let text = format!(
        "{HEAD}steps:\n  - paginate: {{ method: tools/list, into: tools }}\n  - for_each: {{ in: tools, as: tool, steps: [ {{ request: ping }} ] }}\n  - for_each: {{ in: tools, as: tool, steps: [ {{ request: ping }} ] }}\n  - request: {{ method: x, params: {{ n: \"${{tool}}\" }} }}\n"
    );
    let e = err(&text);
    assert_eq!(
        (e.line, e.message.as_str()),
        (8, "undefined variable `tool`")
    );
}

#[test]
fn a_request_may_require_capabilities() {
    let text = format!(
        "{HEAD}steps:\n  - concurrent:\n      - request: ping\n      - request: tools/list\n        requires: [tools, \"!logging\"]\n"
    );
    let s = parse_scenario("t.yaml", &text).unwrap();
    let StepKind::Concurrent(rs) = &s.steps[1].kind else {
        panic!("{:?}", s.steps[1].kind)
    };
    assert!(rs[0].requires.is_empty());
    let caps = serde_json::json!({"tools": {}});
    assert_eq!(rs[1].requires.len(), 2);
    assert!(rs[1].requires.iter().all(|r| r.met_by(&caps)));
    let with_logging = serde_json::json!({"tools": {}, "logging": {}});
    assert!(!rs[1].requires.iter().all(|r| r.met_by(&with_logging)));

    let e = err(&format!(
        "{HEAD}steps:\n  - request: tools/list\n    requires: [\"tools list\"]\n"
    ));
    assert_eq!(e.message, "`tools list` is not a capability", "{e}");
}

#[test]
fn a_burst_names_a_method_and_a_count() {
    let s = parse_scenario(
        "t.yaml",
        &format!("{HEAD}steps:\n  - burst: {{ method: ping, count: 1000 }}\n"),
    )
    .unwrap();
    assert_eq!(
        s.steps[1].kind,
        StepKind::Burst {
            method: "ping".into(),
            count: 1000
        }
    );
    let e = err(&format!(
        "{HEAD}steps:\n  - burst: {{ method: ping, count: 1 }}\n"
    ));
    assert_eq!(e.message, "`count` must be from 2 to 100000", "{e}");
}

#[test]
fn a_negotiate_step_is_the_scenario_and_gets_no_handshake() {
    use crate::check::negotiation::NegotiationCheck;
    let s = parse_scenario(
        "t.yaml",
        &format!("{HEAD}steps:\n  - negotiate: accepted-version-echoed\n"),
    )
    .unwrap();
    assert_eq!(
        s.steps.len(),
        1,
        "no implicit initialize: it opens its own sessions"
    );
    assert_eq!(
        s.negotiation(),
        Some(NegotiationCheck::AcceptedVersionEchoed)
    );
    let e = err(&format!(
        "{HEAD}steps:\n  - negotiate: accepted-version-echoed\n  - request: ping\n"
    ));
    assert_eq!((e.line, e.column), (6, 5), "{e}");
    assert!(e.message.contains("no other steps"), "{e}");
    let e = err(&format!(
        "{HEAD}steps:\n  - request: ping\n  - negotiate: accepted-version-echoed\n"
    ));
    assert!(e.message.contains("only step"), "{e}");
    let e = err(&format!(
        "{HEAD}steps:\n  - negotiate: accepted-version-echo\n"
    ));
    assert_eq!(
        e.hint.as_deref(),
        Some("did you mean `accepted-version-echoed`?")
    );
}

#[test]
fn expect_request_waits_for_a_server_request_with_checks() {
    let ok = format!(
        "{HEAD}steps:\n  - expect: {{ request: sampling/createMessage }}\n  - expect: {{ request: {{ method: elicitation/create, within: 2s, match: {{ /params/message: {{ type: string }} }} }} }}\n"
    );
    let s = parse_scenario("t.yaml", &ok).unwrap();
    assert!(matches!(
        &s.steps[1].kind,
        StepKind::Expect(Expectation::Request { method, checks, .. })
            if method == "sampling/createMessage" && checks.is_empty()
    ));
    assert!(matches!(
        &s.steps[2].kind,
        StepKind::Expect(Expectation::Request { method, within, checks })
            if method == "elicitation/create" && within.as_secs() == 2 && checks.len() == 1
    ));
    let e = err(&format!(
        "{HEAD}steps:\n  - expect: {{ request: {{ method: x/y, otherwise: skip }} }}\n"
    ));
    assert_eq!(e.line, 5, "{e}");
    assert!(e.message.contains("otherwise"), "{e}");
}

#[test]
fn contains_takes_a_list_of_checks_and_first_one_set() {
    let ok = format!(
        "{HEAD}steps:\n  - request: tools/list\n    expect: {{ result: {{ /tools: {{ contains: [ {{ /name: a }}, {{}} ] }} }} }}\n"
    );
    parse_scenario("t.yaml", &ok).unwrap();
    let e = err(&format!(
        "{HEAD}steps:\n  - request: tools/list\n    expect: {{ result: {{ /tools: {{ contains: [] }} }} }}\n"
    ));
    assert!(e.message.contains("at least one set of checks"), "{e}");
    let e = err(&format!(
        "{HEAD}steps:\n  - request: tools/list\n    expect: {{ result: {{ /tools: {{ contains: {{ /name: a }} }} }} }}\n"
    ));
    assert!(e.message.contains("a list"), "{e}");
    let ok = format!(
        "{HEAD}steps:\n  - request: tools/list\n    expect: {{ result: {{ /tools: {{ first: {{ /name: a }} }} }} }}\n"
    );
    parse_scenario("t.yaml", &ok).unwrap();
    let e = err(&format!(
        "{HEAD}steps:\n  - request: tools/list\n    expect: {{ result: {{ /tools: {{ first: {{ name: a }} }} }} }}\n"
    ));
    assert!(e.message.contains("not a JSON pointer"), "{e}");
}

#[test]
fn paginate_same_and_first_by_take_json_pointers() {
    let ok = format!(
        "{HEAD}steps:\n  - paginate: {{ method: tools/list, into: t, same: [/cacheScope] }}\n  - expect: {{ notification: {{ method: n/x, first_by: /params/id }} }}\n"
    );
    let s = parse_scenario("t.yaml", &ok).unwrap();
    assert!(
        matches!(&s.steps[1].kind, StepKind::Paginate { same, .. } if same == &["/cacheScope"])
    );
    assert!(matches!(
        &s.steps[2].kind,
        StepKind::Expect(Expectation::Notification { first_by: Some(p), .. }) if p == "/params/id"
    ));
    let e = err(&format!(
        "{HEAD}steps:\n  - paginate: {{ method: tools/list, into: t, same: [cacheScope] }}\n"
    ));
    assert_eq!(
        (e.line, e.message.as_str()),
        (5, "`cacheScope` is not a JSON pointer")
    );
    let e = err(&format!(
        "{HEAD}steps:\n  - expect: {{ notification: {{ method: n/x, first_by: id }} }}\n"
    ));
    assert_eq!(
        (e.line, e.message.as_str()),
        (5, "`id` is not a JSON pointer")
    );
}

fn answer_input_of(value: &str) -> Result<Option<AnswerInput>, ScenarioError> {
    let text = format!(
        "{HEAD}steps:\n  - request: {{ method: tools/call, params: {{ name: t }} }}\n    answer_input: {value}\n"
    );
    parse_scenario("t.yaml", &text).map(|s| match &s.steps[1].kind {
        StepKind::Request(r) => r.answer_input.clone(),
        other => panic!("not a request: {other:?}"),
    })
}

#[test]
fn answer_input_takes_true_a_bound_or_checked_rounds() {
    assert_eq!(
        answer_input_of("true").unwrap(),
        Some(AnswerInput::at_most(AnswerInput::DEFAULT_ROUNDS))
    );
    assert_eq!(answer_input_of("2").unwrap(), Some(AnswerInput::at_most(2)));
    let rounds = answer_input_of("{ rounds: [ { /requestState: { type: string } }, {} ] }")
        .unwrap()
        .unwrap();
    assert_eq!(rounds.max_retries(), 2);
    assert_eq!(rounds.exact_rounds(), Some(2));
    assert_eq!(rounds.round_checks(0).map(<[_]>::len), Some(1));
    assert_eq!(rounds.round_checks(1).map(<[_]>::len), Some(0));
    assert!(rounds.round_checks(2).is_none());
    assert_eq!(rounds.answer, AnswerKeys::All);
}

#[test]
fn answer_input_chooses_which_input_requests_are_answered() {
    let first = answer_input_of("{ answer: first }").unwrap().unwrap();
    assert_eq!(first.answer, AnswerKeys::First);
    assert_eq!(first.max_retries(), AnswerInput::DEFAULT_ROUNDS);
    assert_eq!(first.exact_rounds(), None);
    let only = answer_input_of("{ rounds: [ {} ], answer: [user_name] }")
        .unwrap()
        .unwrap();
    assert_eq!(only.answer, AnswerKeys::Only(vec!["user_name".into()]));
    assert_eq!(only.exact_rounds(), Some(1));
    let e = answer_input_of("{ answer: some }").unwrap_err();
    assert!(e.message.contains("not `all`, `first` or a list"), "{e}");
    let e = answer_input_of("{ answer: [] }").unwrap_err();
    assert!(e.message.contains("lists no keys"), "{e}");
    let e = answer_input_of("{}").unwrap_err();
    assert!(
        e.message.contains("needs `rounds`, `answer` or both"),
        "{e}"
    );
}

#[test]
fn answer_input_errors_point_at_the_value() {
    let e = answer_input_of("false").unwrap_err();
    assert!(
        e.message.contains("`answer_input: false` is the default"),
        "{e}"
    );
    let e = answer_input_of("0").unwrap_err();
    assert!(e.message.contains("the retries must be 1 to 16"), "{e}");
    let e = answer_input_of("{ round: [] }").unwrap_err();
    assert_eq!(e.hint.as_deref(), Some("did you mean `rounds`?"), "{e}");
    let e = answer_input_of("{ rounds: [] }").unwrap_err();
    assert!(e.message.contains("1 to 16 rounds"), "{e}");
    let e = answer_input_of("{ rounds: [ { nopointer: 1 } ] }").unwrap_err();
    assert!(e.message.contains("not a JSON pointer"), "{e}");
    let text = format!(
        "{HEAD}steps:\n  - concurrent:\n      - request: ping\n        answer_input: true\n      - request: ping\n"
    );
    let e = err(&text);
    assert_eq!(e.line, 7, "{e}");
    assert!(e.message.contains("a concurrent one cannot"), "{e}");
}

#[test]
fn on_timeout_and_since_start_parse_and_unknown_values_are_errors_at_their_line() {
    let text = format!(
        "{HEAD}steps:\n  - request: ping\n    on_timeout: next\n  - expect: {{ nothing: {{ within: 1s, methods: [x], since: start }} }}\n"
    );
    let s = parse_scenario("t.yaml", &text).unwrap();
    let StepKind::Request(r) = &s.steps[1].kind else {
        panic!("{:?}", s.steps[1].kind)
    };
    assert_eq!(r.on_timeout, crate::scenario::model::OnTimeout::Next);
    assert!(matches!(
        s.steps[2].kind,
        StepKind::Expect(Expectation::Nothing {
            since: crate::scenario::model::Since::Start,
            ..
        })
    ));
    let e = err(&format!(
        "{HEAD}steps:\n  - request: ping\n    on_timeout: fail\n"
    ));
    assert_eq!(e.line, 6, "{e}");
    let e = err(&format!(
        "{HEAD}steps:\n  - expect: {{ nothing: {{ within: 1s, since: never }} }}\n"
    ));
    assert_eq!(
        (e.line, e.message.as_str()),
        (5, "`since: never` is not `window` or `start`")
    );
}
