// The bridge's security table, each row over real HTTP: the bad request is refused AND the vault (plus a
// folder outside it, reachable through a symlink) is byte-for-byte unchanged afterwards.
import { mkdtempSync, promises as fs } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { basename, join } from "node:path";
import { connect } from "node:net";
import { z } from "zod";
import { generateMcpToken } from "../../src/core/mcp/mcp-token";
import { ToolRegistry, defineTool } from "../../src/core/tools/tool-registry";
import { McpBridgeStartError, startMcpHttpServer, type McpHttpServerHandle, type McpHttpServerOptions } from "../../src/node/mcp-http-server";
import { makeTempVault, type TempVault } from "../support/temp-vault";
import { postJson, rawExchange, request, type RawResponse } from "./support/http-request";
import { connectStreamable, noteToolRegistry, recordingLogger, snapshot } from "./support/mcp-test-kit";

const token = generateMcpToken();
const ALLOWED_ORIGIN = "https://allowed.example";

let vault: TempVault;
let outside: string;
let bridge: McpHttpServerHandle;
let logger: ReturnType<typeof recordingLogger>;
const responses: RawResponse[] = [];
const bridges: McpHttpServerHandle[] = [];

async function start(extra: Partial<McpHttpServerOptions> = {}): Promise<McpHttpServerHandle> {
  const handle = await startMcpHttpServer({
    registry: noteToolRegistry(vault.root).registry,
    port: 0,
    token,
    vaultRoot: vault.root,
    logger,
    allowedOrigins: [ALLOWED_ORIGIN],
    ...extra,
  });
  bridges.push(handle);
  return handle;
}

const createCall = { tool: "create_note", arguments: { topic: "pwned" } };
const rpcCreate = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "create_note", arguments: { topic: "pwned" } } };

/** Runs the request, records the response, and checks that neither the vault nor the outside folder changed. */
async function expectUnchanged(send: () => Promise<RawResponse>): Promise<RawResponse> {
  const before = [await snapshot(vault.root), await snapshot(outside)];
  const res = await send();
  responses.push(res);
  expect([await snapshot(vault.root), await snapshot(outside)]).toEqual(before);
  return res;
}

beforeEach(async () => {
  vault = await makeTempVault({
    "Public.md": "# Public\n\nNothing secret here.\n",
    ".obsidian/app.json": "{}",
    ".krypton/manifest.json": "{}",
  });
  outside = mkdtempSync(join(tmpdir(), "krypton-outside-"));
  await fs.writeFile(join(outside, "secret.md"), "TOP SECRET\n");
  await fs.symlink(outside, join(vault.root, "link-out"), "dir");
  logger = recordingLogger();
  bridge = await start();
});

afterEach(async () => {
  await Promise.all(bridges.splice(0).map((b) => b.close()));
  await vault.cleanup();
  await fs.rm(outside, { recursive: true, force: true });
});

afterAll(() => {
  // Across every response of this file: no wildcard CORS, never the token.
  for (const res of responses) {
    expect(res.headers["access-control-allow-origin"]).not.toBe("*");
    expect(res.body).not.toContain(token);
  }
});

it("control: an authorized create_note does change the vault (so the checks below can fail)", async () => {
  const before = await snapshot(vault.root);
  const res = await postJson(bridge.port, "/mcp/tools/call", token, createCall);
  expect(res.status).toBe(200);
  expect(await snapshot(vault.root)).not.toEqual(before);
  expect(await vault.read("Krypton/Pwned.md")).toContain("pwned");
});

