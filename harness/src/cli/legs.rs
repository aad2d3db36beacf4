//! Which legs a run has: `--protocol-version` (or `[run] protocol-version`) turned into the
//! revisions to check, asking the server what it speaks where the choice depends on it.
//!
//! - one revision: one leg, run whatever the server answers (a refused revision is the
//!   sweep's finding, as it always was);
//! - `auto`: one leg at the newest revision the server shares;
//! - `eras` (the default): a leg for the newest handshake revision the server negotiates and
//!   one for 2026-07-28 when `server/discover` lists it, then a differential leg for each
//!   older handshake revision discovery lists (only the scenarios judged differently there);
//! - a list or `all`: a leg per revision; one the server does not speak is kept as "not
//!   spoken" with what it answered, and fails nothing unless no leg ran at all.

use std::sync::Arc;

use super::RunArgs;
use super::flags::RevisionArg;
use super::resolve;
use crate::protocol::Revision;
use crate::runner::auto;
use crate::runner::sweep::ProbeConfig;
use crate::schema::{SchemaStore, SearchPath};

/// A leg as planned before it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Planned {
    /// Run the sweep and the suite at this revision.
    Run(Revision),
    /// Run the sweep at `revision` and the scenarios whose judgement there differs from
    /// `base`'s: a revision the server claims that no full leg visits.
    Differential {
        /// The revision claimed.
        revision: Revision,
        /// The full leg's revision it is compared with.
        base: Revision,
    },
    /// The server does not speak this revision; the text says how that showed.
    NotSpoken(Revision, String),
}

/// The legs of the run, oldest revision first, and the probes' sessions that can open
/// them. Probes print what they saw on stderr.
pub async fn plan(args: &RunArgs) -> anyhow::Result<(Vec<Planned>, auto::Opened)> {
    let requested = args
        .protocol
        .protocol_version
        .clone()
        .unwrap_or(RevisionArg::Eras);
    match requested {
        RevisionArg::Exact(r) => Ok((vec![Planned::Run(r)], auto::Opened::default())),
        RevisionArg::Auto | RevisionArg::Eras => {
            let (support, opened) = detect(args).await?;
            let eras: Vec<Revision> = if requested == RevisionArg::Auto {
                eprintln!("{}", support.summary());
                support.chosen().into_iter().collect()
            } else {
                eprintln!("revisions: {}", support.seen());
                support.eras()
            };
            if eras.is_empty() {
                // Nothing shared: the run at the offered revision gives the verdict (a
                // failed handshake is a finding, not a usage error).
                eprintln!("checking at {}", support.offered);
                return Ok((vec![Planned::Run(support.offered)], opened));
            }
            let mut legs: Vec<Planned> = eras.iter().copied().map(Planned::Run).collect();
            if requested == RevisionArg::Eras {
                let names: Vec<&str> = eras.iter().map(|r| r.as_str()).collect();
                eprintln!("checking each era the server speaks: {}", names.join(", "));
                let base = eras.iter().copied().find(|r| r.has_handshake());
                let older = support.claimed_older();
                if let (Some(base), false) = (base, older.is_empty()) {
                    let names: Vec<&str> = older.iter().map(|r| r.as_str()).collect();
                    eprintln!(
                        "and, where they judge differently from {base}, at the older revisions server/discover lists: {}",
                        names.join(", ")
                    );
                    legs.extend(
                        older
                            .into_iter()
                            .map(|revision| Planned::Differential { revision, base }),
                    );
                }
            }
            Ok((legs, opened))
        }
        RevisionArg::List(list) => {
            let mut legs = Vec::new();
            for r in list {
                let leg = match at(args, r) {
                    Err(e) => Planned::NotSpoken(r, e.to_string()),
                    Ok((config, search)) => {
                        let store = Arc::new(SchemaStore::new(search));
                        match auto::speaks(&config, store).await {
                            Ok(()) => Planned::Run(r),
                            Err(why) => Planned::NotSpoken(r, why),
                        }
                    }
                };
                if let Planned::NotSpoken(r, why) = &leg {
                    eprintln!("{r}: not spoken: {why}");
                }
                legs.push(leg);
            }
            Ok((legs, auto::Opened::default()))
        }
    }
}

/// The run's settings resolved at `revision`.
pub fn at(args: &RunArgs, revision: Revision) -> anyhow::Result<(ProbeConfig, SearchPath)> {
    Ok(resolve::run(args, revision)?)
}

/// Both probes of `auto` and `eras`: `server/discover` (when the transport has a stateless
/// form) and `initialize` offering the newest handshake revision.
async fn detect(args: &RunArgs) -> anyhow::Result<(auto::Support, auto::Opened)> {
    // `--transport sse` has no stateless form: then only the handshake is probed.
    let modern = at(args, Revision::V2026_07_28).ok().map(|(c, _)| c);
    let (legacy, search) = at(args, Revision::DEFAULT)?;
    let store = Arc::new(SchemaStore::new(search));
    Ok(auto::detect(modern.as_ref(), &legacy, store).await)
}
