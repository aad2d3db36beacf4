//! `mcpcheck run`'s arguments (with mcpcheck.toml applied) resolved once, before anything
//! runs, into an immutable [`RunPlan`]: the revision matrix, the sinks its events go to,
//! and what follows the legs (baseline, reports, output). A usage error, a bad scenario
//! file or a missing schema stops the run here, before any leg prints.

use std::sync::Arc;

use super::args::ReportArgs;
use super::flags::Format;
use super::{RunArgs, legs, resolve};
use crate::outcome::CallGrant;
use crate::outcome::events::EventSink;
use crate::protocol::Revision;
use crate::report::human::Detail;
use crate::report::jsonl::JsonLines;
use crate::report::terminal::{Filter, Terminal};
use crate::runner::auto::Opened;
use crate::runner::matrix::{
    LegSettings, MatrixLeg, NotSpoken, RevisionMatrix, Scope, SnapshotPlan,
};
use crate::scenario::official::Profile;

/// The secrets every printed line and report file is cleaned of (a bearer token).
pub type Secrets = Arc<Vec<String>>;

/// Everything `mcpcheck run` does, decided before it starts.
#[derive(Debug)]
pub struct RunPlan {
    /// The legs and what they share.
    pub matrix: RevisionMatrix,
    /// Where the legs' events go as they happen.
    pub sinks: Sinks,
    /// The baseline, the report files, `--format` and `--output`.
    pub reports: ReportArgs,
    /// `--schema-dir`, which `--deterministic` scrubs from the reports.
    pub schema_dir: Option<std::path::PathBuf>,
    /// The target's secrets (the same at every revision).
    pub secrets: Secrets,
}

impl RunPlan {
    /// Resolves `args`: the scenarios and tool arguments first (usage errors before any
    /// probe starts a server), then the legs (probing the server where the revisions
    /// depend on it), each leg's settings and schemas, and the sinks. The probes'
    /// sessions that can open a leg's sweep come back beside the plan.
    pub async fn resolve(args: RunArgs) -> anyhow::Result<(RunPlan, Opened)> {
        let tool_args = {
            let mut all = args.exec.tool_args_inline.clone();
            all.extend(resolve::tool_args(args.exec.tool_args.as_deref())?);
            Arc::new(all)
        };
        let scenarios = resolve::scenarios(
            &args.scenarios,
            args.select.builtin,
            &args.select.include,
            &args.select.exclude,
        )?;
        let scenarios = crate::scenario::official::select(args.select.profile, scenarios);
        let scenarios = super::ci::partition(&args.ci, scenarios);
        let grant = CallGrant {
            policy: args.exec.call_tools,
            opted_in: Arc::new(tool_args.keys().cloned().collect()),
            official_fixture: args.select.profile == Some(Profile::OfficialFixture),
            allow_destructive: false,
        };
        let (planned, opened) = legs::plan(&args).await?;
        // The target's secrets do not depend on the revision.
        let secrets: Secrets = Arc::new(
            resolve::run(&args, Revision::DEFAULT)
                .map(|(probe, _)| probe.target.secrets().to_vec())
                .unwrap_or_default(),
        );
        let sinks = Sinks::attach(&args, &secrets)?;
        // Every leg's settings first (a usage error), then its schemas.
        let mut at = Vec::with_capacity(planned.len());
        for leg in planned {
            at.push(match leg {
                legs::Planned::Run(revision) => Ok((Scope::Full, legs::at(&args, revision)?)),
                legs::Planned::Differential { revision, base } => {
                    Ok((Scope::Differential { base }, legs::at(&args, revision)?))
                }
                legs::Planned::NotSpoken(revision, reason) => Err((revision, reason)),
            });
        }
        let mut matrix_legs = Vec::with_capacity(at.len());
        for leg in at {
            matrix_legs.push(match leg {
                Ok((scope, (probe, search))) => MatrixLeg::Run(Box::new(
                    settings(&args, probe, search, &grant, scope).await?,
                )),
                Err((revision, reason)) => MatrixLeg::NotSpoken(NotSpoken { revision, reason }),
            });
        }
        let matrix = RevisionMatrix {
            legs: matrix_legs,
            scenarios: scenarios.into(),
            jobs: args.exec.jobs.unwrap_or_else(default_jobs),
            deadline: args.deadline,
            tool_args,
            // Which scenario opens a shared session and which reuses one depends on timing
            // (with more than one job), and so do their transcripts: deterministic output
            // needs a server per scenario.
            isolate: args.exec.isolate || args.reports.deterministic,
            fail_on: args.reports.fail_on,
            partition: args.ci.partition.map(|p| p.to_string()),
            snapshot: args.snapshot_dir.clone().map(|dir| SnapshotPlan {
                dir,
                schema_dir: args.protocol.schema_dir.clone(),
            }),
        };
        let plan = RunPlan {
            matrix,
            sinks,
            schema_dir: args.protocol.schema_dir,
            reports: args.reports,
            secrets,
        };
        Ok((plan, opened))
    }
}

