//! The scenario model: what a scenario file says, after parsing and validation.
//!
//! One file is one scenario. The format is documented with examples in
//! `scenarios/README.md` and published as a JSON Schema (`scenarios/scenario.schema.json`)
//! for editors. This module is the contract between the parser (`scenario::parse`) and the
//! executor (`scenario::exec`): types here make wrong scenarios unrepresentable, so the
//! executor never re-validates.

pub mod auth;
pub mod client;
pub mod http;

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use crate::outcome::Severity;
use crate::protocol::Revision;
use crate::transport::target::TransportKind;

/// A parsed scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// Stable id, `area/name` (lower-case, digits, `-`), e.g. `lifecycle/initialize-result`.
    pub id: String,
    /// One line saying what it checks.
    pub title: String,
    /// Spec section behind the scenario, e.g. `basic/lifecycle#version-negotiation`;
    /// linked under the session's revision. A full `https://` URL is kept as is.
    pub spec: String,
    /// Revisions it applies to; on others it is skipped with that reason.
    pub revisions: Vec<Revision>,
    /// Transports it applies to.
    pub transports: Vec<TransportKind>,
    /// Server capabilities the server must declare (or, negated, must not); otherwise the
    /// scenario is skipped.
    pub requires: Vec<Requirement>,
    /// `must` -> a broken expectation is a failure; `should` -> a warning.
    pub severity: Severity,
    /// Ids of scenarios in the official suite (`@modelcontextprotocol/conformance`) that
    /// check the same rule, for coverage accounting.
    pub official: Vec<String>,
    /// The rule id reported when an expectation fails (defaults to the scenario id).
    pub rule: Option<String>,
    /// `fresh: true`: always run on a server of its own, even where the runner would judge
    /// its steps safe to run on a session shared with other scenarios (`scenario::share`).
    pub fresh: bool,
    /// What it does, in order.
    pub steps: Vec<Step>,
    /// Where the scenario came from, for messages (`scenarios/lifecycle/x.yaml`, or
    /// `builtin:lifecycle/x.yaml`).
    pub source: String,
}

impl Scenario {
    /// The rule its own findings are filed under: `rule`, else its id.
    pub fn rule_id(&self) -> &str {
        self.rule.as_deref().unwrap_or(&self.id)
    }

    /// Whether its judgement at `revision` can differ from that at `base`, so that a
    /// differential leg at `revision` runs it: it applies at `revision` and not at `base`
    /// (a 2025-03-26 batch, a 2025-06-18 header), or its rule is held at another level
    /// there (a SHOULD that became a MUST).
    pub fn differs_at(&self, revision: Revision, base: Revision) -> bool {
        if !self.revisions.contains(&revision) {
            return false;
        }
        if !self.revisions.contains(&base) {
            return true;
        }
        crate::check::rules::by_id(self.rule_id())
            .is_some_and(|rule| rule.severity_at(revision) != rule.severity_at(base))
    }

    /// The negotiation check this scenario consists of, if it is a `negotiate` scenario:
    /// such a scenario opens only fresh sessions of its own making (one per version it
    /// asks), never a session for its steps.
    pub fn negotiation(&self) -> Option<crate::check::negotiation::NegotiationCheck> {
        match self.steps.as_slice() {
            [
                Step {
                    kind: StepKind::Negotiate(check),
                    ..
                },
            ] => Some(*check),
            _ => None,
        }
    }

    /// The link to the spec section behind this scenario, for `revision`: a full URL as
    /// written, else the section under that revision's specification.
    pub fn spec_url(&self, revision: Revision) -> String {
        if self.spec.starts_with("https://") {
            self.spec.clone()
        } else {
            revision.spec_url(&self.spec)
        }
    }
}

/// A condition on the server's declared capabilities: `tools`, `resources.subscribe`, or
/// negated `!tools` (for checks of what a server without the capability does).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    /// A top-level key of `capabilities`, or a dotted sub-key like `resources.subscribe`.
    pub capability: String,
    /// `false` for `!capability`: the server must *not* declare it.
    pub declared: bool,
}

