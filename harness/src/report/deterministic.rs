//! `--deterministic`: the same run gives byte-identical reports, so example reports can be
//! committed and CI can diff them. Times and durations become zero (numbers in JSON) or
//! `<time>` in text; machine-specific strings (the working directory, the temp directory,
//! the schema directory, the home directory), session ids and timestamps become
//! placeholders.

use std::time::Duration;

use regex::Regex;
use serde_json::Value;

use crate::outcome::{Direction, Entry, Finding, RunReport, SchemaStatus, StepStatus, Verdict};

/// Replaces machine- and time-dependent strings with placeholders.
#[derive(Debug)]
pub struct Scrubber {
    /// (literal, placeholder), longest literal first so nested paths scrub to the most specific.
    literals: Vec<(String, &'static str)>,
    patterns: Vec<(Regex, &'static str)>,
}

impl Scrubber {
    /// A scrubber for this process: its working directory, temp directory, home, and the
    /// schema directory in `$MCPCHECK_SCHEMA_DIR`.
    pub fn for_this_process(schema_dir: Option<&std::path::Path>) -> Self {
        let mut literals = Vec::new();
        let mut add = |p: Option<std::path::PathBuf>, name: &'static str| {
            if let Some(p) = p {
                let s = p.display().to_string();
                let s = s.trim_end_matches('/').to_owned();
                if s.len() > 1 {
                    if let Ok(canon) = std::fs::canonicalize(&p) {
                        let c = canon.display().to_string();
                        if c != s && c.len() > 1 {
                            literals.push((c, name));
                        }
                    }
                    literals.push((s, name));
                }
            }
        };
        add(schema_dir.map(|p| p.to_path_buf()), "<schema-dir>");
        add(std::env::current_dir().ok(), "<cwd>");
        add(Some(std::env::temp_dir()), "<tmp>");
        add(std::env::var_os("HOME").map(Into::into), "<home>");
        Self::new(literals)
    }

    /// A scrubber replacing each `(literal, placeholder)`, longest literal first.
    pub fn new(mut literals: Vec<(String, &'static str)>) -> Self {
        literals.sort_by_key(|l| std::cmp::Reverse(l.0.len()));
        let re = |p: &str| Regex::new(p).expect("the placeholder patterns are valid");
        Scrubber {
            literals,
            patterns: vec![
                // Mcp-Session-Id header values and UUIDs (session ids, request tokens).
                (
                    re(r"(?i)(mcp-session-id[\x22']?\s*[:=]\s*[\x22']?)[A-Za-z0-9._~+/=-]+"),
                    "${1}<session-id>",
                ),
                (
                    re(
                        r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
                    ),
                    "<uuid>",
                ),
                // RFC 3339 timestamps, as loggers print them.
                (
                    re(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?"),
                    "<time>",
                ),
                // Process ids in the messages of process-related findings.
                (re(r"\b(pid|process) \d+"), "$1 <pid>"),
                // Durations as Rust's Debug prints them (`after 3.2ms`, `2.6µs`).
                (
                    re(r"\b\d+(\.\d+)?(ns|µs|us|ms)\b|\b\d+\.\d+s\b"),
                    "<duration>",
                ),
            ],
        }
    }

    /// `text` with every literal and run-to-run pattern replaced by its placeholder.
    pub fn scrub(&self, text: &str) -> String {
        let mut s = text.to_owned();
        for (lit, name) in &self.literals {
            if s.contains(lit.as_str()) {
                s = s.replace(lit.as_str(), name);
            }
        }
        for (re, rep) in &self.patterns {
            if re.is_match(&s) {
                s = re.replace_all(&s, *rep).into_owned();
            }
        }
        s
    }

    fn scrub_in_place(&self, s: &mut String) {
        let new = self.scrub(s);
        if new != *s {
            *s = new;
        }
    }

    fn scrub_value(&self, v: &mut Value) {
        match v {
            Value::String(s) => self.scrub_in_place(s),
            Value::Array(a) => a.iter_mut().for_each(|v| self.scrub_value(v)),
            Value::Object(o) => o.values_mut().for_each(|v| self.scrub_value(v)),
            _ => {}
        }
    }

    fn scrub_finding(&self, f: &mut Finding) {
        self.scrub_in_place(&mut f.message);
        for s in [&mut f.expected, &mut f.evidence].into_iter().flatten() {
            self.scrub_in_place(s);
        }
    }
}

/// Makes `report` deterministic in place.
pub fn apply(report: &mut RunReport, scrubber: &Scrubber) {
    report.duration_ms = 0;
    scrubber.scrub_in_place(&mut report.server);
    if let Some(p) = &mut report.profile {
        scrubber.scrub_value(&mut p.capabilities);
        scrubber.scrub_value(&mut p.server_info);
        if let Some(i) = &mut p.instructions {
            scrubber.scrub_in_place(i);
        }
    }
    if let SchemaStatus::Checked { source, .. } = &mut report.sweep.schema {
        scrubber.scrub_in_place(source);
    }
    if let SchemaStatus::Skipped { reason } = &mut report.sweep.schema {
        scrubber.scrub_in_place(reason);
    }
    if let Some(s) = &mut report.sweep.shutdown {
        s.took = Duration::ZERO;
    }
    for step in &mut report.sweep.steps {
        if let StepStatus::Skipped { reason } = &mut step.status {
            scrubber.scrub_in_place(reason);
        }
    }
    report
        .sweep
        .findings
        .iter_mut()
        .for_each(|f| scrubber.scrub_finding(f));
    report
        .sweep
        .stderr
        .tail
        .iter_mut()
        .for_each(|l| scrubber.scrub_in_place(l));
    settle_transcript(&mut report.transcript, &mut report.sweep.findings, scrubber);
    for o in &mut report.scenarios {
        o.duration_ms = 0;
        if let Verdict::Skip { reason } | Verdict::Error { reason } | Verdict::Blocked { reason } =
            &mut o.verdict
        {
            scrubber.scrub_in_place(reason);
        }
        o.findings
            .iter_mut()
            .chain(o.protocol.iter_mut())
            .for_each(|f| scrubber.scrub_finding(f));
        o.unchecked
            .iter_mut()
            .chain(o.skipped_steps.iter_mut())
            .for_each(|s| scrubber.scrub_in_place(s));
        match &mut o.stderr {
            crate::transport::StderrExcerpt::Captured { lines, .. } => {
                lines.iter_mut().for_each(|l| scrubber.scrub_in_place(l))
            }
            crate::transport::StderrExcerpt::NotCaptured { reason } => {
                scrubber.scrub_in_place(reason)
            }
        }
        let n_own = o.findings.len();
        let mut findings: Vec<Finding> = o.findings.drain(..).chain(o.protocol.drain(..)).collect();
        settle_transcript(&mut o.transcript, &mut findings, scrubber);
        o.protocol = findings.split_off(n_own);
        o.findings = findings;
    }
}

/// Zeroes entry times, scrubs texts, and moves connection events (process exit, output
/// closed, shutdown) after the messages, in text order: their order relative to each other
/// and to the last messages is a race between threads. Finding frame indices follow.
fn settle_transcript(entries: &mut Vec<Entry>, findings: &mut [Finding], scrubber: &Scrubber) {
    let mut order: Vec<usize> = (0..entries.len()).collect();
    for e in entries.iter_mut() {
        e.at = Duration::ZERO;
        scrubber.scrub_in_place(&mut e.text);
    }
    order.sort_by(|&a, &b| {
        let (ea, eb) = (&entries[a], &entries[b]);
        let ev = |e: &Entry| e.direction == Direction::Event;
        match (ev(ea), ev(eb)) {
            (false, false) => a.cmp(&b),
            (false, true) => std::cmp::Ordering::Less,
            (true, false) => std::cmp::Ordering::Greater,
            (true, true) => ea.text.cmp(&eb.text).then(a.cmp(&b)),
        }
    });
    let mut new_index = vec![0; entries.len()];
    for (new, &old) in order.iter().enumerate() {
        new_index[old] = new;
    }
    let old = std::mem::take(entries);
    let mut slots: Vec<Option<Entry>> = old.into_iter().map(Some).collect();
    *entries = order.iter().filter_map(|&i| slots[i].take()).collect();
    for f in findings {
        if let Some(i) = f.frame {
            f.frame = new_index.get(i).copied();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_ids_and_times_become_placeholders() {
        let s = Scrubber::new(vec![
            ("/home/u/proj".into(), "<cwd>"),
            ("/home/u".into(), "<home>"),
        ]);
        assert_eq!(
            s.scrub("/home/u/proj/target/debug/srv and /home/u/.cache"),
            "<cwd>/target/debug/srv and <home>/.cache"
        );
        assert_eq!(
            s.scrub("Mcp-Session-Id: 3fa9c0de-aaaa-bbbb-cccc-0123456789ab"),
            "Mcp-Session-Id: <session-id>"
        );
        assert_eq!(
            s.scrub("2026-11-29T23:06:37.123Z INFO ready"),
            "<time> INFO ready"
        );
        assert_eq!(s.scrub("a6f1c0de-1111-2222-3333-444455556666"), "<uuid>");
        assert_eq!(s.scrub("nothing to see"), "nothing to see");
    }
}
