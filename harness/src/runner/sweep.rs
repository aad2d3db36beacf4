//! The built-in probe: handshake, ping and every declared list method.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};

use super::known::Known;
use super::walls::{SILENT_AFTER, Walls};
use crate::check::rules;
use crate::outcome::ServerProfile;
use crate::outcome::{
    Counts, FailOn, Finding, REPORT_FORMAT_VERSION, RunReport, RunVerdict, Severity, StderrSummary,
    StepRecord, StepStatus, SweepRecord, Tally,
};
use crate::protocol::RequestId;
use crate::schema::SchemaStore;
use crate::session::{Session, SessionConfig, SessionError};
use crate::transport::TransportError;
use crate::transport::target::{Target, TransportKind};

/// Everything a probe run needs, resolved from flags.
#[derive(Clone, Debug)]
pub struct ProbeConfig {
    /// The server to probe.
    pub target: Target,
    /// Revision and timeouts of the probe's session.
    pub session: SessionConfig,
}

/// Most pages mcpcheck follows in one list before calling it endless.
const MAX_PAGES: usize = 1000;

/// How long the sweep waits, at its end, for its session's exchanges (the GET stream's
/// answer) to show whether the server holds a stream open (`SweepOutcome::unasked`).
const UNASKED_WITHIN: std::time::Duration = std::time::Duration::from_millis(200);

/// Runs the probe. `Err` only for harness or setup problems (the server could not start,
/// or an HTTP endpoint is unreachable or not MCP).
pub async fn run(
    config: &ProbeConfig,
    schemas: Arc<SchemaStore>,
) -> Result<RunReport, TransportError> {
    sweep(config, schemas).await.map(|(report, ..)| report)
}

/// [`run`], also returning the walls the server showed (for the suite's fail-fast) and
/// what it learnt that decides scenarios without a server ([`Known`]).
pub async fn sweep(
    config: &ProbeConfig,
    schemas: Arc<SchemaStore>,
) -> Result<(RunReport, Walls, Known), TransportError> {
    sweep_on(config, schemas, None, None)
        .await
        .map(|s| (s.report, s.walls, s.known))
}

/// What a sweep leaves: its report, what the suite acts on, and its session when it was
/// asked to keep it and left it as a shared session would be.
#[derive(Debug)]
pub struct SweepOutcome {
    /// The sweep's report (no shutdown in it when the session was kept).
    pub report: RunReport,
    /// What the server cannot get past.
    pub walls: Walls,
    /// What decides a scenario without a server.
    pub known: Known,
    /// Whether the server may send without being asked on a stream of its own, at the
    /// sweep's end (`Session::may_send_unasked`): waits for silence then run on a timer.
    pub unasked: bool,
    /// The session, for the suite's shared scenarios (issue: the sweep's session serves as
    /// the first shared one, instead of ending and a new server starting).
    pub kept: Option<Session>,
}

/// How a probe's session opened the leg it is handed to.
#[derive(Debug)]
pub enum Opening {
    /// Just as the sweep would open it: the sweep goes on from its answer.
    Done(Session),
    /// Its `initialize` failed (no answer within the start-up allowance, an answer that
    /// matches nothing or cannot be read, the server gone): the sweep reports that failure
    /// from this session, where it happened, instead of starting a server to wait for it
    /// a second time (a server that never answers cost the run its start-up allowance
    /// twice).
    Failed(Session, crate::session::SessionError),
}

impl Opening {
    /// The session, whatever its opening did.
    pub fn into_session(self) -> Session {
        self.into_parts().0
    }

    /// The session and how its opening went.
    fn into_parts(self) -> (Session, Result<(), crate::session::SessionError>) {
        match self {
            Opening::Done(s) => (s, Ok(())),
            Opening::Failed(s, e) => (s, Err(e)),
        }
    }
}

