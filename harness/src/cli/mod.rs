//! The command line: arguments in, one library call, an exit code out.
//!
//! [`args`] and [`flags`] are the raw arguments (clap), [`config`] fills them from
//! `mcpcheck.toml`, [`resolve`] turns them into the library's configurations; each command
//! has its own file ([`run`], [`fuzz`], [`snapshot`], [`schemas`], [`list`]) and [`finish`]
//! applies the baseline and writes the report files.

pub mod args;
pub mod auth;
pub mod ci;
pub mod client;
pub mod config;
pub mod explain;
pub mod finish;
pub mod flags;
pub mod fuzz;
pub mod init;
pub mod legs;
pub mod list;
pub mod mcp;
pub mod plan;
pub mod resolve;
pub mod run;
pub mod schemas;
pub mod serve;
pub mod snapshot;
pub mod tell;
mod values;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};

pub use args::{RunArgs, SchemasCommand};
pub use flags::Format;

/// A problem with what the user asked for: exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Exit code 1: the server broke a rule (or a snapshot changed).
pub const EXIT_FINDINGS: u8 = 1;
/// Exit code 2: a usage or harness problem, not the server's fault.
pub const EXIT_ERROR: u8 = 2;

/// Conformance test harness for MCP (Model Context Protocol) servers.
#[derive(Debug, Parser)]
#[command(name = "mcpcheck", version, about, propagate_version = true)]
pub struct Cli {
    /// The subcommand to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands of `mcpcheck`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the conformance checks against a server.
    #[command(after_help = "Examples:\n  \
        mcpcheck run -- python3 server.py --flag\n  \
        mcpcheck run --server 'npx -y @modelcontextprotocol/server-everything' --protocol-version 2025-06-18\n  \
        mcpcheck run --format json --output results.json -- ./target/debug/my-server\n  \
        mcpcheck run --url http://127.0.0.1:8808/mcp --bearer-env MCP_TOKEN\n  \
        mcpcheck run --serve 'node dist/server.js --port {port}' --protocol-version 2025-06-18\n  \
        mcpcheck run --report html=out/report.html --report junit=out/junit.xml -- ./my-server\n  \
        mcpcheck run --expected-failures baseline.yaml --report markdown=summary.md -- ./my-server\n  \
        mcpcheck run --include 'tools/*' --exclude 'tools/call-*' -- ./my-server")]
    Run(Box<RunArgs>),
    /// Test an MCP client: mcpcheck serves scripted MCP servers on loopback, starts the
    /// client against each, and judges every message the client sends.
    #[command(after_help = "Examples:\n  \
        mcpcheck client --command 'python3 client.py'\n  \
        mcpcheck client --command 'node --import tsx ./src/everythingClient.ts' --scenario tools_call\n  \
        mcpcheck client --command './conformance-client' --protocol-version 2025-11-25 --report junit=out/client.xml\n\n\
        The client gets the server URL as its last argument and MCP_CONFORMANCE_SCENARIO and\n\
        MCP_CONFORMANCE_PROTOCOL_VERSION in its environment, as the official suite sets them.")]
    Client(Box<client::ClientArgs>),
    /// The server a stdio client spawns under `mcpcheck client --transport stdio` (its
    /// `{mock}`): relays the client's stdin and stdout to the running `mcpcheck client`.
    #[command(after_help = "Examples:\n  \
        mcpcheck client --transport stdio --command 'python3 client.py {mock}'\n\n\
        `mcpcheck client` puts `mcpcheck mock --connect SOCKET` where the command says {mock};\n\
        it is not meant to be run by hand.")]
    Mock {
        /// The socket of the running `mcpcheck client`.
        #[arg(long, value_name = "PATH")]
        connect: PathBuf,
    },
    /// Serve MCP over stdio: tools to run the checks on a server, list the scenarios and
    /// explain a scenario or rule id, for an agent or an IDE (see docs/mcp-server.md).
    #[command(after_help = "Examples:\n  \
        mcpcheck mcp\n  \
        mcpcheck mcp --schema-dir ./mcp-schema\n\n\
        Register it in an MCP client as a stdio server with command `mcpcheck` and args [\"mcp\"].")]
    Mcp(mcp::McpArgs),
    /// Fuzz a server: generated and mutated messages, oracles for crashes, hangs and
    /// protocol violations, and a minimized reproducer scenario for each finding.
    #[command(after_help = "Examples:\n  \
        mcpcheck fuzz --duration 60s -- python3 server.py\n  \
        mcpcheck fuzz --iterations 5000 --seed 7 --out repros --server ./target/debug/my-server\n  \
        mcpcheck fuzz --url http://127.0.0.1:8808/mcp --duration 2m --bearer-env MCP_TOKEN\n  \
        mcpcheck run --server ./target/debug/my-server repros/crash-1a2b3c4d.yaml")]
    Fuzz(Box<fuzz::FuzzArgs>),
    /// List the scenarios: ids, titles, revisions and spec references.
    #[command(after_help = "Examples:\n  \
        mcpcheck list\n  \
        mcpcheck list --format json\n  \
        mcpcheck list my-scenarios/\n  \
        mcpcheck list scenarios/tools/list-result.yaml\n  \
        mcpcheck list --client
  \
        mcpcheck list --rules")]
    List {
        /// Scenario files or directories (default: the built-in suite).
        #[arg(value_name = "SCENARIOS")]
        scenarios: Vec<PathBuf>,
        /// human (a table) or json (an array, one object per scenario).
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// List only the scenarios partition K of N runs (see `run --partition`).
        #[arg(long, value_name = "K/N")]
        partition: Option<crate::runner::partition::Partition>,
        /// List the client scenarios (`mcpcheck client`) instead.
        #[arg(long, conflicts_with = "partition")]
        client: bool,
        /// List the rules findings are filed under instead: id, severity, spec section.
        #[arg(long, conflicts_with_all = ["partition", "client", "scenarios"])]
        rules: bool,
    },
    /// Manage the official MCP JSON Schemas mcpcheck validates against.
    #[command(
        subcommand,
        after_help = "Examples:\n  \
        mcpcheck schemas fetch\n  \
        mcpcheck schemas fetch --dest ./mcp-schema\n  \
        mcpcheck schemas list --schema-dir ./mcp-schema"
    )]
    Schemas(SchemasCommand),
    /// Snapshot the server's surface and response shapes; fail when they change.
    #[command(after_help = "Examples:\n  \
        mcpcheck snapshot -- ./target/debug/my-server            # first run writes snapshots/\n  \
        mcpcheck snapshot --dir tests/snapshots -- ./my-server    # later runs diff, exit 1 on change\n  \
        mcpcheck snapshot --accept -- ./my-server                 # accept the changes\n\n\
        Pending changes are written as NAME.snap.new (insta's format); `cargo insta review` can\n\
        review them too.")]
    Snapshot(Box<snapshot::SnapshotArgs>),
    /// Explain a scenario or rule id from a report: what it checks, the spec sections and
    /// level behind it, and the usual causes of a finding under it, with the fix.
    #[command(after_help = "Examples:\n  \
        mcpcheck explain stdio.stdout-only-messages\n  \
        mcpcheck explain lifecycle/initialize-result\n  \
        mcpcheck explain client/http-accept --format json")]
    Explain {
        /// A scenario id (`tools/list-result`) or a rule id (`jsonrpc.id-echoed`).
        #[arg(value_name = "ID")]
        id: String,
        /// human (text) or json (the same object the `mcpcheck mcp` explain tool returns).
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// Print a shell completion script for mcpcheck.
    #[command(after_help = "Examples:\n  \
        mcpcheck completions bash > ~/.local/share/bash-completion/completions/mcpcheck\n  \
        mcpcheck completions zsh > ~/.zfunc/_mcpcheck\n  \
        mcpcheck completions fish > ~/.config/fish/completions/mcpcheck.fish")]
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// In a server's repository: write a commented mcpcheck.toml with the server's start
    /// command guessed from package.json, pyproject.toml or Cargo.toml, and a GitHub
    /// workflow that runs mcpcheck on it.
    #[command(after_help = "Examples:\n  \
        mcpcheck init                                  # guess, write mcpcheck.toml and .github/workflows/mcpcheck.yml\n  \
        mcpcheck init --command 'node build/index.js'  # name the command instead\n  \
        mcpcheck init ci/mcpcheck.toml --no-workflow && mcpcheck run --config ci/mcpcheck.toml\n\n\
        On a terminal it asks for the command (Enter keeps the guess); otherwise it asks\n\
        nothing. Existing files are left alone unless --force is given.")]
    Init(init::InitArgs),
    /// Print the mcpcheck(1) man page (roff), generated from these definitions.
    #[command(after_help = "Examples:\n  \
        mcpcheck man > mcpcheck.1 && man ./mcpcheck.1\n  \
        mcpcheck man | gzip > /usr/local/share/man/man1/mcpcheck.1.gz")]
    Man,
}

/// The whole program: parses the arguments, runs the command, maps the outcome to the
/// exit code (0 conformant, 1 findings, 2 usage or harness error).
pub fn main() -> ExitCode {
    // The matches are kept to tell flags given on the command line from defaults, so that
    // mcpcheck.toml fills only what the command line left out.
    let matches = <Cli as clap::CommandFactory>::command().get_matches();
    let cli = match <Cli as clap::FromArgMatches>::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    // One worker thread (and the main thread, which drives the command): mcpcheck's own
    // work is a small part of a run (the servers' is the rest), and every thread that
    // allocates gets a malloc arena of its own. Against the official suite's fixture one
    // worker instead of one per core peaked 2.3 MB lower on 2 cores (more on more), and
    // the Python SDK server's default run took as long. Nothing in mcpcheck blocks a
    // worker waiting for another task (no std channels, locks held across awaits, or
    // block_in_place), so one never waits on itself.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
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
    crate::transport::reaper::install_signal_handlers().context("installing signal handlers")?;
    match cli.command {
        Command::Run(args) => {
            let sub = matches
                .subcommand_matches("run")
                .context("clap gave no matches for `run`")?;
            run::run(*args, sub).await
        }
        Command::Init(args) => init::execute(args),
        Command::Client(args) => client::execute(*args).await,
        Command::Mock { connect } => {
            crate::transport::relay::pipe(&connect)
                .await
                .with_context(|| format!("relaying to {}", connect.display()))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Mcp(args) => mcp::serve(args).await,
        Command::Fuzz(args) => fuzz::execute(*args).await,
        Command::List {
            format,
            rules: true,
            ..
        } => Ok(list::list_rules(format)),
        Command::List {
            scenarios,
            format,
            client: true,
            ..
        } => list::list_client(&scenarios, format),
        Command::List {
            scenarios,
            format,
            partition,
            ..
        } => list::list(&scenarios, format, partition),
        Command::Schemas(cmd) => schemas::schemas(cmd).await,
        Command::Explain { id, format } => explain::execute(&id, format),
        Command::Snapshot(args) => snapshot::execute(*args).await,
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

/// Writes `text` to stdout. A reader that stopped reading (`mcpcheck list | head`) ends
/// the output, not the program: `println!` would panic on the closed pipe.
pub(crate) fn out(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_cli_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }

    /// Every subcommand, nested ones too, shows examples in its --help.
    #[test]
    fn every_subcommand_has_examples() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for sub in cmd.get_subcommands() {
                let name = format!("{path} {}", sub.get_name());
                let help = sub
                    .get_after_help()
                    .map(|h| h.to_string())
                    .unwrap_or_default();
                if !help.contains("Examples:") {
                    missing.push(name.clone());
                }
                walk(sub, &name, missing);
            }
        }
        let mut missing = Vec::new();
        walk(&super::Cli::command(), "mcpcheck", &mut missing);
        assert!(missing.is_empty(), "no examples in --help of {missing:?}");
    }
}
