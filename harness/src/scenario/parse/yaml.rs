//! Reading marked YAML nodes: typed accessors whose errors point at the node.

use saphyr::Marker;
use saphyr::{LoadableYamlNode, MarkedYamlOwned, ScalarOwned, YamlDataOwned};
use serde_json::{Number, Value};

use super::error::ScenarioError;

pub(crate) type Node = MarkedYamlOwned;
pub(crate) type R<T> = Result<T, ScenarioError>;

/// The file being parsed: its name and lines, to build errors.
pub(crate) struct Ctx<'a> {
    pub file: &'a str,
    lines: Vec<&'a str>,
}

impl<'a> Ctx<'a> {
    pub fn new(file: &'a str, text: &'a str) -> Self {
        Ctx {
            file,
            lines: text.lines().collect(),
        }
    }

    fn line_text(&self, line: usize) -> &'a str {
        line.checked_sub(1)
            .and_then(|i| self.lines.get(i))
            .copied()
            .unwrap_or("")
    }

    /// An error at a marker (0-based column), underlining `width` characters.
    pub fn error_at(
        &self,
        mark: Marker,
        width: usize,
        message: impl Into<String>,
    ) -> ScenarioError {
        let line = mark.line().max(1);
        ScenarioError {
            file: self.file.to_owned(),
            line,
            column: mark.col() + 1,
            message: message.into(),
            hint: None,
            source_line: self.line_text(line).to_owned(),
            width: width.max(1),
        }
    }

    /// An error underlining a node: the whole node when it sits on one line, else the rest of
    /// its first line.
    pub fn error(&self, node: &Node, message: impl Into<String>) -> ScenarioError {
        self.error_span(node.span.start, node.span.end, message)
    }

    pub fn error_span(
        &self,
        start: Marker,
        end: Marker,
        message: impl Into<String>,
    ) -> ScenarioError {
        let text = self.line_text(start.line());
        let rest: String = text.chars().skip(start.col()).collect();
        let rest_width = rest.trim_end().chars().count();
        let width = if end.line() == start.line() && end.col() > start.col() {
            (end.col() - start.col()).min(rest_width.max(1))
        } else {
            rest_width
        };
        self.error_at(start, width, message)
    }
}

/// Loads the single YAML document of a scenario file.
pub(crate) fn load(ctx: &Ctx<'_>, text: &str) -> R<Node> {
    let mut docs = match Node::load_from_str(text) {
        Ok(docs) => docs,
        Err(e) => {
            let mark = *e.marker();
            let mut err = ctx.error_at(mark, 1, format!("invalid YAML: {}", e.info()));
            let info = e.info();
            if info.contains("tab") {
                err = err.with_hint("YAML indents with spaces, never tabs");
            } else if info.contains("duplicate") {
                err = err.with_hint("a key may appear only once in a mapping");
            } else if info.contains("flow mapping") {
                err = err.with_hint("check the braces and commas of the `{ ... }` that ends here");
            } else if info.contains("flow sequence") {
                err =
                    err.with_hint("check the brackets and commas of the `[ ... ]` that ends here");
            } else if info.contains("block mapping") {
                err = err.with_hint("check the indentation: keys of one mapping line up");
            }
            return Err(err);
        }
    };
    match docs.len() {
        0 => Err(ctx
            .error_at(Marker::new(0, 1, 0), 1, "empty scenario file")
            .with_hint("a scenario needs at least `id`, `title`, `spec` and `steps`")),
        1 => Ok(docs.remove(0)),
        _ => Err(ctx
            .error(&docs[1], "more than one YAML document in a scenario file")
            .with_hint("one file holds one scenario; move the second into its own file")),
    }
}

/// What a node is, for "expected X, found Y" messages.
pub(crate) fn describe(node: &Node) -> &'static str {
    match &node.data {
        YamlDataOwned::Value(ScalarOwned::Null) => "null",
        YamlDataOwned::Value(ScalarOwned::Boolean(_)) => "a boolean",
        YamlDataOwned::Value(ScalarOwned::Integer(_)) => "an integer",
        YamlDataOwned::Value(ScalarOwned::FloatingPoint(_)) => "a number",
        YamlDataOwned::Value(ScalarOwned::String(_)) | YamlDataOwned::Representation(..) => {
            "a string"
        }
        YamlDataOwned::Sequence(_) => "a list",
        YamlDataOwned::Mapping(_) => "a mapping",
        YamlDataOwned::Tagged(..) => "a tagged node",
        YamlDataOwned::Alias(_) => "an alias",
        YamlDataOwned::BadValue => "an invalid value",
    }
}

pub(crate) fn is_null(node: &Node) -> bool {
    matches!(node.data, YamlDataOwned::Value(ScalarOwned::Null))
}

pub(crate) fn as_str(node: &Node) -> Option<&str> {
    match &node.data {
        YamlDataOwned::Value(ScalarOwned::String(s)) => Some(s),
        _ => None,
    }
}

