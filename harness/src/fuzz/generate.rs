//! Test cases: short sequences of messages for one session, built from the negotiated
//! revision's schema (its method table and request definitions) and from what the server
//! declared (capabilities, tools and their `inputSchema`s, prompts, resources).

use std::collections::{BTreeSet, HashSet};

use rand::RngExt;
use rand::seq::IndexedRandom;
use serde_json::{Map, Value, json};

use super::Rng;
use super::mutate;
use super::values::{Shape, ValueGen, deep_value, word};
use super::wire::Wire;
use crate::outcome::ToolPolicy;
use crate::protocol::RequestId;
use crate::schema::SchemaSet;

/// What the server declared, learnt once after the first handshake.
#[derive(Clone, Debug, Default)]
pub struct Surface {
    /// The `capabilities` of the `InitializeResult`.
    pub capabilities: Value,
    /// Tools the `--call-tools` policy allows, with their `inputSchema`.
    pub tools: Vec<(String, Value)>,
    /// Tools the policy forbids: never named in a `tools/call`.
    pub forbidden_tools: BTreeSet<String>,
    /// Names of the prompts the server lists.
    pub prompts: Vec<String>,
    /// URIs of the resources the server lists.
    pub resources: Vec<String>,
    /// The `tools/list` entries as discovery read them, for the tool-call gate of every
    /// later session.
    pub listing: Vec<Value>,
}

impl Surface {
    /// Sorts tools into allowed and forbidden by the policy and their annotations.
    pub fn add_tools(&mut self, tools: &[Value], policy: ToolPolicy, allow_destructive: bool) {
        self.listing.extend_from_slice(tools);
        for t in tools {
            let Some(name) = t.get("name").and_then(Value::as_str) else {
                continue;
            };
            let flag = |k: &str| {
                t.pointer(&format!("/annotations/{k}"))
                    .and_then(Value::as_bool)
            };
            let allowed = match policy {
                ToolPolicy::None => false,
                ToolPolicy::Readonly => flag("readOnlyHint") == Some(true),
                ToolPolicy::All => true,
            } && (allow_destructive || flag("destructiveHint") != Some(true));
            if allowed {
                let schema = t.get("inputSchema").cloned().unwrap_or(json!({}));
                self.tools.push((name.to_owned(), schema));
            } else {
                self.forbidden_tools.insert(name.to_owned());
            }
        }
    }

    fn declares(&self, cap: &str) -> bool {
        self.capabilities.get(cap).is_some_and(|c| !c.is_null())
    }

    /// Whether the server declared the capability a method belongs to.
    pub fn serves(&self, method: &str) -> bool {
        match method.split('/').next().unwrap_or_default() {
            "tools" => self.declares("tools"),
            "resources" => self.declares("resources"),
            "prompts" => self.declares("prompts"),
            "logging" => self.declares("logging"),
            "completion" => self.declares("completions") || self.declares("prompts"),
            "tasks" => self.declares("tasks"),
            _ => true,
        }
    }
}

/// Ids with a history of breaking servers; each is used at most once per process.
const EDGE_IDS: &[&str] = &[
    "0",
    "-1",
    "9223372036854775807",
    "-9223372036854775808",
    "9007199254740993",
    "\"\"",
    "\" \"",
    "\"0\"",
    "\"null\"",
    "\"\\u0000\"",
    "\"ид-запроса\"",
    "\"\u{1f600}\"",
    "\"a\\nb\"",
    "\"\\\"quoted\\\"\"",
];

