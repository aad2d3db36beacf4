//! `mcpcheck schemas`: fetch the pinned official schemas, or show where each is found.

use std::process::ExitCode;

use anyhow::Context;

use super::{EXIT_ERROR, SchemasCommand};
use crate::protocol::Revision;
use crate::schema::{self, SearchPath};

/// Runs a `mcpcheck schemas` subcommand.
pub async fn schemas(cmd: SchemasCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        SchemasCommand::Fetch { dest, base_url } => {
            let dest = match dest {
                Some(d) => d,
                None => schema::resolve::cache_dir()
                    .context("no cache directory: set HOME or XDG_CACHE_HOME, or pass --dest")?,
            };
            let base = base_url
                .as_deref()
                .map_or_else(schema::ensure::base_url, str::to_owned);
            let results = schema::fetch::fetch(&base, &dest, &Revision::ALL).await?;
            let mut failed = false;
            for r in results {
                match r {
                    Ok(f) => super::out(&format!(
                        "{}  {} ({} bytes, sha256 verified)\n",
                        f.revision,
                        f.path.display(),
                        f.bytes
                    )),
                    Err(e) => {
                        failed = true;
                        eprintln!("mcpcheck: {e}");
                    }
                }
            }
            Ok(if failed {
                ExitCode::from(EXIT_ERROR)
            } else {
                ExitCode::SUCCESS
            })
        }
        SchemasCommand::List { schema_dir } => {
            let search = SearchPath::standard(schema_dir.as_deref());
            for rev in Revision::ALL {
                match search.locate(rev) {
                    Ok(loc) => {
                        let pin = if loc.pinned {
                            "matches pin"
                        } else {
                            "DIFFERS from pin"
                        };
                        super::out(&format!(
                            "{rev}  {}  ({:?}, {pin})\n",
                            loc.path.display(),
                            loc.origin
                        ));
                    }
                    Err(e) => super::out(&format!("{rev}  missing: {e}\n")),
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
