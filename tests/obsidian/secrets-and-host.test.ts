/** @jest-environment ./tests/obsidian/obsidian-window-environment.cjs */
import { clearNotices, DropdownComponent, noticeMessages, settingsIn } from "../support/obsidian-stub";
import { modelForProvider } from "../../src/obsidian/settings/models-section";
import type { KryptonSettingTab } from "../../src/obsidian/settings/settings-tab";
import { startOllamaServer, type OllamaTestServer } from "../support/servers/ollama-server";
import { startTavilyServer } from "../support/servers/tavily-server";
import { createObsidianHost } from "../../src/obsidian/host/obsidian-host";
import { createObsidianLogger } from "../../src/obsidian/host/obsidian-logger";
import { SECRET_IDS, SecretStore } from "../../src/obsidian/host/secret-store";
import { DEFAULT_SETTINGS } from "../../src/core/settings";
import { silentLogger } from "../../src/core/ports/logger";
import { chromiumLikeFetch } from "./cors-fetch";
import { loadPlugin, type LoadedPlugin } from "./plugin-harness";

let p: LoadedPlugin;
beforeEach(() => clearNotices());
afterEach(async () => {
  await p?.close();
});

const dataJson = async () => JSON.parse(await p.temp.read(".obsidian/plugins/krypton/data.json")) as Record<string, unknown>;

test("with secret storage, keys move out of data.json (also ones an older version left there)", async () => {
  p = await loadPlugin({ "A.md": "# A" }, { data: { geminiApiKey: "AIza-plain-from-old-version" } });
  expect(p.services.usesSecretStorage).toBe(true);
  expect(p.services.settings().geminiApiKey).toBe("AIza-plain-from-old-version");
  expect(p.app.secretStorage!.getSecret(SECRET_IDS.geminiApiKey)).toBe("AIza-plain-from-old-version");
  expect((await dataJson()).geminiApiKey).toBe("");

  await p.services.saveSettings({ tavilyApiKey: "tvly-secret-123", webMaxResults: 7 });
  const raw = await p.temp.read(".obsidian/plugins/krypton/data.json");
  expect(raw).not.toContain("tvly-secret-123");
  expect(raw).not.toContain("AIza-plain");
  expect((await dataJson()).webMaxResults).toBe(7);
  expect(p.app.secretStorage!.getSecret(SECRET_IDS.tavilyApiKey)).toBe("tvly-secret-123");
});

test("the keychain's value wins over a stale copy in data.json, which is then cleared", async () => {
  p = await loadPlugin(
    { "A.md": "# A" },
    { data: { geminiApiKey: "AIza-stale" }, secrets: { [SECRET_IDS.geminiApiKey]: "AIza-current" } },
  );
  expect(p.services.settings().geminiApiKey).toBe("AIza-current");
  expect(p.app.secretStorage!.getSecret(SECRET_IDS.geminiApiKey)).toBe("AIza-current");
  expect((await dataJson()).geminiApiKey).toBe("");
});

test("a keychain that refuses to store keeps the key in data.json instead of losing it", () => {
  const failing = new SecretStore({
    getSecret: () => {
      throw new Error("keychain locked");
    },
    setSecret: () => {
      throw new Error("keychain locked");
    },
  });
  const loaded = failing.hydrate({ ...DEFAULT_SETTINGS, geminiApiKey: "AIza-kept" });
  expect(loaded).toEqual({ settings: expect.objectContaining({ geminiApiKey: "AIza-kept" }), migrated: false });
  expect(failing.persist({ ...DEFAULT_SETTINGS, tavilyApiKey: "tvly-kept" })).toMatchObject({ tavilyApiKey: "tvly-kept" });

  const working = new Map<string, string>();
  const ok = new SecretStore({ getSecret: (id) => working.get(id) ?? null, setSecret: (id, v) => void working.set(id, v) });
  expect(ok.persist({ ...DEFAULT_SETTINGS, tavilyApiKey: "tvly-moved" })).toMatchObject({ tavilyApiKey: "" });
  expect(working.get(SECRET_IDS.tavilyApiKey)).toBe("tvly-moved");
});

test("without secret storage (Obsidian before 1.11.4), keys stay in data.json", async () => {
  p = await loadPlugin({ "A.md": "# A" }, { secretStorage: false, data: { geminiApiKey: "AIza-plain" } });
  expect(p.services.usesSecretStorage).toBe(false);
  expect(p.services.settings().geminiApiKey).toBe("AIza-plain");
  await p.services.saveSettings({ tavilyApiKey: "tvly-plain" });
  expect(await dataJson()).toMatchObject({ geminiApiKey: "AIza-plain", tavilyApiKey: "tvly-plain" });
});

