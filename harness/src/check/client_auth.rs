//! What an MCP client must do when the server it talks to is protected (`client.auth-*`):
//! PKCE, the `resource` parameter, scope selection, discovery order, and the bearer token
//! on every request. Pure: the mock authorization server gathers the facts.

use base64::Engine;
use sha2::{Digest, Sha256};

use super::{Finding, rules};
use crate::outcome::Rule;
use crate::protocol::Revision;

/// A finding of `rule`, or none when `revision` predates the rule (its first section).
pub fn at(rule: &Rule, revision: Revision, message: impl Into<String>) -> Option<Finding> {
    let since = rule.sections.first().map(|(r, _)| *r)?;
    (revision >= since).then(|| Finding::new(rule, revision, message))
}

/// The PKCE parameters of an authorization request: a challenge, with method `S256`.
pub fn pkce_challenge(
    challenge: Option<&str>,
    method: Option<&str>,
    revision: Revision,
) -> Option<Finding> {
    let problem = match (challenge, method) {
        (None, _) => "carries no `code_challenge`".to_owned(),
        (Some(_), Some("S256")) => return None,
        (Some(_), None) => "has no `code_challenge_method`, which means `plain`".to_owned(),
        (Some(_), Some(m)) => format!("uses `code_challenge_method={m}`"),
    };
    Some(
        at(
            &rules::CLIENT_AUTH_PKCE,
            revision,
            format!("the client's authorization request {problem}"),
        )?
        .expected("`code_challenge` with `code_challenge_method=S256`"),
    )
}