impl Requirement {
    /// Whether `capabilities` (the server's, from `initialize`) meets this condition. A
    /// sub-key set to `false` counts as not declared.
    pub fn met_by(&self, capabilities: &Value) -> bool {
        let mut path = self.capability.split('.');
        let top = path.next().unwrap_or_default();
        let mut cap = capabilities.get(top);
        for sub in path {
            cap = cap
                .and_then(|c| c.get(sub))
                .filter(|v| !matches!(v, Value::Bool(false)));
        }
        let declared = !cap.is_none_or(Value::is_null);
        declared == self.declared
    }

    /// Why a scenario with this requirement does not apply to a server with
    /// `capabilities`, or `None` when it is met.
    pub fn unmet(&self, capabilities: &Value) -> Option<String> {
        (!self.met_by(capabilities)).then(|| match self.declared {
            true => format!("the server does not declare `{}`", self.capability),
            false => format!(
                "the server declares `{}` (this checks servers without it)",
                self.capability
            ),
        })
    }
}

impl std::fmt::Display for Requirement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.declared {
            f.write_str("!")?;
        }
        f.write_str(&self.capability)
    }
}

/// One step. Every step carries the line it starts on, for messages.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The line of the step's first key in its file.
    pub line: usize,
    /// What the step does.
    pub kind: StepKind,
}

/// What a step does: one per step key of the scenario format.
#[derive(Clone, Debug, PartialEq)]
pub enum StepKind {
    /// The handshake (`initialize` -> result -> `notifications/initialized`), with optional
    /// overrides; `Initialize::None` skips it, to test pre-initialization behaviour.
    Initialize(Initialize),
    /// Sends a request and (unless `expect` is `None`) checks its response.
    Request(RequestStep),
    /// Sends a notification.
    Notify {
        /// The notification's method.
        method: Template,
        /// Its params, if any.
        params: Option<Template>,
    },
    /// Sends bytes exactly as given (after `${var}` interpolation), without framing.
    SendRaw(Template),
    /// Waits for a server-initiated message or event.
    Expect(Expectation),
    /// Several requests sent back to back before any response is read; responses may
    /// arrive in any order and each is matched by id.
    Concurrent(Vec<RequestStep>),
    /// `count` requests of `method` (no params) in two writes of half each, each answer
    /// awaited; the server's resident memory is sampled between the halves and after
    /// (stdio, Linux), and the second half's growth per request judged.
    Burst {
        /// The method of every request.
        method: String,
        /// How many requests.
        count: usize,
    },
    /// Runs `steps` once per element of a captured list (those matching `filter`), binding
    /// it to `as`. With no element to run on, the scenario has nothing to check: it is
    /// skipped (unless something already failed).
    ForEach {
        /// The variable holding the list.
        list: String,
        /// The variable each element is bound to (`as:`).
        bind: String,
        /// Checks an element must pass to be run on (`where:`; empty: every element).
        filter: Vec<Check>,
        /// The body.
        steps: Vec<Step>,
    },
    /// Applies checks to a value built from variables (`${tool}`): per-item rules that no
    /// single response carries, such as a tool's name format or a content's encoding.
    Check {
        /// The value checked, built from variables.
        value: Template,
        /// What must hold of it.
        checks: Vec<Check>,
    },
    /// Follows `nextCursor` through a list method, collecting the items under `key`
    /// into the variable `into`; detects cursor loops, and pages that disagree on a
    /// member the spec makes list-wide (`same`).
    Paginate {
        /// The list method (`tools/list`).
        method: String,
        /// The result member holding each page's items (`tools`).
        key: String,
        /// The variable the whole list is stored in.
        into: String,
        /// Params sent with every page (besides `cursor`).
        params: Option<Template>,
        /// What an error answer to a page means (`on_error: next` beside the step: the
        /// spec does not require the method, as with `resources/templates/list`).
        on_error: OnError,
        /// JSON pointers into each page's result that must hold the first page's value on
        /// every later page (2026-07-28 caching: one `cacheScope` for all pages).
        same: Vec<String>,
    },
    /// Waits this long, still reading (and checking) what the server sends.
    Sleep(Duration),
    /// One raw HTTP exchange with the server's endpoint (`scenario::exec::http`).
    Http(Box<http::HttpStep>),
    /// One built-in authorization check of a protected HTTP server (`scenario::exec::auth`).
    Auth(auth::AuthCheck),
    /// One version-negotiation rule judged across fresh sessions
    /// (`scenario::exec::negotiate`). It opens its own sessions (over stdio a new server
    /// process each), so a scenario holding it has no session of its own: it is the
    /// scenario's only step (see [`Scenario::negotiation`]).
    Negotiate(crate::check::negotiation::NegotiationCheck),
}

