//! The built-in suite as data: the scenarios `mcpcheck list --format json` lists, and the
//! defect map `fixtures/misbehaving/defects.toml` (which scenarios each defect of the
//! misbehaving fixture must fail).

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use super::{describe, mcpcheck, workspace};

/// One scenario as `mcpcheck list --format json` gives it (the fields the tests use).
#[derive(Debug, Deserialize)]
pub struct Listed {
    pub id: String,
    pub revisions: Vec<String>,
    /// The official suite's scenario ids it stands for (absent when none).
    #[serde(default)]
    pub official: Vec<String>,
}

/// The built-in suite, from `mcpcheck list --format json`.
pub fn listed() -> Vec<Listed> {
    listed_with(&[])
}

/// The scenarios `mcpcheck list --format json ARGS` lists (e.g. `--partition 2/3`), in its
/// order.
pub fn listed_with(args: &[&str]) -> Vec<Listed> {
    let out = mcpcheck()
        .args(["list", "--format", "json"])
        .args(args)
        .output()
        .expect("running mcpcheck list");
    assert!(out.status.success(), "{}", describe(&out));
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("mcpcheck list --format json: {e}\n{}", describe(&out)))
}

/// Scenario id -> the revisions it applies to, in the suite's order.
pub fn revisions() -> BTreeMap<String, Vec<String>> {
    listed().into_iter().map(|s| (s.id, s.revisions)).collect()
}

/// One defect of the misbehaving fixture.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Defect {
    /// What the defect does, one line.
    pub does: String,
    /// The scenario ids it must fail.
    pub fails: BTreeSet<String>,
    /// Whether the defect has a 2026-07-28 form (default: yes). `false` for one that
    /// breaks what only the handshake revisions have (`initialize`, `ping`,
    /// `notifications/initialized`): its rows are not expected to fail at 2026-07-28.
    #[serde(default = "yes")]
    pub stateless: bool,
    /// `serial = true`: run with one job. For a defect that breaks concurrency itself
    /// (requests of one scenario sent at once), which scenarios running side by side would
    /// also trip over.
    #[serde(default)]
    pub serial: bool,
}

fn yes() -> bool {
    true
}

/// Defect name -> what it must fail, from `fixtures/misbehaving/defects.toml`.
pub fn defects() -> BTreeMap<String, Defect> {
    defects_in("fixtures/misbehaving/defects.toml")
}

/// Broken variant -> what it must fail, for the official-fixture scenarios
/// (`thirdparty/official_fixture.py --broken NAME`).
pub fn official_fixture_defects() -> BTreeMap<String, Defect> {
    defects_in("thirdparty/official-fixture-defects.toml")
}

fn defects_in(file: &str) -> BTreeMap<String, Defect> {
    let path = workspace().join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Defect name -> the scenarios it must fail, for the defects `keep` selects.
pub fn defect_table(keep: impl Fn(&str) -> bool) -> BTreeMap<String, BTreeSet<String>> {
    defects()
        .into_iter()
        .filter(|(name, _)| keep(name))
        .map(|(name, d)| (name, d.fails))
        .collect()
}

/// The stateless revision: a defect's rows that apply there are verified there too.
pub const STATELESS: &str = "2026-07-28";

/// The `expected` scenarios that apply at `revision`.
pub fn applying_at(
    expected: &BTreeSet<String>,
    revisions: &BTreeMap<String, Vec<String>>,
    revision: &str,
) -> BTreeSet<String> {
    expected
        .iter()
        .filter(|id| {
            revisions
                .get(*id)
                .is_some_and(|r| r.iter().any(|x| x == revision))
        })
        .cloned()
        .collect()
}

/// The revisions to run a defect at so that each of its `expected` scenarios runs: the
/// default revision, plus the first revision of each expected scenario that does not apply
/// to the default one (`revisions` from [`revisions`]).
pub fn revisions_to_run(
    expected: &BTreeSet<String>,
    revisions: &BTreeMap<String, Vec<String>>,
) -> BTreeSet<String> {
    let mut runs = BTreeSet::from(["2025-11-25".to_owned()]);
    for id in expected {
        if let Some(r) = revisions
            .get(id)
            .filter(|r| !r.iter().any(|x| x == "2025-11-25"))
        {
            runs.insert(r[0].clone());
        }
    }
    runs
}

/// Runs `check` on every item, `at_once` at a time (mutation runs mostly wait on their
/// servers, so a few side by side use the cores one leaves idle); returns what the checks
/// reported, sorted.
pub fn check_at_once<T: Sync>(
    items: &[T],
    at_once: usize,
    check: impl Fn(&T) -> Option<String> + Sync,
) -> Vec<String> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let problems = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..at_once {
            s.spawn(|| {
                while let Some(item) =
                    items.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
                {
                    if let Some(problem) = check(item) {
                        problems.lock().unwrap().push(problem);
                    }
                }
            });
        }
    });
    let mut problems = problems.into_inner().unwrap();
    problems.sort();
    problems
}
