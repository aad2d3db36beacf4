//! Completion rules (`server/utilities/completion#completion-results`): at most 100 values,
//! and `total`/`hasMore` that agree with the values sent. Pure: a result in, findings out.

use serde_json::Value;

use super::{Finding, rules};
use crate::protocol::Revision;

/// The most values one completion result may carry ("Must not exceed 100 items").
pub const MAX_VALUES: usize = 100;

/// Checks one `completion/complete` result found at `base` (`.../result`) in its frame.
/// Shape errors (no `values` array, a `total` that is not an integer) are the schema's.
pub fn result(result: &Value, revision: Revision, base: &str) -> Vec<Finding> {
    let completion = result.get("completion");
    let Some(values) = completion
        .and_then(|c| c.get("values"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    let sent = values.len();
    let mut findings = Vec::new();
    if sent > MAX_VALUES {
        findings.push(
            Finding::new(
                &rules::COMPLETION_VALUES_MAX,
                revision,
                format!("a completion result with {sent} values"),
            )
            .pointer(format!("{base}/completion/values"))
            .expected(format!("at most {MAX_VALUES} values")),
        );
    }
    let total = completion
        .and_then(|c| c.get("total"))
        .and_then(Value::as_u64);
    let has_more = completion
        .and_then(|c| c.get("hasMore"))
        .and_then(Value::as_bool);
    let Some(total) = total.and_then(|t| usize::try_from(t).ok()) else {
        return findings;
    };
    let inconsistent = |message: String, expected: &str| {
        Finding::new(&rules::COMPLETION_TOTAL, revision, message)
            .pointer(format!("{base}/completion"))
            .expected(expected.to_owned())
    };
    if total < sent {
        findings.push(inconsistent(
            format!("`total` is {total}, but {sent} values were sent"),
            "`total` (all options available) at least the number of values sent",
        ));
    } else if total > sent && has_more == Some(false) {
        findings.push(inconsistent(
            format!("`total` is {total} and {sent} values were sent, yet `hasMore` is false"),
            "`hasMore: true` when `total` exceeds the values sent",
        ));
    } else if total == sent && has_more == Some(true) {
        findings.push(inconsistent(
            format!("all {total} options were sent (`total` is {total}), yet `hasMore` is true"),
            "`hasMore: false` (or absent) when every option was sent",
        ));
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const R: Revision = Revision::V2025_11_25;

    fn rules_of(v: Value) -> Vec<String> {
        result(&v, R, "/result")
            .into_iter()
            .map(|f| f.rule)
            .collect()
    }

    #[test]
    fn consistent_results_pass() {
        for v in [
            json!({"completion": {"values": ["a", "b"]}}),
            json!({"completion": {"values": ["a"], "total": 1, "hasMore": false}}),
            json!({"completion": {"values": ["a"], "total": 10, "hasMore": true}}),
            json!({"completion": {"values": ["a"], "total": 10}}),
            json!({"completion": {"values": vec!["x"; 100], "total": 300, "hasMore": true}}),
            json!({"completion": {"values": "not an array"}}),
        ] {
            assert!(rules_of(v.clone()).is_empty(), "{v}");
        }
    }

    #[test]
    fn too_many_values_and_inconsistent_totals_are_flagged() {
        let many =
            json!({"completion": {"values": vec!["x"; 101], "total": 101, "hasMore": false}});
        assert_eq!(
            rules_of(many),
            vec![rules::COMPLETION_VALUES_MAX.id.to_owned()]
        );
        for v in [
            json!({"completion": {"values": ["a", "b"], "total": 1}}),
            json!({"completion": {"values": ["a"], "total": 5, "hasMore": false}}),
            json!({"completion": {"values": ["a"], "total": 1, "hasMore": true}}),
        ] {
            assert_eq!(
                rules_of(v.clone()),
                vec![rules::COMPLETION_TOTAL.id.to_owned()],
                "{v}"
            );
        }
        let f = &result(
            &json!({"completion": {"values": ["a", "b"], "total": 1}}),
            R,
            "/result",
        )[0];
        assert_eq!(f.message, "`total` is 1, but 2 values were sent");
        assert_eq!(f.pointer.as_deref(), Some("/result/completion"));
    }
}
