#!/usr/bin/env python3
"""Second opinion on mcpcheck JSON reports, independent of mcpcheck's own code.

Re-reads each report's transcript and checks every frame the server sent with
python-jsonschema (a different validator from mcpcheck's Rust `jsonschema` crate), plus
a few rules mcpcheck does not check yet:

  * every server request/notification against the revision's ServerRequest /
    ServerNotification union, every result against its `<X>Result` definition;
  * each tool's inputSchema/outputSchema is a valid schema of its declared dialect
    (2020-12 when it declares none; basic#json-schema-usage, 2025-11-25);
  * `_meta` key names follow the prefix/name format (basic#meta, 2025-06-18+);
  * tool names use [A-Za-z0-9_.-]{1,128} (server/tools#tool-names, 2025-11-25, SHOULD).

Run it with the thirdparty venv (it needs jsonschema):
    thirdparty/.venv/bin/python thirdparty/crosscheck.py thirdparty/out/*.json
Exit status 1 when it found anything, so a disagreement with a clean mcpcheck report shows.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import SchemaError

SCHEMA_DIR = Path(os.environ.get("MCPCHECK_SCHEMA_DIR") or Path(__file__).resolve().parent.parent.parent / "shared/mcp-schema")
if not SCHEMA_DIR.is_dir():
    SCHEMA_DIR = Path("/work/shared/mcp-schema")

RESULTS = {
    "initialize": "InitializeResult",
    "ping": "EmptyResult",
    "tools/list": "ListToolsResult",
    "resources/list": "ListResourcesResult",
    "resources/templates/list": "ListResourceTemplatesResult",
    "prompts/list": "ListPromptsResult",
}
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
META_LABEL = re.compile(r"^[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?$")
META_NAME = re.compile(r"^([A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?)?$")

_roots: dict[str, dict] = {}
_validators: dict[tuple[str, str], object] = {}


def validator(rev: str, definition: str):
    key = (rev, definition)
    if key not in _validators:
        if rev not in _roots:
            _roots[rev] = json.loads((SCHEMA_DIR / rev / "schema.json").read_text())
        root = _roots[rev]
        defs = "$defs" if "$defs" in root else "definitions"
        if definition not in root[defs]:
            _validators[key] = None
        else:
            wrapper = {"$schema": root["$schema"], defs: root[defs], "$ref": f"#/{defs}/{definition}"}
            _validators[key] = validators.validator_for(wrapper)(wrapper)
    return _validators[key]


def schema_errors(rev: str, definition: str, instance) -> list[str]:
    v = validator(rev, definition)
    if v is None:
        return [f"{rev} schema has no {definition}"]
    return [f"{definition} at {e.json_path}: {e.message[:200]}" for e in v.iter_errors(instance)]


def meta_keys(obj, path=""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == "_meta" and isinstance(v, dict):
                for mk in v:
                    yield f"{path}/_meta", mk
            yield from meta_keys(v, f"{path}/{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from meta_keys(v, f"{path}/{i}")


def meta_key_ok(key: str) -> bool:
    prefix, _, name = key.rpartition("/")
    if prefix and not all(META_LABEL.match(label) for label in prefix.split(".")):
        return False
    return bool(META_NAME.match(name))


def check_report(path: Path) -> list[str]:
    report = json.loads(path.read_text())
    rev = report["revision"]
    issues: list[str] = []
    methods: dict[str, str] = {}
    for index, entry in enumerate(report["transcript"]):
        try:
            msg = json.loads(entry["text"])
        except (json.JSONDecodeError, KeyError):
            continue
        if entry["direction"] == "sent":
            if isinstance(msg, dict) and "id" in msg and "method" in msg:
                methods[json.dumps(msg["id"])] = msg["method"]
            continue
        if entry["direction"] != "received" or not isinstance(msg, dict):
            continue
        where = f"frame {index}"
        if "method" in msg:
            union = "ServerRequest" if "id" in msg else "ServerNotification"
            issues += [f"{where}: {e}" for e in schema_errors(rev, union, msg)[:3]]
            continue
        method = methods.get(json.dumps(msg.get("id")))
        if "result" not in msg:
            continue
        result = msg["result"]
        if method in RESULTS:
            issues += [f"{where} ({method}): {e}" for e in schema_errors(rev, RESULTS[method], result)]
        for at, key in meta_keys(result):
            if rev >= "2025-06-18" and not meta_key_ok(key):
                issues.append(f"{where}: _meta key {key!r} at {at} breaks the key-name format")
        if method == "tools/list":
            for tool in result.get("tools", []):
                name = tool.get("name", "")
                if rev >= "2025-11-25" and not TOOL_NAME.match(name):
                    issues.append(f"{where}: tool name {name!r} outside [A-Za-z0-9_.-]{{1,128}} (SHOULD)")
                for field in ("inputSchema", "outputSchema"):
                    schema = tool.get(field)
                    if not isinstance(schema, dict):
                        continue
                    cls = validators.validator_for(schema, default=Draft202012Validator)
                    try:
                        cls.check_schema(schema)
                    except SchemaError as e:
                        issues.append(f"{where}: tool {name!r} {field} is not a valid {cls.__name__} schema: {e.message[:160]}")
    return issues


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    total = 0
    for p in sorted(argv):
        path = Path(p)
        issues = check_report(path)
        report = json.loads(path.read_text())
        mine = sorted({f["rule"] for f in report.get("findings", [])})
        print(f"{path.name}: {len(issues)} issue(s); mcpcheck reported {mine or 'nothing'}")
        for i in issues:
            print(f"  ! {i}")
        total += len(issues)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
