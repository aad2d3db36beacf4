//! mcpcheck: a conformance test harness and fuzzer for MCP (Model Context Protocol) servers.
//!
//! Data flows one way, and the folders are named for it: a [`transport`] (stdio, Streamable
//! HTTP, HTTP+SSE) yields raw frames; the [`session`] classifies them ([`protocol`]),
//! validates them ([`schema`]) and applies the rule checks of [`check`], which produce
//! findings ([`outcome`]); the [`runner`] drives sessions through the protocol sweep and the
//! [`scenario`] suite and emits [`outcome::events`] (so does the executor, step by step); the [`report`]ers are sinks of those
//! events. [`snapshot`] and [`fuzz`] are two more ways to drive a session; [`cli`] is the
//! command line.
//!
//! Layers, lowest first; a module imports only from its own layer and those below, and the
//! files of one module import each other in no circle, which the test in `layers.rs`
//! enforces by reading every `crate::`, `super::` and `self::` path of the source:
//! protocol < transport < outcome < schema < check < session < scenario < snapshot < fuzz <
//! runner < report < cli.

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
