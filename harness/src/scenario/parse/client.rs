//! Reads client scenario files (`role: client`) into the
//! [`client model`](crate::scenario::model::client), with the same caret-pointed errors as
//! server scenarios. The parser proves the script can run: `send` and `respond` only while
//! a request is held, never two held at once, and none left unanswered at the end.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::checks::checks;
use super::vars::Scope;
use super::yaml::{self, Ctx, Map, Node, R, nonempty_string, to_json};
use super::{ScenarioError, is_id, revisions, severity};
use crate::outcome::Severity;
use crate::protocol::Revision;
use crate::scenario::model::client::{
    ClientScenario, ClientStep, ClientStepKind, Disconnect, Otherwise, Receive, ReplyPlan, Send,
};
use crate::session::mock::{Answer, Serves};
use crate::transport::target::TransportKind;

/// The revisions `mcpcheck client` serves: Streamable HTTP with a handshake, and
/// 2026-07-28 without one. (2024-11-05 clients speak HTTP+SSE, which the mock does not
/// serve.)
pub const SPOKEN: &[Revision] = &[
    Revision::V2025_03_26,
    Revision::V2025_06_18,
    Revision::V2025_11_25,
    Revision::V2026_07_28,
];

/// The revisions of a scenario that names none: those with a handshake, since most
/// client requirements belong to one era (a 2026-07-28 scenario says so).
const DEFAULT_REVISIONS: &[Revision] = &[
    Revision::V2025_03_26,
    Revision::V2025_06_18,
    Revision::V2025_11_25,
];

const TOP_KEYS: &[&str] = &[
    "role",
    "id",
    "title",
    "spec",
    "revisions",
    "transports",
    "severity",
    "official",
    "tell",
    "requires",
    "rule",
    "context",
    "serves",
    "auth",
    "steps",
];

/// The step kinds of a client scenario.
pub const CLIENT_STEP_KINDS: &[&str] = &["receive", "send", "disconnect", "respond"];

/// Parses one client scenario file.
pub fn parse_client_scenario(
    source_name: &str,
    text: &str,
) -> Result<ClientScenario, ScenarioError> {
    let ctx = Ctx::new(source_name, text);
    let root = yaml::load(&ctx, text)?;
    scenario(&ctx, &root)
}

/// Whether a scenario document says `role: client` (read without parsing the rest).
pub fn is_client_document(text: &str) -> bool {
    text.lines()
        .any(|l| matches!(l.trim_end().split_once(':'), Some(("role", v)) if v.trim() == "client"))
}

