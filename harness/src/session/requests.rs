//! The session's book of its own requests: which ids it may still allocate, which
//! requests await an answer, which were given up on (a late answer is still checked), which
//! were answered and how. One type, so the id rules (never reuse an id within a session,
//! never take one a scenario will choose) and the life of a request (pending, answered,
//! expired, forgiven) live in one place with their tests.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::Reply;
use super::gate::ListPage;
use crate::protocol::{RequestId, Revision};

/// A request sent and not yet answered (or given up on).
#[derive(Debug)]
pub(super) struct Pending {
    pub(super) method: String,
    /// The revision in force when the request was sent (decides its result schema).
    pub(super) revision: Revision,
    /// The request's `_meta.progressToken`: progress on it restarts the timeout.
    pub(super) progress_token: Option<Value>,
    /// For `logging/setLevel`: the rank (in `check::stateless::LOG_LEVELS`) of the level
    /// it asks for, in force once it is answered with a result.
    pub(super) log_level: Option<usize>,
    /// 2026-07-28: the client capabilities the request's `_meta` declared, and those the
    /// earlier requests of the session declared (merged), to judge an `input_required` by
    /// the request's own (basic#statelessness).
    pub(super) declared: Option<(Value, Value)>,
    /// For `tools/list`: the page it asks for, so the tool-call gate knows when it has
    /// read the server's whole list.
    pub(super) page: Option<ListPage>,
    /// Its params carry `task` (2025-11-25 basic/utilities/tasks): a result with a `task`
    /// member is then a `CreateTaskResult`, not the method's own result.
    pub(super) task_augmented: bool,
    /// Its kind as the run's [`Pace`](super::pace::Pace) counts answer times.
    pub(super) kind: String,
    /// When it was sent, to time its answer.
    pub(super) sent: std::time::Instant,
    /// Nothing else was awaited when it was sent, and the server had answered before: its
    /// answer time is the server's own, not a queue's or a start-up's (set by
    /// [`RequestBook::open`]).
    pub(super) alone: bool,
}

impl Pending {
    /// A request of `method` at `revision`, with nothing else known about it.
    pub(super) fn of(method: &str, revision: Revision) -> Self {
        Pending {
            method: method.to_owned(),
            revision,
            progress_token: None,
            log_level: None,
            declared: None,
            page: None,
            task_augmented: false,
            kind: method.to_owned(),
            sent: std::time::Instant::now(),
            alone: false,
        }
    }

    fn is_opening(&self) -> bool {
        matches!(self.method.as_str(), "initialize" | "server/discover")
    }
}

/// Every request of a session, by id (see the module doc).
#[derive(Debug)]
pub(super) struct RequestBook {
    next_id: i64,
    pending: HashMap<RequestId, Pending>,
    /// Answers not yet collected by their waiter.
    replies: HashMap<RequestId, Reply>,
    /// Every id answered so far (an id is never reused within a session).
    answered: HashSet<RequestId>,
    /// Pending requests that reported progress since their timeout clock last started.
    progressed: HashSet<RequestId>,
    /// Progress tokens of raw-sent requests not yet registered with `expect_reply`.
    raw_progress_tokens: HashMap<RequestId, Value>,
    /// Requests given up on after their timeout: a late answer is still checked (id type,
    /// schema) but no longer awaited.
    expired: HashMap<RequestId, Pending>,
    /// Requests whose answer arrived unusable, with what was wrong: their wait ends at
    /// once instead of at the timeout.
    spoiled: HashMap<RequestId, String>,
    /// Ids the current scenario will choose itself (until the next window).
    reserved: HashSet<RequestId>,
    /// Ids never to allocate, whatever the window (the shared scenarios' own).
    chosen: HashSet<RequestId>,
    /// Expired requests the server read and chose not to answer, as a later request's
    /// answer showed: no sign of a stuck or buffering server.
    forgiven: HashSet<RequestId>,
    /// Tasks a task-augmented request with a progress token created, by task id: the token
    /// stays in use "throughout the task's lifetime, even after the CreateTaskResult has
    /// been returned" (2025-11-25 basic/utilities/progress), until a terminal status.
    task_tokens: HashMap<String, (Value, RequestId)>,
}

/// The statuses after which a task's progress must stop (basic/utilities/tasks).
const TERMINAL_TASK_STATUSES: [&str; 3] = ["completed", "failed", "cancelled"];

impl Default for RequestBook {
    fn default() -> Self {
        RequestBook {
            next_id: 1,
            pending: HashMap::new(),
            replies: HashMap::new(),
            answered: HashSet::new(),
            progressed: HashSet::new(),
            raw_progress_tokens: HashMap::new(),
            expired: HashMap::new(),
            spoiled: HashMap::new(),
            reserved: HashSet::new(),
            chosen: HashSet::new(),
            forgiven: HashSet::new(),
            task_tokens: HashMap::new(),
        }
    }
}

