//! Checks: JSON pointers with matchers, and what a response must look like.

use super::vars::{Scope, template};
use super::yaml::{
    Ctx, Map, Node, R, duration, integer, list, nonempty_string, number, sequence, string, suggest,
    type_error, unknown_key,
};
use crate::scenario::model::{Check, JsonType, Matcher, ResponseExpectation};
use saphyr::{ScalarOwned, YamlDataOwned};

/// The matcher names a `match:` entry may use.
pub const MATCHERS: &[&str] = &[
    "equals",
    "subset",
    "regex",
    "type",
    "length",
    "one_of",
    "range",
    "schema",
    "exists",
    "exactly_one",
    "only_keys",
    "base64",
    "json_schema",
    "conforms_to",
    "contains",
    "excludes",
    "first",
    "unique",
];

const JSON_TYPES: &[&str] = &[
    "null", "boolean", "number", "integer", "string", "array", "object",
];

/// The kinds of response expectation, one of which a response expectation names.
pub const RESPONSE_KINDS: &[&str] = &["result", "error", "any", "one_of", "nothing"];

/// Errors unless `p` is a JSON pointer: `""` or `/`-separated tokens with `~0`/`~1` escapes.
pub(crate) fn check_pointer(ctx: &Ctx<'_>, node: &Node, p: &str) -> R<()> {
    if !p.is_empty() && !p.starts_with('/') {
        let e = ctx.error(node, format!("`{p}` is not a JSON pointer"));
        return Err(e.with_hint(format!(
            "JSON pointers are \"\" (the whole value) or start with `/`: did you mean `/{p}`?"
        )));
    }
    let mut chars = p.chars();
    while let Some(c) = chars.next() {
        if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
            return Err(ctx
                .error(
                    node,
                    format!("`{p}` is not a JSON pointer: `~` must be followed by 0 or 1"),
                )
                .with_hint("write `~0` for `~` and `~1` for `/`"));
        }
    }
    Ok(())
}

/// A mapping of JSON pointers to matchers. `extra` lists non-pointer keys the caller
/// handles itself (skipped here).
pub(crate) fn checks(
    ctx: &Ctx<'_>,
    node: &Node,
    scope: &Scope,
    what: &str,
    extra: &[&str],
) -> R<Vec<Check>> {
    let map = Map::new_or_empty(ctx, node, what)?;
    let mut out = Vec::with_capacity(map.entries.len());
    for (key, knode, value) in &map.entries {
        if extra.contains(key) {
            continue;
        }
        if !extra.is_empty()
            && !key.is_empty()
            && !key.starts_with('/')
            && let Some(s) = suggest(key, extra)
        {
            return Err(unknown_key(ctx, knode, key, &[s], what));
        }
        check_pointer(ctx, knode, key)?;
        out.push(Check {
            pointer: (*key).to_owned(),
            matcher: matcher_set(ctx, value, scope)?,
            line: knode.span.start.line(),
        });
    }
    Ok(out)
}

/// The matchers at one pointer: a mapping of matcher names (all must hold), or any other
/// value as a shorthand for `equals`.
pub(crate) fn matcher_set(ctx: &Ctx<'_>, node: &Node, scope: &Scope) -> R<Matcher> {
    if !matches!(node.data, YamlDataOwned::Mapping(_)) {
        return Ok(Matcher::Equals(template(ctx, node, scope)?));
    }
    let map = Map::new(ctx, node, "matchers")?;
    if map.entries.is_empty() {
        return Err(ctx.error(node, "no matcher given").with_hint(format!(
            "use one or more of {}; to compare with `{{}}`, write `{{ equals: {{}} }}`",
            list(MATCHERS)
        )));
    }
    let mut all = Vec::with_capacity(map.entries.len());
    for (key, knode, value) in &map.entries {
        all.push(matcher(ctx, key, knode, value, scope)?);
    }
    Ok(if all.len() == 1 {
        all.remove(0)
    } else {
        Matcher::All(all)
    })
}

