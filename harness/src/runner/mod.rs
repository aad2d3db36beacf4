//! Runs checks against a server and tells the reporters what happens, as it happens.
//!
//! A run is the protocol sweep ([`sweep`]: handshake, ping, and the list methods of every
//! declared capability) and then the scenario suite ([`suite`]); [`leg`] strings them
//! together at one revision. Both emit [`events`]; every reporter, including the aggregator that builds the
//! final report, is a sink of those events. [`auto`] finds the revisions a server speaks; legs run at once and
//! [`relay`] tells each one whole, in order.

pub mod auto;
pub mod events;
pub mod known;
pub mod leg;
pub mod partition;
pub mod pool;
pub mod relay;
pub mod suite;
pub mod sweep;
pub mod walls;
