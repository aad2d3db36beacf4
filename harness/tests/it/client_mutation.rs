//! `mcpcheck client` against real clients: the fixture client passes every client scenario
//! at every revision, each of its defects is caught by exactly the check written for it,
//! and the Python SDK's client passes too.

use serde_json::Value;

use crate::support::{fixture, mcpcheck, require, workspace};

/// Runs `mcpcheck client` on `command` at `revisions` (all when empty): exit code, report.
fn client(command: &str, revisions: &[&str]) -> (i32, Value) {
    client_over("http", command, revisions)
}

/// The same over `transport` (`http`, or `stdio` for a command that names `{mock}`).
fn client_over(transport: &str, command: &str, revisions: &[&str]) -> (i32, Value) {
    client_with(transport, command, revisions, None)
}

/// The same with the known deviations of an SDK's client accepted:
/// thirdparty/baselines/clients/`sdk`.yml.
fn client_with(
    transport: &str,
    command: &str,
    revisions: &[&str],
    sdk: Option<&str>,
) -> (i32, Value) {
    let mut cmd = mcpcheck();
    cmd.args(["client", "--transport", transport, "--command", command]);
    if let Some(sdk) = sdk {
        let file = workspace().join(format!("thirdparty/baselines/clients/{sdk}.yml"));
        cmd.arg("--expected-failures").arg(file);
    }
    cmd.args(["--timeout", "10s", "--format", "json"]);
    for r in revisions {
        cmd.args(["--protocol-version", r]);
    }
    let out = cmd.output().unwrap();
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), report)
}

/// `(scenario id, verdict, rules of its own and protocol findings)` of every scenario leg.
fn verdicts(report: &Value) -> Vec<(String, String, Vec<String>)> {
    let mut out = Vec::new();
    for leg in report["legs"].as_array().unwrap() {
        for s in leg["scenarios"].as_array().unwrap() {
            let mut rules: Vec<String> = ["findings", "protocol"]
                .iter()
                .flat_map(|k| s[k].as_array().unwrap().clone())
                .map(|f| f["rule"].as_str().unwrap().to_owned())
                .collect();
            rules.sort();
            rules.dedup();
            let verdict = s["verdict"].as_str().unwrap().to_owned();
            out.push((s["id"].as_str().unwrap().to_owned(), verdict, rules));
        }
    }
    out
}

fn fixture_client() -> String {
    fixture("mcp-fixture-client").display().to_string()
}

