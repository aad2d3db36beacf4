//! A server's snapshot compared with the accepted one: the "snapshot" part of a report.

use serde::Serialize;

/// What happened to one area's snapshot file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotStatus {
    /// Same as the accepted snapshot.
    Unchanged,
    /// First run: no snapshots existed, so this one was written as accepted.
    Written,
    /// Differs from (or is missing beside) the accepted snapshots; pending as `.snap.new`.
    Changed,
    /// Differed, and `--accept` made it the accepted snapshot.
    Accepted,
}

/// One area's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct AreaOutcome {
    /// The area's name (one snapshot file each), e.g. `tools`.
    pub area: String,
    /// What happened to its snapshot file.
    pub status: SnapshotStatus,
    /// The accepted file.
    pub path: String,
    /// Unified diff from the accepted to the new snapshot, when they differ.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

/// The outcome of comparing every area: the "snapshot" area of a JSON report.
#[derive(Clone, Debug, Serialize)]
pub struct SnapshotComparison {
    /// The directory of the accepted snapshots.
    pub dir: String,
    /// Each area's outcome.
    pub areas: Vec<AreaOutcome>,
}

impl SnapshotComparison {
    /// Whether any area differs and was not accepted (exit 1).
    pub fn has_changes(&self) -> bool {
        self.areas
            .iter()
            .any(|a| a.status == SnapshotStatus::Changed)
    }
}