fn scenario(ctx: &Ctx<'_>, root: &Node) -> R<ClientScenario> {
    let map = Map::new(ctx, root, "a client scenario")?;
    map.only(ctx, TOP_KEYS, "a client scenario")?;
    let id = role_and_id(ctx, &map)?;
    let title = nonempty_string(ctx, map.require(ctx, "title", "the scenario")?, "`title`")?;
    let spec = nonempty_string(ctx, map.require(ctx, "spec", "the scenario")?, "`spec`")?;
    let revisions = match map.get("revisions") {
        None => DEFAULT_REVISIONS.to_vec(),
        Some(node) => revisions(ctx, node)?,
    };
    if let Some(r) = revisions.iter().find(|r| !SPOKEN.contains(r)) {
        return Err(ctx
            .error(
                map.get("revisions").unwrap_or(root),
                format!("`mcpcheck client` does not speak {r} yet"),
            )
            .with_hint(
                "client scenarios run at 2025-03-26, 2025-06-18, 2025-11-25 and 2026-07-28",
            ));
    }
    let transports = match map.get("transports") {
        None => vec![TransportKind::Stdio, TransportKind::Http],
        Some(node) => super::transports(ctx, node)?,
    };
    let severity = match map.get("severity") {
        None => Severity::Failure,
        Some(node) => severity(ctx, node)?,
    };
    let official = super::official_ids(ctx, &map)?;
    let tell = match (map.get("tell"), official.first()) {
        (Some(node), _) => nonempty_string(ctx, node, "`tell`")?.to_owned(),
        (None, Some(first)) => first.clone(),
        (None, None) => {
            return Err(ctx
                .error_at(root.span.start, 1, "the scenario tells the client no scenario name")
                .with_hint("name the official scenario whose client flow this one needs, e.g. `tell: initialize` (SDK conformance clients know only those)"));
        }
    };
    let requires = match map.get("requires") {
        None => Vec::new(),
        Some(node) => super::requirements(ctx, node)?,
    };
    let rule = super::rule_id(ctx, &map)?;
    let context = match map.get("context") {
        None => None,
        Some(node) => Some(context(ctx, node, &tell)?),
    };
    let serves = match map.get("serves") {
        None => Serves::default(),
        Some(node) => serves(ctx, node)?,
    };
    let auth = auth(ctx, &map, root, context.as_ref(), &transports)?;
    let steps = steps(
        ctx,
        map.require(ctx, "steps", "the scenario")?,
        auth.is_some(),
    )?;
    let expires = steps.iter().any(|s| {
        matches!(
            &s.kind,
            ClientStepKind::Receive(Receive {
                reply: ReplyPlan::Expire,
                ..
            })
        )
    });
    if expires && transports.contains(&TransportKind::Stdio) {
        return Err(ctx
            .error(
                map.get("transports").unwrap_or(root),
                "`reply: expire` ends an HTTP session, and this scenario runs over stdio too",
            )
            .with_hint("add `transports: [http]`"));
    }
    Ok(ClientScenario {
        id: id.to_owned(),
        title: title.trim().to_owned(),
        spec: spec.to_owned(),
        revisions,
        transports,
        severity,
        official,
        tell,
        requires,
        rule,
        context,
        serves,
        auth,
        steps,
        source: ctx.file.to_owned(),
    })
}

/// `role: client` and the `client/...` id.
fn role_and_id<'n>(ctx: &Ctx<'_>, map: &Map<'n>) -> R<&'n str> {
    let role = map.require(ctx, "role", "the client scenario")?;
    if nonempty_string(ctx, role, "`role`")? != "client" {
        return Err(ctx
            .error(role, "a client scenario has `role: client`")
            .with_hint("server scenarios have no `role` key"));
    }
    let id_node = map.require(ctx, "id", "the scenario")?;
    let id = nonempty_string(ctx, id_node, "`id`")?;
    if !is_id(id, '/') || !id.starts_with("client/") {
        return Err(ctx
            .error(id_node, format!("`{id}` is not a client scenario id"))
            .with_hint("client scenario ids are `client/name` in lower case, digits and `-`"));
    }
    Ok(id)
}

/// `auth:`, only on a scenario that runs over HTTP alone.
fn auth(
    ctx: &Ctx<'_>,
    map: &Map<'_>,
    root: &Node,
    context: Option<&Value>,
    transports: &[TransportKind],
) -> R<Option<crate::session::mock::auth::AuthSetup>> {
    let Some(node) = map.get("auth") else {
        return Ok(None);
    };
    if transports != [TransportKind::Http] {
        return Err(ctx
            .error(
                map.get("transports").unwrap_or(root),
                "`auth` protects an HTTP endpoint, and this scenario runs over stdio too",
            )
            .with_hint("add `transports: [http]` (authorization is HTTP's only)"));
    }
    super::client_auth::auth(ctx, node, context).map(Some)
}

/// `context:`: a mapping, given to the client as `MCP_CONFORMANCE_CONTEXT` with `name`
/// first, as the official suite does.
fn context(ctx: &Ctx<'_>, node: &Node, name: &str) -> R<Value> {
    let Value::Object(fields) = to_json(ctx, node)? else {
        return Err(yaml::type_error(ctx, node, "a mapping", "`context`"));
    };
    let mut out = serde_json::Map::new();
    out.insert("name".into(), json!(name));
    out.extend(fields.into_iter().filter(|(k, _)| k != "name"));
    Ok(Value::Object(out))
}