#[test]
fn the_correct_fixture_client_passes_every_scenario_at_every_revision() {
    let (code, report) = client(&fixture_client(), &[]);
    let all = verdicts(&report);
    let legs = report["legs"].as_array().unwrap().len();
    assert_eq!(legs, 4, "2025-03-26, 2025-06-18, 2025-11-25 and 2026-07-28");
    for (id, verdict, rules) in &all {
        assert!(
            (verdict == "pass" || verdict == "skip") && rules.is_empty(),
            "{id}: {verdict} {rules:?}"
        );
    }
    assert!(
        all.iter().filter(|v| v.1 == "pass").count() >= 45,
        "{all:?}"
    );
    assert_eq!(code, 0);
    // The report is a results.schema.json report that says it tested a client.
    assert_eq!(report["role"], "client");
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(workspace().join("reports/results.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&report)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// Each defect of the fixture client, the scenario that must fail for it, and the rule
/// its findings carry (the scenario's own, which other scenarios see as protocol findings).
const CAUGHT: &[(&str, &str, &str)] = &[
    (
        "no-initialized",
        "client/initialized-sent",
        "client.initialized-sent",
    ),
    (
        "ignores-version",
        "client/unsupported-version",
        "client.unsupported-version-disconnect",
    ),
    (
        "no-reinit",
        "client/http-session-expired",
        "client.http-session-expired",
    ),
    (
        "cancel-unknown-id",
        "client/cancellation",
        "client.cancel-in-flight",
    ),
    (
        "cancel-initialize",
        "client/cancellation",
        "client.cancel-in-flight",
    ),
    (
        "roots-changed-undeclared",
        "client/roots-list-changed",
        "client.own-capability-declared",
    ),
    (
        "progress-token-reused",
        "client/progress-tokens-unique",
        "client.progress-token-unique",
    ),
    ("null-id", "client/request-id-not-null", "jsonrpc.id-type"),
    ("anonymous", "client/initialize", "client/initialize"),
    (
        "late-initialized",
        "client/initialized-before-operation",
        "client.initialized-before-operation",
    ),
    (
        "list-before-init",
        "client/initialize-first",
        "client.initialize-first",
    ),
    (
        "accept-json-only",
        "client/http-accept",
        "client.http-accept",
    ),
    (
        "no-session-id",
        "client/http-session-id",
        "client.http-session-id",
    ),
    (
        "no-version-header",
        "client/http-protocol-version",
        "client.http-protocol-version",
    ),
    (
        "other-version-header",
        "client/http-protocol-version-negotiated",
        "client.http-protocol-version-negotiated",
    ),
    (
        "batch",
        "client/http-single-message",
        "client.http-single-message",
    ),
    (
        "reused-id",
        "client/request-ids-unique",
        "client.request-id-unique",
    ),
    (
        "undeclared-prompts",
        "client/server-capabilities-respected",
        "client.server-capability-respected",
    ),
    ("string-arguments", "client/tools-call", "client/tools-call"),
    (
        "no-defaults",
        "client/elicitation-defaults",
        "client/elicitation-defaults",
    ),
    (
        "ping-unanswered",
        "client/ping-answered",
        "client/ping-answered",
    ),
    ("sampling-no-model", "client/sampling", "client/sampling"),
    (
        "roots-http-uri",
        "client/roots-file-uris",
        "client/roots-file-uris",
    ),
    (
        "no-reconnect",
        "client/sse-reconnect",
        "client.sse-reconnect",
    ),
    (
        "early-reconnect",
        "client/sse-retry-respected",
        "client.sse-retry-respected",
    ),
    (
        "no-last-event-id",
        "client/sse-last-event-id",
        "client.sse-last-event-id",
    ),
    (
        "schema-rewritten",
        "client/json-schema-2020-12-preserved",
        "client/json-schema-2020-12-preserved",
    ),
    (
        "stdio-noise",
        "client/stdio-only-messages",
        "client.stdio-only-messages",
    ),
    (
        "get-accept-json",
        "client/http-get-accept",
        "client.http-get-accept",
    ),
];

/// The 2026-07-28 defects (the handshake ones above do not apply there), each proved at
/// that revision.
const CAUGHT_2026: &[(&str, &str, &str)] = &[
    (
        "meta-no-capabilities",
        "client/request-meta",
        "client.request-meta",
    ),
    (
        "meta-no-client-info",
        "client/request-meta-client-info",
        "client.request-meta-client-info",
    ),
    (
        "version-header-mismatch",
        "client/http-protocol-version",
        "client.http-protocol-version",
    ),
    (
        "no-method-header",
        "client/http-standard-headers",
        "client.http-standard-headers",
    ),
    (
        "no-param-headers",
        "client/http-param-headers",
        "client.http-param-headers",
    ),
    (
        "param-header-for-null",
        "client/http-param-headers",
        "client.http-param-headers",
    ),
    (
        "no-version-retry",
        "client/version-retry",
        "client.version-retry",
    ),
    (
        "mrtr-state-modified",
        "client/mrtr-retry",
        "client.mrtr-retry",
    ),
    ("mrtr-same-id", "client/mrtr-retry", "client.mrtr-retry"),
    (
        "mrtr-state-leaked",
        "client/mrtr-isolated",
        "client.mrtr-isolated",
    ),
    (
        "calls-invalid-tools",
        "client/invalid-tool-excluded",
        "client.invalid-tool-excluded",
    ),
    (
        "fetches-refs",
        "client/no-network-ref",
        "client.no-network-ref",
    ),
];

/// The authorization defects (auth/* scenarios, HTTP only), each proved at 2025-11-25,
/// where every auth scenario runs.
const CAUGHT_AUTH: &[(&str, &str, &str)] = &[
    (
        "as-metadata-first",
        "client/auth-metadata-default",
        "client.auth-discovery",
    ),
    (
        "root-prm-first",
        "client/auth-metadata-var1",
        "client.auth-prm-fallback",
    ),
    (
        "no-root-fallback",
        "client/auth-metadata-var2",
        "client/auth-metadata-var2",
    ),
    (
        "openid-before-oauth",
        "client/auth-metadata-var3",
        "client.auth-metadata-order",
    ),
    ("no-pkce", "client/auth-pkce", "client.auth-pkce"),
    (
        "ignores-pkce-support",
        "client/auth-pkce-unsupported",
        "client.auth-pkce-unsupported",
    ),
    (
        "no-resource",
        "client/auth-resource",
        "client.auth-resource",
    ),
    ("drops-token", "client/auth-bearer", "client.auth-bearer"),
    (
        "ignores-challenge-scope",
        "client/auth-scope-from-www-authenticate",
        "client.auth-scope-challenge",
    ),
    (
        "first-scope-only",
        "client/auth-scope-from-scopes-supported",
        "client.auth-scope-selection",
    ),
    (
        "default-scope",
        "client/auth-scope-omitted-when-undefined",
        "client.auth-scope-selection",
    ),
    (
        "ignores-issuer",
        "client/auth-metadata-issuer-mismatch",
        "client.auth-issuer",
    ),
    (
        "unregistered-redirect",
        "client/auth-redirect-registered",
        "client.auth-redirect-registered",
    ),
    ("no-state", "client/auth-state", "client.auth-state"),
    (
        "ignores-preregistration",
        "client/auth-pre-registration",
        "client/auth-pre-registration",
    ),
    (
        "no-cimd",
        "client/auth-basic-cimd",
        "client/auth-basic-cimd",
    ),
    (
        "always-basic",
        "client/auth-token-endpoint-auth-post",
        "client.auth-token-endpoint-method",
    ),
    (
        "secret-in-form",
        "client/auth-token-endpoint-auth-basic",
        "client.auth-token-endpoint-method",
    ),
    (
        "basic-without-secret",
        "client/auth-token-endpoint-auth-none",
        "client.auth-token-endpoint-method",
    ),
    (
        "no-step-up",
        "client/auth-scope-step-up",
        "client/auth-scope-step-up",
    ),
    (
        "step-up-forever",
        "client/auth-scope-retry-limit",
        "client.auth-retry-limit",
    ),
    (
        "no-late-auth",
        "client/auth-unauthorized-later",
        "client/auth-unauthorized-later",
    ),
    (
        "ignores-resource-mismatch",
        "client/auth-resource-mismatch",
        "client.auth-resource-metadata",
    ),
];

/// The authorization defects of 2026-07-28 (RFC 9207 `iss`), proved at that revision.
const CAUGHT_AUTH_2026: &[(&str, &str, &str)] = &[
    (
        "iss-ignored",
        "client/auth-iss-wrong-issuer",
        "client.auth-iss",
    ),
    (
        "iss-missing-accepted",
        "client/auth-iss-supported-missing",
        "client.auth-iss",
    ),
    (
        "iss-only-when-advertised",
        "client/auth-iss-unexpected",
        "client.auth-iss",
    ),
    (
        "iss-normalized",
        "client/auth-iss-normalized",
        "client.auth-iss",
    ),
    (
        "iss-field-presence",
        "client/auth-iss-not-advertised",
        "client/auth-iss-not-advertised",
    ),
    (
        "rejects-iss",
        "client/auth-iss-supported",
        "client/auth-iss-supported",
    ),
];

/// The transports a scenario runs over (its file's `transports`, as `mcpcheck list
/// --client` gives them).
fn transports_of(scenario: &str) -> Vec<&'static str> {
    static LISTED: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    let listed = LISTED.get_or_init(|| {
        let out = mcpcheck()
            .args(["list", "--client", "--format", "json"])
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    });
    let entry = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == scenario)
        .unwrap_or_else(|| panic!("{scenario} is not a built-in client scenario"));
    ["http", "stdio"]
        .into_iter()
        .filter(|t| {
            entry["transports"]
                .as_array()
                .unwrap()
                .contains(&Value::from(*t))
        })
        .collect()
}

/// The fixture client with `defect`, as a command for `transport`.
fn fixture_command(defect: &str, transport: &str) -> String {
    match transport {
        "stdio" => format!("{} --defect {defect} --stdio {{mock}}", fixture_client()),
        _ => format!("{} --defect {defect}", fixture_client()),
    }
}

#[test]
fn each_defect_fails_exactly_its_scenario() {
    let listed = std::process::Command::new(fixture_client())
        .arg("--list-defects")
        .output()
        .unwrap();
    let listed = String::from_utf8(listed.stdout).unwrap();
    let every = || {
        CAUGHT
            .iter()
            .chain(CAUGHT_2026)
            .chain(CAUGHT_AUTH)
            .chain(CAUGHT_AUTH_2026)
    };
    let proved: Vec<&str> = every().map(|c| c.0).collect();
    assert_eq!(
        listed.lines().collect::<Vec<_>>(),
        proved,
        "every defect is proved"
    );
    // And every client scenario is proved by a defect only it catches.
    let scenarios = mcpcheck()
        .args(["list", "--client", "--format", "json"])
        .output()
        .unwrap();
    let scenarios: Value = serde_json::from_slice(&scenarios.stdout).unwrap();
    let unproved: Vec<&str> = scenarios
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["id"].as_str())
        .filter(|id| !every().any(|c| c.1 == *id))
        .collect();
    assert!(unproved.is_empty(), "no defect for {unproved:?}");
    // Never sending `initialized` also means requests before it, and fails the official
    // `initialize` scenario, which waits for it.
    // A sampling result without `model` breaks the schema as well.
    const ALONG: &[(&str, &str)] = &[
        (
            "no-initialized",
            "client.initialized-before-operation client/initialized-before-operation client/initialize",
        ),
        ("sampling-no-model", "schema.valid"),
        // Without `_meta` a request breaks the schema as well, and so does a clientInfo
        // without a version.
        ("meta-no-capabilities", "schema.valid"),
        ("anonymous", "schema.valid"),
        // Never looking at `iss` accepts every wrong one.
        (
            "iss-ignored",
            "client/auth-iss-supported-missing client/auth-iss-unexpected client/auth-iss-normalized",
        ),
        // Asking for other scopes than the challenge's is also not the SHOULD order, and
        // a step-up that ignores the 403's scope never gets it.
        (
            "ignores-challenge-scope",
            "client.auth-scope-selection client/auth-scope-step-up",
        ),
    ];
    // Each defect over every transport its scenario runs over, at its revision.
    let at = |list: &'static [(&'static str, &'static str, &'static str)], revision| {
        list.iter().flat_map(move |&(d, sc, r)| {
            transports_of(sc)
                .into_iter()
                .map(move |t| (d, sc, r, t, revision))
        })
    };
    let runs: Vec<(&str, &str, &str, &str, &str)> = at(CAUGHT, "2025-11-25")
        .chain(at(CAUGHT_2026, "2026-07-28"))
        .chain(at(CAUGHT_AUTH, "2025-11-25"))
        .chain(at(CAUGHT_AUTH_2026, "2026-07-28"))
        .collect();
    // Four clients at once: each is a small process that mostly waits on the mock.
    let problems = crate::support::suite::check_at_once(
        &runs,
        4,
        |&(defect, scenario, rule, over, revision)| {
            let along = ALONG.iter().find(|a| a.0 == defect).map_or("", |a| a.1);
            let command = fixture_command(defect, over);
            let (code, report) = client_over(over, &command, &[revision]);
            let defect = format!("{defect} (over {over})");
            let all = verdicts(&report);
            let failed: Vec<&str> = all
                .iter()
                .filter(|v| v.1 == "fail" || v.1 == "warn")
                .map(|v| v.0.as_str())
                .filter(|id| !along.split(' ').any(|a| a == *id))
                .collect();
            if failed != [scenario] {
                return Some(format!(
                    "{defect}: failed {failed:?}, not just {scenario}: {all:?}"
                ));
            }
            for (id, _, rules) in &all {
                let others: Vec<&String> = rules
                    .iter()
                    .filter(|r| r.as_str() != rule && !along.split(' ').any(|a| a == r.as_str()))
                    .collect();
                if !others.is_empty() {
                    return Some(format!("{defect}: {id} also broke {others:?}"));
                }
            }
            // A SHOULD-level defect warns; only `--fail-on warning` would fail the run for it.
            let warned = all.iter().any(|v| v.0 == scenario && v.1 == "warn");
            (code != i32::from(!warned)).then(|| format!("{defect}: exit code {code}"))
        },
    );
    assert!(problems.is_empty(), "{problems:#?}");
}

