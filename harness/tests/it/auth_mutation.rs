//! The `auth/` scenarios tested like code: the misbehaving fixture's `--auth` mode (an
//! OAuth protected resource with static tokens) passes every one of them at 2025-11-25 and
//! 2026-07-28 and the rest of the suite too; each `auth-*` defect of
//! `fixtures/misbehaving/defects.toml` fails exactly its scenarios; a server without
//! authorization gets every `auth/` scenario skipped (authorization is OPTIONAL), never
//! failed; and no token reaches any output.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::suite::{self, defect_table};
use crate::support::*;

/// Short waits, six jobs.
fn fast() -> Vec<&'static str> {
    [&FAST_MANY_JOBS[..], &["--jobs", "6"]].concat()
}

/// The fixture's tokens (fixtures/misbehaving/src/http/auth.rs), by environment variable.
const TOKENS: [(&str, &str); 4] = [
    ("MCPCHECK_T_VALID", "mcpcheck-fixture-token"),
    ("MCPCHECK_T_EXPIRED", "mcpcheck-fixture-expired-token"),
    ("MCPCHECK_T_READONLY", "mcpcheck-fixture-readonly-token"),
    ("MCPCHECK_T_FOREIGN", "mcpcheck-fixture-foreign-token"),
];
const TOKEN_FLAGS: [&str; 8] = [
    "--bearer-env",
    "MCPCHECK_T_VALID",
    "--expired-token-env",
    "MCPCHECK_T_EXPIRED",
    "--insufficient-scope-token-env",
    "MCPCHECK_T_READONLY",
    "--foreign-token-env",
    "MCPCHECK_T_FOREIGN",
];

fn run(url: &str, extra: &[&str]) -> (i32, serde_json::Value, String) {
    let args = [&["--url", url][..], &fast(), &TOKEN_FLAGS, extra].concat();
    json_report("run", &args, &TOKENS)
}

fn with(v: &BTreeMap<String, String>, verdicts: &[&str]) -> BTreeSet<String> {
    v.iter()
        .filter(|(_, x)| verdicts.contains(&x.as_str()))
        .map(|(id, _)| id.clone())
        .collect()
}

fn auth_ids() -> BTreeMap<String, Vec<String>> {
    suite::revisions()
        .into_iter()
        .filter(|(id, _)| id.starts_with("auth/"))
        .collect()
}

#[test]
fn every_auth_scenario_has_an_auth_defect() {
    let mapped: BTreeSet<String> = defect_table(|d| d.starts_with("auth-"))
        .into_values()
        .flatten()
        .collect();
    let ids: BTreeSet<String> = auth_ids().into_keys().collect();
    assert!(ids.len() >= 13, "{ids:?}");
    let missing: Vec<_> = ids.difference(&mapped).collect();
    assert!(
        missing.is_empty(),
        "auth scenarios without a defect: {missing:?}"
    );
}

#[test]
fn the_protected_fixture_passes_every_auth_scenario_and_leaks_no_token() {
    let server = misbehaving_http(&["--auth"]);
    let ids = auth_ids();
    for rev in ["2025-06-18", "2025-11-25", "2026-07-28"] {
        let (code, report, text) = run(&server.url, &["--protocol-version", rev]);
        assert_eq!(code, 0, "{rev}: {text}");
        let v = verdicts(&report);
        let bad = with(&v, &["fail", "warn", "error"]);
        assert!(bad.is_empty(), "{rev}: {bad:?}\n{text}");
        for (id, revs) in &ids {
            let expected = if revs.iter().any(|r| r == rev) {
                "pass"
            } else {
                "skip"
            };
            assert_eq!(
                v.get(id).map(String::as_str),
                Some(expected),
                "{rev} {id}\n{text}"
            );
        }
        let whole = report.to_string();
        for (_, token) in TOKENS {
            assert!(!whole.contains(token), "{rev}: a token is in the report");
            assert!(!text.contains(token), "{rev}: a token is in the output");
        }
        assert!(whole.contains("[REDACTED]"), "{rev}: nothing was redacted");
    }
}

