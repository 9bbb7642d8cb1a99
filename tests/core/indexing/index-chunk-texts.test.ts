import { promises as fs } from "node:fs";
import { join } from "node:path";
import { embeddingText } from "../../../src/core/indexing/markdown-chunker";
import { IndexStore } from "../../../src/core/indexing/index-store";
import { readShardFile } from "../../../src/core/indexing/index-persistence";
import { encodeShard } from "../../../src/core/indexing/shard-codec";
import { chunkNote } from "../../../src/core/indexing/markdown-chunker";
import { createNodeHost } from "../../../src/node/node-host";
import { silentLogger } from "../../../src/core/ports/logger";
import { WorkSlicer } from "../../../src/core/indexing/work-slicer";
import { FAST, makeHarness, longNote } from "./index-harness";
import { VaultIndex } from "../../../src/core/indexing/vault-index";
import { makeTempVault } from "../../support/temp-vault";

/**
 * Saved chunks keep their text on disk only (a 100k-note vault would otherwise hold ~500 MB of text):
 * searches, summaries and embedding read it back from the shard files.
 */
const notes: Record<string, string> = {};
for (let i = 0; i < 40; i++) notes[`Topic ${i}.md`] = longNote(`Topic ${i}`, 6, `subject${i}`);
notes["Tides.md"] = "# Tides\n\nThe moon pulls the ocean: high and low tides twice a day.\n";

type SavedShard = { file: string; textsAt: number; chunks: number };

/** Builds and saves the index, then damages the chunk texts of one shard file in place (the search part stays intact). */
async function savedWithDamagedTexts(
  h: Awaited<ReturnType<typeof makeHarness>>,
  pick: (shards: SavedShard[]) => SavedShard,
  damage: (bytes: Buffer, entry: SavedShard) => void,
): Promise<{ indexDir: string; entry: SavedShard; file: string; bytes: Buffer }> {
  const first = h.open();
  await first.open();
  await first.close();
  const indexDir = join(h.vault.root, ".krypton", "index");
  const manifest = JSON.parse(await fs.readFile(join(indexDir, "manifest.json"), "utf8")) as { shards: SavedShard[] };
  const entry = pick(manifest.shards);
  const file = join(indexDir, entry.file);
  const bytes = await fs.readFile(file);
  damage(bytes, entry);
  await fs.writeFile(file, bytes);
  return { indexDir, entry, file, bytes };
}

