//! The tool-call policy against this server's tool list: which `tools/call` the scenario
//! may send, since real tools have side effects.

use serde_json::Value;

use super::Executor;
use crate::outcome::Forbidden;
use crate::outcome::ToolPolicy;
use crate::scenario::synth::TOOL_ARGS;

impl Executor<'_> {
    /// Records listed tools; `complete` when the list has no further page.
    pub(super) fn remember_tools(&mut self, tools: &[Value], complete: bool) {
        self.tools_listed |= complete;
        for t in tools {
            if let Some(name) = t.get("name").and_then(Value::as_str) {
                self.tools.insert(name.to_owned(), t.clone());
            }
        }
    }

    /// Why the policy forbids calling `name`, if it does. A name the server's tool list
    /// (already fetched) does not have names no tool, so calling it has no side effect:
    /// that is how unknown-tool handling is tested under any policy but `none`.
    pub(super) fn forbidden(&self, name: &str) -> Option<Forbidden> {
        if self.tools_listed && !self.tools.contains_key(name) && self.policy != ToolPolicy::None {
            return None;
        }
        // The user gave arguments for this tool: they opted in to calling it.
        let user_given = self
            .vars
            .get(TOOL_ARGS)
            .is_some_and(|m| m.get(name).is_some());
        if user_given && self.policy != ToolPolicy::None {
            return None;
        }
        // The official suite's fixture tools: side-effect free by that suite's contract.
        let fixture = crate::scenario::official::callable(name, self.tools.get(name));
        if fixture && self.policy != ToolPolicy::None {
            return None;
        }
        self.policy.forbids(self.tools.get(name))
    }
}
