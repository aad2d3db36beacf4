//! Fail-fast: what the sweep showed the server cannot do, so that scenarios which could
//! only run into the same wall are not started (`Verdict::Blocked`), and a server known to
//! ignore the end of its input is not given the full shutdown wait again and again.
//!
//! Each scenario starts a fresh server; against a server that never answers, every one of
//! them would otherwise wait out its own timeouts (30 s for `initialize`, 10 s a request).

use std::collections::BTreeMap;

use crate::outcome::Finding;
use crate::scenario::{Expectation, Initialize, ResponseExpectation, Scenario, Step, StepKind};
use crate::session::SessionError;
use crate::transport::{ShutdownStage, SlowLine};

/// What the sweep ran into, each with the finding that showed it.
#[derive(Clone, Debug, Default)]
pub struct Walls {
    /// The handshake failed: no scenario can get past it.
    handshake: Option<String>,
    /// Methods that got no answer (a timeout, ids that match nothing) or could not be
    /// written (the server stopped reading), by method.
    methods: BTreeMap<String, String>,
    /// The sweep's server had to be signalled to stop after its stdin closed.
    ignores_eof: Option<String>,
    /// The sweep's server flooded it (far more frames than a sweep exchanges) or trickled
    /// its output: every scenario would take as long as the sweep did.
    flood: Option<String>,
    /// Nothing after the handshake is answered (requests in a row got no answer, or the
    /// answers sat in an unflushed stdout until the end of input): every scenario that
    /// sends a request would wait out its timeouts.
    silent: Option<String>,
}

/// "`ping` and `x` got no answer in a row": the sweep's skip reason and the wall's.
pub fn unanswered_in_a_row(methods: &[String]) -> String {
    format!("`{}` got no answer in a row", methods.join("` and `"))
}

/// Requests in a row without an answer, after a handshake that worked, past which the
/// sweep takes the server for one that answers nothing more (and stops asking).
pub const SILENT_AFTER: usize = 2;

/// A line that takes this long to arrive, at under [`TRICKLE_RATE`] bytes a second, is
/// trickled: a server writing each message at once never comes near it.
const TRICKLE_TIME: std::time::Duration = std::time::Duration::from_secs(2);
const TRICKLE_RATE: f64 = 200.0;

/// Frames in the sweep's session past which the server is flooding: a sweep exchanges a
/// few dozen (a few thousand with long paginated lists).
pub const FLOOD: usize = 20_000;

impl Walls {
    /// Notes a failed sweep request and the finding it was reported as.
    pub fn record(&mut self, method: &str, error: &SessionError, finding: &Finding) {
        let reason = format!("{}: {}", finding.rule, finding.message);
        let handshake = matches!(method, "initialize" | "server/discover");
        match error {
            _ if handshake => {
                self.handshake.get_or_insert(reason);
            }
            SessionError::Timeout { .. }
            | SessionError::Unusable { .. }
            | SessionError::Send {
                source: crate::transport::TransportError::WriteTimeout(_),
                ..
            } => {
                self.methods.entry(method.to_owned()).or_insert(reason);
            }
            // A server that ends after the handshake fails each scenario at once, and each
            // run shows its own evidence (stderr, the request that killed it): no wall.
            // Nothing was sent: the server had no part in it.
            SessionError::Closed { .. } | SessionError::Send { .. } | SessionError::Refused(_) => {}
        }
    }

    /// Notes that `methods` in a row got no answer after the handshake: the server answers
    /// nothing more.
    pub fn record_silence(&mut self, methods: &[String]) {
        self.silent.get_or_insert(format!(
            "{}: {} after the handshake; the server answers nothing more",
            crate::check::rules::SESSION_TIMEOUT.id,
            unanswered_in_a_row(methods)
        ));
    }

    /// Notes how the sweep's server shut down.
    pub fn record_shutdown(&mut self, stage: ShutdownStage, findings: &[Finding]) {
        // Answers held in a buffer until stdin closed: every request of every scenario
        // would wait out its timeout the same way.
        if let Some(f) = findings
            .iter()
            .find(|f| f.rule == crate::check::rules::STDIO_FLUSHED.id)
        {
            self.silent = Some(format!("{}: {}", f.rule, f.message));
        }
        if matches!(stage, ShutdownStage::Terminated | ShutdownStage::Killed) {
            let why = findings
                .iter()
                .rev()
                .find(|f| f.rule == crate::check::rules::STDIO_SHUTDOWN.id)
                .map(|f| format!("{}: {}", f.rule, f.message))
                .unwrap_or_else(|| "the server ignored the end of its input".into());
            self.ignores_eof = Some(why);
        }
    }

