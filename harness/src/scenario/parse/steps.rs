//! Steps: what a scenario does, in order.

use serde_json::Value;

use super::checks::{check_pointer, checks, plain_string, response_expectation};
use super::expect::expectation;
use super::vars::{Scope, template};
use super::yaml::{
    Ctx, Map, Node, R, as_str, boolean, duration, is_null, list, nonempty_string, sequence, string,
    suggest, to_json, type_error,
};
use crate::check::negotiation::NegotiationCheck;
use crate::scenario::model::{
    Initialize, InitializeOverrides, OnError, OnTimeout, RequestStep, Step, StepKind,
};

/// The key that names what a step does.
pub const STEP_KINDS: &[&str] = &[
    "initialize",
    "request",
    "notify",
    "send_raw",
    "expect",
    "concurrent",
    "burst",
    "paginate",
    "for_each",
    "check",
    "sleep",
    "http",
    "auth",
    "negotiate",
];

/// Keys allowed beside the kind key, per kind.
fn siblings(kind: &str) -> &'static [&'static str] {
    match kind {
        "request" => &[
            "answer_input",
            "capture",
            "expect",
            "on_error",
            "on_timeout",
            "requires",
        ],
        "initialize" => &["expect"],
        "paginate" => &["on_error"],
        _ => &[],
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// The first step of the scenario: the only place for `initialize`.
    First,
    TopLevel,
    ForEach,
}

/// A list of steps (`steps:` or a `for_each` body).
pub(crate) fn steps(
    ctx: &Ctx<'_>,
    node: &Node,
    scope: &mut Scope,
    top_level: bool,
    what: &str,
) -> R<Vec<Step>> {
    let items = sequence(ctx, node, what)?;
    if items.is_empty() {
        return Err(ctx
            .error(node, format!("{what} is empty"))
            .with_hint("a scenario does at least one thing"));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let place = match (top_level, i) {
            (true, 0) => Place::First,
            (true, _) => Place::TopLevel,
            (false, _) => Place::ForEach,
        };
        let step = step(ctx, item, scope, place)?;
        if let (Some(second), StepKind::Negotiate(_)) = (items.get(1), &step.kind) {
            return Err(ctx
                .error(second, "a `negotiate` scenario has no other steps")
                .with_hint(
                    "it opens its own fresh sessions; put these steps in another scenario",
                ));
        }
        out.push(step);
    }
    Ok(out)
}

/// Finds the kind key of a step mapping, rejecting steps with none or two.
fn kind_of<'n>(ctx: &Ctx<'_>, map: &Map<'n>) -> R<(&'n str, &'n Node, &'n Node)> {
    let primary: Vec<_> = map
        .entries
        .iter()
        .filter(|(k, _, _)| STEP_KINDS.contains(k) && *k != "expect")
        .collect();
    match primary.as_slice() {
        [one] => Ok(**one),
        [] => match map.entries.iter().find(|(k, _, _)| *k == "expect") {
            Some(e) => Ok(*e),
            None => {
                let first = map.entries.first();
                let e = match first {
                    Some((k, knode, _)) => {
                        let e = ctx.error(knode, format!("`{k}` is not a kind of step"));
                        match suggest(k, STEP_KINDS) {
                            Some(s) => e.with_hint(format!("did you mean `{s}`?")),
                            None => e.with_hint(format!("a step is one of {}", list(STEP_KINDS))),
                        }
                    }
                    None => ctx
                        .error(map.node, "empty step")
                        .with_hint(format!("a step is one of {}", list(STEP_KINDS))),
                };
                Err(e)
            }
        },
        [first, second, ..] => Err(ctx
            .error(
                second.1,
                format!(
                    "a step does one thing, but this one has both `{}` and `{}`",
                    first.0, second.0
                ),
            )
            .with_hint("split it into two steps (each list item starts with `-`)")),
    }
}

