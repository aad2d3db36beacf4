//! The requirement tables of `scenarios/coverage/`, held to their format and to the suite.
//!
//! Each table quotes every server requirement of one revision and names the scenarios and
//! session rules that check it. Tables drift silently: a scenario is renamed or narrowed to
//! other revisions, a rule is dropped, a status is edited and the summary is not. These tests
//! turn that drift into a failing `cargo test`, so a table never claims coverage the suite
//! does not give. Every problem is reported at once, each naming the file, the row and the
//! cell, since a rename usually breaks many rows together.

use std::collections::{BTreeMap, BTreeSet};

use super::builtin;
use crate::check::rules;
use crate::protocol::Revision;

/// A table file: its name (for messages), its text and the revision it covers.
struct TableFile {
    name: &'static str,
    text: &'static str,
    revision: Revision,
}

/// The tables, one per revision, embedded so that the test reads the committed text.
const TABLES: [TableFile; 2] = [
    TableFile {
        name: "scenarios/coverage/2025-11-25.md",
        text: include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../scenarios/coverage/2025-11-25.md"
        )),
        revision: Revision::V2025_11_25,
    },
    TableFile {
        name: "scenarios/coverage/2026-07-28.md",
        text: include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../scenarios/coverage/2026-07-28.md"
        )),
        revision: Revision::V2026_07_28,
    },
];

/// The levels a row may carry. The tables list REQUIRED and SHALL as MUST and RECOMMENDED
/// as SHOULD, so any other word is a row that escaped that normalization.
const LEVELS: [&str; 4] = ["MUST", "MUST NOT", "SHOULD", "SHOULD NOT"];

/// The `checked by` cell of a row that nothing checks.
const NO_CHECK: &str = "—";

/// The prefix that marks a session rule in `checked by`; anything else is a scenario id.
const RULE_PREFIX: &str = "rule:";

/// The heading of the section holding the counts by status.
const SUMMARY: &str = "Summary";

/// The summary's label for the number of all rows.
const TOTAL: &str = "total";

/// How far the suite checks a requirement: the first word of a row's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Status {
    Checked,
    Partly,
    Unchecked,
}

impl Status {
    const ALL: [Status; 3] = [Status::Checked, Status::Partly, Status::Unchecked];

    /// The word the tables write, in the status cell and in the summary.
    fn name(self) -> &'static str {
        match self {
            Status::Checked => "checked",
            Status::Partly => "partly",
            Status::Unchecked => "unchecked",
        }
    }

    /// Reads a status cell: `checked` alone, or `partly: ...` / `unchecked: ...`, whose
    /// reason is what makes the row useful (what is left out, or whether a check could exist).
    fn parse(cell: &str) -> Option<Status> {
        if cell == Status::Checked.name() {
            return Some(Status::Checked);
        }
        [Status::Partly, Status::Unchecked].into_iter().find(|s| {
            cell.strip_prefix(s.name())
                .and_then(|rest| rest.strip_prefix(':'))
                .is_some_and(|reason| !reason.trim().is_empty())
        })
    }
}

/// One requirement row, its cells as written.
#[derive(Debug)]
struct Row<'a> {
    number: &'a str,
    level: &'a str,
    requirement: &'a str,
    checked_by: &'a str,
    status: &'a str,
}

impl<'a> Row<'a> {
    /// The ids of `checked by`: none for `—`, else the comma-separated entries (an empty one
    /// is kept, so that a stray comma is reported rather than skipped).
    fn check_ids(&self) -> Vec<&'a str> {
        if self.checked_by == NO_CHECK {
            return Vec::new();
        }
        self.checked_by.split(',').map(str::trim).collect()
    }
}

/// A table file, parsed: its requirement rows and its summary's `(label, count)` rows.
#[derive(Debug, Default)]
struct Table<'a> {
    rows: Vec<Row<'a>>,
    summary: Vec<(&'a str, &'a str)>,
}

