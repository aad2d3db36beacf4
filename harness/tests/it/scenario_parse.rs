//! The scenario parser against data files: the valid examples parse (and one round-trips
//! field by field), each invalid example fails with the error in its `.err` file, and the
//! JSON Schema agrees with the parser.
//!
//! Run with `MCPCHECK_BLESS=1` to rewrite the `.err` files from the current output.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mcpcheck::outcome::Severity;
use mcpcheck::protocol::Revision;
use mcpcheck::scenario::parse::{parse_scenario, scenario_files, to_json_document};
use mcpcheck::scenario::*;
use mcpcheck::transport::target::TransportKind;
use serde_json::{Value, json};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/scenarios")
}

fn repo_scenarios() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
}

/// The path relative to the data folder, so error output is the same on every machine.
fn name(path: &Path) -> String {
    path.strip_prefix(data())
        .unwrap_or(path)
        .display()
        .to_string()
}

fn files(sub: &str) -> Vec<PathBuf> {
    let f = scenario_files(&data().join(sub)).unwrap();
    assert!(!f.is_empty(), "no examples in {sub}");
    f
}

fn parse(path: &Path) -> Result<Scenario, mcpcheck::scenario::parse::ScenarioError> {
    parse_scenario(&name(path), &std::fs::read_to_string(path).unwrap())
}

fn schema() -> jsonschema::Validator {
    let text = std::fs::read_to_string(repo_scenarios().join("scenario.schema.json")).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&schema)
        .expect("scenario.schema.json compiles")
}

/// Schema errors for a file, or `None` when its YAML does not even load.
fn schema_errors(v: &jsonschema::Validator, path: &Path) -> Option<Vec<String>> {
    let doc = to_json_document(&name(path), &std::fs::read_to_string(path).unwrap()).ok()?;
    Some(
        v.iter_errors(&doc)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect(),
    )
}

fn t(v: Value) -> Template {
    Template(v)
}

fn check(pointer: &str, matcher: Matcher, line: usize) -> Check {
    Check {
        pointer: pointer.into(),
        matcher,
        line,
    }
}

fn req(method: &str, line: usize) -> RequestStep {
    RequestStep {
        method: t(json!(method)),
        params: None,
        id: None,
        requires: Vec::new(),
        expect: None,
        capture: BTreeMap::new(),
        on_error: OnError::Judge,
        on_timeout: OnTimeout::Fail,
        answer_input: None,
        line,
    }
}

fn capture(name: &str, pointer: &str) -> BTreeMap<String, String> {
    BTreeMap::from([(name.to_owned(), pointer.to_owned())])
}

#[test]
fn full_example_round_trips_every_step_kind_and_matcher() {
    let s = parse(&data().join("valid/full.yaml")).unwrap();
    let expected = Scenario {
        id: "examples/everything".into(),
        title: "every step kind and matcher".into(),
        spec: "basic/lifecycle#initialization".into(),
        revisions: vec![Revision::V2024_11_05, Revision::V2025_06_18],
        transports: vec![TransportKind::Stdio],
        requires: vec![
            Requirement {
                capability: "tools".into(),
                declared: true,
            },
            Requirement {
                capability: "resources.subscribe".into(),
                declared: true,
            },
            Requirement {
                capability: "prompts".into(),
                declared: false,
            },
        ],
        severity: Severity::Warning,
        official: vec!["server-initialize".into()],
        rule: Some("lifecycle.initialize-result".into()),
        fresh: false,
        source: "valid/full.yaml".into(),
        steps: [
            full_requests(),
            full_waits(),
            full_lists(),
            full_checked_loop(),
        ]
        .concat(),
    };
    for (i, (got, want)) in s.steps.iter().zip(&expected.steps).enumerate() {
        assert_eq!(got, want, "step {i}");
    }
    assert_eq!(s, expected);
}

