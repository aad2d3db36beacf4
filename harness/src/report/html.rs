//! The HTML report: one self-contained file (inline CSS and a small inline script, no
//! external resources) that explains every failure without re-running anything.
//!
//! Everything that came from the server is escaped by the template engine (minijinja with
//! HTML auto-escaping: the template is named `.html`); links are only emitted for `http(s)`
//! URLs; and a Content-Security-Policy allows only the report's own script (by hash), so
//! even a template mistake could not run server-supplied script.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use base64::Engine;
use minijinja::Environment;
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::Input;
use super::matrix::{Leg, LegRow, Matrix};
use super::summary::{self, AreaTotals};
use crate::outcome::{
    Counts, Direction, Entry, Finding, RunReport, RunVerdict, ScenarioOutcome, SchemaStatus,
    Severity, StepStatus, Tally, Verdict,
};
use crate::protocol::text::{Mark, clip_marked};
use crate::transport::ShutdownReport;

const TEMPLATE: &str = include_str!("assets/report.html");
const SCRIPT: &str = include_str!("assets/report.js");
const STYLE: &str = include_str!("assets/report.css");

/// Longest frame text shown in full; longer frames are cut, with their size said.
const MAX_FRAME_CHARS: usize = 64 * 1024;

/// Findings an entry of "What to fix" shows; its section shows the rest.
const FIX_FINDINGS: usize = 10;

/// Frames shown at each end of a long transcript (the flagged ones always are): a flood of
/// ten thousand frames stays readable, and the JSON report keeps every one.
const FRAMES_AT_EACH_END: usize = 150;

/// Rendering the HTML template failed.
#[derive(Debug, thiserror::Error)]
#[error("{0:#}")]
pub struct HtmlError(#[from] minijinja::Error);

fn environment() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.add_filter("text", text_escape);
        env.add_template("report.html", TEMPLATE)
            .expect("the bundled template parses (checked by a test)");
        env
    })
}

/// Escapes for element text (inside `<pre>`), where only `&`, `<` and `>` can change the
/// markup: quotes are left as they are, which keeps transcripts of JSON (full of quotes)
/// about a third smaller than with attribute-safe escaping. Never use it in attributes.
fn text_escape(value: String) -> minijinja::Value {
    let mut out = String::with_capacity(value.len() + value.len() / 16);
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    minijinja::Value::from_safe_string(out)
}

