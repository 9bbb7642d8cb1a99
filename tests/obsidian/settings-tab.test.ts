/** @jest-environment ./tests/obsidian/obsidian-window-environment.cjs */
import {
  ButtonComponent,
  clearNotices,
  DropdownComponent,
  ExtraButtonComponent,
  noticeMessages,
  type Setting,
  settingsIn,
  TextAreaComponent,
  TextComponent,
  ToggleComponent,
} from "../support/obsidian-stub";
import { createServer, type AddressInfo } from "node:net";
import { startOllamaServer, type OllamaTestServer } from "../support/servers/ollama-server";
import { KryptonSettingTab } from "../../src/obsidian/settings/settings-tab";
import { loadPlugin, waitFor, type LoadedPlugin } from "./plugin-harness";

let ollama: OllamaTestServer;
let p: LoadedPlugin;
let tab: KryptonSettingTab;

beforeEach(async () => {
  clearNotices();
  ollama = await startOllamaServer({ models: ["llama3.1:8b", "qwen2.5:7b", "nomic-embed-text:latest", "mxbai-embed-large:latest"] });
  p = await loadPlugin({ "A.md": "# A\n\nAlpha." }, { data: { ollamaUrl: ollama.url, embeddingProvider: "ollama", mcpPort: 0 } });
  await p.layoutReady();
  tab = p.plugin.settingTabs[0] as unknown as KryptonSettingTab;
  tab.display();
});
afterEach(async () => {
  tab.hide();
  await p.close();
  await ollama.close();
});

const rows = () => settingsIn(tab.containerEl);
const row = (name: string): Setting => {
  const found = rows().find((s) => !s.isHeading && s.nameEl.textContent === name);
  if (!found) throw new Error(`No setting named "${name}"`);
  return found;
};
const control = <T>(s: Setting, type: new (...args: never[]) => T): T => s.components.find((c) => c instanceof type) as T;
const settle = () => new Promise((r) => setTimeout(r, 50));
test("sections use Setting headings in sentence case, with no top-level heading", () => {
  const headings = rows().filter((s) => s.isHeading).map((s) => s.nameEl.textContent);
  expect(headings).toEqual(["Models", "Web search", "Retrieval", "Memory", "Index", "Agents", "Agent mode", "MCP servers", "MCP bridge"]);
  expect(tab.containerEl.querySelector("h1, h2, h3")).toBeNull();
  for (const s of rows()) {
    const words = (s.nameEl.textContent ?? "").split(" ").slice(1);
    for (const w of words) if (!/^(MCP|URL|API|Ollama|Gemini|Tavily|(ms\))|\(ms\))$/.test(w)) expect(w).toBe(w.toLowerCase());
  }
});

test("API keys are masked fields and say where they are kept", () => {
  for (const name of ["Gemini API key", "Tavily API key"]) {
    const s = row(name);
    expect(control(s, TextComponent).inputEl.type).toBe("password");
    expect(s.descEl.textContent).toContain("secret storage");
  }
});

test("each Test connection says what it checks: Tavily has no model, Ollama no key", () => {
  expect(row("Ollama connection").descEl.textContent).toBe("Checks the address and the models you chose.");
  expect(row("Gemini connection").descEl.textContent).toBe("Checks the key and the models you chose.");
  expect(row("Tavily connection").descEl.textContent).toBe("Checks the key.");
});

test("model dropdowns list what Ollama has installed", async () => {
  await waitFor(() => control(row("Chat model"), DropdownComponent).options().length > 1);
  expect(control(row("Chat model"), DropdownComponent).options()).toEqual(["llama3.1:8b", "qwen2.5:7b"]);
  await waitFor(() => control(row("Embedding model"), DropdownComponent).options().length > 1);
  expect(control(row("Embedding model"), DropdownComponent).options()).toEqual(
    expect.arrayContaining(["nomic-embed-text", "mxbai-embed-large:latest"]),
  );
});

