//! Stdio framing anomalies the transport reports as data (a message across lines, a
//! non-JSON line, bad UTF-8, an oversize or unterminated line), turned into findings.

use super::Session;
use crate::check::rules;
use crate::outcome::Direction;
use crate::outcome::Finding;
use crate::protocol::text::quote;
use crate::transport::FramingIssue;

impl Session {
    /// A line that cannot be taken in but names a pending request's id at its start is
    /// that request's answer: its wait ends now (`SessionError::Unusable`), not at the
    /// timeout.
    fn spoil_answered(&mut self, line: &[u8], frame: Option<usize>, what: &str) {
        if let Some(id) = crate::protocol::raw_id::leading_id(line)
            && self.requests.is_pending(&id)
        {
            let at = frame.map(|i| format!(" (frame #{i})")).unwrap_or_default();
            self.spoil(
                &id,
                format!("the line that answers it{at} carries its id, but {what}"),
            );
        }
    }

    /// Records a framing anomaly and the rule it breaks; a message recovered from it is
    /// still taken in, so one framing defect does not turn every later step into a timeout.
    pub(super) async fn ingest_framing(&mut self, issue: FramingIssue) {
        let rev = self.revision;
        match issue {
            FramingIssue::MultiLine { lines, frame } => {
                let index = self.transcript.push(Direction::Received, frame.text());
                let f = Finding::new(
                    &rules::STDIO_NEWLINE,
                    rev,
                    format!("a message was written across {lines} lines"),
                )
                .expected("one JSON message per line, no embedded newlines")
                .evidence(quote(frame.text(), 400));
                self.push_at(f, index);
                // Recovered so one framing defect does not turn every later step into a timeout.
                self.ingest_frame(&frame, index).await;
            }
            FramingIssue::NotJson {
                line,
                error,
                offset,
            } => {
                let index = self.transcript.push(Direction::Received, line.clone());
                let f = Finding::new(
                    &rules::STDIO_STDOUT_ONLY_MESSAGES,
                    rev,
                    format!("stdout carried a line that is not a JSON-RPC message ({error})"),
                )
                .evidence(format!("byte {offset}: {}", quote(&line, 400)))
                .expected("only MCP messages on stdout; logs go to stderr");
                self.push_at(f, index);
                self.spoil_answered(line.as_bytes(), index, &format!("it is not JSON ({error})"));
            }
            FramingIssue::InvalidUtf8 {
                offset,
                valid_up_to,
                prefix,
            } => {
                let text = String::from_utf8_lossy(&prefix).into_owned();
                let index = self.transcript.push(Direction::Received, text.clone());
                let f = Finding::new(
                    &rules::STDIO_UTF8,
                    rev,
                    format!("a line is not valid UTF-8 (bad byte at position {valid_up_to})"),
                )
                .evidence(format!("byte {offset}: {}", quote(&text, 200)));
                self.push_at(f, index);
                self.spoil_answered(&prefix, index, "it is not valid UTF-8");
            }
            FramingIssue::Oversize {
                offset,
                len,
                limit,
                prefix,
            } => {
                let text = String::from_utf8_lossy(&prefix).into_owned();
                let index = self.transcript.push(
                    Direction::Event,
                    format!("skipped a {len}-byte line (limit {limit})"),
                );
                let f = Finding::new(
                    &rules::FRAME_TOO_LARGE,
                    rev,
                    format!(
                        "a {len}-byte line exceeded the {limit}-byte frame limit and was skipped"
                    ),
                )
                .evidence(format!("byte {offset}: {}", quote(&text, 200)))
                .expected("raise --max-frame-size if such messages are intended");
                self.push_at(f, index);
                self.spoil_answered(
                    &prefix,
                    index,
                    &format!("it is a {len}-byte line, over the {limit}-byte frame limit"),
                );
            }
            FramingIssue::Unterminated { offset, len } => {
                let index = self.transcript.push(
                    Direction::Event,
                    format!("output ended inside a {len}-byte line with no newline"),
                );
                let f = Finding::new(
                    &rules::STDIO_UNTERMINATED,
                    rev,
                    format!(
                        "the last {len} bytes of output (from byte {offset}) had no terminating newline"
                    ),
                );
                self.push_at(f, index);
            }
        }
    }
}