/// A leg's settings from what `probe` and `search` resolved: the server as the leg's
/// revision reaches it (a URL probed for the 2024-11-05 transport under `--transport
/// auto`), the tool-call grant, and the schemas, found or fetched now: a missing one stops
/// the run (exit 2) before an earlier leg could print a verdict.
async fn settings(
    args: &RunArgs,
    mut probe: crate::runner::sweep::ProbeConfig,
    search: crate::schema::SearchPath,
    grant: &CallGrant,
    scope: Scope,
) -> anyhow::Result<LegSettings> {
    let revision = probe.session.revision;
    probe.session.calls = grant.clone();
    let store = super::ci::schema_store(&args.ci, search, revision).await?;
    probe.target = resolve::detect(probe.target, args.target.http.transport, revision).await;
    Ok(LegSettings {
        probe,
        store: Arc::new(store),
        scope,
    })
}

/// The event sinks of a run: the terminal (printing unless stdout carries JSON) and the
/// `--report events=PATH` files, shared by every leg through its relay.
pub struct Sinks {
    /// Every sink, the terminal first.
    pub shared: Vec<Arc<dyn EventSink>>,
    /// The terminal, which also prints the matrix's headings and what follows the legs.
    pub terminal: Arc<Terminal>,
    /// The event logs, finished after the last `run_finished`.
    pub jsonl: Vec<Arc<JsonLines>>,
}

impl std::fmt::Debug for Sinks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sinks")
            .field("shared", &self.shared.len())
            .field("terminal", &self.terminal)
            .field("jsonl", &self.jsonl)
            .finish()
    }
}

impl Sinks {
    fn attach(args: &RunArgs, secrets: &Secrets) -> anyhow::Result<Sinks> {
        let secrets = secrets.clone();
        let redact = move |text: &str| crate::transport::http::redact(text, &secrets);
        let filter = || -> Filter {
            let redact = redact.clone();
            if args.reports.deterministic {
                let scrub = crate::report::deterministic::Scrubber::for_this_process(
                    args.protocol.schema_dir.as_deref(),
                );
                Box::new(move |t: &str| scrub.scrub(&redact(t)))
            } else {
                Box::new(redact)
            }
        };
        let detail = if args.reports.quiet {
            Detail::Quiet
        } else if args.reports.verbose {
            Detail::Verbose
        } else {
            Detail::Normal
        };
        let prints = !(args.reports.format == Format::Json && args.reports.output.is_none());
        let terminal = Arc::new(Terminal::new(
            detail,
            prints,
            progress_bar(args.reports.quiet),
            filter(),
        ));
        let mut shared: Vec<Arc<dyn EventSink>> = vec![terminal.clone()];
        let mut jsonl = Vec::new();
        for spec in args.reports.reports.iter().filter(|s| s.kind.is_streamed()) {
            let sink = Arc::new(JsonLines::create(&spec.path, filter())?);
            shared.push(sink.clone());
            jsonl.push(sink);
        }
        Ok(Sinks {
            shared,
            terminal,
            jsonl,
        })
    }
}

/// A progress bar on stderr when it is a terminal (and not --quiet); none otherwise.
/// Its length is set by each leg's `run_started`.
fn progress_bar(quiet: bool) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if quiet || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(0);
    let style = indicatif::ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} scenarios  {wide_msg}",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    Some(bar)
}

/// `--jobs` when none is given: three per core, at most 32. Most of a run is waiting (on
/// "nothing arrives" windows, on the server's answers and start-up), not computing: against
/// server-everything the default suite took 48.9 s with 2 jobs and 26.1 s with 6 on 2 cores,
/// the same CPU; a CPU-bound server (the Python SDK's, about 1 s of CPU per start) took the
/// same with either.
fn default_jobs() -> usize {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    (cores * 3).min(32)
}
