/** @jest-environment ./tests/obsidian/obsidian-window-environment.cjs */
// The "MCP servers" settings section in the real plugin: paste a Claude Desktop block, see the servers
// connect (a real stdio process and a real Streamable HTTP server), Test, the form, secrets kept out of
// data.json, and stdio shown as desktop-only on mobile.
import { join } from "node:path";
import { ButtonComponent, clearNotices, ExtraButtonComponent, noticeMessages, Platform, type Setting, settingsIn, TextAreaComponent, TextComponent } from "../support/obsidian-stub";
import type { KryptonSettingTab } from "../../src/obsidian/settings/settings-tab";
import { serverSecretId } from "../../src/obsidian/host/mcp-server-secrets";
import { bundleForNodeViaCli } from "../mcp/support/bundle-cli";
import { startDemoHttpServer, type DemoHttpServer } from "../mcp/support/remote-mcp-servers";
import { loadPlugin, waitFor, type LoadedPlugin } from "./plugin-harness";

const TOKEN = "sk-settings-0123456789abcdef";
let entry: string;
let http: DemoHttpServer;
let p: LoadedPlugin;
let tab: KryptonSettingTab;

beforeAll(async () => {
  entry = bundleForNodeViaCli(join(__dirname, "..", "mcp", "fixtures", "remote-stdio-server.ts"), "remote-stdio-server.cjs");
  http = await startDemoHttpServer({ token: TOKEN });
});
afterAll(() => http.close());

beforeEach(async () => {
  clearNotices();
  p = await loadPlugin({ "A.md": "# A" });
  await p.layoutReady();
  tab = p.plugin.settingTabs[0] as unknown as KryptonSettingTab;
  tab.display();
});
afterEach(async () => {
  Platform.isDesktopApp = true;
  tab.hide();
  await p.close();
});

const rows = () => settingsIn(tab.containerEl);
const row = (name: string): Setting => {
  const found = rows().find((s) => !s.isHeading && s.nameEl.textContent === name);
  if (!found) throw new Error(`No setting named "${name}"`);
  return found;
};
const button = (s: Setting, text: string) => {
  const found = s.components.find((c) => c instanceof ButtonComponent && c.buttonEl.textContent === text) as ButtonComponent | undefined;
  if (!found) throw new Error(`No button "${text}"`);
  return found;
};
const control = <T>(s: Setting, type: new (...args: never[]) => T): T => s.components.find((c) => c instanceof type) as T;
const dataJson = () => p.temp.read(".obsidian/plugins/krypton/data.json");

function claudeBlock(): string {
  return JSON.stringify({
    mcpServers: {
      local: { command: process.execPath, args: [entry], env: { DEMO_API_KEY: "demo-env-secret-123456" }, useLoginShellPath: false },
      remote: { url: http.streamableUrl, headers: { Authorization: `Bearer ${TOKEN}` } },
    },
  });
}

async function importBlock(text: string): Promise<void> {
  const setting = row("Import configuration");
  control(setting, TextAreaComponent).simulateInput(text);
  await button(setting, "Import").simulateClick();
}

test("a pasted Claude Desktop block is imported, connects, and its secrets stay out of data.json", async () => {
  await importBlock(claudeBlock());
  expect(noticeMessages()).toContain("Imported 2 MCP servers: local, remote");
  expect(p.services.settings().mcpServers.map((s) => s.name)).toEqual(["local", "remote"]);

  await waitFor(() => p.services.core.mcp.status().every((s) => s.state === "ready"), "both servers to connect");
  expect(p.services.core.tools.get("local:echo")?.remote).toBeDefined();
  expect(p.services.core.tools.get("remote:echo")?.remote).toBeDefined();
  await waitFor(() => (row("local").descEl.textContent ?? "").includes("Connected (stdio)"), "the row to show the status");
  expect(row("remote").descEl.textContent).toContain("Connected (streamable-http)");

  const raw = await dataJson();
  expect(raw).toContain('"remote"');
  expect(raw).not.toContain(TOKEN);
  expect(raw).not.toContain("demo-env-secret-123456");
  expect(p.app.secretStorage!.getSecret(serverSecretId("remote"))).toContain(TOKEN);
  // The user's servers are never served by Krypton's own bridge.
  const { describeTools } = await import("../../src/core/mcp/mcp-server");
  expect(describeTools(p.services.core.tools).some((t) => t.name.includes(":"))).toBe(false);
});

