//! Findings: what a server did wrong, with the rule it broke and where the spec says so.

pub mod rules;

pub use rules::Rule;

pub use crate::outcome::{Finding, Severity};
