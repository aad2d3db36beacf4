//! How a finding usually comes about, and what fixes it: the part of `mcpcheck explain`
//! that is advice rather than the spec. Keyed by rule id, then by the area of a rule or
//! scenario id (its first segment), so every id gets at least its area's advice.

/// Advice for one rule id or area.
struct Causes {
    key: &'static str,
    causes: &'static [&'static str],
}

/// Rule ids first (exact), then areas (the first segment of an id, before `.` or `/`).
const TABLE: &[Causes] = &[
    Causes {
        key: "stdio.stdout-only-messages",
        causes: &[
            "A print or log call writes to stdout: log to stderr instead (Python: \
             logging.basicConfig(stream=sys.stderr); Node: console.error, never console.log).",
            "A launcher (npm start, uv run, a shell wrapper) prints a banner: start the \
             server directly or silence the launcher (npm start --silent).",
        ],
    },
    Causes {
        key: "stdio.stdout-flushed",
        causes: &[
            "stdout is block-buffered when it is a pipe: flush after every message \
             (Python: print(..., flush=True) or sys.stdout.flush(); C: fflush).",
        ],
    },
    Causes {
        key: "stdio.exit-on-stdin-close",
        causes: &[
            "The server keeps a thread, timer or child process alive after stdin ends: \
             treat end of input as the signal to shut down.",
        ],
    },
    Causes {
        key: "jsonrpc.id-echoed",
        causes: &[
            "The id is converted on the way (a string id parsed as a number, a big integer \
             rounded through a float): keep the request's id exactly as it came.",
        ],
    },
    Causes {
        key: "jsonrpc.method-not-found-code",
        causes: &[
            "An unknown method is answered with a generic error (-32603 or -32600): \
             answer -32601 Method not found.",
        ],
    },
    Causes {
        key: "jsonrpc.response-required",
        causes: &[
            "A handler raised and the error was swallowed: every request needs a result \
             or an error response, even when the handler fails.",
            "The request was mistaken for a notification because of its id (0, or a \
             string): only a message without `id` is a notification.",
        ],
    },
    Causes {
        key: "schema.valid",
        causes: &[
            "A required field is missing or has the wrong type (content without `type`, \
             a tool without `inputSchema`): compare the frame with the named definition \
             of the schema for the negotiated revision.",
            "A field of a newer revision is sent to an older client, or the reverse: \
             shape results by the negotiated protocol version.",
        ],
    },
    Causes {
        key: "lifecycle.version-negotiation",
        causes: &[
            "The server answers with the version it was asked for even when it does not \
             support it: answer with a version it supports (its latest) instead.",
            "The server hard-codes one version: keep a list of supported revisions.",
        ],
    },
    Causes {
        key: "progress.increasing",
        causes: &[
            "Progress is reported from concurrent tasks without ordering: make `progress` \
             strictly increase for each token.",
        ],
    },
    Causes {
        key: "pagination.terminates",
        causes: &[
            "The cursor is never exhausted (the last page still has `nextCursor`): omit \
             `nextCursor` on the last page.",
        ],
    },
    Causes {
        key: "stdio",
        causes: &[
            "stdout carries only newline-delimited JSON-RPC messages; everything else \
             (logs, banners, progress bars) belongs on stderr.",
        ],
    },
    Causes {
        key: "jsonrpc",
        causes: &[
            "Hand-written JSON-RPC handling: use the SDK's dispatcher, or check each \
             response for `jsonrpc: \"2.0\"`, the request's id, and exactly one of \
             `result` and `error`.",
        ],
    },
    Causes {
        key: "lifecycle",
        causes: &[
            "The handshake is handled outside the SDK, or capabilities are declared that \
             no handler serves (or served without being declared): declare exactly what \
             the server implements.",
        ],
    },
    Causes {
        key: "tools",
        causes: &[
            "A tool's error is raised as a JSON-RPC error: tool execution errors belong in \
             the result with `isError: true`; protocol errors (unknown tool, invalid \
             arguments where the spec says so) are JSON-RPC errors.",
            "`inputSchema` or `outputSchema` is not a valid JSON Schema object, or \
             `structuredContent` does not match `outputSchema`.",
        ],
    },
    Causes {
        key: "resources",
        causes: &[
            "An unknown URI is answered with an empty result instead of the \
             resource-not-found error, or a template URI does not follow RFC 6570.",
        ],
    },
    Causes {
        key: "prompts",
        causes: &[
            "A missing required argument is filled with a default instead of being \
             answered with -32602 Invalid params.",
        ],
    },
    Causes {
        key: "http",
        causes: &[
            "A framework default answers instead of the MCP handler (405 or 404 pages, \
             text/html errors): route POST, GET and DELETE of the endpoint to the \
             transport, and answer with the status codes the transport page names.",
        ],
    },
    Causes {
        key: "stateless",
        causes: &[
            "A 2026-07-28 request is handled as if a session existed: read the version \
             and capabilities from each request's `_meta`, answer `server/discover`, \
             and stamp every result with `resultType`.",
        ],
    },
    Causes {
        key: "auth",
        causes: &[
            "The server accepts a token without checking its audience, expiry or scope, \
             or its 401 lacks `WWW-Authenticate` with the resource metadata URL.",
        ],
    },
    Causes {
        key: "tasks",
        causes: &[
            "Task support is declared but `tasks/get`, `tasks/result` or `tasks/cancel` \
             do not follow the task's status, or an unknown task id is not -32602.",
        ],
    },
    Causes {
        key: "client",
        causes: &[
            "The client sends requests its peer did not offer, or skips a step of the \
             handshake or the transport: compare the flagged frame with the client \
             requirements of the named spec section.",
        ],
    },
];

/// The usual causes of a finding under `id` (a rule or scenario id): the rule's own
/// advice, else its area's; empty when mcpcheck has none to give.
pub fn usual_causes(id: &str) -> &'static [&'static str] {
    let area = id.split(['.', '/']).next().unwrap_or(id);
    TABLE
        .iter()
        .find(|c| c.key == id)
        .or_else(|| TABLE.iter().find(|c| c.key == area))
        .map_or(&[], |c| c.causes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_gets_its_own_advice_then_its_areas() {
        assert!(usual_causes("stdio.stdout-only-messages")[0].contains("stderr"));
        assert_eq!(usual_causes("stdio.utf8"), usual_causes("stdio"));
        assert_eq!(usual_causes("tools/call-result"), usual_causes("tools"));
        assert!(usual_causes("nothing.here").is_empty());
    }

    #[test]
    fn every_rule_key_is_a_rule_in_the_catalogue() {
        for c in TABLE.iter().filter(|c| c.key.contains('.')) {
            assert!(super::super::rules::by_id(c.key).is_some(), "{}", c.key);
        }
    }
}
