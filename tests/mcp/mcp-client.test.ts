// Krypton's MCP client against real MCP servers built with the SDK: a stdio process, Streamable HTTP and
// legacy SSE on 127.0.0.1. The tools land in the one tool registry and run through registry.call, as the
// agent loop runs them.
import { readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tempDirForFile } from "../support/temp-dirs";
import { McpClientManager, type McpClientManagerOptions } from "../../src/core/mcp-client/mcp-client-manager";
import { EMPTY_SERVER, type McpServerConfig } from "../../src/core/mcp-client/server-config";
import { WIRE_NAME_MAX } from "../../src/core/mcp-client/tool-names";
import type { Logger } from "../../src/core/ports/logger";
import { ToolError } from "../../src/core/tools/tool";
import { ToolRegistry } from "../../src/core/tools/tool-registry";
import { createStdioTransportFactory } from "../../src/node/mcp-stdio-transport";
import { bundleForNode } from "./support/bundle";
import { startDemoHttpServer, type DemoHttpServer } from "./support/remote-mcp-servers";

let entry: string;
let http: DemoHttpServer;
const TOKEN = "sk-test-0123456789abcdef";

beforeAll(async () => {
  entry = await bundleForNode(join(__dirname, "fixtures", "remote-stdio-server.ts"), "remote-stdio-server.cjs");
  http = await startDemoHttpServer({ token: TOKEN, instructions: "Use echo for echoing." });
});

afterAll(async () => {
  await http.close();
});

const managers: McpClientManager[] = [];
afterEach(async () => {
  await Promise.all(managers.splice(0).map((m) => m.close()));
});

function recordingLogger(lines: string[]): Logger {
  const log = (level: string) => (message: string, data?: unknown) => void lines.push(`${level} ${message} ${data === undefined ? "" : JSON.stringify(data)}`);
  return { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
}

function makeManager(overrides: Partial<McpClientManagerOptions> = {}, logLines: string[] = []) {
  const registry = overrides.registry ?? new ToolRegistry();
  const manager = new McpClientManager({
    registry,
    fetch: (input, init) => fetch(input, init),
    stdio: createStdioTransportFactory({ loginPath: async () => null }),
    logger: recordingLogger(logLines),
    ...overrides,
  });
  managers.push(manager);
  return { manager, registry };
}

function stdioServer(name: string, extra: Partial<McpServerConfig> = {}, args: string[] = []): McpServerConfig {
  return { ...EMPTY_SERVER, name, transport: "stdio", command: process.execPath, args: [entry, ...args], useLoginShellPath: false, ...extra };
}

function httpServer(name: string, url: string, extra: Partial<McpServerConfig> = {}): McpServerConfig {
  return { ...EMPTY_SERVER, name, transport: "http", url, headers: { Authorization: `Bearer ${TOKEN}` }, useLoginShellPath: false, ...extra };
}

function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const tick = () => {
      if (check()) return resolve();
      if (Date.now() - started > ms) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(tick, 20);
    };
    tick();
  });
}

