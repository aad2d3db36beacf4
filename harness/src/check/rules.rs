//! The catalogue of rules mcpcheck checks, each with its spec section.
//!
//! Ids are stable: reports, baselines and scenario files refer to them.

use super::Severity;
use crate::protocol::Revision;

use crate::outcome::Rule;

use Revision::{
    V2024_11_05 as R1, V2025_03_26 as R2, V2025_06_18 as R3, V2025_11_25 as R4, V2026_07_28 as R5,
};

/// A row: `NAME = "id", Severity, [since => section, ...], "summary";`. A rule whose
/// wording changed between revisions gives its severity per revision after the newest one:
/// `Failure { R1 => Warning, R3 => Failure }` (a SHOULD until 2025-06-18 made it a MUST).
macro_rules! rules {
    ($($name:ident = $id:literal, $sev:ident $({$($sev_since:ident => $sev_then:ident),+})?, [$($since:ident => $section:literal),+], $summary:literal;)*) => {
        $(
            #[doc = $summary]
            pub const $name: Rule = Rule {
                id: $id,
                severity: Severity::$sev,
                severities: &[$($(($sev_since, Severity::$sev_then)),+)?],
                sections: &[$(($since, $section)),+],
                summary: $summary,
            };
        )*
        /// Every rule, for `mcpcheck list --rules` and for checking ids in baselines.
        pub const ALL: &[&Rule] = &[$(&$name),*];
    };
}