/// Every scenario leg of `report` passed or was skipped, with no finding at all.
fn assert_clean(who: &str, code: i32, report: &Value) {
    assert_clean_but(who, code, report, &[]);
}

/// The same, but the scenarios of `known` (an SDK's listed deviations, accepted by its
/// baseline so the run exits 0) fail wherever they run over HTTP: a fixed SDK shows as a
/// stale entry.
fn assert_clean_but(who: &str, code: i32, report: &Value, known: &[&str]) {
    for (id, verdict, rules) in verdicts(report) {
        if known.contains(&id.as_str()) {
            assert!(
                verdict == "fail" || verdict == "skip",
                "{who}: {id}: {verdict}"
            );
            continue;
        }
        assert!(
            (verdict == "pass" || verdict == "skip") && rules.is_empty(),
            "{who}: {id}: {verdict} {rules:?}"
        );
    }
    assert_eq!(code, 0, "{who}");
}

/// F21, F22 (thirdparty/FINDINGS.md): neither SDK's client starts a new session after
/// HTTP 404.
const SDK_DEVIATIONS: &[&str] = &["client/http-session-expired"];

/// F26: the Python SDK's OAuth client authorizes where no PKCE is advertised.
const PYTHON_AUTH_DEVIATIONS: &[&str] = &["client/auth-pkce-unsupported"];

