//! Where tests find the official schemas, for the library's unit tests and (included by
//! path) the integration tests alike: `$MCPCHECK_SCHEMA_DIR` when it is set, else
//! `../shared/mcp-schema` beside the checkout, where README's `cargo test --workspace`
//! expects them. Never the user cache: a test reads the pinned copies or says where they
//! go.

use std::path::{Path, PathBuf};

/// The schema directory tests read; panics, saying where to put the schemas, when there is
/// none.
pub fn schema_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("MCPCHECK_SCHEMA_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let beside = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/mcp-schema");
    assert!(
        beside.is_dir(),
        "no schemas: set MCPCHECK_SCHEMA_DIR or place them at {}",
        beside.display()
    );
    beside
}