/// A server without authorization: every check of a protected server is skipped (it is
/// OPTIONAL in MCP), but the run sends a token, so `auth/token-required` says the server
/// accepts requests without one (a warning, exit 0); `--require-auth` makes that a
/// failure (exit 1), and with neither a token nor the flag it is skipped too.
#[test]
fn without_authorization_the_checks_skip_and_an_expected_token_is_told_apart() {
    let server = misbehaving_http(&[]);
    let only = ["--protocol-version", "2025-11-25", "--include", "auth/*"];
    let (code, report, text) = run(&server.url, &only);
    assert_eq!(code, 0, "{text}");
    let scenarios = report["scenarios"].as_array().expect("scenarios");
    assert!(scenarios.len() >= 14, "{text}");
    for s in scenarios {
        let reason = s.to_string();
        if s["id"] == "auth/token-required" {
            assert_eq!(s["verdict"], "warn", "{s}");
            assert!(
                reason.contains("accepts requests without a token"),
                "{reason}"
            );
            assert!(reason.contains("--require-auth"), "{reason}");
            continue;
        }
        assert_eq!(s["verdict"], "skip", "{s}");
        assert!(
            reason.contains("does not require authorization") || reason.contains("applies to"),
            "{reason}"
        );
    }
    let required = [&only[..], &["--require-auth"]].concat();
    let (code, report, text) = run(&server.url, &required);
    assert_eq!(code, 1, "{text}");
    let v = verdicts(&report);
    assert_eq!(v["auth/token-required"], "fail", "{text}");
    assert_eq!(with(&v, &["fail", "warn", "error"]).len(), 1, "{text}");
    // No token and no flag: nothing says the server should need one.
    let bare = [&["--url", server.url.as_str()][..], &fast(), &only].concat();
    let (code, report, text) = json_report("run", &bare, &[]);
    assert_eq!(code, 0, "{text}");
    let s = scenario_starting(&report, "auth/token-required").expect("ran");
    assert_eq!(s["verdict"], "skip", "{text}");
    assert!(s.to_string().contains("--require-auth"), "{s}");
}

#[test]
fn without_the_token_flags_those_checks_are_skipped_naming_the_flag() {
    let server = misbehaving_http(&["--auth"]);
    let args = [
        &["--url", &server.url][..],
        &fast(),
        &["--bearer-env", "MCPCHECK_T_VALID", "--include", "auth/*"],
    ]
    .concat();
    let (code, report, text) = json_report("run", &args, &TOKENS);
    assert_eq!(code, 0, "{text}");
    for (id, flag) in [
        ("auth/expired-token-401", "--expired-token-env"),
        ("auth/foreign-token-401", "--foreign-token-env"),
        (
            "auth/insufficient-scope-403",
            "--insufficient-scope-token-env",
        ),
        (
            "auth/insufficient-scope-challenge",
            "--insufficient-scope-token-env",
        ),
    ] {
        let s = scenario_starting(&report, id).expect(id);
        assert!(s.to_string().contains(flag), "{id}: {s}");
        assert_eq!(verdicts(&report)[id], "skip", "{text}");
    }
}

