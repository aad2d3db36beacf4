//! Finding a revision's schema on this machine.
//!
//! Order: `--schema-dir`, then `$MCPCHECK_SCHEMA_DIR`, then the user cache that
//! `mcpcheck schemas fetch` fills. Each is a directory holding `<revision>/schema.json`.
//! The project never ships the schemas itself.

use std::path::{Path, PathBuf};

use super::pins;
use crate::protocol::Revision;

/// Environment variable naming a schema directory.
pub const ENV_VAR: &str = "MCPCHECK_SCHEMA_DIR";

/// Where one revision's schema was found, and whether it matches the pin.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// The file.
    pub path: PathBuf,
    /// Which directory of the search path it came from.
    pub origin: Origin,
    /// Its content.
    pub bytes: Vec<u8>,
    /// False when the file differs from the pinned official schema (a newer or edited copy).
    pub pinned: bool,
}

/// Where a schema directory came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    /// `--schema-dir`.
    Flag,
    /// `$MCPCHECK_SCHEMA_DIR`.
    Env,
    /// The user cache `mcpcheck schemas fetch` fills.
    Cache,
}

/// The directories to search, in order, with where each came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchPath {
    /// Directories in search order.
    pub dirs: Vec<(PathBuf, Origin)>,
}

/// No schema for a revision anywhere on the search path.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "no schema for {revision} (looked in {}); run `mcpcheck schemas fetch` or pass --schema-dir",
    looked.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
)]
pub struct Missing {
    /// The revision looked for.
    pub revision: Revision,
    /// The files looked at.
    pub looked: Vec<PathBuf>,
}

/// The user cache directory for schemas, keyed by the pinned commit so a new pin never
/// reads an old download.
pub fn cache_dir() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(
        base.join("mcpcheck")
            .join("schemas")
            .join(pins::SOURCE_COMMIT),
    )
}

impl SearchPath {
    /// The standard search path: the flag if given, the environment variable, the cache.
    pub fn standard(flag: Option<&Path>) -> Self {
        let mut dirs = Vec::new();
        if let Some(dir) = flag {
            dirs.push((dir.to_path_buf(), Origin::Flag));
        }
        if let Some(dir) = std::env::var_os(ENV_VAR).filter(|d| !d.is_empty()) {
            dirs.push((PathBuf::from(dir), Origin::Env));
        }
        if let Some(dir) = cache_dir() {
            dirs.push((dir, Origin::Cache));
        }
        SearchPath { dirs }
    }

    /// Finds one revision's schema. A cached copy that fails its checksum is skipped (it
    /// is corrupt); a user-provided one is used but marked unpinned.
    pub fn locate(&self, revision: Revision) -> Result<Located, Missing> {
        let mut looked = Vec::new();
        for (dir, origin) in &self.dirs {
            let path = dir.join(revision.as_str()).join("schema.json");
            looked.push(path.clone());
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            let pinned = pins::digest(&bytes) == pins::sha256(revision);
            if *origin == Origin::Cache && !pinned {
                continue;
            }
            return Ok(Located {
                path,
                origin: *origin,
                bytes,
                pinned,
            });
        }
        Err(Missing { revision, looked })
    }
}
