//! What a scenario's steps actually exercised: the tool calls sent and kept back, the
//! loops and what they ran on, the error answers allowed and the results judged. A
//! scenario with no failure is a pass only if it checked something; [`Coverage::verdict`]
//! says when it did not, and why.

use std::collections::BTreeMap;

use crate::outcome::{Forbidden, Verdict};

/// One `for_each` step's runs.
#[derive(Debug)]
struct LoopRuns {
    /// Items the body ran on (after `where`).
    runs: usize,
    /// A loop that selects, or one at the top of the scenario, is what the scenario checks:
    /// when it never runs, nothing was checked.
    decides: bool,
    /// The list's name, for the skip reason.
    list: String,
}

/// What a scenario exercised, counted as its steps run.
#[derive(Debug, Default)]
pub(super) struct Coverage {
    /// `tools/call` requests actually sent (the policy may keep others back).
    tool_calls_sent: usize,
    /// Why each `tools/call` the policy kept back was forbidden.
    policy_skips: Vec<Forbidden>,
    /// Per `for_each` step, by line.
    loops: BTreeMap<usize, LoopRuns>,
    /// Set by an `expect: notification` with `otherwise: skip` that saw nothing.
    not_exercised: Option<String>,
    /// `on_error: next` requests answered with an error (allowed).
    errors_allowed: usize,
    /// `on_error: next` requests answered with a result (judged).
    results_judged: usize,
    /// `on_timeout: next` requests that got no answer in time (not judged).
    unanswered_allowed: usize,
    /// `on_timeout: next` requests that were answered.
    answered: usize,
}

impl Coverage {
    pub(super) fn tool_call_sent(&mut self) {
        self.tool_calls_sent += 1;
    }

    pub(super) fn tool_call_refused(&mut self, why: Forbidden) {
        self.policy_skips.push(why);
    }

    /// A `for_each` at `line` over `list` is about to run; `decides` as in [`LoopRuns`].
    pub(super) fn loop_entered(&mut self, line: usize, list: &str, decides: bool) {
        self.loops.entry(line).or_insert_with(|| LoopRuns {
            runs: 0,
            decides,
            list: list.to_owned(),
        });
    }

    /// The `for_each` at `line` runs its body on one more item.
    pub(super) fn loop_ran(&mut self, line: usize) {
        if let Some(l) = self.loops.get_mut(&line) {
            l.runs += 1;
        }
    }

    /// An awaited notification the scenario may do without never came.
    pub(super) fn not_exercised(&mut self, why: String) {
        self.not_exercised = Some(why);
    }

    pub(super) fn error_allowed(&mut self) {
        self.errors_allowed += 1;
    }

    pub(super) fn result_judged(&mut self) {
        self.results_judged += 1;
    }

    /// An `on_timeout: next` request was answered (`true`) or outlasted the timeout.
    pub(super) fn timed_request(&mut self, answered: bool) {
        match answered {
            true => self.answered += 1,
            false => self.unanswered_allowed += 1,
        }
    }

    /// The calls the policy kept back, for the report.
    pub(super) fn into_policy_skips(self) -> Vec<Forbidden> {
        self.policy_skips
    }

    /// The verdict of steps that ran to the end without a failure: a skip when nothing of
    /// what the scenario checks was exercised, else a pass.
    pub(super) fn verdict(&self) -> Verdict {
        let reason = if self.tool_calls_sent == 0 && !self.policy_skips.is_empty() {
            let n = self.policy_skips.len();
            let calls = if n == 1 { "call" } else { "calls" };
            format!("every tools/call was skipped by --call-tools ({n} {calls})")
        } else if let Some(why) = self.unexercised() {
            why
        } else if self.errors_allowed > 0 && self.results_judged == 0 {
            format!(
                "nothing to judge: all {} requests were answered with an error, which the spec allows",
                self.errors_allowed
            )
        } else if self.unanswered_allowed > 0 && self.answered == 0 {
            format!(
                "nothing to judge: none of the {} requests sent without a progress token was answered within the timeout (raise --timeout for slow tools)",
                self.unanswered_allowed
            )
        } else {
            return Verdict::Pass;
        };
        Verdict::Skip { reason }
    }

    /// Nothing of what the scenario checks exists on this server: an awaited notification
    /// never came, or a deciding loop never ran.
    fn unexercised(&self) -> Option<String> {
        self.not_exercised.clone().or_else(|| {
            self.loops
                .values()
                .find(|l| l.decides && l.runs == 0)
                .map(|l| format!("nothing to check: no element of `{}` to run on", l.list))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(c: &Coverage) -> Option<String> {
        match c.verdict() {
            Verdict::Pass => None,
            Verdict::Skip { reason } => Some(reason),
            other => panic!("{other:?}"),
        }
    }

    fn forbidden() -> Forbidden {
        Forbidden::NotReadOnly
    }

    #[test]
    fn nothing_counted_is_a_pass() {
        assert_eq!(reason(&Coverage::default()), None);
    }

    #[test]
    fn calls_all_kept_back_are_a_skip_one_sent_is_not() {
        let mut c = Coverage::default();
        c.tool_call_refused(forbidden());
        c.tool_call_refused(forbidden());
        assert_eq!(
            reason(&c).as_deref(),
            Some("every tools/call was skipped by --call-tools (2 calls)")
        );
        c.tool_call_sent();
        assert_eq!(reason(&c), None);
    }

    #[test]
    fn a_deciding_loop_that_never_ran_is_a_skip_a_nested_one_is_not() {
        let mut c = Coverage::default();
        c.loop_entered(7, "prompts", false);
        assert_eq!(reason(&c), None);
        c.loop_entered(3, "tools", true);
        assert_eq!(
            reason(&c).as_deref(),
            Some("nothing to check: no element of `tools` to run on")
        );
        c.loop_ran(3);
        assert_eq!(reason(&c), None);
    }

    #[test]
    fn an_absent_notification_comes_before_an_empty_loop() {
        let mut c = Coverage::default();
        c.loop_entered(3, "tools", true);
        c.not_exercised("the server sent no `x`".into());
        assert_eq!(reason(&c).as_deref(), Some("the server sent no `x`"));
    }

    #[test]
    fn only_error_answers_are_a_skip_one_result_is_not() {
        let mut c = Coverage::default();
        c.error_allowed();
        c.error_allowed();
        assert!(
            reason(&c)
                .unwrap()
                .contains("all 2 requests were answered with an error")
        );
        c.result_judged();
        assert_eq!(reason(&c), None);
    }

    #[test]
    fn only_unanswered_tokenless_calls_are_a_skip_one_answer_is_not() {
        let mut c = Coverage::default();
        c.timed_request(false);
        assert!(
            reason(&c)
                .unwrap()
                .contains("none of the 1 requests sent without a progress token was answered")
        );
        c.timed_request(true);
        assert_eq!(reason(&c), None);
    }
}
