#!/usr/bin/env python3
"""Runs a stdio MCP server with one defect on every frame it writes, for benches/every_frame.sh.

Usage: every_frame.py DEFECT -- SERVER COMMAND...

DEFECT is one of:
  none            nothing changed (the clean twin, through the same pipes)
  jsonrpc-1.0     every message says "jsonrpc": "1.0"
  extra-member    every message carries an extra top-level member (not allowed by JSON-RPC 2.0)
  drop-fifth      every fifth message is never written
  ping-no-result  the answer to a ping has no `result`
  notification-id every notification carries an `id`

The server's stdin, stderr and exit status pass through untouched; only its stdout lines are
rewritten, one JSON message per line as the stdio transport frames them.
"""

import json
import subprocess
import sys
import threading


class Rewriter:
    """Rewrites the server's lines; knows the ids of the pings it was sent."""

    def __init__(self, defect: str) -> None:
        self.defect = defect
        self.pings: set[str] = set()
        self.written = 0

    def sent(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return
        if isinstance(message, dict) and message.get("method") == "ping":
            self.pings.add(json.dumps(message.get("id")))

    def rewrite(self, line: bytes) -> bytes:
        try:
            message = json.loads(line)
        except ValueError:
            return line
        if not isinstance(message, dict):
            return line
        self.written += 1
        defect = self.defect
        if defect == "jsonrpc-1.0":
            message["jsonrpc"] = "1.0"
        elif defect == "extra-member":
            message["mcpcheckExtra"] = True
        elif defect == "drop-fifth" and self.written % 5 == 0:
            return b""
        elif defect == "ping-no-result" and json.dumps(message.get("id")) in self.pings:
            message.pop("result", None)
        elif defect == "notification-id" and "method" in message and "id" not in message:
            message["id"] = 999999
        return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    rewriter, command = Rewriter(sys.argv[1]), sys.argv[3:]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def pump_in() -> None:
        for line in sys.stdin.buffer:
            rewriter.sent(line)
            child.stdin.write(line)
            child.stdin.flush()
        child.stdin.close()

    threading.Thread(target=pump_in, daemon=True).start()
    out = sys.stdout.buffer
    for line in child.stdout:
        out.write(rewriter.rewrite(line))
        out.flush()
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