describe("stdio servers", () => {
  it("connects, registers the tools as server:tool and passes arguments through", async () => {
    const { manager, registry } = makeManager();
    const [status] = await manager.apply([stdioServer("demo", { env: { DEMO_INSTRUCTIONS: "Prefer echo." } })]);
    expect(status).toMatchObject({ name: "demo", state: "ready", connectedVia: "stdio" });
    expect(registry.get("demo:echo")?.remote).toEqual({ server: "demo", tool: "echo", wireName: "demo__echo" });
    // Another server's tools never read Krypton's index: a flow of them opens none.
    expect(registry.list({ agent: true }).filter((t) => t.remote && t.needsIndex !== undefined)).toEqual([]);
    const output = await registry.call("demo:echo", { text: "hello", extra: 1 });
    expect(output.text).toBe("echo: hello");
    expect(output.structured).toEqual({ echoed: "hello" });
    expect(manager.instructions()).toContain("Prefer echo.");
    expect(manager.instructions()).toContain('MCP server "demo"');
  });

  it("reads every page of tools/list (nextCursor)", async () => {
    const { manager, registry } = makeManager();
    await manager.apply([stdioServer("paged", {}, ["--page-size", "2", "--fillers", "5"])]);
    const names = registry.list().map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["paged:echo", "paged:tool_1", "paged:tool_5", "paged:get.weather/now"]));
    expect(names.filter((n) => n.startsWith("paged:"))).toHaveLength(13);
    const [group] = manager.listTools();
    expect(group.server).toBe("paged");
    expect(group.tools).toHaveLength(13);
  });

  it("reports a server that exits at start-up with its stderr tail, and the other server keeps working", async () => {
    const logLines: string[] = [];
    const { manager, registry } = makeManager({}, logLines);
    const secret = "demo-key-7c1f9e2a55";
    const statuses = await manager.apply([stdioServer("crashy", { env: { DEMO_API_KEY: secret } }, ["--crash"]), stdioServer("good")]);
    const crashy = statuses.find((s) => s.name === "crashy")!;
    expect(crashy.state).toBe("failed");
    expect(crashy.error).toContain("crashy");
    expect(crashy.error).toContain("stderr: starting demo server");
    expect(crashy.error).toContain("was rejected by upstream");
    // The server printed its key to stderr: Krypton never repeats it.
    expect(crashy.error).not.toContain(secret);
    expect(logLines.join("\n")).not.toContain(secret);
    expect(statuses.find((s) => s.name === "good")?.state).toBe("ready");
    expect((await registry.call("good:echo", { text: "still here" })).text).toBe("echo: still here");
    expect(registry.list().some((t) => t.name.startsWith("crashy:"))).toBe(false);
  });

  it("reports a command that does not exist, with the PATH hint", async () => {
    const { manager } = makeManager();
    const [status] = await manager.apply([{ ...EMPTY_SERVER, name: "missing", command: "krypton-no-such-command-xyz", useLoginShellPath: false }]);
    expect(status.state).toBe("failed");
    expect(status.error).toMatch(/ENOENT|not found/);
    expect(status.error).toContain('turn on "Use login-shell path"');
  });

  it("reports a stored server with no command by name, not with Node's spawn error", async () => {
    const logLines: string[] = [];
    const { manager } = makeManager({}, logLines);
    const [status] = await manager.apply([stdioServer("blank", { command: "" })]);
    expect(status).toMatchObject({ state: "failed", error: '"blank" has no command' });
    expect(logLines.join("\n")).toContain('MCP server "blank" has no command');
  });

  it("cancels a running call: the server receives notifications/cancelled", async () => {
    const eventsFile = join(tempDirForFile("krypton-mcp-"), "events.txt");
    const { manager, registry } = makeManager();
    await manager.apply([stdioServer("demo", { env: { MCP_EVENTS_FILE: eventsFile } })]);
    const controller = new AbortController();
    const call = registry.call("demo:slow", {}, { signal: controller.signal });
    await until(() => existsSync(eventsFile) && readFileSync(eventsFile, "utf8").includes("call:slow"), "the call to reach the server");
    controller.abort();
    await expect(call).rejects.toThrow(/cancelled/);
    await until(() => readFileSync(eventsFile, "utf8").includes("cancelled:slow"), "the server to see the cancellation");
  });

  it("times a call out, tells the model, and cancels it on the server", async () => {
    const eventsFile = join(tempDirForFile("krypton-mcp-"), "events.txt");
    const { manager, registry } = makeManager({ callTimeoutMs: () => 300 });
    await manager.apply([stdioServer("demo", { env: { MCP_EVENTS_FILE: eventsFile } })]);
    const error = await registry.call("demo:slow", {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).message).toMatch(/demo:slow did not answer within 0 s|did not answer within/);
    await until(() => readFileSync(eventsFile, "utf8").includes("cancelled:slow"), "the server to see the cancellation");
  });

  it("summarises images, audio and resources as text instead of failing", async () => {
    const { manager, registry } = makeManager();
    await manager.apply([stdioServer("demo")]);
    const { text } = await registry.call("demo:media", {});
    expect(text).toContain("[image: image/png, 70 bytes; not shown to the model]");
    expect(text).toContain("[audio: audio/wav, 3 bytes; not shown to the model]");
    expect(text).toContain("[resource file:///notes/a.txt (text/plain)]\nresource text");
    expect(text).toContain("[resource file:///blob.bin: application/octet-stream, 6 bytes; not shown to the model]");
    expect(text).toContain("[resource link: doc https://example.org/doc]");
  });

  it("returns isError results as tool errors with the server's message", async () => {
    const { manager, registry } = makeManager();
    await manager.apply([stdioServer("demo")]);
    await expect(registry.call("demo:broken", {})).rejects.toEqual(new ToolError("the widget is jammed", "failed"));
  });

  it("refreshes the tools on notifications/tools/list_changed", async () => {
    const { manager, registry } = makeManager();
    await manager.apply([stdioServer("demo")]);
    expect(registry.get("demo:late_tool")).toBeUndefined();
    let changes = 0;
    manager.onChange(() => changes++);
    await registry.call("demo:add_tool", {});
    await until(() => registry.get("demo:late_tool") !== undefined, "late_tool to be registered");
    expect(changes).toBeGreaterThan(0);
    expect((await registry.call("demo:late_tool", {})).text).toBe("late_tool");
  });

  it("gives provider-safe, deterministic wire names and finds tools by them", async () => {
    const { manager, registry } = makeManager();
    await manager.apply([stdioServer("My Server")]);
    const tools = registry.list().filter((t) => t.remote);
    const wires = tools.map((t) => t.remote!.wireName);
    for (const wire of wires) {
      expect(wire).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(wire.length).toBeLessThanOrEqual(WIRE_NAME_MAX);
    }
    expect(new Set(wires).size).toBe(wires.length);
    const weather = registry.get("My Server:get.weather/now")!;
    expect(registry.getByWireName(weather.remote!.wireName)).toBe(weather);
    expect((await registry.call(weather.name, {})).text).toBe("sunny");
  });

  it("a server that dies later is reported with its stderr tail; its tools leave, the others stay", async () => {
    const logLines: string[] = [];
    const { manager, registry } = makeManager({}, logLines);
    await manager.apply([stdioServer("fragile"), stdioServer("steady")]);
    await registry.call("fragile:exit_now", {});
    await until(() => manager.status().find((s) => s.name === "fragile")?.state === "failed", "the exit to be noticed");
    expect(manager.status().find((s) => s.name === "fragile")?.error).toContain("panic: lost the upstream connection");
    expect(registry.get("fragile:echo")).toBeUndefined();
    expect((await registry.call("steady:echo", { text: "ok" })).text).toBe("echo: ok");
    expect(logLines.join("\n")).toContain("MCP server fragile disconnected");
    // Saving the settings again (or "Test") retries a failed server.
    const [again] = await manager.apply([stdioServer("fragile"), stdioServer("steady")]);
    expect(again.state).toBe("ready");
  });

  it("closes: the tools leave the registry and the process is stopped", async () => {
    const { manager, registry } = makeManager();
    await manager.apply([stdioServer("demo")]);
    expect(registry.list().length).toBeGreaterThan(0);
    await manager.close();
    expect(registry.list()).toEqual([]);
  });

  it("applies new settings: removed servers go, disabled ones are listed but not connected", async () => {
    const { manager, registry } = makeManager();
    await manager.apply([stdioServer("a"), stdioServer("b")]);
    const statuses = await manager.apply([stdioServer("a"), stdioServer("c", { enabled: false })]);
    expect(statuses.map((s) => [s.name, s.state])).toEqual([
      ["a", "ready"],
      ["c", "disabled"],
    ]);
    expect(registry.list().some((t) => t.name.startsWith("b:"))).toBe(false);
    expect(registry.get("a:echo")).toBeDefined();
  });

  it("reports stdio servers as desktop-only where no stdio factory exists (mobile)", async () => {
    const { manager } = makeManager({ stdio: undefined });
    const [status] = await manager.apply([stdioServer("demo")]);
    expect(status.state).toBe("unsupported");
    expect(status.error).toContain("desktop");
  });
});

