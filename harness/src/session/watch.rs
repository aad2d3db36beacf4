//! Watches on a session's shutdown. A scenario that judges a rule of the whole session
//! (`scenario::share::judges_shutdown`) may run on a shared session and hand it back: what
//! it did not see of the session is the shutdown (earlier windows broke no MUST, or the
//! session would not have been handed on). It leaves a watch, and the findings of its rule
//! that the shutdown brings reach it when the session ends, in whichever window that is.

use tokio::sync::oneshot;

use super::Session;
use super::transcript::Transcript;
use crate::outcome::Finding;
use crate::outcome::{Direction, Entry};

/// What a session's shutdown showed of one rule.
#[derive(Debug)]
pub struct Late {
    /// Findings of the rule from the shutdown, each `frame` an index into `entries`.
    pub findings: Vec<Finding>,
    /// A note on the shutdown, then each frame a finding points at.
    pub entries: Vec<Entry>,
}

/// The waiting side of a watch ([`Session::watch_shutdown`]).
#[derive(Debug)]
pub struct ShutdownWatch {
    rule: String,
    rx: oneshot::Receiver<Late>,
}

impl ShutdownWatch {
    /// The rule watched.
    pub fn rule(&self) -> &str {
        &self.rule
    }

    /// What the shutdown showed, once the session has ended; `None` when it ended with
    /// no shutdown mcpcheck saw (the session was dropped: the run was cut off).
    pub async fn wait(self) -> Option<Late> {
        self.rx.await.ok()
    }
}

/// The session's side of its watches: who waits, and where its shutdown began.
#[derive(Debug, Default)]
pub(super) struct Watchers {
    /// Scenarios that handed the session back and wait for what its shutdown shows of
    /// their rule.
    waiting: Vec<Watcher>,
    /// How many findings the window held when a scenario closed the server's input
    /// (`expect: exit`): the shutdown began there, and what the server wrote on its way
    /// out from then on belongs to the shutdown the watchers wait for.
    input_closed_at: Option<usize>,
}

impl Watchers {
    /// The input was closed with `findings` findings in the window (the first time counts).
    pub(super) fn input_closed(&mut self, findings: usize) {
        self.input_closed_at.get_or_insert(findings);
    }

    /// Where the shutdown's findings start, when the session ends holding `findings`.
    pub(super) fn shutdown_from(&self, findings: usize) -> usize {
        self.input_closed_at.unwrap_or(findings)
    }

    /// A new window: its input is open.
    pub(super) fn new_window(&mut self) {
        self.input_closed_at = None;
    }

    /// Tells every watcher what the shutdown found (see [`Watcher::tell`]).
    pub(super) fn tell_all(&mut self, findings: &[Finding], transcript: &Transcript, how: &str) {
        for watcher in std::mem::take(&mut self.waiting) {
            watcher.tell(findings, transcript, how);
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }
}

/// The session's side of a watch.
#[derive(Debug)]
pub(super) struct Watcher {
    rule: String,
    tx: oneshot::Sender<Late>,
}

impl Watcher {
    /// Tells the watch what the shutdown found: `findings` are those the session recorded
    /// from its shutdown on, `transcript` the window they point into, `how` the shutdown.
    pub(super) fn tell(self, findings: &[Finding], transcript: &Transcript, how: &str) {
        // The shutdown's own entry, the window's last.
        let at = (transcript.len().checked_sub(1))
            .and_then(|last| transcript.get(last))
            .map(|e| e.at)
            .unwrap_or_default();
        let mut entries = vec![Entry {
            at,
            direction: Direction::Event,
            text: format!(
                "the session this scenario shared ended after other scenarios used it ({how}); \
                 its rule `{}` is judged on that shutdown too",
                self.rule
            ),
            http: None,
        }];
        let findings = findings
            .iter()
            .filter(|f| f.rule == self.rule)
            .map(|f| {
                let mut f = f.clone();
                f.frame = f.frame.and_then(|i| transcript.get(i)).map(|e| {
                    entries.push(e.clone());
                    entries.len() - 1
                });
                f
            })
            .collect();
        // The scenario may be gone (its task died): nothing waits then.
        let _ = self.tx.send(Late { findings, entries });
    }
}

impl Session {
    /// Leaves a watch for the findings of `rule` that this session's shutdown will bring.
    pub fn watch_shutdown(&mut self, rule: &str) -> ShutdownWatch {
        let (tx, rx) = oneshot::channel();
        self.watchers.waiting.push(Watcher {
            rule: rule.to_owned(),
            tx,
        });
        ShutdownWatch {
            rule: rule.to_owned(),
            rx,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::check::rules;
    use crate::session::scripted::session;

    /// What the server writes on its way out reaches the scenario watching for its rule,
    /// with the frame quoted; the findings of other rules do not.
    #[tokio::test]
    async fn the_shutdown_tells_each_watch_its_rule() {
        let mut session = session(&[
            r#"{"jsonrpc":"2.0","id":5,"method":"notifications/message","params":{"level":"info","data":"bye"}}"#,
        ]);
        let mine = session.watch_shutdown(rules::JSONRPC_NOTIFICATION_ID.id);
        let other = session.watch_shutdown(rules::STDIO_NEWLINE.id);
        let record = session.finish().await;
        assert!(
            record
                .findings
                .iter()
                .any(|f| f.rule == rules::JSONRPC_NOTIFICATION_ID.id)
        );
        let late = mine
            .wait()
            .await
            .expect("the session ended with a shutdown");
        assert_eq!(late.findings.len(), 1, "{late:#?}");
        let frame = late.findings[0].frame.expect("it points at the frame");
        assert!(late.entries[frame].text.contains("\"id\":5"), "{late:#?}");
        assert!(late.entries[0].text.contains("shutdown"), "{late:#?}");
        let none = other.wait().await.expect("told too");
        assert!(none.findings.is_empty(), "{none:#?}");
    }

    /// A later scenario that closes the server's input itself (`expect: exit`) reads the
    /// server's last words in its own window before the session ends: they are still the
    /// shutdown's, and reach the watch.
    #[tokio::test]
    async fn last_words_read_after_a_scenario_closed_the_input_reach_the_watch() {
        let mut session = session(&[
            r#"{"jsonrpc":"2.0","id":7,"method":"notifications/message","params":{"level":"info","data":"bye"}}"#,
        ]);
        let watch = session.watch_shutdown(rules::JSONRPC_NOTIFICATION_ID.id);
        session.close_input().await;
        // The closing scenario waits for the exit and reads the line meanwhile.
        session
            .wait_exit(std::time::Duration::from_millis(50))
            .await;
        assert!(
            (session.findings().iter()).any(|f| f.rule == rules::JSONRPC_NOTIFICATION_ID.id),
            "the line was read before the shutdown"
        );
        session.finish().await;
        let late = watch
            .wait()
            .await
            .expect("the session ended with a shutdown");
        assert_eq!(late.findings.len(), 1, "{late:#?}");
        let frame = late.findings[0].frame.expect("it points at the frame");
        assert!(late.entries[frame].text.contains("\"id\":7"), "{late:#?}");
    }

    /// A session dropped without a shutdown (a run cut off) tells its watches nothing.
    #[tokio::test]
    async fn a_session_dropped_unfinished_leaves_the_watch_unanswered() {
        let mut session = session(&[]);
        let watch = session.watch_shutdown(rules::STDIO_NEWLINE.id);
        drop(session);
        assert!(watch.wait().await.is_none());
    }
}
