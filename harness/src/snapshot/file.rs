//! Snapshot files in insta's format, so `cargo insta review` can review mcpcheck's pending
//! snapshots too: a YAML header (`source`, `expression`) between `---` lines, then the body.
//! Accepted snapshots are `NAME.snap`; pending ones sit beside them as `NAME.snap.new`.

use std::path::{Path, PathBuf};

use super::SnapshotError;

/// What the header's `source` says: the snapshot came from this command, not a test file.
pub const SOURCE: &str = "mcpcheck snapshot";

/// The path of area `name`'s accepted snapshot in `dir`.
pub fn accepted_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.snap"))
}

/// The path of area `name`'s pending snapshot in `dir`.
pub fn pending_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.snap.new"))
}

/// The whole file for a body.
pub fn render(name: &str, body: &str) -> String {
    format!("---\nsource: {SOURCE}\nexpression: {name}\n---\n{body}")
}

/// The body of a snapshot file (what follows the header). A file without a header is
/// taken whole, so a hand-written body still compares.
pub fn body(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("---\n") else {
        return text;
    };
    match rest.find("\n---\n") {
        Some(end) => &rest[end + 5..],
        None => text,
    }
}

/// Reads an accepted snapshot's body, `None` if there is no such file.
pub fn read_body(path: &Path) -> Result<Option<String>, SnapshotError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(body(&text).to_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(SnapshotError::Io(path.to_owned(), e)),
    }
}

/// Writes a snapshot file, creating its directory.
pub fn write(path: &Path, text: &str) -> Result<(), SnapshotError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| SnapshotError::Io(parent.to_owned(), e))?;
    }
    std::fs::write(path, text).map_err(|e| SnapshotError::Io(path.to_owned(), e))
}

/// Removes a file if it is there.
pub fn remove(path: &Path) -> Result<(), SnapshotError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(SnapshotError::Io(path.to_owned(), e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_round_trips_through_the_header() {
        let text = render("tools", "list: []\n");
        assert_eq!(
            text,
            "---\nsource: mcpcheck snapshot\nexpression: tools\n---\nlist: []\n"
        );
        assert_eq!(body(&text), "list: []\n");
        // insta may write more header keys (assertion_line, snapshot_kind) when it accepts.
        let insta = "---\nsource: x\nassertion_line: 3\nexpression: tools\nsnapshot_kind: text\n---\nlist: []\n";
        assert_eq!(body(insta), "list: []\n");
        assert_eq!(body("plain: 1\n"), "plain: 1\n");
    }
}
