//! The catalogue of rules mcpcheck checks, each with its spec section.
//!
//! Ids are stable: reports, baselines and scenario files refer to them.

use super::Severity;
use crate::protocol::Revision;

/// A rule of the spec that a server can break.
#[derive(Debug, PartialEq, Eq)]
pub struct Rule {
    pub id: &'static str,
    pub severity: Severity,
    /// Page and anchor under the revision's specification, e.g. `basic/transports#stdio`.
    pub section: &'static str,
    /// The rule in one line.
    pub summary: &'static str,
}

impl Rule {
    /// The spec URL for this rule in `revision`.
    pub fn url(&self, revision: Revision) -> String {
        if self.section.starts_with("https://") {
            self.section.to_owned()
        } else {
            revision.spec_url(self.section)
        }
    }
}

macro_rules! rules {
    ($($name:ident = $id:literal, $sev:ident, $section:literal, $summary:literal;)*) => {
        $(
            #[doc = $summary]
            pub const $name: Rule = Rule { id: $id, severity: Severity::$sev, section: $section, summary: $summary };
        )*
        /// Every rule, for `mcpcheck rules` and for checking ids in baselines.
        pub const ALL: &[&Rule] = &[$(&$name),*];
    };
}

rules! {
    STDIO_NEWLINE = "stdio.newline-delimited", Failure, "basic/transports#stdio",
        "Messages are delimited by newlines and must not contain embedded newlines.";
    STDIO_STDOUT_ONLY_MESSAGES = "stdio.stdout-only-messages", Failure, "basic/transports#stdio",
        "The server must not write anything to stdout that is not a valid MCP message.";
    STDIO_UTF8 = "stdio.utf8", Failure, "basic/transports",
        "JSON-RPC messages must be UTF-8 encoded.";
    STDIO_UNTERMINATED = "stdio.unterminated-message", Warning, "basic/transports#stdio",
        "Each message should end with a newline; the stream ended inside one.";
    FRAME_TOO_LARGE = "harness.frame-too-large", Warning, "basic/transports#stdio",
        "A line exceeded the configured maximum frame size (--max-frame-size) and was skipped.";
    STDIO_SHUTDOWN = "stdio.exit-on-stdin-close", Warning, "basic/lifecycle#shutdown",
        "After the client closes its input, the server should exit before the client has to send SIGTERM.";

    JSONRPC_MESSAGE = "jsonrpc.message-shape", Failure, "basic#messages",
        "Every message must be a JSON-RPC 2.0 request, notification or response object.";
    JSONRPC_VERSION = "jsonrpc.version", Failure, "basic#messages",
        "Every message must carry `\"jsonrpc\": \"2.0\"`.";
    JSONRPC_RESULT_XOR_ERROR = "jsonrpc.result-xor-error", Failure, "basic#responses",
        "A response carries either `result` or `error`, never both, never neither.";
    JSONRPC_ERROR_SHAPE = "jsonrpc.error-object", Failure, "basic#responses",
        "An error must have an integer `code` and a string `message`.";
    JSONRPC_ID_TYPE = "jsonrpc.id-type", Failure, "basic#requests",
        "Ids must be strings or integers, and requests must not use null.";
    JSONRPC_ID_ECHOED = "jsonrpc.id-echoed", Failure, "basic#responses",
        "A response must carry exactly the id of the request it answers, same type and value.";
    JSONRPC_UNKNOWN_ID = "jsonrpc.response-matches-request", Failure, "basic#responses",
        "A response must answer a request the client sent and has not yet been answered.";
    JSONRPC_BATCH = "jsonrpc.batch-allowed", Failure, "basic#batching",
        "JSON-RPC batches exist only in revision 2025-03-26; other revisions send single messages.";
    JSONRPC_RESPONSE_REQUIRED = "jsonrpc.response-required", Failure, "basic#responses",
        "Every request must be answered with a response.";

    SCHEMA_VALID = "schema.valid", Failure, "schema",
        "Every message must match the official schema of the negotiated revision.";
    SCHEMA_KNOWN_METHOD = "schema.known-method", Warning, "schema",
        "Notifications and requests the server sends should be ones the revision defines.";

    LIFECYCLE_VERSION = "lifecycle.version-negotiation", Failure, "basic/lifecycle#version-negotiation",
        "The server answers with the requested version if it supports it, otherwise with another version it supports.";
    LIFECYCLE_VERSION_DOWNGRADE = "lifecycle.version-downgraded", Info, "basic/lifecycle#version-negotiation",
        "The server does not support the requested revision and answered with another one.";
    LIFECYCLE_UNDECLARED_CLIENT_CAPABILITY = "lifecycle.client-capability-respected", Failure, "basic/lifecycle#operation",
        "The server must only use client features (roots, sampling, elicitation) the client declared.";
    LIFECYCLE_REQUEST_BEFORE_INITIALIZED = "lifecycle.no-requests-before-initialized", Warning, "basic/lifecycle#initialization",
        "Before `notifications/initialized` the server should send only pings and logging.";
    SESSION_EXITED = "session.server-exited", Failure, "basic/lifecycle#operation",
        "The server process ended during the session, before the client shut it down.";
    SESSION_TIMEOUT = "session.request-timeout", Failure, "basic/lifecycle#timeouts",
        "The server did not answer a request within the configured timeout.";
    PAGINATION_TERMINATES = "pagination.terminates", Failure, "server/utilities/pagination",
        "Following `nextCursor` must reach the end of a list; a cursor must not lead back to an earlier page.";
    SESSION_NOT_READING = "session.reads-input", Failure, "basic/transports#stdio",
        "The server must read the messages the client writes to its stdin.";
}

/// Looks a rule up by id.
pub fn by_id(id: &str) -> Option<&'static Rule> {
    ALL.iter().copied().find(|r| r.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_well_formed() {
        let mut ids: Vec<_> = ALL.iter().map(|r| r.id).collect();
        ids.sort();
        let before = ids.len();
        ids.dedup();
        assert_eq!(before, ids.len(), "duplicate rule id");
        for r in ALL {
            assert!(r.id.split('.').count() == 2 && r.id.chars().all(|c| c.is_ascii_lowercase() || c == '.' || c == '-'), "{}", r.id);
            assert!(!r.section.is_empty() && r.summary.ends_with('.'), "{}", r.id);
        }
    }
}
