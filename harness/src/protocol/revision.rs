//! Protocol revisions: MCP names each revision of its specification by date.

use std::fmt;
use std::str::FromStr;

/// One published revision of the MCP specification.
///
/// Ordered by date, so `rev >= Revision::V2025_06_18` reads as "from 2025-06-18 on".
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Revision {
    /// 2024-11-05: the HTTP+SSE transport.
    V2024_11_05,
    /// 2025-03-26: Streamable HTTP, JSON-RPC batches.
    V2025_03_26,
    /// 2025-06-18: no batches; structured tool output, elicitation.
    V2025_06_18,
    /// 2025-11-25: the newest revision with an `initialize` handshake.
    V2025_11_25,
    /// 2026-07-28: the stateless revision (no handshake; `server/discover`).
    V2026_07_28,
}

impl Revision {
    /// Every revision mcpcheck knows, oldest first.
    pub const ALL: [Revision; 5] = [
        Revision::V2024_11_05,
        Revision::V2025_03_26,
        Revision::V2025_06_18,
        Revision::V2025_11_25,
        Revision::V2026_07_28,
    ];

    /// The revisions that begin with an `initialize` handshake.
    pub const HANDSHAKE: [Revision; 4] = [
        Revision::V2024_11_05,
        Revision::V2025_03_26,
        Revision::V2025_06_18,
        Revision::V2025_11_25,
    ];

    /// The newest revision that still has an `initialize` handshake.
    pub const LATEST_HANDSHAKE: Revision = Revision::V2025_11_25;

    /// The revision requested when the user names none: named once, here.
    pub const DEFAULT: Revision = Revision::LATEST_HANDSHAKE;

    /// The revision as the spec writes it, e.g. `2025-06-18`.
    pub fn as_str(self) -> &'static str {
        match self {
            Revision::V2024_11_05 => "2024-11-05",
            Revision::V2025_03_26 => "2025-03-26",
            Revision::V2025_06_18 => "2025-06-18",
            Revision::V2025_11_25 => "2025-11-25",
            Revision::V2026_07_28 => "2026-07-28",
        }
    }

    /// Whether a session starts with `initialize` (every revision before 2026-07-28).
    pub fn has_handshake(self) -> bool {
        self < Revision::V2026_07_28
    }

    /// A link to a section of this revision's specification, e.g. `basic/transports#stdio`.
    ///
    /// Sections are named as the handshake revisions name them; 2026-07-28 moved some pages
    /// (cancellation and progress to `basic/patterns/`, each transport to its own page), and
    /// the link follows them there.
    pub fn spec_url(self, section: &str) -> String {
        let section = if self.has_handshake() {
            section.to_owned()
        } else {
            moved_in_2026(section)
        };
        format!(
            "https://modelcontextprotocol.io/specification/{}/{}",
            self.as_str(),
            section
        )
    }
}

/// Where a section of the handshake revisions lives in 2026-07-28.
fn moved_in_2026(section: &str) -> String {
    let (page, anchor) = match section.split_once('#') {
        Some((page, anchor)) => (page, Some(anchor)),
        None => (section, None),
    };
    let page = match (page, anchor) {
        ("basic/utilities/cancellation", _) => "basic/patterns/cancellation",
        ("basic/utilities/progress", _) => "basic/patterns/progress",
        ("basic/transports", Some("stdio")) => return "basic/transports/stdio".to_owned(),
        ("basic/transports", _) => "basic/transports/streamable-http",
        (page, _) => page,
    };
    match anchor {
        Some(anchor) => format!("{page}#{anchor}"),
        None => page.to_owned(),
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A protocol version string that is not one of the revisions mcpcheck knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown protocol revision `{0}` (known: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28)"
)]
pub struct UnknownRevision(pub String);

impl serde::Serialize for Revision {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Revision {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl FromStr for Revision {
    type Err = UnknownRevision;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Revision::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| UnknownRevision(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_follow_the_pages_2026_07_28_moved() {
        let new = Revision::V2026_07_28;
        let base = "https://modelcontextprotocol.io/specification/2026-07-28/";
        for (section, there) in [
            (
                "basic/utilities/progress#progress-flow",
                "basic/patterns/progress#progress-flow",
            ),
            (
                "basic/utilities/cancellation",
                "basic/patterns/cancellation",
            ),
            ("basic/transports#stdio", "basic/transports/stdio"),
            (
                "basic/transports#security-warning",
                "basic/transports/streamable-http#security-warning",
            ),
            ("server/tools#error-handling", "server/tools#error-handling"),
        ] {
            assert_eq!(new.spec_url(section), format!("{base}{there}"));
        }
        assert_eq!(
            Revision::V2025_11_25.spec_url("basic/transports#stdio"),
            "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio"
        );
    }

    #[test]
    fn round_trips_and_orders() {
        for r in Revision::ALL {
            assert_eq!(r.as_str().parse::<Revision>().unwrap(), r);
        }
        assert!(Revision::ALL.windows(2).all(|w| w[0] < w[1]));
        assert!("2025-01-01".parse::<Revision>().is_err());
    }
}
