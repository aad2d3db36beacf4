#!/usr/bin/env python3
"""A small MCP file server over stdio, built with FastMCP.

Tools:     read  (readOnlyHint)    - read a UTF-8 text file under the root
           write (destructiveHint) - create or overwrite a UTF-8 text file under the root
Resource:  files://index           - newline-separated list of the files under the root
Template:  files://{name}          - one top-level file's content
Prompt:    summarize_file          - asks the model to summarize one file

Every path is confined to the root directory: absolute paths, `..` and symlinks that
resolve outside it are refused.

The root comes from `--root DIR` or the environment variable MCP_FILES_ROOT.

`--impl` chooses which FastMCP runs it (the decorator API is the same in all three):
  fastmcp  PyPI `fastmcp` (standalone FastMCP, default)
  mcp      the official `mcp` SDK: `mcp.server.fastmcp.FastMCP` on mcp 1.x, or its
           renamed successor `mcp.server.mcpserver.MCPServer` on mcp 2.x (where
           `mcp.server.fastmcp` only raises ModuleNotFoundError)

Usage: python fastmcp_files.py [--impl fastmcp|mcp] [--root DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

MAX_READ = 1 << 20  # refuse to read files over 1 MiB


def load_impl(impl: str):
    """Returns (server class, ToolAnnotations, ToolError, description of what was loaded).

    Errors raised as ToolError reach the client as the tool result's text (isError: true);
    other exceptions are masked by some implementations.
    """
    if impl == "fastmcp":
        import fastmcp
        from fastmcp import FastMCP
        from fastmcp.exceptions import ToolError
        from mcp.types import ToolAnnotations

        return FastMCP, ToolAnnotations, ToolError, f"fastmcp {fastmcp.__version__}"
    if impl == "mcp":
        from importlib.metadata import version

        from mcp.types import ToolAnnotations

        try:
            from mcp.server.fastmcp import FastMCP  # mcp 1.x
            from mcp.server.fastmcp.exceptions import ToolError

            return FastMCP, ToolAnnotations, ToolError, f"mcp {version('mcp')} (mcp.server.fastmcp.FastMCP)"
        except ModuleNotFoundError:
            from mcp.server.mcpserver import MCPServer  # mcp 2.x
            from mcp.server.mcpserver.exceptions import ToolError

            return MCPServer, ToolAnnotations, ToolError, f"mcp {version('mcp')} (mcp.server.mcpserver.MCPServer)"
    raise SystemExit(f"unknown --impl {impl!r}: use fastmcp or mcp")


class Confined:
    """Resolves user-supplied relative paths inside one root directory."""

    def __init__(self, root: Path, error: type[Exception]):
        self.root = root.resolve()
        self.error = error

    def path(self, rel: str) -> Path:
        if not rel or rel.startswith(("/", "\\")) or Path(rel).is_absolute():
            raise self.error(f"path must be relative to the served directory: {rel!r}")
        p = (self.root / rel).resolve()
        if p != self.root and not p.is_relative_to(self.root):
            raise self.error(f"path escapes the served directory: {rel!r}")
        return p

    def listing(self) -> list[str]:
        out = []
        for p in sorted(self.root.rglob("*")):
            if p.is_file() and p.resolve().is_relative_to(self.root):
                out.append(p.relative_to(self.root).as_posix())
        return out


def build(impl: str, root: Path):
    server_cls, ToolAnnotations, ToolError, loaded = load_impl(impl)
    box = Confined(root, ToolError)
    server = server_cls(
        name="fastmcp-files",
        instructions=f"Reads and writes text files under one directory ({loaded}).",
    )

    @server.tool(
        name="read",
        description="Read a UTF-8 text file. `path` is relative to the served directory.",
        annotations=ToolAnnotations(title="Read file", readOnlyHint=True, openWorldHint=False),
    )
    def read(path: str) -> str:
        p = box.path(path)
        if not p.is_file():
            raise ToolError(f"no such file: {path!r}")
        if p.stat().st_size > MAX_READ:
            raise ToolError(f"file is larger than {MAX_READ} bytes: {path!r}")
        return p.read_text(encoding="utf-8")

    @server.tool(
        name="write",
        description="Create or overwrite a UTF-8 text file. `path` is relative to the served directory.",
        annotations=ToolAnnotations(
            title="Write file", readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False
        ),
    )
    def write(path: str, content: str) -> str:
        p = box.path(path)
        if p == box.root or p.is_dir():
            raise ToolError(f"not a file path: {path!r}")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content, encoding="utf-8")
        return f"wrote {len(content.encode('utf-8'))} bytes to {p.relative_to(box.root).as_posix()}"

    @server.resource("files://index", name="index", description="Files under the served directory", mime_type="text/plain")
    def index() -> str:
        return "\n".join(box.listing())

    @server.resource("files://{name}", name="file", description="A top-level file's content", mime_type="text/plain")
    def file(name: str) -> str:
        return read(name)

    @server.prompt(name="summarize_file", description="Ask for a summary of one file")
    def summarize_file(path: str) -> str:
        return f"Read the file {path!r} with the `read` tool and summarize it in three sentences."

    return server, loaded


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--impl", choices=["fastmcp", "mcp"], default=os.environ.get("MCP_FILES_IMPL", "fastmcp"))
    ap.add_argument("--root", default=os.environ.get("MCP_FILES_ROOT"))
    args = ap.parse_args()
    if not args.root:
        ap.error("give the served directory with --root or MCP_FILES_ROOT")
    root = Path(args.root)
    if not root.is_dir():
        ap.error(f"not a directory: {root}")
    server, loaded = build(args.impl, root)
    print(f"fastmcp_files: {loaded}, serving {root.resolve()}", file=sys.stderr)
    server.run()  # stdio


if __name__ == "__main__":
    main()