test("Test connection shows the exact failure: a model that is not pulled, then an unreachable server", async () => {
  await p.services.saveSettings({ chatModel: "mistral:7b" });
  const test = row("Ollama connection");
  await control(test, ButtonComponent).simulateClick();
  expect(test.descEl.querySelector(".krypton-connection-result")!.textContent).toContain("ollama pull mistral:7b");

  await p.services.saveSettings({ chatModel: "llama3.1:8b" });
  await control(test, ButtonComponent).simulateClick();
  const ok = test.descEl.querySelector(".krypton-connection-result")!;
  expect(ok.classList.contains("mod-success")).toBe(true);

  await ollama.close();
  await control(test, ButtonComponent).simulateClick();
  expect(ok.classList.contains("mod-warning")).toBe(true);
  expect(ok.textContent).toMatch(/reach|unreachable|connect/i);
});

test("changing the embedding model warns that notes are embedded again, and re-syncs the index", async () => {
  await waitFor(() => control(row("Embedding model"), DropdownComponent).options().length > 1);
  await control(row("Embedding model"), DropdownComponent).simulateInput("mxbai-embed-large:latest");
  expect(p.services.settings().embeddingModel).toBe("mxbai-embed-large:latest");
  expect(noticeMessages().some((m) => m.includes("embedded again"))).toBe(true);
  expect(row("Embedding model").descEl.textContent).toContain("embeds every note again");
  await p.settle();
  expect(p.services.core.index.status().embedder).toContain("mxbai-embed-large");
});

test("with Ollama down, a model name typed by hand is never saved empty", async () => {
  await ollama.close();
  tab.display(); // the lists are asked for again, and fail
  for (const name of ["Chat model", "Embedding model"]) {
    await waitFor(() => control(row(name), TextComponent) !== undefined);
    const field = control(row(name), TextComponent);
    field.setValue("");
    field.inputEl.dispatchEvent(new Event("change"));
    await settle();
    expect(row(name).descEl.textContent).toContain("A model name is needed");
  }
  expect(p.services.settings()).toMatchObject({ chatModel: "llama3.1:8b", embeddingModel: "nomic-embed-text" });
  expect(noticeMessages().filter((m) => m.includes("embedded again"))).toEqual([]);

  const chat = control(row("Chat model"), TextComponent);
  chat.setValue("qwen2.5:7b");
  chat.inputEl.dispatchEvent(new Event("change"));
  await waitFor(() => p.services.settings().chatModel === "qwen2.5:7b");
  expect(row("Chat model").descEl.textContent).not.toContain("A model name is needed");
});

test("a folder Krypton writes into is refused in the tab when no note could be written there", async () => {
  const commit = async (name: string, value: string) => {
    const field = control(row(name), TextComponent);
    field.setValue(value);
    field.inputEl.dispatchEvent(new Event("change"));
    await settle();
  };
  for (const name of ["Folder for new notes", "Folder for flashcard decks", "Folder for study goals"]) {
    const before = p.services.settings();
    for (const bad of ["../Outside", ".obsidian/plugins", ".krypton/chat"]) {
      await commit(name, bad);
      expect(p.services.settings()).toEqual(before);
      expect(row(name).descEl.textContent).toMatch(/Not saved: .+ stays in use\.$/);
      expect(row(name).descEl.classList.contains("mod-warning")).toBe(true);
    }
  }
  await commit("Folder for new notes", "Notes/AI");
  expect(p.services.settings().newNoteFolder).toBe("Notes/AI");
  expect(row("Folder for new notes").descEl.classList.contains("mod-warning")).toBe(false);
  // What the tab saved is where the next note goes.
  ollama.script({ route: "chat", reply: "# Tides\n\nThe moon pulls the sea." });
  expect((await p.services.core.operations.createNote("tides")).path).toBe("Notes/AI/tides.md");
});

