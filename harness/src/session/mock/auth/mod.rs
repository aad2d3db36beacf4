//! The mock authorization server of an auth scenario, and the protection of the mock MCP
//! endpoint: Protected Resource Metadata (RFC 9728), authorization server metadata
//! (RFC 8414, OpenID Connect Discovery), dynamic registration (RFC 7591), an authorization
//! endpoint that approves at once and redirects (no browser: the client follows the
//! redirect itself, as the official conformance clients do) and a token endpoint. Tokens
//! are opaque, bound to the resource they were asked for, and redacted from the
//! transcript. It judges what the client sends on the way (`check::client_auth`).

mod setup;

use std::collections::HashMap;

use base64::Engine;
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};

pub use setup::{
    AsMetadata, AuthSetup, Iss, MCP_PATH, PrmLocation, Registration, StepUp, TokenAuth,
};

use crate::check::client_auth as judge;
use crate::check::rules;
use crate::outcome::Finding;
use crate::protocol::Revision;

/// What the mock does with one HTTP request.
#[derive(Debug)]
pub enum Route {
    /// An authorized request to the MCP endpoint: the MCP session takes it.
    Mcp,
    /// Answered here.
    Answer(Reply),
}

/// An answer of the authorization side, and what the request broke.
#[derive(Debug)]
pub struct Reply {
    /// The status.
    pub status: u16,
    /// Headers besides the content type, which `body` implies.
    pub headers: Vec<(String, String)>,
    /// The body (empty for none).
    pub body: Body,
    /// The rules the request broke.
    pub findings: Vec<Finding>,
}

/// The body of a [`Reply`].
#[derive(Debug)]
pub enum Body {
    /// No body.
    Empty,
    /// `application/json`.
    Json(Value),
}

impl Reply {
    fn new(status: u16, body: Body) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body,
            findings: Vec::new(),
        }
    }

    fn error(status: u16, error: &str, description: impl Into<String>) -> Self {
        let description: String = description.into();
        Reply::new(
            status,
            Body::Json(json!({"error": error, "error_description": description})),
        )
    }
}

/// One HTTP request, as the authorization side reads it.
#[derive(Clone, Copy, Debug)]
pub struct Request<'a> {
    /// The method, upper case.
    pub method: &'a str,
    /// The path and query.
    pub target: &'a str,
    /// The headers, names in lower case.
    pub headers: &'a [(String, String)],
    /// The body.
    pub body: &'a [u8],
}

impl Request<'_> {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or("")
    }

    fn query(&self) -> Params {
        Params::parse(
            self.target
                .split_once('?')
                .map_or("", |(_, q)| q)
                .as_bytes(),
        )
    }
}

/// Form or query parameters, the first of each name.
#[derive(Debug, Default)]
struct Params(Vec<(String, String)>);

