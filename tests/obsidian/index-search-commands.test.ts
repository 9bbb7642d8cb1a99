/** @jest-environment ./tests/obsidian/obsidian-window-environment.cjs */
/**
 * The ribbon icon and the commands "Search vault", "Rebuild index" and "Show index status", driven the way
 * a user drives them (ribbon click, command palette) against the plugin's real index; and the promise
 * that Obsidian and the CLI build the same index from the same vault.
 */
import { promises as fs } from "node:fs";
import { join, relative, sep } from "node:path";
import { clearNotices, noticeMessages, type StubFileLeaf } from "../support/obsidian-stub";
import { makeTempVault } from "../support/temp-vault";
import { VaultIndex } from "../../src/core/indexing/vault-index";
import { readManifest } from "../../src/core/indexing/index-persistence";
import { silentLogger } from "../../src/core/ports/logger";
import { DEFAULT_SETTINGS } from "../../src/core/settings";
import { createNodeHost } from "../../src/node/node-host";
import { runCli } from "../cli/cli-harness";
import { loadPlugin, type LoadedPlugin } from "./plugin-harness";
import { SearchModal } from "../../src/obsidian/search/search-modal";
import { startOllamaServer } from "../support/servers/ollama-server";

const NOTES = {
  "Welcome.md": "# Welcome\n\nThis vault is about gardening and bees.",
  "Garden/Tomatoes.md": "---\ntags: [garden]\n---\n# Tomatoes\n\nIntro line.\n\n## Watering\n\nTomatoes need deep watering twice a week in July.\n",
  "Garden/Bees.md": "# Bees\n\nBees pollinate the tomatoes and the beans.",
};

let p: LoadedPlugin | undefined;
beforeEach(() => clearNotices());
afterEach(async () => {
  await p?.close();
  p = undefined;
});

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const openModal = (cls: string) => document.body.querySelector<HTMLElement>(`.modal-container .${cls}`);

test("the ribbon icon opens the search dialog; typing searches the real index; Enter opens the best note at its lines", async () => {
  p = await loadPlugin(NOTES);
  await p.layoutReady();
  const ribbon = p.plugin.ribbonIcons.find((r) => r.title === "Search vault")!;
  ribbon.callback(new MouseEvent("click"));
  const modal = openModal("krypton-search-modal")!;
  expect(modal).not.toBeNull();
  const input = modal.querySelector<HTMLInputElement>("input")!;
  input.value = "pollinate";
  input.dispatchEvent(new Event("input"));
  await until(() => modal.querySelectorAll(".krypton-search-result").length > 0, "results");
  expect(modal.querySelector(".krypton-search-result-title")!.textContent).toBe("Bees");

  input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter" }));
  await until(() => (p!.app.workspace.activeLeaf as StubFileLeaf | null)?.openedFile != null, "the note to open");
  expect((p.app.workspace.activeLeaf as StubFileLeaf).openedFile?.path).toBe("Garden/Bees.md");
  expect(openModal("krypton-search-modal")).toBeNull();
});

test("screen readers hear which result is chosen: the box names it, it says so, and the arrows move both", async () => {
  p = await loadPlugin(NOTES);
  await p.layoutReady();
  p.app.commands.executeCommandById("krypton:search-vault");
  const modal = openModal("krypton-search-modal")!;
  const input = modal.querySelector<HTMLInputElement>("input")!;
  input.value = "bees";
  input.dispatchEvent(new Event("input"));
  await until(() => modal.querySelectorAll(".krypton-search-result").length > 1, "results");
  const options = () => Array.from(modal.querySelectorAll<HTMLElement>("[role=listbox] [role=option]"));
  const chosen = () => document.getElementById(input.getAttribute("aria-activedescendant") ?? "");
  expect(input.getAttribute("role")).toBe("combobox");
  expect(document.getElementById(input.getAttribute("aria-controls")!)!.getAttribute("role")).toBe("listbox");
  expect(chosen()).toBe(options()[0]);
  expect(options().map((o) => o.getAttribute("aria-selected"))).toEqual(["true", ...options().slice(1).map(() => "false")]);
  // An option is named by its text; an aria-label on a plain span would replace the score's number (Chromium reads "Score" alone).
  for (const o of options()) {
    expect(o.querySelector(".krypton-search-result-score")!.textContent).toMatch(/^Score \d\.\d\d$/);
    expect(o.querySelector(".krypton-visually-hidden")!.textContent).toBe("Score ");
    expect(o.querySelectorAll("[aria-label]:not([role])")).toHaveLength(0);
  }
  input.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowDown" }));
  expect(chosen()).toBe(options()[1]);
  expect(options()[1].getAttribute("aria-selected")).toBe("true");
  input.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowUp" }));
  expect(chosen()).toBe(options()[0]);

  input.value = "zebra";
  input.dispatchEvent(new Event("input"));
  await until(() => modal.querySelectorAll(".krypton-search-result").length === 0, "no results");
  expect(input.hasAttribute("aria-activedescendant")).toBe(false); // no pointer to a result that is gone
  expect(modal.querySelector("[role=status]")!.textContent).toBe('No notes match "zebra".');
  modal.closest(".modal-container")!.remove();
});

