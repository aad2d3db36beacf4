//! SARIF 2.1.0 (`--report sarif=PATH`), for GitHub code scanning and other SARIF readers.
//!
//! One result per finding: the sweep's, each scenario's own, and the protocol findings of
//! scenario sessions once each (the same broken rule seen by twenty sessions is one
//! problem). Each result carries a `partialFingerprints` entry computed from the rule, the
//! scenario and the finding's text with every number, time, id, port and machine path
//! normalised away, so two runs against the same server give the same fingerprints and
//! code scanning tracks a finding across runs instead of opening it anew.

use std::collections::{BTreeMap, HashSet};

use serde_json::json;
use serde_sarif::sarif::{
    ArtifactLocation, Invocation, Location, Message, MultiformatMessageString, Notification,
    PhysicalLocation, PropertyBag, Region, ReportingConfiguration, ReportingDescriptor,
    Result as SarifResult, ResultKind, ResultLevel, Run, RunAutomationDetails, Sarif, Tool,
    ToolComponent,
};

use super::Input;
use super::deterministic::Scrubber;
use crate::check::rules;
use crate::outcome::{Finding, RunReport, ScenarioOutcome, SchemaStatus, Severity, Verdict};

/// The key of our fingerprint in `partialFingerprints` (versioned: a change to how it is
/// computed gets a new key, so code scanning does not mistake old for new).
pub const FINGERPRINT_KEY: &str = "mcpcheckFinding/v1";

const INFORMATION_URI: &str = "https://github.com/mcpcheck/mcpcheck";

/// Renders the run as a SARIF 2.1.0 log with one run.
pub fn render(input: &Input<'_>) -> Result<String, serde_json::Error> {
    let r = input.run;
    let items = items(r);
    let rules = RuleTable::of(r, &items);
    let normaliser = Normaliser::new();
    let server = ServerArtifact::of(&r.server);
    let results: Vec<SarifResult> = items
        .iter()
        .map(|item| result(item, &rules, &normaliser, &server))
        .collect();
    let run = Run::builder()
        .tool(
            Tool::builder()
                .driver(
                    ToolComponent::builder()
                        .name("mcpcheck")
                        .version(r.mcpcheck_version)
                        .semantic_version(r.mcpcheck_version)
                        .information_uri(INFORMATION_URI)
                        .rules(rules.descriptors())
                        .build(),
                )
                .build(),
        )
        .automation_details(
            RunAutomationDetails::builder()
                .id(category(&server, r))
                .build(),
        )
        .invocations(vec![invocation(r)])
        .column_kind(json!("utf16CodeUnits"))
        .results(results)
        .properties(
            PropertyBag::builder()
                .additional_properties(BTreeMap::from([
                    ("server".to_owned(), json!(r.server)),
                    ("revision".to_owned(), json!(r.revision.as_str())),
                    ("verdict".to_owned(), json!(r.verdict)),
                ]))
                .build(),
        )
        .build();
    let log = Sarif::builder()
        .schema("https://json.schemastore.org/sarif-2.1.0.json")
        .version(json!("2.1.0"))
        .runs(vec![run])
        .build();
    serde_json::to_string_pretty(&log)
}

/// One finding to report, with the scenario it belongs to (none: the protocol sweep, or a
/// protocol finding of a scenario session).
struct Item<'a> {
    finding: &'a Finding,
    scenario: Option<&'a ScenarioOutcome>,
}

fn items(r: &RunReport) -> Vec<Item<'_>> {
    let normaliser = Normaliser::new();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for f in &r.sweep.findings {
        seen.insert(normaliser.fingerprint(f, None));
        out.push(Item {
            finding: f,
            scenario: None,
        });
    }
    for s in &r.scenarios {
        out.extend(s.findings.iter().map(|f| Item {
            finding: f,
            scenario: Some(s),
        }));
        for f in &s.protocol {
            if seen.insert(normaliser.fingerprint(f, None)) {
                out.push(Item {
                    finding: f,
                    scenario: None,
                });
            }
        }
    }
    out
}

/// The rules the results refer to, in id order, with their index in `tool.driver.rules`.
struct RuleTable {
    rules: BTreeMap<String, ReportingDescriptor>,
    index: BTreeMap<String, i64>,
}