fn serves(ctx: &Ctx<'_>, node: &Node) -> R<Serves> {
    let map = Map::new(ctx, node, "`serves`")?;
    map.only(
        ctx,
        &[
            "capabilities",
            "tools",
            "resources",
            "prompts",
            "instructions",
        ],
        "`serves`",
    )?;
    let mut tools = Vec::new();
    let mut results = BTreeMap::new();
    if let Some(list) = map.get("tools") {
        for t in yaml::sequence(ctx, list, "`tools`")? {
            let Value::Object(mut tool) = to_json(ctx, t)? else {
                return Err(yaml::type_error(ctx, t, "a mapping", "a tool"));
            };
            let Some(name) = tool.get("name").and_then(Value::as_str).map(str::to_owned) else {
                return Err(ctx.error(t, "a tool needs a `name`"));
            };
            if let Some(result) = tool.remove("result") {
                results.insert(name, result);
            }
            tool.entry("inputSchema")
                .or_insert_with(|| json!({"type": "object"}));
            tools.push(Value::Object(tool));
        }
    }
    let resources = named_list(ctx, &map, "resources", "uri")?;
    let prompts = named_list(ctx, &map, "prompts", "name")?;
    let capabilities = match map.get("capabilities") {
        Some(c) => to_json(ctx, c)?,
        None => {
            let mut caps = serde_json::Map::new();
            for (key, has) in [
                ("tools", !tools.is_empty()),
                ("resources", !resources.is_empty()),
                ("prompts", !prompts.is_empty()),
            ] {
                if has {
                    caps.insert(key.into(), json!({}));
                }
            }
            Value::Object(caps)
        }
    };
    let instructions = match map.get("instructions") {
        Some(i) => Some(nonempty_string(ctx, i, "`instructions`")?.to_owned()),
        None => None,
    };
    Ok(Serves {
        capabilities,
        tools,
        results,
        instructions,
        resources,
        prompts,
    })
}

/// `serves.resources` or `serves.prompts`: mappings that each have `key`.
fn named_list(ctx: &Ctx<'_>, map: &Map<'_>, list: &str, key: &str) -> R<Vec<Value>> {
    let Some(node) = map.get(list) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for item in yaml::sequence(ctx, node, &format!("`{list}`"))? {
        let value = to_json(ctx, item)?;
        if value.get(key).and_then(Value::as_str).is_none() {
            return Err(ctx.error(item, format!("each of `{list}` needs a `{key}`")));
        }
        out.push(value);
    }
    Ok(out)
}

/// `steps`; empty only where `auth` is (a client that must refuse to go on sends nothing
/// the steps could take: its requests to the authorization server are judged there).
fn steps(ctx: &Ctx<'_>, node: &Node, may_be_empty: bool) -> R<Vec<ClientStep>> {
    let items = yaml::sequence(ctx, node, "`steps`")?;
    if items.is_empty() && !may_be_empty {
        return Err(ctx
            .error(node, "a scenario needs at least one step")
            .with_hint("only an `auth` scenario may have none (`steps: []`)"));
    }
    let mut out = Vec::with_capacity(items.len());
    let mut held: Option<&Node> = None;
    // The held request's stream was closed: only `respond` (on the resuming GET) may follow.
    let mut closed = false;
    for item in items {
        let step = step(ctx, item)?;
        if closed && !matches!(step.kind, ClientStepKind::Respond(_)) {
            return Err(ctx
                .error(
                    item,
                    "after `disconnect` the held request's stream is closed",
                )
                .with_hint("answer it with `respond:` (sent on the GET that resumes the stream)"));
        }
        match &step.kind {
            ClientStepKind::Receive(Receive {
                reply: ReplyPlan::Hold,
                ..
            }) => {
                if held.is_some() {
                    return Err(ctx
                        .error(item, "a request is already held")
                        .with_hint("answer it with `respond:` before holding another"));
                }
                held = Some(item);
            }
            ClientStepKind::Disconnect(_) if held.is_none() => {
                return Err(ctx
                    .error(
                        item,
                        "`disconnect` closes a held request's stream, and none is held",
                    )
                    .with_hint("hold one first: `receive: tools/call` with `reply: hold`"));
            }
            ClientStepKind::Disconnect(_) => closed = true,
            ClientStepKind::Send(_) if held.is_none() => {
                return Err(ctx
                    .error(item, "`send` needs a held request to send on")
                    .with_hint("hold one first: `receive: tools/call` with `reply: hold`"));
            }
            ClientStepKind::Respond(_) if held.take().is_none() => {
                return Err(ctx
                    .error(item, "`respond` answers a held request, and none is held")
                    .with_hint("hold one first: `receive: tools/call` with `reply: hold`"));
            }
            ClientStepKind::Respond(_) => closed = false,
            _ => {}
        }
        out.push(step);
    }
    if let Some(h) = held {
        return Err(ctx
            .error(h, "this held request is never answered")
            .with_hint("end the scenario with a `respond:` step"));
    }
    Ok(out)
}

