// The official TypeScript MCP SDK (the one Claude Code, Cursor and VS Code build on) driving a
// served zero-memory over streamable HTTP with bearer API tokens.
//
// Reads a plan as JSON on stdin:
//   {"url": "http://127.0.0.1:PORT/mcp", "tokens": {"owner": "zm_..."},
//    "calls": [{"as": "owner", "tool": "recall", "arguments": {...}}, ...]}
// and prints one JSON object on stdout:
//   {"tools": {"owner": ["remember", ...]},
//    "calls": [{"outcome": "result", "isError": false, "text": "...", "structured": true},
//              {"outcome": "thrown", "message": "MCP error -32602: ..."}, ...]}
// (a tool's result also lists the uris of its resource links; for prompts and resources see OPS)
// in the order of the plan. A call the SDK throws on is reported, never fatal: the pytest side
// (tests/memories/mcp_ts_support.py, test_mcp.py) names the tool that failed and how.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

async function connect(url, secret) {
  const client = new Client({ name: "ts-sdk-harness", version: "1.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${secret}` } },
  });
  await client.connect(transport);
  return client;
}

// A plan step with "op" (listPrompts, getPrompt, listResources, listResourceTemplates,
// readResource) and its "params" calls that client method: {"outcome": "result", "data": ...}
// or {"outcome": "thrown", "message", "code", "data"} (a JSON-RPC error, the SDK's McpError).
const OPS = ["listPrompts", "getPrompt", "listResources", "listResourceTemplates", "readResource"];

async function request(client, call) {
  if (!OPS.includes(call.op)) return { outcome: "thrown", message: `unknown op ${call.op}` };
  try {
    return { outcome: "result", data: await client[call.op](call.params ?? {}) };
  } catch (error) {
    return {
      outcome: "thrown",
      message: String(error?.message ?? error),
      code: error?.code,
      data: error?.data,
    };
  }
}

async function main() {
  const plan = await readStdin();
  const clients = {};
  const tools = {};
  for (const [who, secret] of Object.entries(plan.tokens)) {
    clients[who] = await connect(plan.url, secret);
    // As every real client does before calling: it also arms the SDK's output-schema checks.
    const listed = await clients[who].listTools();
    tools[who] = listed.tools.map((tool) => tool.name);
  }
  const calls = [];
  for (const call of plan.calls) {
    if (call.op !== undefined) {
      calls.push(await request(clients[call.as], call));
      continue;
    }
    try {
      const result = await clients[call.as].callTool({
        name: call.tool,
        arguments: call.arguments,
      });
      const text = (result.content ?? [])
        .filter((block) => block.type === "text")
        .map((block) => block.text)
        .join("");
      calls.push({
        outcome: "result",
        isError: result.isError === true,
        text,
        structured: result.structuredContent !== undefined,
        links: (result.content ?? [])
          .filter((block) => block.type === "resource_link")
          .map((block) => block.uri),
      });
    } catch (error) {
      calls.push({ outcome: "thrown", message: String(error?.message ?? error) });
    }
  }
  for (const client of Object.values(clients)) await client.close();
  process.stdout.write(JSON.stringify({ tools, calls }));
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
