//! NDJSON decoder throughput (MB/s) on a ~100 MB stdout stream of realistic MCP traffic:
//! initialize results, tools/list results with several tools and input schemas, tool
//! results, requests and notifications, 100 B to 20 KB per message. The stream is built
//! once, deterministically, and fed in 64 KiB reads as the stdio transport reads it.
//!
//! Run: `cargo bench -p mcpcheck --bench framing`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use mcpcheck::protocol::classify;
use mcpcheck::transport::framing::{DEFAULT_MAX_FRAME, Decoded, NdjsonDecoder};
use serde_json::{Value, json};

const STREAM_BYTES: usize = 100 * 1024 * 1024;
/// The stdio transport's read buffer (`transport/stdio.rs`).
const READ: usize = 64 * 1024;

/// splitmix64: a fixed seed gives the same stream on every run and machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Text of `min` to `min + spread` bytes.
    fn text_between(&mut self, min: usize, spread: usize) -> String {
        let len = min + self.below(spread);
        self.text(len)
    }

    /// Readable text of `len` bytes or so, with the odd escape and non-ASCII character.
    fn text(&mut self, len: usize) -> String {
        const WORDS: [&str; 12] = [
            "the",
            "server",
            "returned",
            "result",
            "résumé",
            "file",
            "line\n",
            "\"quoted\"",
            "tab\t",
            "données",
            "path/to/x",
            "✓",
        ];
        let mut s = String::with_capacity(len + 16);
        while s.len() < len {
            s.push_str(WORDS[self.below(WORDS.len())]);
            s.push(' ');
        }
        s
    }
}

fn tool(rng: &mut Rng, i: usize) -> Value {
    let kinds = ["string", "integer", "number", "boolean"];
    let properties: serde_json::Map<String, Value> = (0..1 + rng.below(8))
        .map(|p| {
            let description = rng.text_between(20, 80);
            (
                format!("arg{p}"),
                json!({"type": kinds[rng.below(kinds.len())], "description": description}),
            )
        })
        .collect();
    json!({
        "name": format!("tool_{i}"),
        "description": rng.text_between(40, 200),
        "inputSchema": {"type": "object", "properties": properties, "required": ["arg0"]},
        "annotations": {"readOnlyHint": rng.below(2) == 0},
    })
}

/// One message of the mix, serialized on one line.
fn message(rng: &mut Rng, id: u64) -> Value {
    match rng.below(100) {
        // Notifications: progress and log messages, ~100-300 B.
        0..=34 => json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": id, "progress": rng.below(100), "total": 100}}),
        35..=49 => json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "logger": "server", "data": rng.text_between(40, 200)}}),
        // Requests from the client side of the transcript, ~150 B.
        50..=59 => json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": format!("tool_{}", rng.below(20)), "arguments": {"arg0": rng.text(30)}}}),
        // Tool results with text content, 200 B to 20 KB.
        60..=84 => {
            let len = 100 << rng.below(8); // 100 B .. 12.8 KB, log-uniform
            json!({"jsonrpc": "2.0", "id": id, "result": {
                "content": [{"type": "text", "text": rng.text(len)}], "isError": false}})
        }
        // tools/list results: 3 to 20 tools with input schemas, ~1-20 KB.
        85..=94 => {
            let tools: Vec<Value> = (0..3 + rng.below(18)).map(|i| tool(rng, i)).collect();
            json!({"jsonrpc": "2.0", "id": id, "result": {"tools": tools}})
        }
        // initialize results, ~400 B.
        _ => json!({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {"listChanged": true}, "resources": {"subscribe": true}, "logging": {}},
            "serverInfo": {"name": "bench-server", "version": "1.2.3"},
            "instructions": rng.text(120)}}),
    }
}

/// The whole stream and its message count.
fn stream() -> (Vec<u8>, usize) {
    let mut rng = Rng(0x6D63_7063_6865_636B);
    let mut out = Vec::with_capacity(STREAM_BYTES + 64 * 1024);
    let mut sizes = Vec::new();
    while out.len() < STREAM_BYTES {
        let start = out.len();
        serde_json::to_writer(&mut out, &message(&mut rng, sizes.len() as u64))
            .expect("values serialize");
        out.push(b'\n');
        sizes.push(out.len() - start);
    }
    sizes.sort_unstable();
    let pct = |p: usize| sizes[(sizes.len() - 1) * p / 100];
    println!(
        "stream: {} bytes, {} messages; message size min {} / p50 {} / p90 {} / p99 {} / max {} bytes",
        out.len(),
        sizes.len(),
        pct(0),
        pct(50),
        pct(90),
        pct(99),
        pct(100)
    );
    (out, sizes.len())
}

fn decode(input: &[u8]) -> usize {
    let mut decoder = NdjsonDecoder::new(DEFAULT_MAX_FRAME);
    let mut frames = 0;
    let mut count = |out: Vec<Decoded>| {
        frames += out
            .iter()
            .filter(|d| matches!(d, Decoded::Frame(_)))
            .count()
    };
    for read in input.chunks(READ) {
        count(decoder.push(read));
    }
    count(decoder.finish());
    frames
}

fn decode_and_classify(input: &[u8]) -> usize {
    let mut decoder = NdjsonDecoder::new(DEFAULT_MAX_FRAME);
    let mut messages = 0;
    let mut classify_all = |out: Vec<Decoded>| {
        for d in out {
            if let Decoded::Frame(f) = d {
                black_box(classify(&f.value, f.text()));
                messages += 1;
            }
        }
    };
    for read in input.chunks(READ) {
        classify_all(decoder.push(read));
    }
    classify_all(decoder.finish());
    messages
}

fn framing(c: &mut Criterion) {
    let (input, messages) = stream();
    assert_eq!(
        decode(&input),
        messages,
        "every message must decode to one frame"
    );

    let mut group = c.benchmark_group("framing");
    group
        .throughput(Throughput::Bytes(input.len() as u64))
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(2))
        .measurement_time(Duration::from_secs(8));
    group.bench_function(
        format!(
            "ndjson decode, 64 KiB reads ({} MB, {messages} messages)",
            input.len() >> 20
        ),
        |b| b.iter(|| decode(black_box(&input))),
    );
    group.bench_function("ndjson decode + classify", |b| {
        b.iter(|| decode_and_classify(black_box(&input)))
    });
    group.finish();
}

criterion_group!(benches, framing);
criterion_main!(benches);
