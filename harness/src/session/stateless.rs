//! The stateless revision (2026-07-28): no `initialize`; every request carries its protocol
//! version, client capabilities and client info in `params._meta`
//! (spec 2026-07-28 basic#meta, "Per-request protocol fields"), and `server/discover`
//! replaces the handshake as the way to learn what the server supports (server/discover).

use serde_json::{Map, Value, json};

use super::{Handshake, Reply, ServerProfile, Session, SessionError};
use crate::check;

pub use crate::protocol::meta_keys::{
    CLIENT_CAPABILITIES, CLIENT_INFO, PROTOCOL_VERSION, SERVER_INFO,
};

/// The method that replaces the handshake.
pub const DISCOVER: &str = "server/discover";

/// The per-request `_meta` fields mcpcheck sends: version, capabilities, client info.
pub fn request_meta(version: &str, capabilities: &Value) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert(PROTOCOL_VERSION.into(), json!(version));
    meta.insert(CLIENT_CAPABILITIES.into(), capabilities.clone());
    meta.insert(
        CLIENT_INFO.into(),
        json!({ "name": "mcpcheck", "version": env!("CARGO_PKG_VERSION") }),
    );
    meta
}

/// Adds the per-request fields to `params._meta`. A key the caller already set is kept,
/// and a key the caller set to `null` is removed: that is how a scenario sends a request
/// without a required field. Params that are not an object (a malformed-params test) are
/// sent unchanged.
pub fn with_meta(params: Option<Value>, defaults: &Map<String, Value>) -> Option<Value> {
    let mut params = params.unwrap_or_else(|| json!({}));
    let Value::Object(obj) = &mut params else {
        return Some(params);
    };
    let meta = obj
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    // `_meta: null` means "no _meta at all".
    if meta.is_null() {
        obj.remove("_meta");
        return Some(params);
    }
    let Value::Object(meta) = meta else {
        return Some(params);
    };
    for (k, v) in defaults {
        if !meta.contains_key(k) {
            meta.insert(k.clone(), v.clone());
        }
    }
    meta.retain(|_, v| !v.is_null());
    Some(params)
}

/// The server's profile from a `DiscoverResult`: the version spoken is `requested` when the
/// server lists it in `supportedVersions`.
pub fn profile_from_discover(result: &Value, requested: &str) -> ServerProfile {
    let supported: Vec<String> = result
        .get("supportedVersions")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    ServerProfile {
        protocol_version: supported
            .iter()
            .any(|v| v == requested)
            .then(|| requested.to_owned()),
        capabilities: result.get("capabilities").cloned().unwrap_or(Value::Null),
        server_info: result
            .pointer(&format!("/_meta/{}", SERVER_INFO.replace('/', "~1")))
            .cloned()
            .unwrap_or(Value::Null),
        instructions: result
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_owned),
        supported_versions: supported,
    }
}

