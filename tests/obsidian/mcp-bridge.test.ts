/** @jest-environment ./tests/obsidian/obsidian-window-environment.cjs */
import * as net from "node:net";
import { Platform } from "../support/obsidian-stub";
import { McpBridge } from "../../src/obsidian/mcp/mcp-bridge";
import { ToolRegistry } from "../../src/core/tools/tool-registry";
import { DEFAULT_SETTINGS } from "../../src/core/settings";
import { silentLogger } from "../../src/core/ports/logger";
import { loadPlugin, type LoadedPlugin } from "./plugin-harness";

let p: LoadedPlugin;
afterEach(async () => {
  Platform.isDesktopApp = true;
  await p?.close();
});

/** A plain JSON endpoint of the bridge, over real HTTP. */
async function listTools(url: string, token: string): Promise<{ status: number; names: string[] }> {
  const res = await fetch(url.replace(/\/mcp$/, "/mcp/tools"), { headers: { Authorization: `Bearer ${token}` } });
  const body = (await res.json()) as { tools?: { name: string }[] };
  return { status: res.status, names: (body.tools ?? []).map((t) => t.name).sort() };
}

function occupyPort(): Promise<{ port: number; close(): Promise<void> }> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port;
      resolve({ port, close: () => new Promise<void>((r) => server.close(() => r())) });
    });
  });
}

test("enabling the bridge starts it on 127.0.0.1 with the vault's tools; disabling stops it; it can restart", async () => {
  p = await loadPlugin({ "Bees.md": "# Bees\n\nBees pollinate." }, { data: { mcpPort: 0 } });
  await p.layoutReady();
  await p.services.saveSettings({ mcpEnabled: true });
  const state = p.services.bridge.current();
  if (state.kind !== "running") throw new Error(`bridge not running: ${p.services.bridge.statusLine()}`);
  expect(state.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  expect(p.services.bridge.statusLine()).toBe(`Running at ${state.url}`);
  const token = p.services.settings().mcpToken;
  expect((await listTools(state.url, token)).names).toEqual(expect.arrayContaining(["create_note", "read_note", "search_notes", "summarize_notes"]));
  expect((await listTools(state.url, "wrong-token-wrong-token")).status).toBe(401);

  await p.services.saveSettings({ mcpEnabled: false });
  expect(p.services.bridge.current().kind).toBe("off");
  await expect(fetch(state.url.replace(/\/mcp$/, "/mcp/tools"))).rejects.toThrow();

  await p.services.toggleBridge(); // the "Start/stop MCP bridge" command
  const again = p.services.bridge.current();
  expect(again.kind).toBe("running");
  if (again.kind === "running") expect((await listTools(again.url, token)).status).toBe(200);

  // A new token restarts the bridge: the old one stops working at once.
  await p.services.regenerateMcpToken();
  const after = p.services.bridge.current();
  if (after.kind !== "running") throw new Error("bridge not running after token change");
  expect((await listTools(after.url, token)).status).toBe(401);
  expect((await listTools(after.url, p.services.settings().mcpToken)).status).toBe(200);
});

test("a port in use is reported in the status line, and the bridge starts once the port is free", async () => {
  const busy = await occupyPort();
  p = await loadPlugin({ "A.md": "# A" }, { data: { mcpPort: busy.port } });
  await p.layoutReady();
  await p.services.saveSettings({ mcpEnabled: true });
  expect(p.services.bridge.current().kind).toBe("error");
  expect(p.services.bridge.statusLine()).toBe(`Not running: port ${busy.port} is in use`);

  await busy.close();
  await p.services.bridge.restart();
  expect(p.services.bridge.current()).toMatchObject({ kind: "running", port: busy.port });
});

test("the bridge starts with the index when it was enabled in a previous session", async () => {
  p = await loadPlugin({ "A.md": "# A" }, { data: { mcpPort: 0, mcpEnabled: true, mcpToken: "a-token-from-last-session-0123456789" } });
  expect(p.services.bridge.current().kind).toBe("off"); // nothing listens before the layout is ready
  await p.layoutReady();
  await p.services.bridge.start(); // already running: a no-op that reports the state
  expect(p.services.bridge.current().kind).toBe("running");
});

test("on mobile the Node server module is never loaded and the status says why", async () => {
  let loads = 0;
  const bridge = new McpBridge({
    registry: () => new ToolRegistry(),
    settings: () => ({ ...DEFAULT_SETTINGS, mcpEnabled: true, mcpToken: "x".repeat(43) }),
    vaultRoot: () => undefined,
    logger: silentLogger,
    isDesktop: () => false,
    loadServer: () => {
      loads++;
      return Promise.reject(new Error("must not load"));
    },
  });
  expect(await bridge.start()).toEqual({ kind: "unsupported", message: "The MCP bridge runs on desktop only" });
  expect(loads).toBe(0);
});

test("an unusable token is refused before anything listens", async () => {
  const bridge = new McpBridge({
    registry: () => new ToolRegistry(),
    settings: () => ({ ...DEFAULT_SETTINGS, mcpEnabled: true, mcpToken: "" }),
    vaultRoot: () => undefined,
    logger: silentLogger,
    isDesktop: () => true,
  });
  const state = await bridge.start();
  expect(state.kind).toBe("error");
  expect(bridge.statusLine()).toMatch(/token is required/);
});

test("the plugin registers the bridge command on desktop only", async () => {
  Platform.isDesktopApp = false;
  p = await loadPlugin({ "A.md": "# A" });
  expect(Object.keys(p.app.commands.commands)).not.toContain("krypton:toggle-mcp-bridge");
});
