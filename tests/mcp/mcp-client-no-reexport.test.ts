// The user's remote MCP tools live in the same registry as Krypton's note tools (the agent sees both), but
// Krypton's own MCP server must never hand them out: not in tools/list, not through tools/call, not through
// the JSON endpoints, over any transport. Real bridge, real remote server (stdio process), real SDK clients.
import { join } from "node:path";
import { McpClientManager } from "../../src/core/mcp-client/mcp-client-manager";
import { EMPTY_SERVER } from "../../src/core/mcp-client/server-config";
import { createMcpServer } from "../../src/core/mcp/mcp-server";
import { startMcpHttpServer, type McpHttpServerHandle } from "../../src/node/mcp-http-server";
import { createStdioTransportFactory } from "../../src/node/mcp-stdio-transport";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { makeTempVault, type TempVault } from "../support/temp-vault";
import { bundleForNode } from "./support/bundle";
import { connectSse, connectStreamable, noteToolRegistry, textOf } from "./support/mcp-test-kit";
import { postJson, request } from "./support/http-request";

const token = "bridge-token-0123456789abcdef";
let vault: TempVault;
let manager: McpClientManager;
let bridge: McpHttpServerHandle;
let registry: ReturnType<typeof noteToolRegistry>["registry"];

beforeAll(async () => {
  const entry = await bundleForNode(join(__dirname, "fixtures", "remote-stdio-server.ts"), "remote-stdio-server.cjs");
  vault = await makeTempVault({ "Ideas.md": "# Ideas\n" });
  registry = noteToolRegistry(vault.root).registry;
  manager = new McpClientManager({ registry, fetch: (i, init) => fetch(i, init), stdio: createStdioTransportFactory({ loginPath: async () => null }) });
  const [status] = await manager.apply([{ ...EMPTY_SERVER, name: "github", command: process.execPath, args: [entry], useLoginShellPath: false }]);
  expect(status.state).toBe("ready");
  bridge = await startMcpHttpServer({ registry, port: 0, token, vaultRoot: vault.root });
});

afterAll(async () => {
  await bridge.close();
  await manager.close();
  await vault.cleanup();
});

it("the registry holds both kinds (what the agent sees)", () => {
  const names = registry.list().map((t) => t.name);
  expect(names).toEqual(expect.arrayContaining(["search_notes", "github:echo"]));
});

it.each([
  ["Streamable HTTP", () => connectStreamable(`${bridge.url}`, token)],
  ["legacy SSE", () => connectSse(bridge.url.replace(/\/mcp$/, ""), token)],
])("the bridge over %s lists only Krypton's tools and refuses a remote one", async (_name, connect) => {
  const client = await connect();
  try {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["create_note", "read_note", "search_notes", "summarize_notes"]);
    const result = await client.callTool({ name: "github:echo", arguments: { text: "leak?" } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Unknown tool: github:echo\. Available tools: /);
    expect(textOf(result).split("Available tools:")[1]).not.toContain("github");
  } finally {
    await client.close();
  }
});

it("the JSON endpoints neither list nor run a remote tool", async () => {
  const list = await request(bridge.port, { path: "/mcp/tools", headers: { Host: `127.0.0.1:${bridge.port}`, Authorization: `Bearer ${token}` } });
  expect(list.status).toBe(200);
  expect(list.body).toContain("search_notes");
  expect(list.body).not.toContain("github");
  const call = await postJson(bridge.port, "/mcp/tools/call", token, { tool: "github:echo", arguments: { text: "x" } });
  expect(call.status).toBe(404);
  expect(call.body).toContain("Unknown tool: github:echo");
});

it("createMcpServer (the stdio server of `krypton mcp` and the bridge alike) serves no remote tool", async () => {
  const server = createMcpServer(registry, { name: "krypton", version: "0" });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: "t", version: "0" });
  await client.connect(b);
  const { tools } = await client.listTools();
  expect(tools.some((t) => t.name.includes(":"))).toBe(false);
  const result = await client.callTool({ name: "github:show_env", arguments: { name: "HOME" } });
  expect(result.isError).toBe(true);
  await client.close();
});