impl RuleTable {
    fn of(r: &RunReport, items: &[Item<'_>]) -> Self {
        let mut rules = BTreeMap::new();
        for item in items {
            let f = item.finding;
            rules
                .entry(f.rule.clone())
                .or_insert_with(|| descriptor(r, f, item.scenario));
        }
        let index = rules
            .keys()
            .enumerate()
            .map(|(i, k)| (k.clone(), i as i64))
            .collect();
        RuleTable { rules, index }
    }

    fn descriptors(&self) -> Vec<ReportingDescriptor> {
        self.rules.values().cloned().collect()
    }
}

/// What a severity means in the spec's words.
fn spec_words(s: Severity) -> &'static str {
    match s {
        Severity::Failure => "a MUST or MUST NOT of the specification (or its schema)",
        Severity::Warning => "a SHOULD or SHOULD NOT of the specification",
        Severity::Info => "worth knowing; not a violation",
    }
}

fn level(s: Severity) -> ResultLevel {
    match s {
        Severity::Failure => ResultLevel::Error,
        Severity::Warning => ResultLevel::Warning,
        Severity::Info => ResultLevel::Note,
    }
}

fn level_value(s: Severity) -> serde_json::Value {
    json!(match s {
        Severity::Failure => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    })
}

/// Rule metadata: from the rule catalogue, or from the scenario that defines the rule.
fn descriptor(
    r: &RunReport,
    f: &Finding,
    scenario: Option<&ScenarioOutcome>,
) -> ReportingDescriptor {
    let text = |t: String| MultiformatMessageString::builder().text(t).build();
    let (severity, short, full, help_uri) = match rules::ALL.iter().find(|rule| rule.id == f.rule) {
        Some(rule) => (
            rule.severity_at(r.revision),
            rule.summary.to_owned(),
            format!(
                "{} Breaking it is {}.",
                rule.summary,
                spec_words(rule.severity_at(r.revision))
            ),
            rule.url(r.revision),
        ),
        None => {
            let title = scenario.map_or_else(|| f.rule.clone(), |s| s.title.clone());
            let id = scenario.map_or(f.rule.as_str(), |s| s.id.as_str());
            (
                f.severity,
                title.clone(),
                format!(
                    "{title}. Checked by the scenario `{id}` ({}); a broken expectation is {}.",
                    scenario_file(id).unwrap_or_else(|| "the user's scenario file".into()),
                    spec_words(f.severity)
                ),
                f.spec.clone(),
            )
        }
    };
    let help = format!("The specification says so at {help_uri}");
    ReportingDescriptor::builder()
        .id(f.rule.clone())
        .short_description(text(short))
        .full_description(text(full))
        .help(text(help))
        .help_uri(help_uri)
        .default_configuration(
            ReportingConfiguration::builder()
                .level(level_value(severity))
                .build(),
        )
        .properties(
            PropertyBag::builder()
                .tags(vec!["mcp".to_owned(), "conformance".to_owned()])
                .build(),
        )
        .build()
}

fn result(
    item: &Item<'_>,
    rules: &RuleTable,
    normaliser: &Normaliser,
    server: &ServerArtifact,
) -> SarifResult {
    let f = item.finding;
    let mut text = f.message.clone();
    if let Some(e) = &f.expected {
        text.push_str(&format!("\nexpected: {e}"));
    }
    let location = match item.scenario {
        Some(s) => scenario_location(f, s).unwrap_or_else(|| server.location()),
        None => server.location(),
    };
    let mut properties = BTreeMap::from([("spec".to_owned(), json!(f.spec))]);
    if let Some(s) = item.scenario {
        properties.insert("scenario".to_owned(), json!(s.id));
    }
    if let Some(p) = &f.pointer {
        properties.insert("pointer".to_owned(), json!(p));
    }
    SarifResult::builder()
        .rule_id(f.rule.clone())
        .rule_index(rules.index.get(&f.rule).copied().unwrap_or(0))
        .level(level(f.severity))
        .kind(ResultKind::Fail)
        .message(Message::builder().text(text).build())
        .locations(vec![location])
        .partial_fingerprints(BTreeMap::from([(
            FINGERPRINT_KEY.to_owned(),
            normaliser.fingerprint(f, item.scenario.map(|s| s.id.as_str())),
        )]))
        .properties(
            PropertyBag::builder()
                .tags(vec![f.severity.as_str().to_owned()])
                .additional_properties(properties)
                .build(),
        )
        .build()
}

/// The built-in scenario file for an id (`scenarios/<area>/<name>.yaml`), if it is one.
fn scenario_file(id: &str) -> Option<String> {
    let file = format!("{id}.yaml");
    crate::scenario::builtin::BUILTIN
        .iter()
        .any(|(path, _)| *path == file)
        .then(|| format!("scenarios/{file}"))
}

