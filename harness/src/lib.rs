//! mcpcheck: a conformance test harness and fuzzer for MCP (Model Context Protocol) servers.
//!
//! Data flows one way: a [`transport`] yields raw frames; the [`session`] classifies them
//! ([`protocol`]), validates them ([`schema`]) and records [`check::Finding`]s; the
//! [`runner`] drives sessions; [`report`] renders the outcome.

#![warn(missing_docs)]

pub mod check;
pub mod cli;
pub mod fuzz;
#[cfg(test)]
mod layers;
pub mod outcome;
pub mod protocol;
pub mod report;
pub mod runner;
pub mod scenario;
pub mod schema;
pub mod session;
pub mod snapshot;
pub mod transport;
