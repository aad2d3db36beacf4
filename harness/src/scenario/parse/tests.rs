//! Tests of the scenario parser: what it accepts, and the errors (with their positions)
//! for what it rejects.

use super::*;

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