pub(crate) fn step(ctx: &Ctx<'_>, node: &Node, scope: &mut Scope, place: Place) -> R<Step> {
    let line = node.span.start.line();
    let map = Map::new(ctx, node, "a step").map_err(|e| {
        match as_str(node).filter(|s| STEP_KINDS.contains(s)) {
            Some(s) => e.with_hint(format!("write `{s}:` followed by its settings")),
            None => e.with_hint(format!(
                "a step is a mapping with one of {}",
                list(STEP_KINDS)
            )),
        }
    })?;
    let (kind, knode, value) = kind_of(ctx, &map)?;
    let allowed_siblings = siblings(kind);
    for (k, kn, _) in &map.entries {
        if *k == kind || allowed_siblings.contains(k) {
            continue;
        }
        let e = if *k == "expect" {
            ctx.error(kn, format!("`expect` cannot sit beside `{kind}`"))
                .with_hint("only `request` and `initialize` have a response to check; to wait for a message, make `expect` a step of its own")
        } else if STEP_KINDS.contains(k) || allowed_siblings.is_empty() {
            let e = ctx.error(kn, format!("unknown key `{k}` in a `{kind}` step"));
            match suggest(k, allowed_siblings) {
                Some(s) => e.with_hint(format!("did you mean `{s}`?")),
                None => e.with_hint(format!(
                    "a `{kind}` step has no other keys; is the indentation right?"
                )),
            }
        } else {
            super::yaml::unknown_key(ctx, kn, k, allowed_siblings, &format!("a `{kind}` step"))
        };
        return Err(e);
    }
    let kind = match kind {
        "initialize" => {
            if place != Place::First {
                return Err(ctx
                    .error(knode, "`initialize` can only be the first step")
                    .with_hint("to send `initialize` again, use `request: { method: initialize, params: {...} }`"));
            }
            StepKind::Initialize(initialize(ctx, value, map.get("expect"), scope)?)
        }
        "request" => {
            let (req, captures) = request(ctx, &map, value, line, scope)?;
            define_captures(ctx, scope, &captures)?;
            StepKind::Request(req)
        }
        "notify" => {
            let (method, params) = method_and_params(ctx, value, scope, "notify", &[])?;
            StepKind::Notify { method, params }
        }
        "send_raw" => {
            let s = string(ctx, value, "`send_raw`").map_err(|e| {
                e.with_hint("give the bytes as a string, e.g. a block scalar `send_raw: |` with the JSON on the next line")
            })?;
            if s.is_empty() {
                return Err(ctx.error(value, "`send_raw` is empty"));
            }
            StepKind::SendRaw(template(ctx, value, scope)?)
        }
        "expect" => StepKind::Expect(expectation(ctx, value, scope)?),
        "concurrent" => concurrent(ctx, value, scope)?,
        "burst" => burst(ctx, value)?,
        "paginate" => paginate(ctx, value, on_error(ctx, map.get("on_error"))?, scope)?,
        "for_each" => for_each(ctx, value, scope)?,
        "check" => check_step(ctx, value, scope)?,
        "sleep" => StepKind::Sleep(duration(ctx, value, "`sleep`")?),
        "http" => StepKind::Http(Box::new(super::http::http(ctx, value, scope)?)),
        "auth" => StepKind::Auth(super::http::auth(ctx, value)?),
        "negotiate" => {
            if place != Place::First {
                return Err(ctx
                    .error(knode, "`negotiate` can only be the scenario's only step")
                    .with_hint(
                        "it opens its own fresh sessions; put it in a scenario of its own",
                    ));
            }
            StepKind::Negotiate(negotiation_check(ctx, value)?)
        }
        _ => unreachable!("kind_of returns a step kind"),
    };
    Ok(Step { line, kind })
}

fn initialize(ctx: &Ctx<'_>, value: &Node, expect: Option<&Node>, scope: &Scope) -> R<Initialize> {
    if as_str(value) == Some("none") {
        if let Some(e) = expect {
            return Err(ctx
                .error(
                    e,
                    "`initialize: none` sends nothing, so there is no response to expect",
                )
                .with_hint("remove `expect`, or the `none`"));
        }
        return Ok(Initialize::None);
    }
    if !is_null(value) && !matches!(value.data, saphyr::YamlDataOwned::Mapping(_)) {
        return Err(type_error(ctx, value, "`none`, empty, or a mapping of overrides", "`initialize`")
            .with_hint("`initialize: none` skips the handshake; `initialize: { protocol_version: ... }` changes it"));
    }
    let map = Map::new_or_empty(ctx, value, "`initialize`")?;
    map.only(
        ctx,
        &["protocol_version", "capabilities", "skip_initialized"],
        "`initialize`",
    )?;
    let mut o = InitializeOverrides::default();
    if let Some(v) = map.get("protocol_version") {
        nonempty_string(ctx, v, "`protocol_version`")?;
        o.protocol_version = Some(template(ctx, v, scope)?);
    }
    if let Some(v) = map.get("capabilities") {
        if !matches!(v.data, saphyr::YamlDataOwned::Mapping(_)) {
            return Err(type_error(ctx, v, "a mapping", "`capabilities`"));
        }
        o.capabilities = Some(to_json(ctx, v)?);
    }
    if let Some(v) = map.get("skip_initialized") {
        o.skip_initialized = boolean(ctx, v, "`skip_initialized`")?;
    }
    if let Some(e) = expect {
        let emap = Map::new(ctx, e, "`expect`")?;
        o.expect = Some(response_expectation(ctx, &emap, scope, "`expect`", &[])?);
    }
    Ok(Initialize::Handshake(o))
}

