//! `mcpcheck run`: settings resolved, the runner started with its reporters attached, the
//! report finished against the baseline, the exit code decided.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use tokio::sync::Semaphore;

use super::finish::LegEnd;
use super::flags::Format;
use super::{EXIT_ERROR, EXIT_FINDINGS, RunArgs, config, finish, legs, resolve};
use crate::outcome::{RunReport, RunVerdict, SnapshotComparison};
use crate::report::aggregate::Aggregator;
use crate::report::human::{self, Detail};
use crate::report::jsonl::JsonLines;
use crate::report::terminal::{Filter, Terminal};
use crate::runner::events::{Emitter, Event, EventSink};
use crate::runner::leg::LegPlan;
use crate::runner::relay::Relay;
use crate::runner::sweep::ProbeConfig;
use crate::scenario::exec::ExecConfig;
use crate::schema::{SchemaStore, SearchPath};

/// Runs `mcpcheck run` with `args` (`matches` tells flags given from defaults, for the
/// config file).
pub async fn run(mut args: RunArgs, matches: &clap::ArgMatches) -> anyhow::Result<ExitCode> {
    if let Some(path) = config::locate(args.config.as_deref()) {
        let config = config::Config::load(&path)?;
        let base = path.parent().unwrap_or(std::path::Path::new(""));
        config::apply(&config, base, &mut args, matches)?;
    }
    // --serve: the server runs for exactly as long as the checks do.
    let served = super::serve::start(&mut args).await?;
    let outcome = checks(args).await;
    if let Some(served) = served {
        served.stop().await;
    }
    outcome
}

/// The run itself, once the server is known: a leg per revision, then the reports of the
/// whole matrix and the exit code over every leg.
async fn checks(mut args: RunArgs) -> anyhow::Result<ExitCode> {
    // Usage errors first, before any probe starts a server.
    let tool_args = Arc::new({
        let mut all = args.exec.tool_args_inline.clone();
        all.extend(resolve::tool_args(args.exec.tool_args.as_deref())?);
        all
    });
    let (planned, opened) = legs::plan(&mut args).await?;
    let legs = Legs::resolve(&mut args, planned).await?;
    let args = &args;
    let ran = legs.run(args, opened, &tool_args).await;
    let (ends, emitters, secrets) = legs.ends(ran)?;
    let done = finish::finish(
        ends,
        &args.reports,
        args.protocol.schema_dir.as_deref(),
        &secrets,
    )?;
    legs.tell(args, &done, &emitters, secrets)
}

/// The legs of a run, every one resolved before any starts, and the sinks they are told to.
struct Legs {
    planned: Vec<legs::Planned>,
    /// Each leg's settings; `None` for a revision the server does not speak.
    settings: Vec<Option<(ProbeConfig, SearchPath)>>,
    /// Each leg's schemas; `None` likewise.
    stores: Vec<Option<Arc<SchemaStore>>>,
    sinks: Sinks,
    /// More than one leg: each gets a heading, and the matrix is printed at the end.
    multi: bool,
}

impl Legs {
    /// Resolves the sinks, then every leg's settings and schemas, so that a usage error or
    /// a missing schema stops the run before any leg prints.
    async fn resolve(args: &mut RunArgs, planned: Vec<legs::Planned>) -> anyhow::Result<Legs> {
        let multi = planned.len() > 1;
        // The sinks are resolved at a revision that resolves (secrets do not depend on it).
        if let Some(r) = planned.iter().find_map(|p| match p {
            legs::Planned::Run(r) => Some(*r),
            legs::Planned::NotSpoken(..) => None,
        }) {
            legs::at(args, r)?;
        }
        let sinks = Sinks::attach(args)?;
        // Every leg's settings before any leg starts (resolving one rewrites `args`).
        let mut settings = Vec::new();
        for p in &planned {
            settings.push(match p {
                legs::Planned::Run(r) => Some(legs::at(args, *r)?),
                legs::Planned::NotSpoken(..) => None,
            });
        }
        // Every leg's schema before any leg starts: a missing one stops the run (exit 2)
        // before an earlier leg could print a verdict.
        let mut stores = Vec::new();
        for s in &settings {
            stores.push(match s {
                Some((probe, search)) => Some(Arc::new(
                    super::ci::schema_store(&args.ci, search.clone(), probe.session.revision)
                        .await?,
                )),
                None => None,
            });
        }
        Ok(Legs {
            planned,
            settings,
            stores,
            sinks,
            multi,
        })
    }

