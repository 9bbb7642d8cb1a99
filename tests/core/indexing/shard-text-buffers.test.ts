import { promises as fs } from "node:fs";
import { join } from "node:path";
import { chunkRecord, encodeTrail, type NoteRecord } from "../../../src/core/indexing/index-records";
import { readShardTexts, type ShardEntry, writeShard } from "../../../src/core/indexing/index-persistence";
import { chunkNote } from "../../../src/core/indexing/markdown-chunker";
import { encodeShard, IndexLoadError, type ShardTexts } from "../../../src/core/indexing/shard-codec";
import { ShardTextBuffers } from "../../../src/core/indexing/shard-text-buffers";
import type { DataDirPort } from "../../../src/core/ports/data-dir";
import { silentLogger } from "../../../src/core/ports/logger";
import { createNodeHost } from "../../../src/node/node-host";
import { makeTempVault, type TempVault } from "../../support/temp-vault";
import { longNote } from "./index-harness";

/** Real shard files in a temporary vault, each with its own texts (and sizes that differ). */
async function writeShards(data: DataDirPort, count: number): Promise<{ entries: ShardEntry[]; texts: string[][] }> {
  const entries: ShardEntry[] = [];
  const texts: string[][] = [];
  for (let id = 0; id < count; id++) {
    const path = `Shard ${id}.md`;
    const body = longNote(`Shard ${id}`, 3 + id, `word${id}`) + (id % 2 ? "\n\nÜmlaut, 東京, and an emoji 🌊 here." : "");
    const chunks = chunkNote(path, body, { maxChars: 400 }).chunks;
    const note: NoteRecord = { path, hash: "h", mtime: 1, size: body.length, title: path, aliases: [], tags: [], shard: id, chunks: [] };
    chunks.forEach((c, k) => note.chunks.push(chunkRecord(note, k, encodeTrail(c.headings), c, c.text)));
    const bytes = await encodeShard([note], 0, () => null, (rec) => rec.text as string);
    entries.push(await writeShard(data, id, 1, bytes, 1, chunks.length));
    texts.push(chunks.map((c) => c.text));
  }
  return { entries, texts };
}

function all(texts: ShardTexts): string[] {
  return Array.from({ length: texts.count }, (_, i) => texts.textAt(i));
}

describe("ShardTextBuffers: shard texts read into reused buffers", () => {
  let vault: TempVault;
  let data: DataDirPort;
  beforeEach(async () => {
    vault = await makeTempVault({});
    data = createNodeHost(vault.root, { logger: silentLogger }).data;
  });
  afterEach(async () => {
    await vault.cleanup();
  });

  it("gives the same texts as a plain read, shard after shard, with its buffers reused many times over", async () => {
    const { entries, texts } = await writeShards(data, 6);
    const buffers = new ShardTextBuffers(2);
    for (let round = 0; round < 3; round++) {
      for (const [k, entry] of entries.entries()) {
        expect(all(await buffers.texts(data, entry))).toEqual(texts[k]);
        // The one just read is held: asked again, it is the same (no second read).
        expect(await buffers.texts(data, entry)).toBe(await buffers.texts(data, entry));
      }
    }
    expect(all(await readShardTexts(data, entries[3]))).toEqual(texts[3]);
  });

  it("keeps reads in flight apart: more at once than it has buffers, each gets its own shard's texts", async () => {
    const { entries, texts } = await writeShards(data, 7);
    const buffers = new ShardTextBuffers(2);
    const got = await Promise.all(entries.map(async (entry) => all(await buffers.texts(data, entry))));
    expect(got).toEqual(texts);
  });

  it("a damaged or cut text part is an IndexLoadError, and the buffer it was read into is not taken for that shard", async () => {
    const { entries, texts } = await writeShards(data, 2);
    const file = join(vault.root, ".krypton", "index", entries[0].file);
    const bytes = await fs.readFile(file);
    bytes[bytes.length - 3] ^= 0xff;
    await fs.writeFile(file, bytes);
    const buffers = new ShardTextBuffers(1);
    await expect(buffers.texts(data, entries[0])).rejects.toThrow(IndexLoadError);
    await expect(buffers.texts(data, entries[0])).rejects.toThrow(/checksum mismatch/);
    expect(all(await buffers.texts(data, entries[1]))).toEqual(texts[1]);
    await fs.writeFile(file, bytes.subarray(0, bytes.length - 10));
    await expect(buffers.texts(data, entries[0])).rejects.toThrow(/truncated/);
    await fs.rm(file);
    await expect(buffers.texts(data, entries[0])).rejects.toThrow(/missing/);
  });

  it("without in-place reads (Obsidian on mobile), each read gets its own buffer and the shard read last is not read again", async () => {
    const { entries, texts } = await writeShards(data, 3);
    const reads: string[] = [];
    const withoutReadInto: DataDirPort = { ...data, read: (p, r) => (reads.push(p), data.read(p, r)), readInto: undefined };
    const buffers = new ShardTextBuffers(1);
    const first = await buffers.texts(withoutReadInto, entries[0]);
    expect(await buffers.texts(withoutReadInto, entries[0])).toBe(first);
    const second = await buffers.texts(withoutReadInto, entries[1]);
    // The first texts have a buffer of their own: still whole after the slot took another shard.
    expect(all(first)).toEqual(texts[0]);
    expect(all(second)).toEqual(texts[1]);
    expect(reads).toEqual([entries[0].file, entries[1].file].map((f) => `index/${f}`));
  });
});
