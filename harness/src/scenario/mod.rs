//! Scenario files: the conformance suite as data.
//!
//! [`model`] is what a scenario says; [`parse`] reads YAML into it with precise,
//! caret-pointed errors.

pub mod model;
pub mod observe;
pub mod parse;

pub use model::*;
pub mod builtin;
pub mod exec;
pub mod http_step;
pub mod matcher;
pub mod synth;
pub mod template;
