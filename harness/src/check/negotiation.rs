//! Version negotiation across sessions (`basic/lifecycle#version-negotiation`): "If the
//! server supports the requested protocol version, it MUST respond with the same version.
//! Otherwise, the server MUST respond with another protocol version it supports. This
//! SHOULD be the latest version supported by the server."
//!
//! One session cannot show whether a server keeps to this: what it answered when asked one
//! version must be compared with what it answers when asked another, each in a fresh
//! session. The executor asks (`scenario::exec::negotiate`); these pure functions judge the
//! [`Answers`].

use std::collections::BTreeMap;
use std::fmt;

use crate::protocol::Revision;

/// The version no server supports, asked to see what it answers instead.
pub const UNKNOWN_VERSION: &str = "1999-01-01";

/// What a server answered to `initialize` asking for one protocol version, in a fresh session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// A result whose `protocolVersion` is this string.
    Version(String),
    /// A JSON-RPC error.
    Error {
        /// Its code.
        code: i64,
        /// Its message.
        message: String,
    },
    /// No usable answer (the server did not start, timed out, or gave no string
    /// `protocolVersion`): why. Judged elsewhere, never here.
    Nothing(String),
}

impl fmt::Display for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Answer::Version(v) => write!(f, "protocolVersion {v}"),
            Answer::Error { code, message } => write!(f, "error {code} ({message:?})"),
            Answer::Nothing(why) => write!(f, "no usable answer: {why}"),
        }
    }
}

/// Requested version -> what the server answered, each asked in its own fresh session.
pub type Answers = BTreeMap<String, Answer>;

/// What `server/discover` answered in a fresh 2026-07-28 session: the versions a dual-era
/// server says it supports, handshake revisions among them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Discovered {
    /// The `supportedVersions` of its `DiscoverResult`.
    Versions(Vec<String>),
    /// No list, and why (a handshake-only server answers an error, or nothing).
    Nothing(String),
}

/// The versions to ask first: [`UNKNOWN_VERSION`] and every handshake revision. The answer
/// to [`UNKNOWN_VERSION`] is asked too when it is none of these ([`follow_up`]).
pub fn first_asked() -> Vec<String> {
    std::iter::once(UNKNOWN_VERSION.to_owned())
        .chain(Revision::HANDSHAKE.iter().map(|r| r.as_str().to_owned()))
        .collect()
}

/// The version still to ask after [`first_asked`]: the answer to [`UNKNOWN_VERSION`], when
/// it was not asked yet (every check can then look each answer up).
pub fn follow_up(answers: &Answers) -> Option<String> {
    match answers.get(UNKNOWN_VERSION) {
        Some(Answer::Version(x)) if !answers.contains_key(x) => Some(x.clone()),
        _ => None,
    }
}

/// Which negotiation rule a `negotiate` step judges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NegotiationCheck {
    /// A handshake revision the server answered with (so supports) is echoed when asked.
    AcceptedVersionEchoed,
    /// The answer to an unknown version is not that version, and is echoed when asked.
    UnknownAnsweredSupported,
    /// The answer to an unknown version is a result naming a revision of the protocol.
    UnknownAnswered,
    /// The answer to an unknown version is the latest version the server was seen to support.
    UnknownAnsweredLatest,
    /// A handshake revision `server/discover` lists as supported is echoed when asked.
    DiscoveredVersionEchoed,
}

impl NegotiationCheck {
    /// Every check with its name in scenario files.
    pub const ALL: &'static [(&'static str, NegotiationCheck)] = &[
        (
            "accepted-version-echoed",
            NegotiationCheck::AcceptedVersionEchoed,
        ),
        (
            "unknown-version-answered",
            NegotiationCheck::UnknownAnswered,
        ),
        (
            "unknown-version-answered-supported",
            NegotiationCheck::UnknownAnsweredSupported,
        ),
        (
            "unknown-version-answered-latest",
            NegotiationCheck::UnknownAnsweredLatest,
        ),
        (
            "discovered-version-echoed",
            NegotiationCheck::DiscoveredVersionEchoed,
        ),
    ];

    /// The check a scenario file names.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, c)| *c)
    }

    /// Its name in scenario files.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, c)| *c == self)
            .map_or("?", |(n, _)| n)
    }

    /// Judges `answers` (and, for what discovery claims, `discovered`) by this rule.
    pub fn judge(self, answers: &Answers, discovered: &Discovered) -> Judgement {
        match self {
            NegotiationCheck::DiscoveredVersionEchoed => {
                discovered_version_echoed(answers, discovered)
            }
            NegotiationCheck::AcceptedVersionEchoed => accepted_version_echoed(answers),
            NegotiationCheck::UnknownAnswered => unknown_answered(answers),
            NegotiationCheck::UnknownAnsweredSupported => unknown_answered_supported(answers),
            NegotiationCheck::UnknownAnsweredLatest => unknown_answered_latest(answers),
        }
    }
}

