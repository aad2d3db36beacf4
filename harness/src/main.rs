//! The `mcpcheck` binary: arguments in, exit code out. Everything else is in the library.

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use mcpcheck::cli::{self, Cli, Command, Format, SchemasCommand, UsageError};
use mcpcheck::protocol::Revision;
use mcpcheck::runner::Verdict;
use mcpcheck::schema::{self, SchemaStore, SearchPath};

/// Exit codes: 0 conformant, 1 conformance failures, 2 usage or harness error.
const EXIT_FINDINGS: u8 = 1;
const EXIT_ERROR: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
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
    match runtime.block_on(dispatch(cli)) {
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

async fn dispatch(cli: Cli) -> anyhow::Result<ExitCode> {
    mcpcheck::transport::reaper::install_signal_handlers().context("installing signal handlers")?;
    match cli.command {
        Command::Run(args) => run(*args).await,
        Command::Fuzz(args) => fuzz(*args).await,
        Command::List { scenarios } => list(&scenarios),
        Command::Schemas(cmd) => schemas(cmd).await,
    }
}

async fn run(args: cli::RunArgs) -> anyhow::Result<ExitCode> {
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
    let (outcomes, took_ms) = mcpcheck::runner::suite::run(&scenarios, exec, store, jobs).await;
    report.add_scenarios(outcomes, took_ms);
    let human = mcpcheck::report::human::render(&report);
    match (args.format, &args.output) {
        (Format::Human, None) => print!("{human}"),
        (Format::Human, Some(path)) => {
            std::fs::write(path, &human).with_context(|| format!("writing {}", path.display()))?;
            print!("{human}");
        }
        (Format::Json, None) => println!("{}", mcpcheck::report::to_json(&report)),
        (Format::Json, Some(path)) => {
            std::fs::write(path, mcpcheck::report::to_json(&report))
                .with_context(|| format!("writing {}", path.display()))?;
            print!("{human}");
        }
    }
    Ok(match report.verdict {
        _ if report.has_errors() => ExitCode::from(EXIT_ERROR),
        Verdict::Pass => ExitCode::SUCCESS,
        Verdict::Fail => ExitCode::from(EXIT_FINDINGS),
    })
}

async fn fuzz(args: cli::fuzz::FuzzArgs) -> anyhow::Result<ExitCode> {
    let (config, search) = cli::fuzz::resolve(&args)?;
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