test("after a restart the secrets come back from secret storage", async () => {
  await importBlock(claudeBlock());
  const secrets = { [serverSecretId("remote")]: p.app.secretStorage!.getSecret(serverSecretId("remote"))!, [serverSecretId("local")]: p.app.secretStorage!.getSecret(serverSecretId("local"))! };
  const data = JSON.parse(await dataJson()) as Record<string, unknown>;
  tab.hide();
  await p.close();
  p = await loadPlugin({ "A.md": "# A" }, { data, secrets });
  await p.layoutReady();
  tab = p.plugin.settingTabs[0] as unknown as KryptonSettingTab;
  tab.display();
  expect(p.services.settings().mcpServers.find((s) => s.name === "remote")?.headers).toEqual({ Authorization: `Bearer ${TOKEN}` });
  await waitFor(() => p.services.core.mcp.status().find((s) => s.name === "remote")?.state === "ready", "the remote server to connect with its token");
});

test("a bad block is refused with the server's name and nothing is saved", async () => {
  await importBlock(`{"mcpServers": {"broken": {"command": "npx", "args": "-y"}}}`);
  expect(row("Import configuration").descEl.textContent).toContain('Not imported: server "broken": args: args must be a list of strings');
  expect(p.services.settings().mcpServers).toEqual([]);
});

test("Test shows a failing server's error with its stderr tail", async () => {
  await importBlock(JSON.stringify({ mcpServers: { crashy: { command: process.execPath, args: [entry, "--crash"], useLoginShellPath: false } } }));
  const setting = row("crashy");
  await button(setting, "Test").simulateClick();
  const result = setting.descEl.querySelector(".krypton-mcp-test-result")!.textContent ?? "";
  expect(result).toContain("Failed: crashy: could not start");
  expect(result).toContain("fatal: the API key (none) was rejected by upstream");
});

test("Test lists a working server's tools", async () => {
  await importBlock(JSON.stringify({ mcpServers: { local: { command: process.execPath, args: [entry], useLoginShellPath: false, disabled: true } } }));
  const setting = row("local");
  expect(setting.descEl.textContent).toContain("Disabled.");
  await button(setting, "Test").simulateClick();
  const result = setting.descEl.querySelector(".krypton-mcp-test-result")!.textContent ?? "";
  expect(result).toContain("Connected over stdio.");
  expect(result).toContain("• echo: Echoes the text back");
});

test("the form adds a server and checks it before saving", async () => {
  await button(rows().find((s) => s.components.some((c) => c instanceof ButtonComponent && c.buttonEl.textContent === "Add server"))!, "Add server").simulateClick();
  control(row("Name"), TextComponent).simulateInput("web");
  const save = () => button(rows().find((s) => s.components.some((c) => c instanceof ButtonComponent && c.buttonEl.textContent === "Save"))!, "Save").simulateClick();
  await save();
  expect(tab.containerEl.textContent).toContain('MCP server "web" has no command');
  expect(p.services.settings().mcpServers).toEqual([]);

  control(row("Command"), TextComponent).simulateInput(process.execPath);
  control(row("Arguments"), TextAreaComponent).simulateInput(`${entry}\n`);
  control(row("Environment"), TextAreaComponent).simulateInput("DEMO_INSTRUCTIONS=Be brief.\nnot a pair");
  await save();
  expect(p.services.settings().mcpServers).toEqual([
    expect.objectContaining({ name: "web", transport: "stdio", command: process.execPath, args: [entry], env: { DEMO_INSTRUCTIONS: "Be brief." } }),
  ]);
  await waitFor(() => p.services.core.mcp.status()[0]?.state === "ready", "the new server to connect");
  expect(p.services.core.mcp.instructions()).toContain("Be brief.");
});