impl RequestBook {
    /// The next integer id no request of the session used and no scenario will choose.
    pub(super) fn allocate(&mut self) -> RequestId {
        loop {
            let id = RequestId::int(self.next_id);
            self.next_id += 1;
            if !self.used(&id) && !self.reserved.contains(&id) && !self.chosen.contains(&id) {
                return id;
            }
        }
    }

    /// Whether a request of the session already used `id`.
    pub(super) fn used(&self, id: &RequestId) -> bool {
        self.pending.contains_key(id) || self.answered.contains(id) || self.expired.contains_key(id)
    }

    /// Starts awaiting the answer to `id`; a progress token seen in raw bytes already sent
    /// for it joins it when it has none of its own.
    pub(super) fn open(&mut self, id: RequestId, mut pending: Pending) {
        if let Some(token) = self.raw_progress_tokens.remove(&id) {
            pending.progress_token.get_or_insert(token);
        }
        // The session's first answer also waits for the server to start.
        pending.alone = self.pending.is_empty() && !self.answered.is_empty();
        self.pending.insert(id, pending);
    }

    /// Notes the progress token of a request found in raw bytes: its own if it is
    /// pending, else kept for when it is opened.
    pub(super) fn note_raw_token(&mut self, id: RequestId, token: Value) {
        match self.pending.get_mut(&id) {
            Some(p) => p.progress_token = Some(token),
            None => {
                self.raw_progress_tokens.insert(id, token);
            }
        }
    }

    /// The answer to `id`, if it came and was not collected yet.
    pub(super) fn take_reply(&mut self, id: &RequestId) -> Option<Reply> {
        self.replies.remove(id)
    }

    /// Why the answer to `id` was unusable, if it was.
    pub(super) fn take_spoiled(&mut self, id: &RequestId) -> Option<String> {
        self.spoiled.remove(id)
    }

    /// Whether the answer to `id` came unusable (its reason not yet collected).
    pub(super) fn is_spoiled(&self, id: &RequestId) -> bool {
        self.spoiled.contains_key(id)
    }

    /// Whether `id` reported progress since the last look (its timeout may restart).
    pub(super) fn take_progressed(&mut self, id: &RequestId) -> bool {
        self.progressed.remove(id)
    }

    /// Stops awaiting `id` without keeping it (the server is gone).
    pub(super) fn drop_pending(&mut self, id: &RequestId) {
        self.pending.remove(id);
    }

    /// Gives up on pending `id` (a late answer is still checked, not awaited); whether it
    /// was pending.
    pub(super) fn give_up(&mut self, id: &RequestId) -> bool {
        match self.pending.remove(id) {
            Some(p) => {
                self.expired.insert(id.clone(), p);
                true
            }
            None => false,
        }
    }

    /// Ends the wait for pending `id`: its answer came, unusable (`why`).
    pub(super) fn spoil(&mut self, id: &RequestId, why: String) {
        if self.give_up(id) {
            self.spoiled.insert(id.clone(), why);
        }
    }

    /// The request an answer under `id` answers: that id, or (a finding later) one with
    /// the same text under another JSON type.
    pub(super) fn matching(&self, id: &RequestId) -> Option<RequestId> {
        if self.pending.contains_key(id) || self.expired.contains_key(id) {
            return Some(id.clone());
        }
        self.pending
            .keys()
            .chain(self.expired.keys())
            .find(|k| k.same_text_other_type(id))
            .cloned()
    }

    /// Takes `key` out of the awaited (or given-up) requests; the flag says whether it had
    /// been given up on.
    pub(super) fn take(&mut self, key: &RequestId) -> Option<(Pending, bool)> {
        if let Some(p) = self.pending.remove(key) {
            return Some((p, false));
        }
        self.expired.remove(key).map(|p| (p, true))
    }

    /// Records that `key` was answered; `reply` is kept for its waiter (none for a late
    /// answer, which nobody awaits).
    pub(super) fn answer(&mut self, key: RequestId, reply: Option<Reply>) {
        self.answered.insert(key.clone());
        if let Some(reply) = reply {
            self.replies.insert(key, reply);
        }
    }

    /// Whether `id` was answered.
    pub(super) fn was_answered(&self, id: &RequestId) -> bool {
        self.answered.contains(id)
    }

    /// Whether any request was answered.
    pub(super) fn any_answered(&self) -> bool {
        !self.answered.is_empty()
    }

    /// The handshake request, when it is the only request ever sent and nothing was
    /// answered: an answer under another id can only be its answer.
    pub(super) fn lone_opening(&self) -> Option<RequestId> {
        if !self.answered.is_empty() || !self.expired.is_empty() || self.pending.len() != 1 {
            return None;
        }
        let (id, p) = self.pending.iter().next()?;
        p.is_opening().then(|| id.clone())
    }

