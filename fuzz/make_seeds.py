#!/usr/bin/env python3
"""Writes the committed seed corpora of the jsonrpc_framing and sse_events targets
(seeds/jsonrpc_framing/, seeds/sse_events/).

Each seed is the 4-byte header that FramingInput::from_bytes reads (src/lib.rs) followed
by a stdout stream (or, for sse_events, an SSE body), verbatim. Run from fuzz/:
python3 make_seeds.py
"""
import json
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds", "jsonrpc_framing")


def header(max_frame, chunk_seed=0):
    """Large-limit mode (byte 0 >= 0xC0): max_frame = 1 + u16."""
    assert 1 <= max_frame <= 65536
    return bytes([0xFF]) + struct.pack("<H", max_frame - 1) + bytes([chunk_seed])


def small(max_frame, chunk_seed=0):
    """Small-limit mode (byte 0 < 0xC0): max_frame = 1 + u16 % 512."""
    assert 1 <= max_frame <= 512
    return bytes([0x00]) + struct.pack("<H", max_frame - 1) + bytes([chunk_seed])


def line(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


INIT_REQ = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "mcpcheck", "version": "0.1.0"}}}
INIT_RES = {"jsonrpc": "2.0", "id": 0, "result": {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {"listChanged": True}, "logging": {}},
    "serverInfo": {"name": "ref", "version": "1.0.0"}}}
TOOLS = {"jsonrpc": "2.0", "id": 1, "result": {"tools": [
    {"name": "echo", "description": "Echoes text", "inputSchema": {
        "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
    {"name": "add", "inputSchema": {"type": "object", "properties": {
        "a": {"type": "integer"}, "b": {"type": "integer"}}}}]}}
NOTE = {"jsonrpc": "2.0", "method": "notifications/initialized"}
PROGRESS = {"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": "t1", "progress": 50, "total": 100}}
ERROR = {"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "Method not found",
                                              "data": {"method": "nope"}}}

SEEDS = {
    "01-handshake": header(4096) + f"{line(INIT_REQ)}\n{line(INIT_RES)}\n{line(NOTE)}\n".encode(),
    "02-tools-list-chunked": header(4096, 7) + f"{line(TOOLS)}\n{line(PROGRESS)}\n".encode(),
    "03-pretty-printed": header(4096) + f"{json.dumps(INIT_RES, indent=2)}\n{line(NOTE)}\n".encode(),
    "04-log-noise": header(1024) + (
        f"Server started on stdio\n[INFO] ready\n{line(ERROR)}\nDEBUG: {{\"half\":\n").encode(),
    "05-crlf": header(1024, 3) + f"{line(NOTE)}\r\n\r\n{line(PROGRESS)}\r\n".encode(),
    "06-invalid-utf8": header(1024)
    + b'{"jsonrpc":"2.0","id":3,"result":{"text":"\xc3\x28\xff"}}\n'
    + f"{line(NOTE)}\n".encode(),
    "07-unterminated": header(1024) + f"{line(NOTE)}\n{line(ERROR)}".encode(),
    "08-blank-lines": header(1024) + f"\n\n  \n\t\n{line(PROGRESS)}\n\n".encode(),
    "09-oversize": small(200, 11)
    + line({"jsonrpc": "2.0", "id": 4, "result": {"content": [{"type": "text", "text": "x" * 600}]}}).encode()
    + f"\n{line(NOTE)}\n".encode(),
    "10-batch-and-invalid": header(1024) + (
        "[" + line(ERROR) + "," + line({"jsonrpc": "2.0", "id": True, "result": {}}) + "]\n[]\n"
        + '{"jsonrpc":"1.0","id":null,"result":1}\n'
        + '{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":{}}\n').encode(),
    "11-pretty-interrupted": header(4096) + (
        '{\n  "jsonrpc": "2.0",\n  "id":\n' + line(INIT_RES) + "\n}\n").encode(),
    "12-pretty-nested-arrays": small(400, 1) + (json.dumps(
        {"jsonrpc": "2.0", "id": 5, "result": {"content": [{"type": "text", "text": "a"}, {}]}},
        indent=2) + "\n").encode(),
    "13-scalars-and-escapes": header(1024) + (
        '1\n"str"\nnull\n{"jsonrpc":"2.0","method":"x\\u0000\\ud83d\\ude00","params":[]}\n'
        '{"id":1,"id":2,"jsonrpc":"2.0","result":{}}\n\u00a0\n').encode(),
}

os.makedirs(OUT, exist_ok=True)
for name, data in SEEDS.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
print(f"wrote {len(SEEDS)} seeds to {OUT}")

# sse_events: SSE response bodies (SseInput reads the same header).
MSG = b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}'
PROGRESS = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}'
SSE = {
    "01-one-message": b"event: message\nid: 1\ndata: " + MSG + b"\n\n",
    "02-notification-then-response-crlf": b"id: a\r\ndata: " + PROGRESS + b"\r\n\r\nid: b\r\ndata: " + MSG + b"\r\n\r\n",
    "03-multi-line-data": b'data: {"jsonrpc":"2.0",\ndata: "id":2,"result":{}}\n\n',
    "04-priming-empty-data": b"id: 0\ndata:\n\nid: 1\ndata: " + MSG + b"\n\n",
    "05-comments-retry-other-events": b": keep-alive\nretry: 1500\n\nevent: ping\ndata: x\n\ndata: " + MSG + b"\n\n",
    "06-bom": b"\xef\xbb\xbfdata: " + MSG + b"\n\n",
    "07-invalid-utf8": b'data: {"jsonrpc":"2.0","id":3,"result":{"s":"\xff"}}\n\ndata: ' + MSG + b"\n\n",
    "08-no-blank-line": b"id: 0\ndata: " + MSG + b"\nid: 1\ndata: " + MSG,
    "09-cr-only": b"data: " + MSG + b"\r\rdata: " + PROGRESS + b"\r\r",
    "10-not-json": b"data: not json at all\n\ndata: [1,2\n\n",
}
SSE_OUT = os.path.join(os.path.dirname(OUT), "sse_events")
os.makedirs(SSE_OUT, exist_ok=True)
for name, body in SSE.items():
    with open(os.path.join(SSE_OUT, name), "wb") as f:
        f.write(header(65536) + body)
with open(os.path.join(SSE_OUT, "11-oversize"), "wb") as f:
    f.write(header(32) + b"data: " + MSG + b"\n\n")
print(f"wrote {len(SSE) + 1} seeds to {SSE_OUT}")
