/** @jest-environment ./tests/obsidian/obsidian-window-environment.cjs */
import { Platform, settingsIn } from "../support/obsidian-stub";
import { KryptonSettingTab } from "../../src/obsidian/settings/settings-tab";
import { claudeDesktopConfig, claudeDesktopStdioConfig, inspectorCommand, inspectorStdioCommand } from "../../src/obsidian/mcp/client-config";
import { McpBridge } from "../../src/obsidian/mcp/mcp-bridge";
import { ToolRegistry } from "../../src/core/tools/tool-registry";
import { DEFAULT_SETTINGS } from "../../src/core/settings";
import { silentLogger } from "../../src/core/ports/logger";
import { indexInEarlierSession, loadPlugin, type LoadedPlugin } from "./plugin-harness";
import manifest from "../../manifest.json";
import { connectSse, connectStreamable, textOf } from "../mcp/support/mcp-test-kit";
import { startLoopbackServer } from "../support/servers/loopback-server";

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

/** A promise and the function that resolves it: a test holds a slow disk at one point with it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

test("two quick 'Start/stop MCP bridge' commands end where they began: each toggles what the one before left", async () => {
  p = await loadPlugin({ "A.md": "# A" }, { data: { mcpPort: 0 } });
  await p.layoutReady();
  await Promise.all([p.services.toggleBridge(), p.services.toggleBridge()]);
  expect(p.services.bridge.current().kind).toBe("off");
  expect(p.services.settings().mcpEnabled).toBe(false);
});

test("after a failed start, two quick 'Start/stop MCP bridge' commands start it and stop it again: the retry is the first one's turn", async () => {
  const busy = await startLoopbackServer();
  p = await loadPlugin({ "A.md": "# A" }, { data: { mcpPort: busy.port } });
  await p.layoutReady();
  await p.services.saveSettings({ mcpEnabled: true });
  expect(p.services.bridge.current().kind).toBe("error");
  await busy.close();

  const states: string[] = [];
  p.services.bridge.onState((state) => states.push(state.kind));
  await Promise.all([p.services.toggleBridge(), p.services.toggleBridge()]);
  expect(states).toEqual(["starting", "running", "off"]);
  expect(p.services.bridge.current().kind).toBe("off");
  expect(p.services.settings().mcpEnabled).toBe(false);
});

test("'Start/stop MCP bridge' queued behind a reload from disk that stopped the bridge starts it again", async () => {
  p = await loadPlugin({ "A.md": "# A" }, { data: { mcpPort: 0, mcpEnabled: true, mcpToken: "a-token-from-last-session-0123456789" } });
  await p.layoutReady();
  expect((await p.services.bridge.start()).kind).toBe("running");
  const plugin = p.plugin as unknown as { loadData(): Promise<unknown>; externalSettingsChanged(): Promise<void> };
  const load = plugin.loadData.bind(plugin);
  const slowDisk = gate();
  const read = gate();
  // Another device turned the bridge off; the disk answers the reload's read late.
  plugin.loadData = async () => {
    const data = await load();
    read.open();
    await slowDisk.opened;
    return data;
  };
  const dataFile = ".obsidian/plugins/krypton/data.json";
  await p.temp.write(dataFile, JSON.stringify({ ...JSON.parse(await p.temp.read(dataFile)), mcpEnabled: false }));
  const reloaded = plugin.externalSettingsChanged();
  await read.opened;
  // The user presses the command while the bridge still runs: it goes after the reload, and starts the bridge.
  const toggled = p.services.toggleBridge();
  slowDisk.open();
  await Promise.all([reloaded, toggled]);
  expect(p.services.bridge.current().kind).toBe("running");
  expect(p.services.settings().mcpEnabled).toBe(true);
  expect(JSON.parse(await p.temp.read(dataFile))).toMatchObject({ mcpEnabled: true });
});

test("a port in use is reported in the status line, and the bridge starts once the port is free", async () => {
  const busy = await startLoopbackServer();
  p = await loadPlugin({ "A.md": "# A" }, { data: { mcpPort: busy.port } });
  await p.layoutReady();
  await p.services.saveSettings({ mcpEnabled: true });
  expect(p.services.bridge.current().kind).toBe("error");
  expect(p.services.bridge.statusLine()).toBe(`Not running: port ${busy.port} is in use`);

  await busy.close();
  await p.services.bridge.restart();
  expect(p.services.bridge.current()).toMatchObject({ kind: "running", port: busy.port });
});

test("after 'port in use', choosing another port starts the bridge without pressing Start", async () => {
  const busy = await startLoopbackServer();
  try {
    p = await loadPlugin({ "A.md": "# A" }, { data: { mcpPort: busy.port } });
    await p.layoutReady();
    await p.services.saveSettings({ mcpEnabled: true });
    expect(p.services.bridge.current().kind).toBe("error");

    await p.services.saveSettings({ mcpPort: 0 });
    expect(p.services.bridge.current().kind).toBe("running");
  } finally {
    await busy.close();
  }
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

test("MCP clients see the plugin's version from manifest.json, over Streamable HTTP and SSE, and call the real tools", async () => {
  p = await loadPlugin({ "Bees.md": "# Bees\n\nBees pollinate clover." }, { data: { mcpPort: 0, mcpEnabled: true, mcpToken: "a-token-from-last-session-0123456789", embeddingProvider: "none" } });
  await p.layoutReady();
  await p.services.indexSettled();
  const state = p.services.bridge.current();
  if (state.kind !== "running") throw new Error(p.services.bridge.statusLine());
  for (const client of [await connectStreamable(state.url, "a-token-from-last-session-0123456789"), await connectSse(state.url, "a-token-from-last-session-0123456789")]) {
    try {
      expect(client.getServerVersion()).toEqual({ name: "krypton", version: manifest.version });
      const read = await client.callTool({ name: "read_note", arguments: { path: "Bees.md" } });
      expect(read.structuredContent).toMatchObject({ path: "Bees.md", content: "# Bees\n\nBees pollinate clover." });
      const found = await client.callTool({ name: "search_notes", arguments: { query: "pollinate" } });
      expect(found.structuredContent).toMatchObject({ results: [{ filePath: "Bees.md" }] });
      const missing = await client.callTool({ name: "search_notes", arguments: { query: "xylophone" } });
      expect(missing).toMatchObject({ isError: true, content: [{ type: "text", text: "No notes match 'xylophone'" }] });
    } finally {
      await client.close();
    }
  }
});

test("stop, start and restart from Obsidian: the port is released and taken again, without reloading the plugin", async () => {
  p = await loadPlugin({ "A.md": "# A" }, { data: { mcpPort: 0, mcpEnabled: true, mcpToken: "a-token-from-last-session-0123456789" } });
  await p.layoutReady();
  const first = p.services.bridge.current();
  if (first.kind !== "running") throw new Error(p.services.bridge.statusLine());
  const seen: string[] = [];
  const stop = p.services.bridge.onState((s) => seen.push(s.kind));
  await p.services.bridge.stop();
  expect(p.services.bridge.statusLine()).toBe("Stopped");
  // The port is free again: something else can listen on it.
  await (await startLoopbackServer(undefined, first.port)).close();
  await p.services.saveSettings({ mcpPort: first.port });
  await p.services.bridge.start();
  await p.services.bridge.restart();
  expect(p.services.bridge.current()).toEqual({ kind: "running", port: first.port, url: first.url });
  expect((await listTools(first.url, "a-token-from-last-session-0123456789")).status).toBe(200);
  stop();
  expect(seen).toEqual(["off", "starting", "running", "off", "starting", "running"]);
});

test("the settings tab shows ready-to-copy set-ups: through the bridge (with the running URL and token) and standalone over stdio", async () => {
  p = await loadPlugin({ "A.md": "# A" }, { data: { mcpPort: 0 } });
  await p.layoutReady();
  const tab = p.plugin.settingTabs[0] as unknown as KryptonSettingTab;
  const blocks = () => new Map(settingsIn(tab.containerEl).filter((s) => s.settingEl.hasClass("krypton-code-setting")).map((s) => [s.nameEl.textContent, (s.settingEl.nextElementSibling as HTMLElement).textContent]));
  tab.display();
  // Bridge off and no token yet: only the standalone set-ups, which need neither.
  expect([...blocks().keys()]).toEqual(["Standalone MCP server", "Standalone MCP server check"]);
  expect(blocks().get("Standalone MCP server")).toBe(claudeDesktopStdioConfig(p.temp.root));
  expect(blocks().get("Standalone MCP server check")).toBe(inspectorStdioCommand(p.temp.root));

  await p.services.saveSettings({ mcpEnabled: true });
  tab.display();
  const state = p.services.bridge.current();
  if (state.kind !== "running") throw new Error(p.services.bridge.statusLine());
  const token = p.services.settings().mcpToken;
  expect([...blocks().keys()]).toEqual(["Claude Desktop", "MCP Inspector", "Standalone MCP server", "Standalone MCP server check"]);
  expect(blocks().get("Claude Desktop")).toBe(claudeDesktopConfig(state.url, token));
  expect(blocks().get("MCP Inspector")).toBe(inspectorCommand(state.url, token));
  tab.hide();
});

describe("a search through the bridge while Obsidian is still loading the index", () => {
  const TOKEN = "a-token-from-last-session-0123456789";
  const NOTES = { "Bees.md": "# Bees\n\nBees pollinate clover." };
  let saved: string;

  // Obsidian starts on a vault indexed in an earlier session: the index loads what was saved.
  beforeAll(async () => {
    saved = await indexInEarlierSession(NOTES);
  });

  /**
   * Starts Obsidian with the index's load held at its first read of the saved index (a slow load), the
   * bridge running meanwhile; `waiting()` tells when a tool call starts waiting (the gate subscribes to the
   * index's status).
   */
  async function startWithLoadHeld(): Promise<{ url: string; release: () => void; waiting: () => Promise<void> }> {
    p = await loadPlugin(NOTES, {
      data: { mcpPort: 0, mcpEnabled: true, mcpToken: TOKEN },
      savedIndex: saved,
    });
    const adapter = p.app.vault.adapter;
    const exists = adapter.exists.bind(adapter);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    adapter.exists = (path) => (path.endsWith("index/manifest.json") ? held.then(() => exists(path)) : exists(path));
    p.app.workspace.triggerLayoutReady();
    const state = await p.services.bridge.start(); // started with the index: this waits for that start
    if (state.kind !== "running") throw new Error(p.services.bridge.statusLine());
    const index = p.services.core.index;
    expect(index.status().state).toBe("loading");
    const onStatus = index.onStatus.bind(index);
    let subscribed!: () => void;
    const subscription = new Promise<void>((resolve) => (subscribed = resolve));
    index.onStatus = (listener) => {
      subscribed();
      return onStatus(listener);
    };
    return { url: state.url, release, waiting: () => subscription };
  }

  test("waits for the load to finish, then answers", async () => {
    const { url, release, waiting } = await startWithLoadHeld();
    const client = await connectStreamable(url, TOKEN);
    try {
      const answer = client.callTool({ name: "search_notes", arguments: { query: "pollinate" } });
      // Without the wait the call answers at once ("not ready yet"): release only once it waits, or has answered.
      await Promise.race([waiting(), answer]);
      release();
      const result = await answer;
      expect(textOf(result)).not.toContain("not ready");
      expect(result.structuredContent).toMatchObject({ results: [{ filePath: "Bees.md" }] });
    } finally {
      await client.close();
    }
  });

  test("unloading the plugin mid-wait ends the call with a clear error", async () => {
    const { url, release, waiting } = await startWithLoadHeld();
    const client = await connectStreamable(url, TOKEN);
    try {
      const answer = client.callTool({ name: "search_notes", arguments: { query: "pollinate" } });
      await Promise.race([waiting(), answer]);
      const closing = p.close();
      release(); // only the disk read was held: the unload aborts the load itself
      const result = await answer;
      expect(result).toMatchObject({ isError: true, content: [{ type: "text", text: "search_notes was cancelled: Krypton is shutting down" }] });
      await closing;
    } finally {
      await client.close();
    }
  });

  test("turning the bridge off in settings mid-wait ends the call saying so, not that Krypton is shutting down", async () => {
    const { url, release, waiting } = await startWithLoadHeld();
    const client = await connectStreamable(url, TOKEN);
    try {
      const answer = client.callTool({ name: "search_notes", arguments: { query: "pollinate" } });
      await Promise.race([waiting(), answer]);
      const turnedOff = p.services.saveSettings({ mcpEnabled: false });
      const result = await answer;
      release();
      await turnedOff;
      expect(result).toMatchObject({ isError: true, content: [{ type: "text", text: "search_notes was cancelled: the MCP bridge was turned off" }] });
      expect(p.services.bridge.current().kind).toBe("off");
    } finally {
      await client.close();
    }
  });

  test("a new token restarts the bridge mid-wait: the call is told the bridge restarted", async () => {
    const { url, release, waiting } = await startWithLoadHeld();
    const client = await connectStreamable(url, TOKEN);
    try {
      const answer = client.callTool({ name: "search_notes", arguments: { query: "pollinate" } });
      await Promise.race([waiting(), answer]);
      const restarted = p.services.regenerateMcpToken();
      const result = await answer;
      release();
      await restarted;
      expect(result).toMatchObject({ isError: true, content: [{ type: "text", text: "search_notes was cancelled: the MCP bridge restarted with new settings" }] });
      expect(p.services.bridge.current().kind).toBe("running");
    } finally {
      await client.close();
    }
  });
});
