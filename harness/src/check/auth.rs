//! Authorization rules for protected HTTP servers, as pure functions (spec 2025-11-25
//! `basic/authorization`, 2026-07-28 `basic/authorization` and its
//! `authorization-server-discovery` page): the `WWW-Authenticate` challenge (RFC 9110
//! section 11.6.1 syntax, RFC 6750 section 3 parameters), the Protected Resource Metadata
//! document (RFC 9728) and authorization server metadata (RFC 8414, OpenID Connect
//! Discovery). `scenario::auth_step` fetches; these judge what it fetched.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::protocol::text::{Mark, clip_marked};

/// One challenge of a `WWW-Authenticate` header: its scheme and parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Challenge {
    /// The auth scheme as sent (`Bearer`); compared case-insensitively.
    pub scheme: String,
    /// Parameters, names lower-cased, quoted values unescaped.
    pub params: BTreeMap<String, String>,
}

impl Challenge {
    /// A parameter's value (names are case-insensitive).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

/// Parses every challenge of one or more `WWW-Authenticate` header values. Malformed
/// parts are skipped rather than guessed at.
pub fn parse_challenges(values: &[String]) -> Vec<Challenge> {
    values.iter().flat_map(|v| parse_one(v)).collect()
}

/// The `Bearer` challenge among `values`, if any.
pub fn bearer(values: &[String]) -> Option<Challenge> {
    parse_challenges(values)
        .into_iter()
        .find(|c| c.scheme.eq_ignore_ascii_case("bearer"))
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

struct Lexer<'a> {
    rest: &'a str,
}

impl<'a> Lexer<'a> {
    fn skip_ws(&mut self) {
        self.rest = self.rest.trim_start_matches([' ', '\t']);
    }
    fn skip_ws_commas(&mut self) {
        self.rest = self.rest.trim_start_matches([' ', '\t', ',']);
    }
    fn token(&mut self) -> Option<&'a str> {
        let end = self.rest.find(|c| !is_tchar(c)).unwrap_or(self.rest.len());
        if end == 0 {
            return None;
        }
        let (t, rest) = self.rest.split_at(end);
        self.rest = rest;
        Some(t)
    }
    fn quoted(&mut self) -> Option<String> {
        let mut out = String::new();
        let mut chars = self.rest.char_indices().skip(1);
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    self.rest = &self.rest[i + 1..];
                    return Some(out);
                }
                '\\' => out.push(chars.next()?.1),
                c => out.push(c),
            }
        }
        None
    }
    fn peek(&self) -> Option<char> {
        self.rest.chars().next()
    }
}

fn parse_one(value: &str) -> Vec<Challenge> {
    let mut out: Vec<Challenge> = Vec::new();
    let mut lx = Lexer { rest: value };
    loop {
        lx.skip_ws_commas();
        let Some(word) = lx.token() else {
            // Not a token: skip one character (malformed input) and go on.
            if lx.rest.is_empty() {
                break;
            }
            let mut chars = lx.rest.chars();
            chars.next();
            lx.rest = chars.as_str();
            continue;
        };
        lx.skip_ws();
        let is_param = lx.peek() == Some('=') && !lx.rest.starts_with("==");
        if is_param && let Some(current) = out.last_mut() {
            lx.rest = lx.rest[1..].trim_start_matches([' ', '\t']);
            let v = if lx.peek() == Some('"') {
                lx.quoted()
            } else {
                lx.token().map(str::to_owned)
            };
            if let Some(v) = v {
                current.params.insert(word.to_ascii_lowercase(), v);
            }
            continue;
        }
        if is_param {
            // A parameter before any scheme: malformed; skip its value.
            lx.rest = &lx.rest[1..];
            continue;
        }
        out.push(Challenge {
            scheme: word.to_owned(),
            params: BTreeMap::new(),
        });
        // A token68 credential (`Basic abc==`) after the scheme: skip it.
        let save = lx.rest;
        if let Some(_t68) = lx.token() {
            lx.skip_ws();
            if lx.peek() == Some('=') && !lx.rest.starts_with("==") {
                lx.rest = save;
            } else {
                lx.rest = lx.rest.trim_start_matches('=');
            }
        }
    }
    out
}

