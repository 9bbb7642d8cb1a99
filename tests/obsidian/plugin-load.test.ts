/** @jest-environment ./tests/obsidian/obsidian-window-environment.cjs */
import { clearNotices, noticeMessages, StubFileLeaf } from "../support/obsidian-stub";
import { SearchModal } from "../../src/obsidian/search/search-modal";
import { loadPlugin, type LoadedPlugin } from "./plugin-harness";
import { promises as fs } from "node:fs";
import { join } from "node:path";

const NOTES = {
  "Welcome.md": "# Welcome\n\nThis vault is about gardening and bees.",
  "Garden/Tomatoes.md": "---\ntags: [garden]\n---\n# Tomatoes\n\nIntro line.\n\n## Watering\n\nTomatoes need deep watering twice a week in July.\n",
  "Garden/Bees.md": "# Bees\n\nBees pollinate the tomatoes and the beans.",
};

let p: LoadedPlugin;
beforeEach(() => clearNotices());
afterEach(async () => {
  await p?.close();
});

test("the plugin loads without touching the vault until the layout is ready, then indexes it", async () => {
  p = await loadPlugin(NOTES);
  expect(p.services.core.index.status().state).toBe("empty");
  const statusBar = p.plugin.statusBarItems[0];
  expect(statusBar.textContent).toBe("Krypton: index not built");

  await p.layoutReady();
  const status = p.services.core.index.status();
  expect(status).toMatchObject({ state: "ready", notes: 3, keywordOnly: true });
  expect(statusBar.textContent).toBe("Krypton: 3 notes indexed (keyword only)");
  expect(statusBar.getAttribute("aria-label")).toContain("Keyword-only search");
  expect(await fs.stat(join(p.temp.root, ".krypton", "index", "manifest.json"))).toBeTruthy();
});

test("vault events reach the index: create, modify, rename and delete", async () => {
  p = await loadPlugin(NOTES);
  await p.layoutReady();
  const search = async (q: string) => (await p.services.core.index.searchNotes(q)).map((h) => h.path);

  const file = await p.app.vault.create("Zebra.md", "# Zebra\n\nStriped zebras graze.");
  await p.settle();
  expect(await search("zebras")).toEqual(["Zebra.md"]);

  await p.app.vault.modify(file, "# Zebra\n\nOkapis are relatives.");
  await p.settle();
  expect(await search("okapis")).toEqual(["Zebra.md"]);

  await p.app.vault.createFolder("Animals");
  await p.app.vault.rename(file, "Animals/Zebra.md");
  await p.settle();
  expect(await search("okapis")).toEqual(["Animals/Zebra.md"]);

  await p.app.vault.delete(file);
  await p.settle();
  expect(await search("okapis")).toEqual([]);
  expect(p.services.core.index.status().notes).toBe(3);
});

test("the search modal shows title, folder, snippet and score, and Enter opens the note at the matched line", async () => {
  p = await loadPlugin(NOTES);
  await p.layoutReady();
  const ribbon = p.plugin.ribbonIcons.find((r) => r.title === "Search vault");
  expect(ribbon).toBeDefined();

  const modal = new SearchModal(p.app as never, p.services, { debounceMs: 1 });
  modal.open();
  const input = modal.contentEl.querySelector("input")!;
  input.value = "deep watering";
  input.dispatchEvent(new Event("input"));
  await modal.settled();

  const first = modal.contentEl.querySelector(".krypton-search-result")!;
  expect(first.querySelector(".krypton-search-result-title")!.textContent).toBe("Tomatoes");
  expect(first.querySelector(".krypton-search-result-folder")!.textContent).toBe("Garden");
  expect(first.querySelector(".krypton-search-result-snippet")!.textContent).toMatch(/watering/i);
  expect(Number(first.querySelector(".krypton-search-result-score")!.textContent!.replace("Score ", ""))).toBeGreaterThan(0);
  const hit = modal.results()[0];

  input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter" }));
  await new Promise((r) => setTimeout(r, 0));
  const leaf = p.app.workspace.activeLeaf as StubFileLeaf;
  expect(leaf.openedFile?.path).toBe("Garden/Tomatoes.md");
  expect(leaf.openState?.eState).toEqual({ line: hit.startLine - 1 });
  expect(hit.startLine).toBeGreaterThan(5); // the "Watering" section, not the top of the note
  expect((modal as unknown as { isOpen: boolean }).isOpen).toBe(false);
});

