//! A scripted server for unit tests of the session: it reads everything and answers with
//! the lines it was given, in order, whatever was asked.

use std::collections::VecDeque;
use std::time::Duration;

use crate::transport::{
    BoxFuture, Inbound, RawFrame, ShutdownReport, ShutdownStage, StderrLog, Transport,
    TransportError,
};

/// The lines it answers with, in order; at the end of them, its output ends.
pub(crate) struct Scripted(pub VecDeque<&'static str>);

impl Transport for Scripted {
    fn send(&mut self, _: Vec<u8>) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async { Ok(()) })
    }
    fn send_raw(&mut self, _: Vec<u8>) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async { Ok(()) })
    }
    fn recv(&mut self) -> BoxFuture<'_, Option<Inbound>> {
        let line = self.0.pop_front();
        Box::pin(async move {
            let line = line?;
            Some(Inbound::Frame(RawFrame {
                offset: 0,
                bytes: line.as_bytes().to_vec(),
                value: serde_json::from_str(line).ok()?,
            }))
        })
    }
    fn shutdown(&mut self) -> BoxFuture<'_, ShutdownReport> {
        Box::pin(async {
            ShutdownReport {
                stage: ShutdownStage::AlreadyExited,
                exit: None,
                took: Duration::ZERO,
            }
        })
    }
    fn stderr(&self) -> Option<&StderrLog> {
        None
    }
    fn describe(&self) -> String {
        "scripted server".into()
    }
}

/// A session with default settings on a scripted server answering `lines`.
pub(crate) fn session(lines: &[&'static str]) -> super::Session {
    super::Session::new(
        Box::new(Scripted(lines.iter().copied().collect())),
        std::sync::Arc::new(crate::schema::SchemaStore::new(
            crate::schema::SearchPath::default(),
        )),
        super::SessionConfig::default(),
        std::time::Instant::now(),
    )
}
