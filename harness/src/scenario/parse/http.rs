//! The `http` step's settings (the step itself: `scenario::exec::http`).

use super::vars::{Scope, template};
use super::yaml::{Ctx, Map, Node, R, as_str, duration, integer, string, to_json};
use crate::scenario::model::http::{
    HeaderChoice, HeaderRegex, HttpExpect, HttpStep, SseShould, Status,
};

const KEYS: &[&str] = &[
    "method",
    "body",
    "session",
    "protocol_version",
    "headers",
    "within",
    "resume",
    "parallel",
    "expect",
];
const EXPECT_KEYS: &[&str] = &[
    "status",
    "skip_on_status",
    "body",
    "content_type",
    "headers",
    "headers_if_present",
    "response",
    "event_ids",
    "sse",
];

pub(crate) fn http(ctx: &Ctx<'_>, value: &Node, scope: &Scope) -> R<HttpStep> {
    let map = Map::new(ctx, value, "an `http` step")?;
    map.only(ctx, KEYS, "an `http` step")?;
    let method = match map.get("method") {
        Some(n) => {
            let m = string(ctx, n, "`method`")?.to_ascii_uppercase();
            if !matches!(m.as_str(), "GET" | "POST" | "DELETE" | "PUT" | "PATCH") {
                return Err(ctx
                    .error(n, format!("`{m}` is not a method an `http` step sends"))
                    .with_hint("GET, POST or DELETE"));
            }
            m
        }
        None => "POST".to_owned(),
    };
    let body = match map.get("body") {
        Some(n) => Some(template(ctx, n, scope)?),
        None => None,
    };
    let choice = |key: &str| -> R<HeaderChoice> {
        Ok(match map.get(key) {
            None => HeaderChoice::Current,
            Some(n) => match string(ctx, n, &format!("`{key}`"))? {
                "current" => HeaderChoice::Current,
                "omit" => HeaderChoice::Omit,
                other => HeaderChoice::Value(other.to_owned()),
            },
        })
    };
    // A mapping of fixed headers, or one `${var}` that gives an object of them.
    let (headers, headers_from) = match map.get("headers") {
        Some(n) if as_str(n).is_some() => (Vec::new(), Some(template(ctx, n, scope)?)),
        Some(n) => (string_map(ctx, n, "`headers`")?, None),
        None => (Vec::new(), None),
    };
    let within = match map.get("within") {
        Some(n) => duration(ctx, n, "`within`")?,
        None => super::DEFAULT_WITHIN,
    };
    let resume = match map.get("resume") {
        Some(n) => super::yaml::boolean(ctx, n, "`resume`")?,
        None => false,
    };
    let parallel = match map.get("parallel") {
        Some(n) => {
            let count = integer(ctx, n, "`parallel`")?;
            if !(2..=16).contains(&count) {
                return Err(ctx
                    .error(n, format!("`parallel: {count}` is out of range"))
                    .with_hint("send 2 to 16 copies at once"));
            }
            if resume {
                return Err(ctx
                    .error(n, "`parallel` and `resume: true` do not go together")
                    .with_hint("resume one stream in a step of its own"));
            }
            count as usize
        }
        None => 1,
    };
    let expect = match map.get("expect") {
        Some(n) => expect(ctx, n)?,
        None => HttpExpect::default(),
    };
    Ok(HttpStep {
        method,
        body,
        session: choice("session")?,
        protocol_version: choice("protocol_version")?,
        headers,
        headers_from,
        within,
        resume,
        parallel,
        expect,
    })
}

/// The `auth` step: the name of a built-in authorization check.
pub(crate) fn auth(ctx: &Ctx<'_>, value: &Node) -> R<crate::scenario::model::auth::AuthCheck> {
    use crate::scenario::model::auth::AuthCheck;
    let name = string(ctx, value, "`auth`")?;
    AuthCheck::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = AuthCheck::ALL.iter().map(|(n, _)| *n).collect();
        let e = ctx.error(value, format!("`{name}` is not an authorization check"));
        match super::yaml::suggest(name, &names) {
            Some(s) => e.with_hint(format!("did you mean `{s}`?")),
            None => e.with_hint(names.join(", ")),
        }
    })
}

fn string_map(ctx: &Ctx<'_>, node: &Node, what: &str) -> R<Vec<(String, String)>> {
    let map = Map::new(ctx, node, what)?;
    map.entries
        .iter()
        .map(|(k, _, v)| {
            Ok((
                (*k).to_owned(),
                string(ctx, v, &format!("`{k}`"))?.to_owned(),
            ))
        })
        .collect()
}

