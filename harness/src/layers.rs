//! The layer order of the crate, enforced by reading the source.
//!
//! A module may import only from layers below it (or its own); within a layer, the files of
//! one module may not import each other in a circle. This test reads every `crate::` path
//! of the library's non-test code, so an upward import fails `cargo test`, not a review.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Lowest first. `outcome` sits above `transport` because a transcript entry holds the
/// transport's record of an HTTP exchange; the transport itself needs no verdicts.
const LAYERS: &[&str] = &[
    "protocol",
    "transport",
    "outcome",
    "schema",
    "check",
    "session",
    "scenario",
    "snapshot",
    "fuzz",
    "runner",
    "report",
    "cli",
];

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| *l == module)
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The file's code without its `#[cfg(test)]` part (tests may reach anywhere) and without
/// comments (a doc comment may name any module).
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module paths a piece of code refers to through `crate::`, including grouped
/// imports (`use crate::{a::X, b::Y}`), as segment lists.
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    // `a::b::C` up to the first character that continues no path.
    let ident = |s: &str| -> Vec<String> {
        let mut segments = Vec::new();
        let mut rest = s;
        loop {
            let len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            if len == 0 {
                break;
            }
            segments.push(rest[..len].to_owned());
            match rest[len..].strip_prefix("::") {
                Some(next) => rest = next,
                None => break,
            }
        }
        segments
    };
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                paths.push(ident(item.trim()));
            }
        } else {
            paths.push(ident(after));
        }
        rest = after;
    }
    paths
}

struct Source {
    /// `runner/suite.rs` -> ["runner", "suite"]; `runner/mod.rs` -> ["runner"].
    module: Vec<String>,
    code: String,
}

fn library() -> Vec<Source> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    files
        .into_iter()
        .filter_map(|path| {
            let rel = path.strip_prefix(&root).ok()?.with_extension("");
            let mut module: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if module.last().is_some_and(|m| m == "mod") {
                module.pop();
            }
            let text = std::fs::read_to_string(&path).ok()?;
            Some(Source {
                module,
                code: code(&text),
            })
        })
        .collect()
}

#[test]
fn no_module_imports_from_a_layer_above_it() {
    let mut upward = Vec::new();
    for source in library() {
        let Some(own) = source.module.first().and_then(|m| rank(m)) else {
            continue;
        };
        for path in crate_paths(&source.code) {
            if let Some(target) = path.first().and_then(|m| rank(m))
                && target > own
            {
                upward.push(format!(
                    "{} imports crate::{}",
                    source.module.join("::"),
                    path.join("::")
                ));
            }
        }
    }
    upward.sort();
    upward.dedup();
    assert!(
        upward.is_empty(),
        "imports against the layer order {LAYERS:?}:\n  {}",
        upward.join("\n  ")
    );
}

#[test]
fn the_files_of_a_module_import_each_other_in_no_circle() {
    // Nodes are second-level modules (`runner::suite`); edges are `crate::runner::suite`
    // or `super::suite` references between siblings of one top-level module.
    let sources = library();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for source in &sources {
        if source.module.len() < 2 {
            continue;
        }
        let (top, own) = (&source.module[0], &source.module[1]);
        let node = format!("{top}::{own}");
        let mut targets = BTreeSet::new();
        for path in crate_paths(&source.code) {
            if path.len() >= 2 && &path[0] == top && &path[1] != own {
                targets.insert(format!("{top}::{}", path[1]));
            }
        }
        if source.module.len() == 2 {
            for part in source.code.split("super::").skip(1) {
                let name: String = part
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                let sibling = sources
                    .iter()
                    .any(|s| s.module.len() >= 2 && &s.module[0] == top && s.module[1] == name);
                if sibling && &name != own {
                    targets.insert(format!("{top}::{name}"));
                }
            }
        }
        edges.entry(node).or_default().extend(targets);
    }
    let mut circles = BTreeSet::new();
    for start in edges.keys() {
        if let Some(path) = path_back(&edges, start) {
            let mut members = path.clone();
            members.sort();
            members.dedup();
            if circles
                .iter()
                .all(|(m, _): &(Vec<String>, String)| *m != members)
            {
                circles.insert((members, path.join(" -> ")));
            }
        }
    }
    let circles: Vec<_> = circles.into_iter().map(|(_, shown)| shown).collect();
    assert!(
        circles.is_empty(),
        "modules that import each other:\n  {}",
        circles.join("\n  ")
    );
}

/// A path from `start` back to itself, if there is one (depth-first, shortest not needed).
fn path_back(edges: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    fn walk(
        edges: &BTreeMap<String, BTreeSet<String>>,
        start: &str,
        at: &str,
        seen: &mut BTreeSet<String>,
        path: &mut Vec<String>,
    ) -> bool {
        for next in edges.get(at).into_iter().flatten() {
            if next == start {
                path.push(next.clone());
                return true;
            }
            if seen.insert(next.clone()) {
                path.push(next.clone());
                if walk(edges, start, next, seen, path) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = vec![start.to_owned()];
    walk(edges, start, start, &mut BTreeSet::new(), &mut path).then_some(path)
}

#[test]
fn the_reader_finds_grouped_and_plain_paths() {
    let paths = crate_paths(
        "use crate::{runner::events::Event, check};\nlet x = crate::report::human::render();",
    );
    let heads: Vec<_> = paths.iter().map(|p| p[0].as_str()).collect();
    assert_eq!(heads, ["runner", "check", "report"]);
    assert_eq!(rank("cli"), Some(LAYERS.len() - 1));
}