impl Session {
    /// `server/discover` in place of the handshake. The overrides of a scenario's
    /// `initialize` step apply: another version (an unsupported one, say) and capabilities.
    /// Only the default probe judges the answer; a scenario checks it with `expect`.
    pub(super) async fn discover_with(
        &mut self,
        handshake: &Handshake,
    ) -> Result<(ServerProfile, Reply), SessionError> {
        let requested = handshake
            .protocol_version
            .clone()
            .unwrap_or_else(|| self.config.revision.as_str().to_owned());
        let mut meta = Map::new();
        meta.insert(PROTOCOL_VERSION.into(), json!(requested));
        if let Some(caps) = &handshake.capabilities {
            meta.insert(CLIENT_CAPABILITIES.into(), caps.clone());
            // As with `initialize`: what the scenario declares, every later request declares.
            self.config.client_capabilities = caps.clone();
        }
        let reply = self
            .request(DISCOVER, Some(json!({ "_meta": meta })))
            .await?;
        let result = reply.result().cloned().unwrap_or(Value::Null);
        let profile = profile_from_discover(&result, &requested);
        let rev = self.revision;
        if handshake.protocol_version.is_none() {
            if let Some(error) = reply.error() {
                let f = check::stateless::discover_failed(&requested, error, rev);
                self.push_at(f, reply.frame);
            } else if !reply.salvaged
                && profile.protocol_version.is_none()
                && result.get("supportedVersions").is_some_and(Value::is_array)
            {
                let f = check::stateless::discover_unlisted(&requested, rev);
                self.push_at(f, reply.frame);
            }
        }
        // Another version asked is one request among others: the session's profile stays
        // the default discovery's, or, on a session with none yet, comes only from a
        // result (an error names no capabilities; a shared scenario after it would take
        // the server for one that declares none).
        let adopt = handshake.protocol_version.is_none()
            || (self.profile.is_none() && reply.error().is_none());
        if adopt {
            self.profile = Some(profile.clone());
            // There is no `notifications/initialized`: the server may act at once.
            self.sent.initialized = true;
        }
        Ok((profile, reply))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asking another version is one request among others: an error to it does not become
    /// the session's profile (a shared scenario after it would see no capabilities), and
    /// once the default discovery gave one, nothing else replaces it.
    #[tokio::test]
    async fn another_version_asked_leaves_the_profile_to_the_default_discovery() {
        use crate::protocol::Revision;
        use crate::schema::{SchemaStore, SearchPath};
        use crate::session::scripted::Scripted;
        use crate::session::{Handshake, Session, SessionConfig};

        let unsupported = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2026-07-28"],"requested":"1900-01-01"}}}"#;
        let discovered = r#"{"jsonrpc":"2.0","id":2,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#;
        let again = r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2026-07-28"],"requested":"1900-01-01"}}}"#;
        let server = Scripted(std::collections::VecDeque::from([
            unsupported,
            discovered,
            again,
        ]));
        let config = SessionConfig {
            revision: Revision::V2026_07_28,
            ..SessionConfig::default()
        };
        let store = std::sync::Arc::new(SchemaStore::new(SearchPath::default()));
        let mut session = Session::new(Box::new(server), store, config, std::time::Instant::now());
        let other = Handshake {
            protocol_version: Some("1900-01-01".into()),
            ..Handshake::default()
        };
        session.initialize_with(&other).await.expect("answered");
        assert!(
            session.profile().is_none(),
            "an error names no capabilities"
        );
        session
            .initialize_with(&Handshake::default())
            .await
            .expect("answered");
        let declares = |s: &Session| s.profile().is_some_and(|p| p.declares("tools"));
        assert!(declares(&session));
        session.initialize_with(&other).await.expect("answered");
        assert!(declares(&session), "the default discovery's profile stays");
    }

    fn defaults() -> Map<String, Value> {
        request_meta("2026-07-28", &json!({}))
    }

    #[test]
    fn meta_has_the_required_fields_and_client_info() {
        let m = defaults();
        assert_eq!(m[PROTOCOL_VERSION], json!("2026-07-28"));
        assert_eq!(m[CLIENT_CAPABILITIES], json!({}));
        assert_eq!(m[CLIENT_INFO]["name"], json!("mcpcheck"));
        assert!(m[CLIENT_INFO]["version"].is_string());
    }

    #[test]
    fn meta_is_added_to_absent_params() {
        let p = with_meta(None, &defaults()).unwrap();
        assert_eq!(p["_meta"][PROTOCOL_VERSION], json!("2026-07-28"));
        assert_eq!(p.as_object().unwrap().len(), 1);
    }

    #[test]
    fn meta_keeps_other_params_and_other_meta_keys() {
        let p = with_meta(
            Some(json!({ "cursor": "c", "_meta": { "progressToken": 7 } })),
            &defaults(),
        )
        .unwrap();
        assert_eq!(p["cursor"], json!("c"));
        assert_eq!(p["_meta"]["progressToken"], json!(7));
        assert_eq!(p["_meta"][CLIENT_CAPABILITIES], json!({}));
    }

    #[test]
    fn a_key_set_by_the_caller_wins_and_null_removes_it() {
        let p = with_meta(
            Some(json!({ "_meta": { PROTOCOL_VERSION: "1900-01-01", CLIENT_CAPABILITIES: null } })),
            &defaults(),
        )
        .unwrap();
        assert_eq!(p["_meta"][PROTOCOL_VERSION], json!("1900-01-01"));
        assert!(p["_meta"].get(CLIENT_CAPABILITIES).is_none());
        assert!(p["_meta"].get(CLIENT_INFO).is_some());
    }

    #[test]
    fn null_meta_sends_no_meta_and_non_objects_pass_unchanged() {
        let p = with_meta(Some(json!({ "_meta": null, "x": 1 })), &defaults()).unwrap();
        assert_eq!(p, json!({ "x": 1 }));
        let p = with_meta(Some(json!([1, 2])), &defaults()).unwrap();
        assert_eq!(p, json!([1, 2]));
    }

    #[test]
    fn profile_from_the_spec_example() {
        let result = json!({
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": { "tools": {}, "resources": {} },
            "_meta": { SERVER_INFO: { "name": "ExampleServer", "version": "1.0.0" } },
            "instructions": "hi",
            "ttlMs": 3600000,
            "cacheScope": "public"
        });
        let p = profile_from_discover(&result, "2026-07-28");
        assert_eq!(p.protocol_version.as_deref(), Some("2026-07-28"));
        assert!(p.declares("tools") && !p.declares("prompts"));
        assert_eq!(p.server_info["name"], json!("ExampleServer"));
        assert_eq!(p.instructions.as_deref(), Some("hi"));
        let p = profile_from_discover(&result, "2027-01-01");
        assert_eq!(p.protocol_version, None);
        assert_eq!(p.supported_versions, vec!["2026-07-28".to_owned()]);
    }
}