pub(crate) fn type_error(ctx: &Ctx<'_>, node: &Node, expected: &str, what: &str) -> ScenarioError {
    if let YamlDataOwned::Tagged(tag, _) = &node.data {
        return ctx
            .error(
                node,
                format!(
                    "YAML tags (`{}{}`) are not supported",
                    tag.handle, tag.suffix
                ),
            )
            .with_hint("remove the tag");
    }
    ctx.error(
        node,
        format!("{what} must be {expected}, found {}", describe(node)),
    )
}

pub(crate) fn string<'n>(ctx: &Ctx<'_>, node: &'n Node, what: &str) -> R<&'n str> {
    as_str(node).ok_or_else(|| {
        let e = type_error(ctx, node, "a string", what);
        if matches!(node.data, YamlDataOwned::Value(ScalarOwned::Null)) {
            e.with_hint("the value is missing")
        } else {
            e
        }
    })
}

/// A string that is not empty (after trimming).
pub(crate) fn nonempty_string<'n>(ctx: &Ctx<'_>, node: &'n Node, what: &str) -> R<&'n str> {
    let s = string(ctx, node, what)?;
    if s.trim().is_empty() {
        return Err(ctx.error(node, format!("{what} must not be empty")));
    }
    Ok(s)
}

pub(crate) fn boolean(ctx: &Ctx<'_>, node: &Node, what: &str) -> R<bool> {
    match &node.data {
        YamlDataOwned::Value(ScalarOwned::Boolean(b)) => Ok(*b),
        _ => Err(type_error(ctx, node, "`true` or `false`", what)),
    }
}

pub(crate) fn integer(ctx: &Ctx<'_>, node: &Node, what: &str) -> R<i64> {
    match &node.data {
        YamlDataOwned::Value(ScalarOwned::Integer(i)) => Ok(*i),
        _ => Err(quoted_number_hint(
            type_error(ctx, node, "an integer", what),
            node,
        )),
    }
}

pub(crate) fn number(ctx: &Ctx<'_>, node: &Node, what: &str) -> R<f64> {
    match &node.data {
        YamlDataOwned::Value(ScalarOwned::Integer(i)) => Ok(*i as f64),
        YamlDataOwned::Value(ScalarOwned::FloatingPoint(f)) if f.is_finite() => Ok(f.0),
        _ => Err(quoted_number_hint(
            type_error(ctx, node, "a number", what),
            node,
        )),
    }
}

fn quoted_number_hint(e: ScenarioError, node: &Node) -> ScenarioError {
    match as_str(node) {
        Some(s) if s.trim().parse::<f64>().is_ok() => e.with_hint("remove the quotes"),
        _ => e,
    }
}

pub(crate) fn sequence<'n>(ctx: &Ctx<'_>, node: &'n Node, what: &str) -> R<&'n [Node]> {
    match &node.data {
        YamlDataOwned::Sequence(items) => Ok(items),
        _ => {
            let e = type_error(ctx, node, "a list", what);
            Err(match as_str(node) {
                Some(s) => e.with_hint(format!("write a one-element list: `[{s}]`")),
                None => e,
            })
        }
    }
}

/// A list of strings with no duplicates; `what` names one element.
pub(crate) fn string_list<'n>(
    ctx: &Ctx<'_>,
    node: &'n Node,
    what: &str,
) -> R<Vec<(&'n str, &'n Node)>> {
    let items = sequence(ctx, node, &format!("`{what}`"))?;
    let mut out: Vec<(&str, &Node)> = Vec::with_capacity(items.len());
    for item in items {
        let s = nonempty_string(ctx, item, &format!("each entry of `{what}`"))?;
        if let Some((_, first)) = out.iter().find(|(seen, _)| *seen == s) {
            return Err(ctx.error(
                item,
                format!(
                    "`{s}` is listed twice in `{what}` (first on line {})",
                    first.span.start.line()
                ),
            ));
        }
        out.push((s, item));
    }
    Ok(out)
}

/// A humantime duration (`500ms`, `2s`, `1m 30s`).
pub(crate) fn duration(ctx: &Ctx<'_>, node: &Node, what: &str) -> R<std::time::Duration> {
    let hint = "durations are a number and a unit: `500ms`, `2s`, `1m`";
    match &node.data {
        YamlDataOwned::Value(ScalarOwned::String(s)) => humantime::parse_duration(s.trim())
            .map_err(|e| {
                ctx.error(node, format!("{what} is not a valid duration: {e}"))
                    .with_hint(hint)
            }),
        YamlDataOwned::Value(ScalarOwned::Integer(n)) => {
            Err(type_error(ctx, node, "a duration with a unit", what)
                .with_hint(format!("write `{n}ms` or `{n}s`")))
        }
        _ => Err(type_error(ctx, node, "a duration", what).with_hint(hint)),
    }
}

/// The entries of a mapping, with string keys.
pub(crate) struct Map<'n> {
    pub node: &'n Node,
    pub entries: Vec<(&'n str, &'n Node, &'n Node)>,
}

