//! Tokens the `auth/` scenarios send instead of the run's own (`--expired-token-env`,
//! `--insufficient-scope-token-env`, `--foreign-token-env`). Each is also one of the
//! options' secrets, so it is redacted like the `--bearer-env` token.

/// Tokens for the authorization checks, each given by the user (none is ever made up).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuthTokens {
    /// An expired token for this server: it must be answered with 401.
    pub expired: Option<String>,
    /// A valid token lacking a scope the server requires: 403 `insufficient_scope`.
    pub insufficient_scope: Option<String>,
    /// A token issued for another resource (audience): it must be rejected with 401.
    pub foreign: Option<String>,
}