fn step(ctx: &Ctx<'_>, node: &Node) -> R<ClientStep> {
    let map = Map::new(ctx, node, "a step")?;
    let line = node.span.start.line();
    let Some((kind, knode, value)) = map
        .entries
        .iter()
        .find(|(k, _, _)| CLIENT_STEP_KINDS.contains(k))
        .copied()
    else {
        return Err(ctx
            .error(
                node,
                "a client step starts with `receive`, `send` or `respond`",
            )
            .with_hint(format!(
                "found {}",
                yaml::list(&map.entries.iter().map(|e| e.0).collect::<Vec<_>>())
            )));
    };
    let scope = Scope::default();
    let within = |map: &Map<'_>| -> R<_> {
        map.get("within")
            .map(|w| yaml::duration(ctx, w, "`within`"))
            .transpose()
    };
    let kind = match kind {
        "receive" => receive(ctx, &map, value, &scope, within(&map)?)?,
        "send" => {
            map.only(
                ctx,
                &["send", "params", "expect", "within"],
                "a `send` step",
            )?;
            ClientStepKind::Send(Send {
                method: nonempty_string(ctx, value, "`send`")?.to_owned(),
                params: map
                    .get("params")
                    .map(|p| to_json(ctx, p))
                    .transpose()?
                    .unwrap_or(json!({})),
                expect: match map.get("expect") {
                    Some(e) => checks(ctx, e, &scope, "`expect`", &[])?,
                    None => Vec::new(),
                },
                within: within(&map)?,
            })
        }
        "disconnect" => {
            map.only(ctx, &["disconnect"], "a `disconnect` step")?;
            let fields = Map::new(ctx, value, "`disconnect`")
                .map_err(|e| e.with_hint("write `disconnect: { retry: 500ms }`"))?;
            fields.only(ctx, &["retry", "within"], "`disconnect`")?;
            let retry = fields.require(ctx, "retry", "`disconnect`")?;
            ClientStepKind::Disconnect(Disconnect {
                retry: yaml::duration(ctx, retry, "`retry`")?,
                within: within(&fields)?,
            })
        }
        _ => {
            map.only(ctx, &["respond"], "a `respond` step")?;
            ClientStepKind::Respond(answer(ctx, value)?)
        }
    };
    let _ = knode;
    Ok(ClientStep { line, kind })
}

/// `{ result: ... }` or `{ error: { code, message, data } }`.
fn answer(ctx: &Ctx<'_>, node: &Node) -> R<Answer> {
    let map = Map::new(ctx, node, "an answer").map_err(|e| {
        e.with_hint("write `hold`, `{ result: ... }` or `{ error: { code, message } }`")
    })?;
    map.only(ctx, &["result", "error"], "an answer")?;
    match (map.get("result"), map.get("error")) {
        (Some(r), None) => Ok(Answer::Result(to_json(ctx, r)?)),
        (None, Some(e)) => {
            let err = Map::new(ctx, e, "`error`")?;
            err.only(ctx, &["code", "message", "data"], "`error`")?;
            Ok(Answer::Error {
                code: yaml::integer(ctx, err.require(ctx, "code", "`error`")?, "`code`")?,
                message: nonempty_string(
                    ctx,
                    err.require(ctx, "message", "`error`")?,
                    "`message`",
                )?
                .to_owned(),
                data: err.get("data").map(|d| to_json(ctx, d)).transpose()?,
            })
        }
        _ => Err(ctx.error(node, "an answer has exactly one of `result` and `error`")),
    }
}