/// F27: the TypeScript SDK's OAuth client does the same, and uses metadata naming
/// another issuer.
const TS_AUTH_DEVIATIONS: &[&str] = &[
    "client/auth-pkce-unsupported",
    "client/auth-metadata-issuer-mismatch",
];

#[test]
fn the_python_sdk_client_passes_every_scenario() {
    let Some(python) = require::python_venv() else {
        return;
    };
    let script = workspace().join("thirdparty/clients/python_client.py");
    let command = format!("{} {}", python.display(), script.display());
    let revisions = ["2025-11-25", "2026-07-28"];
    let (code, report) = client_with("http", &command, &revisions, Some("python-sdk"));
    let known = [SDK_DEVIATIONS, PYTHON_AUTH_DEVIATIONS].concat();
    assert_clean_but("python", code, &report, &known);
}

/// The python-sdk's own conformance client (`.github/actions/conformance/client.py` of
/// its pinned sdist, which CI runs against the official suite), unchanged.
#[test]
fn the_python_sdks_own_conformance_client_runs_unchanged_and_passes() {
    let Some(python) = require::python_venv() else {
        return;
    };
    let script = workspace().join("thirdparty/sdk-clients/python-sdk/client.py");
    assert!(
        script.exists(),
        "run bash thirdparty/setup.sh: {} is missing",
        script.display()
    );
    let command = format!("{} {}", python.display(), script.display());
    let revisions = ["2025-11-25", "2026-07-28"];
    let baseline = Some("python-sdk-conformance");
    let (code, report) = client_with("http", &command, &revisions, baseline);
    // It runs json-schema-ref-no-deref in handshake mode, for the official mock's sake.
    let known = [
        SDK_DEVIATIONS,
        PYTHON_AUTH_DEVIATIONS,
        &["client/no-network-ref"],
    ]
    .concat();
    assert_clean_but("python-sdk conformance client", code, &report, &known);
    let passed = verdicts(&report).iter().filter(|v| v.1 == "pass").count();
    assert!(passed >= 27, "{passed} passed");
}

