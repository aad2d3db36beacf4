//! Logging at the handshake revisions (`server/utilities/logging`): once the client set a
//! minimum level with `logging/setLevel`, messages below it are not sent. 2026-07-28's
//! per-request levels are judged in [`super::stateless`].

use serde_json::Value;

use super::stateless::{LOG_LEVELS, log_rank};
use super::{Finding, rules};
use crate::protocol::Revision;

/// A `notifications/message` with `params`, after a `logging/setLevel` to the level ranked
/// `set` (in [`LOG_LEVELS`]) was answered with a result (`None`: no level set yet).
/// A level of no protocol name is the schema's business, not this rule's.
pub fn below_set_level(
    params: Option<&Value>,
    set: Option<usize>,
    revision: Revision,
) -> Option<Finding> {
    let set = set.filter(|_| revision.has_handshake())?;
    let level = params
        .and_then(|p| p.get("level"))
        .and_then(Value::as_str)?;
    let rank = log_rank(level)?;
    (rank < set).then(|| {
        Finding::new(
            &rules::LOGGING_AT_OR_ABOVE_SET_LEVEL,
            revision,
            format!(
                "the server sent a `{level}` log message after logging/setLevel set the minimum to `{}`",
                LOG_LEVELS[set]
            ),
        )
        .pointer("/params/level")
        .expected(format!("a level of `{}` or above", LOG_LEVELS[set]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const R4: Revision = Revision::V2025_11_25;

    #[test]
    fn messages_below_the_set_level_are_found() {
        let warning = log_rank("warning");
        let debug = json!({"level": "debug", "data": "x"});
        let f = below_set_level(Some(&debug), warning, R4).expect("debug is below warning");
        assert_eq!(f.rule, rules::LOGGING_AT_OR_ABOVE_SET_LEVEL.id);
        assert_eq!(f.pointer.as_deref(), Some("/params/level"));
        for ok in ["warning", "error", "emergency"] {
            let p = json!({"level": ok, "data": "x"});
            assert!(below_set_level(Some(&p), warning, R4).is_none(), "{ok}");
        }
        // No level set yet, a level of no protocol name, the stateless revision: not this rule.
        assert!(below_set_level(Some(&debug), None, R4).is_none());
        let odd = json!({"level": "verbose"});
        assert!(below_set_level(Some(&odd), warning, R4).is_none());
        assert!(below_set_level(Some(&debug), warning, Revision::V2026_07_28).is_none());
    }
}
