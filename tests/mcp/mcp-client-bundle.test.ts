// The MCP client runs on Obsidian mobile too (HTTP servers): src/core/mcp-client must bundle for the
// browser without any Node builtin and without touching `process`. Stdio lives in src/node/.
import { join } from "node:path";
import { bundleForBrowser } from "./support/bundle";

it("bundles the MCP client for the browser without any Node builtin", async () => {
  const { nodeImports, inputs, code } = await bundleForBrowser(join(__dirname, "..", "..", "src", "core", "mcp-client", "index.ts"));
  expect(nodeImports).toEqual([]);
  expect(inputs.some((p) => p.includes("client/streamableHttp.js"))).toBe(true);
  expect(inputs.some((p) => p.includes("client/sse.js"))).toBe(true);
  expect(inputs.some((p) => p.includes("client/stdio.js"))).toBe(false);
  expect(code).not.toMatch(/\bprocess\.(env|stdin|stdout|versions)\b/);
});
