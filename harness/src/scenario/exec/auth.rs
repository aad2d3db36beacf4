//! The `auth` step: checks what an OAuth-capable MCP client depends on from a protected
//! HTTP server (spec 2025-11-25 `basic/authorization`; 2026-07-28 `basic/authorization`
//! and `basic/authorization/authorization-server-discovery`).
//!
//! Authorization is OPTIONAL in MCP: a server that answers a request without a token
//! does not use it, and every check is skipped with that reason. Nothing here runs an
//! OAuth flow or touches an authorization server beyond reading its public metadata, and
//! only on loopback; a check that needs a credential the user did not give is skipped
//! with the flag that provides it. Every exchange is in the transcript, tokens redacted.

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue, WWW_AUTHENTICATE};
use serde_json::{Value, json};

use super::http::HttpStop;
use crate::check::auth::{self as rules, Challenge};
use crate::scenario::model::auth::{AuthCheck, ProtectedCheck};
use crate::session::{RawHttp, RawHttpError, Session};
use crate::transport::http::{HttpRecord, POST_ACCEPT, SendError, stateless_headers};

/// A token no authorization server issued (not a secret: it is made up).
const INVALID_TOKEN: &str = "mcpcheck-invalid-token-0f3c9a";
/// Largest metadata document read.
const MAX_DOC: usize = 256 * 1024;

/// An HTTP answer, as far as the checks need it.
struct Reply {
    status: u16,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Reply {
    fn www_authenticate(&self) -> Vec<String> {
        self.headers
            .get_all(WWW_AUTHENTICATE)
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect()
    }
    fn bearer(&self) -> Option<Challenge> {
        rules::bearer(&self.www_authenticate())
    }
    fn json(&self) -> Result<Value, String> {
        serde_json::from_slice(&self.body).map_err(|e| format!("not JSON ({e})"))
    }
    fn challenge_text(&self) -> String {
        let all = self.www_authenticate();
        if all.is_empty() {
            "no WWW-Authenticate header".into()
        } else {
            format!("WWW-Authenticate: {}", all.join(", "))
        }
    }
}

/// The session and endpoint the step works on.
struct Ctx<'a> {
    session: &'a mut Session,
    handle: RawHttp,
}

/// What one check found: the expectations the server broke (empty: all held), and whether
/// they break a MUST whatever the scenario's severity says (the user asked for it with
/// `--require-auth`).
#[derive(Debug, Default)]
pub struct Judged {
    /// Each broken expectation, in words.
    pub problems: Vec<String>,
    /// The user made these a MUST.
    pub must: bool,
}

/// Runs one check.
pub async fn run(check: AuthCheck, session: &mut Session) -> Result<Judged, HttpStop> {
    let Some(handle) = session.http() else {
        return Err(HttpStop::Skip(format!(
            "authorization applies to HTTP transports; this run uses {}",
            session.describe_server()
        )));
    };
    let mut cx = Ctx { session, handle };
    let check = match check {
        AuthCheck::TokenRequired => return cx.token_required().await,
        AuthCheck::Protected(check) => check,
    };
    let problems = judge(check, &mut cx).await?;
    Ok(Judged {
        problems,
        must: false,
    })
}

