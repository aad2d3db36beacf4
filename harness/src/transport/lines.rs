//! Newline-delimited JSON over a byte stream, both halves: the reader task that turns what
//! arrives into [`Inbound`] items, and the bounded write. The stdio transport (a child's
//! stdout and stdin) and the in-process [`stream`](super::stream) transport share them, so
//! a frame is cut, and a stuck peer judged, the same way on both.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use super::framing::{Decoded, NdjsonDecoder};
use super::{Inbound, TransportError};

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

/// Writes and flushes `bytes` within `timeout`: a peer that stops reading fills the pipe,
/// and the write would otherwise wait for ever.
pub(crate) async fn write_within<W>(
    writer: &mut W,
    bytes: &[u8],
    timeout: Duration,
) -> Result<(), TransportError>
where
    W: AsyncWrite + Unpin + ?Sized,
{
    let write = async {
        writer.write_all(bytes).await?;
        writer.flush().await
    };
    match tokio::time::timeout(timeout, write).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(TransportError::InputClosed(e)),
        Err(_) => Err(TransportError::WriteTimeout(timeout)),
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

    /// A peer that never reads: the write gives up at its timeout instead of waiting.
    #[tokio::test]
    async fn a_write_nobody_reads_times_out() {
        let (_peer, mut ours) = tokio::io::duplex(8);
        let err = write_within(&mut ours, &[b'x'; 64], Duration::from_millis(50))
            .await
            .unwrap_err();
        assert!(matches!(err, TransportError::WriteTimeout(_)), "{err:?}");
    }
}
