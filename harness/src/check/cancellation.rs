//! Cancellation a server sends (`basic/utilities/cancellation`, 2026-07-28
//! `basic/patterns/cancellation`): it names a request of its own. Pure: the session says
//! which requests the server sent and which listens the client opened.

use serde_json::Value;

use super::{Finding, rules};
use crate::protocol::{RequestId, Revision};

/// Checks the `params` of a `notifications/cancelled` the server sent (found at `base` in
/// its frame). With a handshake, "Cancellation notifications MUST only reference requests
/// that ... Were previously issued in the same direction": one of `server_requests`. At
/// 2026-07-28 "Server-sent cancellation notifications MUST reference a
/// `subscriptions/listen` request" (one of `listens`, which the client sent), and
/// "Servers MUST NOT send `notifications/cancelled` for any other purpose".
///
/// Whether the request was still "believed to be in progress" is the server's belief: a
/// cancellation may cross the answer, so it is not judged. A missing `requestId` is the
/// schema check's.
pub fn server_cancelled(
    params: Option<&Value>,
    server_requests: &[RequestId],
    listens: &[Value],
    revision: Revision,
    base: &str,
) -> Option<Finding> {
    let named = params?.get("requestId")?;
    let (allowed, what) = match revision.has_handshake() {
        true => (
            RequestId::from_value(named).is_some_and(|id| server_requests.contains(&id)),
            "a request the server itself sent",
        ),
        false => (
            listens.contains(named),
            "a `subscriptions/listen` request whose stream the server tears down",
        ),
    };
    if allowed {
        return None;
    }
    let sent = match revision.has_handshake() {
        true => list(
            server_requests
                .iter()
                .map(|id| id.to_json().get().to_owned()),
            "the server sent no request",
            "the requests it sent",
        ),
        false => list(
            listens.iter().map(Value::to_string),
            "no `subscriptions/listen` was sent",
            "the listens sent",
        ),
    };
    Some(
        Finding::new(
            &rules::CANCELLATION_SERVER_OWN_REQUEST,
            revision,
            format!(
                "the server sent notifications/cancelled for request {named}, which is not {what} ({sent})"
            ),
        )
        .pointer(format!("{base}/params/requestId"))
        .expected(format!("the id of {what}")),
    )
}

fn list(ids: impl Iterator<Item = String>, none: &str, some: &str) -> String {
    let ids: Vec<String> = ids.collect();
    match ids.is_empty() {
        true => none.to_owned(),
        false => format!("{some}: {}", ids.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn with_a_handshake_only_the_servers_own_requests() {
        let own = [RequestId::int(7), RequestId::String("s1".into())];
        let judge = |id: Value| {
            server_cancelled(
                Some(&json!({ "requestId": id })),
                &own,
                &[],
                Revision::V2025_11_25,
                "",
            )
        };
        assert!(judge(json!(7)).is_none());
        assert!(judge(json!("s1")).is_none());
        // The client's request, echoed back; and 7 written as a string is another id.
        let echoed = judge(json!("mcpcheck-cancel-1")).expect("a finding");
        assert_eq!(echoed.rule, rules::CANCELLATION_SERVER_OWN_REQUEST.id);
        assert!(
            echoed.message.contains("the requests it sent: 7, \"s1\""),
            "{}",
            echoed.message
        );
        assert!(judge(json!("7")).is_some());
        // No requestId: the schema says so.
        assert!(server_cancelled(Some(&json!({})), &own, &[], Revision::V2025_11_25, "").is_none());
    }

    #[test]
    fn at_2026_07_28_only_a_listen_the_client_opened() {
        let listens = [json!(3)];
        let own = [RequestId::int(9)];
        let judge = |id: Value| {
            server_cancelled(
                Some(&json!({ "requestId": id })),
                &own,
                &listens,
                Revision::V2026_07_28,
                "/x",
            )
        };
        assert!(judge(json!(3)).is_none());
        // A request the server sent does not count any more: only listens.
        let finding = judge(json!(9)).expect("a finding");
        assert_eq!(finding.pointer.as_deref(), Some("/x/params/requestId"));
        assert!(
            finding.message.contains("subscriptions/listen"),
            "{}",
            finding.message
        );
    }
}