fn matcher(ctx: &Ctx<'_>, name: &str, knode: &Node, value: &Node, scope: &Scope) -> R<Matcher> {
    Ok(match name {
        "equals" => Matcher::Equals(template(ctx, value, scope)?),
        "subset" => {
            if !matches!(
                value.data,
                YamlDataOwned::Mapping(_) | YamlDataOwned::Sequence(_)
            ) {
                return Err(type_error(ctx, value, "a mapping or a list", "`subset`")
                    .with_hint("to compare a single value, use `equals`"));
            }
            Matcher::Subset(template(ctx, value, scope)?)
        }
        "regex" => Matcher::Regex(regex_pattern(ctx, value, "`regex`")?),
        "type" => Matcher::Type(json_type(ctx, value)?),
        "length" => {
            if let YamlDataOwned::Value(ScalarOwned::Integer(_)) = value.data {
                let n = count(ctx, value, "`length`")?;
                Matcher::Length {
                    min: Some(n),
                    max: Some(n),
                }
            } else {
                let (min, max) =
                    bounds(ctx, value, "`length`", |n| count(ctx, n, "a length bound"))?;
                Matcher::Length { min, max }
            }
        }
        "one_of" => {
            let items = sequence(ctx, value, "`one_of`")?;
            if items.is_empty() {
                return Err(ctx.error(value, "`one_of` needs at least one value"));
            }
            Matcher::OneOf(
                items
                    .iter()
                    .map(|i| template(ctx, i, scope))
                    .collect::<R<_>>()?,
            )
        }
        "range" => {
            let (min, max) = bounds(ctx, value, "`range`", |n| number(ctx, n, "a range bound"))?;
            Matcher::Range { min, max }
        }
        "schema" => {
            let name = nonempty_string(ctx, value, "`schema`")?;
            let ok = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ok {
                return Err(ctx
                    .error(value, format!("`{name}` is not a schema definition name"))
                    .with_hint("name a definition of the revision's schema, e.g. `InitializeResult` or `Tool`"));
            }
            Matcher::Schema(name.to_owned())
        }
        "exists" => Matcher::Exists(super::yaml::boolean(ctx, value, "`exists`")?),
        "exactly_one" => {
            let keys = super::yaml::string_list(ctx, value, "`exactly_one`")?;
            if keys.len() < 2 {
                return Err(ctx
                    .error(value, "`exactly_one` needs at least two member names")
                    .with_hint("to require one member, use `exists: true` at its pointer"));
            }
            Matcher::ExactlyOne(keys.into_iter().map(|(k, _)| k.to_owned()).collect())
        }
        "only_keys" => {
            let keys = super::yaml::string_list(ctx, value, "only_keys")?;
            Matcher::OnlyKeys(keys.into_iter().map(|(k, _)| k.to_owned()).collect())
        }
        "base64" => Matcher::Base64(super::yaml::boolean(ctx, value, "`base64`")?),
        "json_schema" => Matcher::JsonSchema(super::yaml::boolean(ctx, value, "`json_schema`")?),
        "conforms_to" => Matcher::ConformsTo(template(ctx, value, scope)?),
        "contains" => Matcher::Contains(check_sets(ctx, value, scope, "`contains`")?),
        "excludes" => Matcher::Excludes(check_sets(ctx, value, scope, "`excludes`")?),
        "first" => Matcher::First(checks(ctx, value, scope, "`first`'s checks", &[])?),
        "unique" => {
            let pointer = super::yaml::string(ctx, value, "`unique`")?;
            check_pointer(ctx, value, pointer)?;
            Matcher::Unique(pointer.to_owned())
        }
        other => return Err(unknown_matcher(ctx, knode, other)),
    })
}

