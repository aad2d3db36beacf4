//! The HTML report opens on what to fix: the failures and warnings first, each with its
//! finding and links to its section and transcript; then the tables; then the scenarios,
//! failures first; skips folded by reason; passing scenarios without their transcripts
//! (the JSON report keeps them). Opened in headless Chromium as a reader would.

use std::path::Path;

use crate::support::browser::headless;
use crate::support::*;

/// Runs the fixture with `server_args` on a slice of the suite that passes, fails and
/// skips, and returns the HTML report.
fn report(dir: &Path, server_args: &[&str]) -> String {
    std::fs::create_dir_all(dir).unwrap();
    let html = dir.join("report.html");
    let o = mcpcheck()
        .args(["run", "--protocol-version", "2025-11-25"])
        .args(FAST)
        .args([
            "--include",
            "stdio/*",
            "--include",
            "tools/*",
            "--include",
            "auth/*",
        ])
        .arg(format!("--report=html={}", html.display()))
        .arg("--")
        .args(server_args)
        .output()
        .unwrap();
    std::fs::read_to_string(&html).unwrap_or_else(|e| panic!("{e}\n{}", describe(&o)))
}

/// The `<details class="scenario" ...>` elements of the page, each as its text.
fn sections(html: &str) -> Vec<&str> {
    let starts: Vec<usize> = html
        .match_indices("<details class=\"scenario")
        .map(|(i, _)| i)
        .collect();
    starts
        .iter()
        .enumerate()
        .map(|(n, &i)| &html[i..starts.get(n + 1).copied().unwrap_or(html.len())])
        .collect()
}

#[test]
fn a_failing_run_opens_on_what_to_fix() {
    let Some(browser) = chromium() else {
        return;
    };
    let dir = tempfile_path("html-fix");
    let misbehaving = misbehaving();
    let html = report(&dir, &[&misbehaving, "--defect", "garbage-stdout"]);

    // The fix list comes before every table and every scenario.
    let fix = html.find("<h2>What to fix (").expect("a fix list");
    for later in [
        "<h2>By area</h2>",
        "<h2>Checks</h2>",
        "<details class=\"scenario",
    ] {
        assert!(
            fix < html.find(later).unwrap(),
            "{later} before the fix list"
        );
    }
    assert!(
        html[fix..].contains("stdio.stdout-only-messages"),
        "the broken rule is named in the fix list"
    );
    // The log line breaks the rule in every session: told once, the others linked.
    let list_end = html.find("</section>").unwrap();
    assert_eq!(
        html[fix..list_end]
            .matches("<code>stdio.stdout-only-messages</code> stdout carried")
            .count(),
        1,
        "the repeated finding is told once in the fix list"
    );
    assert!(
        html[fix..list_end].contains("the same in "),
        "the repeats are linked"
    );
    // Every link of the fix list lands on an element of the page.
    let list = &html[fix..list_end];
    for (i, _) in list.match_indices("href=\"#") {
        let target = &list[i + 7..];
        let target = &target[..target.find('"').unwrap()];
        assert!(
            html.contains(&format!("id=\"{target}\"")),
            "the fix list links to #{target}, which is not on the page"
        );
    }

    // Scenarios: failures before passes; skips folded; no pass keeps its transcript.
    let all = sections(&html);
    let verdict = |s: &str| {
        let v = &s[s.find("data-verdict=\"").unwrap() + 14..];
        v[..v.find('"').unwrap()].to_owned()
    };
    let first_pass = all.iter().position(|s| verdict(s) == "pass").unwrap();
    let last_fail = all.iter().rposition(|s| verdict(s) == "fail").unwrap();
    assert!(last_fail < first_pass, "a failure after a pass");
    let skips: Vec<&&str> = all.iter().filter(|s| verdict(s) == "skip").collect();
    assert!(!skips.is_empty(), "the auth scenarios skip over stdio");
    assert!(
        skips
            .iter()
            .all(|s| s.starts_with("<details class=\"scenario skips\"")),
        "a skip shown as a section of its own"
    );
    // (The template escapes `/` in ids.)
    assert!(skips.iter().any(|s| s.contains("<code>auth&#x2f;")));
    for s in all.iter().filter(|s| verdict(s) == "pass") {
        assert!(
            !s.contains("<div class=\"frame sent\"")
                && !s.contains("<div class=\"frame received\""),
            "a passing scenario kept unflagged frames: {}",
            &s[..200.min(s.len())]
        );
    }

    // In the browser: the first heading after the title is the fix list, and the script ran.
    let path = dir.join("report.html");
    let (ok, dom, err) = headless(
        &browser,
        &dir.join("profile"),
        &["--dump-dom", &format!("file://{}", path.display())],
    );
    assert!(ok && dom.contains("data-report-script=\"ran\""), "{err}");
    let first_h2 = &dom[dom.find("<h2").unwrap()..];
    assert!(
        first_h2.starts_with("<h2>What to fix ("),
        "{}",
        &first_h2[..80]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_passing_run_says_there_is_nothing_to_fix() {
    let dir = tempfile_path("html-nothing");
    let html = report(&dir, &[&reference()]);
    assert!(
        html.contains("Nothing to fix: no failure, error or warning in"),
        "{}",
        &html[..2000.min(html.len())]
    );
    assert!(!html.contains("<h2>What to fix"));
    let _ = std::fs::remove_dir_all(&dir);
}
