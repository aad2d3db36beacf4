//! Variables every scenario can use without defining them. Some depend on the revision
//! spoken, so one scenario can say "a request every server answers" at every revision:
//! `ping` where there is a handshake, `server/discover` at 2026-07-28, which removed
//! `ping` (2026-07-28 changelog, major change 5) and requires `server/discover` of every
//! server (server/discover).

use serde_json::{Value, json};

use super::synth::TOOL_ARGS;
use super::template::Vars;
use crate::protocol::Revision;
use crate::session::stateless;

/// The revision the session speaks, e.g. `2025-11-25`.
pub const REVISION: &str = "revision";
/// A method every server answers with a result and no side effect.
pub const PROBE: &str = "probe";
/// Params for [`PROBE`] in a raw frame (`send_raw` adds no `_meta` by itself): `{}`, or
/// the per-request `_meta` fields at a revision without a handshake.
pub const PROBE_PARAMS: &str = "probe_params";

/// Every built-in name, for the parser's checks.
pub const NAMES: &[&str] = &[
    REVISION,
    PROBE,
    PROBE_PARAMS,
    TOOL_ARGS,
    crate::scenario::template::UNIQUE,
];

/// The revision-dependent built-ins for a session speaking `revision` with `capabilities`.
pub fn for_revision(revision: Revision, capabilities: &Value) -> Vars {
    let (probe, params) = if revision.has_handshake() {
        ("ping", json!({}))
    } else {
        let meta = stateless::request_meta(revision.as_str(), capabilities);
        (stateless::DISCOVER, json!({ "_meta": meta }))
    };
    Vars::from([
        (REVISION.to_owned(), json!(revision.as_str())),
        (PROBE.to_owned(), json!(probe)),
        (PROBE_PARAMS.to_owned(), params),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_is_ping_with_a_handshake_and_discover_without() {
        let v = for_revision(Revision::V2025_11_25, &json!({}));
        assert_eq!(v[PROBE], json!("ping"));
        assert_eq!(v[PROBE_PARAMS], json!({}));
        let v = for_revision(Revision::V2026_07_28, &json!({ "roots": {} }));
        assert_eq!(v[PROBE], json!("server/discover"));
        assert_eq!(v[REVISION], json!("2026-07-28"));
        let meta = &v[PROBE_PARAMS]["_meta"];
        assert_eq!(meta[stateless::PROTOCOL_VERSION], json!("2026-07-28"));
        assert_eq!(meta[stateless::CLIENT_CAPABILITIES], json!({ "roots": {} }));
    }
}