test("the reranker model, typed by hand, is never saved empty", async () => {
  await p.services.saveSettings({ rerank: "reranker-model", rerankerModel: "bge-reranker" });
  tab.display();
  const field = control(row("Reranker model"), TextComponent);
  field.setValue("");
  field.inputEl.dispatchEvent(new Event("change"));
  await settle();
  expect(row("Reranker model").descEl.textContent).toContain("A model name is needed; bge-reranker stays in use.");
  expect(p.services.settings().rerankerModel).toBe("bge-reranker");

  field.setValue("qwen2.5:0.5b");
  field.inputEl.dispatchEvent(new Event("change"));
  await waitFor(() => p.services.settings().rerankerModel === "qwen2.5:0.5b");
  expect(row("Reranker model").descEl.textContent).not.toContain("A model name is needed");
});

test("number fields save valid values only and say what is wrong", async () => {
  const maxK = control(row("Excerpts retrieved"), TextComponent);
  await maxK.simulateInput("25");
  expect(p.services.settings().maxK).toBe(25);
  await maxK.simulateInput("-3");
  expect(p.services.settings().maxK).toBe(25);
  expect(row("Excerpts retrieved").descEl.textContent).toContain("from 1 to 100");
  const data = JSON.parse(await p.temp.read(".obsidian/plugins/krypton/data.json"));
  expect(data.maxK).toBe(25);
});

test("the Ollama URL is saved only as an http(s) address; anything else says what to type and keeps the working one", async () => {
  const field = control(row("Ollama URL"), TextComponent);
  const commit = async (value: string) => {
    field.inputEl.value = value;
    field.inputEl.dispatchEvent(new Event("change"));
    await settle();
  };
  for (const bad of ["", "localhost:11434", "not a url", "http://127.0.0.1:99999", "ftp://127.0.0.1:11434"]) {
    await commit(bad);
    expect({ bad, saved: p.services.settings().ollamaUrl }).toEqual({ bad, saved: ollama.url });
    expect(row("Ollama URL").descEl.textContent).toContain("Enter an address that starts with http:// or https://");
    expect(row("Ollama URL").descEl.classList.contains("mod-warning")).toBe(true);
  }
  expect(JSON.parse(await p.temp.read(".obsidian/plugins/krypton/data.json")).ollamaUrl).toBe(ollama.url);
  // The index still reaches the server at the address that works.
  await control(row("Ollama connection"), ButtonComponent).simulateClick();
  expect(row("Ollama connection").descEl.querySelector(".krypton-connection-result")!.classList.contains("mod-success")).toBe(true);

  await commit("http://127.0.0.1:11434");
  expect(p.services.settings().ollamaUrl).toBe("http://127.0.0.1:11434");
  expect(row("Ollama URL").descEl.textContent).toBe("Where Ollama listens.");
  expect(row("Ollama URL").descEl.classList.contains("mod-warning")).toBe(false);
});

test("the meaning-against-keywords weight is a setting from 0 to 1 that search uses", async () => {
  const weight = control(row("Meaning against keywords"), TextComponent);
  await weight.simulateInput("0.4");
  expect(p.services.settings().semanticWeight).toBe(0.4);
  await weight.simulateInput("1.5");
  expect(p.services.settings().semanticWeight).toBe(0.4);
  const data = JSON.parse(await p.temp.read(".obsidian/plugins/krypton/data.json"));
  expect(data.semanticWeight).toBe(0.4);
});

test("exclude patterns that leave no note to index are saved but said, naming the patterns; the index status says it too", async () => {
  const field = control(row("Excluded folders and patterns"), TextAreaComponent);
  field.setValue("Unused/\n**");
  field.inputEl.dispatchEvent(new Event("change"));
  await waitFor(() => row("Excluded folders and patterns").descEl.textContent!.includes("no note"));
  expect(row("Excluded folders and patterns").descEl.textContent).toContain('The exclude patterns leave no note to index: every note matches "**".');
  expect(p.services.settings().excludePatterns).toEqual(["Unused/", "**"]);
  // The index syncs with the new patterns and its status names the pattern that took the notes.
  await waitFor(() => p.services.core.index.status().everyNoteExcludedBy !== undefined);
  expect(p.services.core.index.status()).toMatchObject({ notes: 0, everyNoteExcludedBy: ["**"] });

  field.setValue("Unused/");
  field.inputEl.dispatchEvent(new Event("change"));
  await waitFor(() => !row("Excluded folders and patterns").descEl.textContent!.includes("no note"));
  await waitFor(() => p.services.core.index.status().notes === 1);
  expect(p.services.core.index.status().everyNoteExcludedBy).toBeUndefined();
});

