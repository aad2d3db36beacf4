//! `mcpcheck client`: runs client scenarios against a client command, one process per
//! scenario and revision.
//!
//! For each scenario mcpcheck listens on a loopback port and starts the client the way
//! the official suite does, so SDK conformance clients run unchanged: `sh -c "CMD URL"`
//! (the server URL as the last argument) with `MCP_CONFORMANCE_SCENARIO`,
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` and, when the scenario gives one,
//! `MCP_CONFORMANCE_CONTEXT`. Over stdio the command names `{mock}` instead, which becomes
//! `mcpcheck mock --connect SOCKET`: the client spawns that as its server, and it relays
//! the client's stdio to this run. The client runs in its own process group and is
//! stopped with it when the scenario ends: nothing outlives mcpcheck.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::outcome::{Finding, Role, RunReport, ScenarioOutcome, SchemaStatus, Verdict};
use crate::protocol::Revision;
use crate::scenario::client::{self, Stage};
use crate::scenario::model::client::ClientScenario;
use crate::schema::SchemaStore;
use crate::session::mock::Mock;
use crate::session::mock::Wire;
use crate::session::mock::auth::AuthServer;
use crate::transport::background::Background;
use crate::transport::listen::Endpoint;
use crate::transport::relay::RelayListener;
use crate::transport::stderr::{EXCERPT_HEAD, EXCERPT_TAIL};
use crate::transport::stdio::ServerCommand;
use crate::transport::target::TransportKind;

/// The `{mock}` placeholder of a stdio client's command.
pub const MOCK: &str = "{mock}";

/// How a client run is set up.
#[derive(Clone, Debug)]
pub struct ClientRunConfig {
    /// The client command line: over HTTP the server URL is appended as its last
    /// argument, over stdio it names [`MOCK`].
    pub command: String,
    /// How the client reaches the mock.
    pub transport: TransportKind,
    /// The mcpcheck binary `{mock}` runs (this one).
    pub mcpcheck: std::path::PathBuf,
    /// How long a step waits for the client, and how long it has to exit at the end.
    pub timeout: Duration,
    /// How long the client has after SIGTERM before SIGKILL.
    pub kill_wait: Duration,
    /// The schemas client messages are validated with.
    pub schemas: Arc<SchemaStore>,
}

/// Runs every scenario at `revision`: the leg's report.
pub async fn run_leg(
    config: &ClientRunConfig,
    scenarios: &[ClientScenario],
    revision: Revision,
) -> RunReport {
    let started = Instant::now();
    let mut report = RunReport::empty(config.command.clone(), revision);
    report.role = Role::Client;
    let mut outcomes = Vec::with_capacity(scenarios.len());
    for s in scenarios {
        let outcome = if !s.revisions.contains(&revision) {
            skip(
                s,
                revision,
                format!("{} does not apply at {revision}", s.id),
            )
        } else if !s.transports.contains(&config.transport) {
            let only = match config.transport {
                TransportKind::Stdio => "HTTP",
                TransportKind::Http => "stdio",
            };
            let why = format!("{} is checked over {only} only", s.id);
            skip(s, revision, why)
        } else {
            run_one(config, s, revision).await
        };
        if let Some(status) = outcome.1 {
            report.sweep.schema = status;
        }
        outcomes.push(outcome.0);
    }
    report.add_scenarios(outcomes, millis(started.elapsed()));
    report
}

fn skip(
    s: &ClientScenario,
    revision: Revision,
    reason: String,
) -> (ScenarioOutcome, Option<SchemaStatus>) {
    let outcome = ScenarioOutcome::not_run(
        &s.id,
        &s.title,
        s.spec_url(revision),
        s.official.clone(),
        Verdict::Skip { reason },
        "the scenario did not run",
    );
    (outcome, None)
}

/// Runs one scenario with a client of its own.
async fn run_one(
    config: &ClientRunConfig,
    s: &ClientScenario,
    revision: Revision,
) -> (ScenarioOutcome, Option<SchemaStatus>) {
    let started = Instant::now();
    let error = |reason: String| {
        let outcome = ScenarioOutcome::not_run(
            &s.id,
            &s.title,
            s.spec_url(revision),
            s.official.clone(),
            Verdict::Error { reason },
            "the client did not start",
        );
        (outcome, None)
    };
    let (mut wire, command) = match open(config, s, revision).await {
        Ok(opened) => opened,
        Err(e) => return error(e),
    };
    let client = match Background::spawn(&command) {
        Ok(c) => c,
        Err(e) => return error(format!("cannot start `{}`: {e}", config.command)),
    };
    let serves = match &wire {
        Wire::Http(endpoint) => s.serves.at_origin(&endpoint.origin()),
        Wire::Stdio { .. } => s.serves.clone(),
    };
    let mut mock = Mock::new(revision, serves, config.schemas.clone());
    if let (Some(setup), Wire::Http(endpoint)) = (&s.auth, &wire) {
        mock.protect(AuthServer::new(setup.clone(), endpoint.origin(), revision));
    }
    let stage = Stage {
        wire: &mut wire,
        exit: client.exit_watch(),
        timeout: config.timeout,
        revision,
    };
    let scripted = client::run(s, &mut mock, stage).await;
    let stderr = client.output().excerpt(EXCERPT_HEAD, EXCERPT_TAIL);
    client.stop(config.kill_wait).await;
    drop(wire);
    let ended = mock.end();
    let (mut own, protocol): (Vec<Finding>, Vec<Finding>) = ended
        .findings
        .into_iter()
        .partition(|f| f.rule == s.rule_id());
    own.extend(scripted.findings);
    let verdict = match (Verdict::from_findings(&own), scripted.skipped) {
        (Some(v), _) => v,
        (None, Some(reason)) => Verdict::Skip { reason },
        (None, None) => Verdict::Pass,
    };
    let outcome = ScenarioOutcome {
        id: s.id.clone(),
        title: s.title.clone(),
        spec: s.spec_url(revision),
        official: s.official.clone(),
        verdict,
        findings: own,
        protocol,
        unchecked: scripted.unchecked,
        skipped_steps: Vec::new(),
        policy_skips: Vec::new(),
        fixture_calls: 0,
        duration_ms: millis(started.elapsed()),
        transcript: ended.transcript,
        stderr,
    };
    (outcome, Some(ended.schema))
}

/// The wire the client will reach, and the command that starts it.
async fn open(
    config: &ClientRunConfig,
    s: &ClientScenario,
    revision: Revision,
) -> Result<(Wire, ServerCommand), String> {
    match config.transport {
        TransportKind::Stdio => {
            let listener =
                RelayListener::bind().map_err(|e| format!("cannot open a local socket: {e}"))?;
            let mock = format!(
                "{} mock --connect {}",
                quote(&config.mcpcheck.display().to_string()),
                quote(&listener.path().display().to_string())
            );
            let line = config.command.replace(MOCK, &mock);
            Ok((Wire::stdio(listener), client_command(line, s, revision)))
        }
        TransportKind::Http => {
            let endpoint = Endpoint::bind()
                .await
                .map_err(|e| format!("cannot listen on a loopback port: {e}"))?;
            let line = format!("{} {}", config.command, endpoint.url());
            Ok((Wire::Http(endpoint), client_command(line, s, revision)))
        }
    }
}

/// A word for `sh`, in single quotes.
fn quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// `sh -c LINE` with the official suite's environment variables.
fn client_command(line: String, s: &ClientScenario, revision: Revision) -> ServerCommand {
    let mut command = ServerCommand {
        program: "sh".into(),
        args: vec!["-c".into(), line],
        env: Default::default(),
        cwd: None,
    };
    command
        .env
        .insert("MCP_CONFORMANCE_SCENARIO".into(), s.tell.clone());
    command.env.insert(
        "MCP_CONFORMANCE_PROTOCOL_VERSION".into(),
        revision.as_str().to_owned(),
    );
    if let Some(context) = &s.context {
        command
            .env
            .insert("MCP_CONFORMANCE_CONTEXT".into(), context.to_string());
    }
    command
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
