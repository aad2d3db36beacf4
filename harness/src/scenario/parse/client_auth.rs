//! `auth:` in a client scenario: the layout of the mock authorization server.
//!
//! ```yaml
//! auth:
//!   metadata: path-aware        # path-aware | root | custom: where the resource metadata is
//!   challenge_metadata: true    # the 401 challenge names it (`resource_metadata`)
//!   challenge_scope: "mcp:read" # the 401 challenge's `scope`
//!   scopes_supported: [a, b]    # the resource metadata's `scopes_supported`
//!   issuer_path: /tenant1       # the issuer's path
//!   server_metadata: oauth      # oauth | openid | openid-appended: the URI that answers
//!   pkce_advertised: true       # `code_challenge_methods_supported: [S256]`, or absent
//!   issuer_mismatch: false      # the metadata names another issuer
//!   resource_mismatch: false    # the resource metadata names another resource
//!   registration: dynamic       # dynamic | cimd | pre-registered (`context.client_id`)
//!   token_auth: client_secret_post  # the one token endpoint auth method supported
//!   step_up: { method: tools/call, scope: "mcp:write", never: false }
//!   open_handshake: false       # the handshake needs no token; the first 401 comes after
//!   iss: absent                 # absent | correct | wrong | normalized: the response's `iss`
//!   iss_advertised: true        # `authorization_response_iss_parameter_supported` (default: left out)
//! ```

use serde_json::Value;

use super::yaml::{self, Ctx, Map, Node, R, nonempty_string};
use crate::session::mock::auth::{
    AsMetadata, AuthSetup, Iss, PrmLocation, Registration, StepUp, TokenAuth,
};

const KEYS: &[&str] = &[
    "metadata",
    "challenge_metadata",
    "challenge_scope",
    "scopes_supported",
    "issuer_path",
    "server_metadata",
    "pkce_advertised",
    "issuer_mismatch",
    "resource_mismatch",
    "registration",
    "token_auth",
    "step_up",
    "open_handshake",
    "iss",
    "iss_advertised",
];

/// Parses `auth:`; `context` is the scenario's, where a pre-registered client's id is.
pub fn auth(ctx: &Ctx<'_>, node: &Node, context: Option<&Value>) -> R<AuthSetup> {
    let map = Map::new_or_empty(ctx, node, "`auth`")?;
    map.only(ctx, KEYS, "`auth`")?;
    let flag = |key: &str, default: bool| -> R<bool> {
        map.get(key)
            .map_or(Ok(default), |n| yaml::boolean(ctx, n, &format!("`{key}`")))
    };
    let metadata = choice(
        ctx,
        &map,
        "metadata",
        &[
            ("path-aware", PrmLocation::PathAware),
            ("root", PrmLocation::Root),
            ("custom", PrmLocation::Custom),
        ],
    )?;
    let challenge_metadata = flag("challenge_metadata", true)?;
    if !challenge_metadata && !metadata.well_known() {
        return Err(ctx
            .error(
                node,
                "a custom metadata location that the challenge does not name cannot be found",
            )
            .with_hint(
                "set `challenge_metadata: true`, or serve the metadata at a well-known URI",
            ));
    }
    let challenge_scope = match map.get("challenge_scope") {
        None => None,
        Some(n) => Some(nonempty_string(ctx, n, "`challenge_scope`")?.to_owned()),
    };
    let scopes_supported = scopes(ctx, &map)?;
    let issuer_path = issuer_path(ctx, &map)?;
    let as_metadata = choice(
        ctx,
        &map,
        "server_metadata",
        &[
            ("oauth", AsMetadata::Oauth),
            ("openid", AsMetadata::OpenidInserted),
            ("openid-appended", AsMetadata::OpenidAppended),
        ],
    )?;
    if as_metadata == AsMetadata::OpenidAppended && issuer_path.is_empty() {
        let n = map.get("server_metadata").unwrap_or(node);
        return Err(ctx.error(n, "`openid-appended` needs an `issuer_path` to append to"));
    }
    let token_auth = match map.get("token_auth") {
        None => None,
        Some(_) => Some(choice(
            ctx,
            &map,
            "token_auth",
            &[
                ("client_secret_basic", TokenAuth::Basic),
                ("client_secret_post", TokenAuth::Post),
                ("none", TokenAuth::None),
            ],
        )?),
    };
    let iss = choice(
        ctx,
        &map,
        "iss",
        &[
            ("absent", Iss::Absent),
            ("correct", Iss::Correct),
            ("wrong", Iss::Wrong),
            ("normalized", Iss::Normalized),
        ],
    )?;
    let step_up = match map.get("step_up") {
        None => None,
        Some(n) => Some(step_up(ctx, n)?),
    };
    Ok(AuthSetup {
        metadata,
        challenge_metadata,
        challenge_scope,
        scopes_supported,
        issuer_path,
        as_metadata,
        pkce_methods: flag("pkce_advertised", true)?.then(|| vec!["S256".to_owned()]),
        issuer_mismatch: flag("issuer_mismatch", false)?,
        resource_mismatch: flag("resource_mismatch", false)?,
        registration: registration(ctx, &map, context)?,
        token_auth,
        step_up,
        open_handshake: flag("open_handshake", false)?,
        iss,
        iss_advertised: match map.get("iss_advertised") {
            None => None,
            Some(n) => Some(yaml::boolean(ctx, n, "`iss_advertised`")?),
        },
    })
}