/// `contains` and `excludes`: a non-empty list of sets of checks on one item each.
fn check_sets(ctx: &Ctx<'_>, value: &Node, scope: &Scope, what: &str) -> R<Vec<Vec<Check>>> {
    let items = sequence(ctx, value, what).map_err(|e| {
        e.with_hint(format!(
            "{what}: [ {{ /method: x }}, ... ]: checks on one item each"
        ))
    })?;
    if items.is_empty() {
        return Err(ctx.error(value, format!("{what} needs at least one set of checks")));
    }
    items
        .iter()
        .map(|item| checks(ctx, item, scope, &format!("a {what} item's checks"), &[]))
        .collect()
}

fn unknown_matcher(ctx: &Ctx<'_>, knode: &Node, name: &str) -> super::error::ScenarioError {
    let e = ctx.error(knode, format!("unknown matcher `{name}`"));
    match suggest(name, MATCHERS) {
        Some(s) => e.with_hint(format!("did you mean `{s}`?")),
        None => e.with_hint(format!(
            "matchers are {}; to compare with an object, write `{{ equals: {{...}} }}`",
            list(MATCHERS)
        )),
    }
}

fn json_type(ctx: &Ctx<'_>, node: &Node) -> R<JsonType> {
    let name = string(ctx, node, "`type`")?;
    Ok(match name {
        "null" => JsonType::Null,
        "boolean" => JsonType::Boolean,
        "number" => JsonType::Number,
        "integer" => JsonType::Integer,
        "string" => JsonType::String,
        "array" => JsonType::Array,
        "object" => JsonType::Object,
        other => {
            let e = ctx.error(node, format!("unknown JSON type `{other}`"));
            let alias = match other {
                "bool" => Some("boolean"),
                "int" | "i64" => Some("integer"),
                "float" | "f64" => Some("number"),
                "list" | "sequence" => Some("array"),
                "map" | "mapping" | "dict" => Some("object"),
                "str" | "text" => Some("string"),
                _ => suggest(other, JSON_TYPES),
            };
            return Err(match alias {
                Some(s) => e.with_hint(format!("did you mean `{s}`?")),
                None => e.with_hint(format!("JSON types are {}", list(JSON_TYPES))),
            });
        }
    })
}

fn count(ctx: &Ctx<'_>, node: &Node, what: &str) -> R<usize> {
    let n = integer(ctx, node, what)?;
    usize::try_from(n).map_err(|_| ctx.error(node, format!("{what} must not be negative")))
}

/// `{ min, max }`, at least one given, `min <= max`.
fn bounds<T: PartialOrd + Copy>(
    ctx: &Ctx<'_>,
    node: &Node,
    what: &str,
    read: impl Fn(&Node) -> R<T>,
) -> R<(Option<T>, Option<T>)> {
    let map = Map::new(ctx, node, what)?;
    map.only(ctx, &["min", "max"], what)?;
    let min = map.get("min").map(&read).transpose()?;
    let max = map.get("max").map(&read).transpose()?;
    match (min, max) {
        (None, None) => Err(ctx.error(node, format!("{what} needs `min`, `max` or both"))),
        (Some(a), Some(b)) if a > b => Err(ctx.error(
            map.get("max").unwrap_or(node),
            format!("{what}: `max` is less than `min`"),
        )),
        _ => Ok((min, max)),
    }
}