/// The `initialize` step: the handshake, or a deliberate lack of one.
#[derive(Clone, Debug, PartialEq)]
pub enum Initialize {
    /// Skip the handshake entirely.
    None,
    /// The handshake, with these departures from the usual one.
    Handshake(InitializeOverrides),
}

/// How a scenario's handshake departs from the usual one, and what its result must show.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InitializeOverrides {
    /// Requested protocol version, if not the run's revision (may be a revision that does
    /// not exist, to test negotiation).
    pub protocol_version: Option<Template>,
    /// Client capabilities to declare instead of the default (none).
    pub capabilities: Option<Value>,
    /// Leave out `notifications/initialized`.
    pub skip_initialized: bool,
    /// Checks on the `initialize` result.
    pub expect: Option<ResponseExpectation>,
}

/// A request to send (a `request` step, or one of `concurrent`).
#[derive(Clone, Debug, PartialEq)]
pub struct RequestStep {
    /// The method (a template: `${...}` may build it).
    pub method: Template,
    /// Its params, if any.
    pub params: Option<Template>,
    /// An explicit id (to test id echo); otherwise mcpcheck allocates one.
    pub id: Option<Value>,
    /// Sent only when the server's capabilities meet these (`requires:` beside the
    /// request); otherwise left out, as if not written.
    pub requires: Vec<Requirement>,
    /// What the response must look like (none: any response will do).
    pub expect: Option<ResponseExpectation>,
    /// Variables set from the response: name -> JSON pointer into the response message
    /// (`/result/tools`).
    pub capture: BTreeMap<String, String>,
    /// What an error answer means for this step.
    pub on_error: OnError,
    /// What no answer within the timeout means for this step.
    pub on_timeout: OnTimeout,
    /// `answer_input:` beside the request: answer its `input_required` results and retry
    /// (multi round-trip requests, 2026-07-28); `expect` and `capture` then apply to the
    /// final response.
    pub answer_input: Option<AnswerInput>,
    /// The line it is written on.
    pub line: usize,
}

/// How a request step answers `input_required` results (2026-07-28 basic/patterns/mrtr):
/// the chosen input requests get mcpcheck's fixed answers, and the request is sent again
/// with `inputResponses` and the `requestState` echoed verbatim, under a new id.
#[derive(Clone, Debug, PartialEq)]
pub struct AnswerInput {
    /// How many rounds, and what each must look like.
    pub rounds: Rounds,
    /// Which of a round's input requests are answered.
    pub answer: AnswerKeys,
}

/// The rounds an `answer_input` step allows.
#[derive(Clone, Debug, PartialEq)]
pub enum Rounds {
    /// At most this many retries; a server still asking after them fails the step.
    AtMost(usize),
    /// Exactly these rounds: the i-th `input_required` result must pass the i-th checks
    /// (pointers into the result), and the retry after the last must complete.
    Exactly(Vec<Vec<Check>>),
}

/// Which input requests of an `input_required` result the retry answers. The keys are
/// the server's to choose ("keys are assigned by the server", basic/patterns/mrtr), so a
/// scenario names one only where the check it mirrors does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum AnswerKeys {
    /// Every one, as a client does.
    #[default]
    All,
    /// Only the first, in the server's order (whatever its key).
    First,
    /// Only those under these keys (the others go unanswered).
    Only(Vec<String>),
}

impl AnswerInput {
    /// `answer_input: true`: enough for any flow the spec shows, and a bound for a server
    /// that asks forever.
    pub const DEFAULT_ROUNDS: usize = 4;

    /// At most `n` retries, every input request answered.
    pub fn at_most(n: usize) -> Self {
        AnswerInput {
            rounds: Rounds::AtMost(n),
            answer: AnswerKeys::All,
        }
    }