test("enabling the MCP bridge generates a token of at least 128 bits, kept as a secret", async () => {
  p = await loadPlugin({ "A.md": "# A" }, { data: { mcpPort: 0 } });
  await p.services.saveSettings({ mcpEnabled: true });
  const token = p.services.settings().mcpToken;
  expect(token.length).toBeGreaterThanOrEqual(22); // base64url: 22 chars = 132 bits
  expect(p.app.secretStorage!.getSecret(SECRET_IDS.mcpToken)).toBe(token);
  expect(await p.temp.read(".obsidian/plugins/krypton/data.json")).not.toContain(token);
  await p.services.regenerateMcpToken();
  expect(p.services.settings().mcpToken).not.toBe(token);
});

test("the logger is quiet by default and never prints a secret", () => {
  const lines: string[] = [];
  const sink = { debug: (m: string) => lines.push(m), info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m), error: (m: string) => lines.push(m) };
  let debug = false;
  const logger = createObsidianLogger({ debugEnabled: () => debug, secrets: () => ["AIza-super-secret"], sink });
  logger.debug("hello");
  logger.info("hello");
  logger.warn("hello");
  expect(lines).toEqual([]);
  logger.error("Request failed with key AIza-super-secret", new Error("401 for AIza-super-secret"));
  debug = true;
  logger.debug("payload", { key: "AIza-super-secret" });
  expect(lines).toHaveLength(2);
  for (const line of lines) expect(line).not.toContain("AIza-super-secret");
  expect(lines[0]).toContain("***");
});

describe("the host's HTTP inside Obsidian", () => {
  let ollama: OllamaTestServer;
  const realFetch = window.fetch;
  beforeEach(async () => {
    ollama = await startOllamaServer();
    window.fetch = chromiumLikeFetch(window.location.origin);
  });
  afterEach(async () => {
    window.fetch = realFetch;
    await ollama.close();
  });

  test("Ollama refusing CORS still answers, and the user is told once how to enable streaming", async () => {
    p = await loadPlugin({ "A.md": "# A" });
    const host = createObsidianHost(p.plugin as never, { logger: silentLogger, ollamaUrl: () => ollama.url });
    for (let i = 0; i < 3; i++) {
      const res = await host.fetch(`${ollama.url}/api/tags`, { headers: { "Content-Type": "application/json" } });
      expect(res.status).toBe(200);
    }
    const notices = noticeMessages().filter((m) => m.includes("OLLAMA_ORIGINS"));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain(`OLLAMA_ORIGINS=${window.location.origin}*`);
  });

  test("other services falling back (Tavily) do not earn the Ollama notice", async () => {
    const tavily = await startTavilyServer();
    try {
      p = await loadPlugin({ "A.md": "# A" });
      const host = createObsidianHost(p.plugin as never, { logger: silentLogger, ollamaUrl: () => ollama.url });
      const res = await host.fetch(`${tavily.url}/search`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: "Bearer tvly-test-key" },
        body: JSON.stringify({ query: "bees", max_results: 2 }),
      });
      expect(res.status).toBe(200);
      expect(noticeMessages()).toEqual([]);
    } finally {
      await tavily.close();
    }
  });
});

test("switching a provider picks that provider's default model when the old name belongs to the other one", async () => {
  expect(modelForProvider("chat", "gemini", "llama3.1:8b")).toBe("gemini-2.5-flash");
  expect(modelForProvider("chat", "gemini", "gemini-2.0-flash")).toBe("gemini-2.0-flash");
  expect(modelForProvider("chat", "ollama", "gemini-2.5-flash")).toBe("llama3.1:8b");
  expect(modelForProvider("chat", "ollama", "gemma3:4b")).toBe("gemma3:4b");
  expect(modelForProvider("embedding", "gemini", "nomic-embed-text")).toBe("gemini-embedding-001");
  expect(modelForProvider("embedding", "gemini", "text-embedding-004")).toBe("text-embedding-004");
  expect(modelForProvider("embedding", "ollama", "gemini-embedding-001")).toBe("nomic-embed-text");

  p = await loadPlugin({ "A.md": "# A" }, { data: { ollamaUrl: "http://127.0.0.1:9", mcpPort: 0 } });
  await p.layoutReady();
  const tab = p.plugin.settingTabs[0] as unknown as KryptonSettingTab;
  tab.display();
  const row = (name: string) => settingsIn(tab.containerEl).find((s) => !s.isHeading && s.nameEl.textContent === name)!;
  const dropdown = (name: string) => row(name).components.find((c) => c instanceof DropdownComponent) as DropdownComponent;
  await dropdown("Chat provider").simulateInput("gemini");
  await dropdown("Embedding provider").simulateInput("gemini");
  expect(p.services.settings()).toMatchObject({ chatProvider: "gemini", chatModel: "gemini-2.5-flash", embeddingProvider: "gemini", embeddingModel: "gemini-embedding-001" });
  tab.hide();
});

test("rapid setting changes all reach data.json, the last one winning", async () => {
  p = await loadPlugin({ "A.md": "# A" });
  await Promise.all([1, 2, 3, 4, 5].map((n) => p.services.saveSettings({ maxK: n, displayK: n })));
  expect(await dataJson()).toMatchObject({ maxK: 5, displayK: 5 });
  expect(p.services.settings().maxK).toBe(5);
});
