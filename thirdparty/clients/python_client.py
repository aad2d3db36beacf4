"""A conformance client on the Python MCP SDK (PyPI `mcp`), for `mcpcheck client`.

It follows the official suite's contract: the server URL is the last argument and
MCP_CONFORMANCE_SCENARIO names the scenario. With `--stdio CMD ARGS...` it spawns that
server command instead (`mcpcheck client --transport stdio` puts `mcpcheck mock ...`
there). Scenarios it has no special case for get the basic flow: connect, list the
tools, call each with empty arguments, close. At 2026-07-28 it uses the SDK's `Client`
pinned to that revision (no handshake); at the dated revisions `ClientSession`.
"""

import asyncio
import json
import os
import sys

from mcp import Client, ClientSession, MCPError, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client


def defaults(schema: dict) -> dict:
    """The default of every property that has one: SEP-1034 clients apply them."""
    return {
        name: prop["default"]
        for name, prop in (schema.get("properties") or {}).items()
        if "default" in prop
    }


async def elicit(context, params):
    content = defaults(params.requested_schema or {})
    return types.ElicitResult(action="accept", content=content)


async def sample(context, params):
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="8"),
        model="python-conformance-model",
    )


async def roots(context):
    return types.ListRootsResult(roots=[types.Root(uri="file:///tmp/project", name="project")])


def transport():
    """stdio when `--stdio CMD ...` is given, else Streamable HTTP to the last argument."""
    if "--stdio" in sys.argv:
        server = sys.argv[sys.argv.index("--stdio") + 1 :]
        return stdio_client(StdioServerParameters(command=server[0], args=server[1:]))
    return streamable_http_client(sys.argv[-1])


#: The revision without a handshake, which the SDK's `Client` speaks in its default "auto"
#: mode (discover, `_meta`, headers, InputRequiredResult retries); `ClientSession` speaks
#: the dated ones.
MODERN = "2026-07-28"


async def ignore_progress(progress: float, total: float | None, message: str | None) -> None:
    pass


def two_calls_with_progress(client):
    """Two calls of add_numbers, each with a progress callback (so a progress token)."""
    return [
        client.call_tool("add_numbers", {"a": 5, "b": 3}, progress_callback=ignore_progress)
        for _ in range(2)
    ]


def server():
    """What `Client` connects to: the stdio command of `--stdio CMD ...`, else the URL."""
    if "--stdio" in sys.argv:
        command = sys.argv[sys.argv.index("--stdio") + 1 :]
        return StdioServerParameters(command=command[0], args=command[1:])
    return sys.argv[-1]


async def modern(scenario: str) -> None:
    async with Client(
        server(),
        mode="auto",
        elicitation_callback=elicit,
        sampling_callback=sample,
        list_roots_callback=roots,
    ) as client:
        listed = await client.list_tools()
        if scenario == "json-schema-2020-12-preservation":
            focal = next(t for t in listed.tools if t.name == "json_schema_2020_12_tool")
            await client.call_tool("json_schema_echo", {"schema": focal.input_schema})
            return
        if scenario == "progress-tokens":
            # mcpcheck's flow: two calls in flight at once, each asking for progress.
            await asyncio.gather(*(two_calls_with_progress(client)))
            return
        context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
        if "toolCalls" in context:
            for call in context["toolCalls"]:
                await client.call_tool(call["name"], call.get("arguments") or {})
            return
        for tool in listed.tools:
            arguments = {"a": 5, "b": 3} if tool.name == "add_numbers" else {}
            await client.call_tool(tool.name, arguments)


async def main() -> None:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION") == MODERN:
        await modern(scenario)
        return
    async with transport() as (read, write, *_):
        async with ClientSession(
            read,
            write,
            elicitation_callback=elicit,
            sampling_callback=sample,
            list_roots_callback=roots,
        ) as session:
            await session.initialize()
            # Its roots "changed" at start-up: a client that declared listChanged says so.
            await session.send_roots_list_changed()
            listed = await session.list_tools()
            if scenario == "initialize":
                return
            if scenario == "json-schema-2020-12-preservation":
                focal = next(t for t in listed.tools if t.name == "json_schema_2020_12_tool")
                await session.call_tool("json_schema_echo", {"schema": focal.input_schema})
                return
            if scenario == "progress-tokens":
                # mcpcheck's flow: two calls in flight at once, each asking for progress.
                await asyncio.gather(*(two_calls_with_progress(session)))
                return
            if scenario == "tools_call":
                # A call not answered in 2 s is given up: the SDK sends
                # notifications/cancelled.
                try:
                    await session.call_tool("add_numbers", {"a": 5, "b": 3}, read_timeout_seconds=2)
                except MCPError:
                    pass
                return
            for tool in listed.tools:
                await session.call_tool(tool.name, {})


asyncio.run(main())