#[test]
fn each_auth_defect_fails_exactly_its_scenarios() {
    let revs = suite::revisions();
    let table = defect_table(|d| d.starts_with("auth-"));
    assert!(table.len() >= 10, "too few auth defects in defects.toml");
    let mut problems = Vec::new();
    for (defect, expected) in table {
        let server = misbehaving_http(&["--auth", "--defect", &defect]);
        let runs = suite::revisions_to_run(&expected, &revs);
        let mut got = BTreeSet::new();
        let mut errors = BTreeSet::new();
        let mut texts = String::new();
        for rev in &runs {
            let (_, report, text) = run(
                &server.url,
                &["--protocol-version", rev, "--include", "auth/*"],
            );
            let v = verdicts(&report);
            got.extend(with(&v, &["fail", "warn"]));
            errors.extend(with(&v, &["error"]));
            texts.push_str(&text);
        }
        if got != expected || !errors.is_empty() {
            let detail: Vec<&str> = texts
                .lines()
                .filter(|l| l.contains("auth/"))
                .take(12)
                .collect();
            problems.push(format!(
                "--defect {defect} ({runs:?}): expected {expected:?}, failed {got:?}, errors {errors:?}\n{}",
                detail.join("\n")
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// The authorization server's metadata is the authorization server's duty ("MCP
/// authorization servers MUST provide at least one of the following discovery mechanisms"),
/// not the MCP server's: an MCP server whose listed authorization server publishes unusable
/// metadata gets a warning about the deployment, never a failure, so the run passes unless
/// `--fail-on warning`.
#[test]
fn a_broken_authorization_server_is_a_warning_not_the_mcp_servers_failure() {
    for (defect, rev, id) in [
        (
            "auth-as-no-pkce",
            "2025-11-25",
            "auth/authorization-server-metadata",
        ),
        (
            "auth-as-no-token-endpoint",
            "2026-07-28",
            "auth/authorization-server-metadata-2026-07-28",
        ),
        (
            "auth-as-wrong-issuer",
            "2026-07-28",
            "auth/authorization-server-issuer",
        ),
    ] {
        let server = misbehaving_http(&["--auth", "--defect", defect]);
        let (code, report, text) = run(
            &server.url,
            &["--protocol-version", rev, "--include", "auth/*"],
        );
        assert_eq!(code, 0, "{defect}: {text}");
        let v = verdicts(&report);
        assert_eq!(v[id], "warn", "{defect}: {text}");
        assert!(with(&v, &["fail", "error"]).is_empty(), "{defect}: {text}");
    }
}

/// A real protected server: the official Python SDK's resource-server support (bearer
/// middleware, static token verifier with resource validation, its Protected Resource
/// Metadata route) plus a listed loopback authorization server's RFC 8414 metadata
/// (thirdparty/mcp_sdk_protected.py). It passes every `auth/` scenario but one SHOULD: its
/// 401 challenge names no `scope` though its metadata lists scopes_supported, which
/// mcpcheck reports as a warning (auth/challenge-scope), never a failure.
#[test]
fn the_python_sdk_protected_server_passes_the_auth_scenarios() {
    let Some(python) = python_venv() else {
        return; // `require` already failed the test under CI.
    };
    let script = workspace().join("thirdparty/mcp_sdk_protected.py");
    let port = free_port();
    let server = HttpServer::start(
        &python.display().to_string(),
        &[&script.display().to_string(), &port],
    );
    let addr = format!("127.0.0.1:{port}");
    assert!(
        eventually(20, || std::net::TcpStream::connect(&addr).is_ok()),
        "the protected Python SDK server did not listen"
    );
    let env = [
        ("MCPCHECK_T_VALID", "mcpcheck-sdk-token"),
        ("MCPCHECK_T_EXPIRED", "mcpcheck-sdk-expired-token"),
        ("MCPCHECK_T_READONLY", "mcpcheck-sdk-readonly-token"),
        ("MCPCHECK_T_FOREIGN", "mcpcheck-sdk-foreign-token"),
    ];
    for (rev, scope_id) in [
        ("2025-11-25", "auth/challenge-scope"),
        ("2026-07-28", "auth/challenge-scope-2026-07-28"),
    ] {
        let args = [
            &["--url", &server.url][..],
            &fast(),
            &TOKEN_FLAGS,
            &["--protocol-version", rev, "--include", "auth/*"],
        ]
        .concat();
        let (code, report, text) = json_report("run", &args, &env);
        assert_eq!(code, 0, "{rev}: {text}");
        let v = verdicts(&report);
        let applicable: BTreeSet<String> = auth_ids()
            .into_iter()
            .filter(|(_, revs)| revs.iter().any(|r| r == rev))
            .map(|(id, _)| id)
            .collect();
        let passed = with(&v, &["pass"]);
        let expected: BTreeSet<String> = applicable
            .iter()
            .filter(|id| *id != scope_id)
            .cloned()
            .collect();
        assert_eq!(passed, expected, "{rev}\n{text}");
        assert_eq!(v[scope_id], "warn", "{rev}\n{text}");
        let whole = report.to_string();
        for (_, token) in env {
            assert!(
                !whole.contains(token) && !text.contains(token),
                "{rev}: a token leaked"
            );
        }
    }
}

/// What a user of a protected server runs: the whole default suite (both revision legs)
/// with only the token mcpcheck needs, the server started by `--serve` on a free port
/// (the HTTP-only flags work with `--serve` as with `--url`). The auth scenarios that
/// need no other token run and pass; nothing fails.
#[test]
fn the_python_sdk_protected_server_passes_the_whole_suite_with_its_token() {
    let Some(python) = python_venv() else {
        return; // `require` already failed the test under CI.
    };
    let script = workspace().join("thirdparty/mcp_sdk_protected.py");
    let serve = format!("{} {} {{port}}", python.display(), script.display());
    let url = format!("http://127.0.0.1:{}/mcp", crate::support::unshared_port());
    let args = [
        &[
            "--url",
            &url,
            "--serve",
            &serve,
            "--bearer-env",
            "MCPCHECK_T_VALID",
        ][..],
        &FAST,
        &["--protocol-version", "eras"],
    ]
    .concat();
    let env = [("MCPCHECK_T_VALID", "mcpcheck-sdk-token")];
    let (code, report, text) = json_report("run", &args, &env);
    assert_eq!(code, 0, "{text}");
    let legs = report["legs"].as_array().expect("legs");
    assert_eq!(legs.len(), 2, "both eras: {text}");
    for leg in legs {
        let scenarios = leg["scenarios"].as_array().expect("scenarios");
        let verdict = |id: &str| {
            scenarios
                .iter()
                .find(|s| s["id"] == id)
                .map(|s| s["verdict"].as_str().unwrap_or_default().to_owned())
        };
        for id in ["auth/unauthenticated-401", "auth/invalid-token-401"] {
            assert_eq!(verdict(id).as_deref(), Some("pass"), "{id}: {text}");
        }
        assert!(
            scenarios
                .iter()
                .all(|s| s["verdict"] != "fail" && s["verdict"] != "error"),
            "{text}"
        );
    }
    assert!(!text.contains("mcpcheck-sdk-token"), "the token leaked");
}
