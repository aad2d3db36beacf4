//! The parts of `mcpcheck run` that make it fit a CI job: schemas that never vanish
//! silently (fetched when missing, exit 2 when they cannot be had, `--no-schema` to opt
//! out), and `--partition K/N`.

use super::args::CiArgs;
use crate::protocol::Revision;
use crate::scenario::Scenario;
use crate::schema::ensure::{self, Ensured, Policy, Unavailable};
use crate::schema::{SchemaStore, SearchPath};

/// The schema store of a run at `revision`: the schema found, or fetched (one line on
/// stderr says so), or disabled by `--no-schema`; an error (exit 2, with the fix) when
/// it can be neither found nor fetched.
pub async fn schema_store(
    ci: &CiArgs,
    search: SearchPath,
    revision: Revision,
) -> Result<SchemaStore, Unavailable> {
    let policy = if ci.no_schema {
        Policy::Disabled
    } else {
        Policy::Require
    };
    let ensured = ensure::ensure(&search, revision, policy).await?;
    if let Some(note) = ensured.note() {
        eprintln!("{note}");
    }
    Ok(match ensured {
        Ensured::Disabled => SchemaStore::disabled(),
        Ensured::Present | Ensured::Fetched { .. } => SchemaStore::new(search),
    })
}

/// The scenarios of `--partition K/N` (all of them without it).
pub fn partition(ci: &CiArgs, scenarios: Vec<Scenario>) -> Vec<Scenario> {
    match ci.partition {
        Some(p) => p.select(scenarios, |s| &s.id),
        None => scenarios,
    }
}
