//! 2026-07-28 requests: each names its version and capabilities in `_meta` and, over
//! HTTP, mirrors itself into headers. The mock judges them all, but refuses only a
//! version it does not speak (basic/versioning: UnsupportedProtocolVersionError, 400): a
//! request with a missing `_meta` field or a wrong header is answered as usual, so one
//! broken requirement fails the scenario written for it rather than every later step.

use serde_json::{Value, json};

use super::{Mock, Waiting};
use crate::check::client_stateless as rules;
use crate::protocol::{Request, codes};

/// Why the mock refuses a request, and how.
pub(super) struct Refusal {
    /// The HTTP status.
    pub status: u16,
    /// The JSON-RPC error.
    pub error: Value,
}

impl Mock {
    /// Judges a 2026-07-28 request (its `_meta`, its headers, how it follows a refused
    /// version or an InputRequiredResult) and says whether the mock refuses it.
    pub(super) fn judge_stateless(
        &mut self,
        request: &Request,
        waiting: &Waiting,
        frame: usize,
    ) -> Option<Refusal> {
        let rev = self.revision;
        let params = request.params.as_ref();
        let method = request.method.as_str();
        let version = rules::meta_version(params);
        let mut found: Vec<_> = self
            .version_retry
            .request(version, rev)
            .into_iter()
            .collect();
        found.extend(
            self.rounds
                .request(method, params, &request.id.to_value(), rev),
        );
        found.extend(rules::request_meta(method, params, rev));
        if let Waiting::Http(arrival) = waiting {
            let header = |name: &str| arrival.header(name);
            let mut headers = rules::standard_headers(method, params, header, rev);
            let tool = params
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .and_then(|n| self.serves.tool(n));
            if let (Some(tool), "tools/call") = (tool, method) {
                let arguments = params.and_then(|p| p.get("arguments"));
                headers.extend(rules::param_headers(tool, arguments, header, rev));
                headers.extend(rules::invalid_tool_called(tool, rev));
            }
            found.extend(headers);
        }
        for f in found {
            self.push(f, frame);
        }
        // A request without a version is judged above; one naming another is refused.
        if version.is_some_and(|v| v != rev.as_str()) {
            let supported = vec![rev.as_str().to_owned()];
            self.version_retry.refused(supported.clone());
            return Some(Refusal {
                status: 400,
                error: json!({"code": codes::UNSUPPORTED_PROTOCOL_VERSION,
                    "message": "Unsupported protocol version",
                    "data": {"supported": supported, "requested": version}}),
            });
        }
        None
    }
}
