#!/usr/bin/env python3
"""Probes beyond mcpcheck's fixed probe, run by hand against the third-party servers.

These are candidates for future mcpcheck steps: each sends a few raw JSON-RPC lines over
stdio and compares the answer with what the spec asks for.

  version      initialize with an unknown protocolVersion: the answer MUST be a version
               the server supports (basic/lifecycle#version-negotiation)
  cursor       tools/list with a cursor the server never issued: SHOULD be -32602
               (server/utilities/pagination#error-handling)
  unknown-tool tools/call of a tool that does not exist: a JSON-RPC protocol error
               (server/tools#error-handling; descriptive, no RFC 2119 keyword)
  prompt       prompts/get of a prompt that does not exist: SHOULD be -32602
               (server/prompts#error-handling)
  resource     resources/read of a URI that does not exist: SHOULD be -32002
               (server/resources#error-handling, revisions 2024-11-05 .. 2025-11-25)
  method       an unknown method: -32601 (JSON-RPC 2.0 section 5.1, which MCP adopts)
  discover     server/discover first (2026-07-28): a DiscoverResult valid against the
               2026-07-28 schema, or any error from a handshake-only (legacy) server
               (basic/versioning#backward-compatibility-with-initialization-based-versions)

Usage (thirdparty venv, it needs jsonschema):
  thirdparty/.venv/bin/python thirdparty/extra_probes.py                # every server
  thirdparty/.venv/bin/python thirdparty/extra_probes.py -s fastmcp
  thirdparty/.venv/bin/python thirdparty/extra_probes.py -- CMD ARGS...  # any stdio server
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jsonschema import validators

HERE = Path(__file__).resolve().parent
SCHEMA_DIR = Path(os.environ.get("MCPCHECK_SCHEMA_DIR") or HERE.parent.parent / "shared/mcp-schema")
if not SCHEMA_DIR.is_dir():
    SCHEMA_DIR = Path("/work/shared/mcp-schema")
HANDSHAKE = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
REV = "2025-11-25"


def servers(root: str) -> dict[str, list[str]]:
    ev = HERE / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    return {
        "everything": ["node", str(ev), "stdio"],
        "fastmcp": [str(HERE / ".venv/bin/python"), str(HERE / "fastmcp_files.py"), "--impl", "fastmcp", "--root", root],
        "mcp2-mcpserver": [str(HERE / ".venv/bin/python"), str(HERE / "fastmcp_files.py"), "--impl", "mcp", "--root", root],
        "mcp1-fastmcp": [str(HERE / ".venv-mcp1/bin/python"), str(HERE / "fastmcp_files.py"), "--impl", "mcp", "--root", root],
        "mcp2-lowlevel": [str(HERE / ".venv/bin/python"), str(HERE / "mcp_sdk_server.py")],
    }


class Conn:
    """One server process; send lines, wait for the response to an id."""

    def __init__(self, cmd: list[str]):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        os.set_blocking(self.p.stdout.fileno(), False)
        self.buf = b""
        self.seen: list[dict] = []

    def send(self, msg: dict) -> None:
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def wait(self, id_, timeout: float = 20.0) -> dict | None:
        end = time.time() + timeout
        while time.time() < end:
            for m in self.seen:
                if m.get("id") == id_ and "method" not in m:
                    return m
            r, _, _ = select.select([self.p.stdout], [], [], 0.05)
            if not r:
                continue
            chunk = self.p.stdout.read()
            if not chunk:
                return None
            self.buf += chunk
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                try:
                    self.seen.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
        return None

    def request(self, id_, method: str, params: dict | None = None) -> dict | None:
        msg = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.wait(id_)

    def close(self) -> None:
        try:
            self.p.stdin.close()
            self.p.wait(5)
        except (subprocess.TimeoutExpired, BrokenPipeError):
            self.p.kill()
            self.p.wait()


def init_params(version: str) -> dict:
    return {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "extra-probes", "version": "0"}}


def err_code(resp: dict | None):
    if resp is None:
        return "no response"
    if "error" in resp:
        return resp["error"].get("code")
    return "result" + (" (isError)" if resp["result"].get("isError") else "")


def schema_errors(rev: str, definition: str, instance) -> list[str]:
    root = json.loads((SCHEMA_DIR / rev / "schema.json").read_text())
    defs = "$defs" if "$defs" in root else "definitions"
    wrapper = {"$schema": root["$schema"], defs: root[defs], "$ref": f"#/{defs}/{definition}"}
    v = validators.validator_for(wrapper)(wrapper)
    return [f"{e.json_path}: {e.message[:120]}" for e in v.iter_errors(instance)]


def probe(cmd: list[str]) -> list[tuple[str, str, str]]:
    rows: list[tuple[str, str, str]] = []

    c = Conn(cmd)
    r = c.request(1, "initialize", init_params("1999-01-01"))
    c.close()
    got = (r or {}).get("result", {}).get("protocolVersion") if r and "result" in r else err_code(r)
    rows.append(("version", f"answered {got}", "ok" if got in HANDSHAKE else "VIOLATION (MUST)"))

    c = Conn(cmd)
    c.request(1, "initialize", init_params(REV))
    c.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    r = c.request(2, "tools/list", {"cursor": "never-issued-cursor"})
    code = err_code(r)
    rows.append(("cursor", f"{code}", "ok" if code == -32602 else "deviation (SHOULD -32602)"))
    r = c.request(3, "tools/call", {"name": "no-such-tool", "arguments": {}})
    code = err_code(r)
    rows.append(("unknown-tool", f"{code}", "ok" if isinstance(code, int) else "deviation (spec lists unknown tools as protocol errors)"))
    r = c.request(4, "prompts/get", {"name": "no-such-prompt"})
    code = err_code(r)
    rows.append(("prompt", f"{code}", "ok" if code == -32602 else "deviation (SHOULD -32602)"))
    r = c.request(5, "resources/read", {"uri": "nope://missing"})
    code = err_code(r)
    rows.append(("resource", f"{code}", "ok" if code == -32002 else "deviation (SHOULD -32002)"))
    r = c.request(6, "mcpcheck/no-such-method", {})
    code = err_code(r)
    rows.append(("method", f"{code}", "ok" if code == -32601 else "deviation (JSON-RPC 2.0 5.1: -32601)"))
    c.close()

    c = Conn(cmd)
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "extra-probes", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    r = c.request("d1", "server/discover", {"_meta": meta})
    if r is None:
        rows.append(("discover", "no response", "legacy server (silence is allowed; the client times out)"))
    elif "error" in r:
        rows.append(("discover", f"error {r['error'].get('code')}", "legacy (handshake-only) server: ok"))
    else:
        errs = schema_errors("2026-07-28", "DiscoverResult", r["result"])
        t = c.request("t1", "tools/list", {"_meta": meta})
        if t and "result" in t:
            errs += ["tools/list " + e for e in schema_errors("2026-07-28", "ListToolsResult", t["result"])]
        versions = r["result"].get("supportedVersions")
        rows.append(("discover", f"DiscoverResult {versions}", "ok (valid 2026-07-28)" if not errs else "VIOLATION: " + "; ".join(errs[:3])))
    c.close()
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-s", "--server", action="append", help="server name (repeatable)")
    ap.add_argument("cmd", nargs="*", help="a server command, after --")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="mcpcheck-files.") as root:
        Path(root, "hello.txt").write_text("hello\n")
        table = servers(root)
        if args.cmd:
            chosen = {" ".join(args.cmd)[:40]: args.cmd}
        else:
            names = args.server or list(table)
            chosen = {n: table[n] for n in names}
        print(f"{'server':<16} {'probe':<13} {'observed':<34} verdict")
        for name, cmd in chosen.items():
            for probe_name, observed, verdict in probe(cmd):
                print(f"{name:<16} {probe_name:<13} {observed:<34} {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
