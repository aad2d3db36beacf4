#!/usr/bin/env python3
"""mcp_sdk_server.py's low-level server, protected with the official `mcp` SDK's own
OAuth resource-server support (mcp.server.auth): the SDK's bearer middleware with a static
token verifier, its Protected Resource Metadata route, and a listed authorization server
on the same loopback port that publishes RFC 8414 metadata (static; no OAuth flow runs).

Tokens (static, for tests only):
  mcpcheck-sdk-token           valid, scope `mcp`, issued for this server
  mcpcheck-sdk-readonly-token  valid, no scope `mcp`           -> 403 insufficient_scope
  mcpcheck-sdk-expired-token   expired                          -> 401
  mcpcheck-sdk-foreign-token   issued for another resource      -> 401 (validate_token_resource)

Usage: python mcp_sdk_protected.py PORT   (Streamable HTTP on http://127.0.0.1:PORT/mcp)
"""

from __future__ import annotations

import sys
import time
from importlib.metadata import version

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcp_sdk_server import build

SCOPE = "mcp"


class StaticVerifier:
    """A TokenVerifier over a fixed table (the SDK checks scopes, expiry and resource)."""

    def __init__(self, resource: str) -> None:
        now = int(time.time())
        self.tokens = {
            "mcpcheck-sdk-token": dict(scopes=[SCOPE], expires_at=now + 86400, resource=resource),
            "mcpcheck-sdk-readonly-token": dict(scopes=[], expires_at=now + 86400, resource=resource),
            "mcpcheck-sdk-expired-token": dict(scopes=[SCOPE], expires_at=now - 3600, resource=resource),
            "mcpcheck-sdk-foreign-token": dict(
                scopes=[SCOPE], expires_at=now + 86400, resource="http://127.0.0.1:1/another-mcp"
            ),
        }

    async def verify_token(self, token: str) -> AccessToken | None:
        info = self.tokens.get(token)
        return AccessToken(token=token, client_id="mcpcheck", **info) if info else None


def main() -> None:
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    import uvicorn

    port = int(sys.argv[1])
    base = f"http://127.0.0.1:{port}"
    resource = f"{base}/mcp"

    async def as_metadata(request):
        return JSONResponse(
            {
                "issuer": base,
                "authorization_endpoint": f"{base}/authorize",
                "token_endpoint": f"{base}/token",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code"],
                "code_challenge_methods_supported": ["S256"],
                "scopes_supported": [SCOPE],
            }
        )

    app = build().streamable_http_app(
        host="127.0.0.1",
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=resource,
            required_scopes=[SCOPE],
            validate_token_resource=True,
        ),
        token_verifier=StaticVerifier(resource),
        custom_starlette_routes=[Route("/.well-known/oauth-authorization-server", as_metadata)],
    )
    print(f"mcp_sdk_protected: mcp {version('mcp')} on {resource} (bearer tokens required)", file=sys.stderr)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
