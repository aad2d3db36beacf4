//! The `mcpcheck` binary: arguments in, exit code out. Everything else is in the library.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use mcpcheck::cli::{self, Cli, Command, Format, SchemasCommand, UsageError};
use mcpcheck::protocol::Revision;
use mcpcheck::report::human::Detail;
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
        Command::List { scenarios } => list(&scenarios),
        Command::Schemas(cmd) => schemas(cmd).await,
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

async fn run(mut args: cli::RunArgs, matches: &clap::ArgMatches) -> anyhow::Result<ExitCode> {
    if let Some(path) = cli::config::locate(args.config.as_deref()) {
        let config = cli::config::Config::load(&path)?;
        let base = path.parent().unwrap_or(std::path::Path::new(""));
        cli::config::apply(&config, base, &mut args, matches)?;
    }
    let (config, search) = cli::resolve::run(&args)?;
    let scenarios =
        cli::resolve::scenarios(&args.scenarios, args.builtin, &args.include, &args.exclude)?;
    let store = Arc::new(SchemaStore::new(search));
    let mut report = mcpcheck::runner::probe::run(&config, store.clone()).await?;
    let exec = Arc::new(mcpcheck::scenario::exec::ExecConfig {
        server: config.server.clone(),
        stdio: config.stdio.clone(),
        session: config.session.clone(),
        tools: args.call_tools,
    });
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
    });
    let progress = progress_bar(scenarios.len(), args.reports.quiet);
    let on_done: Option<mcpcheck::runner::suite::OnDone> = progress.clone().map(|bar| {
        let f: mcpcheck::runner::suite::OnDone = Arc::new(move |o| {
            bar.set_message(o.id.clone());
            bar.inc(1);
        });
        f
    });
    let (outcomes, took_ms) =
        mcpcheck::runner::suite::run_with_progress(&scenarios, exec, store, jobs, on_done).await;
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    report.add_scenarios(outcomes, took_ms);
    let done = cli::finish::finish(report, &args.reports, args.schema_dir.as_deref())?;
    let report = &done.report;
    let detail = if args.reports.quiet {
        Detail::Quiet
    } else if args.reports.verbose {
        Detail::Verbose
    } else {
        Detail::Normal
    };
    let mut human = mcpcheck::report::human::render_styled(report, detail);
    for note in &done.notes {
        human.push_str(note);
        human.push('\n');
    }
    // anstream strips the colors for NO_COLOR, a non-terminal stdout, or a file.
    let print = |text: &str| -> anyhow::Result<()> {
        let mut out = anstream::stdout();
        std::io::Write::write_all(&mut out, text.as_bytes()).context("writing stdout")
    };
    let plain = |text: &str| anstream::adapter::strip_str(text).to_string();
    let json = || mcpcheck::report::render(mcpcheck::report::ReportKind::Json, &done.input());
    match (args.format, &args.output) {
        (Format::Human, None) => print(&human)?,
        (Format::Human, Some(path)) => {
            std::fs::write(path, plain(&human))
                .with_context(|| format!("writing {}", path.display()))?;
            print(&human)?;
        }
        (Format::Json, None) => println!("{}", json()?),
        (Format::Json, Some(path)) => {
            std::fs::write(path, json()?).with_context(|| format!("writing {}", path.display()))?;
            print(&human)?;
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

fn list(paths: &[std::path::PathBuf]) -> anyhow::Result<ExitCode> {
    let scenarios = cli::resolve::scenarios(paths, false, &[], &[])?;
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
                .unwrap_or(schema::pins::DEFAULT_BASE_URL);
            let results = schema::fetch::fetch(base, &dest, &Revision::ALL).await?;
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