test("Enter while a newer query is still being searched opens that query's best note, not the previous one's", async () => {
  p = await loadPlugin(NOTES);
  await p.layoutReady();
  const modal = new SearchModal(p.app as never, p.services);
  modal.open();
  await modal.search("pollinate");
  expect(modal.results().map((h) => h.path)).toEqual(["Garden/Bees.md"]);
  const input = modal.contentEl.querySelector<HTMLInputElement>("input")!;
  void modal.search("watering"); // the debounce has fired; its results are not shown yet
  input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter" }));
  await until(() => (p!.app.workspace.activeLeaf as StubFileLeaf | null)?.openedFile != null, "a note to open");
  expect((p.app.workspace.activeLeaf as StubFileLeaf).openedFile?.path).toBe("Garden/Tomatoes.md");
});

test('the command "Search vault" opens the same dialog', async () => {
  p = await loadPlugin(NOTES);
  await p.layoutReady();
  expect(p.app.commands.executeCommandById("krypton:search-vault")).toBe(true);
  const modal = openModal("krypton-search-modal")!;
  expect(modal.querySelector(".krypton-search-state")!.textContent).toBe("Keyword search only (no embedding model available).");
  modal.closest(".modal-container")!.remove();
});

test("the search dialog follows the index: opened before indexing ends, it shows the notes once they are indexed", async () => {
  p = await loadPlugin(NOTES);
  // Obsidian is still restoring the workspace: the index has not started.
  p.app.commands.executeCommandById("krypton:search-vault");
  const modal = openModal("krypton-search-modal")!;
  const state = modal.querySelector(".krypton-search-state")!;
  const input = modal.querySelector<HTMLInputElement>("input")!;
  input.value = "pollinate";
  input.dispatchEvent(new Event("input"));
  await until(() => state.textContent!.startsWith("No notes are indexed yet"), "the first answer");

  await p.layoutReady();
  await until(() => modal.querySelectorAll(".krypton-search-result").length > 0, "the results from the finished index");
  expect(modal.querySelector(".krypton-search-result-title")!.textContent).toBe("Bees");
  expect(state.textContent).toBe("Keyword search only (no embedding model available).");
  modal.closest(".modal-container")!.remove();
});

test("a long query that matches nothing is named on one short line, not echoed whole", async () => {
  p = await loadPlugin(NOTES);
  await p.layoutReady();
  p.app.commands.executeCommandById("krypton:search-vault");
  const modal = openModal("krypton-search-modal")!;
  const input = modal.querySelector<HTMLInputElement>("input")!;
  input.value = `zebra ${"quagga ".repeat(2000)}`;
  input.dispatchEvent(new Event("input"));
  const state = modal.querySelector(".krypton-search-state")!;
  await until(() => state.textContent!.startsWith("No notes match"), "the answer");
  expect(state.textContent).toMatch(/^No notes match "zebra quagga quagga .*…"\.$/);
  expect(state.textContent!.length).toBeLessThan(120);
  modal.closest(".modal-container")!.remove();
});

test("a query of only common words or punctuation says that search ignores them, not only that nothing matches", async () => {
  p = await loadPlugin(NOTES);
  await p.layoutReady();
  p.app.commands.executeCommandById("krypton:search-vault");
  const modal = openModal("krypton-search-modal")!;
  const input = modal.querySelector<HTMLInputElement>("input")!;
  const state = modal.querySelector("[role=status]")!;
  input.value = "the and of";
  input.dispatchEvent(new Event("input"));
  await until(() => state.textContent!.includes("common words"), "the answer");
  expect(state.textContent).toBe('"the and of" has only common words, which search ignores; add a word that names the topic.');
  input.value = "?!...";
  input.dispatchEvent(new Event("input"));
  await until(() => state.textContent!.includes("no words"), "the answer");
  expect(state.textContent).toBe('"?!..." has no words to search for; type a word that names the topic.');
  modal.closest(".modal-container")!.remove();
});