impl Params {
    fn parse(bytes: &[u8]) -> Self {
        Params(form_urlencoded::parse(bytes).into_owned().collect())
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// An authorization code, waiting for its token request.
#[derive(Debug)]
struct Grant {
    challenge: Option<String>,
    redirect_uri: String,
    /// The scopes the authorization request asked for.
    scopes: Vec<String>,
    /// Why its authorization response must be rejected (RFC 9207), if it must.
    bad_iss: Option<&'static str>,
}

/// An access token and the scopes it was granted.
#[derive(Debug)]
struct Token {
    value: String,
    scopes: Vec<String>,
}

/// How many authorizations after a refused step-up are "a few" (step-up-authorization-flow:
/// "no more than a few times").
const RETRY_LIMIT: u32 = 3;

/// The mock authorization server and resource protection of one scenario.
#[derive(Debug)]
pub struct AuthServer {
    setup: AuthSetup,
    revision: Revision,
    /// `http://127.0.0.1:PORT`.
    origin: String,
    /// Registered clients: id -> redirect URIs.
    clients: HashMap<String, Vec<String>>,
    codes: HashMap<String, Grant>,
    /// Access tokens issued, each bound to the MCP endpoint.
    tokens: Vec<Token>,
    /// Refresh tokens issued, with the scopes of their grant.
    refresh: Vec<Token>,
    /// 403 `insufficient_scope` answers sent.
    step_ups: u32,
    /// Authorization requests after the first 403.
    retries: u32,
    /// The `scope` of the last challenge sent (401, then a 403's): the one the next
    /// authorization request is judged against.
    challenge_scope: Option<String>,
    /// Everything issued or learned that must not reach a report.
    secrets: Vec<String>,
    /// The paths of metadata documents asked for, in order.
    asked: Vec<String>,
    /// A 401 challenge was sent.
    challenged: bool,
    /// Metadata with a mismatched issuer was served.
    mismatch_served: bool,
    /// Resource metadata naming another resource was served.
    foreign_resource_served: bool,
    /// Rules already judged broken, each reported once.
    reported: Vec<&'static str>,
    /// Seeded from the OS (through std's hasher keys): what it issues differs every run,
    /// so a client cannot pass by knowing it (a test mock on loopback, not a vault).
    rng: rand::rngs::Xoshiro256PlusPlus,
}

impl AuthServer {
    /// The authorization side of a mock listening at `origin`, speaking `revision`.
    pub fn new(setup: AuthSetup, origin: String, revision: Revision) -> Self {
        let mut clients = HashMap::new();
        let mut secrets = Vec::new();
        if let Registration::Preregistered {
            client_id,
            client_secret,
        } = &setup.registration
        {
            clients.insert(client_id.clone(), Vec::new());
            secrets.extend(client_secret.iter().cloned());
        }
        let challenge_scope = setup.challenge_scope.clone();
        AuthServer {
            setup,
            revision,
            origin,
            clients,
            codes: HashMap::new(),
            tokens: Vec::new(),
            refresh: Vec::new(),
            step_ups: 0,
            retries: 0,
            challenge_scope,
            secrets,
            asked: Vec::new(),
            challenged: false,
            mismatch_served: false,
            foreign_resource_served: false,
            reported: Vec::new(),
            rng: rand::rngs::Xoshiro256PlusPlus::seed_from_u64(os_seed()),
        }
    }

    /// What the transcript must not show: tokens, codes, secrets and verifiers.
    pub fn secrets(&self) -> &[String] {
        &self.secrets
    }

    fn resource(&self) -> String {
        format!("{}{MCP_PATH}", self.origin)
    }

    fn issuer(&self) -> String {
        format!("{}{}", self.origin, self.setup.issuer_path)
    }

    fn endpoint(&self, name: &str) -> String {
        format!("{}/{name}", self.issuer())
    }

    /// Routes one request: the MCP endpoint with a token it issued goes on to the
    /// session; everything else is answered here.
    pub fn route(&mut self, request: Request<'_>) -> Route {
        let path = request.path().to_owned();
        let issuer_path = self.setup.issuer_path.clone();
        let reply = if path == MCP_PATH {
            match self.protect(request) {
                None => return Route::Mcp,
                Some(reply) => reply,
            }
        } else if let Some(location) = PrmLocation::ALL.into_iter().find(|l| l.path() == path) {
            self.protected_resource_metadata(location)
        } else if AsMetadata::candidates(&issuer_path)
            .into_iter()
            .chain(AsMetadata::candidates(""))
            .any(|(_, p)| p == path)
        {
            self.server_metadata(&path)
        } else if path == format!("{issuer_path}/register") && request.method == "POST" {
            self.register(request)
        } else if path == format!("{issuer_path}/authorize") && request.method == "GET" {
            self.authorize(request)
        } else if path == format!("{issuer_path}/token") && request.method == "POST" {
            self.token(request)
        } else {
            Reply::error(404, "not_found", format!("nothing is served at {path}"))
        };
        Route::Answer(reply)
    }

    /// A finding of `rule`, once per scenario.
    fn once(&mut self, rule: &'static crate::outcome::Rule, message: String) -> Option<Finding> {
        if self.reported.contains(&rule.id) {
            return None;
        }
        let f = judge::at(rule, self.revision, message)?;
        self.reported.push(rule.id);
        Some(f)
    }

    /// The MCP endpoint: `None` lets an authorized request through; else the 401.
    fn protect(&mut self, request: Request<'_>) -> Option<Reply> {
        let bearer = request
            .header("authorization")
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(str::trim);
        let mut findings = Vec::new();
        let in_query = request.query().get("access_token").is_some();
        if in_query {
            findings.extend(self.once(
                &rules::CLIENT_AUTH_BEARER,
                "the client put an access token in the MCP endpoint's query string".into(),
            ));
        }
        let token = bearer.and_then(|b| self.tokens.iter().find(|t| t.value == b));
        let valid = token.is_some();
        if !valid && bearer.is_none() && !in_query && self.open(request) {
            return None;
        }
        if let Some(t) = token
            && !in_query
        {
            return self.step_up(request, &t.scopes.clone());
        }
        if !valid && !self.tokens.is_empty() {
            let what = if bearer.is_some() {
                "a bearer token the authorization server never issued"
            } else {
                "no `Authorization: Bearer` header"
            };
            findings.extend(
                self.once(
                    &rules::CLIENT_AUTH_BEARER,
                    format!(
                        "after it got an access token, the client sent `{} {}` with {what}",
                        request.method,
                        request.path()
                    ),
                )
                .map(|f| f.expected("`Authorization: Bearer <the access token>` on every request")),
            );
        }
        self.challenged = true;
        self.challenge_scope.clone_from(&self.setup.challenge_scope);
        let mut challenge = String::from("Bearer");
        let mut params = Vec::new();
        if bearer.is_some() {
            params.push("error=\"invalid_token\"".to_owned());
        }
        if self.setup.challenge_metadata {
            params.push(format!(
                "resource_metadata=\"{}{}\"",
                self.origin,
                self.setup.metadata.path()
            ));
        }
        if let Some(scope) = &self.setup.challenge_scope {
            params.push(format!("scope=\"{scope}\""));
        }
        if !params.is_empty() {
            challenge.push(' ');
            challenge.push_str(&params.join(", "));
        }
        let mut reply = Reply::error(401, "invalid_token", "authorization required");
        reply.headers.push(("www-authenticate".into(), challenge));
        reply.findings = findings;
        Some(reply)
    }

    /// Whether `request` needs no token: with an open handshake, anything but a POSTed
    /// request after `initialize`.
    fn open(&self, request: Request<'_>) -> bool {
        if !self.setup.open_handshake {
            return false;
        }
        if request.method != "POST" {
            return true;
        }
        let message: Value = serde_json::from_slice(request.body).unwrap_or(Value::Null);
        let method = message["method"].as_str().unwrap_or("");
        method == "initialize" || message.get("id").is_none()
    }

    /// An authorized request: through, unless it is the step-up's and the token lacks
    /// the step-up's scope (or the step-up is never granted): then 403.
    fn step_up(&mut self, request: Request<'_>, scopes: &[String]) -> Option<Reply> {
        let step = self.setup.step_up.as_ref()?;
        let method: Option<String> = serde_json::from_slice::<Value>(request.body)
            .ok()
            .and_then(|v| v["method"].as_str().map(str::to_owned));
        if method.as_deref() != Some(step.method.as_str())
            || (!step.never && scopes.contains(&step.scope))
        {
            return None;
        }
        self.step_ups += 1;
        let mut wanted: Vec<String> = scopes.to_vec();
        if !wanted.contains(&step.scope) {
            wanted.push(step.scope.clone());
        }
        self.challenge_scope = Some(wanted.join(" "));
        let challenge = format!(
            "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{}{}\"",
            wanted.join(" "),
            self.origin,
            self.setup.metadata.path()
        );
        let mut reply = Reply::error(403, "insufficient_scope", "this request needs more scope");
        reply.headers.push(("www-authenticate".into(), challenge));
        Some(reply)
    }

    /// A Protected Resource Metadata URI: the document where the setup puts it, else 404.
    fn protected_resource_metadata(&mut self, location: PrmLocation) -> Reply {
        let mut findings = Vec::new();
        let named = self.setup.challenge_metadata;
        let served = self.setup.metadata;
        let first = !self
            .asked
            .iter()
            .any(|p| p.contains("oauth-protected-resource") || p == PrmLocation::Custom.path());
        if first && self.challenged && named && location != served {
            findings.extend(self.once(
                &rules::CLIENT_AUTH_DISCOVERY,
                format!(
                    "the 401 challenge named the resource metadata at {}, and the client asked for {} first",
                    served.path(),
                    location.path()
                ),
            ).map(|f| f.expected("the `resource_metadata` URL of the challenge, when it has one")));
        }
        if !named
            && location == PrmLocation::Root
            && !self
                .asked
                .iter()
                .any(|p| p == PrmLocation::PathAware.path())
        {
            findings.extend(self.once(
                &rules::CLIENT_AUTH_PRM_FALLBACK,
                "without a `resource_metadata` URL in the challenge, the client asked for the root well-known URI before the path-aware one".into(),
            ).map(|f| f.expected(format!("{} first, then {}", PrmLocation::PathAware.path(), PrmLocation::Root.path()))));
        }
        self.asked.push(location.path().to_owned());
        let mut reply = if location == served {
            let resource = match self.setup.resource_mismatch {
                true => {
                    self.foreign_resource_served = true;
                    format!("{}/another-resource", self.origin)
                }
                false => self.resource(),
            };
            let mut doc = json!({
                "resource": resource,
                "authorization_servers": [self.issuer()],
                "bearer_methods_supported": ["header"],
            });
            if let Some(scopes) = &self.setup.scopes_supported {
                doc["scopes_supported"] = json!(scopes);
            }
            Reply::new(200, Body::Json(doc))
        } else {
            Reply::error(404, "not_found", "no resource metadata here")
        };
        reply.findings = findings;
        reply
    }

    /// An authorization server metadata URI: the document at the one the setup names,
    /// else 404.
    fn server_metadata(&mut self, path: &str) -> Reply {
        let mut findings = Vec::new();
        let prm_served = self.asked.iter().any(|p| p == self.setup.metadata.path());
        if !prm_served {
            findings.extend(self.once(
                &rules::CLIENT_AUTH_DISCOVERY,
                format!("the client asked for authorization server metadata at {path} before it read the Protected Resource Metadata"),
            ).map(|f| f.expected("the authorization server named by the Protected Resource Metadata's `authorization_servers`")));
        }
        let candidates = AsMetadata::candidates(&self.setup.issuer_path);
        if let Some(at) = candidates.iter().position(|(_, p)| p == path) {
            let skipped: Vec<&str> = candidates[..at]
                .iter()
                .map(|(_, p)| p.as_str())
                .filter(|p| !self.asked.iter().any(|a| a == p))
                .collect();
            if !skipped.is_empty() {
                let message = format!(
                    "the client asked for {path} before {}",
                    skipped.join(" and ")
                );
                let order: Vec<&str> = candidates.iter().map(|(_, p)| p.as_str()).collect();
                findings.extend(
                    self.once(&rules::CLIENT_AUTH_METADATA_ORDER, message)
                        .map(|f| f.expected(format!("the order {}", order.join(", ")))),
                );
            }
        }
        self.asked.push(path.to_owned());
        let served = candidates
            .iter()
            .find(|(k, _)| *k == self.setup.as_metadata)
            .is_some_and(|(_, p)| p == path);
        let mut reply = if served {
            Reply::new(200, Body::Json(self.metadata_document()))
        } else {
            Reply::error(404, "not_found", "no authorization server metadata here")
        };
        reply.findings = findings;
        reply
    }

    fn metadata_document(&mut self) -> Value {
        let issuer = if self.setup.issuer_mismatch {
            self.mismatch_served = true;
            format!("{}/another-issuer", self.origin)
        } else {
            self.issuer()
        };
        let methods: Vec<&str> = match self.setup.token_auth {
            Some(one) => vec![one.name()],
            None => [TokenAuth::None, TokenAuth::Basic, TokenAuth::Post]
                .map(TokenAuth::name)
                .to_vec(),
        };
        let mut doc = json!({
            "issuer": issuer,
            "authorization_endpoint": self.endpoint("authorize"),
            "token_endpoint": self.endpoint("token"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_methods_supported": methods,
        });
        if let Some(advertised) = self.setup.iss_advertised {
            doc["authorization_response_iss_parameter_supported"] = json!(advertised);
        }
        if let Some(methods) = &self.setup.pkce_methods {
            doc["code_challenge_methods_supported"] = json!(methods);
        }
        match self.setup.registration {
            Registration::Dynamic => {
                doc["registration_endpoint"] = json!(self.endpoint("register"))
            }
            Registration::Cimd => doc["client_id_metadata_document_supported"] = json!(true),
            Registration::Preregistered { .. } => {}
        }
        if self.setup.as_metadata != AsMetadata::Oauth {
            doc["subject_types_supported"] = json!(["public"]);
            doc["id_token_signing_alg_values_supported"] = json!(["RS256"]);
            doc["jwks_uri"] = json!(self.endpoint("jwks"));
        }
        doc
    }

    /// The authorization response's `iss`, if it has one.
    fn iss(&self) -> Option<String> {
        let issuer = self.issuer();
        match self.setup.iss {
            Iss::Correct => Some(issuer),
            Iss::Wrong => Some(format!("{}/another-issuer", self.origin)),
            Iss::Normalized => Some(format!("{issuer}/")),
            Iss::Absent => None,
        }
    }

    /// Why the client must reject the authorization response (RFC 9207 section 2.4, as
    /// the 2026-07-28 table words it), or `None`.
    fn bad_iss(&self) -> Option<&'static str> {
        match (self.setup.iss, self.setup.iss_advertised == Some(true)) {
            (Iss::Correct, _) | (Iss::Absent, false) => None,
            (Iss::Absent, true) => Some(
                "had no `iss`, and the metadata advertises `authorization_response_iss_parameter_supported`",
            ),
            (Iss::Wrong, _) => Some("named another issuer in `iss`"),
            (Iss::Normalized, _) => Some(
                "named in `iss` the issuer with a trailing slash, equal only after a normalization the client must not apply",
            ),
        }
    }

    /// Findings for a request to the authorization server after metadata that must not
    /// be used.
    fn after_mismatch(&mut self, what: &str) -> Option<Finding> {
        if let Some(f) = self.after_foreign_resource(what) {
            return Some(f);
        }
        if !self.mismatch_served {
            return None;
        }
        self.once(
            &rules::CLIENT_AUTH_ISSUER,
            format!("the client sent a {what} request to an authorization server whose metadata named another issuer"),
        )
        .map(|f| f.expected("no use of metadata whose `issuer` is not the issuer it was fetched for"))
    }

    /// A finding for a registration, authorization or token request after resource
    /// metadata that named another resource, which must not be used. (Reading the named
    /// server's metadata is not judged: a client may check the resource after discovery,
    /// as long as it sends the server nothing.)
    fn after_foreign_resource(&mut self, what: &str) -> Option<Finding> {
        if !self.foreign_resource_served {
            return None;
        }
        self.once(
            &rules::CLIENT_AUTH_RESOURCE_METADATA,
            format!("the client sent a {what} request to the authorization server that resource metadata naming another resource pointed it to"),
        )
        .map(|f| f.expected(format!("no use of resource metadata whose `resource` is not {}", self.resource())))
    }

    /// Dynamic Client Registration.
    fn register(&mut self, request: Request<'_>) -> Reply {
        let findings: Vec<Finding> = self.after_mismatch("registration").into_iter().collect();
        if self.setup.registration != Registration::Dynamic {
            let mut r = Reply::error(404, "not_found", "this server offers no registration");
            r.findings = findings;
            return r;
        }
        let metadata: Value = serde_json::from_slice(request.body).unwrap_or(Value::Null);
        let Some(uris) = metadata["redirect_uris"].as_array() else {
            let mut r = Reply::error(400, "invalid_redirect_uri", "`redirect_uris` is required");
            r.findings = findings;
            return r;
        };
        let uris: Vec<String> = uris
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        let id = format!("mcpcheck-client-{}", self.clients.len() + 1);
        self.clients.insert(id.clone(), uris.clone());
        // A server with one method registers every client with it, whatever it asked.
        let method = match self.setup.token_auth {
            Some(one) => one.name().to_owned(),
            None => metadata["token_endpoint_auth_method"]
                .as_str()
                .unwrap_or("client_secret_basic")
                .to_owned(),
        };
        let mut doc = metadata.clone();
        doc["client_id"] = json!(id);
        doc["redirect_uris"] = json!(uris);
        doc["token_endpoint_auth_method"] = json!(method);
        doc["client_id_issued_at"] = json!(0);
        if method != "none" {
            let secret = self.issue("mcpcheck-secret-");
            doc["client_secret"] = json!(secret);
            doc["client_secret_expires_at"] = json!(0);
        }
        let mut r = Reply::new(201, Body::Json(doc));
        r.findings = findings;
        r
    }

    /// A random value with `prefix`, kept secret.
    fn issue(&mut self, prefix: &str) -> String {
        let bytes: [u8; 24] = self.rng.random();
        let value = format!(
            "{prefix}{}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
        );
        self.secrets.push(value.clone());
        value
    }

    /// The authorization endpoint: judged, then approved at once with a redirect.
    fn authorize(&mut self, request: Request<'_>) -> Reply {
        let q = request.query();
        let rev = self.revision;
        let mut findings: Vec<Finding> = self.after_mismatch("authorization").into_iter().collect();
        if self.step_ups > 0 {
            self.retries += 1;
        }
        let never = self.setup.step_up.as_ref().is_some_and(|s| s.never);
        if never && self.retries > RETRY_LIMIT {
            findings.extend(self.once(
                &rules::CLIENT_AUTH_RETRY_LIMIT,
                format!("after {} refused step-ups the client authorized again, {} times in all", self.step_ups, self.retries),
            ).map(|f| f.expected(format!("no more than {RETRY_LIMIT} authorizations for a request that keeps getting 403, then a permanent failure"))));
        }
        if self.setup.pkce_methods.is_none() {
            findings.extend(self.once(
                &rules::CLIENT_AUTH_PKCE_UNSUPPORTED,
                "the client sent an authorization request to a server whose metadata has no `code_challenge_methods_supported`".into(),
            ).map(|f| f.expected("no authorization request: the client refuses to proceed without PKCE support")));
        }
        findings.extend(judge::pkce_challenge(
            q.get("code_challenge"),
            q.get("code_challenge_method"),
            rev,
        ));
        findings.extend(judge::resource(
            "authorization",
            q.get("resource"),
            &self.resource(),
            rev,
        ));
        findings.extend(judge::scope(
            q.get("scope"),
            self.challenge_scope.as_deref(),
            self.setup.scopes_supported.as_deref(),
            rev,
        ));
        findings.extend(judge::state(q.get("state"), rev));
        let client_id = q.get("client_id").unwrap_or("");
        let known = match &self.setup.registration {
            Registration::Cimd => client_id.starts_with("https://"),
            _ => self.clients.contains_key(client_id),
        };
        let mut reply = match (known, q.get("redirect_uri")) {
            (false, _) => Reply::error(
                400,
                "invalid_client",
                format!("unknown client_id `{client_id}`"),
            ),
            (true, None) => Reply::error(400, "invalid_request", "`redirect_uri` is required"),
            (true, Some(redirect_uri)) => {
                if let Some(registered) = self.clients.get(client_id).filter(|r| !r.is_empty()) {
                    findings.extend(judge::redirect(Some(redirect_uri), registered, rev));
                }
                let redirect_uri = redirect_uri.to_owned();
                let code = self.issue("mcpcheck-code-");
                self.codes.insert(
                    code.clone(),
                    Grant {
                        challenge: q.get("code_challenge").map(str::to_owned),
                        redirect_uri: redirect_uri.clone(),
                        scopes: q
                            .get("scope")
                            .unwrap_or("")
                            .split_whitespace()
                            .map(str::to_owned)
                            .collect(),
                        bad_iss: self.bad_iss(),
                    },
                );
                let mut location = redirect_uri;
                location.push(if location.contains('?') { '&' } else { '?' });
                let mut pairs = form_urlencoded::Serializer::new(String::new());
                pairs.append_pair("code", &code);
                if let Some(state) = q.get("state") {
                    pairs.append_pair("state", state);
                }
                if let Some(iss) = self.iss() {
                    pairs.append_pair("iss", &iss);
                }
                location.push_str(&pairs.finish());
                let mut r = Reply::new(302, Body::Empty);
                r.headers.push(("location".into(), location));
                r
            }
        };
        reply.findings = findings;
        reply
    }

    /// The token endpoint: a code (with its verifier) or a refresh token for an access
    /// token bound to the MCP endpoint.
    fn token(&mut self, request: Request<'_>) -> Reply {
        let form = Params::parse(request.body);
        let rev = self.revision;
        if let Some(v) = form.get("code_verifier") {
            self.secrets.push(v.to_owned());
        }
        let mut findings: Vec<Finding> = self.after_mismatch("token").into_iter().collect();
        findings.extend(judge::resource(
            "token",
            form.get("resource"),
            &self.resource(),
            rev,
        ));
        if let Err(f) = self.client_authentication(request, &form) {
            findings.extend(f.map(|f| *f));
            let mut r = Reply::error(401, "invalid_client", "client authentication failed");
            r.findings = findings;
            return r;
        }
        let granted = match form.get("grant_type") {
            Some("authorization_code") => self.redeem(&form, &mut findings),
            Some("refresh_token") => self.refreshed(&form),
            _ => Err("unsupported grant_type"),
        };
        let mut reply = match granted {
            Err(why) => Reply::error(400, "invalid_grant", why),
            Ok(scopes) => {
                let access = self.issue("mcpcheck-access-");
                let refresh = self.issue("mcpcheck-refresh-");
                let mut doc = json!({
                    "access_token": access,
                    "token_type": "Bearer",
                    "expires_in": 3600,
                    "refresh_token": refresh,
                });
                if !scopes.is_empty() {
                    doc["scope"] = json!(scopes.join(" "));
                }
                self.tokens.push(Token {
                    value: access,
                    scopes: scopes.clone(),
                });
                self.refresh.push(Token {
                    value: refresh,
                    scopes,
                });
                let mut r = Reply::new(200, Body::Json(doc));
                r.headers.push(("cache-control".into(), "no-store".into()));
                r
            }
        };
        reply.findings = findings;
        reply
    }

    /// A refresh token for the scopes of its grant, or fewer: a refresh cannot widen them
    /// (RFC 6749 section 6: "MUST NOT include any scope not originally granted").
    fn refreshed(&self, form: &Params) -> Result<Vec<String>, &'static str> {
        let granted = form
            .get("refresh_token")
            .and_then(|t| self.refresh.iter().find(|r| r.value == t))
            .ok_or("unknown refresh token")?;
        let Some(asked) = form.get("scope") else {
            return Ok(granted.scopes.clone());
        };
        let asked: Vec<String> = asked.split_whitespace().map(str::to_owned).collect();
        if asked.iter().all(|a| granted.scopes.contains(a)) {
            Ok(asked)
        } else {
            Err("a refresh cannot add scopes the grant did not have")
        }
    }

    /// An authorization code for the scopes it was granted, its verifier judged.
    fn redeem(
        &mut self,
        form: &Params,
        findings: &mut Vec<Finding>,
    ) -> Result<Vec<String>, &'static str> {
        let grant = form
            .get("code")
            .and_then(|c| self.codes.remove(c))
            .ok_or("unknown or used authorization code")?;
        findings.extend(judge::pkce_verifier(
            grant.challenge.as_deref(),
            form.get("code_verifier"),
            self.revision,
        ));
        if let Some(why) = grant.bad_iss {
            findings.extend(
                judge::at(
                    &rules::CLIENT_AUTH_ISS,
                    self.revision,
                    format!("the client sent the token endpoint a code whose authorization response {why}"),
                )
                .map(|f| f.expected("the response rejected: its code sent to no token endpoint")),
            );
        }
        if form
            .get("redirect_uri")
            .is_some_and(|r| r != grant.redirect_uri)
        {
            return Err("`redirect_uri` differs from the authorization request's");
        }
        Ok(grant.scopes)
    }