/// A check's verdict on the answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Judgement {
    /// Judged: what the server did wrong (empty: nothing).
    Problems(Vec<String>),
    /// Nothing to judge, and why (a skip, never a pass).
    NothingToJudge(String),
}

/// Asked a handshake revision R, the server answered A, a handshake revision: it thereby
/// says it supports A, so asked A it must answer A.
fn accepted_version_echoed(answers: &Answers) -> Judgement {
    let mut problems = Vec::new();
    let mut judged = 0;
    for asked in Revision::HANDSHAKE.map(Revision::as_str) {
        let Some(Answer::Version(a)) = answers.get(asked) else {
            continue;
        };
        if a == asked {
            judged += 1;
            continue;
        }
        if !a.parse::<Revision>().is_ok_and(Revision::has_handshake) {
            continue;
        }
        match answers.get(a.as_str()) {
            Some(Answer::Version(b)) if b == a => judged += 1,
            Some(again @ (Answer::Version(_) | Answer::Error { .. })) => {
                judged += 1;
                problems.push(format!(
                    "asked {asked}, the server answered {a}, a version it thereby supports; \
                     asked {a} in a fresh session, it answered {again}: a supported version \
                     MUST be answered with the same version"
                ));
            }
            Some(Answer::Nothing(_)) | None => {}
        }
    }
    if judged == 0 {
        return Judgement::NothingToJudge(
            "no handshake revision was answered with one the server then answered again".into(),
        );
    }
    Judgement::Problems(problems)
}

/// A handshake revision the server lists in `server/discover`'s `supportedVersions`
/// ("Protocol versions the server supports", 2026-07-28 server/discover) is one it
/// supports, so asked it in `initialize` it must answer it.
fn discovered_version_echoed(answers: &Answers, discovered: &Discovered) -> Judgement {
    let listed = match discovered {
        Discovered::Versions(listed) => listed,
        Discovered::Nothing(why) => {
            return Judgement::NothingToJudge(format!(
                "server/discover listed no supported versions ({why}): no claim to hold the \
                 handshake to"
            ));
        }
    };
    let mut problems = Vec::new();
    let mut judged = 0;
    let handshake = listed
        .iter()
        .filter(|v| v.parse::<Revision>().is_ok_and(Revision::has_handshake));
    for v in handshake {
        match answers.get(v.as_str()) {
            Some(Answer::Version(a)) if a == v => judged += 1,
            Some(other @ (Answer::Version(_) | Answer::Error { .. })) => {
                judged += 1;
                problems.push(format!(
                    "server/discover lists {v} among the versions the server supports; asked \
                     {v} in `initialize` in a fresh session, it answered {other}: a supported \
                     version MUST be answered with the same version"
                ));
            }
            Some(Answer::Nothing(_)) | None => {}
        }
    }
    if judged == 0 {
        return Judgement::NothingToJudge(format!(
            "server/discover lists no handshake revision the server answered when asked \
             (supportedVersions: {})",
            listed.join(", ")
        ));
    }
    Judgement::Problems(problems)
}

/// Asked an unknown version, the server answers with a result naming another version:
/// "the server MUST respond with another protocol version it supports". Whether
/// it supports that one is `unknown_answered_supported`'s; an error (the page's own
/// error-handling example shows -32602) and no usable answer are problems here, at the
/// scenario's severity.
fn unknown_answered(answers: &Answers) -> Judgement {
    let problem = match answers.get(UNKNOWN_VERSION) {
        Some(Answer::Version(v)) if names_another_version(v) => None,
        Some(Answer::Version(v)) => Some(format!(
            "asked {UNKNOWN_VERSION}, which no server supports, the server answered protocolVersion \
             {v:?}, which is not another protocol version it could support (expected a version \
             with the initialize handshake, such as {})",
            Revision::HANDSHAKE.map(Revision::as_str).join(", ")
        )),
        Some(e @ Answer::Error { .. }) => Some(format!(
            "asked {UNKNOWN_VERSION}, the server answered {e}; it SHOULD answer with a result \
             naming another protocol version it supports (the spec's error-handling example \
             shows this error, so it is not a MUST)"
        )),
        Some(Answer::Nothing(why)) => Some(format!(
            "asked {UNKNOWN_VERSION}, the server gave no usable answer: {why}"
        )),
        None => {
            return Judgement::NothingToJudge(format!("{UNKNOWN_VERSION} was not asked"));
        }
    };
    Judgement::Problems(problem.into_iter().collect())
}

