// The plain JSON endpoints for scripts, and raw JSON-RPC on /mcp, with curl-shaped requests:
//   curl -H "Authorization: Bearer $T" http://127.0.0.1:27123/mcp/tools
//   curl -H "Authorization: Bearer $T" -H "Content-Type: application/json" -d '{"tool":"...","arguments":{...}}' .../mcp/tools/call
import { generateMcpToken } from "../../src/core/mcp/mcp-token";
import { startMcpHttpServer, type McpHttpServerHandle } from "../../src/node/mcp-http-server";
import { makeTempVault, type TempVault } from "../support/temp-vault";
import { postJson, request } from "./support/http-request";
import { noteToolRegistry } from "./support/mcp-test-kit";

const token = generateMcpToken();
let vault: TempVault;
let bridge: McpHttpServerHandle;

beforeEach(async () => {
  vault = await makeTempVault({ "Ideas.md": "# Ideas\n\nGradient descent for ranking.\n" });
  bridge = await startMcpHttpServer({ registry: () => noteToolRegistry(vault.root).registry, port: 0, token, vaultRoot: vault.root });
});

afterEach(async () => {
  await bridge.close();
  await vault.cleanup();
});

const call = (body: unknown) => postJson(bridge.port, "/mcp/tools/call", token, body);

it("GET /mcp/tools lists the tools with JSON Schemas", async () => {
  const res = await request(bridge.port, { path: "/mcp/tools", headers: { Host: `127.0.0.1:${bridge.port}`, Authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
  const { tools } = JSON.parse(res.body) as { tools: { name: string; inputSchema: { required?: string[] } }[] };
  expect(tools.map((t) => t.name)).toEqual(["create_note", "search_notes", "summarize_notes", "read_note"]);
  expect(tools.find((t) => t.name === "summarize_notes")!.inputSchema.required).toEqual(["mode"]);
});

it("POST /mcp/tools/call runs a tool: 200 {tool, result, text}", async () => {
  const res = await call({ tool: "search_notes", arguments: { query: "gradient", limit: 5 } });
  expect(res.status).toBe(200);
  expect(JSON.parse(res.body)).toEqual({
    tool: "search_notes",
    result: { results: [{ filePath: "Ideas.md", title: "Ideas", snippet: expect.any(String), score: expect.any(Number) }] },
    text: expect.stringContaining("1. Ideas (Ideas.md"),
  });
  const created = await call({ tool: "create_note", arguments: { topic: "scripts" } });
  expect(JSON.parse(created.body).result.filePath).toBe("Krypton/Scripts.md");
  expect(await vault.exists("Krypton/Scripts.md")).toBe(true);
});

it.each([
  [{ tool: "create_note", arguments: {} }, 400, "Missing required parameter: topic", "invalid-input"],
  [{ tool: "create_note" }, 400, "Missing required parameter: topic", "invalid-input"],
  [{ tool: "create_note", arguments: "topic=x" }, 400, "Arguments for create_note must be a JSON object", "invalid-input"],
  [{ tool: "read_note", arguments: { path: "Nope.md" } }, 404, "Note not found: Nope.md", "not-found"],
  [{ tool: "search_notes", arguments: { query: "zebra" } }, 404, "No notes match 'zebra'", "not-found"],
  [{ tool: "read_note", arguments: { path: "../x.md" } }, 403, "'..'", "refused"],
  [{ tool: "delete_note", arguments: { path: "Ideas.md" } }, 404, "Unknown tool: delete_note", "unknown-tool"],
])("%j answers %i with a message", async (body, status, message, code) => {
  const res = await call(body);
  expect(res.status).toBe(status);
  expect(JSON.parse(res.body)).toEqual({ error: expect.stringContaining(message), code });
});

it.each([
  [{ arguments: {} }, "Missing required field: tool"],
  [[1, 2], "must be a JSON object"],
  ["{nope", "not valid JSON"],
])("a malformed call body %j is a 400 saying why", async (body, message) => {
  const res = await call(body);
  expect(res.status).toBe(400);
  expect(JSON.parse(res.body).error).toContain(message);
});

it("wrong methods and paths say what exists", async () => {
  const get = await request(bridge.port, { path: "/mcp/tools/call", headers: { Host: `127.0.0.1:${bridge.port}`, Authorization: `Bearer ${token}` } });
  expect(get.status).toBe(405);
  expect(get.headers.allow).toBe("POST");
  const getMcp = await request(bridge.port, { path: "/mcp", headers: { Host: `127.0.0.1:${bridge.port}`, Authorization: `Bearer ${token}` } });
  expect(getMcp.status).toBe(405);
  const missing = await request(bridge.port, { path: "/admin", headers: { Host: `127.0.0.1:${bridge.port}`, Authorization: `Bearer ${token}` } });
  expect(missing.status).toBe(404);
  expect(JSON.parse(missing.body).error).toContain("POST /mcp/tools/call");
});

it("raw JSON-RPC on /mcp works without a session (stateless), as the Inspector CLI sends it", async () => {
  const list = await postJson(bridge.port, "/mcp", token, { jsonrpc: "2.0", id: 7, method: "tools/list" });
  expect(list.status).toBe(200);
  const body = JSON.parse(list.body) as { id: number; result: { tools: { name: string }[] } };
  expect(body.id).toBe(7);
  expect(body.result.tools).toHaveLength(4);
  expect(list.headers["mcp-session-id"]).toBeUndefined();
  const called = await postJson(bridge.port, "/mcp", token, { jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "read_note", arguments: { path: "Ideas.md" } } });
  expect(JSON.parse(called.body).result).toMatchObject({ structuredContent: { path: "Ideas.md" }, content: [{ type: "text", text: expect.stringContaining("Gradient") }] });
  const unknown = await postJson(bridge.port, "/mcp", token, { jsonrpc: "2.0", id: 9, method: "no/such/method" });
  expect(JSON.parse(unknown.body)).toMatchObject({ id: 9, error: { code: -32601 } });
});