/// `request: <method>` or `request: { method, params, id }`, with `capture` and `expect`
/// beside it. Returns the captures separately: they are defined after the step.
/// Each capture: name, line, and its key node (for errors).
type Captures = Vec<(String, usize, Node)>;

fn request(
    ctx: &Ctx<'_>,
    step: &Map<'_>,
    value: &Node,
    line: usize,
    scope: &Scope,
) -> R<(RequestStep, Captures)> {
    let (method, params) = method_and_params(ctx, value, scope, "request", &["id"])?;
    let id = match Map::new(ctx, value, "`request`")
        .ok()
        .and_then(|m| m.get("id"))
    {
        Some(v) => {
            let id = to_json(ctx, v)?;
            if !matches!(id, Value::Number(_) | Value::String(_) | Value::Null) {
                return Err(type_error(ctx, v, "a number, a string or null", "`id`"));
            }
            Some(id)
        }
        None => None,
    };
    let requires = match step.get("requires") {
        Some(node) => super::requirements(ctx, node)?,
        None => Vec::new(),
    };
    let expect = match step.get("expect") {
        Some(e) => {
            let emap = Map::new(ctx, e, "`expect`")?;
            Some(response_expectation(ctx, &emap, scope, "`expect`", &[])?)
        }
        None => None,
    };
    let on_error = on_error(ctx, step.get("on_error"))?;
    let on_timeout = on_timeout(ctx, step.get("on_timeout"))?;
    let answer_input = step
        .get("answer_input")
        .map(|n| super::input::answer_input(ctx, n, scope))
        .transpose()?;
    let mut capture = std::collections::BTreeMap::new();
    let mut captures = Vec::new();
    if let Some(c) = step.get("capture") {
        let cmap = Map::new(ctx, c, "`capture`")?;
        if cmap.entries.is_empty() {
            return Err(ctx.error(c, "`capture` is empty"));
        }
        for (name, knode, pnode) in &cmap.entries {
            scope.check_new(ctx, knode, name, "variable name")?;
            let pointer = string(ctx, pnode, "a capture pointer")?;
            check_pointer(ctx, pnode, pointer)?;
            let first = pointer.split('/').nth(1).unwrap_or("");
            if !pointer.is_empty() && !["jsonrpc", "id", "result", "error"].contains(&first) {
                return Err(ctx
                    .error(pnode, format!("`{pointer}` points outside a response message"))
                    .with_hint(format!(
                        "capture pointers start at the whole response: did you mean `/result{pointer}`?"
                    )));
            }
            capture.insert((*name).to_owned(), pointer.to_owned());
            captures.push((
                (*name).to_owned(),
                knode.span.start.line(),
                (*knode).clone(),
            ));
        }
    }
    Ok((
        RequestStep {
            method,
            params,
            id,
            requires,
            expect,
            capture,
            on_error,
            on_timeout,
            answer_input,
            line,
        },
        captures,
    ))
}

fn define_captures(ctx: &Ctx<'_>, scope: &mut Scope, captures: &[(String, usize, Node)]) -> R<()> {
    for (name, line, knode) in captures {
        scope.check_new(ctx, knode, name, "variable name")?;
        scope.define(name, *line);
    }
    Ok(())
}

/// `<method>` or `{ method, params, <extra...> }`.
fn method_and_params(
    ctx: &Ctx<'_>,
    value: &Node,
    scope: &Scope,
    kind: &str,
    extra: &[&str],
) -> R<(
    crate::scenario::model::Template,
    Option<crate::scenario::model::Template>,
)> {
    if as_str(value).is_some() {
        nonempty_string(ctx, value, &format!("the `{kind}` method"))?;
        return Ok((template(ctx, value, scope)?, None));
    }
    let what = format!("`{kind}`");
    let map = Map::new(ctx, value, &what).map_err(|e| {
        e.with_hint(format!(
            "write `{kind}: <method>` or `{kind}: {{ method: ..., params: ... }}`"
        ))
    })?;
    let allowed: Vec<&str> = ["method", "params"].iter().chain(extra).copied().collect();
    map.only(ctx, &allowed, &what)?;
    let m = map.require(ctx, "method", &what)?;
    nonempty_string(ctx, m, "`method`")?;
    let method = template(ctx, m, scope)?;
    let params = map
        .get("params")
        .map(|p| template(ctx, p, scope))
        .transpose()?;
    Ok((method, params))
}

