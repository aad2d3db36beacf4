//! How fast the server answers, learnt across every session of a run, so that a server
//! proven to lose answers does not cost the whole `--timeout` on each one it loses.
//!
//! A missing answer can only be told from a slow one by waiting. The first wait therefore
//! always lasts the whole timeout. It proves a loss only when the server answered the same
//! kind of request (same method, same tool, prompt or resource) in time elsewhere in the
//! run: the request was not one the server is slow at, and the server was not merely gone
//! (a hung or dead server proves nothing here). After such a proof, a wait ends at [`SLACK`]
//! times the typical (median) answer of its kind, or [`OUTLIER`] times its slowest if that
//! is later; for a kind never answered, at [`SLACK`] times the server's typical answer of
//! any kind; never under [`FLOOR`], never over the timeout; and its finding says so. Progress restarts such a wait as any other. Any answer that arrives
//! after its wait ended withdraws the proof for the rest of the run: that server is slow,
//! not lossy, and gets whole timeouts again. Only answers to a request sent while nothing
//! else was awaited, on a server that had already answered, are timed: a burst's answers
//! queue and a first answer waits for the start-up.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::Value;

/// How many in-time answers of a kind make its latency known.
const MIN_SEEN: u32 = 2;

/// How many answer times a median is taken over (the first ones; enough to be typical).
const SAMPLES: usize = 256;

/// A bounded wait lasts at least this many times the typical answer of its kind.
const SLACK: u32 = 20;

/// A bounded wait lasts at least this many times the slowest answer of its kind (one
/// pause of the server's, say a collection, does not make the typical time a lie).
const OUTLIER: u32 = 3;

/// A bounded wait never ends sooner than this, whatever the server's latency.
const FLOOR: Duration = Duration::from_secs(1);

/// The run's record of answer times (cheap to clone: every clone shares it).
#[derive(Clone, Debug, Default)]
pub struct Pace(Arc<Mutex<Record>>);

#[derive(Debug, Default)]
struct Record {
    /// Per kind of request, its in-time answers.
    seen: HashMap<String, Times>,
    /// The in-time answers of every kind.
    all: Times,
    /// What the proof stands at.
    loss: Loss,
}

#[derive(Debug, Default)]
enum Loss {
    /// No answer proven lost.
    #[default]
    Unproven,
    /// This request's answer never came, though its kind is answered in time elsewhere.
    Proven(String),
    /// A late answer showed the server slow, not lossy: no wait is bounded any more.
    Withdrawn,
}

/// In-time answer times: how many, the slowest, and the first [`SAMPLES`] for a median.
#[derive(Debug, Default)]
struct Times {
    count: u32,
    slowest: Duration,
    samples: Vec<Duration>,
}

impl Times {
    fn add(&mut self, after: Duration) {
        self.count += 1;
        self.slowest = self.slowest.max(after);
        if self.samples.len() < SAMPLES {
            self.samples.push(after);
        }
    }

    /// Whether there are enough answers to say how fast they come.
    fn known(&self) -> bool {
        self.count >= MIN_SEEN
    }

    fn median(&self) -> Duration {
        let mut sorted = self.samples.clone();
        sorted.sort_unstable();
        sorted.get(sorted.len() / 2).copied().unwrap_or_default()
    }
}

/// A wait shortened because the server already lost an answer, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Bound {
    /// How long the wait lasts.
    pub after: Duration,
    /// Why not the whole timeout, for the finding.
    pub because: String,
}

/// Requests that wait by design for as long as the work they wait on: `tasks/result` "MUST
/// block the response until the task reaches a terminal status" (2025-11-25
/// basic/utilities/tasks#result-retrieval), so other answers' times say nothing of theirs.
const BLOCKING: &[&str] = &["tasks/result"];

/// The kind of a request, as far as its latency goes: its method, and for a tool call,
/// prompt or resource read, which one (one slow tool says nothing of the others).
pub fn kind_of(method: &str, params: Option<&Value>) -> String {
    let subject = match method {
        "tools/call" | "prompts/get" => params.and_then(|p| p.get("name")),
        "resources/read" => params.and_then(|p| p.get("uri")),
        _ => None,
    };
    match subject.and_then(Value::as_str) {
        Some(name) => format!("{method} {name}"),
        None => method.to_owned(),
    }
}

impl Pace {
    fn lock(&self) -> MutexGuard<'_, Record> {
        // A panic elsewhere cannot leave the record half-written: each update is one
        // assignment, so the data behind a poisoned lock is still sound.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// An answer of `kind` came `after` its request was sent, in time.
    pub fn answered(&self, kind: &str, after: Duration) {
        let mut record = self.lock();
        record.seen.entry(kind.to_owned()).or_default().add(after);
        record.all.add(after);
    }

    /// The whole timeout ran out on `request` (described for the finding), of `kind`.
    pub fn timed_out(&self, kind: &str, request: String) {
        let mut record = self.lock();
        let known = record.seen.get(kind).is_some_and(Times::known);
        if known && matches!(record.loss, Loss::Unproven) {
            record.loss = Loss::Proven(request);
        }
    }

    /// Whether the server has been proven to lose answers (and not withdrawn since).
    pub fn proven(&self) -> bool {
        matches!(self.lock().loss, Loss::Proven(_))
    }

    /// An answer came after its wait had ended: the server is slow, not lossy.
    pub fn late(&self) {
        self.lock().loss = Loss::Withdrawn;
    }

