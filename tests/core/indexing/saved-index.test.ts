import { promises as fs } from "node:fs";
import { join } from "node:path";
import type { ByteRange, DataDirPort } from "../../../src/core/ports/data-dir";
import { silentLogger } from "../../../src/core/ports/logger";
import { VaultIndex } from "../../../src/core/indexing/vault-index";
import type { NoteHit, SearchOptions } from "../../../src/core/search/search-types";
import { createNodeHost } from "../../../src/node/node-host";
import { FAST, makeHarness, type Harness } from "./index-harness";
import { shardLayout } from "../../support/shard-layout";

/**
 * VaultIndex.searchSavedNotes: a search answered from the saved shard files without loading the index
 * (one-shot `krypton search`). It must rank exactly like the loaded index, read only what the query needs,
 * and step aside (null) whenever the saved index does not match the vault or is damaged.
 */

/** A vault over more than one shard (1,024 chunks each): 1,300 short notes from a seeded word list, plus a few special ones. */
function vaultFiles(): Record<string, string> {
  const words = ["garden", "compost", "tomato", "orchard", "photosynthesis", "photograph", "photon", "kubernetes", "docker", "container", "budget", "savings", "interest", "tide", "moon", "ocean", "bread", "yeast", "flour", "history", "empire", "river"];
  let seed = 11;
  const pick = () => words[(seed = (seed * 48271) % 2147483647) % words.length];
  const files: Record<string, string> = {};
  for (let i = 0; i < 1300; i++) {
    const folder = i % 3 === 0 ? "Notes/" : i % 3 === 1 ? "Archive/" : "";
    files[`${folder}Note ${i}.md`] = `# ${pick()} ${i}\n\n${Array.from({ length: 8 + (i % 13) }, pick).join(" ")}.\n`;
  }
  files["Japan.md"] = "# 東京\n\n東京は日本の首都です。";
  files["Español.md"] = "# Verificación de teléfono\n\nLa verificación de teléfono protege la cuenta.";
  return files;
}

const queries: [string, SearchOptions][] = [
  ["compost garden", {}],
  ["compost garden", { semanticWeight: 0 }],
  ["compost garden", { semanticWeight: 1 }],
  ["photo", { semanticWeight: 0 }],
  ["kubernetes docker container budget", {}],
  ["tide moon", { pathPrefix: "Notes/" }],
  ["verificaciones de telefono", {}],
  ["東京", {}],
  ["nothing like this exists", {}],
  ["bread", { limit: 3 }],
];

function summary(hits: NoteHit[]) {
  return hits.map((h) => ({
    path: h.path,
    score: h.score.toFixed(6),
    snippet: h.snippet,
    lines: [h.startLine, h.endLine],
    chunks: h.chunks.map((c) => [c.chunk.id, c.chunk.text, c.keywordScore.toFixed(6), c.vectorScore.toFixed(6)]),
  }));
}

/** A data folder that records what is read through it. */
function counting(data: DataDirPort): DataDirPort & { ranges: { path: string; range?: ByteRange }[] } {
  const out = Object.create(data) as DataDirPort & { ranges: { path: string; range?: ByteRange }[] };
  out.ranges = [];
  out.read = (path: string, range?: ByteRange) => {
    out.ranges.push({ path, range });
    return data.read(path, range);
  };
  return out;
}

