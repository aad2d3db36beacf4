//! Client scenarios (`scenarios/client/`): mcpcheck plays a scripted server and judges the
//! client under test. The same language as server scenarios with the roles turned around:
//! a step waits for a request from the client, answers it, holds it open to send the
//! client requests of its own, and checks what the client answers.

use std::time::Duration;

use serde_json::Value;

use super::Check;
use crate::outcome::Severity;
use crate::protocol::Revision;
use crate::session::mock::{Answer, Serves};

/// A parsed client scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientScenario {
    /// Stable id, `client/name`.
    pub id: String,
    /// One line saying what it checks.
    pub title: String,
    /// Spec section behind it.
    pub spec: String,
    /// Revisions it applies to.
    pub revisions: Vec<Revision>,
    /// Transports it applies to (HTTP details are HTTP's only).
    pub transports: Vec<crate::transport::target::TransportKind>,
    /// `must` -> a broken expectation is a failure; `should` -> a warning.
    pub severity: Severity,
    /// Ids of the official suite's client scenarios it stands for.
    pub official: Vec<String>,
    /// The scenario name the client is told (`MCP_CONFORMANCE_SCENARIO`): an official one
    /// whose client flow makes the traffic this scenario judges, since SDK conformance
    /// clients know only those (`tell`, else the first official id).
    pub tell: String,
    /// The rule its own findings are filed under (defaults to the id).
    pub rule: Option<String>,
    /// Client capabilities the client must declare in `initialize` (or, negated, must
    /// not); otherwise the scenario is skipped, since the mock must not use them.
    pub requires: Vec<super::Requirement>,
    /// `MCP_CONFORMANCE_CONTEXT` for the client, if the scenario gives one.
    pub context: Option<Value>,
    /// What the mock server serves.
    pub serves: Serves,
    /// The authorization server in front of the mock (HTTP only): the client must get a
    /// token before its messages reach the steps.
    pub auth: Option<crate::session::mock::auth::AuthSetup>,
    /// What it does, in order.
    pub steps: Vec<ClientStep>,
    /// Where it came from, for messages.
    pub source: String,
}

impl ClientScenario {
    /// The rule its own findings are filed under.
    pub fn rule_id(&self) -> &str {
        self.rule.as_deref().unwrap_or(&self.id)
    }

    /// The link to its spec section under `revision`.
    pub fn spec_url(&self, revision: Revision) -> String {
        if self.spec.starts_with("https://") {
            self.spec.clone()
        } else {
            revision.spec_url(&self.spec)
        }
    }
}

/// One step, with the line it starts on.
#[derive(Clone, Debug, PartialEq)]
pub struct ClientStep {
    /// The line of the step's first key.
    pub line: usize,
    /// What it does.
    pub kind: ClientStepKind,
}

/// What a client step does.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientStepKind {
    /// Waits for a request or notification from the client (what comes meanwhile gets the
    /// default answer), checks it, and answers a request.
    Receive(Receive),
    /// Sends the client a request on the held request's stream and checks its answer.
    Send(Send),
    /// Closes the held request's stream before its answer, after an event with `retry`;
    /// the `respond` that follows answers on the GET that resumes it.
    Disconnect(Disconnect),
    /// Answers the held request, ending its stream.
    Respond(Answer),
}

/// `disconnect: { retry, within }`.
#[derive(Clone, Debug, PartialEq)]
pub struct Disconnect {
    /// The `retry` field sent before closing.
    pub retry: Duration,
    /// How long to wait for the resuming GET; `None`: the run's timeout.
    pub within: Option<Duration>,
}

/// `receive: "*"`: whatever request comes next.
pub const ANY_REQUEST: &str = "*";

/// `receive: METHOD`.
#[derive(Clone, Debug, PartialEq)]
pub struct Receive {
    /// The method awaited, or [`ANY_REQUEST`].
    pub method: String,
    /// Only a message passing these checks is taken; others get the default answer.
    pub filter: Vec<Check>,
    /// Checks on the whole message.
    pub expect: Vec<Check>,
    /// How a request is answered.
    pub reply: ReplyPlan,
    /// How long to wait; `None`: the run's timeout.
    pub within: Option<Duration>,
    /// What it means when nothing comes.
    pub otherwise: Otherwise,
}

/// What a `receive` that gets nothing means.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Otherwise {
    /// The client broke the scenario's rule (the default).
    #[default]
    Fail,
    /// `otherwise: skip`: the client need not send it (a MAY), so there is nothing to
    /// judge and the scenario is skipped.
    Skip,
}

impl Receive {
    /// Whether `incoming` is what this step awaits (before its `match` filter).
    pub fn takes(&self, incoming: &crate::session::mock::Incoming) -> bool {
        match self.method.as_str() {
            ANY_REQUEST => matches!(incoming.message, crate::protocol::Message::Request(_)),
            method => incoming.method() == Some(method),
        }
    }
}

/// How a received request is answered.
#[derive(Clone, Debug, PartialEq)]
pub enum ReplyPlan {
    /// What the mock serves answers it.
    Default,
    /// This answer.
    Answer(Answer),
    /// Held open as an SSE stream for `send` steps, until a `respond` step answers it.
    Hold,
    /// HTTP 404: the server ended the session, and the client is to start a new one.
    Expire,
}

/// `send: METHOD`.
#[derive(Clone, Debug, PartialEq)]
pub struct Send {
    /// The request's method.
    pub method: String,
    /// Its params.
    pub params: Value,
    /// Checks on the client's response (`/result/...`, `/error/...`).
    pub expect: Vec<Check>,
    /// How long to wait for the response; `None`: the run's timeout.
    pub within: Option<Duration>,
}
