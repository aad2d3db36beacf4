//! The scenario model: what a scenario file says, after parsing and validation.
//!
//! One file is one scenario. The format is documented with examples in
//! `scenarios/README.md` and published as a JSON Schema (`scenarios/scenario.schema.json`)
//! for editors. This module is the contract between the parser (`scenario::parse`) and the
//! executor (`scenario::run`): types here make wrong scenarios unrepresentable, so the
//! executor never re-validates.

pub mod http;

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use crate::check::Severity;
use crate::protocol::Revision;

/// A parsed scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// Stable id, `area/name` (lower-case, digits, `-`), e.g. `lifecycle/initialize-result`.
    pub id: String,
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
    pub steps: Vec<Step>,
    /// Where the scenario came from, for messages (`scenarios/lifecycle/x.yaml`, or
    /// `builtin:lifecycle/x.yaml`).
    pub source: String,
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

impl std::fmt::Display for Requirement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.declared {
            f.write_str("!")?;
        }
        f.write_str(&self.capability)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TransportKind {
    Stdio,
    Http,
}

/// One step. Every step carries the line it starts on, for messages.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub line: usize,
    pub kind: StepKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StepKind {
    /// The handshake (`initialize` -> result -> `notifications/initialized`), with optional
    /// overrides; `Initialize::None` skips it, to test pre-initialization behaviour.
    Initialize(Initialize),
    /// Sends a request and (unless `expect` is `None`) checks its response.
    Request(RequestStep),
    /// Sends a notification.
    Notify {
        method: Template,
        params: Option<Template>,
    },
    /// Sends bytes exactly as given (after `${var}` interpolation), without framing.
    SendRaw(Template),
    /// Waits for a server-initiated message or event.
    Expect(Expectation),
    /// Several requests sent back to back before any response is read; responses may
    /// arrive in any order and each is matched by id.
    Concurrent(Vec<RequestStep>),
    /// Runs `steps` once per element of a captured list (those matching `filter`), binding
    /// it to `as`. With no element to run on, the scenario has nothing to check: it is
    /// skipped (unless something already failed).
    ForEach {
        list: String,
        bind: String,
        filter: Vec<Check>,
        steps: Vec<Step>,
    },
    /// Applies checks to a value built from variables (`${tool}`): per-item rules that no
    /// single response carries, such as a tool's name format or a content's encoding.
    Check {
        value: Template,
        checks: Vec<Check>,
    },
    /// Follows `nextCursor` through a list method, collecting the items under `key`
    /// into the variable `into`; detects cursor loops.
    Paginate {
        method: String,
        key: String,
        into: String,
        params: Option<Template>,
    },
    Sleep(Duration),
    /// One raw HTTP exchange with the server's endpoint (`scenario::http_step`).
    Http(Box<http::HttpStep>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Initialize {
    /// Skip the handshake entirely.
    None,
    Handshake(InitializeOverrides),
}

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

#[derive(Clone, Debug, PartialEq)]
pub struct RequestStep {
    pub method: Template,
    pub params: Option<Template>,
    /// An explicit id (to test id echo); otherwise mcpcheck allocates one.
    pub id: Option<Value>,
    pub expect: Option<ResponseExpectation>,
    /// Variables set from the response: name -> JSON pointer into the response message
    /// (`/result/tools`).
    pub capture: BTreeMap<String, String>,
    pub line: usize,
}

/// What the response to a request must look like.
#[derive(Clone, Debug, PartialEq)]
pub enum ResponseExpectation {
    /// A result, with matchers on JSON pointers into it.
    Result(Vec<Check>),
    /// An error; `codes` lists the acceptable codes (empty: any code).
    Error { codes: Vec<i64>, checks: Vec<Check> },
    /// Either a result or an error (only the checks apply).
    Any(Vec<Check>),
    /// At least one of these alternatives holds (a spec that allows either an error or an
    /// `isError` result, say).
    OneOf(Vec<ResponseExpectation>),
    /// No response at all within the window (for notifications sent as requests, say).
    Nothing(Duration),
}

/// Waiting for something the server does on its own.
#[derive(Clone, Debug, PartialEq)]
pub enum Expectation {
    /// A notification with this method within the window, matching the checks.
    Notification {
        method: String,
        within: Duration,
        checks: Vec<Check>,
        /// No such notification means the server does not exercise the rule (no tool
        /// reports progress, say): the scenario is skipped rather than failed.
        skip_if_absent: bool,
    },
    /// No message at all (of the listed methods, or of any kind when empty) within the window.
    Nothing {
        within: Duration,
        methods: Vec<String>,
    },
    /// The server process exits within the window (optionally with a code).
    Exit { within: Duration, code: Option<i32> },
    /// The server's stderr (stdio only; over HTTP there is none to read, and the scenario
    /// is skipped): some line matches `pattern` within the window (`present`), or after
    /// the window nothing written since the start does (`!present`: no panic report, say).
    Stderr {
        within: Duration,
        /// A regular expression (Rust `regex` syntax), checked when parsed.
        pattern: String,
        present: bool,
    },
    /// A response to a request sent with `send_raw`, identified by its id (`null` allowed).
    Response {
        id: Value,
        within: Duration,
        expect: ResponseExpectation,
    },
}

/// One matcher applied at a JSON pointer.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// JSON pointer into the value under test (`""` = the whole value).
    pub pointer: String,
    pub matcher: Matcher,
    pub line: usize,
}

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
        min: Option<usize>,
        max: Option<usize>,
    },
    /// Equal to one of these values.
    OneOf(Vec<Template>),
    /// A number within the bounds (inclusive).
    Range { min: Option<f64>, max: Option<f64> },
    /// Valid against a definition of the session revision's schema.
    Schema(String),
    /// The pointer resolves (true) or does not (false).
    Exists(bool),
    /// An object with exactly one of these members (`text` xor `blob`, say).
    ExactlyOne(Vec<String>),
    /// A string that is (true) or is not (false) valid standard base64 with padding.
    Base64(bool),
    /// A value that is (true) or is not (false) a valid JSON Schema (checked against its
    /// metaschema, 2020-12 unless `$schema` names another draft).
    JsonSchema(bool),
    /// Valid against the JSON Schema this renders to (a tool's `outputSchema`, say).
    ConformsTo(Template),
    /// All of these hold.
    All(Vec<Matcher>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonType {
    Null,
    Boolean,
    Number,
    Integer,
    String,
    Array,
    Object,
}

/// A JSON value that may contain `${name}` or `${name/json/pointer}` references to
/// captured variables and built-ins (`${revision}`, `${tool.name}` inside `for_each`).
/// A string that is exactly one reference is replaced by the variable's value with its
/// JSON type; references inside longer strings are replaced by their text.
#[derive(Clone, Debug, PartialEq)]
pub struct Template(pub Value);