test("the search modal says when nothing matches and when the index is still empty", async () => {
  p = await loadPlugin(NOTES);
  const early = new SearchModal(p.app as never, p.services, { debounceMs: 1 });
  early.open();
  await early.search("bees");
  expect(early.contentEl.querySelector(".krypton-search-state")!.textContent).toMatch(/No notes are indexed yet/);
  early.close();

  await p.layoutReady();
  const modal = new SearchModal(p.app as never, p.services, { debounceMs: 1 });
  modal.open();
  await modal.search("xylophone");
  expect(modal.contentEl.querySelector(".krypton-search-state")!.textContent).toBe('No notes match "xylophone".');
  expect(modal.contentEl.querySelectorAll(".krypton-search-result")).toHaveLength(0);
});

test("a corrupt index is rebuilt with a notice, and notes that fail are named in one", async () => {
  p = await loadPlugin(NOTES, { extraFiles: { ".krypton/index/manifest.json": "{ not json" } });
  await p.layoutReady();
  expect(p.services.core.index.status().notes).toBe(3);
  expect(noticeMessages().some((m) => m.startsWith("Krypton rebuilt its index:"))).toBe(true);

  // A note that vanishes from disk behind Obsidian's back cannot be read on the next scan.
  await fs.rm(join(p.temp.root, "Garden", "Bees.md"));
  clearNotices();
  await p.services.rebuildIndex();
  const failure = noticeMessages().find((m) => m.startsWith("Krypton could not index"));
  expect(failure).toContain("Garden/Bees.md");
});

test("commands have sentence-case names and no default hotkeys", async () => {
  p = await loadPlugin(NOTES);
  const commands = Object.values(p.app.commands.commands);
  const names = commands.map((c) => c.name).sort();
  expect(names).toEqual(
    expect.arrayContaining([
      "Search vault",
      "Rebuild index",
      "Show index status",
      "Create note with AI…",
      "Summarize current note",
      "Summarize selection",
      "Generate flashcards from current note",
      "Generate flashcards from selection",
      "Study goals dashboard",
      "Start/stop MCP bridge",
    ]),
  );
  for (const c of commands) {
    expect(c.hotkeys ?? []).toEqual([]);
    expect(c.id.startsWith("krypton:")).toBe(true);
    // Sentence case: only the first word capitalised, except acronyms (AI, MCP) and another plugin's own name.
    const rest = c.name.split(" ").slice(1).filter((w) => !/^(AI…?|MCP|Obsidian_to_Anki)$/.test(w));
    for (const word of rest) expect(word).toBe(word.toLowerCase());
  }
});

test("unloading cleans up: vault listeners, status bar, commands, and the index lock is released", async () => {
  p = await loadPlugin(NOTES);
  await p.layoutReady();
  expect(p.app.vault.listenerCount("modify")).toBeGreaterThan(0);
  const lockPath = join(p.temp.root, ".krypton", "index", "write.lock");
  expect(await fs.readFile(lockPath, "utf8")).toBeTruthy(); // held while the plugin runs
  (p.plugin as unknown as { unload(): void }).unload();
  await p.services.close();
  expect(p.app.vault.listenerCount("modify")).toBe(0);
  expect(Object.keys(p.app.commands.commands)).toEqual([]);
  await expect(fs.stat(lockPath)).rejects.toMatchObject({ code: "ENOENT" });
  expect(p.plugin.statusBarItems[0].isConnected).toBe(false);
});
