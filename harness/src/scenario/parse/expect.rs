//! `expect:` steps: what the scenario waits for (a notification, silence, the server's
//! exit, a stderr line, a response to raw bytes), each with its `within` window.

use std::time::Duration;

use serde_json::Value;

use super::DEFAULT_WITHIN;
use super::checks::{RESPONSE_KINDS, check_pointer, checks, plain_string, response_expectation};
use super::vars::Scope;
use super::yaml::{
    Ctx, Map, Node, R, as_str, duration, integer, list, suggest, to_json, type_error,
};
use crate::scenario::model::{Expectation, Since};

fn within(ctx: &Ctx<'_>, map: &Map<'_>) -> R<Duration> {
    map.get("within")
        .map(|w| duration(ctx, w, "`within`"))
        .transpose()
        .map(|d| d.unwrap_or(DEFAULT_WITHIN))
}

const EXPECT_KINDS: &[&str] = &[
    "notification",
    "request",
    "nothing",
    "exit",
    "response",
    "stderr",
];

/// `expect: { <kind>: ... }`.
pub(super) fn expectation(ctx: &Ctx<'_>, value: &Node, scope: &Scope) -> R<Expectation> {
    let map = Map::new(ctx, value, "`expect`")?;
    let (kind, _, v) = match map.entries.as_slice() {
        [one] => *one,
        [] => {
            return Err(ctx
                .error(value, "`expect` says nothing to wait for")
                .with_hint(format!("wait for one of {}", list(EXPECT_KINDS))));
        }
        [first, second, ..] => {
            let e = ctx.error(
                second.1,
                format!(
                    "`expect` waits for one thing, but has both `{}` and `{}`",
                    first.0, second.0
                ),
            );
            return Err(
                if RESPONSE_KINDS.contains(&first.0) || RESPONSE_KINDS.contains(&second.0) {
                    e.with_hint("to check the response of a request, put `expect` beside `request` in the same step")
                } else {
                    e.with_hint("use one `expect` step per thing to wait for")
                },
            );
        }
    };
    if !EXPECT_KINDS.contains(&kind) {
        let knode = map.entries[0].1;
        let e = ctx.error(
            knode,
            format!("`{kind}` is not something `expect` can wait for"),
        );
        return Err(if RESPONSE_KINDS.contains(&kind) {
            e.with_hint("a response is checked by `expect` beside its `request`, in the same step (one `-`); or wait for a `send_raw` request's answer with `response: { id: ..., result: ... }`")
        } else {
            match suggest(kind, EXPECT_KINDS) {
                Some(s) => e.with_hint(format!("did you mean `{s}`?")),
                None => e.with_hint(format!("`expect` waits for one of {}", list(EXPECT_KINDS))),
            }
        });
    }
    match kind {
        "notification" => notification(ctx, v, scope),
        "request" => server_request(ctx, v, scope),
        "nothing" => nothing(ctx, v),
        "exit" => exit(ctx, v),
        "stderr" => stderr(ctx, v),
        "response" => response(ctx, v, scope),
        _ => unreachable!("checked against EXPECT_KINDS"),
    }
}

/// `notification: <method>` or `notification: { method, within, match, otherwise,
/// first_by }`.
fn notification(ctx: &Ctx<'_>, v: &Node, scope: &Scope) -> R<Expectation> {
    if as_str(v).is_some() {
        return Ok(Expectation::Notification {
            method: plain_string(ctx, v, "the notification method")?.to_owned(),
            within: DEFAULT_WITHIN,
            checks: Vec::new(),
            skip_if_absent: false,
            first_by: None,
        });
    }
    let m = Map::new(ctx, v, "`notification`")?;
    m.only(
        ctx,
        &["method", "within", "match", "otherwise", "first_by"],
        "`notification`",
    )?;
    let method = plain_string(ctx, m.require(ctx, "method", "`notification`")?, "`method`")?;
    let skip_if_absent = match m.get("otherwise") {
        None => false,
        Some(o) => match as_str(o) {
            Some("fail") => false,
            Some("skip") => true,
            _ => {
                return Err(ctx
                    .error(o, "`otherwise` is `fail` or `skip`")
                    .with_hint("`skip`: no such notification means the server does not exercise this, so the scenario is skipped"));
            }
        },
    };
    let first_by = match m.get("first_by") {
        None => None,
        Some(p) => {
            let pointer = plain_string(ctx, p, "`first_by`")?;
            check_pointer(ctx, p, pointer)?;
            Some(pointer.to_owned())
        }
    };
    Ok(Expectation::Notification {
        method: method.to_owned(),
        within: within(ctx, &m)?,
        skip_if_absent,
        first_by,
        checks: match m.get("match") {
            Some(c) => checks(ctx, c, scope, "`match`", &[])?,
            None => Vec::new(),
        },
    })
}