/// Runs a check of a protected server; `Ok` holds the broken expectations.
async fn judge(check: ProtectedCheck, cx: &mut Ctx<'_>) -> Result<Vec<String>, HttpStop> {
    let anonymous = cx.protected().await?;
    let tokens = cx.handle.options().auth_tokens.clone();
    match check {
        ProtectedCheck::Unauthenticated401 => cx.unauthenticated(&anonymous).await,
        ProtectedCheck::BearerChallenge => {
            require_401(&anonymous)?;
            Ok(match anonymous.bearer() {
                Some(_) => vec![],
                None => vec![format!(
                    "the 401 to a request without a token has {}; a 401 must carry a `WWW-Authenticate: Bearer` challenge (RFC 6750 section 3, OAuth 2.1 section 5.3)",
                    anonymous.challenge_text()
                )],
            })
        }
        ProtectedCheck::MetadataDiscoverable => cx.discoverable(&anonymous).await,
        ProtectedCheck::ChallengeResourceMetadata => {
            cx.challenge_resource_metadata(&anonymous).await
        }
        ProtectedCheck::ChallengeScope => cx.challenge_scope(&anonymous).await,
        ProtectedCheck::InvalidToken401 => cx.rejected(INVALID_TOKEN, "an invalid token").await,
        ProtectedCheck::ExpiredToken401 => {
            let t = given(&tokens.expired, "an expired token", "--expired-token-env")?;
            cx.rejected(&t, "an expired token").await
        }
        ProtectedCheck::ForeignToken401 => {
            let t = given(
                &tokens.foreign,
                "a token issued for another resource",
                "--foreign-token-env",
            )?;
            cx.rejected(&t, "a token issued for another resource (audience)")
                .await
        }
        ProtectedCheck::InsufficientScope403 | ProtectedCheck::InsufficientScopeChallenge => {
            let t = given(
                &tokens.insufficient_scope,
                "a token without a required scope",
                "--insufficient-scope-token-env",
            )?;
            cx.insufficient_scope(&t, check).await
        }
        ProtectedCheck::MetadataResource => {
            let (url, doc) = cx.metadata(&anonymous).await?;
            let endpoint = cx.handle.options().url.clone();
            Ok(rules::resource_problem(&doc, &endpoint)
                .map(|p| format!("the Protected Resource Metadata at {url}: {p}"))
                .into_iter()
                .collect())
        }
        ProtectedCheck::MetadataAuthorizationServers => {
            let (url, doc) = cx.metadata(&anonymous).await?;
            Ok(match rules::authorization_servers(&doc) {
                Ok(_) => vec![],
                Err(p) => vec![format!(
                    "the Protected Resource Metadata at {url}: {p}; it must list at least one authorization server"
                )],
            })
        }
        ProtectedCheck::AuthorizationServerMetadata | ProtectedCheck::AuthorizationServerIssuer => {
            cx.authorization_servers(&anonymous, check).await
        }
    }
}

fn given(token: &Option<String>, what: &str, flag: &str) -> Result<String, HttpStop> {
    token.clone().ok_or_else(|| {
        HttpStop::Skip(format!(
            "needs {what}, which mcpcheck cannot make: pass {flag} VAR"
        ))
    })
}

fn require_401(r: &Reply) -> Result<(), HttpStop> {
    if r.status == 401 {
        Ok(())
    } else {
        Err(HttpStop::Skip(format!(
            "the server answered a request without a token with {}, not 401: nothing to check here (auth/unauthenticated-401 judges the status)",
            r.status
        )))
    }
}