    /// Notes how many transcript entries the sweep's session recorded, and how long the
    /// sweep took: a flood would cost every scenario as much again.
    pub fn record_volume(&mut self, entries: usize, took: std::time::Duration) {
        if entries > FLOOD {
            self.flood = Some(format!(
                "flood: the server sent {entries} frames during the protocol sweep, which needs a few dozen; \
                 wading through it took {} and every scenario would meet the same flood",
                humantime::format_duration(std::time::Duration::from_millis(
                    took.as_millis() as u64
                ))
            ));
        }
    }

    /// Notes the slowest line of the sweep: a server that trickles its output (a few
    /// bytes a second) would make every scenario wait as long for each message.
    pub fn record_trickle(&mut self, slowest: Option<SlowLine>) {
        let Some(SlowLine { took, bytes }) = slowest else {
            return;
        };
        let rate = bytes as f64 / took.as_secs_f64().max(f64::EPSILON);
        if took >= TRICKLE_TIME && rate < TRICKLE_RATE {
            self.flood.get_or_insert(format!(
                "trickle: the server wrote a {bytes}-byte line over {} ({rate:.0} bytes/s) \
                 during the protocol sweep; every scenario would wait as long for each message",
                humantime::format_duration(std::time::Duration::from_millis(
                    took.as_millis() as u64
                ))
            ));
        }
    }

    /// Whether the sweep ran into no wall at all (what its shutdown would show aside).
    pub fn none(&self) -> bool {
        self.handshake.is_none()
            && self.methods.is_empty()
            && self.ignores_eof.is_none()
            && self.flood.is_none()
            && self.silent.is_none()
    }

    /// Whether the sweep's server ignored the end of its input (scenarios then get short
    /// shutdown waits).
    pub fn ignores_eof(&self) -> bool {
        self.ignores_eof.is_some()
    }

    /// Why `scenario` would only run into a wall already found, if it would.
    pub fn blocks(&self, scenario: &Scenario) -> Option<String> {
        let blocked = |why: &str| Some(format!("blocked by {why}"));
        if let Some(why) = self.flood.as_ref().or(self.handshake.as_ref()) {
            return blocked(why);
        }
        let sent = Sent::of(&scenario.steps);
        if let Some(why) = &self.silent
            && sent.requests
        {
            return blocked(why);
        }
        sent.methods
            .iter()
            .find_map(|m| self.methods.get(m))
            .and_then(|why| blocked(why))
    }

    /// Whether `scenario` checks how the server reacts to the end of its input (it keeps
    /// the full shutdown waits).
    pub fn tests_eof(scenario: &Scenario) -> bool {
        scenario.rule.as_deref() == Some(crate::check::rules::STDIO_SHUTDOWN.id)
            || any_step(&scenario.steps, &|k| {
                matches!(k, StepKind::Expect(Expectation::Exit { .. }))
            })
    }
}

/// What a scenario sends, as far as its text says (methods built from variables are not
/// known before it runs, and block nothing).
#[derive(Debug, Default)]
struct Sent {
    methods: Vec<String>,
    /// Whether it sends any request after the handshake (a method from a variable too).
    requests: bool,
}

impl Sent {
    fn of(steps: &[Step]) -> Sent {
        let mut sent = Sent::default();
        sent.walk(steps);
        sent
    }

    fn walk(&mut self, steps: &[Step]) {
        for step in steps {
            match &step.kind {
                StepKind::Initialize(Initialize::Handshake(_)) | StepKind::Negotiate(_) => {
                    self.methods.push("initialize".into())
                }
                StepKind::Request(r) => self.request(&r.method.0),
                StepKind::Concurrent(rs) => rs.iter().for_each(|r| self.request(&r.method.0)),
                StepKind::Paginate { method, .. } => self.request(&serde_json::json!(method)),
                StepKind::Burst { .. } => self.requests = true,
                // An answer awaited to raw bytes (parse errors, invalid requests, raw ids).
                StepKind::Expect(Expectation::Response { expect, .. })
                    if !matches!(expect, ResponseExpectation::Nothing(_)) =>
                {
                    self.requests = true
                }
                StepKind::ForEach { steps, .. } => self.walk(steps),
                _ => {}
            }
        }
    }

    fn request(&mut self, method: &serde_json::Value) {
        self.requests = true;
        if let Some(m) = method.as_str().filter(|m| !m.contains("${")) {
            self.methods.push(m.to_owned());
        }
    }
}