/// A `receive` step's keys.
fn receive(
    ctx: &Ctx<'_>,
    map: &Map<'_>,
    value: &Node,
    scope: &Scope,
    within: Option<std::time::Duration>,
) -> R<ClientStepKind> {
    map.only(
        ctx,
        &["receive", "match", "expect", "reply", "within", "otherwise"],
        "a `receive` step",
    )?;
    let otherwise = match map.get("otherwise") {
        None => Otherwise::Fail,
        Some(o) if yaml::as_str(o) == Some("skip") => Otherwise::Skip,
        Some(o) => {
            return Err(ctx
                .error(o, "`otherwise` can only be `skip`")
                .with_hint("`otherwise: skip` for a message the client need not send (a MAY); without it, a missing message fails the scenario"));
        }
    };
    let method = nonempty_string(ctx, value, "`receive`")?.to_owned();
    let reply = match map.get("reply") {
        None => ReplyPlan::Default,
        Some(r) if method.starts_with("notifications/") => {
            return Err(ctx.error(r, "a notification gets no reply"));
        }
        Some(r) if yaml::as_str(r) == Some("hold") => ReplyPlan::Hold,
        Some(r) if yaml::as_str(r) == Some("expire") => ReplyPlan::Expire,
        Some(r) => ReplyPlan::Answer(answer(ctx, r)?),
    };
    let expect = match map.get("expect") {
        Some(e) => checks(ctx, e, scope, "`expect`", &[])?,
        None => Vec::new(),
    };
    let filter = match map.get("match") {
        Some(m) => checks(ctx, m, scope, "`match`", &[])?,
        None => Vec::new(),
    };
    Ok(ClientStepKind::Receive(Receive {
        method,
        filter,
        expect,
        reply,
        within,
        otherwise,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ClientScenario, ScenarioError> {
        parse_client_scenario("t.yaml", text)
    }

    const HEAD: &str =
        "role: client\nid: client/x\ntitle: t\nspec: server/tools\ntell: initialize\n";

    #[test]
    fn a_held_request_is_sent_on_and_answered() {
        let s = parse(&format!(
            "{HEAD}serves:\n  tools:\n    - name: add\n      result: {{ content: [] }}\nsteps:\n  - receive: tools/call\n    expect:\n      /params/name: add\n    reply: hold\n  - send: ping\n  - respond: {{ result: {{ content: [] }} }}\n"
        ))
        .unwrap();
        assert_eq!(s.steps.len(), 3);
        assert_eq!(s.serves.capabilities, json!({"tools": {}}));
        assert_eq!(s.serves.results["add"], json!({"content": []}));
        assert!(s.serves.tools[0].get("result").is_none());
        assert_eq!(s.tell, "initialize");
    }

    #[test]
    fn auth_lays_out_the_authorization_server_and_is_http_only() {
        use crate::session::mock::auth::{AsMetadata, PrmLocation, Registration};
        let http = "transports: [http]\n";
        let s = parse(&format!(
            "{HEAD}{http}context: {{ client_id: pre }}\nauth:\n  metadata: custom\n  issuer_path: /t1\n  server_metadata: openid-appended\n  pkce_advertised: false\n  registration: pre-registered\nsteps: []\n"
        ))
        .unwrap();
        let auth = s.auth.unwrap();
        assert_eq!(auth.metadata, PrmLocation::Custom);
        assert_eq!(auth.as_metadata, AsMetadata::OpenidAppended);
        assert_eq!(auth.pkce_methods, None);
        assert!(s.steps.is_empty());
        assert_eq!(
            auth.registration,
            Registration::Preregistered {
                client_id: "pre".into(),
                client_secret: None
            }
        );
        let at = |text: String, line: usize, words: &str| {
            let e = parse(&text).unwrap_err();
            assert_eq!(e.line, line, "{e}");
            assert!(e.to_string().contains(words), "{e}");
        };
        // Over stdio too: the `transports` line (here, the default: the whole file).
        at(
            format!("{HEAD}auth: {{}}\nsteps: []\n"),
            1,
            "transports: [http]",
        );
        at(
            format!(
                "{HEAD}{http}auth:\n  metadata: custom\n  challenge_metadata: false\nsteps: []\n"
            ),
            8,
            "cannot be found",
        );
        at(
            format!("{HEAD}{http}auth:\n  server_metadata: openid-appended\nsteps: []\n"),
            8,
            "issuer_path",
        );
        at(
            format!("{HEAD}{http}auth:\n  registration: pre-registered\nsteps: []\n"),
            8,
            "context",
        );
        // Without `auth` a scenario needs a step.
        at(format!("{HEAD}steps: []\n"), 6, "at least one step");
    }

    #[test]
    fn the_script_must_be_runnable() {
        let send_first = parse(&format!("{HEAD}steps:\n  - send: ping\n")).unwrap_err();
        assert!(
            send_first.to_string().contains("held request"),
            "{send_first}"
        );
        assert_eq!(send_first.line, 7);
        let never = parse(&format!(
            "{HEAD}steps:\n  - receive: tools/call\n    reply: hold\n"
        ))
        .unwrap_err();
        assert!(never.to_string().contains("never answered"), "{never}");
        let twice = parse(&format!(
            "{HEAD}steps:\n  - receive: tools/call\n    reply: hold\n  - receive: tools/call\n    reply: hold\n"
        ))
        .unwrap_err();
        assert!(twice.to_string().contains("already held"), "{twice}");
        let notify = parse(&format!(
            "{HEAD}steps:\n  - receive: notifications/initialized\n    reply: hold\n"
        ))
        .unwrap_err();
        assert!(notify.to_string().contains("no reply"), "{notify}");
        let loose = parse(&format!("{HEAD}steps:\n  - disconnect: {{ retry: 1s }}\n")).unwrap_err();
        assert!(loose.to_string().contains("none is held"), "{loose}");
        let closed = parse(&format!(
            "{HEAD}steps:\n  - receive: tools/call\n    reply: hold\n  - disconnect: {{ retry: 1s }}\n  - send: ping\n  - respond: {{ result: {{}} }}\n"
        ))
        .unwrap_err();
        assert!(closed.to_string().contains("stream is closed"), "{closed}");
        let resumed = parse(&format!(
            "{HEAD}steps:\n  - receive: tools/call\n    reply: hold\n  - disconnect: {{ retry: 500ms, within: 2s }}\n  - respond: {{ result: {{}} }}\n"
        ));
        assert!(resumed.is_ok(), "{resumed:?}");
    }

    #[test]
    fn the_context_names_the_scenario_first() {
        let text = "role: client\nid: client/x\ntitle: t\nspec: s\nofficial: [tools_call]\ncontext: { toolCalls: [] }\nsteps:\n  - receive: initialize\n";
        let s = parse(text).unwrap();
        assert_eq!(s.tell, "tools_call");
        assert_eq!(
            s.context.unwrap().to_string(),
            r#"{"name":"tools_call","toolCalls":[]}"#
        );
        let untold = parse(
            "role: client\nid: client/x\ntitle: t\nspec: s\nsteps:\n  - receive: initialize\n",
        )
        .unwrap_err();
        assert!(untold.to_string().contains("no scenario name"), "{untold}");
    }

    #[test]
    fn role_is_read_without_parsing() {
        assert!(is_client_document("# c\nrole: client\nid: client/x\n"));
        assert!(!is_client_document("id: tools/x\n"));
    }
}
