//! Why an endpoint cannot be tested at all (no answer, a TLS failure, a status no MCP
//! endpoint gives), told apart from a server that answered and broke a rule.

use super::headers::header_of;
use super::record::HttpRecord;

/// Why an endpoint cannot be tested at all, judged from the records of a failed
/// `initialize`: no HTTP response, a status or content type no MCP endpoint gives, or a
/// demand for credentials. `None` when the server answered like an MCP server (whose
/// failure is then a conformance finding).
pub fn setup_problem<'a>(records: impl IntoIterator<Item = &'a HttpRecord>) -> Option<String> {
    let first = records
        .into_iter()
        .find(|r| matches!(r, HttpRecord::Failed { .. } | HttpRecord::Exchange { .. }))?;
    match first {
        HttpRecord::Failed { url, error, .. } if tls_problem(error) => Some(format!(
            "TLS handshake with {url} failed: {error}; if the server's certificate is self-signed or from a private CA, give that CA with --cacert FILE (PEM)"
        )),
        HttpRecord::Failed { url, error, .. } => Some(format!("cannot reach {url}: {error}")),
        HttpRecord::Exchange {
            method,
            url,
            status,
            response_headers,
            ..
        } => {
            let ct = header_of(response_headers, "content-type").unwrap_or("");
            // The HTTP+SSE transport starts with a GET that must open an SSE stream.
            if method == "GET" {
                let sse = ct.to_ascii_lowercase().starts_with("text/event-stream");
                return (*status != 200 || !sse).then(|| {
                    format!(
                        "{url} answered the GET with {status} ({ct:?}): not an HTTP+SSE endpoint"
                    )
                });
            }
            let ct_lower = ct.to_ascii_lowercase();
            let mcp_type = ct_lower.starts_with("application/json")
                || ct_lower.starts_with("text/event-stream");
            match status {
                401 | 403 => Some(format!(
                    "{url} answered `initialize` with {status}: it needs credentials (--bearer-env VAR or --header \"Authorization: ...\")"
                )),
                404 | 405 => Some(format!(
                    "{url} answered `initialize` with {status}: not an MCP endpoint (is the path right? for a 2024-11-05 HTTP+SSE server give its SSE URL, with --transport auto or sse)"
                )),
                300..=399 => Some(format!(
                    "{url} answered `initialize` with a redirect ({status}); give the final URL"
                )),
                200..=299 if !mcp_type => Some(format!(
                    "{url} answered `initialize` with {status} and content type {ct:?}: not an MCP endpoint"
                )),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether a request error is a failed TLS handshake (rustls and webpki wording).
fn tls_problem(error: &str) -> bool {
    let e = error.to_ascii_lowercase();
    e.contains("certificate") || e.contains("tls") || e.contains("handshake")
}

/// An error with its sources, for messages ("error sending request: connection refused").
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let t = s.to_string();
        if !text.contains(&t) {
            text.push_str(": ");
            text.push_str(&t);
        }
        source = s.source();
    }
    text
}