/// [`sweep`], going on on `opened` when given: a session whose handshake (or
/// `server/discover`) a planning probe did just as the sweep would, so its answer is
/// judged here and no second server starts. With `keep` (the ids the shared scenarios
/// choose themselves, which the session then never allocates), a session the sweep
/// leaves healthy, with its default handshake done and no wall found, is kept instead of
/// shut down ([`SweepOutcome::kept`]); its shutdown is then judged wherever it ends.
pub async fn sweep_on(
    config: &ProbeConfig,
    schemas: Arc<SchemaStore>,
    opened: Option<Opening>,
    keep: Option<&[RequestId]>,
) -> Result<SweepOutcome, TransportError> {
    let started = Instant::now();
    let (session, done) = adopt(config, schemas, opened, started).await?;
    let mut sweep = Sweep::new(session, config);
    if let Some(chosen) = keep {
        sweep.session.never_allocate(chosen.iter().cloned());
    }
    let profile = match sweep.open(done).await {
        Ok(profile) => profile,
        Err(problem) => {
            sweep.session.finish().await;
            return Err(TransportError::Http(problem));
        }
    };
    match &profile {
        Some(profile) => sweep.walk(profile).await,
        None => sweep.skip_all(),
    }
    Ok(sweep.finish(config, keep.is_some(), started).await)
}

/// What a probe's opening already did to the session handed over: answered (`Ok`) or
/// failed (`Err`); `None` for a fresh session that has done nothing yet.
type OpeningDone = Option<Result<(), SessionError>>;

/// The session the sweep runs on: the planning probe's when it agrees on the schemas, with
/// what its opening already did, else a fresh one (a probe's session that disagrees is
/// ended first, so that two servers never run at once).
async fn adopt(
    config: &ProbeConfig,
    schemas: Arc<SchemaStore>,
    opened: Option<Opening>,
    started: Instant,
) -> Result<(Session, OpeningDone), TransportError> {
    match opened.map(Opening::into_parts) {
        Some((mut s, done)) if s.schemas_agree(&schemas) => {
            s.use_schemas(schemas);
            return Ok((s, Some(done)));
        }
        Some((s, _)) => {
            s.finish().await;
        }
        None => {}
    }
    let transport = config.target.open(started)?;
    let session = Session::new(transport, schemas, config.session.clone(), started);
    Ok((session, None))
}

/// A sweep under way: its session and what its steps have shown so far.
struct Sweep {
    session: Session,
    steps: Vec<StepRecord>,
    walls: Walls,
    /// `tools/list`'s items, when the list was read to its end without a finding (but of
    /// the rules the server broke on every frame since the handshake).
    tools: Option<Vec<Value>>,
    /// 2026-07-28 has no handshake: `server/discover` takes its place (session::stateless).
    stateless: bool,
    /// The opening request: `initialize`, or `server/discover` without a handshake.
    opening: &'static str,
    /// Requests in a row that got no answer: past `SILENT_AFTER` the server answers
    /// nothing after its handshake, and asking more would only wait out more timeouts.
    unanswered: Vec<String>,
}

impl Sweep {
    fn new(session: Session, config: &ProbeConfig) -> Self {
        let stateless = !config.session.revision.has_handshake();
        Sweep {
            session,
            steps: Vec::new(),
            walls: Walls::default(),
            tools: None,
            stateless,
            opening: if stateless {
                crate::session::stateless::DISCOVER
            } else {
                "initialize"
            },
            unanswered: Vec::new(),
        }
    }

