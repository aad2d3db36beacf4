//! A transport over an in-process stream pair (e.g. `tokio::io::duplex`), so a Rust
//! server's tests can check or snapshot it without spawning a process. Newline-delimited
//! JSON, read and written by the same halves as stdio (`transport::lines`).

use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use super::framing::DEFAULT_MAX_FRAME;
use super::{
    BoxFuture, Inbound, ShutdownReport, ShutdownStage, StderrLog, Transport, TransportError, lines,
};

/// How long one write may block before the peer is judged not to read.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// Client end of an in-process connection: `reader` carries the server's output,
/// `writer` its input.
pub struct StreamTransport {
    writer: Option<Box<dyn AsyncWrite + Send + Unpin>>,
    inbound: mpsc::Receiver<Inbound>,
    name: String,
}

impl std::fmt::Debug for StreamTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamTransport")
            .field("name", &self.name)
            .finish()
    }
}

impl StreamTransport {
    /// Starts reading `reader` at once (on the current tokio runtime), so the server never
    /// blocks on a full buffer.
    pub fn new<R, W>(reader: R, writer: W, name: impl Into<String>) -> Self
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let (tx, rx) = mpsc::channel(1024);
        lines::spawn_reader(reader, DEFAULT_MAX_FRAME, tx, |_, _| {});
        StreamTransport {
            writer: Some(Box::new(writer)),
            inbound: rx,
            name: name.into(),
        }
    }

    async fn write(&mut self, bytes: &[u8]) -> Result<(), TransportError> {
        let writer = self.writer.as_mut().ok_or_else(|| {
            TransportError::InputClosed(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "stream closed",
            ))
        })?;
        lines::write_within(writer, bytes, WRITE_TIMEOUT).await
    }
}

impl Transport for StreamTransport {
    fn send(&mut self, mut message: Vec<u8>) -> BoxFuture<'_, Result<(), TransportError>> {
        message.push(b'\n');
        Box::pin(async move { self.write(&message).await })
    }

    fn send_raw(&mut self, bytes: Vec<u8>) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move { self.write(&bytes).await })
    }

    fn recv(&mut self) -> BoxFuture<'_, Option<Inbound>> {
        Box::pin(self.inbound.recv())
    }

    fn close_input(&mut self) -> BoxFuture<'_, ()> {
        self.writer.take();
        Box::pin(async {})
    }

    /// Closing the server's input is the whole shutdown: there is no process to signal.
    fn shutdown(&mut self) -> BoxFuture<'_, ShutdownReport> {
        let start = Instant::now();
        Box::pin(async move {
            if let Some(mut w) = self.writer.take() {
                let _ = w.shutdown().await;
            }
            ShutdownReport {
                stage: ShutdownStage::Disconnected,
                exit: None,
                took: start.elapsed(),
            }
        })
    }

    fn stderr(&self) -> Option<&StderrLog> {
        None
    }

    fn describe(&self) -> String {
        self.name.clone()
    }
}
