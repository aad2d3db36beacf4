//! Runs checks against a server and tells the reporters what happens, as it happens.
//!
//! A run is the protocol sweep ([`sweep`]: handshake, ping, and the list methods of every
//! declared capability) and then the scenario suite ([`suite`]); [`leg`] strings them
//! together at one revision. Both emit [`crate::outcome::events`]; every reporter, including the
//! [`aggregate`] sink that builds the final report, is a sink of those events. [`auto`]
//! finds the revisions a server speaks; the [`matrix`] runs a leg per revision at once,
//! and its [`relay`]s tell each one whole, in order.

pub mod aggregate;
pub mod auto;
pub mod client;
pub mod known;
pub mod leg;
pub mod matrix;
pub mod partition;
pub mod pool;
pub mod relay;
pub mod slots;
pub mod suite;
pub mod sweep;
pub mod walls;
