import { rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { SHARD_MAX_CHUNKS } from "../../../src/core/indexing/index-persistence";
import { VaultIndex } from "../../../src/core/indexing/vault-index";
import { clockFromTimers, type Clock } from "../../../src/core/ports/clock";
import { silentLogger } from "../../../src/core/ports/logger";
import { DEFAULT_SETTINGS } from "../../../src/core/settings";
import { createNodeHost } from "../../../src/node/node-host";
import { FAST, makeHarness, longNote, type Harness } from "./index-harness";

describe("VaultIndex: build and incremental sync", () => {
  let h: Harness;
  afterEach(async () => {
    await h?.cleanup();
  });

  it("builds an index of every note and finds notes by keyword and by meaning", async () => {
    h = await makeHarness({
      "Cooking/Pasta.md": "# Pasta\n\nBoil water, add salt, cook the spaghetti for nine minutes.",
      "Garden/Tomatoes.md": "---\ntags: [garden]\n---\n# Tomatoes\n\nWater the tomato plants every morning in summer.",
      "Empty.md": "",
    });
    const index = h.open();
    const status = await index.open();
    expect(status.state).toBe("ready");
    expect(status.notes).toBe(3); // the empty note is known (so it is not re-read) but has no chunks
    expect(await index.chunksOf("Empty.md")).toEqual([]);
    expect(status.chunks).toBeGreaterThanOrEqual(2);
    expect(status.embedded).toBe(status.chunks);
    expect(status.keywordOnly).toBe(false);
    expect(status.embedder).toBe("hash:32");
    expect(status.failures).toEqual([]);

    const hits = await index.searchNotes("spaghetti");
    expect(hits[0].path).toBe("Cooking/Pasta.md");
    expect(hits[0].folder).toBe("Cooking");
    expect(hits[0].score).toBeGreaterThan(0);
    expect(hits[0].score).toBeLessThanOrEqual(1);
    expect((await index.chunksOf("Garden/Tomatoes.md"))[0].tags).toContain("garden");
  });

  it("a vault folder that cannot be listed leaves the index in an error state that says why, notes kept", async () => {
    h = await makeHarness({ "A.md": "# Alpha\n\nApples.", "B.md": "# Bravo\n\nBananas." });
    const index = h.open();
    await index.open();
    // The vault's folder goes away under a running index (a drive unmounted, a synced folder moved).
    const moved = `${h.vault.root}-moved`;
    await rename(h.vault.root, moved);
    try {
      await expect(index.sync()).rejects.toThrow(/ENOENT/);
      const failed = index.status();
      expect(failed.state).toBe("error");
      expect(failed.error).toMatch(/^The vault's notes could not be listed \(ENOENT: .*scandir/);
      expect(failed.notes).toBe(2); // an empty listing would have taken every note out
    } finally {
      await rename(moved, h.vault.root);
    }
    const back = await index.sync();
    expect(back.state).toBe("ready");
    expect(back.error).toBeUndefined();
    expect(back.notes).toBe(2);
  });

  it("re-embeds nothing on an unchanged restart and one chunk after a one-paragraph edit", async () => {
    const note = longNote("Handbook", 12);
    h = await makeHarness({ "Handbook.md": note, "Other.md": "# Other\n\nSomething else entirely." });
    const first = h.open();
    const built = await first.open();
    expect(built.chunks).toBeGreaterThan(10);
    const embeddedTexts = h.embedder.texts.length;
    expect(embeddedTexts).toBe(built.chunks);
    await first.close();

    h.embedder.reset();
    const second = h.open();
    const reopened = await second.open();
    expect(reopened.chunks).toBe(built.chunks);
    expect(reopened.embedded).toBe(built.chunks);
    expect(h.embedder.calls).toBe(0);
    await second.close();

    // Touch the file without changing it: read again, hash matches, nothing embedded.
    await h.vault.write("Handbook.md", note);
    const third = h.open();
    await third.open();
    expect(h.embedder.calls).toBe(0);

    // Edit one paragraph.
    await h.vault.write("Handbook.md", note.replace("Paragraph 5 about topic 5:", "Paragraph 5 about something new:"));
    h.embedder.reset();
    await third.sync();
    expect(h.embedder.texts).toHaveLength(1);
    expect(h.embedder.texts[0]).toContain("something new");
    const hits = await third.searchChunks("something new");
    expect(hits.find((hit) => hit.chunk.text.includes("something new"))?.chunk.path).toBe("Handbook.md");
    expect(hits.find((hit) => hit.chunk.text.includes("something new"))?.keywordScore).toBe(1);
  });

  it("answers the same after a restart (the stored word index equals a freshly built one)", async () => {
    h = await makeHarness({
      "Lists/Groceries.md": "---\naliases: [Shopping]\ntags: [home]\n---\n# Groceries\n\n- milk\n- bread\n- Café au lait",
      "Notes/Coffee.md": "# Coffee\n\n## Brewing\n\nPour-over coffee needs a fine grind. Café culture.",
      "Handbook.md": longNote("Handbook", 6),
    });
    const first = h.open();
    await first.open();
    const queries = ["cafe", "shopping home", "brewing grind", "topic3 alpha2", "handbook section"];
    const before = await Promise.all(queries.map((q) => first.searchChunks(q)));
    await first.close();
    const second = h.open();
    await second.open();
    const after = await Promise.all(queries.map((q) => second.searchChunks(q)));
    const view = (hits: typeof before[number]) => hits.map((x) => [x.chunk.id, x.keywordScore.toFixed(6), x.score.toFixed(6)]);
    expect(after.map(view)).toEqual(before.map(view));
    expect(before.every((hits) => hits.length > 0)).toBe(true);
  });

  it("applies create, modify, rename and delete events without stale chunks", async () => {
    h = await makeHarness({ "A.md": "# Alpha\n\nApples are red.", "B.md": "# Bravo\n\nBananas are yellow." });
    const index = h.open();
    await index.open();
    h.embedder.reset();

    await h.vault.write("C.md", "# Charlie\n\nCherries are dark red.");
    index.handleEvent({ type: "create", path: "C.md" });
    await h.vault.write("A.md", "# Alpha\n\nApricots are orange.");
    index.handleEvent({ type: "modify", path: "A.md" });
    await h.vault.rename("B.md", "Fruit/B2.md");
    index.handleEvent({ type: "rename", path: "Fruit/B2.md", oldPath: "B.md" });
    await index.idle();

    expect((await index.searchNotes("cherries"))[0].path).toBe("C.md");
    expect(await index.searchNotes("apples")).toEqual([]);
    expect((await index.searchNotes("apricots"))[0].path).toBe("A.md");
    const bananas = await index.searchNotes("bananas");
    expect(bananas.map((n) => n.path)).toEqual(["Fruit/B2.md"]);
    expect(await index.chunksOf("B.md")).toEqual([]);
    // The renamed note kept its vector (same text and title): only C and the edited A were embedded.
    expect(h.embedder.texts.some((t) => t.includes("Bananas"))).toBe(false);

    await h.vault.remove("C.md");
    index.handleEvent({ type: "delete", path: "C.md" });
    await index.idle();
    expect(await index.searchNotes("cherries")).toEqual([]);
    expect(index.status().notes).toBe(2);

    // And it all survives a restart.
    await index.close();
    h.embedder.reset();
    const again = h.open();
    const status = await again.open();
    expect(status.notes).toBe(2);
    expect(h.embedder.calls).toBe(0);
    expect(await again.searchNotes("cherries")).toEqual([]);
    expect((await again.searchNotes("bananas"))[0].path).toBe("Fruit/B2.md");
  });

  it("notices notes changed, added and removed while it was closed", async () => {
    h = await makeHarness({ "A.md": "# A\n\nfirst version", "B.md": "# B\n\nbee note" });
    const first = h.open();
    await first.open();
    await first.close();
    await h.vault.write("A.md", "# A\n\nsecond version with zebras");
    await h.vault.remove("B.md");
    await h.vault.write("New/C.md", "# C\n\nnewcomer note");
    h.embedder.reset();
    const second = h.open();
    const status = await second.open();
    expect(status.notes).toBe(2);
    expect(h.embedder.texts).toHaveLength(2);
    expect((await second.searchNotes("zebras"))[0].path).toBe("A.md");
    expect(await second.searchNotes("bee")).toEqual([]);
    expect((await second.searchNotes("newcomer"))[0].path).toBe("New/C.md");
  });

  it("re-embeds everything when the embedding model changes", async () => {
    h = await makeHarness({ "A.md": "# A\n\none", "B.md": "# B\n\ntwo" });
    const first = h.open();
    const built = await first.open();
    await first.close();
    const { HashEmbedder } = await import("../../support/hash-embedder");
    const other = new HashEmbedder({ dim: 48, id: "other:48" });
    const second = h.open({ embedder: other });
    const status = await second.open();
    expect(status.embedder).toBe("other:48");
    expect(status.embedded).toBe(built.chunks);
    expect(other.texts).toHaveLength(built.chunks);
    await second.close();
    other.reset();
    const third = h.open({ embedder: other });
    await third.open();
    expect(other.calls).toBe(0);
  });

  it("never passes the old model's saved vectors off as the new one's when re-embedding stops midway", async () => {
    // More chunks than one shard holds (SHARD_MAX_CHUNKS): the shards the new model never reached must lose a's vectors too.
    const files: Record<string, string> = {};
    for (let i = 0; i < 1100; i++) files[`N${i}.md`] = `# Note ${i}\n\nText number ${i} about subject${i}.`;
    const { HashEmbedder } = await import("../../support/hash-embedder");
    h = await makeHarness(files, new HashEmbedder({ dim: 32, id: "a:32", batchSize: 64 }));
    const first = h.open();
    const built = await first.open();
    await first.close();
    // Same dimension, another model: its first batch is stored, then it fails for good.
    const failing = new HashEmbedder({ dim: 32, id: "b:32", batchSize: 64, failWith: (call) => (call >= 1 ? new Error("model crashed") : null) });
    const second = h.open({ embedder: failing });
    const stopped = await second.open();
    expect(built.chunks).toBeGreaterThan(SHARD_MAX_CHUNKS);
    expect(stopped.embedded).toBe(64);
    await second.close();
    // The next run finds only model b's 64 vectors: every other chunk is embedded again, none keeps a's.
    const b = new HashEmbedder({ dim: 32, id: "b:32", batchSize: 64 });
    const third = h.open({ embedder: b });
    const status = await third.open();
    expect(b.texts).toHaveLength(built.chunks - 64);
    expect(status.embedded).toBe(built.chunks);
  });

  it("re-embeds when a model keeps its name but changes its dimension", async () => {
    h = await makeHarness({ "A.md": "# A\n\none", "B.md": "# B\n\ntwo" });
    const { HashEmbedder } = await import("../../support/hash-embedder");
    const first = h.open({ embedder: new HashEmbedder({ dim: 16, id: "ollama:same-name" }) });
    await first.open();
    await first.close();
    const bigger = new HashEmbedder({ dim: 24, id: "ollama:same-name" });
    const second = h.open({ embedder: bigger });
    await h.vault.write("C.md", "# C\n\nthree");
    const status = await second.open();
    expect(status.embedderError).toBeUndefined();
    expect(status.embedded).toBe(status.chunks);
    expect(status.chunks).toBe(3);
    expect((await second.searchNotes("three"))[0].chunks[0].vectorScore).toBeGreaterThan(0);
  });

  it("re-chunks every note when the chunk size changes, re-embedding only texts that changed", async () => {
    h = await makeHarness({ "Long.md": longNote("Long", 8), "Short.md": "# Short\n\nA short note stays one chunk." });
    const first = h.open();
    const before = await first.open();
    await first.close();
    h.embedder.reset();
    const second = h.open({ settings: { chunkMaxChars: 600 } });
    const after = await second.open();
    expect(after.chunks).toBeGreaterThan(before.chunks);
    expect((await second.chunksOf("Long.md")).every((c) => c.text.length <= 600)).toBe(true);
    // The short note's only chunk is unchanged: its vector is reused.
    expect(h.embedder.texts.some((t) => t.includes("A short note"))).toBe(false);
    expect(after.embedded).toBe(after.chunks);
  });

  it("skips excluded folders and globs, the config folder and .krypton", async () => {
    h = await makeHarness({
      "Templates/Daily.md": "# Template\n\nunicorn template",
      "Notes/Keep.md": "# Keep\n\nunicorn kept",
      "Notes/Drawing.excalidraw.md": "# Drawing\n\nunicorn drawing",
      "Archive/2020/Old.md": "# Old\n\nunicorn archived",
    });
    const index = h.open({ settings: { excludePatterns: ["Templates/", "**/*.excalidraw.md", "Archive"] } });
    const status = await index.open();
    expect(status.notes).toBe(1);
    expect((await index.searchNotes("unicorn")).map((n) => n.path)).toEqual(["Notes/Keep.md"]);
    // Events for excluded paths are ignored too.
    await h.vault.write("Templates/Weekly.md", "# Weekly\n\nunicorn weekly");
    index.handleEvent({ type: "create", path: "Templates/Weekly.md" });
    await index.idle();
    expect(index.status().notes).toBe(1);
  });

  it("survives empty and huge notes, and skips binary ones by name (read-policy.ts)", async () => {
    const junk = Array.from({ length: 20_000 }, (_, i) => String.fromCharCode((i * 7919) % 0xd7ff)).join("");
    h = await makeHarness({
      "Empty.md": "",
      "Spaces.md": "   \n\n  \n",
      "Huge.md": "# Huge\n\n" + "lorem ipsum dolor sit amet consectetur ".repeat(55_000),
      "Junk.md": junk,
      "Nul.md": "a\u0000b\u0000c \u0001\u0002 zzz",
      "Fine.md": "# Fine\n\nnormal note",
    });
    const index = h.open();
    const status = await index.open();
    expect(status.state).toBe("ready");
    expect(status.failures.map((f) => f.path).sort()).toEqual(["Junk.md", "Nul.md"]);
    for (const f of status.failures) expect(f.error).toMatch(/binary file/);
    expect(await index.chunksOf("Nul.md")).toEqual([]);
    expect((await index.chunksOf("Huge.md")).length).toBeGreaterThan(1000);
    expect((await index.searchNotes("normal"))[0].path).toBe("Fine.md");
    expect((await index.searchNotes("consectetur"))[0].path).toBe("Huge.md");
    await index.close();
    const again = h.open();
    expect((await again.open()).chunks).toBe(status.chunks);
  });
});

/** Listing retries wait 10 min, then 20: long enough that only the test fires them. */
const LIST_RETRY = { baseDelayMs: 600_000, maxDelayMs: 1_200_000 };

/** Node's timers, but those of a listing retry are held until the test fires them (no real waiting). */
function heldRetryClock(): { clock: Clock; held: { ms: number; fire: () => void }[] } {
  const held: { ms: number; fire: () => void }[] = [];
  const setTimer = (fn: () => void, ms: number) => {
    if (ms < LIST_RETRY.baseDelayMs) {
      const t = setTimeout(fn, ms);
      return () => clearTimeout(t);
    }
    const timer = {
      ms,
      fire: () => {
        held.splice(held.indexOf(timer), 1);
        fn();
      },
    };
    held.push(timer);
    return () => {
      if (held.includes(timer)) held.splice(held.indexOf(timer), 1);
    };
  };
  return { clock: clockFromTimers(Date.now, setTimer), held };
}

describe("VaultIndex: a vault listing that failed is tried again by itself", () => {
  let h: Harness;
  let index: VaultIndex | undefined;
  let held: { ms: number; fire: () => void }[];
  let moved: string;
  afterEach(async () => {
    await index?.close();
    await h?.cleanup();
  });

  /** An index on a two-note vault whose folder goes away (a drive unmounted) after it was indexed. */
  async function failedListing(): Promise<VaultIndex> {
    h = await makeHarness({ "A.md": "# Alpha\n\nApples.", "B.md": "# Bravo\n\nBananas." });
    const timers = heldRetryClock();
    held = timers.held;
    const host = { ...createNodeHost(h.vault.root, { logger: silentLogger }), clock: timers.clock };
    const settings = { ...DEFAULT_SETTINGS, excludePatterns: [], mcpAllowedOrigins: [] };
    index = new VaultIndex({ host, settings: () => settings, embedder: () => h.embedder, options: { ...FAST, listRetry: LIST_RETRY } });
    await index.open();
    moved = `${h.vault.root}-moved`;
    await rename(h.vault.root, moved);
    await expect(index.sync()).rejects.toThrow(/ENOENT/);
    return index;
  }

  it("after a back-off that doubles while the listing keeps failing, and says when", async () => {
    const index = await failedListing();
    expect(index.status().error).toMatch(/^The vault's notes could not be listed \(ENOENT: .*\); Krypton tries again in 10 min or when a note changes$/);
    expect(held.map((t) => t.ms)).toEqual([600_000]);

    held[0].fire();
    await index.idle();
    expect(index.status()).toMatchObject({ state: "error", notes: 2 });
    expect(index.status().error).toMatch(/tries again in 20 min or when a note changes$/);
    expect(held.map((t) => t.ms)).toEqual([1_200_000]);

    await rename(moved, h.vault.root);
    await writeFile(join(h.vault.root, "C.md"), "# Charlie\n\nCherries.");
    held[0].fire();
    await index.idle();
    expect(index.status()).toMatchObject({ state: "ready", notes: 3 });
    expect(index.status().error).toBeUndefined();
    expect(held).toEqual([]);
  });

  it("at the next vault event, without waiting for the back-off", async () => {
    const index = await failedListing();
    // B.md went while the folder was away: no event says so, only a new listing finds it gone.
    await rm(join(moved, "B.md"));
    await rename(moved, h.vault.root);
    await writeFile(join(h.vault.root, "C.md"), "# Charlie\n\nCherries.");
    index.handleEvent({ type: "create", path: "C.md" });
    await index.idle();
    expect(index.status()).toMatchObject({ state: "ready", notes: 2 });
    expect(await index.chunksOf("B.md")).toEqual([]);
    expect(held).toEqual([]); // the event's pass took the retry's place
  });

  it("never after close", async () => {
    const index = await failedListing();
    expect(held).toHaveLength(1);
    await index.close();
    expect(held).toEqual([]);
    await rename(moved, h.vault.root);
  });
});