/// `sha256-...` of the inline script, for the Content-Security-Policy.
fn script_hash() -> String {
    let digest = Sha256::digest(SCRIPT.as_bytes());
    format!(
        "sha256-{}",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// The whole page: the verdict over every leg, the matrix table, each leg.
#[derive(Serialize)]
struct Page {
    title: String,
    verdict: &'static str,
    verdict_text: String,
    /// One row per leg; empty when the run has one leg (its header says it all).
    matrix: Vec<LegRow>,
    /// What to fix, first on the page: every failure, error and warning over every leg.
    fixes: Vec<Fix>,
    /// Scenarios over every leg, for the "nothing to fix" line.
    total_scenarios: usize,
    /// Sections (the sweep, the scenarios, the folded skips) over every leg, for the
    /// filter's count.
    total_sections: usize,
    legs: Vec<LegPage>,
    style: &'static str,
    script: &'static str,
    script_hash: String,
}

/// One leg: the run at one revision.
#[derive(Default, Serialize)]
struct LegPage {
    /// The revision asked for (headings and anchors).
    requested: String,
    /// Why the leg did not run: the server does not speak its revision.
    not_spoken: Option<String>,
    /// A differential leg: the full leg's revision it was compared with.
    differential_from: Option<String>,
    /// A `mcpcheck client` run: the command is the client's, and there is no sweep.
    client: bool,
    verdict: &'static str,
    verdict_text: String,
    /// The "server" table.
    server: ServerView,
    /// Which mcpcheck wrote the leg, and how long it took.
    run: RunView,
    counts: Counts,
    tally: Tally,
    areas: Vec<AreaTotals>,
    /// The "official checks" table (empty unless the server is an official fixture).
    official: Vec<super::official_checks::OfficialRow>,
    /// `--snapshot-dir`: the snapshot comparison, per area with its diff.
    snapshot: Option<crate::outcome::SnapshotComparison>,
    /// What the server process left: its stderr's end, how it shut down.
    process: ProcessView,
    baseline: Option<BaselineView>,
    /// The sweep and the scenarios that ran: failures first, then warnings, then passes.
    sections: Vec<Section>,
    /// The skipped scenarios, folded by their reason.
    skips: Vec<SkipGroup>,
}

/// Skipped scenarios that share a reason, shown as one folded line.
#[derive(Serialize)]
struct SkipGroup {
    reason: String,
    ids: Vec<String>,
}

/// One entry of "What to fix": a scenario (or the sweep) that failed, erred or warned,
/// with what it found and links to its section and transcript.
#[derive(Serialize)]
struct Fix {
    verdict: &'static str,
    /// The revision of its leg, when the run has several.
    leg: Option<String>,
    anchor: String,
    id: String,
    title: String,
    /// Why it erred or was blocked (no findings say it).
    reason: Option<String>,
    findings: Vec<FindingView>,
    /// The transcript's anchor, when the section has one.
    transcript: Option<String>,
    /// Other sections whose findings repeat this entry's: (anchor, id and its leg).
    also: Vec<(String, String)>,
    /// Findings of the section beyond the first [`FIX_FINDINGS`], told only there.
    more_findings: usize,
}

/// What ran, and what it said of itself.
#[derive(Default, Serialize)]
struct ServerView {
    /// The command line or URL.
    command: String,
    identity: Option<String>,
    revision: String,
    requested_revision: String,
    capabilities: Option<String>,
    instructions: Option<String>,
    schema: String,
}

/// Which mcpcheck wrote the leg, and how long it took.
#[derive(Default, Serialize)]
struct RunView {
    duration: String,
    version: &'static str,
    format_version: u32,
}

/// What the server process left: its stderr's end, how it shut down.
#[derive(Default, Serialize)]
struct ProcessView {
    stderr_bytes: u64,
    stderr_tail: Vec<String>,
    shutdown: Option<String>,
}

#[derive(Serialize)]
struct BaselineView {
    expected: Vec<String>,
    unexpected: Vec<String>,
    stale: Vec<String>,
    unverified: Vec<String>,
}

/// The protocol sweep or one scenario.
#[derive(Serialize)]
struct Section {
    anchor: String,
    id: String,
    title: String,
    verdict: &'static str,
    reason: Option<String>,
    spec: Option<String>,
    duration: String,
    open: bool,
    steps: Vec<StepView>,
    findings: Vec<FindingView>,
    protocol: Vec<FindingView>,
    notes: Vec<String>,
    frames: Vec<FrameView>,
    /// Frames of the transcript left out of this file, and where they are.
    frames_omitted: Option<String>,
    events: Vec<String>,
    /// The server's stderr in this scenario (none for the sweep, shown at the top).
    stderr: Option<StderrView>,
}

#[derive(Serialize)]
struct StderrView {
    /// How much there was, or why nothing was captured.
    summary: String,
    lines: Vec<String>,
}

fn stderr_view(e: &crate::transport::StderrExcerpt) -> StderrView {
    use crate::transport::StderrExcerpt as E;
    match e {
        E::Captured { bytes: 0, .. } => StderrView {
            summary: "nothing written (0 bytes)".into(),
            lines: vec![],
        },
        E::Captured {
            bytes,
            lines,
            truncated,
        } => StderrView {
            summary: if *truncated {
                format!("{bytes} bytes; the first and last lines")
            } else {
                format!("{bytes} bytes, all of it")
            },
            lines: lines.clone(),
        },
        E::NotCaptured { reason } => StderrView {
            summary: reason.clone(),
            lines: vec![],
        },
    }
}

#[derive(Serialize)]
struct StepView {
    name: String,
    status: &'static str,
    reason: Option<String>,
}

#[derive(Clone, Serialize)]
struct FindingView {
    rule: String,
    /// The rule in one line, from the catalogue (`mcpcheck list --rules`).
    rule_summary: Option<&'static str>,
    severity: &'static str,
    message: String,
    spec: Option<String>,
    spec_text: String,
    frame: Option<String>,
    frame_label: Option<usize>,
    pointer: Option<String>,
    at_pointer: Option<String>,
    expected: Option<String>,
    evidence: Option<String>,
}

#[derive(Serialize)]
struct FrameView {
    anchor: String,
    index: usize,
    direction: &'static str,
    arrow: &'static str,
    at: String,
    method: Option<String>,
    body: String,
    flagged: bool,
}

/// A link target only for web URLs; anything else (`javascript:`, `data:`) stays text.
fn safe_url(url: &str) -> Option<String> {
    let lower = url.trim().to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://")).then(|| url.trim().to_owned())
}

fn pretty(text: &str) -> (String, Option<Value>) {
    let cut = |s: &str| clip_marked(s, MAX_FRAME_CHARS, Mark::LengthInAll);
    match serde_json::from_str::<Value>(text) {
        Ok(v) if text.len() <= MAX_FRAME_CHARS => {
            (pretty_json(&v).unwrap_or_else(|| text.to_owned()), Some(v))
        }
        Ok(v) => (cut(text), Some(v)),
        Err(_) => (cut(text), None),
    }
}

/// Pretty JSON with a one-space indent: readable, and small enough for 10,000 frames.
fn pretty_json(v: &Value) -> Option<String> {
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    v.serialize(&mut ser).ok()?;
    String::from_utf8(out).ok()
}

fn at(e: &Entry, deterministic: bool) -> String {
    if deterministic {
        "<time>".into()
    } else {
        format!("+{:.1} ms", e.at.as_secs_f64() * 1000.0)
    }
}

fn ms(v: u64, deterministic: bool) -> String {
    if deterministic {
        "<time>".into()
    } else {
        format!("{v} ms")
    }
}

/// Which frames of a transcript the file shows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// A section to read: every frame, or of a long transcript both ends and the flagged.
    Readable,
    /// A passing section: only the frames a finding points at; the JSON report has the rest.
    Flagged,
}

/// The frames shown (events are listed apart), and a note on those left out.
fn frames(
    anchor: &str,
    entries: &[Entry],
    findings: &[&Finding],
    keep: Keep,
    det: bool,
) -> (Vec<FrameView>, Option<String>) {
    // A set, not a scan of the findings per frame: a hostile server can have a finding on
    // each of thousands of frames.
    let flagged_frames: HashSet<usize> = findings.iter().filter_map(|f| f.frame).collect();
    let flagged = |i: usize| flagged_frames.contains(&i);
    let wire: Vec<usize> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| e.direction != Direction::Event)
        .map(|(i, _)| i)
        .collect();
    let n = wire.len();
    let shown: Vec<usize> = wire
        .iter()
        .enumerate()
        .filter(|&(pos, &i)| match keep {
            Keep::Flagged => flagged(i),
            Keep::Readable => {
                n <= 2 * FRAMES_AT_EACH_END
                    || pos < FRAMES_AT_EACH_END
                    || pos >= n - FRAMES_AT_EACH_END
                    || flagged(i)
            }
        })
        .map(|(_, &i)| i)
        .collect();
    let omitted = n - shown.len();
    let note = (omitted > 0).then(|| match keep {
        Keep::Flagged => format!(
            "{omitted} frame{} of this passing scenario left out to keep this file small; \
             the JSON report (--report json=FILE) holds every frame",
            if omitted == 1 { "" } else { "s" }
        ),
        Keep::Readable => format!(
            "{omitted} frames from the middle left out (the first and last \
             {FRAMES_AT_EACH_END} and every flagged one are shown); the JSON report \
             (--report json=FILE) holds every frame"
        ),
    });
    let views = shown
        .into_iter()
        .map(|i| frame_view(anchor, i, &entries[i], flagged(i), det))
        .collect();
    (views, note)
}