    /// The kind of pending request `id`, as the run's pace counts answer times.
    pub(super) fn kind_of(&self, id: &RequestId) -> Option<&str> {
        self.pending.get(id).map(|p| p.kind.as_str())
    }

    /// The method of pending request `id`.
    pub(super) fn method_of(&self, id: &RequestId) -> Option<&str> {
        self.pending.get(id).map(|p| p.method.as_str())
    }

    /// Whether `id` awaits an answer.
    pub(super) fn is_pending(&self, id: &RequestId) -> bool {
        self.pending.contains_key(id)
    }

    /// `task` (a `Task` object: a `CreateTaskResult`'s `task`, a `tasks/get` result, a
    /// `tasks/list` item, a `notifications/tasks/status`) as the server showed it: a task
    /// created by `request` (a task-augmented request carrying `token`) keeps its token
    /// active while its status is not terminal; a terminal status ends it.
    pub(super) fn task_seen(&mut self, task: &Value, created_by: Option<(&RequestId, &Value)>) {
        let Some(task_id) = task.get("taskId").and_then(Value::as_str) else {
            return;
        };
        let terminal = task
            .get("status")
            .and_then(Value::as_str)
            .is_some_and(|s| TERMINAL_TASK_STATUSES.contains(&s));
        if terminal {
            self.task_tokens.remove(task_id);
        } else if let Some((request, token)) = created_by {
            self.task_tokens
                .insert(task_id.to_owned(), (token.clone(), request.clone()));
        }
    }

    /// The request (awaited, then given up on) whose progress token is `token`, and
    /// whether it is still awaited; an awaited one is marked as having progressed. A task's
    /// request counts as awaited until the task ends ([`RequestBook::task_seen`]).
    pub(super) fn progress_on(&mut self, token: &Value) -> Option<(RequestId, bool)> {
        if let Some((_, id)) = self.task_tokens.values().find(|(t, _)| t == token) {
            return Some((id.clone(), true));
        }
        let carries = |p: &Pending| p.progress_token.as_ref() == Some(token);
        if let Some(id) = self
            .pending
            .iter()
            .find(|(_, p)| carries(p))
            .map(|(id, _)| id)
        {
            let id = id.clone();
            self.progressed.insert(id.clone());
            return Some((id, true));
        }
        self.expired
            .iter()
            .find(|(_, p)| carries(p))
            .map(|(id, _)| (id.clone(), false))
    }

    /// Nothing awaited, and nothing given up on that the server did not choose to ignore.
    pub(super) fn settled(&self) -> bool {
        self.pending.is_empty() && self.unforgiven() == 0
    }

    /// Given-up requests the server did not show it chose to ignore.
    pub(super) fn unforgiven(&self) -> usize {
        self.expired
            .keys()
            .filter(|id| !self.forgiven.contains(*id))
            .count()
    }

    /// Gives up on everything still awaited, as requests the server read and ignored.
    pub(super) fn forgive_all(&mut self) {
        self.expired.extend(self.pending.drain());
        self.forgiven.extend(self.expired.keys().cloned());
    }

