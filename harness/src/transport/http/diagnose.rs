//! Why an endpoint cannot be tested at all (no answer, a TLS failure, a status no MCP
//! endpoint gives), told apart from a server that answered and broke a rule. A TLS failure
//! is known by the error's types where the request failed ([`is_tls_failure`]), not by
//! its message.

use super::headers::header_of;
use super::record::HttpRecord;

/// Why an endpoint cannot be tested at all, judged from the records of a failed
/// `initialize`: no HTTP response, a status or content type no MCP endpoint gives, or a
/// demand for credentials. `None` when the server answered like an MCP server (whose
/// failure is then a conformance finding), and for no response at all once the endpoint
/// had answered earlier in the run (`reached`): the server went away mid-run.
pub fn setup_problem<'a>(
    records: impl IntoIterator<Item = &'a HttpRecord>,
    reached: bool,
) -> Option<String> {
    let first = records
        .into_iter()
        .find(|r| matches!(r, HttpRecord::Failed { .. } | HttpRecord::Exchange { .. }))?;
    match first {
        HttpRecord::Failed {
            url,
            error,
            tls: true,
            ..
        } => Some(format!(
            "TLS handshake with {url} failed: {error}; if the server's certificate is self-signed or from a private CA, give that CA with --cacert FILE (PEM)"
        )),
        HttpRecord::Failed { .. } if reached => None,
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

/// Whether a request's error is a failed TLS handshake, read from the error's types: a
/// rustls error anywhere in its chain of sources (I/O errors count their payload as the
/// next link, which their own `source` skips), or the connection ending while connecting
/// to an `https` URL (an unexpected end of file: the handshake is the only read before a
/// request is sent).
pub fn is_tls_failure(e: &reqwest::Error) -> bool {
    let https = e.url().is_some_and(|u| u.scheme() == "https");
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = next {
        if err.is::<rustls::Error>() {
            return true;
        }
        next = match err.downcast_ref::<std::io::Error>() {
            Some(io) => {
                if https && e.is_connect() && io.kind() == std::io::ErrorKind::UnexpectedEof {
                    return true;
                }
                io.get_ref()
                    .map(|inner| inner as &(dyn std::error::Error + 'static))
            }
            None => err.source(),
        };
    }
    false
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::http::{HttpOptions, SendError};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// The error of one GET to `scheme://` a loopback listener that does `answer` with each
    /// connection (`None`: nothing listens there).
    async fn failure(scheme: &str, answer: Option<&'static [u8]>) -> SendError {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("{scheme}://{}/mcp", listener.local_addr().unwrap());
        match answer {
            Some(bytes) => {
                tokio::spawn(async move {
                    while let Ok((mut conn, _)) = listener.accept().await {
                        // Read what the client sent first (unread bytes would make the
                        // close a reset), then answer and hang up.
                        let _ = conn.read(&mut [0; 4096]).await;
                        let _ = conn.write_all(bytes).await;
                    }
                });
            }
            None => drop(listener),
        }
        let client = super::super::handle::client(&HttpOptions::new(&url).unwrap()).unwrap();
        let request = client.get(url.parse().unwrap()).build().unwrap();
        client.execute(request).await.unwrap_err()
    }

    #[tokio::test]
    async fn tls_failures_are_told_by_the_errors_types() {
        // Plain HTTP where a TLS handshake was expected: a rustls error in the chain.
        let plain = failure("https", Some(b"HTTP/1.1 200 OK\r\n\r\n")).await;
        assert!(plain.is_tls_failure(), "{}", error_chain(&plain));
        // The server hangs up mid-handshake.
        let closed = failure("https", Some(b"")).await;
        assert!(closed.is_tls_failure(), "{}", error_chain(&closed));
        // Nobody listening, or a plain HTTP server hanging up: no TLS involved.
        let refused = failure("https", None).await;
        assert!(!refused.is_tls_failure(), "{}", error_chain(&refused));
        let hung_up = failure("http", Some(b"")).await;
        assert!(!hung_up.is_tls_failure(), "{}", error_chain(&hung_up));
    }
}