/// Makes cases for one revision and server surface.
#[derive(Debug)]
pub struct Generator<'a> {
    schema: &'a SchemaSet,
    values: ValueGen<'a>,
    surface: &'a Surface,
    /// Requests the server is expected to serve, and the rest of the method table.
    served: Vec<String>,
    unserved: Vec<String>,
    notifications: Vec<String>,
    next_id: u64,
    /// Progress tokens handed out: every request that carries one gets a fresh one (a
    /// token reused across requests makes a correct server's progress look wrong).
    next_token: u64,
    used: HashSet<RequestId>,
    /// Ids of requests sent in this process, for cancellations.
    recent: Vec<Value>,
    /// Messages that were answered with a result, replayed with mutations.
    corpus: Vec<Value>,
    /// Writes are HTTP POST bodies: no stream-only mutations, and no second `initialize`
    /// (over HTTP it opens a new session rather than testing the one in progress).
    over_http: bool,
}

impl<'a> Generator<'a> {
    /// The server's `tools/list` entries as discovery read them.
    pub fn tool_listing(&self) -> &'a [Value] {
        &self.surface.listing
    }

    /// A generator of cases for `schema`'s methods, aimed at what `surface` declares.
    pub fn new(schema: &'a SchemaSet, surface: &'a Surface) -> Self {
        let methods = schema.methods();
        let (served, unserved): (Vec<String>, Vec<String>) = methods
            .client_requests
            .keys()
            .filter(|m| *m != "initialize")
            .cloned()
            .partition(|m| surface.serves(m));
        Generator {
            schema,
            values: ValueGen::new(schema.root()),
            surface,
            served,
            unserved,
            notifications: methods
                .client_notifications
                .keys()
                .filter(|m| *m != "notifications/initialized")
                .cloned()
                .collect(),
            next_id: 1000,
            next_token: 0,
            used: HashSet::new(),
            recent: Vec::new(),
            corpus: Vec::new(),
            over_http: false,
        }
    }

    /// Cases for an HTTP server (see the `over_http` field).
    pub fn over_http(mut self, yes: bool) -> Self {
        self.over_http = yes;
        self
    }

    /// Every request method of the revision (minus `initialize`), for coverage.
    pub fn methods(&self) -> impl Iterator<Item = &String> {
        self.served.iter().chain(&self.unserved)
    }

    /// A new server process: ids may be used again.
    pub fn new_process(&mut self) {
        self.used.clear();
        self.recent.clear();
    }

    /// Remembers a message the server answered with a result, for mutation later.
    pub fn remember(&mut self, message: Value) {
        if self.corpus.len() < 256 {
            self.corpus.push(message);
        }
    }

    /// A fresh id: usually a counter, sometimes an edge case not yet used in this process.
    fn id(&mut self, rng: &mut Rng) -> Value {
        if rng.random_bool(0.15) {
            let unused: Vec<&str> = EDGE_IDS
                .iter()
                .copied()
                .filter(|raw| {
                    let v: Value = serde_json::from_str(raw).unwrap_or(Value::Null);
                    !self.used.contains(&id_of(&v))
                })
                .collect();
            if let Some(raw) = unused.choose(rng) {
                let v: Value = serde_json::from_str(raw).unwrap_or(Value::Null);
                self.used.insert(id_of(&v));
                return v;
            }
        }
        loop {
            self.next_id += 1;
            let n = self.next_id;
            let v = match rng.random_range(0..4) {
                0 => json!(format!("fz-{n}")),
                1 => json!(-(n as i64)),
                _ => json!(n),
            };
            if self.used.insert(id_of(&v)) {
                return v;
            }
        }
    }

    /// One case: 1 to 6 writes, a random walk through the session.
    pub fn case(&mut self, rng: &mut Rng) -> Vec<Wire> {
        let n = rng.random_range(1..=6);
        let mut out = Vec::new();
        for _ in 0..n {
            let roll = rng.random_range(0..100);
            match roll {
                0..45 => {
                    let shape = if rng.random_bool(0.4) {
                        Shape::Valid
                    } else {
                        *Shape::ALL.choose(rng).unwrap_or(&Shape::Valid)
                    };
                    let msg = self.request(shape, rng);
                    out.push(Wire::line(&msg, shape.name()));
                }
                45..60 => out.push(self.notification(rng)),
                60..65 => out.push(self.cancellation()),
                65..70 => {
                    // Unknown methods, and a second initialize.
                    let msg = if self.over_http || rng.random_bool(0.5) {
                        let id = self.id(rng);
                        json!({"jsonrpc": "2.0", "id": id, "method": format!("mcpcheck/{}", word(6, rng))})
                    } else {
                        let id = self.id(rng);
                        json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
                            "protocolVersion": self.schema.revision.as_str(),
                            "capabilities": {}, "clientInfo": {"name": "mcpcheck-fuzz", "version": "0"}}})
                    };
                    out.push(Wire::line(&msg, "valid"));
                }
                _ => {
                    let base = match self.corpus.choose(rng).cloned() {
                        Some(mut m) if rng.random_bool(0.5) => {
                            m["id"] = self.id(rng);
                            if let Some(token) = m.pointer_mut("/params/_meta/progressToken") {
                                *token = json!(self.progress_token());
                            }
                            m
                        }
                        _ => self.request(Shape::Valid, rng),
                    };
                    out.extend(if self.over_http {
                        mutate::mutate_body(&base, rng)
                    } else {
                        mutate::mutate(&base, rng)
                    });
                }
            }
        }
        out
    }

    /// A request for a method of the table (mostly ones the server serves).
    pub fn request(&mut self, shape: Shape, rng: &mut Rng) -> Value {
        let method = if self.unserved.is_empty() || rng.random_bool(0.9) {
            self.served.choose(rng).cloned()
        } else {
            self.unserved.choose(rng).cloned()
        }
        .unwrap_or_else(|| "ping".to_owned());
        let id = self.id(rng);
        let params = self.params(&method, shape, rng);
        self.recent.push(id.clone());
        let mut msg = Map::new();
        msg.insert("jsonrpc".into(), json!("2.0"));
        msg.insert("id".into(), id);
        msg.insert("method".into(), json!(method));
        if let Some(p) = params {
            msg.insert("params".into(), p);
        }
        Value::Object(msg)
    }

    fn params(&mut self, method: &str, shape: Shape, rng: &mut Rng) -> Option<Value> {
        match method {
            "tools/call" => return Some(self.tool_call(shape, rng)),
            "prompts/get" if !self.surface.prompts.is_empty() && shape == Shape::Valid => {
                let name = self
                    .surface
                    .prompts
                    .choose(rng)
                    .cloned()
                    .unwrap_or_default();
                return Some(json!({"name": name, "arguments": {"name": word(5, rng)}}));
            }
            "resources/read" | "resources/subscribe" | "resources/unsubscribe"
                if !self.surface.resources.is_empty() && shape == Shape::Valid =>
            {
                let uri = self
                    .surface
                    .resources
                    .choose(rng)
                    .cloned()
                    .unwrap_or_default();
                return Some(json!({"uri": uri}));
            }
            _ => {}
        }
        let (def, _) = self.schema.methods().client_requests.get(method)?;
        let params_schema = self.schema.definition(def)?.pointer("/properties/params")?;
        let v = self.values.generate(params_schema, shape, rng);
        // No params at all is how most list requests are sent.
        if v.as_object().is_some_and(Map::is_empty) && rng.random_bool(0.5) {
            return None;
        }
        Some(v)
    }

    /// A progress token no request of this run has carried. The width is fixed, so a
    /// syntax mutation that deletes a digit cannot turn one token into another.
    fn progress_token(&mut self) -> String {
        self.next_token += 1;
        format!("fz-progress-{:010}", self.next_token)
    }

    fn tool_call(&mut self, shape: Shape, rng: &mut Rng) -> Value {
        let token = self.progress_token();
        let Some((name, schema)) = self.surface.tools.choose(rng).cloned() else {
            // No tool may be called: an unknown name still exercises the error path.
            return json!({"name": "mcpcheck-no-such-tool", "arguments": {}});
        };
        let arguments = self.values.generate(&schema, shape, rng);
        json!({"name": name, "arguments": arguments, "_meta": {"progressToken": token}})
    }

    fn notification(&mut self, rng: &mut Rng) -> Wire {
        let method = self
            .notifications
            .choose(rng)
            .cloned()
            .unwrap_or_else(|| "notifications/roots/list_changed".into());
        let params = match method.as_str() {
            "notifications/cancelled" => {
                let id = self.recent.choose(rng).cloned().unwrap_or(json!(999_999));
                Some(json!({"requestId": id, "reason": "mcpcheck fuzz"}))
            }
            "notifications/progress" => {
                Some(json!({"progressToken": word(6, rng), "progress": rng.random_range(0..100)}))
            }
            _ => None,
        };
        let mut msg = json!({"jsonrpc": "2.0", "method": method});
        match (params, rng.random_range(0..4)) {
            (Some(p), _) => msg["params"] = p,
            // Notifications carry no id, so nothing needs correlating: the place for
            // nesting past any parser's limit.
            (None, 0) => {
                let mut p = Map::new();
                p.insert("deep".into(), deep_value(rng.random_range(200..2000), rng));
                msg["params"] = Value::Object(p);
            }
            _ => {}
        }
        Wire::line(&msg, "notification")
    }

    fn cancellation(&mut self) -> Wire {
        let id = self.recent.last().cloned().unwrap_or(json!("fz-unknown"));
        let msg = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "mcpcheck fuzz"}});
        Wire::line(&msg, "cancellation")
    }
}

