//! The three tools `mcpcheck mcp` lists: names, descriptions, input and output schemas,
//! annotations. Kept as JSON, the shape they take on the wire, and trimmed per revision
//! ([`listed`]) so that an older client sees no field its revision lacks.

use serde_json::{Value, json};

use crate::protocol::Revision;

/// Runs the conformance checks on a server.
pub const RUN_CHECKS: &str = "run_checks";
/// Lists the built-in scenarios.
pub const LIST_SCENARIOS: &str = "list_scenarios";
/// Explains a scenario or a rule id.
pub const EXPLAIN: &str = "explain";

/// The JSON report's schema (`reports/results.schema.json`, through the symlink
/// `harness/results.schema.json`, so the packaged crate carries a copy): `run_checks`
/// returns exactly that report as its structured content.
const REPORT_SCHEMA: &str = include_str!("../../../results.schema.json");

/// Every tool, as the newest revision lists it.
pub fn all() -> Vec<Value> {
    vec![run_checks(), list_scenarios(), explain()]
}

/// The tools as `revision` lists them: no `annotations` before 2025-03-26, no `title` or
/// `outputSchema` before 2025-06-18 (the schemas of those revisions do not have them).
pub fn listed(revision: Revision) -> Vec<Value> {
    all()
        .into_iter()
        .map(|mut tool| {
            if let Some(t) = tool.as_object_mut() {
                if revision < Revision::V2025_03_26 {
                    t.remove("annotations");
                }
                if revision < Revision::V2025_06_18 {
                    t.remove("title");
                    t.remove("outputSchema");
                }
            }
            tool
        })
        .collect()
}

/// The report schema, parsed. It is compiled into the binary and checked by a test, so a
/// parse failure is a build defect; it still degrades to an open object rather than a panic.
pub fn report_schema() -> Value {
    serde_json::from_str(REPORT_SCHEMA).unwrap_or_else(|_| json!({"type": "object"}))
}

fn run_checks() -> Value {
    json!({
        "name": RUN_CHECKS,
        "title": "Run MCP conformance checks",
        "description": "Runs mcpcheck's conformance suite against an MCP server and returns \
            the JSON report (format_version 2): a leg per protocol revision, each scenario's \
            verdict and every finding with its rule, spec section and evidence. Give either \
            `command` (the server's argv, spoken to over stdio) or `url` (Streamable HTTP on \
            a loopback host: 127.0.0.1, ::1 or localhost). The server is started and stopped \
            by a separate mcpcheck process, killed with its whole process group when \
            `timeout_seconds` runs out or the call is cancelled. A server that breaks rules \
            is a normal result (verdict fail); a server that cannot be checked at all (no \
            such program, bad arguments) is a tool error.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "command": {
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 1,
                    "description": "The server's command line, program first, run as is (no shell)."
                },
                "url": {
                    "type": "string",
                    "description": "A Streamable HTTP endpoint on a loopback host, e.g. http://127.0.0.1:8808/mcp."
                },
                "protocol_version": {
                    "type": "string",
                    "description": "Which revisions to check: one (2025-11-25), a comma-separated list, `all`, `auto` (the newest the server speaks) or `eras` (the default: one leg per era the server speaks)."
                },
                "include": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Run only scenarios whose id matches one of these globs, e.g. `tools/*`."
                },
                "call_tools": {
                    "type": "string",
                    "enum": ["readonly", "none", "all"],
                    "default": "readonly",
                    "description": "Which of the server's tools the checks may call: `readonly` (only tools annotated readOnlyHint), `none`, or `all` (except destructiveHint ones). As `mcpcheck run --call-tools`."
                },
                "timeout_seconds": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": super::checks::MAX_TIMEOUT_SECS,
                    "default": super::checks::DEFAULT_TIMEOUT_SECS,
                    "description": "The whole run's budget; when it passes the checker and the server are stopped."
                },
                "transcripts": {
                    "type": "boolean",
                    "default": false,
                    "description": "Keep every scenario's wire transcript in the report (large); by default they are left out."
                }
            },
            "additionalProperties": false
        },
        "outputSchema": report_schema(),
        "annotations": {
            "title": "Run MCP conformance checks",
            "readOnlyHint": false,
            "destructiveHint": false,
            "idempotentHint": false,
            "openWorldHint": false
        }
    })
}

