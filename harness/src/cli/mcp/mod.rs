//! `mcpcheck mcp`: mcpcheck as an MCP server over stdio, so that an agent or an IDE can
//! check a server, list the suite and ask what a finding means without a shell.
//!
//! stdout carries only JSON-RPC (rmcp's stdio transport, behind the [`framing`] guard
//! that answers the malformed lines rmcp drops); anything for people goes to stderr. The tools are defined in [`tools`], served by [`server`]; `run_checks` reads its
//! arguments with [`checks`], runs `mcpcheck run` as a child ([`child`]) and tells the
//! report in prose with [`summary`].

pub mod checks;
pub mod child;
pub mod framing;
pub mod server;
pub mod summary;
pub mod tools;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use rmcp::ServiceExt as _;

/// The flags of `mcpcheck mcp`.
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// Directory with `<revision>/schema.json`, passed to every run `run_checks` starts
    /// (else $MCPCHECK_SCHEMA_DIR, else the cache).
    #[arg(long, value_name = "DIR", env = "MCPCHECK_SCHEMA_DIR")]
    pub schema_dir: Option<PathBuf>,
}

/// Serves MCP on stdin and stdout until the client closes stdin.
pub async fn serve(args: McpArgs) -> anyhow::Result<ExitCode> {
    let server = server::McpServer::new(args.schema_dir);
    // Non-blocking pipes where stdin and stdout are pipes (as MCP clients start servers):
    // no read of stdin is left on a blocking thread for the runtime to wait for at exit.
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let guarded = framing::guard(stdin, stdout);
    let running = match server.serve((guarded.input, guarded.output)).await {
        Ok(running) => Some(running),
        Err(e) => {
            // Includes stdin closing before initialize: nothing was asked, nothing is owed.
            eprintln!("mcpcheck mcp: the session ended before it started: {e}");
            None
        }
    };
    let outcome = match running {
        Some(running) => running.waiting().await.map(|_| ()),
        None => Ok(()),
    };
    // Every answer written before exit, but never a wait on a stuck stdout.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), guarded.writer).await;
    outcome.context("the MCP session failed")?;
    Ok(ExitCode::SUCCESS)
}
