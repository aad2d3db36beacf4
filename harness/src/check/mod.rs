//! The rule checks: pure functions from a frame or an exchange to findings, with no I/O.
//! [`rules`] is the catalogue (each rule's id, severity and spec section); the other files
//! hold the checks by area. The findings themselves are data in [`crate::outcome`],
//! re-exported here; the session calls the checks on every frame it takes in.

pub mod auth;
pub mod cancellation;
pub mod capabilities;
pub mod causes;
pub mod client;
pub mod client_auth;
pub mod client_stateless;
pub mod completion;
pub mod jsonrpc;
pub mod lifecycle;
pub mod logging;
pub mod meta;
pub mod negotiation;
pub mod progress;
pub mod rules;
pub mod schema;
pub mod stateless;
pub mod x_mcp_header;

use crate::outcome::{Finding, Severity};
