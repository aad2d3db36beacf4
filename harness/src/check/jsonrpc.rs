//! JSON-RPC 2.0 rules on one frame and on how a response matches a request.
//! Pure: the session classifies and correlates; these say which rule a fault broke.

use super::{Finding, rules};
use crate::protocol::{InvalidReason, RequestId, Revision};

/// The finding for a message that is not valid JSON-RPC, under the rule its defect breaks.
pub fn invalid_message(reason: &InvalidReason, pointer: &str, revision: Revision) -> Finding {
    use InvalidReason as R;
    let rule = match reason {
        R::MissingJsonrpc | R::WrongJsonrpc(_) => &rules::JSONRPC_VERSION,
        R::BothResultAndError | R::NeitherMethodNorResult => &rules::JSONRPC_RESULT_XOR_ERROR,
        R::ErrorNotObject(_)
        | R::ErrorCodeNotInteger(_)
        | R::ErrorCodeMissing
        | R::ErrorMessageNotString(_)
        | R::ErrorMessageMissing => &rules::JSONRPC_ERROR_SHAPE,
        R::IdWrongType(_) | R::IdNullInRequest | R::ResultWithNullId | R::ResponseWithoutId => {
            &rules::JSONRPC_ID_TYPE
        }
        R::NotAnObject(_) | R::EmptyBatch | R::MethodNotString(_) | R::ParamsNotStructured(_) => {
            &rules::JSONRPC_MESSAGE
        }
    };
    Finding::new(rule, revision, reason.to_string()).pointer(pointer)
}

/// The codes 2026-07-28 defines in its own sub-range (basic#error-codes): HeaderMismatch,
/// MissingRequiredClientCapability, UnsupportedProtocolVersion.
const MCP_DEFINED_CODES: [i64; 3] = [-32020, -32021, -32022];
/// Codes of earlier revisions that 2026-07-28 implementations "MUST NOT emit": resource
/// not found (now -32602) and URL elicitation required.
const RETIRED_CODES: [i64; 2] = [-32002, -32042];
/// JSON-RPC 2.0's own codes (section 5.1).
const JSONRPC_CODES: [i64; 5] = [-32700, -32600, -32601, -32602, -32603];

/// At 2026-07-28, where an error `code` the server sent falls in the partition of the
/// JSON-RPC reserved range (basic#error-codes): an undefined or retired MCP code is a
/// failure, the legacy sub-range and other reserved codes are warnings. Earlier revisions
/// partition nothing.
pub fn error_code(code: i64, revision: Revision, base: &str) -> Option<Finding> {
    if revision < Revision::V2026_07_28 {
        return None;
    }
    let (rule, why) = if RETIRED_CODES.contains(&code) {
        (
            &rules::JSONRPC_RESERVED_ERROR_CODE,
            format!(
                "error code {code} was defined by an earlier revision; 2026-07-28 implementations must not emit it"
            ),
        )
    } else if (-32099..=-32020).contains(&code) && !MCP_DEFINED_CODES.contains(&code) {
        (
            &rules::JSONRPC_RESERVED_ERROR_CODE,
            format!(
                "error code {code} is in MCP's sub-range -32020 to -32099, which only the specification allocates, and it defines no such code"
            ),
        )
    } else if (-32019..=-32000).contains(&code) {
        (
            &rules::JSONRPC_LEGACY_ERROR_CODE,
            format!(
                "error code {code} is in the legacy sub-range -32000 to -32019, which new implementations should not use"
            ),
        )
    } else if (-32768..=-32000).contains(&code)
        && !JSONRPC_CODES.contains(&code)
        && !MCP_DEFINED_CODES.contains(&code)
    {
        (
            &rules::JSONRPC_UNALLOCATED_ERROR_CODE,
            format!(
                "error code {code} is in the JSON-RPC reserved range but neither JSON-RPC nor MCP defines it"
            ),
        )
    } else {
        return None;
    };
    Some(
        Finding::new(rule, revision, why)
            .pointer(format!("{base}/error/code"))
            .expected("a JSON-RPC code (-32700, -32600 to -32603), -32020 to -32022 with their meanings, or an application code outside -32768 to -32000"),
    )
}

