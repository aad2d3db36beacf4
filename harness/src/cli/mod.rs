//! The command line: raw arguments ([`args`]) resolved into configurations ([`resolve`]).

pub mod args;
pub mod ci;
pub mod config;
pub mod finish;
pub mod fuzz;
pub mod resolve;
pub mod snapshot;

pub use args::{Cli, Command, Format, RunArgs, SchemasCommand};

/// A problem with what the user asked for: exit code 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);