    /// Opens the session, or judges the opening a probe already did, giving the server's
    /// profile when it answered. `Err` is a setup problem: over HTTP, an endpoint that is
    /// unreachable or not MCP at all is that (exit 2), not a conformance verdict.
    async fn open(&mut self, done: OpeningDone) -> Result<Option<ServerProfile>, String> {
        // A kept session always has its profile (`Session::reusable`).
        let opening_done = match done {
            Some(Ok(())) => match self.session.profile().cloned() {
                Some(profile) => Ok(profile),
                None => self.session.initialize().await,
            },
            Some(Err(e)) => Err(e),
            None => self.session.initialize().await,
        };
        let e = match opening_done {
            Ok(profile) => {
                self.steps.push(step_result(&self.session, self.opening, 0));
                return Ok(Some(profile));
            }
            Err(e) => e,
        };
        self.session
            .pump(std::time::Duration::from_millis(50))
            .await;
        let reached = (self.session.http()).is_some_and(|h| h.options().reached.get());
        let problem = crate::transport::http::setup_problem(
            self.session
                .transcript()
                .entries()
                .into_iter()
                .filter_map(|e| e.http.as_ref()),
            reached,
        );
        if let Some(problem) = problem {
            return Err(problem);
        }
        // The sweep calls no tool, so the gate never holds its opening back.
        if let Some(f) = self.session.finding_for(&e) {
            self.walls.record(self.opening, &e, &f);
            self.session.add_finding(f);
        }
        self.steps.push(StepRecord {
            name: self.opening.into(),
            status: StepStatus::Failed,
        });
        Ok(None)
    }