    /// The most retries this allows.
    pub fn max_retries(&self) -> usize {
        match &self.rounds {
            Rounds::AtMost(n) => *n,
            Rounds::Exactly(rounds) => rounds.len(),
        }
    }

    /// The checks on the `input_required` result of round `i` (0-based), if any.
    pub fn round_checks(&self, i: usize) -> Option<&[Check]> {
        match &self.rounds {
            Rounds::AtMost(_) => None,
            Rounds::Exactly(rounds) => rounds.get(i).map(Vec::as_slice),
        }
    }

    /// How many `input_required` rounds must come before the complete result, if fixed.
    pub fn exact_rounds(&self) -> Option<usize> {
        match &self.rounds {
            Rounds::AtMost(_) => None,
            Rounds::Exactly(rounds) => Some(rounds.len()),
        }
    }
}

/// What a request step does with an error answer (`on_error:`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnError {
    /// Judged by `expect` like any answer.
    #[default]
    Judge,
    /// `on_error: next`: the spec allows an error here, so nothing is judged and the
    /// enclosing `for_each` goes on with its next item. A scenario whose every such
    /// request was answered with an error judged nothing and is skipped.
    Next,
}

/// What a request step does when no answer comes within the timeout (`on_timeout:`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnTimeout {
    /// A failure: the request MUST be answered.
    #[default]
    Fail,
    /// `on_timeout: next`: the enclosing `for_each` goes on with its next item, nothing
    /// judged. For a call sent without a progress token on purpose, where a tool slower
    /// than `--timeout` has no way to show it is alive (other scenarios judge hangs). A
    /// scenario whose every such request went unanswered is skipped.
    Next,
}

/// What the response to a request must look like.
#[derive(Clone, Debug, PartialEq)]
pub enum ResponseExpectation {
    /// A result, with matchers on JSON pointers into it.
    Result(Vec<Check>),
    /// An error; `codes` lists the acceptable codes (empty: any code).
    Error {
        /// The acceptable codes (empty: any code).
        codes: Vec<i64>,
        /// Checks on the error object (`code`, `message`, `data`).
        checks: Vec<Check>,
    },
    /// Either a result or an error (only the checks apply).
    Any(Vec<Check>),
    /// At least one of these alternatives holds (a spec that allows either an error or an
    /// `isError` result, say).
    OneOf(Vec<ResponseExpectation>),
    /// No response at all within the window (for notifications sent as requests, say).
    Nothing(Duration),
}

/// Where an `expect: nothing` starts looking (`since:`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Since {
    /// Only what arrives during the step's window (`since: window`, the default).
    #[default]
    Window,
    /// Also what arrived earlier in the scenario and no expectation took (`since: start`):
    /// a notification that came while an earlier request ran, before its response.
    Start,
}

/// Waiting for something the server does on its own.
#[derive(Clone, Debug, PartialEq)]
pub enum Expectation {
    /// A notification with this method within the window, matching the checks.
    Notification {
        /// The notification's method.
        method: String,
        /// How long to wait for it.
        within: Duration,
        /// What must hold of the whole notification message.
        checks: Vec<Check>,
        /// No such notification means the server does not exercise the rule (no tool
        /// reports progress, say): the scenario is skipped rather than failed.
        skip_if_absent: bool,
        /// A JSON pointer (`first_by`): no earlier notification may carry this one's value
        /// there (2026-07-28 subscriptions: the acknowledgment comes first on its stream).
        first_by: Option<String>,
    },
    /// A request from the server (one mcpcheck's session answered, as a client does) with
    /// this method within the window, matching the checks: the `sampling/createMessage` a
    /// tool sends while its call runs, say.
    Request {
        /// The request's method.
        method: String,
        /// How long to wait for it.
        within: Duration,
        /// What must hold of the whole request message.
        checks: Vec<Check>,
    },
    /// No message at all (of the listed methods, or of any kind when empty) within the window.
    Nothing {
        /// How long to watch.
        within: Duration,
        /// The methods that must not arrive (empty: no message of any kind).
        methods: Vec<String>,
        /// Where the watch starts: at the step, or at the scenario's start.
        since: Since,
    },
    /// The server process exits within the window (optionally with a code).
    Exit {
        /// How long after its input closes.
        within: Duration,
        /// The exit code it must end with, if one is required.
        code: Option<i32>,
    },
    /// The server's stderr (stdio only; over HTTP there is none to read, and the scenario
    /// is skipped): some line matches `pattern` within the window (`present`), or after
    /// the window nothing written since the start does (`!present`: no panic report, say).
    Stderr {
        /// How long to watch.
        within: Duration,
        /// A regular expression (Rust `regex` syntax), checked when parsed.
        pattern: String,
        /// Whether a matching line must appear (or must not).
        present: bool,
    },
    /// A response to a request sent with `send_raw`, identified by its id (`null` allowed).
    Response {
        /// The id of the raw request (a string, number or `null`).
        id: Value,
        /// How long to wait for it.
        within: Duration,
        /// What it must look like.
        expect: ResponseExpectation,
    },
}

