#!/usr/bin/env python3
"""A tiny stdio MCP server on the official `mcp` SDK's low-level `Server` API (mcp 2.x).

Unlike fastmcp_files.py (decorators, schemas generated from type hints), this one hands
the SDK explicit handlers and hand-written JSON Schemas, and it paginates `tools/list`
one tool per page, so a client has to follow `nextCursor` to see both tools.

Tools:     echo (readOnlyHint), add (readOnlyHint)   - one per tools/list page
Resource:  memo://motd                              - a static text resource
Prompt:    greet                                    - one required argument `name`

mcp 2.x also answers `server/discover` (revision 2026-07-28) on the same stdio
connection when the client's first request is `server/discover` instead of `initialize`.

Usage: python mcp_sdk_server.py              (stdio)
       python mcp_sdk_server.py --http PORT  (Streamable HTTP on 127.0.0.1:PORT, path /mcp)
       python mcp_sdk_server.py --sse PORT   (2024-11-05 HTTP+SSE on 127.0.0.1:PORT, path /sse)
"""

from __future__ import annotations

import sys
from importlib.metadata import version

import anyio
import mcp_types as types
from mcp_types.jsonrpc import INVALID_PARAMS
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

TOOLS = [
    types.Tool(
        name="echo",
        description="Echo the message back.",
        input_schema={
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
            "additionalProperties": False,
        },
        annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
    ),
    types.Tool(
        name="add",
        description="Add two integers.",
        input_schema={
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
            "additionalProperties": False,
        },
        annotations=types.ToolAnnotations(read_only_hint=True, open_world_hint=False),
    ),
]
MOTD = "Hello from the mcp SDK low-level server.\n"


async def list_tools(ctx, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    # Cursors are opaque to clients; here a cursor is the index of the next tool.
    cursor = params.cursor if params is not None else None
    try:
        start = int(cursor) if cursor is not None else 0
    except ValueError:
        raise_invalid(f"invalid cursor {cursor!r}")
    page = TOOLS[start : start + 1]
    nxt = str(start + 1) if start + 1 < len(TOOLS) else None
    return types.ListToolsResult(tools=page, next_cursor=nxt)


def raise_invalid(message: str):
    raise MCPError(code=INVALID_PARAMS, message=message)


def resource_not_found_code(protocol_version: str) -> int:
    """The handshake revisions (2024-11-05 .. 2025-11-25) say "Resource not found: -32002"
    (SHOULD); 2026-07-28 requires -32602 (MUST) and asks clients to accept both."""
    return INVALID_PARAMS if protocol_version >= "2026-07-28" else -32002


async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    try:
        if params.name == "echo":
            text = str(args["message"])
        elif params.name == "add":
            text = str(int(args["a"]) + int(args["b"]))
        else:
            raise_invalid(f"unknown tool {params.name!r}")
    except (KeyError, TypeError, ValueError) as e:
        return types.CallToolResult(content=[types.TextContent(text=f"bad arguments: {e}")], is_error=True)
    return types.CallToolResult(content=[types.TextContent(text=text)])


async def list_resources(ctx, params) -> types.ListResourcesResult:
    # One page: no cursor was ever issued (pagination: invalid cursors SHOULD get -32602).
    if params is not None and params.cursor is not None:
        raise_invalid(f"invalid cursor {params.cursor!r}")
    return types.ListResourcesResult(
        resources=[types.Resource(uri="memo://motd", name="motd", mime_type="text/plain", description="Message of the day")]
    )


async def read_resource(ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    if str(params.uri) != "memo://motd":
        code = resource_not_found_code(ctx.protocol_version)
        raise MCPError(code=code, message="Resource not found", data={"uri": str(params.uri)})
    return types.ReadResourceResult(contents=[types.TextResourceContents(uri="memo://motd", mime_type="text/plain", text=MOTD)])


async def list_prompts(ctx, params) -> types.ListPromptsResult:
    if params is not None and params.cursor is not None:
        raise_invalid(f"invalid cursor {params.cursor!r}")
    return types.ListPromptsResult(
        prompts=[
            types.Prompt(
                name="greet",
                description="Greet someone by name",
                arguments=[types.PromptArgument(name="name", description="Who to greet", required=True)],
            )
        ]
    )


async def get_prompt(ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult:
    if params.name != "greet":
        raise_invalid(f"no prompt {params.name!r}")
    who = (params.arguments or {}).get("name", "world")
    return types.GetPromptResult(
        messages=[types.PromptMessage(role="user", content=types.TextContent(text=f"Say hello to {who}."))]
    )


def build(listen: bool = False) -> Server:
    """`listen`: serve 2026-07-28 `subscriptions/listen` with the SDK's own handler (which
    also turns on the listChanged and resources.subscribe capabilities it can deliver)."""
    extra = {}
    if listen:
        from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler

        extra["on_subscriptions_listen"] = ListenHandler(InMemorySubscriptionBus())
    return Server(
        "mcp-sdk-lowlevel",
        version=version("mcp"),
        instructions="A tiny low-level mcp SDK server for conformance tests.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        **extra,
    )


async def amain(listen: bool = False) -> None:
    server = build(listen)
    print(f"mcp_sdk_server: mcp {version('mcp')}", file=sys.stderr)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_http(port: int, listen: bool = False) -> None:
    """Streamable HTTP at http://127.0.0.1:PORT/mcp (the SDK's own app; it turns on its
    Host/Origin checks for a loopback host). `listen`: as for stdio, with the SDK's
    subscriptions/listen handler, whose answer over HTTP is a long-lived SSE stream."""
    import uvicorn

    app = build(listen).streamable_http_app(host="127.0.0.1")
    print(f"mcp_sdk_server: mcp {version('mcp')} on http://127.0.0.1:{port}/mcp", file=sys.stderr)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def serve_sse(port: int) -> None:
    """The 2024-11-05 HTTP+SSE transport: GET /sse opens the stream (its first event names
    the POST endpoint), messages are POSTed to /messages/."""
    import uvicorn
    from mcp.server.sse import SseServerTransport
    from starlette.applications import Starlette
    from starlette.responses import Response
    from starlette.routing import Mount, Route

    server = build()
    sse = SseServerTransport("/messages/")

    async def handle_sse(request):
        async with sse.connect_sse(request.scope, request.receive, request._send) as streams:
            await server.run(streams[0], streams[1], server.create_initialization_options())
        return Response()

    app = Starlette(routes=[Route("/sse", endpoint=handle_sse, methods=["GET"]), Mount("/messages/", app=sse.handle_post_message)])
    print(f"mcp_sdk_server: mcp {version('mcp')} on http://127.0.0.1:{port}/sse", file=sys.stderr)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    if len(sys.argv) in (3, 4) and sys.argv[1] == "--http" and sys.argv[3:] in ([], ["--listen"]):
        serve_http(int(sys.argv[2]), sys.argv[3:] == ["--listen"])
    elif len(sys.argv) == 3 and sys.argv[1] == "--sse":
        serve_sse(int(sys.argv[2]))
    elif sys.argv[1:] == ["--listen"]:
        anyio.run(amain, True)
    else:
        anyio.run(amain)