    /// The handshake requests (awaited or given up on) still without an answer.
    pub(super) fn open_openings(&self) -> Vec<RequestId> {
        self.pending
            .iter()
            .chain(self.expired.iter())
            .filter(|(_, p)| p.is_opening())
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// A new scenario's window: the ids the last one reserved are free again.
    pub(super) fn begin_window(&mut self) {
        self.reserved.clear();
    }

    /// Keeps `ids` from being allocated until the next window.
    pub(super) fn reserve(&mut self, ids: impl IntoIterator<Item = RequestId>) {
        self.reserved.extend(ids);
    }

    /// Keeps `ids` from ever being allocated.
    pub(super) fn never_allocate(&mut self, ids: impl IntoIterator<Item = RequestId>) {
        self.chosen.extend(ids);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Outcome;
    use serde_json::json;

    fn reply() -> Reply {
        Reply {
            frame: None,
            outcome: Outcome::Result(serde_json::json!({})),
            salvaged: false,
        }
    }

    fn ping() -> Pending {
        Pending::of("ping", Revision::DEFAULT)
    }

    #[test]
    fn ids_are_never_reused_nor_taken_from_a_scenario() {
        let mut book = RequestBook::default();
        book.reserve([RequestId::int(2)]);
        book.never_allocate([RequestId::int(3)]);
        let first = book.allocate();
        assert_eq!(first, RequestId::int(1));
        book.open(first.clone(), ping());
        assert_eq!(book.allocate(), RequestId::int(4), "2 reserved, 3 chosen");
        let mut fresh = RequestBook::default();
        fresh.open(RequestId::int(1), ping());
        assert_eq!(fresh.allocate(), RequestId::int(2), "1 is in use");
    }

    #[test]
    fn a_request_lives_pending_then_answered() {
        let mut book = RequestBook::default();
        let id = book.allocate();
        book.open(id.clone(), ping());
        assert!(book.is_pending(&id) && !book.settled());
        let (p, late) = book.take(&id).expect("pending");
        assert_eq!((p.method.as_str(), late), ("ping", false));
        book.answer(id.clone(), Some(reply()));
        assert!(book.was_answered(&id) && book.used(&id) && book.settled());
        assert!(book.take_reply(&id).is_some());
        assert!(book.take_reply(&id).is_none(), "collected once");
    }

    #[test]
    fn a_given_up_request_still_matches_its_late_answer_and_unsettles_the_book() {
        let mut book = RequestBook::default();
        let id = book.allocate();
        book.open(id.clone(), ping());
        assert!(book.give_up(&id));
        assert!(!book.give_up(&id), "no longer pending");
        assert_eq!(book.unforgiven(), 1);
        assert!(!book.settled());
        assert_eq!(book.matching(&id), Some(id.clone()));
        let (_, late) = book.take(&id).expect("given up on");
        assert!(late);
        book.answer(id, None);
        assert!(book.settled());
    }

    #[test]
    fn forgiven_requests_no_longer_unsettle_the_book() {
        let mut book = RequestBook::default();
        let (a, b) = (book.allocate(), book.allocate());
        book.open(a.clone(), ping());
        book.open(b, ping());
        book.give_up(&a);
        book.forgive_all();
        assert!(book.settled());
        assert_eq!(book.unforgiven(), 0);
    }

    #[test]
    fn an_answer_under_the_same_text_of_another_type_matches() {
        let mut book = RequestBook::default();
        book.open(RequestId::int(7), ping());
        assert_eq!(
            book.matching(&RequestId::String("7".into())),
            Some(RequestId::int(7))
        );
        assert_eq!(book.matching(&RequestId::int(8)), None);
    }

    #[test]
    fn a_spoiled_answer_ends_the_wait_with_its_reason() {
        let mut book = RequestBook::default();
        let id = book.allocate();
        book.open(id.clone(), ping());
        book.spoil(&id, "not JSON".into());
        assert_eq!(book.take_spoiled(&id).as_deref(), Some("not JSON"));
        assert!(!book.is_pending(&id));
    }

    #[test]
    fn raw_progress_tokens_join_their_request_and_progress_is_noted() {
        let mut book = RequestBook::default();
        let token = serde_json::json!("tok");
        book.note_raw_token(RequestId::int(5), token.clone());
        book.open(RequestId::int(5), ping());
        assert_eq!(book.progress_on(&token), Some((RequestId::int(5), true)));
        assert!(book.take_progressed(&RequestId::int(5)));
        assert!(!book.take_progressed(&RequestId::int(5)));
        book.give_up(&RequestId::int(5));
        assert_eq!(book.progress_on(&token), Some((RequestId::int(5), false)));
    }

    #[test]
    fn a_tasks_progress_token_stays_active_until_a_terminal_status() {
        let mut book = RequestBook::default();
        let token = json!("t-1");
        let id = RequestId::int(7);
        let working = json!({"taskId": "task-1", "status": "working"});
        book.task_seen(&working, Some((&id, &token)));
        assert_eq!(book.progress_on(&token), Some((id.clone(), true)));
        // A status without the creating request (tasks/get) keeps it; another task's
        // terminal status does not end it.
        book.task_seen(
            &json!({"taskId": "task-1", "status": "input_required"}),
            None,
        );
        book.task_seen(&json!({"taskId": "task-2", "status": "completed"}), None);
        assert_eq!(book.progress_on(&token), Some((id, true)));
        book.task_seen(&json!({"taskId": "task-1", "status": "completed"}), None);
        assert_eq!(book.progress_on(&token), None);
        // A task created already terminal never makes its token active.
        let done = json!({"taskId": "task-3", "status": "failed"});
        book.task_seen(&done, Some((&RequestId::int(8), &json!("t-3"))));
        assert_eq!(book.progress_on(&json!("t-3")), None);
    }

    #[test]
    fn the_lone_opening_is_the_only_request_ever_sent() {
        let mut book = RequestBook::default();
        book.open(
            RequestId::int(1),
            Pending::of("initialize", Revision::DEFAULT),
        );
        assert_eq!(book.lone_opening(), Some(RequestId::int(1)));
        assert_eq!(book.open_openings(), vec![RequestId::int(1)]);
        book.open(RequestId::int(2), ping());
        assert_eq!(book.lone_opening(), None);
    }
}