/// A batch of `len` messages: allowed only in revisions that have batches.
pub fn batch(len: usize, revision: Revision) -> Option<Finding> {
    // 2024-11-05 says nothing of batches while JSON-RPC 2.0 has them; 2025-06-18 removed
    // them ("Remove support for JSON-RPC batching", changelog): judged from there on.
    (revision >= Revision::V2025_06_18).then(|| {
        Finding::new(
            &rules::JSONRPC_BATCH,
            revision,
            format!("the server sent a batch of {len} messages"),
        )
        .expected("single JSON-RPC messages (batches exist only in 2025-03-26)")
    })
}

/// An error response without `id`: allowed from 2025-11-25, before that `id` is `null`.
pub fn omitted_error_id(id_omitted: bool, revision: Revision, base: &str) -> Option<Finding> {
    (id_omitted && revision < Revision::V2025_11_25).then(|| {
        Finding::new(&rules::JSONRPC_ID_TYPE, revision, "an error response omits `id`; before 2025-11-25 it must be present (null when the request id could not be read)")
            .pointer(format!("{base}/id"))
            .expected("\"id\": null")
    })
}

/// A response whose `id` matches no request waiting for one; `already_answered` says
/// whether the id was one the server had answered before.
pub fn unmatched_response(
    id: &RequestId,
    already_answered: bool,
    revision: Revision,
    base: &str,
) -> Finding {
    let why = if already_answered {
        format!("a second response to request {id}, which was already answered")
    } else {
        format!("a response with id {id}, which matches no request mcpcheck sent")
    };
    Finding::new(&rules::JSONRPC_UNKNOWN_ID, revision, why).pointer(format!("{base}/id"))
}

/// The response to request `sent` came back with id `got`: it must be the same id,
/// same JSON type.
pub fn id_echo(
    sent: &RequestId,
    got: &RequestId,
    revision: Revision,
    base: &str,
) -> Option<Finding> {
    (sent != got).then(|| {
        Finding::new(
            &rules::JSONRPC_ID_ECHOED,
            revision,
            format!("request id {sent} was answered with id {got}: same text, different JSON type"),
        )
        .pointer(format!("{base}/id"))
        .expected(format!("{sent}"))
    })
}

