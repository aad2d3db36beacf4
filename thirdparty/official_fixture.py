#!/usr/bin/env python3
"""A server exposing the official conformance suite's fixture names, on the official `mcp`
SDK (2.x `MCPServer`), the way the SDKs' "everything servers" do: what
`@modelcontextprotocol/conformance server` calls, so mcpcheck's official-fixture scenarios
(scenarios/official/) and the official suite can run side by side against it.

Tools:     test_simple_text, test_image_content, test_audio_content, test_embedded_resource,
           test_multiple_content_types, test_tool_with_logging, test_tool_with_progress,
           test_error_handling, test_sampling, test_elicitation, test_elicitation_sep1034_defaults,
           test_elicitation_sep1330_enums, json_schema_2020_12_tool (listed, never called),
           test_reconnection (over HTTP: closes its SSE stream mid-call; the response is
           replayed to the client that reconnects with Last-Event-ID);
           at 2026-07-28 the MRTR tools test_input_required_result_{elicitation, sampling,
           list_roots, request_state, multiple_inputs, multi_round, tampered_state,
           capabilities} and the prompt test_input_required_result_prompt;
           test_custom_headers (2026-07-28: `region` mirrored into Mcp-Param-Region)
Resources: test://static-text, test://static-binary, test://watched-resource (subscribable),
           template test://template/{id}/data
Prompts:   test_simple_prompt, test_prompt_with_arguments, test_prompt_with_embedded_resource,
           test_prompt_with_image

`--broken NAME` breaks exactly one behaviour, for tests (BROKEN lists them).
`--own-way` keeps every name and behaviour the official checks read but does the rest its
own way, as another correct server would: its own `inputRequests` keys (where a check does
not name one), in another order, and reply texts that echo nothing the client sent.

Usage: python official_fixture.py [--broken NAME] [--own-way]             (stdio)
       python official_fixture.py --port PORT [--broken NAME] [--own-way] (Streamable HTTP, /mcp)
"""

from __future__ import annotations

import argparse
import base64
import sys

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import UserMessage
from mcp.server.streamable_http import EventMessage, EventStore
from mcp.shared.exceptions import MCPError

# A 1x1 red PNG and a 44-byte silent WAV header with one sample.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
WAV = (
    b"RIFF" + (38).to_bytes(4, "little") + b"WAVEfmt " + (16).to_bytes(4, "little")
    + (1).to_bytes(2, "little") + (1).to_bytes(2, "little") + (8000).to_bytes(4, "little")
    + (16000).to_bytes(4, "little") + (2).to_bytes(2, "little") + (16).to_bytes(2, "little")
    + b"data" + (2).to_bytes(4, "little") + b"\x00\x00"
)

BROKEN = {
    "simple-text-empty": "test_simple_text answers with an empty content array",
    "image-as-text": "test_image_content answers with text content instead of an image",
    "audio-as-text": "test_audio_content answers with text content instead of audio",
    "embedded-resource-as-text": "test_embedded_resource answers with text, no resource item",
    "mixed-content-text-only": "test_multiple_content_types answers with one text item",
    "error-not-flagged": "test_error_handling answers without isError: true",
    "no-progress": "test_tool_with_progress sends no progress notifications",
    "no-logging": "test_tool_with_logging sends no log notifications",
    "template-ignores-id": "test://template/{id}/data does not mention the id it was read with",
    "binary-as-text": "test://static-binary is served as text, not as a blob",
    "text-empty": "test://static-text reads as an empty text",
    "prompt-image-as-text": "test_prompt_with_image has no image content",
    "prompt-resource-as-text": "test_prompt_with_embedded_resource has no embedded resource",
    "sampling-not-requested": "test_sampling answers without asking the client to sample",
    "elicitation-not-requested": "test_elicitation answers without asking the client",
    "elicitation-no-defaults": "test_elicitation_sep1034_defaults sends its form without defaults",
    "elicitation-titles-as-enum": "test_elicitation_sep1330_enums sends titled choices as a plain enum of titles",
    "elicitation-url-mode": "test_elicitation asks for a url-mode elicitation whatever modes the client declared",
    "sampling-with-tools": "test_sampling offers the client's model a tool whether or not it declared sampling.tools",
    "json-schema-stripped": "json_schema_2020_12_tool lists an input schema without $schema, $defs and the 2020-12 keywords",
    # The SSE polling behaviours of the Streamable HTTP mode (server-sse-polling).
    "sse-no-priming": "over HTTP: no event store, so no priming event and no mid-call close",
    "sse-no-retry": "over HTTP: the priming event carries no retry field before the mid-call close",
    "sse-no-replay": "over HTTP: test_reconnection's response is lost when its stream is closed",
    "one-stream-at-a-time": "over HTTP: a POST that arrives while another has no answer yet gets 409",
}