impl<'n> Map<'n> {
    pub fn new(ctx: &Ctx<'_>, node: &'n Node, what: &str) -> R<Self> {
        let YamlDataOwned::Mapping(map) = &node.data else {
            return Err(type_error(ctx, node, "a mapping", what));
        };
        let mut entries = Vec::with_capacity(map.len());
        for (k, v) in map {
            let Some(key) = as_str(k) else {
                return Err(ctx
                    .error(k, format!("keys must be strings, found {}", describe(k)))
                    .with_hint("quote the key"));
            };
            entries.push((key, k, v));
        }
        Ok(Map { node, entries })
    }

    /// A mapping, or an empty one for `null` (`key:` with nothing after it).
    pub fn new_or_empty(ctx: &Ctx<'_>, node: &'n Node, what: &str) -> R<Self> {
        if is_null(node) {
            Ok(Map {
                node,
                entries: Vec::new(),
            })
        } else {
            Map::new(ctx, node, what)
        }
    }

    pub fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, _, v)| *v)
    }

    pub fn key_node(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, k, _)| *k)
    }

    /// Errors on the first key not in `allowed`, suggesting the nearest allowed one.
    pub fn only(&self, ctx: &Ctx<'_>, allowed: &[&str], context: &str) -> R<()> {
        for (key, knode, _) in &self.entries {
            if !allowed.contains(key) {
                return Err(unknown_key(ctx, knode, key, allowed, context));
            }
        }
        Ok(())
    }

    pub fn require(&self, ctx: &Ctx<'_>, key: &str, context: &str) -> R<&'n Node> {
        self.get(key).ok_or_else(|| {
            let start = self.node.span.start;
            let e = ctx
                .error_at(start, 1, format!("{context} is missing `{key}`"))
                .with_hint(format!("add `{key}:`"));
            // A close misspelling is the likely cause.
            match self
                .entries
                .iter()
                .find(|(k, _, _)| suggest(k, &[key]).is_some())
            {
                Some((k, _, _)) => e.with_hint(format!("`{k}` is spelled `{key}`")),
                None => e,
            }
        })
    }
}

pub(crate) fn unknown_key(
    ctx: &Ctx<'_>,
    knode: &Node,
    key: &str,
    allowed: &[&str],
    context: &str,
) -> ScenarioError {
    let e = ctx.error(knode, format!("unknown key `{key}` in {context}"));
    match suggest(key, allowed) {
        Some(s) => e.with_hint(format!("did you mean `{s}`?")),
        None => e.with_hint(format!("expected one of: {}", list(allowed))),
    }
}

/// `a`, `b`, `c`
pub(crate) fn list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The closest candidate by edit distance (ignoring case, `_` and `-`), if it is close.
pub(crate) fn suggest<'c>(word: &str, candidates: &[&'c str]) -> Option<&'c str> {
    fn norm(s: &str) -> String {
        s.chars()
            .filter(|c| *c != '_' && *c != '-')
            .flat_map(char::to_lowercase)
            .collect()
    }
    let w = norm(word);
    candidates
        .iter()
        .map(|c| (strsim::damerau_levenshtein(&w, &norm(c)), *c))
        .filter(|(d, c)| *d <= (c.len() / 3).clamp(1, 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Converts a YAML node to JSON.
pub(crate) fn to_json(ctx: &Ctx<'_>, node: &Node) -> R<Value> {
    Ok(match &node.data {
        YamlDataOwned::Value(s) => match s {
            ScalarOwned::Null => Value::Null,
            ScalarOwned::Boolean(b) => Value::Bool(*b),
            ScalarOwned::Integer(i) => Value::from(*i),
            ScalarOwned::FloatingPoint(f) => match Number::from_f64(f.0) {
                Some(n) => Value::Number(n),
                None => {
                    return Err(ctx
                        .error(node, "JSON has no infinity or NaN")
                        .with_hint("quote it to send a string"));
                }
            },
            ScalarOwned::String(s) => Value::String(s.clone()),
        },
        YamlDataOwned::Representation(s, ..) => Value::String(s.clone()),
        YamlDataOwned::Sequence(items) => Value::Array(
            items
                .iter()
                .map(|i| to_json(ctx, i))
                .collect::<R<Vec<_>>>()?,
        ),
        YamlDataOwned::Mapping(map) => {
            let mut out = serde_json::Map::with_capacity(map.len());
            for (k, v) in map {
                let Some(key) = as_str(k) else {
                    return Err(ctx
                        .error(
                            k,
                            format!("JSON object keys must be strings, found {}", describe(k)),
                        )
                        .with_hint("quote the key"));
                };
                out.insert(key.to_owned(), to_json(ctx, v)?);
            }
            Value::Object(out)
        }
        YamlDataOwned::Tagged(..) | YamlDataOwned::Alias(_) | YamlDataOwned::BadValue => {
            return Err(type_error(ctx, node, "a JSON value", "this value"));
        }
    })
}
