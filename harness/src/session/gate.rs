//! The tool-call gate: the one place that decides whether a `tools/call` may leave.
//!
//! Real tools have side effects, and running one is the user's choice (`--call-tools`,
//! `--tool-args`, `--profile official-fixture`: a [`CallGrant`]). Every byte a session
//! writes passes [`ToolGate::admit`] first: requests the session builds, raw `send` bytes,
//! fuzz mutations, and the bodies of raw `http` and `auth` exchanges ([`super::RawHttp`]).
//! So a new step type cannot call a tool the user did not allow: it has no other way out.
//!
//! The gate learns the server's tools from every `tools/list` result the session reads,
//! since `readonly` is decided by a tool's `readOnlyHint` annotation, and a name the
//! server's complete list does not have names no tool (calling it runs nothing: that is
//! how unknown-tool handling is checked under any policy but `none`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, MutexGuard};

use serde_json::Value;

use crate::outcome::{CallGrant, Forbidden, OFFICIAL_FIXTURE_TOOLS, ToolPolicy};
use crate::protocol::tool_call::{ToolCall, quotes_name, tool_calls};

/// A `tools/call` the gate kept from leaving.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The tool, as far as the bytes tell.
    pub tool: String,
    /// What forbids it.
    pub why: Forbidden,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "tools/call `{}` not sent: {}", self.tool, self.why)
    }
}

/// Why the gate let a call through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Admission {
    /// The server's complete tool list has no such tool: nothing runs.
    NoSuchTool,
    /// The name is no string: no server can look a tool up by it.
    Nameless,
    /// The user gave the tool its arguments.
    OptedIn,
    /// An official fixture tool, allowed by `--profile official-fixture`.
    Fixture,
    /// The policy allows the tool as annotated.
    Policy,
}

/// Which page of `tools/list` a response answers, for knowing when the list is whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum ListPage {
    /// The first page (no cursor sent).
    First,
    /// The page after this cursor.
    After(String),
    /// A request mcpcheck did not build (raw bytes): its cursor is unknown.
    Unknown,
}

/// A session's tool-call gate (see the module doc).
#[derive(Debug)]
pub struct ToolGate {
    grant: CallGrant,
    /// The server's `tools/list` entries read so far, by name.
    listed: BTreeMap<String, Value>,
    /// Cursors whose page continues a list read from its first page.
    awaited: BTreeSet<String>,
    /// A list was read from its first page to its last: `listed` is the server's list.
    complete: bool,
    /// Calls let through only as official fixture tools (the summary counts them).
    fixture_calls: u32,
}

impl ToolGate {
    /// A gate enforcing `grant`, knowing no tool yet.
    pub fn new(grant: CallGrant) -> Self {
        ToolGate {
            grant,
            listed: BTreeMap::new(),
            awaited: BTreeSet::new(),
            complete: false,
            fixture_calls: 0,
        }
    }

    /// Takes in one `tools/list` result, the answer to `page`.
    pub(super) fn learn(&mut self, page: &ListPage, result: &Value) {
        let tools = result.get("tools").and_then(Value::as_array);
        for tool in tools.into_iter().flatten() {
            if let Some(name) = tool.get("name").and_then(Value::as_str) {
                self.listed.insert(name.to_owned(), tool.clone());
            }
        }
        let continues = match page {
            ListPage::First => true,
            ListPage::After(cursor) => self.awaited.contains(cursor),
            ListPage::Unknown => false,
        };
        if continues {
            match result.get("nextCursor").and_then(Value::as_str) {
                Some(next) => {
                    self.awaited.insert(next.to_owned());
                }
                None => self.complete = true,
            }
        }
    }

    /// Lets `bytes` leave if every `tools/call` in them is allowed; the first refused
    /// call otherwise. Nothing is counted unless all of them pass.
    pub fn admit(&mut self, bytes: &[u8]) -> Result<(), Refused> {
        self.fixture_calls += self.judge(bytes)?;
        Ok(())
    }

    /// What [`admit`](Self::admit) would decide, without counting: the number of calls
    /// that pass only as official fixture tools, or the first refused call.
    pub fn judge(&self, bytes: &[u8]) -> Result<u32, Refused> {
        let calls = tool_calls(bytes);
        let mut fixture = 0;
        for call in &calls {
            let admitted = match call {
                ToolCall::Named(name) => self.check(name).map_err(|why| Refused {
                    tool: name.clone(),
                    why,
                })?,
                ToolCall::Nameless => self.nameless()?,
                ToolCall::Unreadable => self.unreadable(bytes)?,
            };
            fixture += u32::from(admitted == Admission::Fixture);
        }
        Ok(fixture)
    }

