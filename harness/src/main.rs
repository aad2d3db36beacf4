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
        Command::List { scenarios } => list(&scenarios),
        Command::Schemas(cmd) => schemas(cmd).await,
        Command::Snapshot(args) => snapshot(*args).await,
    }
}

async fn run(args: cli::RunArgs) -> anyhow::Result<ExitCode> {
    let (mut config, search) = cli::resolve::run(&args)?;
    if args.url.is_some()
        && args.transport == cli::args::HttpTransportArg::Auto
        && config.session.revision.has_handshake()
        && let mcpcheck::transport::target::Target::Http(options) = &config.target
    {
        config.target = mcpcheck::transport::sse::detect(options).await;
    }
    let scenarios =
        cli::resolve::scenarios(&args.scenarios, args.builtin, &args.include, &args.exclude)?;
    let store = Arc::new(SchemaStore::new(search));
    let mut report = mcpcheck::runner::probe::run(&config, store.clone()).await?;
    let exec = Arc::new(mcpcheck::scenario::exec::ExecConfig {
        target: config.target.clone(),
        session: config.session.clone(),
        tools: args.call_tools,
        tool_args: Arc::new(cli::resolve::tool_args(args.tool_args.as_deref())?),
    });
    let jobs = args.jobs.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
    });
    let (outcomes, took_ms) = mcpcheck::runner::suite::run(&scenarios, exec, store, jobs).await;
    report.add_scenarios(outcomes, took_ms);
    if let Some(dir) = &args.snapshot_dir {
        let mcpcheck::transport::target::Target::Stdio { server, options } = &config.target
        else {
            return Err(cli::UsageError(
                "--snapshot-dir works with a server command for now, not with --url".into(),
            )
            .into());
        };
        let capture = mcpcheck::snapshot::Capture {
            options: mcpcheck::snapshot::SnapshotOptions {
                call_tools: args.call_tools,
                ..Default::default()
            },
            session: config.session.clone(),
            stdio: options.clone(),
            schema_dir: args.schema_dir.clone(),
        };
        let snap = capture
            .command(server)
            .await
            .context("taking the snapshot for --snapshot-dir")?;
        report.add_snapshot(mcpcheck::snapshot::compare(&snap, dir, false)?);
    }
    // A bearer token never leaves the process, whatever echoed it.
    let secrets = config.target.secrets().to_vec();
    let redact = |text: String| mcpcheck::transport::http::redact(&text, &secrets);
    let mut human = mcpcheck::report::human::render(&report);
    if let Some(c) = &report.snapshot {
        human.push_str(&snapshot_summary(c, true, "snapshot "));
    }
    let human = redact(human);
    let json = || redact(mcpcheck::report::to_json(&report));
    match (args.format, &args.output) {
        (Format::Human, None) => print!("{human}"),
        (Format::Human, Some(path)) => {
            std::fs::write(path, &human).with_context(|| format!("writing {}", path.display()))?;
            print!("{human}");
        }
        (Format::Json, None) => println!("{}", json()),
        (Format::Json, Some(path)) => {
            std::fs::write(path, json()).with_context(|| format!("writing {}", path.display()))?;
            print!("{human}");
        }
    }
    Ok(match report.verdict {
        _ if report.has_errors() => ExitCode::from(EXIT_ERROR),
        Verdict::Pass => ExitCode::SUCCESS,
        Verdict::Fail => ExitCode::from(EXIT_FINDINGS),
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

/// `mcpcheck snapshot`: capture, compare with the accepted files, report; exit 1 on change.
async fn snapshot(args: cli::snapshot::SnapshotArgs) -> anyhow::Result<ExitCode> {
    use mcpcheck::snapshot::{Status, compare};
    let (server, capture) = cli::snapshot::resolve(&args)?;
    let started = std::time::Instant::now();
    let snap = capture
        .command(&server)
        .await
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