fn concurrent(ctx: &Ctx<'_>, value: &Node, scope: &mut Scope) -> R<StepKind> {
    let items = sequence(ctx, value, "`concurrent`")?;
    if items.len() < 2 {
        return Err(ctx
            .error(value, "`concurrent` needs at least two requests")
            .with_hint("a single request is a plain `request` step"));
    }
    let mut requests = Vec::with_capacity(items.len());
    let mut all_captures: Captures = Vec::new();
    let mut ids: Vec<(Value, usize)> = Vec::new();
    for item in items {
        let line = item.span.start.line();
        let map = Map::new(ctx, item, "a concurrent request")
            .map_err(|e| e.with_hint("each item is `{ request: ..., expect: ... }`"))?;
        let (kind, knode, v) = kind_of(ctx, &map)?;
        if kind != "request" {
            return Err(ctx.error(
                knode,
                format!("only `request` steps can run concurrently, not `{kind}`"),
            ));
        }
        if let Some(k) = map.key_node("answer_input") {
            return Err(ctx
                .error(
                    k,
                    "`answer_input` retries a request, which a concurrent one cannot",
                )
                .with_hint("make it a plain `request` step"));
        }
        if let Some((k, kn, _)) = map
            .entries
            .iter()
            .find(|(k, _, _)| *k != "request" && !siblings("request").contains(k))
        {
            return Err(super::yaml::unknown_key(
                ctx,
                kn,
                k,
                siblings("request"),
                "a concurrent request",
            ));
        }
        let (req, captures) = request(ctx, &map, v, line, scope)?;
        if let Some(id) = &req.id {
            if let Some((_, first)) = ids.iter().find(|(seen, _)| seen == id) {
                return Err(ctx
                    .error(
                        item,
                        format!("two concurrent requests use the id {id} (first on line {first})"),
                    )
                    .with_hint("responses are matched by id; give each request its own"));
            }
            ids.push((id.clone(), line));
        }
        for c in &captures {
            if let Some((_, first, _)) = all_captures.iter().find(|(n, _, _)| *n == c.0) {
                return Err(ctx.error(
                    &c.2,
                    format!(
                        "duplicate variable `{}`: already captured on line {first}",
                        c.0
                    ),
                ));
            }
        }
        all_captures.extend(captures);
        requests.push(req);
    }
    define_captures(ctx, scope, &all_captures)?;
    Ok(StepKind::Concurrent(requests))
}

/// Most requests one `burst` may send.
const MAX_BURST: i64 = 100_000;

fn burst(ctx: &Ctx<'_>, value: &Node) -> R<StepKind> {
    let map = Map::new(ctx, value, "`burst`")?;
    map.only(ctx, &["method", "count"], "`burst`")?;
    let m = map.require(ctx, "method", "`burst`")?;
    let method = super::yaml::nonempty_string(ctx, m, "`method`")?.to_owned();
    let c = map.require(ctx, "count", "`burst`")?;
    let count = super::yaml::integer(ctx, c, "`count`")?;
    if !(2..=MAX_BURST).contains(&count) {
        return Err(ctx.error(c, format!("`count` must be from 2 to {MAX_BURST}")));
    }
    Ok(StepKind::Burst {
        method,
        count: usize::try_from(count).unwrap_or(2),
    })
}

/// `on_error:` beside a `request` or `paginate` step.
fn on_error(ctx: &Ctx<'_>, node: Option<&Node>) -> R<OnError> {
    let Some(v) = node else {
        return Ok(OnError::Judge);
    };
    match string(ctx, v, "`on_error`")? {
        "next" => Ok(OnError::Next),
        other => Err(ctx
            .error(v, format!("unknown `on_error: {other}`"))
            .with_hint("`on_error: next` skips to the next `for_each` item when the request is answered with an error")),
    }
}

/// `on_timeout:` beside a `request` step.
fn on_timeout(ctx: &Ctx<'_>, node: Option<&Node>) -> R<OnTimeout> {
    let Some(v) = node else {
        return Ok(OnTimeout::Fail);
    };
    match string(ctx, v, "`on_timeout`")? {
        "next" => Ok(OnTimeout::Next),
        other => Err(ctx
            .error(v, format!("unknown `on_timeout: {other}`"))
            .with_hint("`on_timeout: next` skips to the next `for_each` item when no answer comes within the timeout")),
    }
}