rules! {
    STDIO_NEWLINE = "stdio.newline-delimited", Failure, [R1 => "basic/transports#stdio", R5 => "basic/transports/stdio"],
        "Messages are delimited by newlines and must not contain embedded newlines.";
    STDIO_STDOUT_ONLY_MESSAGES = "stdio.stdout-only-messages", Failure, [R1 => "basic/transports#stdio", R5 => "basic/transports/stdio"],
        "The server must not write anything to stdout that is not a valid MCP message.";
    STDIO_UTF8 = "stdio.utf8", Failure, [R1 => "basic/transports", R5 => "basic/transports#messages"],
        "JSON-RPC messages must be UTF-8 encoded.";
    STDIO_UNTERMINATED = "stdio.unterminated-message", Warning, [R1 => "basic/transports#stdio", R5 => "basic/transports/stdio"],
        "Each message should end with a newline; the stream ended inside one.";
    FRAME_TOO_LARGE = "harness.frame-too-large", Warning, [R1 => "basic/transports#stdio", R5 => "basic/transports/stdio"],
        "A line exceeded the configured maximum frame size (--max-frame-size) and was skipped.";
    STDIO_FLUSHED = "stdio.stdout-flushed", Failure, [R1 => "basic/transports#stdio", R5 => "basic/transports/stdio"],
        "Messages reach stdout when they are written: answers that arrive only once stdin is closed sat in an unflushed buffer, so their requests went unanswered.";
    STDIO_SHUTDOWN = "stdio.exit-on-stdin-close", Warning, [R1 => "basic/lifecycle#stdio", R5 => "basic/transports/stdio#shutdown"],
        "After the client closes its input, the server should exit before the client has to send SIGTERM.";

    JSONRPC_MESSAGE = "jsonrpc.message-shape", Failure, [R1 => "basic/messages", R2 => "basic#messages"],
        "Every message must be a JSON-RPC 2.0 request, notification or response object.";
    META_KEY_NAME = "meta.key-name", Failure, [R3 => "basic#meta"],
        "`_meta` key names are an optional prefix (dot-separated labels, then `/`) and a name that begins and ends with a letter or digit.";
    JSONRPC_VERSION = "jsonrpc.version", Failure, [R1 => "basic/messages", R2 => "basic#messages"],
        "Every message must carry `\"jsonrpc\": \"2.0\"`.";
    JSONRPC_RESULT_XOR_ERROR = "jsonrpc.result-xor-error", Failure, [R1 => "basic/messages#responses", R2 => "basic#responses", R4 => "basic#result-responses"],
        "A response carries either `result` or `error`, never both, never neither.";
    JSONRPC_ERROR_SHAPE = "jsonrpc.error-object", Failure, [R1 => "basic/messages#responses", R2 => "basic#responses", R4 => "basic#error-responses"],
        "An error must have an integer `code` and a string `message`.";
    JSONRPC_ID_TYPE = "jsonrpc.id-type", Failure, [R1 => "basic/messages#requests", R2 => "basic#requests"],
        "Ids must be strings or integers, and requests must not use null.";
    JSONRPC_ID_ECHOED = "jsonrpc.id-echoed", Failure, [R1 => "basic/messages#responses", R2 => "basic#responses", R4 => "basic#result-responses"],
        "A response must carry exactly the id of the request it answers, same type and value.";
    JSONRPC_UNKNOWN_ID = "jsonrpc.response-matches-request", Failure, [R1 => "basic/messages#responses", R2 => "basic#responses", R4 => "basic#result-responses"],
        "A response must answer a request the client sent and has not yet been answered.";
    JSONRPC_BATCH = "jsonrpc.batch-allowed", Failure, [R1 => "basic/messages", R2 => "basic#batching", R3 => "changelog#major-changes"],
        "JSON-RPC batches were removed in 2025-06-18: from then on a server sends single messages (2024-11-05 is silent, 2025-03-26 has batches).";
    JSONRPC_NOTIFICATION_ID = "jsonrpc.notification-without-id", Failure, [R1 => "basic/messages#notifications", R2 => "basic#notifications"],
        "Notifications must not include an id: a `notifications/*` message with an `id` is a request nobody can answer sensibly.";
    JSONRPC_RESPONSE_REQUIRED = "jsonrpc.response-required", Failure, [R1 => "basic/messages#responses", R2 => "basic#responses", R4 => "basic#result-responses"],
        "Every request must be answered with a response.";

    JSONRPC_METHOD_NOT_FOUND = "jsonrpc.unknown-method-is-error", Failure, [R1 => "basic/messages#responses", R2 => "basic#responses", R4 => "basic#error-responses"],
        "A request for a method the server does not have must be answered with an error.";
    JSONRPC_RESERVED_ERROR_CODE = "jsonrpc.reserved-error-code", Failure, [R5 => "basic#error-codes"],
        "An error code in MCP's sub-range -32020 to -32099 must be one the specification defines, and -32002 and -32042 are no longer emitted.";
    JSONRPC_LEGACY_ERROR_CODE = "jsonrpc.legacy-error-code", Warning, [R5 => "basic#error-codes"],
        "New implementations should not use the legacy sub-range -32000 to -32019.";
    JSONRPC_UNALLOCATED_ERROR_CODE = "jsonrpc.unallocated-error-code", Warning, [R5 => "basic#error-codes"],
        "Error codes for purposes the specification does not define should lie outside the JSON-RPC reserved range -32768 to -32000.";
    JSONRPC_METHOD_NOT_FOUND_CODE = "jsonrpc.method-not-found-code", Warning, [R1 => "basic/messages", R2 => "basic#messages"],
        "An unknown method should be answered with -32601, the code JSON-RPC 2.0 (section 5.1) reserves for it.";

    SCHEMA_VALID = "schema.valid", Failure, [R1 => "schema"],
        "Every message must match the official schema of the negotiated revision.";
    SCHEMA_KNOWN_METHOD = "schema.known-method", Warning, [R1 => "schema"],
        "Notifications and requests the server sends should be ones the revision defines.";

    LIFECYCLE_VERSION = "lifecycle.version-negotiation", Failure, [R1 => "basic/lifecycle#version-negotiation", R5 => "basic/versioning"],
        "The server answers with the requested version if it supports it, otherwise with another version it supports.";
    LIFECYCLE_VERSION_DOWNGRADE = "lifecycle.version-downgraded", Info, [R1 => "basic/lifecycle#version-negotiation", R5 => "basic/versioning"],
        "The server does not support the requested revision and answered with another one.";
    LIFECYCLE_VERSION_UNKNOWN = "lifecycle.version-unknown", Info, [R1 => "basic/lifecycle#version-negotiation"],
        "The server answered with a version mcpcheck does not speak: allowed (any version it supports), so the session is judged as the requested revision.";
    STATELESS_DISCOVER = "stateless.discover", Failure, [R5 => "server/discover"],
        "2026-07-28: servers must implement `server/discover` and answer it with a DiscoverResult for a version they support.";
    STATELESS_RESULT_TYPE = "stateless.result-type", Failure, [R5 => "basic#resulttype"],
        "2026-07-28: every result carries `resultType`, one of the core values (`complete`, `input_required`) unless an advertised extension adds more.";
    STATELESS_NO_SERVER_REQUESTS = "stateless.no-server-requests", Failure, [R5 => "basic/patterns/mrtr"],
        "2026-07-28: servers send no JSON-RPC requests of their own; what they need from the client they ask for in an `input_required` result (multi round-trip requests).";
    STATELESS_CHANGE_NOTIFICATIONS_REQUESTED = "stateless.change-notifications-requested-only", Failure, [R5 => "basic/patterns/subscriptions#opening-a-stream"],
        "2026-07-28: change notifications (`notifications/*/list_changed`, `notifications/resources/updated`) go only to a `subscriptions/listen` stream that asked for them.";
    STATELESS_INPUT_REQUIRED = "stateless.input-required", Failure, [R5 => "basic/patterns/mrtr#server-requirements-basic-workflow"],
        "2026-07-28: an `input_required` result answers only `tools/call`, `prompts/get` or `resources/read`, carries `inputRequests` or `requestState`, and asks only for client features the request declared.";
    LOGGING_AT_OR_ABOVE_SET_LEVEL = "logging.at-or-above-set-level", Warning, [R1 => "server/utilities/logging#message-flow"],
        "After `logging/setLevel` is answered, the server sends `notifications/message` only at that level or above (the message flow's \"only sends error level and above\": should).";
    STATELESS_NO_CARRIED_CONTEXT = "stateless.no-carried-context", Failure, [R5 => "basic#statelessness"],
        "2026-07-28: a request is judged by its own `_meta`; the server does not carry client capabilities over from an earlier request on the connection.";
    TOOLS_X_MCP_HEADER = "tools.x-mcp-header-valid", Failure, [R5 => "server/tools#x-mcp-header"],
        "2026-07-28: an `x-mcp-header` annotation in a tool's inputSchema is a non-empty HTTP token, unique ignoring case, on an integer, string or boolean property reached from the root by `properties` keys alone.";
    STATELESS_SUBSCRIPTION_ID = "stateless.subscription-id", Failure, [R5 => "basic/patterns/subscriptions#receiving-notifications"],
        "2026-07-28: every notification of a subscription stream (its acknowledgment, each change notification) names in `_meta` the id of the `subscriptions/listen` request that opened it.";
    STATELESS_MISSING_CAPABILITY_ERROR = "stateless.missing-capability-error", Failure, [R5 => "basic#meta"],
        "2026-07-28: a request that needs a client capability it did not declare is refused with MissingRequiredClientCapabilityError (-32021), whose `data.requiredCapabilities` names the missing capabilities (none the request declared); over HTTP under status 400.";
    STATELESS_LOG_AT_OR_ABOVE_LEVEL = "stateless.log-at-or-above-level", Warning, [R5 => "server/utilities/logging#per-request-log-level"],
        "2026-07-28: log messages for a request are at or above the level its `_meta` asked for (the spec allows those; it gives no keyword for the rest: should).";
    STATELESS_LOG_REQUESTED_ONLY = "stateless.log-requested-only", Failure, [R5 => "server/utilities/logging#per-request-log-level"],
        "2026-07-28: no `notifications/message` for a request whose `_meta` does not set `io.modelcontextprotocol/logLevel`.";
    ELICITATION_MODE_DECLARED = "elicitation.mode-declared", Failure, [R4 => "client/elicitation#capabilities"],
        "The server asks for elicitation only in a mode the client declared (an empty `elicitation` object declares form mode only).";
    CANCELLATION_SERVER_OWN_REQUEST = "cancellation.server-own-request", Failure, [R1 => "basic/utilities/cancellation#behavior-requirements", R5 => "basic/patterns/cancellation#behavior-requirements"],
        "A server's `notifications/cancelled` names a request the server itself sent; at 2026-07-28, only a `subscriptions/listen` request whose stream it tears down.";
    SAMPLING_TOOLS_DECLARED = "sampling.tools-declared", Failure, [R4 => "client/sampling#tools-in-sampling"],
        "The server sends tool-enabled sampling requests only to a client that declared `sampling.tools`.";
    LIFECYCLE_UNDECLARED_CLIENT_CAPABILITY = "lifecycle.client-capability-respected", Failure { R1 => Warning, R3 => Failure }, [R1 => "basic/lifecycle#operation", R5 => "basic#meta"],
        "The server must only use client features (roots, sampling, elicitation) the client declared.";
    LIFECYCLE_REQUEST_BEFORE_INITIALIZED = "lifecycle.no-requests-before-initialized", Warning, [R1 => "basic/lifecycle#initialization"],
        "Before `notifications/initialized` the server should send only pings and logging.";
    LIFECYCLE_SERVER_CAPABILITY = "lifecycle.server-capability-respected", Failure { R1 => Warning, R3 => Failure }, [R1 => "basic/lifecycle#operation", R5 => "basic/patterns/subscriptions"],
        "The server only uses capabilities it declared: no `notifications/*/list_changed` without `listChanged`, no `notifications/message` without `logging` (a MUST from 2025-06-18, a SHOULD before).";
    PROGRESS_ACTIVE_TOKEN = "progress.active-token", Failure, [R1 => "basic/utilities/progress#behavior-requirements", R5 => "basic/patterns/progress"],
        "Progress notifications only reference the progressToken of a request still in progress.";
    PROGRESS_INCREASING = "progress.increasing", Failure, [R1 => "basic/utilities/progress#progress-flow", R5 => "basic/patterns/progress"],
        "The `progress` value increases with each notification for a token.";
    COMPLETION_VALUES_MAX = "completion.values-at-most-100", Failure, [R1 => "server/utilities/completion#completion-results"],
        "A completion result carries at most 100 values (the schema: values \"Must not exceed 100 items\").";
    COMPLETION_TOTAL = "completion.total-consistent", Warning, [R1 => "server/utilities/completion#completion-results"],
        "`total` counts every option available, so it is at least the values sent; `hasMore` says whether options beyond those sent exist.";
    SESSION_EXITED = "session.server-exited", Failure, [R1 => "basic/messages#responses", R2 => "basic#responses", R4 => "basic#result-responses"],
        "The server process ended while a request was waiting for its response.";
    SESSION_UNUSABLE = "session.response-unusable", Failure, [R1 => "basic/messages#responses", R2 => "basic#responses", R4 => "basic#result-responses"],
        "A request's answer arrived unusable (its id in a line that is not JSON, not UTF-8 or too large, or the handshake answered under another id): mcpcheck stops waiting for it.";
    SESSION_TIMEOUT = "session.request-timeout", Failure, [R1 => "basic/messages#responses", R2 => "basic#responses", R4 => "basic#result-responses"],
        "The server did not answer a request within the configured timeout.";
    PAGINATION_TERMINATES = "pagination.terminates", Failure, [R1 => "server/utilities/pagination"],
        "Following `nextCursor` must reach the end of a list; a cursor must not lead back to an earlier page.";
    ROBUSTNESS_CRASH_TEXT = "robustness.stderr-crash-report", Warning, [R1 => "basic/lifecycle#error-handling"],
        "A server survives malformed and unexpected input without a panic or traceback (found by mcpcheck fuzz).";
    ROBUSTNESS_MEMORY_GROWTH = "robustness.memory-bounded", Warning, [R1 => "basic/lifecycle#error-handling"],
        "A server's memory stays bounded under a stream of requests (found by mcpcheck fuzz).";
    SESSION_NOT_READING = "session.reads-input", Failure, [R1 => "basic/transports#stdio", R5 => "basic/transports/stdio"],
        "The server must read the messages the client writes to its stdin.";
    HTTP_SSE_EVENT_ID_UNIQUE = "http.sse-event-id-unique", Failure, [R2 => "basic/transports#resumability-and-redelivery"],
        "An SSE event id is unique across all streams of the session, and a resumed stream replays only events after Last-Event-ID.";
    HTTP_SSE_REPLAY_SAME_STREAM = "http.sse-replay-same-stream", Failure, [R2 => "basic/transports#resumability-and-redelivery"],
        "A stream resumed with Last-Event-ID replays no message of a different stream.";
    HTTP_SSE_UNBUFFERED = "http.sse-unbuffered", Warning, [R5 => "basic/transports/streamable-http#receiving-messages"],
        "An SSE stream's response should carry `X-Accel-Buffering: no`, so reverse proxies do not hold its events back.";
    HTTP_RESPONSE_CONTENT_TYPE = "http.response-content-type", Failure, [R2 => "basic/transports#sending-messages-to-the-server"],
        "A POSTed request is answered with Content-Type application/json or text/event-stream.";
    HTTP_SSE_CLOSED_BEFORE_RESPONSE = "http.sse-closed-before-response", Warning, [R2 => "basic/transports#sending-messages-to-the-server"],
        "Before 2025-11-25, a server does not close a request's SSE stream before sending its response.";

    // What a client under test must do (`mcpcheck client`).
    CLIENT_INITIALIZE_FIRST = "client.initialize-first", Failure, [R1 => "basic/lifecycle#initialization"],
        "Initialization is the first interaction: the client's first request is `initialize`.";
    CLIENT_INITIALIZED_SENT = "client.initialized-sent", Failure, [R1 => "basic/lifecycle#initialization"],
        "After a successful `initialize`, the client sends `notifications/initialized`.";
    CLIENT_INITIALIZED_BEFORE_OPERATION = "client.initialized-before-operation", Warning, [R1 => "basic/lifecycle#initialization"],
        "`notifications/initialized` tells the server the client is ready for normal operation, so it comes before the client's other requests (pings excepted); the spec gives no keyword for the order: should.";
    CLIENT_UNSUPPORTED_VERSION_DISCONNECT = "client.unsupported-version-disconnect", Warning, [R1 => "basic/lifecycle#version-negotiation"],
        "A client that does not support the version in the server's `initialize` result disconnects: it sends nothing more in that session.";
    CLIENT_CANCEL_IN_FLIGHT = "client.cancel-in-flight", Failure, [R1 => "basic/utilities/cancellation#behavior-requirements"],
        "A client's `notifications/cancelled` names a request the client itself sent, and never `initialize`.";
    CLIENT_PROGRESS_TOKEN_UNIQUE = "client.progress-token-unique", Failure, [R1 => "basic/utilities/progress#progress-flow", R5 => "basic/patterns/progress#progress-flow"],
        "A client's progress tokens are unique across its active requests.";
    CLIENT_REQUEST_ID_UNIQUE = "client.request-id-unique", Failure, [R1 => "basic/messages#requests", R2 => "basic#requests"],
        "The client never reuses a request id within the session.";
    CLIENT_SERVER_CAPABILITY = "client.server-capability-respected", Failure { R1 => Warning, R3 => Failure }, [R1 => "basic/lifecycle#operation"],
        "The client uses only server features the server declared (no `prompts/list` to a server without `prompts`, ...).";
    CLIENT_OWN_CAPABILITY = "client.own-capability-declared", Failure { R1 => Warning, R3 => Failure }, [R1 => "basic/lifecycle#operation"],
        "The client uses only capabilities it declared: `notifications/roots/list_changed` only with `roots.listChanged`.";
    CLIENT_STDIO_ONLY_MESSAGES = "client.stdio-only-messages", Failure, [R1 => "basic/transports#stdio", R5 => "basic/transports/stdio"],
        "The client writes nothing to the server's stdin that is not a valid MCP message, one per line.";
    CLIENT_HTTP_ACCEPT = "client.http-accept", Failure, [R2 => "basic/transports#sending-messages-to-the-server"],
        "Every POST carries an `Accept` header listing both `application/json` and `text/event-stream`.";
    CLIENT_HTTP_SESSION_ID = "client.http-session-id", Failure, [R2 => "basic/transports#session-management"],
        "Once the server assigned an `Mcp-Session-Id`, the client sends it on every later HTTP request.";
    CLIENT_HTTP_SESSION_EXPIRED = "client.http-session-expired", Failure, [R2 => "basic/transports#session-management"],
        "When a request with `Mcp-Session-Id` gets HTTP 404, the client starts a new session: its next request is an `initialize` without a session id.";
    CLIENT_HTTP_PROTOCOL_VERSION = "client.http-protocol-version", Failure, [R3 => "basic/transports#protocol-version-header", R5 => "basic/transports/streamable-http#protocol-version-header"],
        "Every HTTP request after `initialize` carries the `MCP-Protocol-Version` header (2026-07-28: every POST, matching the `_meta` version).";
    CLIENT_HTTP_PROTOCOL_VERSION_NEGOTIATED = "client.http-protocol-version-negotiated", Warning, [R3 => "basic/transports#protocol-version-header"],
        "The `MCP-Protocol-Version` header is the version negotiated at `initialize`.";
    CLIENT_HTTP_GET_ACCEPT = "client.http-get-accept", Failure, [R2 => "basic/transports#listening-for-messages-from-the-server"],
        "Every GET carries an `Accept` header listing `text/event-stream`.";
    CLIENT_SSE_RECONNECT = "client.sse-reconnect", Warning, [R4 => "basic/transports#sending-messages-to-the-server"],
        "When the server closes a request's SSE connection before the response, the client polls the stream by reconnecting.";
    CLIENT_SSE_RETRY = "client.sse-retry-respected", Failure, [R4 => "basic/transports#sending-messages-to-the-server"],
        "The client waits the `retry` field's milliseconds before reconnecting to a closed SSE stream.";
    CLIENT_SSE_LAST_EVENT_ID = "client.sse-last-event-id", Warning, [R2 => "basic/transports#resumability-and-redelivery"],
        "A client resuming a stream sends a GET with `Last-Event-ID`: the last event id it received.";
    CLIENT_HTTP_SINGLE_MESSAGE = "client.http-single-message", Failure, [R2 => "basic/transports#sending-messages-to-the-server"],
        "The body of a POST is one JSON-RPC message (a batch only where the revision has batches).";
    CLIENT_REQUEST_META = "client.request-meta", Failure, [R5 => "basic#meta"],
        "2026-07-28: every client request carries `io.modelcontextprotocol/protocolVersion` and `io.modelcontextprotocol/clientCapabilities` in `_meta`.";
    CLIENT_REQUEST_META_CLIENT_INFO = "client.request-meta-client-info", Warning, [R5 => "basic#meta"],
        "2026-07-28: a client names itself in `io.modelcontextprotocol/clientInfo` on every request unless configured not to.";
    CLIENT_HTTP_STANDARD_HEADERS = "client.http-standard-headers", Failure, [R5 => "basic/transports/streamable-http#standard-request-headers"],
        "2026-07-28: every POSTed request mirrors its `method` in `Mcp-Method`, and `params.name` or `params.uri` in `Mcp-Name` for tools/call, prompts/get and resources/read.";
    CLIENT_HTTP_PARAM_HEADERS = "client.http-param-headers", Failure, [R5 => "basic/transports/streamable-http#client-behavior"],
        "2026-07-28: a tools/call carries `Mcp-Param-{Name}` for every argument the tool's inputSchema marks with `x-mcp-header` (encoded as Value Encoding says), and none for a null or absent one.";
    CLIENT_INVALID_TOOL_EXCLUDED = "client.invalid-tool-excluded", Failure, [R5 => "server/tools#x-mcp-header"],
        "2026-07-28: over Streamable HTTP a client excludes a tool whose `x-mcp-header` annotations break the constraints from its `tools/list` result, so it never calls it.";
    CLIENT_NO_NETWORK_REF = "client.no-network-ref", Failure, [R5 => "basic#ref-resolution"],
        "2026-07-28: a client does not automatically dereference a `$ref` in a tool's schema that resolves to a network URI.";
    CLIENT_VERSION_RETRY = "client.version-retry", Warning, [R5 => "basic/versioning#protocol-version-negotiation"],
        "2026-07-28: after an UnsupportedProtocolVersionError, the client retries with a version from its `supported` list.";
    CLIENT_MRTR_RETRY = "client.mrtr-retry", Failure, [R5 => "basic/patterns/mrtr#client-requirements-basic-workflow"],
        "2026-07-28: retrying a request answered with an InputRequiredResult, the client sends the requested inputs, echoes `requestState` exactly (none when none came) and uses a new id.";
    CLIENT_MRTR_ISOLATED = "client.mrtr-isolated", Failure, [R5 => "basic/patterns/mrtr#client-requirements-basic-workflow"],
        "2026-07-28: `inputResponses` and `requestState` go only on the retry of the request they answer, never on another request.";

    CLIENT_AUTH_PKCE = "client.auth-pkce", Failure, [R2 => "basic/authorization#implementation-requirements", R3 => "basic/authorization#authorization-code-protection", R5 => "basic/authorization/security-considerations#authorization-code-protection"],
        "An authorization request carries a PKCE `code_challenge` with method `S256`, and the token request the `code_verifier` it was made from.";
    CLIENT_AUTH_PKCE_UNSUPPORTED = "client.auth-pkce-unsupported", Failure, [R4 => "basic/authorization#authorization-code-protection", R5 => "basic/authorization/security-considerations#authorization-code-protection"],
        "When the authorization server metadata has no `code_challenge_methods_supported`, the client refuses to proceed: it sends no authorization request.";
    CLIENT_AUTH_RESOURCE = "client.auth-resource", Failure, [R3 => "basic/authorization#resource-parameter-implementation"],
        "Authorization and token requests carry the `resource` parameter (RFC 8707), the canonical URI of the MCP server.";
    CLIENT_AUTH_BEARER = "client.auth-bearer", Failure, [R2 => "basic/authorization#token-requirements", R3 => "basic/authorization#token-requirements"],
        "Once it holds a token, the client sends it as `Authorization: Bearer` on every HTTP request to the MCP server, never in the query string.";
    CLIENT_AUTH_DISCOVERY = "client.auth-discovery", Failure, [R3 => "basic/authorization#authorization-server-location", R4 => "basic/authorization#protected-resource-metadata-discovery-requirements", R5 => "basic/authorization/authorization-server-discovery#protected-resource-metadata-discovery-requirements"],
        "The client finds the authorization server through the Protected Resource Metadata, at the `resource_metadata` URL of the 401 challenge when it has one.";
    CLIENT_AUTH_PRM_FALLBACK = "client.auth-prm-fallback", Failure, [R4 => "basic/authorization#protected-resource-metadata-discovery-requirements", R5 => "basic/authorization/authorization-server-discovery#protected-resource-metadata-discovery-requirements"],
        "Without a `resource_metadata` URL in the challenge, the client asks for the path-aware well-known metadata URI before the root one.";
    CLIENT_AUTH_METADATA_ORDER = "client.auth-metadata-order", Failure, [R4 => "basic/authorization#authorization-server-metadata-discovery", R5 => "basic/authorization/authorization-server-discovery#authorization-server-metadata-discovery"],
        "The client tries the authorization server metadata URIs in the order the spec lists for the issuer (OAuth path insertion, OpenID Connect path insertion, OpenID Connect path appending).";
    CLIENT_AUTH_ISSUER = "client.auth-issuer", Failure, [R3 => "basic/authorization#server-metadata-discovery", R4 => "basic/authorization#authorization-server-metadata-discovery", R5 => "basic/authorization/authorization-server-discovery#authorization-server-metadata-discovery"],
        "Authorization server metadata whose `issuer` differs from the issuer it was fetched for is not used (RFC 8414 section 3.3): no registration, authorization or token request follows.";
    CLIENT_AUTH_RESOURCE_METADATA = "client.auth-resource-metadata", Failure, [R3 => "basic/authorization#authorization-server-location", R4 => "basic/authorization#protected-resource-metadata-discovery-requirements", R5 => "basic/authorization/authorization-server-discovery#protected-resource-metadata-discovery-requirements"],
        "Protected Resource Metadata whose `resource` is not the MCP server the client asked about is not used (RFC 9728 section 3.3): no registration, authorization or token request follows on its word.";
    CLIENT_AUTH_SCOPE_CHALLENGE = "client.auth-scope-challenge", Failure, [R4 => "basic/authorization#protected-resource-metadata-discovery-requirements", R5 => "basic/authorization#scope-selection-strategy"],
        "The scopes of the 401 challenge are authoritative: the authorization request asks for every one of them.";
    CLIENT_AUTH_SCOPE_SELECTION = "client.auth-scope-selection", Warning, [R4 => "basic/authorization#scope-selection-strategy"],
        "The authorization request's `scope` is the challenge's, else every scope of `scopes_supported`, else absent.";
    CLIENT_AUTH_REDIRECT = "client.auth-redirect-registered", Failure, [R3 => "basic/authorization#open-redirection", R5 => "basic/authorization/security-considerations#open-redirection"],
        "The authorization request's `redirect_uri` is one the client registered.";
    CLIENT_AUTH_TOKEN_METHOD = "client.auth-token-endpoint-method", Failure, [R3 => "basic/authorization#standards-compliance"],
        "The client authenticates at the token endpoint with the method its registration names (RFC 7591 `token_endpoint_auth_method`, one of the metadata's `token_endpoint_auth_methods_supported`), and with that one only (OAuth 2.1 section 2.4).";
    CLIENT_AUTH_RETRY_LIMIT = "client.auth-retry-limit", Warning, [R4 => "basic/authorization#step-up-authorization-flow"],
        "After a step-up authorization the request still gets 403 `insufficient_scope`: the client retries no more than a few times, then treats it as a permanent failure.";
    CLIENT_AUTH_ISS = "client.auth-iss", Failure, [R5 => "basic/authorization#authorization-response-validation"],
        "2026-07-28: the authorization response's `iss` is compared with the recorded issuer by simple string comparison, and a mismatch (or no `iss` where the metadata advertises it) is rejected: its code goes to no token endpoint.";
    CLIENT_AUTH_STATE = "client.auth-state", Warning, [R3 => "basic/authorization#open-redirection", R5 => "basic/authorization/security-considerations#open-redirection"],
        "The authorization request carries a `state` parameter.";
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
            assert!(
                r.id.split('.').count() == 2
                    && r.id.chars().all(|c| c.is_ascii_lowercase()
                        || c.is_ascii_digit()
                        || c == '.'
                        || c == '-'),
                "{}",
                r.id
            );
            assert!(r.summary.ends_with('.'), "{}", r.id);
            assert!(
                r.sections.windows(2).all(|w| w[0].0 < w[1].0),
                "{}: sections out of order",
                r.id
            );
            for rev in Revision::ALL {
                assert!(!r.section(rev).is_empty());
            }
            // Per-revision severities: in order, and ending at the rule's own (newest) one.
            assert!(
                r.severities.windows(2).all(|w| w[0].0 < w[1].0),
                "{}: severities out of order",
                r.id
            );
            if let Some((_, last)) = r.severities.last() {
                assert_eq!(
                    *last, r.severity,
                    "{}: the newest wording is `severity`",
                    r.id
                );
            }
        }
    }

    #[test]
    fn severity_follows_the_revision_where_the_wording_changed() {
        use Severity::{Failure, Warning};
        // "Both parties SHOULD ... Only use capabilities that were successfully negotiated"
        // (2024-11-05, 2025-03-26); a MUST from 2025-06-18.
        for rule in [
            &LIFECYCLE_UNDECLARED_CLIENT_CAPABILITY,
            &LIFECYCLE_SERVER_CAPABILITY,
        ] {
            let at: Vec<_> = Revision::ALL.map(|r| rule.severity_at(r)).to_vec();
            assert_eq!(
                at,
                [Warning, Warning, Failure, Failure, Failure],
                "{}",
                rule.id
            );
            let finding = super::super::Finding::new(rule, Revision::V2025_03_26, "m");
            assert_eq!(finding.severity, Warning);
        }
        // A rule without per-revision severities has its own in every revision.
        assert!(
            Revision::ALL
                .iter()
                .all(|r| JSONRPC_ID_ECHOED.severity_at(*r) == Failure)
        );
        let should = &JSONRPC_METHOD_NOT_FOUND_CODE;
        assert!(
            Revision::ALL
                .iter()
                .all(|r| should.severity_at(*r) == Warning)
        );
    }

    #[test]
    fn sections_follow_the_revision() {
        let url = |r| JSONRPC_ID_ECHOED.url(r);
        assert_eq!(
            url(Revision::V2024_11_05),
            "https://modelcontextprotocol.io/specification/2024-11-05/basic/messages#responses"
        );
        assert_eq!(
            url(Revision::V2025_06_18),
            "https://modelcontextprotocol.io/specification/2025-06-18/basic#responses"
        );
        assert_eq!(
            url(Revision::V2025_11_25),
            "https://modelcontextprotocol.io/specification/2025-11-25/basic#result-responses"
        );
    }
}
