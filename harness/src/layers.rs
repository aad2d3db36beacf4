//! The layer order of the crate, enforced by reading the source.
//!
//! A module may import only from layers below it (or its own); every top-level module must
//! have a rank. Within a module, its files and folders (siblings under one parent, at any
//! depth) may not import each other in a circle. The test reads every `crate::`, `super::`
//! and `self::` path of the library's non-test code, resolved to the full module path (and
//! through a parent's `pub use` of a child), so an upward import or a circle fails
//! `cargo test`, not a review.

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

/// Files at the root of `src/` that are no layer: the crate root, the binary, this test.
const ROOT_FILES: &[&str] = &["lib", "main", "layers"];

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

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Reads one use tree at the start of `s` (`a::b::{c, d::{e, f}, g::*}`), appending each
/// leaf's segments, after `prefix`, to `out`; returns how many bytes it read.
fn use_tree(s: &str, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let mut path = prefix.to_vec();
    let mut read_any = false;
    let mut i = 0;
    loop {
        i += s[i..].len() - s[i..].trim_start().len();
        if s[i..].starts_with('{') {
            i += 1;
            loop {
                i += use_tree(&s[i..], &path, out);
                i += s[i..].len() - s[i..].trim_start().len();
                match s[i..].chars().next() {
                    Some(',') => i += 1,
                    Some('}') => return i + 1,
                    _ => return i,
                }
            }
        }
        let len = s[i..]
            .find(|c: char| !(is_ident(c) || c == '*'))
            .unwrap_or(s.len() - i);
        if len == 0 {
            break;
        }
        let segment = &s[i..i + len];
        read_any = true;
        if segment != "self" && segment != "*" {
            path.push(segment.to_owned());
        }
        i += len;
        match s[i..].strip_prefix("::") {
            Some(_) => i += 2,
            None => break,
        }
    }
    if read_any {
        out.push(path);
    }
    i
}

