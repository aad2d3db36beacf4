//! `mcpcheck client`: the client scenarios against a client command, a leg per revision,
//! finished like `run` (baseline, report files) and told on the terminal.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;

use super::args::ReportArgs;
use super::flags::{Format, duration};
use super::{EXIT_ERROR, EXIT_FINDINGS, UsageError, finish};
use crate::protocol::Revision;
use crate::report::human;
use crate::report::matrix;
use crate::runner::client::{ClientRunConfig, MOCK, run_leg};
use crate::runner::matrix::LegEnd;
use crate::scenario::model::client::ClientScenario;
use crate::schema::ensure::{self, Ensured, Policy};
use crate::schema::{SchemaStore, SearchPath};
use crate::transport::target::TransportKind;

/// Arguments of `mcpcheck client`.
#[derive(Debug, Args)]
pub struct ClientArgs {
    /// The client command line. mcpcheck runs it as `sh -c "COMMAND URL"`, the server URL
    /// last, with MCP_CONFORMANCE_SCENARIO and MCP_CONFORMANCE_PROTOCOL_VERSION set (as the
    /// official suite does, so SDK conformance clients run unchanged).
    #[arg(long, value_name = "COMMAND")]
    pub command: String,
    /// How the client reaches mcpcheck's mock server: `http` (the URL is appended to the
    /// command) or `stdio` (the command names `{mock}`, which becomes the server command
    /// the client spawns).
    #[arg(long, value_enum, default_value_t = ClientTransport::Http)]
    pub transport: ClientTransport,
    /// Run only this scenario (its id, or the official id it stands for); repeatable.
    #[arg(long = "scenario", value_name = "ID")]
    pub scenarios: Vec<String>,
    /// Run only partition K of N of the scenarios (by a stable hash of each id), as
    /// `run --partition` does, to split a client suite across a CI matrix.
    #[arg(long, value_name = "K/N")]
    pub partition: Option<crate::runner::partition::Partition>,
    /// Client scenario files from this directory instead of the built-in ones.
    #[arg(long, value_name = "DIR")]
    pub scenario_dir: Option<PathBuf>,
    /// Revisions to run at (repeatable); default: every revision `mcpcheck client` speaks.
    #[arg(long = "protocol-version", value_name = "REVISION")]
    pub revisions: Vec<Revision>,
    /// How long a step waits for the client, and how long it has to exit at the end.
    #[arg(long, value_parser = duration, default_value = "30s")]
    pub timeout: Duration,
    /// How long the client has after SIGTERM before SIGKILL.
    #[arg(long, value_parser = duration, default_value = "2s")]
    pub kill_wait: Duration,
    /// Directory holding `<revision>/schema.json` (else the cache, else a pinned download).
    #[arg(long, value_name = "DIR", env = "MCPCHECK_SCHEMA_DIR")]
    pub schema_dir: Option<PathBuf>,
    /// Run without schema validation (reported as skipped, never as passed).
    #[arg(long)]
    pub no_schema: bool,
    /// Reports, baseline and output.
    #[command(flatten)]
    pub reports: ReportArgs,
}

/// The transports `mcpcheck client` serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ClientTransport {
    /// Streamable HTTP on a loopback port.
    Http,
    /// stdio, through `mcpcheck mock` spawned by the client.
    Stdio,
}

