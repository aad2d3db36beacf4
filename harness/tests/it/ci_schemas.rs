//! Schemas never silently missing: with an empty cache and no schema directory, `run`
//! fetches the pinned schemas, or (offline) stops with exit 2 and the fix; `--no-schema`
//! runs and every report says schema checks were disabled.

use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use crate::support::*;

/// `mcpcheck` with an empty home and cache, no schema directory, and downloads going to
/// `base` (never to the network).
fn cold(home: &Path, base: &str) -> Command {
    std::fs::create_dir_all(home).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mcpcheck"));
    cmd.env_remove("MCPCHECK_SCHEMA_DIR")
        .env("HOME", home)
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("MCPCHECK_SCHEMA_BASE_URL", base)
        .env("NO_COLOR", "1");
    cmd
}

/// A loopback port with nothing listening: a download there fails at once, as it does
/// offline (no DNS wait).
fn closed_port() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    base
}

#[test]
fn offline_with_an_empty_cache_exits_2_with_the_fix() {
    let home = tempfile_path("cold-home");
    let started = std::time::Instant::now();
    let out = cold(&home, &closed_port())
        .args(["run", "--"])
        .arg(reference())
        .output()
        .unwrap();
    let text = describe(&out);
    assert_eq!(
        out.status.code(),
        Some(2),
        "never PASS without schemas: {text}"
    );
    for needle in [
        "no schema for 2025-11-25",
        "fetching it failed",
        "mcpcheck schemas fetch",
        "--schema-dir",
        "--no-schema",
    ] {
        assert!(text.contains(needle), "{needle:?} in {text}");
    }
    assert!(!text.contains("PASS"), "{text}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "the offline case must not wait on the network: {:?}",
        started.elapsed()
    );
}

#[test]
fn no_schema_runs_and_every_report_says_schema_checks_were_disabled() {
    let home = tempfile_path("cold-home-noschema");
    let dir = tempfile_path("noschema-reports");
    let (json, md, html) = (dir.join("r.json"), dir.join("r.md"), dir.join("r.html"));
    let junit = dir.join("r.xml");
    let out = cold(&home, &closed_port())
        .args(["run", "--no-schema", "--include", "lifecycle/*"])
        .arg(format!("--report=json={}", json.display()))
        .arg(format!("--report=markdown={}", md.display()))
        .arg(format!("--report=html={}", html.display()))
        .arg(format!("--report=junit={}", junit.display()))
        .arg("--")
        .arg(reference())
        .output()
        .unwrap();
    let text = describe(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("schema checks are DISABLED"), "{text}");
    let verdict = text.lines().position(|l| l.starts_with("PASS:"));
    let note = text
        .lines()
        .position(|l| l.starts_with("note: schema checks DISABLED"));
    assert!(
        matches!((verdict, note), (Some(v), Some(n)) if n > v),
        "the note follows the verdict line: {text}"
    );
    let junit = std::fs::read_to_string(&junit).unwrap();
    assert!(
        junit.contains("<property name=\"schema\" value=\"DISABLED:"),
        "{junit}"
    );
    assert!(
        text.contains("schema   DISABLED:"),
        "terminal header: {text}"
    );
    let report: serde_json::Value =
        single_leg(serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap());
    assert_eq!(
        report["schema"]["status"], "disabled",
        "{:#}",
        report["schema"]
    );
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("| schema | **⚠️ DISABLED**"), "{md}");
    let html = std::fs::read_to_string(&html).unwrap();
    assert!(
        html.contains("<span class=\"badge warn\">disabled</span> DISABLED:"),
        "html header"
    );
    // The JSON report still follows its published schema (its one leg, `report`).
    let schema = leg_schema();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&report)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

#[test]
fn a_missing_schema_is_fetched_verified_and_used() {
    let home = tempfile_path("cold-home-fetch");
    let (base, server) = serve_schemas(5, Serving::default());
    let out = cold(&home, &base)
        .args(["run", "--include", "lifecycle/*", "--"])
        .arg(reference())
        .output()
        .unwrap();
    let served = server.join().unwrap();
    let text = describe(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    let notes: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("not found locally: fetched"))
        .collect();
    assert_eq!(notes.len(), 1, "one line says so: {text}");
    assert!(notes[0].contains("sha256 verified"), "{}", notes[0]);
    assert!(served.contains(&"2025-11-25".to_owned()), "{served:?}");
    assert!(
        text.contains("messages validated against 2025-11-25"),
        "the fetched schema is used: {text}"
    );
    let cached = std::fs::read_dir(home.join("cache/mcpcheck/schemas"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path()
        .join("2025-11-25/schema.json");
    assert!(cached.is_file(), "{}", cached.display());

    // The next run finds it in the cache and fetches nothing (the port is closed now).
    let out = cold(&home, &closed_port())
        .args(["run", "--include", "lifecycle/*", "--"])
        .arg(reference())
        .output()
        .unwrap();
    let text = describe(&out);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(!text.contains("fetched"), "{text}");
}

/// The requested revision's schema was fetched, but the server negotiated another whose
/// schema could not be had: the run stops with exit 2 instead of passing unchecked.
#[test]
fn a_negotiated_revision_without_a_schema_is_an_error() {
    let home = tempfile_path("cold-home-negotiated");
    let (base, server) = serve_schemas(
        5,
        Serving {
            only: Some("2025-11-25"),
            ..Serving::default()
        },
    );
    let out = cold(&home, &base)
        // One revision asked for: the server negotiating another is this test's subject.
        .args([
            "run",
            "--protocol-version",
            "2025-11-25",
            "--include",
            "lifecycle/*",
            "--",
        ])
        .arg(misbehaving())
        .args(["--defect", "version-downgrade"])
        .output()
        .unwrap();
    server.join().unwrap();
    let text = describe(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("the server negotiated it"), "{text}");
    assert!(text.contains("mcpcheck schemas fetch"), "{text}");
}

/// Every leg's schema is settled before any leg runs: when a later leg's cannot be had,
/// the run stops with exit 2 before an earlier leg prints a verdict.
#[test]
fn a_later_legs_missing_schema_stops_the_run_before_any_verdict() {
    let home = tempfile_path("cold-home-legs");
    let only = tempfile_path("only-2025-11-25");
    std::fs::create_dir_all(&only).unwrap();
    let link = only.join("2025-11-25");
    if !link.exists() {
        std::os::unix::fs::symlink(schema_dir().join("2025-11-25"), &link).unwrap();
    }
    let out = cold(&home, &closed_port())
        .arg("run")
        .arg("--schema-dir")
        .arg(&only)
        .args(["--protocol-version", "2025-11-25,2025-06-18", "--"])
        .arg(reference())
        .output()
        .unwrap();
    let text = describe(&out);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("no schema for 2025-06-18"), "{text}");
    assert!(
        !text.contains("PASS"),
        "no leg's verdict before the stop: {text}"
    );
}
