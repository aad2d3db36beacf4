//! TCP connections that acknowledge what they receive at once (Linux `TCP_QUICKACK`).
//!
//! Many small MCP servers (Python's `http.server`, most hand-written ones) write a
//! response's headers and its body in two sends without `TCP_NODELAY`. On a kept-alive
//! connection the second send waits (Nagle) for the ACK of the first, and the client's
//! kernel, having settled into a request-response rhythm, delays that ACK by its 40 ms
//! minimum: every exchange then costs 40 ms the server never asked for. An immediate ACK
//! removes the wait. The kernel leaves quick-ACK mode again on its own, so it is asked for
//! after every read and every write (benches/README.md, "The 40 ms per exchange").
//!
//! A server with a short listen backlog (Python's `http.server` keeps 5) drops the SYN of
//! a connection that arrives while its queue is full, and the kernel sends it again only
//! after a second. Targets are loopback, where a SYN that is not answered at once was
//! dropped: a connection attempt that gets no answer within [`FIRST_ATTEMPT`] is abandoned
//! and made again at once, each wait twice the one before.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::Uri;
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::client::legacy::connect::{Connected, Connection, HttpConnector};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// How long the first attempt to connect waits for an answer before it is made again.
pub(super) const FIRST_ATTEMPT: Duration = Duration::from_millis(100);

/// Opens plain TCP connections whose streams ACK at once ([`QuickAckStream`]).
#[derive(Clone, Debug)]
pub(super) struct QuickAckConnector {
    inner: HttpConnector,
    connect_timeout: Duration,
}

impl QuickAckConnector {
    /// A connector with `TCP_NODELAY` (mcpcheck's own small writes leave at once) and a
    /// limit on the time to connect.
    pub(super) fn new(connect_timeout: Duration) -> Self {
        let mut inner = HttpConnector::new();
        inner.set_nodelay(true);
        QuickAckConnector {
            inner,
            connect_timeout,
        }
    }
}

/// Runs `attempt` until one answers, within `within` in all: an attempt that has no
/// answer after [`FIRST_ATTEMPT`] (then twice that, and so on) is dropped for a new one;
/// the last is given what is left of `within` (it must end by then on its own) and its
/// outcome is the result, as is the first error.
async fn with_retries<T, E, Fut>(
    within: Duration,
    mut attempt: impl FnMut(Duration) -> Fut,
) -> Result<T, E>
where
    Fut: Future<Output = Result<T, E>>,
{
    let deadline = tokio::time::Instant::now() + within;
    let mut wait = FIRST_ATTEMPT;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        if wait >= left {
            return attempt(left).await;
        }
        if let Ok(answered) = tokio::time::timeout(wait, attempt(left)).await {
            return answered;
        }
        wait *= 2;
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
        let (inner, within) = (self.inner.clone(), self.connect_timeout);
        Box::pin(async move {
            let io = with_retries(within, |left| {
                let mut connector = inner.clone();
                connector.set_connect_timeout(Some(left));
                connector.call(uri.clone())
            })
            .await?;
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

    #[tokio::test(start_paused = true)]
    async fn an_attempt_without_an_answer_is_made_again() {
        let mut attempts = 0;
        let connected = with_retries(Duration::from_secs(5), |_| {
            attempts += 1;
            let dropped = attempts == 1;
            async move {
                if dropped {
                    // Its SYN was dropped: no answer until the kernel resends it.
                    std::future::pending::<()>().await;
                }
                Ok::<_, io::Error>(attempts)
            }
        })
        .await;
        assert_eq!(connected.unwrap(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn the_last_attempt_has_what_is_left_and_decides() {
        let mut given = Vec::new();
        let ended = with_retries(Duration::from_millis(250), |left| {
            given.push(left);
            async { std::future::pending::<Result<(), io::Error>>().await }
        });
        // The attempts never answer: the last one would end on its own connect timeout.
        let cut = tokio::time::timeout(Duration::from_secs(1), ended).await;
        assert!(cut.is_err());
        // 100 ms, then the 150 ms left (200 ms would pass the deadline).
        assert_eq!(given.len(), 2);
        assert_eq!(given[1], Duration::from_millis(150));
    }

    #[tokio::test]
    async fn a_refused_connection_is_not_tried_again() {
        let mut attempts = 0;
        let refused = with_retries(Duration::from_secs(5), |_| {
            attempts += 1;
            async { Err::<(), _>(io::Error::from(io::ErrorKind::ConnectionRefused)) }
        })
        .await;
        assert!(refused.is_err());
        assert_eq!(attempts, 1);
    }

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