/// `nothing: <duration>` or `nothing: { within, methods, since }`.
fn nothing(ctx: &Ctx<'_>, v: &Node) -> R<Expectation> {
    if !matches!(v.data, saphyr::YamlDataOwned::Mapping(_)) {
        return Ok(Expectation::Nothing {
            within: duration(ctx, v, "`nothing`")?,
            methods: Vec::new(),
            since: Since::Window,
        });
    }
    let m = Map::new(ctx, v, "`nothing`")?;
    m.only(ctx, &["within", "methods", "since"], "`nothing`")?;
    let since = match m.get("since") {
        None => Since::Window,
        Some(node) => match plain_string(ctx, node, "`since`")? {
            "window" => Since::Window,
            "start" => Since::Start,
            other => {
                return Err(ctx
                    .error(node, format!("`since: {other}` is not `window` or `start`"))
                    .with_hint("`start` also counts what arrived earlier in the scenario"));
            }
        },
    };
    let within = duration(ctx, m.require(ctx, "within", "`nothing`")?, "`within`")?;
    let methods = match m.get("methods") {
        Some(list) => {
            let items = super::yaml::string_list(ctx, list, "methods")?;
            if items.is_empty() {
                return Err(ctx
                    .error(list, "`methods` is empty")
                    .with_hint("leave `methods` out to expect no message of any kind"));
            }
            items
                .into_iter()
                .map(|(s, n)| plain_string(ctx, n, "a method").map(|_| s.to_owned()))
                .collect::<R<_>>()?
        }
        None => Vec::new(),
    };
    Ok(Expectation::Nothing {
        within,
        methods,
        since,
    })
}

/// `exit: { within, code }` (both optional).
fn exit(ctx: &Ctx<'_>, v: &Node) -> R<Expectation> {
    let m = Map::new_or_empty(ctx, v, "`exit`")?;
    m.only(ctx, &["within", "code"], "`exit`")?;
    let code = match m.get("code") {
        Some(c) => {
            let n = integer(ctx, c, "`code`")?;
            Some(i32::try_from(n).map_err(|_| ctx.error(c, "exit code out of range"))?)
        }
        None => None,
    };
    Ok(Expectation::Exit {
        within: within(ctx, &m)?,
        code,
    })
}

/// `stderr: { matches | not_matches, within }`.
fn stderr(ctx: &Ctx<'_>, v: &Node) -> R<Expectation> {
    let m = Map::new(ctx, v, "`stderr`")?;
    m.only(ctx, &["matches", "not_matches", "within"], "`stderr`")?;
    let (node, present) = match (m.get("matches"), m.get("not_matches")) {
        (Some(n), None) => (n, true),
        (None, Some(n)) => (n, false),
        (Some(_), Some(n)) => {
            return Err(ctx
                .error(n, "`stderr` has both `matches` and `not_matches`")
                .with_hint("use one `expect: stderr` step for each"));
        }
        (None, None) => {
            return Err(ctx.error(v, "`stderr` says nothing to look for").with_hint(
                "give `matches: REGEX` (some line must match) or `not_matches: REGEX` (none may)",
            ));
        }
    };
    let what = if present {
        "`matches`"
    } else {
        "`not_matches`"
    };
    Ok(Expectation::Stderr {
        within: within(ctx, &m)?,
        pattern: super::checks::regex_pattern(ctx, node, what)?,
        present,
    })
}

/// `response: { id, within, <response expectation> }`: the answer to raw bytes.
fn response(ctx: &Ctx<'_>, v: &Node, scope: &Scope) -> R<Expectation> {
    let m = Map::new(ctx, v, "`response`")?;
    let id_node = m.require(ctx, "id", "`response`")?;
    let id = to_json(ctx, id_node)?;
    if !matches!(id, Value::Number(_) | Value::String(_) | Value::Null) {
        return Err(type_error(
            ctx,
            id_node,
            "a number, a string or null",
            "`id`",
        ));
    }
    let expect = response_expectation(ctx, &m, scope, "`response`", &["id", "within"])?;
    Ok(Expectation::Response {
        id,
        within: within(ctx, &m)?,
        expect,
    })
}

/// `request: <method>` or `request: { method, within, match }`: a request the server
/// sends (and mcpcheck's session answers).
fn server_request(ctx: &Ctx<'_>, v: &Node, scope: &Scope) -> R<Expectation> {
    if as_str(v).is_some() {
        return Ok(Expectation::Request {
            method: plain_string(ctx, v, "the request method")?.to_owned(),
            within: DEFAULT_WITHIN,
            checks: Vec::new(),
        });
    }
    let m = Map::new(ctx, v, "`request`")?;
    m.only(ctx, &["method", "within", "match"], "`request`")?;
    let method = plain_string(ctx, m.require(ctx, "method", "`request`")?, "`method`")?;
    Ok(Expectation::Request {
        method: method.to_owned(),
        within: within(ctx, &m)?,
        checks: match m.get("match") {
            Some(c) => checks(ctx, c, scope, "`match`", &[])?,
            None => Vec::new(),
        },
    })
}
