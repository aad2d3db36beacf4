//! Newline-delimited JSON over a byte stream, both halves: the reader task that turns what
//! arrives into [`Inbound`] items, and the bounded write. The stdio transport (a child's
//! stdout and stdin) and the in-process [`stream`](super::stream) transport share them, so
//! a frame is cut, and a stuck peer judged, the same way on both.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use super::framing::{Decoded, NdjsonDecoder};
use super::{Inbound, Stalled, TransportError, WriteStall};

/// Bytes read at a time.
const READ_CHUNK: usize = 64 * 1024;

impl From<Decoded> for Inbound {
    fn from(item: Decoded) -> Inbound {
        match item {
            Decoded::Frame(f) => Inbound::Frame(f),
            Decoded::Issue(i) => Inbound::Framing(i),
        }
    }
}

/// Reads `reader` until it ends, on a task of its own (so the peer never blocks on a full
/// pipe): every frame and framing issue goes to `tx` in order, then what an unterminated
/// last line leaves, then [`Inbound::Closed`]. `watch` sees each chunk, and the decoder
/// after taking it in, before the chunk's frames are sent (stdio keeps its line timings
/// and the unterminated line there). Stops early when `tx`'s receiver is gone.
pub(crate) fn spawn_reader<R, W>(
    mut reader: R,
    max_frame: usize,
    tx: mpsc::Sender<Inbound>,
    mut watch: W,
) where
    R: AsyncRead + Send + Unpin + 'static,
    W: FnMut(&[u8], &NdjsonDecoder) + Send + 'static,
{
    tokio::spawn(async move {
        let mut decoder = NdjsonDecoder::new(max_frame);
        let mut buf = vec![0u8; READ_CHUNK];
        loop {
            let n = match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let items = decoder.push(&buf[..n]);
            watch(&buf[..n], &decoder);
            for item in items {
                if tx.send(item.into()).await.is_err() {
                    return;
                }
            }
        }
        for item in decoder.finish() {
            let _ = tx.send(item.into()).await;
        }
        let _ = tx.send(Inbound::Closed).await;
    });
}

/// How many times the stall wait a whole write may take: a server that keeps taking bytes
/// is reading, however slowly (a runtime starved of CPU on a busy machine), but one that
/// takes a byte now and then must not hold the run for ever.
const WHOLE_WRITE_STALLS: u32 = 6;