describe("HTTP servers", () => {
  it("Streamable HTTP with a bearer header", async () => {
    const logLines: string[] = [];
    const { manager, registry } = makeManager({}, logLines);
    const [status] = await manager.apply([httpServer("web", http.streamableUrl)]);
    expect(status).toMatchObject({ state: "ready", connectedVia: "streamable-http" });
    expect(http.authHeaders).toContain(`Bearer ${TOKEN}`);
    expect((await registry.call("web:echo", { text: "over http" })).text).toBe("echo: over http");
    expect(manager.instructions()).toContain("Use echo for echoing.");
    expect(logLines.join("\n")).not.toContain(TOKEN);
  });

  it("falls back to legacy SSE when the endpoint answers 405", async () => {
    const { manager, registry } = makeManager();
    const [status] = await manager.apply([httpServer("old", http.legacyUrl)]);
    expect(status).toMatchObject({ state: "ready", connectedVia: "sse" });
    expect((await registry.call("old:echo", { text: "legacy" })).text).toBe("echo: legacy");
  });

  it("connects with legacy SSE directly when configured so", async () => {
    const { manager, registry } = makeManager();
    const [status] = await manager.apply([httpServer("old", http.legacyUrl, { transport: "sse" })]);
    expect(status).toMatchObject({ state: "ready", connectedVia: "sse" });
    expect(registry.get("old:media")).toBeDefined();
  });

  it("reports a refused token with the HTTP status and never the token", async () => {
    const logLines: string[] = [];
    const wrong = "sk-wrong-token-99887766";
    const { manager, registry } = makeManager({}, logLines);
    const statuses = await manager.apply([
      httpServer("locked", http.streamableUrl, { headers: { Authorization: `Bearer ${wrong}` } }),
      httpServer("open", http.streamableUrl),
    ]);
    const locked = statuses.find((s) => s.name === "locked")!;
    expect(locked.state).toBe("failed");
    expect(locked.error).toContain("HTTP 401");
    expect(locked.error).not.toContain(wrong);
    expect(logLines.join("\n")).not.toContain(wrong);
    expect(statuses.find((s) => s.name === "open")?.state).toBe("ready");
    expect(registry.get("open:echo")).toBeDefined();
  });

  it("reports an unreachable server", async () => {
    const { manager } = makeManager();
    const [status] = await manager.apply([httpServer("down", "http://127.0.0.1:9/mcp")]);
    expect(status.state).toBe("failed");
    expect(status.error).toContain("cannot connect to http://127.0.0.1:9/mcp");
  });

  it("cancels a running HTTP call on the server", async () => {
    const { manager, registry } = makeManager();
    await manager.apply([httpServer("web", http.streamableUrl)]);
    const before = http.cancelled;
    const controller = new AbortController();
    const call = registry.call("web:slow", {}, { signal: controller.signal });
    await until(() => http.events.includes("call:slow:{}"), "the call to reach the server");
    controller.abort();
    await expect(call).rejects.toThrow(/cancelled/);
    await until(() => http.cancelled > before, "the server to see the cancellation");
  });

  it("reads a small model's quoted numbers and true/false as the tool's JSON Schema declares them, top-level fields only", async () => {
    const typed = await startDemoHttpServer({ typedTool: true });
    try {
      const { manager, registry } = makeManager();
      await manager.apply([{ ...httpServer("items", typed.streamableUrl), headers: {} }]);
      const sent = { limit: "5", score: "-0.5", exact: "false", page: "2", query: "42", code: "7", filter: { year: "2024" }, extra: "3" };
      const received = JSON.parse((await registry.call("items:find_items", sent)).text) as Record<string, unknown>;
      // Strings the schema allows (query, code), nested fields and undeclared ones go as written.
      expect(received).toEqual({ limit: 5, score: -0.5, exact: false, page: 2, query: "42", code: "7", filter: { year: "2024" }, extra: "3" });
      // Anything that is not exactly a number or true/false is left for the server to judge.
      const left = JSON.parse((await registry.call("items:find_items", { limit: "5 items", exact: "yes" })).text) as Record<string, unknown>;
      expect(left).toEqual({ limit: "5 items", exact: "yes" });
      expect(typed.events).toContain(`call:find_items:${JSON.stringify({ limit: "5 items", exact: "yes" })}`);
    } finally {
      await typed.close();
    }
  });

  it("refreshes on list_changed over Streamable HTTP", async () => {
    const { manager, registry } = makeManager();
    await manager.apply([httpServer("web", http.streamableUrl)]);
    await registry.call("web:add_tool", {});
    await until(() => registry.get("web:late_tool") !== undefined, "late_tool over HTTP");
  });
});

describe("Test button", () => {
  it("lists a working server's tools and disconnects", async () => {
    const { manager, registry } = makeManager();
    const result = await manager.test(stdioServer("demo"));
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.tools.map((t) => t.name)).toContain("echo");
    expect(registry.list()).toEqual([]);
  });

  it("shows a failing server's error with its stderr tail", async () => {
    const { manager } = makeManager();
    const result = await manager.test(stdioServer("crashy", {}, ["--crash"]));
    expect(result).toMatchObject({ ok: false, unsupported: false });
    if (!result.ok) expect(result.error).toContain("fatal: the API key (none) was rejected by upstream");
  });

  it("refuses an incomplete form before connecting", async () => {
    const { manager } = makeManager();
    expect(await manager.test({ ...EMPTY_SERVER, name: "x", transport: "http", url: "ftp://x" })).toMatchObject({ ok: false, error: expect.stringContaining("http://") });
  });
});