fn frame_view(anchor: &str, i: usize, e: &Entry, flagged: bool, det: bool) -> FrameView {
    let (body, v) = pretty(&e.text);
    FrameView {
        anchor: format!("{anchor}-f{i}"),
        index: i,
        direction: match e.direction {
            Direction::Sent => "sent",
            Direction::Received => "received",
            Direction::Event => "event",
        },
        arrow: match e.direction {
            Direction::Sent => "→",
            Direction::Received => "←",
            Direction::Event => "•",
        },
        at: at(e, det),
        method: v
            .as_ref()
            .and_then(|v| v.get("method"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        body,
        flagged,
    }
}

fn finding(anchor: &str, f: &Finding, entries: &[Entry]) -> FindingView {
    let at_pointer = f.frame.zip(f.pointer.as_deref()).and_then(|(i, p)| {
        let v: Value = serde_json::from_str(&entries.get(i)?.text).ok()?;
        let found = v.pointer(p)?;
        let s = pretty_json(found)?;
        Some(clip_marked(s, 4096, Mark::Ellipsis))
    });
    FindingView {
        rule: f.rule.clone(),
        rule_summary: crate::check::rules::by_id(&f.rule).map(|r| r.summary),
        severity: f.severity.as_str(),
        message: f.message.clone(),
        spec: safe_url(&f.spec),
        spec_text: f.spec.clone(),
        frame: f.frame.map(|i| format!("{anchor}-f{i}")),
        frame_label: f.frame,
        pointer: f
            .pointer
            .as_ref()
            .map(|p| if p.is_empty() { "/".into() } else { p.clone() }),
        at_pointer,
        expected: f.expected.clone(),
        evidence: f.evidence.clone(),
    }
}

fn events(entries: &[Entry], det: bool) -> Vec<String> {
    entries
        .iter()
        .filter(|e| e.direction == Direction::Event)
        .map(|e| format!("{} {}", at(e, det), e.text))
        .collect()
}

/// A leg's page; `prefix` keeps its anchors apart from the other legs'.
fn leg_page(input: &Input<'_>, prefix: &str) -> LegPage {
    let r = input.run;
    let det = input.deterministic;
    let (verdict, verdict_text) = leg_verdict(input);
    // A client run has no protocol sweep: its sections are its scenarios.
    let mut sections = match r.role {
        crate::outcome::Role::Server => vec![sweep_section(r, prefix, det)],
        crate::outcome::Role::Client => Vec::new(),
    };
    let mut skips: Vec<SkipGroup> = Vec::new();
    for (n, o) in r.scenarios.iter().enumerate() {
        match &o.verdict {
            // Skips are folded by reason: a line each, not a section each.
            Verdict::Skip { reason } => match skips.iter_mut().find(|g| g.reason == *reason) {
                Some(group) => group.ids.push(o.id.clone()),
                None => skips.push(SkipGroup {
                    reason: reason.clone(),
                    ids: vec![o.id.clone()],
                }),
            },
            _ => sections.push(scenario_section(o, format!("{prefix}s{}", n + 1), det)),
        }
    }
    // What needs reading first: a stable sort keeps the suite's order within a verdict.
    sections.sort_by_key(|s| urgency(s.verdict));
    skips.sort_by_key(|g| std::cmp::Reverse(g.ids.len()));
    let profile = r.profile.as_ref();
    LegPage {
        requested: r.requested_revision.to_string(),
        not_spoken: None,
        differential_from: r.differential_from.map(|b| b.to_string()),
        client: r.role == crate::outcome::Role::Client,
        verdict,
        verdict_text,
        server: ServerView {
            command: r.server.clone(),
            identity: summary::server_identity(r),
            revision: r.revision.to_string(),
            requested_revision: r.requested_revision.to_string(),
            capabilities: profile.and_then(|p| serde_json::to_string_pretty(&p.capabilities).ok()),
            instructions: profile.and_then(|p| p.instructions.clone()),
            schema: schema_text(&r.sweep.schema),
        },
        run: RunView {
            duration: ms(r.duration_ms, det),
            version: r.mcpcheck_version,
            format_version: r.format_version,
        },
        counts: r.sweep.counts,
        tally: r.tally,
        areas: summary::by_area(&r.scenarios),
        official: super::official_checks::rows(&r.scenarios),
        snapshot: r.snapshot.clone(),
        process: ProcessView {
            stderr_bytes: r.sweep.stderr.bytes,
            stderr_tail: r.sweep.stderr.tail.clone(),
            shutdown: r.sweep.shutdown.as_ref().map(|s| shutdown_text(s, det)),
        },
        baseline: input.baseline.map(baseline_view),
        sections,
        skips,
    }
}

/// Where a verdict comes in the report: failures first, passes last.
fn urgency(verdict: &str) -> u8 {
    match verdict {
        "fail" => 0,
        "error" => 1,
        "blocked" => 2,
        "warn" => 3,
        "pass" => 4,
        _ => 5,
    }
}

/// The leg's verdict, as a class name and as text: harness errors first, since a leg with
/// them is no verdict on the server, then the baseline's forgiveness.
fn leg_verdict(input: &Input<'_>) -> (&'static str, String) {
    let r = input.run;
    if r.has_errors() {
        ("error", "ERROR: harness or scenario problems".to_owned())
    } else if r.verdict == RunVerdict::Pass {
        ("pass", "PASS".to_owned())
    } else if input.passes() {
        ("pass", "PASS (expected failures only)".to_owned())
    } else {
        ("fail", "FAIL".to_owned())
    }
}

/// The protocol sweep's section, the first: its steps, findings and frames, open when it
/// failed.
fn sweep_section(r: &RunReport, prefix: &str, det: bool) -> Section {
    let anchor = format!("{prefix}s0");
    let sweep_findings: Vec<&Finding> = r.sweep.findings.iter().collect();
    let verdict = if r.sweep.counts.failures > 0 {
        "fail"
    } else if r.sweep.counts.warnings > 0 {
        "warn"
    } else {
        "pass"
    };
    let keep = if verdict == "pass" {
        Keep::Flagged
    } else {
        Keep::Readable
    };
    let (frames, frames_omitted) = frames(&anchor, &r.transcript, &sweep_findings, keep, det);
    Section {
        id: "protocol sweep".into(),
        title: "Handshake, ping and the list methods of every declared capability".into(),
        verdict,
        reason: None,
        spec: None,
        duration: String::new(),
        open: r.sweep.counts.failures > 0,
        steps: r
            .sweep
            .steps
            .iter()
            .map(|s| StepView {
                name: s.name.clone(),
                status: match s.status {
                    StepStatus::Passed => "pass",
                    StepStatus::Failed => "fail",
                    StepStatus::Skipped { .. } => "skip",
                },
                reason: match &s.status {
                    StepStatus::Skipped { reason } => Some(reason.clone()),
                    _ => None,
                },
            })
            .collect(),
        findings: r
            .sweep
            .findings
            .iter()
            .map(|f| finding(&anchor, f, &r.transcript))
            .collect(),
        protocol: vec![],
        notes: vec![],
        frames,
        frames_omitted,
        events: events(&r.transcript, det),
        stderr: None,
        anchor,
    }
}

/// A scenario's section, at `anchor`: its findings, the protocol findings seen on its
/// session, what it could not check, and its frames.
fn scenario_section(o: &ScenarioOutcome, anchor: String, det: bool) -> Section {
    let all: Vec<&Finding> = o.findings.iter().chain(&o.protocol).collect();
    let mut notes: Vec<String> = o
        .unchecked
        .iter()
        .map(|u| format!("not checked: {u}"))
        .collect();
    notes.extend(o.skipped_steps.iter().map(|s| format!("step skipped: {s}")));
    let keep = if o.verdict == Verdict::Pass {
        Keep::Flagged
    } else {
        Keep::Readable
    };
    let (frames, frames_omitted) = frames(&anchor, &o.transcript, &all, keep, det);
    Section {
        verdict: summary::verdict_name(&o.verdict),
        reason: summary::verdict_reason(&o.verdict).map(str::to_owned),
        spec: safe_url(&o.spec),
        duration: ms(o.duration_ms, det),
        open: false,
        steps: vec![],
        findings: o
            .findings
            .iter()
            .map(|f| finding(&anchor, f, &o.transcript))
            .collect(),
        protocol: o
            .protocol
            .iter()
            .map(|f| finding(&anchor, f, &o.transcript))
            .collect(),
        notes,
        frames,
        frames_omitted,
        events: events(&o.transcript, det),
        stderr: Some(stderr_view(&o.stderr)),
        id: o.id.clone(),
        title: o.title.clone(),
        anchor,
    }
}

/// What schema validation did, in a line: a report without it must say so.
fn schema_text(schema: &SchemaStatus) -> String {
    match schema {
        SchemaStatus::Checked {
            revision,
            source,
            pinned,
            messages,
        } => format!(
            "{messages} messages validated against {revision} from {source}{}",
            if *pinned {
                ""
            } else {
                " (differs from the pinned official schema)"
            }
        ),
        SchemaStatus::Skipped { reason } => format!("SKIPPED: {reason}"),
        SchemaStatus::Disabled { reason } => {
            format!("DISABLED: {reason}; no message was schema-checked")
        }
    }
}

/// How the server's shutdown went, in a line (its time a placeholder when deterministic).
fn shutdown_text(s: &ShutdownReport, det: bool) -> String {
    let exit = s
        .exit
        .as_ref()
        .map(|e| format!(", {e}"))
        .unwrap_or_default();
    let took = if det {
        "<time>".to_owned()
    } else {
        format!("{} ms", s.took.as_millis())
    };
    format!("{:?}{exit}, took {took}", s.stage)
}

/// The baseline comparison, each entry as `id: why`.
fn baseline_view(b: &super::expected::Comparison) -> BaselineView {
    BaselineView {
        expected: b
            .expected
            .iter()
            .map(|e| format!("{}: {}", e.id, e.reason))
            .collect(),
        unexpected: b
            .unexpected
            .iter()
            .map(|f| format!("{}: {}", f.id, f.what))
            .collect(),
        stale: b
            .stale
            .iter()
            .map(|e| format!("{}: {}", e.id, e.reason))
            .collect(),
        unverified: b
            .unverified
            .iter()
            .map(|e| format!("{}: {}", e.id, e.reason))
            .collect(),
    }
}

/// The page of a run: one leg as it always was, or a matrix table and a section per leg.
fn page(m: &Matrix<'_>) -> Page {
    let single = m.single().is_some();
    let legs: Vec<LegPage> = m
        .legs
        .iter()
        .map(|leg| match leg {
            Leg::Ran(input) if single => leg_page(input, ""),
            Leg::Ran(input) => leg_page(input, &format!("r{}-", input.run.requested_revision)),
            Leg::NotSpoken { revision, reason } => not_spoken(*revision, reason),
        })
        .collect();
    let (verdict, verdict_text) = match (single, legs.first()) {
        (true, Some(leg)) => (leg.verdict, leg.verdict_text.clone()),
        _ => match super::matrix::exit_code(m) {
            0 => ("pass", "PASS".to_owned()),
            2 => ("error", "ERROR: harness or scenario problems".to_owned()),
            _ => ("fail", "FAIL".to_owned()),
        },
    };
    let fixes = fixes(&legs, single);
    Page {
        fixes,
        total_scenarios: legs
            .iter()
            .map(|l| l.tally.executed() + l.tally.skip + l.tally.error + l.tally.blocked)
            .sum(),
        title: legs
            .first()
            .map(|l| format!("mcpcheck report: {}", l.server.command))
            .unwrap_or_else(|| "mcpcheck".into()),
        verdict,
        verdict_text,
        matrix: if single { Vec::new() } else { m.rows() },
        total_sections: legs.iter().map(|l| l.sections.len() + l.skips.len()).sum(),
        legs,
        style: STYLE,
        script: SCRIPT,
        script_hash: script_hash(),
    }
}

/// "What to fix": every section that failed, erred, was blocked or warned, and every
/// passing one whose session broke a MUST (which fails the run too), most urgent first.
fn fixes(legs: &[LegPage], single: bool) -> Vec<Fix> {
    let mut out: Vec<Fix> = legs
        .iter()
        .flat_map(|leg| {
            leg.sections.iter().filter_map(move |s| {
                let findings: Vec<FindingView> = s
                    .findings
                    .iter()
                    .filter(|f| f.severity != Severity::Info.as_str())
                    .chain(
                        s.protocol
                            .iter()
                            .filter(|f| f.severity == Severity::Failure.as_str()),
                    )
                    .cloned()
                    .collect();
                let verdict = match s.verdict {
                    "pass" if !findings.is_empty() => "fail",
                    "pass" => return None,
                    v => v,
                };
                Some(Fix {
                    verdict,
                    leg: (!single).then(|| leg.requested.clone()),
                    anchor: s.anchor.clone(),
                    id: s.id.clone(),
                    title: s.title.clone(),
                    reason: s.reason.clone(),
                    findings,
                    transcript: (!s.frames.is_empty()).then(|| format!("{}-t", s.anchor)),
                    also: Vec::new(),
                    more_findings: 0,
                })
            })
        })
        .collect();
    out.sort_by_key(|f| urgency(f.verdict));
    fold_repeats(out)
}

/// Folds an entry whose findings were all told already (the same rule and message: a
/// server that logs to stdout breaks the rule in every session) into the first entry that
/// told them, as a link in its "also in" line.
fn fold_repeats(fixes: Vec<Fix>) -> Vec<Fix> {
    let mut kept: Vec<Fix> = Vec::new();
    // (rule, message) -> the kept entry that told it first.
    let mut told: HashMap<(String, String), usize> = HashMap::new();
    for mut fix in fixes {
        let key = |f: &FindingView| (f.rule.clone(), f.message.clone());
        let first = fix
            .findings
            .iter()
            .map(|f| told.get(&key(f)).copied())
            .collect::<Option<Vec<usize>>>()
            .and_then(|at| at.first().copied());
        match first {
            Some(at) if fix.reason.is_none() => {
                let label = match &fix.leg {
                    Some(leg) => format!("{} ({leg})", fix.id),
                    None => fix.id,
                };
                kept[at].also.push((fix.anchor, label));
            }
            _ => {
                for f in &fix.findings {
                    told.entry(key(f)).or_insert(kept.len());
                }
                // Its section lists them all; the fix list stays short for a server with
                // a finding on every frame.
                fix.more_findings = fix.findings.len().saturating_sub(FIX_FINDINGS);
                fix.findings.truncate(FIX_FINDINGS);
                kept.push(fix);
            }
        }
    }
    kept
}

/// A leg that did not run, and why.
fn not_spoken(revision: crate::protocol::Revision, reason: &str) -> LegPage {
    LegPage {
        requested: revision.to_string(),
        not_spoken: Some(reason.to_owned()),
        differential_from: None,
        verdict: "skip",
        verdict_text: "NOT SPOKEN".into(),
        server: ServerView {
            revision: revision.to_string(),
            requested_revision: revision.to_string(),
            ..ServerView::default()
        },
        run: RunView {
            version: env!("CARGO_PKG_VERSION"),
            format_version: crate::outcome::REPORT_FORMAT_VERSION,
            ..RunView::default()
        },
        ..LegPage::default()
    }
}

/// Renders the HTML report of one leg.
pub fn render(input: &Input<'_>) -> Result<String, HtmlError> {
    render_matrix(&Matrix {
        legs: vec![Leg::Ran(*input)],
    })
}

/// Renders the HTML report of a run: every leg of its revision matrix.
pub fn render_matrix(m: &Matrix<'_>) -> Result<String, HtmlError> {
    let tmpl = environment().get_template("report.html")?;
    Ok(tmpl.render(minijinja::value::Serde(page(m)))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_web_urls_become_links() {
        assert!(safe_url("https://modelcontextprotocol.io/x").is_some());
        assert!(safe_url("javascript:alert(1)").is_none());
        assert!(safe_url(" JavaScript:alert(1)").is_none());
        assert!(safe_url("data:text/html,x").is_none());
    }

    #[test]
    fn text_escape_neutralises_markup() {
        let v = text_escape("<script>a && \"b\"</script>".into());
        assert_eq!(
            v.to_string(),
            "&lt;script&gt;a &amp;&amp; \"b\"&lt;/script&gt;"
        );
    }

    fn finding_view(rule: &str, message: &str) -> FindingView {
        FindingView {
            rule: rule.into(),
            rule_summary: None,
            severity: "failure",
            message: message.into(),
            spec: None,
            spec_text: String::new(),
            frame: None,
            frame_label: None,
            pointer: None,
            at_pointer: None,
            expected: None,
            evidence: None,
        }
    }

    fn fix(id: &str, findings: Vec<FindingView>) -> Fix {
        Fix {
            verdict: "fail",
            leg: None,
            anchor: format!("a-{id}"),
            id: id.into(),
            title: String::new(),
            reason: None,
            findings,
            transcript: None,
            also: Vec::new(),
            more_findings: 0,
        }
    }

    #[test]
    fn repeats_fold_into_the_first_teller_and_long_lists_are_cut() {
        let many: Vec<FindingView> = (0..25)
            .map(|n| finding_view("stdio.x", &format!("line {n}")))
            .collect();
        let kept = fold_repeats(vec![
            fix("first", many),
            fix("repeat", vec![finding_view("stdio.x", "line 20")]),
            fix(
                "own",
                vec![
                    finding_view("stdio.x", "line 20"),
                    finding_view("other", "m"),
                ],
            ),
        ]);
        let ids: Vec<&str> = kept.iter().map(|k| k.id.as_str()).collect();
        assert_eq!(ids, ["first", "own"]);
        // Folded by a finding beyond the first ten: the lookup sees every finding.
        assert_eq!(kept[0].also, [("a-repeat".to_owned(), "repeat".to_owned())]);
        assert_eq!((kept[0].findings.len(), kept[0].more_findings), (10, 15));
        assert_eq!((kept[1].findings.len(), kept[1].more_findings), (2, 0));
    }

    #[test]
    fn the_script_hash_is_a_csp_source() {
        let h = script_hash();
        assert!(h.starts_with("sha256-") && h.len() == 7 + 44, "{h}");
    }
}