    /// Where the server supports one token endpoint auth method: the client used it, and
    /// only it (`Err` with the finding, and the request is refused as a real server would).
    fn client_authentication(
        &mut self,
        request: Request<'_>,
        form: &Params,
    ) -> Result<(), Option<Box<Finding>>> {
        let Some(wanted) = self.setup.token_auth else {
            return Ok(());
        };
        let basic = request
            .header("authorization")
            .is_some_and(|v| v.starts_with("Basic "));
        let post = form.get("client_secret").is_some();
        let used = match (basic, post) {
            (true, false) => TokenAuth::Basic,
            (false, true) => TokenAuth::Post,
            (false, false) => TokenAuth::None,
            (true, true) => {
                return Err(self.once(
                    &rules::CLIENT_AUTH_TOKEN_METHOD,
                    "the client's token request authenticates twice: `Authorization: Basic` and `client_secret` in the form".into(),
                ).map(|f| Box::new(f.expected(format!("`{}` only", wanted.name())))));
            }
        };
        if used == wanted {
            return Ok(());
        }
        Err(self
            .once(
                &rules::CLIENT_AUTH_TOKEN_METHOD,
                format!(
                    "the client's token request uses `{}`, and the server registered it for `{}`",
                    used.name(),
                    wanted.name()
                ),
            )
            .map(|f| {
                Box::new(f.expected(format!(
                    "`{}`, the registration's `token_endpoint_auth_method`",
                    wanted.name()
                )))
            }))
    }
}

/// A random seed: std's `RandomState` draws its keys from the OS.
fn os_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
}
