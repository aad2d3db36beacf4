//! The stateless checks, case by case.

use super::*;
use serde_json::json;

const R5: Revision = Revision::V2026_07_28;

fn refused(data: Value) -> ErrorObject {
    ErrorObject {
        code: MISSING_REQUIRED_CLIENT_CAPABILITY,
        message: "needs sampling".into(),
        data: Some(data),
    }
}

#[test]
fn stream_notifications_name_their_listen() {
    let listens = [json!("sub-1"), json!(7)];
    let meta = |id: Value| json!({ "_meta": { SUBSCRIPTION_ID: id } });
    let updated = "notifications/resources/updated";
    assert!(subscription_id(updated, Some(&meta(json!(7))), &listens, R5, "").is_none());
    let ack = "notifications/subscriptions/acknowledged";
    assert!(subscription_id(ack, Some(&meta(json!("sub-1"))), &listens, R5, "").is_none());
    let missing = subscription_id(updated, Some(&json!({ "uri": "x" })), &listens, R5, "/0")
        .expect("no subscription id");
    assert_eq!(missing.rule, rules::STATELESS_SUBSCRIPTION_ID.id);
    assert!(
        missing.message.contains("carries no"),
        "{}",
        missing.message
    );
    let other = subscription_id(updated, Some(&meta(json!("7"))), &listens, R5, "")
        .expect("\"7\" is not 7");
    assert!(
        other
            .message
            .contains("no `subscriptions/listen` had that id")
    );
    // Not a stream notification, no listen sent, or a handshake revision: not judged.
    let log = "notifications/message";
    assert!(subscription_id(log, None, &listens, R5, "").is_none());
    assert!(subscription_id(updated, None, &[], R5, "").is_none());
    assert!(subscription_id(updated, None, &listens, Revision::V2025_11_25, "").is_none());
}

#[test]
fn a_missing_capability_error_names_what_the_request_lacked() {
    let none = json!({});
    let good = refused(json!({ "requiredCapabilities": { "sampling": {} } }));
    assert!(missing_capability(&good, &none, R5, "").is_empty());
    let deeper = refused(json!({ "requiredCapabilities": { "sampling": { "tools": {} } } }));
    assert!(
        missing_capability(&deeper, &json!({ "sampling": {} }), R5, "").is_empty(),
        "a sub-capability the request lacked"
    );
    for (data, says) in [
        (json!({}), "without an object"),
        (
            json!({ "requiredCapabilities": ["sampling"] }),
            "without an object",
        ),
        (json!({ "requiredCapabilities": {} }), "names no capability"),
        (
            json!({ "requiredCapabilities": { "sampling": true } }),
            "not a capability object",
        ),
    ] {
        let f = missing_capability(&refused(data.clone()), &none, R5, "/0");
        assert_eq!(f.len(), 1, "{data}");
        assert!(f[0].message.contains(says), "{data}: {}", f[0].message);
        assert_eq!(f[0].rule, rules::STATELESS_MISSING_CAPABILITY_ERROR.id);
    }
    let declared = json!({ "sampling": {} });
    let f = missing_capability(&good, &declared, R5, "");
    assert!(
        f[0].message.contains("which the request declared"),
        "{}",
        f[0].message
    );
    let other = ErrorObject {
        code: -32602,
        ..good.clone()
    };
    assert!(missing_capability(&other, &none, R5, "").is_empty());
    let handshake = Revision::V2025_11_25;
    assert!(missing_capability(&refused(json!({})), &none, handshake, "").is_empty());
}

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
        f.message
            .ends_with("(UnsupportedProtocolVersionError: the server supports [\"2025-06-18\"])"),
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
fn server_requests_and_unrequested_logs_break_only_the_stateless_revision() {
    let old = Revision::V2025_11_25;
    assert!(server_request("roots/list", old).is_none());
    let f = server_request("roots/list", R5).expect("a request at 2026-07-28");
    assert_eq!(f.rule, rules::STATELESS_NO_SERVER_REQUESTS.id);
    assert!(f.message.contains("`roots/list`"));
    let debug = json!({ "level": "debug", "data": "x" });
    assert!(log_message(Some(&debug), None, old).is_none());
    assert!(log_message(Some(&debug), Some(0), R5).is_none());
    let f = log_message(Some(&debug), None, R5).expect("no request asked");
    assert_eq!(f.rule, rules::STATELESS_LOG_REQUESTED_ONLY.id);
    let error = log_rank("error");
    let f = log_message(Some(&debug), error, R5).expect("below error");
    assert_eq!(f.rule, rules::STATELESS_LOG_AT_OR_ABOVE_LEVEL.id);
    let alert = json!({ "level": "alert" });
    assert!(log_message(Some(&alert), error, R5).is_none());
    let changed = "notifications/tools/list_changed";
    assert!(change_notification(changed, false, old).is_none());
    assert!(change_notification(changed, true, R5).is_none());
    assert!(change_notification("notifications/progress", false, R5).is_none());
    let f = change_notification(changed, false, R5).expect("no listen stream");
    assert_eq!(f.rule, rules::STATELESS_CHANGE_NOTIFICATIONS_REQUESTED.id);
}

#[test]
fn input_required_results_where_allowed_and_well_formed() {
    let ok = json!({ "resultType": "input_required", "requestState": "s" });
    assert!(input_required("tools/call", &ok, &json!({}), R5, "").is_empty());
    assert!(
        input_required(
            "tools/list",
            &json!({ "resultType": "complete" }),
            &json!({}),
            R5,
            ""
        )
        .is_empty()
    );
    assert_eq!(
        input_required("tools/list", &ok, &json!({}), R5, "").len(),
        1
    );
    let empty = json!({ "resultType": "input_required" });
    let f = input_required("prompts/get", &empty, &json!({}), R5, "/1");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].rule, rules::STATELESS_INPUT_REQUIRED.id);
    let asks = json!({ "resultType": "input_required",
        "inputRequests": { "a/b": { "method": "elicitation/create", "params": {} } } });
    let f = input_required("tools/call", &asks, &json!({}), R5, "");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].pointer.as_deref(), Some("/result/inputRequests/a~1b"));
    assert!(input_required("tools/call", &asks, &json!({ "elicitation": {} }), R5, "").is_empty());
}

#[test]
fn capabilities_of_an_earlier_request_are_not_carried_over() {
    let asks = json!({ "resultType": "input_required",
        "inputRequests": { "q": { "method": "elicitation/create", "params": {} } } });
    let earlier = json!({ "elicitation": {} });
    let f = carried_capabilities(&asks, &json!({}), &earlier, R5, "");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].rule, rules::STATELESS_NO_CARRIED_CONTEXT.id);
    assert_eq!(f[0].pointer.as_deref(), Some("/result/inputRequests/q"));
    // Declared on this request, or never declared before: not this rule's business.
    assert!(carried_capabilities(&asks, &earlier, &earlier, R5, "").is_empty());
    assert!(carried_capabilities(&asks, &json!({}), &json!({}), R5, "").is_empty());
    let done = json!({ "resultType": "complete" });
    assert!(carried_capabilities(&done, &json!({}), &earlier, R5, "").is_empty());
}

#[test]
fn an_unlisted_version_points_at_supported_versions() {
    let f = discover_unlisted("2026-07-28", R5);
    assert_eq!(f.rule, rules::LIFECYCLE_VERSION.id);
    assert_eq!(f.pointer.as_deref(), Some("/result/supportedVersions"));
}