/// Runs `mcpcheck client`.
pub async fn execute(args: ClientArgs) -> anyhow::Result<ExitCode> {
    let has_mock = args.command.contains(MOCK);
    let transport = match (args.transport, has_mock) {
        (ClientTransport::Stdio, true) => TransportKind::Stdio,
        (ClientTransport::Http, false) => TransportKind::Http,
        (ClientTransport::Stdio, false) => {
            let why = format!(
                "--transport stdio: the command must name {MOCK}, the server command the client spawns (e.g. --command 'python client.py {MOCK}')"
            );
            return Err(UsageError(why).into());
        }
        (ClientTransport::Http, true) => {
            let why = format!(
                "the command names {MOCK}: pass --transport stdio (over HTTP the URL is appended instead)"
            );
            return Err(UsageError(why).into());
        }
    };
    let mcpcheck = std::env::current_exe().context("locating the mcpcheck binary for {mock}")?;
    let scenarios = select(&args)?;
    let scenarios = match args.partition {
        Some(p) => p.select(scenarios, |s| &s.id),
        None => scenarios,
    };
    let revisions = revisions(&args, &scenarios);
    let search = SearchPath::standard(args.schema_dir.as_deref());
    let schemas = schema_store(&args, search, &revisions).await?;
    let config = ClientRunConfig {
        command: args.command.clone(),
        transport,
        mcpcheck,
        timeout: args.timeout,
        kill_wait: args.kill_wait,
        schemas: Arc::new(schemas),
    };
    let mut legs = Vec::with_capacity(revisions.len());
    for revision in &revisions {
        let mut report = run_leg(&config, &scenarios, *revision).await;
        report.partition = args.partition.map(|p| p.to_string());
        legs.push(LegEnd::Ran(Box::new(report)));
    }
    let done = finish::finish(legs, &args.reports, args.schema_dir.as_deref(), &[])?;
    let matrix = done.matrix();
    let mut text = String::new();
    for leg in done.legs.iter().filter_map(|l| l.as_ref().ok()) {
        let report = &leg.report;
        if !args.reports.quiet {
            text.push_str(&format!("== {} ==\n", report.requested_revision));
            for o in &report.scenarios {
                text.push_str(&human::scenario(o));
            }
        }
        text.push_str(&human::footer(report));
    }
    for note in &done.notes {
        text.push_str(note);
        text.push('\n');
    }
    match (args.reports.format, &args.reports.output) {
        (Format::Human, None) => super::out(&human::paint_lines(&text)),
        (Format::Human, Some(path)) => {
            std::fs::write(path, &text).with_context(|| format!("writing {}", path.display()))?
        }
        (Format::Json, None) => super::out(&format!(
            "{}\n",
            crate::report::render_matrix(crate::report::ReportKind::Json, &matrix)?
        )),
        (Format::Json, Some(path)) => crate::report::write_json(path, &matrix)?,
    }
    Ok(match matrix::exit_code(&matrix) {
        0 => ExitCode::SUCCESS,
        2 => ExitCode::from(EXIT_ERROR),
        _ => ExitCode::from(EXIT_FINDINGS),
    })
}

/// The scenarios asked for: built-in or from `--scenario-dir`, filtered by `--scenario`.
fn select(args: &ClientArgs) -> anyhow::Result<Vec<ClientScenario>> {
    let all = match &args.scenario_dir {
        None => crate::scenario::builtin::client_scenarios().map_err(|errors| {
            anyhow::anyhow!("the built-in client scenarios do not parse: {}", errors[0])
        })?,
        Some(dir) => {
            let (scenarios, errors) = crate::scenario::parse::parse_client_dir(dir);
            if let Some(e) = errors.first() {
                return Err(UsageError(e.to_string()).into());
            }
            if scenarios.is_empty() {
                let why = format!(
                    "{} holds no client scenario (`role: client`)",
                    dir.display()
                );
                return Err(UsageError(why).into());
            }
            scenarios
        }
    };
    if args.scenarios.is_empty() {
        return Ok(all);
    }
    let mut chosen = Vec::new();
    for wanted in &args.scenarios {
        let found: Vec<_> = all
            .iter()
            .filter(|s| s.id == *wanted || s.official.contains(wanted))
            .filter(|s| !chosen.iter().any(|c: &ClientScenario| c.id == s.id))
            .cloned()
            .collect();
        if found.is_empty()
            && !chosen
                .iter()
                .any(|c| c.id == *wanted || c.official.contains(wanted))
        {
            let ids: Vec<&str> = all.iter().map(|s| s.id.as_str()).collect();
            let why = format!(
                "no client scenario `{wanted}`; there are: {}",
                ids.join(", ")
            );
            return Err(UsageError(why).into());
        }
        chosen.extend(found);
    }
    Ok(chosen)
}

/// `--protocol-version`, else every revision a chosen scenario runs at.
fn revisions(args: &ClientArgs, scenarios: &[ClientScenario]) -> Vec<Revision> {
    if !args.revisions.is_empty() {
        let mut r = args.revisions.clone();
        r.sort();
        r.dedup();
        return r;
    }
    let mut r: Vec<Revision> = scenarios
        .iter()
        .flat_map(|s| s.revisions.iter().copied())
        .collect();
    r.sort();
    r.dedup();
    r
}

/// The schemas of every revision: found, fetched, or off with `--no-schema`; exit 2 when
/// one can be neither found nor fetched.
async fn schema_store(
    args: &ClientArgs,
    search: SearchPath,
    revisions: &[Revision],
) -> anyhow::Result<SchemaStore> {
    if args.no_schema {
        return Ok(SchemaStore::disabled());
    }
    for revision in revisions {
        let ensured = ensure::ensure(&search, *revision, Policy::Require)
            .await
            .map_err(|e| UsageError(e.to_string()))?;
        if let Some(note) = ensured.note() {
            eprintln!("{note}");
        }
        debug_assert!(!matches!(ensured, Ensured::Disabled));
    }
    Ok(SchemaStore::new(search))
}
