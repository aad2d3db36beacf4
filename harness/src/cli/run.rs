//! `mcpcheck run`: settings resolved, the runner started with its reporters attached, the
//! report finished against the baseline, the exit code decided.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;

use super::flags::{Format, RevisionArg};
use super::{EXIT_ERROR, EXIT_FINDINGS, RunArgs, config, finish, resolve};
use crate::outcome::{Comparison, RunVerdict};
use crate::protocol::Revision;
use crate::report::aggregate::Aggregator;
use crate::report::human::{self, Detail};
use crate::report::jsonl::JsonLines;
use crate::report::terminal::{Filter, Terminal};
use crate::runner::events::{Emitter, Event, EventSink};
use crate::runner::probe::ProbeConfig;
use crate::runner::run::RunPlan;
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

/// The run itself, once the server is known.
async fn checks(mut args: RunArgs) -> anyhow::Result<ExitCode> {
    let auto = args.protocol.protocol_version == RevisionArg::Auto;
    if auto {
        args.protocol.protocol_version = RevisionArg::Exact(Revision::DEFAULT);
    }
    let (mut probe, search) = resolve::run(&args)?;
    if auto {
        probe = auto_revision(&mut args, probe, search.clone()).await?;
    }
    probe.target = resolve::detect(probe.target, args.http.transport, probe.session.revision).await;
    let scenarios =
        resolve::scenarios(&args.scenarios, args.builtin, &args.include, &args.exclude)?;
    let scenarios = super::ci::partition(&args.ci, scenarios);
    let store = Arc::new(super::ci::schema_store(&args.ci, search, probe.session.revision).await?);
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
    });
    // A bearer token never leaves the process, whatever echoed it: every report file and
    // every printed line goes through this.
    let secrets = probe.target.secrets().to_vec();
    let redact = move |text: &str| crate::transport::http::redact(text, &secrets);
    let aggregator = Arc::new(Aggregator::new(
        scenarios.iter().map(|s| s.id.clone()).collect(),
    ));
    let sinks = Sinks::attach(&args, scenarios.len(), &redact, aggregator.clone())?;
    let exec = Arc::new(ExecConfig {
        target: probe.target.clone(),
        session: probe.session.clone(),
        tools: args.call_tools,
        tool_args: Arc::new({
            let mut all = args.tool_args_inline.clone();
            all.extend(resolve::tool_args(args.tool_args.as_deref())?);
            all
        }),
        // Which scenario opens a shared session and which reuses one depends on timing
        // (with more than one job), and so do their transcripts: deterministic output
        // needs a server per scenario.
        isolate: args.isolate || args.reports.deterministic,
    });
    let plan = RunPlan {
        probe,
        exec,
        scenarios,
        jobs,
        deadline: args.deadline,
    };
    if let Err(e) = crate::runner::run::run(&plan, store.clone(), &sinks.events).await {
        sinks.events.emit(Event::HarnessError {
            scenario: None,
            reason: redact(&e.to_string()),
        });
        return Err(e.into());
    }
    let mut report = aggregator
        .finish()
        .context("the run ended without a protocol sweep")?;
    if let Some(dir) = &args.snapshot_dir {
        report.add_snapshot(snapshot(&args, &plan.probe, dir).await?);
    }
    super::ci::settle_schema(&store)?;
    let done = finish::finish(
        report,
        &args.reports,
        args.protocol.schema_dir.as_deref(),
        &redact,
    )?;
    let report = &done.report;
    sinks.events.emit(Event::RunFinished {
        verdict: if done.input().passes() {
            RunVerdict::Pass
        } else {
            RunVerdict::Fail
        },
        tally: report.tally,
        duration_ms: report.duration_ms,
    });
    for j in &sinks.jsonl {
        j.finish()?;
    }
    let mut after = String::new();
    if let Some(c) = &report.snapshot {
        after.push_str(&human::snapshot(c, true, "snapshot "));
    }
    for note in &done.notes {
        after.push_str(note);
        after.push('\n');
    }
    // The terminal printed the sweep and each scenario as they ended; the rest follows.
    sinks
        .terminal
        .print(&format!("{}{after}", human::footer(report)));
    // The whole summary in suite order, for --output with --format human.
    let human = || redact(&format!("{}{after}", human::render(report)));
    // anstream strips the colors for NO_COLOR, a non-terminal stdout, or a file.
    let json = || {
        crate::report::render(crate::report::ReportKind::Json, &done.input()).map(|t| redact(&t))
    };
    match (args.format, &args.output) {
        (Format::Human, None) => {}
        (Format::Human, Some(path)) => {
            std::fs::write(path, human()).with_context(|| format!("writing {}", path.display()))?
        }
        (Format::Json, None) => println!("{}", json()?),
        (Format::Json, Some(path)) => {
            std::fs::write(path, json()?).with_context(|| format!("writing {}", path.display()))?
        }
    }
    Ok(if report.has_errors() {
        ExitCode::from(EXIT_ERROR)
    } else if done.input().passes() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FINDINGS)
    })
}

