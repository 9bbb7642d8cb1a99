/**
 * `krypton mcp` end to end: the bundled CLI as an MCP server, driven by the real MCP SDK client over
 * stdio (as Claude Desktop runs it) and by plain HTTP requests against `--http`.
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { startOllamaServer, type OllamaTestServer } from "../support/servers/ollama-server";
import { makeTempVault, type TempVault } from "../support/temp-vault";
import { buildCli, cleanEnv, runCli } from "./cli-harness";

const NOTES = {
  "Machine Learning/Gradient descent.md": "# Gradient descent\n\nGradient descent walks downhill on the loss surface.\n",
  "Cooking/Bread.md": "# Sourdough bread\n\nFlour, water, salt and a lively starter.\n",
};

describe("krypton mcp", () => {
  let ollama: OllamaTestServer;
  let vault: TempVault;
  let bundle: string;

  beforeAll(async () => {
    bundle = await buildCli();
    ollama = await startOllamaServer();
  }, 120_000);
  afterAll(() => ollama.close());
  beforeEach(async () => {
    ollama.reset();
    vault = await makeTempVault(NOTES);
  });
  afterEach(() => vault.cleanup());

  it("serves the note tools over stdio to the SDK client", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bundle, "mcp", vault.root],
      env: cleanEnv({ KRYPTON_OLLAMA_URL: ollama.url }),
      stderr: "pipe",
    });
    const client = new Client({ name: "cli-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["create_note", "read_note", "search_notes", "summarize_notes"]);

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

      ollama.script({ route: "chat", reply: "# Tides\n\nThe moon pulls the sea.\n" });
      const created = await client.callTool({ name: "create_note", arguments: { topic: "tides" } });
      expect(created.isError).toBeFalsy();
      expect(await vault.read("Krypton/tides.md")).toContain("The moon pulls the sea.");

      const escape = await client.callTool({ name: "read_note", arguments: { path: "../outside.md" } });
      expect(escape.isError).toBe(true);
    } finally {
      await client.close();
    }
  });

  /** Starts `krypton mcp --http` on a free port; `ready` resolves once it printed its URL (and a generated token). */
  async function startHttp(env: Record<string, string>) {
    let child!: ChildProcessWithoutNullStreams;
    let stderr = "";
    let settle!: { resolve: (v: { url: string; token: string | null }) => void; reject: (e: Error) => void };
    const ready = new Promise<{ url: string; token: string | null }>((resolve, reject) => (settle = { resolve, reject }));
    const check = () => {
      const url = /on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr)?.[1];
      const token = /token \(shown once[^)]*\): (\S+)/.exec(stderr)?.[1] ?? null;
      if (url && (token || env.KRYPTON_MCP_TOKEN)) settle.resolve({ url, token });
    };
    const done = runCli(["mcp", vault.root, "--http", "--port", "0"], {
      env: { KRYPTON_OLLAMA_URL: ollama.url, ...env },
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
    return { ...info, stop: () => child.kill("SIGINT"), done };
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

  it("refuses a token that is too short, without starting", async () => {
    const short = await runCli(["mcp", vault.root, "--http", "--port", "0", "--token", "1234"], {});
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/at least 16 characters/);
    expect(short.stderr).not.toMatch(/bridge on http/);
  });

  it("a port in use: one line saying so, exit 1", async () => {
    const http = await import("node:http");
    const blocker = http.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as import("node:net").AddressInfo).port;
    try {
      const r = await runCli(["mcp", vault.root, "--http", "--port", String(port)], { env: { KRYPTON_MCP_TOKEN: "a-user-chosen-token-0123456789" } });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`${port}.*in use`));
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});
