//! The `mcpcheck` binary: arguments in, exit code out. Everything else is in the library.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use mcpcheck::cli::{self, Cli, Command, Format, SchemasCommand, UsageError};
use mcpcheck::protocol::Revision;
use mcpcheck::report::human::Detail;
use mcpcheck::runner::events::{Emitter, Event};
use mcpcheck::schema::{self, SchemaStore, SearchPath};

/// Exit codes: 0 conformant, 1 conformance failures, 2 usage or harness error.
const EXIT_FINDINGS: u8 = 1;
const EXIT_ERROR: u8 = 2;

fn main() -> ExitCode {
    // The matches are kept to tell flags given on the command line from defaults, so that
    // mcpcheck.toml fills only what the command line left out.
    let matches = <Cli as clap::CommandFactory>::command().get_matches();
    let cli = match <Cli as clap::FromArgMatches>::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcpcheck: cannot start the async runtime: {e}");
            return ExitCode::from(EXIT_ERROR);
        }
    };
    match runtime.block_on(dispatch(cli, &matches)) {
        Ok(code) => code,
        Err(e) => {
            let usage = e.downcast_ref::<UsageError>().is_some();
            eprintln!("mcpcheck: error: {e:#}");
            if usage {
                eprintln!("(see `mcpcheck --help`)");
            }
            ExitCode::from(EXIT_ERROR)
        }
    }
}