/// The expectation on a response: a mapping with exactly one of `result`, `error`, `any`,
/// `nothing` (plus the caller's own keys in `extra`, which it reads itself).
pub(crate) fn response_expectation(
    ctx: &Ctx<'_>,
    map: &Map<'_>,
    scope: &Scope,
    what: &str,
    extra: &[&str],
) -> R<ResponseExpectation> {
    let allowed: Vec<&str> = RESPONSE_KINDS.iter().chain(extra).copied().collect();
    map.only(ctx, &allowed, what)?;
    let kinds: Vec<_> = map
        .entries
        .iter()
        .filter(|(k, _, _)| RESPONSE_KINDS.contains(k))
        .collect();
    let (kind, _, value) = match kinds.as_slice() {
        [one] => **one,
        [] => {
            return Err(ctx
                .error_at(
                    map.node.span.start,
                    1,
                    format!("{what} says neither `result`, `error`, `any`, `one_of` nor `nothing`"),
                )
                .with_hint("say what the response must be, e.g. `result: {}`"));
        }
        [first, second, ..] => {
            return Err(ctx
                .error(
                    second.1,
                    format!("{what} has both `{}` and `{}`", first.0, second.0),
                )
                .with_hint("a response is either a result or an error; `any` checks both"));
        }
    };
    Ok(match kind {
        "result" => ResponseExpectation::Result(checks(ctx, value, scope, "`result`", &[])?),
        "any" => ResponseExpectation::Any(checks(ctx, value, scope, "`any`", &[])?),
        "one_of" => {
            let items = sequence(ctx, value, "`one_of`")?;
            if items.len() < 2 {
                return Err(ctx
                    .error(value, "`one_of` needs at least two alternatives")
                    .with_hint("with one alternative, write it directly"));
            }
            let alternatives = items
                .iter()
                .map(|item| {
                    let m = Map::new(ctx, item, "a `one_of` alternative")?;
                    let alt = response_expectation(ctx, &m, scope, "a `one_of` alternative", &[])?;
                    if matches!(alt, ResponseExpectation::OneOf(_) | ResponseExpectation::Nothing(_)) {
                        return Err(ctx
                            .error(item, "a `one_of` alternative is a `result`, `error` or `any`")
                            .with_hint("`one_of` lists responses; `nothing` and nested `one_of` do not fit"));
                    }
                    Ok(alt)
                })
                .collect::<R<_>>()?;
            ResponseExpectation::OneOf(alternatives)
        }
        "nothing" => ResponseExpectation::Nothing(duration(ctx, value, "`nothing`")?),
        "error" => {
            let codes = match Map::new_or_empty(ctx, value, "`error`")?.get("code") {
                None => Vec::new(),
                Some(code) if matches!(code.data, YamlDataOwned::Sequence(_)) => {
                    let items = sequence(ctx, code, "`code`")?;
                    if items.is_empty() {
                        return Err(ctx
                            .error(code, "`code` is an empty list")
                            .with_hint("leave `code` out to accept any error code"));
                    }
                    items
                        .iter()
                        .map(|i| integer(ctx, i, "an error code"))
                        .collect::<R<_>>()?
                }
                Some(code) => vec![integer(ctx, code, "`code`")?],
            };
            ResponseExpectation::Error {
                codes,
                checks: checks(ctx, value, scope, "`error`", &["code"])?,
            }
        }
        _ => unreachable!("filtered to RESPONSE_KINDS"),
    })
}

/// Reads a string that must not contain `${...}` (fields that are not templates).
pub(crate) fn plain_string<'n>(ctx: &Ctx<'_>, node: &'n Node, what: &str) -> R<&'n str> {
    let s = nonempty_string(ctx, node, what)?;
    if s.contains("${") {
        return Err(ctx.error(node, format!("{what} cannot contain `${{...}}` references")));
    }
    Ok(s)
}

/// A string that compiles as a regular expression (Rust `regex` syntax).
pub(super) fn regex_pattern(ctx: &Ctx<'_>, value: &Node, what: &str) -> R<String> {
    let pattern = string(ctx, value, what)?;
    if let Err(e) = regex::Regex::new(pattern) {
        let detail = match e {
            regex::Error::Syntax(s) => {
                let last = s.lines().last().unwrap_or_default();
                last.strip_prefix("error: ").unwrap_or(last).to_owned()
            }
            other => other.to_string(),
        };
        return Err(ctx
            .error(value, format!("invalid regular expression: {}", detail.trim()))
            .with_hint("the syntax is that of the Rust `regex` crate; quote the pattern with '...' to avoid YAML escapes"));
    }
    Ok(pattern.to_owned())
}