/// `valid/full.yaml`'s handshake, notifications and requests: each form of response
/// expectation.
fn full_requests() -> Vec<Step> {
    let ms = Duration::from_millis;
    vec![
        Step {
            line: 12,
            kind: StepKind::Initialize(Initialize::Handshake(InitializeOverrides {
                protocol_version: Some(t(json!("${revision}"))),
                capabilities: Some(json!({ "roots": { "listChanged": true } })),
                skip_initialized: true,
                expect: Some(ResponseExpectation::Result(vec![
                    check(
                        "/protocolVersion",
                        Matcher::Equals(t(json!("${revision}"))),
                        18,
                    ),
                    check(
                        "/serverInfo/name",
                        Matcher::All(vec![
                            Matcher::Type(JsonType::String),
                            Matcher::Length {
                                min: Some(1),
                                max: None,
                            },
                        ]),
                        19,
                    ),
                    check("", Matcher::Schema("InitializeResult".into()), 20),
                ])),
            })),
        },
        Step {
            line: 21,
            kind: StepKind::Notify {
                method: t(json!("notifications/initialized")),
                params: None,
            },
        },
        Step {
            line: 22,
            kind: StepKind::Request(RequestStep {
                params: Some(t(json!({}))),
                capture: capture("tools", "/result/tools"),
                expect: Some(ResponseExpectation::Result(vec![
                    check(
                        "/tools",
                        Matcher::All(vec![
                            Matcher::Type(JsonType::Array),
                            Matcher::Length {
                                min: Some(2),
                                max: Some(2),
                            },
                        ]),
                        28,
                    ),
                    check(
                        "/tools/0",
                        Matcher::Subset(t(json!({ "name": "echo" }))),
                        29,
                    ),
                    check("/nextCursor", Matcher::Exists(false), 30),
                ])),
                ..req("tools/list", 22)
            }),
        },
        Step {
            line: 31,
            kind: StepKind::Request(RequestStep {
                id: Some(json!(42)),
                expect: Some(ResponseExpectation::Error {
                    codes: vec![-32601, -32602],
                    checks: vec![check("/message", Matcher::Regex("^(?i)method".into()), 32)],
                }),
                ..req("mcpcheck/unknown", 31)
            }),
        },
        Step {
            line: 33,
            kind: StepKind::Request(RequestStep {
                expect: Some(ResponseExpectation::Any(vec![check(
                    "",
                    Matcher::OneOf(vec![t(json!({})), t(Value::Null)]),
                    34,
                )])),
                ..req("ping", 33)
            }),
        },
        Step {
            line: 35,
            kind: StepKind::Notify {
                method: t(json!("notifications/cancelled")),
                params: Some(t(json!({ "requestId": 1 }))),
            },
        },
        Step {
            line: 37,
            kind: StepKind::Request(RequestStep {
                expect: Some(ResponseExpectation::Nothing(ms(500))),
                ..req("notifications/initialized", 37)
            }),
        },
    ]
}

/// `valid/full.yaml`'s raw send and the waits for a response, a notification, silence.
fn full_waits() -> Vec<Step> {
    let ms = Duration::from_millis;
    vec![
        Step {
            line: 39,
            kind: StepKind::SendRaw(t(json!(
                "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n"
            ))),
        },
        Step {
            line: 41,
            kind: StepKind::Expect(Expectation::Response {
                id: json!(7),
                within: ms(2000),
                expect: ResponseExpectation::Result(vec![]),
            }),
        },
        Step {
            line: 42,
            kind: StepKind::Expect(Expectation::Notification {
                method: "notifications/progress".into(),
                within: ms(1000),
                checks: vec![
                    check(
                        "/params/progress",
                        Matcher::Range {
                            min: Some(0.0),
                            max: Some(100.0),
                        },
                        46,
                    ),
                    check("/params/total", Matcher::Equals(t(json!(100))), 46),
                ],
                skip_if_absent: false,
                first_by: None,
            }),
        },
        Step {
            line: 47,
            kind: StepKind::Expect(Expectation::Nothing {
                within: ms(200),
                methods: vec!["notifications/message".into()],
                since: Since::Window,
            }),
        },
    ]
}

/// `valid/full.yaml`'s concurrent requests, paginated lists and a plain loop over one.
fn full_lists() -> Vec<Step> {
    let ms = Duration::from_millis;
    vec![
        Step {
            line: 48,
            kind: StepKind::Concurrent(vec![
                RequestStep {
                    expect: Some(ResponseExpectation::Result(vec![])),
                    ..req("ping", 49)
                },
                RequestStep {
                    capture: capture("first", "/result/tools/0"),
                    ..req("tools/list", 51)
                },
            ]),
        },
        Step {
            line: 53,
            kind: StepKind::Paginate {
                method: "tools/list".into(),
                key: "tools".into(),
                into: "all_tools".into(),
                params: None,
                on_error: OnError::Judge,
                same: Vec::new(),
            },
        },
        Step {
            line: 54,
            kind: StepKind::Paginate {
                method: "x/list".into(),
                key: "items".into(),
                into: "items".into(),
                params: Some(t(json!({ "filter": "${first.name}" }))),
                on_error: OnError::Judge,
                same: Vec::new(),
            },
        },
        Step {
            line: 55,
            kind: StepKind::ForEach {
                list: "all_tools".into(),
                bind: "tool".into(),
                filter: vec![],
                steps: vec![Step {
                    line: 59,
                    kind: StepKind::Request(RequestStep {
                        params: Some(t(json!({ "name": "${tool.name}", "arguments": {} }))),
                        capture: capture("content", "/result/content"),
                        expect: Some(ResponseExpectation::Any(vec![])),
                        ..req("tools/call", 59)
                    }),
                }],
            },
        },
        Step {
            line: 62,
            kind: StepKind::Sleep(ms(100)),
        },
    ]
}

