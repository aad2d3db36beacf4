//! Scenario files: the conformance suite as data, and the executor that runs it.
//!
//! [`model`] is what a scenario says; [`parse`] reads YAML into it with precise,
//! caret-pointed errors ([`builtin`]: the suite embedded at build time). [`exec`] runs one
//! scenario on a fresh session, with [`template`] (`${var}`, filters from [`synth`]),
//! [`matcher`] (checks on values) and `exec::http` (raw HTTP exchanges); it tells its
//! steps, frames and findings as they happen as [`crate::outcome::events`], the one
//! vocabulary every reporter reads.

pub mod builtin;
pub mod builtin_vars;
pub mod client;
#[cfg(test)]
mod coverage;
pub mod exec;
pub mod explain;
pub mod matcher;
pub mod mcp_param;
pub mod model;
pub mod official;
pub mod parse;
pub mod share;
pub mod synth;
pub mod template;

pub use model::*;
