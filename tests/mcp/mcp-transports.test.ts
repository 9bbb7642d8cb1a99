// The SDK's own client over Streamable HTTP and the legacy HTTP+SSE transport, against the real bridge
// serving the note tools on a real vault folder: list the tools, call each one, and each error.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { z } from "zod";
import manifest from "../../manifest.json";
import { generateMcpToken } from "../../src/core/mcp/mcp-token";
import { READ_NOTE_MAX_CHARS, truncationMarker } from "../../src/core/tools/note-tools";
import { defineTool, ToolRegistry } from "../../src/core/tools/tool-registry";
import { AbortedError } from "../../src/core/util/errors";
import { startMcpHttpServer, type McpHttpServerHandle } from "../../src/node/mcp-http-server";
import { makeTempVault, type TempVault } from "../support/temp-vault";
import { connectSse, connectStreamable, noteToolRegistry, textOf } from "./support/mcp-test-kit";

const transports: [string, (h: McpHttpServerHandle, token: string) => Promise<Client>][] = [
  ["Streamable HTTP", (h, token) => connectStreamable(h.url, token)],
  ["HTTP+SSE (legacy)", (h, token) => connectSse(h.url, token)],
];

describe.each(transports)("MCP bridge over %s", (_name, connect) => {
  let vault: TempVault;
  let bridge: McpHttpServerHandle;
  let client: Client;
  const token = generateMcpToken();

  beforeEach(async () => {
    vault = await makeTempVault({
      "Projects/Plan.md": "# Plan\n\nShip the MCP bridge with gradient descent examples.\n",
      "Ideas.md": "# Ideas\n\nGradient descent for note ranking.\n",
    });
    bridge = await startMcpHttpServer({ registry: noteToolRegistry(vault.root).registry, port: 0, token, vaultRoot: vault.root });
    client = await connect(bridge, token);
  });

  afterEach(async () => {
    await client.close();
    await bridge.close();
    await vault.cleanup();
  });

  it("lists the four tools with input and output schemas", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["create_note", "read_note", "search_notes", "summarize_notes"]);
    const create = tools.find((t) => t.name === "create_note")!;
    expect(create.inputSchema.required).toEqual(["topic"]);
    expect(Object.keys(create.inputSchema.properties ?? {})).toEqual(["topic", "folder", "vault_path"]);
    expect(create.outputSchema?.required).toEqual(["filePath", "title", "preview"]);
    const search = tools.find((t) => t.name === "search_notes")!;
    expect(search.inputSchema.properties?.limit).toMatchObject({ type: "integer", minimum: 1, maximum: 100 });
    const summarize = tools.find((t) => t.name === "summarize_notes")!;
    expect(summarize.inputSchema.properties?.mode).toMatchObject({ enum: ["current_note", "topic"] });
    expect(tools.find((t) => t.name === "read_note")!.annotations?.readOnlyHint).toBe(true);
  });

  it("create_note writes a new note and returns its path, title and preview", async () => {
    const result = await client.callTool({ name: "create_note", arguments: { topic: "vector search", folder: "Inbox" } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ filePath: "Inbox/Vector Search.md", title: "Vector Search", preview: expect.stringContaining("# Vector Search") });
    expect(textOf(result)).toContain("Created Inbox/Vector Search.md");
    expect(await vault.read("Inbox/Vector Search.md")).toContain("A note about vector search.");
  });

  it("create_note with vault_path equal to the served vault (even with a trailing slash) works", async () => {
    const result = await client.callTool({ name: "create_note", arguments: { topic: "alpha", vault_path: `${vault.root}/` } });
    expect(result.isError).toBeFalsy();
    expect(await vault.exists("Krypton/Alpha.md")).toBe(true);
  });

  it("search_notes returns {filePath, title, snippet, score} results, honouring limit", async () => {
    const result = await client.callTool({ name: "search_notes", arguments: { query: "gradient descent", limit: 1 } });
    expect(result.isError).toBeFalsy();
    const { results } = result.structuredContent as { results: { filePath: string; title: string; snippet: string; score: number }[] };
    expect(results).toHaveLength(1);
    expect(results[0]).toEqual({ filePath: "Ideas.md", title: "Ideas", snippet: expect.stringContaining("Gradient descent"), score: expect.any(Number) });
    expect(textOf(result)).toContain("1. Ideas (Ideas.md");
  });

  it("summarize_notes summarizes one note (current_note) and a topic", async () => {
    const one = await client.callTool({ name: "summarize_notes", arguments: { mode: "current_note", note_path: "Projects/Plan.md" } });
    expect(one.isError).toBeFalsy();
    expect(one.structuredContent).toEqual({ title: "Summary of Projects/Plan", summary: expect.stringContaining("Plan"), sourceFiles: ["Projects/Plan.md"] });
    const absolute = await client.callTool({ name: "summarize_notes", arguments: { mode: "current_note", note_path: `${vault.root}/Projects/Plan.md` } });
    expect(absolute.structuredContent).toEqual(one.structuredContent);
    const topic = await client.callTool({ name: "summarize_notes", arguments: { mode: "topic", topic: "gradient" } });
    expect(topic.structuredContent).toMatchObject({ title: "Summary: gradient", sourceFiles: ["Ideas.md", "Projects/Plan.md"] });
  });

  it("read_note returns the note's markdown", async () => {
    const result = await client.callTool({ name: "read_note", arguments: { path: "Projects/Plan" } });
    expect(result.structuredContent).toEqual({ path: "Projects/Plan.md", content: "# Plan\n\nShip the MCP bridge with gradient descent examples.\n", truncated: false, totalChars: 60 });
    expect(textOf(result)).toBe("# Plan\n\nShip the MCP bridge with gradient descent examples.\n");
  });

  it.each([
    ["create_note", {}, "Missing required parameter: topic"],
    ["create_note", { topic: "   " }, "Missing required parameter: topic"],
    ["create_note", { topic: 42 }, "Invalid parameter topic: expected a string, got 42"],
    ["search_notes", { query: "x", limit: 101 }, "Invalid parameter limit: must be at most 100"],
    ["search_notes", { query: "x", limit: 0 }, "Invalid parameter limit: must be at least 1"],
    ["search_notes", { query: "x", limit: 2.5 }, "Invalid parameter limit: expected a whole number, got 2.5"],
    ["search_notes", { query: "no such words anywhere" }, "No notes match 'no such words anywhere'"],
    ["summarize_notes", { mode: "everything" }, 'Invalid parameter mode: expected one of "current_note", "topic", got "everything"'],
    ["summarize_notes", { mode: "current_note" }, 'Missing required parameter: note_path (needed when mode is "current_note")'],
    ["summarize_notes", { mode: "topic" }, 'Missing required parameter: topic (needed when mode is "topic")'],
    ["summarize_notes", { mode: "current_note", note_path: "Nope.md" }, "Note not found: Nope.md"],
    ["read_note", { path: "Missing/Note.md" }, "Note not found: Missing/Note.md"],
    ["read_note", { path: "../outside.md" }, "'..' and dot-only names are not allowed in the path"],
    ["search_notes", { query: "x", vault_path: "/some/other/vault" }, "vault_path does not match the served vault"],
    ["no_such_tool", {}, "Unknown tool: no_such_tool"],
  ])("%s %j is an isError result: %s", async (name, args, message) => {
    const result = await client.callTool({ name, arguments: args as Record<string, unknown> });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain(message);
    expect(textOf(result)).not.toMatch(/\n\s+at /); // no stack trace
  });

  it("create_note never overwrites: a second note on the same topic is refused and the first is untouched", async () => {
    await client.callTool({ name: "create_note", arguments: { topic: "unique" } });
    await vault.write("Krypton/Unique.md", "# Edited by the user\n");
    const again = await client.callTool({ name: "create_note", arguments: { topic: "unique" } });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toContain("already exists");
    expect(await vault.read("Krypton/Unique.md")).toBe("# Edited by the user\n");
  });
});

