//! `--expired-token-env`, `--insufficient-scope-token-env`, `--foreign-token-env`: tokens
//! for the `auth/` scenarios, read from the environment like `--bearer-env` and kept as
//! secrets, so every output redacts them.

use super::UsageError;
use super::args::RunArgs;
use crate::transport::target::Target;

/// Adds the tokens the flags name to an HTTP target (other targets take none).
pub fn with_auth_tokens(mut target: Target, args: &RunArgs) -> Result<Target, UsageError> {
    let Target::Http(options) = &mut target else {
        return Ok(target);
    };
    let read = |flag: &str, var: &Option<String>| -> Result<Option<String>, UsageError> {
        let Some(var) = var else { return Ok(None) };
        let token = std::env::var(var).map_err(|_| {
            UsageError(format!(
                "{flag} {var}: the environment variable is not set (or not UTF-8)"
            ))
        })?;
        let token = token.trim().to_owned();
        if token.is_empty() {
            return Err(UsageError(format!("{flag} {var}: the variable is empty")));
        }
        if reqwest::header::HeaderValue::from_str(&format!("Bearer {token}")).is_err() {
            return Err(UsageError(format!(
                "{flag} {var}: not a valid header value"
            )));
        }
        Ok(Some(token))
    };
    let tokens = &mut options.auth_tokens;
    tokens.required = args.auth.require_auth;
    tokens.expired = read("--expired-token-env", &args.auth.expired_token_env)?;
    tokens.insufficient_scope = read(
        "--insufficient-scope-token-env",
        &args.auth.insufficient_scope_token_env,
    )?;
    tokens.foreign = read("--foreign-token-env", &args.auth.foreign_token_env)?;
    let secrets = [&tokens.expired, &tokens.insufficient_scope, &tokens.foreign]
        .into_iter()
        .flatten()
        .cloned()
        .collect::<Vec<_>>();
    options.secrets.extend(secrets);
    Ok(target)
}
