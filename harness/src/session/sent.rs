//! What the messages sent so far established: the server's unprompted messages are judged
//! against it (a log message below the level asked for, a change notification nobody
//! listens for, a request before `notifications/initialized`).

use serde_json::{Map, Value};

/// What the client's messages so far asked of the server.
#[derive(Debug, Default)]
pub(super) struct Sent {
    /// `notifications/initialized` went out (or a 2026-07-28 server was discovered).
    pub(super) initialized: bool,
    /// The lowest log level a request sent so far set in its `_meta` (2026-07-28 logging),
    /// as a rank in `check::stateless::LOG_LEVELS`.
    pub(super) lowest_log_level: Option<usize>,
    /// The minimum log level the last answered `logging/setLevel` set (handshake
    /// revisions), as a rank in `check::stateless::LOG_LEVELS`.
    pub(super) log_level_set: Option<usize>,
    /// 2026-07-28: the client capabilities the requests sent so far declared in `_meta`,
    /// merged (to tell a capability carried over from an earlier request).
    declared: Map<String, Value>,
    /// The ids of the `subscriptions/listen` requests sent (2026-07-28): change
    /// notifications may come once there is one, each naming its own in `_meta`.
    pub(super) listens: Vec<Value>,
}

impl Sent {
    /// A request's `_meta` asked for log messages at `rank` and above.
    pub(super) fn log_level_requested(&mut self, rank: usize) {
        self.lowest_log_level = Some(self.lowest_log_level.map_or(rank, |l| l.min(rank)));
    }

    /// A request declared the capabilities `now`: returns those declared before it, and
    /// adds its own to them (the first declaration of a capability is the one kept).
    pub(super) fn declare(&mut self, now: &Value) -> Value {
        let earlier = Value::Object(self.declared.clone());
        if let Value::Object(now) = now {
            for (k, v) in now {
                self.declared.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        earlier
    }

    /// A new scenario's window: 2026-07-28 carries nothing from one request to the next,
    /// so the log levels and capabilities that count are the new scenario's own.
    pub(super) fn new_window(&mut self) {
        self.lowest_log_level = None;
        self.declared.clear();
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn declarations_merge_first_one_kept_and_a_window_forgets_them() {
        let mut sent = Sent::default();
        assert_eq!(sent.declare(&json!({"sampling": {}})), json!({}));
        assert_eq!(
            sent.declare(&json!({"sampling": {"x": 1}, "roots": {}})),
            json!({"sampling": {}})
        );
        assert_eq!(
            sent.declare(&json!({})),
            json!({"sampling": {}, "roots": {}})
        );
        sent.log_level_requested(3);
        sent.log_level_requested(5);
        assert_eq!(sent.lowest_log_level, Some(3));
        sent.new_window();
        assert_eq!(sent.declare(&json!({})), json!({}));
        assert_eq!(sent.lowest_log_level, None);
    }
}
