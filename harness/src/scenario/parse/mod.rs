//! Reads scenario files (YAML) into the [`model`](super::model), with errors that point at
//! the spot: file:line:col, the source line, a caret, and a hint.
//!
//! The format is documented in `scenarios/README.md` and described by
//! `scenarios/scenario.schema.json`. Parsing builds on `saphyr`'s marked nodes, so every
//! node keeps its position, and validates everything the model cannot express:
//! pointers, regexes, durations, revisions, variable definitions and uses.

mod checks;
mod client;
mod client_auth;
mod error;
mod expect;
mod http;
mod input;
mod steps;
mod vars;
mod yaml;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

pub use self::checks::MATCHERS;
pub use self::client::{CLIENT_STEP_KINDS, is_client_document, parse_client_scenario};
pub use self::error::ScenarioError;
pub use self::steps::STEP_KINDS;
pub use self::vars::BUILTINS;
use self::vars::Scope;
use self::yaml::{Ctx, Map, Node, R, nonempty_string, string, string_list, suggest, to_json};
use super::model::{Initialize, InitializeOverrides, Requirement, Scenario, Step, StepKind};
use crate::outcome::Severity;
use crate::protocol::Revision;
use crate::transport::target::TransportKind;

/// How long a wait lasts when `within` is not given (here, not in `steps`, because the step,
/// `expect` and `http` parsers all need it and `steps` calls the other two).
pub const DEFAULT_WITHIN: Duration = Duration::from_secs(5);

const TOP_KEYS: &[&str] = &[
    "id",
    "title",
    "spec",
    "revisions",
    "transports",
    "requires",
    "severity",
    "official",
    "rule",
    "fresh",
    "steps",
];

/// Parses one scenario file. `source_name` names it in errors and in [`Scenario::source`].
///
/// If the first step is not `initialize`, the scenario starts with the default handshake:
/// the parser inserts an `initialize` step (on the line of `steps:`), so the first step of
/// a parsed scenario is always [`StepKind::Initialize`], except in a scenario made of one
/// `negotiate` step, which opens its own sessions ([`Scenario::negotiation`]).
pub fn parse_scenario(source_name: &str, text: &str) -> Result<Scenario, ScenarioError> {
    let ctx = Ctx::new(source_name, text);
    let root = yaml::load(&ctx, text)?;
    scenario(&ctx, &root)
}

/// Reads a scenario file as plain JSON (for JSON Schema validation, say), with the same
/// YAML errors as [`parse_scenario`].
pub fn to_json_document(source_name: &str, text: &str) -> Result<Value, ScenarioError> {
    let ctx = Ctx::new(source_name, text);
    let root = yaml::load(&ctx, text)?;
    to_json(&ctx, &root)
}

/// Reads and parses one file; its path (as given) is the source name.
pub fn parse_file(path: &Path) -> Result<Scenario, ScenarioError> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| ScenarioError::whole_file(&name, format!("cannot read the file: {e}")))?;
    if is_client_document(&text) {
        return Err(ScenarioError::whole_file(
            &name,
            "this is a client scenario (`role: client`), not a server scenario",
        )
        .with_hint("run it with `mcpcheck client --scenario-dir DIR --command CLIENT`"));
    }
    parse_scenario(&name, &text)
}

/// Every `*.yaml` / `*.yml` file under `dir`, recursively, in path order.
pub fn scenario_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Parses every scenario file under `dir`. Returns the scenarios that parsed and one error
/// per file that did not, plus an error for each id used by two files.
pub fn parse_dir(dir: &Path) -> (Vec<Scenario>, Vec<ScenarioError>) {
    let files = match scenario_files(dir) {
        Ok(f) => f,
        Err(e) => {
            let name = dir.display().to_string();
            return (
                Vec::new(),
                vec![ScenarioError::whole_file(
                    &name,
                    format!("cannot list scenarios: {e}"),
                )],
            );
        }
    };
    let mut scenarios: Vec<Scenario> = Vec::new();
    let mut errors = Vec::new();
    for path in files {
        let name = path.display().to_string();
        let parsed = match std::fs::read_to_string(&path) {
            // Client scenarios (`role: client`) are `mcpcheck client`'s: `parse_client_dir`.
            Ok(text) if is_client_document(&text) => continue,
            Ok(text) => parse_scenario(&name, &text),
            Err(e) => Err(ScenarioError::whole_file(
                &name,
                format!("cannot read the file: {e}"),
            )),
        };
        match parsed {
            Ok(s) => {
                if let Some(first) = scenarios.iter().find(|o| o.id == s.id) {
                    errors.push(
                        ScenarioError::whole_file(
                            &s.source,
                            format!("scenario id `{}` is already used by {}", s.id, first.source),
                        )
                        .with_hint("ids are unique across the suite"),
                    );
                } else {
                    scenarios.push(s);
                }
            }
            Err(e) => errors.push(e),
        }
    }
    (scenarios, errors)
}