/// The module paths `code` (the file of `module`) refers to through `crate::`, `super::`
/// (at any depth, repeated) and `self::`, grouped or not, as full segment lists from the
/// crate root. Relative `use` of a child module (`use steps::X` in a `mod.rs`) is included
/// when `children` names it.
fn module_paths(code: &str, module: &[String], children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let bytes = code.as_bytes();
    for (i, _) in code.char_indices() {
        let before = i.checked_sub(1).map(|j| bytes[j] as char);
        if before.is_some_and(|c| is_ident(c) || c == ':') {
            continue;
        }
        let rest = &code[i..];
        let (mut base, mut after) = if let Some(a) = rest.strip_prefix("crate::") {
            (Vec::new(), a)
        } else if let Some(a) = rest.strip_prefix("self::") {
            (module.to_vec(), a)
        } else if rest.starts_with("super::") {
            (module.to_vec(), rest)
        } else if let Some(a) = rest.strip_prefix("use ") {
            // A relative `use` of a child module.
            let a = a.trim_start();
            let head: String = a.chars().take_while(|c| is_ident(*c)).collect();
            if !children.contains(&head) {
                continue;
            }
            (module.to_vec(), a)
        } else {
            continue;
        };
        while let Some(a) = after.strip_prefix("super::") {
            base.pop();
            after = a;
        }
        use_tree(after, &base, &mut paths);
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

/// Every module of the library with the full paths its code refers to, each resolved
/// through its module's `pub use` of a child (`super::X` where the parent re-exports
/// `X` from `steps` is `…::steps::X`).
fn references(sources: &[Source]) -> Vec<(Vec<String>, Vec<Vec<String>>)> {
    let modules: BTreeSet<Vec<String>> = sources.iter().map(|s| s.module.clone()).collect();
    let children = |module: &[String]| -> BTreeSet<String> {
        modules
            .iter()
            .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
            .map(|m| m[module.len()].clone())
            .collect()
    };
    let raw: Vec<(Vec<String>, Vec<Vec<String>>)> = sources
        .iter()
        .map(|s| {
            let kids = children(&s.module);
            (s.module.clone(), module_paths(&s.code, &s.module, &kids))
        })
        .collect();
    // name -> child, for the items each module re-exports from one of its children.
    let mut reexports: BTreeMap<Vec<String>, BTreeMap<String, String>> = BTreeMap::new();
    for (module, paths) in &raw {
        for path in paths {
            if path.len() >= module.len() + 2
                && path.starts_with(module)
                && modules.contains(&path[..module.len() + 1])
            {
                reexports
                    .entry(module.clone())
                    .or_default()
                    .insert(path.last().unwrap().clone(), path[module.len()].clone());
            }
        }
    }
    raw.into_iter()
        .map(|(module, paths)| {
            let resolved = paths
                .into_iter()
                .map(|path| {
                    // The longest known module the path names, and the item after it.
                    let at = (0..path.len())
                        .rev()
                        .find(|&n| modules.contains(&path[..n]))
                        .unwrap_or(0);
                    match path
                        .get(at)
                        .and_then(|item| reexports.get(&path[..at])?.get(item))
                    {
                        Some(child) => {
                            let mut full = path[..at].to_vec();
                            full.push(child.clone());
                            full.extend_from_slice(&path[at..]);
                            full
                        }
                        None => path,
                    }
                })
                .collect();
            (module, resolved)
        })
        .collect()
}

#[test]
fn no_module_imports_from_a_layer_above_it() {
    let sources = library();
    let mut upward = Vec::new();
    let mut unranked = BTreeSet::new();
    for (module, paths) in references(&sources) {
        let top = module.first().map(String::as_str).unwrap_or("");
        let Some(own) = rank(top) else {
            if !ROOT_FILES.contains(&top) {
                unranked.insert(top.to_owned());
            }
            continue;
        };
        for path in paths {
            if let Some(target) = path.first().and_then(|m| rank(m))
                && target > own
            {
                upward.push(format!(
                    "{} imports crate::{}",
                    module.join("::"),
                    path.join("::")
                ));
            }
        }
    }
    assert!(
        unranked.is_empty(),
        "top-level modules missing from LAYERS {LAYERS:?}: {unranked:?}"
    );
    upward.sort();
    upward.dedup();
    assert!(
        upward.is_empty(),
        "imports against the layer order {LAYERS:?}:\n  {}",
        upward.join("\n  ")
    );
}

/// Edges between siblings: a file of module `a::b::c` that refers to `a::b::d::…` makes
/// `a::b::c -> a::b::d`, and (as a part of `a::b`) one that refers to `a::e::…` makes
/// `a::b -> a::e`: every ancestor of a file is a node among its own siblings.
fn sibling_edges(sources: &[Source]) -> BTreeMap<String, BTreeSet<String>> {
    let modules: BTreeSet<Vec<String>> = sources.iter().map(|s| s.module.clone()).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, paths) in references(sources) {
        for depth in 2..=module.len() {
            let (parent, own) = (&module[..depth - 1], &module[depth - 1]);
            let node = module[..depth].join("::");
            for path in &paths {
                if path.len() >= depth
                    && path.starts_with(parent)
                    && &path[depth - 1] != own
                    && modules.contains(&path[..depth])
                {
                    edges
                        .entry(node.clone())
                        .or_default()
                        .insert(path[..depth].join("::"));
                }
            }
        }
    }
    edges
}

/// The circles among `edges`, each shown once (as a path back to where it starts).
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut circles = BTreeSet::new();
    for start in edges.keys() {
        if let Some(path) = path_back(edges, start) {
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
    circles.into_iter().map(|(_, shown)| shown).collect()
}

#[test]
fn the_files_of_a_module_import_each_other_in_no_circle() {
    let circles = circles(&sibling_edges(&library()));
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

fn strings(path: &str) -> Vec<String> {
    path.split("::").map(str::to_owned).collect()
}

#[test]
fn the_reader_finds_grouped_nested_and_relative_paths() {
    let module = strings("a::b::c");
    let paths = module_paths(
        "use crate::{runner::events::Event, check::{self, rules::Rule}};\n\
         let x = crate::report::human::render();\n\
         use super::d::{E,\n    F,\n};\nsuper::super::g::h();\npub(super) fn f() {}\n\
         use self::k::L;\nuse m::N;\nuse std::io;",
        &module,
        &["m".to_owned()].into(),
    );
    let shown: Vec<String> = paths.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        shown,
        [
            "runner::events::Event",
            "check",
            "check::rules::Rule",
            "report::human::render",
            "a::b::d::E",
            "a::b::d::F",
            "a::g::h",
            "a::b::c::k::L",
            "a::b::c::m::N",
        ]
    );
    assert_eq!(rank("cli"), Some(LAYERS.len() - 1));
}

#[test]
fn a_circle_between_deep_siblings_is_found_also_through_a_reexport() {
    let file = |path: &str, code: &str| Source {
        module: strings(path),
        code: code.to_owned(),
    };
    let sources = [
        file("t::h", "pub use self::x::Shared;"),
        file("t::h::x", "use super::y::read;"),
        // `Shared` is x's, re-exported by the parent.
        file("t::h::y", "use super::Shared;"),
        file("t::h::z", "use super::y::read;"),
    ];
    assert_eq!(
        circles(&sibling_edges(&sources)),
        ["t::h::x -> t::h::y -> t::h::x"]
    );
}