/// The S256 challenge of `verifier` (RFC 7636 section 4.2).
pub fn s256(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// The `code_verifier` of a token request against the challenge of its code (`None` when
/// the authorization request had none, which was judged there).
pub fn pkce_verifier(
    challenge: Option<&str>,
    verifier: Option<&str>,
    revision: Revision,
) -> Option<Finding> {
    let challenge = challenge?;
    let problem = match verifier {
        None => "carries no `code_verifier`",
        Some(v) if s256(v) == challenge => return None,
        Some(_) => "carries a `code_verifier` whose S256 hash is not the `code_challenge`",
    };
    Some(
        at(
            &rules::CLIENT_AUTH_PKCE,
            revision,
            format!("the client's token request {problem}"),
        )?
        .expected("the `code_verifier` the authorization request's challenge was made from"),
    )
}

/// The `resource` parameter of an authorization or token request (`which`).
pub fn resource(
    which: &str,
    got: Option<&str>,
    canonical: &str,
    revision: Revision,
) -> Option<Finding> {
    let problem = match got {
        None => "carries no `resource` parameter".to_owned(),
        Some(r) if same_resource(r, canonical) => return None,
        Some(r) => format!("names `resource={r}`"),
    };
    Some(
        at(
            &rules::CLIENT_AUTH_RESOURCE,
            revision,
            format!("the client's {which} request {problem}"),
        )?
        .expected(format!(
            "`resource={canonical}`, the MCP server's canonical URI"
        )),
    )
}

/// Equal as canonical URIs: scheme and host in any case, one trailing slash ignored.
fn same_resource(a: &str, b: &str) -> bool {
    fn canon(s: &str) -> String {
        let s = s.strip_suffix('/').unwrap_or(s);
        match s.split_once("://") {
            Some((scheme, rest)) => {
                let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
                format!(
                    "{}://{}{path}",
                    scheme.to_ascii_lowercase(),
                    host.to_ascii_lowercase()
                )
            }
            None => s.to_owned(),
        }
    }
    canon(a) == canon(b)
}

/// The `scope` of an authorization request against the challenge's scope and the
/// metadata's `scopes_supported` (basic/authorization#scope-selection-strategy).
pub fn scope(
    requested: Option<&str>,
    challenge: Option<&str>,
    supported: Option<&[String]>,
    revision: Revision,
) -> Vec<Finding> {
    let words = |s: Option<&str>| -> Vec<String> {
        let mut v: Vec<String> = s
            .unwrap_or("")
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        v.sort();
        v.dedup();
        v
    };
    let asked = words(requested);
    let mut out = Vec::new();
    if let Some(c) = challenge {
        let missing: Vec<String> = words(Some(c))
            .into_iter()
            .filter(|w| !asked.contains(w))
            .collect();
        if !missing.is_empty() {
            out.extend(
                at(
                    &rules::CLIENT_AUTH_SCOPE_CHALLENGE,
                    revision,
                    format!(
                        "the client's authorization request leaves out the challenged scope `{}`",
                        missing.join(" ")
                    ),
                )
                .map(|f| f.expected(format!("every scope of the challenge: `{c}`"))),
            );
        }
    }
    let (wanted, why) = match (challenge, supported) {
        (Some(c), _) => (Some(words(Some(c))), "the challenge's `scope`"),
        (None, Some(s)) => {
            let joined = s.join(" ");
            (
                Some(words(Some(&joined))),
                "every scope of `scopes_supported`",
            )
        }
        (None, None) => (
            None,
            "no `scope`: neither the challenge nor the metadata names one",
        ),
    };
    let fine = match &wanted {
        Some(w) => requested.is_some() && &asked == w,
        None => requested.is_none(),
    };
    if !fine {
        let got = requested.map_or("no `scope`".to_owned(), |s| format!("`scope={s}`"));
        let expected = match &wanted {
            Some(w) => format!("{why}: `{}`", w.join(" ")),
            None => why.to_owned(),
        };
        out.extend(
            at(
                &rules::CLIENT_AUTH_SCOPE_SELECTION,
                revision,
                format!("the client's authorization request asks for {got}"),
            )
            .map(|f| f.expected(expected)),
        );
    }
    out
}

/// Whether a `redirect_uri` is one the client registered.
pub fn redirect(got: Option<&str>, registered: &[String], revision: Revision) -> Option<Finding> {
    if got.is_some_and(|g| registered.iter().any(|r| r == g)) {
        return None;
    }
    let what = got.map_or("no `redirect_uri`".to_owned(), |g| {
        format!("`redirect_uri={g}`")
    });
    Some(
        at(
            &rules::CLIENT_AUTH_REDIRECT,
            revision,
            format!("the client's authorization request has {what}, which it did not register"),
        )?
        .expected(format!(
            "one of the registered `redirect_uris`: {registered:?}"
        )),
    )
}

/// Whether an authorization request carries `state`.
pub fn state(state: Option<&str>, revision: Revision) -> Option<Finding> {
    if state.is_some_and(|s| !s.is_empty()) {
        return None;
    }
    Some(
        at(
            &rules::CLIENT_AUTH_STATE,
            revision,
            "the client's authorization request carries no `state`",
        )?
        .expected("a `state` value the client verifies on the redirect"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const R4: Revision = Revision::V2025_11_25;

    #[test]
    fn pkce_wants_s256_and_the_matching_verifier() {
        assert!(pkce_challenge(Some("x"), Some("S256"), R4).is_none());
        assert!(pkce_challenge(Some("x"), None, R4).is_some());
        assert!(pkce_challenge(Some("x"), Some("plain"), R4).is_some());
        assert!(pkce_challenge(None, Some("S256"), R4).is_some());
        // RFC 7636 appendix B.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
        assert_eq!(s256(verifier), challenge);
        assert!(pkce_verifier(Some(challenge), Some(verifier), R4).is_none());
        assert!(pkce_verifier(Some(challenge), Some("other"), R4).is_some());
        assert!(pkce_verifier(Some(challenge), None, R4).is_some());
    }

    #[test]
    fn the_resource_is_the_canonical_uri_in_any_case_of_scheme_and_host() {
        let canonical = "http://127.0.0.1:8/mcp";
        assert!(resource("token", Some("HTTP://127.0.0.1:8/mcp/"), canonical, R4).is_none());
        assert!(resource("token", Some("http://127.0.0.1:8/"), canonical, R4).is_some());
        assert!(resource("token", None, canonical, R4).is_some());
        // Before 2025-06-18 there was no resource parameter.
        assert!(resource("token", None, canonical, Revision::V2025_03_26).is_none());
    }

    #[test]
    fn scope_follows_the_priority_order() {
        let supported = vec!["a".to_owned(), "b".to_owned()];
        let rules_of = |f: Vec<Finding>| f.into_iter().map(|f| f.rule).collect::<Vec<_>>();
        assert!(scope(Some("c"), Some("c"), Some(&supported), R4).is_empty());
        assert_eq!(
            rules_of(scope(Some("a b"), Some("c"), Some(&supported), R4)),
            ["client.auth-scope-challenge", "client.auth-scope-selection"]
        );
        assert_eq!(
            rules_of(scope(Some("c d"), Some("c"), None, R4)),
            ["client.auth-scope-selection"]
        );
        assert!(scope(Some("b a"), None, Some(&supported), R4).is_empty());
        assert_eq!(
            rules_of(scope(Some("a"), None, Some(&supported), R4)),
            ["client.auth-scope-selection"]
        );
        assert!(scope(None, None, None, R4).is_empty());
        assert_eq!(
            rules_of(scope(Some("openid"), None, None, R4)),
            ["client.auth-scope-selection"]
        );
    }
}