fn expect(ctx: &Ctx<'_>, node: &Node) -> R<HttpExpect> {
    let map = Map::new(ctx, node, "`expect` of an `http` step")?;
    map.only(ctx, EXPECT_KEYS, "`expect` of an `http` step")?;
    let mut e = HttpExpect::default();
    if let Some(n) = map.get("status") {
        e.status = one_or_many(n)
            .iter()
            .map(|s| status(ctx, s))
            .collect::<R<_>>()?;
    }
    if let Some(n) = map.get("skip_on_status") {
        for s in one_or_many(n) {
            match status(ctx, s)? {
                Status::Exact(c) => e.skip_on_status.push(c),
                Status::Class(_) => {
                    return Err(ctx.error(s, "`skip_on_status` takes exact statuses"));
                }
            }
        }
    }
    if let Some(n) = map.get("body") {
        match as_str(n) {
            Some("empty") => e.empty_body = true,
            _ => {
                return Err(ctx
                    .error(n, "`body` expects `empty`")
                    .with_hint("to check a JSON-RPC response in the body, use `response`"));
            }
        }
    }
    if let Some(n) = map.get("content_type") {
        for t in one_or_many(n) {
            e.content_type
                .push(string(ctx, t, "`content_type`")?.to_ascii_lowercase());
        }
    }
    for (key, into) in [
        ("headers", &mut e.headers),
        ("headers_if_present", &mut e.headers_if_present),
    ] {
        let Some(n) = map.get(key) else { continue };
        for (name, pattern) in string_map(ctx, n, &format!("`{key}`"))? {
            let re = regex::Regex::new(&pattern).map_err(|err| {
                ctx.error(
                    n,
                    format!("`{name}`: not a valid regular expression: {err}"),
                )
            })?;
            into.push((name.to_ascii_lowercase(), HeaderRegex(re)));
        }
    }
    if let Some(n) = map.get("event_ids") {
        match as_str(n) {
            Some("unique") => e.unique_event_ids = true,
            _ => {
                return Err(ctx
                    .error(n, "`event_ids` expects `unique`")
                    .with_hint("every SSE event id must be new in the session"));
            }
        }
    }
    if let Some(n) = map.get("sse") {
        for item in one_or_many(n) {
            let should = match as_str(item) {
                Some("priming") => SseShould::Priming,
                Some("retry") => SseShould::RetryBeforeClose,
                _ => {
                    return Err(ctx
                        .error(item, "`sse` expects `priming` or `retry`")
                        .with_hint("e.g. `sse: [priming, retry]`"));
                }
            };
            e.sse.push(should);
        }
    }
    if let Some(n) = map.get("response") {
        let m = Map::new(ctx, n, "`response`")?;
        m.only(ctx, &["id", "error", "code", "not_code"], "`response`")?;
        if let Some(c) = m.get("code") {
            for item in one_or_many(c) {
                e.response_codes.push(integer(ctx, item, "`code`")?);
            }
        }
        if let Some(c) = m.get("not_code") {
            e.response_not_code = Some(integer(ctx, c, "`not_code`")?);
        }
        let id = to_json(ctx, m.require(ctx, "id", "`response`")?)?;
        let error = match m.get("error") {
            Some(b) => Some(super::yaml::boolean(ctx, b, "`error`")?),
            None => None,
        };
        e.response = Some((id, error));
    }
    Ok(e)
}

fn one_or_many(node: &Node) -> Vec<&Node> {
    match &node.data {
        saphyr::YamlDataOwned::Sequence(items) => items.iter().collect(),
        _ => vec![node],
    }
}

fn status(ctx: &Ctx<'_>, node: &Node) -> R<Status> {
    if let Some(s) = as_str(node) {
        let s = s.trim();
        if s.len() == 3
            && s.ends_with("xx")
            && let Some(c) = s[..1].parse::<u16>().ok().filter(|c| (1..=5).contains(c))
        {
            return Ok(Status::Class(c));
        }
        return Err(ctx
            .error(node, format!("`{s}` is not an HTTP status"))
            .with_hint("a number like 404, or a class like 4xx"));
    }
    let n = integer(ctx, node, "a status")?;
    if !(100..=599).contains(&n) {
        return Err(ctx.error(node, format!("{n} is not an HTTP status")));
    }
    Ok(Status::Exact(n as u16))
}
