//! The official schemas mcpcheck trusts: one commit of the specification repository and
//! the SHA-256 of each revision's `schema.json` at that commit.

use crate::protocol::Revision;

/// Repository and commit the pinned schemas come from.
pub const SOURCE_REPO: &str = "modelcontextprotocol/modelcontextprotocol";
/// The commit of [`SOURCE_REPO`] the checksums are of.
pub const SOURCE_COMMIT: &str = "b0f60ba5409db7a6582440a7b473cc0398890f15";

/// Where `mcpcheck schemas fetch` downloads from by default.
pub const DEFAULT_BASE_URL: &str = "https://raw.githubusercontent.com";

/// SHA-256 (hex) of `schema/<revision>/schema.json` at [`SOURCE_COMMIT`].
pub fn sha256(revision: Revision) -> &'static str {
    match revision {
        Revision::V2024_11_05 => "61cea2392d4f284092d09bc84b9ac488c0d5618ac2b38a56942fc5b99fd960ce",
        Revision::V2025_03_26 => "e720669548c8100a4282c49e580efd6ddf7f28899ea786fc8db251dbdb356131",
        Revision::V2025_06_18 => "af845e7e5b9d27107d1690f0936022546177a1403e63ffb11470135b296a2e01",
        Revision::V2025_11_25 => "268a5f82ba70fd7e4b6dc4aa1e64f116f74b4d0edcb69dc046829c79dd4e97e7",
        Revision::V2026_07_28 => "ef70b61f99b6d2e5e3b46863822eab08dff6a45bedc7a08914e0e5b133f40203",
    }
}

/// The download URL of one revision's schema under `base` (no trailing slash).
pub fn url(base: &str, revision: Revision) -> String {
    format!("{base}/{SOURCE_REPO}/{SOURCE_COMMIT}/schema/{revision}/schema.json")
}

/// Hex SHA-256 of bytes.
pub fn digest(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
