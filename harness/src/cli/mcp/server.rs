//! The MCP server behind `mcpcheck mcp`: rmcp's [`ServerHandler`] with three tools.
//!
//! Every tool answer is a `CallToolResult`: a caller's mistake (bad arguments, an unknown
//! id, a server that cannot be started) is one with `isError: true` and a sentence saying
//! what to change, because a model reads tool errors and can act on them, while a JSON-RPC
//! error is usually shown to nobody. Only an unknown tool name is a protocol error.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Context;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, InitializeRequestParams,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use super::checks::{CheckRequest, NESTED_ENV};
use super::child::{self, Ended};
use super::{summary, tools};
use crate::protocol::Revision;

const INSTRUCTIONS: &str = "mcpcheck checks MCP servers for conformance with the \
    specification. run_checks runs the suite on a server (a command, or a loopback URL) and \
    returns the report; explain says what a scenario or rule id of a report checks and where \
    the spec says so; list_scenarios lists the suite.";

/// The newest revision served: this server has an `initialize` handshake and no
/// stateless (2026-07-28) mode.
const NEWEST: Revision = Revision::LATEST_HANDSHAKE;

/// One `mcpcheck mcp` process's server.
#[derive(Debug, Clone)]
pub struct McpServer {
    /// Passed to every run as `--schema-dir` (else the run finds the schemas itself).
    schema_dir: Option<PathBuf>,
    /// The binary that runs the checks: this one.
    exe: Option<PathBuf>,
}

impl McpServer {
    /// A server whose runs use `schema_dir`.
    pub fn new(schema_dir: Option<PathBuf>) -> Self {
        Self {
            schema_dir,
            exe: std::env::current_exe().ok(),
        }
    }

    async fn run_checks(
        &self,
        arguments: Option<&Value>,
        ctx: &RequestContext<RoleServer>,
    ) -> Value {
        let request = match CheckRequest::parse(arguments) {
            Ok(r) => r,
            Err(e) => return tool_error(format!("run_checks: {e}")),
        };
        if std::env::var_os(NESTED_ENV).is_some() {
            return tool_error(
                "run_checks: this mcpcheck mcp is itself being checked by another one's \
                 run_checks, so it starts no checks of its own (they could nest without end)",
            );
        }
        match self.execute(&request, ctx).await {
            Ok(result) => result,
            Err(e) => tool_error(format!("run_checks: {e:#}")),
        }
    }

    /// Runs the checks in a child `mcpcheck run` and turns its report into the result.
    async fn execute(
        &self,
        request: &CheckRequest,
        ctx: &RequestContext<RoleServer>,
    ) -> anyhow::Result<Value> {
        let exe = self
            .exe
            .as_deref()
            .context("cannot find the mcpcheck binary to run the checks with")?;
        let report_path = report_file();
        let _cleanup = RemoveOnDrop(report_path.clone());
        let args = request.run_args(&report_path, self.schema_dir.as_deref());
        // The run's own deadline ends it with a report; this limit is for a run that
        // overruns that (a wedged process), with time for it to write its report.
        let limit = request.timeout + std::time::Duration::from_secs(15);
        let ended = child::run(
            exe,
            &args,
            &[(NESTED_ENV, "1"), ("NO_COLOR", "1")],
            limit,
            ctx.ct.cancelled(),
        )
        .await?;
        let stderr = match ended {
            Ended::Exited {
                code: Some(0 | 1), ..
            } => String::new(),
            Ended::Exited { stderr, .. } => stderr,
            Ended::TimedOut => {
                return Ok(tool_error(format!(
                    "run_checks: the run overran its {}s budget and was stopped, with the \
                     server under test",
                    request.timeout.as_secs()
                )));
            }
            Ended::Cancelled => return Ok(tool_error("run_checks: cancelled")),
        };
        let report = std::fs::read_to_string(&report_path)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok());
        let Some(mut report) = report.filter(|_| stderr.is_empty()) else {
            let why = last_lines(&stderr);
            return Ok(tool_error(if why.is_empty() {
                "run_checks: the run ended without a report".to_owned()
            } else {
                format!("run_checks: the server could not be checked:\n{why}")
            }));
        };
        if !request.transcripts {
            summary::drop_transcripts(&mut report);
        }
        Ok(json!({
            "content": [{"type": "text", "text": summary::summarize(&report)}],
            "structuredContent": report,
            "isError": false
        }))
    }

    fn list_scenarios(arguments: Option<&Value>) -> Value {
        let include: Vec<String> = match arguments.map(|a| (a.as_object(), a.get("include"))) {
            None | Some((Some(_), None)) => Vec::new(),
            Some((Some(args), Some(globs))) if args.len() == 1 => {
                match serde_json::from_value(globs.clone()) {
                    Ok(globs) => globs,
                    Err(_) => {
                        return tool_error(
                            "list_scenarios: `include` must be an array of globs, e.g. [\"tools/*\"]",
                        );
                    }
                }
            }
            Some(_) => {
                return tool_error(
                    "list_scenarios: the only argument is `include`, an array of globs",
                );
            }
        };
        let scenarios = match crate::cli::resolve::scenarios(&[], false, &include, &[]) {
            Ok(s) => s,
            Err(e) => return tool_error(format!("list_scenarios: {e}")),
        };
        let rows = crate::cli::list::to_json(&scenarios);
        let count = scenarios.len();
        let mut text = format!("{count} scenarios\n");
        for s in &scenarios {
            text.push_str(&format!("{}  {}\n", s.id, s.title));
        }
        json!({
            "content": [{"type": "text", "text": text}],
            "structuredContent": {"count": count, "scenarios": rows},
            "isError": false
        })
    }

    fn explain(arguments: Option<&Value>) -> Value {
        let id = match arguments.map(|a| (a.as_object().map(|o| o.len()), a.get("id"))) {
            Some((Some(1), Some(Value::String(id)))) if !id.trim().is_empty() => id.trim(),
            _ => {
                return tool_error(
                    "explain: give `id`, a scenario id (lifecycle/initialize-result) or a rule \
                     id (jsonrpc.id-echoed), and nothing else",
                );
            }
        };
        let Some(e) = crate::scenario::explain::explain(id) else {
            let hint = crate::scenario::explain::suggest(id)
                .map(|s| format!("; did you mean {s}?"))
                .unwrap_or_else(|| {
                    "; list_scenarios lists the scenario ids, `mcpcheck list --rules` the rules"
                        .to_owned()
                });
            return tool_error(format!(
                "explain: no scenario or rule has the id {id:?}{hint}"
            ));
        };
        let mut text = format!(
            "{} ({}, {}): {}\n",
            e.id,
            serde_json::to_value(e.kind)
                .unwrap_or_default()
                .as_str()
                .unwrap_or(""),
            serde_json::to_value(e.level)
                .unwrap_or_default()
                .as_str()
                .unwrap_or(""),
            e.title
        );
        for s in &e.spec {
            text.push_str(&format!("spec (since {}): {}\n", s.since, s.url));
        }
        if e.checks != e.title {
            text.push_str(&e.checks);
            text.push('\n');
        }
        match serde_json::to_value(&e) {
            Ok(structured) => json!({
                "content": [{"type": "text", "text": text}],
                "structuredContent": structured,
                "isError": false
            }),
            Err(err) => tool_error(format!("explain: {err}")),
        }
    }
}