/// One matcher applied at a JSON pointer.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// JSON pointer into the value under test (`""` = the whole value).
    pub pointer: String,
    /// What must hold there.
    pub matcher: Matcher,
    /// The line it is written on.
    pub line: usize,
}

/// What a value must be (`match:` entries; see `parse::MATCHERS` for their names).
#[derive(Clone, Debug, PartialEq)]
pub enum Matcher {
    /// Equal to this value (after `${var}` interpolation).
    Equals(Template),
    /// An object/array containing at least these members (recursively).
    Subset(Template),
    /// A string matching this regular expression.
    Regex(String),
    /// Of this JSON type.
    Type(JsonType),
    /// An array, string or object whose length is within the bounds.
    Length {
        /// The least length allowed.
        min: Option<usize>,
        /// The greatest length allowed.
        max: Option<usize>,
    },
    /// Equal to one of these values.
    OneOf(Vec<Template>),
    /// A number within the bounds (inclusive).
    Range {
        /// The least value allowed.
        min: Option<f64>,
        /// The greatest value allowed.
        max: Option<f64>,
    },
    /// Valid against a definition of the session revision's schema.
    Schema(String),
    /// The pointer resolves (true) or does not (false).
    Exists(bool),
    /// An object with exactly one of these members (`text` xor `blob`, say).
    ExactlyOne(Vec<String>),
    /// An object with no members but these (`[_meta]`: an empty result, `_meta` aside).
    OnlyKeys(Vec<String>),
    /// A string that is (true) or is not (false) valid standard base64 with padding.
    Base64(bool),
    /// A value that is (true) or is not (false) a valid JSON Schema (checked against its
    /// metaschema, 2020-12 unless `$schema` names another draft).
    JsonSchema(bool),
    /// Valid against the JSON Schema this renders to (a tool's `outputSchema`, say).
    ConformsTo(Template),
    /// An array or object in which each of these sets of checks is passed by some
    /// element (of an array) or member value (of an object), whatever its key: the
    /// `inputRequests` a server keyed as it chose, say.
    Contains(Vec<Vec<Check>>),
    /// An array or object no element (or member value) of which passes any of these sets
    /// of checks: no `elicitation/create` among the `inputRequests`, say.
    Excludes(Vec<Vec<Check>>),
    /// A non-empty array or object whose first element, or first member value in the
    /// order the server wrote it (whatever its key), passes these checks.
    First(Vec<Check>),
    /// An array whose elements all differ at this JSON pointer (`""`: the elements
    /// themselves); an element without a value there is ignored.
    Unique(String),
    /// All of these hold.
    All(Vec<Matcher>),
}

/// A JSON type, as JSON Schema names them (`integer`: a number without a fraction).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonType {
    /// `null`.
    Null,
    /// `true` or `false`.
    Boolean,
    /// Any number.
    Number,
    /// A number without a fractional part.
    Integer,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

/// A JSON value that may contain `${name}` or `${name/json/pointer}` references to
/// captured variables and built-ins (`${revision}`, `${tool.name}` inside `for_each`).
/// A string that is exactly one reference is replaced by the variable's value with its
/// JSON type; references inside longer strings are replaced by their text.
#[derive(Clone, Debug, PartialEq)]
pub struct Template(pub Value);