/// `valid/full.yaml`'s filtered loop with a choice of expectations and a `check` step, then
/// the final waits.
fn full_checked_loop() -> Vec<Step> {
    let ms = Duration::from_millis;
    vec![
        Step {
            line: 63,
            kind: StepKind::ForEach {
                list: "all_tools".into(),
                bind: "t2".into(),
                filter: vec![check("/outputSchema", Matcher::Exists(true), 66)],
                steps: vec![
                    Step {
                        line: 68,
                        kind: StepKind::Request(RequestStep {
                            params: Some(t(
                                json!({ "name": "${t2.name}", "arguments": "${t2|sample_arguments}" }),
                            )),
                            expect: Some(ResponseExpectation::OneOf(vec![
                                ResponseExpectation::Error {
                                    codes: vec![-32602],
                                    checks: vec![],
                                },
                                ResponseExpectation::Result(vec![check(
                                    "/structuredContent",
                                    Matcher::ConformsTo(t(json!("${t2.outputSchema}"))),
                                    72,
                                )]),
                            ])),
                            ..req("tools/call", 68)
                        }),
                    },
                    Step {
                        line: 73,
                        kind: StepKind::Check {
                            value: t(json!("${t2}")),
                            checks: vec![
                                check(
                                    "/name",
                                    Matcher::Regex("^[A-Za-z0-9_.-]{1,128}$".into()),
                                    76,
                                ),
                                check("/inputSchema", Matcher::JsonSchema(true), 77),
                                check(
                                    "",
                                    Matcher::ExactlyOne(vec!["text".into(), "blob".into()]),
                                    78,
                                ),
                                check("/blob", Matcher::Base64(false), 79),
                            ],
                        },
                    },
                ],
            },
        },
        Step {
            line: 80,
            kind: StepKind::Expect(Expectation::Notification {
                method: "notifications/progress".into(),
                within: ms(0),
                checks: vec![],
                skip_if_absent: true,
                first_by: None,
            }),
        },
        Step {
            line: 81,
            kind: StepKind::Expect(Expectation::Exit {
                within: ms(5000),
                code: Some(0),
            }),
        },
    ]
}

#[test]
fn defaults_and_skipped_handshake() {
    let s = parse(&data().join("valid/no-handshake.yaml")).unwrap();
    assert_eq!(s.revisions, Revision::HANDSHAKE.to_vec());
    assert_eq!(s.transports, vec![TransportKind::Stdio]);
    assert_eq!(s.severity, Severity::Warning);
    assert_eq!(s.steps[0].kind, StepKind::Initialize(Initialize::None));
    assert_eq!(
        s.steps[2].kind,
        StepKind::Expect(Expectation::Exit {
            within: Duration::from_secs(5),
            code: None
        })
    );
    let m = parse(&data().join("valid/minimal.yaml")).unwrap();
    assert_eq!(
        m.transports,
        vec![TransportKind::Stdio, TransportKind::Http]
    );
    assert_eq!(m.severity, Severity::Failure);
    assert_eq!(
        m.steps[0],
        Step {
            line: 4,
            kind: StepKind::Initialize(Initialize::Handshake(InitializeOverrides::default()))
        }
    );
}

/// Each invalid example fails with exactly the error in its `.err` file.
#[test]
fn invalid_examples_fail_with_the_recorded_error() {
    let bless = std::env::var_os("MCPCHECK_BLESS").is_some();
    let mut mismatches = Vec::new();
    for sub in ["invalid", "parse-only-invalid"] {
        for path in files(sub) {
            let rendered = match parse(&path) {
                Ok(_) => {
                    mismatches.push(format!("{}: parsed, but should fail", name(&path)));
                    continue;
                }
                Err(e) => format!("{e}\n"),
            };
            let expected_path = path.with_extension("err");
            if bless {
                std::fs::write(&expected_path, &rendered).unwrap();
                continue;
            }
            let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
            if expected != rendered {
                mismatches.push(format!(
                    "{}:\n--- expected\n{expected}--- got\n{rendered}",
                    name(&path)
                ));
            }
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn the_schema_accepts_what_the_parser_accepts() {
    let v = schema();
    let mut all = files("valid");
    if repo_scenarios().is_dir() {
        all.extend(scenario_files(&repo_scenarios()).unwrap());
    }
    for path in all {
        let errors = schema_errors(&v, &path).expect("valid YAML");
        assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
        let text = std::fs::read_to_string(&path).unwrap();
        if mcpcheck::scenario::parse::is_client_document(&text) {
            if let Err(e) = mcpcheck::scenario::parse::parse_client_scenario(&name(&path), &text) {
                panic!("{e}");
            }
        } else if let Err(e) = parse(&path) {
            panic!("{e}");
        }
    }
}

#[test]
fn the_schema_rejects_the_invalid_examples() {
    let v = schema();
    for path in files("invalid") {
        if let Some(errors) = schema_errors(&v, &path) {
            assert!(!errors.is_empty(), "{}: the schema accepts it", name(&path));
        }
        assert!(parse(&path).is_err());
    }
}

/// What the schema cannot say (regex syntax, variable scope, min <= max): it accepts these,
/// the parser does not. The list documents the schema's limits.
#[test]
fn the_parser_catches_what_the_schema_cannot() {
    let v = schema();
    for path in files("parse-only-invalid") {
        let errors = schema_errors(&v, &path).expect("valid YAML");
        assert!(
            errors.is_empty(),
            "{}: move it to invalid/: {errors:#?}",
            name(&path)
        );
        assert!(parse(&path).is_err());
    }
}