    /// The line that opens leg `n` on the terminal: only when there is more than one.
    fn heading(&self, n: usize) -> String {
        let gap = if n > 0 { "\n" } else { "" };
        match &self.planned[n] {
            legs::Planned::NotSpoken(revision, reason) if self.multi => {
                format!("{gap}== {revision}: not spoken: {reason}\n")
            }
            legs::Planned::Run(revision) if self.multi => format!("{gap}== {revision} ==\n"),
            _ => String::new(),
        }
    }

    /// Runs the legs at once, each told whole and in order: a leg's relay opens when the
    /// legs before it are done, and then prints its heading, its held events and the rest.
    /// The sessions planning opened that no leg took are shut down alongside.
    async fn run(
        &self,
        args: &RunArgs,
        mut opened: crate::runner::auto::Opened,
        tool_args: &Arc<std::collections::BTreeMap<String, serde_json::Value>>,
    ) -> Vec<anyhow::Result<Ran>> {
        let jobs = args.exec.jobs.unwrap_or_else(default_jobs);
        // One set of slots for every leg: `--jobs` bounds the servers of the whole run.
        let slots = Arc::new(Semaphore::new(jobs.max(1)));
        let runs: Vec<usize> = (0..self.planned.len())
            .filter(|n| self.settings[*n].is_some())
            .collect();
        let relays: Vec<Arc<Relay>> = (0..runs.len())
            .map(|k| Arc::new(Relay::new(self.sinks.shared.clone(), k == 0)))
            .collect();
        // Headings up to the first leg that runs (all of them when none does).
        let until = runs.first().map_or(self.planned.len(), |first| first + 1);
        for n in 0..until {
            self.sinks.terminal.print(&self.heading(n));
        }
        // Leg k waits for its turn (leg 0's has come) and hands the next turn on.
        let (handoffs, turns): (Vec<_>, Vec<_>) = runs
            .iter()
            .map(|_| tokio::sync::oneshot::channel::<()>())
            .unzip();
        let mut handoffs = handoffs.into_iter();
        if let Some(first) = handoffs.next() {
            let _ = first.send(());
        }
        let handoffs = handoffs.map(Some).chain(std::iter::once(None));
        let legs = runs.iter().zip(turns).zip(handoffs).enumerate();
        let legs = legs.map(|(k, ((&n, turn), handoff))| {
            let (probe, _) = self.settings[n]
                .clone()
                .expect("a leg that runs has settings");
            let store = self.stores[n]
                .clone()
                .expect("a leg that runs has a schema store");
            let opened = match &self.planned[n] {
                legs::Planned::Run(revision) => opened.take(*revision),
                legs::Planned::NotSpoken(..) => None,
            };
            let relay = relays[k].clone();
            let next = runs.get(k + 1).copied();
            let total = self.planned.len();
            let relays = &relays;
            let planned_leg = PlannedLeg {
                probe,
                store,
                slots: slots.clone(),
                jobs,
                take_snapshot: k == 0,
                opened,
            };
            async move {
                let ran = leg(args, planned_leg, relay, tool_args).await;
                let _ = turn.await;
                if let Ok(ran) = &ran {
                    self.sinks.terminal.print(&human::footer(&ran.report));
                }
                // The not-spoken legs up to the next leg that runs, its heading, and its
                // events; a leg that failed hands over all the same.
                for m in n + 1..next.unwrap_or(total) {
                    self.sinks.terminal.print(&self.heading(m));
                }
                if let Some(next) = next {
                    self.sinks.terminal.print(&self.heading(next));
                    relays[k + 1].open();
                }
                if let Some(tx) = handoff {
                    let _ = tx.send(());
                }
                ran
            }
        });
        // The legs take their sessions as they are built: collected first, so what no leg
        // took is known (and shut down alongside them).
        let legs: Vec<_> = legs.collect();
        let (ran_legs, ()) = tokio::join!(futures_util::future::join_all(legs), opened.close());
        ran_legs
    }

    /// Each leg's end in plan order, the emitters of those that ran, and the secrets of
    /// the first that ran (the target's, the same for every leg). A leg's harness error
    /// is the run's.
    fn ends(
        &self,
        ran_legs: Vec<anyhow::Result<Ran>>,
    ) -> anyhow::Result<(Vec<LegEnd>, Vec<Emitter>, Redactor)> {
        let mut ran_legs = ran_legs.into_iter();
        let mut ends = Vec::new();
        let mut emitters = Vec::new();
        let mut redact_all: Option<Redactor> = None;
        for planned in self.planned.iter() {
            match planned {
                legs::Planned::NotSpoken(revision, reason) => ends.push(LegEnd::NotSpoken {
                    revision: *revision,
                    reason: reason.clone(),
                }),
                legs::Planned::Run(_) => {
                    let ran = ran_legs.next().expect("a result per leg that ran")?;
                    redact_all.get_or_insert(ran.redact.clone());
                    emitters.push(ran.events);
                    ends.push(LegEnd::Ran(Box::new(ran.report)));
                }
            }
        }
        let secrets = redact_all.unwrap_or_else(|| Arc::new(Vec::new()));
        Ok((ends, emitters, secrets))
    }