    /// Ping, an unknown method, then every list the server could declare, in that order.
    async fn walk(&mut self, profile: &ServerProfile) {
        let mut plan: Vec<Step> = vec![Step::Ping, Step::UnknownMethod];
        let lists: [(&str, &'static str); 4] = [
            ("tools", "tools/list"),
            ("resources", "resources/list"),
            ("resources", "resources/templates/list"),
            ("prompts", "prompts/list"),
        ];
        for (capability, method) in lists {
            plan.push(if profile.declares(capability) {
                Step::List(method)
            } else {
                Step::Undeclared(method, capability)
            });
        }
        for step in plan {
            self.step(step).await;
        }
    }

    /// Runs one step, or records why it cannot run, and counts the requests in a row that
    /// went unanswered.
    async fn step(&mut self, step: Step) {
        let name = step.name();
        if self.unanswered.len() >= SILENT_AFTER && !matches!(step, Step::Undeclared(..)) {
            let reason = format!(
                "{}: the server answers nothing more",
                super::walls::unanswered_in_a_row(&self.unanswered)
            );
            return self.skip(name, reason);
        }
        if self.session.is_closed() {
            return self.skip(name, "the server had already exited".into());
        }
        let before = self.session.findings().len();
        let outcome = match step {
            Step::Ping if self.stateless => {
                return self.skip(name, "2026-07-28 has no `ping`".into());
            }
            Step::Ping => self.session.request("ping", None).await.map(drop),
            Step::UnknownMethod => unknown_method(&mut self.session).await,
            Step::List(method) => match paginate(&mut self.session, method).await {
                Ok(items) if method == "tools/list" && self.listed_cleanly(before) => {
                    self.tools = items;
                    Ok(())
                }
                done => done.map(drop),
            },
            Step::Undeclared(_, capability) => {
                return self.skip(name, format!("the server does not declare `{capability}`"));
            }
        };
        match &outcome {
            Err(SessionError::Timeout { .. }) => {
                self.unanswered.push(step.method().to_owned());
                if self.unanswered.len() == SILENT_AFTER {
                    self.walls.record_silence(&self.unanswered);
                }
            }
            _ => self.unanswered.clear(),
        }
        match outcome {
            Ok(()) => self.steps.push(step_result(&self.session, &name, before)),
            Err(e) => fail(
                &mut self.session,
                &mut self.steps,
                &mut self.walls,
                (&name, step.method()),
                &e,
            ),
        }
    }

    /// Whether the findings since `before` say nothing about a listing: none, or only of
    /// rules the server broke answering the handshake already (`"jsonrpc": "1.0"` on every
    /// frame), which would otherwise leave every scenario needing the tools undecided.
    fn listed_cleanly(&self, before: usize) -> bool {
        let session = &self.session;
        (session.findings().get(before..).unwrap_or_default())
            .iter()
            .all(|f| session.broke_on_opening(&f.rule))
    }

    /// Every step but the opening, skipped because the opening failed.
    fn skip_all(&mut self) {
        for method in [
            "ping",
            "unknown method",
            "tools/list",
            "resources/list",
            "resources/templates/list",
            "prompts/list",
        ] {
            self.skip(method.into(), format!("`{}` failed", self.opening));
        }
    }

    fn skip(&mut self, name: String, reason: String) {
        self.steps.push(StepRecord {
            name,
            status: StepStatus::Skipped { reason },
        });
    }

    /// Ends the session, or keeps it (`keep`) when the sweep leaves it healthy with no
    /// wall found, and writes the sweep's report.
    async fn finish(self, config: &ProbeConfig, keep: bool, started: Instant) -> SweepOutcome {
        let Sweep {
            mut session,
            steps,
            mut walls,
            tools,
            ..
        } = self;
        let server = session.describe_server();
        let requested = config.session.revision;
        let revision = session.revision();
        let profile = session.profile().cloned();
        let known = Known::new(
            revision,
            profile.as_ref().map(|p| p.capabilities.clone()),
            tools,
        );
        walls.record_trickle(session.slowest_line());
        walls.record_volume(session.transcript().len(), started.elapsed());
        // Over stdio a server may always write: no need to ask the transport.
        let unasked = match config.target.kind() {
            TransportKind::Stdio => true,
            TransportKind::Http => session.may_send_unasked(UNASKED_WITHIN).await,
        };
        let (record, kept) = match keep && walls.none() && session.donatable() {
            true => (session.take_window(), Some(session)),
            false => (session.finish().await, None),
        };
        if let Some(report) = &record.shutdown {
            walls.record_shutdown(report.stage, &record.findings);
        }
        let counts = Counts::of(&record.findings);
        let mut findings = record.findings;
        let transcript = record.transcript.window(findings.iter_mut());
        let report = RunReport {
            format_version: REPORT_FORMAT_VERSION,
            mcpcheck_version: env!("CARGO_PKG_VERSION"),
            role: crate::outcome::Role::Server,
            server,
            requested_revision: requested,
            revision,
            profile,
            partition: None,
            differential_from: None,
            verdict: if counts.failures > 0 {
                RunVerdict::Fail
            } else {
                RunVerdict::Pass
            },
            fail_on: FailOn::default(),
            sweep: SweepRecord {
                counts,
                steps,
                findings,
                schema: record.schema,
                shutdown: record.shutdown,
                stderr: StderrSummary {
                    bytes: record.stderr_bytes,
                    tail: record.stderr_tail,
                },
            },
            duration_ms: started.elapsed().as_millis() as u64,
            transcript,
            scenarios: Vec::new(),
            tally: Tally::default(),
            snapshot: None,
        };
        SweepOutcome {
            report,
            walls,
            known,
            unasked,
            kept,
        }
    }
}

fn step_result(session: &Session, name: &str, findings_before: usize) -> StepRecord {
    let failed = session.findings()[findings_before..]
        .iter()
        .any(|f| f.severity == Severity::Failure);
    StepRecord {
        name: name.into(),
        status: if failed {
            StepStatus::Failed
        } else {
            StepStatus::Passed
        },
    }
}

fn fail(
    session: &mut Session,
    steps: &mut Vec<StepRecord>,
    walls: &mut Walls,
    (name, method): (&str, &str),
    e: &crate::session::SessionError,
) {
    if let Some(f) = session.finding_for(e) {
        walls.record(method, e, &f);
        session.add_finding(f);
    }
    steps.push(StepRecord {
        name: name.into(),
        status: StepStatus::Failed,
    });
}

/// One step of the probe.
#[derive(Clone, Copy)]
enum Step {
    Ping,
    UnknownMethod,
    List(&'static str),
    Undeclared(&'static str, &'static str),
}

impl Step {
    fn name(self) -> String {
        match self {
            Step::Ping => "ping".into(),
            Step::UnknownMethod => "unknown method".into(),
            Step::List(m) | Step::Undeclared(m, _) => m.into(),
        }
    }

