// src/core/mcp/mcp-server.ts stays in core only because the MCP SDK's server module (McpServer, zod,
// ajv) needs no Node builtin: bundle it for the browser, as the plugin does, and look at what it imports.
import { builtinModules } from "node:module";
import { join } from "node:path";
import { build } from "esbuild";

it("bundles createMcpServer for the browser without any Node builtin", async () => {
  const builtins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];
  const result = await build({
    entryPoints: [join(__dirname, "..", "..", "src", "core", "mcp", "mcp-server.ts")],
    bundle: true,
    write: false,
    platform: "browser",
    format: "cjs",
    metafile: true,
    external: builtins,
    logLevel: "silent",
  });
  const imported = Object.values(result.metafile.inputs).flatMap((input) => input.imports.filter((i) => i.external).map((i) => i.path));
  expect(imported).toEqual([]);
  expect(Object.keys(result.metafile.inputs).some((p) => p.includes("@modelcontextprotocol/sdk/dist/esm/server/mcp.js"))).toBe(true);
  // Obsidian mobile has no `process` global either.
  expect(result.outputFiles[0].text).not.toMatch(/\bprocess\.(env|stdin|stdout|versions)\b/);
});
