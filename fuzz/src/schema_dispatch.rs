//! Invariants of schema dispatch: a frame stream and a revision go through the real
//! session path (decode, classify, correlate, pick the definition for the method, validate)
//! with a transport that replays the frames. Checked by the libFuzzer target
//! (`fuzz/fuzz_targets/schema_dispatch.rs`) and by its proptest twin on stable
//! (`harness/tests/it/schema_dispatch_props.rs`, which includes this file with `#[path]`).
//!
//! This file must only use `std`, `mcpcheck`, `serde_json` and `tokio`, so that it compiles
//! in both crates.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use mcpcheck::check::rules;
use mcpcheck::protocol::{RequestId, Revision};
use mcpcheck::schema::{SchemaStore, SearchPath};
use mcpcheck::session::{Session, SessionConfig};
use mcpcheck::transport::{
    BoxFuture, Decoded, Inbound, NdjsonDecoder, ShutdownReport, ShutdownStage, StderrLog,
    Transport, TransportError,
};

/// A transport that delivers recorded items, then reports the output closed.
#[derive(Debug)]
pub struct Replay {
    items: VecDeque<Inbound>,
}

impl Replay {
    /// The items the stdio transport would deliver for this stdout stream.
    pub fn from_stream(stream: &[u8]) -> Self {
        let mut decoder = NdjsonDecoder::new(64 * 1024);
        let mut items: VecDeque<Inbound> = decoder
            .push(stream)
            .into_iter()
            .chain(decoder.finish())
            .map(|d| match d {
                Decoded::Frame(f) => Inbound::Frame(f),
                Decoded::Issue(i) => Inbound::Framing(i),
            })
            .collect();
        items.push_back(Inbound::Closed);
        Replay { items }
    }
}

impl Transport for Replay {
    fn send(&mut self, _message: Vec<u8>) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async { Ok(()) })
    }
    fn send_raw(&mut self, _bytes: Vec<u8>) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async { Ok(()) })
    }
    fn recv(&mut self) -> BoxFuture<'_, Option<Inbound>> {
        let item = self.items.pop_front();
        Box::pin(async move { item })
    }
    fn shutdown(&mut self) -> BoxFuture<'_, ShutdownReport> {
        Box::pin(async {
            ShutdownReport {
                stage: ShutdownStage::Disconnected,
                exit: None,
                took: Duration::ZERO,
            }
        })
    }
    fn stderr(&self) -> Option<&StderrLog> {
        None
    }
    fn describe(&self) -> String {
        "replayed frames".into()
    }
}

/// The official schemas: `$MCPCHECK_SCHEMA_DIR`, else `mcp-schema` beside the executable
/// (where ClusterFuzzLite's build.sh puts them), else `../shared/mcp-schema` beside the
/// repository. Loaded once; compiled validators are cached across inputs.
pub fn store() -> Arc<SchemaStore> {
    static STORE: OnceLock<Arc<SchemaStore>> = OnceLock::new();
    STORE
        .get_or_init(|| {
            let beside_exe = || {
                let dir = std::env::current_exe().ok()?.parent()?.join("mcp-schema");
                dir.is_dir().then_some(dir)
            };
            let dir = std::env::var_os("MCPCHECK_SCHEMA_DIR")
                .map(PathBuf::from)
                .or_else(beside_exe)
                .unwrap_or_else(|| {
                    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/mcp-schema")
                });
            let store = SchemaStore::new(SearchPath::standard(Some(&dir)));
            for rev in Revision::ALL {
                assert!(
                    store.get(rev).is_ok(),
                    "no {rev} schema under {}: set MCPCHECK_SCHEMA_DIR",
                    dir.display()
                );
            }
            Arc::new(store)
        })
        .clone()
}

/// Input: a revision and a method picked by two bytes, then the stdout stream.
pub fn split_input(data: &[u8]) -> (Revision, String, &[u8]) {
    let rev = Revision::ALL[usize::from(data.first().copied().unwrap_or(0)) % Revision::ALL.len()];
    let set = store().get(rev);
    let methods: Vec<String> = set
        .as_ref()
        .as_ref()
        .map(|s| s.methods().client_requests.keys().cloned().collect())
        .unwrap_or_default();
    let pick = usize::from(data.get(1).copied().unwrap_or(0));
    let method = methods
        .get(pick % methods.len().max(1))
        .cloned()
        .unwrap_or_else(|| "ping".into());
    (rev, method, data.get(2..).unwrap_or_default())
}

/// Runs the stream through a session that awaits `method` under ids 1 and "a", and
/// checks: no panic and no hang; every finding names a catalogued rule and links its
/// spec; its frame index is in the transcript; its pointer is a JSON pointer; the same
/// input gives the same findings.
pub fn check(revision: Revision, method: &str, stream: &[u8]) {
    let first = run(revision, method, stream);
    let transcript_len = first.1;
    for f in &first.0 {
        assert!(
            rules::by_id(&f.rule).is_some(),
            "finding of an unknown rule {:?}: {f:?}",
            f.rule
        );
        assert!(f.spec.starts_with("https://"), "no spec link: {f:?}");
        assert!(!f.message.is_empty(), "empty message: {f:?}");
        if let Some(i) = f.frame {
            assert!(
                i < transcript_len,
                "frame {i} beyond the transcript ({transcript_len}): {f:?}"
            );
        }
        if let Some(p) = &f.pointer {
            assert!(
                p.is_empty() || p.starts_with('/'),
                "not a JSON pointer: {p:?}"
            );
        }
    }
    let second = run(revision, method, stream);
    assert_eq!(first.0, second.0, "the same input gave other findings");
}

fn run(
    revision: Revision,
    method: &str,
    stream: &[u8],
) -> (Vec<mcpcheck::outcome::Finding>, usize) {
    thread_local! {
        static RT: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a tokio runtime");
    }
    RT.with(|rt| {
        rt.block_on(async {
            let config = SessionConfig {
                revision,
                ..SessionConfig::default()
            };
            let mut session = Session::new(
                Box::new(Replay::from_stream(stream)),
                store(),
                config,
                Instant::now(),
            );
            session.expect_reply(RequestId::int(1), method);
            session.expect_reply(RequestId::String("a".into()), method);
            // The replay never blocks; the window only bounds a bug that would loop.
            tokio::time::timeout(
                Duration::from_secs(10),
                session.pump(Duration::from_secs(5)),
            )
            .await
            .expect("the session kept reading after the output closed");
            let record = session.finish().await;
            (record.findings, record.transcript.entries().len())
        })
    })
}
