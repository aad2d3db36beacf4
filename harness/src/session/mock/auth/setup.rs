//! How an auth scenario's mock authorization server is laid out (`auth:` in a client
//! scenario): where its metadata lives, what the 401 challenge says, what it advertises.

/// The path of the MCP endpoint the mock protects (see `Endpoint::url`).
pub const MCP_PATH: &str = "/mcp";

/// Where the Protected Resource Metadata (RFC 9728) is served.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PrmLocation {
    /// At the MCP endpoint's path: `/.well-known/oauth-protected-resource/mcp`.
    #[default]
    PathAware,
    /// At the root: `/.well-known/oauth-protected-resource`.
    Root,
    /// Somewhere only the 401 challenge names.
    Custom,
}

impl PrmLocation {
    /// Every location, in the order a client without a challenge URL tries the well-known
    /// ones (path-aware first), then the custom one.
    pub const ALL: [PrmLocation; 3] = [
        PrmLocation::PathAware,
        PrmLocation::Root,
        PrmLocation::Custom,
    ];

    /// The path it is served at.
    pub fn path(self) -> &'static str {
        match self {
            PrmLocation::PathAware => "/.well-known/oauth-protected-resource/mcp",
            PrmLocation::Root => "/.well-known/oauth-protected-resource",
            PrmLocation::Custom => "/custom/metadata/location.json",
        }
    }

    /// Whether a client can find it without the challenge naming it.
    pub fn well_known(self) -> bool {
        self != PrmLocation::Custom
    }
}

/// Which of the authorization server metadata URIs (RFC 8414, OpenID Connect Discovery)
/// answers; the others are 404.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AsMetadata {
    /// `/.well-known/oauth-authorization-server{issuer path}`.
    #[default]
    Oauth,
    /// `/.well-known/openid-configuration{issuer path}`.
    OpenidInserted,
    /// `{issuer path}/.well-known/openid-configuration` (only for an issuer with a path).
    OpenidAppended,
}

impl AsMetadata {
    /// The URIs a client tries for an issuer with path `issuer_path` ("" for none), in the
    /// spec's order (basic/authorization#authorization-server-metadata-discovery).
    pub fn candidates(issuer_path: &str) -> Vec<(AsMetadata, String)> {
        let mut out = vec![
            (
                AsMetadata::Oauth,
                format!("/.well-known/oauth-authorization-server{issuer_path}"),
            ),
            (
                AsMetadata::OpenidInserted,
                format!("/.well-known/openid-configuration{issuer_path}"),
            ),
        ];
        if !issuer_path.is_empty() {
            out.push((
                AsMetadata::OpenidAppended,
                format!("{issuer_path}/.well-known/openid-configuration"),
            ));
        }
        out
    }
}

/// How the client gets a client id.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Registration {
    /// Dynamic Client Registration (RFC 7591): the metadata has a `registration_endpoint`.
    #[default]
    Dynamic,
    /// Client ID Metadata Documents: `client_id_metadata_document_supported`, no
    /// registration endpoint; any `https` client id is taken (the mock fetches nothing).
    Cimd,
    /// Neither: the client id (and secret) the scenario's `context` gives the client.
    Preregistered {
        /// The client id.
        client_id: String,
        /// The client secret, for a confidential client.
        client_secret: Option<String>,
    },
}

/// How the client authenticates at the token endpoint (RFC 7591 `token_endpoint_auth_method`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenAuth {
    /// `client_secret_basic`: the id and secret in `Authorization: Basic`.
    Basic,
    /// `client_secret_post`: the secret in the form.
    Post,
    /// `none`: a public client, no secret.
    None,
}

impl TokenAuth {
    /// Its name in metadata.
    pub fn name(self) -> &'static str {
        match self {
            TokenAuth::Basic => "client_secret_basic",
            TokenAuth::Post => "client_secret_post",
            TokenAuth::None => "none",
        }
    }
}

/// A request the MCP endpoint refuses with 403 `insufficient_scope` until the token has a
/// scope the first authorization did not ask for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepUp {
    /// The JSON-RPC method that needs more (`tools/call`).
    pub method: String,
    /// The scope it needs.
    pub scope: String,
    /// Refuse it whatever the token: the client must stop retrying.
    pub never: bool,
}

/// What the authorization response's `iss` (RFC 9207) says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Iss {
    /// The issuer, exactly.
    Correct,
    /// Another issuer.
    Wrong,
    /// The issuer with a trailing slash: equal only after normalization, which the client
    /// must not apply.
    Normalized,
    /// No `iss` (most authorization servers today).
    #[default]
    Absent,
}

/// The mock authorization server of one auth scenario.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AuthSetup {
    /// Where the Protected Resource Metadata is.
    pub metadata: PrmLocation,
    /// Whether the 401 challenge names the metadata (`resource_metadata`). A custom
    /// location is always named: nothing else leads to it.
    pub challenge_metadata: bool,
    /// The `scope` of the 401 challenge.
    pub challenge_scope: Option<String>,
    /// `scopes_supported` of the Protected Resource Metadata.
    pub scopes_supported: Option<Vec<String>>,
    /// The issuer's path: "" or, e.g., "/tenant1".
    pub issuer_path: String,
    /// Which metadata URI answers.
    pub as_metadata: AsMetadata,
    /// `code_challenge_methods_supported`; `None` leaves the field out (no PKCE).
    pub pkce_methods: Option<Vec<String>>,
    /// The metadata names another issuer than the one it was fetched for.
    pub issuer_mismatch: bool,
    /// The Protected Resource Metadata names another resource than the MCP endpoint.
    pub resource_mismatch: bool,
    /// How the client gets its id.
    pub registration: Registration,
    /// The one token endpoint auth method the server supports; `None`: all three.
    pub token_auth: Option<TokenAuth>,
    /// A request that needs a step-up authorization.
    pub step_up: Option<StepUp>,
    /// The authorization response's `iss`.
    pub iss: Iss,
    /// `authorization_response_iss_parameter_supported` in the metadata; `None` leaves
    /// it out.
    pub iss_advertised: Option<bool>,
    /// The handshake (`initialize`, notifications, GET and DELETE) needs no token: the
    /// first 401 comes on the first request after it.
    pub open_handshake: bool,
}
