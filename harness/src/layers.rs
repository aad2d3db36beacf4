//! The layer order of the crate, enforced by reading the source.
//!
//! A module may import only from layers below it (or its own); every top-level module must
//! have a rank. Within a module, its files and folders (siblings under one parent, at any
//! depth) may not import each other in a circle. The test reads every `crate::`, `super::`
//! and `self::` path of the library's non-test code, resolved to the full module path (and
//! through a parent's `pub use` of a child), so an upward import or a circle fails
//! `cargo test`, not a review. It reads whole files: only the item under each
//! `#[cfg(test)]` is left out (a `mod tests { ... }` block, a `mod x;` line and with it the
//! file of `x`, a function), and comments and the contents of literals are blanked, so a
//! brace or a path in a string neither ends an item nor counts as an import.

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

/// Files at the root of `src/` that are no layer: the crate root and the binary. (This
/// test is test code, which is not read.)
const ROOT_FILES: &[&str] = &["lib", "main"];

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

/// A file's non-test code, and the child modules it declares only for tests.
struct Code {
    /// The code without comments, without the contents of string and char literals (a doc
    /// comment or a message may name any module), and without every item under
    /// `#[cfg(test)]` (tests may reach anywhere).
    text: String,
    /// `x` for each `#[cfg(test)] mod x;`: its file is test code too.
    test_modules: BTreeSet<String>,
}

/// Reads a whole file: the item after each `#[cfg(test)]` (a `mod tests { ... }` block, a
/// `mod x;` line, a function) is dropped, and everything after it is read.
fn code(text: &str) -> Code {
    let plain = blank_literals_and_comments(text);
    let mut kept = String::with_capacity(plain.len());
    let mut test_modules = BTreeSet::new();
    let mut rest = plain.as_str();
    while let Some(at) = rest.find(TEST_ATTRIBUTE) {
        kept.push_str(&rest[..at]);
        let item = &rest[at + TEST_ATTRIBUTE.len()..];
        let len = item_len(item);
        if let Some(name) = declared_module(&item[..len]) {
            test_modules.insert(name);
        }
        rest = &item[len..];
    }
    kept.push_str(rest);
    Code {
        text: kept,
        test_modules,
    }
}

const TEST_ATTRIBUTE: &str = "#[cfg(test)]";

/// The length of the item at the start of `s` (after any further attributes): up to its
/// first `;` outside brackets, or through the `}` that closes its first block. `s` has no
/// comments or literals left, so every bracket counts.
fn item_len(s: &str) -> usize {
    let mut depth = 0usize;
    let mut braces = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            ';' if depth == 0 && braces == 0 => return i + 1,
            '{' if depth == 0 => braces += 1,
            '}' if depth == 0 && braces > 0 => {
                braces -= 1;
                if braces == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    s.len()
}

/// `x` when `item` is `mod x;` (with any visibility and attributes before it).
fn declared_module(item: &str) -> Option<String> {
    let body = item.trim().strip_suffix(';')?;
    let mut words = body.split_whitespace().rev();
    let name = words.next()?;
    (words.next()? == "mod").then(|| name.to_owned())
}

/// `text` with every comment, and the contents of every string, raw string and char
/// literal, replaced by spaces (newlines kept), so that a reader of paths and brackets
/// sees only code. Lifetimes (`'a`) are code.
fn blank_literals_and_comments(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let end = literal_or_comment_end(&chars, i);
        if end == i {
            out.push(chars[i]);
            i += 1;
        } else {
            out.extend(
                chars[i..end]
                    .iter()
                    .map(|&c| if c == '\n' { c } else { ' ' }),
            );
            i = end;
        }
    }
    out
}

/// Where the comment or literal starting at `i` ends (exclusive); `i` when none starts there.
fn literal_or_comment_end(chars: &[char], i: usize) -> usize {
    let at = |j: usize| chars.get(j).copied();
    let after_ident = i > 0 && is_ident(chars[i - 1]);
    match (chars[i], at(i + 1)) {
        ('/', Some('/')) => (i..chars.len())
            .find(|&j| chars[j] == '\n')
            .unwrap_or(chars.len()),
        ('/', Some('*')) => block_comment_end(chars, i),
        ('"', _) => quoted_end(chars, i + 1, '"'),
        ('\'', Some('\\')) => quoted_end(chars, i + 1, '\''),
        ('\'', Some(_)) if at(i + 2) == Some('\'') => i + 3,
        ('r', Some('"' | '#')) if !after_ident || (i > 0 && chars[i - 1] == 'b') => {
            raw_string_end(chars, i + 1).unwrap_or(i)
        }
        _ => i,
    }
}

/// The end of a `/* ... */` comment at `i`, nested ones included.
fn block_comment_end(chars: &[char], i: usize) -> usize {
    let mut depth = 0;
    let mut j = i;
    while j + 1 < chars.len() {
        match (chars[j], chars[j + 1]) {
            ('/', '*') => {
                depth += 1;
                j += 2;
            }
            ('*', '/') => {
                depth -= 1;
                j += 2;
                if depth == 0 {
                    return j;
                }
            }
            _ => j += 1,
        }
    }
    chars.len()
}

/// The end of a literal whose body starts at `j` and ends at an unescaped `close`.
fn quoted_end(chars: &[char], mut j: usize, close: char) -> usize {
    while j < chars.len() {
        match chars[j] {
            '\\' => j += 2,
            c if c == close => return j + 1,
            _ => j += 1,
        }
    }
    chars.len()
}