/// Whether `url` names a loopback host (the only hosts mcpcheck fetches from).
pub fn is_loopback(url: &reqwest::Url) -> bool {
    let host = url.host_str().unwrap_or("");
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

/// The well-known Protected Resource Metadata URLs of an endpoint, in the order clients
/// try them: the path-aware one (`/.well-known/oauth-protected-resource/<path>`, when the
/// endpoint has a path), then the root one (RFC 9728 section 3.1).
pub fn protected_resource_urls(endpoint: &reqwest::Url) -> Vec<reqwest::Url> {
    let mut base = endpoint.clone();
    base.set_query(None);
    base.set_fragment(None);
    let path = endpoint.path().trim_end_matches('/').to_owned();
    let mut urls = Vec::new();
    if !path.is_empty() {
        let mut u = base.clone();
        u.set_path(&format!("/.well-known/oauth-protected-resource{path}"));
        urls.push(u);
    }
    let mut root = base;
    root.set_path("/.well-known/oauth-protected-resource");
    urls.push(root);
    urls
}

/// An issuer's metadata URLs in the order MCP clients try them (2025-11-25
/// basic/authorization#authorization-server-metadata-discovery): RFC 8414 with path
/// insertion, then OpenID Connect Discovery with path insertion and with path appending.
pub fn authorization_server_urls(issuer: &reqwest::Url) -> Vec<reqwest::Url> {
    let path = issuer.path().trim_end_matches('/').to_owned();
    let at = |p: String| {
        let mut u = issuer.clone();
        u.set_query(None);
        u.set_fragment(None);
        u.set_path(&p);
        u
    };
    if path.is_empty() {
        vec![
            at("/.well-known/oauth-authorization-server".into()),
            at("/.well-known/openid-configuration".into()),
        ]
    } else {
        vec![
            at(format!("/.well-known/oauth-authorization-server{path}")),
            at(format!("/.well-known/openid-configuration{path}")),
            at(format!("{path}/.well-known/openid-configuration")),
        ]
    }
}

/// A URI as compared here: scheme and host lower-cased (the spec's canonical form), no
/// trailing slash (the spec's recommended form), no default port.
fn canonical(uri: &str) -> Option<String> {
    let u = reqwest::Url::parse(uri).ok()?;
    let mut s = u.as_str().to_owned();
    if u.path() == "/" && u.query().is_none() && u.fragment().is_none() {
        s.pop();
    }
    Some(s.trim_end_matches('/').to_owned())
}

/// RFC 9728 `resource` against the server's canonical URI (2025-11-25
/// basic/authorization#canonical-server-uri): the endpoint URL or, for metadata about the
/// whole origin, the origin. `None` when it matches.
pub fn resource_problem(doc: &Value, endpoint: &reqwest::Url) -> Option<String> {
    let Some(obj) = doc.as_object() else {
        return Some(format!(
            "the metadata is not a JSON object: {}",
            excerpt(doc)
        ));
    };
    let Some(resource) = obj.get("resource") else {
        return Some("the metadata has no `resource` member (RFC 9728 section 2: REQUIRED)".into());
    };
    let Some(resource) = resource.as_str() else {
        return Some(format!("`resource` is not a string: {resource}"));
    };
    let got = canonical(resource);
    let endpoint_uri = canonical(endpoint.as_str());
    let origin = canonical(&endpoint.origin().ascii_serialization());
    if got.is_some() && (got == endpoint_uri || got == origin) {
        return None;
    }
    Some(format!(
        "`resource` is {resource:?}, not the server's canonical URI {:?} (or its origin {:?})",
        endpoint_uri.unwrap_or_default(),
        origin.unwrap_or_default()
    ))
}

/// RFC 9728 `authorization_servers`: MCP requires at least one (2025-11-25
/// basic/authorization#authorization-server-location). Returns the issuers, or the problem.
pub fn authorization_servers(doc: &Value) -> Result<Vec<String>, String> {
    let Some(obj) = doc.as_object() else {
        return Err(format!(
            "the metadata is not a JSON object: {}",
            excerpt(doc)
        ));
    };
    let Some(list) = obj.get("authorization_servers") else {
        return Err("the metadata has no `authorization_servers` member".into());
    };
    let Some(items) = list.as_array() else {
        return Err(format!("`authorization_servers` is not an array: {list}"));
    };
    if items.is_empty() {
        return Err("`authorization_servers` is empty".into());
    }
    items
        .iter()
        .map(|i| match i.as_str() {
            Some(s) if reqwest::Url::parse(s).is_ok() => Ok(s.to_owned()),
            _ => Err(format!(
                "`authorization_servers` holds {i}, not an issuer URL"
            )),
        })
        .collect()
}

/// What MCP clients need from an authorization server's metadata (RFC 8414 section 2;
/// 2025-11-25 basic/authorization#authorization-code-protection for PKCE).
pub fn authorization_server_problems(doc: &Value) -> Vec<String> {
    let Some(obj) = doc.as_object() else {
        return vec![format!(
            "the metadata is not a JSON object: {}",
            excerpt(doc)
        )];
    };
    let mut out = Vec::new();
    for key in ["issuer", "authorization_endpoint", "token_endpoint"] {
        match obj.get(key) {
            Some(Value::String(s)) if reqwest::Url::parse(s).is_ok() => {}
            Some(v) => out.push(format!("`{key}` is {v}, not a URL")),
            None => out.push(format!("`{key}` is missing")),
        }
    }
    match obj.get("code_challenge_methods_supported") {
        Some(Value::Array(m)) if m.iter().any(|x| x == "S256") => {}
        Some(v) => out.push(format!(
            "`code_challenge_methods_supported` is {v}, without \"S256\": MCP clients must refuse to proceed without PKCE S256"
        )),
        None => out.push(
            "`code_challenge_methods_supported` is missing: MCP clients must refuse to proceed without it".into(),
        ),
    }
    out
}

/// RFC 8414 section 3.3: the `issuer` must be identical to the issuer identifier the
/// metadata URL was built from (2026-07-28: clients MUST NOT use the metadata otherwise).
pub fn issuer_problem(doc: &Value, issuer: &str) -> Option<String> {
    match doc.get("issuer") {
        Some(Value::String(s)) if s == issuer => None,
        Some(v) => Some(format!(
            "`issuer` is {v}, not the issuer identifier {issuer:?} the metadata was fetched for"
        )),
        None => Some("`issuer` is missing".into()),
    }
}

/// The metadata document, cut for a message.
fn excerpt(v: &Value) -> String {
    clip_marked(v.to_string(), 120, Mark::Dots)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn url(s: &str) -> reqwest::Url {
        reqwest::Url::parse(s).unwrap()
    }

    #[test]
    fn parses_bearer_challenges_with_quoted_and_token_params() {
        let h = vec![
            r#"Basic realm="x", Bearer resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp", scope="files:read a\"b", error=invalid_token"#.to_owned(),
        ];
        let all = parse_challenges(&h);
        assert_eq!(all.len(), 2);
        let b = bearer(&h).unwrap();
        assert_eq!(
            b.param("resource_metadata"),
            Some("http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(b.param("SCOPE"), Some("files:read a\"b"));
        assert_eq!(b.param("error"), Some("invalid_token"));
        assert!(bearer(&["Basic abc==".to_owned()]).is_none());
        assert_eq!(
            bearer(&["Basic abc==, Bearer".to_owned()]).unwrap().params,
            BTreeMap::new()
        );
        // Malformed input never panics.
        for s in [
            "",
            "=",
            "\"",
            "Bearer a=\"unterminated",
            ",,,",
            "Bearer ==",
            "é=é",
        ] {
            let _ = parse_challenges(&[s.to_owned()]);
        }
    }

    #[test]
    fn well_known_urls_are_path_aware_first() {
        let got = protected_resource_urls(&url("http://127.0.0.1:8/api/mcp?x=1"));
        assert_eq!(
            got.iter().map(|u| u.as_str()).collect::<Vec<_>>(),
            [
                "http://127.0.0.1:8/.well-known/oauth-protected-resource/api/mcp",
                "http://127.0.0.1:8/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            protected_resource_urls(&url("http://127.0.0.1:8/")).len(),
            1
        );
        let as_urls = authorization_server_urls(&url("http://127.0.0.1:8/tenant1"));
        assert_eq!(
            as_urls[0].as_str(),
            "http://127.0.0.1:8/.well-known/oauth-authorization-server/tenant1"
        );
        assert_eq!(
            as_urls[2].as_str(),
            "http://127.0.0.1:8/tenant1/.well-known/openid-configuration"
        );
        assert_eq!(
            authorization_server_urls(&url("http://127.0.0.1:8")).len(),
            2
        );
    }

    #[test]
    fn resource_must_be_the_endpoint_or_its_origin() {
        let e = url("http://127.0.0.1:8/mcp");
        assert_eq!(
            resource_problem(&json!({"resource": "http://127.0.0.1:8/mcp"}), &e),
            None
        );
        assert_eq!(
            resource_problem(&json!({"resource": "HTTP://127.0.0.1:8/mcp/"}), &e),
            None
        );
        assert_eq!(
            resource_problem(&json!({"resource": "http://127.0.0.1:8/"}), &e),
            None
        );
        assert!(resource_problem(&json!({"resource": "http://127.0.0.1:8/other"}), &e).is_some());
        assert!(resource_problem(&json!({}), &e).is_some());
        assert!(resource_problem(&json!([]), &e).is_some());
    }

    #[test]
    fn authorization_servers_and_their_metadata() {
        assert!(authorization_servers(&json!({"authorization_servers": []})).is_err());
        assert!(authorization_servers(&json!({})).is_err());
        assert!(authorization_servers(&json!({"authorization_servers": [1]})).is_err());
        assert_eq!(
            authorization_servers(&json!({"authorization_servers": ["http://127.0.0.1:1"]})),
            Ok(vec!["http://127.0.0.1:1".to_owned()])
        );
        let good = json!({
            "issuer": "http://127.0.0.1:1",
            "authorization_endpoint": "http://127.0.0.1:1/authorize",
            "token_endpoint": "http://127.0.0.1:1/token",
            "code_challenge_methods_supported": ["S256"]
        });
        assert!(authorization_server_problems(&good).is_empty());
        let mut plain = good.clone();
        plain["code_challenge_methods_supported"] = json!(["plain"]);
        assert_eq!(authorization_server_problems(&plain).len(), 1);
        assert_eq!(issuer_problem(&good, "http://127.0.0.1:1"), None);
        assert!(issuer_problem(&good, "http://127.0.0.1:1/").is_some());
    }

    #[test]
    fn loopback_only() {
        assert!(is_loopback(&url("http://127.0.0.1:1/x")));
        assert!(is_loopback(&url("http://[::1]:1/x")));
        assert!(is_loopback(&url("http://localhost/x")));
        assert!(!is_loopback(&url("https://auth.example.com/")));
    }
}
