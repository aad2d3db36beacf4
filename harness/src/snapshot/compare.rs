//! Comparing a capture with the accepted snapshot files, and accepting changes.

use std::path::Path;

use super::{Snapshot, SnapshotError, file};

use crate::outcome::{AreaOutcome, SnapshotComparison, SnapshotStatus as Status};

/// Compares `snapshot` with the files in `dir`; writes them all on the first run, writes
/// `.snap.new` files for changes (or accepts them with `accept`), and removes stale
/// `.snap.new` files of areas that match again.
pub fn compare(
    snapshot: &Snapshot,
    dir: &Path,
    accept: bool,
) -> Result<SnapshotComparison, SnapshotError> {
    let mut olds = Vec::new();
    for area in Snapshot::AREAS {
        olds.push(file::read_body(&file::accepted_path(dir, area))?);
    }
    let first_run = olds.iter().all(Option::is_none);
    let mut areas = Vec::new();
    for (area, old) in Snapshot::AREAS.into_iter().zip(olds) {
        let new = snapshot.to_yaml(area);
        let accepted = file::accepted_path(dir, area);
        let pending = file::pending_path(dir, area);
        let text = file::render(area, &new);
        let (status, diff) = match old {
            None if first_run => {
                file::write(&accepted, &text)?;
                (Status::Written, None)
            }
            Some(old) if old.trim_end() == new.trim_end() => {
                file::remove(&pending)?;
                (Status::Unchanged, None)
            }
            old => {
                let old = old.unwrap_or_default();
                let diff = unified_diff(&old, &new, area);
                if accept {
                    file::write(&accepted, &text)?;
                    file::remove(&pending)?;
                    (Status::Accepted, Some(diff))
                } else {
                    file::write(&pending, &text)?;
                    (Status::Changed, Some(diff))
                }
            }
        };
        areas.push(AreaOutcome {
            area: area.to_owned(),
            status,
            path: accepted.display().to_string(),
            diff,
        });
    }
    Ok(SnapshotComparison {
        dir: dir.display().to_string(),
        areas,
    })
}

/// Makes area's pending snapshot the accepted one (a `--review` "yes").
pub fn accept_pending(dir: &Path, area: &str) -> Result<(), SnapshotError> {
    let pending = file::pending_path(dir, area);
    let text =
        std::fs::read_to_string(&pending).map_err(|e| SnapshotError::Io(pending.clone(), e))?;
    file::write(&file::accepted_path(dir, area), &text)?;
    file::remove(&pending)
}

/// A unified diff with three lines of context, headed by the two file names.
pub fn unified_diff(old: &str, new: &str, area: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("{area}.snap"), &format!("{area}.snap.new"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_shows_only_the_changed_line() {
        let d = unified_diff("a: 1\nb: 2\nc: 3\n", "a: 1\nb: 5\nc: 3\n", "tools");
        let changed: Vec<&str> = d
            .lines()
            .filter(|l| {
                (l.starts_with('-') || l.starts_with('+'))
                    && !l.starts_with("---")
                    && !l.starts_with("+++")
            })
            .collect();
        assert_eq!(changed, ["-b: 2", "+b: 5"]);
        assert!(d.starts_with("--- tools.snap\n+++ tools.snap.new\n"), "{d}");
    }
}
