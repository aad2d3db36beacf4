//! `--protocol-version auto`: asks the server which revisions it speaks before the run, the
//! way a dual-era client does (2026-07-28 basic/transports/stdio#backward-compatibility and
//! basic/versioning#backward-compatibility-with-initialization-based-versions).
//!
//! Two probes, at once, each on its own connection (a fresh process over stdio):
//! 1. `server/discover` for 2026-07-28. A `DiscoverResult` or an
//!    `UnsupportedProtocolVersionError` marks a modern server and lists its versions; any
//!    other error, silence within a short wait, or an exit marks a legacy one (the spec
//!    forbids keying this to one error code).
//! 2. `initialize` offering the newest handshake revision; the answer's `protocolVersion`
//!    is the handshake revision it negotiates.
//!
//! `auto` then speaks the newest revision the server supports; `eras` (the default) runs a
//! leg for each of the two. [`speaks`] asks about one revision of a `--protocol-version`
//! list.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::sweep::{Opening, ProbeConfig};
use crate::protocol::Revision;
use crate::protocol::codes::UNSUPPORTED_PROTOCOL_VERSION;
use crate::schema::SchemaStore;
use crate::session::{Handshake, Session, SessionConfig};

/// Longest wait for the `server/discover` probe (start-up included; `--startup-timeout`
/// shortens it): a legacy server may never answer it.
const DISCOVER_WAIT: Duration = Duration::from_secs(15);
/// Longest wait for a list request that tests whether a server whose discovery does not
/// list 2026-07-28 serves it anyway.
const LIST_WAIT: Duration = Duration::from_secs(3);

/// What the `server/discover` probe learned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Discover {
    /// A `DiscoverResult` (or `UnsupportedProtocolVersionError`) with these versions.
    Modern {
        /// The protocol versions the server lists.
        supported: Vec<String>,
    },
    /// Anything else: an error, no answer, an exit. The text says which.
    Legacy(String),
    /// `server/discover` did not say the server speaks 2026-07-28 (the first text says
    /// how), yet it answered a 2026-07-28 request with a 2026-07-28 result (the second
    /// names the request): the stateless leg runs, and its sweep judges the discovery.
    Undeclared(String, String),
}

impl Discover {
    /// The stateless revision this probe found the server speaking, if any.
    fn stateless(&self) -> Option<Revision> {
        match self {
            Discover::Modern { supported } => supported
                .iter()
                .filter_map(|v| v.parse::<Revision>().ok())
                .filter(|r| !r.has_handshake())
                .max(),
            Discover::Undeclared(..) => Some(Revision::V2026_07_28),
            Discover::Legacy(_) => None,
        }
    }
}

/// What the `initialize` probe learned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Handshaken {
    /// The server answered with this `protocolVersion`.
    Negotiated(String),
    /// No usable `InitializeResult`; the text says why.
    Refused(String),
}

/// Both probes' findings and the revision chosen from them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Support {
    /// What `server/discover` showed.
    pub discover: Discover,
    /// The revision `initialize` offered.
    pub offered: Revision,
    /// What `initialize` showed.
    pub handshake: Handshaken,
}

impl Support {
    /// The newest revision mcpcheck and the server share: 2026-07-28 when discovery lists
    /// it, else the negotiated handshake revision; `None` when neither probe found one.
    pub fn chosen(&self) -> Option<Revision> {
        let modern = self.discover.stateless();
        let legacy = match &self.handshake {
            Handshaken::Negotiated(v) => v.parse::<Revision>().ok().filter(|r| r.has_handshake()),
            Handshaken::Refused(_) => None,
        };
        modern.or(legacy)
    }

    /// The legs of `--protocol-version eras`: the handshake revision the server negotiated
    /// and 2026-07-28 when discovery lists it, oldest first; empty when neither probe found
    /// a revision mcpcheck speaks.
    pub fn eras(&self) -> Vec<Revision> {
        let legacy = match &self.handshake {
            Handshaken::Negotiated(v) => v.parse::<Revision>().ok().filter(|r| r.has_handshake()),
            Handshaken::Refused(_) => None,
        };
        let modern = self.discover.stateless();
        legacy.into_iter().chain(modern).collect()
    }

    /// The handshake revisions `server/discover` lists that are older than the one the
    /// handshake negotiated, oldest first: revisions the server claims that `eras` does not
    /// run in full (each gets a differential leg). None for a handshake-only server, whose
    /// claims are not known without a handshake per revision.
    pub fn claimed_older(&self) -> Vec<Revision> {
        let Handshaken::Negotiated(v) = &self.handshake else {
            return Vec::new();
        };
        let Ok(negotiated) = v.parse::<Revision>() else {
            return Vec::new();
        };
        let Discover::Modern { supported } = &self.discover else {
            return Vec::new();
        };
        let mut older: Vec<Revision> = supported
            .iter()
            .filter_map(|v| v.parse::<Revision>().ok())
            .filter(|r| r.has_handshake() && *r < negotiated)
            .collect();
        older.sort();
        older.dedup();
        older
    }

