//! `mcpcheck schemas fetch`: downloads the pinned official schemas into the user cache,
//! verifying each against the SHA-256 compiled into this binary.

use std::path::{Path, PathBuf};

use super::pins;
use crate::protocol::Revision;

/// Why `mcpcheck schemas fetch` failed for one schema.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The download failed.
    #[error("downloading {url}: {source}")]
    Http {
        /// The schema's URL.
        url: String,
        /// The HTTP client's error.
        #[source]
        source: reqwest::Error,
    },
    /// The server answered with an HTTP error status.
    #[error("downloading {url}: HTTP status {status}")]
    Status {
        /// The schema's URL.
        url: String,
        /// The HTTP status.
        status: u16,
    },
    /// The file downloaded is not the one pinned (nothing was saved).
    #[error("{url}: checksum mismatch (expected sha256 {expected}, got {actual}); not saved")]
    Checksum {
        /// The schema's URL.
        url: String,
        /// The pinned SHA-256, hex.
        expected: String,
        /// The SHA-256 of what was downloaded, hex.
        actual: String,
    },
    /// The schema could not be saved.
    #[error("writing {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// One downloaded and verified schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// The schema's revision.
    pub revision: Revision,
    /// Where it was saved.
    pub path: PathBuf,
    /// Its size, in bytes.
    pub bytes: usize,
}

/// Downloads each revision's schema from `base_url` into `dest/<revision>/schema.json`.
/// A file is written only after its checksum matches, and atomically (temp + rename).
pub async fn fetch(
    base_url: &str,
    dest: &Path,
    revisions: &[Revision],
) -> Result<Vec<Result<Fetched, FetchError>>, FetchError> {
    crate::transport::install_crypto_provider();
    let client = reqwest::Client::builder()
        .user_agent(concat!("mcpcheck/", env!("CARGO_PKG_VERSION")))
        .timeout(std::time::Duration::from_secs(60))
        .build()
        .map_err(|source| FetchError::Http {
            url: base_url.to_owned(),
            source,
        })?;
    let mut out = Vec::new();
    for &revision in revisions {
        let url = pins::url(base_url.trim_end_matches('/'), revision);
        out.push(fetch_one(&client, &url, dest, revision).await);
    }
    Ok(out)
}

async fn fetch_one(
    client: &reqwest::Client,
    url: &str,
    dest: &Path,
    revision: Revision,
) -> Result<Fetched, FetchError> {
    let http = |source| FetchError::Http {
        url: url.to_owned(),
        source,
    };
    let response = client.get(url).send().await.map_err(http)?;
    if !response.status().is_success() {
        return Err(FetchError::Status {
            url: url.to_owned(),
            status: response.status().as_u16(),
        });
    }
    let bytes = response.bytes().await.map_err(http)?;
    let actual = pins::digest(&bytes);
    let expected = pins::sha256(revision);
    if actual != expected {
        return Err(FetchError::Checksum {
            url: url.to_owned(),
            expected: expected.to_owned(),
            actual,
        });
    }
    let dir = dest.join(revision.as_str());
    let write = |path: &Path, source| FetchError::Write {
        path: path.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(&dir).map_err(|e| write(&dir, e))?;
    let path = dir.join("schema.json");
    let tmp = dir.join(".schema.json.part");
    std::fs::write(&tmp, &bytes).map_err(|e| write(&tmp, e))?;
    std::fs::rename(&tmp, &path).map_err(|e| write(&path, e))?;
    Ok(Fetched {
        revision,
        path,
        bytes: bytes.len(),
    })
}