test("the search dialog says when a query's meaning could not be used, in the chat's words", async () => {
  const ollama = await startOllamaServer({ embeddingDim: 16 });
  try {
    p = await loadPlugin(NOTES, { data: { ollamaUrl: ollama.url, embeddingProvider: "ollama", embeddingModel: "nomic-embed-text" } });
    await p.layoutReady();
    expect(p.services.core.index.status()).toMatchObject({ keywordOnly: false, embedded: p.services.core.index.status().chunks });
    const search = async (query: string) => {
      p!.app.commands.executeCommandById("krypton:search-vault");
      const modal = openModal("krypton-search-modal")!;
      const input = modal.querySelector<HTMLInputElement>("input")!;
      input.value = query;
      input.dispatchEvent(new Event("input"));
      await until(() => modal.querySelectorAll(".krypton-search-result").length > 0, "results");
      const state = modal.querySelector(".krypton-search-state")!.textContent;
      modal.closest(".modal-container")!.remove();
      return state;
    };
    expect(await search("pollinate")).toBe("");
    ollama.script({ route: "embed", status: 500, times: Infinity });
    expect(await search("watering")).toMatch(/^Semantic search failed \(the embedding server failed .*\): notes were matched by keywords only\.$/);
  } finally {
    await p?.close();
    p = undefined;
    await ollama.close();
  }
});

test('"Rebuild index" rebuilds from the vault: a deleted shard comes back and a fresh load finds nothing damaged', async () => {
  p = await loadPlugin(NOTES);
  await p.layoutReady();
  const indexDir = join(p.temp.root, ".krypton", "index");
  const before = await readManifest(p.services.host.data);
  expect(before).not.toBeNull();
  // Damage the index behind the plugin's back.
  for (const f of await fs.readdir(indexDir)) if (f.startsWith("shard-")) await fs.rm(join(indexDir, f));

  const states: string[] = [];
  const stop = p.services.core.index.onStatus((s) => states.push(s.state));
  expect(p.app.commands.executeCommandById("krypton:rebuild-index")).toBe(true);
  expect(noticeMessages()).toContain("Krypton: rebuilding the index…");
  await p.settle();
  stop();
  expect(states).toContain("indexing");
  expect(p.services.core.index.status()).toMatchObject({ state: "ready", notes: 3 });
  const after = await readManifest(p.services.host.data);
  expect(after!.generation).toBeGreaterThan(before!.generation);
  for (const shard of after!.shards) await expect(fs.stat(join(indexDir, shard.file))).resolves.toBeTruthy();
  expect((await p.services.core.index.searchNotes("pollinate")).map((h) => h.path)).toEqual(["Garden/Bees.md"]);
  // Another process loading the rebuilt index (read-only: the plugin holds the lock) finds it whole.
  const settings = { ...DEFAULT_SETTINGS, embeddingProvider: "none" as const };
  const reader = new VaultIndex({ host: createNodeHost(p.temp.root, { logger: silentLogger }), settings: () => settings, embedder: () => null });
  try {
    const loaded = await reader.open();
    expect(loaded).toMatchObject({ notes: 3, readOnly: true });
    expect(loaded.rebuiltReason).toBeUndefined();
  } finally {
    await reader.close();
  }
});

test('"Rebuild index" pressed again while a rebuild waits or runs joins it instead of rebuilding twice', async () => {
  p = await loadPlugin(NOTES);
  await p.layoutReady();
  let rebuilds = 0;
  let last = p.services.core.index.status().state;
  const stop = p.services.core.index.onStatus((s) => {
    if (s.state === "indexing" && last !== "indexing") rebuilds++;
    last = s.state;
  });
  p.app.commands.executeCommandById("krypton:rebuild-index");
  p.app.commands.executeCommandById("krypton:rebuild-index"); // impatient second press
  await p.settle();
  stop();
  expect(rebuilds).toBe(1);
  expect(p.services.core.index.status()).toMatchObject({ state: "ready", notes: 3 });
});