    /// One paragraph for the terminal: what each probe saw and what `auto` will speak.
    pub fn summary(&self) -> String {
        let chosen = match self.chosen() {
            Some(r) => format!("running at {r}"),
            None => "no revision mcpcheck speaks".to_owned(),
        };
        format!("--protocol-version auto: {}; {chosen}", self.seen())
    }

    /// What each probe saw, in a line.
    pub fn seen(&self) -> String {
        let discover = match &self.discover {
            Discover::Modern { supported } => {
                format!("server/discover: supports {}", supported.join(", "))
            }
            Discover::Legacy(why) => format!("server/discover: {why} (a handshake-only server)"),
            Discover::Undeclared(why, answered) => format!(
                "server/discover: {why}, yet the server answered a 2026-07-28 `{answered}` (its 2026-07-28 leg runs and judges the discovery)"
            ),
        };
        let handshake = match &self.handshake {
            Handshaken::Negotiated(v) => {
                format!("initialize offering {}: negotiated {v}", self.offered)
            }
            Handshaken::Refused(why) => format!("initialize offering {}: {why}", self.offered),
        };
        format!("{discover}; {handshake}")
    }
}

/// The probes' sessions that can open a leg: over stdio, a session whose handshake (or
/// `server/discover`) went exactly as the leg's sweep would do it serves as that sweep's
/// session instead of a new server (each start of a Python or Node server costs about a
/// second of CPU).
#[derive(Debug, Default)]
pub struct Opened {
    sessions: Vec<(Revision, Opening)>,
}

impl Opened {
    /// The session that opened a leg at `revision`, if a probe left one.
    pub fn take(&mut self, revision: Revision) -> Option<Opening> {
        let at = self.sessions.iter().position(|(r, _)| *r == revision)?;
        Some(self.sessions.swap_remove(at).1)
    }

    /// Shuts down the sessions no leg took: their servers must not outlive the run.
    pub async fn close(self) {
        for (_, opening) in self.sessions {
            opening.into_session().finish().await;
        }
    }
}

/// Runs both probes. `modern` and `legacy` are the run's target resolved for 2026-07-28
/// (`None`: the transport cannot speak it) and for the newest handshake revision. Never
/// fails: a probe that cannot start or gets nothing says so in its outcome. A probe whose
/// session can open its revision's leg leaves it in [`Opened`].
pub async fn detect(
    modern: Option<&ProbeConfig>,
    legacy: &ProbeConfig,
    schemas: Arc<SchemaStore>,
) -> (Support, Opened) {
    // Both at once, each on its own connection: a legacy server may let `server/discover`
    // go unanswered for its whole wait, and a slow one starts twice either way.
    let discovered = async {
        match modern {
            Some(modern) => discover(modern, schemas.clone()).await,
            None => (
                Discover::Legacy("not probed (the transport has no stateless form)".into()),
                None,
            ),
        }
    };
    let ((discover, modern_session), (handshake, legacy_session)) =
        tokio::join!(discovered, handshake(legacy, schemas.clone()));
    let mut opened = Opened::default();
    if let (Some(modern), Some(session)) = (modern, modern_session) {
        opened
            .sessions
            .push((modern.session.revision, Opening::Done(session)));
    }
    if let Some(opening) = legacy_session {
        opened.sessions.push((legacy.session.revision, opening));
    }
    let support = Support {
        discover,
        offered: legacy.session.revision,
        handshake,
    };
    (support, opened)
}

/// Whether the server speaks the revision `config` asks for, before its leg runs: `Err`
/// says how it showed it does not (it negotiated another handshake revision; its
/// `server/discover` does not list 2026-07-28). A handshake that fails outright is not
/// taken as an answer: the leg runs and its sweep reports the failure.
pub async fn speaks(config: &ProbeConfig, schemas: Arc<SchemaStore>) -> Result<(), String> {
    let wanted = config.session.revision;
    if wanted.has_handshake() {
        let (handshaken, session) = handshake(config, schemas).await;
        if let Some(opening) = session {
            opening.into_session().finish().await;
        }
        return match handshaken {
            Handshaken::Negotiated(v) if v != wanted.as_str() => Err(format!(
                "initialize offering {wanted}: the server negotiated {v}"
            )),
            _ => Ok(()),
        };
    }
    let (discovered, session) = discover(config, schemas).await;
    if let Some(session) = session {
        session.finish().await;
    }
    match discovered {
        Discover::Modern { supported } if supported.iter().any(|v| v == wanted.as_str()) => Ok(()),
        Discover::Modern { supported } => Err(format!(
            "server/discover lists {}",
            if supported.is_empty() {
                "no versions".to_owned()
            } else {
                supported.join(", ")
            }
        )),
        // The run asked for this revision, and the server serves it: its sweep judges
        // the discovery.
        Discover::Undeclared(..) => Ok(()),
        Discover::Legacy(why) => Err(format!("server/discover: {why} (a handshake-only server)")),
    }
}