/// Whether `v`, answered to [`UNKNOWN_VERSION`], is "another protocol version" a server may
/// support: any version but that one, one mcpcheck does not know included (the TypeScript
/// SDK still accepts the pre-release 2024-10-07), except no version at all and a revision
/// without the handshake (2026-07-28 basic/versioning: `initialize` negotiates a legacy one).
fn names_another_version(v: &str) -> bool {
    !v.trim().is_empty()
        && v != UNKNOWN_VERSION
        && v.parse::<Revision>()
            .ok()
            .is_none_or(Revision::has_handshake)
}

/// The server's answer to [`UNKNOWN_VERSION`], when it is a version (else why not judged).
fn unknown_answer(answers: &Answers) -> Result<&str, Judgement> {
    match answers.get(UNKNOWN_VERSION) {
        Some(Answer::Version(x)) => Ok(x),
        Some(e @ Answer::Error { .. }) => Err(Judgement::NothingToJudge(format!(
            "asked {UNKNOWN_VERSION}, the server answered {e} (lifecycle/unsupported-version judges that)"
        ))),
        Some(Answer::Nothing(why)) => Err(Judgement::NothingToJudge(format!(
            "asked {UNKNOWN_VERSION}, the server gave no usable answer: {why}"
        ))),
        None => Err(Judgement::NothingToJudge(format!(
            "{UNKNOWN_VERSION} was not asked"
        ))),
    }
}

/// Asked an unknown version, the server answers X: never the unknown version itself, and X
/// is a version it supports, so asked X (fresh session) it answers X.
fn unknown_answered_supported(answers: &Answers) -> Judgement {
    let x = match unknown_answer(answers) {
        Ok(x) => x,
        Err(j) => return j,
    };
    if x == UNKNOWN_VERSION {
        return Judgement::Problems(vec![format!(
            "asked {UNKNOWN_VERSION}, which no server supports, the server echoed it: it MUST \
             answer with another protocol version it supports"
        )]);
    }
    match answers.get(x) {
        Some(Answer::Version(y)) if y == x => Judgement::Problems(vec![]),
        Some(again @ (Answer::Version(_) | Answer::Error { .. })) => {
            Judgement::Problems(vec![format!(
                "asked {UNKNOWN_VERSION}, the server answered {x} (\"another protocol version it \
                 supports\"); asked {x} in a fresh session, it answered {again}, so it does not \
                 support {x} (or breaks the MUST to echo a supported version)"
            )])
        }
        Some(Answer::Nothing(why)) => Judgement::NothingToJudge(format!(
            "asked {x} (its answer to {UNKNOWN_VERSION}), the server gave no usable answer: {why}"
        )),
        None => Judgement::NothingToJudge(format!("{x} was not asked")),
    }
}

/// The versions the server was seen to support: those it echoed when asked.
fn echoed(answers: &Answers) -> impl Iterator<Item = &str> {
    answers.iter().filter_map(|(asked, a)| match a {
        Answer::Version(v) if v == asked && asked != UNKNOWN_VERSION => Some(asked.as_str()),
        _ => None,
    })
}