    /// Whether the grant allows calling `name` now.
    fn check(&self, name: &str) -> Result<Admission, Forbidden> {
        let policy = self.grant.policy;
        if policy == ToolPolicy::None {
            return Err(Forbidden::NoCalls);
        }
        let listed = self.listed.get(name);
        if self.complete && listed.is_none() {
            return Ok(Admission::NoSuchTool);
        }
        if self.grant.opted_in.contains(name) {
            return Ok(Admission::OptedIn);
        }
        match policy.forbids(listed) {
            None => Ok(Admission::Policy),
            Some(Forbidden::Destructive) if self.grant.allow_destructive => Ok(Admission::Policy),
            Some(Forbidden::NotReadOnly) if self.is_fixture_tool(name, listed) => {
                match self.grant.official_fixture {
                    true => Ok(Admission::Fixture),
                    false => Err(Forbidden::FixtureNotAsked),
                }
            }
            Some(why) => Err(why),
        }
    }

    /// An official fixture tool the server lists and does not mark destructive.
    fn is_fixture_tool(&self, name: &str, listed: Option<&Value>) -> bool {
        let destructive = listed
            .and_then(|t| t.pointer("/annotations/destructiveHint"))
            .and_then(Value::as_bool)
            == Some(true);
        OFFICIAL_FIXTURE_TOOLS.contains(&name) && listed.is_some() && !destructive
    }

    fn nameless(&self) -> Result<Admission, Refused> {
        match self.grant.policy {
            ToolPolicy::None => Err(Refused {
                tool: "(no name)".into(),
                why: Forbidden::NoCalls,
            }),
            _ => Ok(Admission::Nameless),
        }
    }

    /// Garbled text mentioning `tools/call`: refused when it quotes a listed tool the
    /// grant forbids, or when the gate does not know the server's whole list (then any
    /// quoted word may be a tool) and the policy is not `all`.
    fn unreadable(&self, bytes: &[u8]) -> Result<Admission, Refused> {
        let refuse = |tool: &str, why| Refused {
            tool: tool.to_owned(),
            why,
        };
        if self.grant.policy == ToolPolicy::None {
            return Err(refuse("(unreadable)", Forbidden::NoCalls));
        }
        for name in self.listed.keys() {
            if quotes_name(bytes, name)
                && let Err(why) = self.check(name)
            {
                return Err(refuse(name, why));
            }
        }
        if !self.complete && self.grant.policy != ToolPolicy::All {
            return Err(refuse("(unreadable)", Forbidden::Unreadable));
        }
        Ok(Admission::Policy)
    }

    /// Calls let through only because the user took the server for the official fixture.
    pub fn fixture_calls(&self) -> u32 {
        self.fixture_calls
    }
}

