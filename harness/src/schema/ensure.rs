//! Making sure a run has its schemas before it starts, so schema checks never vanish
//! silently: a missing schema is fetched (the pinned commit, SHA-256 checked, into the
//! cache); when that fails the run stops with the fix, unless the user opted out.

use std::path::PathBuf;

use super::fetch::{self, FetchError};
use super::pins;
use super::resolve::{self, SearchPath};
use crate::protocol::Revision;

/// Environment variable overriding where missing schemas are downloaded from (a mirror,
/// or a closed port in tests of the offline case).
pub const BASE_URL_ENV: &str = "MCPCHECK_SCHEMA_BASE_URL";

/// What the run does about schemas.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Find them, fetch what is missing, fail when neither works.
    Require,
    /// `--no-schema`: the user opted out; reports say so prominently.
    Disabled,
}

/// What `ensure` did, for the one line the CLI prints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ensured {
    /// Everything needed was already on this machine.
    Present,
    /// Missing schemas were downloaded into `dir`.
    Fetched {
        /// The revisions fetched.
        revisions: Vec<Revision>,
        /// The cache directory they went to.
        dir: PathBuf,
    },
    /// Schema checks are off (`--no-schema`).
    Disabled,
}

impl Ensured {
    /// The line to print, if any.
    pub fn note(&self) -> Option<String> {
        match self {
            Ensured::Present => None,
            Ensured::Fetched { revisions, dir } => Some(format!(
                "mcpcheck: schema {} not found locally: fetched the pinned official cop{} (commit {}, sha256 verified) into {}",
                revisions
                    .iter()
                    .map(|r| r.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                if revisions.len() == 1 { "y" } else { "ies" },
                &pins::SOURCE_COMMIT[..12],
                dir.display()
            )),
            Ensured::Disabled => Some(
                "mcpcheck: --no-schema: schema checks are DISABLED for this run (the reports say so)"
                    .to_owned(),
            ),
        }
    }
}

/// The fix, named in every error of this module.
pub const FIX: &str = "fix: run `mcpcheck schemas fetch` where the network is reachable (or \
`mcpcheck schemas fetch --dest DIR` and copy DIR here), then pass --schema-dir DIR or set \
MCPCHECK_SCHEMA_DIR; or pass --no-schema to run without schema checks";

/// The schema a run needs is not here and could not be fetched.
#[derive(Debug, thiserror::Error)]
pub enum Unavailable {
    /// No cache directory to fetch into.
    #[error(
        "no schema for {revision} (looked in {looked}) and no cache directory to fetch it into (set HOME or XDG_CACHE_HOME)\n{FIX}"
    )]
    NoCache {
        /// The revision wanted.
        revision: Revision,
        /// Where it was looked for.
        looked: String,
    },
    /// The download failed (offline, say).
    #[error("no schema for {revision} (looked in {looked}) and fetching it failed: {cause}\n{FIX}")]
    Fetch {
        /// The revision wanted.
        revision: Revision,
        /// Where it was looked for.
        looked: String,
        /// Why the download failed.
        cause: String,
    },
    /// The server negotiated a revision whose schema could not be had.
    #[error(
        "no schema for {revision}: the server negotiated it, and it was not found or fetched ({cause})\n{FIX}"
    )]
    Negotiated {
        /// The revision negotiated.
        revision: Revision,
        /// Why its schema could not be had.
        cause: String,
    },
}

/// The base URL to fetch from: `$MCPCHECK_SCHEMA_BASE_URL`, else the default host.
pub fn base_url() -> String {
    std::env::var(BASE_URL_ENV)
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| pins::DEFAULT_BASE_URL.to_owned())
}

/// Makes sure `revision`'s schema is on the search path. When it is missing, every
/// revision missing from the search path is fetched into the cache (a server may
/// negotiate an older revision than the one requested); only `revision` must succeed.
pub async fn ensure(
    search: &SearchPath,
    revision: Revision,
    policy: Policy,
) -> Result<Ensured, Unavailable> {
    if policy == Policy::Disabled {
        return Ok(Ensured::Disabled);
    }
    let missing = match search.locate(revision) {
        Ok(_) => return Ok(Ensured::Present),
        Err(m) => m,
    };
    let looked = missing
        .looked
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let Some(dir) = resolve::cache_dir() else {
        return Err(Unavailable::NoCache { revision, looked });
    };
    let wanted: Vec<Revision> = Revision::ALL
        .into_iter()
        .filter(|r| *r == revision || search.locate(*r).is_err())
        .collect();
    let fail = |cause: String| Unavailable::Fetch {
        revision,
        looked: looked.clone(),
        cause,
    };
    let results = fetch::fetch(&base_url(), &dir, &wanted)
        .await
        .map_err(|e| fail(e.to_string()))?;
    let mut fetched = Vec::new();
    let mut own_error: Option<FetchError> = None;
    for (rev, result) in wanted.iter().zip(results) {
        match result {
            Ok(f) => fetched.push(f.revision),
            Err(e) if *rev == revision => own_error = Some(e),
            Err(_) => {}
        }
    }
    if let Some(e) = own_error {
        return Err(fail(error_chain(&e)));
    }
    Ok(Ensured::Fetched {
        revisions: fetched,
        dir,
    })
}

/// An error with its deeper sources, so "connection refused" is not hidden behind "error
/// sending request" (a `FetchError` already prints its direct source).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source().and_then(|s| s.source());
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_notes_name_what_happened() {
        assert_eq!(Ensured::Present.note(), None);
        let note = Ensured::Fetched {
            revisions: vec![Revision::V2025_11_25],
            dir: PathBuf::from("/c"),
        }
        .note()
        .unwrap();
        assert!(note.contains("2025-11-25") && note.contains("/c") && note.contains("copy"));
        assert!(Ensured::Disabled.note().unwrap().contains("DISABLED"));
    }

    #[test]
    fn the_error_names_the_fix() {
        let e = Unavailable::Fetch {
            revision: Revision::V2025_11_25,
            looked: "/x".into(),
            cause: "connection refused".into(),
        }
        .to_string();
        for needle in [
            "mcpcheck schemas fetch",
            "--schema-dir",
            "--no-schema",
            "connection refused",
        ] {
            assert!(e.contains(needle), "{needle}: {e}");
        }
    }
}
