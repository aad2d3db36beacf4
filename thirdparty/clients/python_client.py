"""A conformance client on the Python MCP SDK (PyPI `mcp`), for `mcpcheck client`.

It follows the official suite's contract: the server URL is the last argument and
MCP_CONFORMANCE_SCENARIO names the scenario. With `--stdio CMD ARGS...` it spawns that
server command instead (`mcpcheck client --transport stdio` puts `mcpcheck mock ...`
there). Scenarios it has no special case for get the basic flow: connect, list the
tools, call each with empty arguments, close. At 2026-07-28 it uses the SDK's `Client`
pinned to that revision (no handshake); at the dated revisions `ClientSession`.
`auth/*` scenarios go through the SDK's OAuth client (`OAuthClientProvider`): it reads
the authorization redirect itself, as there is no browser.
"""

import asyncio
import json
import os
import sys
from urllib.parse import parse_qs, urlsplit

import httpx2
from pydantic import AnyUrl

from mcp import Client, ClientSession, MCPError, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata

#: Where the authorization server "sends the browser" back to; nothing listens there.
REDIRECT = "http://localhost:3000/callback"


class Tokens(TokenStorage):
    """Keeps the client registration and tokens for the run."""

    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info):
        self.client = client_info


class Redirect:
    """Plays the browser: GETs the authorization URL and reads code, state and iss from
    the redirect it answers with."""

    def __init__(self):
        self.result = None

    async def open(self, url: str) -> None:
        async with httpx2.AsyncClient() as http:
            answer = await http.get(url, follow_redirects=False)
        location = answer.headers.get("location")
        if location is None:
            raise RuntimeError(f"the authorization endpoint answered {answer.status_code}, no redirect")
        query = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
        if "code" not in query:
            raise RuntimeError(f"the redirect carries no code: {location}")
        self.result = AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    async def back(self) -> AuthorizationCodeResult:
        result, self.result = self.result, None
        return result


async def authorized() -> httpx2.AsyncClient:
    """An HTTP client that authorizes with the server's authorization server on its 401,
    as a pre-registered client when MCP_CONFORMANCE_CONTEXT gives a client id."""
    storage = Tokens()
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if context.get("client_id"):
        secret = context.get("client_secret")
        storage.client = OAuthClientInformationFull(
            client_id=context["client_id"],
            client_secret=secret,
            redirect_uris=[AnyUrl(REDIRECT)],
            token_endpoint_auth_method="client_secret_basic" if secret else "none",
        )
    browser = Redirect()
    provider = OAuthClientProvider(
        server_url=sys.argv[-1],
        client_metadata=OAuthClientMetadata(
            client_name="python-conformance-client",
            redirect_uris=[AnyUrl(REDIRECT)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        ),
        storage=storage,
        redirect_handler=browser.open,
        callback_handler=browser.back,
        client_metadata_url="https://python-conformance-client.example/client-metadata.json",
    )
    return httpx2.AsyncClient(auth=provider, timeout=30.0)


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


def transport(http=None):
    """stdio when `--stdio CMD ...` is given, else Streamable HTTP to the last argument
    (through `http` when given: an authorizing client)."""
    if "--stdio" in sys.argv:
        server = sys.argv[sys.argv.index("--stdio") + 1 :]
        return stdio_client(StdioServerParameters(command=server[0], args=server[1:]))
    return streamable_http_client(sys.argv[-1], http_client=http)


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
    target = server()
    if scenario.startswith("auth/"):
        target = streamable_http_client(sys.argv[-1], http_client=await authorized())
    async with Client(
        target,
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
    http = await authorized() if scenario.startswith("auth/") else None
    async with transport(http) as (read, write, *_):
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