test('"Show index status" shows the real counts and its button rebuilds the index', async () => {
  p = await loadPlugin(NOTES);
  await p.layoutReady();
  expect(p.app.commands.executeCommandById("krypton:show-index-status")).toBe(true);
  const modal = openModal("krypton-index-status")!;
  const rows = Object.fromEntries(
    Array.from(modal.querySelectorAll("tr")).map((tr) => [tr.querySelector("th")!.textContent, tr.querySelector("td")!.textContent]),
  );
  const status = p.services.core.index.status();
  expect(rows).toMatchObject({ State: "Ready (keyword only)", Notes: "3", Chunks: String(status.chunks) });

  const generation = (await readManifest(p.services.host.data))!.generation;
  const button = Array.from(modal.querySelectorAll("button")).find((b) => b.textContent === "Rebuild index")!;
  button.click();
  await p.settle();
  expect((await readManifest(p.services.host.data))!.generation).toBeGreaterThan(generation);
  // The dialog follows the index: after the rebuild it shows the state again.
  await until(() => modal.querySelector("td")?.textContent === "Ready (keyword only)", "the dialog to refresh");
  modal.closest(".modal-container")!.remove();
});

test('"Show index status" says how many of the notes it could not index are left off its list', async () => {
  const binaries = Object.fromEntries(Array.from({ length: 103 }, (_, i) => [`Bin/b${i}.md`, "\u0000\u0001binary\u0000"]));
  p = await loadPlugin(NOTES, { extraFiles: binaries });
  await p.layoutReady();
  expect(p.services.core.index.status().failures).toHaveLength(103);
  p.app.commands.executeCommandById("krypton:show-index-status");
  const modal = openModal("krypton-index-status")!;
  expect(modal.querySelector(".krypton-status-failures-title")!.textContent).toBe("Notes that could not be indexed (103):");
  const items = Array.from(modal.querySelectorAll(".krypton-status-failures li")).map((li) => li.textContent);
  expect(items).toHaveLength(101);
  expect(items[100]).toBe("…and 3 more.");
  modal.closest(".modal-container")!.remove();
});

test("when the vault's notes cannot be listed, the status bar, its tooltip, the status dialog and search say why", async () => {
  p = await loadPlugin(NOTES);
  await p.layoutReady();
  // The listing rejects as the Node adapter's does on a vault folder that cannot be read.
  const vault = p.services.host.vault;
  vault.listNotes = () => Promise.reject(Object.assign(new Error("EACCES: permission denied, scandir '/vault'"), { code: "EACCES" }));
  await expect(p.services.core.index.sync()).rejects.toThrow(/EACCES/);
  const why = "The vault's notes could not be listed (EACCES: permission denied, scandir '/vault'); Krypton tries again in 5 s or when a note changes";

  const bar = p.plugin.statusBarItems.find((el) => el.hasClass("krypton-status-bar"))!;
  expect(bar.textContent).toBe("Krypton: index error");
  expect(bar.getAttribute("aria-label")).toContain(`${why}.`);

  p.app.commands.executeCommandById("krypton:show-index-status");
  const status = openModal("krypton-index-status")!;
  const rows = Object.fromEntries(Array.from(status.querySelectorAll("tr")).map((tr) => [tr.querySelector("th")!.textContent, tr.querySelector("td")!.textContent]));
  expect(rows).toMatchObject({ State: "Error", Error: why });
  status.closest(".modal-container")!.remove();

  // The notes indexed before still answer; the dialog says so instead of claiming the index could not be loaded.
  p.app.commands.executeCommandById("krypton:search-vault");
  const search = openModal("krypton-search-modal")!;
  const input = search.querySelector<HTMLInputElement>("input")!;
  input.value = "pollinate";
  input.dispatchEvent(new Event("input"));
  await until(() => search.querySelectorAll(".krypton-search-result").length > 0, "results");
  expect(search.querySelector("[role=status]")!.textContent).toBe(`${why}. Results come from the notes indexed before.`);
  search.closest(".modal-container")!.remove();
});

test("when the exclude patterns take every note, the status dialog, the tooltip and search name the patterns", async () => {
  p = await loadPlugin(NOTES, { data: { excludePatterns: ["Garden/", "Unused/", "*.md"] } });
  await p.layoutReady();
  const why = 'The exclude patterns leave no note to index: every note matches "Garden/" or "*.md".';
  const bar = p.plugin.statusBarItems.find((el) => el.hasClass("krypton-status-bar"))!;
  expect(bar.getAttribute("aria-label")).toContain(why);

  p.app.commands.executeCommandById("krypton:show-index-status");
  const status = openModal("krypton-index-status")!;
  const rows = Object.fromEntries(Array.from(status.querySelectorAll("tr")).map((tr) => [tr.querySelector("th")!.textContent, tr.querySelector("td")!.textContent]));
  expect(rows).toMatchObject({ Notes: "0", Excluded: why });
  status.closest(".modal-container")!.remove();

  const search = new SearchModal(p.app as never, p.services);
  search.open();
  const state = () => search.contentEl.querySelector("[role=status]")!.textContent;
  // Before anything is typed too, not "Type to search 0 notes.".
  expect(state()).toBe(why);
  await search.search("bees");
  expect(state()).toBe(why);
  search.close();
});