    /// Tells the finished run: each leg's verdict (counting the baseline) to its sinks,
    /// what follows the legs to the terminal, the `--output` file, and the exit code over
    /// every leg.
    fn tell(
        &self,
        args: &RunArgs,
        done: &finish::Done,
        emitters: &[Emitter],
        secrets: Redactor,
    ) -> anyhow::Result<ExitCode> {
        let ran: Vec<&finish::Finished> =
            done.legs.iter().filter_map(|l| l.as_ref().ok()).collect();
        for (finished, events) in ran.iter().zip(emitters) {
            let report = &finished.report;
            events.emit(Event::RunFinished {
                verdict: if finished.input().passes() {
                    RunVerdict::Pass
                } else {
                    RunVerdict::Fail
                },
                tally: report.tally,
                duration_ms: report.duration_ms,
            });
        }
        for j in &self.sinks.jsonl {
            j.finish()?;
        }
        let matrix = done.matrix();
        let mut after = String::new();
        for f in &ran {
            if let Some(c) = &f.report.snapshot {
                after.push_str(&human::snapshot(c, true, "snapshot "));
            }
        }
        for note in &done.notes {
            after.push_str(note);
            after.push('\n');
        }
        if self.multi {
            after.push_str(&crate::report::matrix::terminal_lines(&matrix));
        }
        // The terminal printed each leg's sweep, scenarios and verdict as they ended.
        self.sinks.terminal.print(&after);
        write_output(args, &ran, &after, &matrix, secrets, self.multi)?;
        Ok(match crate::report::matrix::exit_code(&matrix) {
            0 => ExitCode::SUCCESS,
            2 => ExitCode::from(EXIT_ERROR),
            _ => ExitCode::from(EXIT_FINDINGS),
        })
    }
}

/// `--output` (or stdout for `--format json`): the whole summary in suite order, for
/// `--format human`, or the matrix as JSON; cleaned of `secrets` either way.
fn write_output(
    args: &RunArgs,
    ran: &[&finish::Finished],
    after: &str,
    matrix: &crate::report::matrix::Matrix<'_>,
    secrets: Redactor,
    multi: bool,
) -> anyhow::Result<()> {
    let clean = secrets.iter().all(|s| s.is_empty());
    let redact = move |text: String| crate::transport::http::redact_owned(text, &secrets);
    let human = || {
        let mut text = String::new();
        for f in ran {
            if multi {
                text.push_str(&format!("== {} ==\n", f.report.requested_revision));
            }
            text.push_str(&human::render(&f.report));
        }
        redact(format!("{text}{after}"))
    };
    // anstream strips the colors for NO_COLOR, a non-terminal stdout, or a file.
    let json =
        || crate::report::render_matrix(crate::report::ReportKind::Json, matrix).map(&redact);
    match (args.reports.format, &args.reports.output) {
        (Format::Human, None) => {}
        (Format::Human, Some(path)) => {
            std::fs::write(path, human()).with_context(|| format!("writing {}", path.display()))?
        }
        (Format::Json, None) => super::out(&format!("{}\n", json()?)),
        // Written as it is serialized when there is nothing to redact.
        (Format::Json, Some(path)) if clean => crate::report::write_json(path, matrix)?,
        (Format::Json, Some(path)) => {
            std::fs::write(path, json()?).with_context(|| format!("writing {}", path.display()))?
        }
    }
    Ok(())
}

/// The secrets every printed line and report file is cleaned of.
type Redactor = Arc<Vec<String>>;

/// One leg that ran: its report (before the baseline), the emitter that told its events,
/// and its secrets.
struct Ran {
    report: RunReport,
    events: Emitter,
    redact: Redactor,
}

/// A leg about to run: its settings, resolved before any leg started.
struct PlannedLeg {
    probe: ProbeConfig,
    /// The leg's schemas, found or fetched before any leg started.
    store: Arc<SchemaStore>,
    /// The run's server slots, shared with the other legs.
    slots: Arc<Semaphore>,
    jobs: usize,
    /// Whether this leg takes the `--snapshot-dir` snapshot (the first leg that runs).
    take_snapshot: bool,
    /// A planning probe's session that opens this leg's sweep (`auto::Opened`).
    opened: Option<crate::runner::sweep::Opening>,
}

