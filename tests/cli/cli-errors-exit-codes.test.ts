/**
 * Issue 10, "errors that name the real cause; output that scripts can trust": the bundled CLI as a real
 * process against real loopback servers (the scriptable Ollama stand-in, a web server that is not Ollama).
 */
import { promises as fs } from "node:fs";
import { join } from "node:path";
import { runCli } from "./cli-harness";
import { useCliTestBed } from "../support/cli-test-bed";
import { startLoopbackServer, type LoopbackServer } from "../support/servers/loopback-server";

const NOTES = {
  "Cooking/Bread.md": "# Sourdough bread\n\nFlour, water, salt and a lively starter.\n",
};

describe("CLI errors and exit codes", () => {
  const bed = useCliTestBed({ notes: NOTES });
  let web: LoopbackServer;
  let plain404: LoopbackServer;

  beforeAll(async () => {
    // A web page where Ollama should be (a router, a dev server): 200/404 with HTML.
    web = await startLoopbackServer((req, res) => {
      res.writeHead(req.url === "/" ? 200 : 404, { "content-type": "text/html; charset=utf-8" });
      res.end("<!DOCTYPE html><html><body><h1>Welcome to nginx!</h1></body></html>");
    });
    plain404 = await startLoopbackServer((req, res) => {
      // Plain-text 404s, and a JSON API's 404 that is not Ollama's {"error": "..."} for /api/chat.
      if (req.url?.startsWith("/api/chat")) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ detail: "Not Found" }));
        return;
      }
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("Cannot GET /api/tags");
    });
  }, 120_000);
  afterAll(async () => {
    await web.close();
    await plain404.close();
  });

  it.each([
    ["an HTML page", () => web.url],
    ["a plain or foreign-JSON 404", () => plain404.url],
  ])("a URL that answers with %s is 'not an Ollama server', stdout stays clean", async (_what, url) => {
    const r = await runCli(["ask", bed.vault.root, "hello?", "--mode", "none", "--json"], { env: { KRYPTON_OLLAMA_URL: url() } });
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain("Getting text from response");
    expect(r.stderr).toContain(`not an Ollama server at ${url()}`);
    expect(r.stderr).not.toMatch(/not installed|<html|<!DOCTYPE/i);
    // --json still prints one parseable document.
    expect(() => JSON.parse(r.stdout) as unknown).not.toThrow();
  });

  it("with an unreachable model, ask prints the error on stderr, exits 1, and prints no sources", async () => {
    await runCli(["index", bed.vault.root, "--no-embeddings"], { env: bed.env });
    const r = await runCli(["ask", bed.vault.root, "what goes in sourdough bread?", "--mode", "rag", "--no-embeddings"], {
      env: { KRYPTON_OLLAMA_URL: "http://127.0.0.1:9" },
    });
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain("Sources:");
    expect(r.stderr).toMatch(/krypton: /);
  });

  it('"summarize this note" without --note exits 1 with a CLI-worded message on stderr', async () => {
    const r = await runCli(["ask", bed.vault.root, "summarize this note"], { env: bed.env });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("pass --note PATH");
  });

  it('"summarize this note" with a --note that does not exist exits 1 and names the note', async () => {
    bed.ollama.script({ route: "chat", reply: "x", times: Infinity });
    const r = await runCli(["ask", bed.vault.root, "summarize this note", "--note", "Nope.md"], { env: bed.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Note not found: Nope.md");
  });

  it("--note accepts an absolute path inside the vault, and refuses one outside", async () => {
    bed.ollama.script({ route: "chat", reply: "A bread made with a starter.", times: Infinity });
    const r = await runCli(["ask", bed.vault.root, "summarize this note", "--note", join(bed.vault.root, "Cooking", "Bread.md")], { env: bed.env });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("A bread made with a starter.");
    const outside = await runCli(["ask", bed.vault.root, "summarize this note", "--note", "/etc/passwd"], { env: bed.env });
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain("outside the vault");
  });

  it("index says 'Indexed 1 note' and what the vector count means", async () => {
    const r = await runCli(["index", bed.vault.root], { env: bed.env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Indexed 1 note: 1 chunk, 1 of them with vectors from ollama:nomic-embed-text/);
  });

  it("--limit -5 says the limit must be positive", async () => {
    const r = await runCli(["search", bed.vault.root, "bread", "--limit", "-5"], { env: bed.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--limit must be positive");
  });

  it("an unknown provider in data.json is named, with the allowed values", async () => {
    await bed.vault.write(".obsidian/plugins/krypton/data.json", JSON.stringify({ chatProvider: "olama", embeddingProvider: "none" }));
    const r = await runCli(["status", bed.vault.root], { env: bed.env });
    expect(r.stderr).toContain('chatProvider is "olama"; allowed: ollama, gemini (using "ollama")');
  });

  it("mcp --http on a busy port prints no token and suggests --port", async () => {
    const busy = await startLoopbackServer(() => undefined);
    try {
      const port = String(busy.port);
      const r = await runCli(["mcp", bed.vault.root, "--http", "--port", port, "--no-embeddings"], { env: bed.env });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`port ${port} is in use`);
      expect(r.stderr).toContain("--port");
      expect(r.stderr).not.toMatch(/MCP token/);
    } finally {
      await busy.close();
    }
  });

  it("printf ... | krypton mcp answers every call before exiting", async () => {
    const lines = [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "printf", version: "1" } } },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "read_note", arguments: { path: "Cooking/Bread.md" } } },
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "summarize_notes", arguments: { mode: "current_note", note_path: "Cooking/Bread.md" } } },
    ];
    bed.ollama.script({ route: "chat", reply: "Bread summary.", times: Infinity, tokenDelayMs: 20 });
    const r = await runCli(["mcp", bed.vault.root, "--no-embeddings"], { env: bed.env, input: lines.map((l) => JSON.stringify(l)).join("\n") + "\n" });
    const answers = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as { id: number; result?: { content: { text: string }[] } });
    expect(answers.map((a) => a.id)).toEqual([1, 2, 3]);
    expect(JSON.stringify(answers[1].result)).toContain("lively starter");
    expect(JSON.stringify(answers[2].result)).toContain("Bread summary.");
    expect(r.code).toBe(0);
    await fs.access(bed.vault.root);
  });
});