# The broken variants of the multi round-trip (MRTR, 2026-07-28) fixture tools (add_mrtr).
BROKEN.update({
    "mrtr-elicitation-at-once": "test_input_required_result_elicitation completes at once, without asking",
    "mrtr-sampling-at-once": "test_input_required_result_sampling completes at once, without asking the client to sample",
    "mrtr-roots-at-once": "test_input_required_result_list_roots completes at once, without asking for roots",
    "mrtr-state-missing": "test_input_required_result_request_state sends no requestState",
    "mrtr-one-of-three": "test_input_required_result_multiple_inputs asks for the elicitation only, not sampling and roots",
    "mrtr-one-round": "test_input_required_result_multi_round completes after the first round",
    "mrtr-state-unprotected": "requestState is not integrity-protected: a tampered state is accepted",
    "mrtr-capabilities-ignored": "test_input_required_result_capabilities asks for elicitation whatever the client declared",
    "mrtr-prompt-at-once": "test_input_required_result_prompt completes at once, without asking",
    "mrtr-missing-answer-error": "test_input_required_result_elicitation answers a retry without its answer with an error, not a new input_required",
    "mrtr-extra-answers-rejected": "test_input_required_result_elicitation rejects inputResponses with keys it did not ask for",
    "mrtr-input-required-on-list": "prompts/list answers with resultType input_required (MRTR is for tools/call, prompts/get, resources/read)",
})

DIALECT = "https://json-schema.org/draft/2020-12/schema"

# An input schema using the JSON Schema 2020-12 keywords the official json-schema-2020-12
# scenario wants kept as written: $schema, $defs with an $anchor, additionalProperties,
# allOf/anyOf and if/then/else.
SCHEMA_2020_12 = {
    "$schema": DIALECT,
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

# A form with a default for each primitive type (SEP-1034).
FORM_WITH_DEFAULTS = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
    },
}


def titled(prefix: str, titles: list[str]) -> list[dict]:
    return [{"const": f"{prefix}{i}", "title": t} for i, t in enumerate(titles, 1)]


# The five enum shapes of SEP-1330: untitled and titled single-select, the legacy enumNames,
# untitled and titled multi-select.
FORM_WITH_ENUMS = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": titled("value", ["First Option", "Second Option", "Third Option"]),
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "items": {"anyOf": titled("value", ["First Choice", "Second Choice", "Third Choice"])},
        },
    },
}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def client_declares(ctx: Context, capability: str) -> bool:
    """Whether the client declared `capability`: a server may only send it requests then."""
    caps = ctx.session.client_capabilities
    return caps is not None and getattr(caps, capability, None) is not None


def tool_error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


class MemoryEventStore(EventStore):
    """Every SSE event of the process, in order, so a stream closed mid-call resumes with
    GET and Last-Event-ID (2025-11-25 basic/transports#resumability-and-redelivery).
    `lose_replays`: know no event id, so a closed stream is never resumed (sse-no-replay).

    One store serves every session, and the SDK names a request's stream by the request's
    id, which is unique only within a session: each event also keeps the transport (one per
    session) that stored it, so a resumption replays only its own session's events (without
    that, two sessions' calls with the same id got each other's responses)."""

    def __init__(self, lose_replays: bool = False) -> None:
        self.events: list[tuple[str, int, str, object]] = []
        self.lose_replays = lose_replays

    async def store_event(self, stream_id, message):
        # The caller is the session's transport (a method or its message router closure).
        transport = id(sys._getframe(1).f_locals.get("self"))
        event_id = f"e{len(self.events) + 1}"
        self.events.append((event_id, transport, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id, send_callback):
        index = next((i for i, e in enumerate(self.events) if e[0] == last_event_id), None)
        if index is None:
            return None
        if self.lose_replays:
            return None
        _, transport, stream, _ = self.events[index]
        for event_id, owner, stream_id, message in self.events[index + 1 :]:
            if owner == transport and stream_id == stream and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream


class OneStreamAtATime:
    """ASGI middleware of the one-stream-at-a-time variant: a POST that arrives while another
    POST has not started its answer is refused with 409 (a server that cannot hold several
    streams at once; basic/transports#multiple-connections)."""

    def __init__(self, app) -> None:
        self.app = app
        self.waiting = 0

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        if self.waiting:
            body = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"busy: one request at a time"}}'
            await send({"type": "http.response.start", "status": 409, "headers": [(b"content-type", b"application/json")]})
            return await send({"type": "http.response.body", "body": body})
        self.waiting += 1
        started = False
        # A stateless tools/list (2026-07-28, named by its Mcp-Method header) answers at
        # once: three sent together could each start their answer before the next arrived
        # on a loaded machine, and the defect would go unseen by chance. Its answer starts
        # 0.3 s late, so POSTs sent at once are still waiting when the next one comes.
        if (b"mcp-method", b"tools/list") in scope.get("headers", []):
            await anyio.sleep(0.3)

        async def counted(message):
            nonlocal started
            if message["type"] == "http.response.start" and not started:
                started = True
                self.waiting -= 1
            await send(message)

        try:
            await self.app(scope, receive, counted)
        finally:
            if not started:
                self.waiting -= 1