/// Splits a markdown table line into trimmed cells, at every `|` not escaped as `\|` (a
/// quote or a note may hold an escaped one).
fn cells(line: &str) -> Vec<&str> {
    let inner = line.trim();
    let inner = inner.strip_prefix('|').unwrap_or(inner);
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    let mut out = Vec::new();
    let mut start = 0;
    let mut escaped = false;
    for (i, c) in inner.char_indices() {
        match c {
            '|' if !escaped => {
                out.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
        escaped = c == '\\' && !escaped;
    }
    out.push(inner[start..].trim());
    out
}

/// Whether a table line is a header (`| # | ...`, `| status | ...`) or a `|---|` separator
/// rather than data.
fn is_table_furniture(cells: &[&str]) -> bool {
    matches!(cells.first(), Some(&"#") | Some(&"status"))
        || cells
            .iter()
            .all(|c| !c.is_empty() && c.chars().all(|c| c == '-'))
}

/// Reads a table file. A data line in a requirement section must have the five cells of a
/// row, and one in the summary the two of a count; any other shape is a problem, reported
/// with its line number, so that a broken row is never silently skipped.
fn parse<'a>(text: &'a str, file: &str) -> (Table<'a>, Vec<String>) {
    let mut table = Table::default();
    let mut problems = Vec::new();
    let mut section = "";
    for (index, line) in text.lines().enumerate() {
        if let Some(heading) = line.strip_prefix("## ") {
            section = heading.trim();
            continue;
        }
        if !line.trim_start().starts_with('|') {
            continue;
        }
        let cells = cells(line);
        if is_table_furniture(&cells) {
            continue;
        }
        match (section == SUMMARY, cells.as_slice()) {
            (true, &[label, count]) => table.summary.push((label, count)),
            (false, &[number, level, requirement, checked_by, status]) => table.rows.push(Row {
                number,
                level,
                requirement,
                checked_by,
                status,
            }),
            (in_summary, _) => problems.push(format!(
                "{file}:{}: a {} line with {} cells, not {}",
                index + 1,
                if in_summary { "summary" } else { "table" },
                cells.len(),
                if in_summary { 2 } else { 5 }
            )),
        }
    }
    (table, problems)
}

/// What `checked by` may name at one revision: the session rules, and the built-in
/// scenarios that run there (with the revisions of every scenario, to say where a
/// misplaced one does run).
struct Suite {
    revisions_by_scenario: BTreeMap<String, Vec<Revision>>,
}

impl Suite {
    fn builtin() -> Suite {
        let scenarios = builtin::scenarios().expect("the built-in suite parses");
        Suite {
            revisions_by_scenario: scenarios.into_iter().map(|s| (s.id, s.revisions)).collect(),
        }
    }

    /// Why `id` cannot check a requirement at `revision`, if it cannot: an unknown rule, an
    /// unknown scenario, or a scenario that is skipped at that revision.
    fn problem_with(&self, id: &str, revision: Revision) -> Option<String> {
        if let Some(rule) = id.strip_prefix(RULE_PREFIX) {
            return rules::by_id(rule)
                .is_none()
                .then(|| format!("`{id}` is not a session rule"));
        }
        match self.revisions_by_scenario.get(id) {
            None => Some(format!("`{id}` is not a built-in scenario")),
            Some(revisions) if !revisions.contains(&revision) => Some(format!(
                "scenario `{id}` does not run at {revision} (only at {})",
                revisions
                    .iter()
                    .map(|r| r.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            Some(_) => None,
        }
    }
}

/// The format of one row's own cells: a known level, a quoted requirement, a known status.
fn row_format_problems(row: &Row<'_>) -> Vec<String> {
    let mut problems = Vec::new();
    if !LEVELS.contains(&row.level) {
        problems.push(format!(
            "level `{}` is none of {}",
            row.level,
            LEVELS.join(", ")
        ));
    }
    let quoted = row.requirement.len() >= 2
        && row.requirement.starts_with('"')
        && row.requirement.ends_with('"');
    if !quoted {
        problems.push(format!(
            "requirement `{}` is not a quote (it must start and end with `\"`)",
            row.requirement
        ));
    }
    if Status::parse(row.status).is_none() {
        problems.push(format!(
            "status `{}` is not `checked`, `partly: <reason>` or `unchecked: <reason>`",
            row.status
        ));
    }
    problems
}

/// Whether `checked by` fits the status and names only checks that run at `revision`. A
/// `checked` or `partly` row must say what checks it; an `unchecked` row that names a check
/// contradicts itself.
fn row_check_problems(row: &Row<'_>, suite: &Suite, revision: Revision) -> Vec<String> {
    let ids = row.check_ids();
    let mut problems: Vec<String> = ids
        .iter()
        .filter_map(|id| match *id {
            "" => Some(format!(
                "checked by `{}` has an empty entry",
                row.checked_by
            )),
            id => suite.problem_with(id, revision),
        })
        .collect();
    match Status::parse(row.status) {
        Some(Status::Checked | Status::Partly) if ids.is_empty() => problems.push(format!(
            "status `{}` but checked by `{}` names no scenario or rule",
            row.status, row.checked_by
        )),
        Some(Status::Unchecked) if !ids.is_empty() => problems.push(format!(
            "status `{}` but checked by `{}` names checks",
            row.status, row.checked_by
        )),
        _ => {}
    }
    problems
}

/// Row numbers that occur more than once: a row must be citable by its number alone.
fn duplicate_numbers<'a>(rows: &[Row<'a>]) -> Vec<&'a str> {
    let mut seen = BTreeSet::new();
    let mut duplicates = BTreeSet::new();
    for row in rows {
        if !seen.insert(row.number) {
            duplicates.insert(row.number);
        }
    }
    duplicates.into_iter().collect()
}

/// Whether the summary states, once each, the number of rows of every status and in all,
/// and nothing else: the summary is what readers quote, so it must match the rows.
fn summary_problems(table: &Table<'_>) -> Vec<String> {
    let mut expected: BTreeMap<&str, usize> = Status::ALL
        .iter()
        .map(|s| (s.name(), 0))
        .chain([(TOTAL, table.rows.len())])
        .collect();
    for row in &table.rows {
        if let Some(status) = Status::parse(row.status) {
            *expected
                .get_mut(status.name())
                .expect("every status is counted") += 1;
        }
    }
    let mut problems = Vec::new();
    let mut stated = BTreeSet::new();
    for &(label, count) in &table.summary {
        let Some(&want) = expected.get(label) else {
            problems.push(format!(
                "summary row `{label}` is not a status or `{TOTAL}`"
            ));
            continue;
        };
        if !stated.insert(label) {
            problems.push(format!("summary row `{label}` occurs twice"));
        }
        if count.parse::<usize>().ok() != Some(want) {
            problems.push(format!(
                "summary says {count} `{label}` rows, the table has {want}"
            ));
        }
    }
    for label in expected.keys().filter(|l| !stated.contains(*l)) {
        problems.push(format!("summary has no `{label}` row"));
    }
    problems
}

/// Every problem of one table file, each prefixed with the file and, for a row, its number.
fn table_problems(file: &str, text: &str, revision: Revision, suite: &Suite) -> Vec<String> {
    let (table, mut problems) = parse(text, file);
    if table.rows.is_empty() {
        problems.push(format!("{file}: no requirement rows"));
    }
    for row in &table.rows {
        let row_problems = row_format_problems(row)
            .into_iter()
            .chain(row_check_problems(row, suite, revision));
        problems.extend(row_problems.map(|p| format!("{file} row {}: {p}", row.number)));
    }
    problems.extend(
        duplicate_numbers(&table.rows)
            .into_iter()
            .map(|n| format!("{file} row {n}: the number is used by more than one row")),
    );
    problems.extend(
        summary_problems(&table)
            .into_iter()
            .map(|p| format!("{file}: {p}")),
    );
    problems
}

#[test]
fn the_tables_match_their_format_and_the_suite() {
    let suite = Suite::builtin();
    let problems: Vec<String> = TABLES
        .iter()
        .flat_map(|t| table_problems(t.name, t.text, t.revision, &suite))
        .collect();
    assert!(
        problems.is_empty(),
        "{} problem(s) in the coverage tables:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// The checks must fail on the mistakes they exist for; a table that passes only because
/// the parser skipped its rows would prove nothing.
#[test]
fn a_broken_table_is_reported_row_by_row() {
    let text = "\
## basic/index

| # | level | requirement | checked by | status |
|---|---|---|---|---|
| B1 | MUST | \"Quoted \\| with a pipe.\" | rule:jsonrpc.version | checked |
| B2 | REQUIRED | not quoted | rule:no.such-rule, lifecycle/initialize-result | partly: why |
| B2 | MUST | \"Twice numbered.\" | — | checked |
| B4 | SHOULD | \"No reason.\" | — | unchecked: |
| B5 | SHOULD | \"Too few cells.\" | — |

## Summary

| status | rows |
|---|---|
| checked | 3 |
| partly | 2 |
| total | 4 |
";
    let suite = Suite::builtin();
    let problems = table_problems("t.md", text, Revision::V2026_07_28, &suite);
    let expected = [
        "t.md:9: a table line with 4 cells, not 5",
        "t.md row B2: level `REQUIRED` is none of MUST, MUST NOT, SHOULD, SHOULD NOT",
        "t.md row B2: requirement `not quoted` is not a quote (it must start and end with `\"`)",
        "t.md row B2: `rule:no.such-rule` is not a session rule",
        "t.md row B2: scenario `lifecycle/initialize-result` does not run at 2026-07-28 \
         (only at 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25)",
        "t.md row B2: status `checked` but checked by `—` names no scenario or rule",
        "t.md row B4: status `unchecked:` is not `checked`, `partly: <reason>` or \
         `unchecked: <reason>`",
        "t.md row B2: the number is used by more than one row",
        "t.md: summary says 3 `checked` rows, the table has 2",
        "t.md: summary says 2 `partly` rows, the table has 1",
        "t.md: summary has no `unchecked` row",
    ];
    assert_eq!(problems, expected);
}
