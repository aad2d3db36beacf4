#!/usr/bin/env python3
"""A small MCP server over Streamable HTTP on Python's standard library (`http.server`), for
benches/http_latency.sh: the kind of server many small projects write. Like them it keeps
connections alive (HTTP/1.1) and writes its headers and its body in two sends, without
TCP_NODELAY.

Serves 2025-11-25 (and any older revision a client asks for): initialize, ping, empty
tools/resources/prompts lists, -32601 for anything else; JSON answers, no SSE.

Usage: stdlib_http_server.py PORT [--nodelay]   (serves http://127.0.0.1:PORT/mcp)
  --nodelay   sets TCP_NODELAY, as a careful server would: the control for the stall
"""

import json
import socket
import sys
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LATEST = "2025-11-25"
KNOWN = {"2024-11-05", "2025-03-26", "2025-06-18", LATEST}
LISTS = {"tools/list": "tools", "resources/list": "resources", "prompts/list": "prompts",
         "resources/templates/list": "resourceTemplates"}


def answer(message: dict) -> dict | None:
    """The response to one JSON-RPC message, or None for a notification."""
    if "id" not in message:
        return None
    method, rid = message.get("method"), message["id"]
    if method == "initialize":
        asked = message.get("params", {}).get("protocolVersion")
        result = {
            "protocolVersion": asked if asked in KNOWN else LATEST,
            "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
            "serverInfo": {"name": "stdlib-http", "version": "1.0.0"},
        }
    elif method == "ping":
        result = {}
    elif method in LISTS:
        result = {LISTS[method]: []}
    else:
        return {"jsonrpc": "2.0", "id": rid,
                "error": {"code": -32601, "message": f"Method not found: {method}"}}
    return {"jsonrpc": "2.0", "id": rid, "result": result}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    sessions: set[str] = set()

    nodelay = False

    def setup(self) -> None:
        super().setup()
        if self.nodelay:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, *args) -> None:
        pass

    def reply(self, status: int, body: bytes = b"", headers: dict | None = None) -> None:
        # Headers, then the body in a second write: what `http.server` servers do.
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)

    def do_POST(self) -> None:
        if self.path != "/mcp":
            return self.reply(404)
        length = int(self.headers.get("Content-Length", 0))
        try:
            message = json.loads(self.rfile.read(length))
        except ValueError:
            error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
            return self.reply(400, json.dumps(error).encode(), {"Content-Type": "application/json"})
        if not isinstance(message, dict):
            error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}}
            return self.reply(400, json.dumps(error).encode(), {"Content-Type": "application/json"})
        headers = {}
        if message.get("method") == "initialize":
            session = uuid.uuid4().hex
            self.sessions.add(session)
            headers["Mcp-Session-Id"] = session
        else:
            session = self.headers.get("Mcp-Session-Id")
            if session is None:
                return self.reply(400)
            if session not in self.sessions:
                return self.reply(404)
        response = answer(message)
        if response is None:
            return self.reply(202, b"", headers)
        headers["Content-Type"] = "application/json"
        self.reply(200, json.dumps(response).encode(), headers)

    def do_GET(self) -> None:
        self.reply(405, b"", {"Allow": "POST, DELETE"})

    def do_DELETE(self) -> None:
        self.sessions.discard(self.headers.get("Mcp-Session-Id", ""))
        self.reply(200)


def main() -> None:
    port = int(sys.argv[1])
    Handler.nodelay = "--nodelay" in sys.argv[2:]
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"stdlib_http_server: on http://127.0.0.1:{port}/mcp", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