test("text fields commit when the user leaves them, not on every keystroke", async () => {
  const folder = control(row("Folder for new notes"), TextComponent);
  folder.inputEl.value = "Inbox/AI";
  await folder.simulateInput("Inbox/AI");
  expect(p.services.settings().newNoteFolder).toBe("Krypton");
  folder.inputEl.dispatchEvent(new Event("change"));
  await settle();
  expect(p.services.settings().newNoteFolder).toBe("Inbox/AI");
});

test("the MCP section: enabling shows status, token, copy/regenerate and ready-to-copy client set-ups", async () => {
  expect(rows().some((s) => s.nameEl.textContent === "Claude Desktop")).toBe(false);
  await control(row("Enable the bridge"), ToggleComponent).simulateInput(true);
  const token = p.services.settings().mcpToken;
  expect(token.length).toBeGreaterThanOrEqual(22);
  const state = p.services.bridge.current();
  if (state.kind !== "running") throw new Error(p.services.bridge.statusLine());
  expect(row("Bridge status").descEl.textContent).toBe(`Running at ${state.url}`);
  expect(row("Index status").descEl.textContent).toBe("Krypton: 1 note indexed");
  const pre = Array.from(tab.containerEl.querySelectorAll("pre.krypton-code")).map((e) => e.textContent ?? "");
  const claude = JSON.parse(pre[0]);
  expect(claude.mcpServers.krypton.args).toContain("mcp-remote");
  expect(claude.mcpServers.krypton.env.KRYPTON_AUTH).toBe(`Bearer ${token}`);
  expect(pre[1]).toContain(`--cli ${state.url} --transport http --header "Authorization: Bearer ${token}" --method tools/list`);

  await control(row("Token"), ButtonComponent).simulateClick(); // Regenerate
  expect(p.services.settings().mcpToken).not.toBe(token);
  expect(tab.containerEl.textContent).not.toContain(token);
});

test("the bridge's port is saved when the user leaves the field, so a half-typed port never restarts the bridge on it", async () => {
  await control(row("Enable the bridge"), ToggleComponent).simulateInput(true);
  const before = p.services.bridge.current();
  if (before.kind !== "running") throw new Error(p.services.bridge.statusLine());
  const free = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
  const field = control(row("Port"), TextComponent);
  const typed = String(free);
  for (let i = 1; i <= typed.length; i++) await field.simulateInput(typed.slice(0, i)); // one keystroke each
  expect(p.services.settings().mcpPort).toBe(0);
  expect(p.services.bridge.current()).toEqual(before);

  field.inputEl.dispatchEvent(new Event("change"));
  await waitFor(() => p.services.bridge.statusLine() === `Running at http://127.0.0.1:${free}/mcp`);
  expect(p.services.settings().mcpPort).toBe(free);
});

