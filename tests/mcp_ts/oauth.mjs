// The official TypeScript MCP SDK's own OAuth client signing in to a served zero-memory, the way
// Claude Code, Cursor and VS Code do: the 401, discovery, registration (a client ID metadata
// document, or dynamic registration), PKCE S256, the person's consent, the token, tool calls,
// a refresh after the access token expired, and a revoked grant reported as unauthorized.
//
// A conversation of JSON lines with pytest (tests/oauth/test_typescript_sdk_sign_in.py):
//   stdin  {"url": "http://127.0.0.1:PORT/mcp", "redirectUrl": "http://127.0.0.1:N/callback",
//           "clientMetadataUrl": "https://127.0.0.1:M/client.json" or null, "query": "..."}
//   stdout {"step": "authorize", "url": "<the authorization URL the SDK built>"}
//   stdin  {"code": "...", "state": "..."}           (the redirect after consent, from pytest)
//   stdout {"step": "signed_in", "tools": [...], "recall": {...}, "accessToken": "..."}
//   stdin  {}                                          (pytest let the access token expire)
//   stdout {"step": "refreshed", "recall": {...}, "accessToken": "..."}
//   stdin  {}                                          (pytest revoked the grant)
//   stdout {"step": "revoked", "outcome": "thrown", "name": "...", "message": "..."}
// Each stdout line also carries "requests": what the SDK asked the server since the last line.
// The provider keeps everything in memory; redirectToAuthorization hands the URL to pytest.
import readline from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";

const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();

async function receive() {
  const { value, done } = await lines.next();
  if (done) throw new Error("pytest closed the conversation");
  return JSON.parse(value);
}

let requests = [];

function say(message) {
  process.stdout.write(`${JSON.stringify({ ...message, requests })}\n`);
  requests = [];
}

// Every request of the SDK (MCP and OAuth alike) goes through here, so pytest sees the flow.
async function loggingFetch(input, init) {
  const url = new URL(input instanceof Request ? input.url : String(input));
  const body = init?.body;
  const grantType = body instanceof URLSearchParams ? body.get("grant_type") : undefined;
  const response = await fetch(input, init);
  requests.push({
    method: init?.method ?? "GET",
    path: url.pathname,
    status: response.status,
    ...(grantType ? { grantType } : {}),
  });
  return response;
}

class InMemoryProvider {
  constructor({ redirectUrl, clientMetadataUrl }) {
    this.redirectUrl = redirectUrl;
    this.clientMetadataUrl = clientMetadataUrl ?? undefined;
    this.authorizationUrls = [];
    this._state = undefined;
  }

  get clientMetadata() {
    return {
      client_name: "TypeScript SDK agent",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }

  state() {
    this._state = crypto.randomUUID();
    return this._state;
  }

  clientInformation() {
    return this._client;
  }

  saveClientInformation(information) {
    this._client = information;
  }

  tokens() {
    return this._tokens;
  }

  saveTokens(tokens) {
    this._tokens = tokens;
  }

  redirectToAuthorization(url) {
    this.authorizationUrls.push(url.toString());
  }

  saveCodeVerifier(verifier) {
    this._verifier = verifier;
  }

  codeVerifier() {
    return this._verifier;
  }

  invalidateCredentials(scope) {
    if (scope === "all" || scope === "client") this._client = undefined;
    if (scope === "all" || scope === "tokens") this._tokens = undefined;
    if (scope === "all" || scope === "verifier") this._verifier = undefined;
  }
}

function transportFor(url, provider) {
  return new StreamableHTTPClientTransport(new URL(url), {
    authProvider: provider,
    fetch: loggingFetch,
  });
}

async function recall(client, query) {
  const result = await client.callTool({ name: "recall", arguments: { query } });
  const text = (result.content ?? []).map((block) => block.text ?? "").join("");
  return { isError: result.isError === true, text };
}

async function main() {
  const plan = await receive();
  const provider = new InMemoryProvider(plan);

  // Connect without a token: the 401 starts discovery, registration and the authorization.
  let transport = transportFor(plan.url, provider);
  let client = new Client({ name: "ts-sdk-oauth", version: "1.0" });
  try {
    await client.connect(transport);
    throw new Error("the server let the SDK in without signing in");
  } catch (error) {
    if (!(error instanceof UnauthorizedError)) throw error;
  }
  say({ step: "authorize", url: provider.authorizationUrls.at(-1) });

  const redirect = await receive();
  if (redirect.state !== provider._state) throw new Error("the state came back changed");
  await transport.finishAuth(redirect.code);
  transport = transportFor(plan.url, provider);
  client = new Client({ name: "ts-sdk-oauth", version: "1.0" });
  await client.connect(transport);
  const listed = await client.listTools();
  say({
    step: "signed_in",
    clientId: provider.clientInformation()?.client_id,
    tools: listed.tools.map((tool) => tool.name),
    recall: await recall(client, plan.query),
    accessToken: provider.tokens()?.access_token,
  });

  await receive(); // the access token expired meanwhile: the SDK refreshes and calls again
  say({
    step: "refreshed",
    recall: await recall(client, plan.query),
    accessToken: provider.tokens()?.access_token,
  });

  await receive(); // the person revoked the grant: the next call is unauthorized
  const asked = provider.authorizationUrls.length;
  try {
    const result = await recall(client, plan.query);
    say({ step: "revoked", outcome: "result", ...result });
  } catch (error) {
    say({
      step: "revoked",
      outcome: "thrown",
      name: error?.constructor?.name ?? typeof error,
      message: String(error?.message ?? error),
      askedToSignInAgain: provider.authorizationUrls.length > asked,
    });
  }
  await client.close().catch(() => {});
  process.exit(0);
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
