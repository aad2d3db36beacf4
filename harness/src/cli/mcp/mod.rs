//! `mcpcheck mcp`: mcpcheck as an MCP server over stdio, so that an agent or an IDE can
//! check a server, list the suite and ask what a finding means without a shell.
//!
//! stdout carries only JSON-RPC (rmcp's stdio transport); anything for people goes to
//! stderr. The tools are defined in [`tools`], served by [`server`]; `run_checks` reads its
//! arguments with [`checks`], runs `mcpcheck run` as a child ([`child`]) and tells the
//! report in prose with [`summary`].

pub mod checks;
pub mod child;
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
    let running = match server.serve(rmcp::transport::stdio_pipes()).await {
        Ok(running) => running,
        Err(e) => {
            // Includes stdin closing before initialize: nothing was asked, nothing is owed.
            eprintln!("mcpcheck mcp: the session ended before it started: {e}");
            return Ok(ExitCode::SUCCESS);
        }
    };
    running.waiting().await.context("the MCP session failed")?;
    Ok(ExitCode::SUCCESS)
}