test("a vault listing that throws at once (not a rejected promise) at start-up ends in the error state, saying why", async () => {
  p = await loadPlugin(NOTES);
  // Obsidian's getMarkdownFiles is synchronous, so a failure in it is a throw; the core's policedVault (an async
  // listNotes) makes it the rejection syncNow catches. Without that, open() rejected and the state stayed "loading".
  p.app.vault.getMarkdownFiles = () => {
    throw new Error("file tree not available");
  };
  await p.layoutReady();
  const status = p.services.core.index.status();
  expect(status.state).toBe("error");
  expect(status.error).toMatch(/^The vault's notes could not be listed \(file tree not available\)/);
  expect(noticeMessages().some((m) => m.includes("file tree not available"))).toBe(true);
});

test("after the vault's notes could not be listed, the next vault event lists them again, without Rebuild index", async () => {
  p = await loadPlugin(NOTES);
  const fileTree = p.app.vault.getMarkdownFiles;
  p.app.vault.getMarkdownFiles = () => {
    throw new Error("file tree not available");
  };
  p.app.workspace.triggerLayoutReady();
  await p.services.indexSettled();
  const bar = p.plugin.statusBarItems.find((el) => el.hasClass("krypton-status-bar"))!;
  expect(bar.textContent).toBe("Krypton: index error");
  expect(bar.getAttribute("aria-label")).toContain("(file tree not available); Krypton tries again in 5 s or when a note changes.");

  // The failure passes; a note created afterwards is the first sign of it. Every note is indexed, not only that one.
  p.app.vault.getMarkdownFiles = fileTree;
  await p.app.vault.create("Garden/Beans.md", "# Beans\n\nRunner beans climb the poles.");
  await p.settle();
  expect(p.services.core.index.status()).toMatchObject({ state: "ready", notes: 4 });
  expect(bar.textContent).not.toBe("Krypton: index error");
});

/** Every file of a folder, as makeTempVault wants them. */
async function readTree(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await fs.readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = join(entry.parentPath ?? (entry as unknown as { path: string }).path, entry.name);
    out[relative(root, full).split(sep).join("/")] = await fs.readFile(full, "utf8");
  }
  return out;
}

test("Obsidian and the CLI build identical indexes from the same vault (chunk ids, texts, hashes, lines, headings)", async () => {
  const files = {
    ...(await readTree(join(__dirname, "..", "fixtures", "chunker-vault"))),
    ...Object.fromEntries(Object.entries(await readTree(join(__dirname, "..", "..", "examples", "demo-vault"))).map(([k, v]) => [`Demo/${k}`, v])),
  };
  const notePaths = Object.keys(files).filter((f) => f.endsWith(".md") && !f.split("/").some((part) => part.startsWith(".")));
  expect(notePaths.length).toBeGreaterThan(10);

  p = await loadPlugin(files);
  await p.layoutReady();
  const inObsidian = p.services.core.index;

  // The CLI indexes its own copy of the same files; its saved index is then read back.
  const copy = await makeTempVault(files);
  try {
    const cli = await runCli(["index", copy.root, "--no-embeddings", "--json"]);
    expect(cli.code).toBe(0);
    const settings = { ...DEFAULT_SETTINGS, embeddingProvider: "none" as const };
    const fromCli = new VaultIndex({ host: createNodeHost(copy.root, { logger: silentLogger }), settings: () => settings, embedder: () => null });
    try {
      const status = await fromCli.open();
      expect(status).toMatchObject({ notes: inObsidian.status().notes, chunks: inObsidian.status().chunks });
      expect(status.rebuiltReason).toBeUndefined();
      let compared = 0;
      for (const path of notePaths) {
        const a = await inObsidian.chunksOf(path);
        compared += a.length;
        expect({ path, chunks: await fromCli.chunksOf(path) }).toEqual({ path, chunks: a });
      }
      expect(compared).toBe(status.chunks);
    } finally {
      await fromCli.close();
    }
  } finally {
    await copy.cleanup();
  }
}, 60_000);
