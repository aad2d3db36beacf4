//! The `auth` step: one built-in check of a protected HTTP server's authorization
//! (spec `basic/authorization`); `scenario::exec::auth` runs it.

/// Which authorization rule an `auth` step checks: one of a protected server's, or whether
/// the server is protected at all (the one check that asks before the others can).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthCheck {
    /// A rule of a server that refuses requests without a token.
    Protected(ProtectedCheck),
    /// A request without a token is refused, when the user expects the server to be
    /// protected: a token was given (`--bearer-env`), or `--require-auth` says so (which
    /// makes it a MUST).
    TokenRequired,
}

/// A rule of a protected server's authorization (spec `basic/authorization`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProtectedCheck {
    /// A request without a token is answered with 401.
    Unauthenticated401,
    /// That 401 carries a `WWW-Authenticate: Bearer` challenge.
    BearerChallenge,
    /// The Protected Resource Metadata is discoverable: `resource_metadata` in the
    /// challenge, or the document at a well-known URI.
    MetadataDiscoverable,
    /// The 401's challenge itself names the metadata (`resource_metadata`), and it can be
    /// fetched: 2025-06-18 requires the header, later revisions accept the well-known URI
    /// instead.
    ChallengeResourceMetadata,
    /// The challenge names the scopes required (`scope`), when the server has scopes.
    ChallengeScope,
    /// A token the server never issued is answered with 401.
    InvalidToken401,
    /// An expired token (`--expired-token-env`) is answered with 401.
    ExpiredToken401,
    /// A token for another audience (`--foreign-token-env`) is answered with 401.
    ForeignToken401,
    /// A token without the required scope (`--insufficient-scope-token-env`) gets 403.
    InsufficientScope403,
    /// That 403 carries `error="insufficient_scope"` in a Bearer challenge.
    InsufficientScopeChallenge,
    /// The metadata's `resource` is the server's canonical URI.
    MetadataResource,
    /// The metadata lists at least one authorization server.
    MetadataAuthorizationServers,
    /// Each (loopback) authorization server's metadata is found and usable by MCP clients.
    AuthorizationServerMetadata,
    /// Each (loopback) authorization server's metadata names its own issuer.
    AuthorizationServerIssuer,
}

use ProtectedCheck as P;

impl AuthCheck {
    /// Every check with its name in scenario files.
    pub const ALL: &'static [(&'static str, AuthCheck)] = &[
        (
            "unauthenticated-401",
            AuthCheck::Protected(P::Unauthenticated401),
        ),
        ("bearer-challenge", AuthCheck::Protected(P::BearerChallenge)),
        (
            "metadata-discoverable",
            AuthCheck::Protected(P::MetadataDiscoverable),
        ),
        (
            "challenge-resource-metadata",
            AuthCheck::Protected(P::ChallengeResourceMetadata),
        ),
        ("challenge-scope", AuthCheck::Protected(P::ChallengeScope)),
        (
            "invalid-token-401",
            AuthCheck::Protected(P::InvalidToken401),
        ),
        (
            "expired-token-401",
            AuthCheck::Protected(P::ExpiredToken401),
        ),
        (
            "foreign-token-401",
            AuthCheck::Protected(P::ForeignToken401),
        ),
        (
            "insufficient-scope-403",
            AuthCheck::Protected(P::InsufficientScope403),
        ),
        (
            "insufficient-scope-challenge",
            AuthCheck::Protected(P::InsufficientScopeChallenge),
        ),
        (
            "metadata-resource",
            AuthCheck::Protected(P::MetadataResource),
        ),
        (
            "metadata-authorization-servers",
            AuthCheck::Protected(P::MetadataAuthorizationServers),
        ),
        (
            "authorization-server-metadata",
            AuthCheck::Protected(P::AuthorizationServerMetadata),
        ),
        (
            "authorization-server-issuer",
            AuthCheck::Protected(P::AuthorizationServerIssuer),
        ),
        ("token-required", AuthCheck::TokenRequired),
    ];

    /// The check a scenario file names.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, c)| *c)
    }

    /// Its name in scenario files.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, c)| *c == self)
            .map_or("?", |(n, _)| n)
    }
}