describe("bearer token", () => {
  const badAuth: [string, Record<string, string>][] = [
    ["no Authorization header", {}],
    ["an empty bearer token", { Authorization: "Bearer " }],
    ["'Bearer' alone", { Authorization: "Bearer" }],
    ["a wrong token", { Authorization: "Bearer attacker-guess-0123456789" }],
    ["the token with one more character", { Authorization: `Bearer ${token}x` }],
    ["the token with one character less", { Authorization: `Bearer ${token.slice(0, -1)}` }],
    ["the token under Basic", { Authorization: `Basic ${Buffer.from(`user:${token}`).toString("base64")}` }],
    ["the token with trailing junk", { Authorization: `Bearer ${token} extra` }],
  ];
  const endpoints: [string, string, unknown][] = [
    ["POST", "/mcp/tools/call", createCall],
    ["POST", "/mcp", rpcCreate],
    ["GET", "/mcp/tools", undefined],
    ["GET", "/sse", undefined],
    ["POST", "/messages?sessionId=x", rpcCreate],
  ];

  describe.each(endpoints)("%s %s", (method, path, body) => {
    it.each(badAuth)("refuses %s with 401", async (_why, headers) => {
      const res = await expectUnchanged(() =>
        request(bridge.port, {
          method,
          path,
          headers: { Host: `127.0.0.1:${bridge.port}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
        }),
      );
      expect(res.status).toBe(401);
      expect(res.headers["www-authenticate"]).toBe('Bearer realm="krypton"');
      expect(res.body).toContain("Missing or wrong bearer token");
    });
  });

  it("does not take the token from the query string", async () => {
    const res = await expectUnchanged(() => postJson(bridge.port, `/mcp/tools/call?token=${token}`, undefined, createCall));
    expect(res.status).toBe(401);
  });

  it.each([
    ["an empty token", ""],
    ["a whitespace token", "   "],
    ["a short token", "short-token"],
  ])("refuses to start with %s (never 'auth off')", async (_why, bad) => {
    await expect(start({ token: bad })).rejects.toThrow(McpBridgeStartError);
  });
});

describe("Host header (DNS rebinding)", () => {
  it.each([
    ["a foreign name", (p: number) => `evil.example:${p}`],
    ["a rebinding name that resolves to 127.0.0.1", (p: number) => `127.0.0.1.nip.io:${p}`],
    ["the loopback address on another port", (p: number) => `127.0.0.1:${p + 1}`],
    ["no port", () => "localhost"],
    ["IPv6 loopback (not what we bind)", (p: number) => `[::1]:${p}`],
  ])("refuses %s with 403", async (_why, host) => {
    const res = await expectUnchanged(() => postJson(bridge.port, "/mcp/tools/call", token, createCall, { Host: host(bridge.port) }));
    expect(res.status).toBe(403);
    expect(res.body).toContain("Host header not allowed");
  });

  it("refuses a request without a Host header", async () => {
    const before = await snapshot(vault.root);
    const body = JSON.stringify(createCall);
    const { received } = await rawExchange(
      bridge.port,
      `POST /mcp/tools/call HTTP/1.0\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expect(received).toMatch(/^HTTP\/1\.[01] 403/);
    expect(await snapshot(vault.root)).toEqual(before);
  });

  it("accepts localhost:<port> as well as 127.0.0.1:<port>", async () => {
    const res = await request(bridge.port, { path: "/mcp/tools", headers: { Host: `localhost:${bridge.port}`, Authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
  });
});

describe("Origin header", () => {
  it.each([["https://evil.example"], ["null"], ["http://127.0.0.1:9999"], [`${ALLOWED_ORIGIN}.evil.example`]])("refuses Origin %s with 403", async (origin) => {
    const res = await expectUnchanged(() => postJson(bridge.port, "/mcp/tools/call", token, createCall, { Origin: origin }));
    expect(res.status).toBe(403);
    expect(res.headers["access-control-allow-origin"]).toBeUndefined();
  });

  it("refuses a CORS preflight from an unlisted origin", async () => {
    const res = await expectUnchanged(() =>
      request(bridge.port, { method: "OPTIONS", path: "/mcp", headers: { Host: `127.0.0.1:${bridge.port}`, Origin: "https://evil.example", "Access-Control-Request-Method": "POST" } }),
    );
    expect(res.status).toBe(403);
  });

  it("serves a listed origin, echoing exactly that origin (never *)", async () => {
    const preflight = await request(bridge.port, {
      method: "OPTIONS",
      path: "/mcp",
      headers: { Host: `127.0.0.1:${bridge.port}`, Origin: ALLOWED_ORIGIN, "Access-Control-Request-Method": "POST" },
    });
    responses.push(preflight);
    expect(preflight.status).toBe(204);
    expect(preflight.headers["access-control-allow-origin"]).toBe(ALLOWED_ORIGIN);
    expect(preflight.headers["access-control-allow-headers"]).toContain("Authorization");
    const res = await request(bridge.port, { path: "/mcp/tools", headers: { Host: `127.0.0.1:${bridge.port}`, Authorization: `Bearer ${token}`, Origin: ALLOWED_ORIGIN } });
    responses.push(res);
    expect(res.status).toBe(200);
    expect(res.headers["access-control-allow-origin"]).toBe(ALLOWED_ORIGIN);
    expect(res.headers.vary).toBe("Origin");
  });

  it("still needs the token from a listed origin", async () => {
    const res = await expectUnchanged(() => postJson(bridge.port, "/mcp/tools/call", undefined, createCall, { Origin: ALLOWED_ORIGIN }));
    expect(res.status).toBe(401);
  });

  it("ignores '*' in the allowed origins list", async () => {
    const open = await start({ allowedOrigins: ["*"] });
    const res = await expectUnchanged(() => postJson(open.port, "/mcp/tools/call", token, createCall, { Origin: "https://evil.example" }));
    expect(res.status).toBe(403);
  });
});

describe("request bodies", () => {
  const big = (size: number) => JSON.stringify({ tool: "create_note", arguments: { topic: "pwned", folder: "x".repeat(size) } });

  it("refuses a declared body over 1 MB with 413", async () => {
    const res = await expectUnchanged(() => postJson(bridge.port, "/mcp/tools/call", token, big(1024 * 1024 + 10)));
    expect(res.status).toBe(413);
    expect(res.body).toContain("larger than 1048576 bytes");
  });

  it("refuses a streamed (chunked) body once it passes 1 MB, without waiting for the rest", async () => {
    let sent = 0;
    async function* chunks() {
      yield Buffer.from('{"tool":"create_note","arguments":{"topic":"pwned","folder":"');
      // 64 MB if the server read it all; it must stop long before.
      for (let i = 0; i < 1024; i++) {
        sent += 64 * 1024;
        yield Buffer.alloc(64 * 1024, "x");
      }
      yield Buffer.from('"}}');
    }
    const res = await expectUnchanged(() =>
      request(bridge.port, {
        method: "POST",
        path: "/mcp",
        headers: { Host: `127.0.0.1:${bridge.port}`, Authorization: `Bearer ${token}`, "Content-Type": "application/json", "Transfer-Encoding": "chunked" },
        chunks: chunks(),
      }),
    );
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } });
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });

  it("refuses a non-JSON content type with 415", async () => {
    const res = await expectUnchanged(() => postJson(bridge.port, "/mcp/tools/call", token, createCall, { "Content-Type": "text/plain" }));
    expect(res.status).toBe(415);
  });

  it("keeps serving after refused bodies", async () => {
    await postJson(bridge.port, "/mcp/tools/call", token, big(2 * 1024 * 1024));
    const res = await request(bridge.port, { path: "/mcp/tools", headers: { Host: `127.0.0.1:${bridge.port}`, Authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
  });
});

describe("malformed JSON-RPC gets a JSON-RPC error", () => {
  it.each([
    ["not JSON", "{this is not json", -32700],
    ["JSON that is not JSON-RPC", JSON.stringify({ hello: "world" }), -32700],
    ["a JSON-RPC message without a method", JSON.stringify({ jsonrpc: "2.0", id: 1 }), -32700],
  ])("POST /mcp with %s", async (_why, body, code) => {
    const res = await expectUnchanged(() => postJson(bridge.port, "/mcp", token, body));
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ jsonrpc: "2.0", id: null, error: { code } });
  });

  it("POST /messages (legacy SSE) with bad JSON and with a non-JSON-RPC object", async () => {
    // Open a legacy SSE session to get a real session id.
    const sse = await openSse(bridge.port);
    const bad = await expectUnchanged(() => postJson(bridge.port, `/messages?sessionId=${sse.sessionId}`, token, "{oops"));
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toMatchObject({ jsonrpc: "2.0", error: { code: -32700 } });
    const odd = await expectUnchanged(() => postJson(bridge.port, `/messages?sessionId=${sse.sessionId}`, token, { not: "rpc" }));
    expect(odd.status).toBe(400);
    expect(JSON.parse(odd.body)).toMatchObject({ jsonrpc: "2.0", error: { code: -32600 } });
    sse.close();
  });

  it("POST /messages with an unknown session is 404", async () => {
    const res = await expectUnchanged(() => postJson(bridge.port, "/messages?sessionId=nope", token, rpcCreate));
    expect(res.status).toBe(404);
  });
});

describe("rate limit", () => {
  it("answers 429 with Retry-After once a client is over its budget", async () => {
    const limited = await start({ limits: { rateLimit: { burst: 3, perSecond: 0.001 } } });
    for (let i = 0; i < 3; i++) {
      const ok = await request(limited.port, { path: "/mcp/tools", headers: { Host: `127.0.0.1:${limited.port}`, Authorization: `Bearer ${token}` } });
      expect(ok.status).toBe(200);
    }
    const res = await expectUnchanged(() => postJson(limited.port, "/mcp/tools/call", token, createCall));
    expect(res.status).toBe(429);
    expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
  });
});

describe("slow and abandoned requests", () => {
  it("closes a connection whose headers never finish (408)", async () => {
    const slow = await start({ limits: { headersTimeoutMs: 200, requestTimeoutMs: 400 } });
    const before = await snapshot(vault.root);
    const { received } = await rawExchange(slow.port, `POST /mcp/tools/call HTTP/1.1\r\nHost: 127.0.0.1:${slow.port}\r\nAuthorization: Bearer ${token}\r\n`);
    expect(received).toMatch(/^HTTP\/1\.1 408/);
    expect(await snapshot(vault.root)).toEqual(before);
  });

  it("closes a connection whose body stalls (408), and nothing is created", async () => {
    const slow = await start({ limits: { headersTimeoutMs: 200, requestTimeoutMs: 400 } });
    const before = await snapshot(vault.root);
    const body = JSON.stringify(createCall);
    const { received } = await rawExchange(
      slow.port,
      `POST /mcp/tools/call HTTP/1.1\r\nHost: 127.0.0.1:${slow.port}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    );
    expect(received).toMatch(/^HTTP\/1\.1 408/);
    expect(await snapshot(vault.root)).toEqual(before);
    const ok = await request(slow.port, { path: "/mcp/tools", headers: { Host: `127.0.0.1:${slow.port}`, Authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
  });
});

describe("one failing request never takes the bridge down", () => {
  function fragileRegistry(): ToolRegistry {
    const registry = new ToolRegistry();
    registry.register(
      defineTool({
        name: "explode",
        title: "Explode",
        description: "Throws something that is not an Error",
        inputSchema: {},
        outputSchema: {},
        run: () => Promise.reject("boom" as unknown as Error),
      }),
    );
    registry.register(
      defineTool({
        name: "crash",
        title: "Crash",
        description: "Throws an Error with a multi-line message and a stack",
        inputSchema: {},
        outputSchema: {},
        run: () => Promise.reject(new TypeError("cannot read x of undefined\n    at secretFunction (/src/secret.ts:1:1)")),
      }),
    );
    registry.register(
      defineTool({
        name: "hang",
        title: "Hang",
        description: "Waits until cancelled",
        inputSchema: { ms: z.number().optional() },
        outputSchema: {},
        run: (_input, context) =>
          new Promise<never>((_resolve, reject) => context.signal?.addEventListener("abort", () => reject(Object.assign(new Error("aborted"), { name: "AbortError" })))),
      }),
    );
    return registry;
  }

  it("turns thrown values into isError results without stack traces, and keeps serving", async () => {
    const fragile = await start({ registry: fragileRegistry() });
    const client = await connectStreamable(fragile.url, token);
    const explode = await client.callTool({ name: "explode", arguments: {} });
    expect(explode).toMatchObject({ isError: true, content: [{ type: "text", text: "explode failed: boom" }] });
    const crash = await client.callTool({ name: "crash", arguments: {} });
    expect(crash).toMatchObject({ isError: true, content: [{ type: "text", text: "crash failed: cannot read x of undefined" }] });
    const json = await postJson(fragile.port, "/mcp/tools/call", token, { tool: "crash", arguments: {} });
    expect(json.status).toBe(500);
    expect(json.body).not.toContain("secretFunction");
    expect((await client.listTools()).tools).toHaveLength(3);
    await client.close();
  });

  it("survives a client that disconnects mid-call", async () => {
    const fragile = await start({ registry: fragileRegistry() });
    const controller = new AbortController();
    const pending = fetch(`http://127.0.0.1:${fragile.port}/mcp/tools/call`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ tool: "hang", arguments: {} }),
      signal: controller.signal,
    });
    await new Promise((r) => setTimeout(r, 50));
    controller.abort();
    await expect(pending).rejects.toThrow();
    const res = await request(fragile.port, { path: "/mcp/tools", headers: { Host: `127.0.0.1:${fragile.port}`, Authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
  });

  it("answers junk on the wire with 400 and keeps serving", async () => {
    const { received } = await rawExchange(bridge.port, "THIS IS NOT HTTP\r\n\r\n");
    expect(received).toMatch(/^HTTP\/1\.1 400/);
    const res = await request(bridge.port, { path: "/mcp/tools", headers: { Host: `127.0.0.1:${bridge.port}`, Authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
  });
});

describe("paths from clients", () => {
  const outsideName = () => basename(outside);
  const readCases: [string, () => string, string][] = [
    ["a .. escape", () => `../${outsideName()}/secret.md`, "'..'"],
    ["an absolute path outside the vault", () => join(outside, "secret.md"), "outside the vault"],
    ["a symlink leading out", () => "link-out/secret.md", "symbolic link"],
    ["URL-encoded dots", () => `%2e%2e/${outsideName()}/secret.md`, "URL-encoded"],
    ["an encoded slash", () => `..%2f${outsideName()}%2fsecret.md`, "URL-encoded"],
    ["fullwidth dots", () => `\uff0e\uff0e/${outsideName()}/secret.md`, "look-alike"],
    ["a fullwidth slash", () => `..\uff0f${outsideName()}\uff0fsecret.md`, "look-alike"],
    ["backslashes", () => `..\\${outsideName()}\\secret.md`, "Backslashes"],
    ["a NUL byte", () => "Public.md\u0000../../etc/passwd", "control characters"],
    ["the config folder", () => ".obsidian/app.json", "config folder"],
    ["the .krypton folder", () => ".krypton/manifest.json", ".krypton"],
  ];

  it.each(readCases)("read_note refuses %s", async (_why, path, problem) => {
    const res = await expectUnchanged(() => postJson(bridge.port, "/mcp/tools/call", token, { tool: "read_note", arguments: { path: path() } }));
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body).error).toContain(problem);
    expect(res.body).not.toContain("TOP SECRET");
  });

  it.each(readCases)("summarize_notes (current_note) refuses %s", async (_why, path, problem) => {
    const res = await expectUnchanged(() =>
      postJson(bridge.port, "/mcp/tools/call", token, { tool: "summarize_notes", arguments: { mode: "current_note", note_path: path() } }),
    );
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body).error).toContain(problem);
    expect(res.body).not.toContain("TOP SECRET");
  });

  it.each([
    ["a .. escape", () => "../escape", "'..'"],
    ["an absolute folder outside the vault", () => outside, "outside the vault"],
    ["a symlinked folder leading out", () => "link-out", "symbolic link"],
    ["a new folder under a symlink leading out", () => "link-out/new", "symbolic link"],
    ["URL-encoded dots", () => "%2e%2e/escape", "URL-encoded"],
    ["the config folder", () => ".obsidian/plugins", "config folder"],
    ["the .krypton folder", () => ".krypton", ".krypton"],
  ])("create_note refuses a folder that is %s", async (_why, folder, problem) => {
    const res = await expectUnchanged(() => postJson(bridge.port, "/mcp/tools/call", token, { tool: "create_note", arguments: { topic: "pwned", folder: folder() } }));
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body).error).toContain(problem);
  });

  it("create_note refuses a vault_path that is not the served vault, naming the problem", async () => {
    const res = await expectUnchanged(() =>
      postJson(bridge.port, "/mcp/tools/call", token, { tool: "create_note", arguments: { topic: "pwned", vault_path: outside } }),
    );
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body).error).toBe(`vault_path does not match the served vault: this server serves ${vault.root}, not ${outside}`);
  });

  it("accepts a vault_path that reaches the served vault through a symlink (compared after realpath)", async () => {
    const link = join(outside, "vault-link");
    await fs.symlink(vault.root, link, "dir");
    const res = await postJson(bridge.port, "/mcp/tools/call", token, { tool: "create_note", arguments: { topic: "linked", vault_path: link } });
    expect(res.status).toBe(200);
    expect(await vault.exists("Krypton/Linked.md")).toBe(true);
  });

  it("accepts an absolute path inside the vault", async () => {
    const res = await postJson(bridge.port, "/mcp/tools/call", token, { tool: "read_note", arguments: { path: join(vault.root, "Public.md") } });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).result).toEqual({ path: "Public.md", content: "# Public\n\nNothing secret here.\n", truncated: false, totalChars: 31 });
  });

  it("offers no delete, rename, modify or command tool", async () => {
    const res = await request(bridge.port, { path: "/mcp/tools", headers: { Host: `127.0.0.1:${bridge.port}`, Authorization: `Bearer ${token}` } });
    expect((JSON.parse(res.body) as { tools: { name: string }[] }).tools.map((t) => t.name).sort()).toEqual([
      "create_note",
      "read_note",
      "search_notes",
      "summarize_notes",
    ]);
  });
});

describe("listening", () => {
  it("binds 127.0.0.1 only: other interfaces of this machine refuse the connection", async () => {
    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i && i.family === "IPv4" && !i.internal);
    if (!external) return; // no non-loopback interface here: nothing else to connect through
    await expect(
      new Promise((resolve, reject) => {
        const s = connect(bridge.port, external.address);
        s.on("connect", () => {
          s.destroy();
          resolve("connected");
        });
        s.on("error", reject);
      }),
    ).rejects.toMatchObject({ code: "ECONNREFUSED" });
  });

  it("refuses to listen on anything but 127.0.0.1", async () => {
    await expect(start({ host: "0.0.0.0" as "127.0.0.1" })).rejects.toThrow("only listens on 127.0.0.1");
  });

  it("reports a port in use in words the settings tab can show", async () => {
    const err = await start({ port: bridge.port }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpBridgeStartError);
    expect(err).toMatchObject({ code: "port-in-use", message: `port ${bridge.port} is in use` });
  });

  it("can be stopped and started again on the same port", async () => {
    const port = bridge.port;
    await bridge.close();
    const again = await start({ port });
    const res = await request(port, { path: "/mcp/tools", headers: { Host: `127.0.0.1:${port}`, Authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    expect(again.port).toBe(port);
  });
});

describe("the token stays secret", () => {
  it("never appears in logs or error messages, whatever was sent", async () => {
    await postJson(bridge.port, "/mcp/tools/call", `${token}x`, createCall);
    await postJson(bridge.port, `/mcp/tools/call?token=${token}`, undefined, createCall);
    await postJson(bridge.port, "/mcp/tools/call", token, createCall, { Host: "evil.example" });
    await postJson(bridge.port, "/mcp/tools/call", token, { tool: "read_note", arguments: { path: "../x.md" } });
    await postJson(bridge.port, "/mcp", token, "{broken");
    await postJson(bridge.port, `/mcp/${token}`, token, createCall);
    await start({ port: bridge.port }).catch(() => undefined);
    const all = logger.lines.join("\n");
    expect(logger.lines.length).toBeGreaterThan(3);
    expect(all).not.toContain(token);
    expect(all).not.toContain(token.slice(0, 12));
  });
});

/** Opens GET /sse by hand and reads the endpoint event's session id. */
async function openSse(port: number): Promise<{ sessionId: string; close(): void }> {
  const controller = new AbortController();
  const res = await fetch(`http://127.0.0.1:${port}/sse`, { headers: { Authorization: `Bearer ${token}` }, signal: controller.signal });
  const reader = res.body!.getReader();
  let text = "";
  while (!/sessionId=([\w-]+)/.test(text)) {
    const { value } = await reader.read();
    text += new TextDecoder().decode(value);
  }
  return { sessionId: /sessionId=([\w-]+)/.exec(text)![1], close: () => controller.abort() };
}
