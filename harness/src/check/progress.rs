//! Progress rules (`basic/utilities/progress`): a notification names a request still in
//! progress, and its `progress` increases per token. Pure: the session says which request
//! a token belongs to. A token is only unique "across all active requests", so a later
//! request may carry it again: its progress is a new history, keyed by that request.

use std::collections::HashMap;

use serde_json::Value;

use super::{Finding, rules};
use crate::protocol::{RequestId, Revision};

/// Where a progress token stands among the client's requests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenState {
    /// The request `0`, waiting for its response, carries it.
    Active(RequestId),
    /// Only the request `0`, already given up on, carries it (it may still run on the server).
    TimedOut(RequestId),
    /// No request in progress carries it (never sent, already answered, or its task
    /// terminal).
    Unknown,
}

/// The last `progress` value seen per request and token: the state the increase rule needs.
#[derive(Debug, Default)]
pub struct ProgressHistory {
    /// Keyed by the request and the token's JSON text, so `1` and `"1"` stay apart.
    last: HashMap<(RequestId, String), f64>,
}

/// Checks the `params` of one `notifications/progress` (found at `base` in its frame),
/// whose token is in `state`; records its value in `history`.
pub fn notification(
    params: &Value,
    state: TokenState,
    history: &mut ProgressHistory,
    revision: Revision,
    base: &str,
) -> Vec<Finding> {
    let Some(token) = params.get("progressToken") else {
        return Vec::new(); // the schema check reports the missing member
    };
    let request = match state {
        TokenState::Active(id) | TokenState::TimedOut(id) => id,
        TokenState::Unknown => return vec![
            Finding::new(
                &rules::PROGRESS_ACTIVE_TOKEN,
                revision,
                format!(
                    "notifications/progress for token {token}, which no request in progress carries (never sent, already answered, or its task already terminal)"
                ),
            )
            .pointer(format!("{base}/params/progressToken")),
        ],
    };
    let Some(progress) = params.get("progress").and_then(Value::as_f64) else {
        return Vec::new();
    };
    let key = (request, token.to_string());
    let mut findings = Vec::new();
    if let Some(&last) = history.last.get(&key)
        && progress <= last
    {
        findings.push(
            Finding::new(
                &rules::PROGRESS_INCREASING,
                revision,
                format!(
                    "notifications/progress for token {token} (request {}) went from {last} to {progress}; it must increase with each notification",
                    key.0
                ),
            )
            .pointer(format!("{base}/params/progress"))
            .expected(format!("a progress above {last}")),
        );
    }
    history.last.insert(key, progress);
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const R: Revision = Revision::V2025_06_18;

    fn req() -> RequestId {
        RequestId::int(1)
    }

    fn rules_of(findings: &[Finding]) -> Vec<&str> {
        findings.iter().map(|f| f.rule.as_str()).collect()
    }

    #[test]
    fn progress_for_an_unknown_token_is_a_failure_and_not_recorded() {
        let mut h = ProgressHistory::default();
        let p = json!({ "progressToken": "t", "progress": 1 });
        let f = notification(&p, TokenState::Unknown, &mut h, R, "");
        assert_eq!(rules_of(&f), [rules::PROGRESS_ACTIVE_TOKEN.id]);
        assert_eq!(f[0].pointer.as_deref(), Some("/params/progressToken"));
        assert!(h.last.is_empty());
    }

    #[test]
    fn progress_must_increase_per_token() {
        let mut h = ProgressHistory::default();
        let at = |v: f64| json!({ "progressToken": "t", "progress": v });
        assert!(notification(&at(1.0), TokenState::Active(req()), &mut h, R, "").is_empty());
        assert!(notification(&at(2.5), TokenState::Active(req()), &mut h, R, "").is_empty());
        let f = notification(&at(2.5), TokenState::Active(req()), &mut h, R, "/1");
        assert_eq!(rules_of(&f), [rules::PROGRESS_INCREASING.id]);
        assert_eq!(f[0].pointer.as_deref(), Some("/1/params/progress"));
        assert_eq!(f[0].expected.as_deref(), Some("a progress above 2.5"));
        // Another token, and the same text under another JSON type, start afresh.
        let other = json!({ "progressToken": 7, "progress": 1 });
        assert!(notification(&other, TokenState::TimedOut(req()), &mut h, R, "").is_empty());
        let typed = json!({ "progressToken": "7", "progress": 1 });
        assert!(notification(&typed, TokenState::Active(req()), &mut h, R, "").is_empty());
    }

    /// The issue-12 false positive: a scenario's loop sent one token on every `tools/call`
    /// and a correct server's progress for the next call, starting at 0 again, was
    /// reported as "went from 5 to 0". Tokens are unique among active requests only.
    #[test]
    fn a_token_reused_by_a_later_request_starts_a_new_history() {
        let mut h = ProgressHistory::default();
        let at = |v: f64| json!({ "progressToken": "t", "progress": v });
        let first = TokenState::Active(RequestId::int(1));
        let second = TokenState::Active(RequestId::int(2));
        assert!(notification(&at(5.0), first.clone(), &mut h, R, "").is_empty());
        assert!(notification(&at(0.0), second.clone(), &mut h, R, "").is_empty());
        let f = notification(&at(0.0), second, &mut h, R, "");
        assert_eq!(rules_of(&f), [rules::PROGRESS_INCREASING.id]);
        assert!(f[0].message.contains("(request 2)"), "{}", f[0].message);
    }

    #[test]
    fn a_missing_token_or_value_is_left_to_the_schema_check() {
        let mut h = ProgressHistory::default();
        let no_token = json!({ "progress": 1 });
        assert!(notification(&no_token, TokenState::Unknown, &mut h, R, "").is_empty());
        let no_value = json!({ "progressToken": "t" });
        assert!(notification(&no_value, TokenState::Active(req()), &mut h, R, "").is_empty());
    }
}