/// One of `options` by its word at `key`; the first when `key` is absent.
fn choice<T: Copy>(ctx: &Ctx<'_>, map: &Map<'_>, key: &str, options: &[(&str, T)]) -> R<T> {
    let Some(n) = map.get(key) else {
        return Ok(options[0].1);
    };
    let w = nonempty_string(ctx, n, &format!("`{key}`"))?;
    match options.iter().find(|(name, _)| *name == w) {
        Some((_, value)) => Ok(*value),
        None => {
            let names: Vec<&str> = options.iter().map(|(name, _)| *name).collect();
            Err(ctx.error(n, format!("`{key}` is one of {}", names.join(", "))))
        }
    }
}

/// `scopes_supported`, if given.
fn scopes(ctx: &Ctx<'_>, map: &Map<'_>) -> R<Option<Vec<String>>> {
    let Some(n) = map.get("scopes_supported") else {
        return Ok(None);
    };
    yaml::sequence(ctx, n, "`scopes_supported`")?
        .iter()
        .map(|s| nonempty_string(ctx, s, "a scope").map(str::to_owned))
        .collect::<R<Vec<_>>>()
        .map(Some)
}

/// `issuer_path`: "" when absent, else a path such as `/tenant1`.
fn issuer_path(ctx: &Ctx<'_>, map: &Map<'_>) -> R<String> {
    let Some(n) = map.get("issuer_path") else {
        return Ok(String::new());
    };
    let p = nonempty_string(ctx, n, "`issuer_path`")?;
    if !p.starts_with('/') || p.ends_with('/') || p.contains(['?', '#']) {
        return Err(ctx.error(n, "`issuer_path` is a path such as `/tenant1`"));
    }
    Ok(p.to_owned())
}

/// `step_up`: the request refused with 403 `insufficient_scope` until the token has
/// `scope` (or always, with `never`).
fn step_up(ctx: &Ctx<'_>, node: &Node) -> R<StepUp> {
    let map = Map::new(ctx, node, "`step_up`")?;
    map.only(ctx, &["method", "scope", "never"], "`step_up`")?;
    let method = nonempty_string(ctx, map.require(ctx, "method", "`step_up`")?, "`method`")?;
    let scope = nonempty_string(ctx, map.require(ctx, "scope", "`step_up`")?, "`scope`")?;
    let never = match map.get("never") {
        None => false,
        Some(n) => yaml::boolean(ctx, n, "`never`")?,
    };
    Ok(StepUp {
        method: method.to_owned(),
        scope: scope.to_owned(),
        never,
    })
}

/// `registration`: how the client gets its id.
fn registration(ctx: &Ctx<'_>, map: &Map<'_>, context: Option<&Value>) -> R<Registration> {
    let Some(n) = map.get("registration") else {
        return Ok(Registration::Dynamic);
    };
    match nonempty_string(ctx, n, "`registration`")? {
        "dynamic" => Ok(Registration::Dynamic),
        "cimd" => Ok(Registration::Cimd),
        "pre-registered" => {
            let field = |name: &str| context.and_then(|c| c[name].as_str()).map(str::to_owned);
            let Some(client_id) = field("client_id") else {
                return Err(ctx
                    .error(
                        n,
                        "a pre-registered client needs the id the client is given",
                    )
                    .with_hint("add `context: {client_id: ..., client_secret: ...}`"));
            };
            Ok(Registration::Preregistered {
                client_id,
                client_secret: field("client_secret"),
            })
        }
        _ => Err(ctx.error(n, "`registration` is one of dynamic, cimd, pre-registered")),
    }
}