/// `--protocol-version auto`: probes what the server speaks (runner::auto), says so on
/// stderr, and re-resolves the run at the newest shared revision.
async fn auto_revision(
    args: &mut RunArgs,
    legacy: ProbeConfig,
    search: SearchPath,
) -> anyhow::Result<ProbeConfig> {
    args.protocol.protocol_version = RevisionArg::Exact(Revision::V2026_07_28);
    // `--transport sse` has no stateless form: then only the handshake is probed.
    let modern = resolve::run(args).ok().map(|(c, _)| c);
    let store = Arc::new(SchemaStore::new(search));
    let support = crate::runner::auto::detect(modern.as_ref(), &legacy, store).await;
    eprintln!("{}", support.summary());
    let chosen = support.chosen().unwrap_or_else(|| {
        // Nothing shared: the run at the offered revision gives the verdict (a failed
        // handshake is a finding, not a usage error).
        eprintln!("--protocol-version auto: checking at {}", support.offered);
        support.offered
    });
    args.protocol.protocol_version = RevisionArg::Exact(chosen);
    match modern {
        Some(modern) if chosen == Revision::V2026_07_28 => Ok(modern),
        _ => Ok(resolve::run(args)?.0),
    }
}

/// `--snapshot-dir`: the server's snapshot compared with the accepted one.
async fn snapshot(
    args: &RunArgs,
    probe: &ProbeConfig,
    dir: &std::path::Path,
) -> anyhow::Result<Comparison> {
    let stdio = match &probe.target {
        crate::transport::target::Target::Stdio { options, .. } => options.clone(),
        _ => Default::default(),
    };
    let capture = crate::snapshot::Capture {
        options: crate::snapshot::SnapshotOptions {
            call_tools: args.call_tools,
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

/// The event sinks of a run: the terminal (printing unless stdout carries JSON), the
/// `--report events=PATH` files, and the aggregator that builds the final report.
struct Sinks {
    events: Emitter,
    terminal: Arc<Terminal>,
    jsonl: Vec<Arc<JsonLines>>,
}

impl Sinks {
    fn attach<R: Fn(&str) -> String + Send + Sync + Clone + 'static>(
        args: &RunArgs,
        planned: usize,
        redact: &R,
        aggregator: Arc<Aggregator>,
    ) -> anyhow::Result<Sinks> {
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
        let prints = !(args.format == Format::Json && args.output.is_none());
        let terminal = Arc::new(Terminal::new(
            detail,
            prints,
            progress_bar(planned, args.reports.quiet),
            filter(),
        ));
        let mut sinks: Vec<Arc<dyn EventSink>> = vec![terminal.clone(), aggregator];
        let mut jsonl = Vec::new();
        for spec in args.reports.reports.iter().filter(|s| s.kind.is_streamed()) {
            let sink = Arc::new(JsonLines::create(&spec.path, filter())?);
            sinks.push(sink.clone());
            jsonl.push(sink);
        }
        Ok(Sinks {
            events: Emitter::new(sinks),
            terminal,
            jsonl,
        })
    }
}

/// A progress bar on stderr when it is a terminal (and not --quiet); none otherwise.
fn progress_bar(total: usize, quiet: bool) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if quiet || total == 0 || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(total as u64);
    let style = indicatif::ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} scenarios  {wide_msg}",
    )
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    Some(bar)
}
