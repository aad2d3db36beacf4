//! Findings (what a server did wrong, the rule it broke, where the spec says so) and the
//! rule checks: pure functions from a frame or an exchange to findings, with no I/O.

pub mod capabilities;
pub mod completion;
pub mod jsonrpc;
pub mod lifecycle;
pub mod progress;
pub mod rules;
pub mod schema;
pub mod stateless;

pub use rules::Rule;

pub use crate::outcome::{Finding, Severity};