test("on mobile, stdio servers are shown as desktop-only", async () => {
  await importBlock(JSON.stringify({ mcpServers: { local: { command: "npx", args: ["x"], disabled: true } } }));
  Platform.isDesktopApp = false;
  tab.display();
  expect(row("local").descEl.textContent).toContain("Desktop only: local commands cannot run on mobile.");
});

// ------------------------------------------------------------------ header and env values hidden in the form

const ENV_SECRET = "Answer as env-secret-4242.";
const saveButton = () => button(rows().find((s) => s.components.some((c) => c instanceof ButtonComponent && c.buttonEl.textContent === "Save"))!, "Save");
const formText = () => {
  const values = Array.from(tab.containerEl.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>("input, textarea")).map((el) => el.value);
  return [tab.containerEl.textContent ?? "", ...values].join("\n");
};
const serverStatus = (name: string) => p.services.core.mcp.status().find((s) => s.name === name);
async function importWithSecrets(): Promise<void> {
  await importBlock(
    JSON.stringify({
      mcpServers: {
        local: { command: process.execPath, args: [entry], env: { DEMO_INSTRUCTIONS: ENV_SECRET }, useLoginShellPath: false },
        remote: { url: http.streamableUrl, headers: { Authorization: `Bearer ${TOKEN}` } },
      },
    }),
  );
  await waitFor(() => p.services.core.mcp.status().every((s) => s.state === "ready"), "both servers to connect");
}
/** Closes the plugin and loads it again from data.json and the keychain, as Obsidian's next start would. */
async function restart(): Promise<void> {
  const names = p.services.settings().mcpServers.map((s) => s.name);
  const secrets = Object.fromEntries(names.map((n) => [serverSecretId(n), p.app.secretStorage!.getSecret(serverSecretId(n)) ?? ""]));
  const data = JSON.parse(await dataJson()) as Record<string, unknown>;
  tab.hide();
  await p.close();
  p = await loadPlugin({ "A.md": "# A" }, { data, secrets });
  await p.layoutReady();
  tab = p.plugin.settingTabs[0] as unknown as KryptonSettingTab;
  tab.display();
}

test("editing a server shows its header and env values hidden; a line left hidden keeps the stored value", async () => {
  await importWithSecrets();

  await button(row("remote"), "Edit").simulateClick();
  expect(control(row("Headers"), TextAreaComponent).getValue()).toBe("Authorization: ••••••••");
  expect(formText()).not.toContain(TOKEN);
  // A line added beside the hidden one: the hidden line still stands for the stored token.
  control(row("Headers"), TextAreaComponent).simulateInput("Authorization: ••••••••\nX-Client: krypton");
  // Test in the form uses the stored value, not the dots.
  const actions = rows().find((s) => s.components.some((c) => c instanceof ButtonComponent && c.buttonEl.textContent === "Save"))!;
  await button(actions, "Test").simulateClick();
  expect(actions.descEl.querySelector(".krypton-mcp-test-result")!.textContent).toContain("Connected over");
  await saveButton().simulateClick();
  expect(p.services.settings().mcpServers.find((s) => s.name === "remote")?.headers).toEqual({ Authorization: `Bearer ${TOKEN}`, "X-Client": "krypton" });
  expect(p.app.secretStorage!.getSecret(serverSecretId("remote"))).toContain(TOKEN);

  await button(row("local"), "Edit").simulateClick();
  expect(control(row("Environment"), TextAreaComponent).getValue()).toBe("DEMO_INSTRUCTIONS=••••••••");
  expect(formText()).not.toContain("env-secret-4242");
  control(row("Environment"), TextAreaComponent).simulateInput("DEMO_INSTRUCTIONS=••••••••\nEXTRA=1");
  await saveButton().simulateClick();
  expect(p.services.settings().mcpServers.find((s) => s.name === "local")?.env).toEqual({ DEMO_INSTRUCTIONS: ENV_SECRET, EXTRA: "1" });

  // The next start connects with what the keychain kept.
  await restart();
  await waitFor(() => p.services.core.mcp.status().every((s) => s.state === "ready"), "both servers to connect after a restart");
  expect(p.services.core.mcp.instructions()).toContain(ENV_SECRET);
});

