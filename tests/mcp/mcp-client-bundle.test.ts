// The MCP client runs on Obsidian mobile too (HTTP servers): src/core/mcp-client must bundle for the
// browser without any Node builtin and without touching `process`. Stdio lives in src/node/.
import { builtinModules } from "node:module";
import { join } from "node:path";
import { build } from "esbuild";

it("bundles the MCP client for the browser without any Node builtin", async () => {
  const builtins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];
  const result = await build({
    entryPoints: [join(__dirname, "..", "..", "src", "core", "mcp-client", "index.ts")],
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
  const inputs = Object.keys(result.metafile.inputs);
  expect(inputs.some((p) => p.includes("client/streamableHttp.js"))).toBe(true);
  expect(inputs.some((p) => p.includes("client/sse.js"))).toBe(true);
  expect(inputs.some((p) => p.includes("client/stdio.js"))).toBe(false);
  expect(result.outputFiles[0].text).not.toMatch(/\bprocess\.(env|stdin|stdout|versions)\b/);
});
