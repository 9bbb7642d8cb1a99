// src/core must run in Obsidian (desktop and mobile), in Node and in tests: it may not import
// Obsidian, Node builtins, or the Node-only entries of provider SDKs. This test reads every core file.
import { builtinModules } from "node:module";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const root = join(__dirname, "..", "src", "core");
const forbidden = new Set<string>([
  "obsidian",
  "electron",
  "ollama",
  "@google/genai",
  ...builtinModules,
  ...builtinModules.map((m) => `node:${m}`),
]);

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : full.endsWith(".ts") ? [full] : [];
  });
}

function importsOf(source: string): string[] {
  const specs: string[] = [];
  const re = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s*['"]([^'"]+)['"]/gm;
  for (const m of source.matchAll(re)) specs.push(m[1] ?? m[2] ?? m[3] ?? m[4]);
  return specs;
}

describe("architecture", () => {
  const files = filesUnder(root);

  it("finds the core sources", () => {
    expect(files.length).toBeGreaterThan(10);
  });

  it("keeps src/core free of Obsidian, Node builtins and Node-only SDK entries", () => {
    const offenders = files.flatMap((file) =>
      importsOf(readFileSync(file, "utf8"))
        .filter((spec) => forbidden.has(spec))
        .map((spec) => `${relative(root, file)} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  it("detects a forbidden import (the check itself works)", () => {
    expect(importsOf(`import { readFile } from "node:fs";\nimport x from './y';`)).toEqual(["node:fs", "./y"]);
    expect(importsOf(`const http = require("http");`)).toEqual(["http"]);
  });

  it("keeps src/core from importing the host adapters", () => {
    const offenders = files.flatMap((file) =>
      importsOf(readFileSync(file, "utf8"))
        .filter((spec) => /(^|\/)(obsidian|cli|node)\//.test(spec) && spec.startsWith("."))
        .map((spec) => `${relative(root, file)} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });

  // Inner layers may not reach outward: note operations, model helpers and tools are used by agents, the
  // chat pipeline and the agent loop, so importing those back would make a cycle.
  const innerRules: { folder: string; mayNotImport: RegExp }[] = [
    { folder: "util", mayNotImport: /^\.\.\// },
    { folder: "notes", mayNotImport: /(^|\/)(agents|chat|tools|mcp)\// },
    { folder: "model", mayNotImport: /(^|\/)(agents|chat|tools|mcp)\// },
    { folder: "tools", mayNotImport: /(^|\/)(agents|chat)\// },
    // The MCP client feeds the one registry; the agent loop and the chat use it, never the other way round.
    { folder: "mcp-client", mayNotImport: /(^|\/)(agents|chat|agent-loop|mcp)\// },
  ];

  it.each(innerRules)("keeps src/core/$folder from importing outer layers", ({ folder, mayNotImport }) => {
    const inFolder = files.filter((file) => relative(root, file).startsWith(`${folder}/`));
    expect(inFolder.length).toBeGreaterThan(0);
    const offenders = inFolder.flatMap((file) =>
      importsOf(readFileSync(file, "utf8"))
        .filter((spec) => spec.startsWith(".") && mayNotImport.test(spec))
        .map((spec) => `${relative(root, file)} imports ${spec}`),
    );
    expect(offenders).toEqual([]);
  });
});
