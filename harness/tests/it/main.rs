//! mcpcheck's integration tests, as one test binary: every test binary links the whole
//! crate, so one binary links it once instead of once per file. Each module is one area (the file names say which); [`support`] holds what they share:
//! fixture and tool locations, running `mcpcheck`, reading its reports, the defect map,
//! and [`support::require`] for prerequisites from outside Cargo.
//!
//! Run one area with `cargo test -p mcpcheck --test it stdio_run::` (a name filter).

mod support;

mod auth_mutation;
mod baseline;
mod ci_partition;
mod ci_sarif;
mod ci_schemas;
mod cli;
mod client_mutation;
mod completions;
mod config_file;
mod correct_servers;
mod events;
mod fail_on;
mod framing_props;
mod fuzz_http;
mod fuzz_live;
mod hostile;
mod html_report;
mod html_xss;
mod http_mutation;
mod http_run;
mod http_tls;
mod init;
mod lossy;
mod matrix;
mod mcp_server;
mod official_fixture;
mod official_side_by_side;
mod report_snapshots;
mod reports;
mod scenario_parse;
mod scenario_parse_props;
mod schema_dispatch_props;
mod serve;
mod shared_sessions;
mod snapshot_cli;
mod snapshot_order;
mod snapshot_reference;
mod sse_events_props;
mod stateless_run;
mod stderr_expect;
mod stdio_run;
mod suite_mutation;
mod tool_gate;
mod verdicts;
