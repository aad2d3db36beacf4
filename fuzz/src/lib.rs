//! Inputs and invariants for mcpcheck's cargo-fuzz targets. See `README.md`.

use std::fmt;

use arbitrary::{Arbitrary, Unstructured};

pub mod invariants;
pub mod scenario_parse;
pub mod schema_dispatch;
pub mod sse_events;

/// Largest `max_frame` the framing target tries: big enough for real messages, small
/// enough that libFuzzer's inputs (4 KiB by default) regularly cross it.
pub const MAX_FRAME_LIMIT: usize = 64 * 1024;

/// Input of `jsonrpc_framing`: a stdout stream as the reads that delivered it, and the
/// decoder's line limit.
///
/// `Debug` prints a Rust snippet, so a crash report can be pasted straight into a
/// regression test in `harness/tests/it/framing_props.rs`.
///
/// `Arbitrary` is written by hand so that a fuzz input is a 4-byte header followed by
/// the stream itself, verbatim: seed files stay readable, and libFuzzer's mutations of
/// the stream (and its dictionary tokens) land in the stream rather than in length
/// prefixes. The header:
///
/// | byte | meaning |
/// |------|---------|
/// | 0    | `< 0xC0`: `max_frame = 1 + (u16 % 512)` (small limits, 3 in 4); else `max_frame = 1 + u16` (up to 64 KiB) |
/// | 1-2  | the `u16`, little-endian |
/// | 3    | chunking: `0` pushes the stream in one chunk; otherwise seeds a generator of read sizes from 1 to 4096 bytes |
///
/// A shorter input is padded with zero bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct FramingInput {
    pub max_frame: usize,
    pub chunks: Vec<Vec<u8>>,
}

impl FramingInput {
    /// Reads the header and the stream (the rest of the input).
    pub fn from_bytes(data: &[u8]) -> Self {
        let mut header = [0u8; 4];
        let n = data.len().min(4);
        header[..n].copy_from_slice(&data[..n]);
        let stream = &data[n..];
        let x = usize::from(u16::from_le_bytes([header[1], header[2]]));
        let max_frame = if header[0] < 0xC0 { 1 + x % 512 } else { 1 + x };
        FramingInput {
            max_frame,
            chunks: split(stream, header[3]),
        }
    }

    /// The bytes `from_bytes` reads back as this input, if its chunking is one the header
    /// can express (one chunk); used to write seed files.
    pub fn to_bytes(max_frame: usize, stream: &[u8]) -> Vec<u8> {
        assert!((1..=MAX_FRAME_LIMIT).contains(&max_frame));
        let x = u16::try_from(max_frame - 1)
            .expect("checked above")
            .to_le_bytes();
        let mut out = vec![0xFF, x[0], x[1], 0];
        out.extend_from_slice(stream);
        out
    }
}

/// Splits the stream into reads of pseudo-random sizes (1 to 4096 bytes, log-uniform).
fn split(stream: &[u8], seed: u8) -> Vec<Vec<u8>> {
    if seed == 0 {
        return vec![stream.to_vec()];
    }
    let mut state = u32::from(seed).wrapping_mul(0x9E37_79B9) | 1;
    let mut chunks = Vec::new();
    let mut rest = stream;
    while !rest.is_empty() {
        // xorshift32
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let bits = (state >> 24) % 13;
        let size = 1 + (state as usize & ((1 << bits) - 1));
        let (head, tail) = rest.split_at(size.min(rest.len()));
        chunks.push(head.to_vec());
        rest = tail;
    }
    chunks
}

impl<'a> Arbitrary<'a> for FramingInput {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let len = u.arbitrary_len::<u8>()?;
        Ok(Self::from_bytes(u.bytes(len)?))
    }

    fn arbitrary_take_rest(u: Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Self::from_bytes(u.take_rest()))
    }
}

impl fmt::Debug for FramingInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "FramingInput {{ max_frame: {}, chunks: {} }}",
            self.max_frame,
            self.chunks.len()
        )?;
        writeln!(
            f,
            "// reproducer, for harness/tests/it/framing_props.rs (mod regressions):"
        )?;
        writeln!(f, "let max_frame = {};", self.max_frame)?;
        writeln!(f, "let chunks: Vec<Vec<u8>> = vec![")?;
        for chunk in &self.chunks {
            writeln!(f, "    b\"{}\".to_vec(),", escape(chunk))?;
        }
        writeln!(f, "];")?;
        write!(f, "check(max_frame, &chunks);")
    }
}

/// Input of `sse_events`: an SSE response body as the reads that delivered it, and the
/// frame limit. The bytes are read exactly as [`FramingInput`]'s (the same 4-byte header),
/// so seeds and dictionary tokens work the same way; `Debug` prints a reproducer for
/// `harness/tests/it/sse_events_props.rs`.
#[derive(Clone, PartialEq, Eq)]
pub struct SseInput(pub FramingInput);

impl<'a> Arbitrary<'a> for SseInput {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        FramingInput::arbitrary(u).map(SseInput)
    }

    fn arbitrary_take_rest(u: Unstructured<'a>) -> arbitrary::Result<Self> {
        FramingInput::arbitrary_take_rest(u).map(SseInput)
    }
}

impl fmt::Debug for SseInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let FramingInput { max_frame, chunks } = &self.0;
        writeln!(f, "SseInput {{ max_frame: {max_frame}, chunks: {} }}", chunks.len())?;
        writeln!(
            f,
            "// reproducer, for harness/tests/it/sse_events_props.rs (mod regressions):"
        )?;
        writeln!(f, "let max_frame = {max_frame};")?;
        writeln!(f, "let chunks: Vec<Vec<u8>> = vec![")?;
        for chunk in chunks {
            writeln!(f, "    b\"{}\".to_vec(),", escape(chunk))?;
        }
        writeln!(f, "];")?;
        write!(f, "check(max_frame, &chunks);")
    }
}

/// The bytes as the inside of a Rust byte-string literal.
pub fn escape(bytes: &[u8]) -> String {
    bytes
        .iter()
        .flat_map(|&b| std::ascii::escape_default(b))
        .map(char::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_chunks_cover_the_stream() {
        let stream = b"{\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n".repeat(300);
        let input = FramingInput::from_bytes(&FramingInput::to_bytes(4096, &stream));
        assert_eq!((input.max_frame, input.chunks.len()), (4096, 1));
        for seed in 1..=255u8 {
            let chunks = split(&stream, seed);
            assert_eq!(chunks.concat(), stream);
            assert!(chunks.iter().all(|c| (1..=4096).contains(&c.len())));
        }
        assert_eq!(
            FramingInput::from_bytes(&[0x10, 0xFF, 0xFF]).max_frame,
            1 + 0xFFFF % 512
        );
        assert_eq!(FramingInput::from_bytes(&[]).chunks, vec![Vec::<u8>::new()]);
    }
}