/// `official:`, the official suite's ids a scenario stands for (server or client).
pub(super) fn official_ids(ctx: &Ctx<'_>, map: &Map<'_>) -> R<Vec<String>> {
    Ok(match map.get("official") {
        None => Vec::new(),
        Some(node) => string_list(ctx, node, "official")?
            .into_iter()
            .map(|(s, _)| s.to_owned())
            .collect(),
    })
}

/// `rule:`, the rule id a scenario files its own findings under (server or client).
pub(super) fn rule_id(ctx: &Ctx<'_>, map: &Map<'_>) -> R<Option<String>> {
    let Some(node) = map.get("rule") else {
        return Ok(None);
    };
    let r = nonempty_string(ctx, node, "`rule`")?;
    if !is_id(r, '.') {
        return Err(ctx
            .error(node, format!("`{r}` is not a rule id"))
            .with_hint("rule ids are lower case, digits, `-`, `.` and `/`, e.g. `lifecycle.initialize-result`"));
    }
    Ok(Some(r.to_owned()))
}

/// Parses every client scenario (`role: client`) under `dir`, as [`parse_dir`] does the
/// server ones.
pub fn parse_client_dir(
    dir: &Path,
) -> (
    Vec<super::model::client::ClientScenario>,
    Vec<ScenarioError>,
) {
    let files = match scenario_files(dir) {
        Ok(f) => f,
        Err(e) => {
            let name = dir.display().to_string();
            let e = ScenarioError::whole_file(&name, format!("cannot list scenarios: {e}"));
            return (Vec::new(), vec![e]);
        }
    };
    let mut scenarios: Vec<super::model::client::ClientScenario> = Vec::new();
    let mut errors = Vec::new();
    for path in files {
        let name = path.display().to_string();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) => {
                errors.push(ScenarioError::whole_file(
                    &name,
                    format!("cannot read the file: {e}"),
                ));
                continue;
            }
        };
        if !is_client_document(&text) {
            continue;
        }
        match parse_client_scenario(&name, &text) {
            Ok(s) if scenarios.iter().any(|o| o.id == s.id) => errors.push(
                ScenarioError::whole_file(&name, format!("scenario id `{}` is used twice", s.id))
                    .with_hint("ids are unique across the suite"),
            ),
            Ok(s) => scenarios.push(s),
            Err(e) => errors.push(e),
        }
    }
    (scenarios, errors)
}

fn scenario(ctx: &Ctx<'_>, root: &Node) -> R<Scenario> {
    let map = Map::new(ctx, root, "a scenario").map_err(|e| {
        e.with_hint("a scenario file is a mapping with `id`, `title`, `spec` and `steps`")
    })?;
    map.only(ctx, TOP_KEYS, "a scenario")?;

    let id_node = map.require(ctx, "id", "the scenario")?;
    let id = nonempty_string(ctx, id_node, "`id`")?;
    if !is_id(id, '/') || !id.contains('/') {
        return Err(ctx
            .error(id_node, format!("`{id}` is not a scenario id"))
            .with_hint("ids are `area/name` in lower case, digits and `-`, e.g. `lifecycle/initialize-result`"));
    }
    let title = nonempty_string(ctx, map.require(ctx, "title", "the scenario")?, "`title`")?;
    let spec_node = map.require(ctx, "spec", "the scenario")?;
    let spec = nonempty_string(ctx, spec_node, "`spec`")?;
    if spec.chars().any(char::is_whitespace) || spec.starts_with('/') {
        return Err(ctx
            .error(spec_node, format!("`{spec}` is not a spec reference"))
            .with_hint("write a section path like `basic/lifecycle#initialization`, or a full `https://` URL"));
    }

    let revisions = match map.get("revisions") {
        None => Revision::HANDSHAKE.to_vec(),
        Some(node) => revisions(ctx, node)?,
    };

    let transports = match map.get("transports") {
        None => vec![TransportKind::Stdio, TransportKind::Http],
        Some(node) => transports(ctx, node)?,
    };

    let requires = match map.get("requires") {
        None => Vec::new(),
        Some(node) => requirements(ctx, node)?,
    };

    let severity = match map.get("severity") {
        None => Severity::Failure,
        Some(node) => severity(ctx, node)?,
    };

    let official = official_ids(ctx, &map)?;
    let rule = rule_id(ctx, &map)?;

    let fresh = match map.get("fresh") {
        None => false,
        Some(node) => yaml::boolean(ctx, node, "`fresh`")?,
    };

    let steps_key = map.key_node("steps");
    let steps_node = map.require(ctx, "steps", "the scenario")?;
    let mut scope = Scope::default();
    let mut steps = steps::steps(ctx, steps_node, &mut scope, true, "`steps`")?;
    if !matches!(
        steps.first(),
        Some(Step {
            kind: StepKind::Initialize(_) | StepKind::Negotiate(_),
            ..
        })
    ) {
        let line = steps_key.map_or(1, |k| k.span.start.line());
        steps.insert(
            0,
            Step {
                line,
                kind: StepKind::Initialize(Initialize::Handshake(InitializeOverrides::default())),
            },
        );
    }

    Ok(Scenario {
        id: id.to_owned(),
        title: title.trim().to_owned(),
        spec: spec.to_owned(),
        revisions,
        transports,
        requires,
        severity,
        official,
        rule,
        fresh,
        steps,
        source: ctx.file.to_owned(),
    })
}