describe.each(transports)("over %s: server info, exclusions and long notes", (_name, connect) => {
  let vault: TempVault;
  let bridge: McpHttpServerHandle;
  let client: Client;
  const token = generateMcpToken();
  const long = `# Long\n\n${"word ".repeat(30_000)}THE-END`;

  beforeAll(async () => {
    vault = await makeTempVault({
      "Public.md": "# Public\n\nPrivate matters are elsewhere.\n",
      "Private/Diary.md": "# Diary\n\nPrivate matters.\n",
      "Long.md": long,
    });
    const { registry } = noteToolRegistry(vault.root, { excludePatterns: ["Private/"] });
    bridge = await startMcpHttpServer({ registry, port: 0, token, vaultRoot: vault.root });
    client = await connect(bridge, token);
  });

  afterAll(async () => {
    await client.close();
    await bridge.close();
    await vault.cleanup();
  });

  it("reports the plugin's version from manifest.json as serverInfo", () => {
    expect(client.getServerVersion()).toEqual({ name: "krypton", version: manifest.version });
  });

  it.each(["Private/Diary.md", "private/diary.md", "./Private//Diary"])(
    "read_note and summarize_notes refuse a note the exclude patterns keep out of Krypton (%s)",
    async (path) => {
      const read = await client.callTool({ name: "read_note", arguments: { path } });
      expect(read.isError).toBe(true);
      expect(textOf(read)).toMatch(/^Krypton does not read .*: it matches your exclude patterns \(Settings → Index\)/);
      expect(textOf(read)).not.toContain("Private matters.");
      const summary = await client.callTool({ name: "summarize_notes", arguments: { mode: "current_note", note_path: path } });
      expect(summary.isError).toBe(true);
      expect(textOf(summary)).toContain("matches your exclude patterns");
    },
  );

  it("read_note cuts a very long note with a marker saying so", async () => {
    const result = await client.callTool({ name: "read_note", arguments: { path: "Long.md" } });
    expect(result.isError).toBeFalsy();
    const structured = result.structuredContent as { content: string; truncated: boolean; totalChars: number };
    expect(structured.truncated).toBe(true);
    expect(structured.totalChars).toBe(long.length);
    expect(structured.content.startsWith(long.slice(0, READ_NOTE_MAX_CHARS))).toBe(true);
    expect(structured.content).not.toContain("THE-END");
    expect(structured.content.endsWith(truncationMarker(long.length))).toBe(true);
    expect(truncationMarker(long.length)).toBe(`\n\n[… truncated by Krypton: showing the first 100,000 of ${long.length.toLocaleString("en-US")} characters]`);
    expect(textOf(result)).toBe(structured.content);
  });
});