describe("VaultIndex.searchSavedNotes (a search from the saved files, nothing loaded)", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await makeHarness(vaultFiles());
    const index = h.open();
    await index.open();
    await index.idle();
    await index.close();
  }, 60_000);
  afterAll(async () => {
    await h.cleanup();
  });

  it("spans several shards", async () => {
    const manifest = JSON.parse(await fs.readFile(join(h.vault.root, ".krypton/index/manifest.json"), "utf8"));
    expect(manifest.shards.length).toBeGreaterThan(1);
  });

  it.each(queries)("ranks %j %j exactly like the loaded index (scores, snippets, texts)", async (query, options) => {
    const loaded = h.open();
    await loaded.open(undefined, { readOnly: true });
    const expected = await loaded.searchNotes(query, options);
    const saved = await h.open().searchSavedNotes(query, options);
    expect(saved).not.toBeNull();
    expect(summary(saved!.hits)).toEqual(summary(expected));
    expect(saved!.status).toMatchObject({ state: "ready", chunks: loaded.status().chunks, notes: loaded.status().notes, embedded: loaded.status().embedded, readOnly: true });
  });

  it("a data folder that cannot read into memory (the copying path) gives the same hits", async () => {
    const host = createNodeHost(h.vault.root, { logger: silentLogger });
    const data = Object.create(host.data) as DataDirPort;
    Object.defineProperty(data, "readInto", { value: undefined });
    const index = new VaultIndex({ host: { ...host, data }, settings: () => h.settings, embedder: () => h.embedder, options: FAST });
    const copied = await index.searchSavedNotes("compost garden", { semanticWeight: 1 });
    const direct = await h.open().searchSavedNotes("compost garden", { semanticWeight: 1 });
    expect(copied).not.toBeNull();
    expect(summary(copied!.hits)).toEqual(summary(direct!.hits));
  });

  it("finds what only the saved index's other shards hold, with the same document frequencies", async () => {
    const hits = (await h.open().searchSavedNotes("photosynthesis", { semanticWeight: 0, limit: 50 }))!.hits;
    const shardsHit = new Set(hits.map((hit) => Number(/Note (\d+)/.exec(hit.path)?.[1] ?? -1) > 900));
    expect(shardsHit.size).toBe(2);
  });

  it("reads only what the query needs: no vector codes for a keyword-only search, a few words' postings, nothing twice", async () => {
    const host = createNodeHost(h.vault.root, { logger: silentLogger });
    const data = counting(host.data);
    const index = new VaultIndex({ host: { ...host, data }, settings: () => h.settings, embedder: () => null, options: FAST });
    const saved = await index.searchSavedNotes("tide moon", { limit: 5 });
    expect(saved?.hits.length).toBe(5);
    const dir = join(h.vault.root, ".krypton/index");
    const manifest = JSON.parse(await fs.readFile(join(dir, "manifest.json"), "utf8"));
    let postingBytes = 0;
    let postingRead = 0;
    for (const entry of manifest.shards) {
      const layout = shardLayout(await fs.readFile(join(dir, entry.file)));
      postingBytes += layout.postingsEnd - layout.vectorsEnd;
      for (const { path, range } of data.ranges) {
        if (!path.endsWith(entry.file)) continue;
        expect(range).toBeDefined();
        const from = range!.offset;
        const to = from + range!.length;
        // No vector codes (their scales, 4 bytes a vector, come with the index part).
        expect(to <= layout.codesAt || from >= layout.vectorsEnd).toBe(true);
        if (from >= layout.vectorsEnd && to <= layout.postingsEnd) postingRead += range!.length;
      }
    }
    expect(postingRead).toBeGreaterThan(0);
    expect(postingRead).toBeLessThan(postingBytes / 5);
    const keys = data.ranges.map((r) => `${r.path}@${r.range?.offset}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  describe("steps aside (null) when the saved index does not match the vault", () => {
    let h2: Harness;
    beforeEach(async () => {
      h2 = await makeHarness({ "A.md": "# Apples\n\nApples grow in the orchard.", "Sub/B.md": "# Bananas\n\nBananas ripen in the sun." });
      const index = h2.open();
      await index.open();
      await index.idle();
      await index.close();
      expect(await h2.open().searchSavedNotes("apples")).not.toBeNull();
    });
    afterEach(async () => {
      await h2.cleanup();
    });

    // Every row has three entries: jest takes a test function's extra parameter for a done callback.
    it.each<[string, (h: Harness) => Promise<unknown> | unknown, { settings?: Record<string, unknown> }]>([
      ["a note changed", (x) => fs.writeFile(join(x.vault.root, "A.md"), "# Apples\n\nApples and pears grow in the orchard."), {}],
      ["a note added", (x) => fs.writeFile(join(x.vault.root, "C.md"), "# Cherries"), {}],
      ["a note removed", (x) => fs.rm(join(x.vault.root, "Sub/B.md")), {}],
      ["a folder newly excluded", () => undefined, { settings: { excludePatterns: ["Sub/"] } }],
      ["another chunk size", () => undefined, { settings: { chunkMaxChars: 800 } }],
    ])("%s", async (_name, change, how) => {
      await change(h2);
      const index = h2.open({ settings: how.settings as never });
      expect(await index.searchSavedNotes("apples")).toBeNull();
      // The full path answers instead, with the vault as it is now.
      await index.open(undefined, { readOnly: true });
      expect((await index.searchNotes("apples")).length).toBeGreaterThan(0);
    });

    it("another embedder's vectors", async () => {
      const { HashEmbedder } = await import("../../support/hash-embedder");
      expect(await h2.open({ embedder: new HashEmbedder({ dim: 16, batchSize: 4 }) }).searchSavedNotes("apples")).toBeNull();
      // Without an embedder (keyword-only run) the saved index still answers, by keywords.
      const keywordOnly = await h2.open({ embedder: null }).searchSavedNotes("apples");
      expect(keywordOnly?.status.keywordOnly).toBe(true);
      expect(keywordOnly?.hits[0].path).toBe("A.md");
    });

    it("an index of the previous format", async () => {
      const path = join(h2.vault.root, ".krypton/index/manifest.json");
      const manifest = JSON.parse(await fs.readFile(path, "utf8"));
      manifest.format = 4;
      await fs.writeFile(path, JSON.stringify(manifest));
      expect(await h2.open().searchSavedNotes("apples")).toBeNull();
    });

    it("a shard file gone (a writer in another process switched to a new generation meanwhile): null", async () => {
      const dir = join(h2.vault.root, ".krypton/index");
      const manifest = JSON.parse(await fs.readFile(join(dir, "manifest.json"), "utf8"));
      await fs.rm(join(dir, manifest.shards[0].file));
      expect(await h2.open().searchSavedNotes("apples")).toBeNull();
    });

    it.each<[string, (bytes: Buffer) => void]>([
      ["a corrupt vector part (checksum)", (b) => (b[shardLayout(b).codesAt] ^= 0x55)],
      ["a corrupt index part (checksum)", (b) => (b[shardLayout(b).wordsAt] ^= 0x01)],
      ["a posting naming a chunk out of range (read in part, checked for shape)", (b) => b.writeUInt32LE(0xffffff, shardLayout(b).vectorsEnd)],
      ["a corrupt meta part (checksum)", (b) => (b[shardLayout(b).metaAt + 2] ^= 0x01)],
    ])("%s: null, and opening the index reports the damage", async (_name, damage) => {
      const dir = join(h2.vault.root, ".krypton/index");
      const manifest = JSON.parse(await fs.readFile(join(dir, "manifest.json"), "utf8"));
      const file = join(dir, manifest.shards[0].file);
      const bytes = await fs.readFile(file);
      damage(bytes);
      await fs.writeFile(file, bytes);
      // Every posting of the shard is read by a query that names every word.
      const all = "apples grow orchard bananas ripen sun";
      expect(await h2.open().searchSavedNotes(all, { semanticWeight: 0.5 })).toBeNull();
      const status = await h2.open().open(undefined, { readOnly: true });
      expect(status.rebuiltReason).toMatch(/corrupt|impossible/);
    });
  });
});