    /// The method the step sends.
    fn method(self) -> &'static str {
        match self {
            Step::Ping => "ping",
            Step::UnknownMethod => UNKNOWN_METHOD,
            Step::List(m) | Step::Undeclared(m, _) => m,
        }
    }
}

/// The method mcpcheck calls to see that unknown methods get JSON-RPC's -32601.
pub const UNKNOWN_METHOD: &str = "mcpcheck/no-such-method";

/// Calls a method no revision defines: the answer must be an error, ideally -32601.
async fn unknown_method(session: &mut Session) -> Result<(), crate::session::SessionError> {
    let reply = session.request(UNKNOWN_METHOD, Some(json!({}))).await?;
    let rev = session.revision();
    let finding = match &reply.outcome {
        crate::protocol::Outcome::Error(_) if reply.salvaged => None,
        crate::protocol::Outcome::Error(e)
            if e.code == crate::protocol::codes::METHOD_NOT_FOUND =>
        {
            None
        }
        crate::protocol::Outcome::Error(e) => Some(
            Finding::new(
                &rules::JSONRPC_METHOD_NOT_FOUND_CODE,
                rev,
                format!("an unknown method was answered with error code {}", e.code),
            )
            .pointer("/error/code")
            .expected("-32601 (Method not found)"),
        ),
        crate::protocol::Outcome::Result(_) => Some(
            Finding::new(
                &rules::JSONRPC_METHOD_NOT_FOUND,
                rev,
                format!("`{UNKNOWN_METHOD}` does not exist, yet the server answered with a result"),
            )
            .pointer("/result")
            .expected("an error response, code -32601 (Method not found)"),
        ),
    };
    if let Some(f) = finding {
        session.add_finding(match reply.frame {
            Some(i) => f.at_frame(i),
            None => f,
        });
    }
    Ok(())
}

/// Follows `nextCursor` to the end of a list, catching cursors that loop.
async fn paginate(
    session: &mut Session,
    method: &str,
) -> Result<Option<Vec<Value>>, crate::session::SessionError> {
    let key = crate::protocol::list_key(method).unwrap_or_default();
    let mut items = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = HashSet::new();
    for _ in 0..MAX_PAGES {
        let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
        let reply = session.request(method, params).await?;
        let Some(result) = reply.result() else {
            return Ok(None);
        };
        match result.get(key) {
            Some(Value::Array(page)) => items.extend(page.iter().cloned()),
            _ => return Ok(None),
        }
        match result.get("nextCursor").and_then(Value::as_str) {
            None => return Ok(Some(items)),
            Some(next) if !seen.insert(next.to_owned()) => {
                let rev = session.revision();
                let f = Finding::new(
                    &rules::PAGINATION_TERMINATES,
                    rev,
                    format!(
                        "`{method}` returned cursor {next:?} a second time: the pagination loops"
                    ),
                );
                let f = match reply.frame {
                    Some(i) => f.at_frame(i),
                    None => f,
                };
                session.add_finding(f.pointer("/result/nextCursor"));
                return Ok(None);
            }
            Some(next) => cursor = Some(next.to_owned()),
        }
    }
    let rev = session.revision();
    session.add_finding(Finding::new(
        &rules::PAGINATION_TERMINATES,
        rev,
        format!("`{method}` was still paginating after {MAX_PAGES} pages"),
    ));
    Ok(None)
}

/// The sweep's report when the run's deadline cut it off: nothing is known but that.
pub fn cut_off(config: &ProbeConfig, reason: &str, took: std::time::Duration) -> RunReport {
    let mut report = RunReport::empty(config.target.describe(), config.session.revision);
    report.verdict = RunVerdict::Fail;
    report.sweep.steps = vec![StepRecord {
        name: "sweep".into(),
        status: StepStatus::Skipped {
            reason: reason.into(),
        },
    }];
    report.sweep.schema = crate::outcome::SchemaStatus::Skipped {
        reason: reason.into(),
    };
    report.duration_ms = took.as_millis() as u64;
    report
}