/// Asked an unknown version, the server SHOULD answer the latest version it supports (the
/// latest it echoed). Judged only when its answer is one it echoes (else the MUST fails).
fn unknown_answered_latest(answers: &Answers) -> Judgement {
    let x = match unknown_answer(answers) {
        Ok(x) => x,
        Err(j) => return j,
    };
    if x == UNKNOWN_VERSION {
        return Judgement::NothingToJudge(format!(
            "asked {UNKNOWN_VERSION}, the server echoed it \
             (lifecycle/unsupported-version-answer-supported judges that)"
        ));
    }
    if !echoed(answers).any(|v| v == x) {
        return Judgement::NothingToJudge(format!(
            "asked {UNKNOWN_VERSION}, the server answered {x}, which it did not echo when asked \
             (lifecycle/unsupported-version-answer-supported judges that)"
        ));
    }
    // Revision dates (YYYY-MM-DD) sort as strings.
    let latest = echoed(answers).max().unwrap_or(x);
    if latest > x {
        return Judgement::Problems(vec![format!(
            "asked {UNKNOWN_VERSION}, the server answered {x}, but it supports {latest} (it \
             echoed {latest} when asked): the answer SHOULD be the latest version it supports"
        )]);
    }
    Judgement::Problems(vec![])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answers(pairs: &[(&str, &str)]) -> Answers {
        pairs
            .iter()
            .map(|(asked, got)| {
                let a = match *got {
                    "error" => Answer::Error {
                        code: -32602,
                        message: "Unsupported protocol version".into(),
                    },
                    "nothing" => Answer::Nothing("timed out".into()),
                    v => Answer::Version(v.into()),
                };
                (asked.to_string(), a)
            })
            .collect()
    }

    /// A server supporting every handshake revision, answering the unknown one with the latest.
    fn conformant() -> Vec<(&'static str, &'static str)> {
        vec![
            (UNKNOWN_VERSION, "2025-11-25"),
            ("2024-11-05", "2024-11-05"),
            ("2025-03-26", "2025-03-26"),
            ("2025-06-18", "2025-06-18"),
            ("2025-11-25", "2025-11-25"),
        ]
    }

    fn with(changes: &[(&'static str, &'static str)]) -> Answers {
        let mut all = conformant();
        for (asked, got) in changes {
            all.retain(|(a, _)| a != asked);
            all.push((asked, got));
        }
        answers(&all)
    }

    /// What a dual-era server that speaks every revision lists in `server/discover`.
    fn every_version() -> Discovered {
        let all = Revision::HANDSHAKE.iter().chain([&Revision::V2026_07_28]);
        Discovered::Versions(all.map(|r| r.as_str().to_owned()).collect())
    }

    fn problems(check: NegotiationCheck, a: &Answers) -> usize {
        problems_with(check, a, &every_version())
    }

    fn problems_with(check: NegotiationCheck, a: &Answers, d: &Discovered) -> usize {
        match check.judge(a, d) {
            Judgement::Problems(p) => p.len(),
            Judgement::NothingToJudge(why) => panic!("{}: not judged: {why}", check.name()),
        }
    }

    fn not_judged(check: NegotiationCheck, a: &Answers) -> bool {
        matches!(
            check.judge(a, &every_version()),
            Judgement::NothingToJudge(_)
        )
    }

    use NegotiationCheck::*;

    #[test]
    fn a_conformant_server_passes_every_check() {
        for (_, check) in NegotiationCheck::ALL {
            assert_eq!(problems(*check, &with(&[])), 0, "{}", check.name());
        }
    }

    #[test]
    fn an_unknown_version_is_answered_with_a_revision() {
        // Echoed, no version, the stateless revision, an error, nothing: each is one problem.
        for got in [UNKNOWN_VERSION, "", "2026-07-28", "error", "nothing"] {
            let a = with(&[(UNKNOWN_VERSION, got)]);
            assert_eq!(problems(UnknownAnswered, &a), 1, "{got}");
        }
        // Any other version passes, one mcpcheck does not know too (whether the server
        // supports it is another check's).
        for got in ["2024-11-05", "2024-10-07", "2030-01-01"] {
            let a = with(&[(UNKNOWN_VERSION, got)]);
            assert_eq!(problems(UnknownAnswered, &a), 0, "{got}");
        }
        let mut a = with(&[]);
        a.remove(UNKNOWN_VERSION);
        assert!(not_judged(UnknownAnswered, &a));
    }

    #[test]
    fn a_server_with_only_the_latest_revision_passes_too() {
        let a = with(&[
            ("2024-11-05", "2025-11-25"),
            ("2025-03-26", "2025-11-25"),
            ("2025-06-18", "2025-11-25"),
        ]);
        let d = Discovered::Versions(vec!["2025-11-25".into(), "2026-07-28".into()]);
        for (_, check) in NegotiationCheck::ALL {
            assert_eq!(problems_with(*check, &a, &d), 0, "{}", check.name());
        }
    }

    #[test]
    fn an_accepted_version_answered_otherwise_later_fails() {
        // Asked 2025-11-25 it answers 2025-06-18, asked 2025-06-18 it answers 2025-03-26.
        let a = with(&[("2025-11-25", "2025-06-18"), ("2025-06-18", "2025-03-26")]);
        assert_eq!(problems(AcceptedVersionEchoed, &a), 1);
        // Refusing it with an error is no better.
        let a = with(&[("2024-11-05", "2025-03-26"), ("2025-03-26", "error")]);
        assert_eq!(problems(AcceptedVersionEchoed, &a), 1);
        // An answer that is no handshake revision is another rule's business.
        let a = with(&[("2024-11-05", "2030-01-01")]);
        assert_eq!(problems(AcceptedVersionEchoed, &a), 0);
        let silent: Answers = Revision::HANDSHAKE
            .iter()
            .map(|r| (r.as_str().to_owned(), Answer::Nothing("timed out".into())))
            .collect();
        assert!(not_judged(AcceptedVersionEchoed, &silent));
    }

    #[test]
    fn the_unknown_version_echoed_or_answered_with_one_not_supported_fails() {
        let echo = with(&[(UNKNOWN_VERSION, UNKNOWN_VERSION)]);
        assert_eq!(problems(UnknownAnsweredSupported, &echo), 1);
        assert!(not_judged(UnknownAnsweredLatest, &echo));
        // 2025-03-26 is offered, but asked 2025-03-26 the server answers 2025-11-25.
        let a = with(&[
            (UNKNOWN_VERSION, "2025-03-26"),
            ("2025-03-26", "2025-11-25"),
        ]);
        assert_eq!(problems(UnknownAnsweredSupported, &a), 1);
        assert_eq!(problems(AcceptedVersionEchoed, &a), 0);
        assert!(not_judged(UnknownAnsweredLatest, &a));
        // A version beyond the handshake revisions, asked in a fresh session too.
        let a = with(&[
            (UNKNOWN_VERSION, "2030-01-01"),
            ("2030-01-01", "2030-01-01"),
        ]);
        assert_eq!(problems(UnknownAnsweredSupported, &a), 0);
        assert_eq!(problems(UnknownAnsweredLatest, &a), 0);
        let refused = with(&[(UNKNOWN_VERSION, "error")]);
        assert!(not_judged(UnknownAnsweredSupported, &refused));
        assert!(not_judged(UnknownAnsweredLatest, &refused));
    }

    #[test]
    fn an_older_supported_answer_to_the_unknown_version_is_only_a_should() {
        let a = with(&[(UNKNOWN_VERSION, "2024-11-05")]);
        assert_eq!(problems(UnknownAnsweredLatest, &a), 1);
        assert_eq!(problems(UnknownAnsweredSupported, &a), 0);
        assert_eq!(problems(AcceptedVersionEchoed, &a), 0);
    }

    #[test]
    fn the_answer_to_the_unknown_version_is_asked_when_new() {
        assert_eq!(follow_up(&with(&[])), None);
        let a = with(&[(UNKNOWN_VERSION, "2030-01-01")]);
        assert_eq!(follow_up(&a).as_deref(), Some("2030-01-01"));
        assert_eq!(follow_up(&with(&[(UNKNOWN_VERSION, "error")])), None);
        assert_eq!(first_asked().len(), 1 + Revision::HANDSHAKE.len());
    }

    #[test]
    fn a_version_discovery_lists_is_held_against_the_handshake() {
        let listed = |v: &[&str]| Discovered::Versions(v.iter().map(|s| s.to_string()).collect());
        // Lists 2025-06-18, but asked 2025-06-18 answers 2025-11-25: the one problem.
        let a = with(&[("2025-06-18", "2025-11-25")]);
        let d = listed(&["2025-06-18", "2025-11-25", "2026-07-28"]);
        assert_eq!(problems_with(DiscoveredVersionEchoed, &a, &d), 1);
        // Without the claim, answering the latest is allowed.
        let d = listed(&["2025-11-25", "2026-07-28"]);
        assert_eq!(problems_with(DiscoveredVersionEchoed, &a, &d), 0);
        assert_eq!(problems(AcceptedVersionEchoed, &a), 0);
        // An error to a listed version is no better.
        let a = with(&[("2025-03-26", "error")]);
        let d = listed(&["2025-03-26"]);
        assert_eq!(problems_with(DiscoveredVersionEchoed, &a, &d), 1);
        // Nothing to hold it to: no discovery, or only the stateless revision listed.
        let none = Discovered::Nothing("error -32601".into());
        assert!(matches!(
            DiscoveredVersionEchoed.judge(&with(&[]), &none),
            Judgement::NothingToJudge(_)
        ));
        assert!(matches!(
            DiscoveredVersionEchoed.judge(&with(&[]), &listed(&["2026-07-28"])),
            Judgement::NothingToJudge(_)
        ));
    }

    #[test]
    fn names_round_trip() {
        for (name, check) in NegotiationCheck::ALL {
            assert_eq!(NegotiationCheck::from_name(name), Some(*check));
            assert_eq!(check.name(), *name);
        }
    }
}