fn id_of(v: &Value) -> RequestId {
    match v {
        Value::String(s) => RequestId::String(s.clone()),
        Value::Number(n) => RequestId::Number(n.to_string()),
        other => RequestId::String(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Revision;
    use crate::schema::{Origin, SchemaStore, SearchPath, test_dir};
    use rand::SeedableRng;

    /// Progress tokens MUST be unique across active requests (basic/utilities/progress);
    /// a fuzzer that reuses one makes a correct server's progress look like a defect.
    #[test]
    fn every_request_carries_a_fresh_progress_token() {
        // Deeply nested notification params need more than a test thread's stack.
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(fresh_tokens)
            .expect("thread")
            .join()
            .expect("no token reused");
    }

    fn fresh_tokens() {
        let store = SchemaStore::new(SearchPath {
            dirs: vec![(test_dir::schema_dir(), Origin::Flag)],
        });
        let set = store.get(Revision::V2025_11_25);
        let set = set
            .as_ref()
            .as_ref()
            .expect("the 2025-11-25 schema in the tests' schema directory");
        let mut surface = Surface {
            capabilities: json!({"tools": {}}),
            ..Surface::default()
        };
        let echo = json!({"name": "echo", "inputSchema": {"type": "object",
            "properties": {"message": {"type": "string"}}}});
        surface.add_tools(&[echo], ToolPolicy::All, true);
        let mut generator = Generator::new(set, &surface);
        let mut rng = Rng::seed_from_u64(7);
        let mut seen = HashSet::new();
        for _ in 0..800 {
            let case = generator.case(&mut rng);
            let stream: Vec<u8> = case.iter().flat_map(|w| w.bytes.clone()).collect();
            for line in stream.split(|&b| b == b'\n') {
                let Ok(v) = serde_json::from_slice::<Value>(line) else {
                    continue;
                };
                if v.get("id").is_none() {
                    continue;
                }
                if let Some(t) = v.pointer("/params/_meta/progressToken")
                    && (t.is_string() || t.is_number())
                {
                    assert!(seen.insert(t.to_string()), "progress token {t} reused");
                }
                // As if answered with a result: the corpus replays it with mutations.
                if v.get("method").and_then(Value::as_str) == Some("tools/call") {
                    generator.remember(v);
                }
            }
        }
        assert!(seen.len() > 100, "only {} tokens carried", seen.len());
    }
}
