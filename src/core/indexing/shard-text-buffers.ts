import type { DataDirPort } from "../ports/data-dir";
import { readShardTexts, shardTextsLength, type ShardEntry } from "./index-persistence";
import type { ShardTexts } from "./shard-codec";

/**
 * A few buffers, kept and reused, that hold the chunk texts of the shard files read last, for readers that
 * take their texts out at once (an embedding batch decodes its 64 texts right after the read; a search its
 * hits'). Why not a new buffer per read: embedding a 100k-note vault reads ~500 MB of chunk texts back,
 * each shard's buffer lived through a few young-generation collections into the old generation, and V8
 * starts a full collection for every 64 MB of such external memory, one every ~3 s for the whole run.
 *
 * Texts from here are valid until the caller next yields (awaits): after that the buffer may hold another
 * shard. Where the data dir cannot read in place (DataDirPort.readInto: Obsidian on mobile, whose every read
 * is of a whole file), each read gets its own buffer and a slot holds those texts instead: the same few
 * shards are answered from memory there too. Without that, each 64-chunk embedding batch read its whole
 * shard file again (16 times per shard) and each search every hit's shard file.
 */
export class ShardTextBuffers {
  private readonly slots: { file: string | null; bytes: Uint8Array; texts: ShardTexts | null; busy: boolean; used: number }[] = [];
  private uses = 0;

  /** `size`: how many buffers at most (reads in flight beyond that get their own). */
  constructor(private readonly size = 3) {}

  async texts(data: DataDirPort, entry: ShardEntry): Promise<ShardTexts> {
    const length = shardTextsLength(entry);
    if (length === 0) return readShardTexts(data, entry);
    // A slot being filled has no file, so it is never taken for one.
    const held = this.slots.find((s) => s.file === entry.file);
    if (held?.texts) {
      held.used = ++this.uses;
      return held.texts;
    }
    let slot = null;
    for (const s of this.slots) if (!s.busy && (slot === null || s.used < slot.used)) slot = s;
    if (slot === null && this.slots.length < this.size) {
      slot = { file: null, bytes: new Uint8Array(0), texts: null, busy: false, used: 0 };
      this.slots.push(slot);
    }
    if (slot === null) return readShardTexts(data, entry);
    slot.busy = true;
    slot.file = null;
    slot.texts = null; // the texts it held (on mobile, their own buffer) go now, before the next read lands
    try {
      // A quarter more than asked, in 64 KB steps: shards differ a little in size, and each new buffer is what this avoids.
      if (data.readInto && slot.bytes.length < length) slot.bytes = new Uint8Array(Math.ceil((length * 1.25) / 65_536) * 65_536);
      const texts = await readShardTexts(data, entry, data.readInto ? slot.bytes : undefined);
      slot.file = entry.file;
      slot.texts = texts;
      slot.used = ++this.uses;
      return texts;
    } finally {
      slot.busy = false;
    }
  }

  /** Lets go of the buffers (the index was closed or cleared). */
  clear(): void {
    this.slots.length = 0;
  }
}