/// `revisions:`: a non-empty list of known revisions, in order.
pub(super) fn revisions(ctx: &Ctx<'_>, node: &Node) -> R<Vec<Revision>> {
    let items = string_list(ctx, node, "revisions")?;
    if items.is_empty() {
        return Err(ctx
            .error(
                node,
                "`revisions` is empty, so the scenario would never run",
            )
            .with_hint("leave it out to run on every revision with a handshake"));
    }
    let names: Vec<&str> = Revision::ALL.iter().map(|r| r.as_str()).collect();
    let mut out = Vec::with_capacity(items.len());
    for (s, n) in items {
        let r = s.parse::<Revision>().map_err(|_| {
            let e = ctx.error(n, format!("unknown revision `{s}`"));
            match suggest(s, &names) {
                Some(m) => e.with_hint(format!("did you mean `{m}`?")),
                None => e.with_hint(format!("known revisions: {}", yaml::list(&names))),
            }
        })?;
        out.push(r);
    }
    out.sort();
    Ok(out)
}

/// `transports:`: a non-empty list of `stdio` and `http`, in order.
pub(super) fn transports(ctx: &Ctx<'_>, node: &Node) -> R<Vec<TransportKind>> {
    let items = string_list(ctx, node, "transports")?;
    if items.is_empty() {
        return Err(ctx
            .error(
                node,
                "`transports` is empty, so the scenario would never run",
            )
            .with_hint("leave it out to run on both `stdio` and `http`"));
    }
    let mut out = Vec::with_capacity(items.len());
    for (s, n) in items {
        out.push(match s {
            "stdio" => TransportKind::Stdio,
            "http" => TransportKind::Http,
            other => {
                let e = ctx.error(n, format!("unknown transport `{other}`"));
                return Err(match suggest(other, &["stdio", "http"]) {
                    Some(m) => e.with_hint(format!("did you mean `{m}`?")),
                    None => e.with_hint("transports are `stdio` and `http`"),
                });
            }
        });
    }
    out.sort();
    Ok(out)
}

/// `severity:`: `must` (a failure) or `should` (a warning).
pub(super) fn severity(ctx: &Ctx<'_>, node: &Node) -> R<Severity> {
    const HINT: &str = "severity is `must` (a failure) or `should` (a warning)";
    let word = string(ctx, node, "`severity`").map_err(|e| e.with_hint(HINT))?;
    match word {
        "must" => Ok(Severity::Failure),
        "should" => Ok(Severity::Warning),
        other => {
            let e = ctx.error(node, format!("unknown severity `{other}`"));
            Err(match other {
                "MUST" | "failure" | "error" | "required" => e.with_hint("did you mean `must`?"),
                "SHOULD" | "warning" | "warn" | "recommended" => {
                    e.with_hint("did you mean `should`?")
                }
                _ => e.with_hint(HINT),
            })
        }
    }
}

/// Lower-case ASCII, digits and `-` segments, separated by `/` (and `sep`).
pub(super) fn is_id(s: &str, sep: char) -> bool {
    s.split(['/', sep]).all(|seg| {
        seg.chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            && seg
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    })
}

/// A `requires` list: capability names, `!name` for "must not declare".
pub(crate) fn requirements(ctx: &Ctx<'_>, node: &Node) -> R<Vec<Requirement>> {
    string_list(ctx, node, "requires")?
        .into_iter()
        .map(|(s, n)| {
            let (declared, name) = match s.strip_prefix('!') {
                Some(rest) => (false, rest),
                None => (true, s),
            };
            let ok = name.split('.').all(|part| {
                part.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                    && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
            if ok {
                Ok(Requirement {
                    capability: name.to_owned(),
                    declared,
                })
            } else {
                Err(ctx
                    .error(n, format!("`{s}` is not a capability"))
                    .with_hint("name a key of the server's `capabilities`, or a dotted sub-key like `resources.subscribe`; `!tools` means the server must not declare `tools`"))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