fn any_step(steps: &[Step], pred: &dyn Fn(&StepKind) -> bool) -> bool {
    steps.iter().any(|s| match &s.kind {
        StepKind::ForEach { steps, .. } => any_step(steps, pred),
        k => pred(k),
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::check::rules;
    use crate::protocol::Revision;
    use crate::scenario::builtin;

    fn timeout(method: &str) -> (SessionError, Finding) {
        let after = Duration::from_secs(10);
        let e = SessionError::Timeout {
            method: method.into(),
            after,
            bounded: None,
        };
        let f = Finding::new(
            &rules::SESSION_TIMEOUT,
            Revision::DEFAULT,
            format!("`{method}` got no response within 10s"),
        );
        (e, f)
    }

    fn suite() -> Vec<Scenario> {
        builtin::scenarios().expect("the built-in suite parses")
    }

    #[test]
    fn a_failed_handshake_blocks_every_scenario() {
        let mut walls = Walls::default();
        let (e, f) = timeout("initialize");
        walls.record("initialize", &e, &f);
        for s in suite() {
            let why = walls.blocks(&s).expect("blocked");
            assert_eq!(
                why,
                "blocked by session.request-timeout: `initialize` got no response within 10s"
            );
        }
    }

    #[test]
    fn a_server_silent_after_its_handshake_blocks_every_scenario_awaiting_an_answer() {
        let all = suite();
        let flushed = Finding::new(
            &rules::STDIO_FLUSHED,
            Revision::DEFAULT,
            "the answers to 2 request(s) arrived only once stdin was closed".to_owned(),
        );
        let mut by_silence = Walls::default();
        by_silence.record_silence(&["ping".into(), "mcpcheck/no-such-method".into()]);
        let mut by_flush = Walls::default();
        by_flush.record_shutdown(ShutdownStage::StdinClosed, &[flushed]);
        for (walls, why) in [
            (
                by_silence,
                "`ping` and `mcpcheck/no-such-method` got no answer in a row",
            ),
            (
                by_flush,
                "stdio.stdout-flushed: the answers to 2 request(s)",
            ),
        ] {
            let blocks = |id: &str| {
                let s = all.iter().find(|s| s.id == id).expect(id);
                walls.blocks(s)
            };
            // A request, raw bytes awaiting an answer, a burst: blocked.
            for id in [
                "tools/list-result",
                "jsonrpc/invalid-request",
                "stdio/burst-1000-requests",
            ] {
                let got = blocks(id).unwrap_or_default();
                assert!(got.contains(why), "{id}: {got:?}");
            }
            // What awaits no answer still runs.
            assert_eq!(blocks("notifications/list-changed-declared"), None);
            assert_eq!(blocks("lifecycle/server-info"), None);
        }
    }

    #[test]
    fn a_method_without_answers_blocks_only_scenarios_sending_it() {
        let mut walls = Walls::default();
        let (e, f) = timeout("tools/list");
        walls.record("tools/list", &e, &f);
        let all = suite();
        let blocked: Vec<_> = all.iter().filter(|s| walls.blocks(s).is_some()).collect();
        assert!(blocked.iter().any(|s| s.id == "tools/list-result"));
        assert!(
            all.iter()
                .any(|s| s.id == "stdio/exit-on-stdin-close" && walls.blocks(s).is_none())
        );
    }

    #[test]
    fn an_exit_after_the_handshake_blocks_nothing() {
        let mut walls = Walls::default();
        let e = SessionError::Closed {
            method: "ping".into(),
            exit: None,
        };
        let f = Finding::new(&rules::SESSION_EXITED, Revision::DEFAULT, "gone");
        walls.record("ping", &e, &f);
        assert!(suite().iter().all(|s| walls.blocks(s).is_none()));
    }

    #[test]
    fn floods_and_trickles_block_everything_but_ordinary_sweeps_do_not() {
        let mut walls = Walls::default();
        walls.record_volume(40, Duration::from_millis(200));
        walls.record_trickle(Some(SlowLine {
            took: Duration::from_millis(30),
            bytes: 4_000_000,
        }));
        assert!(suite().iter().all(|s| walls.blocks(s).is_none()));
        walls.record_trickle(Some(SlowLine {
            took: Duration::from_secs(3),
            bytes: 170,
        }));
        let s = &suite()[0];
        assert!(walls.blocks(s).unwrap().starts_with("blocked by trickle: "));
    }

    #[test]
    fn only_eof_scenarios_keep_full_shutdown_waits() {
        let eof: Vec<_> = suite()
            .into_iter()
            .filter(Walls::tests_eof)
            .map(|s| s.id)
            .collect();
        assert_eq!(eof, vec!["stdio/exit-on-stdin-close"]);
    }
}
