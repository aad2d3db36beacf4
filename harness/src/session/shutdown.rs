//! The end of a session: the transport's shutdown sequence, the server's last words,
//! and the record the session leaves behind.

use super::{EXIT_GRACE, Session, SessionRecord};
use crate::check::rules;
use crate::outcome::Direction;
use crate::outcome::Finding;
use crate::transport::ShutdownStage;

impl Session {
    /// Ends the session with the transport's shutdown sequence and returns the record.
    pub async fn finish(mut self) -> SessionRecord {
        // What the shutdown finds is told to the scenarios watching for it: from here, or
        // from an earlier closing of the input in this window (the server may have written
        // its last words then).
        let before = self.watchers.shutdown_from(self.findings.len());
        // Only requests mcpcheck already gave up on count: an answer to one still in
        // flight may just be slow (a loaded machine), while an answer that missed its
        // whole timeout and then came the moment stdin closed was held in a buffer. Over
        // HTTP there is no stdin to close.
        let stdio = self.transport.pid().is_some();
        // Requests the server was seen to ignore (`forgive_unanswered`) are not held ones.
        let unforgiven = |s: &Self| s.requests.unforgiven();
        let given_up = unforgiven(&self);
        // Whether the server got an answer out before the end of its input, and which
        // handshake requests were still open: evidence that it writes at all.
        let answered_before = self.requests.any_answered();
        let opening_open = self.requests.open_openings();
        let report = self.transport.shutdown().await;
        // Whatever the server wrote on the way out is still checked.
        while let Ok(Some(item)) = tokio::time::timeout(EXIT_GRACE, self.transport.recv()).await {
            self.ingest(item).await;
        }
        let rev = self.revision;
        let held = given_up.saturating_sub(unforgiven(&self));
        // An answer left without its newline also completes only at the end of the stream:
        // that is the framing's finding, not a buffer's.
        let unterminated = self
            .findings
            .iter()
            .any(|f| f.rule == rules::STDIO_UNTERMINATED.id);
        // A buffer shows when the server wrote before (the handshake's answer got out, the
        // rest did not) or when even the handshake's answer waited for the end. A server that
        // answered nothing else and answered a request sent before `initialize` only after
        // stdin closed (mcp 2.x, still starting on a loaded machine) was late: no buffer.
        let buffered =
            answered_before || opening_open.iter().any(|id| self.requests.was_answered(id));
        if stdio
            && held > 0
            && buffered
            && report.stage != ShutdownStage::AlreadyExited
            && !unterminated
        {
            self.findings.push(
                Finding::new(
                    &rules::STDIO_FLUSHED,
                    rev,
                    format!("the answers to {held} request(s) arrived only once stdin was closed: the server does not flush stdout after each message"),
                )
                .expected("each message flushed to stdout as it is written"),
            );
        }
        self.transcript.push(
            Direction::Event,
            format!("shutdown: {:?} after {:?}", report.stage, report.took),
        );
        match report.stage {
            ShutdownStage::Terminated => self.findings.push(Finding::new(
                &rules::STDIO_SHUTDOWN,
                rev,
                "the server did not exit after its stdin was closed; it needed SIGTERM",
            )),
            ShutdownStage::Killed => self.findings.push(Finding::new(
                &rules::STDIO_SHUTDOWN,
                rev,
                "the server ignored both the closing of stdin and SIGTERM; it had to be killed with SIGKILL",
            )),
            _ => {}
        }
        let findings = self.findings.take();
        if !self.watchers.is_empty() {
            let how = format!("shutdown: {:?} after {:?}", report.stage, report.took);
            (self.watchers).tell_all(&findings[before..], &self.transcript, &how);
        }
        let schema = self.schema_status();
        let (stderr_bytes, stderr_tail) = match self.transport.stderr() {
            Some(log) => (log.total_bytes(), log.last_lines(20)),
            None => (0, Vec::new()),
        };
        SessionRecord {
            transcript: self.transcript,
            findings,
            schema,
            shutdown: Some(report),
            stderr_bytes,
            stderr_tail,
        }
    }
}
