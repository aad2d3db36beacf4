//! The `negotiate` step: asks the server each version of
//! [`negotiation::first_asked`] (then [`negotiation::follow_up`]) in a fresh session of its
//! own (over stdio a new process each, over HTTP a new session), and judges the answers
//! with [`NegotiationCheck::judge`].
//!
//! The answers do not depend on the scenario asking, so one probe serves every `negotiate`
//! scenario of a run ([`NegotiationProbe`]): a run starts at most one session per
//! handshake revision plus one (two when the answer to the unknown version is new). The
//! session that asks the leg's own revision asks it as the default handshake does, and
//! when the scenarios are donors (`share::donates`) it is handed to the shared scenarios
//! afterwards instead of ending.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tokio::sync::OnceCell;

use super::ExecConfig;
use crate::check::negotiation::{self, Answer, Answers, Discovered, Judgement, NegotiationCheck};
use crate::outcome::Finding;
use crate::outcome::Verdict;
use crate::outcome::events::{Emitter, Event, FindingScope, StepEnd};
use crate::outcome::{Direction, Entry};
use crate::protocol::Revision;
use crate::scenario::model::Scenario;
use crate::schema::SchemaStore;
use crate::session::{Handshake, Session};

/// What the probe learnt: each version asked, the answer, what `server/discover` listed,
/// and the sessions' transcript.
#[derive(Debug)]
pub struct Probe {
    answers: Answers,
    discovered: Discovered,
    /// What the frames of the session that asked the unknown version broke (schema,
    /// JSON-RPC), with `frame` an index into `transcript`.
    unknown_findings: Vec<Finding>,
    transcript: Vec<Entry>,
    /// The session that asked the leg's own revision, kept for the shared scenarios
    /// (taken by the first donor that asks).
    kept: std::sync::Mutex<Option<Session>>,
}

/// The run's one negotiation probe, made by the first `negotiate` scenario that runs and
/// shared with the others (clones share it).
#[derive(Clone, Debug, Default)]
pub struct NegotiationProbe(Arc<OnceCell<Probe>>);

/// What a `negotiate` scenario leaves: its verdict, its findings, the protocol findings of
/// the session whose answer it judges alone (`unknown-version-answered`: the frames of the
/// session that asked the unknown version are checked nowhere else), the transcript, and,
/// for a donor, the probe's session of the leg's own revision.
pub(super) struct Negotiated {
    pub verdict: Verdict,
    pub findings: Vec<Finding>,
    pub protocol: Vec<Finding>,
    pub transcript: Vec<Entry>,
    pub kept: Option<Session>,
}