it("the legacy SSE stream carries keep-alive comments while idle", async () => {
  const vault = await makeTempVault({ "A.md": "# A" });
  const token = generateMcpToken();
  const bridge = await startMcpHttpServer({ registry: noteToolRegistry(vault.root).registry, port: 0, token, vaultRoot: vault.root, limits: { sseKeepAliveMs: 20 } });
  const controller = new AbortController();
  try {
    const res = await fetch(new URL("/sse", bridge.url), { headers: { Authorization: `Bearer ${token}` }, signal: controller.signal });
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const reader = res.body!.getReader();
    let text = "";
    while ((text.match(/^: keepalive$/gm) ?? []).length < 2) text += new TextDecoder().decode((await reader.read()).value);
    // The endpoint event comes first; comments never look like events to a client.
    expect(text).toMatch(/^event: endpoint\ndata: \/messages\?sessionId=[\w-]+\n\n(: keepalive\n\n)+/);
  } finally {
    controller.abort();
    await bridge.close();
    await vault.cleanup();
  }
});

/** A tool that runs until its call is cancelled; `running` resolves once `count` calls have started. */
function waitForStopRegistry(count: number): { registry: ToolRegistry; running: Promise<void> } {
  const registry = new ToolRegistry();
  const started: string[] = [];
  let allStarted!: () => void;
  const running = new Promise<void>((resolve) => (allStarted = resolve));
  registry.register(
    defineTool({
      name: "wait_for_stop",
      title: "Wait",
      description: "Runs until it is cancelled",
      inputSchema: { caller: z.string() },
      outputSchema: {},
      run: ({ caller }, context) =>
        new Promise<never>((_resolve, reject) => {
          context.signal?.addEventListener("abort", () => reject(new AbortedError()), { once: true });
          if (started.push(caller) === count) allStarted();
        }),
    }),
  );
  return { registry, running };
}

it("closing the server while calls run answers them ('… was cancelled: Krypton is shutting down') instead of cutting their connections", async () => {
  const token = generateMcpToken();
  const { registry, running } = waitForStopRegistry(2);
  const bridge = await startMcpHttpServer({ registry, port: 0, token });
  const client = await connectStreamable(bridge.url, token);
  try {
    const viaMcp = client.callTool({ name: "wait_for_stop", arguments: { caller: "mcp" } });
    const viaJson = fetch(bridge.url.replace(/\/mcp$/, "/mcp/tools/call"), {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ tool: "wait_for_stop", arguments: { caller: "json" } }),
    });
    await running;
    await bridge.close();
    expect(await viaMcp).toMatchObject({ isError: true, content: [{ type: "text", text: "wait_for_stop was cancelled: Krypton is shutting down" }] });
    const json = await viaJson;
    expect(json.status).toBe(500);
    expect(await json.json()).toEqual({ error: "wait_for_stop was cancelled: Krypton is shutting down", code: "failed" });
  } finally {
    await client.close();
    await bridge.close();
  }
});

it("closing the server while a legacy SSE call runs answers it on the stream before the stream closes", async () => {
  const token = generateMcpToken();
  const { registry, running } = waitForStopRegistry(1);
  const bridge = await startMcpHttpServer({ registry, port: 0, token });
  const client = await connectSse(bridge.url, token);
  // Once its stream is cut the SDK client only reconnects and the call would wait for its own timeout:
  // the client's first error stands for "cut".
  const cut = new Promise<string>((resolve) => (client.onerror = (err) => resolve(`the SSE stream was cut: ${err.message}`)));
  try {
    const viaSse = client.callTool({ name: "wait_for_stop", arguments: { caller: "sse" } });
    await running;
    await bridge.close();
    expect(await Promise.race([viaSse, cut])).toMatchObject({ isError: true, content: [{ type: "text", text: "wait_for_stop was cancelled: Krypton is shutting down" }] });
  } finally {
    await client.close();
    await bridge.close();
  }
});