def build(broken: str | None, own_way: bool = False) -> MCPServer:
    mcp = MCPServer("mcpcheck-official-fixture")

    def reply(official: str, own: str) -> str:
        """The text a tool answers with: the official fixture's, or (--own-way) its own."""
        return own if own_way else official

    def text(t: str) -> types.TextContent:
        return types.TextContent(type="text", text=t)

    @mcp.tool(name="test_simple_text", description="Returns simple text content.")
    def simple_text() -> list[types.ContentBlock]:
        if broken == "simple-text-empty":
            return []
        return [text("This is a simple text response for testing.")]

    @mcp.tool(name="test_image_content", description="Returns a 1x1 PNG image.")
    def image_content() -> list[types.ContentBlock]:
        if broken == "image-as-text":
            return [text("no image today")]
        # --own-way: a MIME type of its own; the official check wants any non-empty one.
        mime = "application/octet-stream" if own_way else "image/png"
        return [types.ImageContent(type="image", data=b64(PNG), mime_type=mime)]

    @mcp.tool(name="test_audio_content", description="Returns a tiny WAV clip.")
    def audio_content() -> list[types.ContentBlock]:
        if broken == "audio-as-text":
            return [text("no audio today")]
        return [types.AudioContent(type="audio", data=b64(WAV), mime_type="audio/wav")]

    def embedded(uri: str) -> types.EmbeddedResource:
        return types.EmbeddedResource(
            type="resource",
            resource=types.TextResourceContents(
                uri=uri, mime_type="text/plain", text="This is an embedded resource content."
            ),
        )

    @mcp.tool(name="test_embedded_resource", description="Returns an embedded text resource.")
    def embedded_resource() -> list[types.ContentBlock]:
        if broken == "embedded-resource-as-text":
            return [text("no resource today")]
        return [embedded("test://embedded-resource")]

    @mcp.tool(name="test_multiple_content_types", description="Returns text, image and a resource.")
    def multiple_content_types() -> list[types.ContentBlock]:
        if broken == "mixed-content-text-only":
            return [text("Multiple content types test:")]
        return [
            text("Multiple content types test:"),
            types.ImageContent(type="image", data=b64(PNG), mime_type="image/png"),
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(
                    uri="test://mixed-content-resource",
                    mime_type="application/json",
                    text='{"test":"data","value":123}',
                ),
            ),
        ]

    @mcp.tool(name="test_tool_with_logging", description="Logs three messages while it runs.")
    async def tool_with_logging(ctx: Context) -> list[types.ContentBlock]:
        if broken != "no-logging":
            for i, message in enumerate(
                ["Tool execution started", "Tool processing data", "Tool execution completed"]
            ):
                if i:
                    await anyio.sleep(0.05)
                await ctx.info(message)
        return [text("Tool with logging executed successfully")]

    @mcp.tool(name="test_tool_with_progress", description="Reports progress 0, 50, 100 of 100.")
    async def tool_with_progress(ctx: Context) -> list[types.ContentBlock]:
        for i, progress in enumerate([0, 50, 100]):
            if i:
                await anyio.sleep(0.05)
            if broken != "no-progress":
                await ctx.report_progress(progress, 100)
        return [text("Tool with progress executed successfully")]

    @mcp.tool(name="test_error_handling", description="Always fails, as a tool error.")
    def error_handling() -> types.CallToolResult:
        return types.CallToolResult(
            content=[text("This tool intentionally returns an error for testing")],
            is_error=broken != "error-not-flagged",
        )

    @mcp.tool(name="test_sampling", description="Asks the client to sample a message.")
    async def sampling(prompt: str, ctx: Context) -> types.CallToolResult:
        if broken == "sampling-not-requested":
            return types.CallToolResult(content=[text("LLM response: (not asked)")])
        if not client_declares(ctx, "sampling"):
            return tool_error("the client does not support sampling (no `sampling` capability)")
        if broken == "sampling-with-tools":
            # Built by hand: the SDK itself refuses tools to a client without sampling.tools.
            request = types.CreateMessageRequest(
                params=types.CreateMessageRequestParams(
                    messages=[types.SamplingMessage(role="user", content=text(prompt))],
                    max_tokens=100,
                    tools=[types.Tool(name="lookup", input_schema={"type": "object"})],
                )
            )
            result = await ctx.session.send_request(request, types.CreateMessageResult)
            return types.CallToolResult(content=[text(f"LLM response: {result.model}")])
        result = await ctx.session.create_message(
            messages=[types.SamplingMessage(role="user", content=text(prompt))], max_tokens=100
        )
        sampled = getattr(result.content, "text", str(result.content))
        return types.CallToolResult(content=[text(reply(f"LLM response: {sampled}", "Sampling done."))])

    @mcp.tool(name="test_elicitation", description="Asks the client for a username and email.")
    async def elicitation(message: str, ctx: Context) -> types.CallToolResult:
        if broken == "elicitation-not-requested":
            return types.CallToolResult(content=[text("User response: (not asked)")])
        if not client_declares(ctx, "elicitation"):
            return tool_error("the client does not support elicitation (no `elicitation` capability)")
        if broken == "elicitation-url-mode":
            result = await ctx.session.elicit_url(
                message=message, url="https://example.com/sign-in", elicitation_id="sign-in-1"
            )
            return types.CallToolResult(content=[text(f"User response: action={result.action}")])
        result = await ctx.session.elicit(
            message=message,
            requested_schema={
                "type": "object",
                "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"},
                },
                "required": ["username", "email"],
            },
        )
        said = f"User response: action={result.action}, content={result.content}"
        return types.CallToolResult(content=[text(reply(said, "Thanks, details received."))])

    async def elicit_form(ctx: Context, message: str, form: dict) -> types.CallToolResult:
        if not client_declares(ctx, "elicitation"):
            return tool_error("the client does not support elicitation (no `elicitation` capability)")
        result = await ctx.session.elicit(message=message, requested_schema=form)
        said = f"Elicitation completed: action={result.action}, content={result.content}"
        return types.CallToolResult(content=[text(reply(said, "Form received."))])

    @mcp.tool(name="test_elicitation_sep1034_defaults", description="Asks for a form with defaults.")
    async def elicitation_defaults(ctx: Context) -> types.CallToolResult:
        form = FORM_WITH_DEFAULTS
        if broken == "elicitation-no-defaults":
            form = {**form, "properties": {
                k: {key: v for key, v in p.items() if key != "default"}
                for k, p in form["properties"].items()
            }}
        return await elicit_form(ctx, "Please review and update the form fields with defaults", form)

    @mcp.tool(name="test_elicitation_sep1330_enums", description="Asks for a form with enum fields.")
    async def elicitation_enums(ctx: Context) -> types.CallToolResult:
        form = FORM_WITH_ENUMS
        if broken == "elicitation-titles-as-enum":
            props = dict(form["properties"])
            props["titledSingle"] = {"type": "string", "enum": ["First Option", "Second Option"]}
            form = {**form, "properties": props}
        return await elicit_form(ctx, "Please select options from the enum fields", form)

    @mcp.tool(name="json_schema_2020_12_tool", description="Tool with JSON Schema 2020-12 features.")
    def json_schema_tool() -> list[types.ContentBlock]:
        return [text("json_schema_2020_12_tool called")]

    @mcp.tool(
        name="test_reconnection",
        description="Over Streamable HTTP, closes its SSE stream mid-call; the response is replayed on reconnection.",
    )
    async def reconnection(ctx: Context) -> list[types.ContentBlock]:
        await anyio.sleep(0.1)
        await ctx.close_sse_stream()  # a no-op without an event store (stdio, sse-no-priming)
        await anyio.sleep(0.3)
        return [text("Reconnection test completed")]

    if broken != "json-schema-stripped":
        # The SDK derives a schema from the signature; the fixture lists its own, as written.
        mcp._tool_manager.get_tool("json_schema_2020_12_tool").parameters = SCHEMA_2020_12

    @mcp.resource("test://static-text", name="static-text", mime_type="text/plain")
    def static_text() -> str:
        if broken == "text-empty":
            return ""
        return "This is the content of the static text resource."

    if broken == "binary-as-text":

        @mcp.resource("test://static-binary", name="static-binary", mime_type="image/png")
        def static_binary_broken() -> str:
            return "not a blob"

    else:

        @mcp.resource("test://static-binary", name="static-binary", mime_type="image/png")
        def static_binary() -> bytes:
            return PNG

    @mcp.resource("test://watched-resource", name="watched-resource", mime_type="text/plain")
    def watched() -> str:
        return "Watched resource content."

    @mcp.resource("test://template/{id}/data", name="template-data", mime_type="application/json")
    def template(id: str) -> str:
        shown = "?" if broken == "template-ignores-id" else id
        return f'{{"id":"{shown}","templateTest":true,"data":"Data for ID: {shown}"}}'

    @mcp.prompt(name="test_simple_prompt", description="A prompt without arguments.")
    def simple_prompt() -> list:
        return [UserMessage("This is a simple prompt for testing.")]

    @mcp.prompt(name="test_prompt_with_arguments", description="A prompt with two arguments.")
    def prompt_with_arguments(arg1: str, arg2: str) -> list:
        return [UserMessage(f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")]

    @mcp.prompt(
        name="test_prompt_with_embedded_resource", description="A prompt embedding a resource."
    )
    def prompt_with_embedded_resource(resourceUri: str) -> list:
        if broken == "prompt-resource-as-text":
            return [UserMessage("no resource today")]
        return [UserMessage(embedded(resourceUri)), UserMessage("Please process the embedded resource above.")]

    @mcp.prompt(name="test_prompt_with_image", description="A prompt with an image.")
    def prompt_with_image() -> list:
        if broken == "prompt-image-as-text":
            return [UserMessage("no image today")]
        image = types.ImageContent(type="image", data=b64(PNG), mime_type="image/png")
        return [UserMessage(image), UserMessage("Please analyze the image above.")]

    # logging/setLevel: the official suite sets the level before test_tool_with_logging,
    # and registering it makes the SDK declare the `logging` capability its log messages need.
    async def set_level(ctx, params: types.SetLevelRequestParams) -> types.EmptyResult:
        return types.EmptyResult()

    mcp._lowlevel_server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
    add_mrtr(mcp, broken, own_way)
    add_custom_headers_tool(mcp, broken)
    add_missing_capability_tool(mcp, broken)
    return mcp


# --- Multi round-trip requests (MRTR, 2026-07-28 basic/patterns/mrtr): the tools and the
# prompt of the official input-required-result-* scenarios. A round without the answer it
# needs returns an InputRequiredResult; the retry carrying it completes. The SDK seals
# every requestState (RequestStateBoundary), so a tampered one is rejected with -32602.


def elicit(message: str, prop: str, kind: str = "string") -> types.ElicitRequest:
    return types.ElicitRequest(params=types.ElicitRequestFormParams(
        message=message,
        requested_schema={"type": "object", "properties": {prop: {"type": kind}}, "required": [prop]},
    ))


def sample(question: str, max_tokens: int) -> types.CreateMessageRequest:
    return types.CreateMessageRequest(params=types.CreateMessageRequestParams(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text=question))],
        max_tokens=max_tokens,
    ))


