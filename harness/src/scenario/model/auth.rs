//! The `auth` step: one built-in check of a protected HTTP server's authorization
//! (spec `basic/authorization`); `scenario::exec::auth` runs it.

/// Which authorization rule an `auth` step checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthCheck {
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
    /// A request without a token is refused, when the user expects the server to be
    /// protected: a token was given (`--bearer-env`), or `--require-auth` says so (which
    /// makes it a MUST).
    TokenRequired,
}

impl AuthCheck {
    /// Every check with its name in scenario files.
    pub const ALL: &'static [(&'static str, AuthCheck)] = &[
        ("unauthenticated-401", AuthCheck::Unauthenticated401),
        ("bearer-challenge", AuthCheck::BearerChallenge),
        ("metadata-discoverable", AuthCheck::MetadataDiscoverable),
        (
            "challenge-resource-metadata",
            AuthCheck::ChallengeResourceMetadata,
        ),
        ("challenge-scope", AuthCheck::ChallengeScope),
        ("invalid-token-401", AuthCheck::InvalidToken401),
        ("expired-token-401", AuthCheck::ExpiredToken401),
        ("foreign-token-401", AuthCheck::ForeignToken401),
        ("insufficient-scope-403", AuthCheck::InsufficientScope403),
        (
            "insufficient-scope-challenge",
            AuthCheck::InsufficientScopeChallenge,
        ),
        ("metadata-resource", AuthCheck::MetadataResource),
        (
            "metadata-authorization-servers",
            AuthCheck::MetadataAuthorizationServers,
        ),
        (
            "authorization-server-metadata",
            AuthCheck::AuthorizationServerMetadata,
        ),
        (
            "authorization-server-issuer",
            AuthCheck::AuthorizationServerIssuer,
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
