// The browser-test page: mounts the REAL chat view on the REAL Krypton core (createKrypton), with an
// in-memory vault and the Ollama test server behind the page's own origin. The test drives it with
// Playwright and reads `window.krypton` for what the view asked the host to do (open a note, ...).
import "../../support/obsidian-stub/dom";
import { setIconPainter, WorkspaceLeaf } from "../../support/obsidian-stub/workspace";
import { createKrypton } from "../../../src/core/krypton";
import { DEFAULT_SETTINGS, type KryptonSettings } from "../../../src/core/settings";
import { KryptonChatView } from "../../../src/obsidian/chat-view/chat-view";
import type { ChatViewContext } from "../../../src/obsidian/chat-view/chat-view-context";
import { paintIcon } from "./icons";
import { createMemoryHost } from "./memory-host";

const NOTES: Record<string, string> = {
  "Geo/France.md": "# France\n\nA country in western Europe.\n\n## Capital\n\nParis is the capital of France and its largest city, known for the Eiffel Tower.\n",
  "Geo/Japan.md": "# Japan\n\nAn island country in East Asia.\n\n## Capital\n\nTokyo is the capital of Japan.\n",
  "Cooking/Bread.md": "# Bread\n\nFlour, water, salt and yeast. Knead for ten minutes, rest for an hour.\n",
  "Projects/Krypton.md": "# Krypton\n\nA brain on top of my notes: sidebar chat with citations.\n",
};

export interface HarnessCalls {
  openNote: [string, number | undefined, boolean][];
  openLinkText: [string, string, boolean][];
  openUrl: string[];
  openSettings: number;
  notify: string[];
  inserted: string[];
}

async function main(): Promise<void> {
  setIconPainter(paintIcon);
  const params = new URLSearchParams(location.search);
  const host = createMemoryHost(NOTES);
  let settings: KryptonSettings = {
    ...DEFAULT_SETTINGS,
    ollamaUrl: location.origin,
    chatModel: "llama3.1:8b",
    embeddingProvider: "ollama",
    embeddingModel: "nomic-embed-text",
    requestTimeoutMs: 10_000,
    tavilyApiKey: params.get("tavily") ?? "",
  };
  const core = createKrypton(host, settings);
  await core.index.open();

  const calls: HarnessCalls = { openNote: [], openLinkText: [], openUrl: [], openSettings: 0, notify: [], inserted: [] };
  const settingsListeners = new Set<() => void>();
  const context: ChatViewContext = {
    core,
    openSettings: () => void calls.openSettings++,
    openNote: (path, line, newTab) => void calls.openNote.push([path, line, newTab]),
    openLinkText: (link, source, newTab) => void calls.openLinkText.push([link, source, newTab]),
    openUrl: (url) => void calls.openUrl.push(url),
    insertAtCursor: (text) => {
      calls.inserted.push(text);
      return true;
    },
    activeNotePath: () => "Geo/France.md",
    notify: (message) => void calls.notify.push(message),
    saveSettings: async (patch) => {
      settings = { ...settings, ...patch };
      core.applySettings(settings);
      for (const l of settingsListeners) l();
    },
    listChatModels: async () => {
      const res = await fetch(`${settings.ollamaUrl}/api/tags`);
      const body = (await res.json()) as { models: { name: string }[] };
      return body.models.map((m) => m.name).filter((n) => !n.includes("embed"));
    },
    onSettingsChange: (l) => {
      settingsListeners.add(l);
      return () => settingsListeners.delete(l);
    },
    onNoteRenamed: () => () => undefined, // no vault renames here: the plugin test (renamed-citation) has them
  };

  const leaf = new WorkspaceLeaf({});
  (document.querySelector(".mod-right-split") as HTMLElement).appendChild(leaf.containerEl);
  const view = new KryptonChatView(leaf as never, context, { mobile: params.get("mobile") === "1" });
  await leaf.open(view as never);
  Object.assign(window, { krypton: { view, core, calls, host, ready: true } });
}

main().catch((err: unknown) => {
  Object.assign(window, { kryptonError: err instanceof Error ? `${err.message}\n${err.stack ?? ""}` : String(err) });
});