/// Where in its scenario file a finding was raised: scenario findings end with
/// `(SOURCE:LINE)`; else the built-in file of the scenario, without a line.
fn scenario_location(f: &Finding, s: &ScenarioOutcome) -> Option<Location> {
    let from_message = f
        .message
        .strip_suffix(')')
        .and_then(|m| m.rsplit_once('('))
        .and_then(|(_, at)| at.rsplit_once(':'))
        .and_then(|(source, line)| Some((source, line.parse::<i64>().ok()?)));
    let (uri, line) = match from_message {
        Some((source, line)) => (source_uri(source), Some(line)),
        None => (scenario_file(&s.id)?, None),
    };
    Some(physical(uri, line))
}

/// A scenario source as a URI relative to the repository root: `builtin:a/b.yaml` is
/// `scenarios/a/b.yaml`; a path under the working directory is made relative.
fn source_uri(source: &str) -> String {
    if let Some(rest) = source.strip_prefix("builtin:") {
        return format!("scenarios/{rest}");
    }
    if let Some(rest) = source.strip_prefix("<cwd>/") {
        return uri_escape(rest);
    }
    path_uri(source)
}

fn path_uri(path: &str) -> String {
    let p = std::path::Path::new(path);
    if p.is_absolute() {
        if let Some(rel) = std::env::current_dir()
            .ok()
            .and_then(|cwd| p.strip_prefix(cwd).ok().map(|r| r.to_path_buf()))
        {
            return uri_escape(&rel.to_string_lossy());
        }
        return format!("file://{}", uri_escape(path));
    }
    uri_escape(path.trim_start_matches("./"))
}

fn uri_escape(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.replace('\\', "/").chars() {
        match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '-' | '_' | '.' | '~' | '/' => out.push(c),
            c => {
                let mut buf = [0; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("%{b:02X}"));
                }
            }
        }
    }
    out
}

fn physical(uri: String, line: Option<i64>) -> Location {
    let mut physical = PhysicalLocation::builder()
        .artifact_location(ArtifactLocation::builder().uri(uri).build())
        .build();
    // A whole-artifact location still names its first line: SARIF readers (and the
    // validator's SARIF2017) expect a region on every physical location.
    let line = line.filter(|l| *l > 0).unwrap_or(1);
    physical.region = Some(Region::builder().start_line(line).build());
    Location::builder().physical_location(physical).build()
}

/// The server under test as an artifact (where sweep findings point: they belong to no
/// scenario file) and as a slug for `automationDetails.id`.
struct ServerArtifact {
    uri: String,
    slug: String,
}

impl ServerArtifact {
    /// From the report's server description: a URL, or a command line whose script
    /// (`python3 server.py`) or program (`./target/debug/my-server`) is the artifact.
    fn of(server: &str) -> Self {
        let first = server.split_whitespace().next().unwrap_or("server");
        if first.starts_with("http://") || first.starts_with("https://") {
            let rest = first.split_once("://").map_or(first, |(_, r)| r);
            let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
            let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
            let host = host.rsplit_once(':').map_or(host, |(h, _)| h);
            return ServerArtifact {
                uri: first.to_owned(),
                slug: slug(&format!("{host}/{path}")),
            };
        }
        let words: Vec<&str> = server.split_whitespace().collect();
        let script = words
            .iter()
            .skip(1)
            .find(|w| !w.starts_with('-') && std::path::Path::new(w).is_file())
            .copied()
            .unwrap_or(first);
        let base = script.rsplit(['/', '\\']).next().unwrap_or(script);
        ServerArtifact {
            uri: source_uri(script),
            slug: slug(base),
        }
    }

    fn location(&self) -> Location {
        physical(self.uri.clone(), None)
    }
}

/// `automationDetails.id`: one category per target, revision leg and `--partition` share
/// (code scanning replaces a category's alerts with each upload, so the shares of a split
/// run must not overwrite each other); the trailing `/` leaves the run id empty.
fn category(server: &ServerArtifact, r: &RunReport) -> String {
    match &r.partition {
        Some(p) => format!(
            "mcpcheck/{}/{}/part-{}/",
            server.slug,
            r.revision,
            p.replace('/', "-of-")
        ),
        None => format!("mcpcheck/{}/{}/", server.slug, r.revision),
    }
}

fn slug(text: &str) -> String {
    let s: String = text
        .trim_matches('/')
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if s.is_empty() { "server".into() } else { s }
}

