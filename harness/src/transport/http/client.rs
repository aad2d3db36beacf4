//! The HTTP client every exchange with a server goes through.
//!
//! Requests are built with reqwest (its builder, headers and bodies are what the rest of
//! the crate speaks) and its responses are what callers read. Plain `http` requests leave
//! on a hyper client over [`QuickAckConnector`], which removes the 40 ms a server without
//! `TCP_NODELAY` costs on every kept-alive exchange; reqwest's own connector is sealed and
//! cannot do that. `https` requests stay on reqwest, with its TLS setup (`--cacert`).

use hyper_util::client::legacy::Client as HyperClient;
use hyper_util::rt::{TokioExecutor, TokioTimer};

use super::diagnose::is_tls_failure;
use super::quickack::QuickAckConnector;

/// Sends requests to the server under test: plain HTTP on quick-ACK connections, HTTPS
/// through reqwest.
#[derive(Clone, Debug)]
pub struct HttpClient {
    /// Builds every request; sends the `https` ones.
    reqwest: reqwest::Client,
    /// Sends the plain `http` ones.
    plain: HyperClient<QuickAckConnector, reqwest::Body>,
}

/// Why a request got no response.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// An `https` request failed (connection, TLS, protocol), or a request could not be
    /// put into HTTP terms.
    #[error(transparent)]
    Reqwest(#[from] reqwest::Error),
    /// A plain `http` request failed (connection, protocol).
    #[error(transparent)]
    Plain(#[from] hyper_util::client::legacy::Error),
}

impl SendError {
    /// Whether it failed in a TLS handshake.
    pub fn is_tls_failure(&self) -> bool {
        match self {
            SendError::Reqwest(e) => is_tls_failure(e),
            SendError::Plain(_) => false,
        }
    }
}

impl HttpClient {
    /// Both clients: no redirects followed, no proxies (targets are loopback), connecting
    /// within `connect_timeout`.
    pub(super) fn new(reqwest: reqwest::Client, connect_timeout: std::time::Duration) -> Self {
        let plain = HyperClient::builder(TokioExecutor::new())
            .pool_timer(TokioTimer::new())
            .build(QuickAckConnector::new(connect_timeout));
        HttpClient { reqwest, plain }
    }

    /// A request to `url`, to finish and hand to [`HttpClient::execute`].
    pub fn request(&self, method: reqwest::Method, url: reqwest::Url) -> reqwest::RequestBuilder {
        self.reqwest.request(method, url)
    }

    /// A GET of `url`.
    pub fn get(&self, url: reqwest::Url) -> reqwest::RequestBuilder {
        self.request(reqwest::Method::GET, url)
    }

    /// A POST to `url`.
    pub fn post(&self, url: reqwest::Url) -> reqwest::RequestBuilder {
        self.request(reqwest::Method::POST, url)
    }

    /// Sends `request` and returns the response once its headers arrived. Like reqwest, a
    /// request that names no `Accept` says `*/*`.
    pub async fn execute(&self, request: reqwest::Request) -> Result<reqwest::Response, SendError> {
        if request.url().scheme() != "http" {
            return Ok(self.reqwest.execute(request).await?);
        }
        let mut request = http::Request::<reqwest::Body>::try_from(request)?;
        request
            .headers_mut()
            .entry(reqwest::header::ACCEPT)
            .or_insert(reqwest::header::HeaderValue::from_static("*/*"));
        let response = self.plain.request(request).await?;
        Ok(reqwest::Response::from(response.map(reqwest::Body::wrap)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A loopback server that answers every request on a connection with `body` (headers
    /// and body in two writes, as the servers that stall do) and counts connections.
    async fn server(body: &'static str) -> (reqwest::Url, tokio::sync::watch::Receiver<usize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let (count, counted) = tokio::sync::watch::channel(0usize);
        tokio::spawn(async move {
            while let Ok((mut conn, _)) = listener.accept().await {
                count.send_modify(|n| *n += 1);
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 8192];
                    loop {
                        let Ok(n) = conn.read(&mut buf).await else {
                            return;
                        };
                        if n == 0 {
                            return;
                        }
                        let head = format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                            body.len()
                        );
                        if conn.write_all(head.as_bytes()).await.is_err()
                            || conn.write_all(body.as_bytes()).await.is_err()
                        {
                            return;
                        }
                    }
                });
            }
        });
        (url.parse().unwrap(), counted)
    }

    fn client() -> HttpClient {
        let options = super::super::HttpOptions::new("http://127.0.0.1:9/mcp").unwrap();
        super::super::handle::client(&options).unwrap()
    }

    #[tokio::test]
    async fn plain_requests_share_one_kept_alive_connection() {
        let (url, connections) = server(r#"{"ok":true}"#).await;
        let client = client();
        for _ in 0..3 {
            let request = client.post(url.clone()).body("{}").build().unwrap();
            let response = client.execute(request).await.unwrap();
            assert_eq!(response.status(), 200);
            assert_eq!(response.text().await.unwrap(), r#"{"ok":true}"#);
        }
        assert_eq!(*connections.borrow(), 1);
    }

    #[tokio::test]
    async fn a_refused_connection_is_an_error_not_tls() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url: reqwest::Url = format!("http://{}/mcp", listener.local_addr().unwrap())
            .parse()
            .unwrap();
        drop(listener);
        let client = client();
        let error = client
            .execute(client.get(url).build().unwrap())
            .await
            .unwrap_err();
        assert!(matches!(error, SendError::Plain(ref e) if e.is_connect()));
        assert!(!error.is_tls_failure());
    }
}