#[test]
fn the_typescript_sdk_client_passes_every_scenario() {
    let Some(node) = require::node_sdk() else {
        return;
    };
    let script = workspace().join("thirdparty/clients/ts_client.mjs");
    let command = format!("{node} {}", script.display());
    let (code, report) = client_with("http", &command, &["2025-06-18"], Some("typescript-sdk"));
    let known = [SDK_DEVIATIONS, TS_AUTH_DEVIATIONS].concat();
    assert_clean_but("typescript", code, &report, &known);
}

/// Over stdio the client spawns `mcpcheck mock` (its `{mock}`) as its server: the fixture
/// and both SDK clients pass every scenario that runs over stdio, and the HTTP ones are
/// skipped with the reason.
#[test]
fn stdio_clients_reach_the_mock_through_mcpcheck_mock_and_pass() {
    // The TypeScript SDK 1.x client speaks only the handshake revisions.
    let both: &[&str] = &["2025-11-25", "2026-07-28"];
    let mut clients = vec![(
        "fixture".to_owned(),
        format!("{} --stdio {{mock}}", fixture_client()),
        both,
    )];
    if let Some(python) = require::python_venv() {
        let script = workspace().join("thirdparty/clients/python_client.py");
        let command = format!("{} {} --stdio {{mock}}", python.display(), script.display());
        clients.push(("python".to_owned(), command, both));
    }
    if let Some(node) = require::node_sdk() {
        let script = workspace().join("thirdparty/clients/ts_client.mjs");
        clients.push((
            "typescript".to_owned(),
            format!("{node} {} --stdio {{mock}}", script.display()),
            &["2025-11-25"],
        ));
    }
    for (who, command, revisions) in clients {
        let (code, report) = client_over("stdio", &command, revisions);
        assert_clean(&who, code, &report);
        let all = verdicts(&report);
        let ran = |id: &str| all.iter().any(|v| v.0 == id && v.1 == "pass");
        assert!(
            ran("client/stdio-only-messages") && ran("client/sampling"),
            "{who}: {all:?}"
        );
        let skipped = all.iter().find(|v| v.0 == "client/http-accept").unwrap();
        assert_eq!(skipped.1, "skip", "{who}");
    }
}

