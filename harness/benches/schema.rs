//! Schema validation speed: validations per second of a realistic `ListToolsResult`
//! (20 tools with input and output schemas and annotations) against the 2025-11-25 and
//! 2025-06-18 schemas, warm (validator compiled and cached, as in a session), plus one
//! cold measurement: load the schema file, compile the validator, validate once.
//!
//! Schemas come from `$MCPCHECK_SCHEMA_DIR`, else `../shared/mcp-schema` relative to the
//! workspace root. Run: `cargo bench -p mcpcheck --bench schema`.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use mcpcheck::protocol::Revision;
use mcpcheck::schema::{Located, Origin, SchemaSet, SchemaTarget, SearchPath};
use serde_json::{Value, json};

const REVISIONS: [Revision; 2] = [Revision::V2025_11_25, Revision::V2025_06_18];

fn schema_dir() -> PathBuf {
    match std::env::var_os("MCPCHECK_SCHEMA_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        // CARGO_MANIFEST_DIR is harness/; its parent is the workspace root.
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/mcp-schema"),
    }
}

fn locate(revision: Revision) -> Located {
    let search = SearchPath {
        dirs: vec![(schema_dir(), Origin::Env)],
    };
    search
        .locate(revision)
        .unwrap_or_else(|e| panic!("{e} (set MCPCHECK_SCHEMA_DIR)"))
}

/// A `tools/list` result as a real server sends it: 20 tools of varied shape.
fn list_tools_result() -> Value {
    let kinds = ["string", "integer", "number", "boolean"];
    let tools: Vec<Value> = (0..20)
        .map(|i| {
            let properties: serde_json::Map<String, Value> = (0..(2 + i % 6))
                .map(|p| {
                    let mut prop = json!({
                        "type": kinds[(i + p) % kinds.len()],
                        "description": format!("Parameter {p} of tool {i}: what it means and its unit."),
                    });
                    if p == 0 && i % 3 == 0 {
                        prop = json!({"type": "string", "enum": ["fast", "accurate", "balanced"], "default": "balanced"});
                    }
                    if p == 1 && i % 4 == 0 {
                        prop = json!({"type": "array", "items": {"type": "string"}, "maxItems": 16});
                    }
                    (format!("param_{p}"), prop)
                })
                .collect();
            let mut tool = json!({
                "name": format!("tool_{i:02}"),
                "title": format!("Tool number {i}"),
                "description": format!(
                    "Does task {i}. Reads its inputs, calls the backing service, and returns a \
                     structured summary; safe to retry."
                ),
                "inputSchema": {
                    "type": "object",
                    "properties": properties,
                    "required": ["param_0"],
                    "additionalProperties": false,
                },
                "annotations": {
                    "title": format!("Tool {i}"),
                    "readOnlyHint": i % 2 == 0,
                    "destructiveHint": i % 5 == 0,
                    "idempotentHint": true,
                    "openWorldHint": i % 3 == 0,
                },
            });
            if i % 2 == 1 {
                tool["outputSchema"] = json!({
                    "type": "object",
                    "properties": {"summary": {"type": "string"}, "count": {"type": "integer"}},
                    "required": ["summary"],
                });
            }
            tool
        })
        .collect();
    json!({"tools": tools, "nextCursor": "page-2"})
}

fn warm(c: &mut Criterion) {
    let instance = list_tools_result();
    let target = SchemaTarget::Definition("ListToolsResult".to_owned());
    let mut group = c.benchmark_group("schema/validate ListToolsResult (20 tools)");
    group
        .throughput(Throughput::Elements(1))
        .sample_size(50)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    for revision in REVISIONS {
        let set = SchemaSet::load(revision, locate(revision)).expect("schema loads");
        let violations = set.validate(&target, &instance).expect("schema compiles");
        assert!(
            violations.is_empty(),
            "the benchmark instance must be valid for {revision:?}: {violations:?}"
        );
        group.bench_function(revision.as_str(), |b| {
            b.iter(|| {
                set.validate(&target, black_box(&instance))
                    .expect("compiled")
                    .len()
            })
        });
    }
    group.finish();
}

fn cold(c: &mut Criterion) {
    let instance = list_tools_result();
    let target = SchemaTarget::Definition("ListToolsResult".to_owned());
    let mut group = c.benchmark_group("schema/cold: load + compile + first validate");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    for revision in REVISIONS {
        let located = locate(revision);
        group.bench_function(revision.as_str(), |b| {
            b.iter_batched(
                || located.clone(),
                |located| {
                    let set = SchemaSet::load(revision, located).expect("schema loads");
                    set.validate(&target, black_box(&instance))
                        .expect("compiles")
                        .len()
                },
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, warm, cold);
criterion_main!(benches);
