//! What the user told about the server's authorization for the `auth/` scenarios: the
//! tokens they send instead of the run's own (`--expired-token-env`,
//! `--insufficient-scope-token-env`, `--foreign-token-env`), each also one of the options'
//! secrets, so it is redacted like the `--bearer-env` token; and whether the server must
//! require a token at all (`--require-auth`).

/// Tokens for the authorization checks, each given by the user (none is ever made up),
/// and whether authorization is required.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuthTokens {
    /// `--require-auth` (`[auth] required = true`): the user says the server must refuse
    /// a request without a token. Authorization is OPTIONAL in MCP, so only the user can
    /// make a server that accepts one fail.
    pub required: bool,
    /// An expired token for this server: it must be answered with 401.
    pub expired: Option<String>,
    /// A valid token lacking a scope the server requires: 403 `insufficient_scope`.
    pub insufficient_scope: Option<String>,
    /// A token issued for another resource (audience): it must be rejected with 401.
    pub foreign: Option<String>,
}