/// How the run went, and what it could not check.
fn invocation(r: &RunReport) -> Invocation {
    let note = |level: &str, text: String| {
        Notification::builder()
            .level(json!(level))
            .message(Message::builder().text(text).build())
            .build()
    };
    let mut notes = Vec::new();
    match &r.sweep.schema {
        SchemaStatus::Disabled { reason } => notes.push(note(
            "warning",
            format!("schema validation DISABLED: {reason}"),
        )),
        SchemaStatus::Skipped { reason } => notes.push(note(
            "warning",
            format!("schema validation skipped: {reason}"),
        )),
        SchemaStatus::Checked { .. } => {}
    }
    for s in &r.scenarios {
        if let Verdict::Error { reason } = &s.verdict {
            notes.push(note(
                "error",
                format!("scenario {} could not run: {reason}", s.id),
            ));
        }
    }
    let mut inv = Invocation::builder()
        .execution_successful(!r.has_errors())
        .build();
    if !notes.is_empty() {
        inv.tool_execution_notifications = Some(notes);
    }
    inv
}

/// Turns a finding into its fingerprint: rule, scenario, and text with everything that
/// changes between runs (numbers, times, ids, ports, machine paths) replaced.
struct Normaliser {
    scrubber: Scrubber,
    digits: regex::Regex,
}

impl Normaliser {
    fn new() -> Self {
        Normaliser {
            scrubber: Scrubber::for_this_process(None),
            digits: regex::Regex::new(r"[0-9]+").expect("valid pattern"),
        }
    }

    fn normalise(&self, text: &str) -> String {
        self.digits
            .replace_all(&self.scrubber.scrub(text), "#")
            .into_owned()
    }

    fn fingerprint(&self, f: &Finding, scenario: Option<&str>) -> String {
        let mut material = String::new();
        for part in [
            f.rule.as_str(),
            scenario.unwrap_or(""),
            &self.normalise(&f.message),
            &self.normalise(f.pointer.as_deref().unwrap_or("")),
            &self.normalise(f.evidence.as_deref().unwrap_or("")),
        ] {
            material.push_str(part);
            material.push('\u{1f}');
        }
        crate::schema::pins::digest(material.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_ignore_what_changes_between_runs() {
        let n = Normaliser::new();
        let f = |msg: &str| Finding::custom("a/b", Severity::Failure, "x", msg);
        let a = n.fingerprint(
            &f("no answer after 5.2ms on http://127.0.0.1:40123/mcp (session 3f2a9c1e-1111-2222-3333-444455556666, pid 77)"),
            Some("a/b"),
        );
        let b = n.fingerprint(
            &f("no answer after 7.9ms on http://127.0.0.1:39999/mcp (session 00000000-aaaa-bbbb-cccc-ddddeeeeffff, pid 12)"),
            Some("a/b"),
        );
        assert_eq!(a, b);
        assert_ne!(a, n.fingerprint(&f("a different problem"), Some("a/b")));
        assert_ne!(
            a,
            n.fingerprint(
                &f("no answer after 5.2ms on http://127.0.0.1:40123/mcp (session x, pid 77)"),
                Some("c/d")
            )
        );
    }

    #[test]
    fn servers_become_artifacts_and_slugs() {
        let s = ServerArtifact::of("http://user@127.0.0.1:8808/mcp");
        assert_eq!(
            (s.uri.as_str(), s.slug.as_str()),
            ("http://user@127.0.0.1:8808/mcp", "127.0.0.1-mcp")
        );
        let s = ServerArtifact::of("/opt/bin/my-server --flag");
        assert_eq!(
            (s.uri.as_str(), s.slug.as_str()),
            ("file:///opt/bin/my-server", "my-server")
        );
        let s = ServerArtifact::of("<cwd>/target/debug/my-server");
        assert_eq!(
            (s.uri.as_str(), s.slug.as_str()),
            ("target/debug/my-server", "my-server")
        );
        let s = ServerArtifact::of("npx -y some-pkg");
        assert_eq!((s.uri.as_str(), s.slug.as_str()), ("npx", "npx"));
    }

    #[test]
    fn scenario_sources_become_repository_uris() {
        assert_eq!(
            source_uri("builtin:tools/list-result.yaml"),
            "scenarios/tools/list-result.yaml"
        );
        assert_eq!(
            source_uri("<cwd>/my scenarios/x.yaml"),
            "my%20scenarios/x.yaml"
        );
        assert_eq!(source_uri("./mine/x.yaml"), "mine/x.yaml");
        assert_eq!(
            scenario_file("tools/list-result").as_deref(),
            Some("scenarios/tools/list-result.yaml")
        );
        assert_eq!(scenario_file("mine/x"), None);
    }
}
