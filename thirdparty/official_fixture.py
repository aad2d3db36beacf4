#!/usr/bin/env python3
"""A server exposing the official conformance suite's fixture names, on the official `mcp`
SDK (2.x `MCPServer`), the way the SDKs' "everything servers" do: what
`@modelcontextprotocol/conformance server` calls, so mcpcheck's official-fixture scenarios
(scenarios/official/) and the official suite can run side by side against it.

Tools:     test_simple_text, test_image_content, test_audio_content, test_embedded_resource,
           test_multiple_content_types, test_tool_with_logging, test_tool_with_progress,
           test_error_handling, test_sampling, test_elicitation, test_elicitation_sep1034_defaults,
           test_elicitation_sep1330_enums, json_schema_2020_12_tool (listed, never called),
           test_custom_headers (2026-07-28: `region` mirrored into Mcp-Param-Region)
Resources: test://static-text, test://static-binary, test://watched-resource (subscribable),
           template test://template/{id}/data
Prompts:   test_simple_prompt, test_prompt_with_arguments, test_prompt_with_embedded_resource,
           test_prompt_with_image

`--broken NAME` breaks exactly one behaviour, for tests (BROKEN lists them).

Usage: python official_fixture.py [--broken NAME]                 (stdio)
       python official_fixture.py --port PORT [--broken NAME]     (Streamable HTTP, /mcp)
"""

from __future__ import annotations

import argparse
import base64
import sys

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import UserMessage

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
    "json-schema-stripped": "json_schema_2020_12_tool lists an input schema without $schema, $defs and the 2020-12 keywords",
}

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


def build(broken: str | None) -> MCPServer:
    mcp = MCPServer("mcpcheck-official-fixture")

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
        return [types.ImageContent(type="image", data=b64(PNG), mime_type="image/png")]

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
        result = await ctx.session.create_message(
            messages=[types.SamplingMessage(role="user", content=text(prompt))], max_tokens=100
        )
        reply = getattr(result.content, "text", str(result.content))
        return types.CallToolResult(content=[text(f"LLM response: {reply}")])

    @mcp.tool(name="test_elicitation", description="Asks the client for a username and email.")
    async def elicitation(message: str, ctx: Context) -> types.CallToolResult:
        if broken == "elicitation-not-requested":
            return types.CallToolResult(content=[text("User response: (not asked)")])
        if not client_declares(ctx, "elicitation"):
            return tool_error("the client does not support elicitation (no `elicitation` capability)")
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
        return types.CallToolResult(
            content=[text(f"User response: action={result.action}, content={result.content}")]
        )

    async def elicit_form(ctx: Context, message: str, form: dict) -> types.CallToolResult:
        if not client_declares(ctx, "elicitation"):
            return tool_error("the client does not support elicitation (no `elicitation` capability)")
        result = await ctx.session.elicit(message=message, requested_schema=form)
        return types.CallToolResult(
            content=[text(f"Elicitation completed: action={result.action}, content={result.content}")]
        )

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
    add_custom_headers_tool(mcp, broken)
    return mcp


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, help="Streamable HTTP on 127.0.0.1:PORT/mcp")
    parser.add_argument("--broken", choices=sorted(BROKEN), help="break one behaviour")
    args = parser.parse_args()
    mcp = build(args.broken)
    if args.port is None:
        mcp.run("stdio")
        return
    import uvicorn

    app = mcp.streamable_http_app(host="127.0.0.1")
    print(f"official_fixture: on http://127.0.0.1:{args.port}/mcp", file=sys.stderr)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