async fn discover(config: &ProbeConfig, schemas: Arc<SchemaStore>) -> (Discover, Option<Session>) {
    // The probe is the first request, so its wait includes the server's start-up.
    let mut session_config = config.session.clone();
    let wait = session_config.startup_timeout.min(DISCOVER_WAIT);
    session_config.startup_timeout = wait;
    session_config.timeout = wait;
    let started = Instant::now();
    let transport = match config.target.open(started) {
        Ok(t) => t,
        Err(e) => return (Discover::Legacy(format!("could not connect: {e}")), None),
    };
    let mut session = Session::new(transport, schemas, session_config.clone(), started);
    let opened = session.initialize_with(&Handshake::default()).await;
    let answered = opened.is_ok();
    let outcome = match opened {
        Err(e) => Discover::Legacy(e.to_string()),
        Ok((profile, reply)) => match reply.error() {
            None if reply
                .result()
                .is_some_and(|r| r.get("supportedVersions").is_some()) =>
            {
                Discover::Modern {
                    supported: profile.supported_versions,
                }
            }
            None => Discover::Legacy("answered without `supportedVersions`".into()),
            Some(e) if e.code == UNSUPPORTED_PROTOCOL_VERSION => Discover::Modern {
                supported: e
                    .data
                    .as_ref()
                    .and_then(|d| d.get("supported"))
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default(),
            },
            Some(e) => Discover::Legacy(format!("error {} \"{}\"", e.code, e.message)),
        },
    };
    // A discovery that does not list the revision is put to the test: a server that
    // answers a 2026-07-28 request as 2026-07-28 speaks it whatever its discovery says.
    // Only a server that answered: one silent to `server/discover` is not asked again.
    let wanted = config.session.revision.as_str();
    let outcome = match outcome {
        Discover::Modern { supported } if supported.iter().any(|v| v == wanted) => {
            Discover::Modern { supported }
        }
        other if !answered => other,
        other => match answers_stateless(&mut session, &session_config).await {
            Some(method) => Discover::Undeclared(
                match other {
                    Discover::Modern { supported } if supported.is_empty() => {
                        "lists no versions".to_owned()
                    }
                    Discover::Modern { supported } => format!("lists {}", supported.join(", ")),
                    Discover::Legacy(why) | Discover::Undeclared(why, _) => why,
                },
                method.to_owned(),
            ),
            None => other,
        },
    };
    // Answered with the supported versions (not an error): the sweep's own opening, with
    // the leg's waits from here on.
    let spoken = matches!(&outcome, Discover::Modern { supported } if supported.iter().any(|v| v == config.session.revision.as_str()))
        && session
            .handshake_reply()
            .is_some_and(|r| r.error().is_none());
    match keep(session, spoken, config).await {
        Some(mut session) => {
            session.set_waits(&config.session);
            (outcome, Some(session))
        }
        None => (outcome, None),
    }
}

/// The first list request of 2026-07-28 the server answers with a 2026-07-28 result (one
/// carrying `resultType`, which every 2026-07-28 result has and no earlier one), if any:
/// proof that it speaks 2026-07-28 however it answered `server/discover`. A server that
/// only speaks the handshake revisions answers none so (it wants `initialize` first, or
/// answers in its own revision's shape).
async fn answers_stateless(session: &mut Session, config: &SessionConfig) -> Option<&'static str> {
    if session.is_closed() {
        return None;
    }
    // The server is up (it answered `server/discover`): a list is quick, or not coming.
    session.set_waits(&SessionConfig {
        timeout: config.timeout.min(LIST_WAIT),
        ..config.clone()
    });
    for method in ["tools/list", "resources/list", "prompts/list"] {
        let Ok(reply) = session.request(method, None).await else {
            return None;
        };
        if reply
            .result()
            .is_some_and(|r| r.get("resultType").is_some_and(Value::is_string))
        {
            return Some(method);
        }
    }
    None
}

/// `session` when it can open its revision's leg (`usable`, over stdio, healthy);
/// otherwise it is shut down.
async fn keep(session: Session, usable: bool, config: &ProbeConfig) -> Option<Session> {
    if usable && is_stdio(config) && session.reusable() {
        return Some(session);
    }
    session.finish().await;
    None
}