test("a retyped value replaces the stored one and is not shown again; a removed line is gone", async () => {
  await importWithSecrets();
  await button(row("remote"), "Edit").simulateClick();
  control(row("Headers"), TextAreaComponent).simulateInput("Authorization: Bearer typed-wrong-token\nX-Trace: ••••••••");
  await saveButton().simulateClick();
  // "X-Trace" was never shown with a value: the dots stand for nothing there.
  expect(tab.containerEl.textContent).toContain("Type the value of X-Trace");
  expect(formText()).not.toContain("typed-wrong-token");
  expect(control(row("Headers"), TextAreaComponent).getValue()).toBe("Authorization: ••••••••\nX-Trace: ••••••••");
  control(row("Headers"), TextAreaComponent).simulateInput("Authorization: ••••••••");
  await saveButton().simulateClick();

  expect(p.services.settings().mcpServers.find((s) => s.name === "remote")?.headers).toEqual({ Authorization: "Bearer typed-wrong-token" });
  expect(p.app.secretStorage!.getSecret(serverSecretId("remote"))).not.toContain(TOKEN);
  await waitFor(() => serverStatus("remote")?.state === "failed", "the server to refuse the wrong token");
  await button(row("remote"), "Edit").simulateClick();
  expect(formText()).not.toContain("typed-wrong-token");

  control(row("Headers"), TextAreaComponent).simulateInput(`Authorization: Bearer ${TOKEN}`);
  await saveButton().simulateClick();
  await waitFor(() => serverStatus("remote")?.state === "ready", "the server to accept the retyped token");

  await button(row("local"), "Edit").simulateClick();
  control(row("Environment"), TextAreaComponent).simulateInput("");
  await saveButton().simulateClick();
  expect(p.services.settings().mcpServers.find((s) => s.name === "local")?.env).toEqual({});
  expect(p.app.secretStorage!.getSecret(serverSecretId("local")) ?? "").not.toContain("env-secret-4242");
  await waitFor(() => serverStatus("local")?.state === "ready", "the server to reconnect without the variable");
  expect(p.services.core.mcp.instructions()).not.toContain(ENV_SECRET);
});

test("removing or renaming a server clears its values from the keychain", async () => {
  await importWithSecrets();
  await button(row("remote"), "Edit").simulateClick();
  control(row("Name"), TextComponent).simulateInput("remote-2");
  await saveButton().simulateClick();
  expect(p.services.settings().mcpServers.map((s) => s.name)).toEqual(["local", "remote-2"]);
  // The new name holds the token; the old name's entry no longer does (SecretStorage has no delete).
  expect(p.app.secretStorage!.getSecret(serverSecretId("remote-2"))).toContain(TOKEN);
  expect(p.app.secretStorage!.getSecret(serverSecretId("remote"))).toBe("");

  const trash = row("local").components.find((c) => c instanceof ExtraButtonComponent) as ExtraButtonComponent;
  trash.extraSettingsEl.click();
  await waitFor(() => p.services.settings().mcpServers.length === 1, "the server to be removed");
  expect(p.app.secretStorage!.getSecret(serverSecretId("local"))).toBe("");
  expect(p.app.secretStorage!.listSecrets().map((id) => p.app.secretStorage!.getSecret(id)).join("\n")).not.toContain("env-secret-4242");
});
