//! TCP connections that acknowledge what they receive at once (Linux `TCP_QUICKACK`).
//!
//! Many small MCP servers (Python's `http.server`, most hand-written ones) write a
//! response's headers and its body in two sends without `TCP_NODELAY`. On a kept-alive
//! connection the second send waits (Nagle) for the ACK of the first, and the client's
//! kernel, having settled into a request-response rhythm, delays that ACK by its 40 ms
//! minimum: every exchange then costs 40 ms the server never asked for. An immediate ACK
//! removes the wait. The kernel leaves quick-ACK mode again on its own, so it is asked for
//! after every read and every write (benches/README.md, "The 40 ms per exchange").

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use hyper::Uri;
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// Opens plain TCP connections whose streams ACK at once ([`QuickAckStream`]).
#[derive(Clone, Debug)]
pub(super) struct QuickAckConnector {
    inner: HttpConnector,
}

impl QuickAckConnector {
    /// A connector with `TCP_NODELAY` (mcpcheck's own small writes leave at once) and a
    /// limit on the time to connect.
    pub(super) fn new(connect_timeout: std::time::Duration) -> Self {
        let mut inner = HttpConnector::new();
        inner.set_nodelay(true);
        inner.set_connect_timeout(Some(connect_timeout));
        QuickAckConnector { inner }
    }
}

type Connecting = Pin<
    Box<
        dyn Future<Output = Result<QuickAckStream, Box<dyn std::error::Error + Send + Sync>>>
            + Send,
    >,
>;

impl tower_service::Service<Uri> for QuickAckConnector {
    type Response = QuickAckStream;
    type Error = Box<dyn std::error::Error + Send + Sync>;
    type Future = Connecting;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let connecting = self.inner.call(uri);
        Box::pin(async move {
            let io = connecting.await?;
            let stream = QuickAckStream { io };
            stream.quick_ack();
            Ok(stream)
        })
    }
}

/// A TCP stream that asks for quick-ACK mode after every read and write.
#[derive(Debug)]
pub(super) struct QuickAckStream {
    io: TokioIo<TcpStream>,
}

impl QuickAckStream {
    /// Re-enters quick-ACK mode. A failure changes nothing but the timing, so it is
    /// ignored; off Linux there is no such option and exchanges keep the kernel's rhythm.
    fn quick_ack(&self) {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        let _ = socket2::SockRef::from(self.io.inner()).set_tcp_quickack(true);
    }
}

impl Read for QuickAckStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_read(cx, buf);
        if polled.is_ready() {
            this.quick_ack();
        }
        polled
    }
}

impl Write for QuickAckStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_write(cx, buf);
        if polled.is_ready() {
            this.quick_ack();
        }
        polled
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        if polled.is_ready() {
            this.quick_ack();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

impl Connection for QuickAckStream {
    fn connected(&self) -> Connected {
        self.io.connected()
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tower_service::Service;

    /// Three request-response rounds: the server writes, the client reads and answers at
    /// once, the rhythm in which Linux starts delaying ACKs ("pingpong" mode).
    async fn rounds(
        client: &mut (impl tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin),
        server: &mut TcpStream,
    ) {
        let mut byte = [0u8; 1];
        for _ in 0..3 {
            server.write_all(b"x").await.unwrap();
            client.read_exact(&mut byte).await.unwrap();
            client.write_all(b"y").await.unwrap();
            server.read_exact(&mut byte).await.unwrap();
        }
    }

    fn quick_ack_mode(stream: &TcpStream) -> bool {
        socket2::SockRef::from(stream).tcp_quickack().unwrap()
    }

    #[tokio::test]
    async fn the_stream_stays_in_quick_ack_mode_where_a_plain_one_leaves_it() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();

        // The control: a plain socket in that rhythm delays its ACKs.
        let mut plain = TcpStream::connect(addr).await.unwrap();
        let (mut server, _) = listener.accept().await.unwrap();
        rounds(&mut plain, &mut server).await;
        assert!(
            !quick_ack_mode(&plain),
            "the kernel never left quick-ACK mode"
        );

        let uri: Uri = format!("http://{addr}/").parse().unwrap();
        let stream = QuickAckConnector::new(std::time::Duration::from_secs(5))
            .call(uri)
            .await
            .unwrap();
        let (mut server, _) = listener.accept().await.unwrap();
        let mut io = TokioIo::new(stream);
        rounds(&mut io, &mut server).await;
        assert!(quick_ack_mode(io.inner().io.inner()));
    }
}
