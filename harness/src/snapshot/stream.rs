//! A transport over an in-process stream pair (e.g. `tokio::io::duplex`), so a Rust
//! server's tests can snapshot it without spawning a process. Newline-delimited JSON, as on
//! stdio, decoded by the same [`NdjsonDecoder`].

use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::transport::framing::{DEFAULT_MAX_FRAME, Decoded, NdjsonDecoder};
use crate::transport::{
    BoxFuture, Inbound, ShutdownReport, ShutdownStage, StderrLog, Transport, TransportError,
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
        tokio::spawn(async move {
            let mut reader = reader;
            let mut decoder = NdjsonDecoder::new(DEFAULT_MAX_FRAME);
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = match reader.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                for item in decoder.push(&buf[..n]) {
                    if tx.send(inbound(item)).await.is_err() {
                        return;
                    }
                }
            }
            for item in decoder.finish() {
                let _ = tx.send(inbound(item)).await;
            }
            let _ = tx.send(Inbound::Closed).await;
        });
        StreamTransport {
            writer: Some(Box::new(writer)),
            inbound: rx,
            name: name.into(),
        }
    }

    async fn write(&mut self, bytes: &[u8]) -> Result<(), TransportError> {
        let closed = || {
            TransportError::InputClosed(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "stream closed",
            ))
        };
        let writer = self.writer.as_mut().ok_or_else(closed)?;
        let write = async {
            writer.write_all(bytes).await?;
            writer.flush().await
        };
        match tokio::time::timeout(WRITE_TIMEOUT, write).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(TransportError::InputClosed(e)),
            Err(_) => Err(TransportError::WriteTimeout(WRITE_TIMEOUT)),
        }
    }
}

fn inbound(item: Decoded) -> Inbound {
    match item {
        Decoded::Frame(f) => Inbound::Frame(f),
        Decoded::Issue(i) => Inbound::Framing(i),
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