/// The end of a raw string whose `#`s (if any) start at `j`; `None` when `r` at `j - 1`
/// is no raw string (an identifier such as `r#type`).
fn raw_string_end(chars: &[char], j: usize) -> Option<usize> {
    let hashes = chars[j..].iter().take_while(|&&c| c == '#').count();
    if chars.get(j + hashes) != Some(&'"') {
        return None;
    }
    let body = j + hashes + 1;
    let end = (body..chars.len()).find(|&k| {
        chars[k] == '"'
            && chars[k + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == '#')
                .count()
                == hashes
    });
    Some(end.map_or(chars.len(), |k| k + 1 + hashes))
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

/// Every file of the library as a module and its non-test code; the files of modules
/// declared under `#[cfg(test)]` (and everything under them) are left out.
fn library() -> Vec<Source> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let read: Vec<(Vec<String>, Code)> = files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
            (module_of(&root, &path), code(&text))
        })
        .collect();
    without_test_files(read)
}

/// `runner/suite.rs` -> ["runner", "suite"]; `runner/mod.rs` -> ["runner"].
fn module_of(root: &Path, path: &Path) -> Vec<String> {
    let rel = path.strip_prefix(root).unwrap_or(path).with_extension("");
    let mut module: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if module.last().is_some_and(|m| m == "mod") {
        module.pop();
    }
    module
}

/// The files as sources, but for those of a test-only module (`#[cfg(test)] mod x;` in
/// its parent) and its descendants.
fn without_test_files(files: Vec<(Vec<String>, Code)>) -> Vec<Source> {
    let test_only: Vec<Vec<String>> = files
        .iter()
        .flat_map(|(module, code)| {
            code.test_modules.iter().map(move |name| {
                let mut path = module.clone();
                // `lib.rs` declares the top-level modules.
                if path == ["lib"] {
                    path.clear();
                }
                path.push(name.clone());
                path
            })
        })
        .collect();
    files
        .into_iter()
        .filter(|(module, _)| !test_only.iter().any(|t| module.starts_with(t)))
        .map(|(module, code)| Source {
            module,
            code: code.text,
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

/// The imports against the layer order (`module imports crate::path`), and the top-level
/// modules missing from `LAYERS`.
fn upward_imports(sources: &[Source]) -> (Vec<String>, BTreeSet<String>) {
    let mut upward = Vec::new();
    let mut unranked = BTreeSet::new();
    for (module, paths) in references(sources) {
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
    upward.sort();
    upward.dedup();
    (upward, unranked)
}

#[test]
fn no_module_imports_from_a_layer_above_it() {
    let (upward, unranked) = upward_imports(&library());
    assert!(
        unranked.is_empty(),
        "top-level modules missing from LAYERS {LAYERS:?}: {unranked:?}"
    );
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

/// The files as `library()` turns them into sources.
fn read(files: &[(&str, &str)]) -> Vec<Source> {
    without_test_files(
        files
            .iter()
            .map(|(module, text)| (strings(module), code(text)))
            .collect(),
    )
}

#[test]
fn an_upward_import_after_a_test_only_module_line_is_caught() {
    // The shape of session/mod.rs: a test-only child declared near the top, the imports
    // below it.
    let sources = read(&[(
        "session",
        "mod barrier;\n#[cfg(test)]\nmod scripted;\nmod shutdown;\n\n\
         use crate::protocol::Message;\nuse crate::runner::pool::Pool;\n",
    )]);
    assert_eq!(
        upward_imports(&sources).0,
        ["session imports crate::runner::pool::Pool"]
    );
}

#[test]
fn imports_inside_test_items_and_test_only_files_are_ignored() {
    let sources = read(&[
        ("lib", "pub mod session;\n#[cfg(test)]\nmod layers;\n"),
        (
            "session",
            "use crate::check::Finding;\n\
             #[cfg(test)]\nmod scripted;\n\
             #[cfg(test)]\nmod tests {\n    use crate::runner::Run;\n    \
             fn f() { let s = \"}\"; let c = '}'; /* } */ }\n    // }\n    \
             use crate::cli::Args;\n}\n\
             #[cfg(test)]\npub(crate) fn helper(x: [u8; 2]) -> crate::report::Report { Default::default() }\n\
             use crate::outcome::Verdict;\n",
        ),
        // The file of the test-only `scripted`, and a file under it.
        ("session::scripted", "use crate::runner::Run;\n"),
        ("session::scripted::deep", "use crate::cli::Args;\n"),
        // This test itself, declared test-only by lib.rs.
        ("layers", "use crate::cli::Args;\n"),
    ]);
    assert_eq!(upward_imports(&sources), (vec![], BTreeSet::new()));
    let session = &sources.iter().find(|s| s.module == ["session"]).unwrap();
    let paths = module_paths(&session.code, &session.module, &BTreeSet::new());
    let shown: Vec<String> = paths.iter().map(|p| p.join("::")).collect();
    // Both imports outside the test items are read: the one after them too.
    assert_eq!(shown, ["check::Finding", "outcome::Verdict"]);
}

#[test]
fn paths_in_comments_and_literals_are_not_imports() {
    let code = code(
        "//! Uses [`crate::runner`].\nlet s = \"crate::cli::main\";\n\
         let r = r#\"crate::report \"quoted\" \"#;\nlet c = '\\'';\n\
         /* crate::fuzz /* nested */ crate::cli */\nfn f<'a>(x: &'a str) {}\n\
         use crate::check::Finding;\n",
    );
    let paths = module_paths(&code.text, &strings("session"), &BTreeSet::new());
    assert_eq!(paths, [strings("check::Finding")]);
    assert!(code.test_modules.is_empty());
}
