//! Why a request got no reply, and the finding each failure represents (a timeout, a
//! server that exited, one that stopped reading).

use std::time::Duration;

use super::Session;
use crate::check::rules;
use crate::outcome::Cause;
use crate::outcome::Finding;
use crate::protocol::text::quote;
use crate::transport::{ExitInfo, TransportError};

/// Why a request got no reply.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The response did not come within the timeout (the request was cancelled).
    #[error("`{method}` got no response within {after:?}")]
    Timeout {
        /// The request's method.
        method: String,
        /// The timeout that ran out.
        after: Duration,
        /// Why the wait was shorter than `--timeout`, if it was (see [`super::Pace`]).
        bounded: Option<String>,
    },
    /// The answer arrived but cannot be used: it carried the request's id in a line that is
    /// not JSON, not UTF-8 or over the frame limit, or (the handshake, the only request
    /// sent) came under another id. Waiting longer would only end in a timeout.
    #[error("`{method}` got no usable response: {reason}")]
    Unusable {
        /// The request's method.
        method: String,
        /// What was wrong with the answer.
        reason: String,
    },
    /// The server closed its output (or exited) first.
    #[error("the server ended ({}) before answering `{method}`", exit.as_ref().map(|e| e.to_string()).unwrap_or_else(|| "closed its output".into()))]
    Closed {
        /// The request's method.
        method: String,
        /// How the process ended, if it did and that is known.
        exit: Option<ExitInfo>,
    },
    /// The tool-call gate kept the request from leaving: the user did not allow that
    /// tool. Nothing was sent, so this is nobody's fault: the step is skipped.
    #[error("{0}")]
    Refused(super::Refused),
    /// The request could not be written.
    #[error("could not send `{method}`: {source}")]
    Send {
        /// The request's method (or what was being sent).
        method: String,
        /// What the transport said.
        #[source]
        source: TransportError,
    },
}

impl Session {
    /// Turns a failed request into the finding it represents: none for a request the
    /// tool-call gate kept back, since the server saw nothing of it.
    pub fn finding_for(&self, error: &SessionError) -> Option<Finding> {
        let finding = self.failure_finding(error)?;
        Some(match error {
            SessionError::Timeout { .. } | SessionError::Unusable { .. } => {
                finding.cause(Cause::Timeout)
            }
            SessionError::Send {
                source: TransportError::WriteTimeout(_),
                ..
            } => finding,
            SessionError::Closed { method, .. } | SessionError::Send { method, .. } => finding
                .cause(Cause::ServerGone {
                    at_handshake: method == "initialize",
                }),
            SessionError::Refused(_) => return None,
        })
    }

    fn failure_finding(&self, error: &SessionError) -> Option<Finding> {
        let rev = self.revision;
        Some(match error {
            SessionError::Refused(_) => return None,
            SessionError::Timeout {
                method,
                after,
                bounded,
            } => {
                let why = bounded.as_ref().map(|why| format!(" ({why})"));
                let message = format!(
                    "`{method}` got no response within {}{}",
                    humantime::format_duration(*after),
                    why.unwrap_or_default()
                );
                let f = Finding::new(&rules::SESSION_TIMEOUT, rev, message);
                match self.transport.partial_line() {
                    Some((len, bytes)) => f
                        .evidence(format!(
                            "the server's output stops inside a line: {len} bytes with no terminating newline: {}",
                            quote(&String::from_utf8_lossy(&bytes), 300)
                        ))
                        .expected("each message terminated by a newline"),
                    None => f,
                }
            }
            SessionError::Unusable { method, reason } => Finding::new(
                &rules::SESSION_UNUSABLE,
                rev,
                format!("`{method}` got no usable response: {reason}"),
            )
            .expected("a response with the request's id, as one JSON-RPC message on one line"),
            SessionError::Closed { method, exit } => {
                let how = exit
                    .as_ref()
                    .map(|e| e.to_string())
                    .unwrap_or_else(|| "closed its output".into());
                let tail = self.stderr_tail(10);
                let f = Finding::new(
                    &rules::SESSION_EXITED,
                    rev,
                    format!(
                        "the server ended ({how}) while `{method}` was waiting for its response"
                    ),
                );
                if tail.is_empty() {
                    f
                } else {
                    f.evidence(format!("stderr:\n{}", tail.join("\n")))
                }
            }
            SessionError::Send {
                method,
                source: TransportError::WriteTimeout(stall),
            } => Finding::new(
                &rules::SESSION_NOT_READING,
                rev,
                format!("writing `{method}`: {stall}: the server is not reading its input"),
            ),
            SessionError::Send { method, source } => {
                let message = match &self.peer.exit {
                    Some(exit) => {
                        format!("the server ended ({exit}) before `{method}` could be sent")
                    }
                    None => format!("could not send `{method}`: the server is gone ({source})"),
                };
                let tail = self.stderr_tail(10);
                let f = Finding::new(&rules::SESSION_EXITED, rev, message);
                if tail.is_empty() {
                    f
                } else {
                    f.evidence(format!("stderr:\n{}", tail.join("\n")))
                }
            }
        })
    }
}
