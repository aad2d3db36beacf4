//! Scenario-file errors that point at the spot, rustc/hurl style.

use std::fmt;

/// An error in a scenario file: where it is, what is wrong, and (often) how to fix it.
///
/// `Display` renders it with the offending source line and a caret:
///
/// ```text
/// error: unknown key `expct` in a `request` step
///   --> scenarios/tools/list.yaml:12:5
///    |
/// 12 |     expct:
///    |     ^^^^^
///    = hint: did you mean `expect`?
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", Render(self))]
pub struct ScenarioError {
    /// The source name given to the parser (usually the file's path).
    pub file: String,
    /// 1-based line; 0 when the error is about the file as a whole (it cannot be read).
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What is wrong.
    pub message: String,
    /// How to fix it, when there is a likely fix (a near-miss key, say).
    pub hint: Option<String>,
    /// The text of line `line`, shown under the location.
    pub source_line: String,
    /// How many characters the caret line underlines (at least 1).
    pub width: usize,
}

impl ScenarioError {
    /// An error about the whole file, with no position (an I/O error, say).
    pub fn whole_file(file: &str, message: impl Into<String>) -> Self {
        ScenarioError {
            file: file.to_owned(),
            line: 0,
            column: 0,
            message: message.into(),
            hint: None,
            source_line: String::new(),
            width: 0,
        }
    }

    /// Adds (or replaces) the hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// `file:line:col`, the way editors and terminals link to it.
    pub fn location(&self) -> String {
        if self.line == 0 {
            self.file.clone()
        } else {
            format!("{}:{}:{}", self.file, self.line, self.column)
        }
    }
}

struct Render<'a>(&'a ScenarioError);

impl fmt::Display for Render<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = self.0;
        writeln!(f, "error: {}", e.message)?;
        if e.line == 0 {
            write!(f, " --> {}", e.file)?;
            if let Some(hint) = &e.hint {
                write!(f, "\n  = hint: {hint}")?;
            }
            return Ok(());
        }
        let number = e.line.to_string();
        let pad = " ".repeat(number.len());
        writeln!(f, "{pad}--> {}", e.location())?;
        writeln!(f, "{pad} |")?;
        // Tabs are shown as one space each, so the caret stays under the right character.
        let shown: String = e
            .source_line
            .chars()
            .map(|c| if c == '\t' { ' ' } else { c })
            .collect();
        let shown = shown.trim_end();
        if shown.is_empty() {
            writeln!(f, "{number} |")?;
        } else {
            writeln!(f, "{number} | {shown}")?;
        }
        write!(
            f,
            "{pad} | {}{}",
            " ".repeat(e.column.saturating_sub(1)),
            "^".repeat(e.width.max(1))
        )?;
        if let Some(hint) = &e.hint {
            write!(f, "\n{pad} = hint: {hint}")?;
        }
        Ok(())
    }
}
