/**
 * `krypton mcp` end to end: the bundled CLI as an MCP server, driven by the real MCP SDK client over
 * stdio (as Claude Desktop runs it) and by plain HTTP requests against `--http`.
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { promises as fs } from "node:fs";
import { join } from "node:path";
import manifest from "../../manifest.json";
import { createKrypton, type KryptonCore } from "../../src/core/krypton";
import { DEFAULT_SETTINGS } from "../../src/core/settings";
import { createNodeHost } from "../../src/node/node-host";
import { claudeDesktopStdioConfig } from "../../src/obsidian/mcp/client-config";
import { useCliTestBed } from "../support/cli-test-bed";
import { startLoopbackServer } from "../support/servers/loopback-server";
import { cleanEnv, runCli } from "./cli-harness";

const NOTES = {
  "Machine Learning/Gradient descent.md": "# Gradient descent\n\nGradient descent walks downhill on the loss surface.\n",
  "Cooking/Bread.md": "# Sourdough bread\n\nFlour, water, salt and a lively starter.\n",
};

describe("krypton mcp", () => {
  const bed = useCliTestBed({ notes: NOTES });

  it("serves the note tools over stdio to the SDK client", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bed.entry, "mcp", bed.vault.root],
      env: cleanEnv({ KRYPTON_OLLAMA_URL: bed.ollama.url }),
      stderr: "pipe",
    });
    const client = new Client({ name: "cli-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["create_note", "generate_flashcards", "read_note", "run_workflow", "search_notes", "study_goals", "summarize_notes"]);

      const read = await client.callTool({ name: "read_note", arguments: { path: "Cooking/Bread.md" } });
      expect(read.isError).toBeFalsy();
      expect(JSON.stringify(read.content)).toContain("lively starter");

      // The index is built in the background while the server already answers; wait until search works.
      let hits: unknown[] = [];
      for (let i = 0; i < 100 && hits.length === 0; i++) {
        const found = await client.callTool({ name: "search_notes", arguments: { query: "sourdough" } });
        if (!found.isError) hits = ((found.structuredContent as { results?: unknown[] } | undefined)?.results ?? []) as unknown[];
        if (hits.length === 0) await new Promise((r) => setTimeout(r, 50));
      }
      expect(JSON.stringify(hits)).toContain("Cooking/Bread.md");

      bed.ollama.script({ route: "chat", reply: "# Tides\n\nThe moon pulls the sea.\n" });
      const created = await client.callTool({ name: "create_note", arguments: { topic: "tides" } });
      expect(created.isError).toBeFalsy();
      expect(await bed.vault.read("Krypton/tides.md")).toContain("The moon pulls the sea.");

      const escape = await client.callTool({ name: "read_note", arguments: { path: "../outside.md" } });
      expect(escape.isError).toBe(true);

      expect(client.getServerVersion()).toEqual({ name: "krypton", version: manifest.version });
      for (const [name, args, message] of [
        ["create_note", {}, "Missing required parameter: topic"],
        ["read_note", { path: "x.md" }, "Note not found: x.md"],
        ["summarize_notes", { mode: "current_note", note_path: "x.md" }, "Note not found: x.md"],
        ["search_notes", { query: "xylophone" }, "No notes match 'xylophone'"],
      ] as const) {
        const result = await client.callTool({ name, arguments: args });
        expect(result.isError).toBe(true);
        expect(JSON.stringify(result.content)).toContain(message);
      }
    } finally {
      await client.close();
    }
  });

  it("run_workflow's steps pass the server's own index gate: a step's search re-scans like search_notes", async () => {
    const flow = { id: "research", defaultModel: "ollama/llama3.1:8b", agents: [{ name: "find", type: "task", params: { task: "Find my notes about {{input}}", toolNames: ["search_notes"] } }], transitions: [] };
    await bed.vault.write("Workflows/Research.md", "```krypton-flow\n" + JSON.stringify(flow) + "\n```\n");
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bed.entry, "mcp", bed.vault.root],
      // A scan before every search: the server watches no folder, so only the gate finds a note written since.
      env: cleanEnv({ KRYPTON_OLLAMA_URL: bed.ollama.url, KRYPTON_MCP_SYNC_AFTER_MS: "0" }),
      stderr: "pipe",
    });
    const client = new Client({ name: "cli-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      // search_notes itself waits for the index (the same gate); the loop only guards a very slow start.
      let found = false;
      for (let i = 0; i < 100 && !found; i++) {
        found = JSON.stringify((await client.callTool({ name: "search_notes", arguments: { query: "sourdough" } })).structuredContent ?? null).includes("Cooking/Bread.md");
        if (!found) await new Promise((r) => setTimeout(r, 50));
      }
      expect(found).toBe(true);
      await bed.vault.write("Tides.md", "# Tides\n\nThe moon pulls the sea.\n");
      // A scan is due again only after ten times the last one took (index-freshness.ts): retried for that
      // alone. Without the gate no attempt would ever scan, and none would find the note.
      let toolResult = "";
      for (let i = 0; i < 40 && !toolResult.includes("Tides.md"); i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, 100));
        bed.ollama.reset();
        bed.ollama.script([
          { route: "chat", reply: "", extra: { toolCalls: [{ name: "search_notes", arguments: { query: "moon" } }] } },
          { route: "chat", reply: "Tides.md" },
        ]);
        const result = await client.callTool({ name: "run_workflow", arguments: { flow_path: "Workflows/Research.md", input: "the moon" } });
        expect(result.isError).toBeFalsy();
        const [second] = bed.ollama.requestsTo("chat").slice(1);
        toolResult = (second.body as { messages: { role: string; content: string }[] }).messages.find((m) => m.role === "tool")?.content ?? "";
      }
      expect(toolResult).toContain("Tides.md");
    } finally {
      await client.close();
    }
  });

  it("the settings tab's standalone Claude Desktop config starts a working server (krypton = this CLI)", async () => {
    const config = JSON.parse(claudeDesktopStdioConfig(bed.vault.root)) as { mcpServers: { krypton: { command: string; args: string[] } } };
    expect(config.mcpServers.krypton.command).toBe("krypton");
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bed.entry, ...config.mcpServers.krypton.args],
      env: cleanEnv({ KRYPTON_OLLAMA_URL: bed.ollama.url }),
      stderr: "pipe",
    });
    const client = new Client({ name: "claude-desktop-config-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(["create_note", "generate_flashcards", "read_note", "run_workflow", "search_notes", "study_goals", "summarize_notes"]);
    } finally {
      await client.close();
    }
  });

  /** Starts `krypton mcp --http` on a free port; `ready` resolves once it printed its URL (and a generated token). */
  async function startHttp(env: Record<string, string>, extraArgs: string[] = []) {
    let child!: ChildProcessWithoutNullStreams;
    let stderr = "";
    let settle!: { resolve: (v: { url: string; token: string | null }) => void; reject: (e: Error) => void };
    const ready = new Promise<{ url: string; token: string | null }>((resolve, reject) => (settle = { resolve, reject }));
    const check = () => {
      const url = /on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr)?.[1];
      const token = /token \(shown once[^)]*\): (\S+)/.exec(stderr)?.[1] ?? null;
      if (url && (token || env.KRYPTON_MCP_TOKEN)) settle.resolve({ url, token });
    };
    const done = runCli(["mcp", bed.vault.root, "--http", "--port", "0", ...extraArgs], {
      env: { KRYPTON_OLLAMA_URL: bed.ollama.url, ...env },
      onSpawn: (c) => {
        child = c;
        c.stderr.on("data", (d: Buffer) => {
          stderr += d.toString();
          check();
        });
      },
    });
    void done.then((r) => settle.reject(new Error(`krypton mcp exited early (${String(r.code)}): ${r.stderr}`)));
    const info = await ready;
    return { ...info, stop: () => child.kill("SIGINT"), done, stderr: () => stderr };
  }

  it("--http generates a token, prints it once on stderr, and requires it", async () => {
    const server = await startHttp({});
    expect(server.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const unauthorized = await fetch(`${server.url}/tools`);
    expect(unauthorized.status).toBe(401);
    const listed = await fetch(`${server.url}/tools`, { headers: { Authorization: `Bearer ${server.token!}` } });
    expect(listed.status).toBe(200);
    expect(JSON.stringify(await listed.json())).toContain("search_notes");

    server.stop();
    const result = await server.done;
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain(server.token!);
    expect(result.stderr.split(server.token!).length - 1).toBe(1);
  });

  it("--http with KRYPTON_MCP_TOKEN uses it and never prints it", async () => {
    const token = "a-user-chosen-token-0123456789";
    const server = await startHttp({ KRYPTON_MCP_TOKEN: token });
    const listed = await fetch(`${server.url}/tools`, { headers: { Authorization: `Bearer ${token}` } });
    expect(listed.status).toBe(200);
    server.stop();
    const result = await server.done;
    expect(result.code).toBe(0);
    expect(result.stdout + result.stderr).not.toContain(token);
  });

  it("--http stopped by Ctrl+C answers a call still under way: cancelled because Krypton is shutting down", async () => {
    const token = "a-user-chosen-token-0123456789";
    const server = await startHttp({ KRYPTON_MCP_TOKEN: token });
    // The model never answers: the call waits for it until the server stops.
    bed.ollama.script({ route: "chat", stall: true });
    const waiting = fetch(`${server.url}/tools/call`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ tool: "create_note", arguments: { topic: "tides" } }),
    });
    try {
      for (let i = 0; i < 200 && bed.ollama.requestsTo("chat").length === 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(bed.ollama.requestsTo("chat")).toHaveLength(1);
    } finally {
      // Once only: a second Ctrl+C while it closes would force an exit (130).
      server.stop();
    }
    const answer = await waiting;
    expect(answer.status).toBe(500);
    expect(await answer.json()).toEqual({ error: "create_note was cancelled: Krypton is shutting down", code: "failed" });
    expect((await server.done).code).toBe(0);
    expect(await bed.vault.exists("Krypton/tides.md")).toBe(false);
  });

  it("refuses a token that is too short (flag or environment) as a usage error, without starting", async () => {
    const short = await runCli(["mcp", bed.vault.root, "--http", "--port", "0", "--token", "1234"], {});
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/--token: The MCP bridge token must be at least 16 characters/);
    expect(short.stderr).not.toMatch(/bridge on http/);
    const fromEnv = await runCli(["mcp", bed.vault.root, "--http", "--port", "0"], { env: { KRYPTON_MCP_TOKEN: "short" } });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toMatch(/KRYPTON_MCP_TOKEN: The MCP bridge token must be at least 16 characters/);
    expect(fromEnv.stderr).not.toContain("short\n");
    expect(await bed.vault.exists(".krypton")).toBe(false); // refused before anything was opened
  });

  it.each([
    [["--port", "8080"], "--port"],
    [["--token", "a-user-chosen-token-0123456789"], "--token"],
    [["--allow-origin", "https://app.example"], "--allow-origin"],
  ])("HTTP options without --http are a usage error, not silently ignored (%j)", async (extra, name) => {
    const r = await runCli(["mcp", bed.vault.root, ...extra], { input: "" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${name} applies only with --http`);
    expect(r.stdout).toBe("");
  });

  it("names every HTTP option given without --http", async () => {
    const r = await runCli(["mcp", bed.vault.root, "--port", "8080", "--token", "a-user-chosen-token-0123456789"], { input: "" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--port, --token apply only with --http");
  });

  it.each(["*", "null", "app.example", "https://app.example/path"])("--allow-origin %s is a usage error", async (origin) => {
    const r = await runCli(["mcp", bed.vault.root, "--http", "--port", "0", "--allow-origin", origin], { env: { KRYPTON_MCP_TOKEN: "a-user-chosen-token-0123456789" } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--allow-origin needs one origin like https://app.example");
  });

  it("--allow-origin (repeatable) lets exactly those browser origins in", async () => {
    const token = "a-user-chosen-token-0123456789";
    const server = await startHttp({ KRYPTON_MCP_TOKEN: token }, ["--allow-origin", "https://one.example", "--allow-origin", "http://localhost:5173"]);
    try {
      const call = (origin: string) => fetch(`${server.url}/tools`, { headers: { Authorization: `Bearer ${token}`, Origin: origin } });
      for (const origin of ["https://one.example", "http://localhost:5173"]) {
        const ok = await call(origin);
        expect(ok.status).toBe(200);
        expect(ok.headers.get("access-control-allow-origin")).toBe(origin);
      }
      const other = await call("https://evil.example");
      expect(other.status).toBe(403);
      expect(other.headers.get("access-control-allow-origin")).toBeNull();
    } finally {
      server.stop();
      await server.done;
    }
  });

  it("a port in use: one line saying so, exit 1", async () => {
    const blocker = await startLoopbackServer();
    const port = blocker.port;
    try {
      const r = await runCli(["mcp", bed.vault.root, "--http", "--port", String(port)], { env: { KRYPTON_MCP_TOKEN: "a-user-chosen-token-0123456789" } });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`${port}.*in use`));
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    } finally {
      await blocker.close();
    }
  });

  describe("while Obsidian has the vault open (two processes on one vault)", () => {
    const token = "a-user-chosen-token-0123456789";
    const lockFile = () => fs.readFile(join(bed.vault.root, ".krypton", "index", "write.lock"), "utf8");
    let obsidian: KryptonCore;

    beforeEach(async () => {
      // The stand-in for Obsidian: Krypton's core on the same vault, opened first, so it holds the writer lock.
      obsidian = createKrypton(createNodeHost(bed.vault.root), { ...DEFAULT_SETTINGS, embeddingProvider: "none" });
      await obsidian.index.open();
    });
    afterEach(() => obsidian.index.close());

    /** search_notes over the plain JSON endpoint: the paths found (or the error). */
    async function search(url: string, query: string): Promise<string[] | string> {
      const res = await fetch(`${url}/tools/call`, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        body: JSON.stringify({ tool: "search_notes", arguments: { query } }),
      });
      const body = (await res.json()) as { result?: { results: { filePath: string }[] }; error?: string };
      return body.result ? body.result.results.map((r) => r.filePath) : (body.error ?? "?");
    }

    /** The server syncs before each search (KRYPTON_MCP_SYNC_AFTER_MS=0); retried only so a busy machine cannot make it flaky. */
    async function searchUntil(url: string, query: string, expected: (found: string[] | string) => boolean): Promise<string[] | string> {
      let found = await search(url, query);
      for (let i = 0; i < 40 && !expected(found); i++) {
        await new Promise((r) => setTimeout(r, 100));
        found = await search(url, query);
      }
      return found;
    }

    it("reads the index without taking Obsidian's lock, and finds notes Obsidian added, changed or deleted since it started", async () => {
      const lockBefore = await lockFile();
      const server = await startHttp({ KRYPTON_MCP_TOKEN: token, KRYPTON_MCP_SYNC_AFTER_MS: "0" }, ["--no-embeddings"]);
      try {
        expect(await searchUntil(server.url, "sourdough", (f) => Array.isArray(f))).toEqual(["Cooking/Bread.md"]);
        expect(server.stderr()).toContain("is updating this index: reading it");

        // Obsidian writes a note and saves its index (a new generation on disk).
        await bed.vault.write("Bees.md", "# Bees\n\nBees pollinate clover.\n");
        await obsidian.index.sync();
        expect(await searchUntil(server.url, "pollinate", (f) => Array.isArray(f))).toEqual(["Bees.md"]);

        // A note on disk that Obsidian has not indexed yet, an edit and a deletion: the server's own scan sees them.
        await bed.vault.write("Tides.md", "# Tides\n\nThe moon pulls the sea.\n");
        await bed.vault.write("Cooking/Bread.md", "# Rye bread\n\nDark rye and caraway.\n");
        await bed.vault.remove("Machine Learning/Gradient descent.md");
        expect(await searchUntil(server.url, "moon", (f) => Array.isArray(f))).toEqual(["Tides.md"]);
        expect(await searchUntil(server.url, "caraway", (f) => Array.isArray(f))).toEqual(["Cooking/Bread.md"]);
        expect(await searchUntil(server.url, "sourdough", (f) => !Array.isArray(f))).toBe("No notes match 'sourdough'");
        expect(await searchUntil(server.url, "downhill", (f) => !Array.isArray(f))).toBe("No notes match 'downhill'");

        // Obsidian kept the lock all along and can still save.
        expect(await lockFile()).toBe(lockBefore);
        expect(obsidian.index.status().readOnly).toBeFalsy();
        const saved = await obsidian.index.sync();
        expect(saved.readOnly).toBeFalsy();
        expect(saved.notes).toBe(3);
      } finally {
        server.stop();
      }
      const result = await server.done;
      expect(result.code).toBe(0);
      expect(await lockFile()).toBe(lockBefore); // exiting did not release or remove Obsidian's lock
    });
  });
});

