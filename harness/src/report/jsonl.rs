//! `--report events=PATH`: every event as one JSON object per line, written as it happens
//! and flushed line by line, so CI can tail the file while the run goes. The line format is
//! `reports/events.schema.json`. It is a live log: times are real even with
//! `--deterministic` (which still replaces machine paths and pids).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::ReportError;
use super::terminal::Filter;
use crate::outcome::events::{Event, EventSink};

/// The `events` reporter: writes each event as one JSON line as the run goes.
pub struct JsonLines {
    path: PathBuf,
    state: Mutex<State>,
    filter: Filter,
}

struct State {
    out: std::io::BufWriter<std::fs::File>,
    /// The first write error; the run goes on and reports it at the end.
    error: Option<std::io::Error>,
}

impl std::fmt::Debug for JsonLines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonLines")
            .field("path", &self.path)
            .finish()
    }
}

impl JsonLines {
    /// Creates (truncates) the file, and its parent directories, before the run starts, so
    /// a bad path is a usage problem found before any server is started.
    pub fn create(path: &Path, filter: Filter) -> Result<Self, ReportError> {
        let werr = |source| ReportError::Write {
            path: path.display().to_string(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(werr)?;
        }
        let file = std::fs::File::create(path).map_err(werr)?;
        Ok(JsonLines {
            path: path.to_path_buf(),
            state: Mutex::new(State {
                out: std::io::BufWriter::new(file),
                error: None,
            }),
            filter,
        })
    }

    /// The first error writing the file, if any.
    pub fn finish(&self) -> Result<(), ReportError> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let flushed = s.out.flush();
        match s.error.take().map_or(flushed, Err) {
            Ok(()) => Ok(()),
            Err(source) => Err(ReportError::Write {
                path: self.path.display().to_string(),
                source,
            }),
        }
    }
}

impl EventSink for JsonLines {
    fn event(&self, event: &Event) {
        let line = (self.filter)(&serde_json::to_string(event).expect("events always serialize"));
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.error.is_some() {
            return;
        }
        let State { out, error } = &mut *s;
        if let Err(e) = writeln!(out, "{line}").and_then(|()| out.flush()) {
            *error = Some(e);
        }
    }
}