# A tool's answer in a round: the result, or a request for more input.
MrtrResult = types.CallToolResult | types.InputRequiredResult


# The client capability each input request needs.
NEEDS = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}


def mrtr_declares(ctx: Context, capability: str) -> bool:
    """Whether this request's client capabilities (2026-07-28: its `_meta`) include `capability`."""
    caps = ctx.client_capabilities
    return caps is not None and getattr(caps, capability, None) is not None


def answer(ctx: Context, key: str):
    return (ctx.input_responses or {}).get(key)


def answered_text(response) -> str:
    """What one input response said: a form's content, a sampled text, or the roots."""
    if isinstance(response, types.ElicitResult):
        return f"{response.action} {response.content}"
    if isinstance(response, types.ListRootsResult):
        return "roots " + ",".join(str(r.uri) for r in response.roots)
    content = getattr(response, "content", None)
    return getattr(content, "text", str(content))


# --own-way: the server's own key for each key the official tool descriptions show. The one
# official check that names its key (basic-elicitation: `user_name`, which missing-input-
# response, ignore-extra-params and validate-input answer too) keeps it.
OWN_KEYS = {
    "capital_question": "q_capital",
    "client_roots": "roots_please",
    "confirm": "ack",
    "greeting": "hello_text",
    "multi_user_name": "who",
    "step1": "first_q",
    "step2": "second_q",
    "user_context": "ctx_q",
}