/// Runs a `negotiate` scenario: its verdict, findings and transcript, and, for a `donor`,
/// the probe's session of the leg's own revision if no other donor took it yet.
pub(super) async fn run(
    check: NegotiationCheck,
    scenario: &Scenario,
    config: &ExecConfig,
    schemas: Arc<SchemaStore>,
    spec: &str,
    events: &Emitter,
    donor: bool,
) -> Negotiated {
    let line = scenario.steps[0].line;
    events.emit_with(|| Event::StepStarted {
        scenario: scenario.id.clone(),
        step: 0,
        line,
        depth: 0,
        action: format!("negotiate {} (fresh sessions)", check.name()),
    });
    let started = Instant::now();
    let probe = config
        .negotiation
        .0
        .get_or_init(|| probe(config, schemas, started, donor))
        .await;
    let kept = match donor {
        true => probe.kept.lock().unwrap_or_else(|e| e.into_inner()).take(),
        false => None,
    };
    let rule = scenario.rule_id();
    let source = format!("{}:{line}", scenario.source);
    let (verdict, findings) = match check.judge(&probe.answers, &probe.discovered) {
        Judgement::NothingToJudge(reason) => (Verdict::Skip { reason }, vec![]),
        Judgement::Problems(problems) => {
            let findings: Vec<Finding> = problems
                .into_iter()
                .map(|p| Finding::custom(rule, scenario.severity, spec, format!("{p} ({source})")))
                .collect();
            let verdict = Verdict::from_findings(&findings).unwrap_or(Verdict::Pass);
            (verdict, findings)
        }
    };
    if !events.is_empty() {
        for (index, entry) in probe.transcript.iter().enumerate() {
            events.emit(Event::frame(&scenario.id, index, entry));
        }
        for f in &findings {
            events.emit(Event::finding(&scenario.id, FindingScope::Scenario, f));
        }
    }
    let end = match &verdict {
        Verdict::Skip { reason } => StepEnd::Skipped {
            reason: reason.clone(),
        },
        Verdict::Fail => StepEnd::Failed,
        Verdict::Warn => StepEnd::Warned,
        _ => StepEnd::Passed,
    };
    events.emit_with(|| Event::StepFinished {
        scenario: scenario.id.clone(),
        step: 0,
        line,
        status: end,
    });
    let protocol = match check {
        NegotiationCheck::UnknownAnswered => probe.unknown_findings.clone(),
        _ => Vec::new(),
    };
    for f in &protocol {
        events.emit_with(|| Event::finding(&scenario.id, FindingScope::Protocol, f));
    }
    Negotiated {
        verdict,
        findings,
        protocol,
        transcript: probe.transcript.clone(),
        kept,
    }
}

/// Asks every version in a fresh session: the first ones at once, then the follow-up.
/// With `keep`, the session that asked the leg's own revision is kept when it can serve
/// the shared scenarios.
async fn probe(
    config: &ExecConfig,
    schemas: Arc<SchemaStore>,
    started: Instant,
    keep: bool,
) -> Probe {
    let first = negotiation::first_asked();
    let own = config.session.revision.as_str();
    // At once: each session awaits its own server.
    let asked = first.iter().map(|v| {
        ask(
            v.clone(),
            config,
            schemas.clone(),
            started,
            keep && v == own,
        )
    });
    let (mut sessions, (discovered, discovery)) = tokio::join!(
        futures_util::future::join_all(asked),
        discover(config, schemas.clone(), started)
    );
    let mut answers: Answers = sessions
        .iter()
        .map(|s| (s.version.clone(), s.answer.clone()))
        .collect();
    if let Some(next) = negotiation::follow_up(&answers) {
        let asked = ask(next, config, schemas, started, false).await;
        answers.insert(asked.version.clone(), asked.answer.clone());
        sessions.push(asked);
    }
    let kept = sessions.iter_mut().find_map(|s| s.kept.take());
    // One transcript for all the sessions, each after a line saying what it asked; the
    // findings point into it.
    let mut transcript = Vec::new();
    let mut unknown_findings = Vec::new();
    for Asked {
        version,
        answer,
        findings: mut found,
        entries,
        ..
    } in sessions
    {
        transcript.push(Entry {
            at: entries.first().map(|e| e.at).unwrap_or_default(),
            direction: Direction::Event,
            text: format!("a fresh session asks protocolVersion {version}: {answer}"),
            http: None,
        });
        if version == negotiation::UNKNOWN_VERSION {
            let offset = transcript.len();
            for f in &mut found {
                f.frame = f.frame.map(|i| i + offset);
            }
            unknown_findings = found;
        }
        transcript.extend(entries);
    }
    transcript.push(Entry {
        at: discovery.first().map(|e| e.at).unwrap_or_default(),
        direction: Direction::Event,
        text: format!(
            "a fresh 2026-07-28 session asks server/discover: {}",
            match &discovered {
                Discovered::Versions(v) => format!("supportedVersions {}", v.join(", ")),
                Discovered::Nothing(why) => format!("no supported versions ({why})"),
            }
        ),
        http: None,
    });
    transcript.extend(discovery);
    Probe {
        answers,
        discovered,
        unknown_findings,
        transcript,
        kept: std::sync::Mutex::new(kept),
    }
}