/// A request whose method is a notification's (`notifications/...`, the prefix every MCP
/// notification has and no request has): the sender meant a notification and gave it an id.
pub fn notification_with_id(
    method: &str,
    id: &RequestId,
    revision: Revision,
    base: &str,
) -> Option<Finding> {
    method.starts_with("notifications/").then(|| {
        Finding::new(
            &rules::JSONRPC_NOTIFICATION_ID,
            revision,
            format!("the notification `{method}` carries id {id}"),
        )
        .pointer(format!("{base}/id"))
        .expected("no `id` member in a notification")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_codes_are_judged_by_the_2026_partition_only() {
        let rule = |code| error_code(code, Revision::V2026_07_28, "").map(|f| f.rule);
        let id = |r: &crate::outcome::Rule| Some(r.id.to_owned());
        for ok in [
            -32700, -32600, -32601, -32602, -32603, -32020, -32021, -32022, -1, 0, 42, -31999,
            -32769,
        ] {
            assert_eq!(rule(ok), None, "{ok}");
        }
        for retired_or_undefined in [-32002, -32042, -32023, -32099, -32050] {
            assert_eq!(
                rule(retired_or_undefined),
                id(&rules::JSONRPC_RESERVED_ERROR_CODE),
                "{retired_or_undefined}"
            );
        }
        for legacy in [-32000, -32001, -32019] {
            assert_eq!(
                rule(legacy),
                id(&rules::JSONRPC_LEGACY_ERROR_CODE),
                "{legacy}"
            );
        }
        for reserved in [-32100, -32604, -32768, -32699] {
            assert_eq!(
                rule(reserved),
                id(&rules::JSONRPC_UNALLOCATED_ERROR_CODE),
                "{reserved}"
            );
        }
        assert!(error_code(-32002, Revision::V2025_11_25, "").is_none());
        assert!(error_code(-32042, Revision::V2025_11_25, "").is_none());
    }

    const R3: Revision = Revision::V2025_06_18;

    #[test]
    fn each_defect_maps_to_its_rule() {
        let cases = [
            (InvalidReason::MissingJsonrpc, &rules::JSONRPC_VERSION),
            (
                InvalidReason::BothResultAndError,
                &rules::JSONRPC_RESULT_XOR_ERROR,
            ),
            (InvalidReason::ErrorCodeMissing, &rules::JSONRPC_ERROR_SHAPE),
            (InvalidReason::IdNullInRequest, &rules::JSONRPC_ID_TYPE),
            (InvalidReason::EmptyBatch, &rules::JSONRPC_MESSAGE),
        ];
        for (reason, rule) in cases {
            let f = invalid_message(&reason, "/id", R3);
            assert_eq!(f.rule, rule.id, "{reason:?}");
            assert_eq!(f.severity, rule.severity);
            assert_eq!(f.message, reason.to_string());
            assert_eq!(f.pointer.as_deref(), Some("/id"));
        }
    }

    #[test]
    fn batches_are_judged_by_revision() {
        assert!(batch(2, Revision::V2025_03_26).is_none());
        assert!(
            batch(2, Revision::V2024_11_05).is_none(),
            "the text is silent"
        );
        let f = batch(2, R3).expect("no batches in 2025-06-18");
        assert_eq!(f.rule, rules::JSONRPC_BATCH.id);
        assert_eq!(f.message, "the server sent a batch of 2 messages");
    }

    #[test]
    fn an_omitted_error_id_is_wrong_only_before_2025_11_25() {
        assert!(omitted_error_id(true, Revision::V2025_11_25, "").is_none());
        assert!(omitted_error_id(false, R3, "").is_none());
        let f = omitted_error_id(true, R3, "/0").expect("must be present before 2025-11-25");
        assert_eq!(f.pointer.as_deref(), Some("/0/id"));
    }

    #[test]
    fn unmatched_responses_say_whether_the_id_was_answered_before() {
        let id = RequestId::int(3);
        let again = unmatched_response(&id, true, R3, "");
        assert!(again.message.starts_with("a second response to request 3"));
        let stray = unmatched_response(&id, false, R3, "");
        assert!(stray.message.contains("matches no request"));
        assert_eq!(stray.rule, rules::JSONRPC_UNKNOWN_ID.id);
    }

    #[test]
    fn a_notification_method_with_an_id_is_flagged_and_requests_are_not() {
        let id = RequestId::int(1);
        assert!(notification_with_id("tools/list", &id, R3, "").is_none());
        assert!(notification_with_id("ping", &id, R3, "").is_none());
        let f = notification_with_id("notifications/message", &id, R3, "/0")
            .expect("a notification with an id");
        assert_eq!(f.rule, rules::JSONRPC_NOTIFICATION_ID.id);
        assert_eq!(f.pointer.as_deref(), Some("/0/id"));
        assert_eq!(
            f.message,
            "the notification `notifications/message` carries id 1"
        );
    }

    #[test]
    fn an_id_must_come_back_with_its_type() {
        let n = RequestId::int(5);
        let s = RequestId::String("5".into());
        assert!(id_echo(&n, &n, R3, "").is_none());
        let f = id_echo(&n, &s, R3, "").expect("type changed");
        assert_eq!(f.rule, rules::JSONRPC_ID_ECHOED.id);
        assert_eq!(f.expected.as_deref(), Some("5"));
    }
}
