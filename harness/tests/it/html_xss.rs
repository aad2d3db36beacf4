//! The HTML report escapes everything a server sends. The misbehaving fixture's
//! `--hostile-text` puts `<script>`, `</textarea>`, attribute quotes, an `onerror` image and a
//! `javascript:` link into serverInfo, instructions, tool descriptions, error messages, stderr
//! and a stdout line (quoted as evidence); each payload, if it ran, would set `data-pwned` on
//! the root element. The report is opened in headless Chromium: the report's own script must
//! have run (so scripts were enabled), no payload may have run, no payload element may exist,
//! and the payload must show as literal text.

use std::path::Path;

use crate::support::browser::{as_serialized_text, headless};
use crate::support::*;

#[test]
fn server_text_cannot_inject_into_the_html_report() {
    let Some(browser) = chromium() else {
        return;
    };
    let dir = tempfile_path("xss");
    std::fs::create_dir_all(&dir).unwrap();
    let html_path = dir.join("report.html");
    let payload = escaped_in_the_file(&dir, &html_path);
    payload_is_inert_in_the_dom(&browser, &dir, &html_path, &payload);
    report_renders(&browser, &dir, &html_path);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same for a client under test (`mcpcheck client`): what the client sends (its name,
/// its tool arguments) and writes to stderr reaches the report escaped and stays inert.
#[test]
fn client_text_cannot_inject_into_the_html_report() {
    let Some(browser) = chromium() else {
        return;
    };
    let dir = tempfile_path("xss-client");
    std::fs::create_dir_all(&dir).unwrap();
    let html_path = dir.join("report.html");
    let json_path = dir.join("results.json");
    let client = crate::support::fixture("mcp-fixture-client");
    let output = mcpcheck()
        .args(["client", "--command"])
        .arg(format!("{} --hostile-text", client.display()))
        .args(["--scenario", "client/tools-call"])
        .args(["--protocol-version", "2025-11-25", "--timeout", "5s"])
        .arg(format!("--report=html={}", html_path.display()))
        .arg(format!("--report=json={}", json_path.display()))
        .output()
        .unwrap();
    let text = describe(&output);
    let html = std::fs::read_to_string(&html_path).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let json: serde_json::Value =
        single_leg(serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap());
    // The payload, as the client sent it: its name in `initialize`.
    let initialize: serde_json::Value = serde_json::from_str(
        json["scenarios"][0]["transcript"][0]["text"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    let payload = initialize["params"]["clientInfo"]["name"]
        .as_str()
        .expect("the hostile client name")
        .to_owned();
    assert!(payload.contains("<script>"), "{payload}");
    // In the transcript (initialize, the tool arguments) and the client's stderr.
    let escaped_in_file = html
        .matches("&lt;script&gt;document.documentElement")
        .count();
    assert!(
        escaped_in_file >= 3,
        "payload appears {escaped_in_file} times:\n{text}"
    );
    for raw in ["<script>document", "<img", "</textarea>"] {
        assert!(!html.contains(raw), "raw {raw:?} in the HTML file");
    }
    payload_is_inert_in_the_dom(&browser, &dir, &html_path, &payload);
    report_renders(&browser, &dir, &html_path);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Writes the report of a run against the hostile fixture to `html_path`, checks that the
/// file holds the payload only escaped, and returns the payload.
fn escaped_in_the_file(dir: &Path, html_path: &Path) -> String {
    let json_path = dir.join("results.json");
    let output = mcpcheck()
        .args([
            "run",
            "--protocol-version",
            "2025-11-25",
            "--timeout",
            "2s",
            "--shutdown-wait",
            "300ms",
            "--kill-wait",
            "300ms",
        ])
        .args([
            "--include",
            "stdio/*",
            "--include",
            "tools/*",
            "--include",
            "errors/*",
        ])
        .arg(format!("--report=html={}", html_path.display()))
        .arg(format!("--report=json={}", json_path.display()))
        .args([
            "--",
            &misbehaving(),
            "--hostile-text",
            "--defect",
            "garbage-stdout",
        ])
        .output()
        .unwrap();
    let text = describe(&output);
    let html = std::fs::read_to_string(html_path).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let json: serde_json::Value =
        single_leg(serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap());
    let payload = json["profile"]["server_info"]["name"]
        .as_str()
        .expect("the hostile serverInfo name")
        .to_owned();
    assert!(
        payload.contains("<script>") && payload.contains("javascript:"),
        "{payload}"
    );
    // The payload reached the report in several places (serverInfo, tool descriptions,
    // stderr, error messages, the garbage-stdout evidence).
    let escaped_in_file = html
        .matches("&lt;script&gt;document.documentElement")
        .count();
    assert!(
        escaped_in_file >= 4,
        "payload appears {escaped_in_file} times:\n{text}"
    );
    for raw in [
        "<script>document",
        "<img",
        "</textarea>",
        "<a href=\"javascript:",
    ] {
        assert!(!html.contains(raw), "raw {raw:?} in the HTML file");
    }
    payload
}

/// Opens the report in the browser: its own script ran, no payload ran or became an
/// element, and the payload shows as literal text.
fn payload_is_inert_in_the_dom(browser: &Path, dir: &Path, html_path: &Path, payload: &str) {
    let (ok, dom, err) = headless(
        browser,
        &dir.join("profile-dom"),
        &["--dump-dom", &format!("file://{}", html_path.display())],
    );
    assert!(
        ok && dom.contains("</html>"),
        "chromium --dump-dom failed: {err}"
    );
    assert!(
        dom.contains("data-report-script=\"ran\""),
        "the report's own script did not run, so this test proves nothing: {err}"
    );
    assert!(!dom.contains("data-pwned=\""), "a payload ran");
    for element in ["<img", "<textarea", "<a href=\"javascript:"] {
        assert!(
            !dom.contains(element),
            "the DOM has a payload element {element:?}"
        );
    }
    // Shown literally: the DOM holds the payload as text (serialized with entities).
    assert!(
        dom.contains(&as_serialized_text(payload)),
        "the payload does not show literally"
    );
}

/// And the report renders: a screenshot is written and is a real PNG.
fn report_renders(browser: &Path, dir: &Path, html_path: &Path) {
    let png = dir.join("report.png");
    let (ok, _, err) = headless(
        browser,
        &dir.join("profile-shot"),
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1280,1600",
            &format!("file://{}", html_path.display()),
        ],
    );
    let bytes = std::fs::read(&png).unwrap_or_default();
    assert!(
        ok && bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000,
        "no screenshot ({} bytes): {err}",
        bytes.len()
    );
}