/// Writes and flushes `bytes`, giving up when the peer takes no byte for `stall`, or has
/// not taken all of them in [`WHOLE_WRITE_STALLS`] times that: a peer that stops reading
/// fills the pipe, and the write would otherwise wait for ever. Progress, not the size of
/// the write, decides: a 100 KB burst to a slow but reading server is not a stuck one.
pub(crate) async fn write_within<W>(
    writer: &mut W,
    bytes: &[u8],
    stall: Duration,
) -> Result<(), TransportError>
where
    W: AsyncWrite + Unpin + ?Sized,
{
    let whole = stall * WHOLE_WRITE_STALLS;
    let end = tokio::time::Instant::now() + whole;
    let give_up = |how, taken| {
        let waited = match how {
            Stalled::Idle => stall,
            Stalled::Slow => whole,
        };
        TransportError::WriteTimeout(WriteStall {
            how,
            taken,
            total: bytes.len(),
            waited,
        })
    };
    let mut taken = 0;
    while taken < bytes.len() {
        let wait = stall.min(end.saturating_duration_since(tokio::time::Instant::now()));
        match tokio::time::timeout(wait, writer.write(&bytes[taken..])).await {
            Ok(Ok(0)) => {
                let closed = std::io::Error::from(std::io::ErrorKind::WriteZero);
                return Err(TransportError::InputClosed(closed));
            }
            Ok(Ok(n)) => taken += n,
            Ok(Err(e)) => return Err(TransportError::InputClosed(e)),
            Err(_) if wait < stall => return Err(give_up(Stalled::Slow, taken)),
            Err(_) => return Err(give_up(Stalled::Idle, taken)),
        }
    }
    match tokio::time::timeout(stall, writer.flush()).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(TransportError::InputClosed(e)),
        Err(_) => Err(give_up(Stalled::Idle, taken)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::framing::DEFAULT_MAX_FRAME;

    /// Frames cut across reads arrive whole and in order, a bad line is an issue in its
    /// place, an unterminated last line is reported, and `Closed` comes last.
    #[tokio::test]
    async fn reads_frames_in_order_then_what_is_left_then_closed() {
        let (mut peer, ours) = tokio::io::duplex(16);
        let (tx, mut rx) = mpsc::channel(16);
        let seen = std::sync::Arc::new(std::sync::Mutex::new(0usize));
        let counted = seen.clone();
        spawn_reader(ours, DEFAULT_MAX_FRAME, tx, move |chunk, _| {
            *counted.lock().unwrap() += chunk.len();
        });
        let input = b"{\"a\":1}\nnot json\n{\"b\":\n2}\n{\"c\"";
        peer.write_all(input).await.unwrap();
        drop(peer);
        let mut got = Vec::new();
        while let Some(item) = rx.recv().await {
            got.push(item);
        }
        let frames: Vec<String> = got
            .iter()
            .filter_map(|i| match i {
                Inbound::Frame(f) => Some(f.text().to_owned()),
                _ => None,
            })
            .collect();
        assert_eq!(frames, ["{\"a\":1}"], "{got:?}");
        let issues = got
            .iter()
            .filter(|i| matches!(i, Inbound::Framing(_)))
            .count();
        // `not json`, the object split over two lines (two bad lines), the unterminated end.
        assert_eq!(issues, 4, "{got:?}");
        assert_eq!(got.last(), Some(&Inbound::Closed), "{got:?}");
        assert_eq!(*seen.lock().unwrap(), input.len());
    }

    /// A peer that never reads: the write gives up at its stall wait instead of waiting,
    /// and says how much the peer took.
    #[tokio::test]
    async fn a_write_nobody_reads_times_out() {
        let (_peer, mut ours) = tokio::io::duplex(8);
        let err = write_within(&mut ours, &[b'x'; 64], Duration::from_millis(50))
            .await
            .unwrap_err();
        let TransportError::WriteTimeout(stall) = err else {
            panic!("{err:?}")
        };
        assert_eq!(
            (stall.how, stall.taken, stall.total),
            (Stalled::Idle, 8, 64)
        );
    }

    /// A peer that reads slowly but steadily gets the whole write, though it takes several
    /// times the stall wait; one that reads a byte now and then is given up on as slow.
    #[tokio::test]
    async fn progress_decides_not_the_time_the_whole_write_takes() {
        async fn read_every(mut peer: tokio::io::DuplexStream, pause: Duration, chunk: usize) {
            let mut buf = vec![0u8; chunk];
            loop {
                tokio::time::sleep(pause).await;
                if matches!(peer.read(&mut buf).await, Ok(0) | Err(_)) {
                    break;
                }
            }
        }
        let stall = Duration::from_millis(200);
        let (peer, mut ours) = tokio::io::duplex(16);
        let reader = tokio::spawn(read_every(peer, Duration::from_millis(20), 16));
        // 20 reads of 16 bytes, 20 ms apart: about 400 ms, twice the stall wait.
        write_within(&mut ours, &[b'x'; 320], stall).await.unwrap();
        drop(ours);
        reader.await.unwrap();

        let (peer, mut ours) = tokio::io::duplex(1);
        // A byte every 20 ms: never idle for 200 ms, but 320 bytes would take 6.4 s.
        let _reader = tokio::spawn(read_every(peer, Duration::from_millis(20), 1));
        let err = write_within(&mut ours, &[b'x'; 320], stall)
            .await
            .unwrap_err();
        let TransportError::WriteTimeout(stall) = err else {
            panic!("{err:?}")
        };
        assert_eq!(stall.how, Stalled::Slow, "{stall:?}");
        assert!(stall.taken > 1 && stall.taken < 320, "{stall:?}");
    }
}