/// Runs one leg: the sweep and the suite at its revision, told to `relay` (into the
/// shared sinks, once the legs before it are told) and to the leg's own aggregator.
async fn leg(
    args: &RunArgs,
    planned: PlannedLeg,
    relay: Arc<Relay>,
    tool_args: &Arc<std::collections::BTreeMap<String, serde_json::Value>>,
) -> anyhow::Result<Ran> {
    let PlannedLeg {
        mut probe,
        store,
        slots,
        jobs,
        take_snapshot,
        opened,
    } = planned;
    probe.target = resolve::detect(probe.target, args.http.transport, probe.session.revision).await;
    probe.session.calls = crate::outcome::CallGrant {
        policy: args.exec.call_tools,
        opted_in: Arc::new(tool_args.keys().cloned().collect()),
        official_fixture: args.select.profile
            == Some(crate::scenario::official::Profile::OfficialFixture),
        allow_destructive: false,
    };
    let scenarios = resolve::scenarios(
        &args.scenarios,
        args.select.builtin,
        &args.select.include,
        &args.select.exclude,
    )?;
    let scenarios = crate::scenario::official::select(args.select.profile, scenarios);
    let scenarios = super::ci::partition(&args.ci, scenarios);
    // A bearer token never leaves the process, whatever echoed it: every report file and
    // every printed line goes through this.
    let secrets: Redactor = Arc::new(probe.target.secrets().to_vec());
    let aggregator = Arc::new(Aggregator::new(
        scenarios.iter().map(|s| s.id.clone()).collect(),
    ));
    let events = Emitter::new(vec![relay, aggregator.clone()]);
    let exec = Arc::new(ExecConfig {
        target: probe.target.clone(),
        session: probe.session.clone(),
        tools: args.exec.call_tools,
        tool_args: tool_args.clone(),
        negotiation: Default::default(),
        // Which scenario opens a shared session and which reuses one depends on timing
        // (with more than one job), and so do their transcripts: deterministic output
        // needs a server per scenario.
        isolate: args.exec.isolate || args.reports.deterministic,
    });
    let plan = LegPlan {
        probe,
        exec,
        scenarios,
        jobs,
        slots,
        deadline: args.deadline,
        opened: std::sync::Mutex::new(opened),
    };
    if let Err(e) = crate::runner::leg::run(&plan, store.clone(), &events).await {
        events.emit(Event::HarnessError {
            scenario: None,
            reason: crate::transport::http::redact(&e.to_string(), &secrets),
        });
        return Err(e.into());
    }
    let mut report = aggregator
        .finish()
        .context("the run ended without a protocol sweep")?;
    report.set_fail_on(args.reports.fail_on);
    report.partition = args.ci.partition.map(|p| p.to_string());
    if take_snapshot && let Some(dir) = &args.snapshot_dir {
        report.add_snapshot(snapshot(args, &plan.probe, dir).await?);
    }
    super::ci::settle_schema(&store)?;
    Ok(Ran {
        report,
        events,
        redact: secrets,
    })
}

/// `--snapshot-dir`: the server's snapshot compared with the accepted one.
async fn snapshot(
    args: &RunArgs,
    probe: &ProbeConfig,
    dir: &std::path::Path,
) -> anyhow::Result<SnapshotComparison> {
    let stdio = match &probe.target {
        crate::transport::target::Target::Stdio { options, .. } => options.clone(),
        _ => Default::default(),
    };
    let capture = crate::snapshot::Capture {
        options: crate::snapshot::SnapshotOptions {
            call_tools: args.exec.call_tools,
            ..Default::default()
        },
        session: probe.session.clone(),
        stdio,
        schema_dir: args.protocol.schema_dir.clone(),
    };
    let transport = probe
        .target
        .open(std::time::Instant::now())
        .context("connecting for --snapshot-dir")?;
    let snap = capture
        .transport(transport)
        .await
        .context("taking the snapshot for --snapshot-dir")?;
    Ok(crate::snapshot::compare(&snap, dir, false)?)
}

/// The event sinks of a run: the terminal (printing unless stdout carries JSON) and the
/// `--report events=PATH` files, shared by every leg through its relay.
struct Sinks {
    shared: Vec<Arc<dyn EventSink>>,
    terminal: Arc<Terminal>,
    jsonl: Vec<Arc<JsonLines>>,
}

impl Sinks {
    fn attach(args: &RunArgs) -> anyhow::Result<Sinks> {
        // The terminal and the event log see text before the secrets of a leg are known:
        // the target's secrets do not depend on the revision, so they are resolved here.
        let secrets = resolve::run(args)
            .map(|(probe, _)| probe.target.secrets().to_vec())
            .unwrap_or_default();
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
