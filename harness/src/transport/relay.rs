//! The local channel between `mcpcheck client` and the `mcpcheck mock` process a stdio
//! client spawns as its server.
//!
//! A stdio client starts its server itself, so mcpcheck cannot hand it a pipe: the client
//! runs `mcpcheck mock --connect PATH` (the `{mock}` placeholder of its command), which
//! copies its stdin to a Unix socket at PATH and the socket to its stdout, byte for byte.
//! The running `mcpcheck client` listens there and reads the client's lines as stdio
//! frames; what it writes back reaches the client's stdin unchanged.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;

use super::framing::DEFAULT_MAX_FRAME;
use super::{Inbound, lines};

/// How long one line may take to reach a client that stopped reading.
const WRITE_STALL: Duration = Duration::from_secs(10);

/// A listening socket in the temporary directory, removed when dropped.
#[derive(Debug)]
pub struct RelayListener {
    path: PathBuf,
    listener: UnixListener,
}

/// One relayed connection: the client's lines in, lines out to it.
#[derive(Debug)]
pub struct LineConn {
    inbound: mpsc::Receiver<Inbound>,
    outbound: mpsc::UnboundedSender<String>,
}

impl RelayListener {
    /// Listens on a fresh socket path of this process.
    pub fn bind() -> std::io::Result<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("mcpcheck-{}-{n}.sock", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path)?;
        Ok(RelayListener { path, listener })
    }

    /// The socket's path, for `mcpcheck mock --connect`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next connection, or `None` once `deadline` passes.
    pub async fn accept(&self, deadline: tokio::time::Instant) -> Option<LineConn> {
        let (stream, _) = tokio::time::timeout_at(deadline, self.listener.accept())
            .await
            .ok()?
            .ok()?;
        Some(LineConn::new(stream))
    }
}

impl Drop for RelayListener {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl LineConn {
    fn new(stream: UnixStream) -> Self {
        let (reader, mut writer) = stream.into_split();
        let (tx, inbound) = mpsc::channel(1024);
        lines::spawn_reader(reader, DEFAULT_MAX_FRAME, tx, |_, _| {});
        let (outbound, mut lines_out) = mpsc::unbounded_channel::<String>();
        tokio::spawn(async move {
            while let Some(line) = lines_out.recv().await {
                let bytes = format!("{line}\n");
                if lines::write_within(&mut writer, bytes.as_bytes(), WRITE_STALL)
                    .await
                    .is_err()
                {
                    break;
                }
            }
            let _ = writer.shutdown().await;
        });
        LineConn { inbound, outbound }
    }

    /// What the client sent next, or `None` once `deadline` passes.
    pub async fn next(&mut self, deadline: tokio::time::Instant) -> Option<Inbound> {
        tokio::time::timeout_at(deadline, self.inbound.recv())
            .await
            .ok()
            .flatten()
    }

    /// A sender of lines to the client (the newline is added).
    pub fn sender(&self) -> mpsc::UnboundedSender<String> {
        self.outbound.clone()
    }
}

/// `mcpcheck mock --connect PATH`: copies stdin to the socket and the socket to stdout
/// until either side ends.
pub async fn pipe(path: &Path) -> std::io::Result<()> {
    let stream = UnixStream::connect(path).await?;
    let (mut from_socket, mut to_socket) = stream.into_split();
    let up = async {
        let mut stdin = tokio::io::stdin();
        let copied = tokio::io::copy(&mut stdin, &mut to_socket).await;
        let _ = to_socket.shutdown().await;
        copied
    };
    let down = async {
        let mut stdout = tokio::io::stdout();
        let copied = tokio::io::copy(&mut from_socket, &mut stdout).await;
        let _ = stdout.flush().await;
        copied
    };
    // The client closing our stdin ends the session; so does mcpcheck closing the socket.
    tokio::select! {
        r = up => r.map(drop),
        r = down => r.map(drop),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_go_both_ways_through_the_socket() {
        let listener = RelayListener::bind().unwrap();
        let path = listener.path().to_owned();
        let peer = tokio::spawn(async move {
            let stream = UnixStream::connect(&path).await.unwrap();
            let (mut r, mut w) = stream.into_split();
            w.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n")
                .await
                .unwrap();
            let mut got = vec![0u8; 64];
            let n = tokio::io::AsyncReadExt::read(&mut r, &mut got)
                .await
                .unwrap();
            String::from_utf8_lossy(&got[..n]).into_owned()
        });
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        let mut conn = listener.accept(deadline).await.unwrap();
        let Some(Inbound::Frame(frame)) = conn.next(deadline).await else {
            panic!("a frame")
        };
        assert_eq!(frame.value["method"], "x");
        conn.sender().send("{\"ok\":true}".into()).unwrap();
        assert_eq!(peer.await.unwrap(), "{\"ok\":true}\n");
        let path = listener.path().to_owned();
        drop(listener);
        assert!(!path.exists(), "the socket file goes with the listener");
    }
}