/// Longest wait for `server/discover` (start-up included): a handshake-only server may
/// never answer it.
const DISCOVER_WAIT: std::time::Duration = std::time::Duration::from_secs(15);

/// `server/discover` in a fresh 2026-07-28 session: the versions the server claims, held
/// against its `initialize` answers (`discovered-version-echoed`). Its frames are in the
/// transcript, but judged by the 2026-07-28 leg, not here.
async fn discover(
    config: &ExecConfig,
    schemas: Arc<SchemaStore>,
    started: Instant,
) -> (Discovered, Vec<Entry>) {
    let transport = match config.target.open(started) {
        Ok(t) => t,
        Err(e) => {
            let why = format!("the server could not be started: {e}");
            return (Discovered::Nothing(why), vec![]);
        }
    };
    let mut session_config = config.session.clone();
    session_config.revision = Revision::V2026_07_28;
    let wait = session_config.startup_timeout.min(DISCOVER_WAIT);
    session_config.startup_timeout = wait;
    session_config.timeout = session_config.timeout.min(wait);
    let mut session = Session::new(transport, schemas, session_config, started);
    let discovered = match session.initialize_with(&Handshake::default()).await {
        Err(e) => Discovered::Nothing(e.to_string()),
        Ok((_, reply)) => match (reply.error(), reply.result()) {
            (Some(e), _) => Discovered::Nothing(format!("error {} ({:?})", e.code, e.message)),
            (None, result) => match result.and_then(|r| r.get("supportedVersions")) {
                Some(Value::Array(list)) => Discovered::Versions(
                    list.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect(),
                ),
                _ => Discovered::Nothing("the result has no `supportedVersions` list".into()),
            },
        },
    };
    let mut record = session.finish().await;
    let entries = record.transcript.window(record.findings.iter_mut());
    (discovered, entries)
}

/// One fresh session's part in the probe.
struct Asked {
    version: String,
    answer: Answer,
    /// What its frames broke, with `frame` an index into `entries`.
    findings: Vec<Finding>,
    entries: Vec<Entry>,
    kept: Option<Session>,
}

/// `initialize` asking `version` in a fresh session, which then ends, or, with `keep`
/// (`version` is the leg's own revision, asked as the default handshake asks it), is
/// returned when it can serve the shared scenarios (`Session::donatable`).
async fn ask(
    version: String,
    config: &ExecConfig,
    schemas: Arc<SchemaStore>,
    started: Instant,
    keep: bool,
) -> Asked {
    let transport = match config.target.open(started) {
        Ok(t) => t,
        Err(e) => {
            let answer = Answer::Nothing(format!("the server could not be started: {e}"));
            return Asked {
                version,
                answer,
                findings: vec![],
                entries: vec![],
                kept: None,
            };
        }
    };
    let mut session = Session::new(transport, schemas, config.session.clone(), started);
    let handshake = Handshake {
        protocol_version: (!keep).then(|| version.clone()),
        ..Handshake::default()
    };
    let answer = match session.initialize_with(&handshake).await {
        Err(e) => Answer::Nothing(e.to_string()),
        Ok((_, reply)) => match (reply.error(), reply.result()) {
            (Some(e), _) => Answer::Error {
                code: e.code,
                message: e.message.clone(),
            },
            (None, result) => match result.and_then(|r| r.get("protocolVersion")) {
                Some(Value::String(v)) => Answer::Version(v.clone()),
                _ => Answer::Nothing("the result has no string `protocolVersion`".into()),
            },
        },
    };
    let (record, kept) = match keep && session.donatable() {
        true => (session.take_window(), Some(session)),
        false => (session.finish().await, None),
    };
    let mut findings = record.findings;
    let entries = record.transcript.window(findings.iter_mut());
    Asked {
        version,
        answer,
        findings,
        entries,
        kept,
    }
}
