// End to end: the real core (createKrypton on the Node host: real index, real agents' NoteOperations,
// real ollama/browser client) talking to the loopback Ollama test server, served by the real bridge and
// called by the SDK's client. Nothing here is a stand-in except the LLM's words.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { KryptonCore } from "../../src/core/krypton";
import { generateMcpToken } from "../../src/core/mcp/mcp-token";
import type { McpHttpServerHandle } from "../../src/node/mcp-http-server";
import { startOllamaServer, type OllamaTestServer } from "../support/servers/ollama-server";
import type { TempVault } from "../support/temp-vault";
import { snapshot, textOf } from "./support/mcp-test-kit";
import { closeRealCoreBridge, startRealCoreBridge } from "./support/real-core-bridge";
import { postJson } from "./support/http-request";

const token = generateMcpToken();
let ollama: OllamaTestServer;
let vault: TempVault;
let core: KryptonCore;
let bridge: McpHttpServerHandle;
let client: Client;

beforeAll(async () => {
  ollama = await startOllamaServer();
});

afterAll(async () => {
  await ollama.close();
});

beforeEach(async () => {
  ollama.reset();
  ({ vault, core, bridge, client } = await startRealCoreBridge({
    ollama,
    token,
    notes: {
      "Projects/Plan.md": "# Plan\n\nShip the MCP bridge. Gradient descent examples for the ranking section.\n",
      "Ideas.md": "# Ideas\n\nGradient descent tunes the note ranking weights.\n",
      "Recipes/Bread.md": "# Bread\n\nFlour, water, salt and time.\n",
    },
    settings: { similarityThreshold: 0 },
    openIndex: true,
  }));
});

afterEach(async () => {
  await closeRealCoreBridge({ vault, core, bridge, client });
});

it("search_notes finds notes through the real index", async () => {
  const result = await client.callTool({ name: "search_notes", arguments: { query: "gradient descent", limit: 2 } });
  expect(textOf(result)).not.toBe("");
  expect(result.isError).toBeFalsy();
  const { results } = result.structuredContent as { results: { filePath: string; title: string; snippet: string; score: number }[] };
  expect(results.length).toBeGreaterThan(0);
  expect(results.length).toBeLessThanOrEqual(2);
  expect(results.map((r) => r.filePath)).toEqual(expect.arrayContaining(["Ideas.md"]));
  expect(results[0]).toEqual({ filePath: expect.any(String), title: expect.any(String), snippet: expect.any(String), score: expect.any(Number) });
});

it("create_note writes the model's note as a new file and never overwrites", async () => {
  ollama.script({ route: "chat", reply: "# Vector search\n\nVectors find notes by meaning.", times: 2 });
  const first = await client.callTool({ name: "create_note", arguments: { topic: "vector search", folder: "Inbox" } });
  expect(first.isError).toBeFalsy();
  const created = first.structuredContent as { filePath: string; title: string; preview: string };
  expect(created.filePath.startsWith("Inbox/")).toBe(true);
  expect(created.title).toBe("Vector search");
  expect(await vault.read(created.filePath)).toContain("Vectors find notes by meaning.");
  const second = await client.callTool({ name: "create_note", arguments: { topic: "vector search", folder: "Inbox" } });
  expect((second.structuredContent as { filePath: string }).filePath).not.toBe(created.filePath);
  expect(await vault.read(created.filePath)).toContain("Vectors find notes by meaning.");
});

it("summarize_notes summarizes a note and a topic with the model", async () => {
  ollama.script({ route: "chat", reply: "The plan is to ship the bridge.", times: Infinity });
  const one = await client.callTool({ name: "summarize_notes", arguments: { mode: "current_note", note_path: "Projects/Plan.md" } });
  expect(one.isError).toBeFalsy();
  expect(one.structuredContent).toMatchObject({ summary: expect.stringContaining("ship the bridge"), sourceFiles: ["Projects/Plan.md"] });
  const topic = await client.callTool({ name: "summarize_notes", arguments: { mode: "topic", topic: "gradient descent" } });
  expect(topic.isError).toBeFalsy();
  expect((topic.structuredContent as { sourceFiles: string[] }).sourceFiles).toEqual(expect.arrayContaining(["Ideas.md"]));
});

it("read_note returns a note's markdown", async () => {
  const result = await client.callTool({ name: "read_note", arguments: { path: "Recipes/Bread.md" } });
  expect(result.structuredContent).toEqual({ path: "Recipes/Bread.md", content: "# Bread\n\nFlour, water, salt and time.\n", truncated: false, totalChars: 38 });
});