fn paginate(ctx: &Ctx<'_>, value: &Node, on_error: OnError, scope: &mut Scope) -> R<StepKind> {
    let map = Map::new(ctx, value, "`paginate`")?;
    map.only(
        ctx,
        &["method", "key", "into", "params", "same"],
        "`paginate`",
    )?;
    let mnode = map.require(ctx, "method", "`paginate`")?;
    let method = plain_string(ctx, mnode, "`method`")?;
    let key = match map.get("key") {
        Some(k) => plain_string(ctx, k, "`key`")?.to_owned(),
        // List methods whose item key `paginate` knows without being told.
        None => match crate::protocol::list_key(method) {
            Some(k) => k.to_owned(),
            None => {
                return Err(ctx
                    .error(mnode, format!("`paginate` over `{method}` needs `key`"))
                    .with_hint(
                        "`key` names the result member that holds the items, e.g. `key: tools`",
                    ));
            }
        },
    };
    let params = map
        .get("params")
        .map(|p| template(ctx, p, scope))
        .transpose()?;
    let mut same = Vec::new();
    if let Some(list) = map.get("same") {
        for p in sequence(ctx, list, "`same`")? {
            let pointer = string(ctx, p, "a `same` pointer")?;
            check_pointer(ctx, p, pointer)?;
            same.push(pointer.to_owned());
        }
    }
    let inode = map.require(ctx, "into", "`paginate`")?;
    let into = string(ctx, inode, "`into`")?;
    scope.check_new(ctx, inode, into, "variable name")?;
    scope.define(into, inode.span.start.line());
    Ok(StepKind::Paginate {
        method: method.to_owned(),
        key,
        into: into.to_owned(),
        params,
        on_error,
        same,
    })
}

/// `check: { value, match }`: checks on a value built from variables.
fn check_step(ctx: &Ctx<'_>, value: &Node, scope: &Scope) -> R<StepKind> {
    let map = Map::new(ctx, value, "`check`")?;
    map.only(ctx, &["value", "match"], "`check`")?;
    let v = template(ctx, map.require(ctx, "value", "`check`")?, scope)?;
    let mnode = map.require(ctx, "match", "`check`")?;
    let checks = checks(ctx, mnode, scope, "`match`", &[])?;
    if checks.is_empty() {
        return Err(ctx
            .error(mnode, "`match` has no checks")
            .with_hint("map JSON pointers to matchers, e.g. `/name: { regex: '^[a-z]+$' }`"));
    }
    Ok(StepKind::Check { value: v, checks })
}

fn for_each(ctx: &Ctx<'_>, value: &Node, scope: &mut Scope) -> R<StepKind> {
    let map = Map::new(ctx, value, "`for_each`")?;
    map.only(ctx, &["in", "as", "where", "steps"], "`for_each`")?;
    let in_node = map.require(ctx, "in", "`for_each`")?;
    let list = string(ctx, in_node, "`in`")?;
    // `in: tools|mcp_param_calls`: a filter that turns the variable into the list.
    match list.split_once('|') {
        Some(_) => super::vars::check_string_refs(ctx, in_node, &format!("${{{list}}}"), scope)?,
        None => {
            super::vars::check_name(ctx, in_node, list, "variable name")?;
            scope.use_var(ctx, in_node, list)?;
        }
    }
    let as_node = map.require(ctx, "as", "`for_each`")?;
    let bind = string(ctx, as_node, "`as`")?;
    scope.check_new(ctx, as_node, bind, "variable name")?;
    let mark = scope.len();
    scope.define(bind, as_node.span.start.line());
    let filter = match map.get("where") {
        Some(w) => checks(ctx, w, scope, "`where`", &[])?,
        None => Vec::new(),
    };
    let body = steps(
        ctx,
        map.require(ctx, "steps", "`for_each`")?,
        scope,
        false,
        "`steps`",
    )?;
    scope.truncate(mark);
    Ok(StepKind::ForEach {
        list: list.to_owned(),
        bind: bind.to_owned(),
        filter,
        steps: body,
    })
}

/// The rule a `negotiate` step judges, by name.
fn negotiation_check(ctx: &Ctx<'_>, value: &Node) -> R<NegotiationCheck> {
    let name = string(ctx, value, "`negotiate`")?;
    NegotiationCheck::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = NegotiationCheck::ALL.iter().map(|(n, _)| *n).collect();
        let e = ctx.error(value, format!("`{name}` is not a negotiation check"));
        match suggest(name, &names) {
            Some(s) => e.with_hint(format!("did you mean `{s}`?")),
            None => e.with_hint(names.join(", ")),
        }
    })
}