def add_mrtr(mcp: MCPServer, broken: str | None, own_way: bool = False) -> None:
    def text(t: str) -> types.TextContent:
        return types.TextContent(type="text", text=t)

    def key(official: str) -> str:
        """The inputRequests key for `official`: the same, or (--own-way) the server's own."""
        if not own_way:
            return official.removeprefix("multi_")
        return OWN_KEYS.get(official, official)

    def ask(ctx: Context, requests: dict, state: str | None = None) -> MrtrResult:
        """Asks what the request's client capabilities allow ("MUST NOT send an inputRequests
        that the client has not declared support for"); nothing allowed: a tool error."""
        allowed = {k: r for k, r in requests.items() if mrtr_declares(ctx, NEEDS[r.method])}
        if not allowed:
            needed = sorted({NEEDS[r.method] for r in requests.values()})
            return tool_error(f"the client does not support {', '.join(needed)} (capabilities of this request)")
        return types.InputRequiredResult(input_requests=allowed, request_state=state)

    def done(t: str) -> types.CallToolResult:
        return types.CallToolResult(content=[text("Done, thank you." if own_way else t)])

    @mcp.tool(name="test_input_required_result_elicitation", description="Asks the user's name (MRTR).")
    def mrtr_elicitation(ctx: Context) -> MrtrResult:
        if broken == "mrtr-elicitation-at-once":
            return done("Hello, stranger!")
        responses = ctx.input_responses or {}
        extra = sorted(set(responses) - {"user_name"})
        if broken == "mrtr-extra-answers-rejected" and "user_name" in responses and extra:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unexpected inputResponses keys: {extra}")
        name = responses.get("user_name")
        if not isinstance(name, types.ElicitResult) or name.action != "accept" or not name.content:
            if responses and broken == "mrtr-missing-answer-error":
                raise MCPError(code=types.INVALID_PARAMS, message="inputResponses lacks user_name")
            return ask(ctx, {"user_name": elicit("What is your name?", "name")})
        return done(f"Hello, {name.content.get('name')}!")

    @mcp.tool(name="test_input_required_result_sampling", description="Asks the client to sample (MRTR).")
    def mrtr_sampling(ctx: Context) -> MrtrResult:
        if broken == "mrtr-sampling-at-once":
            return done("The capital is unknown.")
        reply = answer(ctx, key("capital_question"))
        if reply is None:
            return ask(ctx, {key("capital_question"): sample("What is the capital of France?", 100)})
        return done(f"Sampled: {answered_text(reply)}")

    @mcp.tool(name="test_input_required_result_list_roots", description="Asks the client for its roots (MRTR).")
    def mrtr_list_roots(ctx: Context) -> MrtrResult:
        roots = answer(ctx, key("client_roots"))
        if roots is None and broken != "mrtr-roots-at-once":
            return ask(ctx, {key("client_roots"): types.ListRootsRequest()})
        return done(f"Client {answered_text(roots) if roots else 'roots unknown'}")

    @mcp.tool(name="test_input_required_result_request_state", description="Round-trips a requestState (MRTR).")
    def mrtr_request_state(ctx: Context) -> MrtrResult:
        confirm = answer(ctx, key("confirm"))
        expected_state = "ack-pending" if own_way else "awaiting-confirm"
        if confirm is None:
            state = None if broken == "mrtr-state-missing" else expected_state
            return ask(ctx, {key("confirm"): elicit("Please confirm", "ok", "boolean")}, state)
        if broken != "mrtr-state-missing" and ctx.request_state != expected_state:
            raise ValueError("requestState missing or not the one sent")
        return done(f"state-ok: {answered_text(confirm)}")

    @mcp.tool(name="test_input_required_result_multiple_inputs", description="Asks three things at once (MRTR).")
    def mrtr_multiple(ctx: Context) -> MrtrResult:
        wanted = {
            key("multi_user_name"): elicit("What is your name?", "name"),
            key("greeting"): sample("Generate a greeting", 50),
            key("client_roots"): types.ListRootsRequest(),
        }
        if own_way:  # another order: roots, sampling, then the form
            wanted = dict(reversed(list(wanted.items())))
        if broken == "mrtr-one-of-three":
            wanted = {key("multi_user_name"): wanted[key("multi_user_name")]}
        # Only what this request may be asked; none of it: ask() answers with a tool error.
        wanted = {k: r for k, r in wanted.items() if mrtr_declares(ctx, NEEDS[r.method])} or wanted
        missing = {k: v for k, v in wanted.items() if answer(ctx, k) is None}
        if missing:
            return ask(ctx, missing, "multiple-inputs")
        return done("; ".join(f"{k}: {answered_text(answer(ctx, k))}" for k in wanted))

    @mcp.tool(name="test_input_required_result_multi_round", description="Asks twice, in two rounds (MRTR).")
    def mrtr_multi_round(ctx: Context) -> MrtrResult:
        state = ctx.request_state
        step1, step2 = key("step1"), key("step2")
        if state is None:
            return ask(ctx, {step1: elicit("Step 1: What is your name?", "name")}, "round-1")
        if state == "round-1" and broken != "mrtr-one-round":
            if answer(ctx, step1) is None:
                return ask(ctx, {step1: elicit("Step 1: What is your name?", "name")}, "round-1")
            return ask(ctx, {step2: elicit("Step 2: What is your favorite color?", "color")}, "round-2")
        last = answer(ctx, step2) or answer(ctx, step1)
        return done(f"Multi-round complete: {answered_text(last) if last else 'no answer'}")

    @mcp.tool(name="test_input_required_result_tampered_state", description="Signs its requestState (MRTR).")
    def mrtr_tampered(ctx: Context) -> MrtrResult:
        if ctx.request_state is None:
            return ask(ctx, {key("confirm"): elicit("Please confirm", "ok", "boolean")}, "signed-state")
        return done(f"state accepted: {ctx.request_state}")

    @mcp.tool(name="test_input_required_result_capabilities", description="Asks only what the client supports (MRTR).")
    def mrtr_capabilities(ctx: Context) -> MrtrResult:
        asks = {}
        declared = lambda name: mrtr_declares(ctx, name)  # noqa: E731
        if declared("sampling"):
            asks[key("greeting")] = sample("Generate a greeting", 50)
        if declared("elicitation") or broken == "mrtr-capabilities-ignored":
            asks[key("multi_user_name")] = elicit("What is your name?", "name")
        if declared("roots"):
            asks[key("client_roots")] = types.ListRootsRequest()
        pending = {k: v for k, v in asks.items() if answer(ctx, k) is None}
        if pending:
            return types.InputRequiredResult(input_requests=pending)
        return done(f"asked for {sorted(asks) or 'nothing'}")

    @mcp.prompt(name="test_input_required_result_prompt", description="Asks for context first (MRTR).")
    def mrtr_prompt(ctx: Context) -> list | types.InputRequiredResult:
        context = answer(ctx, key("user_context"))
        if context is None and broken != "mrtr-prompt-at-once" and mrtr_declares(ctx, "elicitation"):
            return ask(ctx, {key("user_context"): elicit("What context should the prompt use?", "context")})
        shown = answered_text(context) if context else "none"
        return [UserMessage("A prompt of its own." if own_way else f"Prompt with context: {shown}")]

    if broken == "mrtr-state-unprotected":
        from mcp.server.request_state import RequestStateBoundary

        middleware = mcp._lowlevel_server.middleware
        middleware[:] = [m for m in middleware if not isinstance(m, RequestStateBoundary)]

    if broken == "mrtr-input-required-on-list":

        async def list_asks(ctx, call_next):
            result = await call_next(ctx)
            if ctx.method == "prompts/list" and ctx.protocol_version == "2026-07-28" and isinstance(result, dict):
                return {**result, "resultType": "input_required", "requestState": "listing"}
            return result

        mcp._lowlevel_server.middleware.append(list_asks)