/// A result with `isError: true` and `message`.
fn tool_error(message: impl Into<String>) -> Value {
    json!({"content": [{"type": "text", "text": message.into()}], "isError": true})
}

/// The last lines of a run's stderr: where its error is.
fn last_lines(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.trim().lines().collect();
    lines[lines.len().saturating_sub(12)..].join("\n")
}

/// A fresh path in the temporary directory for one run's report.
fn report_file() -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("mcpcheck-mcp-{}-{n}.json", std::process::id()))
}

/// Removes a file when dropped (a report read, or a run cut off).
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The revision a session speaks: the one the client asked for if served, else the newest.
fn revision(ctx: &RequestContext<RoleServer>) -> Revision {
    ctx.protocol_version()
        .and_then(|v| v.as_str().parse::<Revision>().ok())
        .filter(|r| *r <= NEWEST)
        .unwrap_or(NEWEST)
}

/// Converts JSON built for the wire into one of rmcp's types.
fn typed<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, ErrorData> {
    serde_json::from_value(v).map_err(|e| {
        ErrorData::internal_error(format!("mcpcheck built an invalid result: {e}"), None)
    })
}

fn initialize_result(revision: Revision) -> Value {
    let mut info = json!({"name": "mcpcheck", "version": env!("CARGO_PKG_VERSION")});
    if revision >= Revision::V2025_06_18 {
        info["title"] = json!("mcpcheck MCP conformance checker");
    }
    json!({
        "protocolVersion": revision.as_str(),
        "capabilities": {"tools": {}},
        "serverInfo": info,
        "instructions": INSTRUCTIONS
    })
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        typed(initialize_result(NEWEST)).unwrap_or_default()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let revision = request
            .protocol_version
            .as_str()
            .parse::<Revision>()
            .ok()
            .filter(|r| *r <= NEWEST)
            .unwrap_or(NEWEST);
        typed(initialize_result(revision))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // One page, so no cursor is ever issued: "Invalid cursors SHOULD result in an error
        // with code -32602" (server/utilities/pagination#error-handling).
        if let Some(cursor) = request.and_then(|r| r.cursor) {
            return Err(ErrorData::invalid_params(
                format!("invalid cursor {cursor:?}: this server lists its tools on one page"),
                None,
            ));
        }
        typed(json!({"tools": tools::listed(revision(&context))}))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.map(Value::Object);
        let mut result = match request.name.as_ref() {
            tools::RUN_CHECKS => self.run_checks(arguments.as_ref(), &context).await,
            tools::LIST_SCENARIOS => Self::list_scenarios(arguments.as_ref()),
            tools::EXPLAIN => Self::explain(arguments.as_ref()),
            other => {
                return Err(ErrorData::invalid_params(
                    format!(
                        "Unknown tool: {other}; the tools are run_checks, list_scenarios and explain"
                    ),
                    None,
                ));
            }
        };
        if revision(&context) < Revision::V2025_06_18
            && let Some(r) = result.as_object_mut()
        {
            // No structured content before 2025-06-18; the text says it all.
            r.remove("structuredContent");
        }
        Ok(typed::<CallToolResult>(result)?.into())
    }
}
