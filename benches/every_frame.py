#!/usr/bin/env python3
"""Runs a stdio MCP server with one defect on every frame it writes, for benches/every_frame.sh.

Usage: every_frame.py DEFECT -- SERVER COMMAND...

DEFECT is one of:
  jsonrpc-1.0   every message says "jsonrpc": "1.0"
  extra-member  every message carries an extra top-level member (not allowed by JSON-RPC 2.0)

The server's stdin, stderr and exit status pass through untouched; only its stdout lines are
rewritten, one JSON message per line as the stdio transport frames them.
"""

import json
import subprocess
import sys
import threading


def rewrite(defect: str, line: bytes) -> bytes:
    try:
        message = json.loads(line)
    except ValueError:
        return line
    if not isinstance(message, dict):
        return line
    if defect == "jsonrpc-1.0":
        message["jsonrpc"] = "1.0"
    elif defect == "extra-member":
        message["mcpcheckExtra"] = True
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    defect, command = sys.argv[1], sys.argv[3:]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def pump_in() -> None:
        for line in sys.stdin.buffer:
            child.stdin.write(line)
            child.stdin.flush()
        child.stdin.close()

    threading.Thread(target=pump_in, daemon=True).start()
    out = sys.stdout.buffer
    for line in child.stdout:
        out.write(rewrite(defect, line))
        out.flush()
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