    /// How long to wait for an answer of `kind`, when that is less than `timeout`.
    pub fn bound(&self, kind: &str, timeout: Duration) -> Option<Bound> {
        if BLOCKING.contains(&kind) {
            return None;
        }
        let record = self.lock();
        let Loss::Proven(lost) = &record.loss else {
            return None;
        };
        let (after, seen) = match record.seen.get(kind) {
            Some(times) if times.known() => (
                (times.median() * SLACK).max(times.slowest * OUTLIER),
                format!(
                    "answered `{kind}` {} times, typically within {} and at most {}",
                    times.count,
                    ms(times.median()),
                    ms(times.slowest)
                ),
            ),
            _ if record.all.known() => (
                record.all.median() * SLACK,
                format!(
                    "never answered `{kind}` before, and answers typically within {} ({} answers)",
                    ms(record.all.median()),
                    record.all.count
                ),
            ),
            _ => return None,
        };
        let after = round_ms(after.max(FLOOR));
        (after < timeout).then(|| Bound {
            after,
            because: format!(
                "the server already lost the answer to {lost}, and {seen}: this wait ended at {}",
                ms(after)
            ),
        })
    }
}

fn ms(d: Duration) -> humantime::FormattedDuration {
    humantime::format_duration(round_ms(d))
}

fn round_ms(d: Duration) -> Duration {
    Duration::from_millis(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MS: Duration = Duration::from_millis(1);
    const TIMEOUT: Duration = Duration::from_secs(10);

    #[test]
    fn no_wait_is_bounded_before_a_loss_is_proven() {
        let pace = Pace::default();
        pace.answered("ping", 5 * MS);
        pace.answered("ping", 7 * MS);
        assert_eq!(pace.bound("ping", TIMEOUT), None);
    }

    #[test]
    fn a_loss_of_a_kind_answered_elsewhere_bounds_later_waits_of_known_kinds() {
        let pace = Pace::default();
        for ms in [5, 70, 60] {
            pace.answered("ping", ms * MS);
        }
        pace.timed_out("ping", "`ping` (id 3)".into());
        let bound = pace.bound("ping", TIMEOUT).expect("bounded");
        assert_eq!(bound.after, 1200 * MS, "20 times the typical answer");
        assert!(bound.because.contains("`ping` (id 3)"), "{}", bound.because);
        // A kind never answered is judged by the typical answer of any kind (60 ms).
        let unseen = pace.bound("tools/call other", TIMEOUT).expect("bounded");
        assert_eq!(unseen.after, 1200 * MS);
        assert!(unseen.because.contains("never answered `tools/call other`"));
        // Fast answers still get the floor; the bound never exceeds the timeout.
        pace.answered("tools/list", MS);
        pace.answered("tools/list", MS);
        assert_eq!(pace.bound("tools/list", TIMEOUT).unwrap().after, FLOOR);
        // A kind known to be slow keeps its own, longer wait; one slow answer of a fast
        // kind counts three times over.
        pace.answered("tools/call slow", 400 * MS);
        pace.answered("tools/call slow", 300 * MS);
        assert_eq!(
            pace.bound("tools/call slow", TIMEOUT).unwrap().after,
            8 * FLOOR
        );
        for ms in [2, 2, 2, 900] {
            pace.answered("resources/list", ms * MS);
        }
        assert_eq!(
            pace.bound("resources/list", TIMEOUT).unwrap().after,
            2700 * MS
        );
        pace.answered("tools/call slower", 600 * MS);
        pace.answered("tools/call slower", 600 * MS);
        assert_eq!(
            pace.bound("tools/call slower", TIMEOUT),
            None,
            "12 s is past the timeout"
        );
        assert_eq!(pace.bound("ping", Duration::from_secs(1)), None);
        // tasks/result blocks until its task ends: never cut short by others' pace.
        pace.answered("tasks/result", MS);
        assert_eq!(pace.bound("tasks/result", TIMEOUT), None);
    }

    #[test]
    fn a_timeout_of_a_kind_never_answered_proves_nothing() {
        // A hung `tools/list` (never answered anywhere) is a hang, not a lost answer.
        let pace = Pace::default();
        pace.answered("ping", MS);
        pace.answered("ping", MS);
        pace.answered("tools/list", MS);
        pace.timed_out("tools/list", "`tools/list` (id 2)".into());
        assert_eq!(pace.bound("ping", TIMEOUT), None);
    }

    #[test]
    fn a_late_answer_withdraws_the_proof_for_good() {
        let pace = Pace::default();
        pace.answered("ping", MS);
        pace.answered("ping", MS);
        pace.timed_out("ping", "`ping` (id 3)".into());
        pace.late();
        assert_eq!(pace.bound("ping", TIMEOUT), None);
        pace.timed_out("ping", "`ping` (id 9)".into());
        assert_eq!(pace.bound("ping", TIMEOUT), None, "withdrawn for the run");
    }

    #[test]
    fn clones_share_one_record() {
        let pace = Pace::default();
        let other = pace.clone();
        other.answered("ping", MS);
        other.answered("ping", MS);
        other.timed_out("ping", "`ping` (id 1)".into());
        assert!(pace.bound("ping", TIMEOUT).is_some());
    }

    #[test]
    fn the_kind_names_the_tool_prompt_or_resource() {
        let call = json!({"name": "add", "arguments": {}});
        assert_eq!(kind_of("tools/call", Some(&call)), "tools/call add");
        assert_eq!(
            kind_of("resources/read", Some(&json!({"uri": "file:///a"}))),
            "resources/read file:///a"
        );
        assert_eq!(kind_of("tools/list", Some(&call)), "tools/list");
        assert_eq!(kind_of("tools/call", None), "tools/call");
    }
}