/// The gate behind its lock (a panic while it was held leaves it as it was: its state is
/// only ever replaced whole).
pub(super) fn lock(gate: &Mutex<ToolGate>) -> MutexGuard<'_, ToolGate> {
    gate.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    fn call(name: &str) -> Vec<u8> {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name}})
            .to_string()
            .into_bytes()
    }

    fn listing() -> Value {
        json!({"tools": [
            {"name": "read", "annotations": {"readOnlyHint": true}},
            {"name": "write"},
            {"name": "wipe", "annotations": {"destructiveHint": true}},
            {"name": "test_simple_text"},
        ]})
    }

    fn gate(grant: CallGrant) -> ToolGate {
        let mut gate = ToolGate::new(grant);
        gate.learn(&ListPage::First, &listing());
        gate
    }

    fn why(gate: &mut ToolGate, name: &str) -> Option<Forbidden> {
        gate.admit(&call(name)).err().map(|r| r.why)
    }

    #[test]
    fn readonly_calls_only_tools_annotated_read_only() {
        let mut g = gate(CallGrant::of(ToolPolicy::Readonly));
        assert_eq!(why(&mut g, "read"), None);
        assert_eq!(why(&mut g, "write"), Some(Forbidden::NotReadOnly));
        assert_eq!(why(&mut g, "wipe"), Some(Forbidden::NotReadOnly));
    }

    #[test]
    fn none_refuses_every_call_even_of_unknown_tools() {
        let mut g = gate(CallGrant::of(ToolPolicy::None));
        assert_eq!(why(&mut g, "read"), Some(Forbidden::NoCalls));
        assert_eq!(why(&mut g, "no_such_tool"), Some(Forbidden::NoCalls));
        let nameless = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#;
        assert!(g.admit(nameless).is_err());
    }

    #[test]
    fn all_still_spares_destructive_tools() {
        let mut g = gate(CallGrant::of(ToolPolicy::All));
        assert_eq!(why(&mut g, "write"), None);
        assert_eq!(why(&mut g, "wipe"), Some(Forbidden::Destructive));
    }

    #[test]
    fn a_name_the_whole_list_lacks_runs_nothing_and_passes() {
        let mut g = gate(CallGrant::of(ToolPolicy::Readonly));
        assert_eq!(why(&mut g, "no_such_tool"), None);
        // Before the list is known, an unknown name may be a tool.
        let mut blind = ToolGate::new(CallGrant::of(ToolPolicy::Readonly));
        assert_eq!(
            why(&mut blind, "no_such_tool"),
            Some(Forbidden::NotReadOnly)
        );
    }

    #[test]
    fn a_list_is_whole_only_when_read_from_its_first_page() {
        let mut g = ToolGate::new(CallGrant::of(ToolPolicy::Readonly));
        let last = json!({"tools": [{"name": "write"}]});
        g.learn(&ListPage::After("c1".into()), &last);
        assert_eq!(why(&mut g, "elsewhere"), Some(Forbidden::NotReadOnly));
        g.learn(&ListPage::First, &json!({"tools": [], "nextCursor": "c1"}));
        assert_eq!(why(&mut g, "elsewhere"), Some(Forbidden::NotReadOnly));
        g.learn(&ListPage::After("c1".into()), &last);
        assert_eq!(why(&mut g, "elsewhere"), None);
        let mut raw = ToolGate::new(CallGrant::of(ToolPolicy::Readonly));
        raw.learn(&ListPage::Unknown, &last);
        assert_eq!(why(&mut raw, "elsewhere"), Some(Forbidden::NotReadOnly));
    }

    #[test]
    fn fixture_tools_need_the_official_fixture_profile_and_are_counted() {
        let mut g = gate(CallGrant::of(ToolPolicy::Readonly));
        assert_eq!(
            why(&mut g, "test_simple_text"),
            Some(Forbidden::FixtureNotAsked)
        );
        let mut g = gate(CallGrant {
            official_fixture: true,
            ..CallGrant::of(ToolPolicy::Readonly)
        });
        assert_eq!(why(&mut g, "test_simple_text"), None);
        assert_eq!(why(&mut g, "read"), None);
        assert_eq!(g.fixture_calls(), 1, "only the fixture call counts");
        assert_eq!(why(&mut g, "write"), Some(Forbidden::NotReadOnly));
    }

    #[test]
    fn user_arguments_opt_a_tool_in_but_not_past_none() {
        let grant = |policy| CallGrant {
            opted_in: Arc::new(BTreeSet::from(["wipe".to_owned()])),
            ..CallGrant::of(policy)
        };
        assert_eq!(why(&mut gate(grant(ToolPolicy::Readonly)), "wipe"), None);
        assert_eq!(why(&mut gate(grant(ToolPolicy::All)), "wipe"), None);
        assert_eq!(
            why(&mut gate(grant(ToolPolicy::None)), "wipe"),
            Some(Forbidden::NoCalls)
        );
    }

    #[test]
    fn every_call_in_a_batch_must_pass_and_a_refusal_counts_nothing() {
        let mut g = gate(CallGrant {
            official_fixture: true,
            ..CallGrant::of(ToolPolicy::Readonly)
        });
        let batch = format!(
            "[{},{}]",
            String::from_utf8(call("test_simple_text")).unwrap(),
            String::from_utf8(call("write")).unwrap()
        );
        let refused = g.admit(batch.as_bytes()).unwrap_err();
        assert_eq!(refused.tool, "write");
        assert_eq!(g.fixture_calls(), 0);
    }

    #[test]
    fn garbled_text_quoting_a_forbidden_tool_is_refused() {
        let mut g = gate(CallGrant::of(ToolPolicy::Readonly));
        let cut = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"write""#;
        assert_eq!(g.admit(cut).unwrap_err().tool, "write");
        let harmless = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read""#;
        assert!(g.admit(harmless).is_ok());
        let mut blind = ToolGate::new(CallGrant::of(ToolPolicy::Readonly));
        assert_eq!(
            blind.admit(harmless).unwrap_err().why,
            Forbidden::Unreadable
        );
    }

    #[test]
    fn other_messages_always_pass() {
        let mut g = gate(CallGrant::of(ToolPolicy::None));
        assert!(
            g.admit(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#)
                .is_ok()
        );
        assert!(g.admit(b"garbage").is_ok());
    }

    /// The gate is the only way out only if nothing else sends: outside the transport
    /// (which sends what the session already admitted) and `RawHttp::execute`, no code
    /// may reach the HTTP client or send a request it built. Schema downloads have a
    /// client of their own, for the spec repository, never for the server.
    #[test]
    fn nothing_sends_around_the_gate() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut offenders = Vec::new();
        let mut stack = vec![src.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).expect("the source tree is readable") {
                let path = entry.expect("a directory entry").path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                let rel = path
                    .strip_prefix(&src)
                    .expect("under src")
                    .to_string_lossy()
                    .into_owned();
                if rel.starts_with("transport/") || path.extension() != Some("rs".as_ref()) {
                    continue;
                }
                let text = std::fs::read_to_string(&path).expect("a source file is readable");
                // The whole file but its unit tests (by this crate's habit, the last item).
                let code = text
                    .split("#[cfg(test)]\nmod tests")
                    .next()
                    .unwrap_or_default();
                let allowed: &[&str] = match rel.as_str() {
                    "session/raw_http.rs" => &[".client()"],
                    "schema/fetch.rs" => &["reqwest::Client", ".send().await"],
                    _ => &[],
                };
                for needle in [
                    ".client()",
                    "reqwest::Client",
                    ".send().await",
                    "Client::new",
                ] {
                    if code.contains(needle) && !allowed.contains(&needle) {
                        offenders.push(format!("{rel}: `{needle}`"));
                    }
                }
            }
        }
        assert!(
            offenders.is_empty(),
            "requests sent around the tool-call gate: {offenders:?}"
        );
    }
}