impl Ctx<'_> {
    /// A request without a token. A success means the server does not use authorization
    /// (OPTIONAL in MCP): every check is skipped.
    async fn protected(&mut self) -> Result<Reply, HttpStop> {
        let r = self.mcp_request(None).await?;
        if (200..300).contains(&r.status) {
            return Err(HttpStop::Skip(format!(
                "the server does not require authorization: it answered a request without a token with {} (authorization is OPTIONAL in MCP)",
                r.status
            )));
        }
        Ok(r)
    }

    /// Whether a request without a token is refused, when the user expects a protected
    /// server: they gave a token (a warning: the server may just not use authorization,
    /// OPTIONAL in MCP) or `--require-auth` (a MUST: "authorization required" is answered
    /// with 401, basic/authorization#error-handling).
    async fn token_required(&mut self) -> Result<Judged, HttpStop> {
        let must = self.handle.options().auth_tokens.required;
        let token_given = (self.handle.options().headers.iter()).any(|(k, _)| *k == AUTHORIZATION);
        if !must && !token_given {
            return Err(HttpStop::Skip(
                "no token given (--bearer-env) and no --require-auth: nothing says this server should need one (authorization is OPTIONAL in MCP)".into(),
            ));
        }
        let r = self.mcp_request(None).await?;
        let problems = match (200..300).contains(&r.status) {
            true => vec![format!(
                "the server accepts requests without a token: a request without one was answered with {}{}",
                r.status,
                match must {
                    true =>
                        " though --require-auth says it requires authorization (401 Unauthorized)",
                    false =>
                        " although this run sends a token; if the server must be protected, run with --require-auth to make this a failure",
                }
            )],
            false => vec![],
        };
        Ok(Judged { problems, must })
    }

    async fn unauthenticated(&mut self, r: &Reply) -> Result<Vec<String>, HttpStop> {
        if r.status == 401 {
            return Ok(vec![]);
        }
        // Another refusal: a failure only when the server evidently uses OAuth.
        let oauth = r.bearer().is_some() || self.well_known_metadata().await.is_some();
        if !oauth {
            return Err(HttpStop::Skip(format!(
                "the server answered a request without a token with {} and shows no sign of OAuth (no Bearer challenge, no Protected Resource Metadata at the well-known URIs)",
                r.status
            )));
        }
        Ok(vec![format!(
            "a request without a token was answered with {} ({}); \"authorization required\" must be answered with 401 Unauthorized",
            r.status,
            r.challenge_text()
        )])
    }

    async fn discoverable(&mut self, r: &Reply) -> Result<Vec<String>, HttpStop> {
        if let Some(url) = r
            .bearer()
            .and_then(|b| b.param("resource_metadata").map(str::to_owned))
        {
            return Ok(match self.fetch_doc(&url).await {
                Ok(Some(_)) => vec![],
                Ok(None) => return Err(not_fetched(&url)),
                Err(p) => vec![format!("the challenge's resource_metadata {url:?}: {p}")],
            });
        }
        if self.well_known_metadata().await.is_some() {
            return Ok(vec![]);
        }
        let tried: Vec<String> = rules::protected_resource_urls(&self.handle.options().url)
            .iter()
            .map(|u| u.to_string())
            .collect();
        Ok(vec![format!(
            "the server gives no way to find its Protected Resource Metadata: {} has no `resource_metadata`, and no JSON document at {}",
            if r.status == 401 {
                r.challenge_text()
            } else {
                format!("its {} answer", r.status)
            },
            tried.join(" or ")
        )])
    }

    async fn challenge_resource_metadata(&mut self, r: &Reply) -> Result<Vec<String>, HttpStop> {
        require_401(r)?;
        let Some(b) = r.bearer() else {
            return Err(HttpStop::Skip(
                "the 401 carries no Bearer challenge (auth/bearer-challenge judges that)".into(),
            ));
        };
        let Some(url) = b.param("resource_metadata").map(str::to_owned) else {
            return Ok(vec![format!(
                "the 401 challenge names no `resource_metadata` ({}); at this revision the WWW-Authenticate header must give the location of the Protected Resource Metadata (RFC 9728 section 5.1), a well-known URI is not enough",
                r.challenge_text()
            )]);
        };
        Ok(match self.fetch_doc(&url).await {
            Ok(Some(_)) => vec![],
            Ok(None) => return Err(not_fetched(&url)),
            Err(p) => vec![format!("the challenge's resource_metadata {url:?}: {p}")],
        })
    }

    async fn challenge_scope(&mut self, r: &Reply) -> Result<Vec<String>, HttpStop> {
        require_401(r)?;
        let Some(b) = r.bearer() else {
            return Err(HttpStop::Skip(
                "the 401 carries no Bearer challenge (auth/bearer-challenge judges that)".into(),
            ));
        };
        if b.param("scope").is_some_and(|s| !s.trim().is_empty()) {
            return Ok(vec![]);
        }
        let scopes = match self.metadata(r).await {
            Ok((_, doc)) => doc
                .get("scopes_supported")
                .and_then(Value::as_array)
                .filter(|a| !a.is_empty())
                .map(|a| Value::Array(a.clone()).to_string()),
            Err(_) => None,
        };
        match scopes {
            Some(list) => Ok(vec![format!(
                "the 401 challenge names no `scope` ({}) though the server's metadata lists scopes_supported {list}",
                r.challenge_text()
            )]),
            None => Err(HttpStop::Skip(
                "the challenge has no `scope` and the metadata lists no scopes_supported: the server uses no scopes".into(),
            )),
        }
    }

    async fn rejected(&mut self, token: &str, what: &str) -> Result<Vec<String>, HttpStop> {
        let r = self.mcp_request(Some(token)).await?;
        Ok(match r.status {
            401 => vec![],
            s if (200..300).contains(&s) => vec![format!(
                "a request with {what} was accepted ({s}); the server must reject it with 401"
            )],
            s => vec![format!(
                "a request with {what} was answered with {s} ({}); invalid or expired tokens must receive 401",
                r.challenge_text()
            )],
        })
    }

    async fn insufficient_scope(
        &mut self,
        token: &str,
        check: ProtectedCheck,
    ) -> Result<Vec<String>, HttpStop> {
        let r = self.mcp_request(Some(token)).await?;
        if (200..300).contains(&r.status) {
            return Err(HttpStop::Skip(format!(
                "the server accepted the --insufficient-scope-token-env token for `{}` ({}): the scope it lacks is not needed there, and mcpcheck checks no other operation",
                self.probe_method(),
                r.status
            )));
        }
        if check == ProtectedCheck::InsufficientScope403 {
            return Ok(if r.status == 403 {
                vec![]
            } else {
                vec![format!(
                    "a request with a token lacking a required scope was answered with {} ({}); insufficient scope must be answered with 403 Forbidden",
                    r.status,
                    r.challenge_text()
                )]
            });
        }
        if r.status != 403 {
            return Err(HttpStop::Skip(format!(
                "the answer was {}, not 403 (auth/insufficient-scope-403 judges the status)",
                r.status
            )));
        }
        let ok = r
            .bearer()
            .is_some_and(|b| b.param("error") == Some("insufficient_scope"));
        Ok(if ok {
            vec![]
        } else {
            vec![format!(
                "the 403 for a token lacking a scope has {}; it should carry `WWW-Authenticate: Bearer error=\"insufficient_scope\"` with the scopes needed",
                r.challenge_text()
            )]
        })
    }

    async fn authorization_servers(
        &mut self,
        r: &Reply,
        check: ProtectedCheck,
    ) -> Result<Vec<String>, HttpStop> {
        let (_, doc) = self.metadata(r).await?;
        let issuers = rules::authorization_servers(&doc).map_err(|p| {
            HttpStop::Skip(format!(
                "no authorization server to check: {p} (auth/metadata-authorization-servers judges that)"
            ))
        })?;
        let mut problems = Vec::new();
        let mut checked = 0;
        let mut remote = Vec::new();
        for issuer in &issuers {
            let Ok(url) = reqwest::Url::parse(issuer) else {
                continue;
            };
            if !rules::is_loopback(&url) {
                remote.push(issuer.clone());
                continue;
            }
            checked += 1;
            let mut found = None;
            let mut tried = Vec::new();
            for candidate in rules::authorization_server_urls(&url) {
                match self.fetch_doc(candidate.as_str()).await {
                    Ok(Some(doc)) => {
                        found = Some((candidate, doc));
                        break;
                    }
                    Ok(None) => {}
                    Err(p) => tried.push(format!("{candidate}: {p}")),
                }
            }
            let Some((at, doc)) = found else {
                problems.push(format!(
                    "authorization server {issuer:?} publishes no metadata (RFC 8414 or OpenID Connect Discovery): {}",
                    tried.join("; ")
                ));
                continue;
            };
            let found_problems = match check {
                ProtectedCheck::AuthorizationServerIssuer => {
                    rules::issuer_problem(&doc, issuer).into_iter().collect()
                }
                _ => rules::authorization_server_problems(&doc),
            };
            for p in found_problems {
                problems.push(format!("the metadata of {issuer:?} at {at}: {p}"));
            }
        }
        if checked == 0 {
            return Err(HttpStop::Skip(format!(
                "mcpcheck fetches only from loopback; not fetched: {}",
                remote.join(", ")
            )));
        }
        Ok(problems)
    }

    /// The Protected Resource Metadata as a client finds it: the challenge's
    /// `resource_metadata`, else the well-known URIs (path-aware first).
    async fn metadata(&mut self, r: &Reply) -> Result<(String, Value), HttpStop> {
        if let Some(url) = r
            .bearer()
            .and_then(|b| b.param("resource_metadata").map(str::to_owned))
        {
            return match self.fetch_doc(&url).await {
                Ok(Some(doc)) => Ok((url, doc)),
                Ok(None) => Err(not_fetched(&url)),
                Err(p) => Err(HttpStop::Skip(format!(
                    "the advertised metadata {url:?}: {p} (auth/metadata-discoverable judges that)"
                ))),
            };
        }
        self.well_known_metadata().await.ok_or_else(|| {
            HttpStop::Skip(
                "no Protected Resource Metadata found (auth/metadata-discoverable judges that)"
                    .into(),
            )
        })
    }

    async fn well_known_metadata(&mut self) -> Option<(String, Value)> {
        for url in rules::protected_resource_urls(&self.handle.options().url) {
            if let Ok(Some(doc)) = self.fetch_doc(url.as_str()).await {
                return Some((url.to_string(), doc));
            }
        }
        None
    }

    /// GETs a public JSON document from a loopback URL: `Ok(None)` when the URL is not
    /// loopback (never fetched), `Err` when it is not a JSON answer with status 200.
    async fn fetch_doc(&mut self, url: &str) -> Result<Option<Value>, String> {
        let Ok(parsed) = reqwest::Url::parse(url) else {
            return Err("not a URL".into());
        };
        if !rules::is_loopback(&parsed) {
            return Ok(None);
        }
        let mut request = reqwest::Request::new(reqwest::Method::GET, parsed);
        request.headers_mut().insert(
            reqwest::header::ACCEPT,
            HeaderValue::from_static("application/json"),
        );
        let r = self.send(request).await?;
        if r.status != 200 {
            return Err(format!("answered {}", r.status));
        }
        r.json().map(Some)
    }

    fn probe_method(&self) -> &'static str {
        if self.session.revision().has_handshake() {
            "initialize"
        } else {
            "server/discover"
        }
    }

    /// The request an MCP client opens with (`initialize`, or `server/discover` in
    /// 2026-07-28), with `token` or none; the run's own `Authorization` is left out.
    async fn mcp_request(&mut self, token: Option<&str>) -> Result<Reply, HttpStop> {
        let revision = self.session.revision();
        let info = json!({ "name": "mcpcheck", "version": env!("CARGO_PKG_VERSION") });
        let body = if revision.has_handshake() {
            json!({ "jsonrpc": "2.0", "id": "mcpcheck-auth", "method": "initialize", "params": {
                "protocolVersion": revision.as_str(), "capabilities": {}, "clientInfo": info } })
        } else {
            json!({ "jsonrpc": "2.0", "id": "mcpcheck-auth", "method": "server/discover", "params": {
                "_meta": {
                    crate::session::stateless::PROTOCOL_VERSION: revision.as_str(),
                    crate::session::stateless::CLIENT_CAPABILITIES: {},
                    crate::session::stateless::CLIENT_INFO: info,
                } } })
        };
        let options = self.handle.options().clone();
        let mut request = reqwest::Request::new(reqwest::Method::POST, options.url.clone());
        let headers = request.headers_mut();
        headers.insert(
            reqwest::header::ACCEPT,
            HeaderValue::from_static(POST_ACCEPT),
        );
        headers.insert(
            reqwest::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        for (k, v) in options.headers.iter().filter(|(k, _)| *k != AUTHORIZATION) {
            headers.append(k, v.clone());
        }
        if !revision.has_handshake() {
            for (k, v) in stateless_headers(&body, Some(revision.as_str())).unwrap_or_default() {
                let name = HeaderName::from_bytes(k.as_bytes())
                    .map_err(|_| HttpStop::Error(format!("`{k}` is not a header name")))?;
                let value = HeaderValue::from_str(&v)
                    .map_err(|_| HttpStop::Error(format!("`{v}` is not a header value")))?;
                headers.insert(name, value);
            }
        }
        if let Some(t) = token {
            let mut v = HeaderValue::from_str(&format!("Bearer {t}"))
                .map_err(|_| HttpStop::Error("a token is not a valid header value".into()))?;
            v.set_sensitive(true);
            headers.insert(AUTHORIZATION, v);
        }
        *request.body_mut() = Some(body.to_string().into());
        self.session.record_sent(body.to_string());
        self.send(request)
            .await
            .map_err(|e| HttpStop::Error(format!("the server could not be reached: {e}")))
    }

    /// Sends one request within the run's timeout and records it in the transcript
    /// (headers redacted).
    async fn send(&mut self, request: reqwest::Request) -> Result<Reply, String> {
        let method = request.method().to_string();
        let url = request.url().to_string();
        let request_headers = self.handle.record_headers(request.headers());
        let timeout = self.handle.options().timeout;
        let result = tokio::time::timeout(timeout, async {
            let response = self.handle.execute(request).await?;
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let mut body = Vec::new();
            let mut stream = response;
            while let Some(chunk) = stream.chunk().await.map_err(SendError::from)? {
                body.extend_from_slice(&chunk);
                if body.len() > MAX_DOC {
                    body.truncate(MAX_DOC);
                    break;
                }
            }
            Ok::<_, RawHttpError>(Reply {
                status,
                headers,
                body,
            })
        })
        .await;
        let redact = |s: String| self.handle.options().redact(&s);
        match result {
            Ok(Ok(reply)) => {
                let text = String::from_utf8_lossy(&reply.body).into_owned();
                self.session.record_http(HttpRecord::Exchange {
                    method,
                    url,
                    request_headers,
                    status: reply.status,
                    response_headers: self.handle.record_headers(&reply.headers),
                    body: (!text.is_empty()).then(|| redact(text)),
                });
                Ok(reply)
            }
            Ok(Err(e)) => {
                let error = e.describe(&self.handle);
                self.session.record_http(HttpRecord::Failed {
                    method,
                    url,
                    error: error.clone(),
                    tls: e.is_tls(),
                });
                Err(error)
            }
            Err(_) => {
                let error = format!("no answer within {timeout:?}");
                self.session.record_http(HttpRecord::Failed {
                    method,
                    url,
                    error: error.clone(),
                    tls: false,
                });
                Err(error)
            }
        }
    }
}

fn not_fetched(url: &str) -> HttpStop {
    HttpStop::Skip(format!(
        "the metadata URL {url:?} is not on loopback; mcpcheck fetches only from loopback"
    ))
}
