//! Findings: what a server did wrong, the rule it broke and where the spec says so.

use serde::Serialize;

use crate::protocol::Revision;

/// A rule of the spec that a server can break.
#[derive(Debug, PartialEq, Eq)]
pub struct Rule {
    /// Stable id, `area.name`.
    pub id: &'static str,
    /// Failure for a MUST, warning for a SHOULD: as the newest revision words it.
    pub severity: Severity,
    /// Where the wording changed between revisions: `(first revision, severity)` pairs,
    /// oldest first (a SHOULD that became a MUST). Empty: `severity` in every revision.
    pub severities: &'static [(Revision, Severity)],
    /// Where the spec states the rule: `(first revision, page#anchor)` pairs, oldest
    /// first, because sections moved between revisions (`basic/messages` became `basic`).
    pub sections: &'static [(Revision, &'static str)],
    /// The rule in one line.
    pub summary: &'static str,
}

impl Rule {
    /// The section for `revision`: the newest entry not later than it (or the first).
    pub fn section(&self, revision: Revision) -> &'static str {
        self.sections
            .iter()
            .rev()
            .find(|(since, _)| *since <= revision)
            .or(self.sections.first())
            .map(|(_, s)| *s)
            .unwrap_or("")
    }

    /// The severity in `revision`: the newest entry of `severities` not later than it,
    /// else `severity`.
    pub fn severity_at(&self, revision: Revision) -> Severity {
        self.severities
            .iter()
            .rev()
            .find(|(since, _)| *since <= revision)
            .map_or(self.severity, |(_, s)| *s)
    }

    /// The spec URL for this rule in `revision`.
    pub fn url(&self, revision: Revision) -> String {
        revision.spec_url(self.section(revision))
    }
}

/// How much a broken rule matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing, not a violation (a negotiated-down version, say).
    Info,
    /// A SHOULD (or SHOULD NOT) of the spec was broken.
    Warning,
    /// A MUST (or MUST NOT) of the spec, or its schema, was broken.
    Failure,
}

impl Severity {
    /// The lowercase name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Failure => "failure",
        }
    }
}

/// One broken rule, pinned to the message that broke it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// Stable id of the rule, e.g. `stdio.stdout-only-messages`, or a scenario's rule.
    pub rule: String,
    /// How much it matters (the rule's in the session's revision).
    pub severity: Severity,
    /// What happened, in one sentence.
    pub message: String,
    /// Link to the spec section behind the rule, for the session's revision.
    pub spec: String,
    /// Index of the offending entry in the session transcript.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame: Option<usize>,
    /// JSON pointer into the offending message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// What was expected instead (a schema definition and path, a value).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// Evidence quoted from the server (a stdout line, stderr tail).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    /// What kind of failure it was, where that matters to a program (the fuzzer judging a
    /// replay): typed, so no one matches on the message.
    #[serde(skip)]
    pub cause: Option<Cause>,
}

/// The kinds of failure a program tells apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cause {
    /// The server ended (exited, closed its output) or its input closed.
    ServerGone {
        /// Whether it was already gone at the handshake (`initialize`).
        at_handshake: bool,
    },
    /// A request got no response in time (the session's timeout).
    Timeout,
    /// A scenario's request got no response within the scenario's window.
    Unanswered,
    /// The server's stderr matched a pattern it must not match.
    StderrMatch,
}

impl Finding {
    /// A finding of `rule` in a session speaking `revision`.
    pub fn new(rule: &Rule, revision: Revision, message: impl Into<String>) -> Self {
        Finding {
            rule: rule.id.to_owned(),
            severity: rule.severity_at(revision),
            message: message.into(),
            spec: rule.url(revision),
            frame: None,
            pointer: None,
            expected: None,
            evidence: None,
            cause: None,
        }
    }

    /// A finding of a rule defined outside the catalogue (a scenario's).
    pub fn custom(
        rule: impl Into<String>,
        severity: Severity,
        spec: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Finding {
            rule: rule.into(),
            severity,
            message: message.into(),
            spec: spec.into(),
            frame: None,
            pointer: None,
            expected: None,
            evidence: None,
            cause: None,
        }
    }

    /// Marks what kind of failure this is.
    pub fn cause(mut self, cause: Cause) -> Self {
        self.cause = Some(cause);
        self
    }

    /// Pins the finding to transcript entry `frame`.
    pub fn at_frame(mut self, frame: usize) -> Self {
        self.frame = Some(frame);
        self
    }

    /// Points into the offending message.
    pub fn pointer(mut self, pointer: impl Into<String>) -> Self {
        self.pointer = Some(pointer.into());
        self
    }

    /// Says what was expected instead.
    pub fn expected(mut self, expected: impl Into<String>) -> Self {
        self.expected = Some(expected.into());
        self
    }

    /// Quotes the server's evidence.
    pub fn evidence(mut self, evidence: impl Into<String>) -> Self {
        self.evidence = Some(evidence.into());
        self
    }
}
