// src/core/mcp/mcp-server.ts stays in core only because the MCP SDK's server module (McpServer, zod,
// ajv) needs no Node builtin: bundle it for the browser, as the plugin does, and look at what it imports.
import { join } from "node:path";
import { bundleForBrowser } from "./support/bundle";

it("bundles createMcpServer for the browser without any Node builtin", async () => {
  const { nodeImports, inputs, code } = await bundleForBrowser(join(__dirname, "..", "..", "src", "core", "mcp", "mcp-server.ts"));
  expect(nodeImports).toEqual([]);
  expect(inputs.some((p) => p.includes("@modelcontextprotocol/sdk/dist/esm/server/mcp.js"))).toBe(true);
  // Obsidian mobile has no `process` global either.
  expect(code).not.toMatch(/\bprocess\.(env|stdin|stdout|versions)\b/);
});