async fn dispatch(cli: Cli, matches: &clap::ArgMatches) -> anyhow::Result<ExitCode> {
    mcpcheck::transport::reaper::install_signal_handlers().context("installing signal handlers")?;
    match cli.command {
        Command::Run(args) => {
            let sub = matches
                .subcommand_matches("run")
                .context("clap gave no matches for `run`")?;
            run(*args, sub).await
        }
        Command::Init { path, force } => {
            if path.exists() && !force {
                return Err(UsageError(format!(
                    "{} exists; pass --force to overwrite it",
                    path.display()
                ))
                .into());
            }
            std::fs::write(&path, cli::config::STARTER)
                .with_context(|| format!("writing {}", path.display()))?;
            println!(
                "wrote {}: set [server] command, then run `mcpcheck run`",
                path.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Fuzz(args) => fuzz(*args).await,
        Command::List {
            scenarios,
            partition,
        } => list(&scenarios, partition),
        Command::Schemas(cmd) => schemas(cmd).await,
        Command::Snapshot(args) => snapshot(*args).await,
        Command::Completions { shell } => {
            let mut cmd = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut cmd, "mcpcheck", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => {
            let cmd = <Cli as clap::CommandFactory>::command();
            let mut out = Vec::new();
            clap_mangen::Man::new(cmd)
                .render(&mut out)
                .context("rendering the man page")?;
            std::io::Write::write_all(&mut std::io::stdout(), &out).context("writing stdout")?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `--protocol-version auto`: probes what the server speaks (runner::auto), says so on
/// stderr, and re-resolves the run at the newest shared revision.
async fn auto_revision(
    args: &mut cli::RunArgs,
    legacy: mcpcheck::runner::probe::ProbeConfig,
    search: mcpcheck::schema::SearchPath,
) -> anyhow::Result<mcpcheck::runner::probe::ProbeConfig> {
    use mcpcheck::protocol::Revision;
    args.protocol_version = Revision::V2026_07_28.to_string();
    // `--transport sse` has no stateless form: then only the handshake is probed.
    let modern = cli::resolve::run(args).ok().map(|(c, _)| c);
    let store = Arc::new(SchemaStore::new(search));
    let support = mcpcheck::runner::auto::detect(modern.as_ref(), &legacy, store).await;
    eprintln!("{}", support.summary());
    let chosen = support.chosen().unwrap_or_else(|| {
        // Nothing shared: the run at the offered revision gives the verdict (a failed
        // handshake is a finding, not a usage error).
        eprintln!("--protocol-version auto: checking at {}", support.offered);
        support.offered
    });
    args.protocol_version = chosen.to_string();
    match modern {
        Some(modern) if chosen == Revision::V2026_07_28 => Ok(modern),
        _ => Ok(cli::resolve::run(args)?.0),
    }
}

async fn run(mut args: cli::RunArgs, matches: &clap::ArgMatches) -> anyhow::Result<ExitCode> {
    if let Some(path) = cli::config::locate(args.config.as_deref()) {
        let config = cli::config::Config::load(&path)?;
        let base = path.parent().unwrap_or(std::path::Path::new(""));
        cli::config::apply(&config, base, &mut args, matches)?;
    }
    let auto = args.protocol_version.eq_ignore_ascii_case("auto");
    if auto {
        args.protocol_version = mcpcheck::protocol::Revision::LATEST_HANDSHAKE.to_string();
    }
    let (mut config, search) = cli::resolve::run(&args)?;
    if auto {
        config = auto_revision(&mut args, config, search.clone()).await?;
    }
    config.target =
        cli::resolve::detect(config.target, args.transport, config.session.revision).await;
    let scenarios =
        cli::resolve::scenarios(&args.scenarios, args.builtin, &args.include, &args.exclude)?;
    let scenarios = cli::ci::partition(&args.ci, scenarios);
    let store = Arc::new(cli::ci::schema_store(&args.ci, search, config.session.revision).await?);
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
    });
    // A bearer token never leaves the process, whatever echoed it: every report file and
    // every printed line goes through this.
    let secrets = config.target.secrets().to_vec();
    let redact = move |text: &str| mcpcheck::transport::http::redact(text, &secrets);
    let (events, terminal, jsonl) = reporters(&args, scenarios.len(), &redact)?;
    events.emit(Event::RunStarted {
        planned: scenarios.len(),
        target: config.target.describe(),
        revision: config.session.revision,
        jobs,
    });
    let mut report = match mcpcheck::runner::probe::run(&config, store.clone()).await {
        Ok(r) => r,
        Err(e) => {
            events.emit(Event::HarnessError {
                scenario: None,
                reason: redact(&e.to_string()),
            });
            return Err(e.into());
        }
    };
    for f in &report.findings {
        events.emit_with(|| Event::Finding {
            scenario: None,
            scope: mcpcheck::runner::events::FindingScope::Sweep,
            finding: f.clone(),
        });
    }
    events.emit_with(|| Event::SweepFinished {
        revision: report.revision,
        failures: report.counts.failures,
        warnings: report.counts.warnings,
        report: Arc::new(report.clone()),
    });
    let exec = Arc::new(mcpcheck::scenario::exec::ExecConfig {
        target: config.target.clone(),
        session: config.session.clone(),
        tools: args.call_tools,
        tool_args: Arc::new({
            let mut all = args.tool_args_inline.clone();
            all.extend(cli::resolve::tool_args(args.tool_args.as_deref())?);
            all
        }),
    });
    let (outcomes, took_ms) = mcpcheck::runner::suite::run_with_events(
        &scenarios,
        exec,
        store.clone(),
        jobs,
        events.clone(),
    )
    .await;
    report.add_scenarios(outcomes, took_ms);
    if let Some(dir) = &args.snapshot_dir {
        let stdio = match &config.target {
            mcpcheck::transport::target::Target::Stdio { options, .. } => options.clone(),
            _ => Default::default(),
        };
        let capture = mcpcheck::snapshot::Capture {
            options: mcpcheck::snapshot::SnapshotOptions {
                call_tools: args.call_tools,
                ..Default::default()
            },
            session: config.session.clone(),
            stdio,
            schema_dir: args.schema_dir.clone(),
        };
        let transport = config
            .target
            .open(std::time::Instant::now())
            .context("connecting for --snapshot-dir")?;
        let snap = capture
            .transport(transport)
            .await
            .context("taking the snapshot for --snapshot-dir")?;
        report.add_snapshot(mcpcheck::snapshot::compare(&snap, dir, false)?);
    }
    cli::ci::settle_schema(&store)?;
    let done = cli::finish::finish(report, &args.reports, args.schema_dir.as_deref(), &redact)?;
    let report = &done.report;
    events.emit(Event::RunFinished {
        verdict: if done.input().passes() {
            mcpcheck::runner::Verdict::Pass
        } else {
            mcpcheck::runner::Verdict::Fail
        },
        tally: report.tally,
        duration_ms: report.duration_ms,
    });
    for j in &jsonl {
        j.finish()?;
    }
    let mut after = String::new();
    if let Some(c) = &report.snapshot {
        after.push_str(&snapshot_summary(c, true, "snapshot "));
    }
    for note in &done.notes {
        after.push_str(note);
        after.push('\n');
    }
    // The terminal printed the sweep and each scenario as they ended; the rest follows.
    terminal.print(&format!(
        "{}{after}",
        mcpcheck::report::human::footer(report)
    ));
    // The whole summary in suite order, for --output with --format human.
    let human = || {
        redact(&format!(
            "{}{after}",
            mcpcheck::report::human::render(report)
        ))
    };
    // anstream strips the colors for NO_COLOR, a non-terminal stdout, or a file.
    let json = || {
        mcpcheck::report::render(mcpcheck::report::ReportKind::Json, &done.input())
            .map(|t| redact(&t))
    };
    match (args.format, &args.output) {
        (Format::Human, None) | (Format::Json, Some(_)) => {}
        (Format::Human, Some(path)) => {
            std::fs::write(path, human()).with_context(|| format!("writing {}", path.display()))?
        }
        (Format::Json, None) => println!("{}", json()?),
    }
    if let (Format::Json, Some(path)) = (args.format, &args.output) {
        std::fs::write(path, json()?).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(if report.has_errors() {
        ExitCode::from(EXIT_ERROR)
    } else if done.input().passes() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_FINDINGS)
    })
}

/// The event sinks of a run: the terminal (printing unless stdout carries JSON), and the
/// `--report events=PATH` file if asked.
fn reporters<R: Fn(&str) -> String + Send + Sync + Clone + 'static>(
    args: &cli::RunArgs,
    planned: usize,
    redact: &R,
) -> anyhow::Result<(
    Emitter,
    Arc<mcpcheck::report::terminal::Terminal>,
    Vec<Arc<mcpcheck::report::jsonl::JsonLines>>,
)> {
    let filter = || -> mcpcheck::report::terminal::Filter {
        let redact = redact.clone();
        if args.reports.deterministic {
            let scrub = mcpcheck::report::deterministic::Scrubber::for_this_process(
                args.schema_dir.as_deref(),
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
    let terminal = Arc::new(mcpcheck::report::terminal::Terminal::new(
        detail,
        prints,
        progress_bar(planned, args.reports.quiet),
        filter(),
    ));
    let mut sinks: Vec<Arc<dyn mcpcheck::runner::events::EventSink>> = vec![terminal.clone()];
    let mut jsonl = Vec::new();
    for spec in args.reports.reports.iter().filter(|s| s.kind.is_streamed()) {
        let sink = Arc::new(mcpcheck::report::jsonl::JsonLines::create(
            &spec.path,
            filter(),
        )?);
        sinks.push(sink.clone());
        jsonl.push(sink);
    }
    Ok((Emitter::new(sinks), terminal, jsonl))
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

async fn fuzz(args: cli::fuzz::FuzzArgs) -> anyhow::Result<ExitCode> {
    let (mut config, search) = cli::fuzz::resolve(&args)?;
    config.target =
        cli::resolve::detect(config.target, args.transport, config.session.revision).await;
    let store = Arc::new(SchemaStore::new(search));
    let mut log = |line: &str| eprintln!("{line}");
    let report = mcpcheck::fuzz::run(&config, store, &mut log).await?;
    let human = cli::fuzz::render(&report);
    match (args.format, &args.output) {
        (Format::Human, _) => print!("{human}"),
        (Format::Json, None) => println!("{}", cli::fuzz::to_json(&report)),
        (Format::Json, Some(path)) => {
            std::fs::write(path, cli::fuzz::to_json(&report))
                .with_context(|| format!("writing {}", path.display()))?;
            print!("{human}");
        }
    }
    Ok(if report.has_findings() {
        ExitCode::from(EXIT_FINDINGS)
    } else {
        ExitCode::SUCCESS
    })
}

fn list(
    paths: &[std::path::PathBuf],
    partition: Option<mcpcheck::runner::partition::Partition>,
) -> anyhow::Result<ExitCode> {
    let scenarios = cli::resolve::scenarios(paths, false, &[], &[])?;
    let scenarios = cli::ci::partition(
        &cli::args::CiArgs {
            partition,
            no_schema: false,
        },
        scenarios,
    );
    for s in &scenarios {
        let revs = s
            .revisions
            .iter()
            .map(|r| r.as_str())
            .collect::<Vec<_>>()
            .join(",");
        let severity = if s.severity == mcpcheck::check::Severity::Warning {
            "should"
        } else {
            "must"
        };
        println!(
            "{:<44} {:<6} {:<44} {}  {}",
            s.id, severity, revs, s.spec, s.title
        );
    }
    println!("{} scenarios", scenarios.len());
    Ok(ExitCode::SUCCESS)
}

async fn schemas(cmd: SchemasCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        SchemasCommand::Fetch { dest, base_url } => {
            let dest = match dest {
                Some(d) => d,
                None => schema::resolve::cache_dir()
                    .context("no cache directory: set HOME or XDG_CACHE_HOME, or pass --dest")?,
            };
            let base = base_url
                .as_deref()
                .map_or_else(schema::ensure::base_url, str::to_owned);
            let results = schema::fetch::fetch(&base, &dest, &Revision::ALL).await?;
            let mut failed = false;
            for r in results {
                match r {
                    Ok(f) => println!(
                        "{}  {} ({} bytes, sha256 verified)",
                        f.revision,
                        f.path.display(),
                        f.bytes
                    ),
                    Err(e) => {
                        failed = true;
                        eprintln!("mcpcheck: {e}");
                    }
                }
            }
            Ok(if failed {
                ExitCode::from(EXIT_ERROR)
            } else {
                ExitCode::SUCCESS
            })
        }
        SchemasCommand::List { schema_dir } => {
            let search = SearchPath::standard(schema_dir.as_deref());
            for rev in Revision::ALL {
                match search.locate(rev) {
                    Ok(loc) => {
                        let pin = if loc.pinned {
                            "matches pin"
                        } else {
                            "DIFFERS from pin"
                        };
                        println!("{rev}  {}  ({:?}, {pin})", loc.path.display(), loc.origin);
                    }
                    Err(e) => println!("{rev}  missing: {e}"),
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `mcpcheck snapshot`: capture, compare with the accepted files, report; exit 1 on change.
async fn snapshot(args: cli::snapshot::SnapshotArgs) -> anyhow::Result<ExitCode> {
    use mcpcheck::snapshot::{Status, compare};
    let (server, capture) = cli::snapshot::resolve(&args)?;
    let started = std::time::Instant::now();
    let snap = match &server {
        cli::snapshot::Source::Command(command) => capture.command(command).await,
        cli::snapshot::Source::Http(options) => {
            let transport = mcpcheck::transport::http::HttpTransport::new(options.clone())
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            capture.transport(Box::new(transport)).await
        }
    }
    .with_context(|| format!("snapshotting `{}`", server.display()))?;
    let mut result = compare::compare(&snap, &args.dir, args.accept)?;
    if args.review {
        for area in result
            .areas
            .iter_mut()
            .filter(|a| a.status == Status::Changed)
        {
            print!("{}", area.diff.as_deref().unwrap_or_default());
            if ask(&format!("accept the change to {}? [y/N] ", area.area))? {
                compare::accept_pending(&args.dir, &area.area)?;
                area.status = Status::Accepted;
            }
        }
    }
    let took_ms = started.elapsed().as_millis() as u64;
    match args.format {
        Format::Json => {
            let report = serde_json::json!({
                "format_version": mcpcheck::runner::REPORT_FORMAT_VERSION,
                "mcpcheck_version": env!("CARGO_PKG_VERSION"),
                "server": server.display(),
                "duration_ms": took_ms,
                "snapshot": result,
            });
            println!("{}", serde_json::to_string_pretty(&report)?);
        }
        Format::Human => {
            // --review already showed each diff as it asked.
            print!("{}", snapshot_summary(&result, !args.review, ""));
            if result.has_changes() {
                println!(
                    "snapshot changed: accept with `mcpcheck snapshot --accept` (or --review, or `cargo insta review`)"
                );
            }
        }
    }
    Ok(if result.has_changes() {
        ExitCode::from(EXIT_FINDINGS)
    } else {
        ExitCode::SUCCESS
    })
}

/// The snapshot part of the human report: diffs, then one line per area.
fn snapshot_summary(c: &mcpcheck::snapshot::Comparison, diffs: bool, prefix: &str) -> String {
    use mcpcheck::snapshot::Status;
    let mut out = String::new();
    for a in c.areas.iter().filter(|_| diffs) {
        if let Some(diff) = &a.diff {
            out.push_str(diff);
        }
    }
    for a in &c.areas {
        let what = match a.status {
            Status::Unchanged => "unchanged",
            Status::Written => "written (first run)",
            Status::Changed => "CHANGED (pending as .snap.new)",
            Status::Accepted => "changed, accepted",
        };
        out.push_str(&format!("{prefix}{:<10} {what}  {}\n", a.area, a.path));
    }
    out
}

/// Asks a yes/no question on the terminal; anything but y/yes (or end of input) is no.
fn ask(question: &str) -> anyhow::Result<bool> {
    use std::io::Write;
    print!("{question}");
    std::io::stdout().flush()?;
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    Ok(matches!(
        line.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}