#[test]
fn the_transport_and_the_mock_placeholder_must_agree() {
    for (transport, command) in [("stdio", "my-client"), ("http", "my-client {mock}")] {
        let out = mcpcheck()
            .args(["client", "--transport", transport, "--command", command])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("{mock}"), "{stderr}");
    }
}

#[test]
fn a_broken_client_scenario_file_is_a_usage_error_with_its_line() {
    let dir = crate::support::tempfile_path("client-scenarios");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("bad.yaml"),
        "role: client\nid: client/bad\ntitle: t\nspec: server/tools\ntell: initialize\nsteps:\n  - send: ping\n",
    )
    .unwrap();
    let out = mcpcheck()
        .args(["client", "--command", "true", "--scenario-dir"])
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bad.yaml:7"), "{stderr}");
    assert!(stderr.contains("held request"), "{stderr}");
    // `mcpcheck list --client` checks the same files (a lint), and lists the built-in ones.
    let listed = mcpcheck()
        .args(["list", "--client"])
        .arg(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&listed.stderr);
    assert_eq!(listed.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bad.yaml:7"), "{stderr}");
    let builtin = mcpcheck().args(["list", "--client"]).output().unwrap();
    let table = String::from_utf8_lossy(&builtin.stdout);
    assert!(
        table.contains("client/sse-retry-respected") && table.contains("client scenarios"),
        "{table}"
    );
}

