// A conformance client on the TypeScript SDK (npm @modelcontextprotocol/sdk), for
// `mcpcheck client`. It follows the official suite's contract: the server URL is the last
// argument and MCP_CONFORMANCE_SCENARIO names the scenario. With `--stdio CMD ARGS...` it
// spawns that server command instead (`mcpcheck client --transport stdio` puts
// `mcpcheck mock ...` there). Scenarios it has no special case for get the basic flow:
// connect, list the tools, call each, close. `auth/*` scenarios go through the SDK's OAuth
// client (an `authProvider`): it reads the authorization redirect itself, as there is no
// browser, then finishes the authorization and connects again.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const stdioAt = process.argv.indexOf("--stdio");
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";

/** An OAuth client provider that keeps everything in memory and plays the browser. */
function oauthProvider() {
  const redirect = "http://localhost:3000/callback";
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");
  const kept = { verifier: undefined, tokens: undefined, code: undefined, client: undefined };
  if (context.client_id) {
    kept.client = { client_id: context.client_id, client_secret: context.client_secret };
  }
  return {
    kept,
    get redirectUrl() {
      return redirect;
    },
    clientMetadataUrl: "https://ts-conformance-client.example/client-metadata.json",
    get clientMetadata() {
      return {
        client_name: "ts-conformance-client",
        redirect_uris: [redirect],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      };
    },
    // The SDK sends `state` only when the application gives one.
    state: () => crypto.randomUUID(),
    clientInformation: () => kept.client,
    saveClientInformation: (info) => {
      kept.client = info;
    },
    tokens: () => kept.tokens,
    saveTokens: (tokens) => {
      kept.tokens = tokens;
    },
    saveCodeVerifier: (v) => {
      kept.verifier = v;
    },
    codeVerifier: () => kept.verifier,
    async redirectToAuthorization(url) {
      const answer = await fetch(url, { redirect: "manual" });
      const location = answer.headers.get("location");
      if (!location) throw new Error(`the authorization endpoint answered ${answer.status}`);
      kept.code = new URL(location).searchParams.get("code");
    },
  };
}

const auth = stdioAt < 0 && scenario.startsWith("auth/") ? oauthProvider() : undefined;
const url = stdioAt < 0 ? new URL(process.argv[process.argv.length - 1]) : undefined;

const client = new Client(
  { name: "ts-conformance-client", version: "1.0.0" },
  {
    capabilities: {
      elicitation: { form: { applyDefaults: true } },
      sampling: {},
      roots: { listChanged: true },
    },
  },
);
// With applyDefaults the SDK fills every field the answer leaves out from its default.
client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: {} }));
client.setRequestHandler(CreateMessageRequestSchema, async () => ({
  role: "assistant",
  content: { type: "text", text: "8" },
  model: "ts-conformance-model",
}));
client.setRequestHandler(ListRootsRequestSchema, async () => ({
  roots: [{ uri: "file:///tmp/project", name: "project" }],
}));

let transport =
  stdioAt >= 0
    ? new StdioClientTransport({
        command: process.argv[stdioAt + 1],
        args: process.argv.slice(stdioAt + 2),
      })
    : new StreamableHTTPClientTransport(url, { authProvider: auth });
/**
 * Runs `call`; when the SDK stops it for an authorization (a 403 `insufficient_scope`
 * step-up, after the redirect was read), finishes that authorization and runs it again,
 * at most twice.
 */
async function authorized(call) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (e) {
      if (!(auth && e instanceof UnauthorizedError && auth.kept.code) || attempt >= 2) throw e;
      const code = auth.kept.code;
      auth.kept.code = undefined;
      await transport.finishAuth(code);
    }
  }
}

try {
  await client.connect(transport);
} catch (e) {
  if (!(auth && e instanceof UnauthorizedError && auth.kept.code)) throw e;
  // Authorized through the redirect: finish with the code, then connect again.
  await transport.finishAuth(auth.kept.code);
  transport = new StreamableHTTPClientTransport(url, { authProvider: auth });
  await client.connect(transport);
}
// Its roots "changed" at start-up: a client that declared listChanged says so.
await client.sendRootsListChanged();
const { tools } = await authorized(() => client.listTools());
if (scenario === "json-schema-2020-12-preservation") {
  const focal = tools.find((t) => t.name === "json_schema_2020_12_tool");
  await client.callTool({ name: "json_schema_echo", arguments: { schema: focal.inputSchema } });
} else if (scenario === "progress-tokens") {
  // mcpcheck's flow: two calls in flight at once, each asking for progress.
  const onprogress = () => {};
  const call = () =>
    client.callTool({ name: "add_numbers", arguments: { a: 5, b: 3 } }, undefined, { onprogress });
  await Promise.all([call(), call()]);
} else if (scenario !== "initialize") {
  for (const tool of tools) {
    const args = tool.name === "add_numbers" ? { a: 5, b: 3 } : {};
    // A call not answered in 2 s is given up: the SDK sends notifications/cancelled.
    try {
      await authorized(() =>
        client.callTool({ name: tool.name, arguments: args }, undefined, { timeout: 2000 }),
      );
    } catch (e) {
      if (e?.code !== ErrorCode.RequestTimeout) throw e;
    }
  }
}
if (transport.terminateSession) {
  await transport.terminateSession().catch(() => {});
}
await client.close();