describe("chunk texts live on disk once saved", () => {
  it("the store drops a chunk's text when its shard is written and reads it back by position", async () => {
    const vault = await makeTempVault({});
    try {
      const host = createNodeHost(vault.root, { logger: silentLogger });
      const store = new IndexStore();
      const slicer = new WorkSlicer(host.clock);
      const text = longNote("Tides", 4, "tide");
      const chunks = chunkNote("Tides.md", text, { maxChars: 1500 }).chunks;
      expect(chunks.length).toBeGreaterThan(1);
      const expected = chunks.map((c) => c.text);
      await store.putNote({ path: "Tides.md", hash: "h", mtime: 1, size: text.length, title: "Tides", aliases: [], tags: [] }, chunks, slicer);
      expect(store.unsavedTextChars).toBe(expected.join("").length);
      await store.writeDirtyShards(host.data, 1, slicer);
      const records = store.notes.get("Tides.md")!.chunks;
      expect(records.every((r) => r.text === undefined && r.at >= 0)).toBe(true);
      expect(store.unsavedTextChars).toBe(0);
      expect(await store.textsOf(host.data, records)).toEqual(expected);

      // Saving the shard again (a note's mtime changed) takes the texts from the previous file.
      store.touchNote("Tides.md", 2, text.length);
      await store.writeDirtyShards(host.data, 2, slicer);
      const files = await fs.readdir(join(vault.root, ".krypton", "index"));
      expect(files).toContain("shard-0-2.bin");
      await fs.rm(join(vault.root, ".krypton", "index", "shard-0-1.bin"));
      expect(await store.textsOf(host.data, records)).toEqual(expected);
    } finally {
      await vault.cleanup();
    }
  });

  it("a shard whose chunks only got vectors is saved with its other parts carried over, never a damaged one", async () => {
    const vault = await makeTempVault({});
    try {
      const host = createNodeHost(vault.root, { logger: silentLogger });
      const store = new IndexStore();
      const slicer = new WorkSlicer(host.clock);
      for (const name of ["Tides", "Moon"]) {
        const text = longNote(name, 3, name.toLowerCase());
        await store.putNote({ path: `${name}.md`, hash: "h", mtime: 1, size: text.length, title: name, aliases: [], tags: [] }, chunkNote(`${name}.md`, text, { maxChars: 1500 }).chunks, slicer);
      }
      await store.writeDirtyShards(host.data, 1, slicer);
      const records = [...store.notes.values()].flatMap((n) => n.chunks);
      const texts = await store.textsOf(host.data, records);
      const vector = (i: number) => Float32Array.from({ length: 4 }, (_, d) => Math.sin(i * 7 + d));
      /** The shard as a full encode (every text read and analysed again) would write it now. */
      const fullEncode = () =>
        encodeShard([...store.notes.values()], 4, (rec) => (rec.slot >= 0 ? store.vectors.codesAt(rec.slot) : null), (rec) => texts[records.indexOf(rec)] as string);
      const saved = async () => readShardFile(host.data, store.shardFiles.get(0)!);

      const reads: (string | number)[] = [];
      const read = host.data.read.bind(host.data);
      host.data.read = (path, range) => {
        reads.push(range ? range.offset : "whole file");
        return read(path, range);
      };
      // The Tides chunks got vectors: the previous file is read whole (and checked), no text is read on its
      // own, and the new file is what a full encode gives, byte for byte.
      records.forEach((rec, i) => rec.note.path === "Tides.md" && store.setVector(rec, vector(i)));
      await store.writeDirtyShards(host.data, 2, slicer);
      expect(reads).toEqual(["whole file"]);
      expect(await saved()).toEqual(await fullEncode());

      // The saved file's postings are damaged on disk; the Moon chunks get vectors: the damage is not carried
      // over under fresh checksums (the texts, still intact, are analysed again).
      const entry = store.shardFiles.get(0)!;
      const file = join(vault.root, ".krypton", "index", entry.file);
      const bytes = await fs.readFile(file);
      bytes[entry.parts!.vectors.end + 5] ^= 0xff;
      await fs.writeFile(file, bytes);
      records.forEach((rec, i) => rec.note.path === "Moon.md" && store.setVector(rec, vector(i)));
      reads.length = 0;
      await store.writeDirtyShards(host.data, 3, slicer);
      // Whole (failing its checksum), then its texts alone, for a full encode.
      expect(reads).toEqual(["whole file", entry.textsAt]);
      expect(store.shardFiles.get(0)!.file).toBe("shard-0-3.bin");
      expect(await saved()).toEqual(await fullEncode());
    } finally {
      await vault.cleanup();
    }
  });

  it("loading reads each shard only up to its texts; a search then reads the texts of the shards it shows", async () => {
    const h = await makeHarness(notes);
    try {
      const first = h.open();
      await first.open();
      await first.close();
      const manifest = JSON.parse(await fs.readFile(join(h.vault.root, ".krypton/index/manifest.json"), "utf8"));
      const entry = manifest.shards[0];
      const host = createNodeHost(h.vault.root, { logger: silentLogger });
      const reads: { path: string; offset?: number; length?: number }[] = [];
      const read = host.data.read.bind(host.data);
      host.data.read = (path, range) => {
        reads.push({ path, ...range });
        return read(path, range);
      };
      // Chunk texts are read into a reused buffer (ShardTextBuffers): in place, where the data dir can.
      const readInto = host.data.readInto!.bind(host.data);
      host.data.readInto = (path, offset, target) => {
        reads.push({ path, offset, length: target.length });
        return readInto(path, offset, target);
      };
      const index = new VaultIndex({ host, settings: () => h.settings, embedder: () => h.embedder, options: FAST });
      try {
        await index.open(undefined, { readOnly: true });
        const shardReads = reads.filter((r) => r.path.includes("shard-"));
        expect(shardReads).toEqual([{ path: `index/${entry.file}`, offset: 0, length: entry.textsAt }]);
        reads.length = 0;
        await index.searchNotes("moon pulls the ocean");
        expect(reads.filter((r) => r.path.includes("shard-"))).toEqual([{ path: `index/${entry.file}`, offset: entry.textsAt, length: entry.bytes - entry.textsAt }]);
        reads.length = 0;
        await index.searchNotes("moon pulls the ocean"); // cached
        expect(reads.filter((r) => r.path.includes("shard-"))).toEqual([]);
      } finally {
        await index.close();
      }
    } finally {
      await h.cleanup();
    }
  });

  it("a scan that holds more text than its budget saves as it goes; embedding and search read the texts back", async () => {
    const reference = await makeHarness(notes);
    const small = await makeHarness(notes);
    try {
      const whole = reference.open();
      await whole.open();
      const budgeted = small.open({ index: { unsavedTextBudget: 2_000 } });
      const status = await budgeted.open();
      expect(status.embedded).toBe(status.chunks);
      // It saved during the scan (one generation per save), not only once at the end.
      const generation = async (root: string) => JSON.parse(await fs.readFile(join(root, ".krypton/index/manifest.json"), "utf8")).generation as number;
      expect(await generation(small.vault.root)).toBeGreaterThan((await generation(reference.vault.root)) + 10);
      // The same texts were embedded, in the same order, although most were read back from disk.
      expect(small.embedder.texts).toEqual(reference.embedder.texts);
      const hit = (await budgeted.searchNotes("moon pulls the ocean"))[0];
      expect(hit.path).toBe("Tides.md");
      expect(hit.chunks[0].chunk.text).toContain("The moon pulls the ocean");
      expect(hit.snippet).toContain("moon");
      const chunks = await budgeted.chunksOf("Topic 3.md");
      expect(chunks).toEqual(await whole.chunksOf("Topic 3.md"));
      // What was embedded is each chunk's embeddingText (what its textHash covers), made from its record.
      expect(chunks.map((c) => embeddingText(c))).toEqual(reference.embedder.texts.filter((t) => t.includes("subject3 ")));
    } finally {
      await reference.cleanup();
      await small.cleanup();
    }
  });

  it("a disk that fills up during the scan: the scan goes on in memory, every note searchable with its text", async () => {
    const h = await makeHarness(notes);
    try {
      const host = createNodeHost(h.vault.root, { logger: silentLogger });
      let shardWrites = 0;
      const write = host.data.writeAtomic.bind(host.data);
      host.data.writeAtomic = async (path, data) => {
        if (path.includes("shard-") && ++shardWrites > 2) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
        return write(path, data);
      };
      const settings = { ...h.settings };
      const index = new VaultIndex({ host, settings: () => settings, embedder: () => h.embedder, options: { ...FAST, unsavedTextBudget: 2_000 } });
      try {
        await index.open().catch(() => undefined);
        await index.idle().catch(() => undefined);
        expect(index.status().notes).toBe(Object.keys(notes).length);
        const hit = (await index.searchNotes("moon pulls the ocean"))[0];
        expect(hit.path).toBe("Tides.md");
        expect(hit.chunks[0].chunk.text).toContain("The moon pulls the ocean");
        for (const path of ["Topic 0.md", "Topic 39.md"]) expect((await index.chunksOf(path)).every((c) => c.text.includes(`subject${path.match(/\d+/)![0]}`))).toBe(true);
      } finally {
        await index.close().catch(() => undefined);
      }
    } finally {
      await h.cleanup();
    }
  });

  it("chunk texts damaged on disk (the search part intact): said once, texts read from the notes, the notes indexed again", async () => {
    const h = await makeHarness(notes);
    try {
      const { indexDir, entry } = await savedWithDamagedTexts(h, (shards) => shards[0], (bytes, entry) => {
        for (let i = entry.textsAt + entry.chunks * 4 + 5; i < bytes.length; i += 101) bytes[i] ^= 0x21;
      });

      const warnings: string[] = [];
      const logger = { ...silentLogger, warn: (message: string) => void warnings.push(message) };
      const host = createNodeHost(h.vault.root, { logger });
      const index = new VaultIndex({ host, settings: () => h.settings, embedder: () => h.embedder, options: FAST });
      try {
        const status = await index.open();
        expect(status.rebuiltReason).toBeUndefined();
        h.embedder.reset();
        const hit = (await index.searchNotes("moon pulls the ocean"))[0];
        expect(hit.path).toBe("Tides.md");
        expect(hit.chunks[0].chunk.text).toContain("The moon pulls the ocean");
        await index.searchNotes("moon pulls the ocean");
        expect(warnings.filter((w) => /corrupt \(checksum mismatch\)/.test(w))).toHaveLength(1);
        await index.idle();
        // Indexed again: a new shard file whose texts read back, and no note was embedded twice over.
        const after = JSON.parse(await fs.readFile(join(indexDir, "manifest.json"), "utf8"));
        expect(after.shards.map((s: { file: string }) => s.file)).not.toContain(entry.file);
        expect((await index.chunksOf("Topic 7.md")).every((c) => c.text.includes("subject7"))).toBe(true);
        expect(index.status().embedded).toBe(index.status().chunks);
      } finally {
        await index.close();
      }
    } finally {
      await h.cleanup();
    }
  });

  it("checkSavedTexts finds damaged texts no search read; a writer indexes those notes again, reusing their vectors, and the next check finds nothing", async () => {
    const h = await makeHarness(notes);
    try {
      const { indexDir, entry, file, bytes } = await savedWithDamagedTexts(
        h,
        (shards) => shards[shards.length - 1],
        (bytes) => void (bytes[bytes.length - 3] ^= 0x21), // one byte of the last chunk's text
      );
      const notesBefore = await Promise.all(Object.keys(notes).map((n) => fs.readFile(join(h.vault.root, n), "utf8")));

      // A reader cannot repair: it checks nothing and changes nothing.
      const reader = h.open();
      try {
        await reader.open(undefined, { readOnly: true });
        expect((await reader.checkSavedTexts()).repaired).toBeUndefined();
      } finally {
        await reader.close();
      }
      expect(await fs.readFile(file)).toEqual(bytes);

      const index = h.open();
      try {
        const opened = await index.open();
        // A load does not read the texts: the damage is not seen yet.
        expect(opened.rebuiltReason).toBeUndefined();
        expect(opened.repaired).toBeUndefined();
        h.embedder.reset();
        const checked = await index.checkSavedTexts();
        expect(checked.repaired).toHaveLength(1);
        expect(checked.repaired![0]).toMatch(/checksum mismatch.*indexed again/);
        await index.idle();
        const after = JSON.parse(await fs.readFile(join(indexDir, "manifest.json"), "utf8"));
        expect(after.shards.map((s: { file: string }) => s.file)).not.toContain(entry.file);
        expect(h.embedder.calls).toBe(0); // the vectors came back by text hash
        expect(index.status().embedded).toBe(index.status().chunks);
      } finally {
        await index.close();
      }
      const again = h.open();
      try {
        await again.open();
        expect((await again.checkSavedTexts()).repaired).toBeUndefined();
        const hit = (await again.searchNotes("moon pulls the ocean"))[0];
        expect(hit.chunks[0].chunk.text).toContain("The moon pulls the ocean");
      } finally {
        await again.close();
      }
      // The notes themselves were only read.
      expect(await Promise.all(Object.keys(notes).map((n) => fs.readFile(join(h.vault.root, n), "utf8")))).toEqual(notesBefore);
    } finally {
      await h.cleanup();
    }
  });

  it("damaged texts in a shard whose notes were touched since: the save that drops them reads them again at once, vectors kept", async () => {
    const h = await makeHarness(notes);
    try {
      await savedWithDamagedTexts(h, (shards) => shards[0], (bytes) => void (bytes[bytes.length - 3] ^= 0x21));
      // A copy or a sync tool gives every note a new mtime: the scan reads them (same content) and the
      // shard is saved again, which needs the damaged texts.
      const later = new Date(Date.now() + 60_000);
      for (const name of Object.keys(notes)) await fs.utimes(join(h.vault.root, name), later, later);

      const index = h.open();
      try {
        h.embedder.reset();
        await index.open();
        const checked = await index.checkSavedTexts();
        await index.idle();
        expect(checked.repaired?.[0]).toMatch(/checksum mismatch.*indexed again/);
        expect(index.status().notes).toBe(Object.keys(notes).length);
        expect(index.status().embedded).toBe(index.status().chunks);
        expect(h.embedder.calls).toBe(0); // the vectors came back by text hash
      } finally {
        await index.close();
      }
      // What was saved holds every note with its vectors: nothing is embedded again on the next start.
      const again = h.open();
      try {
        h.embedder.reset();
        const status = await again.open();
        expect(status.notes).toBe(Object.keys(notes).length);
        expect(status.embedded).toBe(status.chunks);
        expect(h.embedder.calls).toBe(0);
        expect((await again.searchNotes("moon pulls the ocean"))[0].path).toBe("Tides.md");
      } finally {
        await again.close();
      }
    } finally {
      await h.cleanup();
    }
  });

  it("a reader whose shard file was replaced by the writer since it loaded still shows the chunk's text (read from the note)", async () => {
    const h = await makeHarness(notes);
    try {
      const writer = h.open();
      await writer.open();
      await writer.close();
      const reader = h.open();
      await reader.open(undefined, { readOnly: true });
      // Another process saves the index again: every shard file gets a new name, the old ones are removed.
      await h.vault.write("Tides.md", notes["Tides.md"] + "\nNeap tides come at the quarter moons.\n");
      const again = h.open();
      await again.open();
      await again.close();
      const hit = (await reader.searchNotes("moon pulls the ocean"))[0];
      expect(hit.path).toBe("Tides.md");
      expect(hit.chunks[0].chunk.text).toContain("The moon pulls the ocean");
      const topic = await reader.chunksOf("Topic 5.md");
      expect(topic.length).toBeGreaterThan(0);
      expect(topic.every((c) => c.text.includes("subject5"))).toBe(true);
    } finally {
      await h.cleanup();
    }
  });
});