#[test]
fn a_scenario_needing_a_capability_the_client_does_not_declare_is_skipped() {
    let dir = crate::support::tempfile_path("client-requires");
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = |name: &str, requires: &str| {
        let text = format!(
            "role: client\nid: client/{name}\ntitle: t\nspec: client/roots\ntell: initialize\nrequires: [{requires}]\nsteps:\n  - receive: initialize\n"
        );
        std::fs::write(dir.join(format!("{name}.yaml")), text).unwrap();
    };
    scenario("needs-experimental", "experimental");
    scenario("needs-no-roots", "'!roots'");
    scenario("needs-roots", "roots");
    let dir = dir.display().to_string();
    let mut cmd = mcpcheck();
    cmd.args([
        "client",
        "--command",
        &fixture_client(),
        "--scenario-dir",
        &dir,
    ]);
    cmd.args(["--protocol-version", "2025-11-25", "--format", "json"]);
    let out = cmd.output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let got: Vec<(String, String, String)> = report["legs"][0]["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let field = |k: &str| s[k].as_str().unwrap_or_default().to_owned();
            (field("id"), field("verdict"), field("reason"))
        })
        .collect();
    let want = |id: &str, verdict: &str, reason: &str| {
        (id.to_owned(), verdict.to_owned(), reason.to_owned())
    };
    assert_eq!(
        got,
        [
            want(
                "client/needs-experimental",
                "skip",
                "the client does not declare `experimental`"
            ),
            want(
                "client/needs-no-roots",
                "skip",
                "the client declares `roots` (this checks clients without it)"
            ),
            want("client/needs-roots", "pass", ""),
        ]
    );
}

/// The official suite's expected-failures file works for clients as for servers: its
/// `client:` list accepts the failures of the client scenarios naming those ids, and
/// `--update-baseline` rewrites that list and leaves `server:` as it was.
#[test]
fn the_official_expected_failures_file_accepts_client_failures_by_official_id() {
    let dir = crate::support::tempfile_path("client-baseline");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("expected-failures.yml");
    std::fs::write(&file, "server:\n  - tools-list\nclient:\n  - tools_call\n").unwrap();
    let run = |defect: &str, extra: &[&str]| {
        let mut cmd = mcpcheck();
        cmd.args([
            "client",
            "--command",
            &format!("{} --defect {defect}", fixture_client()),
        ]);
        cmd.args([
            "--scenario",
            "tools_call",
            "--protocol-version",
            "2025-11-25",
        ]);
        cmd.arg("--expected-failures").arg(&file).args(extra);
        let out = cmd.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, out) = run("string-arguments", &[]);
    assert_eq!(code, Some(0), "the listed failure is expected: {out}");
    // A correct client makes the entry stale, which fails the run as the official suite's does.
    let (code, out) = run("no-defaults", &[]);
    assert_eq!(code, Some(1), "a passing listed scenario is stale: {out}");
    assert!(out.contains("stale"), "{out}");
    let (code, _) = run("no-defaults", &["--update-baseline"]);
    assert_eq!(code, Some(0));
    let rewritten = std::fs::read_to_string(&file).unwrap();
    assert!(
        rewritten.contains("server:\n  - \"tools-list\""),
        "{rewritten}"
    );
    assert!(!rewritten.contains("tools_call"), "{rewritten}");
}