# --- x-mcp-header (2026-07-28, SEP-2243; issue 13) -------------------------------------------
# The official http-custom-header-server-validation scenario (and mcpcheck's
# stateless/http-param-header-*) need a tool whose input schema marks a string parameter with
# `x-mcp-header`. The SDK validates `Mcp-Param-*` headers against it on the 2026-07-28
# Streamable HTTP path; `--broken param-header-unchecked` turns that validation off.

CUSTOM_HEADERS_SCHEMA = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region", "description": "Mirrored into Mcp-Param-Region"},
        "query": {"type": "string", "description": "Not mirrored"},
    },
    "required": ["query"],
}

BROKEN["param-header-unchecked"] = "Mcp-Param-* headers are not checked against the arguments they mirror"


def add_custom_headers_tool(mcp: MCPServer, broken: str | None) -> None:
    @mcp.tool(name="test_custom_headers", description="A tool with an x-mcp-header parameter.")
    def custom_headers(query: str, region: str | None = None) -> list[types.ContentBlock]:
        return [types.TextContent(type="text", text=f"region={region} query={query}")]

    mcp._tool_manager.get_tool("test_custom_headers").parameters = CUSTOM_HEADERS_SCHEMA
    if broken == "param-header-unchecked":
        # With a schema lookup that knows no tool, the SDK skips the header validation.
        mcp._lowlevel_server.get_tool_input_schema = lambda name: None