test("agent mode: limits, presets added, edited (provider/model checked), chosen and removed", async () => {
  expect(control(row("Agent mode in the chat"), ToggleComponent)).toBeDefined();
  const add = rows().find((s) => s.components.some((c) => c instanceof ButtonComponent && c.buttonEl.textContent === "Add preset"))!;
  control(add, ButtonComponent).buttonEl.click();
  await waitFor(() => p.services.settings().agentPresets.length === 1);
  await waitFor(() => rows().some((r) => r.nameEl.textContent === "Preset: Preset 1"));
  expect(p.services.settings().agentPresets[0]).toEqual({ name: "Preset 1", persona: "", model: "", tools: [] });

  const modelRow = row("Model");
  const modelInput = control(modelRow, TextComponent);
  modelInput.setValue("openai/gpt-4");
  modelInput.inputEl.dispatchEvent(new Event("change"));
  await settle();
  expect(modelRow.descEl.textContent).toMatch(/Unknown provider "openai"/);
  expect(p.services.settings().agentPresets[0].model).toBe("");
  modelInput.setValue("ollama/hf.co/user/model:Q4");
  modelInput.inputEl.dispatchEvent(new Event("change"));
  await waitFor(() => p.services.settings().agentPresets[0].model === "ollama/hf.co/user/model:Q4");

  const tools = control(row("Allowed tools"), TextComponent);
  tools.setValue("search_notes, read_note,");
  tools.inputEl.dispatchEvent(new Event("change"));
  await waitFor(() => p.services.settings().agentPresets[0].tools.length === 2);
  expect(p.services.settings().agentPresets[0].tools).toEqual(["search_notes", "read_note"]);

  const choose = control(row("Preset in use"), DropdownComponent);
  choose.selectEl.value = "Preset 1";
  choose.selectEl.dispatchEvent(new Event("change"));
  // Settings reach the core after they are written: wait for that, not a fixed time.
  await waitFor(() => p.services.core.settings().agentPreset === "Preset 1");
  expect(p.services.core.agent.describeConfig()).toMatch(/Preset: Preset 1\nModel: ollama:hf.co\/user\/model:Q4/);

  control(row("Preset: Preset 1"), ExtraButtonComponent).extraSettingsEl.click();
  await waitFor(() => p.services.settings().agentPresets.length === 0);
  expect(p.services.settings().agentPreset).toBe("");
});

test("a preset added in the tab while a reload from disk is read keeps the preset the reload brought", async () => {
  const DATA = ".obsidian/plugins/krypton/data.json";
  const plugin = p.plugin as unknown as { loadData(): Promise<unknown>; externalSettingsChanged(): Promise<void> };
  const load = plugin.loadData.bind(plugin);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let readStarted!: () => void;
  const reading = new Promise<void>((resolve) => (readStarted = resolve));
  // The disk answers the reload's read late: the button is clicked in between.
  plugin.loadData = async () => {
    const data = await load();
    readStarted();
    await held;
    return data;
  };
  const fromPhone = { name: "From phone", persona: "", model: "", tools: [] };
  await p.temp.write(DATA, JSON.stringify({ ...JSON.parse(await p.temp.read(DATA)), agentPresets: [fromPhone] }));
  const reloaded = plugin.externalSettingsChanged();
  await reading;
  const add = rows().find((s) => s.components.some((c) => c instanceof ButtonComponent && c.buttonEl.textContent === "Add preset"))!;
  control(add, ButtonComponent).buttonEl.click();
  release();
  await reloaded;
  await waitFor(() => p.services.settings().agentPresets.length === 2);
  expect(p.services.settings().agentPresets.map((preset) => preset.name)).toEqual(["From phone", "Preset 2"]);
  await p.services.saveSettings({}); // queued after the click's change: its write has landed
  expect(JSON.parse(await p.temp.read(DATA)).agentPresets.map((preset: { name: string }) => preset.name)).toEqual(["From phone", "Preset 2"]);
});

test("an open tab shows settings changed on disk from outside Obsidian; a closed one is not redrawn", async () => {
  const DATA = ".obsidian/plugins/krypton/data.json";
  const external = () => (p.plugin as unknown as { externalSettingsChanged(): Promise<void> }).externalSettingsChanged();
  expect(control(row("Folder for new notes"), TextComponent).getValue()).toBe("Krypton");
  await p.temp.write(DATA, JSON.stringify({ ...JSON.parse(await p.temp.read(DATA)), newNoteFolder: "Inbox" }));
  await external();
  expect(control(row("Folder for new notes"), TextComponent).getValue()).toBe("Inbox");

  tab.hide();
  await p.temp.write(DATA, JSON.stringify({ ...JSON.parse(await p.temp.read(DATA)), newNoteFolder: "Elsewhere" }));
  await external();
  expect(p.services.settings().newNoteFolder).toBe("Elsewhere");
  expect(rows()).toEqual([]);
});