async fn handshake(
    config: &ProbeConfig,
    schemas: Arc<SchemaStore>,
) -> (Handshaken, Option<Opening>) {
    let started = Instant::now();
    let transport = match config.target.open(started) {
        Ok(t) => t,
        Err(e) => return (Handshaken::Refused(format!("could not connect: {e}")), None),
    };
    let mut session = Session::new(transport, schemas, config.session.clone(), started);
    let outcome = match session.initialize_with(&Handshake::default()).await {
        // Over stdio the leg at the offered revision would send the same `initialize` to
        // the same program: its sweep takes this failure over (over HTTP the sweep tells
        // an unreachable endpoint from a conformance failure itself).
        Err(e) if is_stdio(config) => {
            let why = e.to_string();
            return (Handshaken::Refused(why), Some(Opening::Failed(session, e)));
        }
        Err(e) => Handshaken::Refused(e.to_string()),
        Ok((profile, reply)) => match (reply.error(), profile.protocol_version) {
            (Some(e), _) => Handshaken::Refused(format!("error {} \"{}\"", e.code, e.message)),
            (None, Some(v)) => Handshaken::Negotiated(v),
            (None, None) => Handshaken::Refused("answered without `protocolVersion`".into()),
        },
    };
    // The revision offered was negotiated: the leg at it would open just so.
    let spoken = outcome == Handshaken::Negotiated(config.session.revision.as_str().to_owned());
    let session = keep(session, spoken, config).await;
    (outcome, session.map(Opening::Done))
}

fn is_stdio(config: &ProbeConfig) -> bool {
    matches!(
        config.target,
        crate::transport::target::Target::Stdio { .. }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn support(discover: Discover, handshake: Handshaken) -> Support {
        Support {
            discover,
            offered: Revision::LATEST_HANDSHAKE,
            handshake,
        }
    }

    #[test]
    fn discovery_listing_the_stateless_revision_wins() {
        let s = support(
            Discover::Modern {
                supported: vec!["2026-07-28".into(), "2099-01-01".into()],
            },
            Handshaken::Negotiated("2025-11-25".into()),
        );
        assert_eq!(s.chosen(), Some(Revision::V2026_07_28));
        assert_eq!(s.eras(), [Revision::V2025_11_25, Revision::V2026_07_28]);
        assert!(s.summary().contains("supports 2026-07-28, 2099-01-01"));
        assert!(s.summary().contains("running at 2026-07-28"));
    }

    #[test]
    fn a_server_serving_the_stateless_revision_its_discovery_hides_gets_both_eras() {
        let s = support(
            Discover::Undeclared(
                "error -32601 \"Method not found\"".into(),
                "tools/list".into(),
            ),
            Handshaken::Negotiated("2025-11-25".into()),
        );
        assert_eq!(s.eras(), [Revision::V2025_11_25, Revision::V2026_07_28]);
        assert_eq!(s.chosen(), Some(Revision::V2026_07_28));
        assert!(
            s.seen()
                .contains("yet the server answered a 2026-07-28 `tools/list`")
        );
    }

    #[test]
    fn a_legacy_server_runs_at_its_negotiated_revision() {
        let s = support(
            Discover::Legacy("error -32601 \"Method not found\"".into()),
            Handshaken::Negotiated("2025-06-18".into()),
        );
        assert_eq!(s.chosen(), Some(Revision::V2025_06_18));
        assert_eq!(s.eras(), [Revision::V2025_06_18]);
        let s = support(
            Discover::Modern {
                supported: vec!["2099-01-01".into()],
            },
            Handshaken::Negotiated("2025-03-26".into()),
        );
        assert_eq!(s.chosen(), Some(Revision::V2025_03_26));
    }

    #[test]
    fn older_handshake_revisions_discovery_lists_are_claimed() {
        let s = support(
            Discover::Modern {
                supported: [
                    "2026-07-28",
                    "2025-11-25",
                    "2025-03-26",
                    "2024-11-05",
                    "2025-03-26",
                ]
                .map(String::from)
                .to_vec(),
            },
            Handshaken::Negotiated("2025-11-25".into()),
        );
        assert_eq!(
            s.claimed_older(),
            [Revision::V2024_11_05, Revision::V2025_03_26]
        );
        // Nothing newer than the negotiated revision, and nothing without discovery.
        let s = support(
            Discover::Modern {
                supported: vec!["2025-11-25".into(), "2025-06-18".into()],
            },
            Handshaken::Negotiated("2025-06-18".into()),
        );
        assert!(s.claimed_older().is_empty());
        let s = support(
            Discover::Legacy("no answer".into()),
            Handshaken::Negotiated("2025-11-25".into()),
        );
        assert!(s.claimed_older().is_empty());
    }

    #[test]
    fn nothing_shared_is_none() {
        let s = support(
            Discover::Legacy("no answer".into()),
            Handshaken::Negotiated("1999-01-01".into()),
        );
        assert_eq!(s.chosen(), None);
        assert!(s.eras().is_empty());
        assert!(s.summary().ends_with("no revision mcpcheck speaks"));
    }
}