# --- a request that needs a client capability (2026-07-28, issue 13) --------------------------
# 2026-07-28 basic#meta: "If processing a request requires a capability the client did not
# include in io.modelcontextprotocol/clientCapabilities, the server MUST return a
# MissingRequiredClientCapabilityError (-32021) whose data.requiredCapabilities lists the
# missing capabilities. On HTTP, the response status MUST be 400 Bad Request." The official
# server-stateless scenario calls `test_missing_capability` without `sampling`.

BROKEN.update({
    "missing-capability-executed": "test_missing_capability runs although the request declared no sampling capability",
    "missing-capability-no-data": "test_missing_capability answers -32021 without data.requiredCapabilities",
    "missing-capability-status-200": "over HTTP: -32021 comes under status 200, not 400",
})


def add_missing_capability_tool(mcp: MCPServer, broken: str | None) -> None:
    @mcp.tool(name="test_missing_capability", description="Needs the client's sampling capability.")
    def missing_capability(ctx: Context) -> str:
        if mrtr_declares(ctx, "sampling") or broken == "missing-capability-executed":
            return "sampling declared"
        required = types.ClientCapabilities(sampling=types.SamplingCapability())
        data = types.MissingRequiredClientCapabilityErrorData(required_capabilities=required)
        raise MCPError(
            code=types.MISSING_REQUIRED_CLIENT_CAPABILITY,
            message="test_missing_capability needs the sampling capability",
            data=None if broken == "missing-capability-no-data"
            else data.model_dump(by_alias=True, mode="json", exclude_none=True),
        )

    if broken == "missing-capability-status-200":
        import mcp.server._streamable_http_modern as modern

        modern.ERROR_CODE_HTTP_STATUS = {
            code: status
            for code, status in modern.ERROR_CODE_HTTP_STATUS.items()
            if code != types.MISSING_REQUIRED_CLIENT_CAPABILITY
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, help="Streamable HTTP on 127.0.0.1:PORT/mcp")
    parser.add_argument("--broken", choices=sorted(BROKEN), help="break one behaviour")
    parser.add_argument(
        "--own-way", action="store_true",
        help="own inputRequests keys and reply texts, where the official checks read none",
    )
    args = parser.parse_args()
    mcp = build(args.broken, args.own_way)
    if args.port is None:
        mcp.run("stdio")
        return
    import uvicorn

    store = None if args.broken == "sse-no-priming" else MemoryEventStore(args.broken == "sse-no-replay")
    retry = None if args.broken == "sse-no-retry" else 200
    app = mcp.streamable_http_app(host="127.0.0.1", event_store=store, retry_interval=retry)
    if args.broken == "one-stream-at-a-time":
        app = OneStreamAtATime(app)
    print(f"official_fixture: on http://127.0.0.1:{args.port}/mcp", file=sys.stderr)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
