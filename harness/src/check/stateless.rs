//! Rules of the stateless revision (2026-07-28): `server/discover` answers for a supported
//! version, and every result's `resultType` is a core one. Pure: a reply in, findings out.

use serde_json::Value;

use super::{Finding, rules};
use crate::protocol::{ErrorObject, Revision};

/// JSON-RPC error code of `UnsupportedProtocolVersionError` (2026-07-28 basic#error-codes).
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// The `resultType` values of the core protocol (2026-07-28 basic#resulttype); any other
/// value "MUST be considered invalid" by a client that advertises no extension adding it.
pub const RESULT_TYPES: [&str; 2] = ["complete", "input_required"];

/// A default `server/discover` for `requested` answered with `error`.
pub fn discover_failed(requested: &str, error: &ErrorObject, revision: Revision) -> Finding {
    let detail = if error.code == UNSUPPORTED_PROTOCOL_VERSION {
        let supported = error
            .data
            .as_ref()
            .and_then(|d| d.get("supported"))
            .map(Value::to_string)
            .unwrap_or_else(|| "(no `data.supported`)".into());
        format!(" (UnsupportedProtocolVersionError: the server supports {supported})")
    } else {
        // 2026-07-28 basic/transports/stdio#backward-compatibility: any other
        // error is what a handshake-only server answers.
        "; this is how a server that knows only the handshake revisions answers: `--protocol-version auto` asks it what it supports".into()
    };
    Finding::new(
        &rules::STATELESS_DISCOVER,
        revision,
        format!(
            "`server/discover` for {requested} failed with error {} \"{}\"{detail}",
            error.code, error.message
        ),
    )
    .expected("a DiscoverResult listing the requested version in `supportedVersions`")
}

/// A successful `server/discover` whose `supportedVersions` (an array) leaves out `requested`.
pub fn discover_unlisted(requested: &str, revision: Revision) -> Finding {
    Finding::new(
        &rules::LIFECYCLE_VERSION,
        revision,
        format!(
            "`server/discover` for {requested} succeeded, yet `supportedVersions` does not list {requested}; a server that does not implement the requested version must answer with UnsupportedProtocolVersionError (-32022)"
        ),
    )
    .pointer("/result/supportedVersions")
}

/// What the `resultType` of a result says.
#[derive(Debug, Default, PartialEq)]
pub struct ResultType {
    /// The definition to validate the result against instead of the method's own result
    /// (`InputRequiredResult`).
    pub definition: Option<String>,
    /// A `resultType` no core value and no advertised extension allows.
    pub finding: Option<Finding>,
}

/// Checks `resultType` of a result found at `base` (2026-07-28 basic#resulttype). A missing
/// one is a schema violation, reported there.
pub fn result_type(result: &Value, revision: Revision, base: &str) -> ResultType {
    match result.get("resultType") {
        Some(Value::String(t)) if t == "input_required" => ResultType {
            definition: Some("InputRequiredResult".into()),
            finding: None,
        },
        Some(Value::String(t)) if RESULT_TYPES.contains(&t.as_str()) => ResultType::default(),
        Some(Value::String(t)) => ResultType {
            definition: None,
            finding: Some(
                Finding::new(
                    &rules::STATELESS_RESULT_TYPE,
                    revision,
                    format!("`resultType` is \"{t}\", which is not a core result type and mcpcheck advertises no extension"),
                )
                .pointer(format!("{base}/result/resultType"))
                .expected("\"complete\" or \"input_required\""),
            ),
        },
        _ => ResultType::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const R5: Revision = Revision::V2026_07_28;

    #[test]
    fn result_types() {
        assert_eq!(
            result_type(&json!({ "resultType": "complete" }), R5, ""),
            ResultType::default()
        );
        assert_eq!(result_type(&json!({}), R5, ""), ResultType::default());
        let input = result_type(&json!({ "resultType": "input_required" }), R5, "");
        assert_eq!(input.definition.as_deref(), Some("InputRequiredResult"));
        assert!(input.finding.is_none());
        let odd = result_type(&json!({ "resultType": "later" }), R5, "/2");
        let f = odd.finding.expect("not a core type");
        assert_eq!(f.rule, rules::STATELESS_RESULT_TYPE.id);
        assert_eq!(f.pointer.as_deref(), Some("/2/result/resultType"));
    }

    #[test]
    fn a_failed_discover_explains_itself() {
        let unsupported = ErrorObject {
            code: UNSUPPORTED_PROTOCOL_VERSION,
            message: "no".into(),
            data: Some(json!({ "supported": ["2025-06-18"] })),
        };
        let f = discover_failed("2026-07-28", &unsupported, R5);
        assert_eq!(f.rule, rules::STATELESS_DISCOVER.id);
        assert!(
            f.message.ends_with(
                "(UnsupportedProtocolVersionError: the server supports [\"2025-06-18\"])"
            ),
            "{}",
            f.message
        );
        let other = ErrorObject {
            code: -32601,
            message: "unknown".into(),
            data: None,
        };
        assert!(
            discover_failed("2026-07-28", &other, R5)
                .message
                .contains("handshake revisions")
        );
    }

    #[test]
    fn an_unlisted_version_points_at_supported_versions() {
        let f = discover_unlisted("2026-07-28", R5);
        assert_eq!(f.rule, rules::LIFECYCLE_VERSION.id);
        assert_eq!(f.pointer.as_deref(), Some("/result/supportedVersions"));
    }
}
