//! Walking a live session to build the snapshot document: the handshake result, every
//! list (following pagination), and the calls the policy allows, each reduced to its shape.

use serde_json::{Map, Value, json};

use super::args;
use super::canon::canonicalize;
use super::shape::{ShapeOptions, shape};
use super::{SnapshotError, SnapshotOptions};
use crate::protocol::Outcome;
use crate::session::{Handshake, Reply, Session};

/// Most pages followed in one list before it is called endless.
const MAX_PAGES: usize = 1000;

/// The unredacted snapshot document of a session that has not been initialized yet:
/// `{server, tools, resources, prompts}`. Key order is settled afterwards, by
/// [`Snapshot::from_document`](super::Snapshot::from_document).
pub async fn document(
    session: &mut Session,
    options: &SnapshotOptions,
) -> Result<Value, SnapshotError> {
    let (profile, reply) = session
        .initialize_with(&Handshake::default())
        .await
        .map_err(|e| SnapshotError::Session(e.to_string()))?;
    let Some(init) = reply.result() else {
        let e = reply.error().map(|e| format!("{} {}", e.code, e.message));
        return Err(SnapshotError::Initialize(e.unwrap_or_default()));
    };
    let mut walker = Walker {
        session,
        shapes: ShapeOptions {
            array_lengths: options.array_lengths,
        },
    };
    let mut doc = Map::new();
    doc.insert("server".into(), canonicalize(init));
    let tools = if profile.declares("tools") {
        walker.tools(options).await?
    } else {
        undeclared()
    };
    doc.insert("tools".into(), tools);
    let resources = if profile.declares("resources") {
        walker.resources().await?
    } else {
        undeclared()
    };
    doc.insert("resources".into(), resources);
    let prompts = if profile.declares("prompts") {
        walker.prompts().await?
    } else {
        undeclared()
    };
    doc.insert("prompts".into(), prompts);
    Ok(Value::Object(doc))
}

fn undeclared() -> Value {
    json!({"declared": false})
}

struct Walker<'a> {
    session: &'a mut Session,
    shapes: ShapeOptions,
}

/// A list, or the error that answered it.
enum Listed {
    Items(Vec<Value>),
    Error(Value),
}

impl Walker<'_> {
    async fn request(&mut self, method: &str, params: Value) -> Result<Reply, SnapshotError> {
        self.session
            .request(method, Some(params))
            .await
            .map_err(|e| SnapshotError::Session(e.to_string()))
    }

    /// The reply reduced to its shape: `result` or `error` (code kept, message typed).
    fn outcome_shape(&self, reply: &Reply) -> Value {
        match &reply.outcome {
            Outcome::Result(r) => json!({"result": shape(r, self.shapes)}),
            Outcome::Error(e) => {
                let mut error = json!({"code": e.code, "message": e.message});
                if let Some(data) = &e.data {
                    error["data"] = data.clone();
                }
                json!({"error": shape(&error, self.shapes)})
            }
        }
    }

    /// Every item of a paginated list, sorted by `id_key` (MCP gives list order no
    /// meaning, and a server may vary it).
    async fn list(
        &mut self,
        method: &str,
        key: &str,
        id_key: &str,
    ) -> Result<Listed, SnapshotError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let reply = self.request(method, params).await?;
            let result = match &reply.outcome {
                Outcome::Result(r) => r,
                Outcome::Error(_) => {
                    return Ok(Listed::Error(self.outcome_shape(&reply)["error"].clone()));
                }
            };
            if let Some(page) = result.get(key).and_then(Value::as_array) {
                items.extend(page.iter().map(canonicalize));
            }
            match result.get("nextCursor").and_then(Value::as_str) {
                Some(next) if cursor.as_deref() != Some(next) => cursor = Some(next.to_owned()),
                _ => {
                    let name = |v: &Value| v.get(id_key).map(|n| n.to_string()).unwrap_or_default();
                    items.sort_by_key(name);
                    return Ok(Listed::Items(items));
                }
            }
        }
        Err(SnapshotError::Session(format!(
            "`{method}` was still paginating after {MAX_PAGES} pages"
        )))
    }

    async fn tools(&mut self, options: &SnapshotOptions) -> Result<Value, SnapshotError> {
        let list = match self.list("tools/list", "tools", "name").await? {
            Listed::Items(items) => items,
            Listed::Error(e) => return Ok(json!({"error": e})),
        };
        let mut calls = Map::new();
        for tool in &list {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let arguments = match options.calls.get(name) {
                Some(given) => given.clone(),
                None => {
                    if let Some(why) = args::forbidden(options.call_tools, tool) {
                        calls.insert(name.to_owned(), json!({"skipped": why}));
                        continue;
                    }
                    args::tool_arguments(tool.get("inputSchema"))
                }
            };
            let reply = self
                .request("tools/call", json!({"name": name, "arguments": arguments}))
                .await?;
            let mut entry = json!({"arguments": canonicalize(&arguments)});
            merge(&mut entry, self.outcome_shape(&reply));
            calls.insert(name.to_owned(), entry);
        }
        Ok(json!({"list": list, "calls": calls}))
    }

    async fn resources(&mut self) -> Result<Value, SnapshotError> {
        let mut out = Map::new();
        let list = match self.list("resources/list", "resources", "uri").await? {
            Listed::Items(items) => items,
            Listed::Error(e) => return Ok(json!({"error": e})),
        };
        match self
            .list(
                "resources/templates/list",
                "resourceTemplates",
                "uriTemplate",
            )
            .await?
        {
            Listed::Items(t) => out.insert("templates".into(), Value::Array(t)),
            Listed::Error(e) => out.insert("templates".into(), json!({"error": e})),
        };
        let mut reads = Map::new();
        for r in &list {
            let Some(uri) = r.get("uri").and_then(Value::as_str) else {
                continue;
            };
            let reply = self.request("resources/read", json!({"uri": uri})).await?;
            reads.insert(uri.to_owned(), self.outcome_shape(&reply));
        }
        out.insert("list".into(), Value::Array(list));
        out.insert("reads".into(), Value::Object(reads));
        Ok(Value::Object(out))
    }

    async fn prompts(&mut self) -> Result<Value, SnapshotError> {
        let list = match self.list("prompts/list", "prompts", "name").await? {
            Listed::Items(items) => items,
            Listed::Error(e) => return Ok(json!({"error": e})),
        };
        let mut gets = Map::new();
        for p in &list {
            let Some(name) = p.get("name").and_then(Value::as_str) else {
                continue;
            };
            let mut params = json!({"name": name});
            let arguments = args::prompt_arguments(p);
            if let Some(a) = &arguments {
                params["arguments"] = a.clone();
            }
            let reply = self.request("prompts/get", params).await?;
            let mut entry = json!({"arguments": arguments.unwrap_or_else(|| json!({}))});
            merge(&mut entry, self.outcome_shape(&reply));
            gets.insert(name.to_owned(), entry);
        }
        Ok(json!({"gets": gets, "list": list}))
    }
}

fn merge(into: &mut Value, from: Value) {
    if let (Value::Object(a), Value::Object(b)) = (into, from) {
        a.extend(b);
    }
}