fn list_scenarios() -> Value {
    json!({
        "name": LIST_SCENARIOS,
        "title": "List the built-in scenarios",
        "description": "The scenarios of mcpcheck's built-in server suite: id, title, area, \
            level (must or should), the revisions and transports each applies to, its spec \
            section and the official conformance suite's ids it stands for. `include` \
            narrows the list with the same globs run_checks takes.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "include": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Only scenarios whose id matches one of these globs, e.g. `lifecycle/*`."
                }
            },
            "additionalProperties": false
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "count": {"type": "integer", "minimum": 0},
                "scenarios": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string"},
                            "title": {"type": "string"},
                            "severity": {"type": "string", "enum": ["must", "should"]},
                            "revisions": {"type": "array", "items": {"type": "string"}},
                            "transports": {"type": "array", "items": {"type": "string", "enum": ["stdio", "http"]}},
                            "spec": {"type": "string"},
                            "area": {"type": "string"},
                            "requires": {"type": "array", "items": {"type": "string"}},
                            "official": {"type": "array", "items": {"type": "string"}}
                        },
                        "required": ["id", "title", "severity", "revisions", "transports", "spec", "area", "requires", "official"]
                    }
                }
            },
            "required": ["count", "scenarios"]
        },
        "annotations": {
            "title": "List the built-in scenarios",
            "readOnlyHint": true,
            "openWorldHint": false
        }
    })
}

fn explain() -> Value {
    let level = json!({"type": "string", "enum": ["must", "should", "info"]});
    let strings = json!({"type": "array", "items": {"type": "string"}});
    json!({
        "name": EXPLAIN,
        "title": "Explain a scenario or rule",
        "description": "What a scenario id (`lifecycle/initialize-result`) or a rule id \
            (`jsonrpc.id-echoed`) from a report checks: the spec sections behind it, its \
            level (must, should, info) and where that changed between revisions, the \
            revisions it applies to, the judgement behind it, and the usual causes of a \
            finding with their fix. An unknown id is a tool error that names the nearest \
            known id.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "id": {
                    "type": "string",
                    "minLength": 1,
                    "examples": ["jsonrpc.id-echoed", "lifecycle/initialize-result"],
                    "description": "A scenario id or a rule id, as a report names it."
                }
            },
            "required": ["id"],
            "additionalProperties": false
        },
        "outputSchema": {
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": ["scenario", "client_scenario", "rule"]},
                "id": {"type": "string"},
                "title": {"type": "string"},
                "level": level,
                "level_changes": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"since": {"type": "string"}, "level": level},
                        "required": ["since", "level"]
                    }
                },
                "spec": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "since": {"type": "string"},
                            "section": {"type": "string"},
                            "url": {"type": "string"}
                        },
                        "required": ["since", "section", "url"]
                    }
                },
                "revisions": strings,
                "checks": {"type": "string"},
                "rule": {"type": "string"},
                "scenarios": strings,
                "official": strings,
                "source": {"type": "string"},
                "causes": strings
            },
            "required": ["kind", "id", "title", "level", "level_changes", "spec", "revisions", "checks", "scenarios", "official", "causes"]
        },
        "annotations": {
            "title": "Explain a scenario or rule",
            "readOnlyHint": true,
            "openWorldHint": false
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_report_schema_is_the_documented_one() {
        let schema = report_schema();
        assert_eq!(schema["type"], "object");
        assert_eq!(
            schema["title"], "mcpcheck JSON report, format_version 2",
            "harness/results.schema.json must be the symlink to reports/results.schema.json"
        );
    }

    #[test]
    fn every_tool_has_an_object_output_schema_and_annotations() {
        for tool in all() {
            assert_eq!(tool["outputSchema"]["type"], "object", "{}", tool["name"]);
            assert_eq!(tool["inputSchema"]["type"], "object", "{}", tool["name"]);
            assert!(tool["annotations"]["readOnlyHint"].is_boolean());
            jsonschema::validator_for(&tool["outputSchema"]).expect("a valid schema");
            jsonschema::validator_for(&tool["inputSchema"]).expect("a valid schema");
        }
    }

    #[test]
    fn older_revisions_list_no_fields_they_lack() {
        let old = listed(Revision::V2024_11_05);
        assert!(old.iter().all(|t| t.get("annotations").is_none()
            && t.get("outputSchema").is_none()
            && t.get("title").is_none()));
        let mid = listed(Revision::V2025_03_26);
        assert!(
            mid.iter()
                .all(|t| t.get("annotations").is_some() && t.get("outputSchema").is_none())
        );
    }
}