it("read_note and summarize_notes read notes with names Windows reserves (aux, CON, nul), as search_notes lists them", async () => {
  // Such names matter for creating a file (Windows cannot hold one), not for reading a note that exists here.
  const reserved = ["aux.md", "Projects/CON.md", "nul.md"];
  for (const path of reserved) await vault.write(path, `# Walrus ${path}\n\nWalruses haul out on the ice.\n`);
  await core.index.sync();
  const found = await client.callTool({ name: "search_notes", arguments: { query: "walruses" } });
  expect((found.structuredContent as { results: { filePath: string }[] }).results.map((r) => r.filePath).sort()).toEqual([...reserved].sort());
  for (const path of reserved) {
    const read = await client.callTool({ name: "read_note", arguments: { path } });
    expect([read.isError ?? false, (read.structuredContent as { content?: string } | undefined)?.content]).toEqual([false, `# Walrus ${path}\n\nWalruses haul out on the ice.\n`]);
  }
  ollama.script({ route: "chat", reply: "Walruses rest on ice." });
  const summary = await client.callTool({ name: "summarize_notes", arguments: { mode: "current_note", note_path: "aux.md" } });
  expect([summary.isError ?? false, summary.structuredContent]).toEqual([false, expect.objectContaining({ summary: "Walruses rest on ice.", sourceFiles: ["aux.md"] })]);
});

it.each([
  ["create_note", {}, "Missing required parameter: topic"],
  ["create_note", { topic: "x", folder: "aux" }, "'aux' is a file name Windows reserves"],
  ["summarize_notes", { mode: "current_note", note_path: "Nope.md" }, "Note not found: Nope.md"],
  ["search_notes", { query: "zzqxj" }, "No notes match 'zzqxj'"],
  ["create_note", { topic: "x", folder: "../outside" }, "'..'"],
])("%s %j fails with %s and changes nothing", async (name, args, message) => {
  const before = await snapshot(vault.root);
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError).toBe(true);
  expect(textOf(result)).toContain(message);
  const after = await snapshot(vault.root);
  // The index may save its own state under .krypton/; the notes must not change.
  const notes = (s: Record<string, string>) => Object.fromEntries(Object.entries(s).filter(([k]) => !k.startsWith(".krypton")));
  expect(notes(after)).toEqual(notes(before));
});

it("search_notes with no hits while the query cannot be embedded says why, in its text and its keywordOnly field", async () => {
  // The notes have vectors; then the embedding server fails every query (500 on /api/embed).
  ollama.script({ route: "embed", status: 500, times: Infinity });
  // Listed first: the SDK client then checks the structured content against the tool's output schema.
  await client.listTools();
  const result = await client.callTool({ name: "search_notes", arguments: { query: "zzqxj" } });
  expect(result.isError).toBe(true);
  const { keywordOnly } = result.structuredContent as { keywordOnly: string };
  expect(keywordOnly).toMatch(/^Semantic search failed \(the embedding server failed .*\): notes were matched by keywords only\.$/);
  expect(result.structuredContent).toEqual({ results: [], keywordOnly });
  expect(textOf(result)).toBe(`No notes match 'zzqxj'\n\n${keywordOnly}`);
  // The plain JSON endpoint for scripts: still a 404, with the reason beside the message.
  const plain = await postJson(bridge.port, "/mcp/tools/call", token, { tool: "search_notes", arguments: { query: "zzqxj" } });
  expect(plain.status).toBe(404);
  expect(JSON.parse(plain.body)).toEqual({ error: `No notes match 'zzqxj'\n\n${keywordOnly}`, code: "not-found", keywordOnly });
});

it("search_notes with no hits for a query of only common words says why, in its text and its unsearchable field", async () => {
  // A relevance floor no note reaches by meaning: nothing is found, and keywords cannot find "the and of".
  core.applySettings({ ...core.settings(), similarityThreshold: 0.99 });
  await client.listTools(); // the SDK client then checks the structured content against the output schema
  const result = await client.callTool({ name: "search_notes", arguments: { query: "the and of" } });
  expect(result.isError).toBe(true);
  const unsearchable = '"the and of" has only common words, which search ignores; add a word that names the topic.';
  expect(result.structuredContent).toEqual({ results: [], unsearchable });
  expect(textOf(result)).toBe(unsearchable);
});

it("a missing model is an isError result a person can act on, and nothing is written", async () => {
  core.applySettings({ ...core.settings(), chatModel: "not-pulled:1b" });
  const before = await snapshot(vault.root);
  const result = await client.callTool({ name: "create_note", arguments: { topic: "doomed" } });
  expect(result.isError).toBe(true);
  expect(textOf(result)).toContain("not-pulled:1b");
  expect(textOf(result)).not.toMatch(/\n\s+at /);
  const notes = (s: Record<string, string>) => Object.fromEntries(Object.entries(s).filter(([k]) => !k.startsWith(".krypton")));
  expect(notes(await snapshot(vault.root))).toEqual(notes(before));
});

it("read_note follows the user's exclude patterns, also after they change (createKrypton wires the settings in)", async () => {
  expect((await client.callTool({ name: "read_note", arguments: { path: "Recipes/Bread.md" } })).isError).toBeFalsy();
  core.applySettings({ ...core.settings(), excludePatterns: ["Recipes/"] });
  const refused = await client.callTool({ name: "read_note", arguments: { path: "Recipes/Bread.md" } });
  expect(refused.isError).toBe(true);
  expect(textOf(refused)).toBe("Krypton does not read Recipes/Bread.md: it matches your exclude patterns (Settings → Index)");
  const summary = await client.callTool({ name: "summarize_notes", arguments: { mode: "current_note", note_path: "Recipes/Bread.md" } });
  expect(textOf(summary)).toContain("matches your exclude patterns");
  expect(ollama.requestsTo("chat")).toHaveLength(0); // refused before any model call
});