/// `--partition K/N` splits the client scenarios as it splits a server suite: the shares
/// are disjoint and together the whole suite.
#[test]
fn partitions_split_the_client_scenarios() {
    let ids = |part: &str| -> Vec<String> {
        let out = mcpcheck()
            .args([
                "client",
                "--command",
                &fixture_client(),
                "--partition",
                part,
            ])
            .args(["--protocol-version", "2025-11-25", "--format", "json"])
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["legs"][0]["partition"], part);
        verdicts(&report).into_iter().map(|v| v.0).collect()
    };
    let (a, b) = (ids("1/2"), ids("2/2"));
    assert!(!a.is_empty() && !b.is_empty(), "{a:?} {b:?}");
    assert!(a.iter().all(|id| !b.contains(id)), "{a:?} {b:?}");
    let all = mcpcheck()
        .args(["list", "--client", "--format", "json"])
        .output()
        .unwrap();
    let all: Value = serde_json::from_slice(&all.stdout).unwrap();
    assert_eq!(a.len() + b.len(), all.as_array().unwrap().len());
}

/// The file reports of a client run say it tested a client, and show no protocol sweep
/// (a client run has none).
#[test]
fn the_html_and_markdown_reports_of_a_client_run_name_the_client() {
    let dir = crate::support::tempfile_path("client-reports");
    std::fs::create_dir_all(&dir).unwrap();
    let (html, md) = (dir.join("r.html"), dir.join("r.md"));
    let out = mcpcheck()
        .args([
            "client",
            "--command",
            &fixture_client(),
            "--scenario",
            "initialize",
        ])
        .args(["--protocol-version", "2025-11-25", "-q"])
        .arg("--report")
        .arg(format!("html={}", html.display()))
        .arg("--report")
        .arg(format!("markdown={}", md.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let html = std::fs::read_to_string(html).unwrap();
    let md = std::fs::read_to_string(md).unwrap();
    assert!(html.contains("<th>client</th>") && !html.contains("protocol sweep"));
    assert!(
        md.contains("| client |") && !md.contains("protocol sweep"),
        "{md}"
    );
}

/// What the mock authorization server issues or is given (tokens, codes, the client
/// secret, the code verifier) never reaches a report: not in bodies, URLs, `Location`,
/// `Authorization: Bearer` nor inside `Authorization: Basic`'s base64.
#[test]
fn an_auth_run_reports_no_secret() {
    use base64::Engine;
    let dir = crate::support::tempfile_path("client-auth-reports");
    std::fs::create_dir_all(&dir).unwrap();
    let (json, html, junit) = (dir.join("r.json"), dir.join("r.html"), dir.join("r.xml"));
    let out = mcpcheck()
        .args(["client", "--command", &fixture_client()])
        .args(["--scenario", "client/auth-pre-registration"])
        .args(["--scenario", "client/auth-bearer"])
        .args(["--protocol-version", "2025-11-25", "-q"])
        .arg("--report")
        .arg(format!("json={}", json.display()))
        .arg("--report")
        .arg(format!("html={}", html.display()))
        .arg("--report")
        .arg(format!("junit={}", junit.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let basic = base64::engine::general_purpose::STANDARD
        .encode("mcpcheck-preregistered:mcpcheck-preregistered-secret");
    for path in [json, html, junit] {
        let text = std::fs::read_to_string(&path).unwrap();
        for secret in [
            "mcpcheck-access-",
            "mcpcheck-refresh-",
            "mcpcheck-code-",
            "mcpcheck-preregistered-secret",
            basic.as_str(),
        ] {
            assert!(!text.contains(secret), "{}: {secret}", path.display());
        }
    }
    // The flow is there, redacted: the token in the bearer header, the code in the redirect.
    let text = std::fs::read_to_string(dir.join("r.json")).unwrap();
    assert!(text.contains("Bearer [REDACTED]"), "{text}");
    assert!(text.contains("Basic [REDACTED]"));
    assert!(text.contains("callback?code=[REDACTED]"));
    assert!(text.contains(r#"access_token\":\"[REDACTED]"#));
}
