// The plugin must load on Obsidian mobile, where Node's builtins (http, fs, ...) do not exist: the MCP
// bridge's Node server is only loaded when the bridge starts on desktop. This bundles src/main.ts the way
// esbuild.config.mjs does and evaluates it with every Node builtin made unavailable.
import { build } from "esbuild";
import { builtinModules } from "node:module";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as vm from "node:vm";

const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);

test("the bundled plugin evaluates without any Node builtin, and the bridge code is still inside", async () => {
  const dir = mkdtempSync(join(tmpdir(), "krypton-bundle-"));
  try {
    const outfile = join(dir, "main.js");
    await build({
      entryPoints: ["src/main.ts"],
      bundle: true,
      outfile,
      format: "cjs",
      platform: "browser",
      target: "es2022",
      external: ["obsidian", "electron", "@codemirror/*", "@lezer/*", ...builtins],
      logLevel: "silent",
    });
    const code = readFileSync(outfile, "utf8");
    expect(code).toContain("startMcpHttpServer"); // bundled, not left out
    expect(code).toContain("russianStemmer"); // the Snowball stemmers run on mobile too
    expect(code).not.toMatch(/energetic-ai|tfjs/); // the test/bench embedding model stays out
    const requested: string[] = [];
    const fakeRequire = (id: string): unknown => {
      requested.push(id);
      if (id === "obsidian") return new Proxy({}, { get: (_t, key) => (key === "__esModule" ? false : class {}) });
      throw new Error(`Cannot find module '${id}' (mobile)`);
    };
    const module = { exports: {} as Record<string, unknown> };
    // The web platform a phone's Obsidian has (no Node): taken from Node, which implements the same standards.
    const web = ["ReadableStream", "WritableStream", "TransformStream", "TextEncoder", "TextDecoder", "URL", "URLSearchParams", "Headers", "Request", "Response", "fetch", "AbortController", "AbortSignal", "Blob", "crypto", "performance", "structuredClone", "queueMicrotask", "setTimeout", "clearTimeout", "setInterval", "clearInterval", "console", "Event", "EventTarget"];
    const context: Record<string, unknown> = { module, exports: module.exports, require: fakeRequire };
    for (const name of web) context[name] = (globalThis as Record<string, unknown>)[name];
    context.window = context;
    context.self = context;
    vm.runInNewContext(code, context, { filename: "main.js" });
    expect(requested.filter((id) => builtins.has(id))).toEqual([]);
    expect(typeof module.exports.default).toBe("function"); // the plugin class
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
